/* Wang & Chu's GPU performance model under core and memory frequency scaling
 * (IEEE TPDS 31(12), 2020; the authors' analytical.py::qiang2018 at
 * NV-DVFS-Benchmark 762270111a), as described in shared/docs/dvfs-model.md
 * section 2 (internal). Latencies and delays are in core cycles; clocks in
 * MHz as the data set reports them. */
#ifndef TW_DVFS_MODEL_H
#define TW_DVFS_MODEL_H

#include <stdbool.h>
#include <stdio.h>

#include "dvfs/data.h"
#include "truewatt.h"

/* One GPU's hardware parameters (settings.py; names as in dvfs-model.md §2.6). */
typedef struct tw_dvfs_params {
    char name[32];     /* gtx980, gtx1080ti, p100, v100, ...: the paper-compat cases key on v100 */
    char source[1024]; /* where the numbers come from */
    double a_l, b_l;   /* DRAM latency a_L*fc/fm + b_L */
    double a_d, b_d;   /* DRAM departure delay (a_D/fm + b_D)*fc/fm */
    double l_l2, d_l2, l_inst, d_inst, l_sh, d_sh, d_dp, d_tex, tex_units;
    double w_max, n_sm, c_sm; /* warps per SM, SMs, FP32 lanes per SM */
    double occ_threshold;     /* below it (or at it) latency cannot be hidden */
} tw_dvfs_params;

/* Reads a parameter set (a JSON object with the keys of the files in data/dvfs/).
 * TW_EPARSE names the file and the key that is missing or not a positive number. */
tw_status tw_dvfs_params_load(const char *path, tw_dvfs_params *p);
/* Writes p as a parameter file that tw_dvfs_params_load reads back (the
 * same keys; numbers to 10 significant digits). TW_EIO on a write error. */
tw_status tw_dvfs_params_write(FILE *f, const tw_dvfs_params *p);

typedef enum tw_dvfs_regime {
    TW_DVFS_COMPUTE = 0, /* enough warps; the SM pipes take longer than memory */
    TW_DVFS_MEMORY,      /* enough warps; memory queueing takes longer */
    TW_DVFS_LATENCY,     /* too few warps to hide latency */
    TW_DVFS_REGIMES
} tw_dvfs_regime;

const char *tw_dvfs_regime_name(tw_dvfs_regime r); /* "compute", "memory", "latency" */

typedef struct tw_dvfs_prediction {
    double cycles;      /* C: core cycles per round */
    double real_cycles; /* the measured time in the same units */
    double rounds;      /* R, fractional */
    double time_ms;     /* predicted */
    tw_dvfs_regime regime;
    /* intermediates, for tests and reports */
    double n_g, n_sh, n_inst, miss, l_dm, d_dm, t_mem, t_sm;
} tw_dvfs_prediction;

/* Predicts one measured row. paper_compat adds the kernel-name special cases
 * of dvfs-model.md §2.7 that the published errors depend on (off for the
 * honest model). TW_EINVAL when the row leads to no finite prediction (no
 * global memory traffic in the latency-bound regime). */
tw_status tw_dvfs_predict(const tw_dvfs_params *p, const tw_dvfs_row *r, bool paper_compat, tw_dvfs_prediction *out);

#endif
