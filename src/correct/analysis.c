/* tw_analyze: drives the passes over a rewindable source and answers queries. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "correct/analysis_internal.h"
#include "trace/events_source.h"

static const struct {
    const char *name;
    const char *description;
} methods[TW_METHOD_COUNT] = {
    [TW_METHOD_CORRECTED] =
        {"corrected",
         "Burtscher et al. 2014: repeats dropped, RC lag undone (P + C dP/dt), integrated exactly over the event"},
    [TW_METHOD_RAW_T1_T2] = {"raw_t1_t2", "trapezoid of the raw readings from kernel start to end"},
    [TW_METHOD_RAW_T1_T3] = {"raw_t1_t3", "trapezoid of the raw readings until they reach active idle"},
    [TW_METHOD_RAW_T1_T4] = {"raw_t1_t4", "trapezoid of the raw readings until they reach idle"},
    [TW_METHOD_FIXED_INTERVAL] = {"fixed_interval", "raw readings of t1..t4 placed on equal intervals (Fig. 6)"},
    [TW_METHOD_MEAN_X_RUNTIME] = {"mean_x_runtime", "mean raw reading over the power bump t1..t4 times the runtime"},
    [TW_METHOD_PAPI] = {"papi", "PAPI-style: the last reading at kernel end times the runtime"},
    [TW_METHOD_MTSM] = {"mtsm", "MTSM-style (Arafa Eq. 2): mean of readings within the kernel times the runtime"},
    [TW_METHOD_CORRECTED_SAMPLED] =
        {"corrected_sampled",
         "trapezoid of the corrected samples (symmetric-slope formula): steps smear over +-1 sample"},
};

const char *tw_method_name(tw_method m) { return (unsigned)m < TW_METHOD_COUNT ? methods[m].name : NULL; }

const char *tw_method_description(tw_method m) { return (unsigned)m < TW_METHOD_COUNT ? methods[m].description : NULL; }

void tw_analysis_options_init(tw_analysis_options *o)
{
    o->capacitance_s = NAN;
    o->fit_capacitance = false;
    o->slope_half_width = 1;
    o->dedup_gap_s = TW_DEFAULT_DEDUP_GAP_S;
    o->idle_w = NAN;
    o->active_idle_w = NAN;
    o->corrected_path = NULL;
    o->cancel = NULL;
}

void tw_corr_stream_init(tw_corr_stream *s, double c_s, int half, double gap_s)
{
    tw_dedup_init(&s->dedup, gap_s);
    tw_rc_init(&s->rc, c_s, half);
}

size_t tw_corr_stream_push(tw_corr_stream *s, double t_s, double w, bool *kept, double *t_out, double *raw_out,
                           double *corr_out)
{
    double t1, w1;
    *kept = tw_dedup_run(&s->dedup, &t_s, &w, 1, &t1, &w1) == 1;
    if (!*kept) return 0;
    return tw_rc_run(&s->rc, &t1, &w1, 1, t_out, raw_out, corr_out);
}

size_t tw_corr_stream_finish(tw_corr_stream *s, double *t_out, double *raw_out, double *corr_out)
{
    return tw_rc_finish(&s->rc, t_out, raw_out, corr_out);
}

/* Reads the next valid value of the reading with its own timestamp. */
static tw_status next_sample(tw_sensor *src, size_t reading, double *t, double *w, bool *eof)
{
    for (;;) {
        tw_row row;
        tw_status st = tw_sensor_next(src, &row, eof);
        if (st != TW_OK || *eof) return st;
        if (reading >= row.n || !row.valid[reading]) continue;
        *t = row.t_value_s[reading];
        *w = row.value[reading];
        if (isfinite(*t) && isfinite(*w)) return TW_OK;
    }
}

tw_status tw_run_pass(tw_analysis *a, tw_sensor *src, size_t reading, const tw_pass *pass)
{
    /* Every pass starts at the source's beginning; a live source that cannot
     * rewind is read once, from where it is. */
    tw_status rw = tw_sensor_rewind(src);
    if (rw != TW_OK && (a->source_used || rw != TW_EUNSUPPORTED)) return rw;
    tw_clear_error();
    a->source_used = true;
    tw_corr_stream cs;
    tw_corr_stream_init(&cs, a->c_s, a->opt.slope_half_width, a->opt.dedup_gap_s);
    double to[TW_RC_RING], ro[TW_RC_RING], co[TW_RC_RING];
    double prev_t = -INFINITY;
    uint64_t n_read = 0, n_kept = 0;
    const tw_reading_info *info = tw_sensor_reading(src, reading);
    for (;;) {
        double t, w;
        bool eof, kept;
        tw_status st = next_sample(src, reading, &t, &w, &eof);
        if (st != TW_OK) return st;
        if (eof) break;
        if (a->opt.cancel && *a->opt.cancel) return tw_fail(TW_EINTERRUPTED, "interrupted");
        if (t < prev_t)
            return tw_fail(TW_EORDER, "reading '%s': its timestamps go backwards (%.9g s after %.9g s)",
                           info ? info->name : "?", t, prev_t);
        if (n_read == 0) a->t_start_s = t;
        a->t_end_s = t;
        prev_t = t;
        n_read++;
        if (pass->on_raw && (st = pass->on_raw(pass->ctx, t, w)) != TW_OK) return st;
        size_t k = tw_corr_stream_push(&cs, t, w, &kept, to, ro, co);
        n_kept += kept;
        for (size_t i = 0; i < k && pass->on_corrected; i++)
            if ((st = pass->on_corrected(pass->ctx, to[i], ro[i], co[i])) != TW_OK) return st;
    }
    if (n_read == 0) return tw_fail(TW_EEMPTY, "reading '%s' has no valid samples", info ? info->name : "?");
    size_t k = tw_corr_stream_finish(&cs, to, ro, co);
    for (size_t i = 0; i < k && pass->on_corrected; i++) {
        tw_status st = pass->on_corrected(pass->ctx, to[i], ro[i], co[i]);
        if (st != TW_OK) return st;
    }
    a->n_read = n_read;
    a->n_kept = n_kept;
    return pass->on_end ? pass->on_end(pass->ctx) : TW_OK;
}

static tw_status copy_events(tw_analysis *a, const tw_events *events)
{
    tw_status st = tw_events_new(&a->events);
    if (st != TW_OK) return st;
    size_t n = events ? tw_events_count(events) : 0;
    for (size_t i = 0; i < n; i++)
        if ((st = tw_events_add(a->events, tw_events_get(events, i))) != TW_OK) return st;
    tw_events_sort(a->events);
    return TW_OK;
}

static tw_status check_options(const tw_analysis_options *o)
{
    if (!isnan(o->capacitance_s) && !(o->capacitance_s >= 0 && isfinite(o->capacitance_s)))
        return tw_fail(TW_EINVAL, "capacitance must be a finite number of seconds >= 0, got %g", o->capacitance_s);
    if (o->slope_half_width < 1 || o->slope_half_width > TW_RC_MAX_HALF)
        return tw_fail(TW_EINVAL, "slope half width must be 1..%d, got %d", TW_RC_MAX_HALF, o->slope_half_width);
    if (!(o->dedup_gap_s >= 0)) return tw_fail(TW_EINVAL, "dedup gap must be >= 0 s, got %g", o->dedup_gap_s);
    return TW_OK;
}

/* An event reaching outside the data has no energy by any method (each
 * would be NaN, also when only its end is outside): it is refused, named by
 * its file and line. */
static tw_status check_events_inside(const tw_analysis *a, const tw_events *events)
{
    size_t n = events ? tw_events_count(events) : 0;
    for (size_t i = 0; i < n; i++) {
        const tw_event *e = tw_events_get(events, i);
        if (e->start_s >= a->t_start_s && e->end_s <= a->t_end_s) continue;
        char where[1200];
        tw_events_where(events, i, where, sizeof where);
        return tw_fail(TW_EINVAL, "%s: event '%s' (%.9g .. %.9g s) reaches outside the trace's data (%.9g .. %.9g s)",
                       where, e->name, e->start_s, e->end_s, a->t_start_s, a->t_end_s);
    }
    return TW_OK;
}

static tw_status run_analysis(tw_analysis *a, tw_sensor *src, size_t reading, const tw_events *events)
{
    tw_status st = copy_events(a, events);
    if (st == TW_OK && tw_events_count(a->events) == 0) st = tw_pass_detect_regions(a, src, reading);
    if (st == TW_OK && a->opt.fit_capacitance) st = tw_pass_fit(a, src, reading);
    if (st == TW_OK && (isnan(a->idle_w) || isnan(a->active_idle_w))) st = tw_pass_levels(a, src, reading);
    if (st == TW_OK) st = tw_pass_final(a, src, reading);
    if (st == TW_OK) st = check_events_inside(a, events);
    return st;
}

tw_status tw_analyze(tw_sensor *src, size_t reading, const tw_events *events, const tw_analysis_options *opt,
                     tw_analysis **out)
{
    tw_clear_error();
    if (!src || !out) return tw_fail(TW_EINVAL, "tw_analyze: NULL argument");
    *out = NULL;
    tw_analysis_options defaults;
    if (!opt) {
        tw_analysis_options_init(&defaults);
        opt = &defaults;
    }
    tw_status st = check_options(opt);
    if (st != TW_OK) return st;
    const tw_reading_info *info = tw_sensor_reading(src, reading);
    if (!info) return tw_fail(TW_EINVAL, "no reading number %zu", reading);
    if (info->quantity != TW_Q_POWER)
        return tw_fail(TW_EUNSUPPORTED,
                       "reading '%s' is not a power reading (name it with a _w or _mw suffix); "
                       "energy counters are not analysed by this version",
                       info->name);
    tw_analysis *a = calloc(1, sizeof *a);
    if (!a) return tw_fail(TW_ENOMEM, "out of memory");
    a->opt = *opt;
    a->c_s = isnan(opt->capacitance_s) ? TW_DEFAULT_C_S : opt->capacitance_s;
    a->fit_rms_w = NAN;
    a->idle_w = opt->idle_w;
    a->active_idle_w = opt->active_idle_w;
    st = run_analysis(a, src, reading, events);
    if (st != TW_OK) {
        tw_analysis_free(a);
        return st;
    }
    *out = a;
    return TW_OK;
}

double tw_analysis_capacitance_s(const tw_analysis *a) { return a ? a->c_s : NAN; }
bool tw_analysis_capacitance_fitted(const tw_analysis *a) { return a && a->fitted; }
double tw_analysis_fit_rms_w(const tw_analysis *a) { return a ? a->fit_rms_w : NAN; }
double tw_analysis_idle_w(const tw_analysis *a) { return a ? a->idle_w : NAN; }
double tw_analysis_active_idle_w(const tw_analysis *a) { return a ? a->active_idle_w : NAN; }
uint64_t tw_analysis_samples_read(const tw_analysis *a) { return a ? a->n_read : 0; }
uint64_t tw_analysis_samples_kept(const tw_analysis *a) { return a ? a->n_kept : 0; }
double tw_analysis_start_s(const tw_analysis *a) { return a ? a->t_start_s : NAN; }
double tw_analysis_end_s(const tw_analysis *a) { return a ? a->t_end_s : NAN; }
double tw_analysis_total_energy_j(const tw_analysis *a) { return a ? a->total_j : NAN; }

tw_energy_split tw_analysis_total_split(const tw_analysis *a)
{
    tw_energy_split none = {NAN, NAN, NAN};
    return a ? a->total_split : none;
}

size_t tw_analysis_event_count(const tw_analysis *a) { return a ? tw_events_count(a->events) : 0; }

const tw_event *tw_analysis_event(const tw_analysis *a, size_t i)
{
    return a && i < tw_events_count(a->events) ? tw_events_get(a->events, i) : NULL;
}

double tw_analysis_energy_j(const tw_analysis *a, size_t event, tw_method m)
{
    if (!a || event >= tw_events_count(a->events) || (unsigned)m >= TW_METHOD_COUNT) return NAN;
    return a->res[event].energy_j[m];
}

tw_energy_split tw_analysis_split(const tw_analysis *a, size_t event)
{
    tw_energy_split none = {NAN, NAN, NAN};
    if (!a || event >= tw_events_count(a->events)) return none;
    return a->res[event].split;
}

void tw_analysis_free(tw_analysis *a)
{
    if (!a) return;
    tw_events_free(a->events);
    free(a->res);
    free(a);
}
