/* The validation's records for tables and plots; see validation_plots.h. */
#include "report/validation_plots.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "correct/observe.h"
#include "report/plot.h"

/* ---------------------------------------------------------------- records */

const tw_val_record *val_find(const tw_val_result *r, const char *experiment, const char *case_name, const char *method)
{
    for (size_t i = 0; i < r->n; i++) {
        const tw_val_record *v = &r->rec[i];
        if (!strcmp(v->experiment, experiment) && !strcmp(v->case_name, case_name) && !strcmp(v->method, method))
            return v;
    }
    return NULL;
}

static bool listed(const char *const *list, size_t n, const char *s)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(list[i], s)) return true;
    return false;
}

bool val_is_best(const tw_val_result *r, const char *method)
{
    return !strcmp(method, "best") || (r->best[0] && !strncmp(method, "model_", 6) && !strcmp(method + 6, r->best));
}

bool val_is_reference(const char *method) { return !strncmp(method, "reference", 9); }

size_t val_methods(const tw_val_result *r, const char *experiment, bool skip_reference, const char **out, size_t cap)
{
    static const char *const first[] = {"best", "", "regression", "repetition", "naive_power_instant_w"};
    char model_best[80];
    snprintf(model_best, sizeof model_best, "model_%s", r->best);
    size_t n = 0;
    for (size_t k = 0; k < sizeof first / sizeof first[0]; k++) {
        const char *want = first[k][0] ? first[k] : model_best;
        for (size_t i = 0; i < r->n && n < cap; i++) /* the record's own string: it outlives model_best */
            if (!strcmp(r->rec[i].experiment, experiment) && !strcmp(r->rec[i].method, want)) {
                if (!listed(out, n, want)) out[n++] = r->rec[i].method;
                break;
            }
    }
    for (size_t i = 0; i < r->n && n < cap; i++) {
        const tw_val_record *v = &r->rec[i];
        if (strcmp(v->experiment, experiment) || listed(out, n, v->method)) continue;
        if (skip_reference && val_is_reference(v->method)) continue;
        out[n++] = v->method;
    }
    return n;
}

double val_case_seconds(const char *case_name)
{
    const char *eq = strchr(case_name, '=');
    const char *s = eq ? eq + 1 : case_name;
    char *end;
    double v = strtod(s, &end);
    if (end == s) return NAN;
    if (!strcmp(end, "s")) return v;
    if (!strcmp(end, "ms")) return v * 1e-3;
    if (!strcmp(end, "us")) return v * 1e-6;
    return NAN;
}

size_t val_cases(const tw_val_result *r, const char *experiment, const char **out, size_t cap)
{
    size_t n = 0;
    bool timed = true;
    for (size_t i = 0; i < r->n && n < cap; i++) {
        const tw_val_record *v = &r->rec[i];
        if (strcmp(v->experiment, experiment) || listed(out, n, v->case_name)) continue;
        out[n++] = v->case_name;
        if (isnan(val_case_seconds(v->case_name))) timed = false;
    }
    if (timed) /* insertion sort by length: few cases */
        for (size_t i = 1; i < n; i++)
            for (size_t j = i; j > 0 && val_case_seconds(out[j - 1]) > val_case_seconds(out[j]); j--) {
                const char *t = out[j];
                out[j] = out[j - 1];
                out[j - 1] = t;
            }
    return n;
}

double val_reference(const tw_val_result *r, const char *experiment, const char *case_name, double *sigma)
{
    if (sigma) *sigma = NAN;
    const tw_val_record *ref = val_find(r, experiment, case_name, "reference");
    if (ref) {
        if (sigma) *sigma = ref->sigma;
        return ref->value;
    }
    for (size_t i = 0; i < r->n; i++) {
        const tw_val_record *v = &r->rec[i];
        if (!strcmp(v->experiment, experiment) && !strcmp(v->case_name, case_name) && !isnan(v->reference))
            return v->reference;
    }
    return NAN;
}

const char *val_naive_method(const tw_val_result *r, const char *experiment)
{
    for (size_t i = 0; i < r->n; i++)
        if (!strcmp(r->rec[i].experiment, experiment) && !strcmp(r->rec[i].method, "naive_power_instant_w"))
            return r->rec[i].method;
    for (size_t i = 0; i < r->n; i++)
        if (!strcmp(r->rec[i].experiment, experiment) && !strncmp(r->rec[i].method, "naive_", 6))
            return r->rec[i].method;
    return NULL;
}

/* ---------------------------------------------------------------- files */

/* A number for a .dat file: gnuplot skips NaN. */
static void dat_num(FILE *f, double v)
{
    if (isnan(v))
        fputs(" NaN", f);
    else
        fprintf(f, " %.10g", v);
}

/* ---------------------------------------------------------------- short kernels */

static double error_of(const tw_val_result *r, const tw_val_record *v)
{
    if (!v) return NAN;
    if (!isnan(v->error_pct)) return v->error_pct;
    double ref = val_reference(r, v->experiment, v->case_name, NULL);
    return isnan(ref) || isnan(v->value) ? NAN : 100.0 * (v->value / ref - 1.0);
}

/* validation_short.dat: one row per kernel length, one column per method. */
static int short_data(const char *dir, const tw_val_result *r, FILE *gp)
{
    const char *cases[VAL_MAX_KEYS], *methods[VAL_MAX_KEYS];
    size_t nc = val_cases(r, "short_kernels", cases, VAL_MAX_KEYS);
    size_t nm = val_methods(r, "short_kernels", true, methods, VAL_MAX_KEYS);
    if (nc == 0 || nm == 0) return 0;
    char path[4096];
    FILE *f = out_open(dir, "validation_short.dat", path, sizeof path);
    if (!f) return -1;
    fprintf(f, "# truewatt validate: short kernels, energy per launch, error [%%] against the reference "
               "(NaN: not measured)\nkernel_ms");
    for (size_t m = 0; m < nm; m++)
        fprintf(f, " %s", methods[m]);
    fputc('\n', f);
    double worst = 0;
    for (size_t c = 0; c < nc; c++) {
        double s = val_case_seconds(cases[c]);
        if (isnan(s)) continue;
        dat_num(f, s * 1e3);
        for (size_t m = 0; m < nm; m++) {
            double e = error_of(r, val_find(r, "short_kernels", cases[c], methods[m]));
            dat_num(f, e);
            if (!isnan(e)) worst = fmax(worst, fabs(e));
        }
        fputc('\n', f);
    }
    if (out_close(f, path)) return -1;
    fprintf(gp, "\nset xtics (");
    for (size_t c = 0, k = 0; c < nc; c++)
        if (!isnan(val_case_seconds(cases[c]))) fprintf(gp, "%s%g", k++ ? ", " : "", val_case_seconds(cases[c]) * 1e3);
    fprintf(gp, ")");
    /* the naive methods can be off by orders of magnitude: clip, and say so */
    double lim = fmin(100.0, fmax(20.0, 1.1 * worst));
    fprintf(gp,
            "\nset output 'validation_short.png'\nset title \"Short kernels: energy per launch, error against the "
            "reference%s\"\n"
            "set logscale x\nunset logscale y\nset xlabel 'kernel length [ms]'\nset ylabel 'error [%%]'\n"
            "set yrange [%g:%g]\nset xrange [*:*]\nset key outside right\nunset object\n"
            "set object 1 rect from graph 0, first -5 to graph 1, first 5 fc rgb '#dff0d8' fs solid noborder behind\n"
            "set object 2 rect from graph 0, first -10 to graph 1, first 10 fc rgb '#f2f9ef' fs solid noborder behind\n"
            "plot for [i=2:%zu] 'validation_short.dat' using 1:i with linespoints title columnhead(i)\n",
            worst > lim ? " (clipped)" : "", -lim, lim, nm + 1);
    return 1;
}

/* ---------------------------------------------------------------- ratios */

/* One .dat per experiment: length, then value and sigma per method. Returns
 * the number of methods written (0: nothing), -1 on error. */
static int ratio_data(const char *dir, const tw_val_result *r, const char *experiment, const char *file)
{
    const char *cases[VAL_MAX_KEYS], *methods[VAL_MAX_KEYS];
    size_t nc = val_cases(r, experiment, cases, VAL_MAX_KEYS);
    size_t nm = val_methods(r, experiment, true, methods, VAL_MAX_KEYS);
    if (nc == 0 || nm == 0) return 0;
    char path[4096];
    FILE *f = out_open(dir, file, path, sizeof path);
    if (!f) return -1;
    fprintf(f, "# truewatt validate: %s, energy ratio per method and its sigma (0: none given)\nlength_s", experiment);
    for (size_t m = 0; m < nm; m++)
        fprintf(f, " %s %s_sigma", methods[m], methods[m]);
    fputc('\n', f);
    for (size_t c = 0; c < nc; c++) {
        double s = val_case_seconds(cases[c]);
        if (isnan(s)) continue;
        dat_num(f, s);
        for (size_t m = 0; m < nm; m++) {
            const tw_val_record *v = val_find(r, experiment, cases[c], methods[m]);
            dat_num(f, v ? v->value : NAN);
            dat_num(f, v && !isnan(v->sigma) ? v->sigma : 0.0);
        }
        fputc('\n', f);
    }
    return out_close(f, path) ? -1 : (int)nm;
}

/* The target: the tolerance of a flagged record (percent of the reference). */
static double target_tolerance(const tw_val_result *r, const char *experiment, double fallback_pct)
{
    for (size_t i = 0; i < r->n; i++)
        if (!strcmp(r->rec[i].experiment, experiment) && !isnan(r->rec[i].tolerance_pct))
            return r->rec[i].tolerance_pct;
    return fallback_pct;
}

static void ratio_panel(FILE *gp, const tw_val_result *r, const char *experiment, const char *file, int nm,
                        double target, const char *title, const char *xlabel)
{
    const char *cases[VAL_MAX_KEYS];
    size_t nc = val_cases(r, experiment, cases, VAL_MAX_KEYS);
    double band = target * target_tolerance(r, experiment, 1.0) / 100.0;
    fprintf(gp, "set title \"%s\"\nset xlabel '%s'\nset xtics (", title, xlabel);
    for (size_t c = 0; c < nc; c++)
        fprintf(gp, "%s\"%s\" %g", c ? ", " : "", strchr(cases[c], '=') ? strchr(cases[c], '=') + 1 : cases[c],
                val_case_seconds(cases[c]));
    fprintf(gp,
            ")\nunset object\n"
            "set object 1 rect from graph 0, first %g to graph 1, first %g fc rgb '#dff0d8' fs solid noborder behind\n"
            "set arrow 1 from graph 0, first %g to graph 1, first %g nohead dt 2 lc rgb '#2ca02c'\n"
            "plot for [i=1:%d] '%s' using ($1*(1+0.04*(i-(%d+1)/2.0))):(column(2*i)):(column(2*i+1)) "
            "with yerrorlines title columnhead(2*i)\n",
            target - band, target + band, target, target, nm, file, nm);
}

static int ratios(const char *dir, const tw_val_result *r, FILE *gp)
{
    int nl = ratio_data(dir, r, "linearity", "validation_linearity.dat");
    int nb = nl < 0 ? -1 : ratio_data(dir, r, "back_to_back", "validation_b2b.dat");
    if (nl < 0 || nb < 0) return -1;
    if (nl == 0 && nb == 0) return 0;
    fprintf(gp,
            "\nset output 'validation_ratios.png'\nset multiplot layout 1,%d\nset logscale x\nunset logscale y\n"
            "set yrange [*:*]\nset xrange [*:*]\nset ylabel 'energy ratio'\nset key outside bottom center horizontal\n",
            (nl > 0) + (nb > 0));
    if (nl > 0)
        ratio_panel(gp, r, "linearity", "validation_linearity.dat", nl, 2.0, "Linearity: E(2T) / E(T) (target 2)", "T");
    if (nb > 0)
        ratio_panel(gp, r, "back_to_back", "validation_b2b.dat", nb, 1.0,
                    "Back to back: E(second) / E(first) (target 1)", "gap");
    fprintf(gp, "unset multiplot\nunset arrow\nset xtics autofreq\n");
    return 1;
}

/* ---------------------------------------------------------------- loads */

typedef struct span {
    double t0, t1;
} span;

/* Writes one reading's updates in [t0, t1] (a counter as the power between
 * its updates); 1 when written, 0 when the trace lacks it, -1 on error. */
static int load_reading(const char *dir, tw_sensor *trace, const char *name, double t0, double t1)
{
    size_t idx;
    if (tw_sensor_find(trace, name, &idx) != TW_OK) return 0;
    bool counter = tw_sensor_reading(trace, idx)->quantity == TW_Q_ENERGY;
    tw_update_series u = {0};
    if (tw_updates_read(trace, idx, &u) != TW_OK) {
        tw_update_series_free(&u);
        return 0; /* a reading that cannot be read is left out of the plot, not an error */
    }
    char file[128], path[4096];
    snprintf(file, sizeof file, "validation_loads_%s.dat", name);
    FILE *f = out_open(dir, file, path, sizeof path);
    if (!f) {
        tw_update_series_free(&u);
        return -1;
    }
    fprintf(f, "# truewatt validate: %s over load_square, %s\nt_s power_w\n", name,
            counter ? "the counter's energy difference / time between its updates, from the earlier update"
                    : "each update at the instant it appeared (held until the next)");
    size_t written = 0;
    for (size_t k = counter ? 1 : 0; k < u.n; k++) {
        const tw_update *a = counter ? &u.v[k - 1] : &u.v[k], *b = &u.v[k];
        if (a->t_s < t0 || a->t_s > t1) continue;
        double p = counter ? (b->value - a->value) / (b->t_s - a->t_s) : a->value;
        if (counter && !(b->t_s > a->t_s)) continue;
        fprintf(f, "%.9f %.10g\n", a->t_s, p);
        written++;
    }
    tw_update_series_free(&u);
    if (out_close(f, path)) return -1;
    return written > 0;
}

static int loads(const char *dir, const tw_val_result *r, tw_sensor *trace, const tw_events *events, FILE *gp)
{
    (void)r;
    span sq = {INFINITY, -INFINITY};
    size_t nk = 0;
    for (size_t i = 0; i < tw_events_count(events); i++) {
        const tw_event *e = tw_events_get(events, i);
        if (strcmp(e->name, "load_square")) continue;
        sq.t0 = fmin(sq.t0, e->start_s);
        sq.t1 = fmax(sq.t1, e->end_s);
        nk++;
    }
    if (nk == 0 || !trace) return 0;
    double t0 = sq.t0 - 0.5, t1 = sq.t1 + 1.0;
    static const struct {
        const char *name, *title, *style;
    } rd[] = {
        {"true_power_w", "true power (simulator)", "lw 1 dt 2 lc rgb '#000000'"},
        {"power_buffer_w", "power_buffer_w", "lw 1 dt 1 lc rgb '#1f77b4'"},
        {"power_instant_w", "power_instant_w", "lw 1.5 dt 1 lc rgb '#ff7f0e'"},
        {"power_w", "power_w", "lw 1 dt 1 lc rgb '#8c564b'"},
        {"energy_j", "energy_j: dE/dt between updates", "lw 2.5 dt 1 lc rgb '#d62728'"},
        {"power_usage_w", "power_usage_w", "lw 2 dt 1 lc rgb '#9467bd'"},
    };
    bool have[sizeof rd / sizeof rd[0]];
    size_t nhave = 0;
    for (size_t i = 0; i < sizeof rd / sizeof rd[0]; i++) {
        int w = load_reading(dir, trace, rd[i].name, t0, t1);
        if (w < 0) return -1;
        have[i] = w > 0;
        nhave += have[i];
    }
    if (nhave == 0) return 0;
    fprintf(
        gp,
        "\nset output 'validation_loads.png'\nset title \"load_square: 30 ms on, 70 ms off (kernels shaded); "
        "the readings as published\"\n"
        "unset logscale\nset xtics autofreq\nset xrange [%.6f:%.6f]\nset yrange [*:*]\nset xlabel 'trace time [s]'\n"
        "set ylabel 'power [W]'\nset key outside bottom center horizontal\nunset object\n",
        t0, t1);
    int obj = 1;
    for (size_t i = 0; i < tw_events_count(events); i++) {
        const tw_event *e = tw_events_get(events, i);
        if (!strcmp(e->name, "load_square"))
            fprintf(gp,
                    "set object %d rect from %.6f, graph 0 to %.6f, graph 1 fc rgb '#e8e8e8' fs solid noborder "
                    "behind\n",
                    obj++, e->start_s, e->end_s);
    }
    fprintf(gp, "plot ");
    bool first = true;
    for (size_t i = 0; i < sizeof rd / sizeof rd[0]; i++) {
        if (!have[i]) continue;
        fprintf(gp, "%s'validation_loads_%s.dat' using 1:2 with steps %s title '%s'", first ? "" : ", \\\n     ",
                rd[i].name, rd[i].style, rd[i].title);
        first = false;
    }
    fprintf(gp, "\n");
    return 1;
}

/* ---------------------------------------------------------------- all */

int val_plots(const char *outdir, const tw_val_result *r, tw_sensor *trace, const tw_events *events, char *note,
              size_t note_cap)
{
    char path[4096];
    FILE *gp = out_open(outdir, "validation.gp", path, sizeof path);
    if (!gp) return -1;
    fprintf(gp, "# truewatt validate plots from the .dat files beside this script. Run: gnuplot validation.gp\n"
                "set terminal pngcairo size 1200,560 font ',10' noenhanced\nset grid\n"
                "# the first method (best, when present) black and bold, then 11 distinct colours\n"
                "set linetype 1 lc rgb '#000000' lw 3 pt 7 ps 0.8 dt 1\n");
    static const char *const colours[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b",
                                          "#e377c2", "#7f7f7f", "#bcbd22", "#17becf", "#aec7e8"};
    for (size_t i = 0; i < sizeof colours / sizeof colours[0]; i++)
        fprintf(gp, "set linetype %zu lc rgb '%s' lw 1.5 pt %zu ps 0.8 dt %d\n", i + 2, colours[i], 4 + i % 4,
                i < 6 ? 1 : 2);
    fprintf(gp, "set linetype cycle 12\n");
    /* each part: 1 plotted, 0 nothing to plot, -1 error */
    int s = short_data(outdir, r, gp);
    int q = s < 0 ? -1 : ratios(outdir, r, gp);
    int l = q < 0 ? -1 : loads(outdir, r, trace, events, gp);
    if (out_close(gp, path) || s < 0 || q < 0 || l < 0) return -1;
    if (s + q + l == 0) {
        snprintf(note, note_cap, "plots: nothing to plot");
        return 0;
    }
    if (!plot_find_gnuplot()) {
        snprintf(note, note_cap,
                 "plots not drawn: gnuplot not found on PATH; data and script are in %s (validation.gp)", outdir);
        return 0;
    }
    char why[512];
    if (plot_run(outdir, "validation.gp", why, sizeof why) == 0)
        snprintf(note, note_cap, "plots in %s:%s%s%s", outdir, s ? " validation_short.png" : "",
                 q ? " validation_ratios.png" : "", l ? " validation_loads.png" : "");
    else
        snprintf(note, note_cap, "plots not drawn: %s; data and script are in %s (validation.gp)", why, outdir);
    return 0;
}
