/* truewatt backends: which sensor backends exist and why any is unavailable. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/opts.h"

int cmd_backends(int argc, char **argv)
{
    bool as_json;
    const cli_opt opt[] = {
        {.name = "json", .type = CLI_OPT_FLAG, .help = "machine-readable list on stdout", .out = &as_json}};
    const cli_opts o = {.cmd = "backends",
                        .synopsis = "[--json]",
                        .about = "Lists the sensor backends, whether each can be used here, and why not.",
                        .opt = opt,
                        .n = CLI_OPTS_N(opt)};
    int first;
    int rc = cli_opts_parse(&o, argc, argv, &first);
    if (rc) return rc < 0 ? 0 : rc;
    tw_status st = tw_backends_report(as_json, stdout);
    return st == TW_OK ? 0 : cli_fail("backends", st);
}
