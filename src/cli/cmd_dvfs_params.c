/* truewatt dvfs params: the options of tw_dvfs_params_report
 * (src/dvfs/params_report.c): the local GPU's hardware parameters by
 * microbenchmarks, at the clocks it runs at now: nothing is set. */
#include <math.h>
#include <stdio.h>

#include "cli/cli.h"
#include "cli/dvfs_cmds.h"
#include "cli/dvfs_common.h"
#include "cli/opts.h"

#define CMD "dvfs params"

typedef struct params_args {
    int device, repeats;
    double mem_mhz; /* 0: NVML's current memory clock */
    const char *out;
    bool json;
} params_args;

/* The options, declared once (cli/opts.h). */
static int parse(int argc, char **argv, params_args *a)
{
    *a = (params_args){0};
    const cli_opt opt[] = {
        {.name = "device",
         .type = CLI_OPT_INT,
         .arg = "N",
         .def = "0",
         .help = "the CUDA device (NVML's device of the same index)",
         .out = &a->device,
         .min = 0,
         .max = 64},
        {.name = "repeats",
         .type = CLI_OPT_INT,
         .arg = "N",
         .def = "5",
         .help = "runs per microbenchmark, the median kept",
         .out = &a->repeats,
         .min = 1,
         .max = 16},
        {.name = "mem-mhz",
         .type = CLI_OPT_DOUBLE,
         .arg = "F",
         .help = "the memory clock, where NVML cannot say",
         .out = &a->mem_mhz,
         .min = 0,
         .max = INFINITY,
         .min_excl = true},
        {.name = "out",
         .type = CLI_OPT_STRING,
         .arg = "DIR",
         .def = "truewatt-dvfs-params",
         .help = "params.json (a parameter file for dvfs eval/fit/predict --gpu) and\nubench.json (the raw numbers)",
         .out = &a->out},
        {.name = "json", .type = CLI_OPT_FLAG, .help = "the numbers as JSON on stdout", .out = &a->json},
    };
    const cli_opts o = {
        .cmd = CMD,
        .synopsis = "[--device N] [--repeats N] [--mem-mhz F] [--out DIR] [--json]",
        .about = "Measures the hardware parameters of Wang & Chu's DVFS model (dvfs-model.md section 2.6) on the\n"
                 "local GPU at the clocks it runs at now (never set): DRAM, L2 and shared-memory latency by\n"
                 "pointer chases, dependent-FMA latency, FP32/FP64/shared-load issue delays, and the L2 and DRAM\n"
                 "departure delays from achieved bandwidth. The SM clock is measured in the kernels (clock64 over\n"
                 "%globaltimer); the memory clock comes from NVML. About 10 s.",
        .opt = opt,
        .n = CLI_OPTS_N(opt)};
    int first;
    return cli_opts_parse(&o, argc, argv, &first);
}

int tw_cmd_dvfs_params(int argc, char **argv)
{
    params_args a;
    int rc = parse(argc, argv, &a);
    if (rc) return rc < 0 ? 0 : rc;
    tw_dvfs_options o;
    tw_dvfs_options_init(&o);
    o.gpu_index = a.device;
    o.repeats = a.repeats;
    o.mem_mhz = a.mem_mhz;
    o.out = a.out;
    o.json = a.json;
    return cli_dvfs_run(CMD, tw_dvfs_params_report, &o, NULL);
}
