/* A GPU's energy as a function of time (internal), built from one reading
 * as the sampler delivers it, so that the energy of any span of the recent
 * past is one subtraction: E(a, b) = F(b) - F(a).
 *
 * F is kept as knots (t, F, P): at each knot the cumulative energy the
 * reading shows, and P, the mean power over the interval that ends there.
 * Between knots the power is taken as that mean (a tile), so F is linear.
 * Which readings tile the time, and how each is shifted and corrected, is
 * its model (correct/profile.h):
 *   - the driver's sample buffer: each value is the mean power of the
 *     interval ending at its own timestamp (tiles); under an rc model the
 *     first-order lag is undone as in Burtscher et al. §5: the true energy
 *     over [a, b] is the integral of the reading plus C (P(b) - P(a));
 *   - the energy counter: its differences tile the time;
 *   - a held power reading (a boxcar): each update holds until the next.
 * Every time is shifted back by the model's delay (and half a boxcar's window).
 *
 * Memory: the knots back to the oldest time still asked for (tw_line_trim),
 * never the whole session. */
#ifndef TW_API_ENERGY_LINE_H
#define TW_API_ENERGY_LINE_H

#include <stdbool.h>
#include <stddef.h>

#include "correct/profile.h"
#include "truewatt.h"

typedef enum tw_line_kind { TW_LINE_TILES = 0, TW_LINE_COUNTER = 1, TW_LINE_HOLD = 2 } tw_line_kind;

typedef struct tw_line_knot {
    double t_s, f_j, p_w;
} tw_line_knot;

typedef struct tw_energy_line {
    tw_line_kind kind;
    double shift_s;       /* subtracted from each update's time */
    double capacitance_s; /* rc: C; 0 otherwise */
    tw_line_knot *k;      /* knots k[off .. n) are live */
    size_t off, n, cap;
    double last_value, last_stamp_s; /* the reading's last update (value, own timestamp) */
    bool have_last;
    double origin_j; /* counter: its value at the first knot */
    double min_1s_w; /* the lowest mean power over 1 s seen so far (NaN: not yet a second) */
    double min_tile_w;
} tw_energy_line;

void tw_line_init(tw_energy_line *l, tw_line_kind kind, const tw_reading_model *m);
void tw_line_free(tw_energy_line *l);
/* One poll of the reading: its value (SI) and its own timestamp on the
 * session's timeline. Repeats of the last update are ignored. */
tw_status tw_line_push(tw_energy_line *l, double value, double stamp_s);
/* The time up to which F is known (-inf before two knots). */
double tw_line_end_s(const tw_energy_line *l);
double tw_line_start_s(const tw_energy_line *l);
/* The (corrected) energy over [a, b] and its standard uncertainty from the
 * edges: each edge falls inside a tile whose power is known only as its
 * mean, so the part of the tile inside the span is uncertain by up to the
 * step to its neighbours (uniform: / sqrt(12)); plus the timestamps'
 * microsecond resolution. NaN when [a, b] is not inside the knots. */
double tw_line_energy_j(const tw_energy_line *l, double a, double b, double *sd_j);
/* The (corrected) cumulative energy at t, F(t) + C P(t) under rc, so that
 * E(a, b) = cum(b) - cum(a); NaN outside the knots. *tile (may be NULL): the
 * knot that ends t's tile. */
double tw_line_cum_j(const tw_energy_line *l, double t, size_t *tile);
/* The same value, t's knot looked up from a guess, a knot index at or
 * before it: *at, else `second` (an earlier lookup's knot or tw_line_seek
 * of an earlier time; SIZE_MAX: none); *at is then t's knot (the first at
 * or after t), a guess for lookups at later times. A few steps for lookups
 * in order of time, where one from the end walks back over the knots
 * between (a report's NVTX range over a whole run keeps them all). The
 * index found is checked: guesses change the steps, never the value. */
double tw_line_cum_at_j(const tw_energy_line *l, double t, size_t *at, size_t second);
/* The first live knot at or after t (the knot count n when none), from
 * `guess` as tw_line_cum_at_j's second: a guess for lookups at later times. */
size_t tw_line_seek(const tw_energy_line *l, double t, size_t guess);
/* The standard uncertainty an edge at t adds (see tw_line_energy_j); the
 * power of t's tile. NaN outside the knots. */
double tw_line_edge_sd_j(const tw_energy_line *l, double t);
double tw_line_power_w(const tw_energy_line *l, double t);
/* The baseline power: the lowest mean over 1 s seen so far (else the lowest tile). */
double tw_line_baseline_w(const tw_energy_line *l);
/* Drops knots before t_s (keeping one before it). */
void tw_line_trim(tw_energy_line *l, double t_s);

#endif
