/* NVTX ranges' energy anchored at the energy counter's reads (internal).
 *
 * The estimator gives each range the sample buffer over its span, scaled by
 * the buffer's gain over the whole fit; on an H100 that gain scatters by
 * ~1 % over a fraction of a second (0.7-1.1 s training steps came out
 * -1.05 .. +1.34 % off the counter's difference). Nor do the counter's
 * windows as the estimator places them do: a read's value is the energy up
 * to the last point of the counter's update grid before the read (up to a
 * period, 100 ms on an H100, earlier), so windows between reads 0.5 s apart
 * are each up to 20 % off in length; over minutes that cancels, over a range
 * of a fraction of a second it does not (shared by the buffer's shape, a
 * range before the first kernel came out 4-8 % off on the fake NVML).
 *
 * One pass over the trace's rows feeds the anchor the API's sessions use
 * (src/api/anchor.h: the grid's phase fitted from the reads against the
 * buffer's integral, each read a knot at its grid boundary): each range's
 * energy is the counter's difference between the knots around it, the
 * buffer's shape in between, with its sd. */
#ifndef TW_ESTIMATE_RANGE_ENERGY_H
#define TW_ESTIMATE_RANGE_ENERGY_H

#include <stddef.h>

#include "correct/profile.h"
#include "estimate/estimator.h"
#include "truewatt.h"

typedef struct tw_est_span {
    size_t event; /* index into the events */
    double start_s, end_s, energy_j, sd_j;
} tw_est_span;

typedef struct tw_est_anchored {
    tw_est_span *ranges; /* the events' NVTX ranges, by event index; energy_j NaN: not measured */
    size_t nranges;
} tw_est_anchored;

/* The pass over src's rows (from its start): the shape from column
 * shape_col (shape_m, the sample buffer), the counter from counter_col
 * (counter_m, a trusted counter model), the ranges of events (kind "nvtx"). */
tw_status tw_est_anchor_pass(tw_sensor *src, size_t shape_col, const tw_reading_model *shape_m, size_t counter_col,
                             const tw_reading_model *counter_m, const tw_events *events, tw_est_anchored *out);
/* e's ranges measured by the pass: energy_j and energy_sd_j, and baseline_j
 * (energy_j - above_j); a range it did not measure keeps the estimator's. */
void tw_est_anchored_apply(const tw_est_anchored *a, tw_estimate *e);
void tw_est_anchored_free(tw_est_anchored *a);

#endif
