#include "cli/demo_report.h"

#include <math.h>
#include <string.h>

#include "core/json.h"
#include "report/table.h"

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

void demo_compute_ratios(demo_results *r)
{
    const demo_row *t = find(r, "nb_700k"), *t2 = find(r, "nb_700k_x2");
    const demo_row *a = find(r, "nb_350k_a"), *b = find(r, "nb_350k_b");
    for (int m = 0; m < TW_METHOD_COUNT; m++) {
        r->ratio_doubled[m] = t && t2 ? t2->energy_j[m] / t->energy_j[m] : NAN;
        r->ratio_second[m] = a && b ? b->energy_j[m] / a->energy_j[m] : NAN;
    }
}

static double err_pct(double e, double truth) { return 100.0 * (e / truth - 1.0); }

int demo_write_csv(const char *path, const demo_results *r)
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

static void plot_run(FILE *f, const demo_results *r, const char *id, const char *png, const char *title)
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

int demo_write_plot_script(const char *path, const demo_results *r)
{
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    fprintf(f, "# truewatt demo plots: raw against corrected power, kernels shaded. Run: gnuplot demo.gp\n"
               "set datafile separator ','\nset datafile columnheaders\n"
               "set terminal pngcairo size 1100,520 font ',10'\n"
               "set xlabel 'time [s]'\nset ylabel 'power [W]'\nset key top right\nset grid\n");
    plot_run(f, r, "fig1", "fig1.png", "Fig. 1/7: one 5.346 s kernel on the simulated K20");
    plot_run(f, r, "fig2", "fig2.png", "Fig. 2/8: two kernels 1 s apart");
    plot_run(f, r, "fig3_95k", "fig3.png", "Fig. 3: the 0.107 s kernel (95k bodies)");
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

void demo_print_text(const demo_results *r, FILE *f)
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

void demo_print_json(const demo_results *r, FILE *f)
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
