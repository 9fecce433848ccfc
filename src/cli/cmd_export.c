/* truewatt export RUN --csv DIR: a run file's samples and activities as
 * the CSV files other tools read (and `truewatt analyze`): DIR/trace.csv
 * and DIR/events.csv, with the columns truewatt's trace and the injection
 * library's events file have. */
#include <stdio.h>

#include "cli/cli.h"
#include "cli/opts.h"

/* The options, declared once (cli/opts.h). */
int cmd_export(int argc, char **argv)
{
    const char *dir;
    const cli_opt opt[] = {
        {.name = "csv",
         .type = CLI_OPT_STRING,
         .arg = "DIR",
         .help = "write DIR/trace.csv, DIR/events.csv and, with activity counters, DIR/pm_samples.csv (DIR made when "
                 "missing)",
         .out = &dir},
    };
    const cli_opts o = {
        .cmd = "export",
        .synopsis = "RUN --csv DIR",
        .about = "Writes the run file RUN ('truewatt run' records it) as CSV into DIR (made when missing):\n"
                 "  DIR/trace.csv   the samples: t_s, then each reading and its own timestamp (NAME_t_s), one\n"
                 "                  row per poll, as 'truewatt analyze' and 'truewatt sim' read and write them\n"
                 "  DIR/events.csv  the kernels, memcpys, memsets and NVTX ranges, in the injection library's\n"
                 "                  columns (name, start_s, end_s, device, stream, kind, grid, block,\n"
                 "                  correlation_id, device_uuid, mangled, domain, tid, depth)\n"
                 "  DIR/pm_samples.csv  the activity counters, when the run recorded them (truewatt run\n"
                 "                  --activity-counters): a row per value: device, device_uuid, start_s,\n"
                 "                  end_s, metric, value",
        .opt = opt,
        .n = CLI_OPTS_N(opt),
        .after = "e.g. truewatt analyze DIR/trace.csv --events DIR/events.csv\n",
        .min_args = 1,
        .max_args = 1,
        .missing = "which run? give the run file, e.g. truewatt-run.sqlite"};
    int first;
    int rc = cli_opts_parse(&o, argc, argv, &first);
    if (rc) return rc < 0 ? 0 : rc;
    if (!dir) return cli_usage("export", "in which format? give --csv DIR");
    if ((rc = cli_make_dir("export", dir)) != 0) return rc;
    tw_run *run = NULL;
    tw_status st = tw_run_open(argv[first], &run);
    if (st != TW_OK) return cli_fail("export", st);
    char trace[4200], events[4200], pm[4200];
    snprintf(trace, sizeof trace, "%s/trace.csv", dir);
    snprintf(events, sizeof events, "%s/events.csv", dir);
    snprintf(pm, sizeof pm, "%s/pm_samples.csv", dir);
    st = tw_run_export_trace(run, trace);
    if (st == TW_OK) st = tw_run_export_events(run, events);
    size_t pm_devices = 0;
    if (st == TW_OK) st = tw_run_export_pm(run, pm, &pm_devices);
    tw_status cst = tw_run_close(run);
    if (st == TW_OK) st = cst;
    if (st != TW_OK) return cli_fail("export", st);
    if (pm_devices)
        cli_note("truewatt export: %s, %s and %s", trace, events, pm);
    else
        cli_note("truewatt export: %s and %s", trace, events);
    return 0;
}
