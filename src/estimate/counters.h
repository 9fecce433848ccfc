/* The activity counters as the estimator's features (internal): from the
 * metrics CUPTI PM sampling recorded (runfile_pm.h) to a few shares of peak
 * that power follows (estimator.h, tw_est_counters; docs/methods.md):
 *
 *   sm      SMs active: sm__cycles_active.avg / gpc__cycles_elapsed.max
 *   tensor  tensor pipes active: sm__pipe_tensor_*.pct_of_peak_sustained_elapsed / 100
 *   issue   instructions issued per elapsed cycle and SM, over the 4 an SM can
 *           issue: sm__inst_executed.avg.per_cycle_active x sm / 4
 *   dram    DRAM throughput: dram__throughput.avg.pct_of_peak_sustained_elapsed / 100
 *   l2      L2 traffic: lts__t_sectors.sum per elapsed cycle / 128 (about the most the H100's L2
 *           moves: 118 in an L2-resident loop)
 *
 * Each draws power of its own (clocked SMs, tensor datapaths, instruction
 * issue, HBM traffic, L2 traffic); the others the run records (DRAM bytes,
 * clocks) repeat these in other units. Without l2 an L2-resident loop's
 * power had no feature to follow (the H100's mixed pattern: the names'
 * own terms took 174 W of its 300 W). A feature whose metrics were not recorded is
 * left out; without sm there are none.
 *
 * Power follows activity per second, the features are per elapsed cycle: a
 * kernel the power limiter slowed (a PyTorch GEMM at 1,550 MHz, its tensor
 * pipes 97 % busy) has the features of one at full clock. Where the
 * calibrated model that will be the prior names a reference clock
 * (tw_est_counters_clock), sm, tensor, issue and l2 are scaled by the
 * sample's GPC clock (gpc__cycles_elapsed.max over its span) over it; dram,
 * a share of the memory's bandwidth per second, is not. */
#ifndef TW_ESTIMATE_COUNTERS_H
#define TW_ESTIMATE_COUNTERS_H

#include <stddef.h>

#include "estimate/estimator.h"
#include "truewatt.h"

typedef struct tw_est_counter_set {
    tw_est_counters c; /* what the estimator takes (its arrays are the ones below) */
    double *t0_s, *t1_s, *v;
    size_t cap;
    char name[TW_EST_MAX_FEATURES][16];
    const char *names[TW_EST_MAX_FEATURES];
    size_t dropped; /* samples left out: longer than MAX_SAMPLE_INTERVALS intervals (a stall of the sampling), or
                       overlapping the one before by half their span */
    int at[6];      /* the metrics' places in a sample: SM cycles active, elapsed, then each feature's (-1: none) */
    size_t nmetrics;
    double interval_s;
    size_t clocked;      /* samples whose features were scaled by their clock (c.clock_mhz > 0) */
    double *w0_s, *w1_s; /* PM sampling's windows (tw_est_counters.nw) */
    size_t wcap;
} tw_est_counter_set;

/* The features of the comma-separated list `metrics` (as recorded) sampled
 * every interval_s, no sample yet; TW_ENOTFOUND (and why in tw_last_error)
 * when the metrics give no feature. Then each sample in order of start,
 * its span and its values (nmetrics of them, in the order of `metrics`):
 * the set grows by the features alone (5 doubles and its span a sample). */
tw_status tw_est_counters_begin(const char *metrics, double interval_s, tw_est_counter_set *out);
tw_status tw_est_counters_add(tw_est_counter_set *s, double t0_s, double t1_s, const float *values);
/* Before the first sample: scale the per-cycle features (sm, tensor, issue,
 * l2) by each sample's GPC clock over ref_mhz (the calibrated model's
 * reference, tw_activity_model.clock_mhz; <= 0 or NaN: no scaling). */
void tw_est_counters_clock(tw_est_counter_set *s, double ref_mhz);
/* A window PM sampling was enabled in (sampling in windows), in order:
 * TW_EINVAL for one that is no span or starts before the last one ended. */
tw_status tw_est_counters_window(tw_est_counter_set *s, double t0_s, double t1_s);
void tw_est_counter_set_free(tw_est_counter_set *s);

#endif
