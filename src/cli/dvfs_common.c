/* What the dvfs sub-commands share (dvfs_common.h). */
#include "cli/dvfs_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"

#ifndef TW_DATA_DIR_DEFAULT
#define TW_DATA_DIR_DEFAULT "data"
#endif

int cli_dvfs_params_path(const char *cmd, const char *gpu, char *path, size_t cap)
{
    size_t len = strlen(gpu);
    if (strchr(gpu, '/') || (len > 5 && !strcmp(gpu + len - 5, ".json"))) {
        snprintf(path, cap, "%s", gpu);
        return 0;
    }
    const char *dir = getenv("TW_DATA_DIR");
    snprintf(path, cap, "%s/dvfs/%s.json", dir && *dir ? dir : TW_DATA_DIR_DEFAULT, gpu);
    if (access(path, R_OK) == 0) return 0;
    return cli_usage(cmd, "--gpu: no parameter set named '%s' (gtx980, gtx1080ti, p100, v100)", gpu);
}

int cli_dvfs_params_load(const char *cmd, const char *gpu, tw_dvfs_params *p)
{
    char path[4096];
    int rc = cli_dvfs_params_path(cmd, gpu, path, sizeof path);
    if (rc) return rc;
    tw_status st = tw_dvfs_params_load(path, p);
    return st == TW_OK ? 0 : cli_fail(cmd, st);
}
