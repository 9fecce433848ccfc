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

#include <pthread.h>
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
