/* What the dvfs sub-commands share: finding and loading a parameter set from --gpu. */
#ifndef TW_CLI_DVFS_COMMON_H
#define TW_CLI_DVFS_COMMON_H

#include <stddef.h>

#include "dvfs/model.h"

/* The path of --gpu's parameter set: a name (gtx980, gtx1080ti, p100, v100)
 * is looked up as dvfs/NAME.json in $TW_DATA_DIR or the installed data
 * folder; anything with a '/' or ending in .json is a path. Returns 0, or 2
 * after a usage message naming cmd ("dvfs eval"). */
int cli_dvfs_params_path(const char *cmd, const char *gpu, char *path, size_t cap);
/* The path, then the file (1 after the loader's message naming the file). */
int cli_dvfs_params_load(const char *cmd, const char *gpu, tw_dvfs_params *p);

#endif
