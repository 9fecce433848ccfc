/* truewatt report RUN: the report of a run file, recomputed offline (with
 * another sensor profile, as JSON, with a Perfetto file) by the same path
 * `truewatt run` takes when its command ends (tw_report_compute). */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/opts.h"
#include "cli/report_out.h"
#include "truewatt.h"

/* The options, declared once (cli/opts.h). */
int cmd_report(int argc, char **argv)
{
    run_report_opts o = {.cmd = "report"};
    const cli_opt opt[] = {
        {.name = "profile",
         .type = CLI_OPT_STRING,
         .arg = "FILE",
         .help = "the sensor profile to use instead of the one the run used",
         .out = &o.profile},
        {.name = "perfetto",
         .type = CLI_OPT_STRING,
         .arg = "FILE",
         .help = "also write power and kernels for ui.perfetto.dev",
         .out = &o.perfetto},
        {.name = "csv",
         .type = CLI_OPT_STRING,
         .arg = "FILE",
         .help = "also write the report's records as CSV: a row per GPU and name, group\n"
                 "or NVTX range (docs/usage.md)",
         .out = &o.csv},
        {.name = "json", .type = CLI_OPT_FLAG, .help = "the report as JSON", .out = &o.json},
        {.name = "no-activity-counters",
         .type = CLI_OPT_FLAG,
         .help = "estimate from the power readings alone, the activity counters the run\n"
                 "recorded left out (to compare; docs/methods.md)",
         .out = &o.no_counters},
        {.name = "no-linger",
         .type = CLI_OPT_FLAG,
         .help = "no lingering-power term: each name's energy only while it runs (to\n"
                 "compare; docs/methods.md)",
         .out = &o.no_linger},
        {.name = "group",
         .type = CLI_OPT_CALL,
         .arg = "PATTERN",
         .help = "the kernel names matching PATTERN (fnmatch, e.g. '*gemm*') reported as\n"
                 "one group (repeatable; a merged report's names are 'rank N: name')",
         .out = &o,
         .call = report_opt_group},
        {.name = "group-range",
         .type = CLI_OPT_CALL,
         .arg = "NAME",
         .help = "the kernels that start inside an NVTX range named NAME (any thread)\n"
                 "reported as one group 'range NAME: *' (repeatable; one run file)",
         .out = &o,
         .call = report_opt_group_range},
    };
    const cli_opts table = {
        .cmd = "report",
        .synopsis = "RUN [--profile FILE] [--perfetto FILE] [--csv FILE] [--json]\n"
                    "                          [--group PATTERN]... [--group-range NAME]... [--no-activity-counters] "
                    "[--no-linger]\n"
                    "       truewatt report RUN RUN... [--profile FILE] [--csv FILE] [--json] [--group PATTERN]...",
        .about = "Recomputes the energy report of RUN, a run file that 'truewatt run' recorded\n"
                 "(truewatt-run.sqlite), as 'truewatt run' prints it when its command ends; the report is\n"
                 "also added to RUN's reports table. A run file copied from another machine reports the same.\n\n"
                 "With several run files (the ranks of an MPI job: truewatt-run.rank*.sqlite), one merged\n"
                 "report: each GPU (host and UUID) once, its energy from the first rank that sampled it, the\n"
                 "kernels of every rank that ran on it fitted together, per rank; the total over the GPUs\n"
                 "counts each once (docs/mpi.md). The merged report is printed, not stored.",
        .opt = opt,
        .n = CLI_OPTS_N(opt),
        .min_args = 1,
        .max_args = CLI_OPTS_ANY,
        .missing = "which run? give the run file, e.g. truewatt-run.sqlite"};
    int first;
    int rc = cli_opts_parse(&table, argc, argv, &first);
    if (rc) return rc < 0 ? 0 : rc;
    if (argc - first > 1) {
        for (int i = first; i < argc; i++)
            if (argv[i][0] == '-' && argv[i][1])
                return cli_usage("report", "options go before the run files: '%s'", argv[i]);
        o.options = "";
        return report_merged((const char *const *)argv + first, (size_t)(argc - first), &o, stdout);
    }
    const char *path = argv[first];
    char options[1024] = "";
    for (int i = 1; i < argc; i++)
        if (i != first)
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
