/* The sub-commands of `truewatt dvfs` (cmd_dvfs.c dispatches), each in its own file. */
#ifndef TW_CLI_DVFS_CMDS_H
#define TW_CLI_DVFS_CMDS_H

int tw_cmd_dvfs_fit(int argc, char **argv);     /* cmd_dvfs_fit.c: least-squares parameters, cross-validated */
int tw_cmd_dvfs_energy(int argc, char **argv);  /* cmd_dvfs_energy.c: energy-optimal clock pairs */
int tw_cmd_dvfs_clocks(int argc, char **argv);  /* cmd_dvfs_clocks.c: supported and current clocks (read only) */
int tw_cmd_dvfs_lock(int argc, char **argv);    /* cmd_dvfs_lock.c: a command under locked clocks */
int tw_cmd_dvfs_rows(int argc, char **argv);    /* cmd_dvfs_rows.c: measured kernels as model rows */
int tw_cmd_dvfs_params(int argc, char **argv);  /* cmd_dvfs_params.c: hardware parameters by microbenchmark */
int tw_cmd_dvfs_predict(int argc, char **argv); /* cmd_dvfs_predict.c: a kernel over the supported clocks */

#endif
