/*
 * pm_device.c - CUPTI's PM sampling on one device (pm_device.h). Every
 * entry point is looked up at run time and checked; the CUPTI headers give
 * types only.
 */
#define _GNU_SOURCE /* RTLD_DEFAULT */

#include "inject/pm_device.h"

#include <dlfcn.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CUPTI_FN(name) __typeof__(&name) name

static struct {
    CUPTI_FN(cuptiGetResultString);
    CUPTI_FN(cuptiGetTimestamp);
    CUPTI_FN(cuptiProfilerInitialize);
    CUPTI_FN(cuptiDeviceGetChipName);
    CUPTI_FN(cuptiProfilerDeviceSupported);
    CUPTI_FN(cuptiPmSamplingGetCounterAvailability);
    CUPTI_FN(cuptiProfilerHostInitialize);
    CUPTI_FN(cuptiProfilerHostDeinitialize);
    CUPTI_FN(cuptiProfilerHostConfigAddMetrics);
    CUPTI_FN(cuptiProfilerHostGetConfigImageSize);
    CUPTI_FN(cuptiProfilerHostGetConfigImage);
    CUPTI_FN(cuptiProfilerHostGetNumOfPasses);
    CUPTI_FN(cuptiProfilerHostEvaluateToGpuValues);
    CUPTI_FN(cuptiPmSamplingEnable);
    CUPTI_FN(cuptiPmSamplingDisable);
    CUPTI_FN(cuptiPmSamplingSetConfig);
    CUPTI_FN(cuptiPmSamplingGetCounterDataSize);
    CUPTI_FN(cuptiPmSamplingCounterDataImageInitialize);
    CUPTI_FN(cuptiPmSamplingStart);
    CUPTI_FN(cuptiPmSamplingStop);
    CUPTI_FN(cuptiPmSamplingDecodeData);
    CUPTI_FN(cuptiPmSamplingGetCounterDataInfo);
    CUPTI_FN(cuptiPmSamplingCounterDataGetSampleInfo);
} api;

static bool sym(void *h, const char *name, void *slot)
{
    void *p = dlsym(h ? h : RTLD_DEFAULT, name);
    if (p) memcpy(slot, &p, sizeof p); /* object to function pointer, as POSIX dlsym allows */
    return p != NULL;
}

bool twi_pm_load(void *handle, char *why, size_t cap)
{
    bool ok = true;
    const char *missing = NULL;
#define LOAD(name)                                                                                                     \
    if (!sym(handle, #name, &api.name)) ok = false, missing = missing ? missing : #name
    LOAD(cuptiGetResultString);
    LOAD(cuptiGetTimestamp);
    LOAD(cuptiProfilerInitialize);
    LOAD(cuptiDeviceGetChipName);
    LOAD(cuptiProfilerDeviceSupported);
    LOAD(cuptiPmSamplingGetCounterAvailability);
    LOAD(cuptiProfilerHostInitialize);
    LOAD(cuptiProfilerHostDeinitialize);
    LOAD(cuptiProfilerHostConfigAddMetrics);
    LOAD(cuptiProfilerHostGetConfigImageSize);
    LOAD(cuptiProfilerHostGetConfigImage);
    LOAD(cuptiProfilerHostGetNumOfPasses);
    LOAD(cuptiProfilerHostEvaluateToGpuValues);
    LOAD(cuptiPmSamplingEnable);
    LOAD(cuptiPmSamplingDisable);
    LOAD(cuptiPmSamplingSetConfig);
    LOAD(cuptiPmSamplingGetCounterDataSize);
    LOAD(cuptiPmSamplingCounterDataImageInitialize);
    LOAD(cuptiPmSamplingStart);
    LOAD(cuptiPmSamplingStop);
    LOAD(cuptiPmSamplingDecodeData);
    LOAD(cuptiPmSamplingGetCounterDataInfo);
    LOAD(cuptiPmSamplingCounterDataGetSampleInfo);
#undef LOAD
    if (!ok) snprintf(why, cap, "this CUPTI has no %s (PM sampling needs CUDA 12.6 or later)", missing);
    return ok;
}

const char *twi_pm_result_text(CUptiResult r)
{
    const char *s = NULL;
    if (api.cuptiGetResultString && api.cuptiGetResultString(r, &s) == CUPTI_SUCCESS && s) return s;
    return "unknown CUPTI error";
}

uint64_t twi_pm_now(void)
{
    uint64_t t = 0;
    if (api.cuptiGetTimestamp) api.cuptiGetTimestamp(&t);
    return t;
}

/* "CALL: CUPTI's text (CUPTI error N)" into why; false. */
static bool failed(char *why, size_t cap, const char *call, CUptiResult r)
{
    snprintf(why, cap, "%s: %s (CUPTI error %d)", call, twi_pm_result_text(r), (int)r);
    return false;
}

#define STOP_DRAIN_S 0.25 /* twi_pm_device_stop's decoding before the stop, at most */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

bool twi_pm_init_profiler(char *why, size_t cap)
{
    CUpti_Profiler_Initialize_Params ip = {.structSize = CUpti_Profiler_Initialize_Params_STRUCT_SIZE};
    CUptiResult r = api.cuptiProfilerInitialize(&ip);
    return r == CUPTI_SUCCESS || failed(why, cap, "cuptiProfilerInitialize", r);
}

/* ---------------------------------------------------------------- the device and its metrics */

/* Why the device does not support PM sampling, from CUPTI's answer. */
static void unsupported_why(const CUpti_Profiler_DeviceSupported_Params *ds, char *why, size_t cap)
{
    static const char *const lv[] = {"unknown", "unsupported", "disabled", "supported"};
    struct {
        const char *what;
        CUpti_Profiler_Support_Level v;
    } parts[] = {{"architecture", ds->architecture},
                 {"SLI", ds->sli},
                 {"vGPU", ds->vGpu},
                 {"confidential compute", ds->confidentialCompute},
                 {"CMP", ds->cmp},
                 {"WSL", ds->wsl}};
    snprintf(why, cap, "the device does not support PM sampling:");
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
        if (parts[i].v != CUPTI_PROFILER_CONFIGURATION_SUPPORTED) {
            size_t used = strlen(why);
            snprintf(why + used, cap - used, " %s %s", parts[i].what, (unsigned)parts[i].v < 4 ? lv[parts[i].v] : "?");
        }
}

bool twi_pm_device_prepare(twi_pm_device *d, char *why, size_t cap)
{
    CUptiResult r;
    CUpti_Device_GetChipName_Params cn = {.structSize = CUpti_Device_GetChipName_Params_STRUCT_SIZE};
    cn.deviceIndex = (size_t)d->index;
    if ((r = api.cuptiDeviceGetChipName(&cn)) != CUPTI_SUCCESS) return failed(why, cap, "cuptiDeviceGetChipName", r);
    d->chip = cn.pChipName;
    CUpti_Profiler_DeviceSupported_Params ds = {.structSize = CUpti_Profiler_DeviceSupported_Params_STRUCT_SIZE};
    ds.cuDevice = d->dev;
    ds.api = CUPTI_PROFILER_PM_SAMPLING;
    if ((r = api.cuptiProfilerDeviceSupported(&ds)) != CUPTI_SUCCESS)
        return failed(why, cap, "cuptiProfilerDeviceSupported(PM_SAMPLING)", r);
    d->support = ds;
    if (ds.isSupported != CUPTI_PROFILER_CONFIGURATION_SUPPORTED) {
        unsupported_why(&ds, why, cap);
        return false;
    }
    CUpti_PmSampling_GetCounterAvailability_Params ca = {
        .structSize = CUpti_PmSampling_GetCounterAvailability_Params_STRUCT_SIZE};
    ca.deviceIndex = (size_t)d->index;
    if ((r = api.cuptiPmSamplingGetCounterAvailability(&ca)) != CUPTI_SUCCESS)
        return failed(why, cap, "cuptiPmSamplingGetCounterAvailability", r);
    d->avail_size = ca.counterAvailabilityImageSize;
    if (!(d->avail = calloc(1, d->avail_size ? d->avail_size : 1))) return snprintf(why, cap, "out of memory"), false;
    ca.pCounterAvailabilityImage = d->avail;
    if ((r = api.cuptiPmSamplingGetCounterAvailability(&ca)) != CUPTI_SUCCESS)
        return failed(why, cap, "cuptiPmSamplingGetCounterAvailability", r);
    return true;
}

CUpti_Profiler_Host_Object *twi_pm_host_new(const twi_pm_device *d)
{
    CUpti_Profiler_Host_Initialize_Params p = {.structSize = CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE};
    p.profilerType = CUPTI_PROFILER_TYPE_PM_SAMPLING;
    p.pChipName = d->chip;
    p.pCounterAvailabilityImage = d->avail;
    return api.cuptiProfilerHostInitialize(&p) == CUPTI_SUCCESS ? p.pHostObject : NULL;
}

void twi_pm_host_free(CUpti_Profiler_Host_Object *h)
{
    if (!h) return;
    CUpti_Profiler_Host_Deinitialize_Params p = {.structSize = CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE};
    p.pHostObject = h;
    api.cuptiProfilerHostDeinitialize(&p);
}

/* The config image of `names` in a fresh host object; the passes it needs
 * in *passes; *why: CUPTI's message when refused (NULL when not). The host
 * object and image are kept in *keep / *config when keep is given, else
 * freed. False when refused. */
static bool config_for(const twi_pm_device *d, const char *const *names, size_t n, size_t *passes, const char **why,
                       CUpti_Profiler_Host_Object **keep, uint8_t **config, size_t *config_size)
{
    *why = NULL;
    *passes = 0;
    CUpti_Profiler_Host_Object *h = twi_pm_host_new(d);
    if (!h) {
        *why = "host object refused";
        return false;
    }
    CUpti_Profiler_Host_ConfigAddMetrics_Params a = {.structSize =
                                                         CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE};
    a.pHostObject = h;
    a.ppMetricNames = (const char **)names;
    a.numMetrics = n;
    CUptiResult r = api.cuptiProfilerHostConfigAddMetrics(&a);
    bool ok = r == CUPTI_SUCCESS;
    if (!ok) *why = twi_pm_result_text(r);
    CUpti_Profiler_Host_GetConfigImageSize_Params s = {.structSize =
                                                           CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE};
    s.pHostObject = h;
    if (ok && (r = api.cuptiProfilerHostGetConfigImageSize(&s)) != CUPTI_SUCCESS)
        ok = false, *why = twi_pm_result_text(r);
    uint8_t *img = ok ? calloc(1, s.configImageSize ? s.configImageSize : 1) : NULL;
    if (ok && !img) ok = false, *why = "out of memory";
    if (ok) {
        CUpti_Profiler_Host_GetConfigImage_Params c = {.structSize =
                                                           CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE};
        c.pHostObject = h;
        c.configImageSize = s.configImageSize;
        c.pConfigImage = img;
        if ((r = api.cuptiProfilerHostGetConfigImage(&c)) != CUPTI_SUCCESS) ok = false, *why = twi_pm_result_text(r);
    }
    if (ok) {
        CUpti_Profiler_Host_GetNumOfPasses_Params np = {.structSize =
                                                            CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE};
        np.configImageSize = s.configImageSize;
        np.pConfigImage = img;
        if ((r = api.cuptiProfilerHostGetNumOfPasses(&np)) != CUPTI_SUCCESS) ok = false, *why = twi_pm_result_text(r);
        *passes = np.numOfPasses;
    }
    if (ok && keep) {
        *keep = h;
        *config = img;
        *config_size = s.configImageSize;
    } else {
        twi_pm_host_free(h);
        free(img);
    }
    return ok;
}

static void append_name(char *list, size_t cap, const char *name)
{
    size_t used = strlen(list);
    snprintf(list + used, cap - used, "%s%s", used ? "," : "", name);
}

/* What the choice says of candidate `metric` (printf-style), to o->verdict. */
static void verdict(const twi_pm_options *o, const char *metric, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void verdict(const twi_pm_options *o, const char *metric, const char *fmt, ...)
{
    if (!o->verdict) return;
    char line[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    o->verdict(o->ctx, metric, line);
}

/* A candidate: alone (when asked), then with those kept before it; kept
 * when it fits in one pass with them, else listed in d->refused. */
static void try_candidate(twi_pm_device *d, const twi_pm_options *o, const char *name)
{
    size_t passes;
    const char *why;
    if (o->try_alone) {
        if (!config_for(d, &name, 1, &passes, &why, NULL, NULL, NULL)) {
            verdict(o, name, "REFUSED: %s", why);
            append_name(d->refused, sizeof d->refused, name);
            return;
        }
        if (passes != 1) {
            verdict(o, name, "REFUSED: needs %zu passes alone", passes);
            append_name(d->refused, sizeof d->refused, name);
            return;
        }
    }
    d->metric[d->n_metric++] = name;
    if (!config_for(d, d->metric, d->n_metric, &passes, &why, NULL, NULL, NULL) || passes != 1) {
        d->n_metric--;
        append_name(d->refused, sizeof d->refused, name);
        const char *alone = o->try_alone ? "accepted alone, " : "";
        if (why)
            verdict(o, name, "%sREFUSED with those before: %s", alone, why);
        else
            verdict(o, name, "%sREFUSED with those before: %zu passes", alone, passes);
        return;
    }
    verdict(o, name, "ACCEPTED (%zu together in one pass)", d->n_metric);
}

bool twi_pm_device_choose(twi_pm_device *d, const twi_pm_options *o, char *why, size_t cap)
{
    for (size_t i = 0; i < o->n_wanted && d->n_metric < TWI_PM_MAX_METRICS; i++)
        try_candidate(d, o, o->wanted[i]);
    size_t passes;
    const char *cw = NULL;
    if (!d->n_metric) {
        snprintf(why, cap, "the chip %s accepts none of the metrics in one pass (refused: %s)", d->chip ? d->chip : "?",
                 d->refused);
        return false;
    }
    if (!config_for(d, d->metric, d->n_metric, &passes, &cw, &d->host, &d->config, &d->config_size)) {
        snprintf(why, cap, "the chosen metrics' config image: %s", cw ? cw : "?");
        return false;
    }
    return true;
}

/* ---------------------------------------------------------------- sampling */

bool twi_pm_device_enable(twi_pm_device *d, const twi_pm_options *o, char *why, size_t cap)
{
    CUptiResult r;
    CUpti_PmSampling_Enable_Params en = {.structSize = CUpti_PmSampling_Enable_Params_STRUCT_SIZE};
    en.deviceIndex = (size_t)d->index;
    if ((r = api.cuptiPmSamplingEnable(&en)) != CUPTI_SUCCESS) return failed(why, cap, "cuptiPmSamplingEnable", r);
    d->obj = en.pPmSamplingObject;
    d->interval_ns = o->interval_ns;

    CUpti_PmSampling_SetConfig_Params sc = {.structSize = CUpti_PmSampling_SetConfig_Params_STRUCT_SIZE};
    sc.pPmSamplingObject = d->obj;
    sc.configSize = d->config_size;
    sc.pConfig = d->config;
    sc.hardwareBufferSize = o->hwbuf_bytes;
    sc.samplingInterval = o->interval_ns;
    sc.triggerMode = CUPTI_PM_SAMPLING_TRIGGER_MODE_GPU_TIME_INTERVAL;
    sc.hwBufferAppendMode = CUPTI_PM_SAMPLING_HARDWARE_BUFFER_APPEND_MODE_KEEP_OLDEST;
    d->trigger = "GPU_TIME_INTERVAL (ns)";
    if (api.cuptiPmSamplingSetConfig(&sc) != CUPTI_SUCCESS) {
        /* the time trigger is GA10x and later; the SYSCLK one counts cycles (the same number:
         * about the same interval at a ~1 GHz system clock) */
        sc.triggerMode = CUPTI_PM_SAMPLING_TRIGGER_MODE_GPU_SYSCLK_INTERVAL;
        d->trigger = "GPU_SYSCLK_INTERVAL (cycles; fallback)";
        if ((r = api.cuptiPmSamplingSetConfig(&sc)) != CUPTI_SUCCESS)
            return failed(why, cap, "cuptiPmSamplingSetConfig", r);
    }
    CUpti_PmSampling_GetCounterDataSize_Params cs = {.structSize =
                                                         CUpti_PmSampling_GetCounterDataSize_Params_STRUCT_SIZE};
    cs.pPmSamplingObject = d->obj;
    cs.pMetricNames = d->metric;
    cs.numMetrics = d->n_metric;
    cs.maxSamples = o->image_samples;
    if ((r = api.cuptiPmSamplingGetCounterDataSize(&cs)) != CUPTI_SUCCESS)
        return failed(why, cap, "cuptiPmSamplingGetCounterDataSize", r);
    d->image_size = cs.counterDataSize;
    d->image = calloc(1, d->image_size ? d->image_size : 1);
    d->blank = calloc(1, d->image_size ? d->image_size : 1);
    if (!d->image || !d->blank) return snprintf(why, cap, "out of memory (counter data image)"), false;
    CUpti_PmSampling_CounterDataImage_Initialize_Params ci = {
        .structSize = CUpti_PmSampling_CounterDataImage_Initialize_Params_STRUCT_SIZE};
    ci.pPmSamplingObject = d->obj;
    ci.counterDataSize = d->image_size;
    ci.pCounterData = d->image;
    if ((r = api.cuptiPmSamplingCounterDataImageInitialize(&ci)) != CUPTI_SUCCESS)
        return failed(why, cap, "cuptiPmSamplingCounterDataImageInitialize", r);
    memcpy(d->blank, d->image, d->image_size);
    return true;
}

bool twi_pm_device_start(twi_pm_device *d, char *why, size_t cap)
{
    CUpti_PmSampling_Start_Params st = {.structSize = CUpti_PmSampling_Start_Params_STRUCT_SIZE};
    st.pPmSamplingObject = d->obj;
    CUptiResult r = api.cuptiPmSamplingStart(&st);
    if (r != CUPTI_SUCCESS) return failed(why, cap, "cuptiPmSamplingStart", r);
    d->started = true;
    return true;
}

/* A sample the run file can hold: a span that ends after it starts and
 * finite values. On the H100 a rare sample came with a rate metric of 0.06
 * cycles a second (a span far too long or none at all); one of `inf` there
 * would be a line the events file's reader refuses, and it stops at it. */
static bool usable(uint64_t start, uint64_t end, const double *v, size_t n)
{
    if (end <= start) return false;
    for (size_t i = 0; i < n; i++)
        if (!isfinite(v[i])) return false;
    return true;
}

/* The first sample left out, said at the end (what CUPTI gave, so that a
 * new kind of unusable sample can be told from the known ones). */
static void note_unusable(twi_pm_device *d, const char *why, uint64_t start, uint64_t end, const double *v)
{
    const bool no_span = !why && end <= start; /* else, without why: a value not finite (usable) */
    if (no_span)
        d->no_span++;
    else if (!why)
        d->not_finite++;
    if (d->verbose && d->eval_errors < 20) {
        fprintf(stderr,
                "truewatt-inject: PM sample left out: %s, %" PRIu64 " .. %" PRIu64 " ns (the last kept ended %" PRIu64
                "):",
                why ? why : "values", start, end, d->last_end_ns);
        for (size_t i = 0; !why && i < d->n_metric; i++)
            fprintf(stderr, " %g", v[i]);
        fputc('\n', stderr);
    }
    if (d->unusable[0]) return;
    if (why) {
        snprintf(d->unusable, sizeof d->unusable, "%s", why);
        return;
    }
    if (no_span) {
        snprintf(d->unusable, sizeof d->unusable, "no span (%" PRIu64 " .. %" PRIu64 " ns)", start, end);
        return;
    }
    double active = NAN;
    for (size_t i = 0; i < d->n_metric; i++)
        if (strcmp(d->metric[i], "sm__cycles_active.avg") == 0) active = v[i];
    for (size_t i = 0; i < d->n_metric; i++)
        if (!isfinite(v[i])) {
            snprintf(d->unusable, sizeof d->unusable, "%s = %g (sm__cycles_active.avg = %g)", d->metric[i], v[i],
                     active);
            return;
        }
}

/* Sample i's span and values; false when CUPTI cannot give them or they are
 * not usable (note_unusable counts it and keeps the first one's why). */
static bool sample_of(twi_pm_device *d, size_t i, uint64_t *start, uint64_t *end, double *v)
{
    CUpti_PmSampling_CounterData_GetSampleInfo_Params si = {
        .structSize = CUpti_PmSampling_CounterData_GetSampleInfo_Params_STRUCT_SIZE};
    si.pPmSamplingObject = d->obj;
    si.pCounterDataImage = d->image;
    si.counterDataImageSize = d->image_size;
    si.sampleIndex = i;
    if (api.cuptiPmSamplingCounterDataGetSampleInfo(&si) != CUPTI_SUCCESS) {
        note_unusable(d, "no sample info", 0, 0, v);
        return false;
    }
    *start = si.startTimestamp;
    *end = si.endTimestamp;
    CUpti_Profiler_Host_EvaluateToGpuValues_Params ev = {
        .structSize = CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE};
    ev.pHostObject = d->host;
    ev.pCounterDataImage = d->image;
    ev.counterDataImageSize = d->image_size;
    ev.rangeIndex = i;
    ev.ppMetricNames = d->metric;
    ev.numMetrics = d->n_metric;
    ev.pMetricValues = v;
    if (api.cuptiProfilerHostEvaluateToGpuValues(&ev) != CUPTI_SUCCESS) {
        note_unusable(d, "evaluation failed", 0, 0, v);
        return false;
    }
    if (usable(*start, *end, v, d->n_metric)) return true;
    note_unusable(d, NULL, *start, *end, v);
    return false;
}

int twi_pm_device_decode(twi_pm_device *d, twi_pm_sample_fn fn, void *ctx)
{
    CUpti_PmSampling_DecodeData_Params dd = {.structSize = CUpti_PmSampling_DecodeData_Params_STRUCT_SIZE};
    dd.pPmSamplingObject = d->obj;
    dd.pCounterDataImage = d->image;
    dd.counterDataImageSize = d->image_size;
    double t0 = now_s();
    CUptiResult r = api.cuptiPmSamplingDecodeData(&dd);
    double t1 = now_s();
    d->decode_s += t1 - t0;
    d->decodes++;
    if (r != CUPTI_SUCCESS) {
        d->decode_errors++;
        d->last_error = (int)r;
        if (r == CUPTI_ERROR_OUT_OF_MEMORY) d->overflows++; /* the hardware buffer filled up */
        return -1;
    }
    if (dd.overflow) d->overflows++;
    CUpti_PmSampling_GetCounterDataInfo_Params info = {.structSize =
                                                           CUpti_PmSampling_GetCounterDataInfo_Params_STRUCT_SIZE};
    info.pCounterDataImage = d->image;
    info.counterDataImageSize = d->image_size;
    if ((r = api.cuptiPmSamplingGetCounterDataInfo(&info)) != CUPTI_SUCCESS) {
        d->decode_errors++;
        d->last_error = (int)r;
        return -1;
    }
    size_t incomplete = info.numPopulatedSamples - info.numCompletedSamples;
    if (incomplete > d->incomplete_max) d->incomplete_max = incomplete;
    for (size_t i = 0; i < info.numCompletedSamples; i++) {
        uint64_t start, end;
        double v[TWI_PM_MAX_METRICS];
        if (!sample_of(d, i, &start, &end, v)) {
            d->eval_errors++;
            continue;
        }
        d->samples++;
        if (end > d->last_end_ns) d->last_end_ns = end;
        fn(ctx, start, end, v, d->n_metric);
    }
    d->eval_s += now_s() - t1;
    if (dd.decodeStopReason == CUPTI_PM_SAMPLING_DECODE_STOP_REASON_COUNTER_DATA_FULL) d->full_stops++;
    memcpy(d->image, d->blank, d->image_size); /* as freshly initialised */
    return (int)dd.decodeStopReason;
}

void twi_pm_device_stop(twi_pm_device *d, twi_pm_sample_fn fn, void *ctx)
{
    if (!d->started || d->stopped) return;
    /* decoded up to now first: on the H100 what the buffer holds at the stop is not decoded after it
     * (windows of 0.3 s at 0.1 ms kept one image's 1,000 samples each, results/h100/pm-windows-s32a);
     * until the last sample decoded is recent (a decode that found the buffer empty may come before
     * the hardware wrote the latest), for at most STOP_DRAIN_S: where decoding is slower than
     * sampling (20 us with the per-SM pipe metrics: ~86 us a sample) draining never catches up, and a
     * window of 0.3 s went on for the whole run (results/h100/activity-calib-s32a). What is left is
     * lost; the report says how much of the windows was sampled. */
    double until = now_s() + STOP_DRAIN_S;
    uint64_t recent_ns = 4 * d->interval_ns + 1000000u;
    while (now_s() < until) {
        int why = twi_pm_device_decode(d, fn, ctx);
        if (why == CUPTI_PM_SAMPLING_DECODE_STOP_REASON_COUNTER_DATA_FULL) continue;
        uint64_t t = twi_pm_now();
        if (why < 0 || !t || d->last_end_ns + recent_ns >= t) break;
        struct timespec pause = {0, 2000000}; /* 2 ms for the hardware to write what it holds */
        nanosleep(&pause, NULL);
    }
    CUpti_PmSampling_Stop_Params sp = {.structSize = CUpti_PmSampling_Stop_Params_STRUCT_SIZE};
    sp.pPmSamplingObject = d->obj;
    api.cuptiPmSamplingStop(&sp);
    d->stopped = true;
    uint64_t errors = d->decode_errors;
    for (int k = 0; k < 1000; k++) { /* what is left, until CUPTI says it holds no more */
        int why = twi_pm_device_decode(d, fn, ctx);
        if (why < 0 || why == CUPTI_PM_SAMPLING_DECODE_STOP_REASON_END_OF_RECORDS) break;
    }
    d->decode_errors = errors; /* a decode after the stop that finds nothing is no error */
}

static void disable(twi_pm_device *d)
{
    if (!d->obj) return;
    CUpti_PmSampling_Disable_Params dp = {.structSize = CUpti_PmSampling_Disable_Params_STRUCT_SIZE};
    dp.pPmSamplingObject = d->obj;
    api.cuptiPmSamplingDisable(&dp);
    d->obj = NULL;
}

/* Disabled, the counter data image freed (the next enable makes it again). */
static void release(twi_pm_device *d)
{
    disable(d);
    free(d->image);
    free(d->blank);
    d->image = d->blank = NULL;
}

void twi_pm_device_pause(twi_pm_device *d, twi_pm_sample_fn fn, void *ctx)
{
    twi_pm_device_stop(d, fn, ctx);
    release(d);
}

void twi_pm_device_reset(twi_pm_device *d)
{
    if (d->started && !d->stopped) {
        CUpti_PmSampling_Stop_Params sp = {.structSize = CUpti_PmSampling_Stop_Params_STRUCT_SIZE};
        sp.pPmSamplingObject = d->obj;
        api.cuptiPmSamplingStop(&sp);
    }
    d->stopped = true;
    release(d);
}

bool twi_pm_device_resume(twi_pm_device *d, const twi_pm_options *o, char *why, size_t cap)
{
    d->started = d->stopped = false;
    return twi_pm_device_enable(d, o, why, cap) && twi_pm_device_start(d, why, cap);
}

void twi_pm_device_free(twi_pm_device *d)
{
    disable(d);
    twi_pm_host_free(d->host);
    d->host = NULL;
    free(d->avail);
    free(d->config);
    free(d->image);
    free(d->blank);
    d->avail = d->config = d->image = d->blank = NULL;
}
