/* A GPU's clocks through NVML (nvml_clocks.h): the library comes from
 * nvml_lib.c, shared with the nvml sensor backend. */
#include "sensor/nvml_clocks.h"

#include "api/sized.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "sensor/nvml_api.h"
#include "sensor/nvml_lib.h"

#define LIST_START 256u /* first buffer for a list of clocks (an H100 has 110 graphics clocks) */
#define LIST_MAX 65536u /* a longer list is not believed */

struct tw_clocks {
    const tw_nvml_api *api;
    nvmlDevice_t dev;
    unsigned index;
    char uuid[NVML_DEVICE_UUID_V2_BUFFER_SIZE];
    char name[NVML_DEVICE_NAME_V2_BUFFER_SIZE];
    bool denied;
};

/* ---------------------------------------------------------------- clock tables */

void tw_clock_table_free(tw_clock_table *t)
{
    if (!t) return;
    for (size_t i = 0; i < t->nmem; i++)
        free(t->mem[i].gfx_mhz);
    free(t->mem);
    t->mem = NULL;
    t->nmem = 0;
}

const tw_clock_mem *tw_clock_table_find(const tw_clock_table *t, unsigned mem_mhz)
{
    for (size_t i = 0; t && i < t->nmem; i++)
        if (t->mem[i].mem_mhz == mem_mhz) return &t->mem[i];
    return NULL;
}

bool tw_clock_in(const unsigned *list, size_t n, unsigned mhz)
{
    for (size_t i = 0; i < n; i++)
        if (list[i] == mhz) return true;
    return false;
}

void tw_clock_nearest(const unsigned *list, size_t n, unsigned mhz, unsigned *below, unsigned *above)
{
    unsigned lo = 0, hi = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned v = list[i];
        if (v <= mhz && v > lo) lo = v;
        if (v >= mhz && (hi == 0 || v < hi)) hi = v;
    }
    *below = lo;
    *above = hi;
}

int tw_clock_list_format(const unsigned *list, size_t n, char *buf, size_t cap)
{
    if (n == 0) return snprintf(buf, cap, "no clocks");
    if (n == 1) return snprintf(buf, cap, "1 clock: %u MHz", list[0]);
    /* evenly spaced: one step all along, in one direction */
    long step = (long)list[1] - (long)list[0];
    bool even = step != 0 && n >= 3;
    for (size_t i = 2; even && i < n; i++)
        even = (long)list[i] - (long)list[i - 1] == step;
    if (even)
        return snprintf(buf, cap, "%zu clocks, %u..%u MHz in %ld MHz steps", n, list[0], list[n - 1],
                        step < 0 ? -step : step);
    int w = snprintf(buf, cap, "%zu clocks:", n);
    for (size_t i = 0; i < n && w >= 0; i++) {
        size_t at = (size_t)w < cap ? (size_t)w : cap;
        int k = snprintf(buf + at, cap - at, "%s %u", i ? "," : "", list[i]);
        w = k < 0 ? k : w + k;
    }
    if (w >= 0) {
        size_t at = (size_t)w < cap ? (size_t)w : cap;
        w += snprintf(buf + at, cap - at, " MHz");
    }
    return w;
}

/* "1230 and 1245 MHz" / "345 MHz" / "none" into buf: the nearest supported to mhz. */
static void nearest_text(const unsigned *list, size_t n, unsigned mhz, char *buf, size_t cap)
{
    unsigned lo, hi;
    tw_clock_nearest(list, n, mhz, &lo, &hi);
    if (lo && hi && lo != hi)
        snprintf(buf, cap, "%u and %u MHz", lo, hi);
    else if (lo || hi)
        snprintf(buf, cap, "%u MHz", lo ? lo : hi);
    else
        snprintf(buf, cap, "none");
}

tw_status tw_clock_check_request(const tw_clock_table *t, unsigned core_min, unsigned core_max, unsigned mem_mhz,
                                 unsigned cur_mem_mhz)
{
    if (!t || t->nmem == 0) return tw_fail(TW_EUNSUPPORTED, "the device lists no supported clocks");
    if (core_min > core_max)
        return tw_fail(TW_EINVAL, "graphics clocks %u,%u: the minimum is above the maximum", core_min, core_max);
    char near[64], all[256];
    size_t w = 0;
    all[0] = '\0';
    for (size_t i = 0; i < t->nmem; i++)
        w += (size_t)snprintf(all + (w < sizeof all ? w : sizeof all), w < sizeof all ? sizeof all - w : 0, "%s%u",
                              i ? ", " : "", t->mem[i].mem_mhz);
    const tw_clock_mem *m = NULL;
    if (mem_mhz) {
        m = tw_clock_table_find(t, mem_mhz);
        if (!m) {
            unsigned *mems = malloc(t->nmem * sizeof *mems);
            if (!mems) return tw_fail(TW_ENOMEM, "out of memory (clock table)");
            for (size_t i = 0; i < t->nmem; i++)
                mems[i] = t->mem[i].mem_mhz;
            nearest_text(mems, t->nmem, mem_mhz, near, sizeof near);
            free(mems);
            return tw_fail(TW_EINVAL, "memory clock %u MHz is not supported (nearest: %s; supported: %s MHz)", mem_mhz,
                           near, all);
        }
    } else {
        m = tw_clock_table_find(t, cur_mem_mhz);
    }
    unsigned core[2] = {core_min, core_max};
    for (int k = 0; core_max && k < (core_min == core_max ? 1 : 2); k++) {
        bool ok = false;
        if (m)
            ok = tw_clock_in(m->gfx_mhz, m->n, core[k]);
        else
            for (size_t i = 0; i < t->nmem && !ok; i++)
                ok = tw_clock_in(t->mem[i].gfx_mhz, t->mem[i].n, core[k]);
        if (ok) continue;
        /* the nearest in the list that applies (the highest memory clock's when none does) */
        const tw_clock_mem *ref = m ? m : &t->mem[0];
        nearest_text(ref->gfx_mhz, ref->n, core[k], near, sizeof near);
        char list[128];
        tw_clock_list_format(ref->gfx_mhz, ref->n, list, sizeof list);
        return tw_fail(TW_EINVAL, "graphics clock %u MHz is not supported with memory at %u MHz (nearest: %s; %s)",
                       core[k], ref->mem_mhz, near, list);
    }
    return TW_OK;
}

/* ---------------------------------------------------------------- event reasons */

static const struct {
    unsigned long long bit;
    const char *name;
} reason_names[] = {
    {NVML_CLOCKS_EVENT_REASON_GPU_IDLE, "gpu_idle"},
    {NVML_CLOCKS_EVENT_REASON_APPLICATIONS_CLOCKS_SETTING, "applications_clocks_setting"},
    {NVML_CLOCKS_EVENT_REASON_SW_POWER_CAP, "sw_power_cap"},
    {NVML_CLOCKS_EVENT_REASON_HW_SLOWDOWN, "hw_slowdown"},
    {NVML_CLOCKS_EVENT_REASON_SYNC_BOOST, "sync_boost"},
    {NVML_CLOCKS_EVENT_REASON_SW_THERMAL, "sw_thermal"},
    {NVML_CLOCKS_EVENT_REASON_HW_THERMAL, "hw_thermal"},
    {NVML_CLOCKS_EVENT_REASON_HW_POWER_BRAKE, "hw_power_brake"},
    {NVML_CLOCKS_EVENT_REASON_DISPLAY_CLOCK, "display_clock"},
};

_Static_assert(TW_CLOCK_REASONS_LIMITING ==
                   (NVML_CLOCKS_EVENT_REASON_SW_POWER_CAP | NVML_CLOCKS_EVENT_REASON_HW_SLOWDOWN |
                    NVML_CLOCKS_EVENT_REASON_SW_THERMAL | NVML_CLOCKS_EVENT_REASON_HW_THERMAL |
                    NVML_CLOCKS_EVENT_REASON_HW_POWER_BRAKE),
               "the limiting reasons are power and heat");

const char *tw_clock_reason_name(unsigned long long bit)
{
    for (size_t i = 0; i < sizeof reason_names / sizeof reason_names[0]; i++)
        if (reason_names[i].bit == bit) return reason_names[i].name;
    return NULL;
}

int tw_clock_reasons_format(unsigned long long bits, char *buf, size_t cap)
{
    if (bits == 0) return snprintf(buf, cap, "none");
    int w = 0;
    if (cap) buf[0] = '\0';
    for (int b = 0; b < 64; b++) {
        unsigned long long bit = 1ULL << b;
        if (!(bits & bit)) continue;
        size_t at = (size_t)w < cap ? (size_t)w : cap;
        const char *name = tw_clock_reason_name(bit);
        int k = name ? snprintf(buf + at, cap - at, "%s%s", w ? "," : "", name)
                     : snprintf(buf + at, cap - at, "%s0x%llx", w ? "," : "", bit);
        if (k < 0) return k;
        w += k;
    }
    return w;
}

/* ---------------------------------------------------------------- one device */

tw_status tw_clocks_open(const char *library, const char *device, tw_clocks **out)
{
    if (!out) return tw_fail(TW_EINVAL, "tw_clocks_open: NULL argument");
    *out = NULL;
    tw_clocks *c = calloc(1, sizeof *c);
    if (!c) return tw_fail(TW_ENOMEM, "out of memory (clocks)");
    tw_status st = tw_nvml_acquire(library, false, &c->api);
    if (st != TW_OK) {
        free(c);
        return st;
    }
    st = tw_nvml_pick_device(c->api, device && *device ? device : "0", &c->dev, &c->index, c->uuid, c->name);
    if (st != TW_OK) {
        tw_nvml_release();
        free(c);
        return st;
    }
    *out = c;
    return TW_OK;
}

void tw_clocks_close(tw_clocks *c)
{
    if (!c) return;
    tw_nvml_release();
    free(c);
}

unsigned tw_clocks_index(const tw_clocks *c) { return c->index; }
const char *tw_clocks_uuid(const tw_clocks *c) { return c->uuid; }
const char *tw_clocks_name(const tw_clocks *c) { return c->name; }
bool tw_clocks_denied(const tw_clocks *c) { return c->denied; }

static tw_status missing(const char *fn)
{
    return tw_fail(TW_EUNSUPPORTED, "%s is not supported by this driver (not in %s)", fn, tw_nvml_path());
}

/* One list of clocks: the buffer grows while NVML answers INSUFFICIENT_SIZE. */
static tw_status read_list(tw_clocks *c, bool graphics, unsigned mem_mhz, unsigned **out, size_t *n)
{
    const tw_nvml_api *a = c->api;
    unsigned cap = LIST_START;
    *out = NULL;
    *n = 0;
    for (;;) {
        unsigned *buf = malloc(cap * sizeof *buf);
        if (!buf) return tw_fail(TW_ENOMEM, "out of memory (%u clocks)", cap);
        unsigned count = cap;
        nvmlReturn_t r = graphics ? NVML_CALL_OR(a, NVML_ERROR_INSUFFICIENT_SIZE, nvmlDeviceGetSupportedGraphicsClocks,
                                                 c->dev, mem_mhz, &count, buf)
                                  : NVML_CALL_OR(a, NVML_ERROR_INSUFFICIENT_SIZE, nvmlDeviceGetSupportedMemoryClocks,
                                                 c->dev, &count, buf);
        if (r == NVML_SUCCESS) {
            *out = buf;
            *n = count < cap ? count : cap;
            return TW_OK;
        }
        free(buf);
        if (r != NVML_ERROR_INSUFFICIENT_SIZE) return tw_nvml_status_of(r);
        if (cap >= LIST_MAX)
            return tw_fail(TW_EUNSUPPORTED, "%s: more than %u clocks",
                           graphics ? "nvmlDeviceGetSupportedGraphicsClocks" : "nvmlDeviceGetSupportedMemoryClocks",
                           LIST_MAX);
        cap = count > cap && count <= LIST_MAX ? count : cap * 2;
    }
}

tw_status tw_clocks_supported(tw_clocks *c, tw_clock_table *t)
{
    if (!c || !t) return tw_fail(TW_EINVAL, "tw_clocks_supported: NULL argument");
    memset(t, 0, sizeof *t);
    const tw_nvml_api *a = c->api;
    if (!a->nvmlDeviceGetSupportedMemoryClocks) return missing("nvmlDeviceGetSupportedMemoryClocks");
    if (!a->nvmlDeviceGetSupportedGraphicsClocks) return missing("nvmlDeviceGetSupportedGraphicsClocks");
    unsigned *mems;
    size_t nmem;
    tw_status st = read_list(c, false, 0, &mems, &nmem);
    if (st != TW_OK) return st;
    t->mem = calloc(nmem ? nmem : 1, sizeof *t->mem);
    if (!t->mem) {
        free(mems);
        return tw_fail(TW_ENOMEM, "out of memory (clock table)");
    }
    for (size_t i = 0; i < nmem; i++) {
        tw_clock_mem *m = &t->mem[t->nmem++];
        m->mem_mhz = mems[i];
        st = read_list(c, true, mems[i], &m->gfx_mhz, &m->n);
        if (st != TW_OK) {
            free(mems);
            tw_clock_table_free(t);
            return st;
        }
    }
    free(mems);
    return TW_OK;
}

tw_status tw_clocks_current(tw_clocks *c, tw_clock_now *out)
{
    if (!c || !out) return tw_fail(TW_EINVAL, "tw_clocks_current: NULL argument");
    /* filled whole here, then as much as the caller's (size-carrying) struct holds */
    tw_clock_now full = {.size = sizeof full}, *now = &full;
    const tw_nvml_api *a = c->api;
    tw_status st = TW_OK;
    if (a->nvmlDeviceGetClockInfo) {
        nvmlReturn_t r = NVML_CALL(a, nvmlDeviceGetClockInfo, c->dev, NVML_CLOCK_SM, &now->sm_mhz);
        now->have_sm = r == NVML_SUCCESS;
        if (r != NVML_SUCCESS) st = tw_nvml_status_of(r);
        r = NVML_CALL(a, nvmlDeviceGetClockInfo, c->dev, NVML_CLOCK_MEM, &now->mem_mhz);
        now->have_mem = r == NVML_SUCCESS;
        if (r != NVML_SUCCESS) st = tw_nvml_status_of(r);
    } else {
        st = missing("nvmlDeviceGetClockInfo");
    }
    if (a->nvmlDeviceGetCurrentClocksEventReasons) {
        nvmlReturn_t r = NVML_CALL(a, nvmlDeviceGetCurrentClocksEventReasons, c->dev, &now->reasons);
        now->have_reasons = r == NVML_SUCCESS;
        if (r != NVML_SUCCESS) st = tw_nvml_status_of(r);
    } else {
        st = missing("nvmlDeviceGetCurrentClocksEventReasons");
    }
    tw_status wst = tw_sized_write(out, &full, sizeof full, "tw_clocks_current");
    if (wst != TW_OK) return wst;
    /* a part that failed is marked absent; the message of the last failure stays in tw_last_error */
    return now->have_sm || now->have_mem || now->have_reasons ? TW_OK : st;
}

tw_status tw_clocks_max(tw_clocks *c, unsigned *sm_mhz, unsigned *mem_mhz)
{
    if (!c || !sm_mhz || !mem_mhz) return tw_fail(TW_EINVAL, "tw_clocks_max: NULL argument");
    const tw_nvml_api *a = c->api;
    if (!a->nvmlDeviceGetMaxClockInfo) return missing("nvmlDeviceGetMaxClockInfo");
    nvmlReturn_t r = NVML_CALL(a, nvmlDeviceGetMaxClockInfo, c->dev, NVML_CLOCK_SM, sm_mhz);
    if (r == NVML_SUCCESS) r = NVML_CALL(a, nvmlDeviceGetMaxClockInfo, c->dev, NVML_CLOCK_MEM, mem_mhz);
    return r == NVML_SUCCESS ? TW_OK : tw_nvml_status_of(r);
}

bool tw_clocks_can_lock_gpu(const tw_clocks *c)
{
    return c->api->nvmlDeviceSetGpuLockedClocks && c->api->nvmlDeviceResetGpuLockedClocks;
}

bool tw_clocks_can_lock_mem(const tw_clocks *c)
{
    return c->api->nvmlDeviceSetMemoryLockedClocks && c->api->nvmlDeviceResetMemoryLockedClocks;
}

/* The result of a Set/Reset call; NO_PERMISSION gets the reason added. */
static tw_status changed(tw_clocks *c, nvmlReturn_t r)
{
    c->denied = r == NVML_ERROR_NO_PERMISSION;
    if (r == NVML_SUCCESS) return TW_OK;
    if (r == NVML_ERROR_NO_PERMISSION) {
        char msg[512];
        snprintf(msg, sizeof msg, "%s", tw_last_error());
        return tw_fail(TW_EUNAVAIL, "%s: changing clocks needs root (NVML admin rights)", msg);
    }
    return tw_nvml_status_of(r);
}

tw_status tw_clocks_lock_gpu(tw_clocks *c, unsigned min_mhz, unsigned max_mhz)
{
    if (!tw_clocks_can_lock_gpu(c))
        return missing(c->api->nvmlDeviceSetGpuLockedClocks ? "nvmlDeviceResetGpuLockedClocks"
                                                            : "nvmlDeviceSetGpuLockedClocks");
    return changed(c, NVML_CALL(c->api, nvmlDeviceSetGpuLockedClocks, c->dev, min_mhz, max_mhz));
}

tw_status tw_clocks_reset_gpu(tw_clocks *c)
{
    if (!c->api->nvmlDeviceResetGpuLockedClocks) return missing("nvmlDeviceResetGpuLockedClocks");
    return changed(c, NVML_CALL(c->api, nvmlDeviceResetGpuLockedClocks, c->dev));
}

tw_status tw_clocks_lock_mem(tw_clocks *c, unsigned min_mhz, unsigned max_mhz)
{
    if (!tw_clocks_can_lock_mem(c))
        return missing(c->api->nvmlDeviceSetMemoryLockedClocks ? "nvmlDeviceResetMemoryLockedClocks"
                                                               : "nvmlDeviceSetMemoryLockedClocks");
    return changed(c, NVML_CALL(c->api, nvmlDeviceSetMemoryLockedClocks, c->dev, min_mhz, max_mhz));
}

tw_status tw_clocks_reset_mem(tw_clocks *c)
{
    if (!c->api->nvmlDeviceResetMemoryLockedClocks) return missing("nvmlDeviceResetMemoryLockedClocks");
    return changed(c, NVML_CALL(c->api, nvmlDeviceResetMemoryLockedClocks, c->dev));
}
