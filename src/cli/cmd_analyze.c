/* truewatt analyze: energy per event of a recorded trace, by every method. */
#include <libgen.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "cli/interrupt.h"
#include "cli/opts.h"

typedef struct analyze_args {
    const char *trace, *events, *column, *corrected, *profile;
    bool json, fit, no_corrected;
    tw_analysis_options opt;
    bool c_given;
} analyze_args;

/* The options, declared once (cli/opts.h). */
static int parse_args(int argc, char **argv, analyze_args *a)
{
    uint64_t slope_points;
    const cli_opt opt[] = {
        {.name = "events",
         .type = CLI_OPT_STRING,
         .arg = "FILE",
         .help = "CSV name,start_s,end_s (label,t_start,t_end also accepted);\n"
                 "without it, a run file's own kernels and NVTX ranges, else activity\n"
                 "regions detected from the trace",
         .out = &a->events},
        {.name = "column",
         .type = CLI_OPT_STRING,
         .arg = "NAME",
         .help = "the power reading to analyse (default power_w, else the first\npower column)",
         .out = &a->column},
        {.name = "capacitance",
         .type = CLI_OPT_DOUBLE,
         .arg = "S",
         .help = "the sensor's RC constant (default 0.84 s, the K20's)",
         .out = &a->opt.capacitance_s,
         .min = 0,
         .max = INFINITY,
         .seen = &a->c_given},
        {.name = "fit-capacitance",
         .type = CLI_OPT_FLAG,
         .help = "fit C by least squares on the longest event's step response",
         .out = &a->opt.fit_capacitance},
        {.name = "slope-points",
         .type = CLI_OPT_U64,
         .arg = "N",
         .def = "3",
         .help = "points for the slope, odd: 3 = the paper's symmetric formula,\n"
                 "5, 7, ... = least-squares slope, smoother (paper §6.1)",
         .out = &slope_points,
         .min = 3,
         .max = 33},
        {.name = "idle",
         .type = CLI_OPT_DOUBLE,
         .arg = "W",
         .help = "the idle level to use instead of estimating it from the trace",
         .out = &a->opt.idle_w},
        {.name = "active-idle",
         .type = CLI_OPT_DOUBLE,
         .arg = "W",
         .help = "the active-idle level to use instead of estimating it",
         .out = &a->opt.active_idle_w},
        {.name = "corrected-out",
         .type = CLI_OPT_STRING,
         .arg = "FILE",
         .help = "where to write the corrected power series\n"
                 "(default: TRACE's name with .corrected.csv, in the current folder)",
         .out = &a->corrected},
        {.name = "no-corrected-out", .type = CLI_OPT_FLAG, .help = "do not write it", .out = &a->no_corrected},
        {.name = "profile",
         .type = CLI_OPT_STRING,
         .arg = "FILE",
         .help = "a sensor profile ('truewatt sensor identify'): adds each event's\n"
                 "energy by the model of its best reading (default: the profile of the\n"
                 "GPU and driver the trace's header names, when $TW_PROFILE_DIR or the\n"
                 "built-in profiles have one)",
         .out = &a->profile},
        {.name = "json", .type = CLI_OPT_FLAG, .help = "machine-readable output on stdout", .out = &a->json},
    };
    const cli_opts o = {
        .cmd = "analyze",
        .synopsis = "TRACE [--events FILE] [--column NAME]\n"
                    "                        [--capacitance S | --fit-capacitance] [--slope-points N]\n"
                    "                        [--idle W] [--active-idle W] [--corrected-out FILE | --no-corrected-out]\n"
                    "                        [--profile FILE] [--json]",
        .about = "Energy of each event of a power trace by the corrected method of Burtscher et al. 2014\n"
                 "and by the naive methods beside it, with the idle / active-idle / dynamic split.\n"
                 "With a sensor profile, also by the model of its best reading that the trace has.\n\n"
                 "TRACE is a CSV with a time column t_s (or t) and power columns (_w, _mw), or a run file\n"
                 "of 'truewatt run' (its samples).",
        .opt = opt,
        .n = CLI_OPTS_N(opt),
        .min_args = 1,
        .max_args = 1,
        .missing = "which trace? give a TRACE file"};
    int first;
    int rc = cli_opts_parse(&o, argc, argv, &first);
    if (rc) return rc;
    if (slope_points % 2 != 1)
        return cli_usage("analyze", "--slope-points must be an odd number from 3 to 33, got '%llu'",
                         (unsigned long long)slope_points);
    a->opt.slope_half_width = (int)((slope_points - 1) / 2);
    if (a->c_given && a->opt.fit_capacitance)
        return cli_usage("analyze", "--capacitance and --fit-capacitance exclude each other");
    a->trace = argv[first];
    return 0;
}

/* TRACE "dir/run.csv" -> "run.corrected.csv" in the current folder. */
static char *default_corrected_path(const char *trace)
{
    char *copy = strdup(trace);
    if (!copy) return NULL;
    const char *base = basename(copy);
    size_t len = strlen(base);
    if (len > 4 && !strcmp(base + len - 4, ".csv")) len -= 4;
    size_t n = len + sizeof ".corrected.csv";
    char *out = malloc(n);
    if (out) snprintf(out, n, "%.*s.corrected.csv", (int)len, base);
    free(copy);
    return out;
}

/* Like cli_fail, but names the trace when the library's message does not
 * (a missing column, no samples): the user must know which file is meant. */
static int fail_on_trace(const char *trace, tw_status st)
{
    const char *detail = tw_last_error();
    if (!detail || !*detail) detail = tw_strerror(st);
    if (strncmp(detail, trace, strlen(trace)) == 0) return cli_fail("analyze", st);
    fprintf(stderr, "truewatt analyze: %s: %s\n", trace, detail);
    return CLI_EXIT_FAIL;
}

/* The default reading is power_w, else the first power column. Returns an exit code. */
static int pick_reading(tw_sensor *s, const char *column, const char *trace, size_t *idx)
{
    if (column) return tw_sensor_find(s, column, idx) == TW_OK ? 0 : fail_on_trace(trace, TW_ENOTFOUND);
    if (tw_sensor_find(s, "power_w", idx) == TW_OK) return 0;
    for (size_t i = 0; i < tw_sensor_nreadings(s); i++)
        if (tw_sensor_reading(s, i)->quantity == TW_Q_POWER) {
            *idx = i;
            return 0;
        }
    fprintf(stderr,
            "truewatt analyze: %s: no power column (name one with a _w or _mw suffix, or pick one with --column)\n",
            trace);
    return CLI_EXIT_FAIL;
}

static void note(void *ctx, const char *text)
{
    (void)ctx;
    cli_note("truewatt analyze: %s", text);
}

/* The library's report of the analysis, with the profile's section when one applies. */
static int report(const tw_analysis *an, const analyze_args *a, const char *reading, const char *corrected,
                  const tw_analysis_profile *pw)
{
    tw_analysis_report_options o;
    tw_analysis_report_options_init(&o);
    o.trace = a->trace;
    o.reading = reading;
    o.corrected_path = corrected;
    o.dedup_gap_s = a->opt.dedup_gap_s;
    o.capacitance_given = a->c_given;
    o.idle_given = !isnan(a->opt.idle_w);
    o.active_idle_given = !isnan(a->opt.active_idle_w);
    o.events_detected = a->events == NULL;
    o.json = a->json;
    o.note = note;
    tw_status st = tw_analysis_report(an, pw, &o, stdout);
    return st == TW_OK ? 0 : cli_fail("analyze", st);
}

/* What the trace reader read with a warning (a cut-off last line), one line each. */
static void warn_notes(const tw_sensor *src)
{
    const char *n = tw_sensor_notes(src);
    while (n && *n) {
        size_t len = strcspn(n, "\n");
        fprintf(stderr, "truewatt analyze: warning: %.*s\n", (int)len, n);
        n += len + (n[len] == '\n');
    }
}

/* The events: a file's (held: a CSV is read whole), else a run file's own
 * kernels and NVTX ranges (replayed from the file by each pass, never all held). */
typedef struct analyze_events {
    tw_events *set;
    tw_run *run;
    tw_event_feed *feed;
} analyze_events;

static tw_status events_open(analyze_args *a, analyze_events *ev)
{
    if (a->events) return tw_events_load(a->events, &ev->set);
    if (!tw_run_is_file(a->trace)) return TW_OK; /* none: activity regions are detected */
    tw_status st = tw_run_open(a->trace, &ev->run);
    if (st == TW_OK) st = tw_event_feed_of_run(ev->run, &ev->feed);
    if (st == TW_OK) a->events = a->trace; /* given, not detected */
    return st;
}

static tw_status events_close(analyze_events *ev)
{
    tw_event_feed_free(ev->feed);
    tw_events_free(ev->set);
    return tw_run_close(ev->run);
}

static tw_status analyze(tw_sensor *src, size_t reading, const analyze_events *ev, const tw_analysis_options *opt,
                         tw_analysis **an)
{
    if (ev->feed) return tw_analyze_stream(src, reading, ev->feed, opt, NULL, NULL, an);
    return tw_analyze(src, reading, ev->set, opt, an);
}

int cmd_analyze(int argc, char **argv)
{
    analyze_args a = {0};
    tw_analysis_options_init(&a.opt);
    int rc = parse_args(argc, argv, &a);
    if (rc) return rc < 0 ? 0 : rc;
    tw_analysis_profile *pw = NULL;
    tw_status pst = tw_analysis_profile_open(a.profile, a.trace, note, NULL, &pw);
    if (pst != TW_OK) return cli_fail("analyze", pst);
    analyze_events events = {0};
    tw_sensor *src = NULL;
    tw_analysis *an = NULL;
    char *corrected = NULL;
    size_t reading = 0;
    tw_sensor_config cfg = {.path = a.trace};
    tw_status st = events_open(&a, &events);
    if (st == TW_OK) st = tw_sensor_open("replay", &cfg, &src);
    if (st == TW_OK && (rc = pick_reading(src, a.column, a.trace, &reading)) != 0) goto out;
    if (st == TW_OK && !a.no_corrected) {
        corrected = a.corrected ? strdup(a.corrected) : default_corrected_path(a.trace);
        if (!corrected) st = TW_ENOMEM;
        a.opt.corrected_path = corrected;
    }
    if (st == TW_OK) {
        cli_interrupt_install();
        a.opt.cancel = &cli_interrupted;
        st = analyze(src, reading, &events, &a.opt, &an);
    }
    if (st == TW_EINTERRUPTED) {
        fprintf(stderr, "truewatt analyze: interrupted; nothing reported%s%s\n",
                corrected ? ", the corrected series so far is in " : "", corrected ? corrected : "");
        rc = CLI_EXIT_INTERRUPTED;
        goto out;
    }
    if (st == TW_OK && (st = tw_analysis_profile_estimate(pw, src, an, &cli_interrupted)) != TW_OK) {
        rc = cli_fail("analyze", st);
        goto out;
    }
    /* a message naming the events file (an event outside the data) is not the trace's */
    bool about_events = a.events && strncmp(tw_last_error(), a.events, strlen(a.events)) == 0;
    if (st != TW_OK)
        rc = src && st != TW_EIO && !about_events ? fail_on_trace(a.trace, st) : cli_fail("analyze", st);
    else {
        warn_notes(src);
        rc = report(an, &a, tw_sensor_reading(src, reading)->name, corrected, pw);
    }
out:
    tw_analysis_profile_free(pw); /* before the analysis and its events: its estimate borrows their names */
    tw_analysis_free(an);
    tw_sensor_close(src);
    events_close(&events);
    free(corrected);
    return rc;
}
