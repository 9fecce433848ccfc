/* Energy per launch by phase-shifted repetition (internal), after Yang et
 * al. 2024: a kernel is launched in blocks of back-to-back launches, the
 * blocks separated by gaps that shift their phase against the sensor's
 * update period (bench/plans.h tw_plan_repeat). Each block owns the time
 * from the middle of the gap before it to the middle of the gap after it
 * (the first and last block: up to `edge_s` beyond), so the sensor's lag and
 * the power's own tail stay with the block that caused them. A block's
 * dynamic energy is the mean power the observations saw over its time
 * (overlap-weighted: tiling, overlapping or partial windows alike) minus
 * idle, times its time; per launch it is that over its launches. The blocks
 * give a mean and a standard error. */
#ifndef TW_ATTRIB_REPEAT_H
#define TW_ATTRIB_REPEAT_H

#include "correct/observe.h"
#include "truewatt.h"

typedef struct tw_repeat_result {
    double per_launch_j;    /* dynamic energy per launch, mean over blocks */
    double per_launch_se_j; /* its standard error (spread over blocks / sqrt(blocks)) */
    double mean_launch_s;   /* mean launch duration */
    double power_w;         /* dynamic power while launches ran */
    unsigned blocks, launches;
} tw_repeat_result;

#define TW_REPEAT_BLOCK_GAP_S 0.01 /* launches closer than this form one block */

/* Blocks of the events named `name` (kind kernel or none). TW_ENOTFOUND when
 * there are none; TW_ENUMERIC when the observations do not cover a block. */
tw_status tw_repeat_estimate(const tw_obs *obs, size_t n, const tw_events *events, const char *name, double idle_w,
                             double edge_s, tw_repeat_result *out);

#endif
