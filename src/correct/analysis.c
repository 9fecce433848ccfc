/* tw_analyze: drives the passes over a rewindable source and answers queries. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "correct/analysis_internal.h"
#include "runfile/runfile.h"
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

/* One pass's reading of the source: a sample is read one ahead, so that the
 * events can be handed over between the samples before and after their start. */
typedef struct pump {
    tw_analysis *a;
    tw_sensor *src;
    size_t reading;
    const tw_pass *pass;
    const tw_reading_info *info;
    tw_corr_stream cs;
    double prev_t;
    uint64_t n_read, n_kept;
    bool have_next, eof;
    double next_t, next_w;
    double last_start; /* of the last event handed over */
} pump;

static tw_status pump_open(pump *p, tw_analysis *a, tw_sensor *src, size_t reading, const tw_pass *pass)
{
    /* Every pass starts at the source's beginning; a live source that cannot
     * rewind is read once, from where it is. */
    tw_status rw = tw_sensor_rewind(src);
    if (rw != TW_OK && (a->source_used || rw != TW_EUNSUPPORTED)) return rw;
    tw_clear_error();
    a->source_used = true;
    *p = (pump){.a = a, .src = src, .reading = reading, .pass = pass, .prev_t = -INFINITY, .last_start = -INFINITY};
    p->info = tw_sensor_reading(src, reading);
    tw_corr_stream_init(&p->cs, a->c_s, a->opt.slope_half_width, a->opt.dedup_gap_s);
    return TW_OK;
}

/* Reads the next sample into p->next_t/next_w (p->eof at the end). */
static tw_status pump_read(pump *p)
{
    tw_status st = next_sample(p->src, p->reading, &p->next_t, &p->next_w, &p->eof);
    if (st != TW_OK || p->eof) return st;
    double t = p->next_t;
    if (p->a->opt.cancel && *p->a->opt.cancel) return tw_fail(TW_EINTERRUPTED, "interrupted");
    if (t < p->prev_t)
        return tw_fail(TW_EORDER, "reading '%s': its timestamps go backwards (%.9g s after %.9g s)",
                       p->info ? p->info->name : "?", t, p->prev_t);
    if (p->n_read == 0) p->a->t_start_s = t;
    p->a->t_end_s = t;
    p->prev_t = t;
    p->n_read++;
    p->have_next = true;
    return TW_OK;
}

static tw_status emit_corrected(pump *p, size_t k, const double *to, const double *ro, const double *co)
{
    for (size_t i = 0; i < k && p->pass->on_corrected; i++) {
        tw_status st = p->pass->on_corrected(p->pass->ctx, to[i], ro[i], co[i]);
        if (st != TW_OK) return st;
    }
    return TW_OK;
}

/* The sample read ahead, through the pass. */
static tw_status pump_take(pump *p)
{
    double t = p->next_t, w = p->next_w, to[TW_RC_RING], ro[TW_RC_RING], co[TW_RC_RING];
    bool kept;
    p->have_next = false;
    tw_status st = p->pass->on_raw ? p->pass->on_raw(p->pass->ctx, t, w) : TW_OK;
    if (st != TW_OK) return st;
    size_t k = tw_corr_stream_push(&p->cs, t, w, &kept, to, ro, co);
    p->n_kept += kept;
    return emit_corrected(p, k, to, ro, co);
}

/* Every sample earlier than limit_s (all of them for +inf) through the pass. */
static tw_status pump_before(pump *p, double limit_s)
{
    for (;;) {
        tw_status st = p->have_next || p->eof ? TW_OK : pump_read(p);
        if (st != TW_OK) return st;
        if (p->eof || !(p->next_t < limit_s)) return TW_OK;
        if ((st = pump_take(p)) != TW_OK) return st;
    }
}

/* The rest of the samples, the slope window's last ones, then the pass's end. */
static tw_status pump_finish(pump *p)
{
    tw_status st = pump_before(p, INFINITY);
    if (st != TW_OK) return st;
    if (p->n_read == 0) return tw_fail(TW_EEMPTY, "reading '%s' has no valid samples", p->info ? p->info->name : "?");
    double to[TW_RC_RING], ro[TW_RC_RING], co[TW_RC_RING];
    size_t k = tw_corr_stream_finish(&p->cs, to, ro, co);
    if ((st = emit_corrected(p, k, to, ro, co)) != TW_OK) return st;
    p->a->n_read = p->n_read;
    p->a->n_kept = p->n_kept;
    return p->pass->on_end ? p->pass->on_end(p->pass->ctx) : TW_OK;
}

tw_status tw_run_pass(tw_analysis *a, tw_sensor *src, size_t reading, const tw_pass *pass)
{
    pump p;
    tw_status st = pump_open(&p, a, src, reading, pass);
    return st == TW_OK ? pump_finish(&p) : st;
}

/* A feed's event: the samples before its start (less the pass's lead) go
 * through first, then the event. */
static tw_status pump_event(void *ctx, const tw_event *e)
{
    pump *p = ctx;
    if (!(e->start_s >= p->last_start))
        return tw_fail(TW_EORDER, "event '%s' (%.9g s) starts before the one before it (%.9g s): events go by start",
                       e->name ? e->name : "?", e->start_s, p->last_start);
    p->last_start = e->start_s;
    tw_status st = pump_before(p, e->start_s - p->pass->lead_s);
    return st == TW_OK ? p->pass->on_event(p->pass->ctx, e) : st;
}

tw_status tw_run_pass_with_events(tw_analysis *a, tw_sensor *src, size_t reading, const tw_pass *pass)
{
    pump p;
    tw_status st = pump_open(&p, a, src, reading, pass);
    if (st == TW_OK && a->feed) st = tw_feed_replay_fields(a->feed, pass->fields, pump_event, &p);
    return st == TW_OK ? pump_finish(&p) : st;
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

static tw_status count_event(void *ctx, const tw_event *e)
{
    (void)e;
    ++*(size_t *)ctx;
    return TW_OK;
}

/* No event given: the activity regions detected from the trace, fed from memory. */
static tw_status detect_regions(tw_analysis *a, tw_sensor *src, size_t reading)
{
    tw_status st = tw_events_new(&a->regions);
    if (st == TW_OK) st = tw_pass_detect_regions(a, src, reading);
    if (st != TW_OK) return st;
    a->region_feed = tw_feed_of_events(a->regions);
    a->feed = &a->region_feed;
    a->n_events = tw_events_count(a->regions);
    return TW_OK;
}

static tw_status keep_close(tw_analysis *a);

/* The passes: the events (or regions), the capacitance fit, the levels, then
 * the final integration, which hands each event's energies over. */
static tw_status run_analysis(tw_analysis *a, tw_sensor *src, size_t reading)
{
    tw_status st = a->feed ? tw_feed_replay_fields(a->feed, TW_FEED_SPAN, count_event, &a->n_events) : TW_OK;
    if (st == TW_OK && a->n_events == 0) st = detect_regions(a, src, reading);
    if (st == TW_OK && a->opt.fit_capacitance) st = tw_pass_fit(a, src, reading);
    if (st == TW_OK && (isnan(a->idle_w) || isnan(a->active_idle_w))) st = tw_pass_levels(a, src, reading);
    if (st == TW_OK) st = tw_pass_final(a, src, reading);
    if (st == TW_OK && a->keep) st = keep_close(a);
    return st;
}

/* The checks of the arguments and options, and a fresh analysis of them. */
static tw_status analysis_new(tw_sensor *src, size_t reading, const tw_analysis_options *opt, tw_analysis **out)
{
    tw_clear_error();
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
    *out = a;
    return TW_OK;
}

struct tw_event_feed {
    tw_feed feed;
    tw_run_feed *run;    /* NULL for a set's */
    const tw_events *ev; /* a set's: where its events came from */
    char *path;          /* a run's file */
};

tw_status tw_event_feed_of_events(const tw_events *ev, tw_event_feed **out)
{
    if (!ev || !out) return tw_fail(TW_EINVAL, "tw_event_feed_of_events: NULL argument");
    *out = calloc(1, sizeof **out);
    if (!*out) return tw_fail(TW_ENOMEM, "out of memory");
    (*out)->feed = tw_feed_of_events(ev);
    (*out)->ev = ev;
    return TW_OK;
}

tw_status tw_event_feed_of_run(tw_run *r, tw_event_feed **out)
{
    if (!r || !out) return tw_fail(TW_EINVAL, "tw_event_feed_of_run: NULL argument");
    *out = calloc(1, sizeof **out);
    if (!*out) return tw_fail(TW_ENOMEM, "out of memory");
    (*out)->path = strdup(tw_run_path(r));
    tw_status st = (*out)->path ? TW_OK : tw_fail(TW_ENOMEM, "out of memory");
    if (st == TW_OK) st = tw_run_feed_open(r, &(*out)->run, &(*out)->feed);
    if (st != TW_OK) {
        tw_event_feed_free(*out);
        *out = NULL;
    }
    return st;
}

void tw_event_feed_free(tw_event_feed *f)
{
    if (!f) return;
    tw_run_feed_free(f->run);
    free(f->path);
    free(f);
}

/* "PATH:LINE" of a set's event i, else the run file's path. */
static void feed_where(const tw_event_feed *f, size_t i, char *buf, size_t cap)
{
    if (f->ev)
        tw_events_where(f->ev, i, buf, cap);
    else
        snprintf(buf, cap, "%s", f->path ? f->path : "?");
}

/* An event reaching outside the data has no energy by any method (each
 * would be NaN, also when only its end is outside): it is refused, named by
 * where it came from (`where`: its file and line). */
static tw_status refuse_outside(const tw_analysis *a, const tw_event *e, const char *where)
{
    return tw_fail(TW_EINVAL, "%s: event '%s' (%.9g .. %.9g s) reaches outside the trace's data (%.9g .. %.9g s)",
                   where, e->name, e->start_s, e->end_s, a->t_start_s, a->t_end_s);
}

/* ---------------------------------------------------------------- the energies kept */

#define KEEP_BLOCK 1024 /* records of the latest indices held before they go to the file */

static tw_status keep_open(tw_analysis *a)
{
    a->keep = true;
    a->res.fd = -1; /* not open yet */
    a->cached_i = SIZE_MAX;
    a->blk = malloc(KEEP_BLOCK * sizeof *a->blk);
    a->blk_set = calloc(KEEP_BLOCK, sizeof *a->blk_set);
    if (!a->blk || !a->blk_set) return tw_fail(TW_ENOMEM, "out of memory");
    return tw_spill_open(&a->res, sizeof(tw_event_energy));
}

/* The block's records into the file, a run of consecutive ones at a time. */
static tw_status keep_flush(tw_analysis *a)
{
    tw_status st = TW_OK;
    for (size_t j = 0; j < KEEP_BLOCK && st == TW_OK;) {
        if (!a->blk_set[j]) {
            j++;
            continue;
        }
        size_t k = j;
        while (k < KEEP_BLOCK && a->blk_set[k])
            a->blk_set[k++] = false;
        st = tw_spill_write(&a->res, a->blk_base + j, &a->blk[j], k - j);
        j = k;
    }
    return st;
}

tw_status tw_analysis_keep(tw_analysis *a, size_t i, const tw_event_energy *r)
{
    if (i < a->blk_base) return tw_spill_write(&a->res, i, r, 1); /* behind the block (a long event) */
    if (i >= a->blk_base + KEEP_BLOCK) {
        tw_status st = keep_flush(a);
        if (st != TW_OK) return st;
        a->blk_base = i / KEEP_BLOCK * KEEP_BLOCK;
    }
    a->blk[i - a->blk_base] = *r;
    a->blk_set[i - a->blk_base] = true;
    return TW_OK;
}

/* After the final pass: every record in the file. */
static tw_status keep_close(tw_analysis *a)
{
    tw_status st = keep_flush(a);
    a->res.n = a->n_events;
    free(a->blk);
    free(a->blk_set);
    a->blk = NULL;
    a->blk_set = NULL;
    return st;
}

/* Event i's record (NULL when there is none, or on a read error). Not for two threads at once. */
static const tw_event_energy *kept(const tw_analysis *a, size_t i)
{
    if (!a || !a->keep || a->blk || i >= a->n_events) return NULL;
    tw_analysis *w = (tw_analysis *)a; /* the one-record cache */
    if (w->cached_i != i) {
        w->cached_i = SIZE_MAX;
        if (tw_spill_read(&w->res, i, &w->cached, 1) != TW_OK) return NULL;
        w->cached_i = i;
    }
    return &w->cached;
}

typedef struct each_ctx {
    tw_spill_reader rd;
    size_t i;
    tw_analysis_event_fn fn;
    void *ctx;
} each_ctx;

static tw_status each_event(void *ctx, const tw_event *e)
{
    each_ctx *c = ctx;
    tw_status st = TW_OK;
    c->rd.pos = c->i;
    const tw_event_energy *r = tw_spill_peek(&c->rd, &st);
    if (!r) return st != TW_OK ? st : tw_fail(TW_EIO, "the analysis's energies: fewer than its events");
    return c->fn(c->ctx, c->i++, e, r);
}

tw_status tw_analysis_each(const tw_analysis *a, tw_analysis_event_fn fn, void *ctx)
{
    if (!a || !a->keep || a->blk) return tw_fail(TW_EINVAL, "tw_analysis_each: not an analysis that kept its energies");
    if (!a->feed || a->n_events == 0) return TW_OK;
    each_ctx c = {.i = 0, .fn = fn, .ctx = ctx};
    tw_spill_reader_open(&c.rd, &a->res);
    tw_status st = tw_feed_replay(a->feed, each_event, &c);
    tw_spill_reader_close(&c.rd);
    return st;
}

const tw_feed *tw_analysis_feed(const tw_analysis *a) { return a ? a->feed : NULL; }

tw_status tw_analyze_stream(tw_sensor *src, size_t reading, const tw_event_feed *events, const tw_analysis_options *opt,
                            tw_analysis_event_fn fn, void *ctx, tw_analysis **out)
{
    if (!src || !out) return tw_fail(TW_EINVAL, "tw_analyze_stream: NULL argument");
    *out = NULL;
    tw_analysis *a = NULL;
    tw_status st = analysis_new(src, reading, opt, &a);
    if (st != TW_OK) return st;
    a->feed = events ? &events->feed : NULL;
    a->on_event = fn;
    a->on_event_ctx = ctx;
    if (!fn) st = keep_open(a);
    if (st == TW_OK) st = run_analysis(a, src, reading);
    if (st == TW_OK && !fn && a->outside_any && events) { /* kept: refused, as tw_analyze does */
        char where[1200];
        feed_where(events, a->outside_index, where, sizeof where);
        st = refuse_outside(a, &a->outside, where);
    }
    if (st != TW_OK) {
        tw_analysis_free(a);
        return st;
    }
    *out = a;
    return TW_OK;
}

/* ---------------------------------------------------------------- tw_analyze: the stream, collected */

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

/* Refused when an event reaches outside the data: the first in the given
 * set's order, named by its file and line. */
static tw_status check_events_inside(const tw_analysis *a, const tw_events *events)
{
    size_t n = events ? tw_events_count(events) : 0;
    for (size_t i = 0; i < n; i++) {
        const tw_event *e = tw_events_get(events, i);
        if (e->start_s >= a->t_start_s && e->end_s <= a->t_end_s) continue;
        char where[1200];
        tw_events_where(events, i, where, sizeof where);
        return refuse_outside(a, e, where);
    }
    return TW_OK;
}

tw_status tw_analyze(tw_sensor *src, size_t reading, const tw_events *events, const tw_analysis_options *opt,
                     tw_analysis **out)
{
    if (!src || !out) return tw_fail(TW_EINVAL, "tw_analyze: NULL argument");
    *out = NULL;
    tw_analysis *a = NULL;
    tw_status st = analysis_new(src, reading, opt, &a);
    if (st != TW_OK) return st;
    st = copy_events(a, events);
    if (st == TW_OK) {
        a->own_feed = tw_feed_of_events(a->events);
        a->feed = &a->own_feed;
        st = keep_open(a);
    }
    if (st == TW_OK) st = run_analysis(a, src, reading);
    if (st == TW_OK && a->regions) { /* the regions detected are the analysis's events */
        tw_events_free(a->events);
        a->events = a->regions;
        a->regions = NULL;
        a->own_feed = tw_feed_of_events(a->events);
        a->feed = &a->own_feed;
    }
    if (st == TW_OK) st = check_events_inside(a, events);
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

size_t tw_analysis_event_count(const tw_analysis *a) { return a ? a->n_events : 0; }

/* Per-event figures: kept by tw_analyze (its events too) and tw_analyze_stream without fn. */
const tw_event *tw_analysis_event(const tw_analysis *a, size_t i)
{
    return a && a->events && i < tw_events_count(a->events) ? tw_events_get(a->events, i) : NULL;
}

double tw_analysis_energy_j(const tw_analysis *a, size_t event, tw_method m)
{
    const tw_event_energy *r = (unsigned)m < TW_METHOD_COUNT ? kept(a, event) : NULL;
    return r ? r->energy_j[m] : NAN;
}

tw_energy_split tw_analysis_split(const tw_analysis *a, size_t event)
{
    tw_energy_split none = {NAN, NAN, NAN};
    const tw_event_energy *r = kept(a, event);
    return r ? r->split : none;
}

void tw_analysis_free(tw_analysis *a)
{
    if (!a) return;
    tw_events_free(a->events);
    tw_events_free(a->regions);
    if (a->keep) tw_spill_close(&a->res);
    free(a->blk);
    free(a->blk_set);
    free(a);
}
