/* Observations (internal): what a reading says about the true power, once its
 * model is known. Each observation is the mean true power over a window of
 * the trace's timeline (the delay already removed). Windows may overlap (a
 * boxcar's 1 s windows published every 100 ms), leave gaps (a window
 * reading's 25 ms out of every 100 ms) or tile the time (counter differences,
 * the driver's sample buffer, a deconvolved boxcar). Estimators
 * (estimate/estimator.h) work on observations alone, so one
 * estimator serves every reading. */
#ifndef TW_CORRECT_OBSERVE_H
#define TW_CORRECT_OBSERVE_H

#include <math.h>
#include <stddef.h>

#include "correct/profile.h"
#include "truewatt.h"

typedef struct tw_obs {
    double t0_s, t1_s; /* the window (t0, t1] whose mean power this is */
    double power_w;    /* mean true power over the window */
} tw_obs;              /* 24 bytes: a run holds one per update of each reading it uses (issue 16); a series' tau_s is
                          its windows' weighting */

/* How many seconds of the window [lo, hi] (inside it) stands for: hi - lo
 * for a plain window (tau_s 0); for an rc interval (its series' tau_s) the exponential weight, normalised
 * so the whole window still counts its length. Estimators use this instead
 * of the plain overlap, so a short kernel early in an rc interval (which
 * the interval shows weakly) is expected weakly. */
static inline double tw_obs_weight_in(const tw_obs *o, double tau_s, double norm, double lo, double hi);
/* The normalisation of an rc window's weights (tw_obs_weight_in's norm): the
 * same for every part of the window, made once for all of them. */
static inline double tw_obs_norm(const tw_obs *o, double tau_s)
{
    return tau_s > 0 ? 1.0 - exp(-(o->t1_s - o->t0_s) / tau_s) : 1.0;
}
static inline double tw_obs_weight(const tw_obs *o, double tau_s, double lo, double hi)
{
    return tw_obs_weight_in(o, tau_s, tw_obs_norm(o, tau_s), lo, hi);
}
/* tw_obs_weight with the window's tw_obs_norm given. */
static inline double tw_obs_weight_in(const tw_obs *o, double tau_s, double norm, double lo, double hi)
{
    if (!(hi > lo)) return 0.0;
    if (!(tau_s > 0)) return hi - lo;
    double len = o->t1_s - o->t0_s;
    return len * (exp(-(o->t1_s - hi) / tau_s) - exp(-(o->t1_s - lo) / tau_s)) / norm;
}

typedef struct tw_obs_series {
    tw_obs *v; /* in order of t1 (windows may overlap) */
    size_t n, cap;
    double period_s; /* the reading's update period (what the windows step by) */
    double window_s; /* nominal window length */
    double tau_s;    /* 0: every instant of a window weighs the same; > 0: rc intervals (observe_rc), in
                        which an instant s weighs e^{-(t1 - s)/tau} (tw_obs_weight) */
} tw_obs_series;

void tw_obs_series_init(tw_obs_series *s);
tw_status tw_obs_series_push(tw_obs_series *s, double t0_s, double t1_s, double power_w);
void tw_obs_series_free(tw_obs_series *s);

/* Observations of reading `reading` of `src` (read from its start; rewound
 * first when `rewind`) under model `m`. Power readings give one observation
 * per update (a value that differs from the last one, or a new value
 * timestamp); the update instant is taken halfway between the row that shows
 * it first and the row before. A counter gives one per pair of updates. rc
 * gives the corrected power (Burtscher's formula with C) between
 * deduplicated samples. A boxcar whose window spans at least two periods is
 * deconvolved into per-period means (tw_deconvolve_boxcar). */
tw_status tw_observe(tw_sensor *src, size_t reading, const tw_reading_model *m, bool rewind, tw_obs_series *out);

/* Update instants of one reading (row time halfway to the previous row, as
 * above) with the value that appeared, for identification. For a counter
 * the value is the cumulative energy in J. */
typedef struct tw_update {
    double t_s;
    double value;
} tw_update;

typedef struct tw_update_series {
    tw_update *v;
    size_t n, cap;
} tw_update_series;

void tw_update_series_free(tw_update_series *s);
/* Reads every update of `reading` over the whole source (rewinding it first).
 * Rows where the reading is invalid are skipped. A reading whose values carry
 * their own stamps gets them through tw_updates_regularize. */
tw_status tw_updates_read(tw_sensor *src, size_t reading, tw_update_series *out);
/* The same for n readings at once, out[k] reading[k]'s: one pass over the
 * source's rows (a run file's are read from the file on every pass). */
tw_status tw_updates_read_many(tw_sensor *src, const size_t *reading, size_t n, tw_update_series *out);
/* tw_observe on a reading's updates read already (tw_updates_read). */
tw_status tw_observe_updates(const tw_update_series *u, const tw_reading_model *m, tw_obs_series *out);

/* On a reading's updates: the index of the last update at or before t
 * (SIZE_MAX when none); the held value integrated over [a, b] (what polls in
 * between see); a counter read at t, interpolated between its updates; the
 * sample buffer's values as the mean power of the interval each closes,
 * integrated over [a, b]. NaN where the updates do not reach. */
/* Stamps on a sampling grid put back on it. The H100's sample buffer takes a
 * value every 20.000 ms, but stamps one in five of them 1-3 ms late (the
 * others within 0.1 ms of the grid); a late stamp moves energy between the two
 * intervals it closes and opens (the residual rms of a fit fell from 5.6 to
 * 4.0 W once they were put back). Each stamp is placed where the grid
 * through its neighbours puts it (the median over 8 on each side of their
 * stamps moved by whole median periods), if most of those neighbours sit on
 * that grid and the stamp is within a quarter period of it; a series that is
 * no grid (irregular sampling, gaps) keeps its stamps. */
tw_status tw_updates_regularize(tw_update_series *u);

size_t tw_updates_index_at(const tw_update_series *u, double t);
double tw_updates_hold_integral(const tw_update_series *u, double a, double b);
double tw_updates_counter_at(const tw_update_series *u, double t);
double tw_updates_tiles_integral(const tw_update_series *u, double a, double b);

/* Deconvolution of a boxcar-averaged reading: values v_k published at u_k
 * are means over (u_k - W, u_k] (delay already removed from u_k). With the
 * cumulative energy F, W v_k = F(u_k) - F(u_k - W), so
 *   F(u_k) = W v_k + F(u_k - W),
 * with F(u_k - W) interpolated linearly between earlier F values, and F taken
 * as v_0 (t - u_0) + W v_0 before the first window is complete (the level
 * before the series is assumed constant). The output tiles the time:
 * observation k = (F(u_k) - F(u_{k-1})) / (u_k - u_{k-1}) over (u_{k-1}, u_k].
 * `in` holds the raw windows (t1 = u_k, t0 = u_k - W). */
tw_status tw_deconvolve_boxcar(const tw_obs *in, size_t n, double window_s, tw_obs_series *out);

#endif
