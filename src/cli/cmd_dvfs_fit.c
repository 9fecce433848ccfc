/* truewatt dvfs fit: the options of tw_dvfs_fit_report (src/dvfs/fit_report.c):
 * Wang & Chu's hardware parameters fitted by least squares to measured rows,
 * cross-validated by clock pair and by kernel. */
#include <stdint.h>
#include <stdio.h>

#include "cli/cli.h"
#include "cli/dvfs_cmds.h"
#include "cli/dvfs_common.h"

#define CMD_FIT "dvfs fit"

typedef struct fit_args {
    const char *data, *gpu, *out;
    size_t folds;
    bool all_kernels, json;
} fit_args;

#define STR2(x) #x
#define STR(x) STR2(x)

/* The options, declared once (cli/opts.h). */
static int parse_fit(int argc, char **argv, fit_args *a)
{
    uint64_t folds;
    const cli_opt opt[] = {
        {.name = "gpu",
         .type = CLI_OPT_STRING,
         .arg = "NAME|FILE.json",
         .help = "the starting set: " CLI_DVFS_GPU_HELP,
         .out = &a->gpu},
        {.name = "folds",
         .type = CLI_OPT_U64,
         .arg = "K",
         .def = "5",
         .help = "folds of each cross-validation; by clock pair with fewer than\n" STR(
             TW_DVFS_CV_MIN_PAIRS) " pairs, one pair per fold",
         .out = &folds,
         .min = 2,
         .max = 1000},
        CLI_DVFS_OPT_ALL_KERNELS(&a->all_kernels),
        {.name = "out",
         .type = CLI_OPT_STRING,
         .arg = "FILE",
         .help = "write the fitted set (all rows) as a parameter file for\ndvfs eval --gpu FILE",
         .out = &a->out},
        {.name = "json", .type = CLI_OPT_FLAG, .help = "the numbers as JSON on stdout", .out = &a->json},
    };
    const cli_opts o = {
        .cmd = CMD_FIT,
        .synopsis = "DATA.csv --gpu NAME|FILE.json [--folds K] [--all-kernels] [--out FITTED.json]\n"
                    "                         [--json]",
        .about = "Fits Wang & Chu's DVFS model to measured rows (a *-Performance.csv of the authors' data set) by\n"
                 "least squares on the relative time errors, without the authors' kernel special cases, and\n"
                 "cross-validates the fit: by clock pair (every row of a held-out core/memory clock pair is out)\n"
                 "and by kernel (leave-kernels-out). Prints the MAPE of the starting parameters and of the fit on\n"
                 "all rows (in-sample) and the MAPE of the held-out points, predicted by parameters fitted without\n"
                 "them. Fitted: a_L b_L a_D b_D L_L2 D_L2 L_INST D_INST L_sh D_sh D_DP; those the rows cannot\n"
                 "identify keep their start value and are reported as held, with the reason. The structural ones\n"
                 "(W_max, N_SM, C_SM, D_TEX, TEX_UNITS, occ_threshold) are the starting set's.",
        .opt = opt,
        .n = CLI_OPTS_N(opt),
        .after = "Progress notes (one per fold) go to stderr.\n",
        .min_args = 1,
        .max_args = 1,
        .missing = "DATA.csv is required"};
    int first;
    int rc = cli_opts_parse(&o, argc, argv, &first);
    if (rc) return rc;
    a->folds = (size_t)folds;
    a->data = argv[first];
    if (!a->gpu) return cli_usage(CMD_FIT, "--gpu NAME is required (gtx980, gtx1080ti, p100, v100)");
    return 0;
}

int tw_cmd_dvfs_fit(int argc, char **argv)
{
    fit_args a = {0};
    int rc = parse_fit(argc, argv, &a);
    if (rc) return rc < 0 ? 0 : rc;
    tw_dvfs_options o;
    tw_dvfs_options_init(&o);
    o.data = a.data;
    o.folds = a.folds;
    o.all_kernels = a.all_kernels;
    o.out = a.out;
    o.json = a.json;
    return cli_dvfs_run(CMD_FIT, tw_dvfs_fit_report, &o, a.gpu);
}
