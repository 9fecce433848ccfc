/* The report of `truewatt run`: text tables or JSON, from one record. */
#include "cli/run_report.h"

#include <math.h>
#include <string.h>

#include "cli/sampler_report.h"
#include "core/json.h"
#include "report/table.h"

#define TEXT_ROWS 25  /* longest table in the text report; JSON has every row */
#define SHORT_ROWS 20 /* short kernels shown, in text and JSON */
#define CHECK_PCT 2.0

static double pct_of_core(const tw_sampler *s)
{
    double w = tw_sampler_wall_s(s);
    return w > 0 ? 100.0 * tw_sampler_cpu_s(s) / w : NAN;
}

/* ---------------------------------------------------------------- whole-run methods */

typedef struct method_row {
    const char *key, *label;
    double j;
} method_row;

static size_t methods(const tw_attrib *a, method_row *m)
{
    size_t n = 0;
    m[n++] = (method_row){"energy_counter", "energy counter (difference)", a->counter_j};
    m[n++] = (method_row){"buffer_integral", "sample buffer (integral)", a->buffer_j};
    m[n++] = (method_row){"trapezoid_power_usage", "trapezoid of power_usage_w", a->trap_usage_j};
    m[n++] = (method_row){"trapezoid_power_instant", "trapezoid of power_instant_w", a->trap_instant_j};
    m[n++] = (method_row){"mean_instant_x_time", "mean power_instant_w x time (MTSM-style)", a->mtsm_j};
    m[n++] = (method_row){"rc_corrected_k20_model", "RC-corrected power_usage_w (K20 model, not valid on H100)",
                          a->rc_k20_j};
    return n;
}

static void text_methods(const tw_attrib *a, FILE *f)
{
    method_row m[8];
    size_t n = methods(a, m);
    static const char *const head[] = {"method", "energy_j", "vs_counter_%"};
    table *t = table_new(3, head);
    if (!t) return;
    for (size_t i = 0; i < n; i++) {
        table_cell(t, "%s", m[i].label);
        if (isnan(m[i].j))
            table_cell(t, "-");
        else
            table_cell(t, "%.3f", m[i].j);
        if (i == 0 || isnan(m[i].j) || isnan(a->counter_j))
            table_cell(t, "-");
        else
            table_cell(t, "%+.2f", 100.0 * (m[i].j / a->counter_j - 1.0));
    }
    fprintf(f, "\nwhole-run energy by method, %.3f .. %.3f s [J]\n", a->start_s, a->end_s);
    table_print(t, f);
    table_free(t);
    if (isnan(a->rc_k20_j) && a->rc_note[0]) fprintf(f, "  (RC-corrected: %s)\n", a->rc_note);
}

/* Idle is the energy no kernel caused: the idle level under the whole run,
 * corrected by what kernel-free time really drew (less before the CUDA
 * context exists, more while the host does GPU work outside kernels). */
static void text_split(const tw_attrib *a, FILE *f)
{
    static const char *const head[] = {"part", "energy_j", "share_%"};
    table *t = table_new(3, head);
    if (!t) return;
    double idle = a->idle_j + a->other_j;
    table_cell(t, "idle: energy no kernel caused");
    table_cell(t, "%.3f", idle);
    table_cell(t, "%.1f", 100.0 * idle / a->sum_j);
    table_cell(t, "  idle level x run time (%.2f W x %.3f s)", a->idle_w, a->end_s - a->start_s);
    table_cell(t, "%.3f", a->idle_j);
    table_cell(t, "%s", "");
    table_cell(t, "  kernel-free time, above (+) or below (-) that level");
    table_cell(t, "%.3f", a->other_j);
    table_cell(t, "%s", "");
    table_cell(t, "kernels (above idle)");
    table_cell(t, "%.3f", a->kernels_j);
    table_cell(t, "%.1f", 100.0 * a->kernels_j / a->sum_j);
    table_cell(t, "memcpy/memset (above idle)");
    table_cell(t, "%.3f", a->copies_j);
    table_cell(t, "%.1f", 100.0 * a->copies_j / a->sum_j);
    table_cell(t, "sum");
    table_cell(t, "%.3f", a->sum_j);
    table_cell(t, "100.0");
    fprintf(f, "\nwhere the energy went: idle %.2f W (%s) [J]\n", a->idle_w, a->idle_basis);
    table_print(t, f);
    table_free(t);
    if (isnan(a->counter_j))
        fprintf(f, "check: no energy counter in the trace to check the sum against\n");
    else
        fprintf(f, "check: kernels + idle = %.3f J vs the energy counter %.3f J: %+.2f %% (%s %.0f %%)\n", a->sum_j,
                a->counter_j, a->check_pct, fabs(a->check_pct) <= CHECK_PCT ? "within" : "NOT within", CHECK_PCT);
}

static void text_names(const char *title, const tw_attrib_name *k, size_t n, FILE *f)
{
    if (n == 0) return;
    static const char *const head[] = {"name", "kind", "launches", "time_s", "energy_j", "power_w", "share_%"};
    table *t = table_new(7, head);
    if (!t) return;
    size_t shown = n < TEXT_ROWS ? n : TEXT_ROWS;
    for (size_t i = 0; i < shown; i++) {
        table_cell(t, "%.60s", k[i].name);
        table_cell(t, "%s", k[i].kind);
        table_cell(t, "%llu", (unsigned long long)k[i].launches);
        table_cell(t, "%.6f", k[i].time_s);
        table_cell(t, "%.3f", k[i].energy_j);
        table_cell(t, "%.1f", k[i].power_w);
        table_cell(t, "%.1f", 100.0 * k[i].share);
    }
    fprintf(f, "\n%s, by energy above idle\n", title);
    table_print(t, f);
    table_free(t);
    if (shown < n) fprintf(f, "... and %zu more (all in --json)\n", n - shown);
}

static void text_ranges(const tw_attrib *a, FILE *f)
{
    if (a->nranges == 0) return;
    static const char *const head[] = {"range", "start_s", "end_s", "energy_j", "above_idle_j"};
    table *t = table_new(5, head);
    if (!t) return;
    size_t shown = a->nranges < TEXT_ROWS ? a->nranges : TEXT_ROWS;
    for (size_t i = 0; i < shown; i++) {
        const tw_attrib_range *r = &a->ranges[i];
        table_cell(t, "%.60s", r->name);
        table_cell(t, "%.4f", r->start_s);
        table_cell(t, "%.4f", r->end_s);
        table_cell(t, "%.3f", r->energy_j);
        table_cell(t, "%.3f", r->above_idle_j);
    }
    fprintf(f, "\nNVTX ranges (energy of the time they span; ranges may nest, so they do not add up)\n");
    table_print(t, f);
    table_free(t);
    if (shown < a->nranges) fprintf(f, "... and %zu more (all in --json)\n", a->nranges - shown);
}

/* ---------------------------------------------------------------- the sensor profile */

static const char *profile_status(run_profile p)
{
    switch (p) {
    case RUN_PROFILE_NONE:
        return "none";
    case RUN_PROFILE_ERROR:
        return "unreadable";
    case RUN_PROFILE_NO_READING:
        return "no usable reading";
    case RUN_PROFILE_MODEL:
        return "model";
    }
    return "?";
}

static bool model_used(const run_device *d)
{
    return d->profile == RUN_PROFILE_MODEL && d->attrib && d->attrib->source == TW_ATTRIB_MODEL;
}

/* "rc, update every 20.6 ms, coverage 100 %" */
static void model_text(const tw_reading_model *m, char *buf, size_t len)
{
    snprintf(buf, len, "%s, update every %.3g ms, coverage %.0f %%", tw_response_name(m->response), 1e3 * m->period_s,
             100.0 * m->coverage);
}

/* One line: which reading the profile offers and whether it is used, or why there is none. */
static void profile_line(const run_device *d, char *buf, size_t len)
{
    const char *src = d->attrib ? tw_attrib_source_name(d->attrib->source) : "no energy report";
    char model[160];
    model_text(&d->model, model, sizeof model);
    switch (d->profile) {
    case RUN_PROFILE_MODEL:
        if (model_used(d))
            snprintf(buf, len, "reading %s (%s) by its model, from %s", d->model.name, model, d->profile_how);
        else
            snprintf(buf, len, "reading %s (%s) of %s is not usable here (see the warning); using the %s",
                     d->model.name, model, d->profile_how, src);
        return;
    case RUN_PROFILE_NONE:
        snprintf(buf, len, "%s; run 'truewatt sensor identify' to make one; using the %s", d->profile_how, src);
        return;
    case RUN_PROFILE_ERROR:
        snprintf(buf, len, "%s; using the %s", d->profile_how, src);
        return;
    case RUN_PROFILE_NO_READING:
        snprintf(buf, len, "%s has no reading of the board's power with a known model; using the %s", d->profile_how,
                 src);
        return;
    }
    snprintf(buf, len, "?");
}

/* Whether a name of the regression is one of the short kernels to show. */
static bool is_short(const run_device *d, const tw_regress_name *n)
{
    return strcmp(n->name, "(other kernels)") != 0 && n->launches > 0 && n->mean_s < d->short_period_s;
}

/* The regression's warnings name a name's lagged regressors NAME<0x1f>J:
 * written as "NAME lag J". */
static void unlag(const char *in, char *out, size_t cap)
{
    size_t k = 0;
    for (; *in && k + 6 < cap; in++) {
        if (*in == '\x1f') {
            memcpy(out + k, " lag ", 5);
            k += 5;
        } else {
            out[k++] = *in;
        }
    }
    out[k] = '\0';
}

static void text_lines(const char *prefix, const char *text, FILE *f)
{
    while (text && *text) {
        size_t len = strcspn(text, "\n");
        if (len) fprintf(f, "%s%.*s\n", prefix, (int)len, text);
        text += len + (text[len] != '\0');
    }
}

static void text_short(const run_device *d, FILE *f)
{
    if (d->short_note[0]) fprintf(f, "\nwarning: %s\n", d->short_note);
    const tw_regress *g = d->short_kernels;
    if (!g) return;
    static const char *const head[] = {"name", "launches", "mean_ms", "j_per_launch", "+-se_j", "power_w", "+-se_w"};
    table *t = table_new(7, head);
    if (!t) return;
    size_t shown = 0, more = 0;
    for (size_t i = 0; i < g->nnames; i++) {
        const tw_regress_name *n = &g->names[i];
        if (!is_short(d, n)) continue;
        if (shown == SHORT_ROWS) {
            more++;
            continue;
        }
        shown++;
        table_cell(t, "%.60s", n->name);
        table_cell(t, "%llu", (unsigned long long)n->launches);
        table_cell(t, "%.4f", 1e3 * n->mean_s);
        table_cell(t, "%.6f", n->per_launch_j);
        table_cell(t, "%.6f", n->per_launch_se_j);
        table_cell(t, "%.2f", n->power_w);
        table_cell(t, "%.2f", n->power_se_w);
    }
    fprintf(f,
            "\nshort kernels (regression over %zu windows of %s, %d lag%s): mean launch under the reading's "
            "%.3g ms period; energy above idle\n",
            g->nobs, d->attrib->source_column, d->short_lags, d->short_lags == 1 ? "" : "s", 1e3 * d->short_period_s);
    if (shown)
        table_print(t, f);
    else
        fprintf(f, "(none: the short names were pooled with others)\n");
    table_free(t);
    if (more) fprintf(f, "... and %zu more\n", more);
    fprintf(f, "fit: idle %.2f W, residual %.3f W rms, R^2 %.4f\n", g->idle_w, g->rms_w, g->r2);
    char w[2 * sizeof g->warnings];
    unlag(g->warnings, w, sizeof w);
    text_lines("warning: ", w, f);
}

static void text_device(const run_record *r, const run_device *d, FILE *f)
{
    if (r->ndev > 1 || d->name[0])
        fprintf(f, "\n== GPU %d%s%s%s\n", d->index, d->name[0] ? " (" : "", d->name, d->name[0] ? ")" : "");
    char line[2048];
    profile_line(d, line, sizeof line);
    fprintf(f, "profile: %s\n", line);
    const tw_attrib *a = d->attrib;
    if (!a) {
        fprintf(f, "no energy report: %s\n", d->attrib_error);
        return;
    }
    fprintf(f, "energy from %s (%s), %zu intervals over %.3f s\n", a->source_column, tw_attrib_source_name(a->source),
            a->nintervals, a->run_s);
    const char *w = a->warnings;
    while (*w) {
        size_t len = strcspn(w, "\n");
        fprintf(f, "warning: %.*s\n", (int)len, w);
        w += len + (w[len] != '\0');
    }
    text_methods(a, f);
    text_split(a, f);
    if (a->activities == 0) fprintf(f, "\nno kernels in the timeline: no energy per kernel\n");
    text_names("kernels", a->kernels, a->nkernels, f);
    text_short(d, f);
    text_names("memcpy/memset", a->copies, a->ncopies, f);
    text_ranges(a, f);
}

static void text_sampler(const run_record *r, FILE *f)
{
    const tw_sampler *s = r->sampler;
    sampler_cpu_text(s, f);
    fprintf(f, "(polls: values read; updates: values that differed from the one before)\n");
    static const char *const head[] = {"reading", "polls", "polls_per_s", "updates", "updates_per_s"};
    table *t = table_new(5, head);
    if (!t) return;
    for (size_t i = 0; i < tw_sampler_reading_count(s); i++) {
        const tw_sampler_reading_stats *x = tw_sampler_reading(s, i);
        table_cell(t, "%s", x->name);
        table_cell(t, "%llu", (unsigned long long)x->polls);
        table_cell(t, "%.1f", x->polls_per_s);
        table_cell(t, "%llu", (unsigned long long)x->updates);
        table_cell(t, "%.1f", x->updates_per_s);
    }
    table_print(t, f);
    table_free(t);
    const char *n = tw_sampler_notes(s);
    if (*n) {
        fprintf(f, "\nsensor notes:\n");
        while (*n) {
            size_t len = strcspn(n, "\n");
            fprintf(f, "  %.*s\n", (int)len, n);
            n += len + (n[len] != '\0');
        }
    }
}

void run_report_text(const run_record *r, FILE *f)
{
    fprintf(f, "\ntruewatt run: %s", r->argv[0]);
    for (size_t i = 1; r->argv[i]; i++)
        fprintf(f, " %s", r->argv[i]);
    if (r->signal)
        fprintf(f, "\n  killed by signal %d after %.3f s\n", r->signal, r->child_wall_s);
    else
        fprintf(f, "\n  exited with status %d after %.3f s\n", r->exit_code, r->child_wall_s);
    if (r->provenance && *r->provenance) fprintf(f, "  %s\n", r->provenance);
    if (r->warnings && *r->warnings) fprintf(f, "%s", r->warnings);
    fprintf(f, "timeline: %zu events%s%s%s\n", r->nevents, r->events_note ? " (" : "",
            r->events_note ? r->events_note : "", r->events_note ? ")" : "");
    for (size_t d = 0; d < r->ndev; d++)
        text_device(r, &r->dev[d], f);
    text_sampler(r, f);
    fprintf(f, "\nfiles:\n  trace     %s\n", r->trace_path);
    if (r->events_path) fprintf(f, "  events    %s\n", r->events_path);
    if (r->perfetto_path) fprintf(f, "  perfetto  %s  (open in ui.perfetto.dev)\n", r->perfetto_path);
}

/* ---------------------------------------------------------------- JSON */

static void json_names(json *j, const char *key, const tw_attrib_name *k, size_t n)
{
    json_key(j, key);
    json_begin_array(j);
    for (size_t i = 0; i < n; i++) {
        json_begin_object(j);
        json_kv_string(j, "name", k[i].name);
        json_kv_string(j, "kind", k[i].kind);
        json_kv_uint(j, "launches", k[i].launches);
        json_kv_number(j, "time_s", k[i].time_s);
        json_kv_number(j, "energy_j", k[i].energy_j);
        json_kv_number(j, "power_w", k[i].power_w);
        json_kv_number(j, "share", k[i].share);
        json_end_object(j);
    }
    json_end_array(j);
}

static void json_lines(json *j, const char *key, const char *text)
{
    json_key(j, key);
    json_begin_array(j);
    while (text && *text) {
        size_t len = strcspn(text, "\n");
        char line[1024];
        snprintf(line, sizeof line, "%.*s", (int)len, text);
        if (len) json_string(j, line);
        text += len + (text[len] != '\0');
    }
    json_end_array(j);
}

static void json_profile(json *j, const run_device *d)
{
    char line[2048];
    profile_line(d, line, sizeof line);
    bool m = d->profile == RUN_PROFILE_MODEL;
    json_key(j, "profile");
    json_begin_object(j);
    json_kv_string(j, "line", line);
    json_kv_string(j, "status", profile_status(d->profile));
    json_kv_string(j, "source", d->profile_how);
    json_kv_bool(j, "used", model_used(d));
    json_kv_string(j, "reading", m ? d->model.name : NULL);
    json_kv_string(j, "response", m ? tw_response_name(d->model.response) : NULL);
    json_kv_number(j, "period_s", m ? d->model.period_s : NAN);
    json_kv_number(j, "window_s", m ? d->model.window_s : NAN);
    json_kv_number(j, "delay_s", m ? d->model.delay_s : NAN);
    json_kv_number(j, "capacitance_s", m ? d->model.capacitance_s : NAN);
    json_kv_number(j, "coverage", m ? d->model.coverage : NAN);
    json_end_object(j);
}

static void json_short(json *j, const run_device *d)
{
    const tw_regress *g = d->short_kernels;
    json_key(j, "short_kernels");
    json_begin_array(j);
    size_t shown = 0;
    for (size_t i = 0; g && i < g->nnames && shown < SHORT_ROWS; i++) {
        const tw_regress_name *n = &g->names[i];
        if (!is_short(d, n)) continue;
        shown++;
        json_begin_object(j);
        json_kv_string(j, "name", n->name);
        json_kv_uint(j, "launches", n->launches);
        json_kv_number(j, "mean_s", n->mean_s);
        json_kv_number(j, "energy_per_launch_j", n->per_launch_j);
        json_kv_number(j, "energy_per_launch_se_j", n->per_launch_se_j);
        json_kv_number(j, "power_w", n->power_w);
        json_kv_number(j, "power_se_w", n->power_se_w);
        json_kv_number(j, "windows", n->windows);
        json_end_object(j);
    }
    json_end_array(j);
    json_key(j, "short_kernels_fit");
    if (!g) {
        json_string(j, NULL);
    } else {
        json_begin_object(j);
        json_kv_string(j, "reading", d->attrib ? d->attrib->source_column : NULL);
        json_kv_uint(j, "windows", g->nobs);
        json_key(j, "lags");
        json_number(j, d->short_lags);
        json_kv_number(j, "period_s", d->short_period_s);
        json_kv_number(j, "idle_w", g->idle_w);
        json_kv_number(j, "rms_w", g->rms_w);
        json_kv_number(j, "r2", g->r2);
        char w[2 * sizeof g->warnings];
        unlag(g->warnings, w, sizeof w);
        json_lines(j, "warnings", w);
        json_end_object(j);
    }
    json_kv_string(j, "short_kernels_note", d->short_note[0] ? d->short_note : NULL);
}

static void json_device(json *j, const run_device *d)
{
    json_begin_object(j);
    json_key(j, "index");
    json_number(j, d->index);
    json_kv_string(j, "column_prefix", d->prefix);
    json_kv_string(j, "name", d->name[0] ? d->name : NULL);
    json_kv_string(j, "driver", d->driver[0] ? d->driver : NULL);
    json_profile(j, d);
    const tw_attrib *a = d->attrib;
    json_kv_string(j, "error", a ? NULL : d->attrib_error);
    if (a) {
        json_key(j, "energy_source");
        json_begin_object(j);
        json_kv_string(j, "reading", a->source_column);
        json_kv_string(j, "method", tw_attrib_source_name(a->source));
        json_kv_uint(j, "intervals", a->nintervals);
        json_end_object(j);
        json_lines(j, "warnings", a->warnings);
        json_kv_number(j, "start_s", a->start_s);
        json_kv_number(j, "end_s", a->end_s);
        json_kv_number(j, "run_s", a->run_s);
        json_key(j, "whole_run_energy_j");
        json_begin_object(j);
        method_row m[8];
        size_t n = methods(a, m);
        for (size_t i = 0; i < n; i++)
            json_kv_number(j, m[i].key, m[i].j);
        json_end_object(j);
        json_kv_string(j, "rc_k20_note", a->rc_note[0] ? a->rc_note : NULL);
        json_kv_number(j, "idle_w", a->idle_w);
        json_kv_string(j, "idle_basis", a->idle_basis);
        json_key(j, "split_j");
        json_begin_object(j);
        json_kv_number(j, "idle", a->idle_j + a->other_j);
        json_kv_number(j, "idle_level", a->idle_j);
        json_kv_number(j, "other", a->other_j);
        json_kv_number(j, "kernels", a->kernels_j);
        json_kv_number(j, "copies", a->copies_j);
        json_kv_number(j, "sum", a->sum_j);
        json_end_object(j);
        json_key(j, "check");
        json_begin_object(j);
        json_kv_number(j, "sum_j", a->sum_j);
        json_kv_number(j, "counter_j", a->counter_j);
        json_kv_number(j, "diff_pct", a->check_pct);
        json_kv_number(j, "limit_pct", CHECK_PCT);
        json_kv_bool(j, "ok", fabs(a->check_pct) <= CHECK_PCT);
        json_end_object(j);
        json_names(j, "kernels", a->kernels, a->nkernels);
        json_short(j, d);
        json_names(j, "copies", a->copies, a->ncopies);
        json_key(j, "nvtx_ranges");
        json_begin_array(j);
        for (size_t i = 0; i < a->nranges; i++) {
            json_begin_object(j);
            json_kv_string(j, "name", a->ranges[i].name);
            json_kv_number(j, "start_s", a->ranges[i].start_s);
            json_kv_number(j, "end_s", a->ranges[i].end_s);
            json_kv_number(j, "energy_j", a->ranges[i].energy_j);
            json_kv_number(j, "above_idle_j", a->ranges[i].above_idle_j);
            json_end_object(j);
        }
        json_end_array(j);
    }
    json_end_object(j);
}

static void json_sampler(json *j, const run_record *r)
{
    const tw_sampler *s = r->sampler;
    json_key(j, "sampler");
    json_begin_object(j);
    json_kv_number(j, "cpu_s", tw_sampler_cpu_s(s));
    json_kv_number(j, "wall_s", tw_sampler_wall_s(s));
    json_kv_number(j, "cpu_pct_of_one_core", pct_of_core(s));
    sampler_cpu_json(j, s);
    json_kv_number(j, "fast_period_s", r->fast_period_s);
    json_kv_number(j, "slow_period_s", r->slow_period_s);
    json_key(j, "readings");
    json_begin_array(j);
    for (size_t i = 0; i < tw_sampler_reading_count(s); i++) {
        const tw_sampler_reading_stats *x = tw_sampler_reading(s, i);
        json_begin_object(j);
        json_kv_string(j, "name", x->name);
        json_kv_uint(j, "polls", x->polls);
        json_kv_number(j, "polls_per_s", x->polls_per_s);
        json_kv_uint(j, "updates", x->updates);
        json_kv_number(j, "updates_per_s", x->updates_per_s);
        json_end_object(j);
    }
    json_end_array(j);
    json_lines(j, "notes", tw_sampler_notes(s));
    json_end_object(j);
}

void run_report_json(const run_record *r, FILE *f)
{
    json j;
    json_init(&j, f);
    json_begin_object(&j);
    json_key(&j, "command");
    json_begin_array(&j);
    for (size_t i = 0; r->argv[i]; i++)
        json_string(&j, r->argv[i]);
    json_end_array(&j);
    json_kv_string(&j, "provenance", r->provenance);
    json_key(&j, "exit_status");
    json_number(&j, r->exit_code);
    json_key(&j, "signal");
    if (r->signal)
        json_number(&j, r->signal);
    else
        json_string(&j, NULL);
    json_kv_number(&j, "command_wall_s", r->child_wall_s);
    json_kv_string(&j, "backend", r->backend);
    json_kv_uint(&j, "t0_mono_ns", r->t0_mono_ns);
    json_lines(&j, "warnings", r->warnings);
    json_key(&j, "timeline");
    json_begin_object(&j);
    json_kv_uint(&j, "events", r->nevents);
    json_kv_string(&j, "note", r->events_note);
    json_end_object(&j);
    json_key(&j, "devices");
    json_begin_array(&j);
    for (size_t d = 0; d < r->ndev; d++)
        json_device(&j, &r->dev[d]);
    json_end_array(&j);
    json_sampler(&j, r);
    json_key(&j, "files");
    json_begin_object(&j);
    json_kv_string(&j, "trace", r->trace_path);
    json_kv_string(&j, "events", r->events_path);
    json_kv_string(&j, "perfetto", r->perfetto_path);
    json_end_object(&j);
    json_end_object(&j);
    json_finish(&j);
}
