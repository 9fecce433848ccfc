/* truewatt report RUN: the report of a run file, recomputed offline (with
 * another sensor profile, as JSON, with a Perfetto file) by the same path
 * `truewatt run` takes when its command ends (tw_report_compute). */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/report_out.h"
#include "truewatt.h"

static void help(void)
{
    printf("usage: truewatt report RUN [--profile FILE] [--perfetto FILE] [--csv FILE] [--json]\n"
           "                          [--group PATTERN]... [--group-range NAME]...\n"
           "       truewatt report RUN RUN... [--profile FILE] [--csv FILE] [--json] [--group PATTERN]...\n\n"
           "Recomputes the energy report of RUN, a run file that 'truewatt run' recorded\n"
           "(truewatt-run.sqlite), as 'truewatt run' prints it when its command ends; the report is\n"
           "also added to RUN's reports table. A run file copied from another machine reports the same.\n\n"
           "With several run files (the ranks of an MPI job: truewatt-run.rank*.sqlite), one merged\n"
           "report: each GPU (host and UUID) once, its energy from the first rank that sampled it, the\n"
           "kernels of every rank that ran on it fitted together, per rank; the total over the GPUs\n"
           "counts each once (docs/mpi.md). The merged report is printed, not stored.\n\n"
           "  --profile FILE   the sensor profile to use instead of the one the run used\n"
           "  --perfetto FILE  also write power and kernels for ui.perfetto.dev\n"
           "  --csv FILE       also write the report's records as CSV: a row per GPU and name, group\n"
           "                   or NVTX range (docs/usage.md)\n"
           "  --json           the report as JSON\n"
           "  --group PATTERN  the kernel names matching PATTERN (fnmatch, e.g. '*gemm*') reported as\n"
           "                   one group (repeatable; a merged report's names are 'rank N: name')\n"
           "  --group-range NAME  the kernels that start inside an NVTX range named NAME (any thread)\n"
           "                   reported as one group 'range NAME: *' (repeatable; one run file)\n");
}

enum { OPT_PROFILE = 1000, OPT_PERFETTO, OPT_JSON, OPT_CSV, OPT_GROUP, OPT_GROUP_RANGE };

int cmd_report(int argc, char **argv)
{
    static const struct option opts[] = {{"profile", required_argument, 0, OPT_PROFILE},
                                         {"perfetto", required_argument, 0, OPT_PERFETTO},
                                         {"json", no_argument, 0, OPT_JSON},
                                         {"csv", required_argument, 0, OPT_CSV},
                                         {"group", required_argument, 0, OPT_GROUP},
                                         {"group-range", required_argument, 0, OPT_GROUP_RANGE},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    run_report_opts o = {.cmd = "report"};
    int c, rc = 0;
    optind = 1;
    opterr = 0;
    while (rc == 0 && (c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        switch (c) {
        case 'h':
            help();
            return 0;
        case OPT_PROFILE:
            o.profile = optarg;
            break;
        case OPT_PERFETTO:
            o.perfetto = optarg;
            break;
        case OPT_JSON:
            o.json = true;
            break;
        case OPT_CSV:
            o.csv = optarg;
            break;
        case OPT_GROUP:
        case OPT_GROUP_RANGE:
            rc = report_add_group(&o, c == OPT_GROUP_RANGE, optarg);
            break;
        default:
            return cli_opt_other("report", c, optarg, argv, NULL);
        }
    }
    if (rc) return rc;
    if (optind >= argc) return cli_usage("report", "which run? give the run file, e.g. truewatt-run.sqlite");
    if (argc - optind > 1) {
        for (int i = optind; i < argc; i++)
            if (argv[i][0] == '-' && argv[i][1])
                return cli_usage("report", "options go before the run files: '%s'", argv[i]);
        o.options = "";
        return report_merged((const char *const *)argv + optind, (size_t)(argc - optind), &o, stdout);
    }
    rc = cli_opt_rest("report", argc, argv, optind + 1);
    if (rc) return rc;
    const char *path = argv[optind];
    char options[1024] = "";
    for (int i = 1; i < argc; i++)
        if (i != optind)
            snprintf(options + strlen(options), sizeof options - strlen(options), "%s%s", options[0] ? " " : "",
                     argv[i]);
    o.options = options;
    o.path = path;
    tw_run *run = NULL;
    tw_status st = tw_run_open(path, &run);
    if (st != TW_OK) return cli_fail("report", st);
    rc = report_run_file(run, &o, stdout);
    st = tw_run_close(run);
    /* the report is out; the file could not keep it (a full disk, read-only): said, not a failure */
    if (st != TW_OK && rc == 0)
        fprintf(stderr, "truewatt report: warning: the report is not kept: %s\n", tw_last_error());
    return rc;
}
