/* Energy-optimal clock pairs (internal): per kernel, the pair that minimises
 * predicted energy (or energy-delay product), predicted time from Wang &
 * Chu's model (model.h) and power from a model fitted on the other kernels
 * (power_model.h), checked against the energy measured at every pair. */
#ifndef TW_DVFS_ENERGY_H
#define TW_DVFS_ENERGY_H

#include <stdbool.h>
#include <stddef.h>

#include "dvfs/data.h"
#include "dvfs/model.h"
#include "dvfs/power_model.h"

typedef enum tw_dvfs_objective {
    TW_DVFS_OBJ_ENERGY = 0, /* P T, W ms = mJ */
    TW_DVFS_OBJ_EDP,        /* P T^2, mJ ms */
} tw_dvfs_objective;

const char *tw_dvfs_objective_name(tw_dvfs_objective o); /* "energy", "edp" */
double tw_dvfs_objective_value(tw_dvfs_objective o, double power_w, double time_ms);
/* The index of the smallest objective over n (power, time) points; the first on a tie. n > 0. */
size_t tw_dvfs_argmin(tw_dvfs_objective o, const double *power_w, const double *time_ms, size_t n);

/* One measured clock pair of one kernel. */
typedef struct tw_dvfs_energy_point {
    const tw_dvfs_row *row; /* the measured time and the clocks */
    double power_w;         /* measured */
    double time_pred_ms;    /* Wang & Chu, from the kernel's counters at the default pair */
    double power_pred_w;    /* the power model fitted without this kernel */
} tw_dvfs_energy_point;

/* One kernel (appName): indices into the evaluation's points. */
typedef struct tw_dvfs_kernel_energy {
    char name[64];
    size_t first, n;    /* its points are points[first .. first + n) */
    size_t def;         /* the default pair */
    size_t opt;         /* the measured optimum: measured power and time */
    size_t rec;         /* the recommendation: predicted power and time */
    size_t rec_tmeas;   /* the recommendation with predicted power and measured time */
    double saving_pred; /* 1 - objective(rec) / objective(def), both predicted */
    double saving_rec;  /* the same, measured */
    double saving_opt;  /* the measured optimum's */
    double above_rec;   /* measured objective(rec) / objective(opt) - 1 */
    double above_tmeas; /* the same for rec_tmeas */
} tw_dvfs_kernel_energy;

typedef struct tw_dvfs_energy_eval {
    tw_dvfs_objective objective;
    tw_dvfs_power_kind power_kind;
    double core_def_mhz, mem_def_mhz; /* the default pair: the highest core and memory clocks of the rows */
    tw_dvfs_energy_point *points;     /* grouped by kernel, in order of first appearance, then file order */
    size_t n;
    size_t skipped; /* rows outside the authors' evaluation set */
    tw_dvfs_kernel_energy *kernels;
    size_t nkernels;
    double power_mape; /* leave-one-kernel-out, over the points other than the default pair */
    size_t power_points;
    double time_mape; /* the time model from the default pair's counters, over all points */
    /* over kernels */
    double mean_above_rec, mean_above_tmeas, mean_saving_pred, mean_saving_rec, mean_saving_opt;
    size_t worst_rec, worst_tmeas; /* kernels with the largest above_rec, above_tmeas */
} tw_dvfs_energy_eval;

/* Evaluates every kernel of d (all rows when all_kernels, else the authors'
 * set, eval.h) whose power is power_w[i] for row i. Each kernel needs a row at
 * the default pair: its counters there drive the time model (one profile, as
 * the model is meant to be used) and the power model. TW_EINVAL names a kernel
 * without it; TW_EEMPTY when no row is left; the models' errors as they come. */
tw_status tw_dvfs_energy_evaluate(const tw_dvfs_params *p, const tw_dvfs_data *d, const double *power_w,
                                  tw_dvfs_power_kind kind, tw_dvfs_objective objective, bool all_kernels,
                                  tw_dvfs_energy_eval *out);
void tw_dvfs_energy_eval_free(tw_dvfs_energy_eval *e);

#endif
