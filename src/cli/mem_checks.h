/* The counter checks from the command line (mem check, mem calibrate):
 * Nsight Compute runs `truewatt mem counters` in a process of its own, and
 * its CSV is checked against the manifest (bench/mem_check.h). */
#ifndef TW_CLI_MEM_CHECKS_H
#define TW_CLI_MEM_CHECKS_H

#include <stdint.h>

#include "bench/mem_check.h"
#include "cli/experiment.h"

typedef struct mem_check_request {
    const char *ncu; /* the ncu program (a path, or a name on $PATH) */
    const char *dir; /* ncu.csv, manifest.csv and the counter run's files go here */
    uint64_t iterations;
    const tw_mem_run_options *run;
    const cli_exp_args *exp;
} mem_check_request;

/* Runs ncu over the counter runs and checks them; a CLI exit code. */
int mem_checks_run(const char *cmd, const mem_check_request *q, tw_mem_check_row **rows, size_t *n);
void mem_checks_print(const tw_mem_check_row *rows, size_t n);
int mem_checks_write(const char *cmd, const char *dir, const tw_mem_check_row *rows, size_t n, const char *prov);

/* "shared,l1" from a level mask; "load,store" from an operation mask. */
void mem_levels_text(unsigned mask, char *buf, size_t cap);
void mem_ops_text(unsigned mask, char *buf, size_t cap);

#endif
