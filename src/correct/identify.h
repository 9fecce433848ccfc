/* Sensor identification (internal): fits, for every power or energy reading
 * of a trace, the model of correct/profile.h that best explains it given
 * when kernels ran (the events). The true power is taken as two levels,
 * active idle and active idle + step, switched by the kernels; each
 * candidate model turns that switching signal into a predicted unit
 * response at every update, and a straight-line fit of the reading against
 * it gives the levels and the residual. Candidates:
 *   - boxcar/window: the mean over (u - D - W, u - D], W from 1 ms to 2.5 s
 *   - tiling: the mean over the interval since the previous update, minus D
 *     (a sample buffer; a counter's differences)
 *   - rc: a first-order lag of time constant C (Kepler), sampled at u - D
 * searched on a coarse grid and refined; the smallest residual wins. A
 * counter is fitted on its differences. The pre-context level is the
 * median of what the reading showed before the context was created. */
#ifndef TW_CORRECT_IDENTIFY_H
#define TW_CORRECT_IDENTIFY_H

#include "correct/profile.h"
#include "truewatt.h"

typedef struct tw_identify_options {
    double t_end_s;             /* fit only updates up to here (NaN: the whole trace) */
    const volatile int *cancel; /* nonzero: stop with TW_EINTERRUPTED */
} tw_identify_options;

void tw_identify_options_init(tw_identify_options *o);

/* Per-reading detail beyond the model, for reports. */
typedef struct tw_identify_extra {
    double idle_w;        /* the reading's pre-context level */
    double active_idle_w; /* the fit's intercept */
    double step_w;        /* the fit's slope: the kernel's power above active idle */
} tw_identify_extra;

/* Fills out->r[] (one model per identified reading, in trace order) and the
 * levels (from the best reading for energy); leaves gpu/driver/backend/
 * created/command to the caller. extra (may be NULL) gets one entry per
 * model. Needs a "context" event (kind "marker") and kernels after it:
 * TW_EINVAL naming what is missing otherwise. */
tw_status tw_identify(tw_sensor *src, const tw_events *events, const tw_identify_options *opt, tw_profile *out,
                      tw_identify_extra *extra);

/* Readings that measure the whole board's power (not a memory domain, not
 * the simulator's truth): those a profile's best pick may use. */
bool tw_identify_board_reading(const char *name, void *ctx);

#endif
