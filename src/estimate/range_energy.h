/* NVTX ranges' energy anchored at the energy counter's reads (internal).
 *
 * The estimator gives each range the finest reading's energy over its span
 * scaled by that reading's gain over the whole fit. On an H100 the sample
 * buffer's gain scatters by ~1 % over a fraction of a second (0.7-1.1 s
 * training steps came out -1.05 .. +1.34 % off the counter's difference), so
 * where the trace holds the counter, a range's energy is the counter's
 * difference between its reads with the buffer's shape in between: the
 * same anchor (src/api/anchor.h), fed row by row as the API session feeds
 * it, that gives the API's regions their energy. */
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
