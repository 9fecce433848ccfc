/* truewatt report RUN: the report of a run file, recomputed offline (with
 * another sensor profile, as JSON, with a Perfetto file) by the same path
 * `truewatt run` takes when its command ends (run_pipeline.h). */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/run_merge.h"
#include "cli/run_pipeline.h"
#include "runfile/runfile.h"

static void help(void)
{
    printf("usage: truewatt report RUN [--profile FILE] [--perfetto FILE] [--json]\n"
           "       truewatt report RUN RUN... [--profile FILE] [--json]\n\n"
           "Recomputes the energy report of RUN, a run file that 'truewatt run' recorded\n"
           "(truewatt-run.sqlite), as 'truewatt run' prints it when its command ends; the report is\n"
           "also added to RUN's reports table. A run file copied from another machine reports the same.\n\n"
           "With several run files (the ranks of an MPI job: truewatt-run.rank*.sqlite), one merged\n"
           "report: each GPU (host and UUID) once, its energy from the first rank that sampled it, the\n"
           "kernels of every rank that ran on it fitted together, per rank; the total over the GPUs\n"
           "counts each once (docs/mpi.md). The merged report is printed, not stored.\n\n"
           "  --profile FILE   the sensor profile to use instead of the one the run used\n"
           "  --perfetto FILE  also write power and kernels for ui.perfetto.dev\n"
           "  --json           the report as JSON\n");
}

enum { OPT_PROFILE = 1000, OPT_PERFETTO, OPT_JSON };

int cmd_report(int argc, char **argv)
{
    static const struct option opts[] = {{"profile", required_argument, 0, OPT_PROFILE},
                                         {"perfetto", required_argument, 0, OPT_PERFETTO},
                                         {"json", no_argument, 0, OPT_JSON},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    run_report_opts o = {.cmd = "report"};
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
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
        default:
            return cli_opt_other("report", c, optarg, argv, NULL);
        }
    }
    if (optind >= argc) return cli_usage("report", "which run? give the run file, e.g. truewatt-run.sqlite");
    if (argc - optind > 1) {
        for (int i = optind; i < argc; i++)
            if (argv[i][0] == '-' && argv[i][1])
                return cli_usage("report", "options go before the run files: '%s'", argv[i]);
        o.options = "";
        return run_merge_report((const char *const *)argv + optind, (size_t)(argc - optind), &o, stdout);
    }
    int rc = cli_opt_rest("report", argc, argv, optind + 1);
    if (rc) return rc;
    const char *path = argv[optind];
    char options[1024] = "";
    for (int i = 1; i < argc; i++)
        if (i != optind)
            snprintf(options + strlen(options), sizeof options - strlen(options), "%s%s", options[0] ? " " : "",
                     argv[i]);
    o.options = options;
    tw_run *run = NULL;
    tw_status st = tw_run_open(path, &run);
    if (st != TW_OK) return cli_fail("report", st);
    rc = run_report_file(run, &o, stdout);
    st = tw_run_close(run);
    if (st != TW_OK && rc == 0) rc = cli_fail("report", st);
    return rc;
}
