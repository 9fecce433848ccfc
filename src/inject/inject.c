/*
 * inject.c - libtruewatt-inject.so, the CUPTI and NVTX injection library.
 *
 * The CUDA driver loads it into a program when CUDA_INJECTION64_PATH names it
 * and calls InitializeInjection() from cuInit: it records the program's
 * kernels, memory copies and memsets through the CUPTI activity API, each
 * with the UUID of its GPU. NVTX loads it when NVTX_INJECTION64_PATH names it
 * and calls InitializeInjectionNvtx2() at the program's first NVTX call: it
 * records NVTX push/pop and start/end ranges itself, per thread and domain,
 * timed on CLOCK_MONOTONIC, whatever CUPTI the program ships. Both append
 * their lines, as they complete, to the CSV file $TW_EVENTS_PATH (format:
 * event_csv.h), on the trace timeline (seconds since $TW_T0_MONO_NS on
 * CLOCK_MONOTONIC).
 *
 * CUPTI itself (libcupti dlopened, its buffers, records and device UUIDs) is
 * cupti_activity.h, shared with a session that traces kernels in-process.
 * Whatever fails is reported on stderr ("truewatt-inject: ...") and tracing
 * stops; the host program always goes on.
 *
 * Cost to the program. Nothing is formatted or written on the program's
 * threads or CUPTI's: CUPTI's completed buffers go onto a lock-free list and
 * a closed NVTX range into its thread's own lock-free ring (single producer,
 * single consumer); one background thread, every TW_INJECT_FLUSH_MS, asks
 * CUPTI for its buffers, then formats, demangles and writes everything queued
 * (bench/inject/bench_inject.c measures both costs). Nobody waits on that
 * thread: a thread whose ring is full (it closes ranges faster than the drain
 * reads them) goes on in a fresh ring, the full one left to the drain. At exit, and at a library unload, everything
 * queued is written. On a crash or kill -9 (no exit handler runs), the file holds every record up to the last drain:
 * what CUPTI delivered and the ranges closed until at most TW_INJECT_FLUSH_MS before the end (and what CUPTI still held
 * then) is lost; nothing is written from a signal handler.
 *
 * Environment:
 *   TW_EVENTS_PATH       the events file; "%p" in it becomes the process id.
 *                        Opened for appending (the header is written when the
 *                        file is empty), so several processes can share it.
 *   TW_T0_MONO_NS        the timeline's origin on CLOCK_MONOTONIC, ns (0 if unset)
 *   TW_CUPTI_LIBRARY     the libcupti to load (tried first)
 *   NVTX_INJECTION64_PATH  this library, for NVTX ranges (truewatt run sets
 *                        it). When unset, InitializeInjection sets it to this
 *                        library, which works when the program's first NVTX
 *                        call comes after CUDA's initialisation (the usual
 *                        case); when it names another library, that one gets
 *                        the ranges (respected, noted with TW_INJECT_VERBOSE)
 *   TW_INJECT_FLUSH_MS   period of the drain thread, ms (default 100; 0 = no
 *                        thread: records are written where they arrive)
 *   TW_CUPTI_CLOCK       "monotonic": CUPTI timestamps from CLOCK_MONOTONIC
 *                        through cuptiActivityRegisterTimestampCallback
 *                        (default: CUPTI's own clock and a measured offset)
 *   TW_INJECT_VERBOSE    "1": a line on what was set up and a summary at exit
 *   TW_PM_INTERVAL_MS    activity counters: CUPTI's PM sampling every this many ms
 *                        (0.01..1000) on each GPU the program uses, as pm_* lines
 *                        of the events file (pm_sampling.h; truewatt run
 *                        --activity-counters sets it); unset: none
 *   TW_PM_WINDOWS        "ON,EVERY[,busy]": that sampling enabled ON s of every EVERY s only (busy: a
 *                        window falls due only once the GPU has run something since the last)
 *   TW_PM_METRICS        "a,b,...": the metrics asked for instead of the
 *                        default list (twi_pm_wanted), for studies of the features
 */
#define _GNU_SOURCE /* dladdr, pthread_setname_np, syscall */

#include <cupti.h>   /* types and constants only: nothing is linked */
#define NVTX_NO_IMPL /* NVTX's types and callback ids, not its implementation */
#include <nvtx3/nvToolsExt.h>

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
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <wchar.h>
#include <unistd.h>

#include "inject/cupti_activity.h"
#include "inject/demangle.h"
#include "inject/event_csv.h"
#include "inject/nvtx_ranges.h"
#include "inject/pm_options.h"
#include "inject/pm_sampling.h"

#define PREFIX "truewatt-inject: "
#define WRITE_CHUNK_BYTES ((size_t)1 << 16) /* lines are written out in chunks of about this */

/* ---------------------------------------------------------------- state */

static struct {
    pthread_mutex_t lock; /* guards everything below up to the counters */
    int fd;
    twi_buf buf; /* whole lines not yet written */
    twi_clock clock;
    twi_demangler *dm;
    twi_ranges *ranges; /* NVTX start/end ranges open */
    uint64_t records, lines, dropped, write_errors, bad_records, nvtx_unpaired;
    char events_path[PATH_MAX];

    pid_t pid;            /* the process that opened the file (not a forked child) */
    bool file_ok;         /* the events file is open and the exit flush registered */
    atomic_int active;    /* CUPTI tracing was set up */
    atomic_int nvtx;      /* the NVTX callbacks are attached */
    atomic_int finished;  /* the exit flush ran */
    atomic_int initiated; /* InitializeInjection ran */
    bool verbose;
    pthread_key_t stack_key; /* each thread's twi_stack of push/pop ranges */
    bool stack_key_ok;
    atomic_uint_fast64_t next_range_id;

    /* every thread's ring of closed NVTX ranges (pushed at the head, lock-free;
     * only the drain, under the lock, unlinks) */
    _Atomic(struct nvtx_ring *) rings;
    pthread_key_t ring_key;
    bool ring_key_ok;
    uint64_t ring_full; /* ranges their thread had to write itself (no memory for a ring) */

    /* the drain thread */
    atomic_int draining; /* it runs: records are queued for it */
    atomic_int wake;     /* a ring is half full: drain now */
    pthread_t flusher;
    bool flusher_running;
    pthread_mutex_t flush_lock;
    pthread_cond_t flush_cond;
    bool flush_stop;
    unsigned flush_ms;
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
    size_t before = g.buf.len;
    if (!twi_append_line(&g.buf, r, &g.clock, g.dm)) {
        g.bad_records++;
        return;
    }
    if (g.buf.len > before) g.lines++; /* untimed records write nothing */
    if (g.buf.len >= WRITE_CHUNK_BYTES) write_out();
}

/* The activity records, read from the queued buffers under g.lock
 * (cupti_activity.h) and written out after each buffer. */
static void reader_begin(void *ctx)
{
    (void)ctx;
    pthread_mutex_lock(&g.lock);
}

static void reader_record(void *ctx, const twi_record *r)
{
    (void)ctx;
    if (r->kind == TWI_KERNEL || r->kind == TWI_MEMCPY || r->kind == TWI_MEMSET) twi_pm_saw_activity(r->device);
    if (g.fd >= 0) add(r);
}

static void reader_end(void *ctx)
{
    (void)ctx;
    if (g.fd >= 0) write_out();
    pthread_mutex_unlock(&g.lock);
}

static const twi_cupti_reader READER = {reader_begin, reader_record, reader_end, NULL};

static void drain_buffers(void) { twi_cupti_drain(&READER); }

/* On CUPTI's thread, without a drain thread (TW_INJECT_FLUSH_MS=0, the exit
 * flush): the buffer is read where it arrives. */
static void on_buffer(void *ctx)
{
    (void)ctx;
    drain_buffers();
}

/* ---------------------------------------------------------------- drain thread */

static void drain_rings(void);

/* CUPTI's own periodic flush (cuptiActivityFlushPeriod) returns full buffers
 * only; a slow program might not fill one for minutes. This thread asks for
 * every buffer whose records are complete, full or not, then reads the
 * queued buffers and NVTX rings and writes their lines, so the events file
 * lags the program by about one period (what a crash loses). */
static void *flush_loop(void *arg)
{
    (void)arg;
    /* below the program's threads (nice +10, this thread alone): where cores are
     * scarce the program runs first, and the rings wait (they do not block) */
    setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), 10);
    pthread_mutex_lock(&g.flush_lock);
    while (!g.flush_stop) {
        struct timespec until;
        clock_gettime(CLOCK_MONOTONIC, &until);
        uint64_t ns = (uint64_t)until.tv_nsec + (uint64_t)g.flush_ms * 1000000u;
        until.tv_sec += (time_t)(ns / 1000000000u);
        until.tv_nsec = (long)(ns % 1000000000u);
        int rc = 0;
        while (!g.flush_stop && rc != ETIMEDOUT && !atomic_exchange(&g.wake, 0))
            rc = pthread_cond_timedwait(&g.flush_cond, &g.flush_lock, &until);
        if (g.flush_stop) break;
        pthread_mutex_unlock(&g.flush_lock);
        if (atomic_load(&g.active)) {
            twi_cupti_learn_devices();
            twi_cupti_flush(false);
            drain_buffers();
        }
        drain_rings();
        pthread_mutex_lock(&g.flush_lock);
    }
    pthread_mutex_unlock(&g.flush_lock);
    return NULL;
}

/* Once per process, by whichever entry point comes first (CUPTI's, NVTX's). */
static void start_flusher_once(void)
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
    pthread_setname_np(g.flusher, "tw-inject-drain");
    g.flusher_running = true;
    atomic_store(&g.draining, 1);
    twi_cupti_queue(true);
}

static pthread_once_t flusher_once = PTHREAD_ONCE_INIT;
static void start_flusher(void) { pthread_once(&flusher_once, start_flusher_once); }

static void stop_flusher(void)
{
    if (!g.flusher_running) return;
    pthread_mutex_lock(&g.flush_lock);
    g.flush_stop = true;
    pthread_cond_signal(&g.flush_cond);
    pthread_mutex_unlock(&g.flush_lock);
    pthread_join(g.flusher, NULL);
    g.flusher_running = false;
    atomic_store(&g.draining, 0); /* from now on records are written where they arrive */
    twi_cupti_queue(false);
}

/* ---------------------------------------------------------------- the end */

static void finish(void)
{
    if (!g.file_ok || atomic_exchange(&g.finished, 1)) return;
    if (getpid() != g.pid) { /* a forked child: CUPTI and the drain thread are the parent's; its NVTX lines its own */
        drain_rings();
        pthread_mutex_lock(&g.lock);
        if (g.fd >= 0) write_out();
        pthread_mutex_unlock(&g.lock);
        return;
    }
    bool cupti = atomic_load(&g.active);
    twi_pm_stop(); /* its last samples, before the last write */
    stop_flusher();
    drain_rings(); /* NVTX ranges closed since the last drain */
    if (cupti) {
        twi_cupti_learn_devices();
        drain_buffers(); /* queued before the drain thread stopped */
        /* every buffer, also those with records still incomplete (kernels the
         * program did not wait for come out untimed and are skipped) */
        twi_cupti_flush(true);
        drain_buffers(); /* a buffer CUPTI's thread queued while the drain stopped */

        /* CUPTI's clock is CLOCK_REALTIME on Linux: a step of the wall clock
         * during the run shifts every later timestamp against CLOCK_MONOTONIC */
        twi_clock now = g.clock;
        uint64_t gap = 0;
        if (twi_cupti_calibrate(&now, &gap)) {
            int64_t drift = twi_clock_drift_ns(&g.clock, &now);
            if (drift > 1000000 || drift < -1000000)
                fprintf(stderr,
                        PREFIX "CUPTI's clock moved %.3f ms against CLOCK_MONOTONIC during the run (wall clock "
                               "stepped?); event times may be off by up to that (TW_CUPTI_CLOCK=monotonic avoids it)\n",
                        (double)drift / 1e6);
        }
    }

    pthread_mutex_lock(&g.lock);
    if (g.fd >= 0) write_out();
    size_t open_ranges = twi_ranges_pending(g.ranges);
    twi_cupti_stats(&g.records, &g.dropped, NULL);
    if (g.dropped || g.bad_records || g.write_errors || g.buf.bad_span || g.verbose)
        fprintf(stderr,
                PREFIX "%" PRIu64 " activity records, %" PRIu64 " events written to %s; %" PRIu64
                       " dropped by CUPTI, %" PRIu64 " lost here, %" PRIu64 " ending before they start, %" PRIu64
                       " write errors; NVTX: %zu start/end ranges left open, %" PRIu64
                       " pops or ends without a range, %" PRIu64 " written by their thread (no memory for a ring)\n",
                g.records, g.lines, g.events_path, g.dropped, g.bad_records, g.buf.bad_span, g.write_errors,
                open_ranges, g.nvtx_unpaired, g.ring_full);
    pthread_mutex_unlock(&g.lock);
    /* the file stays open: records CUPTI delivers after this (kernels run by
     * later exit handlers) are still written */
}

static void finish_at_exit(void) { finish(); }

/* A second chance when exit handlers did not run the flush (atexit failed). */
__attribute__((destructor)) static void finish_at_unload(void) { finish(); }

/* ---------------------------------------------------------------- NVTX */

/* Hot path: a push costs one clock_gettime and a copy of the name into the
 * thread's own stack (no lock, no allocation once its slots exist); a pop
 * copies the closed range into the thread's ring (no lock) for the drain. */

typedef struct tw_domain {
    char *name;
} tw_domain;

static uint64_t mono_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int64_t thread_id(void) { return (int64_t)syscall(SYS_gettid); }

static void free_stack(void *p) { twi_stack_free(p); /* ranges still open when a thread ends are lost */ }

/* This thread's stack, made on its first range; NULL when out of memory. */
static twi_stack *my_stack(void)
{
    twi_stack *s = pthread_getspecific(g.stack_key);
    if (s || !g.stack_key_ok) return s;
    s = twi_stack_new(thread_id());
    if (s && pthread_setspecific(g.stack_key, s) != 0) {
        twi_stack_free(s);
        s = NULL;
    }
    return s;
}

static void emit_locked(const twi_record *r)
{
    pthread_mutex_lock(&g.lock);
    if (g.fd >= 0) add(r);
    pthread_mutex_unlock(&g.lock);
}

/* A thread's closed NVTX ranges on their way to the drain thread: a ring of
 * bytes, single producer (the thread) and single consumer (the drain, under
 * g.lock). head and tail count bytes ever written and read; an entry is a
 * ring_entry, then the name and the domain (with their NULs), padded to 8:
 * ~70 bytes, so 256 KiB hold ~3,700 ranges; the drain is woken early when a
 * ring is half full. The drain takes g.lock for at most DRAIN_CHUNK entries
 * at a time, so a range written under the lock (see emit) waits little. */
#define DRAIN_CHUNK 256
#define RING_BYTES ((size_t)1 << 18)

typedef struct nvtx_ring {
    struct nvtx_ring *next;
    _Atomic size_t head, tail;
    atomic_int dead; /* its thread ended: freed by the drain once read */
    unsigned char data[RING_BYTES];
} nvtx_ring;

typedef struct ring_entry {
    uint64_t start_ns, end_ns;
    int64_t tid;
    int32_t depth;
    uint32_t size; /* of the entry, its names and padding */
    uint32_t name_len, domain_len;
} ring_entry;

static void ring_copy_in(nvtx_ring *g_r, size_t at, const void *src, size_t n)
{
    size_t off = at % RING_BYTES, first = n < RING_BYTES - off ? n : RING_BYTES - off;
    memcpy(g_r->data + off, src, first);
    memcpy(g_r->data, (const unsigned char *)src + first, n - first);
}

static void ring_copy_out(const nvtx_ring *g_r, size_t at, void *dst, size_t n)
{
    size_t off = at % RING_BYTES, first = n < RING_BYTES - off ? n : RING_BYTES - off;
    memcpy(dst, g_r->data + off, first);
    memcpy((unsigned char *)dst + first, g_r->data, n - first);
}

static void ring_dead(void *p) { atomic_store(&((nvtx_ring *)p)->dead, 1); }

/* A new ring for this thread, listed for the drain; NULL when none can be made. */
static nvtx_ring *new_ring(void)
{
    nvtx_ring *r = calloc(1, sizeof *r);
    if (!r) return NULL;
    if (pthread_setspecific(g.ring_key, r) != 0) {
        free(r);
        return NULL;
    }
    r->next = atomic_load(&g.rings);
    while (!atomic_compare_exchange_weak(&g.rings, &r->next, r)) {
    }
    return r;
}

/* This thread's ring, made on its first range; NULL when none can be. */
static nvtx_ring *my_ring(void)
{
    if (!g.ring_key_ok) return NULL;
    nvtx_ring *r = pthread_getspecific(g.ring_key);
    return r ? r : new_ring();
}

/* Appends the range to ring q (its thread's); false when it is full. */
static bool ring_put(nvtx_ring *q, const twi_record *r, size_t nl, size_t dl, size_t size)
{
    size_t head = atomic_load_explicit(&q->head, memory_order_relaxed);
    size_t tail = atomic_load_explicit(&q->tail, memory_order_acquire);
    if (RING_BYTES - (head - tail) < size) return false;
    ring_entry e = {r->start_ns, r->end_ns, r->tid, r->depth, (uint32_t)size, (uint32_t)nl, (uint32_t)dl};
    ring_copy_in(q, head, &e, sizeof e);
    ring_copy_in(q, head + sizeof e, r->name ? r->name : "", nl + 1);
    ring_copy_in(q, head + sizeof e + nl + 1, r->domain ? r->domain : "", dl + 1);
    atomic_store_explicit(&q->head, head + size, memory_order_release);
    /* past half full: the drain is woken now (a futex wake, never a wait) */
    if (head + size - tail > RING_BYTES / 2 && head - tail <= RING_BYTES / 2) {
        atomic_store(&g.wake, 1);
        pthread_cond_signal(&g.flush_cond);
    }
    return true;
}

/* A closed range: into the thread's ring when a drain thread reads the rings.
 * A full ring (the drain lags, e.g. starved of CPU) is left to the drain,
 * which frees it once read, and the thread goes on in a fresh one: the program
 * never waits. Written here only without a drain thread, a name too long for
 * a ring, or no memory for a new ring. */
static void emit(const twi_record *r)
{
    nvtx_ring *q = atomic_load(&g.draining) ? my_ring() : NULL;
    size_t nl = strlen(r->name ? r->name : ""), dl = strlen(r->domain ? r->domain : "");
    size_t size = (sizeof(ring_entry) + nl + dl + 2 + 7) & ~(size_t)7;
    if (q && size <= RING_BYTES / 4) {
        if (ring_put(q, r, nl, dl, size)) return;
        nvtx_ring *fresh = new_ring();
        if (fresh) {
            atomic_store(&q->dead, 1); /* retired: its thread writes no more into it */
            if (ring_put(fresh, r, nl, dl, size)) return;
        }
        pthread_mutex_lock(&g.lock);
        g.ring_full++;
        pthread_mutex_unlock(&g.lock);
    }
    emit_locked(r);
}

/* Every ring's entries into the buffer and the file; the rings of ended
 * threads freed once read (never the list's head, which threads push onto). */
static void drain_rings(void)
{
    char small[1024];
    pthread_mutex_lock(&g.lock);
    nvtx_ring *first = atomic_load(&g.rings), *prev = NULL;
    for (nvtx_ring *q = first; q;) {
        bool dead = atomic_load(&q->dead);
        size_t tail = atomic_load_explicit(&q->tail, memory_order_relaxed);
        size_t head = atomic_load_explicit(&q->head, memory_order_acquire);
        for (size_t k = 0; tail < head; k++) {
            if (k % DRAIN_CHUNK == DRAIN_CHUNK - 1) { /* let a waiting writer in */
                atomic_store_explicit(&q->tail, tail, memory_order_release);
                pthread_mutex_unlock(&g.lock);
                pthread_mutex_lock(&g.lock);
            }
            ring_entry e;
            ring_copy_out(q, tail, &e, sizeof e);
            size_t text = (size_t)e.name_len + e.domain_len + 2;
            char *names = text <= sizeof small ? small : malloc(text);
            if (names) {
                ring_copy_out(q, tail + sizeof e, names, text);
                twi_record r;
                twi_nvtx_record(&r, names, names + e.name_len + 1, e.tid, e.depth, e.start_ns, e.end_ns);
                if (g.fd >= 0) add(&r);
                if (names != small) free(names);
            } else {
                g.bad_records++;
            }
            tail += e.size;
        }
        atomic_store_explicit(&q->tail, tail, memory_order_release);
        nvtx_ring *next = q->next;
        if (dead && q != first && prev) { /* its thread is gone and everything read */
            prev->next = next;
            free(q);
        } else {
            prev = q;
        }
        q = next;
    }
    if (g.fd >= 0) write_out();
    pthread_mutex_unlock(&g.lock);
}

static void count_unpaired(void)
{
    pthread_mutex_lock(&g.lock);
    g.nvtx_unpaired++;
    pthread_mutex_unlock(&g.lock);
}

/* A wide string as UTF-8 (what the events file holds), into buf. */
static const char *from_wide(const wchar_t *w, char *buf, size_t cap)
{
    size_t n = 0;
    for (; w && *w && n + 5 < cap; w++) {
        uint32_t c = (uint32_t)*w;
        if (c > 0x10ffff || (c >= 0xd800 && c < 0xe000)) c = 0xfffd;
        if (c < 0x80) {
            buf[n++] = (char)c;
        } else if (c < 0x800) {
            buf[n++] = (char)(0xc0 | c >> 6);
            buf[n++] = (char)(0x80 | (c & 0x3f));
        } else if (c < 0x10000) {
            buf[n++] = (char)(0xe0 | c >> 12);
            buf[n++] = (char)(0x80 | ((c >> 6) & 0x3f));
            buf[n++] = (char)(0x80 | (c & 0x3f));
        } else {
            buf[n++] = (char)(0xf0 | c >> 18);
            buf[n++] = (char)(0x80 | ((c >> 12) & 0x3f));
            buf[n++] = (char)(0x80 | ((c >> 6) & 0x3f));
            buf[n++] = (char)(0x80 | (c & 0x3f));
        }
    }
    buf[n] = '\0';
    return buf;
}

/* The message of an event's attributes: ASCII, wide or registered (a
 * string this library registered: its own copy). */
static const char *message(const nvtxEventAttributes_t *a, char *buf, size_t cap)
{
    if (!a) return "";
    switch (a->messageType) {
    case NVTX_MESSAGE_TYPE_ASCII:
        return a->message.ascii ? a->message.ascii : "";
    case NVTX_MESSAGE_TYPE_UNICODE:
        return from_wide(a->message.unicode, buf, cap);
    case NVTX_MESSAGE_TYPE_REGISTERED:
        return a->message.registered ? (const char *)a->message.registered : "";
    default:
        return "";
    }
}

static const char *domain_name(nvtxDomainHandle_t d) { return d ? ((const tw_domain *)d)->name : ""; }

static int push_range(nvtxDomainHandle_t domain, const char *name)
{
    twi_stack *s = my_stack();
    if (!s) return -1;
    int depth = twi_stack_push(s, domain, domain_name(domain), name, mono_now());
    return depth > 0 ? depth - 1 : -1; /* NVTX counts levels from 0 */
}

static int pop_range(nvtxDomainHandle_t domain)
{
    uint64_t t = mono_now();
    twi_stack *s = my_stack();
    twi_record r;
    int depth = s ? twi_stack_pop(s, domain, t, &r) : 0;
    if (depth <= 0) {
        count_unpaired();
        return -1;
    }
    emit(&r);
    return depth - 1;
}

static nvtxRangeId_t start_range(nvtxDomainHandle_t domain, const char *name)
{
    uint64_t t = mono_now();
    nvtxRangeId_t id = (nvtxRangeId_t)atomic_fetch_add(&g.next_range_id, 1) + 1;
    twi_stack *s = my_stack(); /* holds the thread's id */
    int64_t tid = s ? twi_stack_tid(s) : thread_id();
    pthread_mutex_lock(&g.lock);
    int rc = g.ranges ? twi_ranges_start(g.ranges, id, domain_name(domain), name, tid, t) : -1;
    pthread_mutex_unlock(&g.lock);
    return rc == 0 ? id : 0;
}

static void end_range(nvtxRangeId_t id)
{
    uint64_t t = mono_now();
    twi_record r;
    pthread_mutex_lock(&g.lock);
    if (g.ranges && twi_ranges_end(g.ranges, id, t, &r) == 1) {
        if (g.fd >= 0) add(&r);
    } else {
        g.nvtx_unpaired++;
    }
    pthread_mutex_unlock(&g.lock);
}

#define WIDE_NAME 512 /* bytes of UTF-8 kept of a wide-character name */

static int NVTX_API cb_push_a(const char *message) { return push_range(NULL, message ? message : ""); }
static int NVTX_API cb_push_w(const wchar_t *message)
{
    char buf[WIDE_NAME];
    return push_range(NULL, from_wide(message, buf, sizeof buf));
}
static int NVTX_API cb_push_ex(const nvtxEventAttributes_t *a)
{
    char buf[WIDE_NAME];
    return push_range(NULL, message(a, buf, sizeof buf));
}
static int NVTX_API cb_pop(void) { return pop_range(NULL); }
static nvtxRangeId_t NVTX_API cb_start_a(const char *message) { return start_range(NULL, message ? message : ""); }
static nvtxRangeId_t NVTX_API cb_start_w(const wchar_t *message)
{
    char buf[WIDE_NAME];
    return start_range(NULL, from_wide(message, buf, sizeof buf));
}
static nvtxRangeId_t NVTX_API cb_start_ex(const nvtxEventAttributes_t *a)
{
    char buf[WIDE_NAME];
    return start_range(NULL, message(a, buf, sizeof buf));
}
static void NVTX_API cb_end(nvtxRangeId_t id) { end_range(id); }

static int NVTX_API cb_domain_push(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
    char buf[WIDE_NAME];
    return push_range(d, message(a, buf, sizeof buf));
}
static int NVTX_API cb_domain_pop(nvtxDomainHandle_t d) { return pop_range(d); }
static nvtxRangeId_t NVTX_API cb_domain_start(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
    char buf[WIDE_NAME];
    return start_range(d, message(a, buf, sizeof buf));
}
static void NVTX_API cb_domain_end(nvtxDomainHandle_t d, nvtxRangeId_t id)
{
    (void)d;
    end_range(id);
}

/* Domains and registered strings are this library's own copies; they live
 * as long as the process (ranges may still name them), so destroying a
 * domain forgets nothing. */
static nvtxDomainHandle_t new_domain(const char *name)
{
    tw_domain *d = calloc(1, sizeof *d);
    if (d && !(d->name = strdup(name ? name : ""))) {
        free(d);
        d = NULL;
    }
    return (nvtxDomainHandle_t)d;
}
static nvtxDomainHandle_t NVTX_API cb_domain_create_a(const char *name) { return new_domain(name); }
static nvtxDomainHandle_t NVTX_API cb_domain_create_w(const wchar_t *name)
{
    char buf[WIDE_NAME];
    return new_domain(from_wide(name, buf, sizeof buf));
}
static void NVTX_API cb_domain_destroy(nvtxDomainHandle_t d) { (void)d; }
static nvtxStringHandle_t NVTX_API cb_register_a(nvtxDomainHandle_t d, const char *text)
{
    (void)d;
    return (nvtxStringHandle_t)strdup(text ? text : "");
}
static nvtxStringHandle_t NVTX_API cb_register_w(nvtxDomainHandle_t d, const wchar_t *text)
{
    (void)d;
    char buf[WIDE_NAME];
    return (nvtxStringHandle_t)strdup(from_wide(text, buf, sizeof buf));
}

/* Puts fn into slot `id` of an NVTX callback table (when the table has it). */
static void set_callback(NvtxFunctionTable table, unsigned size, unsigned id, NvtxFunctionPointer fn)
{
    if (id < size && table[id]) *table[id] = fn;
}

#define CB(f) ((NvtxFunctionPointer)(void (*)(void))(f))

static bool attach_nvtx(NvtxGetExportTableFunc_t get_table)
{
    const NvtxExportTableCallbacks *cbs = get_table ? get_table(NVTX_ETID_CALLBACKS) : NULL;
    if (!cbs || cbs->struct_size < sizeof *cbs || !cbs->GetModuleFunctionTable) return false;
    NvtxFunctionTable core = NULL, core2 = NULL;
    unsigned n_core = 0, n_core2 = 0;
    if (!cbs->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &core, &n_core) || !core) return false;
    set_callback(core, n_core, NVTX_CBID_CORE_RangePushA, CB(cb_push_a));
    set_callback(core, n_core, NVTX_CBID_CORE_RangePushW, CB(cb_push_w));
    set_callback(core, n_core, NVTX_CBID_CORE_RangePushEx, CB(cb_push_ex));
    set_callback(core, n_core, NVTX_CBID_CORE_RangePop, CB(cb_pop));
    set_callback(core, n_core, NVTX_CBID_CORE_RangeStartA, CB(cb_start_a));
    set_callback(core, n_core, NVTX_CBID_CORE_RangeStartW, CB(cb_start_w));
    set_callback(core, n_core, NVTX_CBID_CORE_RangeStartEx, CB(cb_start_ex));
    set_callback(core, n_core, NVTX_CBID_CORE_RangeEnd, CB(cb_end));
    if (cbs->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &core2, &n_core2) && core2) {
        set_callback(core2, n_core2, NVTX_CBID_CORE2_DomainRangePushEx, CB(cb_domain_push));
        set_callback(core2, n_core2, NVTX_CBID_CORE2_DomainRangePop, CB(cb_domain_pop));
        set_callback(core2, n_core2, NVTX_CBID_CORE2_DomainRangeStartEx, CB(cb_domain_start));
        set_callback(core2, n_core2, NVTX_CBID_CORE2_DomainRangeEnd, CB(cb_domain_end));
        set_callback(core2, n_core2, NVTX_CBID_CORE2_DomainCreateA, CB(cb_domain_create_a));
        set_callback(core2, n_core2, NVTX_CBID_CORE2_DomainCreateW, CB(cb_domain_create_w));
        set_callback(core2, n_core2, NVTX_CBID_CORE2_DomainDestroy, CB(cb_domain_destroy));
        set_callback(core2, n_core2, NVTX_CBID_CORE2_DomainRegisterStringA, CB(cb_register_a));
        set_callback(core2, n_core2, NVTX_CBID_CORE2_DomainRegisterStringW, CB(cb_register_w));
    }
    return true;
}

/* This library's own file, for NVTX_INJECTION64_PATH. */
static bool own_path(char *out, size_t cap)
{
    Dl_info info;
    void *self = (void *)&own_path;
    return dladdr(self, &info) && info.dli_fname && info.dli_fname[0] == '/' &&
           (size_t)snprintf(out, cap, "%s", info.dli_fname) < cap;
}

/* NVTX reads NVTX_INJECTION64_PATH at the program's first NVTX call, which
 * usually comes after CUDA's initialisation (this call): when unset, setting
 * it now routes the ranges here. A program that called NVTX before
 * initialising CUDA has made its choice already. */
static void route_nvtx_here(void)
{
    const char *nvtx = getenv("NVTX_INJECTION64_PATH");
    char self[PATH_MAX];
    if (!own_path(self, sizeof self)) return;
    if (!nvtx || !*nvtx) {
        if (setenv("NVTX_INJECTION64_PATH", self, 0) == 0 && g.verbose)
            fprintf(stderr, PREFIX "NVTX_INJECTION64_PATH set to %s\n", self);
    } else if (g.verbose && !twi_same_file(nvtx, self)) {
        fprintf(stderr, PREFIX "NVTX_INJECTION64_PATH=%s: NVTX ranges go there, not here\n", nvtx);
    }
}

/* ---------------------------------------------------------------- set-up */

/* A forked child (a data-loader worker) may record NVTX ranges too: it
 * starts with an unlocked lock and without the lines its parent had not
 * written yet (the parent writes those). */
static void after_fork_in_child(void)
{
    /* the forking thread's open ranges are the child's now, under its own id */
    if (g.stack_key_ok) twi_stack_set_tid(pthread_getspecific(g.stack_key), thread_id());
    pthread_mutex_init(&g.lock, NULL);
    g.buf.len = 0;
    if (g.buf.p) g.buf.p[0] = '\0';
    /* the queued buffers and the ranges not yet drained are the parent's to
     * write; the child has no drain thread: it writes its ranges itself */
    twi_cupti_after_fork();
    twi_pm_after_fork();
    for (nvtx_ring *q = atomic_load(&g.rings); q; q = q->next)
        atomic_store(&q->tail, atomic_load(&q->head));
    g.flusher_running = false;
    atomic_store(&g.draining, 0);
}

/* The events file and what both entry points share; once per process. */
static void open_file(void)
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
    g.dm = twi_demangler_new(0);
    g.ranges = twi_ranges_new();
    if (!g.dm || !g.ranges) {
        fprintf(stderr, PREFIX "out of memory\n");
        return;
    }
    g.stack_key_ok = pthread_key_create(&g.stack_key, free_stack) == 0;
    g.ring_key_ok = pthread_key_create(&g.ring_key, ring_dead) == 0;
    if (!open_events(events)) return;
    g.pid = getpid();
    if (pthread_atfork(NULL, NULL, after_fork_in_child) != 0)
        fprintf(stderr, PREFIX "pthread_atfork failed: a forked child may repeat lines\n");
    if (atexit(finish_at_exit) != 0)
        fprintf(stderr, PREFIX "atexit failed: the last events are flushed when the library unloads\n");
    g.file_ok = true;
}

static pthread_once_t file_once = PTHREAD_ONCE_INIT;

/* PM sampling's records, on its thread: lines like the others. */
static void pm_emit(void *ctx, const twi_record *r)
{
    (void)ctx;
    emit_locked(r);
}

/* Activity counters when truewatt run asked for them (TW_PM_INTERVAL_MS,
 * in windows with TW_PM_WINDOWS). */
static void start_pm_sampling(const twi_cupti_client *cl)
{
    const char *iv = getenv("TW_PM_INTERVAL_MS"), *win = getenv("TW_PM_WINDOWS");
    if (!iv || !*iv) return;
    twi_pm_config pc = {.metrics = getenv("TW_PM_METRICS"), .prefix = PREFIX, .verbose = cl->verbose, .emit = pm_emit};
    if (!twi_pm_parse_interval(iv, &pc.interval_ns)) {
        fprintf(stderr, PREFIX "TW_PM_INTERVAL_MS='%s' is not 0.01..1000 (ms): no activity counters\n", iv);
        return;
    }
    if (win && *win && !twi_pm_parse_windows(win, &pc.window_ns, &pc.period_ns, &pc.busy_windows)) {
        fprintf(stderr,
                PREFIX "TW_PM_WINDOWS='%s' is not ON,EVERY[,busy] (s, 0.1 <= ON < EVERY <= 3600): no activity "
                       "counters\n",
                win);
        return;
    }
    twi_pm_start(&pc, twi_cupti_handle());
}

static void setup_cupti(void)
{
    pthread_once(&file_once, open_file);
    if (!g.file_ok) return;
    const char *clk = getenv("TW_CUPTI_CLOCK");
    twi_cupti_client cl = {.prefix = PREFIX,
                           .print = true,
                           .verbose = g.verbose,
                           .monotonic = clk && strcmp(clk, "monotonic") == 0,
                           .on_buffer = on_buffer};
    twi_clock c = g.clock;
    /* the activity is switched on before any record can arrive: mark active first */
    atomic_store(&g.active, 1);
    if (!twi_cupti_start(&cl, &c)) {
        atomic_store(&g.active, 0);
        return;
    }
    pthread_mutex_lock(&g.lock);
    g.clock = c;
    pthread_mutex_unlock(&g.lock);
    route_nvtx_here();
    start_flusher();
    start_pm_sampling(&cl);

    if (g.verbose)
        fprintf(stderr, PREFIX "events to %s; clock %s; flush every %u ms\n", g.events_path,
                cl.monotonic ? "CLOCK_MONOTONIC (callback)" : "CUPTI's", g.flush_ms);
}

/* Called by libcuda (from cuInit) when CUDA_INJECTION64_PATH names this
 * library. Returns 1 (success) in every case: a failure to trace must not
 * fail the program's CUDA initialisation. */
__attribute__((visibility("default"))) int InitializeInjection(void);

int InitializeInjection(void)
{
    if (atomic_exchange(&g.initiated, 1)) return 1;
    setup_cupti();
    return 1;
}

/* Called by NVTX at the program's first NVTX call when NVTX_INJECTION64_PATH
 * names this library. Returns 1 when the ranges are recorded here, 0 when
 * not (NVTX then makes every call a no-op). */
__attribute__((visibility("default"))) int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_table);

int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_table)
{
    pthread_once(&file_once, open_file);
    if (!g.file_ok) return 0;
    if (!attach_nvtx(get_table)) {
        fprintf(stderr, PREFIX "NVTX gave no callback table: no NVTX ranges\n");
        return 0;
    }
    atomic_store(&g.nvtx, 1);
    start_flusher(); /* the drain of the threads' rings, also without CUDA */
    if (g.verbose) fprintf(stderr, PREFIX "NVTX ranges recorded here; events to %s\n", g.events_path);
    return 1;
}
