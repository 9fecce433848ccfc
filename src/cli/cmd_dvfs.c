/* truewatt dvfs: kernel time under core and memory frequency scaling, by
 * Wang & Chu's model. The sub-commands' options; the work is the
 * library's, tw_dvfs_..._report (src/dvfs/..._report.c). eval checks the model
 * with a published parameter set against the authors' measured data
 * (tw_dvfs_eval_report, src/dvfs/report.c). */
#include <stdio.h>

#include "cli/cli.h"
#include "cli/dvfs_cmds.h"
#include "cli/dvfs_common.h"

#define CMD_EVAL "dvfs eval"

typedef struct eval_args {
    const char *data, *gpu;
    bool paper_compat, json, all_kernels;
} eval_args;

#define STR2(x) #x
#define STR(x) STR2(x)

/* The options, declared once (cli/opts.h). */
static int parse_eval(int argc, char **argv, eval_args *a)
{
    const cli_opt opt[] = {
        {.name = "gpu", .type = CLI_OPT_STRING, .arg = "NAME|FILE.json", .help = CLI_DVFS_GPU_HELP, .out = &a->gpu},
        {.name = "paper-compat",
         .type = CLI_OPT_FLAG,
         .help = "the kernel-name special cases of the authors' code, with which it\nreproduces the published "
                 "errors (off: the model as described)",
         .out = &a->paper_compat},
        CLI_DVFS_OPT_ALL_KERNELS(&a->all_kernels),
        {.name = "json", .type = CLI_OPT_FLAG, .help = "the numbers as JSON on stdout", .out = &a->json},
    };
    const cli_opts o = {
        .cmd = CMD_EVAL,
        .synopsis = "DATA.csv --gpu NAME|FILE.json [--paper-compat] [--all-kernels] [--json]",
        .about = "Wang & Chu's DVFS performance model (IEEE TPDS 2020, final form) against measured rows: a\n"
                 "*-Performance.csv of the authors' data set (columns by name). Prints the mean absolute\n"
                 "percentage error over all points, per kernel, per regime as the model classifies each point\n"
                 "(compute-, memory-, latency-bound) and the " STR(TW_DVFS_WORST) " worst points.",
        .opt = opt,
        .n = CLI_OPTS_N(opt),
        .min_args = 1,
        .max_args = 1,
        .missing = "DATA.csv is required"};
    int first;
    int rc = cli_opts_parse(&o, argc, argv, &first);
    if (rc) return rc;
    a->data = argv[first];
    if (!a->gpu) return cli_usage(CMD_EVAL, "--gpu NAME is required (gtx980, gtx1080ti, p100, v100)");
    return 0;
}

static int tw_cmd_dvfs_eval(int argc, char **argv)
{
    eval_args a = {0};
    int rc = parse_eval(argc, argv, &a);
    if (rc) return rc < 0 ? 0 : rc;
    tw_dvfs_options o;
    tw_dvfs_options_init(&o);
    o.data = a.data;
    o.paper_compat = a.paper_compat;
    o.all_kernels = a.all_kernels;
    o.json = a.json;
    return cli_dvfs_run(CMD_EVAL, tw_dvfs_eval_report, &o, a.gpu);
}

static const cli_command subcommands[] = {
    {"eval", tw_cmd_dvfs_eval, "the model with a published parameter set against measured rows (MAPE)"},
    {"fit", tw_cmd_dvfs_fit, "least-squares hardware parameters from measured rows, cross-validated"},
    {"energy", tw_cmd_dvfs_energy, "energy-optimal clock pairs from predicted time and a fitted power model"},
    {"clocks", tw_cmd_dvfs_clocks, "the GPU's supported and current clocks (read only)"},
    {"lock", tw_cmd_dvfs_lock, "run a command under locked clocks (--allow-clock-changes), restored after"},
    {"rows", tw_cmd_dvfs_rows, "measured kernels (times and Nsight Compute counters) as model rows"},
    {"params", tw_cmd_dvfs_params, "the local GPU's hardware parameters by microbenchmarks"},
    {"predict", tw_cmd_dvfs_predict, "a kernel's time over the GPU's supported clock pairs"},
};

int cmd_dvfs(int argc, char **argv)
{
    return cli_dispatch("dvfs", "Kernel time under core and memory frequency scaling (Wang & Chu, TPDS 2020).",
                        subcommands, sizeof subcommands / sizeof subcommands[0], argc, argv);
}
