/* From microbenchmark numbers to Wang & Chu's hardware parameters
 * (internal; dvfs-model.md §2.6 and §4.2). Everything is in core cycles at
 * the clocks the numbers were measured at (fc measured, fm given).
 *
 * One clock pair cannot separate a frequency-dependent parameter's parts, so
 * two assumptions are made and stated in the output:
 *   L_DM = a_L*fc/fm + b_L: the part of a DRAM access up to an L2 hit (L_L2)
 *     is taken as core-clock time (b_L = L_L2), the rest as memory-clock time;
 *   D_DM = (a_D/fm + b_D)*fc/fm: the departure delay is bandwidth-bound,
 *     bandwidth proportional to fm (a_D = 0, b_D = D_DM*fm/fc).
 * Their effect shows only away from the measured pair. */
#ifndef TW_DVFS_HWPARAMS_H
#define TW_DVFS_HWPARAMS_H

#include "dvfs/model.h"
#include "dvfs/ubench.h"

/* The directly measured quantities, in cycles (per access / instruction / sector). */
typedef struct tw_dvfs_measured {
    double l_dm, l_l2, l_sh, l_inst; /* latencies */
    double d_inst, d_dp, d_sh;       /* issue delays as the model defines them */
    double d_l2, d_dm;               /* departure delays: SM cycles per 32-B sector per SM */
    double bw_l2_gbs, bw_dram_gbs;   /* the bandwidths behind them */
} tw_dvfs_measured;

/* FP32 lanes per SM by compute capability (C_SM): 64 for 6.0, 7.x and 8.0,
 * 128 for the others from 5.0 on. */
int tw_dvfs_fp32_lanes(int cc);

/* TW_EINVAL naming the first quantity that is missing, not finite or not positive. */
tw_status tw_dvfs_measured_from(const tw_dvfs_ubench *u, tw_dvfs_measured *m);

/* The parameter set at memory clock mem_mhz (the SM clock is u->sm_mhz), with
 * the assumptions above; W_max from the threads an SM holds, the occupancy
 * threshold the paper's 0.30, the texture terms 1 (unused outside --paper-compat). */
tw_status tw_dvfs_params_from(const tw_dvfs_ubench *u, const tw_dvfs_measured *m, double mem_mhz, tw_dvfs_params *p);

#endif
