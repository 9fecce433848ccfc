/*
 * pm_sampling.c - CUPTI's PM sampling on the injection library's own thread
 * (pm_sampling.h). libcupti and libcuda are the ones already loaded
 * (cupti_activity.c's handle, the program's libcuda): every entry point is
 * looked up here and checked; the CUPTI headers give types only.
 */
#define _GNU_SOURCE /* pthread_setname_np, syscall */

#include <cupti.h> /* types and constants only: nothing is linked */
#include <cupti_pmsampling.h>
#include <cupti_profiler_host.h> /* needs src/inject/cshim first on the include path */
#include <cupti_profiler_target.h>
#include <cupti_target.h>

#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "inject/pm_sampling.h"

#define MAX_DEVICES 64
#define MAX_DECODES_AT_ONCE 64 /* decodes in a row while the image fills up (the thread is not held for ever) */
#define RECORD_BYTES                                                                                                   \
    (64u << 10)         /* what one sample may take in the hardware buffer (the counter data image's                   \
                         * ~52 KB a sample on the H100 with 11 metrics is taken as its upper bound) */
#define HWBUF_SECONDS 2 /* the hardware buffer holds this long at the interval (decoded every 0.25 s) */
#define HWBUF_MIN ((size_t)32 << 20)
#define HWBUF_MAX ((size_t)512 << 20) /* the probe's, which never overflowed at 100 us */
#define IMAGE_MAX_SAMPLES 1000u       /* counter data image: ~52 MB at 11 metrics; a fuller buffer takes more decodes */

/* The H100's one pass (results/h100/pm-probe/i100us/summary.txt), most important first; the tensor-op
 * pipes of other chips' names first so that a chip which has them gets them. */
const char *const twi_pm_wanted[] = {
    "sm__cycles_active.avg",
    "gpc__cycles_elapsed.max",
    "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed",
    "sm__inst_executed.avg.per_cycle_active",
    "dram__throughput.avg.pct_of_peak_sustained_elapsed",
    "dram__bytes_read.sum",
    "dram__bytes_write.sum",
    "lts__t_sectors.sum",
    "dramc__read_throughput.avg.pct_of_peak_sustained_elapsed",
    "gpc__cycles_elapsed.avg.per_second",
    "sys__cycles_elapsed.avg.per_second",
};
const unsigned twi_pm_n_wanted = sizeof twi_pm_wanted / sizeof twi_pm_wanted[0];

/* ---------------------------------------------------------------- entry points */

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

/* The program's libcuda (cuda.h maps several names to versioned symbols: looked up by those). */
static struct {
    CUresult (*device_count)(int *);
    CUresult (*device_get)(CUdevice *, int);
    CUresult (*ctx_state)(CUdevice, unsigned *, int *);
    CUresult (*ctx_retain)(CUcontext *, CUdevice);
    CUresult (*ctx_release)(CUdevice);
    CUresult (*ctx_push)(CUcontext);
    CUresult (*ctx_pop)(CUcontext *);
    CUresult (*uuid_v2)(CUuuid *, CUdevice);
    CUresult (*uuid_v1)(CUuuid *, CUdevice);
} cu;

/* ---------------------------------------------------------------- state */

typedef enum { DEV_UNSEEN = 0, DEV_ON, DEV_OFF } dev_state;

typedef struct pm_dev {
    dev_state state;
    CUdevice dev;
    CUcontext ctx; /* the primary context, retained while sampling */
    char uuid[TWI_UUID_LEN];
    const char *chip;
    uint8_t *avail;
    CUpti_Profiler_Host_Object *host; /* holds the chosen metrics: evaluation needs it */
    uint8_t *config;
    size_t config_size;
    const char *metric[TWI_PM_MAX_METRICS];
    size_t n_metric;
    char refused[1024]; /* "x,y": the wanted metrics left out */
    CUpti_PmSampling_Object *obj;
    uint8_t *image, *blank; /* the counter data image; its initialised state, to reset it */
    size_t image_size;
    uint64_t samples, overflows, decode_errors, eval_errors;
} pm_dev;

static struct {
    twi_pm_config c;
    bool loaded, profiler_ok;
    char profiler_why[256]; /* why the profiler could not be initialised ("" = it was) */
    pm_dev dev[MAX_DEVICES];
    pthread_t thread;
    bool running;
    pthread_mutex_t lock; /* stop flag and the condition */
    pthread_cond_t cond;
    bool stop;
    pthread_mutex_t work; /* one decoder at a time: the thread, or twi_pm_stop after it */
} pm = {.lock = PTHREAD_MUTEX_INITIALIZER, .work = PTHREAD_MUTEX_INITIALIZER};

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs(pm.c.prefix ? pm.c.prefix : "", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

static const char *result_text(CUptiResult r)
{
    const char *s = NULL;
    if (api.cuptiGetResultString && api.cuptiGetResultString(r, &s) == CUPTI_SUCCESS && s) return s;
    return "unknown CUPTI error";
}

/* "CALL: CUPTI's text (CUPTI error N)" into why. */
static void why_call(char *why, size_t cap, const char *call, CUptiResult r)
{
    snprintf(why, cap, "%s: %s (CUPTI error %d)", call, result_text(r), (int)r);
}

bool twi_pm_parse_interval(const char *s, uint64_t *ns)
{
    if (!s || !*s) return false;
    char *end;
    errno = 0;
    double ms = strtod(s, &end);
    while (*end == ' ')
        end++;
    if (errno || *end || !(ms >= 0.01 && ms <= 1000.0)) return false;
    *ns = (uint64_t)(ms * 1e6 + 0.5);
    return true;
}

static bool sym(void *h, const char *name, void *slot)
{
    void *p = h ? dlsym(h, name) : NULL;
    if (p) memcpy(slot, &p, sizeof p); /* object to function pointer, as POSIX dlsym allows */
    return p != NULL;
}

/* The PM sampling entry points; false (and the missing one in why) with a CUPTI before 12.6. */
static bool load_cupti(void *h, char *why, size_t cap)
{
    bool ok = true;
    const char *missing = NULL;
#define LOAD(name)                                                                                                     \
    if (!sym(h, #name, &api.name)) ok = false, missing = missing ? missing : #name
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

/* The program's libcuda, once it has loaded one (never loaded here). */
static bool load_cuda(void)
{
    if (cu.ctx_state) return true;
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (!h) return false;
    bool ok = sym(h, "cuDeviceGetCount", &cu.device_count) && sym(h, "cuDeviceGet", &cu.device_get) &&
              sym(h, "cuDevicePrimaryCtxRetain", &cu.ctx_retain) &&
              sym(h, "cuDevicePrimaryCtxRelease_v2", &cu.ctx_release) && sym(h, "cuCtxPushCurrent_v2", &cu.ctx_push) &&
              sym(h, "cuCtxPopCurrent_v2", &cu.ctx_pop);
    sym(h, "cuDeviceGetUuid_v2", &cu.uuid_v2);
    sym(h, "cuDeviceGetUuid", &cu.uuid_v1);
    /* the state last: it is what says the rest is there */
    if (ok) ok = sym(h, "cuDevicePrimaryCtxGetState", &cu.ctx_state);
    dlclose(h); /* RTLD_NOLOAD took a reference; the program's stays */
    return ok;
}

static uint64_t cupti_now(void)
{
    uint64_t t = 0;
    if (api.cuptiGetTimestamp) api.cuptiGetTimestamp(&t);
    return t;
}

/* ---------------------------------------------------------------- records */

static void emit(pm_dev *d, int index, twi_kind kind, const char *text, uint64_t start, uint64_t end)
{
    twi_record r;
    memset(&r, 0, sizeof r);
    r.kind = kind;
    r.name = text;
    r.start_ns = start;
    r.end_ns = end;
    r.device = index;
    r.device_uuid = d->uuid;
    r.stream = -1;
    r.correlation_id = -1;
    pm.c.emit(pm.c.ctx, &r);
}

static void device_off(pm_dev *d, int index, const char *why)
{
    d->state = DEV_OFF;
    uint64_t t = cupti_now();
    if (!t) t = 1;
    emit(d, index, TWI_PM_OFF, why, t, t);
    say("PM sampling on CUDA device %d: not recorded: %s", index, why);
}

/* ---------------------------------------------------------------- metrics */

static CUpti_Profiler_Host_Object *host_new(const pm_dev *d)
{
    CUpti_Profiler_Host_Initialize_Params p = {.structSize = CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE};
    p.profilerType = CUPTI_PROFILER_TYPE_PM_SAMPLING;
    p.pChipName = d->chip;
    p.pCounterAvailabilityImage = d->avail;
    return api.cuptiProfilerHostInitialize(&p) == CUPTI_SUCCESS ? p.pHostObject : NULL;
}

static void host_free(CUpti_Profiler_Host_Object *h)
{
    if (!h) return;
    CUpti_Profiler_Host_Deinitialize_Params p = {.structSize = CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE};
    p.pHostObject = h;
    api.cuptiProfilerHostDeinitialize(&p);
}

/* The config image of `names` in one pass: true with the host object and
 * the image in *keep / *config when keep is given (else freed); false when
 * refused or more than one pass. */
static bool one_pass(const pm_dev *d, const char **names, size_t n, CUpti_Profiler_Host_Object **keep, uint8_t **config,
                     size_t *config_size)
{
    CUpti_Profiler_Host_Object *h = host_new(d);
    if (!h) return false;
    CUpti_Profiler_Host_ConfigAddMetrics_Params a = {.structSize =
                                                         CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE};
    a.pHostObject = h;
    a.ppMetricNames = names;
    a.numMetrics = n;
    CUpti_Profiler_Host_GetConfigImageSize_Params s = {.structSize =
                                                           CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE};
    s.pHostObject = h;
    bool ok = api.cuptiProfilerHostConfigAddMetrics(&a) == CUPTI_SUCCESS &&
              api.cuptiProfilerHostGetConfigImageSize(&s) == CUPTI_SUCCESS && s.configImageSize > 0;
    uint8_t *img = ok ? calloc(1, s.configImageSize) : NULL;
    if (ok && img) {
        CUpti_Profiler_Host_GetConfigImage_Params c = {.structSize =
                                                           CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE};
        c.pHostObject = h;
        c.configImageSize = s.configImageSize;
        c.pConfigImage = img;
        CUpti_Profiler_Host_GetNumOfPasses_Params np = {.structSize =
                                                            CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE};
        np.configImageSize = s.configImageSize;
        np.pConfigImage = img;
        ok = api.cuptiProfilerHostGetConfigImage(&c) == CUPTI_SUCCESS &&
             api.cuptiProfilerHostGetNumOfPasses(&np) == CUPTI_SUCCESS && np.numOfPasses == 1;
    } else {
        ok = false;
    }
    if (ok && keep) {
        *keep = h;
        *config = img;
        *config_size = s.configImageSize;
    } else {
        host_free(h);
        free(img);
    }
    return ok;
}

static void append_name(char *list, size_t cap, const char *name)
{
    size_t used = strlen(list);
    snprintf(list + used, cap - used, "%s%s", used ? "," : "", name);
}

/* The wanted metrics, each kept when it fits in one pass with those kept
 * before it; the last set's host object and config image kept in d. */
static bool choose_metrics(pm_dev *d)
{
    for (unsigned i = 0; i < twi_pm_n_wanted && d->n_metric < TWI_PM_MAX_METRICS; i++) {
        d->metric[d->n_metric++] = twi_pm_wanted[i];
        if (!one_pass(d, d->metric, d->n_metric, NULL, NULL, NULL)) {
            d->n_metric--;
            append_name(d->refused, sizeof d->refused, twi_pm_wanted[i]);
        }
    }
    return d->n_metric > 0 && one_pass(d, d->metric, d->n_metric, &d->host, &d->config, &d->config_size);
}

/* ---------------------------------------------------------------- set-up */

static size_t hwbuf_bytes(uint64_t interval_ns)
{
    double per_s = 1e9 / (double)interval_ns;
    double bytes = per_s * HWBUF_SECONDS * RECORD_BYTES;
    if (bytes < (double)HWBUF_MIN) return HWBUF_MIN;
    if (bytes > (double)HWBUF_MAX) return HWBUF_MAX;
    return (size_t)bytes;
}

static uint32_t image_samples(uint64_t interval_ns)
{
    uint64_t n = 2 * (uint64_t)TWI_PM_DECODE_MS * 1000000u / interval_ns + 16;
    return n > IMAGE_MAX_SAMPLES ? IMAGE_MAX_SAMPLES : (uint32_t)n;
}

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

/* Device `index`'s UUID as NVML writes it (a MIG instance's when it is one); *mig. */
static void device_uuid(pm_dev *d, bool *mig)
{
    CUuuid a, b;
    *mig = false;
    d->uuid[0] = '\0';
    if (!cu.uuid_v2 || cu.uuid_v2(&a, d->dev) != CUDA_SUCCESS) return;
    *mig = cu.uuid_v1 && cu.uuid_v1(&b, d->dev) == CUDA_SUCCESS && memcmp(a.bytes, b.bytes, 16) != 0;
    twi_format_uuid((const unsigned char *)a.bytes, *mig, d->uuid);
}

/* Everything up to cuptiPmSamplingStart on device `index` (its context
 * current on this thread); why says what failed. */
static bool setup_device(pm_dev *d, int index, char *why, size_t cap)
{
    CUptiResult r;
    CUpti_Device_GetChipName_Params cn = {.structSize = CUpti_Device_GetChipName_Params_STRUCT_SIZE};
    cn.deviceIndex = (size_t)index;
    if ((r = api.cuptiDeviceGetChipName(&cn)) != CUPTI_SUCCESS)
        return why_call(why, cap, "cuptiDeviceGetChipName", r), false;
    d->chip = cn.pChipName;
    CUpti_Profiler_DeviceSupported_Params ds = {.structSize = CUpti_Profiler_DeviceSupported_Params_STRUCT_SIZE};
    ds.cuDevice = d->dev;
    ds.api = CUPTI_PROFILER_PM_SAMPLING;
    if ((r = api.cuptiProfilerDeviceSupported(&ds)) != CUPTI_SUCCESS)
        return why_call(why, cap, "cuptiProfilerDeviceSupported", r), false;
    if (ds.isSupported != CUPTI_PROFILER_CONFIGURATION_SUPPORTED) return unsupported_why(&ds, why, cap), false;

    CUpti_PmSampling_GetCounterAvailability_Params ca = {
        .structSize = CUpti_PmSampling_GetCounterAvailability_Params_STRUCT_SIZE};
    ca.deviceIndex = (size_t)index;
    if ((r = api.cuptiPmSamplingGetCounterAvailability(&ca)) != CUPTI_SUCCESS)
        return why_call(why, cap, "cuptiPmSamplingGetCounterAvailability", r), false;
    if (!(d->avail = calloc(1, ca.counterAvailabilityImageSize ? ca.counterAvailabilityImageSize : 1)))
        return snprintf(why, cap, "out of memory"), false;
    ca.pCounterAvailabilityImage = d->avail;
    if ((r = api.cuptiPmSamplingGetCounterAvailability(&ca)) != CUPTI_SUCCESS)
        return why_call(why, cap, "cuptiPmSamplingGetCounterAvailability", r), false;
    if (!choose_metrics(d))
        return snprintf(why, cap, "the chip %s accepts none of the metrics in one pass (refused: %s)", d->chip,
                        d->refused),
               false;

    CUpti_PmSampling_Enable_Params en = {.structSize = CUpti_PmSampling_Enable_Params_STRUCT_SIZE};
    en.deviceIndex = (size_t)index;
    if ((r = api.cuptiPmSamplingEnable(&en)) != CUPTI_SUCCESS)
        return why_call(why, cap, "cuptiPmSamplingEnable", r), false;
    d->obj = en.pPmSamplingObject;

    CUpti_PmSampling_SetConfig_Params sc = {.structSize = CUpti_PmSampling_SetConfig_Params_STRUCT_SIZE};
    sc.pPmSamplingObject = d->obj;
    sc.configSize = d->config_size;
    sc.pConfig = d->config;
    sc.hardwareBufferSize = hwbuf_bytes(pm.c.interval_ns);
    sc.samplingInterval = pm.c.interval_ns;
    sc.triggerMode = CUPTI_PM_SAMPLING_TRIGGER_MODE_GPU_TIME_INTERVAL;
    sc.hwBufferAppendMode = CUPTI_PM_SAMPLING_HARDWARE_BUFFER_APPEND_MODE_KEEP_OLDEST;
    if (api.cuptiPmSamplingSetConfig(&sc) != CUPTI_SUCCESS) {
        /* the time trigger is GA10x and later; the SYSCLK one counts cycles (~1 GHz: about the same) */
        sc.triggerMode = CUPTI_PM_SAMPLING_TRIGGER_MODE_GPU_SYSCLK_INTERVAL;
        if ((r = api.cuptiPmSamplingSetConfig(&sc)) != CUPTI_SUCCESS)
            return why_call(why, cap, "cuptiPmSamplingSetConfig", r), false;
    }
    CUpti_PmSampling_GetCounterDataSize_Params cs = {.structSize =
                                                         CUpti_PmSampling_GetCounterDataSize_Params_STRUCT_SIZE};
    cs.pPmSamplingObject = d->obj;
    cs.pMetricNames = d->metric;
    cs.numMetrics = d->n_metric;
    cs.maxSamples = image_samples(pm.c.interval_ns);
    if ((r = api.cuptiPmSamplingGetCounterDataSize(&cs)) != CUPTI_SUCCESS)
        return why_call(why, cap, "cuptiPmSamplingGetCounterDataSize", r), false;
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
        return why_call(why, cap, "cuptiPmSamplingCounterDataImageInitialize", r), false;
    memcpy(d->blank, d->image, d->image_size);
    CUpti_PmSampling_Start_Params st = {.structSize = CUpti_PmSampling_Start_Params_STRUCT_SIZE};
    st.pPmSamplingObject = d->obj;
    if ((r = api.cuptiPmSamplingStart(&st)) != CUPTI_SUCCESS)
        return why_call(why, cap, "cuptiPmSamplingStart", r), false;
    return true;
}

/* What a failed set-up leaves: freed, sampling disabled. */
static void teardown(pm_dev *d)
{
    if (d->obj) {
        CUpti_PmSampling_Disable_Params dp = {.structSize = CUpti_PmSampling_Disable_Params_STRUCT_SIZE};
        dp.pPmSamplingObject = d->obj;
        api.cuptiPmSamplingDisable(&dp);
        d->obj = NULL;
    }
    host_free(d->host);
    d->host = NULL;
    free(d->avail);
    free(d->config);
    free(d->image);
    free(d->blank);
    d->avail = d->config = d->image = d->blank = NULL;
    if (d->ctx && cu.ctx_release) cu.ctx_release(d->dev);
    d->ctx = NULL;
}

/* The pm_metrics record: the interval, the metrics in the samples' order, those refused. */
static void announce(pm_dev *d, int index)
{
    char text[2700], list[1536] = ""; /* room for both lists */
    for (size_t i = 0; i < d->n_metric; i++)
        append_name(list, sizeof list, d->metric[i]);
    snprintf(text, sizeof text, "interval_ns=%" PRIu64 " metrics=%s refused=%s", pm.c.interval_ns, list, d->refused);
    uint64_t t = cupti_now();
    if (!t) t = 1;
    emit(d, index, TWI_PM_METRICS, text, t, t);
    if (pm.c.verbose)
        say("PM sampling on CUDA device %d (%s): every %" PRIu64 " ns, %zu metrics (%s)%s%s", index, d->chip,
            pm.c.interval_ns, d->n_metric, list, d->refused[0] ? "; refused: " : "", d->refused);
}

/* Device `index` now that its primary context is active: sampling set up
 * with the context current on this thread, or the reason it is not. */
static void start_device(int index)
{
    pm_dev *d = &pm.dev[index];
    char why[600] = "";
    bool mig = false;
    if (cu.device_get(&d->dev, index) != CUDA_SUCCESS) {
        device_off(d, index, "cuDeviceGet failed");
        return;
    }
    device_uuid(d, &mig);
    if (!pm.profiler_ok) {
        device_off(d, index, pm.profiler_why);
        return;
    }
    if (mig) {
        device_off(d, index, "a MIG instance: CUPTI's PM sampling needs the whole GPU");
        return;
    }
    if (cu.ctx_retain(&d->ctx, d->dev) != CUDA_SUCCESS || cu.ctx_push(d->ctx) != CUDA_SUCCESS) {
        if (d->ctx) cu.ctx_release(d->dev);
        d->ctx = NULL;
        device_off(d, index, "its primary context could not be made current on the sampling thread");
        return;
    }
    bool ok = setup_device(d, index, why, sizeof why);
    CUcontext popped;
    cu.ctx_pop(&popped);
    if (!ok) {
        teardown(d);
        device_off(d, index, why);
        return;
    }
    d->state = DEV_ON;
    announce(d, index);
}

/* ---------------------------------------------------------------- decoding */

/* One sample's values as text ("v1 v2 ..."), %.9g each. */
static void values_text(const double *v, size_t n, char *out, size_t cap)
{
    size_t used = 0;
    out[0] = '\0';
    for (size_t i = 0; i < n && used < cap; i++)
        used += (size_t)snprintf(out + used, cap - used, "%s%.9g", i ? " " : "", v[i]);
}

/* Moves what the hardware buffer holds into the counter data image, emits
 * each completed sample, resets the image. Returns the decode stop reason,
 * or -1 when decoding failed. */
static int decode_once(pm_dev *d, int index, bool quiet)
{
    CUpti_PmSampling_DecodeData_Params dd = {.structSize = CUpti_PmSampling_DecodeData_Params_STRUCT_SIZE};
    dd.pPmSamplingObject = d->obj;
    dd.pCounterDataImage = d->image;
    dd.counterDataImageSize = d->image_size;
    CUptiResult r = api.cuptiPmSamplingDecodeData(&dd);
    if (r != CUPTI_SUCCESS) {
        if (r == CUPTI_ERROR_OUT_OF_MEMORY) d->overflows++; /* the hardware buffer filled up */
        if (!quiet && d->decode_errors++ == 0)
            say("PM sampling on CUDA device %d: cuptiPmSamplingDecodeData: %s (CUPTI error %d)", index, result_text(r),
                (int)r);
        return -1;
    }
    if (dd.overflow && d->overflows++ == 0)
        say("PM sampling on CUDA device %d: the hardware buffer overflowed: samples were lost", index);
    CUpti_PmSampling_GetCounterDataInfo_Params info = {.structSize =
                                                           CUpti_PmSampling_GetCounterDataInfo_Params_STRUCT_SIZE};
    info.pCounterDataImage = d->image;
    info.counterDataImageSize = d->image_size;
    if (api.cuptiPmSamplingGetCounterDataInfo(&info) != CUPTI_SUCCESS) return -1;
    for (size_t i = 0; i < info.numCompletedSamples; i++) {
        CUpti_PmSampling_CounterData_GetSampleInfo_Params si = {
            .structSize = CUpti_PmSampling_CounterData_GetSampleInfo_Params_STRUCT_SIZE};
        si.pPmSamplingObject = d->obj;
        si.pCounterDataImage = d->image;
        si.counterDataImageSize = d->image_size;
        si.sampleIndex = i;
        double v[TWI_PM_MAX_METRICS];
        r = api.cuptiPmSamplingCounterDataGetSampleInfo(&si);
        if (r == CUPTI_SUCCESS) {
            CUpti_Profiler_Host_EvaluateToGpuValues_Params ev = {
                .structSize = CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE};
            ev.pHostObject = d->host;
            ev.pCounterDataImage = d->image;
            ev.counterDataImageSize = d->image_size;
            ev.rangeIndex = i;
            ev.ppMetricNames = d->metric;
            ev.numMetrics = d->n_metric;
            ev.pMetricValues = v;
            r = api.cuptiProfilerHostEvaluateToGpuValues(&ev);
        }
        if (r != CUPTI_SUCCESS) {
            d->eval_errors++;
            continue;
        }
        char text[TWI_PM_MAX_METRICS * 24];
        values_text(v, d->n_metric, text, sizeof text);
        emit(d, index, TWI_PM_SAMPLE, text, si.startTimestamp, si.endTimestamp);
        d->samples++;
    }
    memcpy(d->image, d->blank, d->image_size); /* as freshly initialised */
    return (int)dd.decodeStopReason;
}

/* Decodes until the hardware buffer is read (a full image: again at once). */
static void decode_device(pm_dev *d, int index)
{
    for (int k = 0; k < MAX_DECODES_AT_ONCE; k++)
        if (decode_once(d, index, false) != CUPTI_PM_SAMPLING_DECODE_STOP_REASON_COUNTER_DATA_FULL) break;
}

/* Devices whose primary context became active since the last look. */
static void discover(void)
{
    if (!load_cuda()) return; /* the program has no libcuda yet */
    int n = 0;
    if (cu.device_count(&n) != CUDA_SUCCESS) return;
    for (int i = 0; i < n && i < MAX_DEVICES; i++) {
        if (pm.dev[i].state != DEV_UNSEEN) continue;
        CUdevice dev;
        unsigned flags = 0;
        int active = 0;
        if (cu.device_get(&dev, i) != CUDA_SUCCESS || cu.ctx_state(dev, &flags, &active) != CUDA_SUCCESS || !active)
            continue;
        start_device(i);
    }
}

static void work_once(void)
{
    pthread_mutex_lock(&pm.work);
    discover();
    for (int i = 0; i < MAX_DEVICES; i++)
        if (pm.dev[i].state == DEV_ON) decode_device(&pm.dev[i], i);
    pthread_mutex_unlock(&pm.work);
}

static void *pm_loop(void *arg)
{
    (void)arg;
    setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), 10); /* the program's threads first */
    pthread_mutex_lock(&pm.lock);
    while (!pm.stop) {
        struct timespec until;
        clock_gettime(CLOCK_MONOTONIC, &until);
        uint64_t ns = (uint64_t)until.tv_nsec + (uint64_t)TWI_PM_DECODE_MS * 1000000u;
        until.tv_sec += (time_t)(ns / 1000000000u);
        until.tv_nsec = (long)(ns % 1000000000u);
        int rc = 0;
        while (!pm.stop && rc != ETIMEDOUT)
            rc = pthread_cond_timedwait(&pm.cond, &pm.lock, &until);
        if (pm.stop) break;
        pthread_mutex_unlock(&pm.lock);
        work_once();
        pthread_mutex_lock(&pm.lock);
    }
    pthread_mutex_unlock(&pm.lock);
    return NULL;
}

/* ---------------------------------------------------------------- start and stop */

static void init_profiler(void)
{
    CUpti_Profiler_Initialize_Params ip = {.structSize = CUpti_Profiler_Initialize_Params_STRUCT_SIZE};
    CUptiResult r = api.cuptiProfilerInitialize(&ip);
    pm.profiler_ok = r == CUPTI_SUCCESS;
    if (!pm.profiler_ok) why_call(pm.profiler_why, sizeof pm.profiler_why, "cuptiProfilerInitialize", r);
}

bool twi_pm_start(const twi_pm_config *c, void *cupti)
{
    if (pm.running || !c || !c->emit || !c->interval_ns) return false;
    pm.c = *c;
    char why[256];
    if (!load_cupti(cupti, why, sizeof why)) {
        say("no activity counters: %s", why);
        /* every device says so in the run file: one record for device -1 */
        pm_dev none = {0};
        if (api.cuptiGetTimestamp) emit(&none, -1, TWI_PM_OFF, why, cupti_now() | 1, cupti_now() | 1);
        return false;
    }
    pm.loaded = true;
    init_profiler();
    pthread_condattr_t ca;
    if (pthread_condattr_init(&ca) != 0) return false;
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    int rc = pthread_cond_init(&pm.cond, &ca);
    pthread_condattr_destroy(&ca);
    if (rc != 0) return false;
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old); /* the program's signals are none of this thread's business */
    rc = pthread_create(&pm.thread, NULL, pm_loop, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        say("no activity counters: pthread_create: %s", strerror(rc));
        return false;
    }
    pthread_setname_np(pm.thread, "tw-inject-pm");
    pm.running = true;
    return true;
}

/* Device d's end: what the buffer holds, stop, the rest, disable. */
static void stop_device(pm_dev *d, int index)
{
    bool pushed = d->ctx && cu.ctx_push && cu.ctx_push(d->ctx) == CUDA_SUCCESS;
    decode_device(d, index);
    CUpti_PmSampling_Stop_Params sp = {.structSize = CUpti_PmSampling_Stop_Params_STRUCT_SIZE};
    sp.pPmSamplingObject = d->obj;
    api.cuptiPmSamplingStop(&sp);
    for (int k = 0; k < MAX_DECODES_AT_ONCE; k++) { /* until CUPTI says it holds no more */
        int why = decode_once(d, index, true);
        if (why < 0 || why == CUPTI_PM_SAMPLING_DECODE_STOP_REASON_END_OF_RECORDS) break;
    }
    if (pushed) {
        CUcontext popped;
        cu.ctx_pop(&popped);
    }
    if (pm.c.verbose || d->overflows || d->eval_errors)
        say("PM sampling on CUDA device %d: %" PRIu64 " samples, %" PRIu64 " overflows, %" PRIu64
            " samples not evaluated",
            index, d->samples, d->overflows, d->eval_errors);
    teardown(d);
    d->state = DEV_OFF;
}

void twi_pm_stop(void)
{
    if (!pm.running) return;
    pthread_mutex_lock(&pm.lock);
    pm.stop = true;
    pthread_cond_signal(&pm.cond);
    pthread_mutex_unlock(&pm.lock);
    pthread_join(pm.thread, NULL);
    pm.running = false;
    pthread_mutex_lock(&pm.work);
    for (int i = 0; i < MAX_DEVICES; i++)
        if (pm.dev[i].state == DEV_ON) stop_device(&pm.dev[i], i);
    pthread_mutex_unlock(&pm.work);
}

void twi_pm_after_fork(void)
{
    pm.running = false; /* the thread is the parent's; so are the devices' buffers */
    pthread_mutex_init(&pm.lock, NULL);
    pthread_mutex_init(&pm.work, NULL);
    for (int i = 0; i < MAX_DEVICES; i++)
        pm.dev[i].state = DEV_OFF;
}
