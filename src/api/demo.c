/* `truewatt demo` as a library call (tw_demo, truewatt.h): the experiments of
 * Burtscher et al. 2014 on the simulated K20, through the real path:
 * simulator -> trace file -> analysis; the records and their renderings
 * (CSV, canonical; text and JSON) all come from the same demo_results. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/sim_run.h"
#include "api/sized.h"
#include "core/error.h"
#include "core/json.h"
#include "core/note.h"
#include "core/outfile.h"
#include "report/plot.h"
#include "report/table.h"

#define DEMO_MAX_ROWS 32

typedef struct demo_row {
    char experiment[32];
    char kernel[64];
    double start_s, duration_s, true_energy_j;
    double energy_j[TW_METHOD_COUNT];
} demo_row;

typedef struct demo_results {
    const char *out_dir;
    uint64_t seed;
    double c_fitted_s, c_sim_s, c_fit_rms_w;
    double fig1_idle_w, fig1_active_idle_w;
    demo_row rows[DEMO_MAX_ROWS];
    size_t n;
    /* per method: E(2T)/E(T) and E(second)/E(first) */
    double ratio_doubled[TW_METHOD_COUNT];
    double ratio_second[TW_METHOD_COUNT];
    bool plotted;
    char plot_note[1200];
} demo_results;

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

/* The paper's numbers for the anomalies, raw integral t1..t2 (§4.1). */
#define PAPER_DOUBLED 2.16   /* 1579 J / 732 J */
#define PAPER_SECOND 1.29    /* 147 J / 114 J */
#define PAPER_FIXED_PCT 13.0 /* 1205 J vs 1066 J */

static const demo_row *find(const demo_results *r, const char *kernel)
{
    for (size_t i = 0; i < r->n; i++)
        if (!strcmp(r->rows[i].kernel, kernel)) return &r->rows[i];
    return NULL;
}

static void demo_compute_ratios(demo_results *r)
{
    const demo_row *t = find(r, "nb_700k"), *t2 = find(r, "nb_700k_x2");
    const demo_row *a = find(r, "nb_350k_a"), *b = find(r, "nb_350k_b");
    for (int m = 0; m < TW_METHOD_COUNT; m++) {
        r->ratio_doubled[m] = t && t2 ? t2->energy_j[m] / t->energy_j[m] : NAN;
        r->ratio_second[m] = a && b ? b->energy_j[m] / a->energy_j[m] : NAN;
    }
}

static double err_pct(double e, double truth) { return 100.0 * (e / truth - 1.0); }

static int demo_write_csv(const char *path, const demo_results *r)
{
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    fprintf(f, "# truewatt %s demo: simulated K20, seed %llu, C fitted %.6f s (simulator %.2f s)\n", tw_version(),
            (unsigned long long)r->seed, r->c_fitted_s, r->c_sim_s);
    fprintf(f, "experiment,kernel,start_s,duration_s,true_energy_j");
    for (int m = 0; m < TW_METHOD_COUNT; m++)
        fprintf(f, ",%s_j", tw_method_name((tw_method)m));
    fputc('\n', f);
    for (size_t i = 0; i < r->n; i++) {
        const demo_row *w = &r->rows[i];
        fprintf(f, "%s,%s,%.6f,%.6f,%.6f", w->experiment, w->kernel, w->start_s, w->duration_s, w->true_energy_j);
        for (int m = 0; m < TW_METHOD_COUNT; m++)
            fprintf(f, ",%.6f", w->energy_j[m]);
        fputc('\n', f);
    }
    bool failed = ferror(f) != 0;
    return fclose(f) == 0 && !failed ? 0 : -1;
}

static void plot_panel(FILE *f, const demo_results *r, const char *id, const char *png, const char *title)
{
    fprintf(f, "set output '%s'\nset title \"%s\"\nunset object\n", png, title);
    int obj = 1;
    for (size_t i = 0; i < r->n; i++) {
        const demo_row *w = &r->rows[i];
        if (strcmp(w->experiment, id)) continue;
        fprintf(f, "set object %d rect from %.6f, graph 0 to %.6f, graph 1 fc rgb '#e8e8e8' fs solid noborder behind\n",
                obj++, w->start_s, w->start_s + w->duration_s);
    }
    fprintf(f,
            "plot '%s.trace.csv' using 1:3 with lines lw 1 dt 2 lc rgb '#000000' title 'true power', \\\n"
            "     '%s.trace.csv' using 1:2 with lines lw 2 lc rgb '#1f77b4' title 'raw sensor reading', \\\n"
            "     '%s.corrected.csv' using 1:3 with lines lw 1 lc rgb '#d62728' title 'corrected (C = %.3f s)'\n",
            id, id, id, r->c_fitted_s);
}

static int demo_write_plot_script(const char *path, const demo_results *r)
{
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    fprintf(f, "# truewatt demo plots: raw against corrected power, kernels shaded. Run: gnuplot demo.gp\n"
               "set datafile separator ','\nset datafile columnheaders\n"
               "set terminal pngcairo size 1100,520 font ',10'\n"
               "set xlabel 'time [s]'\nset ylabel 'power [W]'\nset key top right\nset grid\n");
    plot_panel(f, r, "fig1", "fig1.png", "Fig. 1/7: one 5.346 s kernel on the simulated K20");
    plot_panel(f, r, "fig2", "fig2.png", "Fig. 2/8: two kernels 1 s apart");
    plot_panel(f, r, "fig3_95k", "fig3.png", "Fig. 3: the 0.107 s kernel (95k bodies)");
    return fclose(f) == 0 ? 0 : -1;
}

static void main_table(const demo_results *r, FILE *f)
{
    const char *head[4 + TW_METHOD_COUNT];
    size_t nc = 0;
    head[nc++] = "kernel";
    head[nc++] = "runtime_s";
    head[nc++] = "truth_j";
    /* corrected last, beside the naive methods it replaces */
    for (int m = 1; m < TW_METHOD_COUNT; m++)
        head[nc++] = tw_method_name((tw_method)m);
    head[nc++] = "corrected";
    table *t = table_new(nc, head);
    if (!t) return;
    for (size_t i = 0; i < r->n; i++) {
        const demo_row *w = &r->rows[i];
        table_cell(t, "%s", w->kernel);
        table_cell(t, "%.3f", w->duration_s);
        table_cell(t, "%.2f", w->true_energy_j);
        for (int k = 1; k <= TW_METHOD_COUNT; k++) {
            int m = k % TW_METHOD_COUNT;
            table_cell(t, "%.2f (%+.1f%%)", w->energy_j[m], err_pct(w->energy_j[m], w->true_energy_j));
        }
    }
    fprintf(f, "\nenergy per kernel [J] (error against the simulator's exact truth)\n");
    table_print(t, f);
    table_free(t);
}

static void anomaly_table(const demo_results *r, FILE *f)
{
    static const char *const head[] = {"method", "E(2T)/E(T)", "E(second)/E(first)"};
    table *t = table_new(3, head);
    if (!t) return;
    for (int m = 0; m < TW_METHOD_COUNT; m++) {
        table_cell(t, "%s", tw_method_name((tw_method)m));
        table_cell(t, "%.3f", r->ratio_doubled[m]);
        table_cell(t, "%.3f", r->ratio_second[m]);
    }
    fprintf(f, "\nthe paper's anomalies (truth: 2.000 and 1.000; paper's raw t1..t2: %.2f and %.2f)\n", PAPER_DOUBLED,
            PAPER_SECOND);
    table_print(t, f);
    table_free(t);
}

static void demo_print_text(const demo_results *r, FILE *f)
{
    fprintf(f, "truewatt demo: Burtscher et al. 2014 on the simulated K20 (seed %llu)\n\n",
            (unsigned long long)r->seed);
    fprintf(
        f, "sensor identified from fig1's step response: C = %.4f s (simulator %.2f s, %+.2f%%), residual %.3f W rms\n",
        r->c_fitted_s, r->c_sim_s, err_pct(r->c_fitted_s, r->c_sim_s), r->c_fit_rms_w);
    fprintf(f, "levels estimated from fig1: idle %.2f W, active idle %.2f W\n", r->fig1_idle_w, r->fig1_active_idle_w);
    main_table(r, f);
    anomaly_table(r, f);
    const demo_row *t = find(r, "nb_700k");
    if (t) {
        double real = t->energy_j[TW_METHOD_RAW_T1_T4], fixed = t->energy_j[TW_METHOD_FIXED_INTERVAL];
        fprintf(f,
                "\nFig. 6, fig1 over t1..t4: real intervals %.1f J, fixed intervals %.1f J (%+.1f%%; paper +%.0f%%)\n",
                real, fixed, err_pct(fixed, real), PAPER_FIXED_PCT);
    }
    fprintf(f, "\nfiles: %s/ (traces, events, corrected series, demo.csv)\n%s\n", r->out_dir, r->plot_note);
}

static void json_methods(json *j, const char *key, const double *v)
{
    json_key(j, key);
    json_begin_object(j);
    for (int m = 0; m < TW_METHOD_COUNT; m++)
        json_kv_number(j, tw_method_name((tw_method)m), v[m]);
    json_end_object(j);
}

static void demo_print_json(const demo_results *r, FILE *f)
{
    json j;
    json_init(&j, f);
    json_begin_object(&j);
    json_kv_string(&j, "profile", "k20");
    json_kv_uint(&j, "seed", r->seed);
    json_key(&j, "capacitance");
    json_begin_object(&j);
    json_kv_number(&j, "fitted_s", r->c_fitted_s);
    json_kv_number(&j, "simulator_s", r->c_sim_s);
    json_kv_number(&j, "error_pct", err_pct(r->c_fitted_s, r->c_sim_s));
    json_kv_number(&j, "fit_rms_w", r->c_fit_rms_w);
    json_end_object(&j);
    json_kv_number(&j, "idle_w", r->fig1_idle_w);
    json_kv_number(&j, "active_idle_w", r->fig1_active_idle_w);
    json_key(&j, "runs");
    json_begin_array(&j);
    for (size_t i = 0; i < r->n; i++) {
        const demo_row *w = &r->rows[i];
        double err[TW_METHOD_COUNT];
        for (int m = 0; m < TW_METHOD_COUNT; m++)
            err[m] = err_pct(w->energy_j[m], w->true_energy_j);
        json_begin_object(&j);
        json_kv_string(&j, "experiment", w->experiment);
        json_kv_string(&j, "kernel", w->kernel);
        json_kv_time(&j, "start_s", w->start_s);
        json_kv_number(&j, "duration_s", w->duration_s);
        json_kv_number(&j, "true_energy_j", w->true_energy_j);
        json_methods(&j, "energy_j", w->energy_j);
        json_methods(&j, "error_pct", err);
        json_end_object(&j);
    }
    json_end_array(&j);
    json_key(&j, "ratios");
    json_begin_object(&j);
    json_methods(&j, "doubled_runtime", r->ratio_doubled);
    json_methods(&j, "second_over_first", r->ratio_second);
    json_end_object(&j);
    json_kv_string(&j, "out_dir", r->out_dir);
    json_kv_bool(&j, "plotted", r->plotted);
    json_kv_string(&j, "plot_note", r->plot_note);
    json_end_object(&j);
    json_finish(&j);
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
static tw_status simulate(const experiment *x, const tw_demo_options *a, tw_events **events)
{
    char trace[1024], evpath[1024];
    path_in(trace, sizeof trace, a->out_dir, x->id, ".trace.csv");
    path_in(evpath, sizeof evpath, a->out_dir, x->id, ".events.csv");
    tw_scenario *sc = NULL;
    tw_status st = build_scenario(x, &sc);
    if (st == TW_OK) st = tw_sim_trace(sc, a->seed, trace, a->cancel);
    if (st == TW_OK) st = tw_scenario_events(sc, events);
    if (st == TW_OK) st = tw_events_save(*events, evpath);
    tw_scenario_free(sc);
    return st;
}

/* Analyses DIR/ID.trace.csv as `truewatt analyze` would. */
static tw_status analyze(const experiment *x, const tw_demo_options *a, const tw_events *events, double c_s, bool fit,
                         tw_analysis **out)
{
    char trace[1024], corrected[1024];
    path_in(trace, sizeof trace, a->out_dir, x->id, ".trace.csv");
    path_in(corrected, sizeof corrected, a->out_dir, x->id, ".corrected.csv");
    tw_sensor_config cfg = {.path = trace};
    tw_sensor *src = NULL;
    size_t reading;
    tw_analysis_options opt;
    tw_analysis_options_init(&opt);
    opt.fit_capacitance = fit;
    if (!fit) opt.capacitance_s = c_s;
    opt.corrected_path = fit ? NULL : corrected;
    opt.cancel = a->cancel;
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

static tw_status fit_capacitance(const tw_demo_options *a, demo_results *res)
{
    tw_events *ev = NULL;
    tw_analysis *an = NULL;
    tw_notef(a->note, a->note_ctx, "identifying the sensor: fitting C from the step response of fig1");
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

static tw_status run_experiments(const tw_demo_options *a, demo_results *res)
{
    tw_status st = fit_capacitance(a, res);
    for (size_t i = 0; st == TW_OK && i < NEXP; i++) {
        const experiment *x = &experiments[i];
        tw_events *ev = NULL;
        tw_analysis *an = NULL;
        tw_notef(a->note, a->note_ctx, "[%zu/%zu] %s: %s", i + 1, NEXP, x->id, x->what);
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

static void plot(const tw_demo_options *a, demo_results *res)
{
    char script[1024];
    path_in(script, sizeof script, a->out_dir, "demo", ".gp");
    if (demo_write_plot_script(script, res) != 0) {
        snprintf(res->plot_note, sizeof res->plot_note, "could not write %s", script);
        return;
    }
    if (a->no_plot) {
        snprintf(res->plot_note, sizeof res->plot_note, "plots not drawn (--no-plot); script: %s", script);
        return;
    }
    char why[512];
    if (plot_run(a->out_dir, "demo.gp", why, sizeof why) == 0) {
        snprintf(res->plot_note, sizeof res->plot_note, "plots: %s/fig1.png, %s/fig2.png, %s/fig3.png", a->out_dir,
                 a->out_dir, a->out_dir);
        res->plotted = true;
    } else {
        snprintf(res->plot_note, sizeof res->plot_note, "plots not drawn: %s; data and script are in %s (demo.gp)", why,
                 a->out_dir);
    }
}

void tw_demo_options_init(tw_demo_options *o)
{
    memset(o, 0, sizeof *o);
    o->size = sizeof *o;
    o->out_dir = "truewatt-demo";
    o->seed = 1;
}

tw_status tw_demo(const tw_demo_options *o_in, FILE *out)
{
    if (!o_in) return tw_fail(TW_EINVAL, "tw_demo: NULL options");
    tw_demo_options o_full;
    tw_demo_options_init(&o_full);
    tw_status sized = tw_sized_read(&o_full, sizeof o_full, o_in, "tw_demo: options");
    if (sized != TW_OK) return sized;
    const tw_demo_options *o = &o_full;
    if (!o || !out) return tw_fail(TW_EINVAL, "tw_demo: NULL argument");
    tw_demo_options a = *o;
    if (!a.out_dir) a.out_dir = "truewatt-demo";
    tw_status st = out_make_dir(a.out_dir);
    if (st != TW_OK) return st;
    demo_results *res = calloc(1, sizeof *res);
    if (!res) return TW_ENOMEM;
    res->out_dir = a.out_dir;
    res->seed = a.seed;
    st = run_experiments(&a, res);
    if (st == TW_EINTERRUPTED) {
        free(res);
        return tw_fail(TW_EINTERRUPTED, "interrupted; the files written so far are in %s", a.out_dir);
    }
    if (st != TW_OK) {
        free(res);
        return st;
    }
    demo_compute_ratios(res);
    char csv[1024];
    path_in(csv, sizeof csv, a.out_dir, "demo", ".csv");
    if (demo_write_csv(csv, res) != 0) {
        free(res);
        return tw_fail(TW_EIO, "cannot write %s: %s", csv, strerror(errno));
    }
    plot(&a, res);
    if (a.json)
        demo_print_json(res, out);
    else
        demo_print_text(res, out);
    free(res);
    return TW_OK;
}
