/* The estimator on a recorded trace: see trace.h. */
#define _DEFAULT_SOURCE /* madvise */
#include "estimate/trace.h"

#include <math.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <sys/mman.h>

#include "core/error.h"
#include "correct/identify.h"
#include "correct/observe.h"
#include "estimate/counter_grid.h"
#include "estimate/range_energy.h"
#include "estimate/spill.h"

/* Identified on an H100 80GB HBM3, driver 580.159.04 (data/profiles/):
 * name, response, period, window, delay, capacitance. */
static const tw_reading_model defaults[] = {
    {.name = "power_buffer_w",
     .response = TW_RESP_RC,
     .period_s = 0.02,
     .window_s = NAN,
     .delay_s = 0.0039,
     .capacitance_s = 0.0132,
     .coverage = 1},
    {.name = "energy_j",
     .response = TW_RESP_COUNTER,
     .period_s = 0.1,
     .window_s = 0.1,
     .delay_s = 0.0136,
     .capacitance_s = NAN,
     .coverage = 1},
    {.name = "power_usage_w",
     .response = TW_RESP_BOXCAR,
     .period_s = 0.1,
     .window_s = 1.0,
     .delay_s = 0.031,
     .capacitance_s = NAN,
     .coverage = 1},
};

const tw_reading_model *tw_est_default_model(const char *name)
{
    for (size_t i = 0; i < sizeof defaults / sizeof defaults[0]; i++)
        if (strcmp(defaults[i].name, name) == 0) return &defaults[i];
    return NULL;
}

static void add(char *buf, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void add(char *buf, size_t cap, const char *fmt, ...)
{
    size_t len = strlen(buf);
    if (len + 1 >= cap) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + len, cap - len, fmt, ap);
    va_end(ap);
}

typedef struct chosen {
    char column[128];
    tw_reading_model m;
    bool from_profile;
    bool reference;
    bool placed;                    /* a counter's windows placed on its update grid (grid_counter) ... */
    tw_counter_placement placement; /* ... how */
    tw_obs_series obs;
    size_t mapped; /* obs.v's bytes in a file mapping (map_windows); 0: in memory */
} chosen;

/* A reading's windows this many bytes and more are moved into a file
 * mapping (map_windows). */
#define MAP_WINDOWS_BYTES (64 * 1024)

/* The reading's windows moved into a mapping of a temporary file (a
 * spill's: unlinked, gone with the process), when they are many: the
 * estimator reads them in passes, and between them (its fits) their pages
 * are let go (windows_idle), so that a run of hours does not hold one
 * window per update of its finest reading resident beside the fit's
 * matrices (1.2 MB of the report's peak at 10 M launches). Where it cannot
 * be done they stay in memory. */
static void map_windows(chosen *c)
{
    size_t bytes = c->obs.n * sizeof *c->obs.v;
    if (bytes < MAP_WINDOWS_BYTES) return;
    tw_spill sp;
    void *m = MAP_FAILED;
    if (tw_spill_open(&sp, sizeof *c->obs.v) == TW_OK && tw_spill_write(&sp, 0, c->obs.v, c->obs.n) == TW_OK)
        m = mmap(NULL, bytes, PROT_READ, MAP_SHARED, sp.fd, 0);
    tw_spill_close(&sp); /* the mapping keeps the file */
    tw_clear_error();
    if (m == MAP_FAILED) return;
    free(c->obs.v);
    c->obs.v = m;
    c->obs.cap = c->obs.n;
    c->mapped = bytes;
}

static void unmap_windows(chosen *c)
{
    if (!c->mapped) return;
    munmap(c->obs.v, c->mapped);
    c->obs.v = NULL;
    c->obs.n = c->obs.cap = 0;
    c->mapped = 0;
}

/* The estimator will not read the windows for a while: their pages let go
 * (the page cache keeps them; read again, they come back from it). */
typedef struct mapped_set {
    chosen *ch;
    size_t n;
} mapped_set;

static void windows_idle(void *ctx)
{
    const mapped_set *s = ctx;
    for (size_t i = 0; i < s->n; i++)
        if (s->ch[i].mapped) madvise(s->ch[i].obs.v, s->ch[i].mapped, MADV_DONTNEED);
}

static void describe(const chosen *c, char *buf, size_t cap)
{
    if (buf[0]) add(buf, cap, ", ");
    add(buf, cap, "%s (%s", c->column, tw_response_name(c->m.response));
    if (c->m.response == TW_RESP_RC) add(buf, cap, " C %.3g ms", 1e3 * c->m.capacitance_s);
    if (c->m.response == TW_RESP_BOXCAR || c->m.response == TW_RESP_WINDOW)
        add(buf, cap, " %.3g ms window", 1e3 * c->m.window_s);
    if (c->placed && c->placement.fitted) add(buf, cap, ", on its fitted %.3g ms grid", 1e3 * c->m.period_s);
    if (c->placed && !c->placement.fitted && c->placement.left_out)
        add(buf, cap, ", %zu of %zu reads off the others' phase on its %.3g ms grid left out", c->placement.left_out,
            c->placement.reads, 1e3 * c->m.period_s);
    add(buf, cap, ", %s)", c->from_profile ? "profile" : "H100 default");
}

/* The model of `name`: the profile's when it has a usable one, else the default. */
static bool model_for(const tw_profile *p, const char *name, tw_reading_model *m, bool *from_profile)
{
    const tw_reading_model *pm = p ? tw_profile_find(p, name) : NULL;
    if (pm && pm->response != TW_RESP_UNKNOWN) {
        *m = *pm;
        *from_profile = true;
        return true;
    }
    const tw_reading_model *d = tw_est_default_model(name);
    if (!d) return false;
    *m = *d;
    *from_profile = false;
    return true;
}

static bool try_column(tw_sensor *src, const char *prefix, const char *name, const tw_profile *p, bool reference,
                       chosen *c, size_t *col)
{
    snprintf(c->column, sizeof c->column, "%s%s", prefix, name);
    if (tw_sensor_find(src, c->column, col) != TW_OK) {
        tw_clear_error();
        return false;
    }
    if (!model_for(p, name, &c->m, &c->from_profile)) return false;
    c->reference = reference;
    return true;
}

/* The trusted counter that is the reference and the sample buffer beside
 * it, by their index in ch; false when the trace lacks either. */
static bool counter_and_shape(const chosen *ch, size_t n, size_t *counter, size_t *shape)
{
    *counter = *shape = SIZE_MAX;
    for (size_t i = 0; i < n; i++) {
        if (ch[i].reference && ch[i].m.response == TW_RESP_COUNTER && tw_reading_model_trusted(&ch[i].m))
            *counter = i;
        else if (!ch[i].reference && strcmp(ch[i].m.name, "power_buffer_w") == 0)
            *shape = i;
    }
    return *counter != SIZE_MAX && *shape != SIZE_MAX;
}

/* The counter's windows on its update grid (counter_grid.h: fitted, else
 * the reads at their common phase), where the trace has the sample buffer
 * and the counter's model is trusted; else (or with too few reads) they
 * stay as its reads came. */
static tw_status grid_counter(tw_sensor *src, chosen *ch, const size_t *cols, size_t n, size_t i,
                              const tw_update_series *reads)
{
    size_t counter, shape;
    if (!counter_and_shape(ch, n, &counter, &shape) || counter != i) return TW_OK;
    tw_obs_series g;
    tw_obs_series_init(&g);
    tw_status st =
        tw_est_counter_windows(src, cols[shape], &ch[shape].m, cols[i], &ch[i].m, reads, &g, &ch[i].placement);
    if (st == TW_OK && g.n > 0) {
        tw_obs_series_free(&ch[i].obs);
        ch[i].obs = g;
        ch[i].placed = true;
    } else {
        tw_obs_series_free(&g);
    }
    return st;
}

/* The NVTX ranges' energies at the counter's reads (range_energy.h), where
 * the trace has the sample buffer and a counter whose model is trusted. */
static tw_status anchor_ranges(tw_sensor *src, const chosen *ch, const size_t *cols, size_t n, tw_estimate *e)
{
    size_t counter, shape;
    if (!counter_and_shape(ch, n, &counter, &shape) || e->nranges == 0) return TW_OK;
    return tw_est_anchor_ranges(src, cols[shape], &ch[shape].m, cols[counter], &ch[counter].m, e);
}

tw_status tw_estimate_trace(const char *trace_path, const char *prefix, const tw_profile *profile,
                            const tw_feed *events, const tw_est_config *cfg, tw_estimate **out, tw_est_trace_info *info)
{
    tw_clear_error();
    if (!trace_path || !events || !out) return tw_fail(TW_EINVAL, "tw_estimate_trace: NULL argument");
    *out = NULL;
    tw_est_trace_info local;
    if (!info) info = &local;
    memset(info, 0, sizeof *info);
    if (!prefix) prefix = "";
    tw_sensor_config sc = {.path = trace_path};
    tw_sensor *src = NULL;
    tw_status st = tw_sensor_open("replay", &sc, &src);
    if (st != TW_OK) return st;
    chosen ch[3];
    size_t cols[3], n = 0;
    memset(ch, 0, sizeof ch);
    if (try_column(src, prefix, "power_buffer_w", profile, false, &ch[n], &cols[n])) n++;
    if (try_column(src, prefix, "energy_j", profile, true, &ch[n], &cols[n]))
        n++;
    else if (n)
        add(info->notes, sizeof info->notes,
            "no energy counter in the trace: the total is %s's own, not checked against a counter\n", ch[0].column);
    if (n == 0) {
        /* neither: the profile's best reading of the board, else the 1 s average */
        const tw_reading_model *best = profile ? tw_profile_best(profile, tw_identify_board_reading, NULL) : NULL;
        if (best && try_column(src, prefix, best->name, profile, false, &ch[n], &cols[n])) n++;
        if (n == 0 && try_column(src, prefix, "power_usage_w", NULL, false, &ch[n], &cols[n])) n++;
        if (n)
            add(info->notes, sizeof info->notes,
                "no sample buffer and no energy counter in the trace: energy from %s alone, whose windows are "
                "coarser than short kernels\n",
                ch[0].column);
    }
    if (n == 0) {
        tw_sensor_close(src);
        return tw_fail(TW_ENOTFOUND,
                       "%s: no power reading the estimator can use (%spower_buffer_w, %senergy_j or "
                       "%spower_usage_w)",
                       trace_path, prefix, prefix, prefix);
    }
    tw_est_reading rd[3];
    size_t m = 0;
    tw_update_series u[3];
    memset(u, 0, sizeof u);
    st = tw_updates_read_many(src, cols, n, u); /* the rows once for every reading */
    for (size_t i = 0; i < n; i++)
        tw_obs_series_init(&ch[i].obs);
    for (size_t i = 0; i < n && st == TW_OK; i++) {
        st = tw_observe_updates(&u[i], &ch[i].m, &ch[i].obs);
        if (st == TW_OK) st = grid_counter(src, ch, cols, n, i, &u[i]);
        tw_update_series_free(&u[i]);
        if (st == TW_EINVAL) { /* a model that cannot observe this reading: said, not fatal */
            add(info->notes, sizeof info->notes, "%s not used: %s\n", ch[i].column, tw_last_error());
            tw_clear_error();
            st = TW_OK;
            continue;
        }
        if (st != TW_OK) break;
        if (!ch[i].from_profile)
            add(info->notes, sizeof info->notes,
                "%s: no model for it in a sensor profile of this GPU: the H100's model is assumed\n", ch[i].column);
        describe(&ch[i], info->readings, sizeof info->readings);
        map_windows(&ch[i]);
        rd[m++] = (tw_est_reading){ch[i].column, ch[i].obs.v, ch[i].obs.n, ch[i].reference, ch[i].obs.tau_s};
    }
    if (st == TW_OK && m == 0) st = tw_fail(TW_ENOTFOUND, "%s: no reading could be observed", trace_path);
    for (size_t i = 0; i < n; i++)
        tw_update_series_free(&u[i]); /* (those left on an error) */
    tw_est_config c; /* the profile's active idle is the baseline's prior, unless the caller gave one */
    tw_est_config_from(&c, cfg);
    if (profile && !isfinite(c.active_idle_w)) c.active_idle_w = profile->active_idle_w;
    /* the profile's lingering power, unless the caller chose (> 0) or declined (< 0) one */
    if (profile && c.linger_s == 0 && profile->linger_s > 0) c.linger_s = profile->linger_s;
    /* the profile's calibrated counters' models, unless the caller gave some */
    if (profile && !c.activity_models && profile->n_activity) {
        c.activity_models = profile->activity;
        c.n_activity_models = profile->n_activity;
    }
    mapped_set ms = {ch, n};
    c.windows_idle = windows_idle;
    c.windows_ctx = &ms;
    if (st == TW_OK) st = tw_estimate_feed(rd, m, events, &c, out);
    if (st == TW_OK) st = anchor_ranges(src, ch, cols, n, *out);
    for (size_t i = 0; i < n; i++) {
        unmap_windows(&ch[i]);
        tw_obs_series_free(&ch[i].obs);
    }
    tw_sensor_close(src);
#ifdef __GLIBC__
    /* the estimate's many megabytes freed: glibc keeps what lies between
     * blocks still held, which then stays resident under what comes next
     * (the Perfetto writer's 8 MB of bins: +2 MB at 10 M launches) */
    malloc_trim(0);
#endif
    return st;
}
