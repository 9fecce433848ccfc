/* Cross-validation of the DVFS parameter fit (internal): the rows are split
 * into folds by clock pair (every row of a held-out (core, memory) pair is
 * out) or by kernel (every row of a held-out appName is out); each fold is
 * predicted by parameters fitted to the other folds only. */
#ifndef TW_DVFS_CV_H
#define TW_DVFS_CV_H

#include <stddef.h>

#include "dvfs/data.h"
#include "dvfs/model.h"
#include "truewatt.h"

typedef enum tw_dvfs_cv_by {
    TW_DVFS_BY_CLOCK_PAIR = 0, /* new clock pairs of known kernels */
    TW_DVFS_BY_KERNEL,         /* new kernels at known clock pairs (leave-kernels-out) */
} tw_dvfs_cv_by;

const char *tw_dvfs_cv_by_name(tw_dvfs_cv_by by); /* "clock pair", "kernel" */

/* TW_DVFS_CV_MIN_PAIRS (by clock pair, fewer pairs: one pair per fold): truewatt.h */

/* Deterministic folds: the groups (clock pairs, or appNames) sorted (by core
 * then memory clock; by name), group number g in that order goes to fold
 * g mod k, so neighbouring pairs and names land in different folds. k is
 * capped at the number of groups; by clock pair with fewer than
 * TW_DVFS_CV_MIN_PAIRS pairs each pair is its own fold. Writes each row's
 * fold to fold[i]; returns the number of folds (0 when n is 0 or k < 2) and
 * the number of groups in *groups. */
size_t tw_dvfs_folds(const tw_dvfs_row *const *rows, size_t n, tw_dvfs_cv_by by, size_t k, size_t *fold,
                     size_t *groups);

typedef struct tw_dvfs_fold {
    size_t train, test; /* rows */
    size_t groups;      /* clock pairs or kernels held out */
    char held_out[256]; /* their names ("BlackScholes nn", "500/600 700/800"), cut with "..." when long */
    size_t free;        /* parameters fitted on the training rows (the others held) */
    double mape;        /* on the held-out rows, with parameters fitted without them */
    double start_mape;  /* on the held-out rows, with the starting parameters */
    double train_mape;  /* on the training rows, fitted (in-sample) */
} tw_dvfs_fold;

typedef struct tw_dvfs_cv {
    tw_dvfs_cv_by by;
    size_t groups, nfolds, n;
    tw_dvfs_fold *folds;
    double mape; /* over all held-out points, each row once (as the paper's MAPE, not per fold first) */
} tw_dvfs_cv;

/* Called after each fold (progress notes). */
typedef void (*tw_dvfs_cv_progress)(void *ctx, const tw_dvfs_cv *cv, size_t fold);

/* Fits each fold's training rows from `start` (tw_dvfs_fit_rows) and
 * predicts its held-out rows. TW_EINVAL when there are fewer than two
 * groups, or from the fit; TW_ENOMEM. */
tw_status tw_dvfs_cross_validate(const tw_dvfs_params *start, const tw_dvfs_row *const *rows, size_t n,
                                 tw_dvfs_cv_by by, size_t k, tw_dvfs_cv_progress progress, void *ctx, tw_dvfs_cv *out);
void tw_dvfs_cv_free(tw_dvfs_cv *cv);

#endif
