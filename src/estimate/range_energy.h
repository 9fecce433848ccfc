/* NVTX ranges' energy anchored at the energy counter's reads (internal).
 *
 * The estimator gives each range the sample buffer over its span, scaled by
 * the buffer's gain over the whole fit; on an H100 that gain scatters by
 * ~1 % over a fraction of a second (0.7-1.1 s training steps came out
 * -1.05 .. +1.34 % off the counter's difference). The counter's windows
 * (on its fitted grid: counter_grid.h) are 0.5 s long, a range's edges fall
 * inside them: between them the buffer's shape, scaled to the two knots
 * around each edge, not the buffer's gain over the whole fit.
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

/* Each of e's ranges: energy_j and energy_sd_j from the rows of src (from
 * its start), the shape from column shape_col (shape_m, the sample buffer),
 * the totals from column counter_col (counter_m, a trusted counter model);
 * baseline_j follows (energy_j - above_j). A range the shape does not cover
 * keeps the estimator's energy. */
tw_status tw_est_anchor_ranges(tw_sensor *src, size_t shape_col, const tw_reading_model *shape_m, size_t counter_col,
                               const tw_reading_model *counter_m, tw_estimate *e);

#endif
