/* truewatt dvfs rows: the options of tw_dvfs_rows_report
 * (src/dvfs/rows_report.c): measured kernel times joined with Nsight
 * Compute's counters, as rows of Wang & Chu's model. */
#include <math.h>
#include <stdio.h>

#include "cli/cli.h"
#include "cli/dvfs_cmds.h"
#include "cli/dvfs_common.h"
#include "cli/opts.h"

#define CMD "dvfs rows"

typedef struct rows_args {
    const char *times, *ncu, *out;
    double core_mhz, mem_mhz;
    bool have_core, have_mem, metrics;
} rows_args;

#define MHZ .min = 0, .max = INFINITY, .min_excl = true

/* The options, declared once (cli/opts.h). */
static int parse(int argc, char **argv, rows_args *a)
{
    const cli_opt opt[] = {
        {.name = "times",
         .type = CLI_OPT_STRING,
         .arg = "FILE",
         .help = "the kernels' times (kernels.cu's stdout, a run without ncu)",
         .out = &a->times},
        {.name = "ncu",
         .type = CLI_OPT_STRING,
         .arg = "FILE",
         .help = "ncu --csv --page raw --print-units base output (the details page of\nplain ncu --csv is read too), "
                 "profiled with the metrics of --metrics",
         .out = &a->ncu},
        {.name = "core-mhz",
         .type = CLI_OPT_DOUBLE,
         .arg = "F",
         .help = "the SM clock the kernels ran at, MHz (coreF)",
         .out = &a->core_mhz,
         .seen = &a->have_core,
         MHZ},
        {.name = "mem-mhz",
         .type = CLI_OPT_DOUBLE,
         .arg = "F",
         .help = "the memory clock, MHz (memF)",
         .out = &a->mem_mhz,
         .seen = &a->have_mem,
         MHZ},
        {.name = "out",
         .type = CLI_OPT_STRING,
         .arg = "FILE",
         .help = "write the rows there instead of stdout",
         .out = &a->out},
        {.name = "metrics",
         .type = CLI_OPT_FLAG,
         .help = "print ncu's --metrics argument (comma-separated) and exit",
         .out = &a->metrics},
    };
    const cli_opts o = {
        .cmd = CMD,
        .synopsis = "--times TIMES.csv --ncu NCU.csv --core-mhz F --mem-mhz F [--out ROWS.csv]\n"
                    "       truewatt dvfs rows --metrics",
        .about = "Rows of Wang & Chu's DVFS model for kernels measured on this GPU: the timing CSV that\n"
                 "apps/dvfs/kernels.cu prints (one line per kernel: launches, grid, block, mean time) joined by\n"
                 "kernel name with Nsight Compute's counters of the same kernels (their launches averaged),\n"
                 "mapped to the authors' nvprof columns. The rows go to stdout or --out, in the format that\n"
                 "dvfs eval, fit and predict read.",
        .opt = opt,
        .n = CLI_OPTS_N(opt)};
    int first;
    int rc = cli_opts_parse(&o, argc, argv, &first);
    if (rc) return rc;
    if (a->metrics) return 0;
    if (!a->times) return cli_usage(CMD, "--times TIMES.csv is required");
    if (!a->ncu) return cli_usage(CMD, "--ncu NCU.csv is required");
    if (!a->have_core) return cli_usage(CMD, "--core-mhz F is required (the SM clock the kernels ran at)");
    if (!a->have_mem) return cli_usage(CMD, "--mem-mhz F is required (the memory clock the kernels ran at)");
    return 0;
}

int tw_cmd_dvfs_rows(int argc, char **argv)
{
    rows_args a = {0};
    int rc = parse(argc, argv, &a);
    if (rc) return rc < 0 ? 0 : rc;
    if (a.metrics) {
        char buf[4096];
        tw_dvfs_rows_metrics_arg(buf, sizeof buf);
        printf("%s\n", buf);
        return 0;
    }
    tw_dvfs_options o;
    tw_dvfs_options_init(&o);
    o.data = a.times;
    o.ncu = a.ncu;
    o.core_mhz = a.core_mhz;
    o.mem_mhz = a.mem_mhz;
    o.out = a.out;
    return cli_dvfs_run(CMD, tw_dvfs_rows_report, &o, NULL);
}
