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

void cli_dvfs_print_points_header(const char *title)
{
    printf("\n%s:\n  %-24s %6s %6s %12s %12s %-8s %8s\n", title, "kernel", "core", "mem", "measured_ms", "predicted_ms",
           "regime", "APE");
}

void cli_dvfs_print_point(const tw_dvfs_point *pt)
{
    printf("  %-24s %6.0f %6.0f %12.5g %12.5g %-8s %6.2f %%\n", pt->row->app, pt->row->core_mhz, pt->row->mem_mhz,
           pt->row->time_ms, pt->pred.time_ms, tw_dvfs_regime_name(pt->pred.regime), 100 * pt->ape);
}

void cli_dvfs_json_point_fields(json *j, const tw_dvfs_point *pt)
{
    json_kv_string(j, "kernel", pt->row->app);
    json_kv_number(j, "core_mhz", pt->row->core_mhz);
    json_kv_number(j, "mem_mhz", pt->row->mem_mhz);
    json_kv_number(j, "measured_ms", pt->row->time_ms);
    json_kv_number(j, "predicted_ms", pt->pred.time_ms);
    json_kv_string(j, "regime", tw_dvfs_regime_name(pt->pred.regime));
    json_kv_number(j, "ape_pct", 100 * pt->ape);
}

int cli_dvfs_fail_on_data(const char *cmd, const char *data, tw_status st)
{
    const char *detail = tw_last_error();
    if (!detail || strncmp(detail, "line ", 5) != 0) return cli_fail(cmd, st);
    fprintf(stderr, "truewatt %s: %s: %s\n", cmd, data, detail);
    return CLI_EXIT_FAIL;
}
