/* Least-squares fit of Wang & Chu's hardware parameters to measured rows
 * (internal). The frequency-dependent and delay/latency parameters are
 * fitted; the structural ones (W_max, N_SM, C_SM, the texture pair and the
 * occupancy threshold) stay those of a starting parameter set. The model is
 * the honest one: no kernel-name special cases (paper_compat off). */
#ifndef TW_DVFS_FIT_H
#define TW_DVFS_FIT_H

#include <stdbool.h>
#include <stddef.h>

#include "dvfs/data.h"
#include "dvfs/model.h"
#include "truewatt.h"

#define TW_DVFS_FIT_PARAMS 11 /* a_L b_L a_D b_D L_L2 D_L2 L_INST D_INST L_sh D_sh D_DP */

/* Why a parameter was not fitted. */
typedef enum tw_dvfs_hold {
    TW_DVFS_FITTED = 0,
    TW_DVFS_HELD_ONE_MEM_CLOCK, /* a memory-clock coefficient, and the rows have one memory clock */
    TW_DVFS_HELD_NO_EFFECT,     /* changing it moves no prediction (e.g. L_L2 without latency-bound rows) */
    TW_DVFS_HELD_COLLINEAR,     /* it moves the predictions only as the fitted ones already do */
    TW_DVFS_HELD_ZERO_START,    /* its start is 0 (a_L, a_D of a one-clock-pair set): log space cannot move it */
    TW_DVFS_HOLDS
} tw_dvfs_hold;

/* A short reason, for reports: "one memory clock", "no effect on these rows", "collinear", "start is 0". */
const char *tw_dvfs_hold_name(tw_dvfs_hold h);

typedef struct tw_dvfs_fit_param {
    const char *key; /* as in the parameter files: "a_L", ... */
    double start, value;
    tw_dvfs_hold hold;
    int like;      /* HELD_COLLINEAR: index of the fitted parameter it moves the rows most like; else -1 */
    bool at_bound; /* the fit stopped at the search box (start / 1000 .. start * 1000) */
} tw_dvfs_fit_param;

typedef struct tw_dvfs_fit {
    tw_dvfs_params params; /* the starting set with the fitted values in */
    tw_dvfs_fit_param param[TW_DVFS_FIT_PARAMS];
    size_t free;             /* parameters fitted */
    size_t n;                /* rows fitted to */
    size_t mem_clocks;       /* distinct memory clocks among them */
    double start_mape, mape; /* over the rows: with the starting parameters, with the fitted ones */
    double cost;             /* sum of squared relative time errors at the fitted parameters */
    unsigned iterations;     /* accepted steps over all starts */
} tw_dvfs_fit;

/* Fits to n rows (pointers, so that a fold is a subset without copies),
 * minimising the sum of squared relative errors of the predicted time by
 * Levenberg-Marquardt in log parameters (positive by construction) with
 * finite differences, from the starting set and from a few fixed,
 * deterministic perturbations of it; the best result wins. Parameters the
 * rows cannot identify are held at their start value (hold says why).
 * TW_EINVAL when a row has no finite prediction or there are fewer rows than
 * parameters to fit; TW_ENOMEM. */
tw_status tw_dvfs_fit_rows(const tw_dvfs_params *start, const tw_dvfs_row *const *rows, size_t n, tw_dvfs_fit *out);

/* MAPE of p (honest model) over n rows; TW_EINVAL when a row has no finite prediction. */
tw_status tw_dvfs_rows_mape(const tw_dvfs_params *p, const tw_dvfs_row *const *rows, size_t n, double *mape);

#endif
