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

/* The options every experiment command takes (--backend, --sim, --seed,
 * --device), declared once: a command puts them into its cli_opts as the
 * second table (.more = table, .n_more = CLI_EXP_NOPTS). */
#define CLI_EXP_NOPTS 4
void cli_exp_opts(cli_exp_args *a, cli_opt table[CLI_EXP_NOPTS]);

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
