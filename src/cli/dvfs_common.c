/* What the dvfs sub-commands share (dvfs_common.h). */
#include "cli/dvfs_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"

int cli_dvfs_params_path(const char *cmd, const char *gpu, char *path, size_t cap)
{
    size_t len = strlen(gpu);
    if (strchr(gpu, '/') || (len > 5 && !strcmp(gpu + len - 5, ".json"))) {
        snprintf(path, cap, "%s", gpu);
        return 0;
    }
    snprintf(path, cap, "%s/dvfs/%s.json", tw_data_dir(), gpu);
    if (access(path, R_OK) == 0) return 0;
    return cli_usage(cmd, "--gpu: no parameter set named '%s' (gtx980, gtx1080ti, p100, v100)", gpu);
}

/* tw_dvfs_options.note: "truewatt CMD: text" on stderr, cmd (the note_ctx) as "dvfs fit". */
static void cli_dvfs_note(void *cmd, const char *text) { cli_note("truewatt %s: %s", (const char *)cmd, text); }

int cli_dvfs_run(const char *cmd, tw_status (*report)(const tw_dvfs_options *, FILE *), tw_dvfs_options *o,
                 const char *gpu)
{
    char params[4096];
    if (gpu) {
        int rc = cli_dvfs_params_path(cmd, gpu, params, sizeof params);
        if (rc) return rc;
        o->params = params;
    }
    o->note = cli_dvfs_note;
    o->note_ctx = (void *)cmd;
    tw_status st = report(o, stdout);
    return st == TW_OK ? 0 : cli_fail(cmd, st);
}
