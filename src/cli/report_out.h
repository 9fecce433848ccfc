/* The report of `truewatt run` and `truewatt report` on the command line:
 * the options given to the library's report (truewatt.h, "reports"), its
 * renderings written to stdout and to the files asked for. */
#ifndef TW_CLI_REPORT_OUT_H
#define TW_CLI_REPORT_OUT_H

#include <stdbool.h>
#include <stdio.h>

#include "truewatt.h"

#define REPORT_MAX_GROUPS 64

typedef struct run_report_opts {
    const char *cmd;                       /* "run" or "report", for messages */
    const char *path;                      /* the run file's path, for messages */
    const char *profile;                   /* a sensor profile instead of the one the run used (NULL: the run's) */
    const char *perfetto;                  /* write the Perfetto file here (NULL: none) */
    const char *csv;                       /* write the CSV rendering here (NULL: none) */
    bool json;                             /* the report as JSON, else text */
    const char *options;                   /* the options, as stored with the report */
    const char *groups[REPORT_MAX_GROUPS]; /* --group PATTERN */
    size_t ngroups;
    const char *range_groups[REPORT_MAX_GROUPS]; /* --group-range NAME */
    size_t nrange_groups;
    bool no_counters; /* --no-activity-counters */
    bool no_linger;   /* --no-linger */
    /* given the report once printed (run: the process report to the exporter); NULL: none */
    void (*on_report)(void *user, const tw_report *r);
    void *user;
} run_report_opts;

/* --group PATTERN and --group-range NAME, as option-table callbacks (cli/opts.h's CLI_OPT_CALL; out:
 * the run_report_opts): 0, or the usage exit code after a message naming command `cmd`. */
int report_opt_group(const char *cmd, const char *value, void *out);
int report_opt_group_range(const char *cmd, const char *value, void *out);

/* Computes the report of `run`, prints it on `out`, writes the files asked
 * for and keeps its JSON in the run file's reports. Returns 0, or an exit
 * code after a message on stderr (CLI_EXIT_INTERRUPTED when Ctrl-C stopped it). */
int report_run_file(tw_run *run, const run_report_opts *o, FILE *out);

/* The merged report of the n run files on `out` (no Perfetto file). */
int report_merged(const char *const *paths, size_t n, const run_report_opts *o, FILE *out);

#endif
