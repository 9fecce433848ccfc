/* Running an experiment from the command line (identify, validate,
 * measure-kernel): the executor on the GPU or the simulator, progress on
 * stderr, Ctrl-C honoured, the trace and events kept in files. */
#ifndef TW_CLI_EXPERIMENT_H
#define TW_CLI_EXPERIMENT_H

#include <stdbool.h>
#include <stdint.h>

#include "bench/exec.h"
#include "cli/opts.h"

typedef struct cli_exp_args {
    const char *backend;    /* "nvml" (a real GPU) or "sim" */
    tw_sim_profile profile; /* sim */
    uint64_t seed;          /* sim */
    int device;             /* nvml */
    const char *trace_path, *events_path;
} cli_exp_args;

void cli_exp_args_init(cli_exp_args *a);

/* Parses argv by the command's table `o` (cli/opts.h) followed by the
 * options every experiment command takes (--backend, --sim, --seed,
 * --device; declared once, in experiment.c) into *a. Returns what
 * cli_opts_parse returns. */
int cli_exp_parse(cli_opts o, cli_exp_args *a, int argc, char **argv);

/* Makes the executor: prints a line on stderr saying where the trace goes and
 * how long the plan takes. Returns a CLI exit code (0 on success). */
int cli_exp_start(const char *cmd, const cli_exp_args *a, double planned_s, const char *provenance, tw_exec **out);

/* Runs plan(x, ctx) then finishes the executor; on Ctrl-C or failure the trace
 * so far is kept and the message names it. Returns a CLI exit code. */
int cli_exp_run(const char *cmd, tw_exec *x, tw_status (*plan)(tw_exec *x, void *ctx), void *ctx);

/* Writes the executor's readings (the simulator's, rewound) as a trace file
 * that `--from` and `analyze` read back. */
tw_status cli_exp_save_trace(tw_exec *x, const char *path, const char *provenance);

/* TRACE.csv -> TRACE.events.csv (any other name: NAME.events.csv). */
void cli_exp_events_path(const char *trace, char *out, size_t cap);

/* On the simulator, writes the run's trace and events where a GPU run would
 * have left them (a GPU's sampler writes them as it goes). Returns a CLI
 * exit code. */
int cli_exp_keep_sim_run(const char *cmd, tw_exec *x, const char *trace, const char *events, const char *provenance);

/* "command: truewatt ARGS; date: ...; truewatt VERSION" */
void cli_exp_provenance(char *buf, size_t len, int argc, char **argv);

#endif
