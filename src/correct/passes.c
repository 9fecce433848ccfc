/* The passes of an analysis: region detection, capacitance fit, level
 * estimation and the final integration. Each streams the source once and
 * keeps memory bounded (histograms, per-event accumulators). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
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
    return tw_events_add(d->a->events, &e);
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
    tw_pass pass = {&h, NULL, hist_on_corrected, NULL};
    tw_status st = tw_run_pass(a, src, reading, &pass);
    double lo = tw_hist_quantile(&h.all, 0.05), hi = tw_hist_quantile(&h.all, 0.995);
    tw_hist_free(&h.all);
    if (st != TW_OK) return st;
    if (!(hi - lo >= REGION_MIN_SPAN_W)) return TW_OK; /* flat trace: no activity to find */
    detect_ctx d = {.a = a, .enter_w = lo + REGION_ENTER * (hi - lo), .exit_w = lo + REGION_EXIT * (hi - lo)};
    tw_pass dp = {&d, NULL, detect_on_corrected, detect_on_end};
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

static size_t longest_event(const tw_events *ev)
{
    size_t best = 0;
    for (size_t i = 1; i < tw_events_count(ev); i++) {
        const tw_event *e = tw_events_get(ev, i), *b = tw_events_get(ev, best);
        if (e->end_s - e->start_s > b->end_s - b->start_s) best = i;
    }
    return best;
}

tw_status tw_pass_fit(tw_analysis *a, tw_sensor *src, size_t reading)
{
    if (tw_events_count(a->events) == 0)
        return tw_fail(TW_ENUMERIC, "cannot fit the capacitance: no event or activity to take a step response from");
    const tw_event *e = tw_events_get(a->events, longest_event(a->events));
    double span = e->end_s - e->start_s;
    fit_ctx f = {.t1 = e->start_s, .t2 = e->start_s + (span < FIT_MAX_S ? span : FIT_MAX_S)};
    tw_pass pass = {&f, NULL, fit_on_corrected, NULL};
    tw_status st = tw_run_pass(a, src, reading, &pass);
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

typedef struct window {
    double lo, hi;
} window;

typedef struct levels_ctx {
    tw_hist all, pre, post;
    double pre_end_s;
    window *post_w;
    size_t n_post, first;
} levels_ctx;

/* The windows are disjoint and in order (post_windows merges them), so one
 * pointer that only moves forward answers for the samples in time order. */
static bool in_post_window(levels_ctx *l, double t)
{
    while (l->first < l->n_post && l->post_w[l->first].hi < t)
        l->first++;
    return l->first < l->n_post && l->post_w[l->first].lo <= t;
}

static tw_status levels_on_corrected(void *ctx, double t, double raw, double corr)
{
    levels_ctx *l = ctx;
    tw_hist_add(&l->all, corr);
    if (t < l->pre_end_s) tw_hist_add(&l->pre, corr);
    if (in_post_window(l, t)) tw_hist_add(&l->post, corr);
    return TW_OK;
}

static int cmp_window(const void *x, const void *y)
{
    const window *a = x, *b = y;
    return (a->lo > b->lo) - (a->lo < b->lo);
}

/* First event start at or after t (events sorted by start), or +inf. */
static double next_start_after(const tw_events *ev, double t)
{
    size_t lo = 0, hi = tw_events_count(ev);
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (tw_events_get(ev, mid)->start_s < t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < tw_events_count(ev) ? tw_events_get(ev, lo)->start_s : INFINITY;
}

/* Sorted windows into their union: disjoint, in order; returns their count. */
static size_t merge_windows(window *w, size_t n)
{
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (m > 0 && w[i].lo <= w[m - 1].hi)
            w[m - 1].hi = fmax(w[m - 1].hi, w[i].hi);
        else
            w[m++] = w[i];
    }
    return m;
}

static size_t post_windows(const tw_events *ev, window *w)
{
    size_t n = 0;
    for (size_t i = 0; i < tw_events_count(ev); i++) {
        const tw_event *e = tw_events_get(ev, i);
        double lo = e->end_s + POST_SKIP_S, hi = e->end_s + POST_SPAN_S;
        double next = next_start_after(ev, e->end_s) - PRE_MARGIN_S;
        if (next < hi) hi = next;
        if (hi > lo) w[n++] = (window){lo, hi};
    }
    qsort(w, n, sizeof *w, cmp_window);
    return merge_windows(w, n);
}

static void levels_free(levels_ctx *l)
{
    tw_hist_free(&l->all);
    tw_hist_free(&l->pre);
    tw_hist_free(&l->post);
    free(l->post_w);
}

tw_status tw_pass_levels(tw_analysis *a, tw_sensor *src, size_t reading)
{
    size_t n = tw_events_count(a->events);
    levels_ctx l = {0};
    l.pre_end_s = n ? tw_events_get(a->events, 0)->start_s - PRE_MARGIN_S : INFINITY;
    l.post_w = malloc((n ? n : 1) * sizeof *l.post_w);
    if (!l.post_w || tw_hist_init(&l.all) || tw_hist_init(&l.pre) || tw_hist_init(&l.post)) {
        levels_free(&l);
        return tw_fail(TW_ENOMEM, "out of memory");
    }
    l.n_post = post_windows(a->events, l.post_w);
    tw_pass pass = {&l, NULL, levels_on_corrected, NULL};
    tw_status st = tw_run_pass(a, src, reading, &pass);
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

typedef struct final_ctx {
    tw_analysis *a;
    tw_event *ev; /* a flat copy of the events, sorted by start */
    size_t n_ev;
    raw_acc *raw;
    double *corr_j;      /* trapezoid of the corrected samples over t1..t2 */
    double *meas_j;      /* trapezoid of the distinct readings over t1..t2 */
    double *p1_w, *p2_w; /* distinct readings interpolated at t1 and t2 */
    size_t *active;      /* indices of events in raw phases IN..TAIL4 */
    size_t n_active, next_raw;
    size_t *corr_active; /* indices of events started and not ended before the last corrected sample */
    size_t n_corr_active, corr_next;
    bool have_raw;
    double raw_t, raw_w;
    bool have_corr;
    double corr_t, corr_w, corr_raw_w;
    double pp_t, pp_w; /* the distinct reading before (corr_t, corr_raw_w) */
    uint64_t n_distinct;
    double total_j;
    double tol_w;
    tw_trace_writer *writer;
} final_ctx;

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

/* Advances one event over the raw segment (ta,ya)-(tb,yb). */
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

static tw_status final_on_raw(void *ctx, double t, double w)
{
    final_ctx *f = ctx;
    while (f->next_raw < f->n_ev && f->ev[f->next_raw].start_s <= t)
        f->active[f->n_active++] = f->next_raw++;
    double ta = f->have_raw ? f->raw_t : t, ya = f->have_raw ? f->raw_w : w;
    size_t keep = 0;
    for (size_t i = 0; i < f->n_active; i++) {
        size_t k = f->active[i];
        raw_segment(f, &f->raw[k], &f->ev[k], ta, ya, t, w);
        if (f->raw[k].ph != PH_DONE) f->active[keep++] = k;
    }
    f->n_active = keep;
    f->have_raw = true;
    f->raw_t = t;
    f->raw_w = w;
    return TW_OK;
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

/* One segment between distinct readings, for event k: the sampled corrected
 * integral, the readings' integral and the reading at the event's edges.
 * Activity changes at an edge, so the reading bends there: its value at the
 * edge comes from the readings before it (extrapolated), not from a chord
 * across the bend. */
static void corrected_segment(final_ctx *f, size_t k, double ta, double ca, double ra, double tb, double cb, double rb)
{
    const tw_event *e = &f->ev[k];
    f->corr_j[k] += tw_seg_integral(ta, ca, tb, cb, e->start_s, e->end_s);
    f->meas_j[k] += tw_seg_integral(ta, ra, tb, rb, e->start_s, e->end_s);
    bool have_pp = f->n_distinct >= 3;
    if (ta <= e->start_s && e->start_s < tb)
        f->p1_w[k] = have_pp ? on_line(f->pp_t, f->pp_w, ta, ra, e->start_s) : on_line(ta, ra, tb, rb, e->start_s);
    if (ta < e->end_s && e->end_s <= tb)
        f->p2_w[k] = have_pp ? on_line(f->pp_t, f->pp_w, ta, ra, e->end_s) : on_line(ta, ra, tb, rb, e->end_s);
}

static tw_status final_on_corrected(void *ctx, double t, double raw, double corr)
{
    final_ctx *f = ctx;
    if (f->have_corr) {
        double ta = f->corr_t, ya = f->corr_w;
        f->total_j += tw_seg_integral(ta, ya, t, corr, ta, t);
        /* the events that meet [ta, t]: a list of those running, not a scan from
         * the first unfinished one, which a long event would hold back (every
         * later event then scanned at every sample: quadratic) */
        while (f->corr_next < f->n_ev && f->ev[f->corr_next].start_s <= t)
            f->corr_active[f->n_corr_active++] = f->corr_next++;
        size_t keep = 0;
        for (size_t i = 0; i < f->n_corr_active; i++) {
            size_t k = f->corr_active[i];
            if (f->ev[k].end_s < ta) continue; /* ended before this segment: done */
            f->corr_active[keep++] = k;
            corrected_segment(f, k, ta, ya, f->corr_raw_w, t, corr, raw);
        }
        f->n_corr_active = keep;
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

static tw_status final_on_end(void *ctx)
{
    final_ctx *f = ctx;
    for (size_t i = 0; i < f->n_active; i++) {
        raw_acc *r = &f->raw[f->active[i]];
        if (r->ph == PH_TAIL3) r->t3 = f->raw_t;
        if (r->ph == PH_TAIL3 || r->ph == PH_TAIL4) r->t4 = f->raw_t;
    }
    return TW_OK;
}

static void set_all_nan(tw_ev_result *r)
{
    for (int m = 0; m < TW_METHOD_COUNT; m++)
        r->energy_j[m] = NAN;
    r->split = (tw_energy_split){NAN, NAN, NAN};
}

/* The RC model P_true = P + C dP/dt integrates exactly over [t1, t2] to
 * the readings' integral plus C (P(t2) - P(t1)): no slope samples, so no
 * smearing of the steps at the event's edges. */
static double corrected_exact(const final_ctx *f, size_t k)
{
    return f->meas_j[k] + f->a->c_s * (f->p2_w[k] - f->p1_w[k]);
}

static void finish_event(const tw_analysis *a, const tw_event *e, const raw_acc *r, double corr_j, double sampled_j,
                         tw_ev_result *out)
{
    double dur = e->end_s - e->start_s;
    bool covered = e->start_s >= a->t_start_s && e->end_s <= a->t_end_s;
    if (!covered) {
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

static void finish_totals(tw_analysis *a, double total_j)
{
    double dyn = 0;
    for (size_t i = 0; i < tw_events_count(a->events); i++)
        if (isfinite(a->res[i].split.dynamic_j)) dyn += a->res[i].split.dynamic_j;
    a->total_j = total_j;
    a->total_split.idle_j = a->idle_w * (a->t_end_s - a->t_start_s);
    a->total_split.dynamic_j = dyn;
    a->total_split.active_idle_j = total_j - a->total_split.idle_j - dyn;
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

tw_status tw_pass_final(tw_analysis *a, tw_sensor *src, size_t reading)
{
    size_t n = tw_events_count(a->events);
    final_ctx f = {.a = a, .n_ev = n};
    f.ev = calloc(n ? n : 1, sizeof *f.ev);
    for (size_t i = 0; f.ev && i < n; i++)
        f.ev[i] = *tw_events_get(a->events, i);
    f.raw = calloc(n ? n : 1, sizeof *f.raw);
    f.corr_j = calloc(n ? n : 1, sizeof *f.corr_j);
    f.meas_j = calloc(n ? n : 1, sizeof *f.meas_j);
    f.p1_w = calloc(n ? n : 1, sizeof *f.p1_w);
    f.p2_w = calloc(n ? n : 1, sizeof *f.p2_w);
    f.active = calloc(n ? n : 1, sizeof *f.active);
    f.corr_active = calloc(n ? n : 1, sizeof *f.corr_active);
    a->res = calloc(n ? n : 1, sizeof *a->res);
    tw_status st = TW_OK;
    if (!f.ev || !f.raw || !f.corr_j || !f.meas_j || !f.p1_w || !f.p2_w || !f.active || !f.corr_active || !a->res)
        st = tw_fail(TW_ENOMEM, "out of memory");
    f.tol_w = fmax(0.5, 0.01 * fabs(a->active_idle_w));
    for (size_t i = 0; st == TW_OK && i < n; i++)
        f.raw[i].cap_s = next_start_after(a->events, f.ev[i].end_s);
    if (st == TW_OK && a->opt.corrected_path) st = open_writer(a, &f.writer);
    if (st == TW_OK) {
        tw_pass pass = {&f, final_on_raw, final_on_corrected, final_on_end};
        st = tw_run_pass(a, src, reading, &pass);
    }
    if (f.writer) {
        tw_status wst = tw_trace_writer_close(f.writer);
        if (st == TW_OK) st = wst;
    }
    if (st == TW_OK) {
        for (size_t i = 0; i < n; i++)
            finish_event(a, &f.ev[i], &f.raw[i], corrected_exact(&f, i), f.corr_j[i], &a->res[i]);
        finish_totals(a, f.total_j);
    }
    free(f.ev);
    free(f.raw);
    free(f.corr_j);
    free(f.meas_j);
    free(f.p1_w);
    free(f.p2_w);
    free(f.active);
    free(f.corr_active);
    return st;
}
