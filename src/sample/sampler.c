/* The sampler: per device a thread for the fast readings and one for the
 * slow ones, each polling its own sensor on absolute deadlines and pushing
 * rows into its own lock-free ring (never blocking: a full ring drops the
 * row and counts it); a writer thread merges the rings in time order, up to
 * the watermark below which no producer can still push, into one CSV
 * and/or a run file (which keeps only each reading's updates: runfile.h).
 *
 * What each device's threads read, and how often, is its sampling plan
 * (plan.h): from its sensor profile, else the default for its generation.
 *
 * Memory is the rings (a few seconds of rows each) plus one output row,
 * whatever the length of the run. */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/error.h"
#include "correct/profile.h"
#include "sample/plan.h"
#include "runfile/runfile.h"
#include "sample/ring.h"
#include "sample/sampler_sink.h"
#include "truewatt.h"

/* A backend without devices (sim, replay) has no plan: these periods. */
#define DEFAULT_FAST_PERIOD_S 0.001
#define DEFAULT_SLOW_PERIOD_S 0.1
#define RING_SECONDS 8.0          /* each ring holds this much of its producer's rows */
#define RING_MIN_ROWS 256         /* ... and at least this many */
#define RING_MAX_ROWS (1u << 20)  /* ... and at most this many */
#define WRITER_PERIOD_NS 50000000 /* the writer wakes every 50 ms */
#define MAX_SLEEP_NS 50000000     /* a producer checks for stop at least every 50 ms */
#define MAX_DEVICES 64
/* ... and without a slow period given, the slow readings are read less often
 * when a read costs much CPU (the H100's energy counter: ~3.9 ms of busy CPU
 * a call), so that they take at most this share of one core ... */
#define SLOW_CPU_BUDGET 0.005
#define SLOW_MAX_PERIOD_S 1.0   /* ... but still read at least once a second */
#define BUFFER_ROWS_PER_S 100.0 /* a fast ring's room for sample-buffer rows (H100: 50/s) */
#define NO_COL ((size_t)-1)
#define LIVE_SLACK_S 1e-9 /* rounding allowed in a live source's row time */

enum { PROD_BUSY = 0, PROD_ASLEEP = 1 };

/* ---------------------------------------------------------------- types */

typedef struct device {
    char *id;             /* as given to the backend; NULL = the backend's only one */
    int index;            /* for the prefix and messages */
    char prefix[32];      /* "gpuN_" when several devices, else "" */
    char note_prefix[32]; /* "GPU N: " when several devices, else "" */
    tw_sample_plan plan;
    tw_sampler_device pub; /* what tw_sampler_device_get gives */
} device;

typedef struct producer {
    struct tw_sampler *s;
    size_t dev; /* into s->dev */
    unsigned group;
    const char *group_name;
    tw_sensor *sensor;
    double period_s;
    double cpu_budget;   /* > 0: stretch the period so reads use at most this share of a core ... */
    double period_cap_s; /* ... up to this */
    double call_cpu_s;   /* moving average of a read's CPU time (with a budget) */
    double max_period_s; /* the longest period the budget asked for */
    uint64_t calls;
    size_t n;        /* the sensor's readings */
    size_t *out_col; /* reading -> output column (NO_COL: dropped, a duplicate) */
    int index;       /* into s->prod: the run file's producer number */
    int64_t *run_id; /* reading -> the run file's reading id (0: not recorded) */
    size_t nused;    /* readings with a column */
    /* the ring's rows: t_s, then value[n], t_value[n], valid[n] */
    tw_ring ring;
    size_t off_val, off_tval, off_valid, row_size;
    _Atomic double last_t; /* time of the last row pushed (or dropped) */
    atomic_bool running;   /* cleared after the last push */
    /* Live sources stamp rows with the sampler's clock: a row read by a call
     * that started at w has t >= w. Then a producer asleep between calls
     * holds nothing back, and one in a call holds back only to w (the
     * watermark does not wait a whole slow period). Checked on every row; a
     * source that breaks it once (the sim, a replay) is treated as not live. */
    atomic_int state;      /* PROD_BUSY or PROD_ASLEEP */
    _Atomic double call_t; /* timeline time at the start of the current call */
    atomic_bool live;
    bool live_broken;
    _Atomic uint64_t dropped;
    _Atomic uint64_t failed_polls; /* rows in which nothing could be read (tw_sampler_device_health) */
    bool buffer_only;              /* it reads the sample buffer alone: an empty row is nothing new */
    /* the producer thread's own, read after the join */
    double prev_t;
    bool have_prev;
    uint64_t *polls, *updates;
    double *last_value;
    uint8_t *have_last;
    double cpu_s;
    bool eof;
    tw_status err;
    char errmsg[512];
    double err_t_s;
    size_t notes_seen; /* length of the sensor's notes already taken */
    pthread_t th;
    bool started;
} producer;

struct tw_sampler {
    char *backend;
    size_t ndev;
    device *dev;
    size_t nprod;
    producer **prod;
    char *trace_path; /* NULL: no CSV */
    tw_trace_writer *w;
    tw_run *run; /* the caller's; NULL: no run file */
    size_t ncols;
    char **colname;
    tw_sampler_reading_stats *stats;
    /* the writer thread's output row */
    double *val, *tval;
    uint8_t *valid;
    atomic_bool stop_producers;
    atomic_bool stop_writer;
    pthread_t writer;
    bool writer_started;
    double writer_cpu_s;
    tw_status write_err;
    char write_msg[512];
    uint64_t rows_written;
    uint64_t t0_mono_ns;
    uint64_t start_ns;
    double cpu_s, wall_s;
    double last_written_t; /* the writer's; rows never go back in the trace */
    bool have_written;
    uint64_t clamped; /* rows written at a later time than their own (should stay 0) */
    char *notes;
    size_t notes_len, notes_cap;
    bool stopped;
    tw_sampler_sink_fn sink; /* NULL: none */
    void *sink_arg;
};

/* ---------------------------------------------------------------- helpers */

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static double thread_cpu_s(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0) return 0.0;
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Now on the trace timeline. */
static double timeline_now(const tw_sampler *s) { return 1e-9 * (double)(int64_t)(mono_ns() - s->t0_mono_ns); }

static void ts_add_ns(struct timespec *ts, uint64_t ns)
{
    uint64_t total = (uint64_t)ts->tv_nsec + ns;
    ts->tv_sec += (time_t)(total / 1000000000u);
    ts->tv_nsec = (long)(total % 1000000000u);
}

static int ts_cmp(const struct timespec *a, const struct timespec *b)
{
    if (a->tv_sec != b->tv_sec) return a->tv_sec < b->tv_sec ? -1 : 1;
    return a->tv_nsec < b->tv_nsec ? -1 : a->tv_nsec > b->tv_nsec;
}

/* Appends one line to the notes (main thread only: at start and at stop). */
__attribute__((format(printf, 2, 3))) static void add_note(tw_sampler *s, const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    size_t len = strlen(line);
    if (s->notes_len + len + 2 > s->notes_cap) {
        size_t cap = s->notes_cap ? s->notes_cap : 256;
        while (cap < s->notes_len + len + 2)
            cap *= 2;
        char *p = realloc(s->notes, cap);
        if (!p) return; /* a note lost to memory pressure; the run goes on */
        s->notes = p;
        s->notes_cap = cap;
    }
    memcpy(s->notes + s->notes_len, line, len);
    s->notes_len += len;
    s->notes[s->notes_len++] = '\n';
    s->notes[s->notes_len] = '\0';
}

/* Adds each line of text as a note, with a prefix. */
static void add_note_lines(tw_sampler *s, const char *prefix, const char *text)
{
    const char *p = text;
    while (p && *p) {
        size_t len = strcspn(p, "\n");
        if (len) add_note(s, "%s%.*s", prefix, (int)len, p);
        p += len;
        if (*p) p++;
    }
}

static size_t pow2_at_least(double rows)
{
    size_t cap = RING_MIN_ROWS;
    while (cap < RING_MAX_ROWS && (double)cap < rows)
        cap *= 2;
    return cap;
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

/* The column name of a reading: rows hold SI values, so a name in other units
 * ("power_usage_mw", scale 1e-3) is written with the SI suffix ("power_usage_w"),
 * and a power or energy without a unit suffix gets one. */
static char *si_name(const char *prefix, const tw_reading_info *info)
{
    static const char *const power_sfx[] = {"_mw", "_uw", "_kw", "_w"};
    static const char *const energy_sfx[] = {"_mj", "_uj", "_j"};
    static const char *const time_sfx[] = {"_ms", "_us", "_ns", "_s"};
    const char *const *sfx = NULL;
    size_t nsfx = 0;
    const char *si = "";
    switch (info->quantity) {
    case TW_Q_POWER:
        sfx = power_sfx, nsfx = 4, si = "_w";
        break;
    case TW_Q_ENERGY:
        sfx = energy_sfx, nsfx = 3, si = "_j";
        break;
    case TW_Q_TIME:
        sfx = time_sfx, nsfx = 4, si = "_s";
        break;
    default:
        break;
    }
    size_t base = strlen(info->name);
    for (size_t i = 0; i < nsfx; i++)
        if (ends_with(info->name, sfx[i])) {
            base -= strlen(sfx[i]);
            break;
        }
    size_t len = strlen(prefix) + base + strlen(si) + 1;
    char *out = malloc(len);
    if (out) snprintf(out, len, "%s%.*s%s", prefix, (int)base, info->name, si);
    return out;
}

/* ---------------------------------------------------------------- producer thread */

static void producer_fail(producer *p, tw_status st)
{
    const char *msg = tw_last_error();
    p->err = st;
    snprintf(p->errmsg, sizeof p->errmsg, "%s", msg && *msg ? msg : tw_strerror(st));
}

static void producer_push(producer *p, const tw_row *row)
{
    double t = row->t_s;
    if (!isfinite(t)) return;
    if (p->have_prev && t < p->prev_t) t = p->prev_t; /* the trace's time never goes back */
    p->prev_t = t;
    p->have_prev = true;
    size_t n = row->n < p->n ? row->n : p->n;
    unsigned char *slot = tw_ring_reserve(&p->ring);
    if (slot) {
        double *val = (double *)(void *)(slot + p->off_val);
        double *tval = (double *)(void *)(slot + p->off_tval);
        uint8_t *valid = slot + p->off_valid;
        memcpy(slot, &t, sizeof t);
        for (size_t i = 0; i < p->n; i++) {
            bool ok = i < n && (!row->valid || row->valid[i]) && !isnan(row->value[i]);
            val[i] = ok ? row->value[i] : NAN;
            tval[i] = ok && row->t_value_s ? row->t_value_s[i] : t;
            valid[i] = ok;
        }
        tw_ring_commit(&p->ring);
    } else {
        atomic_fetch_add_explicit(&p->dropped, 1, memory_order_relaxed);
    }
    bool any = false;
    for (size_t i = 0; i < n; i++) {
        if ((row->valid && !row->valid[i]) || isnan(row->value[i])) continue;
        any = true;
        p->polls[i]++;
        if (p->have_last[i] && row->value[i] != p->last_value[i]) p->updates[i]++;
        p->last_value[i] = row->value[i];
        p->have_last[i] = 1;
    }
    if (!any && !p->buffer_only) atomic_fetch_add_explicit(&p->failed_polls, 1, memory_order_relaxed);
    atomic_store_explicit(&p->last_t, t, memory_order_release);
}

/* Sleeps until the deadline, waking at least every MAX_SLEEP_NS to check for stop. */
static void sleep_until(producer *p, const struct timespec *deadline)
{
    for (;;) {
        if (atomic_load_explicit(&p->s->stop_producers, memory_order_relaxed)) return;
        struct timespec now, until;
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (ts_cmp(&now, deadline) >= 0) return;
        until = now;
        ts_add_ns(&until, MAX_SLEEP_NS);
        if (ts_cmp(deadline, &until) < 0) until = *deadline;
        int rc = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, NULL);
        if (rc != 0 && rc != EINTR) return;
    }
}

/* Reads one row and pushes it; true when the producer is done (an error or
 * the end of a finite source). w: the timeline time the call began. */
static bool read_row(producer *p, double w)
{
    tw_row row;
    bool eof = false;
    tw_status st = tw_sensor_next(p->sensor, &row, &eof);
    if (st != TW_OK) {
        producer_fail(p, st);
        p->err_t_s = 1e-9 * (double)(int64_t)(mono_ns() - p->s->t0_mono_ns);
        return true;
    }
    if (eof) {
        p->eof = true;
        return true;
    }
    if (!p->live_broken) {
        bool ok = row.t_s >= w - LIVE_SLACK_S && row.t_s <= timeline_now(p->s) + LIVE_SLACK_S;
        if (!ok) p->live_broken = true;
        atomic_store(&p->live, ok);
    }
    producer_push(p, &row);
    return false;
}

static void *producer_main(void *arg)
{
    producer *p = arg;
    uint64_t period_ns = (uint64_t)llround(p->period_s * 1e9);
    if (period_ns == 0) period_ns = 1;
    struct timespec deadline;
    clock_gettime(CLOCK_MONOTONIC, &deadline);
    /* slow readings are read once more at the stop, so that they (the energy
     * counter, read seldom) reach to the end of the run */
    bool last = false;
    for (;;) {
        if (atomic_load_explicit(&p->s->stop_producers, memory_order_relaxed)) {
            if (p->group != TW_READ_SLOW || last) break;
            last = true;
        }
        /* busy first, then the call's start time: a writer that saw us asleep
         * read its clock before we read ours */
        atomic_store(&p->state, PROD_BUSY);
        double w = timeline_now(p->s);
        atomic_store(&p->call_t, w);
        double c0 = p->cpu_budget > 0 ? thread_cpu_s() : 0;
        bool done = false;
        /* one read, then the rows it left pending (the rest of a drained buffer) */
        do {
            if (read_row(p, w)) done = true;
        } while (!done && tw_sensor_pending(p->sensor) > 0);
        if (done) break;
        p->calls++;
        if (p->cpu_budget > 0 && p->calls > 1) { /* the first call warms up */
            double c = thread_cpu_s() - c0;
            p->call_cpu_s = p->calls == 2 ? c : 0.8 * p->call_cpu_s + 0.2 * c;
            double want = fmax(p->period_s, fmin(p->period_cap_s, p->call_cpu_s / p->cpu_budget));
            if (want > p->max_period_s) p->max_period_s = want;
            period_ns = (uint64_t)llround(want * 1e9);
        }
        atomic_store(&p->state, PROD_ASLEEP);
        if (last) break;
        /* the next deadline on the period's grid; missed ones are skipped, not caught up */
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        ts_add_ns(&deadline, period_ns);
        if (ts_cmp(&deadline, &now) <= 0) {
            uint64_t behind = (uint64_t)(now.tv_sec - deadline.tv_sec) * 1000000000u +
                              (uint64_t)((long)now.tv_nsec - deadline.tv_nsec);
            ts_add_ns(&deadline, (behind / period_ns + 1) * period_ns);
        }
        sleep_until(p, &deadline);
    }
    p->cpu_s = thread_cpu_s();
    atomic_store_explicit(&p->running, false, memory_order_release);
    return NULL;
}

/* ---------------------------------------------------------------- writer thread */

/* Writes the oldest rows of all rings whose time is at most the watermark. */
static void merge(tw_sampler *s)
{
    double now = timeline_now(s); /* before any producer's state is read */
    double wm = INFINITY;
    for (size_t k = 0; k < s->nprod; k++) {
        producer *p = s->prod[k];
        if (!atomic_load_explicit(&p->running, memory_order_acquire)) continue;
        double t = atomic_load_explicit(&p->last_t, memory_order_acquire);
        if (atomic_load(&p->live)) {
            double bound = atomic_load(&p->state) == PROD_ASLEEP ? now : atomic_load(&p->call_t);
            if (bound > t) t = bound;
        }
        if (t < wm) wm = t;
    }
    for (;;) {
        producer *best = NULL;
        double best_t = wm;
        const unsigned char *best_row = NULL;
        for (size_t k = 0; k < s->nprod; k++) {
            producer *p = s->prod[k];
            const unsigned char *row = tw_ring_peek(&p->ring);
            if (!row) continue;
            double t;
            memcpy(&t, row, sizeof t);
            if (t <= best_t && (!best || t < best_t)) {
                best = p;
                best_t = t;
                best_row = row;
            }
        }
        if (!best) return;
        if (s->write_err == TW_OK) {
            for (size_t c = 0; c < s->ncols; c++) {
                s->val[c] = NAN;
                s->tval[c] = best_t;
                s->valid[c] = 0;
            }
            const double *val = (const double *)(const void *)(best_row + best->off_val);
            const double *tval = (const double *)(const void *)(best_row + best->off_tval);
            const uint8_t *valid = best_row + best->off_valid;
            for (size_t i = 0; i < best->n; i++) {
                size_t c = best->out_col[i];
                if (c == NO_COL) continue;
                s->val[c] = val[i];
                s->tval[c] = tval[i];
                s->valid[c] = valid[i];
            }
            double t = best_t;
            if (s->have_written && t < s->last_written_t) { /* a safety net: each reading keeps its own time */
                t = s->last_written_t;
                s->clamped++;
            }
            tw_row out = {t, s->ncols, s->val, s->tval, s->valid};
            tw_status st = s->w ? tw_trace_writer_write(s->w, &out) : TW_OK;
            if (st == TW_OK && s->run)
                st = tw_run_poll(s->run, best->index, t, best->n, best->run_id, val, tval, valid);
            if (st == TW_OK && s->sink) s->sink(s->sink_arg, s, &out);
            if (st != TW_OK) {
                s->write_err = st;
                snprintf(s->write_msg, sizeof s->write_msg, "%s", tw_last_error());
            } else {
                s->rows_written++;
                s->last_written_t = t;
                s->have_written = true;
            }
        }
        tw_ring_pop(&best->ring); /* after a write error rows are still drained, never written */
    }
}

static void *writer_main(void *arg)
{
    tw_sampler *s = arg;
    for (;;) {
        bool last = atomic_load_explicit(&s->stop_writer, memory_order_acquire);
        merge(s);
        if (last) break;
        struct timespec d = {0, WRITER_PERIOD_NS};
        nanosleep(&d, NULL);
    }
    s->writer_cpu_s = thread_cpu_s();
    return NULL;
}

/* ---------------------------------------------------------------- setup and teardown */

static void producer_free(producer *p)
{
    if (!p) return;
    tw_sensor_close(p->sensor);
    tw_ring_destroy(&p->ring);
    free(p->out_col);
    free(p->run_id);
    free(p->polls);
    free(p->updates);
    free(p->last_value);
    free(p->have_last);
    free(p);
}

static void sampler_release(tw_sampler *s)
{
    if (!s) return;
    for (size_t k = 0; k < s->nprod; k++)
        producer_free(s->prod[k]);
    free(s->prod);
    for (size_t d = 0; d < s->ndev; d++)
        free(s->dev[d].id);
    free(s->dev);
    for (size_t c = 0; c < s->ncols; c++)
        free(s->colname[c]);
    free(s->colname);
    free(s->stats);
    free(s->val);
    free(s->tval);
    free(s->valid);
    free(s->trace_path);
    free(s->backend);
    free(s->notes);
    free(s);
}

static bool all_digits(const char *s)
{
    if (!s || !*s) return false;
    for (; *s; s++)
        if (*s < '0' || *s > '9') return false;
    return true;
}

/* The plan of a backend without devices (sim, replay): every reading, at the
 * periods given, else 1 ms and 0.1 s (stretched while the slow reads are costly). */
static void plan_without_devices(tw_sample_plan *pl)
{
    memset(pl, 0, sizeof *pl);
    pl->fast_period_s = DEFAULT_FAST_PERIOD_S;
    pl->slow_period_s = DEFAULT_SLOW_PERIOD_S;
    pl->slow_max_period_s = SLOW_MAX_PERIOD_S;
    pl->slow_cpu_budget = SLOW_CPU_BUDGET;
    snprintf(pl->summary, sizeof pl->summary, "every reading (the backend has no devices to plan for)");
}

/* The device's sampling plan: from cfg->profile_path, else its profile in
 * cfg->profile_dir, else the default for its generation (with a note). A
 * profile that cannot be read fails the start (the user named it) or, when
 * looked up, is a note. `listed`: the backend lists devices; `seen`: this one. */
static tw_status plan_device(tw_sampler *s, const tw_sampler_config *cfg, device *dv, const tw_device_info *seen,
                             bool listed)
{
    tw_sample_plan *pl = &dv->plan;
    tw_profile prof;
    const char *name = seen ? seen->name : "";
    const char *driver = seen && seen->driver[0] ? seen->driver : "unknown";
    char path[4096] = "";
    tw_status st = TW_ENOTFOUND;
    char why[1200] = "";
    if (cfg->profile_path) {
        st = tw_profile_load(cfg->profile_path, &prof);
        if (st != TW_OK) return st;
        snprintf(path, sizeof path, "%s", cfg->profile_path);
    } else if (cfg->profile_dir && listed && seen) {
        st = tw_profile_lookup(cfg->profile_dir, name, driver, &prof, path, sizeof path, NULL);
        if (st != TW_OK && st != TW_ENOTFOUND)
            snprintf(why, sizeof why, "its sensor profile cannot be read (%s)", tw_last_error());
        else if (st == TW_ENOTFOUND)
            snprintf(why, sizeof why, "no sensor profile for %s (driver %s) in %s", name, driver, cfg->profile_dir);
    } else if (listed && !seen) {
        snprintf(why, sizeof why, "not among the devices the backend lists: no profile");
    }
    if (st == TW_OK) {
        tw_sample_plan_from_profile(&prof, path, pl);
    } else if (listed) {
        tw_sample_plan_default(tw_plan_arch(name, seen ? seen->arch : 0), pl);
        /* said when the caller looked for a profile (`run` always does) */
        if (cfg->profile_dir)
            add_note(s, "GPU %d: %s; sampling plan: %s (`truewatt sensor identify` makes a profile)", dv->index, why,
                     pl->summary);
    } else {
        plan_without_devices(pl);
    }
    tw_clear_error();
    tw_sample_plan_override(pl, cfg->fast_period_s, cfg->slow_period_s);
    return TW_OK;
}

/* The devices to sample: those asked for, else all the backend sees, else
 * (a backend without devices) one. */
static tw_status pick_devices(tw_sampler *s, const tw_sampler_config *cfg)
{
    tw_device_info info[MAX_DEVICES];
    size_t nseen = 0;
    tw_status st = tw_backend_devices(cfg->backend, cfg->base, info, MAX_DEVICES, &nseen);
    bool have_list = st == TW_OK;
    if (st != TW_OK && st != TW_EUNSUPPORTED && cfg->n_devices == 0) return st;
    if (nseen > MAX_DEVICES) nseen = MAX_DEVICES;
    size_t n = cfg->n_devices ? cfg->n_devices : (have_list ? nseen : 1);
    if (n == 0) return tw_fail(TW_ENOTFOUND, "backend '%s' sees no devices", cfg->backend);
    if (n > MAX_DEVICES) return tw_fail(TW_EINVAL, "at most %d devices can be sampled at once", MAX_DEVICES);
    s->dev = calloc(n, sizeof *s->dev);
    if (!s->dev) return tw_fail(TW_ENOMEM, "out of memory");
    s->ndev = n;
    for (size_t d = 0; d < n; d++) {
        device *dv = &s->dev[d];
        dv->index = (int)d;
        const char *id = NULL;
        const tw_device_info *seen = NULL;
        char buf[24];
        if (cfg->n_devices) {
            id = cfg->devices[d];
            if (!id || !*id) return tw_fail(TW_EINVAL, "device %zu is empty", d + 1);
            if (all_digits(id)) dv->index = atoi(id);
            for (size_t k = 0; have_list && k < nseen; k++)
                if (all_digits(id) ? info[k].index == (unsigned)dv->index : strcmp(info[k].uuid, id) == 0) {
                    dv->index = (int)info[k].index;
                    seen = &info[k];
                }
        } else if (have_list) {
            seen = &info[d];
            dv->index = (int)info[d].index;
            snprintf(buf, sizeof buf, "%u", info[d].index);
            id = buf;
        }
        if (id && !(dv->id = strdup(id))) return tw_fail(TW_ENOMEM, "out of memory");
        tw_status pst = plan_device(s, cfg, dv, have_list ? seen : NULL, have_list);
        if (pst != TW_OK) return pst;
    }
    for (size_t d = 0; d < n; d++) {
        if (n > 1) {
            snprintf(s->dev[d].prefix, sizeof s->dev[d].prefix, "gpu%d_", s->dev[d].index);
            snprintf(s->dev[d].note_prefix, sizeof s->dev[d].note_prefix, "GPU %d: ", s->dev[d].index);
        }
        for (size_t e = 0; e < d; e++)
            if (s->dev[e].index == s->dev[d].index)
                return tw_fail(TW_EINVAL, "device %d is listed twice", s->dev[d].index);
    }
    return TW_OK;
}

static tw_status add_column(tw_sampler *s, char *name, size_t *col)
{
    for (size_t c = 0; c < s->ncols; c++)
        if (strcmp(s->colname[c], name) == 0) {
            free(name);
            *col = NO_COL; /* read by an earlier producer of this device already */
            return TW_OK;
        }
    char **p = realloc(s->colname, (s->ncols + 1) * sizeof *p);
    if (!p) {
        free(name);
        return tw_fail(TW_ENOMEM, "out of memory");
    }
    s->colname = p;
    s->colname[s->ncols] = name;
    *col = s->ncols++;
    return TW_OK;
}

static tw_status producer_setup(tw_sampler *s, producer *p)
{
    p->n = tw_sensor_nreadings(p->sensor);
    size_t k = p->n ? p->n : 1;
    p->out_col = calloc(k, sizeof *p->out_col);
    p->run_id = calloc(k, sizeof *p->run_id);
    p->polls = calloc(k, sizeof *p->polls);
    p->updates = calloc(k, sizeof *p->updates);
    p->last_value = calloc(k, sizeof *p->last_value);
    p->have_last = calloc(k, sizeof *p->have_last);
    if (!p->out_col || !p->run_id || !p->polls || !p->updates || !p->last_value || !p->have_last)
        return tw_fail(TW_ENOMEM, "out of memory");
    for (size_t i = 0; i < p->n; i++) {
        char *name = si_name(s->dev[p->dev].prefix, tw_sensor_reading(p->sensor, i));
        if (!name) return tw_fail(TW_ENOMEM, "out of memory");
        tw_status st = add_column(s, name, &p->out_col[i]);
        if (st != TW_OK) return st;
        if (p->out_col[i] != NO_COL) p->nused++;
    }
    p->off_val = sizeof(double);
    p->off_tval = p->off_val + p->n * sizeof(double);
    p->off_valid = p->off_tval + p->n * sizeof(double);
    p->row_size = (p->off_valid + p->n + sizeof(double) - 1) / sizeof(double) * sizeof(double);
    atomic_init(&p->last_t, -INFINITY);
    atomic_init(&p->state, PROD_BUSY);
    atomic_init(&p->call_t, -INFINITY);
    atomic_init(&p->live, false);
    atomic_init(&p->running, false);
    atomic_init(&p->dropped, 0);
    atomic_init(&p->failed_polls, 0);
    p->buffer_only = p->n == 1 && strcmp(tw_sensor_reading(p->sensor, 0)->name, "power_buffer_w") == 0;
    size_t buffer_col;
    double rows_per_s = 1.0 / p->period_s;
    if (tw_sensor_find(p->sensor, "power_buffer_w", &buffer_col) == TW_OK) rows_per_s += BUFFER_ROWS_PER_S;
    tw_clear_error();
    return tw_ring_init(&p->ring, pow2_at_least(RING_SECONDS * rows_per_s), p->row_size);
}

/* Opens the sensor of one group of one device; a producer without readings of
 * its own (e.g. a backend that ignores groups) is not kept. */
static tw_status open_producer(tw_sampler *s, const tw_sampler_config *cfg, size_t d, unsigned group)
{
    tw_sensor_config sc = {0};
    if (cfg->base) sc = *cfg->base;
    sc.device = s->dev[d].id ? s->dev[d].id : sc.device;
    sc.groups = group;
    sc.t0_mono_ns = s->t0_mono_ns;
    const tw_sample_plan *pl = &s->dev[d].plan;
    char skip[sizeof pl->skip + 1024]; /* the plan's and the caller's (cfg->base->skip), both kept */
    if (pl->skip[0] && sc.skip && *sc.skip) {
        snprintf(skip, sizeof skip, "%s,%.1000s", pl->skip, sc.skip);
        sc.skip = skip;
    } else if (pl->skip[0])
        sc.skip = pl->skip;
    if (pl->buffer_poll_s > 0) sc.buffer_poll_s = pl->buffer_poll_s;
    producer *p = calloc(1, sizeof *p);
    if (!p) return tw_fail(TW_ENOMEM, "out of memory");
    p->s = s;
    p->dev = d;
    p->group = group;
    p->group_name = group == TW_READ_FAST ? "fast" : "slow";
    p->period_s = group == TW_READ_FAST ? pl->fast_period_s : pl->slow_period_s;
    p->cpu_budget = group == TW_READ_SLOW ? pl->slow_cpu_budget : 0;
    p->period_cap_s = pl->slow_max_period_s;
    tw_status st = tw_sensor_open(cfg->backend, &sc, &p->sensor);
    if (st != TW_OK) {
        free(p);
        return st;
    }
    const char *notes = tw_sensor_notes(p->sensor);
    if (notes && *notes) {
        add_note_lines(s, s->dev[d].note_prefix, notes);
        p->notes_seen = strlen(notes);
    }
    if ((st = producer_setup(s, p)) != TW_OK || p->nused == 0) {
        producer_free(p);
        return st;
    }
    producer **pp = realloc(s->prod, (s->nprod + 1) * sizeof *pp);
    if (!pp) {
        producer_free(p);
        return tw_fail(TW_ENOMEM, "out of memory");
    }
    s->prod = pp;
    p->index = (int)s->nprod;
    s->prod[s->nprod++] = p;
    return TW_OK;
}

/* Each column as a reading of the run file, under the producer that reads it. */
static tw_status add_run_readings(tw_sampler *s)
{
    for (size_t k = 0; s->run && k < s->nprod; k++) {
        producer *p = s->prod[k];
        for (size_t i = 0; i < p->n; i++) {
            size_t c = p->out_col[i];
            if (c == NO_COL) continue;
            tw_status st = tw_run_add_reading(s->run, s->dev[p->dev].index, s->colname[c],
                                              tw_sensor_reading(p->sensor, i)->quantity, p->index, &p->run_id[i]);
            if (st != TW_OK) return st;
        }
    }
    return TW_OK;
}

static tw_status open_trace(tw_sampler *s, const char *provenance)
{
    size_t k = s->ncols ? s->ncols : 1;
    s->val = calloc(k, sizeof *s->val);
    s->tval = calloc(k, sizeof *s->tval);
    s->valid = calloc(k, sizeof *s->valid);
    s->stats = calloc(k, sizeof *s->stats);
    if (!s->val || !s->tval || !s->valid || !s->stats) return tw_fail(TW_ENOMEM, "out of memory");
    for (size_t c = 0; c < s->ncols; c++)
        s->stats[c].name = s->colname[c];
    tw_status st = add_run_readings(s);
    if (st != TW_OK || !s->trace_path) return st;
    st = tw_trace_writer_open(s->trace_path, s->ncols, (const char *const *)s->colname, true, &s->w);
    if (st != TW_OK) return st;
    if (provenance && *provenance && (st = tw_trace_writer_comment(s->w, provenance)) != TW_OK) return st;
    char line[1024];
    snprintf(line, sizeof line,
             "truewatt %s sampler: backend %s, %zu device(s); t_s is seconds since t0_mono_ns on CLOCK_MONOTONIC",
             tw_version(), s->backend, s->ndev);
    if ((st = tw_trace_writer_comment(s->w, line)) != TW_OK) return st;
    for (size_t d = 0; d < s->ndev; d++) {
        snprintf(line, sizeof line, "%ssampling plan: %s", s->dev[d].note_prefix, s->dev[d].plan.summary);
        if ((st = tw_trace_writer_comment(s->w, line)) != TW_OK) return st;
    }
    snprintf(line, sizeof line, "t0_mono_ns=%llu", (unsigned long long)s->t0_mono_ns);
    return tw_trace_writer_comment(s->w, line);
}

/* Threads start with every signal blocked: signals go to the caller's threads. */
static tw_status start_threads(tw_sampler *s)
{
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    tw_status st = TW_OK;
    for (size_t k = 0; k < s->nprod && st == TW_OK; k++) {
        producer *p = s->prod[k];
        atomic_store(&p->running, true);
        int rc = pthread_create(&p->th, NULL, producer_main, p);
        if (rc != 0) {
            atomic_store(&p->running, false);
            st = tw_fail(TW_ENOMEM, "cannot start a sampler thread: %s", strerror(rc));
        } else {
            p->started = true;
        }
    }
    if (st == TW_OK) {
        int rc = pthread_create(&s->writer, NULL, writer_main, s);
        if (rc != 0)
            st = tw_fail(TW_ENOMEM, "cannot start the sampler's writer thread: %s", strerror(rc));
        else
            s->writer_started = true;
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return st;
}

static tw_status setup(tw_sampler *s, const tw_sampler_config *cfg)
{
    tw_status st = pick_devices(s, cfg);
    if (st != TW_OK) return st;
    for (size_t d = 0; d < s->ndev && st == TW_OK; d++) {
        st = open_producer(s, cfg, d, TW_READ_FAST);
        if (st != TW_OK) break;
        if (open_producer(s, cfg, d, TW_READ_SLOW) != TW_OK) {
            add_note(s, "%sslow readings not sampled:", s->dev[d].note_prefix);
            add_note_lines(s, s->dev[d].note_prefix, tw_last_error());
        }
    }
    if (st != TW_OK) return st;
    if (s->ncols == 0) return tw_fail(TW_EEMPTY, "backend '%s' offers no readings to sample", cfg->backend);
    return open_trace(s, cfg->provenance);
}

static void stop_threads(tw_sampler *s)
{
    atomic_store(&s->stop_producers, true);
    for (size_t k = 0; k < s->nprod; k++) {
        producer *p = s->prod[k];
        if (!p->started) continue;
        pthread_join(p->th, NULL);
        p->started = false;
    }
    atomic_store_explicit(&s->stop_writer, true, memory_order_release);
    if (s->writer_started) {
        pthread_join(s->writer, NULL);
        s->writer_started = false;
    }
}

tw_status tw_sampler_start(const tw_sampler_config *cfg, tw_sampler **out)
{
    return tw_sampler_start_sink(cfg, NULL, NULL, out);
}

uint64_t tw_sampler_t0_mono_ns(const tw_sampler *s) { return s ? s->t0_mono_ns : 0; }

void tw_sampler_device_health(const tw_sampler *s, size_t d, tw_sampler_health *out)
{
    memset(out, 0, sizeof *out);
    for (size_t k = 0; s && k < s->nprod; k++) {
        producer *p = s->prod[k];
        if (p->dev != d) continue;
        out->failed_polls += atomic_load_explicit(&p->failed_polls, memory_order_relaxed);
        /* err and errmsg are written before running is cleared (release) */
        if (!out->stopped && !atomic_load_explicit(&p->running, memory_order_acquire) && p->err != TW_OK) {
            out->stopped = true;
            snprintf(out->why, sizeof out->why, "%s", p->errmsg);
        }
    }
}

tw_status tw_sampler_start_sink(const tw_sampler_config *cfg, tw_sampler_sink_fn fn, void *arg, tw_sampler **out)
{
    tw_clear_error();
    if (!out) return tw_fail(TW_EINVAL, "tw_sampler_start: out is NULL");
    *out = NULL;
    if (!cfg || !cfg->backend || (!cfg->trace_path && !cfg->run && !fn))
        return tw_fail(TW_EINVAL, "tw_sampler_start: no config, backend, trace path or run file");
    if (cfg->n_devices && !cfg->devices) return tw_fail(TW_EINVAL, "tw_sampler_start: n_devices without devices");
    double fast = cfg->fast_period_s > 0 ? cfg->fast_period_s : DEFAULT_FAST_PERIOD_S;
    double slow = cfg->slow_period_s > 0 ? cfg->slow_period_s : DEFAULT_SLOW_PERIOD_S;
    if (!isfinite(fast) || !isfinite(slow) || fast < 1e-5 || slow < 1e-5 || fast > 3600 || slow > 3600)
        return tw_fail(TW_EINVAL, "sampling periods must be from 10 us to 1 h (got %g s and %g s)", fast, slow);
    tw_sampler *s = calloc(1, sizeof *s);
    if (!s) return tw_fail(TW_ENOMEM, "out of memory");
    s->t0_mono_ns = cfg->t0_mono_ns ? cfg->t0_mono_ns : mono_ns();
    atomic_init(&s->stop_producers, false);
    atomic_init(&s->stop_writer, false);
    s->backend = strdup(cfg->backend);
    s->trace_path = cfg->trace_path ? strdup(cfg->trace_path) : NULL;
    s->run = cfg->run;
    s->sink = fn;
    s->sink_arg = arg;
    tw_status st =
        s->backend && (s->trace_path || !cfg->trace_path) ? setup(s, cfg) : tw_fail(TW_ENOMEM, "out of memory");
    if (st == TW_OK) {
        s->start_ns = mono_ns();
        st = start_threads(s);
    }
    if (st != TW_OK) {
        char msg[1024];
        snprintf(msg, sizeof msg, "%s", tw_last_error());
        stop_threads(s);
        if (s->w) {
            tw_trace_writer_close(s->w);
            remove(s->trace_path); /* nothing was sampled into it */
        }
        sampler_release(s);
        return tw_fail(st, "%s", msg);
    }
    *out = s;
    return TW_OK;
}

static void device_label(const tw_sampler *s, const producer *p, char *buf, size_t len)
{
    if (s->ndev > 1)
        snprintf(buf, len, "GPU %d %s readings", s->dev[p->dev].index, p->group_name);
    else
        snprintf(buf, len, "%s readings", p->group_name);
}

tw_status tw_sampler_stop(tw_sampler *s)
{
    tw_clear_error();
    if (!s) return tw_fail(TW_EINVAL, "tw_sampler_stop: NULL sampler");
    if (s->stopped) return TW_OK;
    stop_threads(s);
    s->stopped = true;
    s->wall_s = 1e-9 * (double)(mono_ns() - s->start_ns);
    s->cpu_s = s->writer_cpu_s;
    for (size_t k = 0; k < s->nprod; k++) {
        producer *p = s->prod[k];
        char label[96];
        device_label(s, p, label, sizeof label);
        s->cpu_s += p->cpu_s;
        s->dev[p->dev].pub.cpu_s += p->cpu_s;
        uint64_t dropped = atomic_load(&p->dropped);
        if (dropped)
            add_note(s, "%s: %llu rows dropped (the writer fell behind; ring of %zu rows full)", label,
                     (unsigned long long)dropped, p->ring.cap);
        for (size_t i = 0; i < p->n; i++) {
            size_t c = p->out_col[i];
            if (c == NO_COL) continue;
            tw_sampler_reading_stats *r = &s->stats[c];
            r->polls = p->polls[i];
            r->updates = p->updates[i];
            r->polls_per_s = s->wall_s > 0 ? (double)r->polls / s->wall_s : NAN;
            r->updates_per_s = s->wall_s > 0 ? (double)r->updates / s->wall_s : NAN;
        }
        /* what the backend noted while sampling (e.g. reads that failed) */
        const char *notes = tw_sensor_notes(p->sensor);
        if (notes && strlen(notes) > p->notes_seen)
            add_note_lines(s, s->dev[p->dev].note_prefix, notes + p->notes_seen);
        if (p->max_period_s > 1.05 * p->period_s)
            add_note(s,
                     "%s read every %.2f s on average, not every %g s: a read took %.1f ms of CPU (e.g. the energy "
                     "counter), so they were read less often to stay under %g %% of one core, at least every %g s "
                     "(--slow-period / slow_period_s sets a fixed period)",
                     label, p->calls > 1 ? s->wall_s / (double)p->calls : p->max_period_s, p->period_s,
                     1e3 * p->call_cpu_s, 100 * p->cpu_budget, p->period_cap_s);
        if (p->err != TW_OK)
            add_note(s, "%s stopped at t = %.3f s after a backend error: %s", label, p->err_t_s, p->errmsg);
        tw_sensor_close(p->sensor);
        p->sensor = NULL;
    }
    if (s->clamped)
        add_note(s,
                 "%llu rows came out of time order and were written at the time of the row before "
                 "(their readings keep their own timestamps)",
                 (unsigned long long)s->clamped);
    tw_status st = tw_trace_writer_close(s->w);
    s->w = NULL;
    if (st == TW_OK && s->run && s->write_err == TW_OK) st = tw_run_commit(s->run);
    if (s->write_err != TW_OK) return tw_fail(s->write_err, "%s", s->write_msg);
    return st;
}

size_t tw_sampler_reading_count(const tw_sampler *s) { return s ? s->ncols : 0; }

const tw_sampler_reading_stats *tw_sampler_reading(const tw_sampler *s, size_t i)
{
    return s && i < s->ncols ? &s->stats[i] : NULL;
}

double tw_sampler_cpu_s(const tw_sampler *s) { return s ? s->cpu_s : NAN; }

double tw_sampler_writer_cpu_s(const tw_sampler *s) { return s ? s->writer_cpu_s : NAN; }

size_t tw_sampler_device_count(const tw_sampler *s) { return s ? s->ndev : 0; }

const tw_sampler_device *tw_sampler_device_get(const tw_sampler *s, size_t d)
{
    if (!s || d >= s->ndev) return NULL;
    device *dv = &s->dev[d];
    const tw_sample_plan *pl = &dv->plan;
    tw_sampler_device *x = &dv->pub;
    x->index = dv->index;
    x->fast_period_s = pl->fast_period_s;
    x->buffer_poll_s = pl->buffer_poll_s;
    x->slow_period_s = pl->slow_period_s;
    x->slow_max_period_s = pl->slow_max_period_s;
    x->plan = pl->summary;
    return x;
}

double tw_sampler_wall_s(const tw_sampler *s) { return s ? s->wall_s : NAN; }

const char *tw_sampler_notes(const tw_sampler *s) { return s && s->notes ? s->notes : ""; }

void tw_sampler_free(tw_sampler *s)
{
    if (!s) return;
    if (!s->stopped) {
        stop_threads(s);
        tw_trace_writer_close(s->w);
        s->w = NULL;
    }
    sampler_release(s);
}
