/* What the simulator needs from a scenario beyond the public API: the true
 * power signal as its list of piecewise-constant segments. */
#ifndef TW_SENSOR_SCENARIO_INTERNAL_H
#define TW_SENSOR_SCENARIO_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "truewatt.h"

typedef struct tw_segment {
    double t0_s;    /* start; the segment lasts until the next one starts */
    double power_w; /* true power, constant over the segment */
    bool tail_step; /* begins with a downward step of the K20 tail (stalls the sensor) */
} tw_segment;

/* The segments in time order, never empty. Segment 0 starts at t = 0 and
 * also stands for t < 0; the last one lasts forever. The pointer stays
 * valid until the scenario is changed (add_kernel, set_duration) or freed. */
size_t tw_scenario_nsegments(const tw_scenario *s);
const tw_segment *tw_scenario_segments(const tw_scenario *s);

/* Index of the segment that holds t_s (0 for t_s < 0). */
size_t tw_scenario_segment_at(const tw_scenario *s, double t_s);

#endif
