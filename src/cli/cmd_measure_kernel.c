/* truewatt measure-kernel: the energy per launch of one kernel, even one far
 * shorter than the sensor's update period, by phase-shifted repetition: the
 * options, then the library's tw_measure_kernel. */
#include <math.h>
#include <stdio.h>

#include "cli/cli.h"
#include "cli/experiment.h"

#define CMD "measure-kernel"

typedef struct mk_args {
    cli_exp_args exp;
    tw_measure_kernel_options mk;
} mk_args;

#define POSITIVE .min = 0, .max = INFINITY, .min_excl = true

/* The options, declared once (cli/opts.h). */
static int parse_args(int argc, char **argv, mk_args *a)
{
    double ms;
    bool no_reference;
    const cli_opt opt[] = {
        {.name = "duration-ms",
         .type = CLI_OPT_DOUBLE,
         .arg = "D",
         .def = "1",
         .help = "launch length",
         .out = &ms,
         POSITIVE},
        {.name = "blocks",
         .type = CLI_OPT_U64,
         .arg = "B",
         .def = "8",
         .help = "blocks",
         .out = &a->mk.blocks,
         .min = 2,
         .max = 1000},
        {.name = "phases",
         .type = CLI_OPT_U64,
         .arg = "S",
         .def = "4",
         .help = "phases the blocks cycle through",
         .out = &a->mk.phases,
         .min = 1,
         .max = 100},
        {.name = "block-s",
         .type = CLI_OPT_DOUBLE,
         .arg = "T",
         .def = "0.2",
         .help = "length of a block",
         .out = &a->mk.block_s,
         POSITIVE},
        {.name = "gap-s",
         .type = CLI_OPT_DOUBLE,
         .arg = "G",
         .def = "0.3",
         .help = "shortest gap between blocks",
         .out = &a->mk.gap_s,
         POSITIVE},
        {.name = "profile",
         .type = CLI_OPT_STRING,
         .arg = "FILE",
         .help = "the sensor profile (default: looked up, see 'truewatt sensor')",
         .out = &a->mk.profile},
        {.name = "no-reference",
         .type = CLI_OPT_FLAG,
         .help = "skip the 4 s steady-state reference",
         .out = &no_reference},
        {.name = "trace-out",
         .type = CLI_OPT_STRING,
         .arg = "CSV",
         .def = "truewatt-measure.csv",
         .help = "the trace (the events beside it, .events.csv)",
         .out = &a->mk.trace_out},
        {.name = "json", .type = CLI_OPT_FLAG, .help = "machine-readable result on stdout", .out = &a->mk.json},
    };
    const cli_opts o = {
        .cmd = CMD,
        .synopsis = "[--duration-ms D] [--blocks B] [--phases S] [--block-s T]\n"
                    "                               [--gap-s G] [--profile FILE] [--no-reference]\n"
                    "                               [--backend nvml|sim] [--sim h100|k20] [--seed N] [--device N]\n"
                    "                               [--trace-out CSV] [--json]",
        .about = "Energy per launch of truewatt's FMA spin kernel run for D ms, however short, by\n"
                 "phase-shifted repetition: B blocks of back-to-back launches (each about T s), the gap\n"
                 "after block b being G + (b mod S) x period / S, the period being the update period of\n"
                 "the reading the sensor profile ranks best, so the blocks start at evenly spread phases.\n"
                 "The energy is the estimator's (baseline + each name's power while it runs, fitted to\n"
                 "every window of the reading, and of the energy counter when the profile has one): per\n"
                 "launch the kernel's energy over its launches, with its standard error. A steady-state\n"
                 "reference (the same launches back to back for 4 s) is measured beside it.\n"
                 "Without a profile for this GPU and driver, the identification runs first (~1 min).",
        .opt = opt,
        .n = CLI_OPTS_N(opt)};
    int rc = cli_exp_parse(o, &a->exp, argc, argv);
    if (rc) return rc;
    a->mk.duration_s = ms * 1e-3;
    a->mk.reference = !no_reference;
    if (a->mk.block_s < a->mk.duration_s) return cli_usage(CMD, "--block-s must hold at least one launch");
    return 0;
}

int cmd_measure_kernel(int argc, char **argv)
{
    mk_args a;
    cli_exp_args_init(&a.exp, CMD);
    tw_measure_kernel_options_init(&a.mk);
    int rc = parse_args(argc, argv, &a);
    if (rc) return rc < 0 ? 0 : rc;
    tw_status st = tw_measure_kernel(&a.exp.o, &a.mk, stdout);
    return st == TW_OK ? 0 : cli_fail(CMD, st);
}
