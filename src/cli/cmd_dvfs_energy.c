/* truewatt dvfs energy: the options of tw_dvfs_energy_report
 * (src/dvfs/energy_report.c): per kernel, the clock pair of least predicted
 * energy (or energy-delay product) against the measured optimum. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/dvfs_cmds.h"
#include "cli/dvfs_common.h"

#define CMD_ENERGY "dvfs energy"

typedef struct energy_args {
    const char *perf, *power, *gpu;
    const char *objective, *power_model; /* the words, as tw_dvfs_options takes them */
    bool all_kernels, json;
} energy_args;

/* The options, declared once (cli/opts.h). */
static int parse_energy(int argc, char **argv, energy_args *a)
{
    const cli_opt opt[] = {
        {.name = "gpu",
         .type = CLI_OPT_STRING,
         .arg = "NAME|FILE.json",
         .help = "the time model's parameters: " CLI_DVFS_GPU_HELP,
         .out = &a->gpu},
        {.name = "objective",
         .type = CLI_OPT_ENUM,
         .choices = "energy|edp",
         .def = "energy",
         .help = "what to minimise",
         .out = &a->objective},
        {.name = "power-model",
         .type = CLI_OPT_ENUM,
         .choices = "scaled|counters",
         .def = "scaled",
         .help = "scaled: the GPU's power shape P0 + a fm + b V(fc)^2 fc (Mei et al.),\n"
                 "scaled by the kernel's power measured at the default pair;\n"
                 "counters: no power reading of the kernel, its DRAM throughput and\n"
                 "instructions per cycle at the default pair weigh the fm and fc terms",
         .out = &a->power_model},
        CLI_DVFS_OPT_ALL_KERNELS(&a->all_kernels),
        {.name = "json", .type = CLI_OPT_FLAG, .help = "the numbers as JSON on stdout", .out = &a->json},
    };
    const cli_opts o = {
        .cmd = CMD_ENERGY,
        .synopsis = "PERF.csv POWER.csv --gpu NAME|FILE.json [--objective energy|edp]\n"
                    "                            [--power-model scaled|counters] [--all-kernels] [--json]",
        .about = "Energy-optimal clock pairs on the authors' data: a *-Performance.csv and the matching\n"
                 "*-Power.csv (joined by appName, coreF, memF; every row must have its partner). Per kernel,\n"
                 "the pair of least predicted energy = power x time (or EDP = power x time^2) among the\n"
                 "measured pairs, with its predicted saving against the default pair (the highest core and\n"
                 "memory clocks), and what was measured there: the saving, and how far above the measured\n"
                 "optimum it lies. Time is Wang & Chu's model (no kernel special cases) from the kernel's\n"
                 "counters at the default pair; power is a model fitted on the other kernels (leave one\n"
                 "kernel out). The recommendation is also given with measured time, to separate the errors.",
        .opt = opt,
        .n = CLI_OPTS_N(opt),
        .min_args = 2,
        .max_args = 2,
        .missing = "PERF.csv and POWER.csv are required"};
    int first;
    int rc = cli_opts_parse(&o, argc, argv, &first);
    if (rc) return rc;
    a->perf = argv[first];
    a->power = argv[first + 1];
    if (!a->gpu) return cli_usage(CMD_ENERGY, "--gpu NAME is required (gtx980, gtx1080ti, p100, v100)");
    return 0;
}

int tw_cmd_dvfs_energy(int argc, char **argv)
{
    tw_dvfs_options o;
    tw_dvfs_options_init(&o);
    energy_args a = {0};
    int rc = parse_energy(argc, argv, &a);
    if (rc) return rc < 0 ? 0 : rc;
    o.data = a.perf;
    o.power = a.power;
    o.objective = a.objective;
    o.power_model = a.power_model;
    o.all_kernels = a.all_kernels;
    o.json = a.json;
    return cli_dvfs_run(CMD_ENERGY, tw_dvfs_energy_report, &o, a.gpu);
}
