/* The passes of an analysis: region detection, capacitance fit, level
 * estimation and the final integration. Each streams the source once and
 * keeps memory bounded (histograms, per-event accumulators). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "api/room.h"
#include "core/keyheap.h"
#include "core/pool.h"
#include "correct/analysis_internal.h"
#include "correct/fit.h"
#include "correct/integrate.h"

/* ------------------------------------------------------------ region detection */

/* Detection thresholds as fractions of the span between the idle and busy levels. */
#define REGION_ENTER 0.5
#define REGION_EXIT 0.4
#define REGION_MIN_SPAN_W 5.0

typedef struct hist_ctx {
    tw_hist all;
} hist_ctx;

static tw_status hist_on_corrected(void *ctx, double t, double raw, double corr)
{
    tw_hist_add(&((hist_ctx *)ctx)->all, corr);
    return TW_OK;
}

typedef struct detect_ctx {
    tw_analysis *a;
    double enter_w, exit_w;
    bool in_region;
    double start_s;
    bool have_prev;
    double prev_t, prev_w;
    unsigned count;
} detect_ctx;

/* Time at which the line (t0,y0)-(t1,y1) crosses level y. */
static double crossing(double t0, double y0, double t1, double y1, double y)
{
    return y1 == y0 ? t1 : t0 + (y - y0) * (t1 - t0) / (y1 - y0);
}

static tw_status add_region(detect_ctx *d, double end_s)
{
    char name[32];
    snprintf(name, sizeof name, "region%u", ++d->count);
    tw_event e = {.name = name,
                  .start_s = d->start_s,
                  .end_s = end_s,
                  .device = -1,
                  .stream = -1,
                  .true_energy_j = NAN,
                  .kind = "region"};
    return tw_events_add(d->a->regions, &e);
}

static tw_status detect_on_corrected(void *ctx, double t, double raw, double corr)
{
    detect_ctx *d = ctx;
    tw_status st = TW_OK;
    if (!d->in_region && corr > d->enter_w) {
        d->in_region = true;
        d->start_s = d->have_prev ? crossing(d->prev_t, d->prev_w, t, corr, d->enter_w) : t;
    } else if (d->in_region && corr < d->exit_w) {
        d->in_region = false;
        st = add_region(d, crossing(d->prev_t, d->prev_w, t, corr, d->exit_w));
    }
    d->have_prev = true;
    d->prev_t = t;
    d->prev_w = corr;
    return st;
}

static tw_status detect_on_end(void *ctx)
{
    detect_ctx *d = ctx;
    return d->in_region ? add_region(d, d->prev_t) : TW_OK;
}

tw_status tw_pass_detect_regions(tw_analysis *a, tw_sensor *src, size_t reading)
{
    hist_ctx h;
    if (tw_hist_init(&h.all)) return tw_fail(TW_ENOMEM, "out of memory");
    tw_pass pass = {&h, NULL, hist_on_corrected, NULL, NULL, 0, 0};
    tw_status st = tw_run_pass(a, src, reading, &pass);
    double lo = tw_hist_quantile(&h.all, 0.05), hi = tw_hist_quantile(&h.all, 0.995);
    tw_hist_free(&h.all);
    if (st != TW_OK) return st;
    if (!(hi - lo >= REGION_MIN_SPAN_W)) return TW_OK; /* flat trace: no activity to find */
    detect_ctx d = {.a = a, .enter_w = lo + REGION_ENTER * (hi - lo), .exit_w = lo + REGION_EXIT * (hi - lo)};
    tw_pass dp = {&d, NULL, detect_on_corrected, detect_on_end, NULL, 0, 0};
    return tw_run_pass(a, src, reading, &dp);
}

/* ------------------------------------------------------------ capacitance fit */

#define FIT_MAX_S 10.0
#define FIT_MAX_SAMPLES 2000000

typedef struct fit_ctx {
    double t1, t2;
    double *t, *w;
    size_t n, cap;
    bool oom;
} fit_ctx;

static tw_status fit_on_corrected(void *ctx, double t, double raw, double corr)
{
    fit_ctx *f = ctx;
    if (t < f->t1 || t > f->t2 || f->n >= FIT_MAX_SAMPLES) return TW_OK;
    if (f->n == f->cap) {
        size_t cap = f->cap ? 2 * f->cap : 1024;
        double *nt = realloc(f->t, cap * sizeof *nt);
        if (nt) f->t = nt;
        double *nw = nt ? realloc(f->w, cap * sizeof *nw) : NULL;
        if (nw) f->w = nw;
        if (!nt || !nw) return tw_fail(TW_ENOMEM, "out of memory while collecting the step response");
        f->cap = cap;
    }
    f->t[f->n] = t;
    f->w[f->n] = raw;
    f->n++;
    return TW_OK;
}

/* The first of the longest events (a replay of the feed). */
typedef struct longest_ctx {
    tw_event e;
    bool any;
} longest_ctx;

static tw_status longest_on_event(void *ctx, const tw_event *e)
{
    longest_ctx *l = ctx;
    if (!l->any || e->end_s - e->start_s > l->e.end_s - l->e.start_s) l->e = *e;
    l->any = true;
    return TW_OK;
}

tw_status tw_pass_fit(tw_analysis *a, tw_sensor *src, size_t reading)
{
    longest_ctx l = {.any = false};
    tw_status st = a->feed ? tw_feed_replay_fields(a->feed, TW_FEED_SPAN, longest_on_event, &l) : TW_OK;
    if (st != TW_OK) return st;
    if (!l.any)
        return tw_fail(TW_ENUMERIC, "cannot fit the capacitance: no event or activity to take a step response from");
    const tw_event *e = &l.e; /* its name stays valid: the feed's strings live as long as its source */
    double span = e->end_s - e->start_s;
    fit_ctx f = {.t1 = e->start_s, .t2 = e->start_s + (span < FIT_MAX_S ? span : FIT_MAX_S)};
    tw_pass pass = {&f, NULL, fit_on_corrected, NULL, NULL, 0, 0};
    st = tw_run_pass(a, src, reading, &pass);
    tw_step_fit fit;
    if (st == TW_OK && tw_fit_step(f.t, f.w, f.n, e->start_s, &fit) != 0)
        st = tw_fail(TW_ENUMERIC,
                     "cannot fit the capacitance: event '%s' (%zu distinct readings) shows no step response", e->name,
                     f.n);
    free(f.t);
    free(f.w);
    if (st != TW_OK) return st;
    a->c_s = fit.c_s;
    a->fitted = true;
    a->fit_rms_w = fit.rms_w;
    return TW_OK;
}

/* ------------------------------------------------------------ idle and active-idle levels */

/* Where the corrected power shows active idle: after an event ends, once the
 * slope window has passed, until the K20's hold ends or the next event starts. */
#define POST_SKIP_S 0.1
#define POST_SPAN_S 3.0
#define PRE_MARGIN_S 0.1
#define MIN_LEVEL_SAMPLES 10

/* An event's window of active idle, [end + skip, min(end + span, next start - margin)]
 * where "next start" is the first event start at or after its end (+inf when none). */
typedef struct post_win {
    double end_s, next_s;
    bool next_known; /* an event starting at or after its end has come */
    bool reached;    /* a sample at or after the window's start has come */
} post_win;

/* The samples meet the windows in time order with the events fed a margin
 * ahead of them (pass lead PRE_MARGIN_S): a sample is in the windows' union
 * when a window begun before it ends at or after it. A window whose next
 * start is not known yet ends at end + span for the samples that can come
 * before that start is fed. */
typedef struct levels_ctx {
    tw_hist all, pre, post;
    double pre_end_s;             /* samples before it: the idle before the first event */
    tw_pool wins;                 /* post_win, while not both reached and known */
    tw_keyheap to_reach, no_next; /* by window start; by event end */
    double last_start;
    double max_hi;   /* the latest end of the windows reached and known */
    double open_end; /* the latest event end of the windows reached before their next start was known */
    bool any_event;
} levels_ctx;

static post_win *win_at(levels_ctx *l, size_t id) { return tw_pool_at(&l->wins, id); }

/* A known window's end, and whether it is one (the old list kept only hi > lo). */
static bool window_hi(const post_win *w, double *hi)
{
    double lo = w->end_s + POST_SKIP_S, next = w->next_s - PRE_MARGIN_S;
    *hi = w->end_s + POST_SPAN_S;
    if (next < *hi) *hi = next;
    return *hi > lo;
}

static void settle(levels_ctx *l, size_t id)
{
    double hi;
    if (window_hi(win_at(l, id), &hi) && hi > l->max_hi) l->max_hi = hi;
    tw_pool_release(&l->wins, id);
}

static tw_status levels_on_event(void *ctx, const tw_event *e)
{
    levels_ctx *l = ctx;
    if (!l->any_event) l->pre_end_s = e->start_s - PRE_MARGIN_S;
    l->any_event = true;
    l->last_start = e->start_s;
    size_t id;
    if (!tw_pool_alloc(&l->wins, &id)) return tw_fail(TW_ENOMEM, "out of memory");
    *win_at(l, id) = (post_win){.end_s = e->end_s, .next_s = INFINITY};
    if (!tw_keyheap_push(&l->to_reach, e->end_s + POST_SKIP_S, id) || !tw_keyheap_push(&l->no_next, e->end_s, id))
        return tw_fail(TW_ENOMEM, "out of memory");
    /* this start is the next one of every event that ended at or before it (itself when it has no length) */
    while (tw_keyheap_pop_upto(&l->no_next, e->start_s, &id)) {
        post_win *w = win_at(l, id);
        w->next_s = e->start_s;
        w->next_known = true;
        if (w->reached) settle(l, id);
    }
    return TW_OK;
}

static bool in_post_window(levels_ctx *l, double t)
{
    size_t id;
    while (tw_keyheap_pop_upto(&l->to_reach, t, &id)) {
        post_win *w = win_at(l, id);
        w->reached = true;
        if (w->next_known)
            settle(l, id);
        else if (w->end_s > l->open_end)
            l->open_end = w->end_s;
    }
    if (l->max_hi >= t) return true;
    /* a window reached and still open: its next start is after the samples fed so far */
    double e = l->open_end;
    return e > l->last_start && e + POST_SPAN_S > e + POST_SKIP_S && e + POST_SPAN_S >= t;
}

static tw_status levels_on_corrected(void *ctx, double t, double raw, double corr)
{
    levels_ctx *l = ctx;
    tw_hist_add(&l->all, corr);
    if (t < l->pre_end_s) tw_hist_add(&l->pre, corr);
    if (in_post_window(l, t)) tw_hist_add(&l->post, corr);
    return TW_OK;
}

static void levels_free(levels_ctx *l)
{
    tw_hist_free(&l->all);
    tw_hist_free(&l->pre);
    tw_hist_free(&l->post);
    tw_pool_free(&l->wins);
    tw_keyheap_free(&l->to_reach);
    tw_keyheap_free(&l->no_next);
}

tw_status tw_pass_levels(tw_analysis *a, tw_sensor *src, size_t reading)
{
    levels_ctx l = {.pre_end_s = INFINITY, .last_start = -INFINITY, .max_hi = -INFINITY, .open_end = -INFINITY};
    tw_pool_init(&l.wins, sizeof(post_win));
    if (tw_hist_init(&l.all) || tw_hist_init(&l.pre) || tw_hist_init(&l.post)) {
        levels_free(&l);
        return tw_fail(TW_ENOMEM, "out of memory");
    }
    tw_pass pass = {&l, NULL, levels_on_corrected, NULL, levels_on_event, PRE_MARGIN_S, TW_FEED_SPAN};
    tw_status st = tw_run_pass_with_events(a, src, reading, &pass);
    if (st == TW_OK) {
        double idle = l.pre.count >= MIN_LEVEL_SAMPLES ? tw_hist_quantile(&l.pre, 0.5) : tw_hist_quantile(&l.all, 0.05);
        if (isnan(a->idle_w)) a->idle_w = idle;
        double active = l.post.count >= MIN_LEVEL_SAMPLES ? tw_hist_quantile(&l.post, 0.5) : a->idle_w;
        if (isnan(a->active_idle_w)) a->active_idle_w = active;
    }
    levels_free(&l);
    return st;
}

/* ------------------------------------------------------------ final integration */

typedef enum phase { PH_WAIT, PH_IN, PH_TAIL3, PH_TAIL4, PH_DONE } phase;

/* What the naive methods need of one event, from the raw readings. */
typedef struct raw_acc {
    phase ph;
    double cap_s; /* the next event's start: no tail beyond it */
    double int_in, int_tail3, int_tail4;
    double t3, t4;
    int sign_at_t2; /* side of active idle the reading was on at t2 */
    double sum_in;  /* readings within t1..t2 */
    uint64_t n_in;
    double sum_bump, first_bump, last_bump; /* readings within t1..t4 */
    uint64_t n_bump;
    double papi_w;
    bool papi_set;
} raw_acc;

/* One event while the final pass holds it: from when the feed hands it over
 * until its energies are final and handed on. */
typedef struct ev_slot {
    tw_event e;
    size_t index; /* its place in the feed */
    raw_acc raw;
    double corr_j;     /* trapezoid of the corrected samples over t1..t2 */
    double meas_j;     /* trapezoid of the distinct readings over t1..t2 */
    double p1_w, p2_w; /* distinct readings interpolated at t1 and t2 */
    bool raw_done, corr_done, next_known, finished;
} ev_slot;

typedef struct final_ctx {
    tw_analysis *a;
    tw_pool slots;  /* ev_slot, the events held */
    size_t *active; /* slots in raw phases WAIT..TAIL4 */
    size_t n_active, cap_active;
    size_t *corr_wait; /* slots not yet met by a corrected sample, by start: [off_wait, n_wait) */
    size_t off_wait, n_wait, cap_wait;
    size_t *corr_active; /* slots started and not ended before the last corrected sample */
    size_t n_corr_active, cap_corr_active;
    tw_keyheap no_next; /* slots by end whose next start (no tail beyond it) has not come */
    size_t next_index;
    bool have_raw;
    double raw_t, raw_w;
    bool have_corr;
    double corr_t, corr_w, corr_raw_w;
    double pp_t, pp_w; /* the distinct reading before (corr_t, corr_raw_w) */
    uint64_t n_distinct;
    double total_j, dynamic_j;
    double tol_w;
    tw_trace_writer *writer;
} final_ctx;

static ev_slot *slot_at(const final_ctx *f, size_t id) { return tw_pool_at(&f->slots, id); }

static int side(double w, double level) { return (w > level) - (w < level); }

static void count_sample(raw_acc *r, double t, double w, const tw_event *e)
{
    if (t >= e->start_s && t <= e->end_s) {
        r->sum_in += w;
        r->n_in++;
    }
    if (t < e->start_s) return;
    if (!r->n_bump) r->first_bump = w;
    r->last_bump = w;
    r->sum_bump += w;
    r->n_bump++;
}

/* Advances one event over the raw segment (ta,ya)-(tb,yb). Its cap (the
 * next start) is +inf while unknown: that start is then after tb. */
static void raw_segment(final_ctx *f, raw_acc *r, const tw_event *e, double ta, double ya, double tb, double yb)
{
    const double ai = f->a->active_idle_w, idle = f->a->idle_w;
    if (r->ph == PH_WAIT) {
        if (tb < e->start_s) return;
        r->ph = PH_IN;
    }
    if (r->ph == PH_IN) {
        r->int_in += tw_seg_integral(ta, ya, tb, yb, e->start_s, e->end_s);
        if (ta <= e->end_s && e->end_s < tb) {
            r->papi_w = ya;
            r->papi_set = true;
        }
        if (tb <= e->end_s) {
            count_sample(r, tb, yb, e);
            return;
        }
        double y2 = tb > ta ? ya + (yb - ya) * (e->end_s - ta) / (tb - ta) : yb;
        r->sign_at_t2 = side(y2, ai);
        r->ph = PH_TAIL3;
    }
    double lo = r->ph == PH_TAIL3 ? e->end_s : r->t3;
    double hi = tb < r->cap_s ? tb : r->cap_s;
    double part = tw_seg_integral(ta, ya, tb, yb, lo, hi);
    if (r->ph == PH_TAIL3)
        r->int_tail3 += part;
    else
        r->int_tail4 += part;
    if (tb >= r->cap_s) {
        if (r->ph == PH_TAIL3) r->t3 = r->cap_s;
        r->t4 = r->cap_s;
        r->ph = PH_DONE;
        return;
    }
    count_sample(r, tb, yb, e);
    if (r->ph == PH_TAIL3 && (fabs(yb - ai) <= f->tol_w || side(yb, ai) != r->sign_at_t2)) {
        r->t3 = tb;
        r->ph = PH_TAIL4;
    } else if (r->ph == PH_TAIL4 && yb <= idle + f->tol_w) {
        r->t4 = tb;
        r->ph = PH_DONE;
    }
}

static void set_all_nan(tw_event_energy *r)
{
    for (int m = 0; m < TW_METHOD_COUNT; m++)
        r->energy_j[m] = NAN;
    r->split = (tw_energy_split){NAN, NAN, NAN};
}

/* The RC model P_true = P + C dP/dt integrates exactly over [t1, t2] to
 * the readings' integral plus C (P(t2) - P(t1)): no slope samples, so no
 * smearing of the steps at the event's edges. */
static double corrected_exact(const final_ctx *f, const ev_slot *s)
{
    return s->meas_j + f->a->c_s * (s->p2_w - s->p1_w);
}

/* Within the data read: else no method can say. */
static bool covered(const tw_analysis *a, const tw_event *e)
{
    return e->start_s >= a->t_start_s && e->end_s <= a->t_end_s;
}

static void finish_event(const tw_analysis *a, const tw_event *e, const raw_acc *r, double corr_j, double sampled_j,
                         tw_event_energy *out)
{
    out->size = sizeof *out;
    double dur = e->end_s - e->start_s;
    if (!covered(a, e)) {
        set_all_nan(out);
        return;
    }
    double *en = out->energy_j;
    en[TW_METHOD_CORRECTED] = corr_j;
    en[TW_METHOD_RAW_T1_T2] = r->int_in;
    en[TW_METHOD_RAW_T1_T3] = r->int_in + r->int_tail3;
    en[TW_METHOD_RAW_T1_T4] = r->int_in + r->int_tail3 + r->int_tail4;
    en[TW_METHOD_FIXED_INTERVAL] = r->n_bump >= 2 ? (r->t4 - e->start_s) / (double)(r->n_bump - 1) *
                                                        (r->sum_bump - 0.5 * (r->first_bump + r->last_bump))
                                                  : NAN;
    en[TW_METHOD_MEAN_X_RUNTIME] = r->n_bump ? r->sum_bump / (double)r->n_bump * dur : NAN;
    en[TW_METHOD_PAPI] = r->papi_set ? r->papi_w * dur : NAN;
    en[TW_METHOD_MTSM] = r->n_in ? r->sum_in / (double)r->n_in * dur : NAN;
    en[TW_METHOD_CORRECTED_SAMPLED] = sampled_j;
    out->split.idle_j = a->idle_w * dur;
    out->split.active_idle_j = (a->active_idle_w - a->idle_w) * dur;
    out->split.dynamic_j = corr_j - a->active_idle_w * dur;
}

/* An event whose energies are final: handed on, and its slot freed once no
 * start is awaited for it either. */
static tw_status finish_slot(final_ctx *f, size_t id)
{
    ev_slot *s = slot_at(f, id);
    tw_event_energy r;
    finish_event(f->a, &s->e, &s->raw, corrected_exact(f, s), s->corr_j, &r);
    if (isfinite(r.split.dynamic_j)) f->dynamic_j += r.split.dynamic_j;
    s->finished = true;
    tw_analysis *a = f->a;
    if (!isnan(s->e.true_energy_j)) a->any_truth = true;
    if (!covered(a, &s->e) && (!a->outside_any || s->index < a->outside_index)) {
        a->outside_any = true;
        a->outside_index = s->index;
        a->outside = s->e;
    }
    tw_status st = a->keep ? tw_analysis_keep(a, s->index, &r) : TW_OK;
    if (st == TW_OK && a->on_event) st = a->on_event(a->on_event_ctx, s->index, &s->e, &r);
    if (s->next_known) tw_pool_release(&f->slots, id);
    return st;
}

static tw_status push_id(size_t **v, size_t *n, size_t *cap, size_t id)
{
    size_t off = 0, moved;
    tw_status st = tw_room_for_one((void **)v, sizeof **v, &off, n, cap, 64, &moved);
    if (st == TW_OK) (*v)[(*n)++] = id;
    return st;
}

static tw_status final_on_event(void *ctx, const tw_event *e)
{
    final_ctx *f = ctx;
    size_t id;
    if (!tw_pool_alloc(&f->slots, &id)) return tw_fail(TW_ENOMEM, "out of memory");
    ev_slot *s = slot_at(f, id);
    s->e = *e;
    s->index = f->next_index++;
    s->raw.cap_s = INFINITY;
    size_t moved;
    tw_status st = push_id(&f->active, &f->n_active, &f->cap_active, id);
    if (st == TW_OK)
        st = tw_room_for_one((void **)&f->corr_wait, sizeof *f->corr_wait, &f->off_wait, &f->n_wait, &f->cap_wait, 64,
                             &moved);
    if (st != TW_OK) return st;
    f->corr_wait[f->n_wait++] = id;
    if (!tw_keyheap_push(&f->no_next, e->end_s, id)) return tw_fail(TW_ENOMEM, "out of memory");
    /* this start caps the tail of every event that ended at or before it (itself when it has no length) */
    while (tw_keyheap_pop_upto(&f->no_next, e->start_s, &id)) {
        ev_slot *o = slot_at(f, id);
        o->raw.cap_s = e->start_s;
        o->next_known = true;
        if (o->finished) tw_pool_release(&f->slots, id);
    }
    return TW_OK;
}

static tw_status final_on_raw(void *ctx, double t, double w)
{
    final_ctx *f = ctx;
    double ta = f->have_raw ? f->raw_t : t, ya = f->have_raw ? f->raw_w : w;
    size_t keep = 0;
    tw_status st = TW_OK;
    for (size_t i = 0; i < f->n_active; i++) {
        size_t id = f->active[i];
        ev_slot *s = slot_at(f, id);
        raw_segment(f, &s->raw, &s->e, ta, ya, t, w);
        if (s->raw.ph != PH_DONE) {
            f->active[keep++] = id;
            continue;
        }
        s->raw_done = true;
        if (s->corr_done && st == TW_OK) st = finish_slot(f, id);
    }
    f->n_active = keep;
    f->have_raw = true;
    f->raw_t = t;
    f->raw_w = w;
    return st;
}

static tw_status write_corrected(final_ctx *f, double t, double raw, double corr)
{
    double v[2] = {raw, corr}, ts[2] = {t, t};
    uint8_t ok[2] = {1, 1};
    tw_row row = {t, 2, v, ts, ok};
    return tw_trace_writer_write(f->writer, &row);
}

/* The line through (t0,y0) and (t1,y1) at t; y1 when the points coincide. */
static double on_line(double t0, double y0, double t1, double y1, double t)
{
    return t1 > t0 ? y0 + (y1 - y0) * (t - t0) / (t1 - t0) : y1;
}

/* One segment between distinct readings, for one event: the sampled corrected
 * integral, the readings' integral and the reading at the event's edges.
 * Activity changes at an edge, so the reading bends there: its value at the
 * edge comes from the readings before it (extrapolated), not from a chord
 * across the bend. */
static void corrected_segment(final_ctx *f, ev_slot *s, double ta, double ca, double ra, double tb, double cb,
                              double rb)
{
    const tw_event *e = &s->e;
    s->corr_j += tw_seg_integral(ta, ca, tb, cb, e->start_s, e->end_s);
    s->meas_j += tw_seg_integral(ta, ra, tb, rb, e->start_s, e->end_s);
    bool have_pp = f->n_distinct >= 3;
    if (ta <= e->start_s && e->start_s < tb)
        s->p1_w = have_pp ? on_line(f->pp_t, f->pp_w, ta, ra, e->start_s) : on_line(ta, ra, tb, rb, e->start_s);
    if (ta < e->end_s && e->end_s <= tb)
        s->p2_w = have_pp ? on_line(f->pp_t, f->pp_w, ta, ra, e->end_s) : on_line(ta, ra, tb, rb, e->end_s);
}

/* The events that meet the corrected segment [ta, t]: a list of those
 * running, not a scan from the first unfinished one, which a long event
 * would hold back (every later event then scanned at every sample: quadratic). */
static tw_status corrected_events(final_ctx *f, double ta, double ya, double t, double corr, double raw)
{
    while (f->off_wait < f->n_wait && slot_at(f, f->corr_wait[f->off_wait])->e.start_s <= t) {
        tw_status st = push_id(&f->corr_active, &f->n_corr_active, &f->cap_corr_active, f->corr_wait[f->off_wait]);
        if (st != TW_OK) return st;
        f->off_wait++;
    }
    size_t keep = 0;
    tw_status st = TW_OK;
    for (size_t i = 0; i < f->n_corr_active; i++) {
        size_t id = f->corr_active[i];
        ev_slot *s = slot_at(f, id);
        if (s->e.end_s < ta) { /* ended before this segment: done */
            s->corr_done = true;
            if (s->raw_done && st == TW_OK) st = finish_slot(f, id);
            continue;
        }
        f->corr_active[keep++] = id;
        corrected_segment(f, s, ta, ya, f->corr_raw_w, t, corr, raw);
    }
    f->n_corr_active = keep;
    return st;
}

static tw_status final_on_corrected(void *ctx, double t, double raw, double corr)
{
    final_ctx *f = ctx;
    if (f->have_corr) {
        double ta = f->corr_t, ya = f->corr_w;
        f->total_j += tw_seg_integral(ta, ya, t, corr, ta, t);
        tw_status st = corrected_events(f, ta, ya, t, corr, raw);
        if (st != TW_OK) return st;
    }
    f->pp_t = f->corr_t;
    f->pp_w = f->corr_raw_w;
    f->have_corr = true;
    f->corr_t = t;
    f->corr_w = corr;
    f->corr_raw_w = raw;
    f->n_distinct++;
    return f->writer ? write_corrected(f, t, raw, corr) : TW_OK;
}

typedef struct held {
    size_t index, id;
} held;

static int cmp_held(const void *x, const void *y)
{
    const held *a = x, *b = y;
    return (a->index > b->index) - (a->index < b->index);
}

/* The events still held when the trace ends, in the feed's order. */
static tw_status finish_held(final_ctx *f)
{
    size_t n = 0;
    for (size_t id = 0; id < f->slots.n; id++)
        n += !slot_at(f, id)->finished; /* a freed slot was finished first */
    held *h = malloc((n ? n : 1) * sizeof *h);
    if (!h) return tw_fail(TW_ENOMEM, "out of memory");
    n = 0;
    for (size_t id = 0; id < f->slots.n; id++)
        if (!slot_at(f, id)->finished) h[n++] = (held){slot_at(f, id)->index, id};
    qsort(h, n, sizeof *h, cmp_held);
    tw_status st = TW_OK;
    for (size_t i = 0; i < n && st == TW_OK; i++)
        st = finish_slot(f, h[i].id);
    free(h);
    return st;
}

static tw_status final_on_end(void *ctx)
{
    final_ctx *f = ctx;
    for (size_t i = 0; i < f->n_active; i++) {
        raw_acc *r = &slot_at(f, f->active[i])->raw;
        if (r->ph == PH_TAIL3) r->t3 = f->raw_t;
        if (r->ph == PH_TAIL3 || r->ph == PH_TAIL4) r->t4 = f->raw_t;
    }
    return finish_held(f);
}

static void finish_totals(tw_analysis *a, double total_j, double dynamic_j)
{
    a->total_j = total_j;
    a->total_split.idle_j = a->idle_w * (a->t_end_s - a->t_start_s);
    a->total_split.dynamic_j = dynamic_j;
    a->total_split.active_idle_j = total_j - a->total_split.idle_j - dynamic_j;
}

static tw_status open_writer(tw_analysis *a, tw_trace_writer **w)
{
    static const char *const names[] = {"power_w", "corrected_power_w"};
    tw_status st = tw_trace_writer_open(a->opt.corrected_path, 2, names, false, w);
    if (st != TW_OK) return st;
    char note[160];
    snprintf(note, sizeof note,
             "truewatt %s corrected power: repeats dropped, RC correction with C = %.6g s, slope half width %d",
             tw_version(), a->c_s, a->opt.slope_half_width);
    return tw_trace_writer_comment(*w, note);
}

static void final_free(final_ctx *f)
{
    tw_pool_free(&f->slots);
    free(f->active);
    free(f->corr_wait);
    free(f->corr_active);
    tw_keyheap_free(&f->no_next);
}

tw_status tw_pass_final(tw_analysis *a, tw_sensor *src, size_t reading)
{
    final_ctx f = {.a = a};
    tw_pool_init(&f.slots, sizeof(ev_slot));
    f.tol_w = fmax(0.5, 0.01 * fabs(a->active_idle_w));
    tw_status st = a->opt.corrected_path ? open_writer(a, &f.writer) : TW_OK;
    if (st == TW_OK) {
        tw_pass pass = {&f, final_on_raw, final_on_corrected, final_on_end, final_on_event, 0, TW_FEED_ALL};
        st = tw_run_pass_with_events(a, src, reading, &pass);
    }
    if (f.writer) {
        tw_status wst = tw_trace_writer_close(f.writer);
        if (st == TW_OK) st = wst;
    }
    if (st == TW_OK) finish_totals(a, f.total_j, f.dynamic_j);
    final_free(&f);
    return st;
}
