/* Sessions and regions (truewatt.h): the sampler (src/sample/) samples the
 * chosen GPUs on its threads and hands every merged row to the session (its
 * sink), which keeps per GPU the energy as a function of time from the best
 * reading under its model (energy_line.h). A region is its begin and end
 * times; its energy is F(end) - F(begin) once the readings reach past its
 * end (up to the reading's delay plus the sampler's drain period later).
 *
 * A begin and an end take no lock the sampler or other threads hold: the
 * open regions are a stack per thread (open_set.h) and an ended region is
 * pushed onto a lock-free inbox. The session's mutex guards the lines and
 * the pending results: the sink (each row) and a waiting caller move the
 * inbox into the pending list, in the order of the regions' ends.
 *
 * The "sim" backend has no live sensor (the simulator's time is not the
 * program's): a sim session's GPU is the simulated H100 at active idle and
 * a region's energy is its exact true energy over the region, so code using
 * the API runs and is tested where no GPU exists. */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/anchor.h"
#include "api/energy_line.h"
#include "api/kernels.h"
#include "api/open_set.h"
#include "api/recorder.h"
#include "api/session_internal.h"
#include "api/sized.h"
#include "core/error.h"
#include "core/strmap.h"
#include "correct/profile.h"
#include "estimate/trace.h"
#include "sample/sampler_sink.h"
#include "sensor/nvml_mig.h"
#include "timeline/devices.h"

#define MAX_GPUS 64
#define OPEN_WAIT_S 5.0  /* a GPU must give readings this soon after the open */
#define CLOSE_WAIT_S 2.0 /* the close waits this long for pending regions */
#define KEEP_S 2.0       /* history kept beyond what open and pending regions need */
#define TRIM_EVERY 256   /* rows between trims */
#define COUNTER "energy_j"
#define READING_LEN 384
/* traced: the history kept for the kernel names' fit (kernels.h, tw_kfit): each name's power from
 * every step of the last seconds, not from one region's few hundred milliseconds */
#define KFIT_HISTORY_S 10.0

/* The readings a region's energy may come from, best first. */
static const char *const CANDIDATES[] = {"power_buffer_w", "energy_j", "power_usage_w"};

typedef struct sdev {
    tw_device_info info;
    char prefix[32]; /* its columns' prefix in the sampler's rows ("" or "gpuN_") */
    bool resolved;   /* its column is chosen (at the first row) */
    size_t col;      /* SIZE_MAX: none of the candidates */
    char reading[READING_LEN];
    tw_reading_model model; /* of that reading */
    tw_energy_line line;
    /* the energy counter, when the line is the sample buffer's and the
     * counter's model is trusted: the totals (anchor.h) */
    bool anchored;
    size_t ccol;
    tw_anchor anchor;
    char shape_only[READING_LEN];                  /* what a region the counter's knots do not bracket says */
    const char *i_uuid, *i_reading, *i_shape_only; /* the same, interned: what regions point to */
} sdev;

typedef struct rdev {
    const char *uuid, *reading; /* interned: valid for the process's life */
    double energy_j, sd_j, baseline_j;
} rdev;

enum { R_PENDING, R_COMPLETE, R_ABANDONED };

/* A traced region's kernels on one GPU: its launches, taken at its
 * completion (the session forgets them later), their names' energies from
 * the session's fit (tw_kfit) at the first ask. */
typedef struct rkern {
    tw_klaunch *l;
    size_t nl;
    double total_j;
    tw_kname *names; /* after the estimate */
    size_t nnames;
    double kernels_j, model_j;
    tw_status st; /* of the estimate */
    char err[256];
} rkern;

struct tw_region {
    _Atomic(tw_session *) s; /* while pending */
    atomic_int state;        /* R_PENDING, then R_COMPLETE (the sink) or R_ABANDONED (freed while pending) */
    char *name;
    double t0, t1;
    size_t ndev;
    rdev *d;
    tw_region *prev, *next; /* the session's pending list */
    tw_region *inbox_next;  /* in the session's inbox, or its allocating thread's grave */
    _Atomic(void *) *grave; /* that grave (NULL: none, freed where it is done with) */
    bool traced;            /* its session traces kernels: k and kf are set at completion */
    rkern *k;               /* per device; NULL: not traced, or out of memory */
    tw_kfit *kf;            /* the session's fit (a reference), which gives k its names */
    atomic_int estimated;   /* k's names are there */
};

struct tw_session {
    char backend[16];
    size_t ndev;
    sdev *dev;
    tw_sampler *sampler;
    tw_scenario *sim; /* sim: the true signal */
    tw_profile profile;
    bool have_profile;
    uint64_t t0_ns;
    pthread_mutex_t mu;
    pthread_cond_t cv; /* CLOCK_MONOTONIC: a region completed, a line grew */
    tw_open_set open;
    _Atomic(tw_region *) inbox;        /* ended, not yet in the pending list (newest first) */
    tw_region *pending, *pending_tail; /* by their ends */
    unsigned long rows;
    char notes[1024]; /* what the open said about the GPUs (tw_session_notes) */
    tw_ktrace *kt;    /* trace_kernels: the kernels */
    tw_kfit *kf;      /* ... and their names' fit, shared with the regions */
    tw_recorder *rec; /* run_path: the run file */
    bool closing;     /* no more kernels will come */
};

/* ---------------------------------------------------------------- time */

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

double tw_session_now_s(const tw_session *s) { return 1e-9 * (double)(int64_t)(mono_ns() - s->t0_ns); }

static void deadline_after(struct timespec *ts, double s)
{
    clock_gettime(CLOCK_MONOTONIC, ts);
    double whole = floor(s);
    ts->tv_sec += (time_t)whole;
    ts->tv_nsec += (long)((s - whole) * 1e9);
    if (ts->tv_nsec >= 1000000000L) {
        ts->tv_sec++;
        ts->tv_nsec -= 1000000000L;
    }
}

/* ---------------------------------------------------------------- results */

/* The line's tiles over [t0, t1] as the estimator's observations, each the
 * mean (corrected) power of its interval (under the lock). */
static tw_status line_obs(const tw_energy_line *l, double t0, double t1, tw_obs_series *out)
{
    tw_status st = TW_OK;
    for (size_t i = l->off + 1; i < l->n && st == TW_OK; i++) {
        const tw_line_knot *a = &l->k[i - 1], *b = &l->k[i];
        if (a->t_s < t0 || b->t_s > t1 || !isfinite(b->p_w)) continue;
        double p = b->p_w;
        if (l->capacitance_s > 0 && isfinite(a->p_w)) p += l->capacitance_s * (b->p_w - a->p_w) / (b->t_s - a->t_s);
        st = tw_obs_series_push(out, a->t_s, b->t_s, p);
    }
    return st;
}

/* Under the lock, at a traced region's completion: its launches on each
 * GPU and its total, kept in the region for its names (tw_kfit_region at
 * the first ask). Out of memory: the region has no kernels. */
static void take_kernels(const tw_session *s, tw_region *r)
{
    r->k = calloc(r->ndev, sizeof *r->k);
    tw_status st = r->k ? TW_OK : TW_ENOMEM;
    for (size_t d = 0; d < r->ndev && st == TW_OK; d++) {
        rkern *k = &r->k[d];
        st = tw_ktrace_window(s->kt, d, r->t0, r->t1, &k->l, &k->nl);
        /* the region's total (the counter's, where it anchors): the kernels
         * and the baseline add up to it */
        k->total_j = r->d[d].energy_j;
        k->kernels_j = k->model_j = NAN;
    }
    if (st == TW_OK) {
        r->kf = tw_kfit_ref(s->kf);
        tw_kfit_expect(r->kf, r->t1);
        return;
    }
    for (size_t d = 0; r->k && d < r->ndev; d++)
        free(r->k[d].l);
    free(r->k);
    r->k = NULL;
}

/* The fit's source (tw_kfit_source): device d's launches and readings of
 * the last KFIT_HISTORY_S (or since `from`) up to where both reach, copied
 * under the lock. */
static tw_status kfit_history(void *arg, size_t d, double from, tw_klaunch **l, size_t *nl, tw_obs_series *o,
                              double *t0, double *t1)
{
    tw_session *s = arg;
    pthread_mutex_lock(&s->mu);
    const tw_energy_line *line = &s->dev[d].line;
    double end = tw_line_end_s(line);
    if (!s->closing) end = fmin(end, tw_ktrace_flushed_s(s->kt)); /* kernels that ended later may still come */
    double begin = fmax(fmin(end - KFIT_HISTORY_S, from), tw_line_start_s(line));
    tw_status st = TW_OK;
    if (end > begin) {
        st = tw_ktrace_window(s->kt, d, begin, end, l, nl);
        if (st == TW_OK) st = line_obs(line, begin, end, o);
    }
    pthread_mutex_unlock(&s->mu);
    *t0 = begin;
    *t1 = end;
    return st;
}

static void complete_device(const tw_session *s, size_t d, tw_region *r)
{
    rdev *x = &r->d[d];
    const sdev *dv = &s->dev[d];
    double len = r->t1 - r->t0;
    if (s->sim) {
        x->energy_j = tw_scenario_true_energy_j(s->sim, r->t0, r->t1);
        x->sd_j = 0.0;
        x->baseline_j = tw_scenario_active_idle_w(s->sim) * len;
        return;
    }
    if (!dv->anchored) {
        x->energy_j = tw_line_energy_j(&dv->line, r->t0, r->t1, &x->sd_j);
        x->baseline_j = tw_line_baseline_w(&dv->line) * len;
        return;
    }
    double rel, g = tw_anchor_scale(&dv->anchor, &rel);
    x->baseline_j = g * tw_line_baseline_w(&dv->line) * len;
    bool shape_only;
    x->energy_j = tw_anchor_span_j(&dv->anchor, &dv->line, r->t0, r->t1, &x->sd_j, &shape_only);
    if (shape_only) x->reading = dv->i_shape_only;
}

static void unlink_pending(tw_session *s, tw_region *r)
{
    if (r->prev)
        r->prev->next = r->next;
    else
        s->pending = r->next;
    if (r->next)
        r->next->prev = r->prev;
    else
        s->pending_tail = r->prev;
    r->prev = r->next = NULL;
    atomic_store(&r->s, NULL);
}

static void region_release(tw_region *r)
{
    if (r->kf) {
        if (r->k && !atomic_load(&r->estimated)) tw_kfit_done(r->kf); /* never read */
        tw_kfit_unref(r->kf);
    }
    for (size_t d = 0; r->k && d < r->ndev; d++) {
        free(r->k[d].l);
        free(r->k[d].names);
    }
    free(r->k);
    free(r->name);
    free(r);
}

/* A region its caller freed while it was pending: into the grave of the
 * thread that allocated it (open_set.h), which frees it at its next end. */
static void bury(tw_region *r)
{
    _Atomic(void *) *grave = r->grave;
    if (!grave) {
        region_release(r);
        return;
    }
    void *head = atomic_load_explicit(grave, memory_order_relaxed);
    do
        r->inbox_next = head;
    while (!atomic_compare_exchange_weak_explicit(grave, &head, r, memory_order_release, memory_order_relaxed));
}

static void release_list(void *head, void *arg)
{
    (void)arg;
    for (tw_region *r = head, *next; r; r = next) {
        next = r->inbox_next;
        region_release(r);
    }
}

/* The calling thread's regions that the session is done with. */
static void free_buried(_Atomic(void *) *grave)
{
    if (grave && atomic_load_explicit(grave, memory_order_relaxed))
        release_list(atomic_exchange_explicit(grave, NULL, memory_order_acquire), NULL);
}

/* Into the pending list by its end (regions of several threads end in
 * nearly increasing time: from the tail, a step or two). */
static void insert_pending(tw_session *s, tw_region *r)
{
    tw_region *after = s->pending_tail;
    while (after && after->t1 > r->t1)
        after = after->prev;
    r->prev = after;
    r->next = after ? after->next : s->pending;
    if (r->next)
        r->next->prev = r;
    else
        s->pending_tail = r;
    if (after)
        after->next = r;
    else
        s->pending = r;
}

/* Under the lock: the inbox's regions into the pending list, oldest first. */
static void drain_inbox(tw_session *s)
{
    tw_region *list = atomic_exchange_explicit(&s->inbox, NULL, memory_order_acquire), *rev = NULL;
    while (list) { /* newest first: reversed */
        tw_region *next = list->inbox_next;
        list->inbox_next = rev;
        rev = list;
        list = next;
    }
    for (tw_region *r = rev, *next; r; r = next) {
        next = r->inbox_next;
        if (atomic_load(&r->state) == R_ABANDONED) /* freed by its caller already: no result to wait for */
            bury(r);
        else
            insert_pending(s, r);
    }
}

/* Lock-free: an ended region for the sink to complete. */
static void post_region(tw_session *s, tw_region *r)
{
    atomic_store(&r->s, s);
    tw_region *head = atomic_load_explicit(&s->inbox, memory_order_relaxed);
    do
        r->inbox_next = head;
    while (!atomic_compare_exchange_weak_explicit(&s->inbox, &head, r, memory_order_release, memory_order_relaxed));
}

/* Under the lock: the region's results, then off the pending list; one its
 * caller freed meanwhile is freed here. */
static void complete_region(tw_session *s, tw_region *r)
{
    bool abandoned = atomic_load(&r->state) == R_ABANDONED;
    for (size_t d = 0; d < r->ndev && !abandoned; d++)
        complete_device(s, d, r);
    if (!abandoned && r->traced) take_kernels(s, r);
    if (atomic_load(&r->s)) unlink_pending(s, r);
    int pending = R_PENDING;
    if (!atomic_compare_exchange_strong(&r->state, &pending, R_COMPLETE)) bury(r);
}

/* Whether every GPU's readings reach past t. */
static bool covered(const tw_session *s, double t)
{
    if (s->sim) return true;
    for (size_t d = 0; d < s->ndev; d++)
        if (!(tw_line_end_s(&s->dev[d].line) >= t)) return false;
    return true;
}

/* Whether a region ending at t can be completed: the readings reach past
 * it and, where the counter gives the totals, its next knot came (or did
 * not come within TW_ANCHOR_WAIT_S: the shape alone then). */
static bool region_ready(const tw_session *s, double t)
{
    if (!covered(s, t)) return false;
    if (s->kt && !s->closing && tw_ktrace_flushed_s(s->kt) < t) return false; /* its kernels may still come */
    for (size_t d = 0; d < s->ndev; d++) {
        const sdev *dv = &s->dev[d];
        if (dv->anchored && !tw_anchor_ready(&dv->anchor, &dv->line, t)) return false;
    }
    return true;
}

/* The oldest pending regions whose ends the readings reach: in order of
 * their ends, so the scan stops at the first that must still wait (one whose
 * end came a little out of order waits for the one before it). */
static void complete_ready(tw_session *s)
{
    drain_inbox(s);
    while (s->pending && region_ready(s, s->pending->t1))
        complete_region(s, s->pending);
}

/* ---------------------------------------------------------------- the sink */

static void describe_reading(sdev *dv, const char *name, const tw_reading_model *m, bool from_profile)
{
    char how[96] = "";
    if (m->response == TW_RESP_RC) snprintf(how, sizeof how, " C %.3g ms", 1e3 * m->capacitance_s);
    if (m->response == TW_RESP_BOXCAR || m->response == TW_RESP_WINDOW)
        snprintf(how, sizeof how, " %.3g ms window", 1e3 * m->window_s);
    snprintf(dv->reading, sizeof dv->reading, "%s (%s%s, delay %.3g ms, %s)", name, tw_response_name(m->response), how,
             1e3 * m->delay_s, from_profile ? "profile" : "H100 default");
}

/* The energy counter as the totals of the tile reading's line, when the
 * sampler reads it and its model (the profile's, else the built-in one) is
 * a trusted counter. */
static void anchor_device(const tw_session *s, const tw_sampler *smp, sdev *dv)
{
    char want[160];
    snprintf(want, sizeof want, "%s%s", dv->prefix, COUNTER);
    size_t ncol = tw_sampler_reading_count(smp), c = 0;
    while (c < ncol && strcmp(tw_sampler_reading(smp, c)->name, want) != 0)
        c++;
    if (c == ncol) return;
    const tw_reading_model *m = s->have_profile ? tw_profile_find(&s->profile, COUNTER) : NULL;
    bool from_profile = m && m->response != TW_RESP_UNKNOWN;
    if (!from_profile) m = tw_est_default_model(COUNTER);
    if (!m || m->response != TW_RESP_COUNTER || !tw_reading_model_trusted(m)) return;
    dv->anchored = true;
    dv->ccol = c;
    tw_anchor_init(&dv->anchor, m, dv->model.period_s);
    char shape[192]; /* describe_reading's line fits */
    snprintf(shape, sizeof shape, "%.191s", dv->reading);
    snprintf(dv->shape_only, sizeof dv->shape_only, "%s scaled to %s (its reads do not bracket the region)", shape,
             COUNTER);
    snprintf(dv->reading, sizeof dv->reading,
             "%s (counter, every %.3g ms, delay %.3g ms, %s) for the total, %s for the shape", COUNTER,
             1e3 * m->period_s, 1e3 * m->delay_s, from_profile ? "profile" : "H100 default", shape);
}

/* The device's best reading among the sampler's columns, with its model:
 * the profile's when it has one, else the built-in (H100) one. */
static void resolve_device(tw_session *s, const tw_sampler *smp, sdev *dv)
{
    dv->resolved = true;
    dv->col = SIZE_MAX;
    size_t ncol = tw_sampler_reading_count(smp);
    for (size_t k = 0; k < sizeof CANDIDATES / sizeof CANDIDATES[0]; k++) {
        char want[160];
        snprintf(want, sizeof want, "%s%s", dv->prefix, CANDIDATES[k]);
        size_t c = 0;
        while (c < ncol && strcmp(tw_sampler_reading(smp, c)->name, want) != 0)
            c++;
        if (c == ncol) continue;
        const tw_reading_model *m = s->have_profile ? tw_profile_find(&s->profile, CANDIDATES[k]) : NULL;
        bool from_profile = m && m->response != TW_RESP_UNKNOWN;
        if (!from_profile) m = tw_est_default_model(CANDIDATES[k]);
        if (!m) continue;
        tw_line_kind kind = k == 0 ? TW_LINE_TILES : m->response == TW_RESP_COUNTER ? TW_LINE_COUNTER : TW_LINE_HOLD;
        tw_line_init(&dv->line, kind, m);
        describe_reading(dv, CANDIDATES[k], m, from_profile);
        dv->model = *m;
        snprintf(dv->model.name, sizeof dv->model.name, "%s", CANDIDATES[k]);
        dv->col = c;
        if (kind == TW_LINE_TILES) anchor_device(s, smp, dv);
        return;
    }
}

/* The oldest time still needed: open and pending regions' begins, and the
 * history the kernel names' fit covers (traced). */
static double needed_from(tw_session *s, double end)
{
    drain_inbox(s);
    double t = fmin(end - (s->kt ? fmax(KEEP_S, KFIT_HISTORY_S) : KEEP_S), tw_open_oldest(&s->open));
    for (const tw_region *r = s->pending; r; r = r->next)
        if (r->t0 < t) t = r->t0;
    return t;
}

static void sink(void *arg, const tw_sampler *smp, const tw_row *row)
{
    tw_session *s = arg;
    if (s->rec) tw_recorder_sync(s->rec, false); /* every TW_RUN_COMMIT_S */
    pthread_mutex_lock(&s->mu);
    for (size_t d = 0; d < s->ndev; d++) {
        sdev *dv = &s->dev[d];
        if (!dv->resolved) resolve_device(s, smp, dv);
        tw_anchor_feed(dv->anchored ? &dv->anchor : NULL, &dv->line, row, dv->col, dv->ccol);
    }
    if (++s->rows % TRIM_EVERY == 0)
        for (size_t d = 0; d < s->ndev; d++) {
            sdev *dv = &s->dev[d];
            double keep = needed_from(s, tw_line_end_s(&dv->line));
            if (dv->anchored) {
                tw_anchor_trim(&dv->anchor, keep);
                keep = fmin(keep, tw_anchor_needed_from(&dv->anchor));
            }
            tw_line_trim(&dv->line, keep);
            if (s->kt && d == 0) tw_ktrace_trim(s->kt, keep);
        }
    complete_ready(s);
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
}

/* ---------------------------------------------------------------- open and close */

void tw_session_config_init(tw_session_config *c)
{
    if (!c) return;
    memset(c, 0, sizeof *c);
    c->size = sizeof *c;
}

static tw_status pick_backend(const tw_session_config *c, tw_session *s)
{
    char why[256];
    const char *b = c->backend;
    if (!b) b = tw_backend_available("nvml", why, sizeof why) ? "nvml" : "sim";
    if (strcmp(b, "nvml") != 0 && strcmp(b, "sim") != 0)
        return tw_fail(TW_EINVAL, "tw_session_open: backend '%s': a session samples 'nvml' or 'sim'", b);
    snprintf(s->backend, sizeof s->backend, "%s", b);
    return TW_OK;
}

static tw_status open_sim(tw_session *s)
{
    tw_status st = tw_scenario_new(TW_SIM_H100, &s->sim);
    if (st == TW_OK) st = tw_scenario_set_context(s->sim, 0.0);
    if (st == TW_OK) st = tw_scenario_set_duration(s->sim, 1e9);
    if (st != TW_OK) return st;
    s->dev = calloc(1, sizeof *s->dev);
    if (!s->dev) return tw_fail(TW_ENOMEM, "out of memory");
    s->ndev = 1;
    tw_device_info *i = &s->dev[0].info;
    snprintf(i->uuid, sizeof i->uuid, "SIM-0");
    snprintf(i->name, sizeof i->name, "simulated H100 (truewatt sim)");
    i->arch = 9;
    i->power_limit_w = NAN;
    snprintf(s->dev[0].reading, sizeof s->dev[0].reading, "sim (the simulated GPU's exact true power)");
    s->dev[0].resolved = true;
    return TW_OK;
}

/* The GPUs the config names (NVML index, cuda:N, UUID), else all the
 * program's CUDA_VISIBLE_DEVICES allows. */
static tw_status pick_gpus(const tw_session_config *c, tw_session *s, tw_device_info *all, size_t *pos, size_t *n)
{
    size_t nall = 0;
    tw_status st = tw_backend_devices("nvml", NULL, all, MAX_GPUS, &nall);
    if (st != TW_OK) return st;
    if (nall > MAX_GPUS) nall = MAX_GPUS;
    char list[4096] = "";
    for (size_t i = 0; i < c->ngpus; i++) {
        if (!c->gpus || !c->gpus[i] || !*c->gpus[i])
            return tw_fail(TW_EINVAL, "tw_session_open: gpus[%zu] is empty", i);
        size_t len = strlen(list);
        snprintf(list + len, sizeof list - len, "%s%s", i ? "," : "", c->gpus[i]);
    }
    /* a MIG instance's UUID stands for its GPU (the GPU is sampled), as for `truewatt run` */
    st = tw_nvml_devices_resolve(NULL, c->ngpus ? list : NULL, getenv("CUDA_VISIBLE_DEVICES"), all, nall, pos, MAX_GPUS,
                                 n, s->notes, sizeof s->notes);
    if (st != TW_OK) return st;
    s->dev = calloc(*n ? *n : 1, sizeof *s->dev);
    if (!s->dev) return tw_fail(TW_ENOMEM, "out of memory");
    s->ndev = *n;
    for (size_t d = 0; d < *n; d++) {
        s->dev[d].info = all[pos[d]];
        s->dev[d].col = SIZE_MAX;
        if (*n > 1) snprintf(s->dev[d].prefix, sizeof s->dev[d].prefix, "gpu%u_", all[pos[d]].index);
    }
    return TW_OK;
}

/* Waits until every GPU's line holds two knots: the sampler works and a
 * region begun from now on has readings at its start. */
static tw_status wait_first_readings(tw_session *s)
{
    struct timespec until;
    deadline_after(&until, OPEN_WAIT_S);
    pthread_mutex_lock(&s->mu);
    size_t d = 0;
    int rc = 0;
    while (d < s->ndev && rc != ETIMEDOUT) {
        if (tw_line_end_s(&s->dev[d].line) > -INFINITY)
            d++;
        else
            rc = pthread_cond_timedwait(&s->cv, &s->mu, &until);
    }
    tw_status st = TW_OK;
    if (d < s->ndev) {
        const sdev *dv = &s->dev[d];
        st = dv->resolved && dv->col == SIZE_MAX
                 ? tw_fail(TW_EUNAVAIL, "GPU %u (%s): none of power_buffer_w, energy_j, power_usage_w is sampled",
                           dv->info.index, dv->info.uuid)
                 : tw_fail(TW_EUNAVAIL, "GPU %u (%s): no readings within %g s of the open", dv->info.index,
                           dv->info.uuid, OPEN_WAIT_S);
    }
    pthread_mutex_unlock(&s->mu);
    return st;
}

/* The energy counter is read every 4.875 of its update periods (0.4875 s
 * on an H100) unless the caller says: successive reads fall 1/8 of a period
 * apart on its grid, so that the anchor (anchor.h) sees where the grid lies
 * even where the power is flat; a read at a fixed phase (every 0.5 s) would
 * never tell. About 1 % of a core at the H100's ~4 ms of CPU a read. */
static double counter_read_period_s(const tw_session *s, const tw_session_config *c)
{
    if (c->counter_period_s > 0) return c->counter_period_s;
    const tw_reading_model *m = s->have_profile ? tw_profile_find(&s->profile, COUNTER) : NULL;
    if (!m || !(m->period_s > 0)) m = tw_est_default_model(COUNTER);
    return 4.875 * (m && m->period_s > 0 ? m->period_s : 0.1);
}

/* run_path: the run file, before the sampler (which writes into it). */
static tw_status open_recorder(const tw_session_config *c, tw_session *s)
{
    const char *prefix[MAX_GPUS];
    tw_device_info info[MAX_GPUS];
    for (size_t d = 0; d < s->ndev; d++) {
        prefix[d] = s->dev[d].prefix;
        info[d] = s->dev[d].info;
    }
    tw_recorder_config rc = {.path = c->run_path,
                             .backend = s->backend,
                             .t0_mono_ns = s->t0_ns,
                             .dev = info,
                             .prefix = prefix,
                             .ndev = s->ndev,
                             .profile_path = c->profile_path};
    return tw_recorder_open(&rc, &s->rec);
}

static tw_status open_nvml(const tw_session_config *c, tw_session *s)
{
    tw_device_info all[MAX_GPUS];
    size_t pos[MAX_GPUS], n = 0;
    tw_status st = pick_gpus(c, s, all, pos, &n);
    if (st == TW_OK && c->run_path) st = open_recorder(c, s);
    if (st != TW_OK) return st;
    char idx[MAX_GPUS][16];
    const char *ids[MAX_GPUS];
    for (size_t d = 0; d < n; d++) {
        snprintf(idx[d], sizeof idx[d], "%u", s->dev[d].info.index);
        ids[d] = idx[d];
    }
    tw_sampler_config sc = {.backend = "nvml",
                            .slow_period_s = counter_read_period_s(s, c),
                            .devices = ids,
                            .n_devices = n,
                            .t0_mono_ns = s->t0_ns,
                            .profile_path = c->profile_path,
                            .profile_dir = c->profile_path ? NULL : tw_profile_dir(),
                            .run = tw_recorder_run(s->rec)};
    st = tw_sampler_start_sink(&sc, sink, s, &s->sampler);
    return st == TW_OK ? wait_first_readings(s) : st;
}

/* What a region tells of each GPU besides its numbers is the same for every
 * region of a session, and a region may outlive its session: the texts are
 * stored once for the process (a handful: GPUs and reading models), so that
 * a region only points to them. */
static pthread_mutex_t intern_mu = PTHREAD_MUTEX_INITIALIZER;
static tw_strmap interned;

static const char *intern(const char *text)
{
    const char *key = NULL;
    bool added;
    pthread_mutex_lock(&intern_mu);
    if (!tw_strmap_get(&interned, text, &key, &added)) key = NULL;
    pthread_mutex_unlock(&intern_mu);
    return key;
}

const char *tw_session_intern(const char *text) { return intern(text); }

/* Once the devices' readings are chosen (the sink's first row, before the open returns). */
static tw_status intern_descriptions(tw_session *s)
{
    pthread_mutex_lock(&s->mu);
    tw_status st = TW_OK;
    for (size_t i = 0; i < s->ndev && st == TW_OK; i++) {
        sdev *dv = &s->dev[i];
        dv->i_uuid = intern(dv->info.uuid);
        dv->i_reading = intern(dv->reading);
        dv->i_shape_only = intern(dv->shape_only);
        if (!dv->i_uuid || !dv->i_reading || !dv->i_shape_only) st = tw_fail(TW_ENOMEM, "out of memory");
    }
    pthread_mutex_unlock(&s->mu);
    return st;
}

static void session_free(tw_session *s)
{
    tw_kfit_detach(s->kf); /* regions read later: a fit of the history while it is there */
    tw_kfit_unref(s->kf);
    tw_open_each_grave(&s->open, release_list, NULL);
    if (s->sampler) {
        tw_sampler_stop(s->sampler);
        tw_sampler_free(s->sampler);
    }
    tw_ktrace_free(s->kt);
    if (s->rec) tw_recorder_close(s->rec, s->sampler); /* an open that failed; a close said its error */
    for (size_t d = 0; d < s->ndev; d++) {
        tw_line_free(&s->dev[d].line);
        tw_anchor_free(&s->dev[d].anchor);
    }
    free(s->dev);
    tw_open_free(&s->open);
    tw_scenario_free(s->sim);
    pthread_cond_destroy(&s->cv);
    pthread_mutex_destroy(&s->mu);
    free(s);
}

static tw_status init_sync(tw_session *s)
{
    pthread_condattr_t ca;
    if (pthread_condattr_init(&ca) != 0) return tw_fail(TW_ENOMEM, "cannot create a condition variable");
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    int rc = pthread_cond_init(&s->cv, &ca);
    pthread_condattr_destroy(&ca);
    if (rc != 0) return tw_fail(TW_ENOMEM, "cannot create a condition variable");
    if (pthread_mutex_init(&s->mu, NULL) != 0) {
        pthread_cond_destroy(&s->cv);
        return tw_fail(TW_ENOMEM, "cannot create a mutex");
    }
    if (tw_open_init(&s->open) != TW_OK) {
        pthread_mutex_destroy(&s->mu);
        pthread_cond_destroy(&s->cv);
        return tw_fail(TW_ENOMEM, "cannot create a mutex");
    }
    atomic_init(&s->inbox, NULL);
    return TW_OK;
}

/* The tracer's thread after each flush: regions whose kernels are all in
 * may complete now. */
static void kernels_flushed(void *arg)
{
    tw_session *s = arg;
    pthread_mutex_lock(&s->mu);
    complete_ready(s);
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
}

/* run_path: the kernels (and copies) CUPTI gives into the run file too. */
static void record_activity(void *arg, const twi_record *r, const twi_clock *c)
{
    tw_recorder_activity(((tw_session *)arg)->rec, r, c);
}

/* trace_kernels: CUPTI's activity records in this process (kernels.h). */
static tw_status start_tracing(tw_session *s)
{
    if (s->sim)
        return tw_fail(TW_EUNSUPPORTED, "tw_session_open: trace_kernels needs the nvml backend (the simulator runs "
                                        "no kernels of the program)");
    const char *uuids[MAX_GPUS];
    for (size_t d = 0; d < s->ndev; d++)
        uuids[d] = s->dev[d].info.uuid;
    tw_ktrace_config kc = {.t0_mono_ns = s->t0_ns,
                           .uuids = uuids,
                           .ndev = s->ndev,
                           .notify = kernels_flushed,
                           .record = s->rec ? record_activity : NULL,
                           .arg = s};
    double limit[MAX_GPUS];
    for (size_t d = 0; d < s->ndev; d++)
        limit[d] = s->dev[d].info.power_limit_w;
    tw_status st = tw_kfit_new(s->ndev, limit, "power", kfit_history, s, &s->kf);
    return st == TW_OK ? tw_ktrace_start(&kc, &s->kt) : st;
}

tw_status tw_session_open(const tw_session_config *cin, tw_session **out)
{
    tw_clear_error();
    if (!cin || !out) return tw_fail(TW_EINVAL, "tw_session_open: NULL argument");
    *out = NULL;
    tw_session_config c;
    tw_session_config_init(&c);
    tw_status st = tw_sized_read(&c, sizeof c, cin, "tw_session_open: config");
    if (st != TW_OK) return st;
    if (c.ngpus && !c.gpus) return tw_fail(TW_EINVAL, "tw_session_open: ngpus %zu without gpus", c.ngpus);
    if (!(c.counter_period_s >= 0 && c.counter_period_s <= 60))
        return tw_fail(TW_EINVAL, "tw_session_open: counter_period_s %g must be in [0, 60] s (0: the default)",
                       c.counter_period_s);
    tw_session *s = calloc(1, sizeof *s);
    if (!s) return tw_fail(TW_ENOMEM, "out of memory");
    if ((st = init_sync(s)) != TW_OK) {
        free(s);
        return st;
    }
    s->t0_ns = mono_ns();
    tw_profile_init(&s->profile);
    st = pick_backend(&c, s);
    if (st == TW_OK && c.profile_path) {
        st = tw_profile_load(c.profile_path, &s->profile);
        s->have_profile = st == TW_OK;
    }
    if (st == TW_OK) st = strcmp(s->backend, "sim") == 0 ? open_sim(s) : open_nvml(&c, s);
    if (st == TW_OK) st = intern_descriptions(s);
    if (st == TW_OK && c.run_path && s->sim)
        st = tw_fail(TW_EUNSUPPORTED, "tw_session_open: run_path needs the nvml backend (a sim session has no "
                                      "readings to record)");
    if (st == TW_OK && c.trace_kernels) st = start_tracing(s);
    if (st != TW_OK) {
        char msg[1024];
        snprintf(msg, sizeof msg, "%s", tw_last_error());
        session_free(s);
        return tw_fail(st, "%s", msg);
    }
    *out = s;
    return TW_OK;
}

void tw_session_close(tw_session *s)
{
    if (!s) return;
    struct timespec until;
    deadline_after(&until, CLOSE_WAIT_S);
    pthread_mutex_lock(&s->mu);
    drain_inbox(s);
    while (s->pending && pthread_cond_timedwait(&s->cv, &s->mu, &until) != ETIMEDOUT)
        drain_inbox(s);
    pthread_mutex_unlock(&s->mu);
    if (s->sampler) tw_sampler_stop(s->sampler); /* the last rows reach the lines */
    tw_ktrace_stop(s->kt);                       /* and the last kernels the store */
    pthread_mutex_lock(&s->mu);
    s->closing = true;
    drain_inbox(s);
    while (s->pending) /* what the readings do not reach is NaN */
        complete_region(s, s->pending);
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
    if (s->rec && tw_recorder_close(s->rec, s->sampler) != TW_OK) /* close returns nothing: said on stderr */
        fprintf(stderr, "truewatt: the session's run file is incomplete: %s\n", tw_last_error());
    s->rec = NULL;
    session_free(s);
}

const char *tw_session_notes(const tw_session *s) { return s ? s->notes : ""; }

size_t tw_session_device_count(const tw_session *s) { return s ? s->ndev : 0; }

tw_status tw_session_device(const tw_session *s, size_t d, tw_device_info *out)
{
    tw_clear_error();
    if (!s || !out) return tw_fail(TW_EINVAL, "tw_session_device: NULL argument");
    if (d >= s->ndev) return tw_fail(TW_EINVAL, "tw_session_device: device %zu of %zu", d, s->ndev);
    *out = s->dev[d].info;
    return TW_OK;
}

const char *tw_session_backend(const tw_session *s) { return s ? s->backend : ""; }

uint64_t tw_session_t0_mono_ns(const tw_session *s) { return s ? s->t0_ns : 0; }

double tw_session_baseline_w(tw_session *s, size_t d)
{
    if (!s || d >= s->ndev) return NAN;
    if (s->sim) return tw_scenario_active_idle_w(s->sim);
    pthread_mutex_lock(&s->mu);
    double w = tw_line_baseline_w(&s->dev[d].line);
    pthread_mutex_unlock(&s->mu);
    return w;
}

/* ---------------------------------------------------------------- regions */

static tw_status check_name(const char *fn, const char *name)
{
    if (!name || !*name) return tw_fail(TW_EINVAL, "%s: the region's name is empty", fn);
    return TW_OK;
}

tw_status tw_region_begin(tw_session *s, const char *name)
{
    double t = s ? tw_session_now_s(s) : 0;
    if (!s) return tw_fail(TW_EINVAL, "tw_region_begin: NULL session");
    tw_status st = check_name("tw_region_begin", name);
    if (st != TW_OK) return st;
    return tw_open_push(&s->open, name, t);
}

static tw_region *new_region(const tw_session *s, char *name, double t0, double t1)
{
    /* one allocation: an end that keeps its result costs one malloc */
    tw_region *r = malloc(sizeof *r + s->ndev * sizeof *r->d);
    if (!r) return NULL;
    r->d = (rdev *)(void *)(r + 1);
    r->prev = r->next = NULL;
    r->name = name;
    r->t0 = t0;
    r->t1 = t1;
    r->ndev = s->ndev;
    for (size_t d = 0; d < s->ndev; d++)
        r->d[d] = (rdev){s->dev[d].i_uuid, s->dev[d].i_reading, NAN, NAN, NAN};
    atomic_init(&r->s, NULL);
    atomic_init(&r->state, R_PENDING);
    r->traced = s->kt != NULL;
    r->k = NULL;
    r->kf = NULL;
    atomic_init(&r->estimated, 0);
    return r;
}

tw_status tw_region_end(tw_session *s, const char *name, tw_region **out)
{
    double t = s ? tw_session_now_s(s) : 0;
    if (out) *out = NULL;
    if (!s) return tw_fail(TW_EINVAL, "tw_region_end: NULL session");
    tw_status st = check_name("tw_region_end", name);
    if (st != TW_OK) return st;
    char *begun;
    double t0;
    if ((st = tw_open_pop(&s->open, "tw_region_end", name, &begun, &t0)) != TW_OK) return st;
    if (s->rec) tw_recorder_region(s->rec, begun, t0, t);
    if (!out) {
        free(begun);
        return TW_OK;
    }
    _Atomic(void *) *grave = tw_open_grave(&s->open);
    free_buried(grave);
    tw_region *r = new_region(s, begun, t0, t);
    if (!r) {
        free(begun);
        return tw_fail(TW_ENOMEM, "out of memory");
    }
    r->grave = grave;
    if (s->sim) { /* the exact truth, now: no readings to wait for */
        for (size_t d = 0; d < r->ndev; d++)
            complete_device(s, d, r);
        atomic_store(&r->state, R_COMPLETE);
    } else {
        post_region(s, r);
    }
    *out = r;
    return TW_OK;
}

tw_status tw_region_wait(tw_region *r, double timeout_s)
{
    if (!r) return tw_fail(TW_EINVAL, "tw_region_wait: NULL region");
    if (atomic_load(&r->state) == R_COMPLETE) return TW_OK;
    tw_session *s = atomic_load(&r->s);
    if (!s) return TW_OK;
    struct timespec until;
    deadline_after(&until, timeout_s >= 0 ? timeout_s : 1e9);
    pthread_mutex_lock(&s->mu);
    complete_ready(s); /* its readings may be there already */
    int rc = 0;
    while (atomic_load(&r->state) != R_COMPLETE && rc != ETIMEDOUT)
        rc = pthread_cond_timedwait(&s->cv, &s->mu, &until);
    bool done = atomic_load(&r->state) == R_COMPLETE;
    pthread_mutex_unlock(&s->mu);
    if (done) return TW_OK;
    return tw_fail(TW_EUNAVAIL, "region '%s': the readings did not reach its end within %g s", r->name, timeout_s);
}

/* Lock-free: a region still pending is left to the session, which frees it
 * when it would have completed it. */
void tw_region_free(tw_region *r)
{
    if (!r) return;
    int pending = R_PENDING;
    if (atomic_compare_exchange_strong(&r->state, &pending, R_ABANDONED)) return;
    region_release(r);
}

size_t tw_region_device_count(const tw_region *r) { return r ? r->ndev : 0; }

/* A traced region's kernel names, estimated once, by the first caller
 * (a fit is up to seconds of CPU: never the sampler's). */
static pthread_mutex_t estimate_mu = PTHREAD_MUTEX_INITIALIZER;

static tw_status estimate_kernels(tw_region *r)
{
    tw_status st = tw_region_wait(r, -1);
    if (st != TW_OK || !r->k || atomic_load(&r->estimated)) return st;
    pthread_mutex_lock(&estimate_mu);
    for (size_t d = 0; d < r->ndev && !atomic_load(&r->estimated); d++) {
        rkern *k = &r->k[d];
        k->st = tw_kfit_region(r->kf, d, k->l, k->nl, r->t0, r->t1, k->total_j, &k->names, &k->nnames, &k->kernels_j,
                               &k->model_j);
        if (k->st != TW_OK) { /* out of memory: said by tw_region_kernel_get */
            snprintf(k->err, sizeof k->err, "%s", tw_last_error());
            k->kernels_j = k->model_j = NAN;
        }
        free(k->l);
        k->l = NULL;
    }
    if (!atomic_load(&r->estimated)) tw_kfit_done(r->kf);
    atomic_store(&r->estimated, 1);
    pthread_mutex_unlock(&estimate_mu);
    return TW_OK;
}

size_t tw_region_kernel_count(tw_region *r)
{
    if (!r || !r->traced || estimate_kernels(r) != TW_OK || !r->k) return 0;
    size_t n = 0;
    for (size_t d = 0; d < r->ndev; d++)
        n += r->k[d].nnames;
    return n;
}

tw_status tw_region_kernel_get(tw_region *r, size_t i, tw_region_kernel *out)
{
    tw_clear_error();
    if (!r || !out) return tw_fail(TW_EINVAL, "tw_region_kernel_get: NULL argument");
    size_t n = tw_region_kernel_count(r);
    for (size_t d = 0; r->k && d < r->ndev; d++)
        if (r->k[d].st != TW_OK) return tw_fail(r->k[d].st, "region '%s': its kernels: %s", r->name, r->k[d].err);
    if (i >= n) return tw_fail(TW_EINVAL, "tw_region_kernel_get: kernel name %zu of %zu", i, n);
    size_t d = 0;
    while (i >= r->k[d].nnames)
        i -= r->k[d++].nnames;
    const tw_kname *k = &r->k[d].names[i];
    tw_region_kernel full = {.size = sizeof full,
                             .name = k->name,
                             .device = d,
                             .launches = k->launches,
                             .time_s = k->time_s,
                             .energy_j = k->energy_j,
                             .energy_sd_j = k->sd_j,
                             .status = k->status,
                             .group = k->group};
    return tw_sized_write(out, &full, sizeof full, "tw_region_kernel_get");
}

tw_status tw_region_device_get(tw_region *r, size_t d, tw_region_device *out)
{
    tw_clear_error();
    if (!r || !out) return tw_fail(TW_EINVAL, "tw_region_device_get: NULL argument");
    if (d >= r->ndev) return tw_fail(TW_EINVAL, "tw_region_device_get: device %zu of %zu", d, r->ndev);
    tw_status st = tw_region_wait(r, -1);
    if (st != TW_OK) return st;
    const rdev *x = &r->d[d];
    tw_region_device full = {.size = sizeof full,
                             .time_s = r->t1 - r->t0,
                             .energy_j = x->energy_j,
                             .energy_sd_j = x->sd_j,
                             .baseline_j = x->baseline_j,
                             .above_baseline_j = x->energy_j - x->baseline_j,
                             .reading = x->reading,
                             .kernels_j = NAN,
                             .kernels_model_j = NAN};
    if (r->traced && estimate_kernels(r) == TW_OK && r->k) {
        full.kernels_j = r->k[d].kernels_j;
        full.kernels_model_j = r->k[d].model_j;
    }
    snprintf(full.uuid, sizeof full.uuid, "%s", x->uuid);
    return tw_sized_write(out, &full, sizeof full, "tw_region_device_get");
}

const char *tw_region_name(const tw_region *r) { return r ? r->name : ""; }

double tw_region_time_s(const tw_region *r) { return r ? r->t1 - r->t0 : NAN; }

double tw_region_start_s(const tw_region *r) { return r ? r->t0 : NAN; }

double tw_region_end_s(const tw_region *r) { return r ? r->t1 : NAN; }

/* ---------------------------------------------------------------- for tw_measure */

bool tw_session_is_sim(const tw_session *s) { return s && s->sim; }

tw_status tw_session_wait_covered(tw_session *s, double t, double timeout_s)
{
    struct timespec until;
    deadline_after(&until, timeout_s);
    pthread_mutex_lock(&s->mu);
    int rc = 0;
    while (!covered(s, t) && rc != ETIMEDOUT)
        rc = pthread_cond_timedwait(&s->cv, &s->mu, &until);
    bool ok = covered(s, t);
    pthread_mutex_unlock(&s->mu);
    return ok ? TW_OK : tw_fail(TW_EUNAVAIL, "the readings did not reach t = %.3f s within %g s", t, timeout_s);
}

tw_status tw_session_observations(tw_session *s, size_t d, double t0, double t1, tw_obs_series *out,
                                  tw_reading_model *m)
{
    if (!s || d >= s->ndev || s->sim) return tw_fail(TW_EINVAL, "tw_session_observations: no such GPU with readings");
    pthread_mutex_lock(&s->mu);
    const sdev *dv = &s->dev[d];
    *m = dv->model;
    tw_status st = line_obs(&dv->line, t0, t1, out);
    pthread_mutex_unlock(&s->mu);
    return st;
}
