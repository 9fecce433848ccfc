/* truewatt mem sizes: the memory levels' sizes from access latency (the
 * identification step of Delestrac et al. 2024, by time instead of
 * counters): the options, then the library's tw_mem_sizes_report. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/experiment.h"

#define CMD_SIZES "mem sizes"

typedef struct sizes_args {
    cli_exp_args exp;
    tw_mem_options mem;
} sizes_args;

/* The options, declared once (cli/opts.h). */
static int parse_sizes(int argc, char **argv, sizes_args *a)
{
    double max_mib = 0;
    const cli_opt opt[] = {
        {.name = "max-mib",
         .type = CLI_OPT_DOUBLE,
         .arg = "N",
         .help = "the largest array (default four times the L2)",
         .out = &max_mib,
         .min = 1,
         .max = 4096},
        {.name = "target-s",
         .type = CLI_OPT_DOUBLE,
         .arg = "S",
         .def = "0.03",
         .help = "the measured time beyond the run without the measurement loop",
         .out = &a->mem.target_s,
         .min = 0.001,
         .max = 10},
        {.name = "out",
         .type = CLI_OPT_STRING,
         .arg = "DIR",
         .def = "truewatt-mem-sizes",
         .help = "sizes.csv goes here",
         .out = &a->mem.out_dir},
        {.name = "json", .type = CLI_OPT_FLAG, .help = "the sizes as JSON on stdout", .out = &a->mem.json},
    };
    const cli_opts o = {
        .cmd = CMD_SIZES,
        .synopsis = "[--max-mib N] [--target-s S] [--out DIR] [--json]\n"
                    "                          [--backend nvml|sim] [--sim h100] [--seed N] [--device N]",
        .about = "The memory levels' sizes from access latency (the identification of Delestrac et al. 2024,\n"
                 "by time instead of counters): one warp chases arrays of 16 KiB up to --max-mib, with loads\n"
                 "cached in L1 and with loads that skip it; a level's size is the largest array whose time per\n"
                 "access stays within 25 % of the smallest array's. Printed beside the driver's attributes.",
        .opt = opt,
        .n = CLI_OPTS_N(opt)};
    int rc = cli_exp_parse(o, &a->exp, argc, argv);
    a->mem.max_bytes = max_mib * 1048576;
    return rc;
}

int tw_cmd_mem_sizes(int argc, char **argv)
{
    sizes_args a;
    memset(&a, 0, sizeof a);
    cli_exp_args_init(&a.exp, CMD_SIZES);
    tw_mem_options_init(&a.mem);
    int rc = parse_sizes(argc, argv, &a);
    if (rc) return rc < 0 ? 0 : rc;
    tw_status st = tw_mem_sizes_report(&a.exp.o, &a.mem, stdout);
    return st == TW_OK ? 0 : cli_fail(CMD_SIZES, st);
}
