/* The window-aware estimator of event energies (correct/estimate.h).
 *
 * One sweep: the windows in order of their end, the events sorted by start
 * and a list of those that may still overlap a window. An event enters the
 * list when it starts before the window ends and leaves it when it ends
 * before every window still to come begins (the suffix minimum of the window
 * starts, so windows of uneven length that overlap are handled too). Cost:
 * O(n log n + m log m) for the sorts plus the list's length per window.
 *
 * Observations with a non-finite value or an empty window are skipped. A
 * non-finite idle level is TW_EINVAL. Events count whatever their kind
 * (kernels, copies, ...) except NVTX ranges, and only with a positive
 * duration; for tw_estimate_idle_w a NaN bound means no bound on that side. */
#include "correct/estimate.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"

typedef struct ev_ref {
    double start, end;
    size_t idx; /* in tw_events_get order */
} ev_ref;

typedef struct win {
    tw_obs o; /* the observation, for its weights */
    double t0, t1, p;
    double lo; /* the earliest start of this window and every later one */
} win;

static int by_start(const void *x, const void *y)
{
    const ev_ref *a = x, *b = y;
    if (a->start != b->start) return a->start < b->start ? -1 : 1;
    return a->idx < b->idx ? -1 : a->idx > b->idx;
}

static int by_end(const void *x, const void *y)
{
    const win *a = x, *b = y;
    if (a->t1 != b->t1) return a->t1 < b->t1 ? -1 : 1;
    return a->t0 < b->t0 ? -1 : a->t0 > b->t0;
}

/* The k-th smallest of v[0..n) (v reordered): quickselect, Hoare partition
 * (runs of equal values, common in quantized readings, split evenly). */
static double kth(double *v, size_t n, size_t k)
{
    size_t lo = 0, hi = n - 1;
    while (lo < hi) {
        double a = v[lo], b = v[lo + (hi - lo) / 2], c = v[hi];
        double pivot = a < b ? (b < c ? b : (a < c ? c : a)) : (a < c ? a : (b < c ? c : b));
        size_t i = lo, j = hi;
        for (;;) {
            while (v[i] < pivot)
                i++;
            while (v[j] > pivot)
                j--;
            if (i >= j) break;
            double t = v[i];
            v[i++] = v[j];
            v[j--] = t;
        }
        /* now v[lo..j] <= pivot <= v[j+1..hi] */
        if (k <= j)
            hi = j;
        else
            lo = j + 1;
    }
    return v[k];
}

static double median(double *v, size_t n)
{
    if (n == 0) return NAN;
    double upper = kth(v, n, n / 2);
    if (n % 2) return upper;
    double lower = v[0]; /* the largest of v[0 .. n/2), all <= upper after the selection */
    for (size_t i = 1; i < n / 2; i++)
        if (v[i] > lower) lower = v[i];
    return 0.5 * (lower + upper);
}

/* Events that draw power: not NVTX ranges, with a positive duration. */
static bool counts(const tw_event *e)
{
    return e && !(e->kind && strcmp(e->kind, "nvtx") == 0) && e->end_s > e->start_s;
}

/* The events that count, sorted by start (*ev NULL-safe when none). */
static tw_status collect_events(const tw_events *events, ev_ref **ev, size_t *nev)
{
    size_t m = tw_events_count(events);
    *nev = 0;
    *ev = malloc((m ? m : 1) * sizeof **ev);
    if (!*ev) return tw_fail(TW_ENOMEM, "out of memory (%zu events)", m);
    for (size_t i = 0; i < m; i++) {
        const tw_event *e = tw_events_get(events, i);
        if (counts(e)) (*ev)[(*nev)++] = (ev_ref){e->start_s, e->end_s, i};
    }
    qsort(*ev, *nev, sizeof **ev, by_start);
    return TW_OK;
}

/* The usable windows in [from, to], in order of their end, with the suffix minima. */
static tw_status collect_windows(const tw_obs *obs, size_t n, double from, double to, win **w, size_t *nw)
{
    *nw = 0;
    *w = malloc((n ? n : 1) * sizeof **w);
    if (!*w) return tw_fail(TW_ENOMEM, "out of memory (%zu observations)", n);
    bool sorted = true;
    for (size_t k = 0; k < n; k++) {
        const tw_obs *o = &obs[k];
        if (!isfinite(o->t0_s) || !isfinite(o->t1_s) || !isfinite(o->power_w) || !(o->t1_s > o->t0_s)) continue;
        if (o->t0_s < from || o->t1_s > to) continue;
        if (*nw && o->t1_s < (*w)[*nw - 1].t1) sorted = false;
        (*w)[(*nw)++] = (win){*o, o->t0_s, o->t1_s, o->power_w, 0};
    }
    if (!sorted) qsort(*w, *nw, sizeof **w, by_end);
    double lo = INFINITY;
    for (size_t k = *nw; k-- > 0;) {
        if ((*w)[k].t0 < lo) lo = (*w)[k].t0;
        (*w)[k].lo = lo;
    }
    return TW_OK;
}

typedef struct sweep {
    const ev_ref *ev;
    size_t nev, next;
    size_t *active; /* indices into ev */
    double *ov;     /* overlap of each active event with the current window */
    size_t nactive;
} sweep;

/* Moves to window `w`; returns the summed overlap, with ov[] filled. */
static double sweep_to(sweep *s, const win *w)
{
    while (s->next < s->nev && s->ev[s->next].start < w->t1)
        s->active[s->nactive++] = s->next++;
    size_t keep = 0;
    double sum = 0;
    for (size_t i = 0; i < s->nactive; i++) {
        const ev_ref *e = &s->ev[s->active[i]];
        if (!(e->end > w->lo)) continue;
        double lo = e->start > w->t0 ? e->start : w->t0;
        double hi = e->end < w->t1 ? e->end : w->t1;
        double ov = tw_obs_weight(&w->o, lo, hi);
        s->active[keep] = s->active[i];
        s->ov[keep] = ov;
        keep++;
        sum += ov;
    }
    s->nactive = keep;
    return sum;
}

static tw_status sweep_init(sweep *s, const ev_ref *ev, size_t nev)
{
    s->ev = ev;
    s->nev = nev;
    s->next = s->nactive = 0;
    s->active = malloc((nev ? nev : 1) * sizeof *s->active);
    s->ov = malloc((nev ? nev : 1) * sizeof *s->ov);
    if (!s->active || !s->ov) {
        free(s->active);
        free(s->ov);
        s->active = NULL;
        s->ov = NULL;
        return tw_fail(TW_ENOMEM, "out of memory (%zu events)", nev);
    }
    return TW_OK;
}

static void sweep_free(sweep *s)
{
    free(s->active);
    free(s->ov);
}

tw_status tw_estimate_events(const tw_obs *obs, size_t n, const tw_events *events, double idle_w,
                             tw_event_estimate *out)
{
    size_t m = tw_events_count(events);
    if (m && !out) return tw_fail(TW_EINVAL, "event estimates: no output array");
    if (n && !obs) return tw_fail(TW_EINVAL, "event estimates: no observations");
    if (!isfinite(idle_w)) return tw_fail(TW_EINVAL, "event estimates: the idle level is not finite (%g W)", idle_w);
    if (m == 0) return TW_OK;

    ev_ref *ev = NULL;
    win *w = NULL;
    size_t nev, nw;
    sweep s = {0};
    double *recv = calloc(m, sizeof *recv), *seen = calloc(m, sizeof *seen);
    tw_status st = recv && seen ? TW_OK : tw_fail(TW_ENOMEM, "out of memory (%zu events)", m);
    if (st == TW_OK) st = collect_events(events, &ev, &nev);
    if (st == TW_OK) st = collect_windows(obs, n, -INFINITY, INFINITY, &w, &nw);
    if (st == TW_OK) st = sweep_init(&s, ev, nev);
    if (st == TW_OK) {
        for (size_t k = 0; k < nw; k++) {
            double sum = sweep_to(&s, &w[k]);
            if (!(sum > 0)) continue;
            double share = (w[k].p - idle_w) * (w[k].t1 - w[k].t0) / sum;
            for (size_t i = 0; i < s.nactive; i++) {
                if (!(s.ov[i] > 0)) continue;
                size_t idx = ev[s.active[i]].idx;
                recv[idx] += share * s.ov[i];
                seen[idx] += s.ov[i];
            }
        }
        for (size_t i = 0; i < m; i++) {
            const tw_event *e = tw_events_get(events, i);
            tw_event_estimate *o = &out[i];
            double dur = e->end_s - e->start_s;
            if (!counts(e) || !(seen[i] > 0)) {
                *o = (tw_event_estimate){NAN, NAN, NAN, 0.0, 0.0};
                continue;
            }
            o->power_w = recv[i] / seen[i];
            o->dyn_j = o->power_w * dur;
            o->total_j = o->dyn_j + idle_w * dur;
            o->seen_s = seen[i];
            o->seen_frac = seen[i] / dur;
        }
    }
    sweep_free(&s);
    free(w);
    free(ev);
    free(recv);
    free(seen);
    return st;
}

double tw_estimate_idle_w(const tw_obs *obs, size_t n, const tw_events *events, double t_from_s, double t_to_s)
{
    if (!obs || n == 0) return NAN;
    double from = isnan(t_from_s) ? -INFINITY : t_from_s, to = isnan(t_to_s) ? INFINITY : t_to_s;
    ev_ref *ev = NULL;
    win *w = NULL;
    size_t nev, nw, nidle = 0;
    sweep s = {0};
    double level = NAN;
    tw_status st = collect_events(events, &ev, &nev);
    if (st == TW_OK) st = collect_windows(obs, n, from, to, &w, &nw);
    if (st == TW_OK) st = sweep_init(&s, ev, nev);
    double *p = NULL;
    if (st == TW_OK && !(p = malloc((nw ? nw : 1) * sizeof *p))) st = TW_ENOMEM;
    if (st == TW_OK) {
        for (size_t k = 0; k < nw; k++)
            if (!(sweep_to(&s, &w[k]) > 0)) p[nidle++] = w[k].p;
        level = median(p, nidle);
    }
    free(p);
    sweep_free(&s);
    free(w);
    free(ev);
    return level;
}
