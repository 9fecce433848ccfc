/* Phase-shifted repetition (internal), after Yang et al. 2024: blocks of
 * back-to-back calls whose starts are spread over the phases of the best
 * reading's update period, so the sensor's windows see the work at every
 * phase; the energy per call is the estimator's (estimate/estimator.h) for
 * the blocks' name over its calls, each name one unknown. One implementation
 * for `truewatt measure-kernel` (a GPU kernel through the executor, or the
 * simulator) and tw_measure (a caller's function inside its program). */
#ifndef TW_BENCH_REPEAT_H
#define TW_BENCH_REPEAT_H

#include <stdbool.h>
#include <stddef.h>

#include "estimate/estimator.h"
#include "truewatt.h"

/* The gap after block b: base_gap_s + (b mod phases) * period_s / phases. */
double tw_repeat_gap_s(size_t b, size_t phases, double period_s, double base_gap_s);

/* One name's figures from the estimate. */
typedef struct tw_repeat_name {
    bool found;
    unsigned launches, blocks;                     /* its events, and the blocks they form (gaps of 10 ms or more) */
    double mean_launch_s;                          /* per event */
    double per_launch_j, per_launch_sd_j, upper_j; /* above the baseline, per event */
    double power_w;                                /* above the baseline while it runs */
    tw_est_status status;
} tw_repeat_name;

typedef struct tw_repeat_result {
    tw_repeat_name rep, ref; /* the repetition's name, and the steady reference's (when asked) */
    double baseline_w;       /* the estimator's mean baseline */
    char readings[160];      /* which readings the estimate used */
} tw_repeat_result;

/* The estimate over readings rd (the first the best, a second the energy
 * counter as the reference) and the events; `ref_label` may be NULL. */
tw_status tw_repeat_estimate(const tw_est_reading *rd, size_t nrd, const tw_events *events, const tw_est_config *cfg,
                             const char *label, const char *ref_label, tw_repeat_result *out);

#endif
