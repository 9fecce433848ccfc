/* The estimator on a recorded trace (internal): which of the trace's
 * readings it fits and under which model, for one device's columns.
 *
 * The driver's sample buffer (power_buffer_w) gives the time resolution and
 * the energy counter (energy_j) the total; both are used when present, each
 * under the sensor profile's model of it, else under the model identified
 * on an H100 (the safest for a Hopper-class GPU; said in the notes). A trace
 * with neither falls back to the profile's best reading of the board's power
 * (else power_usage_w as a 1 s average, deconvolved), with a note. */
#ifndef TW_ESTIMATE_TRACE_H
#define TW_ESTIMATE_TRACE_H

#include <stddef.h>

#include "correct/profile.h"
#include "estimate/estimator.h"
#include "truewatt.h"

typedef struct tw_est_trace_info {
    char readings[512]; /* "power_buffer_w (rc C 13.2 ms, profile), energy_j (counter, profile)" */
    char notes[1024];   /* lines: a default model used, a fallback */
} tw_est_trace_info;

/* `prefix` selects a device's columns ("" or "gpuN_"); `profile` may be NULL.
 * `info` may be NULL. The events come from a feed (an event set's:
 * tw_feed_of_events), replayed once; it must outlive the result. */
tw_status tw_estimate_trace(const char *trace_path, const char *prefix, const tw_profile *profile,
                            const tw_feed *events, const tw_est_config *cfg, tw_estimate **out,
                            tw_est_trace_info *info);

/* The model the estimator assumes for a reading without a profile (the H100's,
 * from data/profiles/), or NULL when it has none for that name. */
const tw_reading_model *tw_est_default_model(const char *name);

#endif
