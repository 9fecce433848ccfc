/* Shared pieces of the command-line tool. Exit codes: 0 success, 1 the work
 * failed (bad input, I/O), 2 wrong usage. */
#ifndef TW_CLI_H
#define TW_CLI_H

#include <stdbool.h>
#include <stdint.h>

#include "truewatt.h"

#define CLI_EXIT_FAIL 1
#define CLI_EXIT_USAGE 2

typedef struct cli_command {
    const char *name;
    int (*run)(int argc, char **argv); /* argv[0] is the command name */
    const char *summary;
} cli_command;

int cmd_demo(int argc, char **argv);
int cmd_analyze(int argc, char **argv);
int cmd_sim(int argc, char **argv);
int cmd_backends(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_validate(int argc, char **argv);
int cmd_measure_kernel(int argc, char **argv);
int cmd_isa(int argc, char **argv);
int cmd_sensor(int argc, char **argv); /* dispatches to the two below */
int cmd_mem(int argc, char **argv);    /* dispatches to sizes, calibrate, check, counters */
int cmd_breakdown(int argc, char **argv);
int cmd_exporter(int argc, char **argv);
int cmd_dvfs(int argc, char **argv); /* dispatches to the commands of dvfs_cmds.h and eval */
int tw_cmd_mem_calibrate(int argc, char **argv);
int tw_cmd_mem_sizes(int argc, char **argv);
int tw_cmd_sensor_show(int argc, char **argv);
int tw_cmd_sensor_identify(int argc, char **argv);

/* "truewatt CMD: detail" from tw_last_error() (or the status text); returns 1
 * (130 for TW_EINTERRUPTED: stopped by Ctrl-C or SIGTERM). */
int cli_fail(const char *cmd, tw_status st);
/* "truewatt CMD: message" + a hint to --help; returns 2. */
int cli_usage(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Strict number parsing: the whole string, finite. */
bool cli_parse_double(const char *s, double *out);
bool cli_parse_u64(const char *s, uint64_t *out);
/* `truewatt CMD SUBCOMMAND ...`: runs the sub-command argv[1] names (with
 * argv + 1), or prints the usage (--help: stdout, 0; else stderr, 2). */
int cli_dispatch(const char *cmd, const char *about, const cli_command *subs, size_t n, int argc, char **argv);

/* The folder of result files, made when missing (1 with the reason on stderr). */
#include <stdio.h>
int cli_make_dir(const char *cmd, const char *dir);

/* Progress notes go to stderr, so stdout stays clean for --json. */
void cli_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
