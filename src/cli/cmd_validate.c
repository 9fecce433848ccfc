/* truewatt validate: the issue-4 validation on a GPU (or the simulator):
 * identification, then linearity, back-to-back kernels, short kernels and
 * 10 s loads, each measured by every method; writes the trace, the events,
 * the identified profile, validation.csv/.md and plots into one folder. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench/plans.h"
#include "cli/cli.h"
#include "cli/experiment.h"
#include "correct/profile_pick.h"
#include "cli/interrupt.h"

typedef struct validate_args {
    cli_exp_args exp;
    const char *out, *from;
} validate_args;

/* The options, declared once (cli/opts.h). */
static int parse_args(int argc, char **argv, validate_args *a)
{
    const cli_opt opt[] = {
        {.name = "out",
         .type = CLI_OPT_STRING,
         .arg = "DIR",
         .def = "truewatt-validation",
         .help = "where everything goes",
         .out = &a->out},
        {.name = "from",
         .type = CLI_OPT_STRING,
         .arg = "DIR",
         .help = "analyse DIR/trace.csv and DIR/events.csv recorded earlier",
         .out = &a->from},
    };
    const cli_opts o = {.cmd = "validate",
                        .synopsis = "[--out DIR] [--backend nvml|sim] [--sim k20|h100] [--seed N]\n"
                                    "                         [--device N] [--from DIR]",
                        .about = "Runs the sensor identification (about a minute) and the validation experiments\n"
                                 "(about four minutes) on one GPU, then measures every experiment by every method:\n"
                                 "  (i)   linearity: one kernel for T and 2T (T = 0.1, 0.5, 2 s), energy ratio\n"
                                 "  (ii)  back to back: two 0.5 s kernels 50 ms, 300 ms, 1 s apart, second / first\n"
                                 "  (iii) kernels of 1, 3, 10, 30, 100 ms: energy per launch against the reference\n"
                                 "        (the same kernel's dynamic power over >= 4 s, times its duration)\n"
                                 "  (iv)  energy counter, sample buffer and corrected instant power over 10 s loads\n"
                                 "  (v)   the identified sensor profile\n"
                                 "Nothing on the card is changed (clocks, limits, modes stay as they are).",
                        .opt = opt,
                        .n = CLI_OPTS_N(opt)};
    return cli_exp_parse(o, &a->exp, argc, argv);
}

static tw_status plan_all(tw_exec *x, void *ctx)
{
    (void)ctx;
    tw_status st = tw_plan_identify(x);
    return st == TW_OK ? tw_plan_validate(x) : st;
}

static int make_dir(const char *dir)
{
    if (mkdir(dir, 0777) == 0 || errno == EEXIST) return 0;
    fprintf(stderr, "truewatt validate: cannot create %s: %s\n", dir, strerror(errno));
    return CLI_EXIT_FAIL;
}

static void note(void *ctx, const char *text)
{
    (void)ctx;
    cli_note("truewatt validate: %s", text);
}

/* The library's report of a recorded (or just finished) validation run;
 * `o` names its GPU, driver and, on the simulator, the true levels. */
static int report(tw_sensor *trace, const tw_events *events, const char *outdir, tw_validation_options *o)
{
    o->out_dir = outdir;
    o->cancel = &cli_interrupted;
    o->note = note;
    tw_status st = tw_validation_report(trace, events, o, stdout);
    return st == TW_OK ? 0 : cli_fail("validate", st);
}

static int analyse_recorded(const validate_args *a, char *trace, char *events)
{
    tw_sensor *s = NULL;
    tw_events *ev = NULL;
    tw_sensor_config cfg = {.path = trace};
    tw_status st = tw_sensor_open("replay", &cfg, &s);
    if (st == TW_OK) st = tw_events_load(events, &ev);
    /* the GPU and driver the recording names (its provenance line) */
    char gpu[128] = "", driver[64] = "";
    int index = 0;
    bool named = tw_trace_gpu(trace, &index, gpu, sizeof gpu, driver, sizeof driver) && gpu[0];
    tw_validation_options o;
    tw_validation_options_init(&o);
    if (named) {
        o.gpu = gpu;
        o.driver = driver;
        o.backend = "replay";
    }
    int rc = st == TW_OK ? report(s, ev, a->out, &o) : cli_fail("validate", st);
    tw_sensor_close(s);
    tw_events_free(ev);
    return rc;
}

int cmd_validate(int argc, char **argv)
{
    validate_args a = {.out = "truewatt-validation"};
    cli_exp_args_init(&a.exp);
    int rc = parse_args(argc, argv, &a);
    if (rc) return rc < 0 ? 0 : rc;
    char trace[4096], events[4096];
    const char *in = a.from ? a.from : a.out;
    snprintf(trace, sizeof trace, "%s/trace.csv", in);
    snprintf(events, sizeof events, "%s/events.csv", in);
    /* nothing is created for a run that cannot start */
    char why[512] = "";
    if (!a.from && !strcmp(a.exp.backend, "nvml") && !tw_backend_available(a.exp.backend, why, sizeof why)) {
        fprintf(stderr, "truewatt validate: cannot measure: the %s backend is unavailable: %s\n", a.exp.backend, why);
        return CLI_EXIT_FAIL;
    }
    if (a.from && access(trace, R_OK) != 0) {
        fprintf(stderr, "truewatt validate: cannot read %s: %s\n", trace, strerror(errno));
        return CLI_EXIT_FAIL;
    }
    if ((rc = make_dir(a.out))) return rc;
    if (a.from) return analyse_recorded(&a, trace, events);

    char prov[1024];
    cli_exp_provenance(prov, sizeof prov, argc, argv);
    a.exp.trace_path = trace;
    a.exp.events_path = events;
    tw_exec *x = NULL;
    if ((rc = cli_exp_start("validate", &a.exp, tw_plan_identify_s() + tw_plan_validate_s(), prov, &x))) return rc;
    rc = cli_exp_run("validate", x, plan_all, NULL);
    if (rc == 0) {
        /* the simulator's run is kept like a GPU's, so --from can analyse it again */
        rc = cli_exp_keep_sim_run("validate", x, trace, events, prov);
        tw_validation_options o;
        tw_validation_options_init(&o);
        o.gpu = x->gpu;
        o.driver = x->driver;
        o.backend = x->backend;
        o.true_idle_w = x->true_idle_w;
        o.true_active_idle_w = x->true_active_idle_w;
        o.true_step_w = x->true_step_w;
        if (rc == 0) rc = report(x->trace, x->events, a.out, &o);
    }
    tw_exec_free(x);
    return rc;
}
