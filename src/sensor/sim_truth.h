/* The simulator's ground truth about its own sensors (internal): the model
 * of correct/profile.h that each simulated reading follows by construction,
 * so tests can check what `truewatt sensor identify` fits against it. */
#ifndef TW_SENSOR_SIM_TRUTH_H
#define TW_SENSOR_SIM_TRUTH_H

#include "correct/profile.h"
#include "truewatt.h"

/* The true profile of simulator profile `p`: one reading model per simulated
 * sensor reading (true_power_w left out), in the backend's order, with the
 * response, median update period, window, delay, C and coverage the
 * simulator uses (period spread, residuals and update counts are not
 * truths: NaN and 0); the levels of the identification experiment on the
 * simulator (bench/exec_sim.c): idle before the context, active idle, and
 * the calibration kernel's power above active idle. gpu is "simulated k20"
 * or "simulated h100", driver and backend "sim". TW_EINVAL for an unknown
 * profile or NULL out. */
tw_status tw_sim_truth(tw_sim_profile p, tw_profile *out);

#endif
