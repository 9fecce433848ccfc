/* The energy line anchored on the energy counter: see anchor.h. */
#include "api/anchor.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api/room.h"
#include "core/error.h"

#define PHASE_STEP_S 0.00025 /* the phase's candidates: every 0.25 ms over the period ... */
#define NEAR_S 0.005         /* ... then within 5 ms of the last fit */
#define FULL_SCAN_EVERY 8
#define EARLY_FULL_SCANS 16 /* every fit is a full scan until this many (8 s of reads every 0.5 s) */
#define CLEAR_S 0.015       /* a read this close to a grid point may belong to either: not fitted */
#define FIT_SPAN_S 20.0     /* the fit uses the reads of the last 20 s ... */
#define FIT_MAX_READS 64    /* ... at most this many */
#define MIN_FIT_READS 4     /* clear reads: a regression with residuals to judge it by */
/* reads before a first fit: at 4.875 periods apart they fall on all 8 of
 * the grid's eighths, and the 30 ms near a grid point (2 x CLEAR_S) hold at
 * most 3 of them, so every candidate phase has at least 5 clear ones and
 * the true phase is not passed over for having fewer than MIN_FIT_READS.
 * (With 6 reads, 3 of them can sit near the true grid, at 87, 99 and 12 ms
 * past it: the true phase then had 3 clear reads and lost to one 20 ms off,
 * which the near scans that follow kept; the fake NVML's NVTX ranges came
 * out up to 20 % off.) */
#define FIRST_FIT_READS 8
#define SLOPE_MIN 0.8 /* a shape more than 25 % off the counter: not this counter's shape */
#define SLOPE_MAX 1.25
#define DEFAULT_REL_SD 0.01 /* the shape's scatter per interval before three intervals say it */
#define PHASE_SD_S 0.001    /* the fitted phase's standard uncertainty */
/* The counter's resolution: NVML counts whole millijoules, so each knot's
 * value is the energy to within a uniform +-0.5 mJ. */
#define COUNTER_STEP_J 0.001
#define MAX_PENDING 1024 /* refits' knots waiting to be made (knots_later) */

static void settle(const tw_anchor *a); /* the pending knots made */
static void scan_free(struct tw_anchor_scan *c);

void tw_anchor_init(tw_anchor *a, const tw_reading_model *counter, double shape_period_s)
{
    memset(a, 0, sizeof *a);
    a->tile_s = shape_period_s > 0 ? shape_period_s : 0.02;
    a->period_s = counter && counter->period_s > 0 ? counter->period_s : 0.1;
    a->delay_s = counter && isfinite(counter->delay_s) ? counter->delay_s : 0.0;
    a->phase_s = NAN;
    a->slope = NAN;
    a->offset_j = NAN;
    a->rel_sd = DEFAULT_REL_SD;
}

void tw_anchor_free(tw_anchor *a)
{
    free(a->r);
    free(a->k);
    free(a->pend);
    scan_free(a->scan);
    memset(a, 0, sizeof *a);
}

tw_status tw_anchor_push(tw_anchor *a, double value_j, double stamp_s)
{
    if (!isfinite(value_j) || !isfinite(stamp_s)) return TW_OK;
    if (a->n > a->off) {
        const tw_counter_read *last = &a->r[a->n - 1];
        if (value_j == last->value_j || !(stamp_s > last->t_s)) return TW_OK;
    }
    if (a->n == a->cap && a->off > a->n / 2) settle(a); /* the reads move: the pending knots first */
    size_t moved;
    void *v = a->r;
    tw_status st = tw_room_for_one(&v, sizeof *a->r, &a->off, &a->n, &a->cap, 64, &moved);
    a->r = v;
    if (st != TW_OK) return st;
    a->seq_base += moved;
    a->fitted_n = a->fitted_n > moved ? a->fitted_n - moved : 0;
    a->knotted = a->knotted > moved ? a->knotted - moved : 0;
    a->r[a->n++] = (tw_counter_read){stamp_s, value_j};
    return TW_OK;
}

double tw_anchor_last_read_s(const tw_anchor *a) { return a->n > a->off ? a->r[a->n - 1].t_s : -INFINITY; }

/* The read's boundary under phase ph (the latest grid point at least the
 * delay before it) and how far past that grid point it lies (frac). */
static double boundary(const tw_anchor *a, const tw_counter_read *r, double ph, double *frac)
{
    double g = r->t_s - a->delay_s - ph;
    double k = floor(g / a->period_s);
    *frac = g - k * a->period_s;
    return ph + k * a->period_s;
}

static bool clear_of_grid(const tw_anchor *a, double frac) { return frac >= CLEAR_S && frac <= a->period_s - CLEAR_S; }

typedef struct fit {
    double offset, slope, rss;
    size_t n; /* clear reads the line was fitted on */
} fit;

/* A guess for the shape's lookups near read r (tw_line_cum_at_j): its
 * boundaries under any phase, and their neighbours on the grid, lie within
 * two periods and the delay before it (a third period's margin), so the
 * knot at or after that time is at or before each of theirs. From the
 * guess for an earlier read (or SIZE_MAX): a few steps. */
static size_t read_guess(const tw_anchor *a, const tw_energy_line *shape, const tw_counter_read *r, size_t from)
{
    return tw_line_seek(shape, r->t_s - a->delay_s - 3 * a->period_s, from);
}

/* A read's lookups on the shape under one phase: its boundary there, how
 * far past the grid point, and the shape's energy at it once looked up
 * (have_cum); the knots of the last lookups at its boundary (at) and at the
 * grid point beside it (at_other, best_boundary), and the read's
 * read_guess: the guesses for the next (tw_line_cum_at_j). Apart, a phase's
 * lookup starts at the knot of the phase before's (a step of 0.25 ms: the
 * same knot or the next), not a period away (a fit's evaluations were two
 * thirds of a report's anchoring, their galloping a third of that). */
typedef struct at_read {
    double b, frac, cum;
    bool have_cum;
    size_t at, at_other, guess;
    double
        *kept; /* the scan's lookups of the read kept (scan_cache): kept_n at its boundary, kept_n beside; NULL: none */
    size_t kept_n; /* the scan's phases kept */
} at_read;

/* The shape's energy at t from the knot *at (updated), NaN past `end` (the
 * shape's end when the fit was made: knots made later see the shape as it
 * was then). */
static double cum_of(const tw_energy_line *shape, at_read *x, size_t *at, double t, double end)
{
    return t > end ? NAN : tw_line_cum_at_j(shape, t, at, x->guess);
}

/* ---------------------------------------------------------------- the scans' lookups kept
 *
 * A full scan tries the same phases every time (0, PHASE_STEP_S, ... over
 * the period), and a near scan the same as the one before when the phase
 * stayed (about half of them), on reads most of which the scan before
 * tried, on a shape that has only grown since: a read's lookups under each
 * phase (the shape's energy at its boundary, and at the grid point beside
 * it) come out the same. They are kept, for the reads of the last scans in
 * a ring of slots by the read's number (the full scans' phases, and the
 * near scans' from the start they were made from), so that the next scan
 * looks up only the reads that came since (the full scans were half of the
 * fits' lookups). A lookup past the shape's end (NaN) is not kept: the
 * shape may reach it later. A trim of the shape (its first knot moved)
 * forgets them all. */
#define SCAN_SLOTS (FIT_MAX_READS + 16)
#define NEAR_PHASES ((size_t)(2 * NEAR_S / PHASE_STEP_S) + 2) /* room for a near scan's (40, 41 with rounding) */

struct tw_anchor_scan {
    size_t nph;                         /* the phases of a full scan */
    double shape_start;                 /* the shape's first knot when they were kept */
    unsigned long long seq[SCAN_SLOTS]; /* the read's number + 1 per slot (0: empty) */
    double near_lo[SCAN_SLOTS];         /* the near scan's first phase whose lookups the slot keeps (NaN: none) */
    double *v; /* per slot: nph at the boundary, nph beside it, then a near scan's NEAR_PHASES and NEAR_PHASES; NaN:
                  not kept */
};

static void scan_free(struct tw_anchor_scan *c)
{
    if (!c) return;
    free(c->v);
    free(c);
}

/* The full scans' phases, in the order of tw_anchor_refit's loop. */
static size_t full_scan_phases(const tw_anchor *a)
{
    size_t n = 0;
    for (double p = 0; p < a->period_s; p += PHASE_STEP_S)
        n++;
    return n;
}

/* The kept lookups of reads [from, to) into x[] for a full scan (full), else
 * the near scan from lo (none, NULL, when there is no room for them). */
static void scan_cache(tw_anchor *a, const tw_energy_line *shape, size_t from, size_t to, at_read *x, bool full,
                       double lo)
{
    struct tw_anchor_scan *c = a->scan;
    if (!c) {
        size_t nph = full_scan_phases(a);
        if (!(c = calloc(1, sizeof *c)) || !(c->v = malloc(SCAN_SLOTS * 2 * (nph + NEAR_PHASES) * sizeof *c->v))) {
            scan_free(c);
            return;
        }
        c->nph = nph;
        c->shape_start = tw_line_start_s(shape);
        a->scan = c;
    }
    if (c->shape_start != tw_line_start_s(shape)) {
        memset(c->seq, 0, sizeof c->seq);
        c->shape_start = tw_line_start_s(shape);
    }
    for (size_t i = from; i < to; i++) {
        unsigned long long seq = a->seq_base + i;
        size_t s = (size_t)(seq % SCAN_SLOTS);
        double *v = c->v + s * 2 * (c->nph + NEAR_PHASES), *near = v + 2 * c->nph;
        if (c->seq[s] != seq + 1) {
            c->seq[s] = seq + 1;
            for (size_t k = 0; k < 2 * c->nph; k++)
                v[k] = NAN;
            c->near_lo[s] = NAN;
        }
        if (!full && !(c->near_lo[s] == lo)) { /* another near scan's: forgotten */
            c->near_lo[s] = lo;
            for (size_t k = 0; k < 2 * NEAR_PHASES; k++)
                near[k] = NAN;
        }
        x[i - from].kept = full ? v : near;
        x[i - from].kept_n = full ? c->nph : NEAR_PHASES;
    }
}

/* The shape's energy at t (fit_phase's: the whole shape), from *kept when
 * it holds it, else looked up (and kept there, not NaN). */
static double cum_kept(const tw_energy_line *shape, at_read *x, size_t *at, double *kept, double t)
{
    if (kept && !isnan(*kept)) return *kept;
    double v = cum_of(shape, x, at, t, INFINITY);
    if (kept) *kept = v;
    return v;
}

/* The boundary of a read under a fit: its own when clear of the grid, else
 * the grid point next to it (never after the read) whose predicted value is
 * nearer; *resid: the read's residual there. x: the read's boundary under
 * the fit's phase (at_read); j: the phase's place in a full scan whose
 * lookups are kept (x->kept), else SIZE_MAX. */
static double best_boundary(const tw_anchor *a, const tw_energy_line *shape, const tw_counter_read *r, at_read *x,
                            size_t j, double offset, double slope, double end, double *resid)
{
    double frac = x->frac, b = x->b;
    bool kept = x->kept && j != SIZE_MAX; /* end is then INFINITY */
    if (!x->have_cum) {
        x->cum = kept ? cum_kept(shape, x, &x->at, x->kept + j, b) : cum_of(shape, x, &x->at, b, end);
        x->have_cum = true;
    }
    double pb = offset + slope * x->cum;
    *resid = r->value_j - pb;
    if (clear_of_grid(a, frac)) return b;
    double other = frac < CLEAR_S ? b - a->period_s : b + a->period_s;
    if (other > r->t_s) return b;
    double cum = kept ? cum_kept(shape, x, &x->at_other, x->kept + x->kept_n + j, other)
                      : cum_of(shape, x, &x->at_other, other, end);
    double po = offset + slope * cum;
    if (isnan(po) || (!isnan(pb) && fabs(*resid) <= fabs(r->value_j - po))) return b;
    *resid = r->value_j - po;
    return other;
}

/* Under phase ph: least squares value = offset + slope x shape over the
 * reads [from, to) clear of the grid, then the squared residuals of every
 * read there (the others at their best boundary), so that every phase is
 * judged on the same reads. xs[i - from]: read i's lookups (at_read), its
 * boundary made here once for the three passes over the reads, the shape's
 * energy there looked up once for the fit and its residual. j: the phase's
 * place in a full scan whose lookups are kept, else SIZE_MAX. */
static fit fit_phase(const tw_anchor *a, const tw_energy_line *shape, size_t from, size_t to, at_read *xs, double ph,
                     size_t j)
{
    double sx = 0, sy = 0, sxx = 0, sxy = 0, base = a->r[from].value_j; /* small numbers: no cancellation */
    /* Too few reads clear of this phase's grid: all of them, each at its
     * boundary. Reads at one phase (a counter read every 0.5 s, 5 of its
     * periods, as `truewatt run` reads it) that sits near the true grid
     * leave the true phase no clear read at all, and it lost to one 15-20 ms
     * off (the fake NVML's NVTX ranges came out 1-3 % off). */
    size_t clear = 0;
    for (size_t i = from; i < to; i++) {
        at_read *xi = &xs[i - from];
        xi->b = boundary(a, &a->r[i], ph, &xi->frac);
        xi->have_cum = false;
        clear += clear_of_grid(a, xi->frac);
    }
    bool all = clear < MIN_FIT_READS;
    size_t n = 0;
    for (size_t i = from; i < to; i++) {
        at_read *xi = &xs[i - from];
        if (!all && !clear_of_grid(a, xi->frac)) continue;
        xi->cum = xi->kept && j != SIZE_MAX ? cum_kept(shape, xi, &xi->at, xi->kept + j, xi->b)
                                            : cum_of(shape, xi, &xi->at, xi->b, INFINITY);
        xi->have_cum = true;
        double x = xi->cum;
        if (isnan(x)) continue;
        double y = a->r[i].value_j - base;
        sx += x;
        sy += y;
        sxx += x * x;
        sxy += x * y;
        n++;
    }
    fit f = {NAN, NAN, INFINITY, n};
    if (n < MIN_FIT_READS) return f;
    double mx = sx / (double)n, my = sy / (double)n;
    double vxx = sxx - (double)n * mx * mx, vxy = sxy - (double)n * mx * my;
    if (!(vxx > 0)) return f;
    f.slope = vxy / vxx;
    f.offset = my - f.slope * mx + base;
    f.rss = 0;
    for (size_t i = from; i < to; i++) {
        double res;
        best_boundary(a, shape, &a->r[i], &xs[i - from], j, f.offset, f.slope, INFINITY, &res);
        if (!isnan(res)) f.rss += res * res;
    }
    return f;
}

/* The read's boundary under the fitted phase: its own when clear of the
 * grid; else the grid point next to it (never after the read) that agrees
 * better with the last knot before it carried forward by the shape (a
 * neighbour 0.5 s away predicts to ~1 % of its interval, far better than
 * half a period's energy; the fit's regression over 20 s may not). */
static double fitted_boundary(const tw_anchor *a, const tw_energy_line *shape, const tw_anchor_batch *bat,
                              const tw_counter_read *r, at_read *x, const tw_anchor_knot *last)
{
    double res, g = bat->slope;
    x->b = boundary(a, r, bat->phase_s, &x->frac);
    x->have_cum = false;
    if (!last) return best_boundary(a, shape, r, x, SIZE_MAX, bat->offset_j, g, bat->end_s, &res);
    return best_boundary(a, shape, r, x, SIZE_MAX, last->value_j - g * last->shape_j, g, bat->end_s, &res);
}

/* The shape's relative scatter per knot interval against the counter, over
 * the recent intervals (those the fit spans); false when too few to say
 * (rel_sd stays). */
static bool knot_scatter(tw_anchor *a)
{
    double sum = 0, sum2 = 0;
    size_t m = 0;
    for (size_t j = a->nk > FIT_MAX_READS ? a->nk - FIT_MAX_READS : 1; j < a->nk; j++) {
        double ds = a->k[j].shape_j - a->k[j - 1].shape_j, dv = a->k[j].value_j - a->k[j - 1].value_j;
        if (!(ds > 0)) continue;
        double rho = dv / ds;
        sum += rho;
        sum2 += rho * rho;
        m++;
    }
    if (m >= 3) {
        double mean = sum / (double)m, var = fmax(0.0, (sum2 - (double)m * mean * mean) / (double)(m - 1));
        a->rel_sd = sqrt(var) / fabs(mean);
        return true;
    }
    return false;
}

/* Knots from the reads [from, to) the shape covers, after those already
 * made (reset: all again, the phase changed): each read's boundary under
 * the fit's phase. Appending keeps a refit's cost to its new reads however
 * long a region stays open. Whether knot_scatter said the scatter. */
static bool add_knots(tw_anchor *a, const tw_energy_line *shape, const tw_anchor_batch *bat)
{
    if (bat->reset) a->nk = 0;
    /* the reads in order of time: lookups from the one before's */
    at_read x = {.at = SIZE_MAX, .at_other = SIZE_MAX, .guess = SIZE_MAX};
    for (size_t i = bat->from; i < bat->to; i++) {
        x.guess = read_guess(a, shape, &a->r[i], x.guess);
        double b = fitted_boundary(a, shape, bat, &a->r[i], &x, a->nk ? &a->k[a->nk - 1] : NULL);
        double s = b == x.b && x.have_cum ? x.cum : cum_of(shape, &x, &x.at_other, b, bat->end_s);
        if (isnan(s) || (a->nk && !(b > a->k[a->nk - 1].t_s))) continue;
        if (a->nk == a->capk) {
            size_t cap = a->capk ? 2 * a->capk : 64;
            tw_anchor_knot *k = realloc(a->k, cap * sizeof *k);
            if (!k) break; /* out of memory: fewer knots, the shape alone beyond them */
            a->k = k;
            a->capk = cap;
        }
        a->k[a->nk++] = (tw_anchor_knot){b, a->r[i].value_j, s};
    }
    return knot_scatter(a);
}

/* The pending knots made (logically const: the knots are what the refits
 * so far make them, only made when first needed). Batches before the last
 * reset are made only when the batches from it never say the scatter
 * (rel_sd is then theirs): a phase that moves on every refit re-knots the
 * reads once per use, not once per refit. */
static void settle(const tw_anchor *ca)
{
    tw_anchor *a = (tw_anchor *)ca;
    if (a->npend == 0) return;
    size_t j = a->npend;
    while (j > 0 && !a->pend[j - 1].reset)
        j--;
    if (j <= 1) { /* from the knots made, or all again from the first batch: in order */
        for (size_t i = 0; i < a->npend; i++)
            add_knots(a, a->shape, &a->pend[i]);
        a->npend = 0;
        return;
    }
    j--; /* the last reset: its knots from the first live read, on knots of their own */
    tw_anchor_knot *old = a->k;
    size_t old_n = a->nk, old_cap = a->capk;
    double rel = a->rel_sd;
    a->k = NULL;
    a->nk = a->capk = 0;
    bool said = false;
    for (size_t i = j; i < a->npend; i++)
        said |= add_knots(a, a->shape, &a->pend[i]);
    if (!said) { /* the scatter is then the batches' before the reset: made on the old knots */
        tw_anchor_knot *k = a->k;
        size_t n = a->nk, cap = a->capk;
        a->k = old;
        a->nk = old_n;
        a->capk = old_cap;
        a->rel_sd = rel;
        for (size_t i = 0; i < j; i++)
            add_knots(a, a->shape, &a->pend[i]);
        old = a->k;
        a->k = k;
        a->nk = n;
        a->capk = cap;
    }
    free(old);
    a->npend = 0;
}

/* Knots from the reads [from, to) under the fit just made, when next needed (settle). */
static void knots_later(tw_anchor *a, const tw_energy_line *shape, size_t from, size_t to)
{
    tw_anchor_batch b = {from, to, from == a->off, a->phase_s, a->offset_j, a->slope, tw_line_end_s(shape)};
    /* (one shape per anchor; another: what was pending on the first); at most
     * MAX_PENDING wait, so that a range that stays open (a report's over a
     * whole run) does not hold one per read: made then, at most once per
     * MAX_PENDING refits */
    if (a->shape != shape || a->npend >= MAX_PENDING) settle(a);
    a->shape = shape;
    a->knotted = to;
    if (a->npend == a->cappend) {
        size_t cap = a->cappend ? 2 * a->cappend : 64;
        tw_anchor_batch *p = realloc(a->pend, cap * sizeof *p);
        if (!p) { /* out of memory: made now */
            settle(a);
            add_knots(a, shape, &b);
            return;
        }
        a->pend = p;
        a->cappend = cap;
    }
    a->pend[a->npend++] = b;
}

/* The reads the shape covers (their time less the delay at or before its
 * end), from the first live one: a prefix of them, their times increasing,
 * so bisection finds where it ends (a scan from the first read on every
 * refit made a report's range over a whole run quadratic in its length). */
static size_t reads_covered(const tw_anchor *a, double end)
{
    size_t lo = a->off, hi = a->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (a->r[mid].t_s - a->delay_s <= end)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

void tw_anchor_refit(tw_anchor *a, const tw_energy_line *shape)
{
    size_t covered = reads_covered(a, tw_line_end_s(shape));
    if (covered == a->fitted_n) return;
    if (covered - a->off < FIRST_FIT_READS) return;
    a->fitted_n = covered;
    size_t from = covered;
    while (from > a->off && covered - from < FIT_MAX_READS && a->r[covered - 1].t_s - a->r[from - 1].t_s <= FIT_SPAN_S)
        from--;
    at_read x[FIT_MAX_READS]; /* the fit's reads' lookups: each phase's from the one before's */
    for (size_t i = from, g = SIZE_MAX; i < covered; i++)
        x[i - from] = (at_read){.at = SIZE_MAX,
                                .at_other = SIZE_MAX,
                                .guess = g = read_guess(a, shape, &a->r[i], g),
                                .kept = NULL,
                                .kept_n = 0};
    fit best = {NAN, NAN, INFINITY, 0};
    double best_ph = NAN;
    /* once fitted, the phase moves little between reads: near it only, with
     * a full scan every FULL_SCAN_EVERY fits (a first fit on flat power may
     * be off by more), and on each of the first EARLY_FULL_SCANS: a first fit
     * on flat power can be a whole update off for the next read, with a slope
     * that hides it (the fake NVML at a constant 300 W: phase 4.5 ms, slope
     * 1.027, where a phase near 85 ms with slope 1 accounts for every read; the next read's interval
     * then counted 5 updates' energy over 4, a 0.1 s window +25.0 %) */
    double lo = 0, hi = a->period_s;
    ++a->refits;
    bool full = !(isfinite(a->phase_s) && a->refits > EARLY_FULL_SCANS && a->refits % FULL_SCAN_EVERY != 0);
    if (!full) {
        lo = a->phase_s - NEAR_S;
        hi = a->phase_s + NEAR_S;
    }
    scan_cache(a, shape, from, covered, x, full, lo);
    size_t j = 0;
    for (double p = lo; p < hi; p += PHASE_STEP_S, j++) {
        double ph = p - floor(p / a->period_s) * a->period_s;
        fit f =
            fit_phase(a, shape, from, covered, x, ph, from < covered && x[0].kept && j < x[0].kept_n ? j : SIZE_MAX);
        if (f.rss < best.rss) {
            best = f;
            best_ph = ph;
        }
    }
    if (isnan(best_ph) || !(best.slope >= SLOPE_MIN && best.slope <= SLOPE_MAX)) return;
    bool same = best_ph == a->phase_s && a->knotted >= a->off;
    a->phase_s = best_ph;
    a->offset_j = best.offset;
    a->slope = best.slope;
    a->fit_reads = best.n;
    knots_later(a, shape, same ? a->knotted : a->off, covered);
}

/* The knot interval [k[i], k[i + 1]] holding t; SIZE_MAX when none. */
static size_t interval_of(const tw_anchor *a, double t)
{
    if (a->nk < 2 || !(t >= a->k[0].t_s) || !(t <= a->k[a->nk - 1].t_s)) return SIZE_MAX;
    size_t lo = 0, hi = a->nk - 1; /* k[lo] <= t <= k[hi] */
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (a->k[mid].t_s <= t)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

bool tw_anchor_reaches(const tw_anchor *a, const tw_energy_line *shape, double t)
{
    settle(a);
    (void)shape; /* knots exist only where the shape covers them */
    return a->nk >= 2 && a->k[a->nk - 1].t_s >= t;
}

/* The counter's energy at t (since its origin) by the shape inside knot
 * interval i; *f: t's part of the interval's time; *edge_var: the shape's
 * own edge term there. */
static double anchored_at(const tw_anchor *a, const tw_energy_line *shape, double t, size_t i, double *f,
                          double *edge_var)
{
    const tw_anchor_knot *k0 = &a->k[i], *k1 = &a->k[i + 1];
    double dv = k1->value_j - k0->value_j, ds = k1->shape_j - k0->shape_j, dt = k1->t_s - k0->t_s;
    double s = tw_line_cum_j(shape, t, NULL) - k0->shape_j;
    *f = (t - k0->t_s) / dt;
    double edge = tw_line_edge_sd_j(shape, t) * (ds > 0 ? dv / ds : 1.0);
    *edge_var = isnan(edge) ? 0.0 : edge * edge;
    return k0->value_j + (ds > 0 ? s / ds : *f) * dv;
}

/* The variance of the shape's error between the knots: a bridge pinned at
 * both knots of each interval, sd rel x the interval's energy at most. Two
 * edges in one interval: the bridge's increment between them. */
static double bridge_part(const tw_anchor *a, size_t i, double f)
{
    /* inside one of the shape's tiles its error grows with the time, not its root */
    double tile = a->tile_s / (a->k[i + 1].t_s - a->k[i].t_s);
    return fmin(f, f * f / tile) * (1 - f);
}

static double bridge_var(const tw_anchor *a, size_t i0, double f0, size_t i1, double f1)
{
    double s0 = a->rel_sd * (a->k[i0 + 1].value_j - a->k[i0].value_j);
    if (i0 == i1) return s0 * s0 * bridge_part(a, i0, fabs(f1 - f0));
    double s1 = a->rel_sd * (a->k[i1 + 1].value_j - a->k[i1].value_j);
    return s0 * s0 * bridge_part(a, i0, f0) + s1 * s1 * bridge_part(a, i1, f1);
}

/* The counter's resolution at an edge a part f into its knot interval: the
 * two knots' rounding, weighted as the edge interpolates between them. */
static double step_var(double f) { return ((1 - f) * (1 - f) + f * f) * COUNTER_STEP_J * COUNTER_STEP_J / 12.0; }

double tw_anchor_energy_j(const tw_anchor *a, const tw_energy_line *shape, double t0, double t1, double *sd_j)
{
    settle(a);
    if (sd_j) *sd_j = NAN;
    size_t i0 = interval_of(a, t0), i1 = interval_of(a, t1);
    if (i0 == SIZE_MAX || i1 == SIZE_MAX || !(t1 >= t0)) return NAN;
    double f0, f1, e0, e1;
    double e = anchored_at(a, shape, t1, i1, &f1, &e1) - anchored_at(a, shape, t0, i0, &f0, &e0);
    if (sd_j) {
        /* a phase off by d moves both edges' knots: E changes by d (P(t1) - P(t0)) */
        double g = isfinite(a->slope) ? a->slope : 1.0;
        double ph = PHASE_SD_S * g * fabs(tw_line_power_w(shape, t1) - tw_line_power_w(shape, t0));
        *sd_j =
            sqrt(bridge_var(a, i0, f0, i1, f1) + e0 + e1 + (isnan(ph) ? 0.0 : ph * ph) + step_var(f0) + step_var(f1));
    }
    return e;
}

double tw_anchor_scale(const tw_anchor *a, double *rel_sd)
{
    settle(a);
    if (!isfinite(a->slope) || a->nk < 2) {
        *rel_sd = DEFAULT_REL_SD;
        return 1.0;
    }
    /* the knots' span pins the total: the scatter of one interval over the
     * number of intervals */
    *rel_sd = a->rel_sd / sqrt((double)(a->nk - 1));
    return a->slope;
}

size_t tw_anchor_knots(const tw_anchor *a, const tw_anchor_knot **k)
{
    settle(a);
    *k = a->k;
    return a->nk;
}

double tw_anchor_needed_from(const tw_anchor *a)
{
    return a->n > a->off ? a->r[a->off].t_s - a->delay_s - 2 * a->period_s : INFINITY;
}

void tw_anchor_trim(tw_anchor *a, double t_keep)
{
    /* Nothing to drop (a range that stays open, a report's over a whole
     * run, keeps every read): the pending knots stay pending. Settled on
     * every trim, a phase that moved re-knotted every read each time,
     * quadratic in the run's length. The knots kept are those of the reads
     * kept, and the shape keeps what they are made from (needed_from). */
    if (!(a->n - a->off > FIT_MAX_READS && a->r[a->off].t_s < t_keep)) return;
    settle(a); /* before the reads they are made from go (and the shape's knots after this) */
    while (a->n - a->off > FIT_MAX_READS && a->r[a->off].t_s < t_keep) {
        a->off++;
        if (a->fitted_n < a->off) a->fitted_n = a->off;
        if (a->knotted < a->off) a->knotted = a->off;
    }
    /* the knots before t_keep but the last of them (it brackets t_keep) */
    size_t drop = 0;
    while (drop + 1 < a->nk && a->k[drop + 1].t_s <= t_keep && a->nk - drop > FIT_MAX_READS)
        drop++;
    if (drop) {
        memmove(a->k, a->k + drop, (a->nk - drop) * sizeof *a->k);
        a->nk -= drop;
    }
}

bool tw_anchor_ready(const tw_anchor *a, const tw_energy_line *shape, double t)
{
    double end = tw_line_end_s(shape);
    if (!(end >= t)) return false;
    return !a || tw_anchor_reaches(a, shape, t) || end >= t + TW_ANCHOR_WAIT_S;
}

void tw_anchor_feed(tw_anchor *a, tw_energy_line *shape, const tw_row *row, size_t shape_col, size_t counter_col)
{
    if (a && counter_col < row->n && row->valid[counter_col])
        tw_anchor_push(a, row->value[counter_col], row->t_value_s ? row->t_value_s[counter_col] : row->t_s);
    if (shape_col >= row->n || !row->valid[shape_col]) return;
    tw_line_push(shape, row->value[shape_col], row->t_value_s ? row->t_value_s[shape_col] : row->t_s);
    if (a) tw_anchor_refit(a, shape);
}

double tw_anchor_span_j(const tw_anchor *a, const tw_energy_line *shape, double t0, double t1, double *sd_j,
                        bool *shape_only)
{
    if (shape_only) *shape_only = false;
    double sd = NAN, e = a ? tw_anchor_energy_j(a, shape, t0, t1, &sd) : NAN;
    if (isnan(e)) {
        /* the counter's knots do not bracket it (a session's first seconds,
         * a counter that stopped, no counter): the shape, scaled by its gain
         * so far */
        double rel = 0, g = a ? tw_anchor_scale(a, &rel) : 1.0;
        e = g * tw_line_energy_j(shape, t0, t1, &sd);
        sd = hypot(g * sd, rel * e);
        if (shape_only && a) *shape_only = true;
    }
    if (sd_j) *sd_j = sd;
    return e;
}
