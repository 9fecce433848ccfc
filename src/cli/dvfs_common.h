/* What the dvfs sub-commands share: finding and loading a parameter set from --gpu. */
#ifndef TW_CLI_DVFS_COMMON_H
#define TW_CLI_DVFS_COMMON_H

#include <stddef.h>

#include "cli/opts.h"
#include "core/json.h"
#include "dvfs/eval.h"
#include "dvfs/model.h"

/* The path of --gpu's parameter set: a name (gtx980, gtx1080ti, p100, v100)
 * is looked up as dvfs/NAME.json in $TW_DATA_DIR or the installed data
 * folder; anything with a '/' or ending in .json is a path. Returns 0, or 2
 * after a usage message naming cmd ("dvfs eval"). */
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
int cli_dvfs_params_path(const char *cmd, const char *gpu, char *path, size_t cap);
/* The path, then the file (1 after the loader's message naming the file). */
int cli_dvfs_params_load(const char *cmd, const char *gpu, tw_dvfs_params *p);

/* cli_fail for an error about the rows of DATA: the model names a row by
 * its line only ("line 12 (...): no finite prediction"), so DATA is named
 * before it. Returns the exit code (1). */
int cli_dvfs_fail_on_data(const char *cmd, const char *data, tw_status st);

/* A table of evaluated points, as eval (its worst points) and predict (every row) print them:
 * "\nTITLE:", the column names, then one line a point. */
void cli_dvfs_print_points_header(const char *title);
void cli_dvfs_print_point(const tw_dvfs_point *pt);
/* A point's members in a JSON object the caller opened: kernel, clocks, times, regime, APE. */
void cli_dvfs_json_point_fields(json *j, const tw_dvfs_point *pt);

#endif
