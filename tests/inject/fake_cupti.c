/*
 * fake_cupti.c - a stand-in for libcupti, so the injection library's CUPTI
 * side (src/inject/inject.c) runs end to end on machines without a GPU.
 *
 * It implements the entry points inject.c looks up, with CUPTI's semantics
 * as far as they matter there: records queued by the test host
 * (fake_cupti_push) are delivered in a buffer from the client's
 * buffer-requested callback through its buffer-completed callback when the
 * client flushes (cuptiActivityFlushAll, forced or not). Timestamps are
 * CLOCK_REALTIME ns, as CUPTI's on Linux, unless a timestamp callback was
 * registered. The buffer layout is this fake's own: each record is preceded
 * by its size.
 */
#include <cupti.h>
#include <cupti_pmsampling.h>
#include <cupti_profiler_host.h> /* src/inject/cshim first on the include path */
#include <cupti_profiler_target.h>
#include <cupti_target.h>

#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* the test host's controls (found with dlsym) */
uint64_t fake_cupti_now(void);
int fake_cupti_push(const void *record, size_t size);
unsigned fake_cupti_enabled(void);
unsigned fake_cupti_flushes(void);
uint32_t fake_cupti_flush_period(void);
uint64_t fake_cupti_complete_ns(uint64_t *records, uint64_t *cpu_ns);

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static CUpti_BuffersCallbackRequestFunc on_request;
static CUpti_BuffersCallbackCompleteFunc on_complete;
static CUpti_TimestampCallbackFunc on_timestamp;
static unsigned enabled_mask;
static unsigned flushes;
static uint32_t period_ms;
static uint64_t complete_ns, complete_cpu_ns, complete_records; /* inside the client's buffer-completed callback */

typedef struct queued {
    size_t size;
    struct queued *next;
    uint64_t data[]; /* the record, 8-byte aligned */
} queued;
static queued *head, **tail = &head;

static uint64_t realtime_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t fake_cupti_now(void) { return on_timestamp ? on_timestamp() : realtime_ns(); }

int fake_cupti_push(const void *record, size_t size)
{
    queued *q = malloc(sizeof *q + ((size + 7) & ~(size_t)7));
    if (!q) return -1;
    q->size = size;
    q->next = NULL;
    memcpy(q->data, record, size);
    pthread_mutex_lock(&lock);
    *tail = q;
    tail = &q->next;
    pthread_mutex_unlock(&lock);
    return 0;
}

unsigned fake_cupti_enabled(void) { return enabled_mask; }
unsigned fake_cupti_flushes(void) { return flushes; }
uint32_t fake_cupti_flush_period(void) { return period_ms; }

/* The wall time spent in the client's buffer-completed callback so far (ns),
 * its CPU time (*cpu_ns) and the records it was given (bench/inject/bench_inject.c:
 * the client's cost on CUPTI's thread per record). */
uint64_t fake_cupti_complete_ns(uint64_t *records, uint64_t *cpu_ns)
{
    pthread_mutex_lock(&lock);
    uint64_t ns = complete_ns;
    if (records) *records = complete_records;
    if (cpu_ns) *cpu_ns = complete_cpu_ns;
    pthread_mutex_unlock(&lock);
    return ns;
}

static uint64_t clock_ns(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

CUptiResult cuptiGetResultString(CUptiResult result, const char **str)
{
    if (!str) return CUPTI_ERROR_INVALID_PARAMETER;
    *str = result == CUPTI_SUCCESS ? "CUPTI_SUCCESS" : "CUPTI_ERROR_FAKE";
    return CUPTI_SUCCESS;
}

CUptiResult cuptiGetVersion(uint32_t *version)
{
    *version = CUPTI_API_VERSION;
    return CUPTI_SUCCESS;
}

CUptiResult cuptiGetTimestamp(uint64_t *timestamp)
{
    if (!timestamp) return CUPTI_ERROR_INVALID_PARAMETER;
    *timestamp = fake_cupti_now();
    return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityEnable(CUpti_ActivityKind kind)
{
    if ((unsigned)kind >= 32) return CUPTI_ERROR_INVALID_KIND;
    enabled_mask |= 1u << (unsigned)kind;
    return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityDisable(CUpti_ActivityKind kind)
{
    if ((unsigned)kind >= 32) return CUPTI_ERROR_INVALID_KIND;
    enabled_mask &= ~(1u << (unsigned)kind);
    return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc req, CUpti_BuffersCallbackCompleteFunc comp)
{
    if (!req || !comp) return CUPTI_ERROR_INVALID_PARAMETER;
    on_request = req;
    on_complete = comp;
    return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityRegisterTimestampCallback(CUpti_TimestampCallbackFunc fn)
{
    if (!fn) return CUPTI_ERROR_INVALID_PARAMETER;
    on_timestamp = fn;
    return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityFlushPeriod(uint32_t time)
{
    period_ms = time;
    return CUPTI_SUCCESS;
}

/* Delivers the queued records in as many buffers as they need. */
CUptiResult cuptiActivityFlushAll(uint32_t flag)
{
    (void)flag;
    if (!on_request) return CUPTI_ERROR_INVALID_OPERATION;
    pthread_mutex_lock(&lock);
    flushes++;
    while (head) {
        uint8_t *buf = NULL;
        size_t size = 0, max_records = 0;
        on_request(&buf, &size, &max_records);
        if (!buf) break;
        size_t used = 0, n = 0;
        while (head && used + 8 + ((head->size + 7) & ~(size_t)7) <= size) {
            queued *q = head;
            uint64_t sz = q->size;
            memcpy(buf + used, &sz, 8);
            memcpy(buf + used + 8, q->data, q->size);
            used += 8 + ((q->size + 7) & ~(size_t)7);
            head = q->next;
            if (!head) tail = &head;
            free(q);
            n++;
        }
        /* the client's callback runs without the lock, as CUPTI's would */
        pthread_mutex_unlock(&lock);
        uint64_t t = clock_ns(CLOCK_MONOTONIC), c = clock_ns(CLOCK_THREAD_CPUTIME_ID);
        on_complete(NULL, 0, buf, size, used);
        t = clock_ns(CLOCK_MONOTONIC) - t;
        c = clock_ns(CLOCK_THREAD_CPUTIME_ID) - c;
        pthread_mutex_lock(&lock);
        complete_ns += t;
        complete_cpu_ns += c;
        complete_records += n;
    }
    pthread_mutex_unlock(&lock);
    return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityGetNextRecord(uint8_t *buffer, size_t valid, CUpti_Activity **record)
{
    if (!buffer || !record) return CUPTI_ERROR_INVALID_PARAMETER;
    size_t at = 0;
    if (*record) {
        uint64_t sz;
        uint8_t *cur = (uint8_t *)*record;
        memcpy(&sz, cur - 8, 8);
        at = (size_t)(cur - buffer) + ((sz + 7) & ~(uint64_t)7);
    }
    if (at + 8 > valid) return CUPTI_ERROR_MAX_LIMIT_REACHED;
    *record = (CUpti_Activity *)(buffer + at + 8);
    return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityGetNumDroppedRecords(CUcontext context, uint32_t stream_id, size_t *dropped)
{
    (void)context, (void)stream_id;
    *dropped = 0;
    return CUPTI_SUCCESS;
}

/* ---------------------------------------------------------------- PM sampling
 *
 * The entry points src/inject/pm_sampling.c uses, with synthetic samples of
 * known values: a device started at CUPTI time T0 with interval I has
 * completed sample k = 0, 1, ... once T0 + (k + 1) I has passed; sample k
 * spans [T0 + k I, T0 + (k + 1) I] and metric number p (in the order the
 * config's metrics were added) has the value (p + 1) * 1000 + k % 1000.
 * Names starting "sm__inst_executed" are refused (as a chip without that
 * counter would).
 * $FAKE_CUPTI_PM=stale: samples 40-59 of every 100 have no span, their start
 * and end one stale timestamp (the device's start).
 * $FAKE_CUPTI_PM=full-stale: after a decode that filled the counter data
 * image, the next decode's first 20 samples have no span, as on the H100.
 * $FAKE_CUPTI_PM=refuse: counter availability fails with
 * CUPTI_ERROR_INSUFFICIENT_PRIVILEGES (profiling reserved to admins).
 * $FAKE_CUPTI_PM=slow: a decode of n samples takes 2 n intervals (the
 * H100's decoding at 20-50 us with the per-SM pipe metrics took 1.4-4 times
 * the sampled time, results/h100/activity-calib): the decoding falls behind.
 * $FAKE_CUPTI_PM=overflow: the process's first sampling object overflows
 * once it holds 300 samples: every decode answers CUPTI_ERROR_OUT_OF_MEMORY
 * until it is disabled (as the H200's did, results/h200/activity-calib-s40);
 * the objects after it do not. */

#define FAKE_PM_MAX_METRICS 32
#define FAKE_PM_MAGIC 0x706d6661u

struct CUpti_Profiler_Host_Object {
    char name[FAKE_PM_MAX_METRICS][160];
    size_t n;
};

struct CUpti_PmSampling_Object {
    size_t device;
    uint64_t interval, t0, t_stop, next;
    int started, stopped, after_full, overflowed;
};

static int fake_pm_objects; /* made so far (FAKE_CUPTI_PM=overflow: the first one overflows) */

typedef struct fake_image {
    uint32_t magic, max, n, stale; /* stale: its first samples with no span (full-stale) */
    uint64_t k0;
} fake_image;

static uint64_t fake_pm_decodes;
uint64_t fake_cupti_pm_decodes(void);
uint64_t fake_cupti_pm_decodes(void) { return fake_pm_decodes; }

/* Like the real CUPTI, whose own exit teardown made the H100 abort (a double
 * free) when PM sampling was stopped after it: the profiler's state goes at an
 * exit handler registered when it is initialised, and a PM call after that
 * aborts the program, so that a library stopping too late fails its test. */
static volatile int profiler_down;
static void profiler_teardown(void) { profiler_down = 1; }

static void profiler_alive(const char *call)
{
    if (!profiler_down) return;
    fprintf(stderr, "fake CUPTI: %s after CUPTI's exit teardown\n", call);
    abort();
}

CUptiResult cuptiProfilerInitialize(CUpti_Profiler_Initialize_Params *p)
{
    if (!p) return CUPTI_ERROR_INVALID_PARAMETER;
    atexit(profiler_teardown);
    return CUPTI_SUCCESS;
}

CUptiResult cuptiDeviceGetChipName(CUpti_Device_GetChipName_Params *p)
{
    if (!p) return CUPTI_ERROR_INVALID_PARAMETER;
    p->pChipName = "GH100";
    return CUPTI_SUCCESS;
}

CUptiResult cuptiProfilerDeviceSupported(CUpti_Profiler_DeviceSupported_Params *p)
{
    if (!p) return CUPTI_ERROR_INVALID_PARAMETER;
    p->isSupported = p->architecture = p->sli = p->vGpu = p->confidentialCompute = p->cmp = p->wsl =
        CUPTI_PROFILER_CONFIGURATION_SUPPORTED;
    return CUPTI_SUCCESS;
}

CUptiResult cuptiPmSamplingGetCounterAvailability(CUpti_PmSampling_GetCounterAvailability_Params *p)
{
    const char *mode = getenv("FAKE_CUPTI_PM");
    if (mode && strcmp(mode, "refuse") == 0) return CUPTI_ERROR_INSUFFICIENT_PRIVILEGES;
    if (!p->pCounterAvailabilityImage)
        p->counterAvailabilityImageSize = 64;
    else
        memset(p->pCounterAvailabilityImage, 0xa5, p->counterAvailabilityImageSize);
    return CUPTI_SUCCESS;
}

CUptiResult cuptiProfilerHostInitialize(CUpti_Profiler_Host_Initialize_Params *p)
{
    if (!p || p->profilerType != CUPTI_PROFILER_TYPE_PM_SAMPLING || !p->pChipName) return CUPTI_ERROR_INVALID_PARAMETER;
    p->pHostObject = calloc(1, sizeof *p->pHostObject);
    return p->pHostObject ? CUPTI_SUCCESS : CUPTI_ERROR_OUT_OF_MEMORY;
}

CUptiResult cuptiProfilerHostDeinitialize(CUpti_Profiler_Host_Deinitialize_Params *p)
{
    profiler_alive("cuptiProfilerHostDeinitialize");
    free(p->pHostObject);
    return CUPTI_SUCCESS;
}

CUptiResult cuptiProfilerHostConfigAddMetrics(CUpti_Profiler_Host_ConfigAddMetrics_Params *p)
{
    CUpti_Profiler_Host_Object *h = p->pHostObject;
    for (size_t i = 0; i < p->numMetrics; i++)
        if (strncmp(p->ppMetricNames[i], "sm__inst_executed", 17) == 0) return CUPTI_ERROR_INVALID_PARAMETER;
    for (size_t i = 0; i < p->numMetrics && h->n < FAKE_PM_MAX_METRICS; i++)
        snprintf(h->name[h->n++], sizeof h->name[0], "%s", p->ppMetricNames[i]);
    return CUPTI_SUCCESS;
}

CUptiResult cuptiProfilerHostGetConfigImageSize(CUpti_Profiler_Host_GetConfigImageSize_Params *p)
{
    p->configImageSize = 16 + 160 * p->pHostObject->n;
    return CUPTI_SUCCESS;
}

CUptiResult cuptiProfilerHostGetConfigImage(CUpti_Profiler_Host_GetConfigImage_Params *p)
{
    memset(p->pConfigImage, 0, p->configImageSize);
    return CUPTI_SUCCESS;
}

CUptiResult cuptiProfilerHostGetNumOfPasses(CUpti_Profiler_Host_GetNumOfPasses_Params *p)
{
    p->numOfPasses = 1;
    return CUPTI_SUCCESS;
}

CUptiResult cuptiPmSamplingEnable(CUpti_PmSampling_Enable_Params *p)
{
    p->pPmSamplingObject = calloc(1, sizeof *p->pPmSamplingObject);
    if (!p->pPmSamplingObject) return CUPTI_ERROR_OUT_OF_MEMORY;
    p->pPmSamplingObject->device = p->deviceIndex;
    const char *mode = getenv("FAKE_CUPTI_PM");
    pthread_mutex_lock(&lock);
    p->pPmSamplingObject->overflowed = mode && strcmp(mode, "overflow") == 0 && fake_pm_objects == 0 ? -1 : 0;
    fake_pm_objects++;
    pthread_mutex_unlock(&lock);
    return CUPTI_SUCCESS;
}

CUptiResult cuptiPmSamplingDisable(CUpti_PmSampling_Disable_Params *p)
{
    profiler_alive("cuptiPmSamplingDisable");
    free(p->pPmSamplingObject);
    return CUPTI_SUCCESS;
}

CUptiResult cuptiPmSamplingSetConfig(CUpti_PmSampling_SetConfig_Params *p)
{
    if (!p->pConfig || !p->configSize || !p->samplingInterval || !p->hardwareBufferSize)
        return CUPTI_ERROR_INVALID_PARAMETER;
    p->pPmSamplingObject->interval = p->samplingInterval;
    return CUPTI_SUCCESS;
}

CUptiResult cuptiPmSamplingGetCounterDataSize(CUpti_PmSampling_GetCounterDataSize_Params *p)
{
    if (!p->maxSamples || !p->numMetrics) return CUPTI_ERROR_INVALID_PARAMETER;
    p->counterDataSize = sizeof(fake_image) + 8 * (size_t)p->maxSamples;
    return CUPTI_SUCCESS;
}

CUptiResult cuptiPmSamplingCounterDataImageInitialize(CUpti_PmSampling_CounterDataImage_Initialize_Params *p)
{
    fake_image im = {FAKE_PM_MAGIC, (uint32_t)((p->counterDataSize - sizeof(fake_image)) / 8), 0, 0, 0};
    memcpy(p->pCounterData, &im, sizeof im);
    return CUPTI_SUCCESS;
}

CUptiResult cuptiPmSamplingStart(CUpti_PmSampling_Start_Params *p)
{
    CUpti_PmSampling_Object *o = p->pPmSamplingObject;
    if (!o->interval) return CUPTI_ERROR_INVALID_OPERATION;
    o->t0 = fake_cupti_now();
    o->started = 1;
    return CUPTI_SUCCESS;
}

CUptiResult cuptiPmSamplingStop(CUpti_PmSampling_Stop_Params *p)
{
    profiler_alive("cuptiPmSamplingStop");
    CUpti_PmSampling_Object *o = p->pPmSamplingObject;
    if (!o->started) return CUPTI_ERROR_INVALID_OPERATION;
    o->t_stop = fake_cupti_now();
    o->stopped = 1;
    return CUPTI_SUCCESS;
}

/* The samples completed since the last decode, as many as the image holds. */
CUptiResult cuptiPmSamplingDecodeData(CUpti_PmSampling_DecodeData_Params *p)
{
    profiler_alive("cuptiPmSamplingDecodeData");
    CUpti_PmSampling_Object *o = p->pPmSamplingObject;
    fake_image im;
    memcpy(&im, p->pCounterDataImage, sizeof im);
    if (!o->started || im.magic != FAKE_PM_MAGIC) return CUPTI_ERROR_INVALID_OPERATION;
    uint64_t now = o->stopped ? o->t_stop : fake_cupti_now();
    uint64_t done = (now - o->t0) / o->interval, left = done - o->next;
    if (o->overflowed && (o->overflowed > 0 || done >= 300)) {
        o->overflowed = 1; /* from here on, until disabled */
        return CUPTI_ERROR_OUT_OF_MEMORY;
    }
    uint64_t n = left < im.max ? left : im.max;
    const char *mode = getenv("FAKE_CUPTI_PM");
    im.n = (uint32_t)n;
    im.k0 = o->next;
    im.stale = mode && strcmp(mode, "full-stale") == 0 && o->after_full ? (uint32_t)(n < 20 ? n : 20) : 0;
    o->next += n;
    o->after_full = left > n;
    memcpy(p->pCounterDataImage, &im, sizeof im);
    p->decodeStopReason = left > n ? CUPTI_PM_SAMPLING_DECODE_STOP_REASON_COUNTER_DATA_FULL
                                   : CUPTI_PM_SAMPLING_DECODE_STOP_REASON_END_OF_RECORDS;
    p->overflow = 0;
    if (mode && strcmp(mode, "slow") == 0 && n) {
        uint64_t ns = 2 * n * o->interval;
        struct timespec ts = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
        nanosleep(&ts, NULL);
    }
    pthread_mutex_lock(&lock);
    fake_pm_decodes++;
    pthread_mutex_unlock(&lock);
    return CUPTI_SUCCESS;
}

CUptiResult cuptiPmSamplingGetCounterDataInfo(CUpti_PmSampling_GetCounterDataInfo_Params *p)
{
    fake_image im;
    memcpy(&im, p->pCounterDataImage, sizeof im);
    if (im.magic != FAKE_PM_MAGIC) return CUPTI_ERROR_INVALID_PARAMETER;
    p->numTotalSamples = im.max;
    p->numPopulatedSamples = p->numCompletedSamples = im.n;
    return CUPTI_SUCCESS;
}

CUptiResult cuptiPmSamplingCounterDataGetSampleInfo(CUpti_PmSampling_CounterData_GetSampleInfo_Params *p)
{
    fake_image im;
    memcpy(&im, p->pCounterDataImage, sizeof im);
    if (im.magic != FAKE_PM_MAGIC || p->sampleIndex >= im.n) return CUPTI_ERROR_INVALID_PARAMETER;
    const CUpti_PmSampling_Object *o = p->pPmSamplingObject;
    uint64_t k = im.k0 + p->sampleIndex;
    p->startTimestamp = o->t0 + k * o->interval;
    p->endTimestamp = p->startTimestamp + o->interval;
    const char *mode = getenv("FAKE_CUPTI_PM");
    if ((mode && strcmp(mode, "stale") == 0 && k % 100 >= 40 && k % 100 < 60) || p->sampleIndex < im.stale)
        p->startTimestamp = p->endTimestamp = o->t0;
    return CUPTI_SUCCESS;
}

CUptiResult cuptiProfilerHostEvaluateToGpuValues(CUpti_Profiler_Host_EvaluateToGpuValues_Params *p)
{
    fake_image im;
    memcpy(&im, p->pCounterDataImage, sizeof im);
    if (im.magic != FAKE_PM_MAGIC || p->rangeIndex >= im.n) return CUPTI_ERROR_INVALID_PARAMETER;
    const CUpti_Profiler_Host_Object *h = p->pHostObject;
    uint64_t k = im.k0 + p->rangeIndex;
    /* FAKE_CUPTI_PM=inf: sample 50 of every 100 has an infinite L2 count (the
     * H100 gave a rate metric of 0.06 a second once: a span of ~nothing) */
    const char *mode = getenv("FAKE_CUPTI_PM");
    bool inf = mode && strcmp(mode, "inf") == 0 && k % 100 == 50;
    for (size_t i = 0; i < p->numMetrics; i++) {
        size_t pos = 0;
        while (pos < h->n && strcmp(h->name[pos], p->ppMetricNames[i]) != 0)
            pos++;
        if (pos == h->n) return CUPTI_ERROR_INVALID_METRIC_NAME;
        p->pMetricValues[i] = (double)(pos + 1) * 1000.0 + (double)(k % 1000);
        if (inf && strstr(p->ppMetricNames[i], "lts__t_sectors")) p->pMetricValues[i] = INFINITY;
    }
    return CUPTI_SUCCESS;
}
