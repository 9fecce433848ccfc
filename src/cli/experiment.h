/* The options every experiment command takes (identify, validate,
 * measure-kernel, isa, mem): --backend, --sim, --seed, --device, declared
 * once, into the library's tw_experiment_options with the command's
 * provenance, its progress notes on stderr and Ctrl-C honoured. */
#ifndef TW_CLI_EXPERIMENT_H
#define TW_CLI_EXPERIMENT_H

#include <stddef.h>

#include "cli/opts.h"
#include "truewatt.h"

typedef struct cli_exp_args {
    tw_experiment_options o;
    const char *cmd;
    char provenance[1024];
} cli_exp_args;

void cli_exp_args_init(cli_exp_args *a, const char *cmd);

/* Parses argv by the command's table `o` (cli/opts.h) followed by the
 * options every experiment command takes into *a, and fills its provenance,
 * note (stderr, "truewatt CMD: ...") and cancel (Ctrl-C). Returns what
 * cli_opts_parse returns. */
int cli_exp_parse(cli_opts o, cli_exp_args *a, int argc, char **argv);

/* "command: truewatt ARGS; date: ...; truewatt VERSION" */
void cli_exp_provenance(char *buf, size_t len, int argc, char **argv);

/* A library note on stderr as "truewatt CMD: text"; ctx is the command's name. */
void cli_exp_note(void *ctx, const char *text);

#endif
