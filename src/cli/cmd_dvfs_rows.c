/* truewatt dvfs rows: the kernels of apps/dvfs/kernels.cu, their measured
 * times joined with Nsight Compute's counters, as rows of Wang & Chu's model
 * (src/dvfs/rows.h) that dvfs eval, fit and predict read like the authors'. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/dvfs_cmds.h"
#include "dvfs/rows.h"

#define CMD "dvfs rows"

enum { OPT_TIMES = 1000, OPT_NCU, OPT_CORE, OPT_MEM, OPT_OUT, OPT_METRICS };

typedef struct rows_args {
    const char *times, *ncu, *out;
    double core_mhz, mem_mhz;
    bool have_core, have_mem, metrics;
} rows_args;

static void help(void)
{
    printf("usage: truewatt dvfs rows --times TIMES.csv --ncu NCU.csv --core-mhz F --mem-mhz F [--out ROWS.csv]\n"
           "       truewatt dvfs rows --metrics\n\n"
           "Rows of Wang & Chu's DVFS model for kernels measured on this GPU: the timing CSV that\n"
           "apps/dvfs/kernels.cu prints (one line per kernel: launches, grid, block, mean time) joined by\n"
           "kernel name with Nsight Compute's counters of the same kernels (their launches averaged),\n"
           "mapped to the authors' nvprof columns. The rows go to stdout or --out, in the format that\n"
           "dvfs eval, fit and predict read.\n\n"
           "  --times FILE    the kernels' times (kernels.cu's stdout, a run without ncu)\n"
           "  --ncu FILE      ncu --csv --page raw --print-units base output (the details page of plain\n"
           "                  ncu --csv is read too), profiled with the metrics of --metrics\n"
           "  --core-mhz F    the SM clock the kernels ran at, MHz (coreF)\n"
           "  --mem-mhz F     the memory clock, MHz (memF)\n"
           "  --out FILE      write the rows there instead of stdout\n"
           "  --metrics       print ncu's --metrics argument (comma-separated) and exit\n");
}

static int parse(int argc, char **argv, rows_args *a)
{
    static const struct option opts[] = {{"times", required_argument, 0, OPT_TIMES},
                                         {"ncu", required_argument, 0, OPT_NCU},
                                         {"core-mhz", required_argument, 0, OPT_CORE},
                                         {"mem-mhz", required_argument, 0, OPT_MEM},
                                         {"out", required_argument, 0, OPT_OUT},
                                         {"metrics", no_argument, 0, OPT_METRICS},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    int c, rc = 0;
    optind = 1;
    opterr = 0;
    while (!rc && (c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        switch (c) {
        case 'h':
            help();
            return -1;
        case OPT_TIMES:
            a->times = optarg;
            break;
        case OPT_NCU:
            a->ncu = optarg;
            break;
        case OPT_CORE:
        case OPT_MEM: {
            double v;
            if (!cli_parse_double(optarg, &v) || !(v > 0))
                return cli_usage(CMD, "%s must be a positive number of MHz, not '%s'",
                                 c == OPT_CORE ? "--core-mhz" : "--mem-mhz", optarg);
            if (c == OPT_CORE)
                a->core_mhz = v, a->have_core = true;
            else
                a->mem_mhz = v, a->have_mem = true;
            break;
        }
        case OPT_OUT:
            a->out = optarg;
            break;
        case OPT_METRICS:
            a->metrics = true;
            break;
        default:
            rc = cli_opt_other(CMD, c, optarg, argv, NULL);
        }
    }
    if (rc) return rc;
    if ((rc = cli_opt_rest(CMD, argc, argv, optind))) return rc;
    if (a->metrics) return 0;
    if (!a->times) return cli_usage(CMD, "--times TIMES.csv is required");
    if (!a->ncu) return cli_usage(CMD, "--ncu NCU.csv is required");
    if (!a->have_core) return cli_usage(CMD, "--core-mhz F is required (the SM clock the kernels ran at)");
    if (!a->have_mem) return cli_usage(CMD, "--mem-mhz F is required (the memory clock the kernels ran at)");
    return 0;
}

static int write_rows(const rows_args *a, const tw_dvfs_rows *rows)
{
    FILE *f = a->out ? fopen(a->out, "w") : stdout;
    if (!f) {
        fprintf(stderr, "truewatt %s: cannot write %s: %s\n", CMD, a->out, strerror(errno));
        return CLI_EXIT_FAIL;
    }
    tw_status st = tw_dvfs_rows_write(f, rows);
    if (a->out && fclose(f) != 0 && st == TW_OK) {
        fprintf(stderr, "truewatt %s: cannot write %s: %s\n", CMD, a->out, strerror(errno));
        return CLI_EXIT_FAIL;
    }
    return st == TW_OK ? 0 : cli_fail(CMD, st);
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
    tw_dvfs_times t;
    tw_status st = tw_dvfs_times_load(a.times, &t);
    if (st != TW_OK) return cli_fail(CMD, st);
    tw_ncu_report r;
    if ((st = tw_dvfs_ncu_load(a.ncu, &r)) != TW_OK) {
        tw_dvfs_times_free(&t);
        return cli_fail(CMD, st);
    }
    tw_dvfs_rows rows;
    st = tw_dvfs_rows_build(&t, &r, a.core_mhz, a.mem_mhz, &rows);
    tw_ncu_report_free(&r);
    tw_dvfs_times_free(&t);
    if (st != TW_OK) return cli_fail(CMD, st);
    size_t profiled = 0;
    for (size_t i = 0; i < rows.n; i++)
        profiled += rows.r[i].profiled;
    rc = write_rows(&a, &rows);
    if (!rc) {
        cli_note("truewatt %s: %zu kernel(s) at %g/%g MHz, %zu ncu launch(es) averaged%s%s", CMD, rows.n, a.core_mhz,
                 a.mem_mhz, profiled, a.out ? ", written to " : "", a.out ? a.out : "");
        if (rows.ignored)
            cli_note("truewatt %s: %zu ncu launch(es) of kernels the times do not name were left out (e.g. %s)", CMD,
                     rows.ignored, rows.ignored_example);
    }
    tw_dvfs_rows_free(&rows);
    return rc;
}
