/* The energy counter's windows on a recorded trace, each read placed at
 * its boundary on the counter's fitted update grid (internal).
 *
 * A read of the counter returns the energy up to the last point of its
 * update grid (every 100 ms on an H100) at least its delay before the
 * read: up to a period before it. Placed at the read's own time less the
 * delay (correct/observe.c), each window between reads is up to a period
 * off in length. Reads exactly 0.5 s apart keep one offset, which cancels;
 * a read late by tens of ms (a sampler thread that waited for a core on a
 * loaded host) does not: on the fake NVML at a constant 400 W, one read
 * 100 ms late made a 1.5 s program's measured energy 10 % low (CI,
 * cli.e2e.gpu_exporter_procs_fake), since the counter's windows scale every
 * reading (the estimator's reference) and the process's share.
 *
 * One pass over the trace's rows feeds the anchor the API's sessions and
 * the report's NVTX ranges use (src/api/anchor.h: the grid's phase fitted
 * from the reads against the sample buffer's integral): its knots are the
 * windows' edges, each window's power the counter's difference over it. */
#ifndef TW_ESTIMATE_COUNTER_GRID_H
#define TW_ESTIMATE_COUNTER_GRID_H

#include <stdbool.h>
#include <stddef.h>

#include "correct/observe.h"
#include "correct/profile.h"
#include "truewatt.h"

/* How the windows were placed: on the fitted grid; else the reads (how
 * many) at the phase on the grid that most of them share, those off it
 * left out (a short run: the grid needs eight reads, about 4 s). */
typedef struct tw_counter_placement {
    bool fitted;
    size_t reads, left_out;
} tw_counter_placement;

/* The counter's windows (column counter_col, model counter_m; reads: its
 * updates as tw_updates_read gives them) from the rows of src (from its
 * start), the shape from column shape_col (shape_m, the sample buffer): between the knots of the fitted grid, else
 * between the reads at their common phase. Where its reads come about as often as it updates (each update then seen
 * within a read's gap), or are fewer than three: none, out left empty; the caller then places the reads as they come
 * (tw_observe_updates). */
tw_status tw_est_counter_windows(tw_sensor *src, size_t shape_col, const tw_reading_model *shape_m, size_t counter_col,
                                 const tw_reading_model *counter_m, const tw_update_series *reads, tw_obs_series *out,
                                 tw_counter_placement *how);

#endif
