/* truewatt sensor identify: runs the identification experiment on a GPU (or
 * the simulator), or takes a recorded trace and its events, fits each
 * reading's model and writes the sensor profile (JSON, named by GPU and
 * driver). */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "bench/plans.h"
#include "cli/cli.h"
#include "cli/experiment.h"
#include "cli/interrupt.h"
#include "correct/identify.h"
#include "correct/profile.h"

#define CMD "sensor identify"

typedef struct id_args {
    cli_exp_args exp;
    const char *out, *trace_out, *trace, *events;
    double until_s;
    bool json;
} id_args;

/* The options, declared once (cli/opts.h). */
static int parse_args(int argc, char **argv, id_args *a)
{
    const cli_opt opt[] = {
        {.name = "out",
         .type = CLI_OPT_STRING,
         .arg = "FILE",
         .help = "the profile (default: <gpu>_<driver>.json in the current folder)",
         .out = &a->out},
        {.name = "trace-out",
         .type = CLI_OPT_STRING,
         .arg = "CSV",
         .def = "truewatt-identify.csv",
         .help = "where the recorded trace goes (its events beside it as .events.csv)",
         .out = &a->trace_out},
        {.name = "trace",
         .type = CLI_OPT_STRING,
         .arg = "CSV",
         .help = "fit a trace recorded earlier instead (with --events)",
         .out = &a->trace},
        {.name = "events",
         .type = CLI_OPT_STRING,
         .arg = "CSV",
         .help = "the kernels of --trace, with a 'context' marker",
         .out = &a->events},
        {.name = "until",
         .type = CLI_OPT_DOUBLE,
         .arg = "S",
         .help = "fit only the trace up to S seconds",
         .out = &a->until_s,
         .min = 0,
         .max = INFINITY,
         .min_excl = true},
        {.name = "json", .type = CLI_OPT_FLAG, .help = "print the profile as JSON on stdout", .out = &a->json},
    };
    const cli_opts o = {
        .cmd = CMD,
        .synopsis = "[--out PROFILE.json] [--backend nvml|sim] [--sim k20|h100]\n"
                    "                                [--seed N] [--device N] [--trace-out CSV] [--json]\n"
                    "       truewatt sensor identify --trace CSV --events CSV [--until S] [--out PROFILE.json]",
        .about = "Finds how each power reading of a GPU behaves: idle before a CUDA context exists,\n"
                 "then active idle, steps of 4 s and 2 s, square waves, and isolated kernels of 1 ms\n"
                 "to 1 s at varied phases (about a minute). For every reading it fits the update\n"
                 "period, the averaging window, the delay, the coverage (fraction of the time the\n"
                 "reading sees) and the response: rc (a lagging capacitor, as on Kepler), boxcar\n"
                 "(a moving average), window (a short average held until the next update) or\n"
                 "counter; and the idle, active-idle and kernel levels. Nothing on the card is changed.",
        .opt = opt,
        .n = CLI_OPTS_N(opt)};
    int rc = cli_exp_parse(o, &a->exp, argc, argv);
    if (rc) return rc;
    if (!a->trace != !a->events) return cli_usage(CMD, "--trace and --events go together");
    return 0;
}

static void stamp(tw_profile *p, const char *command)
{
    time_t now = time(NULL);
    struct tm tm;
    if (gmtime_r(&now, &tm)) strftime(p->created, sizeof p->created, "%Y-%m-%dT%H:%M:%SZ", &tm);
    snprintf(p->command, sizeof p->command, "%s", command);
}

/* Fits, fills the provenance, saves and prints. */
static int fit_and_save(const id_args *a, tw_sensor *trace, const tw_events *ev, const char *command, tw_profile *p)
{
    tw_identify_options o;
    tw_identify_options_init(&o);
    o.t_end_s = a->until_s;
    o.cancel = &cli_interrupted;
    cli_note("truewatt %s: fitting the models of every reading", CMD);
    tw_status st = tw_identify(trace, ev, &o, p, NULL);
    if (st != TW_OK) return cli_fail(CMD, st);
    stamp(p, command);
    char name[256];
    if (!a->out) tw_profile_file_name(p->gpu, p->driver, name, sizeof name);
    const char *out = a->out ? a->out : name;
    if ((st = tw_profile_save(p, out)) != TW_OK) return cli_fail(CMD, st);
    cli_note("truewatt %s: profile written to %s", CMD, out);
    /* the profile as written, shown as `sensor show` shows it */
    st = tw_profile_show(out, a->json, stdout);
    return st == TW_OK ? 0 : cli_fail(CMD, st);
}

static int from_files(const id_args *a, const char *command)
{
    tw_sensor *s = NULL;
    tw_events *ev = NULL;
    tw_sensor_config cfg = {.path = a->trace};
    tw_status st = tw_sensor_open("replay", &cfg, &s);
    if (st == TW_OK) st = tw_events_load(a->events, &ev);
    int rc;
    if (st != TW_OK) {
        rc = cli_fail(CMD, st);
    } else {
        tw_profile p;
        tw_profile_init(&p);
        snprintf(p.backend, sizeof p.backend, "replay");
        rc = fit_and_save(a, s, ev, command, &p);
    }
    tw_sensor_close(s);
    tw_events_free(ev);
    return rc;
}

static tw_status plan(tw_exec *x, void *ctx)
{
    (void)ctx;
    return tw_plan_identify(x);
}

int tw_cmd_sensor_identify(int argc, char **argv)
{
    id_args a = {.until_s = NAN};
    cli_exp_args_init(&a.exp);
    int rc = parse_args(argc, argv, &a);
    if (rc) return rc < 0 ? 0 : rc;
    char prov[1024];
    cli_exp_provenance(prov, sizeof prov, argc, argv);
    char command[256];
    const char *cmdline = prov + strlen("command: truewatt ");
    snprintf(command, sizeof command, "truewatt %.*s", (int)strcspn(cmdline, ";"), cmdline); /* "sensor identify ..." */
    if (a.trace) return from_files(&a, command);

    char events[4096];
    cli_exp_events_path(a.trace_out, events, sizeof events);
    a.exp.trace_path = a.trace_out;
    a.exp.events_path = events;
    tw_exec *x = NULL;
    if ((rc = cli_exp_start(CMD, &a.exp, tw_plan_identify_s(), prov, &x))) return rc;
    rc = cli_exp_run(CMD, x, plan, NULL);
    if (rc == 0) rc = cli_exp_keep_sim_run(CMD, x, a.trace_out, events, prov);
    if (rc == 0) {
        tw_profile p;
        tw_profile_init(&p);
        snprintf(p.gpu, sizeof p.gpu, "%s", x->gpu);
        snprintf(p.driver, sizeof p.driver, "%s", x->driver);
        snprintf(p.backend, sizeof p.backend, "%s", x->backend);
        rc = fit_and_save(&a, x->trace, x->events, command, &p);
    }
    tw_exec_free(x);
    return rc;
}
