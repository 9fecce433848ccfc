/* The report of `truewatt run`: text tables, JSON or CSV, from one record. */
#include "report/run_report.h"

#include <fnmatch.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "trace/csv.h"

#include "report/run_mig.h"
#include "report/sampler_report.h"
#include "core/json.h"
#include "exporter/procfile.h"
#include "report/table.h"

#define TEXT_ROWS 25 /* longest table in the text report; JSON has every row */
#define CHECK_PCT 2.0

static double pct_of_core(const run_sampler *s) { return s->wall_s > 0 ? 100.0 * s->cpu_s / s->wall_s : NAN; }

/* ---------------------------------------------------------------- whole-run methods */

typedef struct method_row {
    const char *key, *label;
    double j;
} method_row;

static size_t methods(const tw_methods *a, method_row *m)
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

static void text_methods(const tw_methods *a, double model_j, FILE *f)
{
    method_row m[8];
    size_t n = methods(a, m);
    static const char *const head[] = {"method", "energy_j", "vs_counter_%"};
    table *t = table_new(3, head);
    if (!t) return;
    table_cell(t, "truewatt's model (baseline + activities)");
    table_cell(t, "%.3f", model_j);
    if (isnan(a->counter_j))
        table_cell(t, "-");
    else
        table_cell(t, "%+.2f", 100.0 * (model_j / a->counter_j - 1.0));
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
    fprintf(f, "\nenergy over the fit span by method, %.3f .. %.3f s [J]\n", a->start_s, a->end_s);
    table_print(t, f);
    table_free(t);
    if (isnan(a->rc_k20_j) && a->rc_note[0]) fprintf(f, "  (RC-corrected: %s)\n", a->rc_note);
}

static void text_split(const tw_estimate *e, FILE *f)
{
    static const char *const head[] = {"part", "energy_j", "share_%"};
    table *t = table_new(3, head);
    if (!t) return;
    double sum = e->model_j;
    table_cell(t, "baseline: what no kernel caused (%.1f .. %.1f W)", e->baseline_min_w, e->baseline_max_w);
    table_cell(t, "%.3f", e->baseline_j);
    table_cell(t, "%.1f", 100.0 * e->baseline_j / sum);
    table_cell(t, "kernels (above the baseline)");
    table_cell(t, "%.3f", e->kernels_j);
    table_cell(t, "%.1f", 100.0 * e->kernels_j / sum);
    table_cell(t, "memcpy/memset (above the baseline)");
    table_cell(t, "%.3f", e->copies_j);
    table_cell(t, "%.1f", 100.0 * e->copies_j / sum);
    table_cell(t, "sum");
    table_cell(t, "%.3f", sum);
    table_cell(t, "100.0");
    fprintf(f, "\nwhere the energy went, %.3f .. %.3f s [J]\n", e->fit_t0_s, e->fit_t1_s);
    table_print(t, f);
    table_free(t);
    double a = isnan(e->reference_t0_s) ? e->fit_t0_s : e->reference_t0_s,
           b = isnan(e->reference_t1_s) ? e->fit_t1_s : e->reference_t1_s;
    fprintf(f, "check: the model %.3f J vs %s %.3f J over %.3f .. %.3f s: %+.2f %% (%s %.0f %%)\n", e->model_ref_j,
            e->reference, e->reference_j, a, b, e->conservation_pct,
            fabs(e->conservation_pct) <= CHECK_PCT ? "within" : "NOT within", CHECK_PCT);
    char before[32] = "not measured", after[32] = "not measured";
    if (!isnan(e->idle_before_w)) snprintf(before, sizeof before, "%.2f W", e->idle_before_w);
    if (!isnan(e->idle_after_w)) snprintf(after, sizeof after, "%.2f W", e->idle_after_w);
    fprintf(f, "idle before the program: %s; after it: %s; baseline while it ran: %.2f W on average\n", before, after,
            e->baseline_mean_w);
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

/* "rc, update every 20.6 ms, coverage 100 %" */
static void model_text(const tw_reading_model *m, char *buf, size_t len)
{
    snprintf(buf, len, "%s, update every %.3g ms, coverage %.0f %%", tw_response_name(m->response), 1e3 * m->period_s,
             100.0 * m->coverage);
}

/* One line: which profile the estimator used, or why there is none. */
static void profile_line(const run_device *d, char *buf, size_t len)
{
    char model[160];
    model_text(&d->model, model, sizeof model);
    switch (d->profile) {
    case RUN_PROFILE_MODEL:
        snprintf(buf, len, "%s (best reading %s: %s)", d->profile_how, d->model.name, model);
        return;
    case RUN_PROFILE_NONE:
        snprintf(buf, len, "%s; run 'truewatt sensor identify' to make one; the H100's models are assumed",
                 d->profile_how);
        return;
    case RUN_PROFILE_ERROR:
        snprintf(buf, len, "%s; the H100's models are assumed", d->profile_how);
        return;
    case RUN_PROFILE_NO_READING:
        snprintf(buf, len, "%s has no reading of the board's power with a known model; the H100's models are assumed",
                 d->profile_how);
        return;
    }
    snprintf(buf, len, "?");
}

static void text_lines(const char *prefix, const char *text, FILE *f)
{
    while (text && *text) {
        size_t len = strcspn(text, "\n");
        if (len) fprintf(f, "%s%.*s\n", prefix, (int)len, text);
        text += len + (text[len] != '\0');
    }
}

/* A row of the names table: an ungrouped name, or a group (its label). */
typedef struct name_row {
    const char *name, *kind;
    uint64_t launches;
    double time_s, active_s, energy_j, energy_sd_j, upper_j, power_w;
    tw_est_status status;
    const char *by; /* the model that gave its power (NULL for a group: its members') */
    size_t order;   /* names first, each in the estimate's order (ties) */
} name_row;

static int row_by_energy(const void *a, const void *b)
{
    const name_row *x = a, *y = b;
    double ex = isfinite(x->energy_j) ? x->energy_j : 0, ey = isfinite(y->energy_j) ? y->energy_j : 0;
    if (ex != ey) return ex > ey ? -1 : 1;
    return (x->order > y->order) - (x->order < y->order);
}

/* The rows: every name not in a group and every group, by energy, largest first. */
static name_row *name_rows(const run_device *d, size_t *n)
{
    const tw_estimate *e = d->est;
    name_row *r = malloc((e->nnames + e->ngroups + 1) * sizeof *r);
    *n = 0;
    if (!r) return NULL;
    for (size_t i = 0; i < e->nnames; i++) {
        const tw_est_name *x = &e->names[i];
        if (x->status == TW_EST_GROUPED) continue;
        r[*n] = (name_row){x->name,
                           x->kind,
                           x->launches,
                           x->time_s,
                           x->active_s,
                           x->energy_j,
                           x->energy_sd_j,
                           x->upper_j,
                           x->power_w,
                           x->status,
                           tw_est_method_name(x->method),
                           *n};
        ++*n;
    }
    for (size_t g = 0; g < e->ngroups; g++) {
        const tw_est_group *x = &e->groups[g];
        r[*n] = (name_row){run_group_label(d, g), "group",    x->launches, x->time_s, x->active_s, x->energy_j,
                           x->energy_sd_j,        x->upper_j, x->power_w,  x->status, NULL,        *n};
        ++*n;
    }
    qsort(r, *n, sizeof *r, row_by_energy);
    return r;
}

/* The names table (the names not in a group, and the groups, by energy) and its notes; *noted: whether it
 * explained '<' and '<=' (bit 0, bit 1). */
static void text_names(const run_device *d, FILE *f, unsigned *noted)
{
    const tw_estimate *e = d->est;
    *noted = 0;
    if (e->nnames == 0) return;
    static const char *const head[] = {"name",   "kind",         "launches", "time_s",  "energy_j",
                                       "+-sd_j", "j_per_launch", "power_w",  "share_%", "by"};
    bool by = e->counters.used; /* which model gave each name its power: where the counters gave some */
    size_t nrows = 0;
    name_row *rows = name_rows(d, &nrows);
    table *t = rows ? table_new(by ? 10 : 9, head) : NULL;
    if (!t) {
        free(rows);
        return;
    }
    double act = e->kernels_j + e->copies_j;
    size_t shown = 0, below = 0, at_bound = 0;
    for (size_t i = 0; i < nrows && shown < TEXT_ROWS; i++) {
        const name_row *x = &rows[i];
        shown++;
        table_cell(t, "%.60s", x->name);
        table_cell(t, "%s", x->kind);
        table_cell(t, "%llu", (unsigned long long)x->launches);
        table_cell(t, "%.6f", x->time_s);
        if (x->status == TW_EST_BELOW_RESOLUTION) {
            below++;
            table_cell(t, "< %.3f", x->upper_j);
            table_cell(t, "-");
            table_cell(t, "< %.3g", x->upper_j / (double)x->launches);
            /* the energy's bound over its activity: estimate + 2 sd held under the power bound as
             * the energy is (estimate + 2 sd alone read "< 1988 W" on an H100 bounded at 573 W) */
            table_cell(t, "< %.1f", x->active_s > 0 ? x->upper_j / x->active_s : NAN);
            table_cell(t, "-");
        } else if (x->status == TW_EST_AT_POWER_BOUND) {
            at_bound++;
            table_cell(t, "<= %.3f", x->upper_j);
            table_cell(t, "bound");
            table_cell(t, "<= %.3g", x->upper_j / (double)x->launches);
            table_cell(t, "<= %.1f", x->power_w);
            table_cell(t, "-");
        } else if (x->status == TW_EST_UNOBSERVED) {
            table_cell(t, "unobserved");
            table_cell(t, "-");
            table_cell(t, "-");
            table_cell(t, "-");
            table_cell(t, "-");
        } else {
            table_cell(t, "%.3f", x->energy_j);
            table_cell(t, "%.3f", x->energy_sd_j);
            table_cell(t, "%.3g", x->energy_j / (double)x->launches);
            table_cell(t, "%.1f", x->power_w);
            table_cell(t, "%.1f", act > 0 ? 100.0 * x->energy_j / act : NAN);
        }
        if (by) table_cell(t, "%s", x->by ? x->by : "-");
    }
    fprintf(f, "\nkernels and copies, by energy above the baseline%s\n",
            e->ngroups ? " (a group's members: under \"groups\" below)" : "");
    table_print(t, f);
    table_free(t);
    size_t rest = nrows - shown;
    free(rows);
    if (rest) fprintf(f, "... and %zu more (all in --json)\n", rest);
    run_status_notes(below, at_bound, e->power_bound_w, f);
    *noted = (below ? 1u : 0u) | (at_bound ? 2u : 0u);
}

void run_status_notes(size_t below, size_t at_bound, double bound_w, FILE *f)
{
    if (below)
        fprintf(
            f, "'<': below resolution: under two standard errors of the data, or held at zero by the fit; the "
               "figure is an upper bound\n"
               "     (one-sided, ~97.7 %%: the estimate + 2 sd, at most the power bound x its time, but where the "
               "activity counters'\n"
               "     model puts the name above that bound: bursts can draw more). More launches or a longer run narrow "
               "it.\n");
    if (!at_bound) return;
    char bound[64] = "";
    if (isfinite(bound_w)) snprintf(bound, sizeof bound, " (%.0f W above the baseline)", bound_w);
    fprintf(f,
            "'<=': at the power bound: the data asked for more than the bound on each name's power%s allows;\n"
            "     the figure is the bound x its time, the most the model can give it, not a measurement: its true "
            "energy is likely higher\n"
            "     (bursts above the power limit, or a misfit of the model). More launches do not lift it; the GPU's "
            "total still holds:\n"
            "     wrap it in an NVTX range, whose energy (the whole GPU's) is measured from the counter, not split by "
            "the model.\n",
            bound);
}

const char *run_group_label(const run_device *d, size_t g)
{
    const tw_estimate *e = d->est;
    const tw_est_group *x = &e->groups[g];
    for (size_t k = 0; k < d->npatterns; k++) {
        bool all = x->nmembers > 0;
        for (size_t m = 0; all && m < x->nmembers; m++)
            all = fnmatch(d->patterns[k], e->names[x->members[m]].name, 0) == 0;
        if (all) return d->patterns[k];
    }
    return x->label;
}

/* The groups, with the notes for '<' and '<=' that the names table did not give (noted: text_names'). */
static void text_groups(const run_device *d, unsigned noted, FILE *f)
{
    const tw_estimate *e = d->est;
    if (e->ngroups == 0) return;
    size_t below = 0, at_bound = 0, traded = 0;
    for (size_t g = 0; g < e->ngroups; g++)
        traded += e->groups[g].traded;
    fprintf(f, "\ngroups: names the sensor cannot tell apart (always together%s)%s, reported together\n",
            traded ? "; \"not split by the data\": interleaved below the readings' resolution, their energies traded "
                     "against each other, their sum resolved"
                   : "",
            d->npatterns ? " or that --group/--group-range asked for" : "");
    for (size_t g = 0; g < e->ngroups; g++) {
        const tw_est_group *x = &e->groups[g];
        below += x->status == TW_EST_BELOW_RESOLUTION;
        at_bound += x->status == TW_EST_AT_POWER_BOUND;
        if (x->status == TW_EST_BELOW_RESOLUTION)
            fprintf(f, "  %s: %llu launches, %.6f s, < %.3f J (below resolution)\n", run_group_label(d, g),
                    (unsigned long long)x->launches, x->time_s, x->upper_j);
        else if (x->status == TW_EST_AT_POWER_BOUND)
            fprintf(f, "  %s: %llu launches, %.6f s, <= %.3f J (at the power bound)\n", run_group_label(d, g),
                    (unsigned long long)x->launches, x->time_s, x->upper_j);
        else
            fprintf(f, "  %s: %llu launches, %.6f s, %.3f +- %.3f J, %.1f W\n", run_group_label(d, g),
                    (unsigned long long)x->launches, x->time_s, x->energy_j, x->energy_sd_j, x->power_w);
        for (size_t m = 0; m < x->nmembers && m < 8; m++)
            fprintf(f, "    %.100s (%s, %llu launches)\n", e->names[x->members[m]].name, e->names[x->members[m]].kind,
                    (unsigned long long)e->names[x->members[m]].launches);
        if (x->nmembers > 8) fprintf(f, "    ... and %zu more\n", x->nmembers - 8);
    }
    run_status_notes(noted & 1u ? 0 : below, noted & 2u ? 0 : at_bound, e->power_bound_w, f);
}

void run_range_of(const run_device *d, size_t i, tw_report_range *out)
{
    const tw_est_range *r = &d->est->ranges[i];
    tw_report_range x = {.size = sizeof x,
                         .name = r->name,
                         .domain = r->domain ? r->domain : "",
                         .tid = r->tid,
                         .depth = r->depth,
                         .start_s = r->start_s,
                         .end_s = r->end_s,
                         .energy_j = r->energy_j,
                         .above_baseline_j = r->above_j,
                         .baseline_j = r->baseline_j,
                         .energy_sd_j = r->energy_sd_j};
    memcpy(out, &x, out->size < sizeof x ? out->size : sizeof x);
}

/* The ranges of one name, thread and domain, summed. */
typedef struct range_total {
    const char *name, *domain;
    int64_t tid;
    size_t ranges;
    double energy_j, above_j, baseline_j;
    double sd2_j2; /* the ranges' variances summed (their errors taken as independent) */
} range_total;

static int by_domain_thread_name(const void *a, const void *b)
{
    const range_total *x = a, *y = b;
    int c = strcmp(x->domain, y->domain);
    if (c) return c;
    if (x->tid != y->tid) return x->tid < y->tid ? -1 : 1;
    return strcmp(x->name, y->name);
}

/* d's ranges summed per (domain, thread, name), in that order (malloc'ed; *n
 * rows; NULL when there are no ranges or no memory). */
static range_total *range_totals(const run_device *d, size_t *n)
{
    const tw_estimate *e = d->est;
    *n = 0;
    range_total *t = e && e->nranges ? malloc(e->nranges * sizeof *t) : NULL;
    if (!t) return NULL;
    for (size_t i = 0; i < e->nranges; i++) {
        tw_report_range r = {.size = sizeof r};
        run_range_of(d, i, &r);
        t[i] = (range_total){.name = r.name ? r.name : "",
                             .domain = r.domain,
                             .tid = r.tid,
                             .ranges = 1,
                             .energy_j = r.energy_j,
                             .above_j = r.above_baseline_j,
                             .baseline_j = r.baseline_j,
                             .sd2_j2 = r.energy_sd_j * r.energy_sd_j};
    }
    qsort(t, e->nranges, sizeof *t, by_domain_thread_name);
    for (size_t i = 0; i < e->nranges; i++) {
        if (*n && by_domain_thread_name(&t[*n - 1], &t[i]) == 0) {
            range_total *x = &t[*n - 1];
            x->ranges++;
            x->energy_j += t[i].energy_j;
            x->above_j += t[i].above_j;
            x->baseline_j += t[i].baseline_j;
            x->sd2_j2 += t[i].sd2_j2;
        } else {
            t[(*n)++] = t[i];
        }
    }
    return t;
}

static const char *domain_text(const char *domain) { return domain[0] ? domain : "(default)"; }

static void text_range_totals(const run_device *d, FILE *f)
{
    size_t n;
    range_total *x = range_totals(d, &n);
    static const char *const head[] = {"domain", "thread", "range", "ranges", "energy_j", "above_baseline_j"};
    table *t = x ? table_new(6, head) : NULL;
    for (size_t i = 0; t && i < n && i < TEXT_ROWS; i++) {
        table_cell(t, "%.40s", domain_text(x[i].domain));
        table_cell(t, "%lld", (long long)x[i].tid);
        table_cell(t, "%.60s", x[i].name);
        table_cell(t, "%zu", x[i].ranges);
        table_cell(t, "%.3f", x[i].energy_j);
        table_cell(t, "%.3f", x[i].above_j);
    }
    if (t) {
        fprintf(f, "\nNVTX ranges per domain and thread: each name's ranges summed (a range nested in one of the same "
                   "name counts twice)\n");
        table_print(t, f);
        if (n > TEXT_ROWS) fprintf(f, "... and %zu more (all in --json)\n", n - TEXT_ROWS);
    }
    table_free(t);
    free(x);
}

static void text_ranges(const run_device *d, FILE *f)
{
    const tw_estimate *e = d->est;
    if (e->nranges == 0) return;
    static const char *const head[] = {"range", "start_s", "end_s", "energy_j", "above_baseline_j", "thread", "domain"};
    table *t = table_new(7, head);
    if (!t) return;
    size_t shown = e->nranges < TEXT_ROWS ? e->nranges : TEXT_ROWS;
    for (size_t i = 0; i < shown; i++) {
        tw_report_range r = {.size = sizeof r};
        run_range_of(d, i, &r);
        int indent = r.depth > 1 ? 2 * (r.depth - 1) : 0; /* nested push/pop ranges under their parent */
        table_cell(t, "%*s%.60s", indent > 16 ? 16 : indent, "", r.name);
        table_cell(t, "%.4f", r.start_s);
        table_cell(t, "%.4f", r.end_s);
        table_cell(t, "%.3f", r.energy_j);
        table_cell(t, "%.3f", r.above_baseline_j);
        table_cell(t, "%lld", (long long)r.tid);
        table_cell(t, "%.40s", domain_text(r.domain));
    }
    fprintf(f, "\nNVTX ranges: the GPU's energy over each, and what its kernels drew above the baseline (ranges may "
               "nest: they do not add up)\n");
    table_print(t, f);
    table_free(t);
    if (shown < e->nranges) fprintf(f, "... and %zu more (all in --json)\n", e->nranges - shown);
    text_range_totals(d, f);
}

/* Grace Hopper: the module's energy beside the GPU's, never in it. */
void run_scope_text(const run_device *d, FILE *f)
{
    if (!d->est || isnan(d->methods.module_j)) return;
    fprintf(f,
            "power scope: these energies are the GPU's (NVML's GPU scope). This is a Grace Hopper module: its power "
            "(module scope: GPU + CPU + memory, %s) over the fit span is %.3f J, %.3f J more than the GPU's model; "
            "that is in no GPU energy or total here\n",
            d->methods.module_reading, d->methods.module_j, d->methods.module_j - d->est->model_j);
}

void run_scope_json(json *j, const run_device *d)
{
    json_kv_string(j, "power_scope", "gpu");
    json_kv_number(j, "module_energy_j", d->methods.module_j);
    json_kv_string(j, "module_reading", d->methods.module_reading[0] ? d->methods.module_reading : NULL);
}

/* The residual of the finest reading the estimate used beside its noise in the device's profile (NaN where unknown). */
static void fit_noise(const run_device *d, const char **name, double *rms_w, double *profile_w)
{
    const tw_estimate *e = d->est;
    size_t best = 0;
    for (size_t i = 1; i < e->nreadings; i++)
        if (e->readings[i].used > e->readings[best].used) best = i;
    *name = e->nreadings ? e->readings[best].name : "";
    *rms_w = e->nreadings ? e->readings[best].rms_w : NAN;
    *profile_w = NAN;
    if (d->profile != RUN_PROFILE_MODEL || !e->nreadings) return;
    const char *col = e->readings[best].name,
               *bare = strncmp(col, d->prefix, strlen(d->prefix)) == 0 ? col + strlen(d->prefix) : col;
    const tw_reading_model *m = tw_profile_find(&d->prof, bare);
    if (m) *profile_w = m->rms_w;
}

/* What recording the counters did to the energy (NULL where none were
 * recorded): PM sampling itself raises the GPU's power between kernels
 * (results/h100/pm-cost-idle: 119-130 W idle without it, 159-162 W with it,
 * whatever it samples), which the baseline takes; the kernels' energy above
 * the baseline moved by under 1 % on the PyTorch step (activity-s29). */
const char *run_pm_note(const run_device *d)
{
    if (!d->pm_asked || !d->pm.on || d->pm.samples == 0) return NULL;
    if (d->est && d->est->counters.windows) /* its own term: pm_text */
        return "PM sampling was enabled in windows only; the GPU's extra power in them is a term of its own "
               "(\"PM sampling's own power\"), in the baseline, never in a kernel's energy";
    return "PM sampling raises the GPU's power between kernels while it runs (an H100's by 30-45 W): the baseline "
           "and the total include that, the kernels' energy above the baseline does not; for the run's total, "
           "run with --no-activity-counters";
}

/* PM sampling in windows: what the GPU drew more while it was enabled, the
 * term that takes it (estimator.h, tw_est_counter_fit). */
static void pm_text(const tw_est_counter_fit *c, FILE *f)
{
    if (!c->windows) return;
    fprintf(f,
            "PM sampling's own power: +%.1f +- %.1f W in its %zu windows (%.2f s, %.1f %% of the fit span, %.0f %% "
            "of it sampled): %.1f J, in the baseline (the GPU's energy less this is what the program drew without the "
            "counters)\n",
            c->pm_w, c->pm_sd_w, c->windows, c->window_s, 100 * c->window_share, 100 * c->window_sampled, c->pm_j);
    fprintf(f, "PM sampling's power at its windows' edges (each %.1f s, outside each window as recorded):",
            TW_EST_PM_EDGE_S);
    for (int r = TW_EST_PM_LEAD - 1; r >= 0; r--)
        fprintf(f, " %+.1f", c->pm_edge_w[r]);
    fprintf(f, " W before its start,");
    for (int r = TW_EST_PM_LEAD; r < TW_EST_PM_EDGES; r++)
        fprintf(f, " %+.1f", c->pm_edge_w[r]);
    fprintf(f, " W after its end: %.1f J, in the baseline\n", c->pm_edge_j);
}

/* " sm 1.0 +- 2.0 W, dram ..." over the counters' features */
static void feature_watts(FILE *f, const tw_est_counter_fit *c, const double *w, const double *sd)
{
    for (size_t m = 0; m < c->nf; m++)
        fprintf(f, "%s %s %.1f +- %.1f W", m ? "," : "", c->feature[m], w[m], sd[m]);
}

/* How the activity counters entered the estimate: the model's features and
 * fit, or why they did not (nothing where none were recorded). */
void run_counters_text(const run_device *d, FILE *f)
{
    const tw_est_counter_fit *c = &d->est->counters;
    pm_text(c, f);
    if (!c->used) {
        if (c->why[0]) fprintf(f, "activity counters in the estimate: not used (%s)\n", c->why);
        return;
    }
    fprintf(f,
            "activity counters in the estimate: %zu name(s) (kernels, and copies within the device's memory) get "
            "their power from them (%zu samples cover %.1f %% of their time); power at full activity:",
            c->names, c->samples, 100 * c->coverage);
    feature_watts(f, c, c->coef_w, c->coef_sd_w);
    const char *name;
    double rms, prof;
    fit_noise(d, &name, &rms, &prof);
    if (c->calibrated[0]) {
        fprintf(f, " (prior: the sensor profile's calibrated model,");
        feature_watts(f, c, c->cal_w, c->cal_sd_w);
        if (isfinite(c->cal_clock_mhz)) fprintf(f, "; the features x each sample's clock / %.0f MHz", c->cal_clock_mhz);
        fprintf(f, "; %s)", c->calibrated);
    } else {
        fprintf(f, " (prior 0 +- %.1f W, from their scatter)", c->coef_prior_sd_w);
    }
    fprintf(f, "; each name's own term 0 +- %.1f W (from the names' scatter", c->own_sd_w);
    if (c->names_apart) fprintf(f, ", %zu name(s) apart from the model left out", c->names_apart);
    fprintf(f, "); %s residual %.2f W rms", name, rms);
    if (isfinite(prof)) fprintf(f, " (the profile's noise %.2f W)", prof);
    fputc('\n', f);
}

static void text_device(const run_record *r, const run_device *d, FILE *f)
{
    if (r->ndev > 1 || d->name[0])
        fprintf(f, "\n== GPU %d%s%s%s\n", d->index, d->name[0] ? " (" : "", d->name, d->name[0] ? ")" : "");
    char line[2048];
    profile_line(d, line, sizeof line);
    fprintf(f, "profile: %s\n", line);
    if (d->pm_asked) fprintf(f, "activity counters: %s\n", d->pm_line);
    if (run_pm_note(d)) fprintf(f, "activity counters: note: %s\n", run_pm_note(d));
    const tw_estimate *e = d->est;
    if (!e) {
        fprintf(f, "no energy report: %s\n", d->est_error);
        return;
    }
    fprintf(f, "readings fitted: %s\n", d->info.readings);
    text_lines("note: ", d->info.notes, f);
    text_lines("warning: ", e->warnings, f);
    for (size_t i = 0; i < e->nreadings; i++)
        if (e->readings[i].used)
            fprintf(f, "  %s: %zu windows, residual %.2f W rms, scaled by %.4f\n", e->readings[i].name,
                    e->readings[i].used, e->readings[i].rms_w, 1.0 / e->readings[i].gain);
        else
            fprintf(f, "  %s: no window inside the fit span: not used\n", e->readings[i].name);
    fprintf(f,
            "baseline: linear between %zu knots %.2f s apart; kernel clock matched to the readings' with %+.2f ms "
            "(+- %.2f ms, in each name's error); prior on each name's power: 0 +- %.0f W\n",
            e->nknots, e->knot_s, 1e3 * e->shift_s, 1e3 * e->shift_sd_s, e->prior_w);
    if (e->lingering)
        fprintf(f,
                "lingering power: the %zu names with the most time each have a term decaying with %.2f s after "
                "their launches (the sensor profile's), in their energies: %.1f J (docs/methods.md)\n",
                e->lingering, e->linger_s, e->linger_j);
    if (isfinite(e->power_bound_w))
        fprintf(f,
                "bound on each name's power: %.0f W above the baseline (the GPU's power limit, %.0f W, less its "
                "quiet level); %zu at it\n",
                e->power_bound_w, e->power_limit_w, e->at_limit);
    else
        fprintf(f, "bound on each name's power: none (the GPU's power limit is unknown)\n");
    run_counters_text(d, f);
    text_split(e, f);
    run_scope_text(d, f);
    text_methods(&d->methods, e->model_j, f);
    if (e->nnames == 0) fprintf(f, "\nno kernels in the timeline: no energy per kernel\n");
    unsigned noted;
    text_names(d, f, &noted);
    text_groups(d, noted, f);
    text_ranges(d, f);
    run_mig_text(d, f);
}

/* ---------------------------------------------------------------- several GPUs */

run_total run_total_of(const run_device *const *dev, size_t n)
{
    run_total t = {0};
    for (size_t d = 0; d < n; d++) {
        const tw_estimate *e = dev[d]->est;
        if (!e) {
            t.without++;
            continue;
        }
        t.with++;
        t.model_j += e->model_j;
        t.counter_j += dev[d]->methods.counter_j;
        t.kernels_j += e->kernels_j;
        t.copies_j += e->copies_j;
        t.baseline_j += e->baseline_j;
    }
    return t;
}

/* One run's GPUs: each GPU's readings are its own, so no energy is in two of them. */
static run_total record_total(const run_record *r)
{
    const run_device **p = calloc(r->ndev ? r->ndev : 1, sizeof *p);
    run_total t = {.without = r->ndev};
    if (!p) return t; /* out of memory: no GPU in the total, and it says so */
    for (size_t d = 0; d < r->ndev; d++)
        p[d] = &r->dev[d];
    t = run_total_of(p, r->ndev);
    free(p);
    return t;
}

static void text_total(const run_record *r, FILE *f)
{
    if (r->ndev < 2) return;
    run_total t = record_total(r);
    fprintf(f,
            "\n== total over %zu GPUs (each over its own fit span): %.3f J (energy counter %.3f J); kernels %.3f J, "
            "copies %.3f J, baseline %.3f J\n",
            t.with, t.model_j, t.counter_j, t.kernels_j, t.copies_j, t.baseline_j);
    if (t.without)
        fprintf(f, "   %zu GPU%s without an estimate: not in the total\n", t.without, t.without == 1 ? "" : "s");
}

void run_split_json(json *j, double kernels_j, double copies_j, double baseline_j)
{
    json_kv_number(j, "kernels_j", kernels_j);
    json_kv_number(j, "copies_j", copies_j);
    json_kv_number(j, "baseline_j", baseline_j);
}

void run_total_json(json *j, const run_total *t)
{
    json_key(j, "total");
    json_begin_object(j);
    json_kv_uint(j, "gpus", t->with);
    json_kv_uint(j, "gpus_without_estimate", t->without);
    json_kv_number(j, "energy_j", t->model_j);
    json_kv_number(j, "counter_j", t->counter_j);
    run_split_json(j, t->kernels_j, t->copies_j, t->baseline_j);
    json_end_object(j);
}

static void text_sampler(const run_record *r, FILE *f)
{
    const run_sampler *s = r->sampler;
    sampler_cpu_text(s, f);
    fprintf(f, "(polls: values read; updates: values that differed from the one before)\n");
    static const char *const head[] = {"reading", "polls", "polls_per_s", "updates", "updates_per_s"};
    table *t = table_new(5, head);
    if (!t) return;
    for (size_t i = 0; i < s->nreadings; i++) {
        const tw_run_reading *x = &s->readings[i];
        table_cell(t, "%s", x->name);
        table_cell(t, "%llu", (unsigned long long)x->polls);
        table_cell(t, "%.1f", x->polls_per_s);
        table_cell(t, "%llu", (unsigned long long)x->updates);
        table_cell(t, "%.1f", x->updates_per_s);
    }
    table_print(t, f);
    table_free(t);
    const char *n = s->notes ? s->notes : "";
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
    text_total(r, f);
    text_sampler(r, f);
    fprintf(f, "\nfiles:\n  run       %s  (truewatt report, truewatt export --csv, sqlite3: docs/runfile.md)\n",
            r->run_path);
    if (r->perfetto_path) fprintf(f, "  perfetto  %s  (open in ui.perfetto.dev)\n", r->perfetto_path);
}

/* ---------------------------------------------------------------- JSON */

void run_json_lines(json *j, const char *key, const char *text)
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

/* "key": {feature: v[m], ...} over the counters' features */
static void by_feature(json *j, const char *key, const tw_est_counter_fit *c, const double *v)
{
    json_key(j, key);
    json_begin_object(j);
    for (size_t m = 0; m < c->nf; m++)
        json_kv_number(j, c->feature[m], v[m]);
    json_end_object(j);
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
    json_kv_string(j, "best_reading", m ? d->model.name : NULL);
    json_end_object(j);
}

/* Key activity_counters (when asked for): the line, and what it says as values. */
void run_pm_json(json *j, const run_device *d)
{
    if (!d->pm_asked) return;
    json_key(j, "activity_counters");
    json_begin_object(j);
    json_kv_string(j, "line", d->pm_line);
    json_kv_bool(j, "recorded", d->pm.on);
    json_kv_number(j, "samples", (double)d->pm.samples);
    json_kv_number(j, "interval_ms", d->pm.on ? (double)d->pm.interval_ns / 1e6 : NAN);
    json_kv_string(j, "metrics", d->pm.on ? d->pm.metrics : NULL);
    json_kv_string(j, "refused", d->pm.on ? d->pm.refused : NULL);
    json_kv_string(j, "reason", d->pm.on ? NULL : d->pm.reason);
    json_kv_number(j, "busy_s", d->pm.busy_s);
    json_kv_number(j, "busy_pct_of_one_core", tw_run_pm_busy_pct(&d->pm));
    json_kv_number(j, "overflows", (double)d->pm.overflows);
    json_kv_string(j, "note", run_pm_note(d));
    json_end_object(j);
}

/* Key activity_model: how the activity counters entered the estimate. */
void run_counters_json(json *j, const run_device *d)
{
    const tw_est_counter_fit *c = &d->est->counters;
    json_key(j, "activity_model");
    json_begin_object(j);
    json_kv_bool(j, "used", c->used);
    json_kv_string(j, "why_not", c->used || !c->why[0] ? NULL : c->why);
    if (c->windows) { /* PM sampling in windows: its own power */
        json_kv_uint(j, "windows", c->windows);
        json_kv_number(j, "window_s", c->window_s);
        json_kv_number(j, "window_share", c->window_share);
        json_kv_number(j, "window_sampled_share", c->window_sampled);
        json_kv_number(j, "pm_power_w", c->pm_w);
        json_kv_number(j, "pm_power_sd_w", c->pm_sd_w);
        json_kv_number(j, "pm_energy_j", c->pm_j);
        json_kv_number(j, "pm_edge_s", TW_EST_PM_EDGE_S);
        json_kv_numbers(j, "pm_lead_w", c->pm_edge_w, TW_EST_PM_LEAD); /* nearest the recorded start first */
        json_kv_numbers(j, "pm_trail_w", c->pm_edge_w + TW_EST_PM_LEAD, TW_EST_PM_TRAIL);
        json_kv_number(j, "pm_edge_energy_j", c->pm_edge_j);
    }
    if (c->used) {
        json_kv_uint(j, "names", c->names);
        json_kv_uint(j, "samples", c->samples);
        json_kv_number(j, "coverage", c->coverage);
        by_feature(j, "coefficients_w", c, c->coef_w);
        by_feature(j, "coefficients_sd_w", c, c->coef_sd_w);
        json_kv_number(j, "coefficient_prior_sd_w", c->coef_prior_sd_w); /* null with a calibrated prior */
        if (c->calibrated[0]) { /* the sensor profile's calibrated model, the coefficients' prior */
            json_key(j, "calibrated_prior");
            json_begin_object(j);
            json_kv_string(j, "source", c->calibrated);
            json_kv_number(j, "clock_mhz", c->cal_clock_mhz); /* null: the features not scaled by the clock */
            by_feature(j, "power_w", c, c->cal_w);
            by_feature(j, "sd_w", c, c->cal_sd_w);
            json_end_object(j);
        }
        json_kv_number(j, "own_term_sd_w", c->own_sd_w);
        json_kv_uint(j, "names_apart", c->names_apart);
        const char *name;
        double rms, prof;
        fit_noise(d, &name, &rms, &prof);
        json_kv_string(j, "reading", name);
        json_kv_number(j, "residual_rms_w", rms);
        json_kv_number(j, "profile_noise_w", prof);
    }
    json_end_object(j);
}

static void json_estimate(json *j, const run_device *d)
{
    const tw_estimate *e = d->est;
    json_key(j, "estimate");
    json_begin_object(j);
    json_kv_string(j, "readings_fitted", d->info.readings);
    run_json_lines(j, "notes", d->info.notes);
    run_json_lines(j, "warnings", e->warnings);
    json_kv_time(j, "fit_start_s", e->fit_t0_s);
    json_kv_time(j, "fit_end_s", e->fit_t1_s);
    json_kv_uint(j, "baseline_knots", e->nknots);
    json_kv_number(j, "knot_spacing_s", e->knot_s);
    json_kv_number(j, "clock_shift_s", e->shift_s);
    json_kv_number(j, "clock_shift_sd_s", e->shift_sd_s);
    json_kv_number(j, "prior_power_sd_w", e->prior_w);
    json_kv_number(j, "linger_s", e->linger_s);
    json_kv_uint(j, "linger_names", e->lingering);
    json_kv_number(j, "linger_j", e->lingering ? e->linger_j : NAN);
    json_kv_number(j, "power_limit_w", e->power_limit_w);
    json_kv_number(j, "power_bound_w", e->power_bound_w);
    json_kv_uint(j, "names_at_bound", e->at_limit);
    json_kv_number(j, "counter_j", d->methods.counter_j);
    run_scope_json(j, d);
    json_kv_number(j, "reference_j", e->reference_j);
    json_kv_time(j, "reference_start_s", e->reference_t0_s);
    json_kv_time(j, "reference_end_s", e->reference_t1_s);
    json_kv_number(j, "model_over_reference_j", e->model_ref_j);
    double proc_j, proc_active_j; /* what `truewatt run` tells the exporter of the run's process on this GPU */
    tw_procfile_split(e, d->events, &proc_j, &proc_active_j);
    json_kv_number(j, "process_energy_j", proc_j);
    run_split_json(j, e->kernels_j, e->copies_j, e->baseline_j);
    json_kv_number(j, "model_j", e->model_j);
    json_kv_number(j, "conservation_pct", e->conservation_pct);
    json_kv_bool(j, "conservation_ok", fabs(e->conservation_pct) <= CHECK_PCT);
    json_kv_number(j, "baseline_mean_w", e->baseline_mean_w);
    json_kv_number(j, "baseline_min_w", e->baseline_min_w);
    json_kv_number(j, "baseline_max_w", e->baseline_max_w);
    json_kv_number(j, "idle_before_w", e->idle_before_w);
    json_kv_number(j, "idle_after_w", e->idle_after_w);
    json_kv_uint(j, "names_pooled", e->pooled);
    run_counters_json(j, d);
    json_key(j, "readings");
    json_begin_array(j);
    for (size_t i = 0; i < e->nreadings; i++) {
        json_begin_object(j);
        json_kv_string(j, "name", e->readings[i].name);
        json_kv_uint(j, "windows", e->readings[i].used);
        json_kv_number(j, "gain", e->readings[i].gain);
        json_kv_number(j, "rms_w", e->readings[i].rms_w);
        json_kv_number(j, "noise_density_w", e->readings[i].noise_w);
        json_kv_number(j, "lag1_correlation", e->readings[i].lag1);
        json_end_object(j);
    }
    json_end_array(j);
    json_key(j, "naive_methods_j");
    json_begin_object(j);
    method_row m[8];
    size_t n = methods(&d->methods, m);
    for (size_t i = 0; i < n; i++)
        json_kv_number(j, m[i].key, m[i].j);
    json_end_object(j);
    json_end_object(j);
}

void run_name_json(json *j, const tw_est_name *x, const char *name)
{
    json_kv_string(j, "name", name);
    json_kv_string(j, "kind", x->kind);
    json_kv_uint(j, "launches", x->launches);
    json_kv_number(j, "time_s", x->time_s);
    json_kv_number(j, "active_s", x->active_s);
    json_kv_number(j, "energy_j", x->energy_j);
    json_kv_number(j, "energy_sd_j", x->energy_sd_j);
    json_kv_number(j, "energy_per_launch_j", x->launches ? x->energy_j / (double)x->launches : NAN);
    json_kv_number(j, "power_w", x->power_w);
    json_kv_number(j, "power_sd_w", x->power_sd_w);
    json_kv_string(j, "status", tw_est_status_name(x->status));
    json_kv_number(j, "upper_j", x->upper_j);
    json_kv_string(j, "method", tw_est_method_name(x->method));
    json_kv_number(j, "counter_power_w", x->counter_w);
    json_kv_number(j, "own_power_w", x->own_w);
    json_kv_number(j, "linger_j", x->linger_j); /* null: no linger term of its own */
    json_key(j, "group");
    if (x->group >= 0)
        json_number(j, x->group);
    else
        json_string(j, NULL);
}

static void json_names(json *j, const run_device *d)
{
    const tw_estimate *e = d->est;
    json_key(j, "names");
    json_begin_array(j);
    for (size_t i = 0; i < e->nnames; i++) {
        json_begin_object(j);
        run_name_json(j, &e->names[i], e->names[i].name);
        json_end_object(j);
    }
    json_end_array(j);
    json_key(j, "groups");
    json_begin_array(j);
    for (size_t g = 0; g < e->ngroups; g++) {
        const tw_est_group *x = &e->groups[g];
        json_begin_object(j);
        json_key(j, "id");
        json_number(j, (double)g);
        json_kv_string(j, "label", run_group_label(d, g));
        json_kv_string(j, "why", x->traded ? "not_split_by_data" : "together");
        json_key(j, "names");
        json_begin_array(j);
        for (size_t m = 0; m < x->nmembers; m++)
            json_string(j, e->names[x->members[m]].name);
        json_end_array(j);
        json_kv_uint(j, "launches", x->launches);
        json_kv_number(j, "time_s", x->time_s);
        json_kv_number(j, "energy_j", x->energy_j);
        json_kv_number(j, "energy_sd_j", x->energy_sd_j);
        json_kv_number(j, "power_w", x->power_w);
        json_kv_string(j, "status", tw_est_status_name(x->status));
        json_kv_number(j, "upper_j", x->upper_j);
        json_end_object(j);
    }
    json_end_array(j);
    json_key(j, "nvtx_ranges");
    json_begin_array(j);
    for (size_t i = 0; i < e->nranges; i++) {
        tw_report_range r = {.size = sizeof r};
        run_range_of(d, i, &r);
        json_begin_object(j);
        json_kv_string(j, "name", r.name);
        json_kv_time(j, "start_s", r.start_s);
        json_kv_time(j, "end_s", r.end_s);
        json_kv_number(j, "energy_j", r.energy_j);
        json_kv_number(j, "energy_sd_j", r.energy_sd_j);
        json_kv_number(j, "above_baseline_j", r.above_baseline_j);
        json_kv_number(j, "baseline_j", r.baseline_j);
        json_kv_string(j, "domain", r.domain);
        json_key(j, "tid");
        json_number(j, (double)r.tid);
        json_key(j, "depth");
        json_number(j, r.depth);
        json_end_object(j);
    }
    json_end_array(j);
    size_t n;
    range_total *x = range_totals(d, &n);
    json_key(j, "nvtx_range_totals");
    json_begin_array(j);
    for (size_t i = 0; x && i < n; i++) {
        json_begin_object(j);
        json_kv_string(j, "domain", x[i].domain);
        json_key(j, "tid");
        json_number(j, (double)x[i].tid);
        json_kv_string(j, "name", x[i].name);
        json_kv_uint(j, "ranges", x[i].ranges);
        json_kv_number(j, "energy_j", x[i].energy_j);
        json_kv_number(j, "energy_sd_j", sqrt(x[i].sd2_j2));
        json_kv_number(j, "above_baseline_j", x[i].above_j);
        json_kv_number(j, "baseline_j", x[i].baseline_j);
        json_end_object(j);
    }
    json_end_array(j);
    free(x);
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
    run_pm_json(j, d);
    json_kv_string(j, "error", d->est ? NULL : d->est_error);
    if (d->est) {
        json_estimate(j, d);
        json_names(j, d);
    }
    run_mig_json(j, d);
    json_end_object(j);
}

static void json_sampler(json *j, const run_record *r)
{
    const run_sampler *s = r->sampler;
    json_key(j, "sampler");
    json_begin_object(j);
    json_kv_number(j, "cpu_s", s->cpu_s);
    json_kv_number(j, "wall_s", s->wall_s);
    json_kv_number(j, "cpu_pct_of_one_core", pct_of_core(s));
    sampler_cpu_json(j, s);
    json_kv_number(j, "fast_period_s", r->fast_period_s);
    json_kv_number(j, "slow_period_s", r->slow_period_s);
    json_key(j, "readings");
    json_begin_array(j);
    for (size_t i = 0; i < s->nreadings; i++) {
        const tw_run_reading *x = &s->readings[i];
        json_begin_object(j);
        json_kv_string(j, "name", x->name);
        json_kv_uint(j, "polls", x->polls);
        json_kv_number(j, "polls_per_s", x->polls_per_s);
        json_kv_uint(j, "updates", x->updates);
        json_kv_number(j, "updates_per_s", x->updates_per_s);
        json_end_object(j);
    }
    json_end_array(j);
    run_json_lines(j, "notes", s->notes);
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
    run_json_lines(&j, "warnings", r->warnings);
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
    run_total t = record_total(r);
    run_total_json(&j, &t);
    json_sampler(&j, r);
    json_key(&j, "files");
    json_begin_object(&j);
    json_kv_string(&j, "run", r->run_path);
    json_kv_string(&j, "perfetto", r->perfetto_path);
    json_end_object(&j);
    json_end_object(&j);
    json_finish(&j);
}

/* ---------------------------------------------------------------- CSV */

static void csv_num(FILE *f, double v)
{
    if (isfinite(v))
        fprintf(f, ",%.9g", v);
    else
        fputs(",", f);
}

static void csv_text(FILE *f, const char *s)
{
    fputc(',', f);
    tw_csv_write_field(f, s ? s : "");
}

/* The columns status .. upper_j of a name or a group: what the estimator fitted. */
static void csv_fit(FILE *f, tw_est_status status, uint64_t launches, double time_s, double energy_j,
                    double energy_sd_j, double power_w, double upper_j)
{
    csv_text(f, tw_est_status_name(status));
    fprintf(f, ",%llu", (unsigned long long)launches);
    csv_num(f, time_s);
    csv_num(f, energy_j);
    csv_num(f, energy_sd_j);
    csv_num(f, power_w);
    csv_num(f, upper_j);
}

void run_report_csv(const run_device *const *dev, size_t n, FILE *f)
{
    fputs("gpu,record,name,kind,status,launches,time_s,energy_j,energy_sd_j,power_w,upper_j,group,domain,tid,depth,"
          "start_s,end_s,above_baseline_j,baseline_j\n",
          f);
    for (size_t k = 0; k < n; k++) {
        const run_device *d = dev[k];
        const tw_estimate *e = d->est;
        for (size_t i = 0; e && i < e->nnames; i++) {
            const tw_est_name *x = &e->names[i];
            fprintf(f, "%d,name", d->index);
            csv_text(f, x->name);
            csv_text(f, x->kind);
            csv_fit(f, x->status, x->launches, x->time_s, x->energy_j, x->energy_sd_j, x->power_w, x->upper_j);
            if (x->group >= 0)
                fprintf(f, ",%d", x->group);
            else
                fputs(",", f);
            fputs(",,,,,,,\n", f);
        }
        for (size_t g = 0; e && g < e->ngroups; g++) {
            const tw_est_group *x = &e->groups[g];
            fprintf(f, "%d,group", d->index);
            csv_text(f, run_group_label(d, g));
            csv_text(f, "");
            csv_fit(f, x->status, x->launches, x->time_s, x->energy_j, x->energy_sd_j, x->power_w, x->upper_j);
            fprintf(f, ",%zu,,,,,,,\n", g);
        }
        for (size_t i = 0; e && i < e->nranges; i++) {
            tw_report_range r = {.size = sizeof r};
            run_range_of(d, i, &r);
            fprintf(f, "%d,range", d->index);
            csv_text(f, r.name);
            csv_text(f, "nvtx");
            fputs(",,", f); /* status, launches */
            csv_num(f, r.end_s - r.start_s);
            csv_num(f, r.energy_j);
            fputs(",,,,", f);
            csv_text(f, r.domain);
            fprintf(f, ",%lld,%d", (long long)r.tid, r.depth);
            csv_num(f, r.start_s);
            csv_num(f, r.end_s);
            csv_num(f, r.above_baseline_j);
            csv_num(f, r.baseline_j);
            fputs("\n", f);
        }
    }
}
