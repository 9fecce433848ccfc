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

void cli_dvfs_note(void *cmd, const char *text) { cli_note("truewatt %s: %s", (const char *)cmd, text); }
