/* truewatt sensor identify: runs the identification experiment on a GPU (or
 * the simulator), or takes a recorded trace and its events, fits each
 * reading's model and writes the sensor profile (JSON, named by GPU and
 * driver): the options, then the library's tw_identify_run. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/experiment.h"

#define CMD "sensor identify"

typedef struct id_args {
    cli_exp_args exp;
    tw_identify_run_options id;
} id_args;

/* The options, declared once (cli/opts.h). */
static int parse_args(int argc, char **argv, id_args *a)
{
    const cli_opt opt[] = {
        {.name = "out",
         .type = CLI_OPT_STRING,
         .arg = "FILE",
         .help = "the profile (default: <gpu>_<driver>.json in the current folder)",
         .out = &a->id.out},
        {.name = "trace-out",
         .type = CLI_OPT_STRING,
         .arg = "CSV",
         .def = "truewatt-identify.csv",
         .help = "where the recorded trace goes (its events beside it as .events.csv)",
         .out = &a->id.trace_out},
        {.name = "trace",
         .type = CLI_OPT_STRING,
         .arg = "CSV",
         .help = "fit a trace recorded earlier instead (with --events)",
         .out = &a->id.trace},
        {.name = "events",
         .type = CLI_OPT_STRING,
         .arg = "CSV",
         .help = "the kernels of --trace, with a 'context' marker",
         .out = &a->id.events},
        {.name = "until",
         .type = CLI_OPT_DOUBLE,
         .arg = "S",
         .help = "fit only the trace up to S seconds",
         .out = &a->id.until_s,
         .min = 0,
         .max = INFINITY,
         .min_excl = true},
        {.name = "json", .type = CLI_OPT_FLAG, .help = "print the profile as JSON on stdout", .out = &a->id.json},
    };
    const cli_opts o = {
        .cmd = CMD,
        .synopsis = "[--out PROFILE.json] [--backend nvml|sim] [--sim k20|h100]\n"
                    "                                [--seed N] [--device N] [--trace-out CSV] [--json]\n"
                    "       truewatt sensor identify --trace CSV --events CSV [--until S] [--out PROFILE.json]",
        .about = "Finds how each power reading of a GPU behaves: idle before a CUDA context exists,\n"
                 "then active idle, steps of 4 s and 2 s, square waves, and isolated kernels of 1 ms\n"
                 "to 1 s at varied phases (about a minute). For every reading it fits the update\n"
                 "period, the averaging window, the delay, the coverage (fraction of the time the\n"
                 "reading sees) and the response: rc (a lagging capacitor, as on Kepler), boxcar\n"
                 "(a moving average), window (a short average held until the next update) or\n"
                 "counter; and the idle, active-idle and kernel levels. Nothing on the card is changed.",
        .opt = opt,
        .n = CLI_OPTS_N(opt)};
    int rc = cli_exp_parse(o, &a->exp, argc, argv);
    if (rc) return rc;
    if (!a->id.trace != !a->id.events) return cli_usage(CMD, "--trace and --events go together");
    return 0;
}

int tw_cmd_sensor_identify(int argc, char **argv)
{
    id_args a;
    cli_exp_args_init(&a.exp, CMD);
    tw_identify_run_options_init(&a.id);
    int rc = parse_args(argc, argv, &a);
    if (rc) return rc < 0 ? 0 : rc;
    char command[256];
    const char *cmdline = a.exp.provenance + strlen("command: truewatt ");
    snprintf(command, sizeof command, "truewatt %.*s", (int)strcspn(cmdline, ";"), cmdline); /* "sensor identify ..." */
    a.id.command = command;
    tw_status st = tw_identify_run(&a.exp.o, &a.id, stdout);
    return st == TW_OK ? 0 : cli_fail(CMD, st);
}
