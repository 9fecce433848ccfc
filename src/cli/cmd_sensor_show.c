/* truewatt sensor show: a sensor profile, readable (or re-emitted as JSON):
 * the options of tw_profile_show (src/correct/profile_show.c). */
#include <stdio.h>

#include "cli/cli.h"
#include "cli/opts.h"

#define CMD "sensor show"

/* The options, declared once (cli/opts.h). */
static int parse_args(int argc, char **argv, bool *as_json, const char **path)
{
    const cli_opt opt[] = {
        {.name = "json",
         .type = CLI_OPT_FLAG,
         .help = "re-emit the profile as JSON (schema truewatt-sensor-profile, version 1)",
         .out = as_json},
    };
    const cli_opts o = {.cmd = CMD,
                        .synopsis = "[--json] PROFILE.json|NAME",
                        .about =
                            "Prints a sensor profile (written by 'truewatt sensor identify'): the GPU, driver and\n"
                            "levels, and for every reading its response model (rc, boxcar, window, counter), update\n"
                            "period (median, p10-p90), window, delay, time constant C, coverage and fit residual.\n"
                            "The reading truewatt would pick for energy is marked 'best' (full coverage first,\n"
                            "then the finest time resolution). A NAME without '/' that is no file here is the\n"
                            "profile NAME(.json) in $TW_PROFILE_DIR, else in the installed profiles.",
                        .opt = opt,
                        .n = CLI_OPTS_N(opt),
                        .min_args = 1,
                        .max_args = 1,
                        .missing = "which profile? (PROFILE.json)"};
    int first;
    int rc = cli_opts_parse(&o, argc, argv, &first);
    if (rc == 0) *path = argv[first];
    return rc;
}

int tw_cmd_sensor_show(int argc, char **argv)
{
    bool as_json;
    const char *path;
    int rc = parse_args(argc, argv, &as_json, &path);
    if (rc) return rc < 0 ? 0 : rc;
    tw_status st = tw_profile_show(path, as_json, stdout);
    return st == TW_OK ? 0 : cli_fail(CMD, st);
}
