/* `truewatt analyze`'s report as library calls (tw_analysis_profile_*,
 * tw_analysis_report, truewatt.h): the sensor profile that applies to a
 * trace, each event's energy by the estimator on the profile's best reading
 * (the energy counter as the reference when the trace has it), and one
 * analysis rendered as text or JSON from the same accessors. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/json.h"
#include "core/note.h"
#include "correct/analysis_internal.h"
#include "correct/identify.h"
#include "correct/observe.h"
#include "correct/profile.h"
#include "correct/profile_pick.h"
#include "estimate/estimator.h"
#include "report/table.h"

typedef struct report_context {
    const char *trace;
    const char *reading;
    const char *corrected_path; /* NULL when not written */
    double dedup_gap_s;
    bool capacitance_given, idle_given, active_idle_given, events_detected;
} report_context;

/* The energy of each event by the estimator (estimate/estimator.h) on a
 * sensor profile's best reading, with the energy counter as the reference
 * when the trace has it (the events are the analysis's, in its order). */
typedef struct report_profile {
    const char *source;        /* which profile file and why (tw_profile_pick's line) */
    const tw_reading_model *m; /* NULL: no reading the trace has; see note */
    const char *column;        /* the trace column read (the model's name, perhaps with a prefix) */
    const char *note;          /* why there is no estimate, or NULL */
    const tw_estimate *est;    /* NULL with a note; tw_estimate_event_energy_j in the analysis's event order */
} report_profile;

/* The per-event tables and lists go over the analysis's events with their
 * energies (tw_analysis_each: replayed, never all held), a table twice: its
 * widths, then its rows. */
typedef struct rows_ctx {
    const tw_analysis *a;
    table *t;
    bool truth;
    const report_profile *pr;
    json *j;
} rows_ctx;

/* Whether an event has its true energy: the truth columns. */
static bool any_truth(const tw_analysis *a) { return a->any_truth; }

/* The rows of a streamed table through fn after its widths were measured:
 * the header, then the rows printed. */
static tw_status print_rows(const tw_analysis *a, rows_ctx *c, tw_analysis_event_fn fn, void (*tail)(rows_ctx *c),
                            FILE *f)
{
    table_stream_print(c->t, f);
    tw_status st = tw_analysis_each(a, fn, c);
    if (st == TW_OK && tail) tail(c);
    return st;
}

static tw_status energy_row(void *ctx, size_t i, const tw_event *e, const tw_event_energy *r)
{
    (void)i;
    rows_ctx *c = ctx;
    table *t = c->t;
    table_cell(t, "%s", e->name);
    table_cell(t, "%.4f", e->start_s);
    table_cell(t, "%.4f", e->end_s);
    if (c->truth) table_cell(t, "%.3f", e->true_energy_j);
    for (int m = 0; m < TW_METHOD_COUNT; m++)
        table_cell(t, "%.3f", r->energy_j[m]);
    if (c->truth) table_cell(t, "%+.2f", 100.0 * (r->energy_j[TW_METHOD_CORRECTED] / e->true_energy_j - 1.0));
    return TW_OK;
}

static table *energy_table_new(bool truth)
{
    const char *head[4 + 1 + TW_METHOD_COUNT + 1];
    size_t nc = 0;
    head[nc++] = "event";
    head[nc++] = "start_s";
    head[nc++] = "end_s";
    if (truth) head[nc++] = "truth_j";
    for (int m = 0; m < TW_METHOD_COUNT; m++)
        head[nc++] = tw_method_name((tw_method)m);
    if (truth) head[nc++] = "corrected_err_%";
    return table_new_streamed(nc, head);
}

static tw_status split_row(void *ctx, size_t i, const tw_event *e, const tw_event_energy *r)
{
    (void)i;
    table *t = ((rows_ctx *)ctx)->t;
    table_cell(t, "%s", e->name);
    table_cell(t, "%.4f", e->end_s - e->start_s);
    table_cell(t, "%.3f", r->split.idle_j);
    table_cell(t, "%.3f", r->split.active_idle_j);
    table_cell(t, "%.3f", r->split.dynamic_j);
    table_cell(t, "%.3f", r->energy_j[TW_METHOD_CORRECTED]);
    return TW_OK;
}

static void split_total(rows_ctx *c)
{
    const tw_analysis *a = c->a;
    table *t = c->t;
    tw_energy_split s = tw_analysis_total_split(a);
    table_cell(t, "%s", "whole trace");
    table_cell(t, "%.4f", tw_analysis_end_s(a) - tw_analysis_start_s(a));
    table_cell(t, "%.3f", s.idle_j);
    table_cell(t, "%.3f", s.active_idle_j);
    table_cell(t, "%.3f", s.dynamic_j);
    table_cell(t, "%.3f", tw_analysis_total_energy_j(a));
}

static tw_status measure_row(void *ctx, size_t i, const tw_event *e, const tw_event_energy *r)
{
    rows_ctx *c = ctx; /* the energy table's, then the split table's */
    energy_row(&c[0], i, e, r);
    return split_row(&c[1], i, e, r);
}

/* The energy per event by every method, then where it went: both measured
 * in one pass over the events, then each printed in one more. */
static tw_status event_tables(const tw_analysis *a, FILE *f)
{
    static const char *const split_head[] = {"event", "duration_s", "idle_j", "active_idle_j", "dynamic_j", "total_j"};
    rows_ctx c[2] = {{.a = a, .t = energy_table_new(any_truth(a)), .truth = any_truth(a)},
                     {.a = a, .t = table_new_streamed(6, split_head)}};
    tw_status st = c[0].t && c[1].t ? tw_analysis_each(a, measure_row, c) : tw_fail(TW_ENOMEM, "out of memory");
    if (st == TW_OK) {
        split_total(&c[1]);
        fprintf(f, "\nenergy per event [J]\n");
        st = print_rows(a, &c[0], energy_row, NULL, f);
    }
    if (st == TW_OK) {
        fprintf(f, "\nwhere the energy went (corrected power) [J]\n");
        st = print_rows(a, &c[1], split_row, split_total, f);
    }
    table_free(c[0].t);
    table_free(c[1].t);
    return st;
}

/* "reading R (rc, period 20.6 ms, coverage 100 %)" */
static void reading_text(const report_profile *pr, char *buf, size_t len)
{
    const tw_reading_model *m = pr->m;
    char extra[64] = "";
    if (m->response == TW_RESP_RC && isfinite(m->capacitance_s))
        snprintf(extra, sizeof extra, ", C %.3g ms", 1e3 * m->capacitance_s);
    else if (isfinite(m->window_s))
        snprintf(extra, sizeof extra, ", window %.3g ms", 1e3 * m->window_s);
    snprintf(buf, len, "reading %s (%s, period %.3g ms%s, coverage %.0f %%)", pr->column, tw_response_name(m->response),
             1e3 * m->period_s, extra, 100.0 * m->coverage);
}

/* One event's estimate: its name's figures scaled to the event's share of the name's time. */
typedef struct event_est {
    const tw_est_name *x; /* NULL: not an activity (an NVTX range, a marker) */
    double dyn_j, total_j, sd_j, upper_j;
    tw_est_status status;
    const char *group; /* the group's label when grouped */
} event_est;

static event_est event_estimate(const report_profile *pr, size_t i, const tw_event *e)
{
    const tw_estimate *est = pr->est;
    event_est r = {NULL, NAN, NAN, NAN, NAN, TW_EST_UNOBSERVED, NULL};
    const char *kind = e->kind && *e->kind ? e->kind : "kernel";
    for (size_t k = 0; k < est->nnames && !r.x; k++)
        if (!strcmp(est->names[k].name, e->name) && !strcmp(est->names[k].kind, kind)) r.x = &est->names[k];
    if (!r.x) return r;
    double share = r.x->time_s > 0 ? (e->end_s - e->start_s) / r.x->time_s : NAN;
    r.dyn_j = tw_estimate_event_energy_j(est, i);
    r.total_j = r.dyn_j + tw_estimate_baseline_j(est, e->start_s, e->end_s);
    r.status = r.x->status;
    double sd = r.x->energy_sd_j, upper = r.x->upper_j;
    if (r.x->status == TW_EST_GROUPED && r.x->group >= 0) {
        const tw_est_group *g = &est->groups[r.x->group];
        r.status = g->status;
        r.group = g->label;
        share = g->time_s > 0 ? (e->end_s - e->start_s) / g->time_s : NAN;
        sd = g->energy_sd_j;
        upper = g->upper_j;
    }
    r.sd_j = sd * share;
    r.upper_j = upper * share;
    return r;
}

static void estimator_text(const report_profile *pr, FILE *f)
{
    const tw_estimate *est = pr->est;
    fprintf(f, "estimator: ");
    for (size_t r = 0; r < est->nreadings; r++)
        fprintf(f, "%s%s (%zu windows%s)", r ? ", " : "", est->readings[r].name, est->readings[r].used,
                !strcmp(est->readings[r].name, est->reference) ? ", the reference" : "");
    fprintf(f, "; fit %.3f .. %.3f s\n", est->fit_t0_s, est->fit_t1_s);
    fprintf(f, "baseline %.2f W (%.2f .. %.2f W over the fit); dynamic = above it\n", est->baseline_mean_w,
            est->baseline_min_w, est->baseline_max_w);
    fprintf(f, "model %.3f J (baseline %.3f + kernels %.3f + copies %.3f) against %s %.3f J (%+.2f %%)\n", est->model_j,
            est->baseline_j, est->kernels_j, est->copies_j, est->reference, est->reference_j, est->conservation_pct);
    const char *w = est->warnings;
    while (*w) {
        const char *nl = strchr(w, '\n');
        int len = nl ? (int)(nl - w) : (int)strlen(w);
        fprintf(f, "warning: %.*s\n", len, w);
        w += len + (nl ? 1 : 0);
    }
}

static tw_status profile_row(void *ctx, size_t i, const tw_event *e, const tw_event_energy *r)
{
    (void)r;
    rows_ctx *c = ctx;
    table *t = c->t;
    bool truth = c->truth;
    event_est x = event_estimate(c->pr, i, e);
    bool below = tw_est_status_one_sided(x.status);
    const char *le = x.status == TW_EST_AT_POWER_BOUND ? "<=" : "<"; /* run_status_notes */
    table_cell(t, "%s", e->name);
    table_cell(t, "%.4f", e->start_s);
    table_cell(t, "%.4f", e->end_s);
    if (truth) table_cell(t, "%.3f", e->true_energy_j);
    if (isnan(x.dyn_j)) { /* an NVTX range, a marker, or an activity no window saw */
        table_cell(t, "-");
        table_cell(t, "-");
        table_cell(t, "-");
    } else if (below) { /* an upper bound: the estimate is not resolved */
        table_cell(t, "%s%.3f", le, x.total_j - x.dyn_j + x.upper_j);
        table_cell(t, "%s%.3f", le, x.upper_j);
        table_cell(t, "%.3f", x.sd_j);
    } else {
        table_cell(t, "%.3f", x.total_j);
        table_cell(t, "%.3f", x.dyn_j);
        table_cell(t, "%.3f", x.sd_j);
    }
    if (x.group)
        table_cell(t, "%s (%s)", tw_est_status_name(x.status), x.group);
    else
        table_cell(t, "%s", x.x ? tw_est_status_name(x.status) : "-");
    if (truth && (below || isnan(x.total_j) || isnan(e->true_energy_j)))
        table_cell(t, "-");
    else if (truth)
        table_cell(t, "%+.2f", 100.0 * (x.total_j / e->true_energy_j - 1.0));
    return TW_OK;
}

static tw_status profile_text(const tw_analysis *a, const report_profile *pr, FILE *f)
{
    if (!pr->m) {
        fprintf(f, "\nby the sensor profile: %s (%s)\n", pr->note ? pr->note : "no estimate", pr->source);
        return TW_OK;
    }
    char r[256];
    reading_text(pr, r, sizeof r);
    fprintf(f, "\nby the sensor profile: %s from %s\n", r, pr->source);
    if (!pr->est) {
        fprintf(f, "no estimate: %s\n", pr->note ? pr->note : "?");
        return TW_OK;
    }
    estimator_text(pr, f);
    bool truth = any_truth(a);
    const char *head[9];
    size_t nc = 0;
    head[nc++] = "event";
    head[nc++] = "start_s";
    head[nc++] = "end_s";
    if (truth) head[nc++] = "truth_j";
    head[nc++] = "model_total_j";
    head[nc++] = "model_dynamic_j";
    head[nc++] = "sd_j";
    head[nc++] = "status";
    if (truth) head[nc++] = "model_err_%";
    rows_ctx c = {.a = a, .t = table_new_streamed(nc, head), .truth = truth, .pr = pr};
    if (!c.t) return tw_fail(TW_ENOMEM, "out of memory");
    tw_status st = tw_analysis_each(a, profile_row, &c); /* the widths */
    if (st == TW_OK) st = print_rows(a, &c, profile_row, NULL, f);
    table_free(c.t);
    return st;
}

static tw_status report_analysis_text(const tw_analysis *a, const report_context *ctx, const report_profile *pr,
                                      FILE *f)
{
    fprintf(f, "trace      %s\n", ctx->trace);
    fprintf(f, "reading    %s: %llu samples, %llu distinct readings (repeats within %.3g ms dropped), %.3f .. %.3f s\n",
            ctx->reading, (unsigned long long)tw_analysis_samples_read(a),
            (unsigned long long)tw_analysis_samples_kept(a), ctx->dedup_gap_s * 1e3, tw_analysis_start_s(a),
            tw_analysis_end_s(a));
    if (tw_analysis_capacitance_fitted(a))
        fprintf(f, "sensor     RC model, C = %.4f s, fitted from the longest event (residual %.3f W rms)\n",
                tw_analysis_capacitance_s(a), tw_analysis_fit_rms_w(a));
    else
        fprintf(f, "sensor     RC model, C = %.4f s (%s)\n", tw_analysis_capacitance_s(a),
                ctx->capacitance_given ? "given" : "K20 default; --fit-capacitance fits it");
    fprintf(f, "levels     idle %.2f W (%s), active idle %.2f W (%s)\n", tw_analysis_idle_w(a),
            ctx->idle_given ? "given" : "estimated", tw_analysis_active_idle_w(a),
            ctx->active_idle_given ? "given" : "estimated");
    if (ctx->events_detected)
        fprintf(f, "events     none given: %zu activity regions detected from the corrected power\n",
                tw_analysis_event_count(a));
    tw_status st = event_tables(a, f);
    if (st == TW_OK && pr) st = profile_text(a, pr, f);
    if (st == TW_OK && ctx->corrected_path) fprintf(f, "\ncorrected series written to %s\n", ctx->corrected_path);
    return st;
}

static void json_split(json *j, const char *key, tw_energy_split s)
{
    json_key(j, key);
    json_begin_object(j);
    json_kv_number(j, "idle_j", s.idle_j);
    json_kv_number(j, "active_idle_j", s.active_idle_j);
    json_kv_number(j, "dynamic_j", s.dynamic_j);
    json_end_object(j);
}

static void estimator_json(json *j, const tw_estimate *est)
{
    json_key(j, "readings");
    json_begin_array(j);
    for (size_t r = 0; est && r < est->nreadings; r++) {
        const tw_est_reading_stats *s = &est->readings[r];
        json_begin_object(j);
        json_kv_string(j, "name", s->name);
        json_kv_uint(j, "windows", s->used);
        json_kv_bool(j, "reference", !strcmp(s->name, est->reference));
        json_kv_number(j, "gain", s->gain);
        json_kv_number(j, "noise_w", s->noise_w);
        json_end_object(j);
    }
    json_end_array(j);
    json_kv_time(j, "fit_t0_s", est ? est->fit_t0_s : NAN);
    json_kv_time(j, "fit_t1_s", est ? est->fit_t1_s : NAN);
    json_kv_number(j, "baseline_w", est ? est->baseline_mean_w : NAN);
    json_kv_number(j, "baseline_min_w", est ? est->baseline_min_w : NAN);
    json_kv_number(j, "baseline_max_w", est ? est->baseline_max_w : NAN);
    json_kv_number(j, "baseline_j", est ? est->baseline_j : NAN);
    json_kv_number(j, "model_j", est ? est->model_j : NAN);
    json_kv_string(j, "reference", est ? est->reference : NULL);
    json_kv_number(j, "reference_j", est ? est->reference_j : NAN);
    json_kv_number(j, "conservation_pct", est ? est->conservation_pct : NAN);
    json_key(j, "warnings");
    json_begin_array(j);
    for (const char *w = est ? est->warnings : ""; *w;) {
        const char *nl = strchr(w, '\n');
        size_t len = nl ? (size_t)(nl - w) : strlen(w);
        char line[1024];
        snprintf(line, sizeof line, "%.*s", (int)len, w);
        json_string(j, line);
        w += len + (nl ? 1 : 0);
    }
    json_end_array(j);
}

static tw_status profile_event_json(void *ctx, size_t i, const tw_event *e, const tw_event_energy *r)
{
    (void)r;
    rows_ctx *c = ctx;
    json *j = c->j;
    event_est x = event_estimate(c->pr, i, e);
    json_begin_object(j);
    json_kv_string(j, "name", e->name);
    json_kv_time(j, "start_s", e->start_s);
    json_kv_time(j, "end_s", e->end_s);
    json_kv_number(j, "model_total_j", x.total_j);
    json_kv_number(j, "model_dynamic_j", x.dyn_j);
    json_kv_number(j, "model_dynamic_sd_j", x.sd_j);
    json_kv_string(j, "status", x.x ? tw_est_status_name(x.status) : NULL);
    json_kv_number(j, "upper_j", tw_est_status_one_sided(x.status) ? x.upper_j : NAN);
    json_kv_string(j, "group", x.group);
    json_end_object(j);
    return TW_OK;
}

static tw_status profile_json(json *j, const tw_analysis *a, const report_profile *pr)
{
    const tw_reading_model *m = pr->m;
    json_key(j, "profile");
    json_begin_object(j);
    json_kv_string(j, "source", pr->source);
    json_kv_string(j, "reading", m ? pr->column : NULL);
    json_kv_string(j, "response", m ? tw_response_name(m->response) : NULL);
    json_kv_number(j, "period_s", m ? m->period_s : NAN);
    json_kv_number(j, "window_s", m ? m->window_s : NAN);
    json_kv_number(j, "delay_s", m ? m->delay_s : NAN);
    json_kv_number(j, "capacitance_s", m ? m->capacitance_s : NAN);
    json_kv_number(j, "coverage", m ? m->coverage : NAN);
    json_kv_string(j, "note", pr->note);
    json_kv_uint(j, "observations", pr->est && pr->est->nreadings ? pr->est->readings[0].used : 0);
    estimator_json(j, pr->est);
    json_key(j, "events");
    json_begin_array(j);
    rows_ctx c = {.a = a, .pr = pr, .j = j};
    tw_status st = pr->est ? tw_analysis_each(a, profile_event_json, &c) : TW_OK;
    json_end_array(j);
    json_end_object(j);
    return st;
}

static tw_status event_json(void *ctx, size_t i, const tw_event *e, const tw_event_energy *r)
{
    (void)i;
    json *j = ((rows_ctx *)ctx)->j;
    json_begin_object(j);
    json_kv_string(j, "name", e->name);
    json_kv_time(j, "start_s", e->start_s);
    json_kv_time(j, "end_s", e->end_s);
    json_kv_number(j, "true_energy_j", e->true_energy_j);
    json_key(j, "energy_j");
    json_begin_object(j);
    for (int m = 0; m < TW_METHOD_COUNT; m++)
        json_kv_number(j, tw_method_name((tw_method)m), r->energy_j[m]);
    json_end_object(j);
    json_split(j, "split", r->split);
    json_end_object(j);
    return TW_OK;
}

static tw_status report_analysis_json_fields(json *j, const tw_analysis *a, const report_context *ctx,
                                             const report_profile *pr)
{
    json_kv_string(j, "trace", ctx->trace);
    json_kv_string(j, "reading", ctx->reading);
    json_kv_uint(j, "samples_read", tw_analysis_samples_read(a));
    json_kv_uint(j, "samples_kept", tw_analysis_samples_kept(a));
    json_kv_time(j, "start_s", tw_analysis_start_s(a));
    json_kv_time(j, "end_s", tw_analysis_end_s(a));
    json_kv_string(j, "model", "rc");
    json_kv_number(j, "capacitance_s", tw_analysis_capacitance_s(a));
    json_kv_bool(j, "capacitance_fitted", tw_analysis_capacitance_fitted(a));
    json_kv_number(j, "fit_rms_w", tw_analysis_fit_rms_w(a));
    json_kv_number(j, "idle_w", tw_analysis_idle_w(a));
    json_kv_number(j, "active_idle_w", tw_analysis_active_idle_w(a));
    json_kv_bool(j, "events_detected", ctx->events_detected);
    json_kv_number(j, "total_energy_j", tw_analysis_total_energy_j(a));
    json_split(j, "total_split", tw_analysis_total_split(a));
    json_key(j, "events");
    json_begin_array(j);
    rows_ctx c = {.a = a, .j = j};
    tw_status st = tw_analysis_each(a, event_json, &c);
    json_end_array(j);
    json_key(j, "methods");
    json_begin_object(j);
    for (int m = 0; m < TW_METHOD_COUNT; m++)
        json_kv_string(j, tw_method_name((tw_method)m), tw_method_description((tw_method)m));
    json_end_object(j);
    json_kv_string(j, "corrected_series", ctx->corrected_path);
    if (st == TW_OK && pr) st = profile_json(j, a, pr);
    return st;
}

/* ---------------------------------------------------------------- the sensor profile */

typedef struct in_trace_ctx {
    tw_sensor *src;
    const char *prefix;
} in_trace_ctx;

/* A reading of the board's power that the trace has (with the prefix). */
static bool in_trace(const char *name, void *ctx)
{
    const in_trace_ctx *c = ctx;
    if (!tw_identify_board_reading(name, NULL)) return false;
    char full[160];
    snprintf(full, sizeof full, "%s%s", c->prefix, name);
    size_t idx;
    bool ok = tw_sensor_find(c->src, full, &idx) == TW_OK;
    tw_clear_error();
    return ok;
}

struct tw_analysis_profile {
    tw_profile p;
    char how[1200];
    int gpu_index;
    bool have; /* a profile applies */
    char column[160];
    char note[768];
    char counter[160];
    tw_estimate *est;
    tw_obs_series obs[2]; /* the best reading's windows, the counter's */
    report_profile r;
};
typedef struct tw_analysis_profile profile_work;

/* The energy counter of the trace (with the prefix) under the profile's
 * model of it, as the estimator's reference: NULL when either is missing. */
static const tw_reading_model *counter_model(tw_sensor *src, const tw_profile *p, const char *prefix, size_t *idx)
{
    const tw_reading_model *cm = tw_profile_find(p, "energy_j");
    char full[160];
    snprintf(full, sizeof full, "%senergy_j", prefix);
    if (!cm || cm->response != TW_RESP_COUNTER || tw_sensor_find(src, full, idx) != TW_OK) {
        tw_clear_error();
        return NULL;
    }
    return cm;
}

/* Each event's energy by the estimator (estimate/estimator.h) on the
 * profile's best reading the trace has, with the energy counter as the
 * reference total when the trace has it. */
static tw_status profile_estimate(tw_sensor *src, const tw_analysis *an, profile_work *w, const volatile int *cancel)
{
    report_profile *r = &w->r;
    *r = (report_profile){.source = w->how, .column = w->column};
    char prefix[32] = "";
    in_trace_ctx c = {src, prefix};
    const tw_reading_model *m = tw_profile_best(&w->p, in_trace, &c);
    if (!m) { /* a trace of several GPUs: their columns carry a prefix */
        snprintf(prefix, sizeof prefix, "gpu%d_", w->gpu_index);
        m = tw_profile_best(&w->p, in_trace, &c);
    }
    if (!m) {
        snprintf(w->note, sizeof w->note, "none of the profile's readings of the board's power is in the trace");
        r->note = w->note;
        return TW_OK;
    }
    r->m = m;
    snprintf(w->column, sizeof w->column, "%s%s", prefix, m->name);
    size_t idx, cidx;
    tw_est_reading rd[2];
    size_t nrd = 0;
    tw_obs_series_init(&w->obs[0]);
    tw_obs_series_init(&w->obs[1]);
    tw_status st = tw_sensor_find(src, w->column, &idx);
    if (st == TW_OK) st = tw_observe(src, idx, m, true, &w->obs[0]);
    if (st == TW_OK) {
        bool is_counter = m->response == TW_RESP_COUNTER;
        rd[nrd++] = (tw_est_reading){w->column, w->obs[0].v, w->obs[0].n, is_counter, w->obs[0].tau_s};
        const tw_reading_model *cm = is_counter ? NULL : counter_model(src, &w->p, prefix, &cidx);
        if (cm) {
            snprintf(w->counter, sizeof w->counter, "%senergy_j", prefix);
            st = tw_observe(src, cidx, cm, true, &w->obs[1]);
            if (st == TW_OK) rd[nrd++] = (tw_est_reading){w->counter, w->obs[1].v, w->obs[1].n, true, w->obs[1].tau_s};
        }
    }
    const tw_feed *feed = tw_analysis_feed(an); /* set by every analysis made (its events, or the regions found) */
    if (st == TW_OK && !feed) st = tw_fail(TW_EINVAL, "tw_analysis_profile_estimate: an analysis without its events");
    if (st == TW_OK) {
        tw_est_config cfg;
        tw_est_config_init(&cfg);
        cfg.cancel = cancel;
        st = tw_estimate_feed(rd, nrd, feed, &cfg, &w->est); /* names borrowed from the analysis's events */
    }
    if (st == TW_OK) {
        r->est = w->est;
    } else if (st != TW_ENOMEM && st != TW_EINTERRUPTED) { /* the section says why; the analysis stands */
        snprintf(w->note, sizeof w->note, "%s", tw_last_error()[0] ? tw_last_error() : tw_strerror(st));
        r->note = w->note;
        tw_clear_error();
        st = TW_OK;
    }
    return st;
}

tw_status tw_analysis_profile_open(const char *profile, const char *trace, void (*note)(void *ctx, const char *text),
                                   void *note_ctx, tw_analysis_profile **out)
{
    if (!out || (!profile && !trace)) return tw_fail(TW_EINVAL, "tw_analysis_profile_open: no profile and no trace");
    *out = NULL;
    profile_work *w = calloc(1, sizeof *w);
    if (!w) return tw_fail(TW_ENOMEM, "out of memory");
    tw_profile_init(&w->p);
    tw_obs_series_init(&w->obs[0]);
    tw_obs_series_init(&w->obs[1]);
    if (profile) {
        tw_status st = tw_profile_pick(profile, NULL, NULL, &w->p, w->how, sizeof w->how);
        if (st != TW_OK) {
            free(w);
            return st;
        }
        w->have = true;
        *out = w;
        return TW_OK;
    }
    char gpu[128], driver[64];
    *out = w;
    if (!tw_trace_gpu(trace, &w->gpu_index, gpu, sizeof gpu, driver, sizeof driver)) return TW_OK;
    tw_status st = tw_profile_pick(NULL, gpu, driver, &w->p, w->how, sizeof w->how);
    if (st == TW_OK)
        w->have = true;
    else if (st != TW_ENOTFOUND)
        tw_notef(note, note_ctx, "warning: no sensor profile section: %s", tw_last_error());
    tw_clear_error();
    return TW_OK;
}

bool tw_analysis_profile_applies(const tw_analysis_profile *w) { return w && w->have; }

tw_status tw_analysis_profile_estimate(tw_analysis_profile *w, tw_sensor *src, const tw_analysis *an,
                                       const volatile int *cancel)
{
    if (!w || !src || !an) return tw_fail(TW_EINVAL, "tw_analysis_profile_estimate: bad argument");
    if (!w->have) return TW_OK;
    return profile_estimate(src, an, w, cancel);
}

void tw_analysis_profile_free(tw_analysis_profile *w)
{
    if (!w) return;
    tw_estimate_free(w->est);
    tw_obs_series_free(&w->obs[0]);
    tw_obs_series_free(&w->obs[1]);
    free(w);
}

void tw_analysis_report_options_init(tw_analysis_report_options *o)
{
    if (!o) return;
    memset(o, 0, sizeof *o);
    o->size = sizeof *o;
}

tw_status tw_analysis_report(const tw_analysis *an, const tw_analysis_profile *w, const tw_analysis_report_options *o,
                             FILE *out)
{
    if (!an || !o || !out || o->size < sizeof *o || !o->trace || !o->reading)
        return tw_fail(TW_EINVAL, "tw_analysis_report: an analysis, initialised options naming the trace and reading");
    report_context ctx = {o->trace,      o->reading,           o->corrected_path, o->dedup_gap_s, o->capacitance_given,
                          o->idle_given, o->active_idle_given, o->events_detected};
    const report_profile *pr = w && w->have ? &w->r : NULL;
    if (!o->json) return report_analysis_text(an, &ctx, pr, out);
    json j;
    json_init(&j, out);
    json_begin_object(&j);
    tw_status st = report_analysis_json_fields(&j, an, &ctx, pr);
    /* names from the files (events, columns) that were not UTF-8: written as U+FFFD, counted here */
    uint64_t replaced = json_replaced(&j);
    json_kv_uint(&j, "invalid_utf8_bytes_replaced", replaced);
    json_end_object(&j);
    json_finish(&j);
    if (replaced)
        tw_notef(o->note, o->note_ctx, "warning: %llu bytes of names that were not UTF-8 written as U+FFFD",
                 (unsigned long long)replaced);
    return st;
}
