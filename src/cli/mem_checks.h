/* The counter checks from the command line (mem check, mem calibrate):
 * Nsight Compute runs `truewatt mem counters` in a process of its own;
 * the library checks its CSV against the manifest (tw_mem_check_report). */
#ifndef TW_CLI_MEM_CHECKS_H
#define TW_CLI_MEM_CHECKS_H

#include <stdint.h>

#include "cli/experiment.h"

typedef struct mem_check_request {
    const char *ncu; /* the ncu program (a path, or a name on $PATH) */
    const char *dir; /* ncu.csv, manifest.csv and the counter run's files go here */
    uint64_t iterations;
    const tw_mem_options *mem;
    const cli_exp_args *exp;
} mem_check_request;

/* Runs ncu over the counter runs: manifest and log (cap bytes each) get the
 * paths of the manifest and ncu's CSV. A CLI exit code. */
int mem_checks_run(const char *cmd, const mem_check_request *q, char *manifest, char *log, size_t cap);

#endif
