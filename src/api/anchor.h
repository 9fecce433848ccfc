/* A GPU's energy line anchored on its energy counter (internal): the
 * counter gives the totals, the finer reading (the driver's sample buffer,
 * an energy_line.h) the shape between the counter's values.
 *
 * Why: the H100's sample buffer integrates to within ~1 % of the counter
 * over minutes, but over a few hundred ms its integral scatters by ~1 %
 * around the counter's difference (results/h100/profile: 0.3 s windows,
 * sd 0.6-1.2 %). The counter publishes every period T (100 ms on an H100)
 * the energy up to a boundary a delay before the update, on a regular grid;
 * a session reads it only every 0.5-1 s (a read costs ~4 ms of CPU), so a
 * read's value is known but not which boundary it belongs to: the latest
 * grid point at least the delay before the read, somewhere in the last T.
 *
 * The grid's phase is fitted: for each candidate phase (steps of
 * PHASE_STEP_S over T) the reads far from a grid point get their boundary,
 * and the counter's values are regressed on the shape's cumulative energy
 * at those boundaries (value = offset + slope x shape); the phase with the
 * smallest residual wins. Where the power is flat every phase fits alike,
 * and then the phase does not matter (the shift cancels between a
 * region's edges). Every read then becomes a knot (boundary, value); a read
 * close to a grid point takes the boundary whose predicted value matches.
 *
 * Between two knots the energy follows the shape, scaled to the counter's
 * difference: E(t) = v_i + (v_{i+1} - v_i) S(t) / S(knot i+1), S the shape's
 * energy since knot i. Its uncertainty at t inside an interval is that of a
 * bridge pinned at both knots: the interval's relative scatter (the spread
 * of the shape's per-interval gain, measured) times its energy times
 * sqrt(f (1 - f)), f the part of the interval before t; plus the shape's
 * own edge term, the phase's step, and the counter's resolution (whole
 * millijoules) at both knots of each edge's interval. */
#ifndef TW_API_ANCHOR_H
#define TW_API_ANCHOR_H

#include <stdbool.h>
#include <stddef.h>

#include "api/energy_line.h"
#include "correct/profile.h"
#include "truewatt.h"

typedef struct tw_counter_read {
    double t_s, value_j; /* the read's own timestamp (the call's middle), its value */
} tw_counter_read;

typedef struct tw_anchor_knot {
    double t_s;     /* a boundary of the counter's grid */
    double value_j; /* the counter's value for it */
    double shape_j; /* the shape's cumulative energy there */
} tw_anchor_knot;

/* Knots to make from reads [from, to) under a fit (anchor.c: made when
 * first needed): reset, from the first live read (all again: the phase
 * moved); the fit's phase, offset and slope; the shape's end then. */
typedef struct tw_anchor_batch {
    size_t from, to;
    bool reset;
    double phase_s, offset_j, slope, end_s;
} tw_anchor_batch;

typedef struct tw_anchor {
    double period_s, delay_s; /* the counter's model */
    double tile_s;            /* the shape's tiles' length */
    tw_counter_read *r;       /* reads r[off .. n) are live */
    size_t off, n, cap;
    size_t fitted_n;      /* reads the fit has seen (a new covered read: fit again) */
    double phase_s;       /* boundaries at phase + k T on the shape's timeline; NaN: not fitted */
    double offset_j;      /* the fit: value = offset + slope x shape cumulative */
    double slope;         /* counter J per shape J (1 / the shape's gain); NaN: not fitted */
    double rel_sd;        /* relative scatter of the shape's energy per interval against the counter's */
    size_t fit_reads;     /* reads the fit used */
    unsigned long refits; /* fits so far (the first EARLY_FULL_SCANS and every FULL_SCAN_EVERY-th scan every phase) */
    tw_anchor_knot *k;    /* from the reads the shape covers, under the fitted phase */
    size_t knotted;       /* reads before this one have been made knots (or are pending) */
    size_t nk, capk;
    /* the refits' knots not made yet, in order, and the shape they are made
     * on: made when the knots are first asked for (a query, a trim, a move of
     * the reads), so that a range that waits (a report's over a whole run)
     * does not re-knot every read each time the phase moves */
    tw_anchor_batch *pend;
    size_t npend, cappend;
    const tw_energy_line *shape;
    /* the full scans' lookups, kept for the next (anchor.c: scan_cache);
     * NULL until the first, or when there was no room for them */
    struct tw_anchor_scan *scan;
    unsigned long long seq_base; /* reads pushed before r[0] (a read's number: seq_base + its index) */
} tw_anchor;

/* shape_period_s: the shape's update period (its tiles' length). */
void tw_anchor_init(tw_anchor *a, const tw_reading_model *counter, double shape_period_s);
void tw_anchor_free(tw_anchor *a);
/* One read of the counter (repeats of the last one are ignored). */
tw_status tw_anchor_push(tw_anchor *a, double value_j, double stamp_s);
/* Fits the phase again when reads came that the shape now covers. */
void tw_anchor_refit(tw_anchor *a, const tw_energy_line *shape);
/* Whether knots bracket t (a knot at or after t, covered by the shape). */
bool tw_anchor_reaches(const tw_anchor *a, const tw_energy_line *shape, double t);
/* The energy over [t0, t1] and its sd; NaN when the knots do not bracket
 * both edges (the caller then uses the shape alone). */
double tw_anchor_energy_j(const tw_anchor *a, const tw_energy_line *shape, double t0, double t1, double *sd_j);
/* The factor from the shape's energy to the counter's (1 before a fit) and
 * its relative standard uncertainty: for a span the knots do not bracket. */
double tw_anchor_scale(const tw_anchor *a, double *rel_sd);
/* The oldest time the fit still needs (the shape keeps knots from there). */
double tw_anchor_needed_from(const tw_anchor *a);
/* Drops reads older than the fit's span before t_now. */
void tw_anchor_trim(tw_anchor *a, double t_now);
/* The time of the latest read (-inf: none). */
double tw_anchor_last_read_s(const tw_anchor *a);
/* The knots made so far (the pending ones made first), in order of time;
 * *k valid until the anchor next changes. */
size_t tw_anchor_knots(const tw_anchor *a, const tw_anchor_knot **k);

/* A span ending at t waits this long (on the shape's time) for the
 * counter's next knot; past it, the shape alone. */
#define TW_ANCHOR_WAIT_S 3.0
/* Whether a span ending at t can be measured: the shape reaches t and the
 * counter's knots bracket it, or did not come within TW_ANCHOR_WAIT_S (a
 * NULL a: the shape reaching t). */
bool tw_anchor_ready(const tw_anchor *a, const tw_energy_line *shape, double t);

/* One row of the sampler (live: the session's sink; recorded: the report's
 * NVTX range pass, src/estimate/range_energy.c), fed the one way: the
 * counter's read (column counter_col, when a is not NULL) into the anchor,
 * the shape's update (column shape_col; SIZE_MAX: none) into its line, then
 * a refit. Out of memory: the read or update is lost (a gap). */
void tw_anchor_feed(tw_anchor *a, tw_energy_line *shape, const tw_row *row, size_t shape_col, size_t counter_col);
/* The energy over [t0, t1] and its sd: between the counter's knots when a
 * (may be NULL: no counter) brackets both edges, else the shape scaled by
 * the anchor's gain so far with that gain's uncertainty (*shape_only set,
 * may be NULL). NaN when the shape does not cover the span either. */
double tw_anchor_span_j(const tw_anchor *a, const tw_energy_line *shape, double t0, double t1, double *sd_j,
                        bool *shape_only);

#endif
