/*
 * inject.c - libtruewatt-inject.so, the CUPTI injection library.
 *
 * The CUDA driver loads it into a program when CUDA_INJECTION64_PATH names it
 * and calls InitializeInjection() from cuInit. It records the program's
 * kernels, memory copies, memsets and NVTX ranges through the CUPTI activity
 * API and appends them, as they complete, to the CSV file $TW_EVENTS_PATH
 * (format: event_csv.h), on the trace timeline (seconds since $TW_T0_MONO_NS
 * on CLOCK_MONOTONIC).
 *
 * libcupti is not linked: it is dlopened at run time and every entry point is
 * looked up and checked; cupti.h gives types and constants only. libcuda is
 * never touched. Whatever fails is reported on stderr ("truewatt-inject: ...")
 * and tracing stops; the host program always goes on.
 *
 * Environment:
 *   TW_EVENTS_PATH       the events file; "%p" in it becomes the process id.
 *                        Opened for appending (the header is written when the
 *                        file is empty), so several processes can share it.
 *   TW_T0_MONO_NS        the timeline's origin on CLOCK_MONOTONIC, ns (0 if unset)
 *   TW_CUPTI_LIBRARY     the libcupti to load (tried first)
 *   NVTX_INJECTION64_PATH  must name the same libcupti file for NVTX ranges
 *                        to reach CUPTI (checked; a mismatch is reported).
 *                        When unset, it is set here to the CUPTI in use, which
 *                        works when the program's first NVTX call comes after
 *                        CUDA's initialisation (the usual case)
 *   TW_INJECT_FLUSH_MS   period of the flush thread, ms (default 100; 0 = off)
 *   TW_CUPTI_CLOCK       "monotonic": CUPTI timestamps from CLOCK_MONOTONIC
 *                        through cuptiActivityRegisterTimestampCallback
 *                        (default: CUPTI's own clock and a measured offset)
 *   TW_INJECT_VERBOSE    "1": a line on what was set up and a summary at exit
 */
#define _GNU_SOURCE /* dladdr, pthread_setname_np */

#include <cupti.h> /* types and constants only: nothing is linked */

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "inject/demangle.h"
#include "inject/event_csv.h"

#define PREFIX "truewatt-inject: "
#define BUFFER_BYTES ((size_t)1 << 20)      /* one CUPTI activity buffer */
#define WRITE_CHUNK_BYTES ((size_t)1 << 16) /* lines are written out in chunks of about this */
#define CALIBRATION_ROUNDS 25

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
    CUPTI_FN(cuptiActivityRegisterCallbacks);
    CUPTI_FN(cuptiActivityFlushPeriod);
    CUPTI_FN(cuptiActivityFlushAll);
    CUPTI_FN(cuptiActivityGetNextRecord);
    CUPTI_FN(cuptiActivityGetNumDroppedRecords);
    CUPTI_FN(cuptiActivityRegisterTimestampCallback); /* optional (TW_CUPTI_CLOCK=monotonic) */
} api;

static void *cupti_handle;
static char cupti_path[PATH_MAX]; /* the file that was loaded */

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
    fprintf(stderr, PREFIX "%s failed: %s (CUPTI error %d)\n", call, result_text(r), (int)r);
    return false;
}

static bool load_symbol(void *h, const char *name, void *slot, bool required)
{
    dlerror();
    void *sym = dlsym(h, name);
    if (!sym) {
        if (required) {
            const char *e = dlerror();
            fprintf(stderr, PREFIX "%s not found in %s: %s\n", name, cupti_path, e ? e : "NULL");
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
    if (!h) {
        const char *e = dlerror();
        if (getenv("TW_INJECT_VERBOSE")) fprintf(stderr, PREFIX "dlopen %s: %s\n", path, e ? e : "failed");
    }
    return h;
}

/* Whether two paths name the same file (false when either does not resolve). */
static bool same_file(const char *a, const char *b)
{
    char ra[PATH_MAX], rb[PATH_MAX];
    return realpath(a, ra) && realpath(b, rb) && strcmp(ra, rb) == 0;
}

/* libcupti. A copy the program has loaded already (PyTorch preloads the one
 * of its nvidia-cuda-cupti wheel) is used whatever else is asked for: a second
 * CUPTI in one process collides with the first. Otherwise, in order:
 * $TW_CUPTI_LIBRARY, "libcupti.so.13" and "libcupti.so" (the library path),
 * $CUDA_HOME/lib64, /usr/local/cuda/lib64, /usr/local/cuda/extras/CUPTI/lib64. */
static bool load_cupti(void)
{
    char buf[PATH_MAX];
    const char *env = getenv("TW_CUPTI_LIBRARY");
    cupti_handle = dlopen("libcupti.so.13", RTLD_NOW | RTLD_NOLOAD);
    if (cupti_handle && env && *env) {
        Dl_info info;
        void *probe = dlsym(cupti_handle, "cuptiGetTimestamp");
        if (probe && dladdr(probe, &info) && info.dli_fname && !same_file(env, info.dli_fname))
            fprintf(stderr,
                    PREFIX "the program has loaded %s already: using it, not TW_CUPTI_LIBRARY=%s (two CUPTIs in "
                           "one process collide); point TW_CUPTI_LIBRARY and NVTX_INJECTION64_PATH at it\n",
                    info.dli_fname, env);
    }
    if (!cupti_handle && env && *env) {
        cupti_handle = try_open(env);
        if (!cupti_handle)
            fprintf(stderr, PREFIX "TW_CUPTI_LIBRARY=%s cannot be loaded; trying the default places\n", env);
    }
    const char *cuda_home = getenv("CUDA_HOME");
    const char *fixed[] = {"libcupti.so.13", "libcupti.so", NULL, "/usr/local/cuda/lib64/libcupti.so.13",
                           "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so.13"};
    if (cuda_home && *cuda_home) {
        snprintf(buf, sizeof buf, "%s/lib64/libcupti.so.13", cuda_home);
        fixed[2] = buf;
    }
    for (size_t i = 0; !cupti_handle && i < sizeof fixed / sizeof fixed[0]; i++)
        if (fixed[i]) cupti_handle = try_open(fixed[i]);
    if (!cupti_handle) {
        fprintf(stderr, PREFIX "libcupti.so.13 not found (tried $TW_CUPTI_LIBRARY, the library path, $CUDA_HOME/lib64, "
                               "/usr/local/cuda/lib64, /usr/local/cuda/extras/CUPTI/lib64); set TW_CUPTI_LIBRARY\n");
        return false;
    }

    snprintf(cupti_path, sizeof cupti_path, "libcupti");
    void *probe = dlsym(cupti_handle, "cuptiGetTimestamp");
    Dl_info info;
    if (probe && dladdr(probe, &info) && info.dli_fname) snprintf(cupti_path, sizeof cupti_path, "%s", info.dli_fname);

    bool ok = true;
#define LOAD(name) ok = load_symbol(cupti_handle, #name, &api.name, true) && ok
    LOAD(cuptiGetResultString);
    LOAD(cuptiGetVersion);
    LOAD(cuptiGetTimestamp);
    LOAD(cuptiActivityEnable);
    LOAD(cuptiActivityRegisterCallbacks);
    LOAD(cuptiActivityFlushPeriod);
    LOAD(cuptiActivityFlushAll);
    LOAD(cuptiActivityGetNextRecord);
    LOAD(cuptiActivityGetNumDroppedRecords);
#undef LOAD
    load_symbol(cupti_handle, "cuptiActivityRegisterTimestampCallback", &api.cuptiActivityRegisterTimestampCallback,
                false);
    /* never dlclosed: CUPTI keeps threads and callbacks into this library */
    return ok;
}

/* ---------------------------------------------------------------- state */

static struct {
    pthread_mutex_t lock; /* guards everything below up to the counters */
    int fd;
    twi_buf buf; /* whole lines not yet written */
    twi_clock clock;
    twi_demangler *dm;
    twi_ranges *ranges;
    uint64_t records, lines, dropped, write_errors, bad_records;
    char events_path[PATH_MAX];

    pid_t pid;            /* the process that set up tracing (not a forked child) */
    atomic_int active;    /* tracing was set up */
    atomic_int finished;  /* the exit flush ran */
    atomic_int initiated; /* InitializeInjection ran */
    bool verbose;

    /* the flush thread */
    pthread_t flusher;
    bool flusher_running;
    pthread_mutex_t flush_lock;
    pthread_cond_t flush_cond;
    bool flush_stop;
    unsigned flush_ms;
    atomic_int flush_errors;
} g = {.lock = PTHREAD_MUTEX_INITIALIZER, .fd = -1, .flush_lock = PTHREAD_MUTEX_INITIALIZER};

/* ---------------------------------------------------------------- the events file */

/* Writes the buffered lines (called with g.lock held). Each write() carries
 * whole lines, and the file is in append mode, so processes sharing the file
 * do not cut each other's lines. */
static void write_out(void)
{
    size_t off = 0;
    while (off < g.buf.len) {
        ssize_t n = write(g.fd, g.buf.p + off, g.buf.len - off);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            if (g.write_errors++ == 0)
                fprintf(stderr, PREFIX "%s: write failed: %s; events are being lost\n", g.events_path,
                        n < 0 ? strerror(errno) : "no progress");
            break;
        }
        off += (size_t)n;
    }
    g.buf.len = 0;
    if (g.buf.p) g.buf.p[0] = '\0';
}

/* "%p" becomes the process id, "%%" a percent sign. */
static bool expand_path(const char *pattern, char *out, size_t cap)
{
    size_t w = 0;
    for (const char *s = pattern; *s; s++) {
        char tmp[32];
        const char *piece = tmp;
        if (s[0] == '%' && s[1] == 'p') {
            snprintf(tmp, sizeof tmp, "%ld", (long)getpid());
            s++;
        } else if (s[0] == '%' && s[1] == '%') {
            tmp[0] = '%', tmp[1] = '\0';
            s++;
        } else {
            tmp[0] = *s, tmp[1] = '\0';
        }
        size_t n = strlen(piece);
        if (w + n >= cap) return false;
        memcpy(out + w, piece, n);
        w += n;
    }
    out[w] = '\0';
    return true;
}

static bool open_events(const char *pattern)
{
    if (!expand_path(pattern, g.events_path, sizeof g.events_path)) {
        fprintf(stderr, PREFIX "TW_EVENTS_PATH is too long\n");
        return false;
    }
    int fd = open(g.events_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) {
        fprintf(stderr, PREFIX "%s: cannot open: %s\n", g.events_path, strerror(errno));
        return false;
    }
    /* the header once, by whichever process finds the file empty */
    struct flock lk = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
    bool locked = fcntl(fd, F_SETLKW, &lk) == 0;
    struct stat st;
    if (fstat(fd, &st) == 0 && st.st_size == 0) {
        /* what made this file (set by truewatt run): one comment line first */
        const char *prov = getenv("TW_PROVENANCE");
        if (prov && *prov && !strchr(prov, '\n')) {
            char line[1200];
            int m = snprintf(line, sizeof line, "# %s\n", prov);
            if (m > 0 && (size_t)m < sizeof line && write(fd, line, (size_t)m) != m)
                fprintf(stderr, PREFIX "%s: cannot write: %s\n", g.events_path, strerror(errno));
        }
        const char *h = TWI_CSV_HEADER;
        size_t len = strlen(h);
        if (write(fd, h, len) != (ssize_t)len) {
            fprintf(stderr, PREFIX "%s: cannot write: %s\n", g.events_path, strerror(errno));
            close(fd);
            return false;
        }
    }
    if (locked) {
        lk.l_type = F_UNLCK;
        fcntl(fd, F_SETLK, &lk);
    }
    g.fd = fd;
    return true;
}

/* ---------------------------------------------------------------- records */

static void add(const twi_record *r)
{
    if (!twi_append_line(&g.buf, r, &g.clock, g.dm)) {
        g.bad_records++;
        return;
    }
    g.lines++;
    if (g.buf.len >= WRITE_CHUNK_BYTES) write_out();
}

/* The fields every timed record on a stream has (kernel, memcpy, memset):
 * CUPTI gives each kind its own struct, so a macro rather than a function. */
#define SPAN_ON_STREAM(r, x)                                                                                           \
    do {                                                                                                               \
        (r).start_ns = (x)->start;                                                                                     \
        (r).end_ns = (x)->end;                                                                                         \
        (r).device = (int32_t)(x)->deviceId;                                                                           \
        (r).stream = (x)->streamId;                                                                                    \
        (r).correlation_id = (x)->correlationId;                                                                       \
    } while (0)

/* One activity record (called with g.lock held). */
static void handle(const CUpti_Activity *a)
{
    twi_record r;
    memset(&r, 0, sizeof r);
    g.records++;
    switch (a->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
        const CUpti_ActivityKernel10 *k = (const CUpti_ActivityKernel10 *)a;
        r.kind = TWI_KERNEL;
        r.name = k->name;
        SPAN_ON_STREAM(r, k);
        r.grid[0] = k->gridX, r.grid[1] = k->gridY, r.grid[2] = k->gridZ;
        r.block[0] = k->blockX, r.block[1] = k->blockY, r.block[2] = k->blockZ;
        add(&r);
        break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
        const CUpti_ActivityMemcpy6 *m = (const CUpti_ActivityMemcpy6 *)a;
        r.kind = TWI_MEMCPY;
        r.copy_kind = m->copyKind;
        r.bytes = m->bytes;
        SPAN_ON_STREAM(r, m);
        add(&r);
        break;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
        const CUpti_ActivityMemset4 *m = (const CUpti_ActivityMemset4 *)a;
        r.kind = TWI_MEMSET;
        r.bytes = m->bytes;
        SPAN_ON_STREAM(r, m);
        add(&r);
        break;
    }
    case CUPTI_ACTIVITY_KIND_MARKER: {
        const CUpti_ActivityMarker2 *m = (const CUpti_ActivityMarker2 *)a;
        if (m->timestamp == 0 || !g.ranges) break; /* not timed */
        int paired = 0;
        /* instantaneous markers (nvtxMark) are not ranges: not written */
        if (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_START)
            paired = twi_ranges_start(g.ranges, m->id, m->name, m->timestamp, &r);
        else if (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_END)
            paired = twi_ranges_end(g.ranges, m->id, m->timestamp, &r);
        if (paired > 0) add(&r);
        if (paired < 0) g.bad_records++;
        break;
    }
    default:
        break;
    }
}

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
    /* malloc's alignment (16) is more than the 8 bytes CUPTI asks for */
    *buffer = malloc(BUFFER_BYTES);
    *size = *buffer ? BUFFER_BYTES : 0;
    *max_records = 0; /* as many as fit */
    if (!*buffer) fprintf(stderr, PREFIX "out of memory for an activity buffer; records will be dropped\n");
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream_id, uint8_t *buffer, size_t size,
                                      size_t valid_size)
{
    (void)size;
    if (buffer && valid_size > 0) {
        pthread_mutex_lock(&g.lock);
        CUpti_Activity *rec = NULL;
        for (;;) {
            CUptiResult r = api.cuptiActivityGetNextRecord(buffer, valid_size, &rec);
            if (r == CUPTI_ERROR_MAX_LIMIT_REACHED) break; /* the end of the buffer */
            if (!cupti_ok(r, "cuptiActivityGetNextRecord")) break;
            handle(rec);
        }
        if (g.fd >= 0) write_out();
        pthread_mutex_unlock(&g.lock);
    }
    free(buffer);

    size_t dropped = 0;
    if (cupti_ok(api.cuptiActivityGetNumDroppedRecords(ctx, stream_id, &dropped),
                 "cuptiActivityGetNumDroppedRecords") &&
        dropped > 0) {
        pthread_mutex_lock(&g.lock);
        bool first = g.dropped == 0;
        g.dropped += dropped;
        pthread_mutex_unlock(&g.lock);
        if (first) fprintf(stderr, PREFIX "CUPTI dropped %zu activity records (buffers full)\n", dropped);
    }
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

/* ---------------------------------------------------------------- flush thread */

/* CUPTI's own periodic flush (cuptiActivityFlushPeriod) returns full buffers
 * only; a slow program might not fill one for minutes. This thread asks for
 * every buffer whose records are complete, full or not, so the events file
 * lags the program by about one period (what a crash loses). */
static void *flush_loop(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&g.flush_lock);
    while (!g.flush_stop) {
        struct timespec until;
        clock_gettime(CLOCK_MONOTONIC, &until);
        uint64_t ns = (uint64_t)until.tv_nsec + (uint64_t)g.flush_ms * 1000000u;
        until.tv_sec += (time_t)(ns / 1000000000u);
        until.tv_nsec = (long)(ns % 1000000000u);
        int rc = 0;
        while (!g.flush_stop && rc != ETIMEDOUT)
            rc = pthread_cond_timedwait(&g.flush_cond, &g.flush_lock, &until);
        if (g.flush_stop) break;
        pthread_mutex_unlock(&g.flush_lock);
        CUptiResult r = api.cuptiActivityFlushAll(0);
        /* reported once: the loop would repeat it ten times a second */
        if (r != CUPTI_SUCCESS && atomic_fetch_add(&g.flush_errors, 1) == 0)
            cupti_ok(r, "cuptiActivityFlushAll (periodic; reported once)");
        pthread_mutex_lock(&g.flush_lock);
    }
    pthread_mutex_unlock(&g.flush_lock);
    return NULL;
}

static void start_flusher(void)
{
    if (g.flush_ms == 0) return;
    pthread_condattr_t ca;
    if (pthread_condattr_init(&ca) != 0) return;
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    int rc = pthread_cond_init(&g.flush_cond, &ca);
    pthread_condattr_destroy(&ca);
    if (rc != 0) {
        fprintf(stderr, PREFIX "no flush thread (pthread_cond_init: %s)\n", strerror(rc));
        return;
    }
    /* the program's signals are none of this thread's business */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    rc = pthread_create(&g.flusher, NULL, flush_loop, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        fprintf(stderr, PREFIX "no flush thread (pthread_create: %s); events arrive in full buffers\n", strerror(rc));
        return;
    }
    pthread_setname_np(g.flusher, "tw-inject-flush");
    g.flusher_running = true;
}

static void stop_flusher(void)
{
    if (!g.flusher_running) return;
    pthread_mutex_lock(&g.flush_lock);
    g.flush_stop = true;
    pthread_cond_signal(&g.flush_cond);
    pthread_mutex_unlock(&g.flush_lock);
    pthread_join(g.flusher, NULL);
    g.flusher_running = false;
}

/* ---------------------------------------------------------------- the end */

static void finish(void)
{
    if (!atomic_load(&g.active) || atomic_exchange(&g.finished, 1)) return;
    if (getpid() != g.pid) return; /* a forked child: CUPTI and the flush thread are the parent's */
    stop_flusher();
    /* every buffer, also those with records still incomplete (kernels the
     * program did not wait for come out untimed and are skipped) */
    cupti_ok(api.cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), "cuptiActivityFlushAll (at exit)");

    /* CUPTI's clock is CLOCK_REALTIME on Linux: a step of the wall clock
     * during the run shifts every later timestamp against CLOCK_MONOTONIC */
    twi_clock now = g.clock;
    uint64_t gap = 0;
    if (twi_clock_calibrate(&now, read_cupti, read_mono, NULL, CALIBRATION_ROUNDS, &gap)) {
        int64_t drift = twi_clock_drift_ns(&g.clock, &now);
        if (drift > 1000000 || drift < -1000000)
            fprintf(stderr,
                    PREFIX "CUPTI's clock moved %.3f ms against CLOCK_MONOTONIC during the run (wall clock "
                           "stepped?); event times may be off by up to that (TW_CUPTI_CLOCK=monotonic avoids it)\n",
                    (double)drift / 1e6);
    }

    pthread_mutex_lock(&g.lock);
    if (g.fd >= 0) write_out();
    if (g.dropped || g.bad_records || g.write_errors || g.verbose)
        fprintf(
            stderr,
            PREFIX "%" PRIu64 " activity records, %" PRIu64 " events written to %s; %" PRIu64
                   " dropped by CUPTI, %" PRIu64 " lost here, %" PRIu64 " write errors, %zu unpaired NVTX markers\n",
            g.records, g.lines, g.events_path, g.dropped, g.bad_records, g.write_errors, twi_ranges_pending(g.ranges));
    pthread_mutex_unlock(&g.lock);
    /* the file stays open: records CUPTI delivers after this (kernels run by
     * later exit handlers) are still written */
}

static void finish_at_exit(void) { finish(); }

/* A second chance when exit handlers did not run the flush (atexit failed). */
__attribute__((destructor)) static void finish_at_unload(void) { finish(); }

/* ---------------------------------------------------------------- set-up */

/* The NVTX injection must be this very libcupti, or ranges go to a copy of
 * CUPTI that records nothing. */
static void check_nvtx(void)
{
    const char *nvtx = getenv("NVTX_INJECTION64_PATH");
    if (!nvtx || !*nvtx) {
        /* NVTX reads the variable at the program's first NVTX call, which
         * usually comes after CUDA's initialisation (this call): setting it
         * now routes the ranges to this CUPTI. A program that called NVTX
         * before initialising CUDA has made its choice already. */
        if (cupti_path[0] == '/' && setenv("NVTX_INJECTION64_PATH", cupti_path, 0) == 0) {
            if (g.verbose) fprintf(stderr, PREFIX "NVTX_INJECTION64_PATH set to %s\n", cupti_path);
        } else if (g.verbose) {
            fprintf(stderr, PREFIX "NVTX_INJECTION64_PATH is not set: no NVTX ranges (set it to %s)\n", cupti_path);
        }
        return;
    }
    char a[PATH_MAX], b[PATH_MAX];
    if (!realpath(nvtx, a) || !realpath(cupti_path, b)) return; /* a bare soname: cannot tell */
    if (strcmp(a, b) != 0)
        fprintf(stderr,
                PREFIX "NVTX_INJECTION64_PATH=%s is not the CUPTI in use (%s): NVTX ranges will be missing; set "
                       "both it and TW_CUPTI_LIBRARY to one file\n",
                nvtx, b);
}

static bool enable(CUpti_ActivityKind kind, const char *name)
{
    CUptiResult r = api.cuptiActivityEnable(kind);
    if (r == CUPTI_SUCCESS) return true;
    char what[96];
    snprintf(what, sizeof what, "cuptiActivityEnable(%s)", name);
    return cupti_ok(r, what);
}

static void setup(void)
{
    g.verbose = getenv("TW_INJECT_VERBOSE") && strcmp(getenv("TW_INJECT_VERBOSE"), "0") != 0;
    const char *events = getenv("TW_EVENTS_PATH");
    if (!events || !*events) {
        fprintf(stderr, PREFIX "TW_EVENTS_PATH is not set: not recording (set it to the events CSV to write)\n");
        return;
    }
    g.clock.t0_mono_ns = 0;
    const char *t0 = getenv("TW_T0_MONO_NS");
    if (t0 && *t0 && !twi_parse_u64(t0, &g.clock.t0_mono_ns)) {
        fprintf(stderr, PREFIX "TW_T0_MONO_NS='%s' is not a number of ns; using 0\n", t0);
        g.clock.t0_mono_ns = 0;
    }
    uint64_t flush_ms = 100;
    const char *fm = getenv("TW_INJECT_FLUSH_MS");
    if (fm && *fm && (!twi_parse_u64(fm, &flush_ms) || flush_ms > 60000)) {
        fprintf(stderr, PREFIX "TW_INJECT_FLUSH_MS='%s' is not 0..60000; using 100\n", fm);
        flush_ms = 100;
    }
    g.flush_ms = (unsigned)flush_ms;

    if (!open_events(events)) return;
    if (!load_cupti()) return;

    uint32_t version = 0;
    if (cupti_ok(api.cuptiGetVersion(&version), "cuptiGetVersion") && version / 10000 != CUPTI_API_VERSION / 10000)
        fprintf(stderr, PREFIX "%s is CUPTI API version %u; this library was built for %d: records may be misread\n",
                cupti_path, version, CUPTI_API_VERSION);

    g.dm = twi_demangler_new(0);
    g.ranges = twi_ranges_new();
    if (!g.dm || !g.ranges) {
        fprintf(stderr, PREFIX "out of memory\n");
        return;
    }

    if (!cupti_ok(api.cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed),
                  "cuptiActivityRegisterCallbacks"))
        return;

    const char *clk = getenv("TW_CUPTI_CLOCK");
    bool monotonic = clk && strcmp(clk, "monotonic") == 0;
    if (monotonic) {
        /* before any kind is enabled, so that every record uses it */
        if (!api.cuptiActivityRegisterTimestampCallback)
            fprintf(stderr, PREFIX "TW_CUPTI_CLOCK=monotonic: this CUPTI has no timestamp callback; "
                                   "using its own clock\n");
        else if (!cupti_ok(api.cuptiActivityRegisterTimestampCallback(monotonic_timestamp),
                           "cuptiActivityRegisterTimestampCallback"))
            monotonic = false;
    }

    uint64_t gap = 0;
    if (!twi_clock_calibrate(&g.clock, read_cupti, read_mono, NULL, CALIBRATION_ROUNDS, &gap)) {
        fprintf(stderr, PREFIX "cuptiGetTimestamp or CLOCK_MONOTONIC failed: no time reference, not recording\n");
        return;
    }

    cupti_ok(api.cuptiActivityFlushPeriod(100), "cuptiActivityFlushPeriod");

    /* the activity is switched on before any record can arrive: mark active first */
    g.pid = getpid();
    atomic_store(&g.active, 1);
    bool any = enable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, "CONCURRENT_KERNEL");
    any = enable(CUPTI_ACTIVITY_KIND_MEMCPY, "MEMCPY") || any;
    any = enable(CUPTI_ACTIVITY_KIND_MEMSET, "MEMSET") || any;
    bool markers = enable(CUPTI_ACTIVITY_KIND_MARKER, "MARKER");
    any = markers || any;
    if (!any) {
        fprintf(stderr, PREFIX "no activity kind could be enabled: not recording\n");
        atomic_store(&g.active, 0);
        return;
    }
    if (markers) check_nvtx();

    if (atexit(finish_at_exit) != 0)
        fprintf(stderr, PREFIX "atexit failed: the last events are flushed when the library unloads\n");
    start_flusher();

    if (g.verbose)
        fprintf(stderr,
                PREFIX "CUPTI %u from %s; events to %s; clock %s, calibrated to +-%" PRIu64 " ns; t0 %" PRIu64
                       " ns; flush every %u ms\n",
                version, cupti_path, g.events_path, monotonic ? "CLOCK_MONOTONIC (callback)" : "CUPTI's", (gap + 1) / 2,
                g.clock.t0_mono_ns, g.flush_ms);
}

/* Called by libcuda (from cuInit) when CUDA_INJECTION64_PATH names this
 * library. Returns 1 (success) in every case: a failure to trace must not
 * fail the program's CUDA initialisation. */
__attribute__((visibility("default"))) int InitializeInjection(void);

int InitializeInjection(void)
{
    if (atomic_exchange(&g.initiated, 1)) return 1;
    setup();
    return 1;
}
