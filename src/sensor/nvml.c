/* The "nvml" backend: NVIDIA GPUs through libnvidia-ml, loaded with dlopen
 * (no nvml.h at build time: nvml_api.h declares the subset we call).
 *
 * One sensor reads one device and one or both reading groups:
 *   FAST  power_usage_w (nvmlDeviceGetPowerUsage), power_avg_w / power_instant_w
 *         (fields 185/186, GPU scope), mem_power_avg_w / mem_power_instant_w
 *         (the same fields, memory scope; all four in one nvmlDeviceGetFieldValues
 *         call) and power_buffer_w (the driver's ~20 ms sample buffer, drained
 *         without loss, one sample per row);
 *   SLOW  energy_j (nvmlDeviceGetTotalEnergyConsumption, ~4 ms a call on an
 *         H100), sm_clock_mhz, mem_clock_mhz, temperature_c, memory_used_mib.
 * Readings a device does not support are probed at open and left out, with a
 * line in the notes; those cfg->skip names (the sampling plan's) are left out
 * silently. The sample buffer is drained every cfg->buffer_poll_s; its
 * samples are queued and given one a row, at once to a caller that asks
 * tw_sensor_pending() right after the drain. Every reading carries its own timestamp on the trace
 * timeline (seconds since cfg->t0_mono_ns on CLOCK_MONOTONIC): NVML's field and
 * sample timestamps are CLOCK_REALTIME microseconds and are converted with the
 * realtime - monotonic offset, measured at open and before every row that reads the device: a
 * step of the wall clock (NTP, `date -s`) is noted, and the last sample seen moves with it.
 *
 * The library is loaded once per process and reference-counted (nvml_lib.c),
 * so sensors for several devices and groups can be open at once in different
 * threads. A sensor itself must be used by one thread at a time. */
#include <limits.h>
#include <stdarg.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/error.h"
#include "sensor/backend.h"
#include "sensor/nvml_api.h"
#include "sensor/nvml_lib.h"

/* ---------------------------------------------------------------- constants */

#define NS_PER_S 1000000000LL
/* Drain the sample buffer at most this often unless cfg->buffer_poll_s says
 * otherwise (the sampling plan does): each drain costs ~0.3 ms of CPU on an
 * H100, and the driver keeps 120 samples (~2.4 s), so 100 ms loses nothing. */
#define BUFFER_POLL_NS (100 * 1000000LL)
/* A call this soon after a full read, with drained samples queued, takes the
 * next sample only (the sampler empties the queue right after a drain); a
 * caller on its own pace (every 1 ms, say) gets every reading in every row. */
#define PENDING_NS 500000LL
#define SAMPLES_MIN_CAP 64u
#define SAMPLES_MAX_CAP 65536u
#define DEAD_ROWS 5      /* rows in a row where every reading failed ... */
#define DEAD_NS NS_PER_S /* ... spanning at least this long: the device is gone */
#define NOTES_CAP 4096   /* fixed, so the notes pointer stays valid while next() adds to it */
#define FAIL_KINDS 4     /* distinct failure codes noted per reading */
/* A counter read whose call took longer than this is not used: its value's
 * time is anywhere in the call (a reader preempted on a loaded host, before
 * or after the driver took it), while its stamp is the call's middle; beyond
 * +-15 ms it can land on the wrong one of the counter's 100 ms updates (the
 * anchor's and the estimator's guard), which put regions 25 % off. The
 * counter is cumulative: the next read carries its energy, nothing is lost.
 * An H100's reads take 4-12 ms. A host whose reads all take longer keeps
 * them: only a read LATE_READ_TIMES its recent calls' median is late. */
#define LATE_READ_NS (30 * 1000000LL)
#define LATE_READ_TIMES 3
#define CALL_HISTORY 15 /* the counter's recent call times, for their median */

/* ---------------------------------------------------------------- clocks */

static int64_t clock_ns(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (int64_t)ts.tv_sec * NS_PER_S + ts.tv_nsec;
}

static int64_t mono_ns(void) { return clock_ns(CLOCK_MONOTONIC); }

/* ---------------------------------------------------------------- readings */

enum {
    R_USAGE,
    R_AVG,
    R_INSTANT,
    R_MEM_AVG,
    R_MEM_INSTANT,
    R_MOD_AVG,
    R_MOD_INSTANT,
    R_BUFFER,
    R_ENERGY,
    R_SM_CLOCK,
    R_MEM_CLOCK,
    R_TEMPERATURE,
    R_MEM_USED,
    R_COUNT
};

typedef struct reading_def {
    const char *name;
    tw_quantity quantity;
    double scale; /* source unit -> SI (mW -> W, mJ -> J, bytes -> MiB) */
    unsigned group;
    const char *source; /* what it reads, for the notes */
} reading_def;

static const reading_def defs[R_COUNT] = {
    [R_USAGE] = {"power_usage_w", TW_Q_POWER, 1e-3, TW_READ_FAST, "nvmlDeviceGetPowerUsage"},
    [R_AVG] = {"power_avg_w", TW_Q_POWER, 1e-3, TW_READ_FAST, "field 185"},
    [R_INSTANT] = {"power_instant_w", TW_Q_POWER, 1e-3, TW_READ_FAST, "field 186"},
    [R_MEM_AVG] = {"mem_power_avg_w", TW_Q_POWER, 1e-3, TW_READ_FAST, "field 185 (memory scope)"},
    [R_MEM_INSTANT] = {"mem_power_instant_w", TW_Q_POWER, 1e-3, TW_READ_FAST, "field 186 (memory scope)"},
    /* Grace Hopper: the module (GPU + CPU + memory), never the GPU's own */
    [R_MOD_AVG] = {"module_power_avg_w", TW_Q_POWER, 1e-3, TW_READ_FAST, "field 185 (module scope)"},
    [R_MOD_INSTANT] = {"module_power_instant_w", TW_Q_POWER, 1e-3, TW_READ_FAST, "field 186 (module scope)"},
    [R_BUFFER] = {"power_buffer_w", TW_Q_POWER, 1e-3, TW_READ_FAST, "nvmlDeviceGetSamples"},
    [R_ENERGY] = {"energy_j", TW_Q_ENERGY, 1e-3, TW_READ_SLOW, "nvmlDeviceGetTotalEnergyConsumption"},
    [R_SM_CLOCK] = {"sm_clock_mhz", TW_Q_OTHER, 1.0, TW_READ_SLOW, "nvmlDeviceGetClockInfo(SM)"},
    [R_MEM_CLOCK] = {"mem_clock_mhz", TW_Q_OTHER, 1.0, TW_READ_SLOW, "nvmlDeviceGetClockInfo(MEM)"},
    [R_TEMPERATURE] = {"temperature_c", TW_Q_OTHER, 1.0, TW_READ_SLOW, "nvmlDeviceGetTemperature"},
    [R_MEM_USED] = {"memory_used_mib", TW_Q_OTHER, 1.0 / 1048576.0, TW_READ_SLOW, "nvmlDeviceGetMemoryInfo"},
};

/* The six field readings, in R_AVG .. R_MOD_INSTANT order: average and
 * instant of each scope (field_of[i % 2] is the GPU scope's of the same field). */
#define NFIELDS 6
static const struct {
    unsigned field, scope;
} field_of[NFIELDS] = {
    {NVML_FI_DEV_POWER_AVERAGE, NVML_POWER_SCOPE_GPU},    {NVML_FI_DEV_POWER_INSTANT, NVML_POWER_SCOPE_GPU},
    {NVML_FI_DEV_POWER_AVERAGE, NVML_POWER_SCOPE_MEMORY}, {NVML_FI_DEV_POWER_INSTANT, NVML_POWER_SCOPE_MEMORY},
    {NVML_FI_DEV_POWER_AVERAGE, NVML_POWER_SCOPE_MODULE}, {NVML_FI_DEV_POWER_INSTANT, NVML_POWER_SCOPE_MODULE},
};

typedef struct nvml_sensor {
    const tw_nvml_api *api;
    nvmlDevice_t dev;
    unsigned index;
    char uuid[NVML_DEVICE_UUID_V2_BUFFER_SIZE];
    char name[NVML_DEVICE_NAME_V2_BUFFER_SIZE];
    unsigned groups;
    int64_t t0_ns;        /* timeline origin, CLOCK_MONOTONIC */
    int64_t rt_off_ns;    /* CLOCK_REALTIME - CLOCK_MONOTONIC */
    int64_t rt_off_at_ns; /* when it was measured (monotonic) */

    int col[R_COUNT]; /* column of each reading; -1 when left out */
    size_t n;
    tw_reading_info info[R_COUNT];
    double value[R_COUNT];
    double t_value[R_COUNT];
    uint8_t valid[R_COUNT];

    nvmlFieldValue_t fv[NFIELDS]; /* the fields read in one call */
    int fv_reading[NFIELDS];
    int nfv;

    nvmlSample_t *sbuf; /* one nvmlDeviceGetSamples answer */
    unsigned scap;
    double *q_mw; /* samples drained but not yet emitted (FIFO, capacity scap) */
    double *q_t_s;
    unsigned q_head, q_count;
    unsigned long long last_seen_us;
    double last_sample_t_s; /* the last sample queued, on the timeline (-inf: none yet) */
    unsigned clock_steps;   /* steps of the host's wall clock seen (noted once) */
    int64_t last_poll_ns;
    int64_t poll_ns;      /* drain period */
    int64_t last_full_ns; /* the last row that read the device (not only the queue) */
    bool noted_full;      /* a drain came back full: samples may have been lost (noted once) */

    nvmlReturn_t noted[R_COUNT][FAIL_KINDS]; /* failure codes already in the notes */
    unsigned fail_rows;
    int64_t fail_since_ns;
    bool dead;
    char dead_msg[768];

    char notes[NOTES_CAP];
    size_t notes_len;
    /* how many reads (the buffer: drains) failed, so that none is dropped unsaid: the notes
     * as nvml_notes gives them, with a count line for each reading that failed, remade after
     * a row with a failure or a new note */
    unsigned long long reads_ok[R_COUNT], reads_failed[R_COUNT];
    unsigned long long reads_late; /* counter reads not used (LATE_READ_NS), in the notes' count lines */
    int64_t call_ns[CALL_HISTORY]; /* the counter's last calls' durations (a ring), for late_read */
    unsigned ncalls;
    char notes_out[NOTES_CAP + R_COUNT * 128 + 192];
    size_t out_notes_len;
    unsigned long long out_failed;
    const char *skip; /* cfg->skip, during open only */
} nvml_sensor;

static void add_note(nvml_sensor *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void add_note(nvml_sensor *s, const char *fmt, ...)
{
    if (s->notes_len + 2 >= sizeof s->notes) return;
    if (s->notes_len > 0) s->notes[s->notes_len++] = '\n';
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(s->notes + s->notes_len, sizeof s->notes - s->notes_len, fmt, ap);
    va_end(ap);
    if (w > 0)
        s->notes_len += (size_t)w < sizeof s->notes - s->notes_len ? (size_t)w : sizeof s->notes - s->notes_len - 1;
    s->notes[s->notes_len] = '\0';
}

/* A change of the wall clock's offset larger than this, measured within
 * STEP_MEASURE_NS, is a step (NTP, a VM's resume, `date -s`), not drift. */
#define STEP_NS (50 * 1000000LL)
#define STEP_MEASURE_NS 1000000LL

static void refresh_offset(nvml_sensor *s)
{
    int64_t a = mono_ns();
    int64_t r = clock_ns(CLOCK_REALTIME);
    int64_t b = mono_ns();
    int64_t off = r - (a + (b - a) / 2), step = off - s->rt_off_ns;
    if (s->rt_off_at_ns && b - a >= STEP_MEASURE_NS) return; /* preempted between the reads: the next row */
    if (s->rt_off_at_ns && (step > STEP_NS || step < -STEP_NS)) {
        /* NVML stamps its samples with the wall clock too: the samples not yet seen are
         * after the last one seen moved by the step (a step back would hide them for as
         * long as it went back) */
        long long us = step / 1000;
        s->last_seen_us =
            us < 0 && (unsigned long long)-us > s->last_seen_us ? 0 : s->last_seen_us + (unsigned long long)us;
        if (s->clock_steps++ == 0)
            add_note(s,
                     "the host's wall clock stepped by %+.3f s at t = %.3f s; the timeline is CLOCK_MONOTONIC, "
                     "NVML's wall-clock timestamps are mapped with the new offset from then on",
                     (double)step * 1e-9, (double)(b - s->t0_ns) * 1e-9);
    }
    s->rt_off_ns = off;
    s->rt_off_at_ns = b;
}

static double timeline_s(const nvml_sensor *s, int64_t mono) { return (double)(mono - s->t0_ns) * 1e-9; }

/* NVML's CLOCK_REALTIME microseconds on the timeline; `fallback` (a
 * monotonic time) when the stamp is missing or out of range. */
static double realtime_us_s(const nvml_sensor *s, long long us, int64_t fallback)
{
    if (us <= 0 || us > INT64_MAX / 1000) return timeline_s(s, fallback);
    return timeline_s(s, (int64_t)us * 1000 - s->rt_off_ns);
}

static bool value_of(nvmlValueType_t type, const nvmlValue_t *v, double *out)
{
    switch (type) {
    case NVML_VALUE_TYPE_DOUBLE:
        *out = v->dVal;
        return true;
    case NVML_VALUE_TYPE_UNSIGNED_INT:
        *out = v->uiVal;
        return true;
    case NVML_VALUE_TYPE_UNSIGNED_LONG:
        *out = (double)v->ulVal;
        return true;
    case NVML_VALUE_TYPE_UNSIGNED_LONG_LONG:
        *out = (double)v->ullVal;
        return true;
    case NVML_VALUE_TYPE_SIGNED_LONG_LONG:
        *out = (double)v->sllVal;
        return true;
    case NVML_VALUE_TYPE_SIGNED_INT:
        *out = v->siVal;
        return true;
    case NVML_VALUE_TYPE_UNSIGNED_SHORT:
        *out = v->usVal;
        return true;
    }
    return false;
}

/* Whether the sampling plan (cfg->skip) leaves reading r out. */
static bool skipped(const char *skip, int r)
{
    size_t n = strlen(defs[r].name);
    for (const char *p = skip; p && *p;) {
        size_t len = strcspn(p, ",");
        if (len == n && strncmp(p, defs[r].name, n) == 0) return true;
        p += len + (p[len] == ',');
    }
    return false;
}

static void add_reading(nvml_sensor *s, int r)
{
    s->col[r] = (int)s->n;
    s->info[s->n] = (tw_reading_info){defs[r].name, defs[r].quantity, defs[r].scale};
    s->n++;
}

/* ---------------------------------------------------------------- probing at open */

/* An answer that may differ on the next call. A probe tries again on it, so that one bad
 * answer at the start (NVML errors at random: scripts/faults) does not leave a reading out
 * of the whole run. */
#define PROBE_TRIES 3
static bool transient(nvmlReturn_t r)
{
    return r == NVML_ERROR_UNKNOWN || r == NVML_ERROR_TIMEOUT || r == NVML_ERROR_IRQ_ISSUE;
}
#define PROBE_CALL(r, call)                                                                                            \
    do {                                                                                                               \
        int tries_ = 0;                                                                                                \
        do                                                                                                             \
            (r) = (call);                                                                                              \
        while (transient(r) && ++tries_ < PROBE_TRIES);                                                                \
    } while (0)

static void probe_failed(nvml_sensor *s, int r, nvmlReturn_t code)
{
    add_note(s, "%s: %s %s: %s (%d)", defs[r].name, defs[r].source,
             code == NVML_ERROR_NOT_SUPPORTED ? "not supported" : "failed", tw_nvml_text(s->api, code), (int)code);
}

static void probe_missing(nvml_sensor *s, int r, const char *fn)
{
    add_note(s, "%s: %s is not in %s (driver too old?)", defs[r].name, fn, tw_nvml_path());
}

static void probe_fields(nvml_sensor *s)
{
    const tw_nvml_api *a = s->api;
    if (!a->nvmlDeviceGetFieldValues) {
        for (int i = 0; i < NFIELDS; i++)
            probe_missing(s, R_AVG + i, "nvmlDeviceGetFieldValues");
        return;
    }
    nvmlFieldValue_t fv[NFIELDS];
    memset(fv, 0, sizeof fv);
    for (int i = 0; i < NFIELDS; i++) {
        fv[i].fieldId = field_of[i].field;
        fv[i].scopeId = field_of[i].scope;
    }
    nvmlReturn_t r;
    PROBE_CALL(r, NVML_CALL(a, nvmlDeviceGetFieldValues, s->dev, NFIELDS, fv));
    for (int i = 0; i < NFIELDS; i++) {
        int rd = R_AVG + i;
        nvmlReturn_t code = r != NVML_SUCCESS ? r : fv[i].nvmlReturn;
        double v = 0, gpu_v = 0;
        bool module = field_of[i].scope == NVML_POWER_SCOPE_MODULE;
        if (module && code == NVML_ERROR_NOT_SUPPORTED) continue; /* not a Grace Hopper: nothing to say */
        if (code != NVML_SUCCESS) {
            probe_failed(s, rd, code);
            continue;
        }
        if (!value_of(fv[i].valueType, &fv[i].value, &v)) {
            add_note(s, "%s: %s has an unknown value type %d", defs[rd].name, defs[rd].source, (int)fv[i].valueType);
            continue;
        }
        if (field_of[i].scope == NVML_POWER_SCOPE_MEMORY) {
            /* A driver without power scopes answers the GPU-scope value; a GPU
             * without a memory rail answers 0. Neither is memory power. */
            const nvmlFieldValue_t *g = &fv[i % 2];
            if (v == 0) {
                add_note(s, "%s: %s reads 0 W (no memory power sensor)", defs[rd].name, defs[rd].source);
                continue;
            }
            if (g->nvmlReturn == NVML_SUCCESS && value_of(g->valueType, &g->value, &gpu_v) && gpu_v == v &&
                g->timestamp == fv[i].timestamp) {
                add_note(s, "%s: %s equals the GPU-scope value (this driver ignores the scope)", defs[rd].name,
                         defs[rd].source);
                continue;
            }
        }
        if (module) { /* a driver without scopes answers the GPU's value: not the module's */
            const nvmlFieldValue_t *g = &fv[i % 2];
            if (g->nvmlReturn == NVML_SUCCESS && value_of(g->valueType, &g->value, &gpu_v) && gpu_v == v &&
                g->timestamp == fv[i].timestamp)
                continue;
        }
        if (skipped(s->skip, rd)) continue;
        add_reading(s, rd);
        s->fv[s->nfv] = (nvmlFieldValue_t){.fieldId = field_of[i].field, .scopeId = field_of[i].scope};
        s->fv_reading[s->nfv] = rd;
        s->nfv++;
    }
}

static void probe_buffer(nvml_sensor *s)
{
    const tw_nvml_api *a = s->api;
    if (skipped(s->skip, R_BUFFER)) return;
    if (!a->nvmlDeviceGetSamples) {
        probe_missing(s, R_BUFFER, "nvmlDeviceGetSamples");
        return;
    }
    /* With samples == NULL the driver says how many it can return. */
    unsigned count = 0;
    nvmlValueType_t type = NVML_VALUE_TYPE_UNSIGNED_INT;
    nvmlReturn_t r;
    PROBE_CALL(r, NVML_CALL_OR(a, NVML_ERROR_NOT_FOUND, nvmlDeviceGetSamples, s->dev, NVML_TOTAL_POWER_SAMPLES, 0ULL,
                               &type, &count, NULL));
    if (r != NVML_SUCCESS && r != NVML_ERROR_NOT_FOUND) {
        probe_failed(s, R_BUFFER, r);
        return;
    }
    unsigned cap = count < SAMPLES_MIN_CAP ? SAMPLES_MIN_CAP : count > SAMPLES_MAX_CAP ? SAMPLES_MAX_CAP : count;
    s->sbuf = calloc(cap, sizeof *s->sbuf);
    s->q_mw = calloc(cap, sizeof *s->q_mw);
    s->q_t_s = calloc(cap, sizeof *s->q_t_s);
    if (!s->sbuf || !s->q_mw || !s->q_t_s) {
        add_note(s, "%s: out of memory for %u samples", defs[R_BUFFER].name, cap);
        return;
    }
    s->scap = cap;
    /* What the buffer holds now predates the sensor: skip it. */
    PROBE_CALL(r, (count = cap, NVML_CALL_OR(a, NVML_ERROR_NOT_FOUND, nvmlDeviceGetSamples, s->dev,
                                             NVML_TOTAL_POWER_SAMPLES, 0ULL, &type, &count, s->sbuf)));
    if (r != NVML_SUCCESS && r != NVML_ERROR_NOT_FOUND) {
        probe_failed(s, R_BUFFER, r);
        return;
    }
    if (r == NVML_SUCCESS)
        for (unsigned i = 0; i < count && i < cap; i++)
            if (s->sbuf[i].timeStamp > s->last_seen_us) s->last_seen_us = s->sbuf[i].timeStamp;
    s->last_poll_ns = mono_ns();
    s->last_sample_t_s = -INFINITY;
    add_reading(s, R_BUFFER);
}

static void probe_fast(nvml_sensor *s)
{
    const tw_nvml_api *a = s->api;
    if (skipped(s->skip, R_USAGE)) {
        /* not read */
    } else if (!a->nvmlDeviceGetPowerUsage) {
        probe_missing(s, R_USAGE, "nvmlDeviceGetPowerUsage");
    } else {
        unsigned mw = 0;
        nvmlReturn_t r;
        PROBE_CALL(r, NVML_CALL(a, nvmlDeviceGetPowerUsage, s->dev, &mw));
        if (r == NVML_SUCCESS)
            add_reading(s, R_USAGE);
        else
            probe_failed(s, R_USAGE, r);
    }
    probe_fields(s);
    probe_buffer(s);
}

/* One probe call of a slow reading; `r` is its status. */
static void probe_result(nvml_sensor *s, int rd, nvmlReturn_t r)
{
    if (skipped(s->skip, rd)) return;
    if (r == NVML_SUCCESS)
        add_reading(s, rd);
    else
        probe_failed(s, rd, r);
}

static void probe_slow(nvml_sensor *s)
{
    const tw_nvml_api *a = s->api;
    unsigned long long mj = 0;
    unsigned u = 0;
    nvmlMemory_t mem;
    nvmlReturn_t r;
    if (!a->nvmlDeviceGetTotalEnergyConsumption) {
        probe_missing(s, R_ENERGY, "nvmlDeviceGetTotalEnergyConsumption");
    } else {
        PROBE_CALL(r, NVML_CALL(a, nvmlDeviceGetTotalEnergyConsumption, s->dev, &mj));
        probe_result(s, R_ENERGY, r);
    }
    if (!a->nvmlDeviceGetClockInfo) {
        probe_missing(s, R_SM_CLOCK, "nvmlDeviceGetClockInfo");
        probe_missing(s, R_MEM_CLOCK, "nvmlDeviceGetClockInfo");
    } else {
        PROBE_CALL(r, NVML_CALL(a, nvmlDeviceGetClockInfo, s->dev, NVML_CLOCK_SM, &u));
        probe_result(s, R_SM_CLOCK, r);
        PROBE_CALL(r, NVML_CALL(a, nvmlDeviceGetClockInfo, s->dev, NVML_CLOCK_MEM, &u));
        probe_result(s, R_MEM_CLOCK, r);
    }
    if (!a->nvmlDeviceGetTemperature) {
        probe_missing(s, R_TEMPERATURE, "nvmlDeviceGetTemperature");
    } else {
        PROBE_CALL(r, NVML_CALL(a, nvmlDeviceGetTemperature, s->dev, NVML_TEMPERATURE_GPU, &u));
        probe_result(s, R_TEMPERATURE, r);
    }
    if (!a->nvmlDeviceGetMemoryInfo) {
        probe_missing(s, R_MEM_USED, "nvmlDeviceGetMemoryInfo");
    } else {
        PROBE_CALL(r, NVML_CALL(a, nvmlDeviceGetMemoryInfo, s->dev, &mem));
        probe_result(s, R_MEM_USED, r);
    }
}

/* ---------------------------------------------------------------- devices */

static tw_status nvml_devices(const tw_sensor_config *cfg, tw_device_info *out, size_t cap, size_t *n)
{
    if (!n || (cap && !out)) return tw_fail(TW_EINVAL, "nvml devices: NULL argument");
    *n = 0;
    const tw_nvml_api *a = NULL;
    tw_status st = tw_nvml_acquire(cfg ? cfg->library : NULL, false, &a);
    if (st != TW_OK) return st;
    unsigned count = 0;
    if (NVML_CALL(a, nvmlDeviceGetCount, &count) != NVML_SUCCESS) {
        tw_nvml_release();
        return TW_EUNAVAIL;
    }
    for (unsigned i = 0; i < count && i < cap; i++) {
        tw_device_info *d = &out[i];
        memset(d, 0, sizeof *d);
        d->index = i;
        nvmlDevice_t dev;
        nvmlReturn_t r = NVML_CALL(a, nvmlDeviceGetHandleByIndex, i, &dev);
        if (r == NVML_SUCCESS) r = NVML_CALL(a, nvmlDeviceGetUUID, dev, d->uuid, sizeof d->uuid);
        if (r == NVML_SUCCESS) r = NVML_CALL(a, nvmlDeviceGetName, dev, d->name, sizeof d->name);
        if (r != NVML_SUCCESS) snprintf(d->name, sizeof d->name, "unavailable: %s", tw_last_error());
        /* the sampling plan's default: an old library or device leaves it unknown */
        unsigned arch = 0;
        if (r == NVML_SUCCESS && a->nvmlDeviceGetArchitecture &&
            a->nvmlDeviceGetArchitecture(dev, &arch) == NVML_SUCCESS)
            d->arch = arch;
        /* the estimator's bound on a kernel's power: no name draws more than the GPU may */
        unsigned limit_mw = 0;
        d->power_limit_w = NAN;
        if (r == NVML_SUCCESS && a->nvmlDeviceGetEnforcedPowerLimit &&
            a->nvmlDeviceGetEnforcedPowerLimit(dev, &limit_mw) == NVML_SUCCESS && limit_mw > 0)
            d->power_limit_w = limit_mw / 1000.0;
        /* provenance only: an old library without the call leaves it empty */
        if (a->nvmlSystemGetDriverVersion && a->nvmlSystemGetDriverVersion(d->driver, sizeof d->driver) != NVML_SUCCESS)
            d->driver[0] = '\0';
    }
    *n = count;
    tw_nvml_release();
    return TW_OK;
}

/* ---------------------------------------------------------------- reading rows */

/* What one row's reads came to. */
typedef struct row_ctx {
    unsigned tried, failed;
    bool lost;
    char msg[512]; /* the GPU_IS_LOST message, else the last failure */
} row_ctx;

static void reading_ok(nvml_sensor *s, int r, double raw, double t_s)
{
    if (r != R_BUFFER) s->reads_ok[r]++; /* the buffer counts its drains (poll_samples) */
    int c = s->col[r];
    s->value[c] = raw * defs[r].scale;
    s->t_value[c] = t_s;
    s->valid[c] = 1;
}

/* A read that failed: the reading is absent in this row; the first failure
 * of each code goes to the notes. `msg` is the recorded NVML message. */
static void reading_failed(nvml_sensor *s, row_ctx *rc, int r, nvmlReturn_t code, const char *msg)
{
    rc->failed++;
    s->reads_failed[r]++;
    if (!rc->lost) snprintf(rc->msg, sizeof rc->msg, "%s", msg);
    if (code == NVML_ERROR_GPU_IS_LOST) rc->lost = true;
    for (int k = 0; k < FAIL_KINDS; k++) {
        if (s->noted[r][k] == code) return;
        if (s->noted[r][k] == NVML_SUCCESS) {
            s->noted[r][k] = code;
            add_note(s, "%s: read failed: %s (the reading is absent in such rows)", defs[r].name, msg);
            return;
        }
    }
}

static void read_usage(nvml_sensor *s, row_ctx *rc)
{
    unsigned mw = 0;
    int64_t t1 = mono_ns();
    nvmlReturn_t r = NVML_CALL(s->api, nvmlDeviceGetPowerUsage, s->dev, &mw);
    int64_t t2 = mono_ns();
    rc->tried++;
    if (r == NVML_SUCCESS)
        reading_ok(s, R_USAGE, mw, timeline_s(s, t1 + (t2 - t1) / 2));
    else
        reading_failed(s, rc, R_USAGE, r, tw_last_error());
}

static void read_fields(nvml_sensor *s, row_ctx *rc)
{
    for (int i = 0; i < s->nfv; i++) {
        nvmlFieldValue_t *f = &s->fv[i];
        *f = (nvmlFieldValue_t){.fieldId = f->fieldId, .scopeId = f->scopeId, .nvmlReturn = NVML_ERROR_UNKNOWN};
    }
    int64_t t1 = mono_ns();
    nvmlReturn_t r = NVML_CALL(s->api, nvmlDeviceGetFieldValues, s->dev, s->nfv, s->fv);
    int64_t t2 = mono_ns();
    int64_t mid = t1 + (t2 - t1) / 2;
    for (int i = 0; i < s->nfv; i++) {
        const nvmlFieldValue_t *f = &s->fv[i];
        int rd = s->fv_reading[i];
        double v = 0;
        rc->tried++;
        if (r != NVML_SUCCESS) {
            reading_failed(s, rc, rd, r, tw_last_error());
        } else if (f->nvmlReturn != NVML_SUCCESS) {
            (void)tw_fail(tw_nvml_status_of(f->nvmlReturn), "nvmlDeviceGetFieldValues: %s: %s (%d)", defs[rd].source,
                          tw_nvml_text(s->api, f->nvmlReturn), (int)f->nvmlReturn);
            reading_failed(s, rc, rd, f->nvmlReturn, tw_last_error());
        } else if (!value_of(f->valueType, &f->value, &v)) {
            (void)tw_fail(TW_EUNSUPPORTED, "nvmlDeviceGetFieldValues: %s: unknown value type %d", defs[rd].source,
                          (int)f->valueType);
            reading_failed(s, rc, rd, NVML_ERROR_UNKNOWN, tw_last_error());
        } else {
            reading_ok(s, rd, v, realtime_us_s(s, f->timestamp, mid));
        }
    }
}

/* Sorts one answer by time (the driver gives them in order; this makes sure). */
static void sort_samples(nvmlSample_t *x, unsigned n)
{
    for (unsigned i = 1; i < n; i++) {
        nvmlSample_t v = x[i];
        unsigned j = i;
        for (; j > 0 && x[j - 1].timeStamp > v.timeStamp; j--)
            x[j] = x[j - 1];
        x[j] = v;
    }
}

/* Drains the driver's buffer into the queue: every sample after the last
 * one seen, so none is lost while the buffer does not wrap between polls. */
static void poll_samples(nvml_sensor *s, row_ctx *rc, int64_t now)
{
    unsigned count = s->scap;
    nvmlValueType_t type = NVML_VALUE_TYPE_UNSIGNED_INT;
    int64_t since = s->last_poll_ns;
    s->last_poll_ns = now;
    rc->tried++;
    nvmlReturn_t r = NVML_CALL_OR(s->api, NVML_ERROR_NOT_FOUND, nvmlDeviceGetSamples, s->dev, NVML_TOTAL_POWER_SAMPLES,
                                  s->last_seen_us, &type, &count, s->sbuf);
    if (r != NVML_SUCCESS && r != NVML_ERROR_NOT_FOUND) {
        reading_failed(s, rc, R_BUFFER, r, tw_last_error());
        return;
    }
    s->reads_ok[R_BUFFER]++;
    if (r == NVML_ERROR_NOT_FOUND) return; /* nothing new */
    if (count > s->scap) count = s->scap;
    if (count == s->scap && s->last_seen_us && !s->noted_full) {
        s->noted_full = true;
        add_note(s,
                 "%s: the driver's buffer was full when drained (%u samples, %.2f s after the drain before): "
                 "samples may have been lost; drain it more often",
                 defs[R_BUFFER].name, count, (double)(now - since) * 1e-9);
    }
    sort_samples(s->sbuf, count);
    for (unsigned i = 0; i < count; i++) {
        const nvmlSample_t *x = &s->sbuf[i];
        double mw;
        if (x->timeStamp <= s->last_seen_us) continue;
        if (!value_of(type, &x->sampleValue, &mw)) {
            (void)tw_fail(TW_EUNSUPPORTED, "nvmlDeviceGetSamples: unknown value type %d", (int)type);
            reading_failed(s, rc, R_BUFFER, NVML_ERROR_UNKNOWN, tw_last_error());
            return;
        }
        /* after a step of the wall clock, a sample stamped before it maps off the timeline:
         * before the last one queued, or after now; it is left out */
        double t = realtime_us_s(s, (long long)x->timeStamp, now);
        if (t <= s->last_sample_t_s) continue;
        if (t > timeline_s(s, now) + 0.5) continue;
        unsigned at = (s->q_head + s->q_count) % s->scap;
        s->q_mw[at] = mw;
        s->q_t_s[at] = t;
        s->q_count++;
        s->last_seen_us = x->timeStamp;
        s->last_sample_t_s = t;
    }
}

static void read_buffer(nvml_sensor *s, row_ctx *rc, int64_t now)
{
    if (s->q_count == 0 && now - s->last_poll_ns >= s->poll_ns) poll_samples(s, rc, now);
    if (s->q_count == 0) return; /* absent in this row: no new sample */
    reading_ok(s, R_BUFFER, s->q_mw[s->q_head], s->q_t_s[s->q_head]);
    s->q_head = (s->q_head + 1) % s->scap;
    s->q_count--;
}

static void read_fast(nvml_sensor *s, row_ctx *rc, int64_t now)
{
    if (s->col[R_USAGE] >= 0) read_usage(s, rc);
    if (s->nfv > 0) read_fields(s, rc);
    if (s->col[R_BUFFER] >= 0) read_buffer(s, rc, now);
}

/* Marks a slow reading from one call that ran from t1 to t2. */
static void slow_result(nvml_sensor *s, row_ctx *rc, int rd, nvmlReturn_t r, double raw, int64_t t1, int64_t t2)
{
    rc->tried++;
    if (r == NVML_SUCCESS)
        reading_ok(s, rd, raw, timeline_s(s, t1 + (t2 - t1) / 2));
    else
        reading_failed(s, rc, rd, r, tw_last_error());
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Whether a counter read that took d ns is late (LATE_READ_NS); d joins the history. */
static bool late_read(nvml_sensor *s, int64_t d)
{
    unsigned n = s->ncalls < CALL_HISTORY ? s->ncalls : CALL_HISTORY;
    int64_t sorted[CALL_HISTORY];
    memcpy(sorted, s->call_ns, n * sizeof *sorted);
    qsort(sorted, n, sizeof *sorted, cmp_i64);
    int64_t median = n ? sorted[n / 2] : 0;
    s->call_ns[s->ncalls++ % CALL_HISTORY] = d;
    return d > LATE_READ_NS && d > LATE_READ_TIMES * median;
}

static void read_slow(nvml_sensor *s, row_ctx *rc)
{
    const tw_nvml_api *a = s->api;
    int64_t t1, t2;
    nvmlReturn_t r;
    if (s->col[R_ENERGY] >= 0) {
        unsigned long long mj = 0;
        t1 = mono_ns();
        r = NVML_CALL(a, nvmlDeviceGetTotalEnergyConsumption, s->dev, &mj);
        t2 = mono_ns();
        if (r == NVML_SUCCESS && late_read(s, t2 - t1))
            s->reads_late++; /* absent in this row, like a failed read, but not counted as one */
        else
            slow_result(s, rc, R_ENERGY, r, (double)mj, t1, t2);
    }
    static const struct {
        int reading;
        nvmlClockType_t clock;
    } clocks[] = {{R_SM_CLOCK, NVML_CLOCK_SM}, {R_MEM_CLOCK, NVML_CLOCK_MEM}};
    for (size_t i = 0; i < sizeof clocks / sizeof clocks[0]; i++) {
        if (s->col[clocks[i].reading] < 0) continue;
        unsigned mhz = 0;
        t1 = mono_ns();
        r = NVML_CALL(a, nvmlDeviceGetClockInfo, s->dev, clocks[i].clock, &mhz);
        t2 = mono_ns();
        slow_result(s, rc, clocks[i].reading, r, mhz, t1, t2);
    }
    if (s->col[R_TEMPERATURE] >= 0) {
        unsigned c = 0;
        t1 = mono_ns();
        r = NVML_CALL(a, nvmlDeviceGetTemperature, s->dev, NVML_TEMPERATURE_GPU, &c);
        t2 = mono_ns();
        slow_result(s, rc, R_TEMPERATURE, r, c, t1, t2);
    }
    if (s->col[R_MEM_USED] >= 0) {
        nvmlMemory_t mem = {0, 0, 0};
        t1 = mono_ns();
        r = NVML_CALL(a, nvmlDeviceGetMemoryInfo, s->dev, &mem);
        t2 = mono_ns();
        slow_result(s, rc, R_MEM_USED, r, (double)mem.used, t1, t2);
    }
}

/* The notes with a count line for each reading whose reads failed, when a
 * read failed or a note came since they were last made. */
static void update_notes_out(nvml_sensor *s)
{
    unsigned long long failed = s->reads_late;
    for (int r = 0; r < R_COUNT; r++)
        failed += s->reads_failed[r];
    if (!failed || (failed == s->out_failed && s->notes_len == s->out_notes_len)) return;
    size_t cap = sizeof s->notes_out, n = (size_t)snprintf(s->notes_out, cap, "%s", s->notes);
    for (int r = 0; r < R_COUNT && n < cap; r++)
        if (s->reads_failed[r])
            n += (size_t)snprintf(s->notes_out + n, cap - n, "%s%s: %llu of %llu %s failed", n ? "\n" : "",
                                  defs[r].name, s->reads_failed[r], s->reads_failed[r] + s->reads_ok[r],
                                  r == R_BUFFER ? "drains of the sample buffer" : "reads");
    if (s->reads_late && n < cap)
        snprintf(s->notes_out + n, cap - n,
                 "%s%s: %llu of %llu reads took longer than %lld ms and %d times their recent median and were not used "
                 "(the time of their value is uncertain; the next read carries their energy)",
                 n ? "\n" : "", defs[R_ENERGY].name, s->reads_late, s->reads_late + s->reads_ok[R_ENERGY],
                 LATE_READ_NS / 1000000LL, LATE_READ_TIMES);
    s->out_failed = failed;
    s->out_notes_len = s->notes_len;
}

static tw_status nvml_next(void *state, tw_row *row, bool *eof)
{
    nvml_sensor *s = state;
    *eof = false;
    if (s->dead) return tw_fail(TW_EUNAVAIL, "%s", s->dead_msg);
    memset(s->valid, 0, sizeof s->valid);
    row_ctx rc = {0, 0, false, ""};
    int64_t start = mono_ns();
    if (s->q_count > 0 && start - s->last_full_ns < PENDING_NS) {
        /* the rest of a drain, taken at once (nvml_pending): one sample a row,
         * nothing else read; a caller that comes back later reads it all again */
        read_buffer(s, &rc, start);
    } else {
        s->last_full_ns = start;
        /* before every read that gets wall-clock stamps: a step of the clock is seen at the
         * next row, not up to a second later (three clock reads, ~0.1 us) */
        refresh_offset(s);
        if (s->groups & TW_READ_FAST) read_fast(s, &rc, start);
        if (s->groups & TW_READ_SLOW) read_slow(s, &rc);
    }
    int64_t end = mono_ns();
    update_notes_out(s);

    if (rc.lost) {
        s->dead = true;
        snprintf(s->dead_msg, sizeof s->dead_msg, "nvml device %u (%s): %s", s->index, s->uuid, rc.msg);
        return tw_fail(TW_EUNAVAIL, "%s", s->dead_msg);
    }
    if (rc.tried > 0 && rc.failed == rc.tried) {
        if (s->fail_rows++ == 0) s->fail_since_ns = start;
        if (s->fail_rows >= DEAD_ROWS && start - s->fail_since_ns >= DEAD_NS) {
            s->dead = true;
            snprintf(s->dead_msg, sizeof s->dead_msg, "nvml device %u (%s): every reading failed for %.1f s; last: %s",
                     s->index, s->uuid, (double)(start - s->fail_since_ns) * 1e-9, rc.msg);
            return tw_fail(TW_EUNAVAIL, "%s", s->dead_msg);
        }
    } else if (rc.tried > rc.failed) {
        s->fail_rows = 0;
    }

    row->t_s = timeline_s(s, start + (end - start) / 2);
    row->n = s->n;
    row->value = s->value;
    row->t_value_s = s->t_value;
    row->valid = s->valid;
    return TW_OK;
}

/* ---------------------------------------------------------------- the backend */

static bool nvml_available(char *why, size_t why_len)
{
    const tw_nvml_api *a = NULL;
    if (tw_nvml_acquire(NULL, true, &a) != TW_OK) {
        snprintf(why, why_len, "%s", tw_last_error());
        return false;
    }
    tw_nvml_release();
    return true;
}

static void nvml_close(void *state)
{
    nvml_sensor *s = state;
    if (!s) return;
    free(s->sbuf);
    free(s->q_mw);
    free(s->q_t_s);
    if (s->api) tw_nvml_release();
    free(s);
}

static tw_status nvml_open(const tw_sensor_config *cfg, void **state)
{
    if (!cfg || !state) return tw_fail(TW_EINVAL, "nvml backend: NULL argument");
    *state = NULL;
    unsigned groups = cfg->groups ? cfg->groups : TW_READ_ALL;
    if (groups & ~TW_READ_ALL)
        return tw_fail(TW_EINVAL, "nvml: unknown reading groups 0x%x (TW_READ_FAST = 1, TW_READ_SLOW = 2)",
                       cfg->groups);
    nvml_sensor *s = calloc(1, sizeof *s);
    if (!s) return tw_fail(TW_ENOMEM, "out of memory (nvml sensor)");
    s->groups = groups;
    for (int r = 0; r < R_COUNT; r++)
        s->col[r] = -1;
    tw_status st = tw_nvml_acquire(cfg->library, false, &s->api);
    if (st != TW_OK) {
        s->api = NULL;
        nvml_close(s);
        return st;
    }
    st = tw_nvml_pick_device(s->api, cfg->device && *cfg->device ? cfg->device : "0", &s->dev, &s->index, s->uuid,
                             s->name);
    if (st != TW_OK) {
        nvml_close(s);
        return st;
    }
    s->t0_ns = cfg->t0_mono_ns ? (int64_t)cfg->t0_mono_ns : mono_ns();
    s->poll_ns = cfg->buffer_poll_s > 0 ? (int64_t)(cfg->buffer_poll_s * 1e9) : BUFFER_POLL_NS;
    s->skip = cfg->skip;
    refresh_offset(s);
    if (groups & TW_READ_FAST) probe_fast(s);
    if (groups & TW_READ_SLOW) probe_slow(s);
    s->skip = NULL;
    if (s->n == 0) {
        st = tw_fail(TW_EUNSUPPORTED, "nvml device %u (%s, %s) supports none of the %s readings:\n%s", s->index,
                     s->uuid, s->name,
                     groups == TW_READ_ALL    ? "fast or slow"
                     : groups == TW_READ_FAST ? "fast"
                                              : "slow",
                     s->notes);
        nvml_close(s);
        return st;
    }
    *state = s;
    return TW_OK;
}

static size_t nvml_nreadings(const void *state) { return ((const nvml_sensor *)state)->n; }

static const tw_reading_info *nvml_reading(const void *state, size_t i)
{
    const nvml_sensor *s = state;
    return i < s->n ? &s->info[i] : NULL;
}

static const char *nvml_notes(const void *state)
{
    const nvml_sensor *s = state;
    return s->out_failed ? s->notes_out : s->notes;
}

/* Samples of the last drain not yet given: the sampler takes them at once. */
static size_t nvml_pending(const void *state) { return ((const nvml_sensor *)state)->q_count; }

const tw_backend tw_backend_nvml = {
    .abi = TW_BACKEND_ABI,
    .name = "nvml",
    .description = "NVIDIA GPUs through libnvidia-ml (dlopen)",
    .available = nvml_available,
    .open = nvml_open,
    .nreadings = nvml_nreadings,
    .reading = nvml_reading,
    .next = nvml_next,
    .rewind = NULL,
    .close = nvml_close,
    .notes = nvml_notes,
    .devices = nvml_devices,
    .pending = nvml_pending,
};
