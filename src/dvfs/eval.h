/* The model against measured rows (internal): MAPE overall, per kernel
 * (benchmark), per regime as the model classifies, and the worst points. */
#ifndef TW_DVFS_EVAL_H
#define TW_DVFS_EVAL_H

#include <stdbool.h>
#include <stddef.h>

#include "dvfs/data.h"
#include "dvfs/model.h"

/* TW_DVFS_WORST (the worst points listed): truewatt.h */

typedef struct tw_dvfs_point {
    const tw_dvfs_row *row;
    tw_dvfs_prediction pred;
    double ape; /* |C - C_real| / C_real */
} tw_dvfs_point;

typedef struct tw_dvfs_group {
    char name[64];
    size_t n;
    double mape; /* NaN when n = 0 */
} tw_dvfs_group;

typedef struct tw_dvfs_eval {
    tw_dvfs_point *points; /* the rows evaluated, in file order */
    size_t n;
    size_t skipped;         /* rows outside the authors' evaluation set */
    double mape;            /* over all points (not per kernel first), as the paper */
    tw_dvfs_group *kernels; /* by appName, in order of first appearance */
    size_t nkernels;
    tw_dvfs_group regimes[TW_DVFS_REGIMES];
    size_t worst[TW_DVFS_WORST]; /* indices into points, largest APE first */
    size_t nworst;
} tw_dvfs_eval;

/* True for the rows the authors evaluated: both clocks >= 500 MHz and one of
 * their 20 benchmarks (ten "extras" are left out, dvfs-model.md §2.5). */
bool tw_dvfs_in_paper_set(const tw_dvfs_row *r);

/* Predicts every row (all of them when all_kernels, else the paper's set).
 * TW_EEMPTY when no row is left; the model's errors as they come. */
tw_status tw_dvfs_evaluate(const tw_dvfs_params *p, const tw_dvfs_data *d, bool paper_compat, bool all_kernels,
                           tw_dvfs_eval *out);
void tw_dvfs_eval_free(tw_dvfs_eval *e);

#endif
