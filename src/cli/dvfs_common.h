/* What the dvfs sub-commands share: finding a parameter set from --gpu, and
 * the options alike in several (the work is the library's, tw_dvfs_..._report). */
#ifndef TW_CLI_DVFS_COMMON_H
#define TW_CLI_DVFS_COMMON_H

#include <stddef.h>
#include <stdio.h>

#include "cli/opts.h"
#include "truewatt.h"

/* --gpu's help, alike in every dvfs command */
#define CLI_DVFS_GPU_HELP                                                                                              \
    "a published parameter set: gtx980, gtx1080ti, p100, v100\n(data/dvfs/NAME.json, or $TW_DATA_DIR/dvfs/), or a "    \
    "parameter file\nof the same form"
/* --all-kernels, alike in eval, fit and energy */
#define CLI_DVFS_OPT_ALL_KERNELS(p)                                                                                    \
    {                                                                                                                  \
        .name = "all-kernels", .type = CLI_OPT_FLAG,                                                                   \
        .help = "every row, not only the authors' 20 kernels at clocks >= 500 MHz", .out = (p)                         \
    }

/* The path of --gpu's parameter set: a name (gtx980, gtx1080ti, p100, v100)
 * is looked up as dvfs/NAME.json in $TW_DATA_DIR or the installed data
 * folder; anything with a '/' or ending in .json is a path. Returns 0, or 2
 * after a usage message naming cmd ("dvfs eval"). */
int cli_dvfs_params_path(const char *cmd, const char *gpu, char *path, size_t cap);
/* Runs one of the library's reports (tw_dvfs_eval_report, ...) with the
 * options the command filled: --gpu's parameter file (gpu NULL: none), the
 * notes on stderr, the report on stdout. Returns the exit code. */
int cli_dvfs_run(const char *cmd, tw_status (*report)(const tw_dvfs_options *, FILE *), tw_dvfs_options *o,
                 const char *gpu);

#endif
