/* truewatt dvfs clocks: the GPU's current and maximum clocks, the clock event
 * reasons and the supported (memory, graphics) clock pairs, through NVML.
 * Read only: nothing on the card changes. */
#include <stdio.h>

#include "cli/cli.h"
#include "cli/dvfs_cmds.h"
#include "cli/opts.h"

#define CMD "dvfs clocks"

typedef struct clocks_args {
    const char *device;
    bool json;
} clocks_args;

/* The options, declared once (cli/opts.h). */
static int parse(int argc, char **argv, clocks_args *a)
{
    const cli_opt opt[] = {
        {.name = "device", .type = CLI_OPT_STRING, .arg = "N|UUID", .help = "the GPU (default 0)", .out = &a->device},
        {.name = "json",
         .type = CLI_OPT_FLAG,
         .help = "the numbers as JSON on stdout, every graphics clock listed",
         .out = &a->json},
    };
    const cli_opts o = {
        .cmd = CMD,
        .synopsis = "[--device N|UUID] [--json]",
        .about = "The GPU's clocks through NVML: current and maximum SM and memory clocks, the clock event\n"
                 "reasons (why the clocks are below the maximum: idle, power cap, thermal, ...) and the supported\n"
                 "(memory, graphics) clock pairs, per memory clock as a count and a range when evenly spaced.\n"
                 "Read only: nothing on the card changes. `truewatt dvfs lock` locks clocks.",
        .opt = opt,
        .n = CLI_OPTS_N(opt),
        .after = "NVML is libnvidia-ml.so.1, or the library $TW_NVML_LIBRARY names.\n"};
    int first;
    return cli_opts_parse(&o, argc, argv, &first);
}

int tw_cmd_dvfs_clocks(int argc, char **argv)
{
    clocks_args a = {0};
    int rc = parse(argc, argv, &a);
    if (rc) return rc < 0 ? 0 : rc;
    tw_clocks *c = NULL;
    tw_status st = tw_clocks_open(NULL, a.device, &c);
    if (st == TW_OK) st = tw_clocks_report(c, a.json, stdout);
    tw_clocks_close(c);
    return st == TW_OK ? 0 : cli_fail(CMD, st);
}
