/*
 * cupti_activity.c - CUPTI's activity API in this process (cupti_activity.h):
 * libcupti loaded and checked, its buffers queued and read into twi_records,
 * device UUIDs from its device records or the program's libcuda.
 */
#define _GNU_SOURCE /* dladdr */

#include <cupti.h> /* types and constants only: nothing is linked */

#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "inject/cupti_activity.h"

#define BUFFER_BYTES ((size_t)1 << 20) /* one CUPTI activity buffer */
#define CALIBRATION_ROUNDS 25
#define MAX_CUDA_DEVICES 64 /* device ordinals whose UUID is remembered */

/* The memcpy kind names of event_csv.c follow CUPTI's numbering. */
_Static_assert((int)TWI_MEMCPY_HTOD == (int)CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, "memcpy kinds");
_Static_assert((int)TWI_MEMCPY_DTOH == (int)CUPTI_ACTIVITY_MEMCPY_KIND_DTOH, "memcpy kinds");
_Static_assert((int)TWI_MEMCPY_HTOA == (int)CUPTI_ACTIVITY_MEMCPY_KIND_HTOA, "memcpy kinds");
_Static_assert((int)TWI_MEMCPY_ATOH == (int)CUPTI_ACTIVITY_MEMCPY_KIND_ATOH, "memcpy kinds");
_Static_assert((int)TWI_MEMCPY_ATOA == (int)CUPTI_ACTIVITY_MEMCPY_KIND_ATOA, "memcpy kinds");
_Static_assert((int)TWI_MEMCPY_ATOD == (int)CUPTI_ACTIVITY_MEMCPY_KIND_ATOD, "memcpy kinds");
_Static_assert((int)TWI_MEMCPY_DTOA == (int)CUPTI_ACTIVITY_MEMCPY_KIND_DTOA, "memcpy kinds");
_Static_assert((int)TWI_MEMCPY_DTOD == (int)CUPTI_ACTIVITY_MEMCPY_KIND_DTOD, "memcpy kinds");
_Static_assert((int)TWI_MEMCPY_HTOH == (int)CUPTI_ACTIVITY_MEMCPY_KIND_HTOH, "memcpy kinds");
_Static_assert((int)TWI_MEMCPY_PTOP == (int)CUPTI_ACTIVITY_MEMCPY_KIND_PTOP, "memcpy kinds");

/* ---------------------------------------------------------------- CUPTI, looked up at run time */

/* Pointer types taken from the declarations in cupti.h, so a signature
 * mismatch is a compile error; __typeof__ does not reference the symbol. */
#define CUPTI_FN(name) __typeof__(&name) name

static struct {
    CUPTI_FN(cuptiGetResultString);
    CUPTI_FN(cuptiGetVersion);
    CUPTI_FN(cuptiGetTimestamp);
    CUPTI_FN(cuptiActivityEnable);
    CUPTI_FN(cuptiActivityDisable);
    CUPTI_FN(cuptiActivityRegisterCallbacks);
    CUPTI_FN(cuptiActivityFlushPeriod);
    CUPTI_FN(cuptiActivityFlushAll);
    CUPTI_FN(cuptiActivityGetNextRecord);
    CUPTI_FN(cuptiActivityGetNumDroppedRecords);
    CUPTI_FN(cuptiActivityRegisterTimestampCallback); /* optional (monotonic) */
} api;

/* A completed buffer waiting to be read: the node sits behind the
 * BUFFER_BYTES given to CUPTI, so queueing it allocates nothing. */
typedef struct pending_buf {
    struct pending_buf *next;
    uint8_t *buffer;
    size_t valid;
} pending_buf;

static struct {
    pthread_mutex_t lock; /* the UUIDs, the counters, the client */
    void *handle;
    char path[PATH_MAX];
    uint32_t version;
    bool registered; /* the buffer callbacks (once per process) */
    bool started;    /* a client is tracing */
    twi_cupti_client client;
    char error[512];
    char dev_uuid[MAX_CUDA_DEVICES][TWI_UUID_LEN]; /* CUDA ordinal -> UUID ("" = not known yet) */
    atomic_int all_devices_known;
    uint64_t records, dropped;
    atomic_int flush_errors;
    atomic_int queue; /* buffers are queued for twi_cupti_drain */
    _Atomic(pending_buf *) pending;
} m = {.lock = PTHREAD_MUTEX_INITIALIZER};

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(m.error, sizeof m.error, fmt, ap);
    va_end(ap);
    if (m.client.print) fprintf(stderr, "%s%s\n", m.client.prefix ? m.client.prefix : "", m.error);
}

const char *twi_cupti_error(void) { return m.error; }
const char *twi_cupti_path(void) { return m.path; }
void *twi_cupti_handle(void) { return m.handle; }

static const char *result_text(CUptiResult r)
{
    const char *s = NULL;
    if (api.cuptiGetResultString && api.cuptiGetResultString(r, &s) == CUPTI_SUCCESS && s) return s;
    return "unknown CUPTI error";
}

/* Reports a failed CUPTI call; true when it succeeded. */
static bool cupti_ok(CUptiResult r, const char *call)
{
    if (r == CUPTI_SUCCESS) return true;
    say("%s failed: %s (CUPTI error %d)", call, result_text(r), (int)r);
    return false;
}

static bool load_symbol(void *h, const char *name, void *slot, bool required)
{
    dlerror();
    void *sym = dlsym(h, name);
    if (!sym) {
        if (required) {
            const char *e = dlerror();
            say("%s not found in %s: %s", name, m.path, e ? e : "NULL");
        }
        return false;
    }
    memcpy(slot, &sym, sizeof sym); /* object to function pointer, as POSIX dlsym allows */
    return true;
}

static void *try_open(const char *path)
{
    dlerror();
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h && m.client.verbose) {
        const char *e = dlerror();
        fprintf(stderr, "%sdlopen %s: %s\n", m.client.prefix, path, e ? e : "failed");
    }
    return h;
}

bool twi_same_file(const char *a, const char *b)
{
    char ra[PATH_MAX], rb[PATH_MAX];
    return realpath(a, ra) && realpath(b, rb) && strcmp(ra, rb) == 0;
}

/* libcupti. A copy the program has loaded already (PyTorch preloads the one
 * of its nvidia-cuda-cupti wheel) is used whatever else is asked for: a second
 * CUPTI in one process collides with the first. Otherwise, in order:
 * $TW_CUPTI_LIBRARY, "libcupti.so.13" and "libcupti.so" (the library path),
 * $CUDA_HOME/lib64, /usr/local/cuda/lib64, /usr/local/cuda/extras/CUPTI/lib64. */
static void *open_cupti(void)
{
    char buf[PATH_MAX];
    const char *env = getenv("TW_CUPTI_LIBRARY");
    void *h = dlopen("libcupti.so.13", RTLD_NOW | RTLD_NOLOAD);
    if (h && env && *env) {
        Dl_info info;
        void *probe = dlsym(h, "cuptiGetTimestamp");
        if (probe && dladdr(probe, &info) && info.dli_fname && !twi_same_file(env, info.dli_fname) && m.client.print)
            fprintf(stderr,
                    "%sthe program has loaded %s already: using it, not TW_CUPTI_LIBRARY=%s (two CUPTIs in "
                    "one process collide); point TW_CUPTI_LIBRARY at it\n",
                    m.client.prefix, info.dli_fname, env);
    }
    if (!h && env && *env) {
        h = try_open(env);
        if (!h && m.client.print)
            fprintf(stderr, "%sTW_CUPTI_LIBRARY=%s cannot be loaded; trying the default places\n", m.client.prefix,
                    env);
    }
    const char *cuda_home = getenv("CUDA_HOME");
    const char *fixed[] = {"libcupti.so.13", "libcupti.so", NULL, "/usr/local/cuda/lib64/libcupti.so.13",
                           "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so.13"};
    if (cuda_home && *cuda_home) {
        snprintf(buf, sizeof buf, "%s/lib64/libcupti.so.13", cuda_home);
        fixed[2] = buf;
    }
    for (size_t i = 0; !h && i < sizeof fixed / sizeof fixed[0]; i++)
        if (fixed[i]) h = try_open(fixed[i]);
    return h;
}

static bool load_cupti(void)
{
    if (m.handle) return true;
    void *h = open_cupti();
    if (!h) {
        say("libcupti.so.13 not found (tried $TW_CUPTI_LIBRARY, the library path, $CUDA_HOME/lib64, "
            "/usr/local/cuda/lib64, /usr/local/cuda/extras/CUPTI/lib64); set TW_CUPTI_LIBRARY");
        return false;
    }
    snprintf(m.path, sizeof m.path, "libcupti");
    void *probe = dlsym(h, "cuptiGetTimestamp");
    Dl_info info;
    if (probe && dladdr(probe, &info) && info.dli_fname) snprintf(m.path, sizeof m.path, "%s", info.dli_fname);

    bool ok = true;
#define LOAD(name) ok = load_symbol(h, #name, &api.name, true) && ok
    LOAD(cuptiGetResultString);
    LOAD(cuptiGetVersion);
    LOAD(cuptiGetTimestamp);
    LOAD(cuptiActivityEnable);
    LOAD(cuptiActivityDisable);
    LOAD(cuptiActivityRegisterCallbacks);
    LOAD(cuptiActivityFlushPeriod);
    LOAD(cuptiActivityFlushAll);
    LOAD(cuptiActivityGetNextRecord);
    LOAD(cuptiActivityGetNumDroppedRecords);
#undef LOAD
    load_symbol(h, "cuptiActivityRegisterTimestampCallback", &api.cuptiActivityRegisterTimestampCallback, false);
    /* never dlclosed: CUPTI keeps threads and callbacks into this library */
    if (ok) m.handle = h;
    return ok;
}

/* ---------------------------------------------------------------- device UUIDs */

/* The program's libcuda, looked up, never loaded. Asked outside CUPTI's
 * callbacks (the client's drain, its end) for the UUIDs CUPTI's device
 * records have not given yet (they are emitted at CUDA's initialisation,
 * which may precede the set-up); inside a callback only for an ordinal
 * still unknown there. */
static struct {
    CUresult (*count)(int *n);
    CUresult (*get)(CUdevice *dev, int ordinal);
    CUresult (*uuid_v2)(CUuuid *uuid, CUdevice dev); /* a MIG instance's own UUID */
    CUresult (*uuid_v1)(CUuuid *uuid, CUdevice dev); /* the GPU's, also for a MIG instance */
} cuda;
static pthread_once_t cuda_once = PTHREAD_ONCE_INIT;

static void cuda_load(void)
{
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (!h) return;
    void *count = dlsym(h, "cuDeviceGetCount"), *get = dlsym(h, "cuDeviceGet");
    void *v2 = dlsym(h, "cuDeviceGetUuid_v2"), *v1 = dlsym(h, "cuDeviceGetUuid");
    if (!get || !(v1 || v2)) return;
    memcpy(&cuda.count, &count, sizeof count);
    memcpy(&cuda.uuid_v2, &v2, sizeof v2);
    memcpy(&cuda.uuid_v1, &v1, sizeof v1);
    memcpy(&cuda.get, &get, sizeof get); /* last: it says the others are set */
}

/* The UUID of CUDA device `ordinal` in NVML's form into out; false when
 * libcuda cannot tell. A device whose two UUIDs differ is a MIG instance. */
static bool cuda_uuid(int ordinal, char out[TWI_UUID_LEN])
{
    pthread_once(&cuda_once, cuda_load);
    CUdevice dev;
    CUuuid u2, u1;
    if (!cuda.get || cuda.get(&dev, ordinal) != CUDA_SUCCESS) return false;
    bool has2 = cuda.uuid_v2 && cuda.uuid_v2(&u2, dev) == CUDA_SUCCESS;
    bool has1 = cuda.uuid_v1 && cuda.uuid_v1(&u1, dev) == CUDA_SUCCESS;
    if (!has2 && !has1) return false;
    bool mig = has2 && has1 && memcmp(u1.bytes, u2.bytes, 16) != 0;
    twi_format_uuid((const unsigned char *)(has2 ? u2.bytes : u1.bytes), mig, out);
    return true;
}

void twi_cupti_learn_devices(void)
{
    if (atomic_load(&m.all_devices_known)) return;
    pthread_once(&cuda_once, cuda_load);
    int n = 0;
    if (!cuda.get || !cuda.count || cuda.count(&n) != CUDA_SUCCESS || n <= 0) return;
    if (n > MAX_CUDA_DEVICES) n = MAX_CUDA_DEVICES;
    int known = 0;
    for (int i = 0; i < n; i++) {
        pthread_mutex_lock(&m.lock);
        bool have = m.dev_uuid[i][0] != '\0';
        pthread_mutex_unlock(&m.lock);
        char u[TWI_UUID_LEN];
        if (!have && cuda_uuid(i, u)) {
            pthread_mutex_lock(&m.lock);
            if (!m.dev_uuid[i][0]) memcpy(m.dev_uuid[i], u, sizeof u); /* a device record wins */
            pthread_mutex_unlock(&m.lock);
            have = true;
        }
        known += have;
    }
    if (known == n) atomic_store(&m.all_devices_known, 1);
}

static bool nonzero(const unsigned char *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (b[i]) return true;
    return false;
}

/* A DEVICE record: the ordinal's UUID, the MIG instance's where it is one
 * (called with m.lock held). */
static void learn_device(const CUpti_ActivityDevice5 *d)
{
    if (d->id >= MAX_CUDA_DEVICES) return;
    const unsigned char *mig = (const unsigned char *)d->migUuid.bytes;
    bool is_mig = d->isMigEnabled && nonzero(mig, 16);
    twi_format_uuid(is_mig ? mig : (const unsigned char *)d->uuid.bytes, is_mig, m.dev_uuid[d->id]);
}

/* The UUID of CUDA device `ordinal`, "" when it cannot be told (called with m.lock held). */
static const char *device_uuid(uint32_t ordinal)
{
    if (ordinal >= MAX_CUDA_DEVICES) return "";
    char *u = m.dev_uuid[ordinal];
    if (!u[0]) cuda_uuid((int)ordinal, u); /* the last resort, inside the callback */
    return u;
}

/* ---------------------------------------------------------------- records */

/* The fields every timed record on a stream has (kernel, memcpy, memset):
 * CUPTI gives each kind its own struct, so a macro rather than a function. */
#define SPAN_ON_STREAM(r, x)                                                                                           \
    do {                                                                                                               \
        (r).start_ns = (x)->start;                                                                                     \
        (r).end_ns = (x)->end;                                                                                         \
        (r).device = (int32_t)(x)->deviceId;                                                                           \
        (r).device_uuid = device_uuid((x)->deviceId);                                                                  \
        (r).stream = (x)->streamId;                                                                                    \
        (r).correlation_id = (x)->correlationId;                                                                       \
    } while (0)

/* One activity record (called with m.lock held). */
static void handle(const CUpti_Activity *a, const twi_cupti_reader *rd)
{
    twi_record r;
    memset(&r, 0, sizeof r);
    m.records++;
    switch (a->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
        const CUpti_ActivityKernel10 *k = (const CUpti_ActivityKernel10 *)a;
        r.kind = TWI_KERNEL;
        r.name = k->name;
        SPAN_ON_STREAM(r, k);
        r.grid[0] = k->gridX, r.grid[1] = k->gridY, r.grid[2] = k->gridZ;
        r.block[0] = k->blockX, r.block[1] = k->blockY, r.block[2] = k->blockZ;
        rd->record(rd->ctx, &r);
        break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
        const CUpti_ActivityMemcpy6 *x = (const CUpti_ActivityMemcpy6 *)a;
        r.kind = TWI_MEMCPY;
        r.copy_kind = x->copyKind;
        r.bytes = x->bytes;
        SPAN_ON_STREAM(r, x);
        rd->record(rd->ctx, &r);
        break;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
        const CUpti_ActivityMemset4 *x = (const CUpti_ActivityMemset4 *)a;
        r.kind = TWI_MEMSET;
        r.bytes = x->bytes;
        SPAN_ON_STREAM(r, x);
        rd->record(rd->ctx, &r);
        break;
    }
    case CUPTI_ACTIVITY_KIND_DEVICE:
        learn_device((const CUpti_ActivityDevice5 *)a);
        break;
    default:
        break;
    }
}

static pending_buf *node_of(uint8_t *buffer) { return (pending_buf *)(void *)(buffer + BUFFER_BYTES); }

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
    /* malloc's alignment (16) is more than the 8 bytes CUPTI asks for; BUFFER_BYTES is a
     * multiple of it, so the node behind is aligned too */
    *buffer = malloc(BUFFER_BYTES + sizeof(pending_buf));
    *size = *buffer ? BUFFER_BYTES : 0;
    *max_records = 0; /* as many as fit */
    if (!*buffer) say("out of memory for an activity buffer; records will be dropped");
}

/* Every record of a buffer, device records first: a kernel may precede its
 * device's record in a buffer. */
static void read_buffer(uint8_t *buffer, size_t valid_size, const twi_cupti_reader *rd)
{
    if (rd->begin) rd->begin(rd->ctx);
    pthread_mutex_lock(&m.lock);
    for (int pass = 0; pass < 2; pass++) {
        CUpti_Activity *rec = NULL;
        for (;;) {
            CUptiResult r = api.cuptiActivityGetNextRecord(buffer, valid_size, &rec);
            if (r == CUPTI_ERROR_MAX_LIMIT_REACHED) break; /* the end of the buffer */
            if (!cupti_ok(r, "cuptiActivityGetNextRecord")) break;
            if ((pass == 0) == (rec->kind == CUPTI_ACTIVITY_KIND_DEVICE)) handle(rec, rd);
        }
    }
    pthread_mutex_unlock(&m.lock);
    if (rd->end) rd->end(rd->ctx);
}

void twi_cupti_drain(const twi_cupti_reader *rd)
{
    pending_buf *list = atomic_exchange(&m.pending, NULL), *fifo = NULL;
    while (list) { /* the list is newest first */
        pending_buf *next = list->next;
        list->next = fifo;
        fifo = list;
        list = next;
    }
    while (fifo) {
        pending_buf *next = fifo->next;
        read_buffer(fifo->buffer, fifo->valid, rd);
        free(fifo->buffer);
        fifo = next;
    }
}

void twi_cupti_after_fork(void) { atomic_store(&m.pending, NULL); }

void twi_cupti_queue(bool queue) { atomic_store(&m.queue, queue); }

/* On CUPTI's thread: the buffer is queued (a lock-free push), then the
 * client told (on_buffer), which may drain it there. */
static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream_id, uint8_t *buffer, size_t size,
                                      size_t valid_size)
{
    (void)size;
    if (buffer && valid_size > 0) {
        pending_buf *n = node_of(buffer);
        n->buffer = buffer;
        n->valid = valid_size;
        n->next = atomic_load(&m.pending);
        while (!atomic_compare_exchange_weak(&m.pending, &n->next, n)) {
        }
        if (m.client.on_buffer && !atomic_load(&m.queue)) m.client.on_buffer(m.client.ctx);
    } else {
        free(buffer);
    }
    size_t dropped = 0;
    if (cupti_ok(api.cuptiActivityGetNumDroppedRecords(ctx, stream_id, &dropped),
                 "cuptiActivityGetNumDroppedRecords") &&
        dropped > 0) {
        pthread_mutex_lock(&m.lock);
        bool first = m.dropped == 0;
        m.dropped += dropped;
        pthread_mutex_unlock(&m.lock);
        if (first) say("CUPTI dropped %zu activity records (buffers full)", dropped);
    }
}

void twi_cupti_stats(uint64_t *records, uint64_t *dropped, uint32_t *version)
{
    pthread_mutex_lock(&m.lock);
    if (records) *records = m.records;
    if (dropped) *dropped = m.dropped;
    if (version) *version = m.version;
    pthread_mutex_unlock(&m.lock);
}

/* ---------------------------------------------------------------- clocks */

static bool read_cupti(void *ctx, uint64_t *ns)
{
    (void)ctx;
    return api.cuptiGetTimestamp(ns) == CUPTI_SUCCESS && *ns != 0;
}

static bool read_mono(void *ctx, uint64_t *ns)
{
    (void)ctx;
    struct timespec ts;
    if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0) return false;
    *ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
    return true;
}

static uint64_t CUPTIAPI monotonic_timestamp(void)
{
    uint64_t ns = 0;
    read_mono(NULL, &ns);
    return ns;
}

bool twi_cupti_calibrate(twi_clock *c, uint64_t *gap_ns)
{
    return m.handle && twi_clock_calibrate(c, read_cupti, read_mono, NULL, CALIBRATION_ROUNDS, gap_ns);
}

/* ---------------------------------------------------------------- set-up */

static const struct {
    CUpti_ActivityKind kind;
    const char *name;
} KINDS[] = {{CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, "CONCURRENT_KERNEL"},
             {CUPTI_ACTIVITY_KIND_MEMCPY, "MEMCPY"},
             {CUPTI_ACTIVITY_KIND_MEMSET, "MEMSET"}};

static bool enable(CUpti_ActivityKind kind, const char *name)
{
    CUptiResult r = api.cuptiActivityEnable(kind);
    if (r == CUPTI_SUCCESS) return true;
    char what[96];
    snprintf(what, sizeof what, "cuptiActivityEnable(%s)", name);
    return cupti_ok(r, what);
}

/* Once per process: the buffer callbacks and the clock source, before any
 * kind is enabled, so that every record uses them. */
static bool register_once(void)
{
    if (m.registered) return true;
    if (!cupti_ok(api.cuptiGetVersion(&m.version), "cuptiGetVersion")) m.version = 0;
    if (m.version && m.version / 10000 != CUPTI_API_VERSION / 10000 && m.client.print)
        fprintf(stderr, "%s%s is CUPTI API version %u; this library was built for %d: records may be misread\n",
                m.client.prefix, m.path, m.version, CUPTI_API_VERSION);
    if (!cupti_ok(api.cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed),
                  "cuptiActivityRegisterCallbacks"))
        return false;
    if (m.client.monotonic) {
        if (!api.cuptiActivityRegisterTimestampCallback) {
            if (m.client.print)
                fprintf(stderr,
                        "%sTW_CUPTI_CLOCK=monotonic: this CUPTI has no timestamp callback; using its own "
                        "clock\n",
                        m.client.prefix);
        } else {
            cupti_ok(api.cuptiActivityRegisterTimestampCallback(monotonic_timestamp),
                     "cuptiActivityRegisterTimestampCallback");
        }
    }
    cupti_ok(api.cuptiActivityFlushPeriod(100), "cuptiActivityFlushPeriod");
    m.registered = true;
    return true;
}

bool twi_cupti_start(const twi_cupti_client *c, twi_clock *clock)
{
    if (m.started) {
        snprintf(m.error, sizeof m.error, "CUPTI's activity records go to another client in this process already");
        return false;
    }
    m.client = *c;
    m.error[0] = '\0';
    atomic_store(&m.queue, 1);
    if (!load_cupti() || !register_once()) return false;
    uint64_t gap = 0;
    if (!twi_cupti_calibrate(clock, &gap)) {
        say("cuptiGetTimestamp or CLOCK_MONOTONIC failed: no time reference, not recording");
        return false;
    }
    bool any = false;
    for (size_t i = 0; i < sizeof KINDS / sizeof KINDS[0]; i++)
        any = enable(KINDS[i].kind, KINDS[i].name) || any;
    if (!any) {
        say("no activity kind could be enabled: not recording");
        return false;
    }
    /* each device's UUID; without its records, libcuda is asked (twi_cupti_learn_devices) */
    CUptiResult dr = api.cuptiActivityEnable(CUPTI_ACTIVITY_KIND_DEVICE);
    if (dr != CUPTI_SUCCESS && c->verbose)
        fprintf(stderr, "%sno CUPTI device records (%s): device UUIDs from libcuda\n", c->prefix, result_text(dr));
    m.started = true;
    if (c->verbose)
        fprintf(stderr, "%sCUPTI %u from %s; clock calibrated to +-%llu ns; t0 %llu ns\n", c->prefix, m.version, m.path,
                (unsigned long long)(gap + 1) / 2, (unsigned long long)clock->t0_mono_ns);
    return true;
}

void twi_cupti_flush(bool forced)
{
    if (!m.handle) return;
    CUptiResult r = api.cuptiActivityFlushAll(forced ? CUPTI_ACTIVITY_FLAG_FLUSH_FORCED : 0);
    /* reported once: a periodic flush would repeat it ten times a second */
    if (r != CUPTI_SUCCESS && atomic_fetch_add(&m.flush_errors, 1) == 0)
        cupti_ok(r, forced ? "cuptiActivityFlushAll (forced)" : "cuptiActivityFlushAll (periodic; reported once)");
}

void twi_cupti_stop(void)
{
    if (!m.started) return;
    twi_cupti_flush(true);
    for (size_t i = 0; i < sizeof KINDS / sizeof KINDS[0]; i++)
        api.cuptiActivityDisable(KINDS[i].kind);
    api.cuptiActivityDisable(CUPTI_ACTIVITY_KIND_DEVICE);
    m.started = false;
    m.client.on_buffer = NULL;
}
