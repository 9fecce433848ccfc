/* truewatt demo: the experiments of Burtscher et al. 2014 on the simulated
 * K20, through the real path: simulator -> trace file -> analysis. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "cli/demo_report.h"
#include "cli/interrupt.h"
#include "cli/opts.h"
#include "cli/sim_run.h"
#include "report/plot.h"

#define SIM_C_S 0.84 /* the simulated K20's constant, what the fit must find */
#define TAIL_S 14.0  /* simulate past the K20's tail so t4 (idle again) is seen */
#define MAX_KERNELS 2

typedef struct kernel_spec {
    const char *name;
    double start_s, duration_s, power_w;
} kernel_spec;

typedef struct experiment {
    const char *id;
    const char *what;
    kernel_spec k[MAX_KERNELS];
} experiment;

/* Runtimes and power levels follow the paper's NB runs: 5.346 s at ~158 W
 * (Fig. 1), twice as long, two 350k-body runs 1 s apart (Fig. 2, 114 J and
 * 147 J raw), and the six runs of Fig. 3 down to 0.107 s (95k bodies, 35.7 W peak). */
static const experiment experiments[] = {
    {"fig1", "one long kernel (Fig. 1)", {{"nb_700k", 1.0, 5.346, 158.0}}},
    {"fig1x2", "the same kernel, twice as long", {{"nb_700k_x2", 1.0, 10.692, 158.0}}},
    {"fig2", "two kernels 1 s apart (Fig. 2, 8)", {{"nb_350k_a", 1.0, 1.3, 150.0}, {"nb_350k_b", 3.3, 1.3, 150.0}}},
    {"fig3_500k", "short kernels (Fig. 3)", {{"nb_500k", 1.0, 2.96, 158.0}}},
    {"fig3_320k", "short kernels (Fig. 3)", {{"nb_320k", 1.0, 1.21, 150.0}}},
    {"fig3_250k", "short kernels (Fig. 3)", {{"nb_250k", 1.0, 0.74, 140.0}}},
    {"fig3_190k", "short kernels (Fig. 3)", {{"nb_190k", 1.0, 0.43, 130.0}}},
    {"fig3_124k", "short kernels (Fig. 3)", {{"nb_124k", 1.0, 0.18, 115.0}}},
    {"fig3_95k", "short kernels (Fig. 3)", {{"nb_95k", 1.0, 0.107, 110.0}}},
};

#define NEXP (sizeof experiments / sizeof experiments[0])

typedef struct demo_args {
    const char *out;
    uint64_t seed;
    bool json, no_plot;
} demo_args;

/* The options, declared once (cli/opts.h). */
static int parse_args(int argc, char **argv, demo_args *a)
{
    const cli_opt opt[] = {
        {.name = "out",
         .type = CLI_OPT_STRING,
         .arg = "DIR",
         .def = "truewatt-demo",
         .help = "where traces, corrected series, demo.csv and plots go",
         .out = &a->out},
        {.name = "seed", .type = CLI_OPT_U64, .arg = "N", .def = "1", .help = "simulator seed", .out = &a->seed},
        {.name = "no-plot",
         .type = CLI_OPT_FLAG,
         .help = "do not run gnuplot (the script and data are still written)",
         .out = &a->no_plot},
        {.name = "json", .type = CLI_OPT_FLAG, .help = "machine-readable results on stdout", .out = &a->json},
    };
    const cli_opts o = {.cmd = "demo",
                        .synopsis = "[--out DIR] [--seed N] [--no-plot] [--json]",
                        .about = "Reproduces the experiments of Burtscher et al. 2014 on the simulated K20 sensor:\n"
                                 "one long kernel (Fig. 1), the same kernel twice as long, two kernels 1 s apart\n"
                                 "(Fig. 2, 8), the short kernels of Fig. 3 and fixed-interval integration (Fig. 6).\n"
                                 "Each run goes simulator -> trace file -> analysis. C is first fitted from Fig. 1's\n"
                                 "step response, then used for every run. Prints one table (truth, each naive method,\n"
                                 "corrected, error in %) and draws raw against corrected power with gnuplot.",
                        .opt = opt,
                        .n = CLI_OPTS_N(opt)};
    int first;
    return cli_opts_parse(&o, argc, argv, &first);
}

static void path_in(char *buf, size_t len, const char *dir, const char *id, const char *suffix)
{
    snprintf(buf, len, "%s/%s%s", dir, id, suffix);
}

static tw_status build_scenario(const experiment *x, tw_scenario **out)
{
    tw_status st = tw_scenario_new(TW_SIM_K20, out);
    double end = 0;
    for (int i = 0; st == TW_OK && i < MAX_KERNELS && x->k[i].name; i++) {
        const kernel_spec *k = &x->k[i];
        st = tw_scenario_add_kernel(*out, k->name, k->start_s, k->duration_s, k->power_w);
        if (k->start_s + k->duration_s > end) end = k->start_s + k->duration_s;
    }
    if (st == TW_OK) st = tw_scenario_set_duration(*out, end + TAIL_S);
    return st;
}

/* Simulates one experiment to DIR/ID.trace.csv and DIR/ID.events.csv. */
static tw_status simulate(const experiment *x, const demo_args *a, tw_events **events)
{
    char trace[1024], evpath[1024];
    path_in(trace, sizeof trace, a->out, x->id, ".trace.csv");
    path_in(evpath, sizeof evpath, a->out, x->id, ".events.csv");
    tw_scenario *sc = NULL;
    sim_run_result r;
    tw_status st = build_scenario(x, &sc);
    if (st == TW_OK) st = sim_run_to_file(sc, a->seed, trace, &r);
    if (st == TW_OK) st = tw_scenario_events(sc, events);
    if (st == TW_OK) st = tw_events_save(*events, evpath);
    tw_scenario_free(sc);
    return st;
}

/* Analyses DIR/ID.trace.csv as `truewatt analyze` would. */
static tw_status analyze(const experiment *x, const demo_args *a, const tw_events *events, double c_s, bool fit,
                         tw_analysis **out)
{
    char trace[1024], corrected[1024];
    path_in(trace, sizeof trace, a->out, x->id, ".trace.csv");
    path_in(corrected, sizeof corrected, a->out, x->id, ".corrected.csv");
    tw_sensor_config cfg = {.path = trace};
    tw_sensor *src = NULL;
    size_t reading;
    tw_analysis_options opt;
    tw_analysis_options_init(&opt);
    opt.fit_capacitance = fit;
    if (!fit) opt.capacitance_s = c_s;
    opt.corrected_path = fit ? NULL : corrected;
    opt.cancel = &cli_interrupted;
    tw_status st = tw_sensor_open("replay", &cfg, &src);
    if (st == TW_OK) st = tw_sensor_find(src, "power_w", &reading);
    if (st == TW_OK) st = tw_analyze(src, reading, events, &opt, out);
    tw_sensor_close(src);
    return st;
}

static void record_run(demo_results *res, const experiment *x, const tw_analysis *an)
{
    for (size_t i = 0; i < tw_analysis_event_count(an) && res->n < DEMO_MAX_ROWS; i++) {
        const tw_event *e = tw_analysis_event(an, i);
        demo_row *r = &res->rows[res->n++];
        snprintf(r->experiment, sizeof r->experiment, "%s", x->id);
        snprintf(r->kernel, sizeof r->kernel, "%s", e->name);
        r->start_s = e->start_s;
        r->duration_s = e->end_s - e->start_s;
        r->true_energy_j = e->true_energy_j;
        for (int m = 0; m < TW_METHOD_COUNT; m++)
            r->energy_j[m] = tw_analysis_energy_j(an, i, (tw_method)m);
    }
}

static tw_status fit_capacitance(const demo_args *a, demo_results *res)
{
    tw_events *ev = NULL;
    tw_analysis *an = NULL;
    if (!a->json) cli_note("demo: identifying the sensor: fitting C from the step response of fig1");
    tw_status st = simulate(&experiments[0], a, &ev);
    if (st == TW_OK) st = analyze(&experiments[0], a, ev, NAN, true, &an);
    if (st == TW_OK) {
        res->c_fitted_s = tw_analysis_capacitance_s(an);
        res->c_fit_rms_w = tw_analysis_fit_rms_w(an);
    }
    res->c_sim_s = SIM_C_S;
    tw_analysis_free(an);
    tw_events_free(ev);
    return st;
}

static tw_status run_experiments(const demo_args *a, demo_results *res)
{
    tw_status st = fit_capacitance(a, res);
    for (size_t i = 0; st == TW_OK && i < NEXP; i++) {
        const experiment *x = &experiments[i];
        tw_events *ev = NULL;
        tw_analysis *an = NULL;
        if (!a->json) cli_note("demo: [%zu/%zu] %s: %s", i + 1, NEXP, x->id, x->what);
        st = simulate(x, a, &ev);
        if (st == TW_OK) st = analyze(x, a, ev, res->c_fitted_s, false, &an);
        if (st == TW_OK) {
            record_run(res, x, an);
            if (i == 0) {
                res->fig1_active_idle_w = tw_analysis_active_idle_w(an);
                res->fig1_idle_w = tw_analysis_idle_w(an);
            }
        }
        tw_analysis_free(an);
        tw_events_free(ev);
    }
    return st;
}

static int make_dir(const char *dir)
{
    if (mkdir(dir, 0777) == 0 || errno == EEXIST) return 0;
    fprintf(stderr, "truewatt demo: cannot create %s: %s\n", dir, strerror(errno));
    return CLI_EXIT_FAIL;
}

static void plot(const demo_args *a, demo_results *res)
{
    char script[1024];
    path_in(script, sizeof script, a->out, "demo", ".gp");
    if (demo_write_plot_script(script, res) != 0) {
        snprintf(res->plot_note, sizeof res->plot_note, "could not write %s", script);
        return;
    }
    if (a->no_plot) {
        snprintf(res->plot_note, sizeof res->plot_note, "plots not drawn (--no-plot); script: %s", script);
        return;
    }
    char why[512];
    if (plot_run(a->out, "demo.gp", why, sizeof why) == 0) {
        snprintf(res->plot_note, sizeof res->plot_note, "plots: %s/fig1.png, %s/fig2.png, %s/fig3.png", a->out, a->out,
                 a->out);
        res->plotted = true;
    } else {
        snprintf(res->plot_note, sizeof res->plot_note, "plots not drawn: %s; data and script are in %s (demo.gp)", why,
                 a->out);
    }
}

int cmd_demo(int argc, char **argv)
{
    demo_args a = {.out = "truewatt-demo", .seed = 1};
    int rc = parse_args(argc, argv, &a);
    if (rc) return rc < 0 ? 0 : rc;
    if ((rc = make_dir(a.out)) != 0) return rc;
    demo_results *res = calloc(1, sizeof *res);
    if (!res) return cli_fail("demo", TW_ENOMEM);
    res->out_dir = a.out;
    res->seed = a.seed;
    cli_interrupt_install();
    tw_status st = run_experiments(&a, res);
    if (st == TW_EINTERRUPTED) {
        free(res);
        fprintf(stderr, "truewatt demo: interrupted; the files written so far are in %s\n", a.out);
        return CLI_EXIT_INTERRUPTED;
    }
    if (st != TW_OK) {
        free(res);
        return cli_fail("demo", st);
    }
    demo_compute_ratios(res);
    char csv[1024];
    path_in(csv, sizeof csv, a.out, "demo", ".csv");
    if (demo_write_csv(csv, res) != 0) {
        free(res);
        fprintf(stderr, "truewatt demo: cannot write %s: %s\n", csv, strerror(errno));
        return CLI_EXIT_FAIL;
    }
    plot(&a, res);
    if (a.json)
        demo_print_json(res, stdout);
    else
        demo_print_text(res, stdout);
    free(res);
    return 0;
}
