/* truewatt export RUN --csv DIR: a run file's samples and activities as
 * the CSV files other tools read (and `truewatt analyze`): DIR/trace.csv
 * and DIR/events.csv, with the columns truewatt's trace and the injection
 * library's events file have. */
#include <getopt.h>
#include <stdio.h>

#include "cli/cli.h"
#include "runfile/runfile.h"

static void help(void)
{
    printf("usage: truewatt export RUN --csv DIR\n\n"
           "Writes the run file RUN ('truewatt run' records it) as CSV into DIR (made when missing):\n"
           "  DIR/trace.csv   the samples: t_s, then each reading and its own timestamp (NAME_t_s), one\n"
           "                  row per poll, as 'truewatt analyze' and 'truewatt sim' read and write them\n"
           "  DIR/events.csv  the kernels, memcpys, memsets and NVTX ranges, in the injection library's\n"
           "                  columns (name, start_s, end_s, device, stream, kind, grid, block,\n"
           "                  correlation_id, device_uuid, mangled, domain, tid, depth)\n"
           "e.g. truewatt analyze DIR/trace.csv --events DIR/events.csv\n");
}

enum { OPT_CSV = 1000 };

int cmd_export(int argc, char **argv)
{
    static const struct option opts[] = {
        {"csv", required_argument, 0, OPT_CSV}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    const char *dir = NULL;
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        switch (c) {
        case 'h':
            help();
            return 0;
        case OPT_CSV:
            dir = optarg;
            break;
        default:
            return cli_opt_other("export", c, optarg, argv, NULL);
        }
    }
    if (optind >= argc) return cli_usage("export", "which run? give the run file, e.g. truewatt-run.sqlite");
    int rc = cli_opt_rest("export", argc, argv, optind + 1);
    if (rc) return rc;
    if (!dir) return cli_usage("export", "in which format? give --csv DIR");
    if ((rc = cli_make_dir("export", dir)) != 0) return rc;
    tw_run *run = NULL;
    tw_status st = tw_run_open(argv[optind], &run);
    if (st != TW_OK) return cli_fail("export", st);
    char trace[4200], events[4200];
    snprintf(trace, sizeof trace, "%s/trace.csv", dir);
    snprintf(events, sizeof events, "%s/events.csv", dir);
    st = tw_run_export_trace(run, trace);
    if (st == TW_OK) st = tw_run_export_events(run, events);
    tw_status cst = tw_run_close(run);
    if (st == TW_OK) st = cst;
    if (st != TW_OK) return cli_fail("export", st);
    cli_note("truewatt export: %s and %s", trace, events);
    return 0;
}
