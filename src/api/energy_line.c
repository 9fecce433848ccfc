/* A GPU's energy as a function of time, from one reading: see energy_line.h. */
#include "api/energy_line.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api/room.h"
#include "core/error.h"

/* The readings' own timestamps are microseconds (NVML): each edge of a span
 * is placed to within this. */
#define STAMP_RESOLUTION_S 1e-6
#define BASELINE_SPAN_S 1.0

void tw_line_init(tw_energy_line *l, tw_line_kind kind, const tw_reading_model *m)
{
    memset(l, 0, sizeof *l);
    l->kind = kind;
    double delay = m && isfinite(m->delay_s) ? m->delay_s : 0.0;
    /* a held boxcar value is the mean over the window before its update:
     * centred half a window earlier */
    double half = kind == TW_LINE_HOLD && m && isfinite(m->window_s) ? 0.5 * m->window_s : 0.0;
    l->shift_s = delay + half;
    l->capacitance_s =
        m && m->response == TW_RESP_RC && isfinite(m->capacitance_s) && kind == TW_LINE_TILES ? m->capacitance_s : 0.0;
    l->min_1s_w = NAN;
    l->min_tile_w = NAN;
}

void tw_line_free(tw_energy_line *l)
{
    free(l->k);
    memset(l, 0, sizeof *l);
}

double tw_line_start_s(const tw_energy_line *l) { return l->n > l->off ? l->k[l->off].t_s : INFINITY; }

double tw_line_end_s(const tw_energy_line *l) { return l->n >= l->off + 2 ? l->k[l->n - 1].t_s : -INFINITY; }

/* The first knot at or after t among [lo, hi], which holds it. */
static size_t bisect(const tw_energy_line *l, double t, size_t lo, size_t hi)
{
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (l->k[mid].t_s < t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The index of the first live knot at or after t (n when none). Most
 * lookups are near the end (the anchor's phase fits over its last reads, a
 * live region's end): galloping back from it keeps them in the last knots,
 * in cache, where a run's whole line (a report's NVTX range over an hour)
 * can be megabytes; then bisection. */
static size_t knot_at_or_after(const tw_energy_line *l, double t)
{
    size_t lo = l->off, hi = l->n; /* the answer is in [lo, hi] */
    for (size_t step = 1; hi - lo > step; step *= 2) {
        size_t p = hi - step;
        if (l->k[p].t_s < t) {
            lo = p + 1;
            break;
        }
        hi = p;
    }
    return bisect(l, t, lo, hi);
}

/* Whether knot g is at or before the first knot at or after t. */
static bool at_or_before(const tw_energy_line *l, double t, size_t g)
{
    return g >= l->off && g <= l->n && (g == l->off || l->k[g - 1].t_s < t);
}

/* Whether i is the first live knot at or after t: at or before it, and the
 * end or at or after t. The knots' times increase, so exactly one index is. */
static bool is_knot_at_or_after(const tw_energy_line *l, double t, size_t i)
{
    return at_or_before(l, t, i) && (i == l->n || l->k[i].t_s >= t);
}

/* knot_at_or_after from a guess at or before the answer (else from a
 * second one, else from the end): galloping forward from it, then
 * bisection. The index found is checked (is_knot_at_or_after) and, were it
 * wrong, looked up from the end: the same index whatever the guesses, only
 * fewer steps when they are good (lookups in order of time, each from the
 * one before). */
static size_t knot_from_guess(const tw_energy_line *l, double t, size_t guess, size_t second)
{
    if (!at_or_before(l, t, guess)) guess = second;
    if (!at_or_before(l, t, guess)) return knot_at_or_after(l, t);
    size_t lo = guess, hi = l->n; /* the answer is in [lo, hi] */
    for (size_t step = 1; lo < hi; step *= 2) {
        size_t p = hi - lo > step ? lo + step - 1 : hi - 1;
        if (!(l->k[p].t_s < t)) {
            hi = p;
            break;
        }
        lo = p + 1;
    }
    lo = bisect(l, t, lo, hi);
    return is_knot_at_or_after(l, t, lo) ? lo : knot_at_or_after(l, t);
}

/* F at t (inside the knots), i the first knot at or after t; *tile: the knot that ends t's tile. */
static double f_at_knot(const tw_energy_line *l, double t, size_t i, size_t *tile)
{
    if (i == l->off) {
        *tile = i + 1 < l->n ? i + 1 : i; /* the first knot itself: the tile after it */
        return l->k[i].f_j;
    }
    *tile = i;
    const tw_line_knot *a = &l->k[i - 1], *b = &l->k[i];
    return a->f_j + b->p_w * (t - a->t_s);
}

static double f_at(const tw_energy_line *l, double t, size_t *tile)
{
    return f_at_knot(l, t, knot_at_or_after(l, t), tile);
}

static void note_baseline(tw_energy_line *l)
{
    const tw_line_knot *last = &l->k[l->n - 1];
    if (l->n - l->off >= 2 && (isnan(l->min_tile_w) || last->p_w < l->min_tile_w)) l->min_tile_w = last->p_w;
    double from = last->t_s - BASELINE_SPAN_S;
    if (from < l->k[l->off].t_s) return;
    size_t tile;
    double mean = (last->f_j - f_at(l, from, &tile)) / BASELINE_SPAN_S;
    if (isnan(l->min_1s_w) || mean < l->min_1s_w) l->min_1s_w = mean;
}

static tw_status add_knot(tw_energy_line *l, double t, double f, double p)
{
    size_t moved; /* the knots' indices are not kept anywhere: a move needs no fixing */
    void *v = l->k;
    tw_status st = tw_room_for_one(&v, sizeof *l->k, &l->off, &l->n, &l->cap, 256, &moved);
    l->k = v;
    if (st != TW_OK) return st;
    l->k[l->n++] = (tw_line_knot){t, f, p};
    note_baseline(l);
    return TW_OK;
}

tw_status tw_line_push(tw_energy_line *l, double value, double stamp_s)
{
    if (!isfinite(value) || !isfinite(stamp_s)) return TW_OK;
    bool same = l->have_last && stamp_s == l->last_stamp_s;
    if (l->kind == TW_LINE_COUNTER) same = l->have_last && value == l->last_value;
    if (same) return TW_OK;
    double t = stamp_s - l->shift_s;
    bool first = l->n == l->off;
    const tw_line_knot *prev = first ? NULL : &l->k[l->n - 1];
    if (prev && !(t > prev->t_s)) return TW_OK; /* time never goes back on the line */
    tw_status st = TW_OK;
    switch (l->kind) {
    case TW_LINE_TILES: /* value: the mean power of (previous stamp, this stamp] */
        st = add_knot(l, t, first ? 0.0 : prev->f_j + value * (t - prev->t_s), value);
        break;
    case TW_LINE_COUNTER: /* value: cumulative energy */
        if (first) {
            st = add_knot(l, t, 0.0, NAN);
            l->origin_j = value;
        } else {
            double f = value - l->origin_j;
            st = add_knot(l, t, f, (f - prev->f_j) / (t - prev->t_s));
        }
        l->last_value = value;
        l->have_last = true;
        return st;
    case TW_LINE_HOLD: /* value holds from this update to the next */
        st = add_knot(l, t, first ? 0.0 : prev->f_j + l->last_value * (t - prev->t_s), first ? NAN : l->last_value);
        break;
    }
    l->last_value = value;
    l->last_stamp_s = stamp_s;
    l->have_last = true;
    return st;
}

/* The uncertainty of an edge in tile i: the tile's power is known as a
 * mean only, so the share inside the span may be off by the step to a
 * neighbouring tile's power. */
static double edge_sd_j(const tw_energy_line *l, size_t i, double p_here)
{
    if (i <= l->off || i >= l->n) return 0.0;
    double len = l->k[i].t_s - l->k[i - 1].t_s;
    double step = 0.0;
    if (i - 1 > l->off && isfinite(l->k[i - 1].p_w)) step = fmax(step, fabs(l->k[i].p_w - l->k[i - 1].p_w));
    if (i + 1 < l->n && isfinite(l->k[i + 1].p_w)) step = fmax(step, fabs(l->k[i + 1].p_w - l->k[i].p_w));
    double res = STAMP_RESOLUTION_S * fabs(p_here);
    return sqrt(len * step * len * step / 12.0 + res * res);
}

/* tw_line_cum_j with t's knot, *at, looked up from the guesses *at and
 * then second (SIZE_MAX: none; knot_from_guess). */
static double cum_from(const tw_energy_line *l, double t, size_t *at, size_t second, size_t *tile)
{
    if (l->n < l->off + 2 || !(t >= l->k[l->off].t_s) || !(t <= l->k[l->n - 1].t_s)) return NAN;
    size_t i;
    *at = knot_from_guess(l, t, *at, second);
    double f = f_at_knot(l, t, *at, &i);
    if (tile) *tile = i;
    double p = l->k[i].p_w;
    return l->capacitance_s > 0 && isfinite(p) ? f + l->capacitance_s * p : f;
}

double tw_line_cum_j(const tw_energy_line *l, double t, size_t *tile)
{
    size_t at = SIZE_MAX;
    return cum_from(l, t, &at, SIZE_MAX, tile);
}

size_t tw_line_seek(const tw_energy_line *l, double t, size_t guess) { return knot_from_guess(l, t, guess, SIZE_MAX); }

double tw_line_cum_at_j(const tw_energy_line *l, double t, size_t *at, size_t second)
{
    return cum_from(l, t, at, second, NULL);
}

double tw_line_edge_sd_j(const tw_energy_line *l, double t)
{
    size_t i;
    if (isnan(tw_line_cum_j(l, t, &i))) return NAN;
    return edge_sd_j(l, i, l->k[i].p_w);
}

double tw_line_power_w(const tw_energy_line *l, double t)
{
    size_t i;
    return isnan(tw_line_cum_j(l, t, &i)) ? NAN : l->k[i].p_w;
}

double tw_line_energy_j(const tw_energy_line *l, double a, double b, double *sd_j)
{
    if (sd_j) *sd_j = NAN;
    if (!(b >= a)) return NAN;
    double e = tw_line_cum_j(l, b, NULL) - tw_line_cum_j(l, a, NULL);
    if (sd_j && !isnan(e)) *sd_j = hypot(tw_line_edge_sd_j(l, a), tw_line_edge_sd_j(l, b));
    return e;
}

double tw_line_baseline_w(const tw_energy_line *l) { return isnan(l->min_1s_w) ? l->min_tile_w : l->min_1s_w; }

void tw_line_trim(tw_energy_line *l, double t_s)
{
    size_t i = knot_at_or_after(l, t_s);
    if (i > l->off + 1) l->off = i - 1;
}
