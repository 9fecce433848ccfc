/* Whole-run energy by each naive method (internal), for the report to show
 * beside the estimator's: the energy counter's difference, the integral of
 * the sample buffer, trapezoids of the power readings, the MTSM-style mean
 * of the instant reading times the time (Arafa et al. 2020 Eq. 2), and the
 * K20's RC correction (Burtscher et al. 2014) applied to power_usage_w. */
#ifndef TW_ESTIMATE_METHODS_H
#define TW_ESTIMATE_METHODS_H

#include "truewatt.h"

typedef struct tw_methods {
    double start_s, end_s;
    double counter_j;         /* energy counter, interpolated at the ends */
    double buffer_j;          /* integral of the sample buffer */
    double trap_usage_j;      /* trapezoid of power_usage_w */
    double trap_instant_j;    /* trapezoid of power_instant_w */
    double mtsm_j;            /* mean of power_instant_w polls x time */
    double rc_k20_j;          /* RC-corrected power_usage_w (K20 model: not valid on H100) */
    double module_j;          /* Grace Hopper: trapezoid of the module's power (GPU + CPU + memory), NaN elsewhere */
    char module_reading[128]; /* which reading gave module_j ("" when none) */
    char rc_note[256];        /* why rc_k20_j is NaN, when it is */
} tw_methods;

/* Over [start_s, end_s] of the trace's columns with `prefix` ("" or
 * "gpuN_"); a method whose reading is absent is NaN. */
tw_status tw_methods_run(const char *trace_path, const char *prefix, double start_s, double end_s,
                         const volatile int *cancel, tw_methods *out);

#endif
