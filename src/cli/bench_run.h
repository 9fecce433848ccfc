/* The frame of a microbenchmark command (isa, mem calibrate): the sensor
 * profile (given, looked up for the GPU and driver, or identified first in
 * the same run), the experiment with its trace and events in the output
 * folder, the caller's schedule after the context and a settling pause, and
 * the simulator's run kept as files. */
#ifndef TW_CLI_BENCH_RUN_H
#define TW_CLI_BENCH_RUN_H

#include "bench/exec.h"
#include "cli/experiment.h"
#include "correct/profile.h"

typedef struct cli_bench {
    const char *cmd;
    cli_exp_args *exp;
    const char *profile_path; /* NULL: looked up, else identified */
    const char *out_dir;
    double planned_s;                         /* the work's own length, for progress */
    tw_status (*work)(tw_exec *x, void *ctx); /* the schedule, after the context */
    void *ctx;
    bool no_profile; /* timing only: no profile is picked or identified (p stays empty) */
} cli_bench;

/* Runs it; on success *x holds the finished experiment (free it with
 * tw_exec_free) and *p the profile to measure with, and prov the
 * provenance line. Returns a CLI exit code; on failure *x is NULL. */
int cli_bench_run(const cli_bench *b, int argc, char **argv, tw_exec **x, tw_profile *p, char *prov, size_t provcap);

#endif
