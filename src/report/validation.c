/* The validation's analysis and report: the sensor identified from the
 * identification part of the trace (profile.json), every experiment measured
 * by every method (bench/validate.h), written as validation.csv (the
 * canonical numbers), validation.md (tables rendered from the same records)
 * and plots, with the targets' PASS/FAIL on the caller's stream: `truewatt
 * validate`'s report as a library call (tw_validation_report, truewatt.h). */

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "bench/plans.h"
#include "bench/validate.h"
#include "core/error.h"
#include "core/note.h"
#include "correct/identify.h"
#include "correct/profile.h"
#include "report/table.h"
#include "report/validation_plots.h"

#define ID_TAIL_S 2.5 /* identification fitted up to the last id_ kernel's end + this */

typedef struct vr_prov {
    char date[32], gpu[128], driver[64], backend[32];
} vr_prov;

static const char *const EXPERIMENTS[] = {"linearity", "back_to_back", "short_kernels", "loads"};
#define NEXP (sizeof EXPERIMENTS / sizeof EXPERIMENTS[0])

/* ---------------------------------------------------------------- identification */

static double id_end_s(const tw_events *ev)
{
    double t = -INFINITY;
    for (size_t i = 0; i < tw_events_count(ev); i++) {
        const tw_event *e = tw_events_get(ev, i);
        if (!strncmp(e->name, "id_", 3)) t = fmax(t, e->end_s);
    }
    return isfinite(t) ? t + ID_TAIL_S : NAN;
}

static void fill_prov(vr_prov *pv, tw_sensor *trace, const tw_validation_options *x)
{
    time_t now = time(NULL);
    struct tm tm;
    snprintf(pv->date, sizeof pv->date, "unknown");
    if (gmtime_r(&now, &tm)) strftime(pv->date, sizeof pv->date, "%Y-%m-%dT%H:%M:%SZ", &tm);
    /* a recorded trace names neither GPU nor driver in a form the replay sensor passes on */
    snprintf(pv->gpu, sizeof pv->gpu, "%s", x->gpu && x->gpu[0] ? x->gpu : "unknown");
    snprintf(pv->driver, sizeof pv->driver, "%s", x->driver && x->driver[0] ? x->driver : "unknown");
    const char *b = x->backend && x->backend[0] ? x->backend : tw_sensor_backend(trace);
    snprintf(pv->backend, sizeof pv->backend, "%s", b ? b : "unknown");
}

/* A progress note through o->note, when set. */
#define note(o, ...) tw_notef((o)->note, (o)->note_ctx, __VA_ARGS__)

static tw_status identify(tw_sensor *trace, const tw_events *events, const tw_validation_options *x, const vr_prov *pv,
                          tw_profile *p, FILE *out)
{
    tw_identify_options o;
    tw_identify_options_init(&o);
    o.t_end_s = id_end_s(events);
    o.cancel = x->cancel;
    if (isnan(o.t_end_s))
        note(x, "no identification kernels (id_*) in the events: fitting the whole trace");
    else
        note(x, "identifying the sensor from the trace up to %.1f s", o.t_end_s);
    tw_profile_init(p);
    tw_status st = tw_identify(trace, events, &o, p, NULL);
    if (st != TW_OK) return st;
    snprintf(p->gpu, sizeof p->gpu, "%s", pv->gpu);
    snprintf(p->driver, sizeof p->driver, "%s", pv->driver);
    snprintf(p->backend, sizeof p->backend, "%s", pv->backend);
    snprintf(p->created, sizeof p->created, "%s", pv->date);
    snprintf(p->command, sizeof p->command, "truewatt validate");
    char path[4096];
    snprintf(path, sizeof path, "%s/profile.json", x->out_dir);
    if ((st = tw_profile_save(p, path)) != TW_OK) return st;
    st = tw_profile_print(out, path, p);
    fprintf(out, "\n");
    return st;
}

/* ---------------------------------------------------------------- files */

/* ---------------------------------------------------------------- validation.csv */

static void csv_str(FILE *f, const char *s)
{
    if (!strpbrk(s, ",\"\n")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"') fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

static void csv_num(FILE *f, double v)
{
    fputc(',', f);
    if (!isnan(v)) fprintf(f, "%.10g", v);
}

static int write_csv(const char *dir, const tw_val_result *r, const vr_prov *pv)
{
    char path[4096];
    FILE *f = out_open(dir, "validation.csv", path, sizeof path);
    if (!f) return -1;
    fprintf(f, "# truewatt validate; date %s; gpu %s; driver %s; backend %s; best reading %s; truewatt %s\n", pv->date,
            pv->gpu, pv->driver, pv->backend, r->best[0] ? r->best : "none", tw_version());
    fprintf(f, "experiment,case,method,quantity,value,sigma,reference,error_pct,tolerance_pct,pass,n\n");
    for (size_t i = 0; i < r->n; i++) {
        const tw_val_record *v = &r->rec[i];
        csv_str(f, v->experiment);
        fputc(',', f);
        csv_str(f, v->case_name);
        fputc(',', f);
        csv_str(f, v->method);
        fputc(',', f);
        csv_str(f, v->quantity);
        csv_num(f, v->value);
        csv_num(f, v->sigma);
        csv_num(f, v->reference);
        csv_num(f, v->error_pct);
        csv_num(f, v->tolerance_pct);
        fprintf(f, ",%s,%u\n", v->pass > 0 ? "pass" : v->pass == 0 ? "fail" : "-", v->n);
    }
    return out_close(f, path);
}

/* ---------------------------------------------------------------- formatting */

static bool is_ratio(const tw_val_record *v) { return !strcmp(v->quantity, "ratio"); }

static const char *unit_of(const tw_val_record *v)
{
    if (!strcmp(v->quantity, "J_per_launch") || !strcmp(v->quantity, "J")) return "J";
    if (!strcmp(v->quantity, "W")) return "W";
    return "";
}

/* "2.004 ± 0.010" for a ratio; "1.702 J (+0.4 %)" otherwise; "-" when none. */
static void fmt_value(char *buf, size_t cap, const tw_val_record *v, bool with_error)
{
    if (!v || isnan(v->value)) {
        snprintf(buf, cap, "-");
        return;
    }
    if (is_ratio(v)) {
        if (isnan(v->sigma))
            snprintf(buf, cap, "%.3f", v->value);
        else
            snprintf(buf, cap, "%.3f ± %.3f", v->value, v->sigma);
        return;
    }
    const char *u = unit_of(v);
    int k = snprintf(buf, cap, "%.4g%s%s", v->value, *u ? " " : "", u);
    if (with_error && !isnan(v->error_pct) && k > 0 && (size_t)k < cap)
        snprintf(buf + k, cap - (size_t)k, " (%+.1f %%)", v->error_pct);
}

/* The target in words: "2.00 ± 0.02" for a ratio, "± 5 %" otherwise. */
static void fmt_target(char *buf, size_t cap, const tw_val_record *v)
{
    if (is_ratio(v) && !isnan(v->reference))
        snprintf(buf, cap, "%.2f ± %.2f", v->reference, v->reference * v->tolerance_pct / 100.0);
    else
        snprintf(buf, cap, "± %g %% of the reference", v->tolerance_pct);
}

static const char *mark(const tw_val_record *v)
{
    if (!v || isnan(v->tolerance_pct) || v->pass < 0) return "";
    return v->pass ? " ✓" : " ✗";
}

static const char *result_word(const tw_val_record *v)
{
    if (!v) return "MISSING";
    return v->pass > 0 ? "PASS" : v->pass == 0 ? "FAIL" : "-";
}

/* ---------------------------------------------------------------- targets */

typedef struct vr_target {
    const char *experiment; /* one of EXPERIMENTS */
    char case_name[32];
    const tw_val_record *rec; /* NULL: no record carries this target */
} vr_target;

#define MAX_TARGETS 64

static bool flagged(const tw_val_record *v) { return !isnan(v->tolerance_pct); }

static bool case_flagged(const tw_val_result *r, const char *exp, const char *cs)
{
    for (size_t i = 0; i < r->n; i++)
        if (!strcmp(r->rec[i].experiment, exp) && !strcmp(r->rec[i].case_name, cs) && flagged(&r->rec[i])) return true;
    return false;
}

/* The done-when targets that must be present whatever the records
 * say: linearity at every T, back to back at every gap, 10, 3 and 1 ms. */
static size_t expected_cases(const char *exp, char out[][32], size_t cap)
{
    size_t n = 0;
    char len[16];
    if (!strcmp(exp, "linearity"))
        for (int i = 0; i < TW_VAL_NLIN && n < cap; i++) {
            tw_plan_len_label(tw_val_lin_t_s[i], len, sizeof len);
            snprintf(out[n++], 32, "T=%s", len);
        }
    else if (!strcmp(exp, "back_to_back"))
        for (int i = 0; i < TW_VAL_NGAP && n < cap; i++) {
            tw_plan_len_label(tw_val_gap_s[i], len, sizeof len);
            snprintf(out[n++], 32, "gap=%s", len);
        }
    else if (!strcmp(exp, "short_kernels"))
        for (int i = 0; i < TW_VAL_NSHORT && n < cap; i++)
            if (tw_val_short_s[i] <= 0.0105) {
                tw_plan_len_label(tw_val_short_s[i], len, sizeof len);
                snprintf(out[n++], 32, "%s", len);
            }
    return n;
}

static void add_target(vr_target *t, const char *exp, const char *case_name, const tw_val_record *rec)
{
    t->experiment = exp;
    snprintf(t->case_name, sizeof t->case_name, "%s", case_name);
    t->rec = rec;
}

/* Every flagged record, by experiment and case, and a MISSING row for an
 * expected case without one. */
static size_t collect_targets(const tw_val_result *r, vr_target *t, size_t cap)
{
    size_t n = 0;
    for (size_t x = 0; x < NEXP; x++) {
        const char *exp = EXPERIMENTS[x];
        const char *cases[VAL_MAX_KEYS], *methods[VAL_MAX_KEYS];
        size_t nc = val_cases(r, exp, cases, VAL_MAX_KEYS);
        size_t nm = val_methods(r, exp, false, methods, VAL_MAX_KEYS);
        char expected[8][32];
        size_t ne = expected_cases(exp, expected, 8);
        for (size_t e = 0; e < ne && n < cap; e++)
            if (!case_flagged(r, exp, expected[e])) add_target(&t[n++], exp, expected[e], NULL);
        for (size_t c = 0; c < nc; c++)
            for (size_t m = 0; m < nm && n < cap; m++) {
                const tw_val_record *v = val_find(r, exp, cases[c], methods[m]);
                if (v && flagged(v)) add_target(&t[n++], exp, cases[c], v);
            }
    }
    /* keep each experiment's rows in case order: the MISSING ones were put first */
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && t[j - 1].experiment == t[j].experiment &&
                           val_case_seconds(t[j - 1].case_name) > val_case_seconds(t[j].case_name);
             j--) {
            vr_target s = t[j];
            t[j] = t[j - 1];
            t[j - 1] = s;
        }
    return n;
}

static const char *target_title(const char *exp)
{
    if (!strcmp(exp, "linearity")) return "linearity E(2T)/E(T)";
    if (!strcmp(exp, "back_to_back")) return "back to back E(2nd)/E(1st)";
    if (!strcmp(exp, "short_kernels")) return "short kernels, J/launch";
    return exp;
}

typedef struct vr_row {
    char what[64], cs[32], method[80], measured[64], target[64], result[16], naive[64];
} vr_row;

static void target_row(const tw_val_result *r, const vr_target *t, vr_row *w)
{
    snprintf(w->what, sizeof w->what, "%s", target_title(t->experiment));
    snprintf(w->cs, sizeof w->cs, "%s", t->case_name);
    snprintf(w->result, sizeof w->result, "%s", result_word(t->rec));
    const char *naive = val_naive_method(r, t->experiment);
    const tw_val_record *nv = naive ? val_find(r, t->experiment, t->case_name, naive) : NULL;
    if (nv)
        fmt_value(w->naive, sizeof w->naive, nv, true);
    else
        snprintf(w->naive, sizeof w->naive, "-");
    if (!t->rec) {
        snprintf(w->method, sizeof w->method, "-");
        bool any = false;
        for (size_t i = 0; i < r->n && !any; i++)
            any = !strcmp(r->rec[i].experiment, t->experiment) && !strcmp(r->rec[i].case_name, t->case_name);
        snprintf(w->measured, sizeof w->measured, "%s", any ? "no row carries the target" : "not measured");
        snprintf(w->target, sizeof w->target, "-");
        return;
    }
    snprintf(w->method, sizeof w->method, "%s", t->rec->method);
    fmt_value(w->measured, sizeof w->measured, t->rec, true);
    fmt_target(w->target, sizeof w->target, t->rec);
}

typedef struct vr_count {
    size_t rows, rows_pass;  /* flagged rows */
    size_t cases, cases_met; /* experiment + case: met when one of its flagged methods passes */
    bool several;            /* some case has more than one flagged method */
} vr_count;

static vr_count count_targets(const vr_target *t, size_t n)
{
    vr_count c = {0};
    for (size_t i = 0; i < n; i++) {
        c.rows += t[i].rec != NULL;
        c.rows_pass += t[i].rec && t[i].rec->pass > 0;
        bool seen = false, met = false;
        for (size_t j = 0; j < n; j++) {
            if (t[j].experiment != t[i].experiment || strcmp(t[j].case_name, t[i].case_name)) continue;
            if (j < i) seen = true;
            if (j != i && t[i].rec && t[j].rec) c.several = true;
            met = met || (t[j].rec && t[j].rec->pass > 0);
        }
        if (!seen) {
            c.cases++;
            c.cases_met += met;
        }
    }
    return c;
}

static void count_text(char *buf, size_t cap, const vr_count *c, const char *bold)
{
    if (!c->several)
        snprintf(buf, cap, "%s%zu of %zu targets met%s", bold, c->cases_met, c->cases, bold);
    else
        snprintf(buf, cap,
                 "%s%zu of %zu targets met%s (a case counts as met when one of its flagged methods passes); "
                 "%zu of %zu flagged rows pass",
                 bold, c->cases_met, c->cases, bold, c->rows_pass, c->rows);
}

/* ---------------------------------------------------------------- validation.md */

static void md_summary(FILE *f, const tw_val_result *r, const vr_target *t, size_t nt)
{
    const char *naive = val_naive_method(r, "short_kernels");
    fprintf(f, "## Summary\n\nThe done-when targets (the rows the analysis flags with a tolerance), with the naive "
               "instant-power method beside them.\n\n");
    fprintf(f, "| target | case | method | measured | target | result | naive (%s) |\n",
            naive ? naive : "naive_power_instant_w");
    fprintf(f, "|---|---|---|---:|---|:---:|---:|\n");
    for (size_t i = 0; i < nt; i++) {
        vr_row w;
        target_row(r, &t[i], &w);
        fprintf(f, "| %s | %s | %s | %s | %s | **%s** | %s |\n", w.what, w.cs, w.method, w.measured, w.target, w.result,
                w.naive);
    }
    vr_count c = count_targets(t, nt);
    char line[256];
    count_text(line, sizeof line, &c, "**");
    fprintf(f, "\n%s.\n\n", line);
}

static bool any_prefix(const tw_val_result *r, const char *prefix)
{
    for (size_t i = 0; i < r->n; i++)
        if (!strncmp(r->rec[i].method, prefix, strlen(prefix))) return true;
    return false;
}

static void md_methods(FILE *f, const tw_val_result *r)
{
    fprintf(f, "## Methods\n\nEvery energy is the GPU's total energy while the kernel ran, unless noted.\n\n");
    if (any_prefix(r, "naive_"))
        fprintf(f, "- `naive_<reading>`: the reading polled during the kernel, averaged, times its duration "
                   "(what nvidia-smi-style sampling gives).\n");
    if (any_prefix(r, "raw_"))
        fprintf(f, "- `raw_<reading>`: a counter's difference across the kernel (interpolated), or the sample "
                   "buffer's intervals integrated over it.\n");
    if (any_prefix(r, "model_"))
        fprintf(f,
                "- `model_<reading>`: the reading's identified model (windows of known placement, delays "
                "removed, boxcars deconvolved, rc corrected) and the estimator on them alone (baseline + each "
                "name's power while it runs, non-negative least squares over every window; docs/methods.md), "
                "each compared kernel its own name: its energy above the baseline plus the baseline's under it; "
                "**bold**: the reading the profile ranks best (%s).\n",
                r->best[0] ? r->best : "none");
    if (any_prefix(r, "best"))
        fprintf(f, "- `best`: `model_` of the reading the profile ranks best (%s).\n", r->best[0] ? r->best : "none");
    if (any_prefix(r, "regression"))
        fprintf(f, "- `regression`: kernels shorter than the update period, the estimator on the best reading "
                   "with all isolated launches one name: its energy over its launches.\n");
    if (any_prefix(r, "repetition"))
        fprintf(f, "- `repetition`: phase-shifted blocks of launches, spread over the sensor's update period, one "
                   "name of the same estimate: its energy over its launches.\n");
    fprintf(f, "\n");
}

static void lens_text(char *buf, size_t cap, const double *v, int n)
{
    size_t k = 0;
    buf[0] = '\0';
    for (int i = 0; i < n && k < cap; i++) {
        char len[16];
        tw_plan_len_label(v[i], len, sizeof len);
        k += (size_t)snprintf(buf + k, cap - k, "%s%s", i == 0 ? "" : i == n - 1 ? " and " : ", ", len);
    }
}

/* Rows = methods, columns = cases, ratio ± sigma with pass marks. */
static void md_ratio_table(FILE *f, const tw_val_result *r, const char *exp)
{
    const char *cases[VAL_MAX_KEYS], *methods[VAL_MAX_KEYS];
    size_t nc = val_cases(r, exp, cases, VAL_MAX_KEYS);
    size_t nm = val_methods(r, exp, true, methods, VAL_MAX_KEYS);
    if (nc == 0) {
        fprintf(f, "_Not measured (no such events in the trace)._\n\n");
        return;
    }
    fprintf(f, "| method |");
    for (size_t c = 0; c < nc; c++)
        fprintf(f, " %s |", cases[c]);
    fprintf(f, " target |\n|---|");
    for (size_t c = 0; c < nc; c++)
        fprintf(f, "---:|");
    fprintf(f, "---|\n");
    for (size_t m = 0; m < nm; m++) {
        const char *b = val_is_best(r, methods[m]) ? "**" : "";
        fprintf(f, "| %s%s%s |", b, methods[m], b);
        const tw_val_record *tv = NULL;
        for (size_t c = 0; c < nc; c++) {
            const tw_val_record *v = val_find(r, exp, cases[c], methods[m]);
            char buf[64];
            fmt_value(buf, sizeof buf, v, false);
            fprintf(f, " %s%s |", buf, mark(v));
            if (v && flagged(v)) tv = v;
        }
        char tg[64] = "";
        if (tv) fmt_target(tg, sizeof tg, tv);
        fprintf(f, " %s |\n", tg);
    }
    fprintf(f, "\n");
}

/* Rows = kernel lengths; the reference, then each method's value and error. */
static void md_short_table(FILE *f, const tw_val_result *r)
{
    const char *cases[VAL_MAX_KEYS], *methods[VAL_MAX_KEYS];
    size_t nc = val_cases(r, "short_kernels", cases, VAL_MAX_KEYS);
    size_t nm = val_methods(r, "short_kernels", true, methods, VAL_MAX_KEYS);
    if (nc == 0) {
        fprintf(f, "_Not measured (no such events in the trace)._\n\n");
        return;
    }
    /* what the reference says besides its energy (reference_power, ...) */
    const char *all[VAL_MAX_KEYS], *refs[VAL_MAX_KEYS];
    size_t na = val_methods(r, "short_kernels", false, all, VAL_MAX_KEYS), nr = 0;
    for (size_t m = 0; m < na; m++)
        if (val_is_reference(all[m]) && strcmp(all[m], "reference")) refs[nr++] = all[m];
    fprintf(f, "Energy per launch in J (error against the reference); ✓/✗ where a target applies; **bold**: the "
               "best reading's model.\n\n| kernel | reference |");
    for (size_t m = 0; m < nr; m++) {
        const tw_val_record *any = NULL;
        for (size_t c = 0; c < nc && !any; c++)
            any = val_find(r, "short_kernels", cases[c], refs[m]);
        fprintf(f, " %s%s%s%s |", refs[m], any && *unit_of(any) ? " [" : "", any ? unit_of(any) : "",
                any && *unit_of(any) ? "]" : "");
    }
    for (size_t m = 0; m < nm; m++) {
        const char *b = val_is_best(r, methods[m]) ? "**" : "";
        fprintf(f, " %s%s%s |", b, methods[m], b);
    }
    fprintf(f, "\n|---|---:|");
    for (size_t m = 0; m < nr + nm; m++)
        fprintf(f, "---:|");
    fprintf(f, "\n");
    for (size_t c = 0; c < nc; c++) {
        double sg, ref = val_reference(r, "short_kernels", cases[c], &sg);
        fprintf(f, "| %s |", cases[c]);
        if (isnan(ref))
            fprintf(f, " - |");
        else if (isnan(sg))
            fprintf(f, " %.4g |", ref);
        else
            fprintf(f, " %.4g ± %.2g |", ref, sg);
        for (size_t m = 0; m < nr; m++) {
            const tw_val_record *v = val_find(r, "short_kernels", cases[c], refs[m]);
            if (!v || isnan(v->value))
                fprintf(f, " - |");
            else
                fprintf(f, " %.4g |", v->value);
        }
        for (size_t m = 0; m < nm; m++) {
            const tw_val_record *v = val_find(r, "short_kernels", cases[c], methods[m]);
            if (!v || isnan(v->value)) {
                fprintf(f, " - |");
                continue;
            }
            fprintf(f, " %.4g", v->value);
            if (!isnan(v->error_pct)) fprintf(f, " (%+.1f %%)", v->error_pct);
            fprintf(f, "%s |", mark(v));
        }
        fprintf(f, "\n");
    }
    fprintf(f, "\n");
}

/* The energy counter's method, the loads' reference. */
static const char *counter_method(const tw_val_result *r)
{
    for (size_t i = 0; i < r->n; i++) {
        const tw_val_record *v = &r->rec[i];
        if (!strcmp(v->experiment, "loads") && !strncmp(v->method, "raw_", 4) && strstr(v->method, "energy"))
            return v->method;
    }
    return NULL;
}

/* Rows = methods, columns = each load's energy and error against the counter. */
static void md_loads_table(FILE *f, const tw_val_result *r)
{
    const char *cases[VAL_MAX_KEYS], *methods[VAL_MAX_KEYS];
    size_t nc = val_cases(r, "loads", cases, VAL_MAX_KEYS);
    size_t nm = val_methods(r, "loads", false, methods, VAL_MAX_KEYS);
    if (nc == 0) {
        fprintf(f, "_Not measured (no such events in the trace)._\n\n");
        return;
    }
    const char *cm = counter_method(r);
    const char *against = cm ? "vs counter" : "vs reference";
    fprintf(f, "| method |");
    for (size_t c = 0; c < nc; c++) {
        const tw_val_record *any = NULL;
        for (size_t m = 0; m < nm && !any; m++)
            any = val_find(r, "loads", cases[c], methods[m]);
        fprintf(f, " %s [%s] | %s |", cases[c], any && *unit_of(any) ? unit_of(any) : "?", against);
    }
    fprintf(f, "\n|---|");
    for (size_t c = 0; c < nc; c++)
        fprintf(f, "---:|---:|");
    fprintf(f, "\n");
    for (size_t m = 0; m < nm; m++) {
        const char *b = val_is_best(r, methods[m]) ? "**" : "";
        fprintf(f, "| %s%s%s |", b, methods[m], b);
        for (size_t c = 0; c < nc; c++) {
            const tw_val_record *v = val_find(r, "loads", cases[c], methods[m]);
            const tw_val_record *ref = cm ? val_find(r, "loads", cases[c], cm) : NULL;
            if (!v || isnan(v->value)) {
                fprintf(f, " - | - |");
                continue;
            }
            double e = ref ? 100.0 * (v->value / ref->value - 1.0) : v->error_pct;
            if (v == ref)
                fprintf(f, " %.2f | (reference) |", v->value);
            else if (isnan(e))
                fprintf(f, " %.2f | - |", v->value);
            else
                fprintf(f, " %.2f | %+.2f %%%s |", v->value, e, mark(v));
        }
        fprintf(f, "\n");
    }
    fprintf(f, "\n");
}

static void md_num(FILE *f, double v, double scale, int decimals)
{
    if (isnan(v))
        fprintf(f, " - |");
    else
        fprintf(f, " %.*f |", decimals, v * scale);
}

static void md_level(FILE *f, const char *what, double w, double truth)
{
    if (isnan(w))
        fprintf(f, "- %s: not measured", what);
    else
        fprintf(f, "- %s: %.2f W", what, w);
    if (!isnan(truth)) fprintf(f, " (simulator: %.2f W)", truth);
    fprintf(f, "\n");
}

static void md_profile(FILE *f, const tw_profile *p, const tw_validation_options *x)
{
    fprintf(f, "## (v) The identified sensor profile\n\nFitted on the identification part of the trace (the id_ "
               "kernels) and saved as profile.json; the analysis above uses it.\n\n");
    bool sim = !isnan(x->true_idle_w);
    md_level(f, "idle (no context)", p->idle_w, sim ? x->true_idle_w : NAN);
    md_level(f, "active idle", p->active_idle_w, sim ? x->true_active_idle_w : NAN);
    md_level(f, "calibration kernel above active idle", p->step_w, sim ? x->true_step_w : NAN);
    const tw_reading_model *best = tw_profile_best(p, tw_identify_board_reading, NULL);
    fprintf(f, "\n| reading | response | period [ms] | window [ms] | delay [ms] | C [s] | coverage [%%] | rms [W] |\n"
               "|---|---|---:|---:|---:|---:|---:|---:|\n");
    for (size_t i = 0; i < p->n; i++) {
        const tw_reading_model *m = &p->r[i];
        fprintf(f, "| %s%s | %s |", m->name, m == best ? " (best)" : "", tw_response_name(m->response));
        md_num(f, m->period_s, 1e3, 1);
        md_num(f, m->window_s, 1e3, 1);
        md_num(f, m->delay_s, 1e3, 1);
        md_num(f, m->capacitance_s, 1, 3);
        md_num(f, m->coverage, 100, 0);
        md_num(f, m->rms_w, 1, 3);
        fprintf(f, "\n");
    }
    fprintf(f, "\n");
}

static int write_md(const char *dir, const tw_val_result *r, const tw_profile *p, const vr_prov *pv,
                    const tw_validation_options *x, const vr_target *t, size_t nt)
{
    char path[4096], lens[128];
    FILE *f = out_open(dir, "validation.md", path, sizeof path);
    if (!f) return -1;
    if (!strcmp(pv->gpu, "unknown"))
        fprintf(f, "# truewatt validation (a recorded trace: GPU and driver not known)\n\n");
    else
        fprintf(f, "# truewatt validation: %s (driver %s)\n\n", pv->gpu, pv->driver);
    fprintf(f, "- date: %s; backend: %s; truewatt %s\n", pv->date, pv->backend, tw_version());
    fprintf(f, "- best reading (the profile's pick): %s", r->best[0] ? r->best : "none");
    if (!isnan(r->baseline_w)) fprintf(f, "; the estimator's baseline over the validation %.2f W", r->baseline_w);
    fprintf(f, "\n- every number below is a row of validation.csv; plots: validation_short.png, "
               "validation_ratios.png, validation_loads.png (data in validation_*.dat, script validation.gp)\n\n");
    md_summary(f, r, t, nt);
    md_methods(f, r);

    lens_text(lens, sizeof lens, tw_val_lin_t_s, TW_VAL_NLIN);
    fprintf(f,
            "## (i) Linearity\n\nOne kernel of length T, then after settling the same kernel for 2T, for T = %s, "
            "%d times. The GPU's energy while a kernel of constant power runs is proportional to its length, so a "
            "correct method gives E(2T)/E(T) = 2; a lagging or smoothing sensor gives more (the first kernel's "
            "energy is partly counted after it ended) or less. Cells: the ratio ± its spread over the repeats.\n\n",
            lens, TW_VAL_LIN_REPS);
    md_ratio_table(f, r, "linearity");

    lens_text(lens, sizeof lens, tw_val_gap_s, TW_VAL_NGAP);
    fprintf(f,
            "## (ii) Back to back\n\nTwo %g s kernels %s apart, %d times. The second kernel does the same work as "
            "the first and should cost the same: E(second)/E(first) = 1. A reading that carries the first "
            "kernel's power over into the second (lag, a long averaging window) makes it look dearer.\n\n",
            TW_VAL_B2B_KERNEL_S, lens, TW_VAL_REPS);
    md_ratio_table(f, r, "back_to_back");

    lens_text(lens, sizeof lens, tw_val_short_s, TW_VAL_NSHORT);
    fprintf(f,
            "## (iii) Short kernels\n\nKernels of %s. The reference: the same kernel back to back for at least 4 s "
            "(short_<d>_ref), long enough for every reading to settle, gives its energy per launch. Then %d isolated "
            "launches at pseudo-random gaps (short_<d>_iso: the naive, model and regression methods) and blocks of "
            "launches shifted in phase against the sensor's update period (short_<d>_rep: repetition). A kernel "
            "shorter than the update period is seen by a window reading only by chance.\n\n",
            lens, TW_VAL_ISO);
    md_short_table(f, r);

    const char *cm = counter_method(r);
    fprintf(f,
            "## (iv) %g s loads\n\nA steady kernel for %g s (load_steady), then %g s of a square wave, 30 ms on "
            "and 70 ms off (load_square). A reading that averages 25 ms out of every 100 ms sees the square wave "
            "at whatever phase it locks to. ",
            TW_VAL_LOAD_S, TW_VAL_LOAD_S, TW_VAL_LOAD_S);
    if (cm)
        fprintf(f, "The energy counter (%s) is the reference: it integrates the power on the board.\n\n", cm);
    else
        fprintf(f, "This GPU has no energy counter to compare against.\n\n");
    md_loads_table(f, r);

    md_profile(f, p, x);
    return out_close(f, path);
}

/* ---------------------------------------------------------------- stdout */

static void print_summary(FILE *out, const tw_val_result *r, const vr_target *t, size_t nt, const char *plot_note)
{
    static const char *const head[] = {"target", "case", "method", "measured", "target", "result", "naive"};
    table *tb = table_new(sizeof head / sizeof head[0], head);
    if (tb) {
        for (size_t i = 0; i < nt; i++) {
            vr_row w;
            target_row(r, &t[i], &w);
            table_cell(tb, "%s", w.what);
            table_cell(tb, "%s", w.cs);
            table_cell(tb, "%s", w.method);
            table_cell(tb, "%s", w.measured);
            table_cell(tb, "%s", w.target);
            table_cell(tb, "%s", w.result);
            table_cell(tb, "%s", w.naive);
        }
        const char *naive = val_naive_method(r, "short_kernels");
        fprintf(out, "validation targets (naive: %s)\n", naive ? naive : "none");
        table_print(tb, out);
        table_free(tb);
    }
    vr_count c = count_targets(t, nt);
    char line[256];
    count_text(line, sizeof line, &c, "");
    fprintf(out, "\n%s\n", line);
    if (plot_note[0]) fprintf(out, "%s\n", plot_note);
}

/* ---------------------------------------------------------------- entry */

void tw_validation_options_init(tw_validation_options *o)
{
    if (!o) return;
    memset(o, 0, sizeof *o);
    o->size = sizeof *o;
    o->out_dir = ".";
    o->true_idle_w = o->true_active_idle_w = o->true_step_w = NAN;
}

tw_status tw_validation_report(tw_sensor *trace, const tw_events *events, const tw_validation_options *x, FILE *out)
{
    if (!trace || !events || !x || !out || x->size < sizeof *x || !x->out_dir)
        return tw_fail(TW_EINVAL, "tw_validation_report: a trace, its events, initialised options and a stream");
    const char *outdir = x->out_dir;
    vr_prov pv;
    fill_prov(&pv, trace, x);
    tw_profile p;
    tw_status st = identify(trace, events, x, &pv, &p, out);
    if (st != TW_OK) return st;

    note(x, "measuring every experiment by every method");
    tw_val_result res;
    memset(&res, 0, sizeof res);
    st = tw_validate_analyse(trace, events, &p, &res);
    if (st != TW_OK) {
        tw_val_result_free(&res);
        return st;
    }
    vr_target targets[MAX_TARGETS];
    size_t nt = collect_targets(&res, targets, MAX_TARGETS);
    char plot_note[1024] = "";
    if (write_csv(outdir, &res, &pv) || write_md(outdir, &res, &p, &pv, x, targets, nt) ||
        val_plots(outdir, &res, trace, events, plot_note, sizeof plot_note)) {
        tw_val_result_free(&res);
        return TW_EIO;
    }
    print_summary(out, &res, targets, nt, plot_note);
    fprintf(out, "written: %s/validation.csv, validation.md, profile.json\n", outdir);
    tw_val_result_free(&res);
    return TW_OK;
}
