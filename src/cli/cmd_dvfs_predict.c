/* truewatt dvfs predict: the options of tw_dvfs_predict_report
 * (src/dvfs/predict_report.c): measured kernels through Wang & Chu's model at
 * their own clocks and over the GPU's supported pairs (read, never set). */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/dvfs_cmds.h"
#include "cli/dvfs_common.h"

#define CMD "dvfs predict"

typedef struct predict_args {
    const char *rows, *gpu, *device, *out;
    bool sweep, json; /* sweep: NVML's supported pairs; else only the measured ones */
} predict_args;

/* The options, declared once (cli/opts.h). */
static int parse(int argc, char **argv, predict_args *a)
{
    *a = (predict_args){0};
    const char *clocks;
    const cli_opt opt[] = {
        {.name = "gpu",
         .type = CLI_OPT_STRING,
         .arg = "NAME|FILE",
         .help = "the parameter set: a published one (gtx980, gtx1080ti, p100, v100)\nor a file, e.g. the "
                 "params.json of truewatt dvfs params",
         .out = &a->gpu},
        {.name = "clocks",
         .type = CLI_OPT_ENUM,
         .choices = "nvml|measured",
         .def = "nvml",
         .help = "nvml: predict over NVML's supported pairs; measured: only at the\nrows' own clocks (no NVML needed)",
         .out = &clocks},
        {.name = "device",
         .type = CLI_OPT_STRING,
         .arg = "N",
         .def = "0",
         .help = "NVML's device, index or UUID",
         .out = &a->device},
        {.name = "out",
         .type = CLI_OPT_STRING,
         .arg = "DIR",
         .def = "truewatt-dvfs-predict",
         .help = "predict.csv: every kernel at every pair",
         .out = &a->out},
        {.name = "json", .type = CLI_OPT_FLAG, .help = "the summary as JSON on stdout", .out = &a->json},
    };
    const cli_opts o = {
        .cmd = CMD,
        .synopsis = "ROWS.csv --gpu NAME|FILE.json [--clocks nvml|measured] [--device N]\n"
                    "                             [--out DIR] [--json]",
        .about = "Wang & Chu's model (without the authors' kernel special cases) for measured kernels: ROWS.csv\n"
                 "in the authors' column format (truewatt dvfs rows writes it). Prints each kernel's predicted\n"
                 "time at the clocks it was measured at against the measured time (MAPE), and its predicted\n"
                 "time over the GPU's supported clock pairs, which NVML lists (read only: nothing is set).",
        .opt = opt,
        .n = CLI_OPTS_N(opt),
        .min_args = 1,
        .max_args = 1,
        .missing = "ROWS.csv is required"};
    int first;
    int rc = cli_opts_parse(&o, argc, argv, &first);
    if (rc) return rc;
    a->sweep = !strcmp(clocks, "nvml");
    a->rows = argv[first];
    if (!a->gpu) return cli_usage(CMD, "--gpu NAME|FILE.json is required");
    return 0;
}

int tw_cmd_dvfs_predict(int argc, char **argv)
{
    predict_args a;
    int rc = parse(argc, argv, &a);
    if (rc) return rc < 0 ? 0 : rc;
    tw_dvfs_options o;
    tw_dvfs_options_init(&o);
    o.data = a.rows;
    o.gpu = a.gpu;
    o.device = a.sweep ? a.device : NULL;
    o.out = a.out;
    o.json = a.json;
    return cli_dvfs_run(CMD, tw_dvfs_predict_report, &o, a.gpu);
}
