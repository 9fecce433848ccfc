/*
 * pm_sampling.c - CUPTI's PM sampling on the injection library's own thread
 * (pm_sampling.h): which devices, when, and their records; each device's
 * CUPTI calls are pm_device.h's. libcupti and libcuda are the ones already
 * loaded (cupti_activity.c's handle, the program's libcuda), looked up,
 * never linked.
 */
#define _GNU_SOURCE /* pthread_setname_np, syscall */

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

#include "inject/pm_device.h"
#include "inject/pm_options.h"
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

/* The estimator's features (src/estimate/counters.c): SM activity with the elapsed cycles, the
 * tensor pipes, instruction issue, DRAM and L2 traffic, nothing it does not use. Their cost in
 * the program's process (scripts/gpu-pm-cost, results/h100/pm-cost/cost.txt, at 1 ms throughout
 * on the H100): SM activity with the elapsed cycles 1.5 % of one core, DRAM and L2 under 1 % more
 * each, but each per-SM pipe metric (tensor pipe, instruction issue) ~29 % on its own: CUPTI
 * decodes what the hardware streams, at a rate set by the metrics, not by the interval. They are
 * kept for what they tell apart: the PyTorch step's GEMMs from its elementwise kernels, 10 of its
 * top 10 names within 5 % run to run with them against 7 of 10 without
 * (results/h100/attrib-fine-s36, pm-fine-1-5), in the default windows (1 s of every 5 s at 0.2
 * ms: 14 % of one core, results/h100/pm-decode-s37). Most important first: a chip that refuses one keeps the others
 * that fit in one pass. */
const char *const twi_pm_wanted[] = {
    "sm__cycles_active.avg",
    "gpc__cycles_elapsed.max",
    "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed",
    "sm__inst_executed.avg.per_cycle_active",
    "dram__throughput.avg.pct_of_peak_sustained_elapsed",
    "lts__t_sectors.sum",
};
const unsigned twi_pm_n_wanted = sizeof twi_pm_wanted / sizeof twi_pm_wanted[0];

/* ---------------------------------------------------------------- entry points */

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
    bool paused;      /* sampling in windows: disabled until the next window */
    uint64_t on_ns;   /* when its window began, for the schedule (halfway through its enable call; CUPTI's clock) */
    uint64_t from_ns; /* its window's record begins: its enable call's start */
    twi_pm_device d;
    CUcontext ctx; /* the primary context, retained while sampling */
    char uuid[TWI_UUID_LEN];
    /* how long its enable (with the start) and disable calls took, for the verbose summary: the window's
     * power lies within them, ~420 and ~85 ms on the H200 (enabled) */
    unsigned enables, disables, restarts; /* restarts: after an overflow (restart_after_overflow) */
    uint64_t seen_at_close;               /* its activity count (seen[]) when its last window closed */
    double enable_s, enable_max_s, disable_s, disable_max_s;
} pm_dev;

static struct {
    twi_pm_config c;
    bool profiler_tried, profiler_ok;
    char profiler_why[256]; /* why the profiler could not be initialised ("" = it was) */
    twi_pm_options opt;     /* the wanted metrics, interval and buffers of every device */
    char metric_text[1024]; /* twi_pm_config.metrics, split in place into metric[] */
    const char *metric[TWI_PM_MAX_METRICS];
    unsigned decode_ms; /* how often the buffers are decoded (TWI_PM_DECODE_MS, less at fine intervals) */
    pm_dev dev[MAX_DEVICES];
    pthread_t thread;
    bool running;
    pthread_mutex_t lock; /* stop flag and the condition */
    pthread_cond_t cond;
    bool stop;
    pthread_mutex_t work; /* one decoder at a time: the thread, or twi_pm_stop after it */
} pm = {.lock = PTHREAD_MUTEX_INITIALIZER, .work = PTHREAD_MUTEX_INITIALIZER};

/* Each device's activity records so far (twi_pm_saw_activity), for windows only where the GPU works. */
static _Atomic uint64_t seen[MAX_DEVICES];

void twi_pm_saw_activity(int device)
{
    if (device >= 0 && device < MAX_DEVICES) atomic_fetch_add_explicit(&seen[device], 1, memory_order_relaxed);
}

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

static bool sym(void *h, const char *name, void *slot)
{
    void *p = h ? dlsym(h, name) : NULL;
    if (p) memcpy(slot, &p, sizeof p); /* object to function pointer, as POSIX dlsym allows */
    return p != NULL;
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

/* ---------------------------------------------------------------- records */

static void emit(const pm_dev *p, int index, twi_kind kind, const char *text, uint64_t start, uint64_t end)
{
    twi_record r;
    memset(&r, 0, sizeof r);
    r.kind = kind;
    r.name = text;
    r.start_ns = start;
    r.end_ns = end;
    r.device = index;
    r.device_uuid = p ? p->uuid : "";
    r.stream = -1;
    r.correlation_id = -1;
    pm.c.emit(pm.c.ctx, &r);
}

/* A pm_off record (and a line on stderr): device `index` has no samples, and why. */
static void device_off(pm_dev *p, int index, const char *why)
{
    if (p) p->state = DEV_OFF;
    uint64_t t = twi_pm_now() | 1; /* a record needs a time (0: untimed) */
    emit(p, index, TWI_PM_OFF, why, t, t);
    say("PM sampling on CUDA device %d: not recorded: %s", index, why);
}

static void append_name(char *list, size_t cap, const char *name)
{
    size_t used = strlen(list);
    snprintf(list + used, cap - used, "%s%s", used ? "," : "", name);
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

/* The decoding period: TWI_PM_DECODE_MS, or less where the hardware buffer
 * would hold less than twice that at the interval (~64 KB a sample: at 20 us
 * the 512 MB buffer holds ~160 ms; the H100's probe at 10 us, decoded every
 * 20 ms into too large an image, overflowed it), or where a period's samples
 * would fill more than half the counter data image, at least 5 ms. A decode
 * that fills the image costs the samples after it their time: on the H100
 * the next decode gave the next 60-300 ms of samples one stale timestamp
 * (the image's making) as both start and end, or none (at 0.1 ms decoded
 * every 0.2 s, 30 % of the PyTorch step's samples, in gaps of 110 ms after
 * each image of 1,000; the same at 0.15 and 0.2 ms). */
static unsigned decode_period_ms(uint64_t interval_ns)
{
    double holds_ms = (double)HWBUF_MAX / RECORD_BYTES * (double)interval_ns / 1e6;
    double ms = holds_ms / 4, half_image_ms = IMAGE_MAX_SAMPLES / 2.0 * (double)interval_ns / 1e6;
    if (half_image_ms < ms) ms = half_image_ms;
    if (ms >= TWI_PM_DECODE_MS) return TWI_PM_DECODE_MS;
    return ms < 5 ? 5u : (unsigned)ms;
}

/* The metrics asked for: `list` (comma-separated, TW_PM_METRICS) split into
 * pm.metric, else the default list; their count. */
static unsigned wanted_metrics(const char *list, const char *const **out)
{
    *out = twi_pm_wanted;
    if (!list || !*list) return twi_pm_n_wanted;
    snprintf(pm.metric_text, sizeof pm.metric_text, "%s", list);
    unsigned n = 0;
    for (char *save = NULL, *tok = strtok_r(pm.metric_text, ", ", &save); tok && n < TWI_PM_MAX_METRICS;
         tok = strtok_r(NULL, ", ", &save))
        pm.metric[n++] = tok;
    if (!n) return twi_pm_n_wanted;
    *out = pm.metric;
    return n;
}

/* The device's UUID as NVML writes it (a MIG instance's when it is one); *mig. */
static void device_uuid(pm_dev *p, bool *mig)
{
    CUuuid a, b;
    *mig = false;
    p->uuid[0] = '\0';
    if (!cu.uuid_v2 || cu.uuid_v2(&a, p->d.dev) != CUDA_SUCCESS) return;
    *mig = cu.uuid_v1 && cu.uuid_v1(&b, p->d.dev) == CUDA_SUCCESS && memcmp(a.bytes, b.bytes, 16) != 0;
    twi_format_uuid((const unsigned char *)a.bytes, *mig, p->uuid);
}

/* A call that began at t took until now: into its count, sum and most; now. */
static uint64_t timed(uint64_t t, unsigned *n, double *sum_s, double *max_s)
{
    uint64_t now = twi_pm_now();
    double d = (double)(now - t) * 1e-9;
    ++*n;
    *sum_s += d;
    if (d > *max_s) *max_s = d;
    return now;
}

/* Device p's enable call began at t and ended now. Its window's record
 * runs from the enable call's start to the disable call's end: the GPU's
 * power rose about 0.2 s before the middle of enable calls of ~420 ms on the
 * H200 and fell some 30 ms after the middle of disable calls of ~85 ms
 * (results/h200/attrib-s42, results/h100/pm-edges-offline), so the calls'
 * outer ends hold the power, the middles did not. The schedule (its length
 * and period) counts from halfway through the call, as before. */
static void enabled(pm_dev *p, uint64_t t)
{
    uint64_t end = timed(t, &p->enables, &p->enable_s, &p->enable_max_s);
    p->from_ns = t;
    p->on_ns = t + (end - t) / 2;
}

/* Everything up to the start (the context current on this thread); the
 * window begins where sampling is enabled (the metrics' choice before it
 * takes a second or more). */
static bool setup_device(pm_dev *p, char *why, size_t cap)
{
    if (!twi_pm_device_prepare(&p->d, why, cap) || !twi_pm_device_choose(&p->d, &pm.opt, why, cap)) return false;
    uint64_t t = twi_pm_now();
    bool ok = twi_pm_device_enable(&p->d, &pm.opt, why, cap) && twi_pm_device_start(&p->d, why, cap);
    enabled(p, t);
    return ok;
}

/* What a failed or finished device leaves: sampling disabled, freed, the context released. */
static void teardown(pm_dev *p)
{
    twi_pm_device_free(&p->d);
    if (p->ctx && cu.ctx_release) cu.ctx_release(p->d.dev);
    p->ctx = NULL;
}

/* The pm_metrics record: the interval, the metrics in the samples' order, those refused. */
static void announce(pm_dev *p, int index)
{
    char text[2700], list[1536] = ""; /* room for both lists */
    for (size_t i = 0; i < p->d.n_metric; i++)
        append_name(list, sizeof list, p->d.metric[i]);
    snprintf(text, sizeof text, "interval_ns=%" PRIu64 " metrics=%s refused=%s", pm.c.interval_ns, list, p->d.refused);
    uint64_t t = twi_pm_now() | 1;
    emit(p, index, TWI_PM_METRICS, text, t, t);
    if (pm.c.verbose)
        say("PM sampling on CUDA device %d (%s, trigger %s): every %" PRIu64 " ns, %zu metrics (%s)%s%s", index,
            p->d.chip, p->d.trigger, pm.c.interval_ns, p->d.n_metric, list, p->d.refused[0] ? "; refused: " : "",
            p->d.refused);
}

/* At the program's exit, sampling must stop before the CUDA runtime and
 * CUPTI tear themselves down: on the H100, stopping and disabling from the
 * events file's exit handler (registered inside cuInit, so run after theirs)
 * aborted every program with a double free. Exit handlers run in the reverse
 * order of registration, so this one, registered once a device samples (after
 * the runtime, CUPTI and its profiler were set up), runs before theirs. */
static void stop_at_exit(void) { twi_pm_stop(); }

static void register_exit_stop(void)
{
    static atomic_flag done = ATOMIC_FLAG_INIT;
    if (atomic_flag_test_and_set(&done)) return;
    if (atexit(stop_at_exit) != 0) say("atexit failed: PM sampling stops with the events file's exit handler");
}

/* Device `index` now that its primary context is active: sampling set up
 * with the context current on this thread, or the reason it is not. */
static void start_device(int index)
{
    pm_dev *p = &pm.dev[index];
    char why[600] = "";
    bool mig = false;
    p->d.index = index;
    p->d.verbose = pm.c.verbose;
    if (cu.device_get(&p->d.dev, index) != CUDA_SUCCESS) {
        device_off(p, index, "cuDeviceGet failed");
        return;
    }
    device_uuid(p, &mig);
    /* once, here on the thread with a context in the process: at twi_pm_start the library runs
     * inside the program's cuInit, where CUPTI's profiler answered CUPTI_ERROR_UNKNOWN on the H100
     * (the probe, which initialises it after cuInit returned, was accepted) */
    if (!pm.profiler_tried) {
        pm.profiler_tried = true;
        pm.profiler_ok = twi_pm_init_profiler(pm.profiler_why, sizeof pm.profiler_why);
    }
    if (!pm.profiler_ok) {
        device_off(p, index, pm.profiler_why);
        return;
    }
    if (mig) {
        device_off(p, index, "a MIG instance: CUPTI's PM sampling needs the whole GPU");
        return;
    }
    if (cu.ctx_retain(&p->ctx, p->d.dev) != CUDA_SUCCESS || cu.ctx_push(p->ctx) != CUDA_SUCCESS) {
        if (p->ctx) cu.ctx_release(p->d.dev);
        p->ctx = NULL;
        device_off(p, index, "its primary context could not be made current on the sampling thread");
        return;
    }
    bool ok = setup_device(p, why, sizeof why);
    CUcontext popped;
    cu.ctx_pop(&popped);
    if (!ok) {
        teardown(p);
        device_off(p, index, why);
        return;
    }
    p->state = DEV_ON;
    announce(p, index);
    register_exit_stop();
}

/* ---------------------------------------------------------------- decoding */

typedef struct sample_ctx {
    pm_dev *p;
    int index;
} sample_ctx;

/* One sample: a pm_sample record, its values as text ("v1 v2 ...", %.9g each). */
static void on_sample(void *ctx, uint64_t start, uint64_t end, const double *v, size_t n)
{
    const sample_ctx *c = ctx;
    char text[TWI_PM_MAX_METRICS * 24];
    size_t used = 0;
    text[0] = '\0';
    for (size_t i = 0; i < n && used < sizeof text; i++)
        used += (size_t)snprintf(text + used, sizeof text - used, "%s%.9g", i ? " " : "", v[i]);
    emit(c->p, c->index, TWI_PM_SAMPLE, text, start, end);
}

/* Device p's window closed at `t` (its disable call began at t0): the call
 * timed, its pm_window record from its enable call's start to t. */
static void window_closed(pm_dev *p, int index, uint64_t t0)
{
    uint64_t t = timed(t0, &p->disables, &p->disable_s, &p->disable_max_s);
    p->paused = true;
    p->seen_at_close = atomic_load_explicit(&seen[index], memory_order_relaxed);
    if (pm.c.window_ns && t > p->from_ns) emit(p, index, TWI_PM_WINDOW, "on", p->from_ns, t);
}

/* Device p's window ended: stopped (what it holds decoded), disabled, its
 * record written. */
static void window_done(pm_dev *p, int index)
{
    sample_ctx c = {p, index};
    twi_pm_device_stop(&p->d, on_sample, &c); /* the samples end here, inside the window */
    uint64_t t = twi_pm_now();
    twi_pm_device_pause(&p->d, on_sample, &c);
    window_closed(p, index, t);
}

/* Device p (its context current) enabled and started again: its next window
 * begins; false with why. */
static bool resume_device(pm_dev *p, char *why, size_t cap)
{
    uint64_t t = twi_pm_now();
    bool ok = twi_pm_device_resume(&p->d, &pm.opt, why, cap);
    enabled(p, t);
    p->paused = false;
    return ok;
}

/* Device p could not be enabled again: its samples so far stay, the rest of the run has none. */
static void give_up(pm_dev *p, int index, const char *why)
{
    if (pm.c.window_ns) emit(p, index, TWI_PM_WINDOW, "on", p->from_ns, twi_pm_now());
    teardown(p);
    p->state = DEV_OFF;
    say("PM sampling on CUDA device %d: could not be enabled again: %s; no samples after this", index, why);
}

/* Whether device p's next window may begin: its period has passed and,
 * with busy windows, the device has run something since its last one closed
 * (else it waits, and its period counts from the window it then begins). */
static bool window_due(const pm_dev *p, int index, uint64_t now)
{
    if (!p->paused || now - p->on_ns < pm.c.period_ns) return false;
    return !pm.c.busy_windows || atomic_load_explicit(&seen[index], memory_order_relaxed) != p->seen_at_close;
}

/* Sampling in windows: device p disabled at its window's end (what it
 * holds decoded first), enabled again at the next window's start. */
static void switch_window(pm_dev *p, int index)
{
    uint64_t now = twi_pm_now();
    bool off = !p->paused && now - p->on_ns >= pm.c.window_ns, on = window_due(p, index, now);
    if (!off && !on) return;
    if (!p->ctx || cu.ctx_push(p->ctx) != CUDA_SUCCESS) return; /* tried again at the next look */
    char why[600] = "";
    bool ok = true;
    if (off)
        window_done(p, index);
    else
        ok = resume_device(p, why, sizeof why);
    CUcontext popped;
    cu.ctx_pop(&popped);
    if (!ok) give_up(p, index, why);
}

/* After an overflow, sampling afresh: once the hardware buffer had filled,
 * CUPTI's decode answered CUPTI_ERROR_OUT_OF_MEMORY at every call until the
 * end (the H200's calibration at 1 ms with seven metrics: 117 decodes in a
 * row, no sample in the last 28 s of its run, results/h200/activity-calib-s40).
 * Stopped and disabled without decoding; in windows its window ends there
 * (the next comes at its time), else it is enabled again at once. */
static void restart_after_overflow(pm_dev *p, int index)
{
    if (!p->ctx || cu.ctx_push(p->ctx) != CUDA_SUCCESS) return; /* tried again at the next overflow */
    uint64_t t = twi_pm_now();
    twi_pm_device_reset(&p->d);
    window_closed(p, index, t);
    p->restarts++;
    char why[600] = "";
    bool ok = pm.c.window_ns || resume_device(p, why, sizeof why);
    CUcontext popped;
    cu.ctx_pop(&popped);
    if (!ok) give_up(p, index, why);
}

/* What the device's hardware buffer holds; a failure or an overflow said
 * once. After an overflow that stops decoding, sampling starts afresh
 * (restart_after_overflow). */
static void decode_device(pm_dev *p, int index)
{
    uint64_t errors = p->d.decode_errors, overflows = p->d.overflows;
    sample_ctx c = {p, index};
    /* at most MAX_DECODES_AT_ONCE, and in windows only until the window's end is due, so that it ends
     * on time even where decoding is slower than sampling (a bound of one decoding period instead
     * halved the thread's decoding and the H100's hardware buffer overflowed at 1 ms with the per-SM
     * pipe metrics: results/h100/activity-calib-s32b) */
    uint64_t until = pm.c.window_ns ? p->on_ns + pm.c.window_ns : UINT64_MAX;
    int why = 0;
    for (int k = 0; k < MAX_DECODES_AT_ONCE && (k == 0 || twi_pm_now() < until); k++)
        if ((why = twi_pm_device_decode(&p->d, on_sample, &c)) !=
            CUPTI_PM_SAMPLING_DECODE_STOP_REASON_COUNTER_DATA_FULL)
            break;
    if (!errors && p->d.decode_errors)
        say("PM sampling on CUDA device %d: cuptiPmSamplingDecodeData: %s (CUPTI error %d)", index,
            twi_pm_result_text((CUptiResult)p->d.last_error), p->d.last_error);
    if (!overflows && p->d.overflows)
        say("PM sampling on CUDA device %d: the hardware buffer overflowed: samples were lost%s", index,
            pm.c.window_ns ? "; its window ends there" : "; sampling starts afresh");
    if (why < 0 && p->d.last_error == CUPTI_ERROR_OUT_OF_MEMORY) restart_after_overflow(p, index);
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
    for (int i = 0; i < MAX_DEVICES; i++) {
        pm_dev *p = &pm.dev[i];
        if (p->state == DEV_ON && pm.c.window_ns) switch_window(p, i); /* a window ends on time */
        if (p->state == DEV_ON && !p->paused) decode_device(p, i);
    }
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
        uint64_t ns = (uint64_t)until.tv_nsec + (uint64_t)pm.decode_ms * 1000000u;
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

bool twi_pm_start(const twi_pm_config *c, void *cupti)
{
    if (pm.running || !c || !c->emit || !c->interval_ns) return false;
    pm.c = *c;
    const char *const *wanted;
    unsigned n_wanted = wanted_metrics(c->metrics, &wanted);
    pm.c.metrics = NULL; /* the caller's string is not kept */
    pm.decode_ms = decode_period_ms(c->interval_ns);
    pm.opt = (twi_pm_options){.interval_ns = c->interval_ns,
                              .hwbuf_bytes = hwbuf_bytes(c->interval_ns),
                              .image_samples = image_samples(c->interval_ns),
                              .wanted = wanted,
                              .n_wanted = n_wanted};
    char why[256];
    if (!twi_pm_load(cupti, why, sizeof why)) {
        /* one record for every device (-1): the run file says why there are none */
        device_off(NULL, -1, why);
        return false;
    }
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
        snprintf(why, sizeof why, "no sampling thread (pthread_create: %s)", strerror(rc));
        device_off(NULL, -1, why);
        return false;
    }
    pthread_setname_np(pm.thread, "tw-inject-pm");
    pm.running = true;
    return true;
}

/* Device p's end: what the buffer holds, stop, the rest, disable. Runs from
 * twi_pm_stop, which at exit runs before the CUDA runtime's and CUPTI's own
 * exit handlers (stop_at_exit below). */
static void stop_device(pm_dev *p, int index)
{
    bool pushed = p->ctx && cu.ctx_push(p->ctx) == CUDA_SUCCESS;
    if (!p->paused) window_done(p, index); /* its last window */
    if (pushed) {
        CUcontext popped;
        cu.ctx_pop(&popped);
    }
    char text[200];
    snprintf(text, sizeof text, "samples=%" PRIu64 " overflows=%" PRIu64 " busy_s=%.6f", p->d.samples, p->d.overflows,
             p->d.decode_s + p->d.eval_s);
    uint64_t t = twi_pm_now() | 1;
    emit(p, index, TWI_PM_END, text, t, t);
    if (pm.c.verbose || p->d.overflows || p->d.eval_errors)
        say("PM sampling on CUDA device %d: %" PRIu64 " samples, %" PRIu64 " overflows, %" PRIu64
            " samples not evaluated (%" PRIu64 " with no span, %" PRIu64 " with a value not finite%s%s); %.3f s "
            "decoding, %.3f s evaluating; %u enable calls of %.1f ms mean (most %.1f), %u disable calls of %.1f ms "
            "mean (most %.1f)%s",
            index, p->d.samples, p->d.overflows, p->d.eval_errors, p->d.no_span, p->d.not_finite,
            p->d.unusable[0] ? "; the first: " : "", p->d.unusable, p->d.decode_s, p->d.eval_s, p->enables,
            p->enables ? 1e3 * p->enable_s / p->enables : 0.0, 1e3 * p->enable_max_s, p->disables,
            p->disables ? 1e3 * p->disable_s / p->disables : 0.0, 1e3 * p->disable_max_s,
            !p->restarts     ? ""
            : pm.c.window_ns ? "; each overflow ended its window"
                             : "; sampling started afresh after each overflow");
    teardown(p);
    p->state = DEV_OFF;
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
