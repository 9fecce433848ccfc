/* Energy per kernel name: intervals of known energy, an idle level, and the
 * energy above it shared among the kernels active in each interval. */
#include "attrib/kernels.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "correct/observe.h"

#define NO_COL ((size_t)-1)
/* The energy counter's own update period (H100: ~100 ms, sensors-h100.md). A
 * value first seen at a poll was published at the counter's last update
 * before it: within the last update period, and after the poll before. */
#define COUNTER_UPDATE_S 0.1

const char *tw_attrib_source_name(tw_attrib_source s)
{
    switch (s) {
    case TW_ATTRIB_BUFFER:
        return "sample buffer";
    case TW_ATTRIB_COUNTER:
        return "energy counter";
    case TW_ATTRIB_TRAPEZOID:
        return "trapezoid (fallback)";
    case TW_ATTRIB_MODEL:
        return "profile model";
    }
    return "?";
}

void tw_attrib_options_init(tw_attrib_options *o)
{
    o->prefix = "";
    o->device = -1;
    o->cancel = NULL;
    o->model = NULL;
}

tw_attrib_class tw_attrib_classify(const tw_event *e, int device)
{
    const char *k = e->kind;
    tw_attrib_class c;
    if (!k || !*k || strcmp(k, "kernel") == 0)
        c = TW_ACT_KERNEL;
    else if (strcmp(k, "memcpy") == 0 || strcmp(k, "memset") == 0)
        c = TW_ACT_COPY;
    else if (strcmp(k, "nvtx") == 0)
        return TW_ACT_NVTX; /* host ranges: any device */
    else
        return TW_ACT_IGNORED;
    if (device >= 0 && e->device >= 0 && e->device != device) return TW_ACT_IGNORED;
    return c;
}

static void warn(tw_attrib *a, const char *text)
{
    size_t len = strlen(a->warnings);
    snprintf(a->warnings + len, sizeof a->warnings - len, "%s\n", text);
}

void tw_attrib_free(tw_attrib *a)
{
    if (!a) return;
    free(a->kernels);
    free(a->copies);
    free(a->ranges);
    free(a->event_energy_j);
    free(a);
}

static tw_attrib *attrib_new(void)
{
    tw_attrib *a = calloc(1, sizeof *a);
    if (!a) return NULL;
    a->counter_j = a->buffer_j = a->trap_usage_j = a->trap_instant_j = a->mtsm_j = a->rc_k20_j = NAN;
    a->check_pct = NAN;
    a->idle_w = NAN;
    a->idle_basis = "";
    return a;
}

/* ---------------------------------------------------------------- the attribution */

typedef struct ev_ref {
    const tw_event *e;
    size_t idx; /* in the input */
    tw_attrib_class cls;
} ev_ref;

static int by_start(const void *x, const void *y)
{
    const ev_ref *a = x, *b = y;
    if (a->e->start_s != b->e->start_s) return a->e->start_s < b->e->start_s ? -1 : 1;
    return a->idx < b->idx ? -1 : a->idx > b->idx;
}

static int by_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}

static double median(double *v, size_t n)
{
    if (n == 0) return NAN;
    qsort(v, n, sizeof *v, by_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* A sweep over events sorted by start: the ones overlapping each interval in turn. */
typedef struct sweep {
    const ev_ref *ev;
    size_t n, next;
    size_t *active;
    size_t nactive;
} sweep;

static void sweep_advance(sweep *w, double t0, double t1)
{
    while (w->next < w->n && w->ev[w->next].e->start_s < t1)
        w->active[w->nactive++] = w->next++;
    size_t keep = 0;
    for (size_t i = 0; i < w->nactive; i++)
        if (w->ev[w->active[i]].e->end_s > t0) w->active[keep++] = w->active[i];
    w->nactive = keep;
}

static double overlap(const tw_event *e, double t0, double t1)
{
    double lo = e->start_s > t0 ? e->start_s : t0;
    double hi = e->end_s < t1 ? e->end_s : t1;
    return hi > lo ? hi - lo : 0.0;
}

/* Splits the events into activities (kernels, copies) and NVTX ranges, sorted by start. */
static tw_status collect(const tw_events *events, int device, ev_ref **act, size_t *nact, ev_ref **rng, size_t *nrng)
{
    size_t n = tw_events_count(events);
    *act = calloc(n ? n : 1, sizeof **act);
    *rng = calloc(n ? n : 1, sizeof **rng);
    if (!*act || !*rng) return tw_fail(TW_ENOMEM, "out of memory");
    *nact = *nrng = 0;
    for (size_t i = 0; i < n; i++) {
        const tw_event *e = tw_events_get(events, i);
        tw_attrib_class c = tw_attrib_classify(e, device);
        ev_ref r = {e, i, c};
        if (c == TW_ACT_KERNEL || c == TW_ACT_COPY)
            (*act)[(*nact)++] = r;
        else if (c == TW_ACT_NVTX)
            (*rng)[(*nrng)++] = r;
    }
    qsort(*act, *nact, sizeof **act, by_start);
    qsort(*rng, *nrng, sizeof **rng, by_start);
    return TW_OK;
}

/* The idle level: median power of the intervals without activity after the
 * first activity starts; else before it; else of all intervals. */
static tw_status idle_level(tw_attrib *a, const tw_attrib_interval *iv, size_t n, const ev_ref *act, size_t nact)
{
    double first = nact ? act[0].e->start_s : INFINITY;
    double *after = malloc((n ? n : 1) * sizeof *after);
    double *before = malloc((n ? n : 1) * sizeof *before);
    size_t *active = malloc((nact ? nact : 1) * sizeof *active);
    if (!after || !before || !active) {
        free(after);
        free(before);
        free(active);
        return tw_fail(TW_ENOMEM, "out of memory");
    }
    size_t na = 0, nb = 0;
    sweep w = {act, nact, 0, active, 0};
    for (size_t k = 0; k < n; k++) {
        double dt = iv[k].t1_s - iv[k].t0_s;
        if (!(dt > 0)) continue;
        sweep_advance(&w, iv[k].t0_s, iv[k].t1_s);
        double busy = 0;
        for (size_t i = 0; i < w.nactive; i++)
            busy += overlap(act[w.active[i]].e, iv[k].t0_s, iv[k].t1_s);
        if (busy > 0) continue;
        double p = iv[k].energy_j / dt;
        if (iv[k].t0_s >= first)
            after[na++] = p;
        else
            before[nb++] = p;
    }
    if (na) {
        a->idle_w = median(after, na);
        a->idle_basis = "median power of the intervals without kernels after the first kernel started";
    } else if (nb && nact) {
        a->idle_w = median(before, nb);
        a->idle_basis = "median power of the intervals before the first kernel (none without kernels after it)";
    } else {
        for (size_t k = 0; k < n; k++)
            after[k] = iv[k].t1_s > iv[k].t0_s ? iv[k].energy_j / (iv[k].t1_s - iv[k].t0_s) : 0;
        a->idle_w = median(after, n);
        a->idle_basis = nact ? "median power of all intervals (no interval without kernels)"
                             : "median power of all intervals (no kernels)";
    }
    free(after);
    free(before);
    free(active);
    return TW_OK;
}

static int by_class_name(const void *x, const void *y)
{
    const ev_ref *a = x, *b = y;
    if (a->cls != b->cls) return a->cls < b->cls ? -1 : 1;
    int c = strcmp(a->e->name, b->e->name);
    if (c) return c;
    return a->idx < b->idx ? -1 : a->idx > b->idx;
}

static int by_energy(const void *x, const void *y)
{
    const tw_attrib_name *a = x, *b = y;
    if (a->energy_j != b->energy_j) return a->energy_j > b->energy_j ? -1 : 1;
    return strcmp(a->name, b->name);
}

static const char *copy_kind(const tw_event *e) { return e->kind && *e->kind ? e->kind : "kernel"; }

/* Per-name tables of kernels and copies, from the per-event energies. */
static tw_status tables(tw_attrib *a, ev_ref *act, size_t nact)
{
    qsort(act, nact, sizeof *act, by_class_name);
    a->kernels = calloc(nact ? nact : 1, sizeof *a->kernels);
    a->copies = calloc(nact ? nact : 1, sizeof *a->copies);
    if (!a->kernels || !a->copies) return tw_fail(TW_ENOMEM, "out of memory");
    double total = a->kernels_j + a->copies_j;
    for (size_t i = 0; i < nact;) {
        size_t j = i;
        bool copy = act[i].cls == TW_ACT_COPY;
        tw_attrib_name *t = copy ? &a->copies[a->ncopies++] : &a->kernels[a->nkernels++];
        t->name = act[i].e->name;
        t->kind = copy_kind(act[i].e);
        while (j < nact && act[j].cls == act[i].cls && strcmp(act[j].e->name, act[i].e->name) == 0) {
            t->launches++;
            t->time_s += act[j].e->end_s - act[j].e->start_s;
            t->energy_j += a->event_energy_j[act[j].idx];
            j++;
        }
        t->power_w = t->time_s > 0 ? t->energy_j / t->time_s : NAN;
        t->share = total != 0 ? t->energy_j / total : NAN;
        i = j;
    }
    qsort(a->kernels, a->nkernels, sizeof *a->kernels, by_energy);
    qsort(a->copies, a->ncopies, sizeof *a->copies, by_energy);
    return TW_OK;
}

static tw_status attribute(tw_attrib *a, const tw_attrib_interval *iv, size_t n, const tw_events *events,
                           const tw_attrib_options *opt)
{
    ev_ref *act = NULL, *rng = NULL;
    size_t nact = 0, nrng = 0;
    size_t *active = NULL, *ractive = NULL;
    double *ov = NULL;
    tw_status st = collect(events, opt->device, &act, &nact, &rng, &nrng);
    if (st == TW_OK) st = idle_level(a, iv, n, act, nact);
    a->nevents = tw_events_count(events);
    if (st == TW_OK) {
        a->event_energy_j = malloc((a->nevents ? a->nevents : 1) * sizeof *a->event_energy_j);
        a->ranges = calloc(nrng ? nrng : 1, sizeof *a->ranges);
        active = malloc((nact ? nact : 1) * sizeof *active);
        ractive = malloc((nrng ? nrng : 1) * sizeof *ractive);
        ov = malloc((nact ? nact : 1) * sizeof *ov);
        if (!a->event_energy_j || !a->ranges || !active || !ractive || !ov) st = tw_fail(TW_ENOMEM, "out of memory");
    }
    if (st != TW_OK) goto out;
    for (size_t i = 0; i < a->nevents; i++)
        a->event_energy_j[i] = NAN;
    for (size_t i = 0; i < nact; i++)
        a->event_energy_j[act[i].idx] = 0.0;
    a->activities = nact;
    a->nranges = nrng;
    for (size_t r = 0; r < nrng; r++)
        a->ranges[r] = (tw_attrib_range){rng[r].e->name, rng[r].e->start_s, rng[r].e->end_s, 0.0, 0.0};
    sweep w = {act, nact, 0, active, 0};
    sweep wr = {rng, nrng, 0, ractive, 0};
    for (size_t k = 0; k < n; k++) {
        if (opt->cancel && *opt->cancel) {
            st = tw_fail(TW_EINTERRUPTED, "interrupted");
            goto out;
        }
        double t0 = iv[k].t0_s, t1 = iv[k].t1_s, dt = t1 - t0;
        if (!(dt > 0)) continue;
        double e = iv[k].energy_j;
        double excess = e - a->idle_w * dt;
        a->sum_j += e;
        a->run_s += dt;
        sweep_advance(&w, t0, t1);
        double busy = 0;
        for (size_t i = 0; i < w.nactive; i++)
            busy += ov[i] = overlap(act[w.active[i]].e, t0, t1);
        if (busy > 0) {
            for (size_t i = 0; i < w.nactive; i++) {
                if (ov[i] <= 0) continue;
                const ev_ref *r = &act[w.active[i]];
                double part = excess * ov[i] / busy;
                a->event_energy_j[r->idx] += part;
                if (r->cls == TW_ACT_COPY)
                    a->copies_j += part;
                else
                    a->kernels_j += part;
            }
        } else {
            a->other_j += excess;
        }
        sweep_advance(&wr, t0, t1);
        for (size_t i = 0; i < wr.nactive; i++) {
            size_t r = wr.active[i];
            double f = overlap(rng[r].e, t0, t1) / dt;
            a->ranges[r].energy_j += e * f;
            a->ranges[r].above_idle_j += excess * f;
        }
    }
    a->nintervals = n;
    a->start_s = n ? iv[0].t0_s : NAN;
    a->end_s = n ? iv[n - 1].t1_s : NAN;
    a->idle_j = a->idle_w * a->run_s;
    st = tables(a, act, nact);
out:
    free(act);
    free(rng);
    free(active);
    free(ractive);
    free(ov);
    return st;
}

tw_status tw_attrib_intervals(const tw_attrib_interval *iv, size_t n, const tw_events *events,
                              const tw_attrib_options *opt, tw_attrib **out)
{
    tw_clear_error();
    if (!out || (n && !iv)) return tw_fail(TW_EINVAL, "tw_attrib_intervals: NULL argument");
    *out = NULL;
    if (n == 0) return tw_fail(TW_EEMPTY, "no intervals of known energy");
    for (size_t k = 1; k < n; k++)
        if (iv[k].t0_s < iv[k - 1].t1_s - 1e-12)
            return tw_fail(TW_EORDER, "interval %zu starts before the previous one ends", k + 1);
    tw_attrib_options defaults;
    if (!opt) {
        tw_attrib_options_init(&defaults);
        opt = &defaults;
    }
    tw_events *none = NULL;
    if (!events) {
        tw_status st = tw_events_new(&none);
        if (st != TW_OK) return st;
        events = none;
    }
    tw_attrib *a = attrib_new();
    tw_status st = a ? attribute(a, iv, n, events, opt) : tw_fail(TW_ENOMEM, "out of memory");
    tw_events_free(none);
    if (st != TW_OK) {
        tw_attrib_free(a);
        return st;
    }
    *out = a;
    return TW_OK;
}

/* ---------------------------------------------------------------- from a trace */

typedef struct point {
    double t, v;
} point;

typedef struct vec {
    void *p;
    size_t n, cap, size;
} vec;

static bool vec_push(vec *v, const void *item)
{
    if (v->n == v->cap) {
        size_t cap = v->cap ? 2 * v->cap : 1024;
        void *p = realloc(v->p, cap * v->size);
        if (!p) return false;
        v->p = p;
        v->cap = cap;
    }
    memcpy((char *)v->p + v->n * v->size, item, v->size);
    v->n++;
    return true;
}

/* The first of the names (each with the prefix) that the trace has. */
static size_t find_col(tw_sensor *src, const char *prefix, const char *const *names, char *found, size_t len)
{
    for (size_t i = 0; names[i]; i++) {
        char full[128];
        snprintf(full, sizeof full, "%s%s", prefix, names[i]);
        size_t idx;
        if (tw_sensor_find(src, full, &idx) == TW_OK) {
            snprintf(found, len, "%s", full);
            return idx;
        }
    }
    tw_clear_error();
    return NO_COL;
}

typedef struct columns {
    size_t buffer, counter, usage, instant;
    /* column names fit tw_attrib.source_column, where one of them is reported */
    char buffer_name[128], counter_name[128], usage_name[128], instant_name[128];
} columns;

static const char *const buffer_names[] = {"power_buffer_w", "power_samples_w", "power_sample_w", NULL};
static const char *const counter_names[] = {"energy_j", "total_energy_j", "energy_total_j", NULL};
static const char *const usage_names[] = {"power_usage_w", "power_w", NULL};
static const char *const instant_names[] = {"power_instant_w", NULL};

/* Pass 1: the buffer's intervals, the counter's change points (placed in the
 * middle of the span where its update can have been: the last update period
 * before the poll that saw it, and after the poll before), and the points of
 * the fallback reading (power_instant_w, else power_usage_w). */
typedef struct pass1 {
    vec buf;     /* tw_attrib_interval */
    vec cnt;     /* point */
    vec fb;      /* point: fallback reading, consecutive repeats merged */
    size_t fcol; /* the fallback reading */
} pass1;

static tw_status read_pass1(tw_sensor *src, const columns *c, pass1 *p, const volatile int *cancel)
{
    double buf_prev = NAN, cnt_val = NAN, cnt_poll = NAN, fb_prev_t = NAN;
    for (uint64_t rows = 0;; rows++) {
        tw_row row;
        bool eof;
        tw_status st = tw_sensor_next(src, &row, &eof);
        if (st != TW_OK) return st;
        if (eof) return TW_OK;
        if (cancel && *cancel && (rows & 1023) == 0) return tw_fail(TW_EINTERRUPTED, "interrupted");
        if (c->buffer != NO_COL && row.valid[c->buffer]) {
            double t = row.t_value_s[c->buffer], v = row.value[c->buffer];
            if (isfinite(t) && isfinite(v) && !(t <= buf_prev)) {
                if (!isnan(buf_prev)) {
                    tw_attrib_interval iv = {buf_prev, t, v * (t - buf_prev)};
                    if (!vec_push(&p->buf, &iv)) return tw_fail(TW_ENOMEM, "out of memory");
                }
                buf_prev = t;
            }
        }
        if (c->counter != NO_COL && row.valid[c->counter]) {
            double t = row.t_value_s[c->counter], v = row.value[c->counter];
            if (isfinite(t) && isfinite(v)) {
                if (isnan(cnt_val)) { /* the first value: published within the update period before */
                    point pt = {t - 0.5 * COUNTER_UPDATE_S, v};
                    if (!vec_push(&p->cnt, &pt)) return tw_fail(TW_ENOMEM, "out of memory");
                } else if (v != cnt_val) {
                    point pt = {t - 0.5 * fmin(t - cnt_poll, COUNTER_UPDATE_S), v};
                    if (v < cnt_val) p->cnt.n = 0; /* the counter was reset: start again */
                    if (!vec_push(&p->cnt, &pt)) return tw_fail(TW_ENOMEM, "out of memory");
                }
                cnt_val = v;
                cnt_poll = t;
            }
        }
        if (p->fcol != NO_COL && row.valid[p->fcol]) {
            double t = row.t_value_s[p->fcol], v = row.value[p->fcol];
            if (isfinite(t) && isfinite(v) && !(t <= fb_prev_t)) {
                point *pts = p->fb.p;
                /* a repeat of a repeat adds nothing to a trapezoid: move the last point */
                if (p->fb.n >= 2 && pts[p->fb.n - 1].v == v && pts[p->fb.n - 2].v == v)
                    pts[p->fb.n - 1].t = t;
                else if (!vec_push(&p->fb, &(point){t, v}))
                    return tw_fail(TW_ENOMEM, "out of memory");
                fb_prev_t = t;
            }
        }
    }
}

/* The counter's value at t, linear between its points, extended with the
 * slope of the first or last segment beyond them. */
static double counter_at(const point *p, size_t n, double t)
{
    if (n < 2) return NAN;
    size_t lo = 0, hi = n - 1;
    if (t <= p[0].t)
        hi = 1;
    else if (t >= p[n - 1].t)
        lo = n - 2;
    else {
        while (hi - lo > 1) {
            size_t mid = (lo + hi) / 2;
            if (p[mid].t <= t)
                lo = mid;
            else
                hi = mid;
        }
    }
    double dt = p[hi].t - p[lo].t;
    if (!(dt > 0)) return p[lo].v;
    return p[lo].v + (p[hi].v - p[lo].v) * (t - p[lo].t) / dt;
}

/* A trapezoid over [a, b] from points streamed in time order: held constant
 * before the first point and after the last. */
typedef struct trap {
    double a, b;
    double t, v; /* previous point */
    bool have;
    double first_t, first_v;
    double sum;
} trap;

static void trap_add(trap *z, double t, double v)
{
    if (!isfinite(t) || !isfinite(v) || (z->have && t <= z->t)) return;
    if (!z->have) {
        z->first_t = t;
        z->first_v = v;
    } else {
        double lo = fmax(z->t, z->a), hi = fmin(t, z->b);
        if (hi > lo) {
            double slope = (v - z->v) / (t - z->t);
            double vlo = z->v + slope * (lo - z->t), vhi = z->v + slope * (hi - z->t);
            z->sum += 0.5 * (vlo + vhi) * (hi - lo);
        }
    }
    z->t = t;
    z->v = v;
    z->have = true;
}

static double trap_end(const trap *z)
{
    if (!z->have) return NAN;
    double s = z->sum;
    if (z->first_t > z->a) s += z->first_v * (fmin(z->first_t, z->b) - z->a);
    if (z->t < z->b) s += z->v * (z->b - fmax(z->t, z->a));
    return s;
}

/* Pass 2: the trapezoids and the MTSM-style mean over [a, b]. */
static tw_status read_pass2(tw_sensor *src, const columns *c, tw_attrib *a, const volatile int *cancel)
{
    tw_status st = tw_sensor_rewind(src);
    if (st != TW_OK) return st;
    trap tu = {.a = a->start_s, .b = a->end_s}, ti = tu;
    double msum = 0;
    uint64_t mn = 0;
    for (uint64_t rows = 0;; rows++) {
        tw_row row;
        bool eof;
        if ((st = tw_sensor_next(src, &row, &eof)) != TW_OK) return st;
        if (eof) break;
        if (cancel && *cancel && (rows & 1023) == 0) return tw_fail(TW_EINTERRUPTED, "interrupted");
        if (c->usage != NO_COL && row.valid[c->usage]) trap_add(&tu, row.t_value_s[c->usage], row.value[c->usage]);
        if (c->instant != NO_COL && row.valid[c->instant]) {
            trap_add(&ti, row.t_value_s[c->instant], row.value[c->instant]);
            if (row.t_s >= a->start_s && row.t_s <= a->end_s && isfinite(row.value[c->instant])) {
                msum += row.value[c->instant];
                mn++;
            }
        }
    }
    a->trap_usage_j = trap_end(&tu);
    a->trap_instant_j = trap_end(&ti);
    a->mtsm_j = mn ? msum / (double)mn * (a->end_s - a->start_s) : NAN;
    return TW_OK;
}

/* The K20 model (Burtscher et al. 2014) on power_usage_w, over the same window. */
static void rc_k20(tw_sensor *src, const columns *c, tw_attrib *a, const volatile int *cancel)
{
    if (c->usage == NO_COL) {
        snprintf(a->rc_note, sizeof a->rc_note, "no power_usage_w in the trace");
        return;
    }
    tw_events *ev = NULL;
    tw_analysis *an = NULL;
    tw_event run = {.name = "run",
                    .start_s = a->start_s,
                    .end_s = a->end_s,
                    .device = -1,
                    .stream = -1,
                    .true_energy_j = NAN,
                    .kind = NULL};
    tw_analysis_options o;
    tw_analysis_options_init(&o);
    o.idle_w = o.active_idle_w = a->idle_w; /* not used for the corrected energy: spares a pass */
    o.cancel = cancel;
    tw_status st = tw_events_new(&ev);
    if (st == TW_OK) st = tw_events_add(ev, &run);
    if (st == TW_OK) st = tw_analyze(src, c->usage, ev, &o, &an);
    if (st == TW_OK && tw_analysis_samples_kept(an) < 3)
        snprintf(a->rc_note, sizeof a->rc_note,
                 "%s hardly changed (%llu distinct readings): the K20 method drops repeats and has nothing left",
                 c->usage_name, (unsigned long long)tw_analysis_samples_kept(an));
    else if (st == TW_OK && isnan(a->rc_k20_j = tw_analysis_energy_j(an, 0, TW_METHOD_CORRECTED)))
        snprintf(a->rc_note, sizeof a->rc_note, "the K20 method could not say over %.3f .. %.3f s", a->start_s,
                 a->end_s);
    else
        snprintf(a->rc_note, sizeof a->rc_note, "%s", tw_last_error());
    tw_analysis_free(an);
    tw_events_free(ev);
}

static void free_pass1(pass1 *p)
{
    free(p->buf.p);
    free(p->cnt.p);
    free(p->fb.p);
}

/* The intervals of the best source: buffer, else counter, else trapezoid. */
static tw_status pick_intervals(const pass1 *p, const columns *c, tw_attrib_interval **iv, size_t *n,
                                tw_attrib_source *src, char *name, size_t name_len)
{
    if (p->buf.n >= 1) {
        *src = TW_ATTRIB_BUFFER;
        snprintf(name, name_len, "%s", c->buffer_name);
        *n = p->buf.n;
        *iv = malloc(*n * sizeof **iv);
        if (!*iv) return tw_fail(TW_ENOMEM, "out of memory");
        memcpy(*iv, p->buf.p, *n * sizeof **iv);
        return TW_OK;
    }
    const vec *pts = p->cnt.n >= 2 ? &p->cnt : &p->fb;
    if (pts->n < 2)
        return tw_fail(TW_EEMPTY, "the trace has no power reading with coverage (power_buffer_w, energy_j, "
                                  "power_instant_w or power_usage_w with at least two values)");
    bool counter = pts == &p->cnt;
    *src = counter ? TW_ATTRIB_COUNTER : TW_ATTRIB_TRAPEZOID;
    snprintf(name, name_len, "%s", counter ? c->counter_name : p->fcol == c->instant ? c->instant_name : c->usage_name);
    const point *q = pts->p;
    *n = pts->n - 1;
    *iv = malloc(*n * sizeof **iv);
    if (!*iv) return tw_fail(TW_ENOMEM, "out of memory");
    for (size_t k = 0; k < *n; k++) {
        double dt = q[k + 1].t - q[k].t;
        double e = counter ? q[k + 1].v - q[k].v : 0.5 * (q[k].v + q[k + 1].v) * dt;
        (*iv)[k] = (tw_attrib_interval){q[k].t, q[k + 1].t, e};
    }
    return TW_OK;
}

/* ---------------------------------------------------------------- from a profile's model */

/* Whether a model's observations tile the time (tw_observe); why not into `why`. */
static bool model_tiles(const tw_reading_model *m, char *why, size_t len)
{
    double w = m->window_s, p = m->period_s;
    bool about_period = w > 0 && p > 0 && fabs(w - p) <= 0.25 * p;
    switch (m->response) {
    case TW_RESP_COUNTER:
    case TW_RESP_RC:
        return true;
    case TW_RESP_BOXCAR:
        if (about_period || (p > 0 && w >= 2 * p)) return true;
        snprintf(why, len,
                 "its boxcar windows (%.3g ms, published every %.3g ms) overlap and cannot be deconvolved "
                 "(window under two periods)",
                 1e3 * w, 1e3 * p);
        return false;
    case TW_RESP_WINDOW:
        if (about_period) return true;
        snprintf(why, len, "it is a window reading: it sees %.0f %% of the time (%.3g ms of every %.3g ms)",
                 100.0 * (isfinite(m->coverage) ? m->coverage : w / p), 1e3 * w, 1e3 * p);
        return false;
    default:
        snprintf(why, len, "its response is %s", tw_response_name(m->response));
        return false;
    }
}

/* The model's observations as intervals of known energy, overlapping or
 * unsorted windows dropped (they should not occur for a tiling model). On
 * TW_ENOTFOUND (no column, no usable model, no observations) `why` says why;
 * other errors are failures. */
static tw_status model_intervals(tw_sensor *src, const char *prefix, const tw_reading_model *m, tw_attrib_interval **iv,
                                 size_t *n, size_t *dropped, char *name, size_t name_len, char *why, size_t why_len)
{
    *iv = NULL;
    *n = *dropped = 0;
    char full[sizeof((tw_attrib *)0)->source_column];
    snprintf(full, sizeof full, "%s%s", prefix, m->name);
    size_t col;
    if (tw_sensor_find(src, full, &col) != TW_OK) {
        tw_clear_error();
        snprintf(why, why_len, "the trace has no column %s", full);
        return TW_ENOTFOUND;
    }
    if (!model_tiles(m, why, why_len)) return TW_ENOTFOUND;
    tw_obs_series obs;
    tw_obs_series_init(&obs);
    tw_status st = tw_observe(src, col, m, true, &obs);
    if (st == TW_EINVAL) {
        snprintf(why, why_len, "%s", tw_last_error());
        tw_clear_error();
        tw_obs_series_free(&obs);
        return TW_ENOTFOUND;
    }
    if (st == TW_OK && obs.n > 0 && !(*iv = malloc(obs.n * sizeof **iv))) st = tw_fail(TW_ENOMEM, "out of memory");
    double last = -INFINITY;
    for (size_t k = 0; st == TW_OK && k < obs.n; k++) {
        const tw_obs *o = &obs.v[k];
        if (!isfinite(o->t0_s) || !isfinite(o->t1_s) || !isfinite(o->power_w) || !(o->t1_s > o->t0_s) ||
            o->t0_s < last - 1e-12) {
            (*dropped)++;
            continue;
        }
        (*iv)[(*n)++] = (tw_attrib_interval){o->t0_s, o->t1_s, o->power_w * (o->t1_s - o->t0_s)};
        last = o->t1_s;
    }
    tw_obs_series_free(&obs);
    if (st == TW_OK && *n == 0) {
        snprintf(why, why_len, "its model gave no observations of %s", full);
        st = TW_ENOTFOUND;
    }
    if (st != TW_OK) {
        free(*iv);
        *iv = NULL;
        *n = 0;
        return st;
    }
    snprintf(name, name_len, "%s", full);
    return TW_OK;
}

/* The integral of the sample buffer's intervals over [a, b]. */
static double buffer_over(const vec *buf, double a, double b)
{
    const tw_attrib_interval *v = buf->p;
    double e = 0;
    for (size_t k = 0; k < buf->n; k++) {
        double lo = fmax(a, v[k].t0_s), hi = fmin(b, v[k].t1_s), dt = v[k].t1_s - v[k].t0_s;
        if (hi > lo && dt > 0) e += v[k].energy_j * (hi - lo) / dt;
    }
    return e;
}

tw_status tw_attrib_run(const char *trace_path, const tw_events *events, const tw_attrib_options *opt, tw_attrib **out)
{
    tw_clear_error();
    if (!trace_path || !out) return tw_fail(TW_EINVAL, "tw_attrib_run: NULL argument");
    *out = NULL;
    tw_attrib_options defaults;
    if (!opt) {
        tw_attrib_options_init(&defaults);
        opt = &defaults;
    }
    const char *prefix = opt->prefix ? opt->prefix : "";
    tw_sensor_config cfg = {.path = trace_path};
    tw_sensor *src = NULL;
    tw_status st = tw_sensor_open("replay", &cfg, &src);
    if (st != TW_OK) return st;
    columns c;
    c.buffer = find_col(src, prefix, buffer_names, c.buffer_name, sizeof c.buffer_name);
    c.counter = find_col(src, prefix, counter_names, c.counter_name, sizeof c.counter_name);
    c.usage = find_col(src, prefix, usage_names, c.usage_name, sizeof c.usage_name);
    c.instant = find_col(src, prefix, instant_names, c.instant_name, sizeof c.instant_name);
    pass1 p = {{NULL, 0, 0, sizeof(tw_attrib_interval)},
               {NULL, 0, 0, sizeof(point)},
               {NULL, 0, 0, sizeof(point)},
               c.instant != NO_COL ? c.instant : c.usage};
    tw_attrib_interval *iv = NULL;
    size_t n = 0;
    tw_attrib_source source = TW_ATTRIB_BUFFER;
    char source_name[sizeof((tw_attrib *)0)->source_column] = "";
    tw_attrib *a = NULL;
    char why[512] = "";
    size_t dropped = 0;
    st = read_pass1(src, &c, &p, opt->cancel);
    if (st == TW_OK && opt->model) {
        st = model_intervals(src, prefix, opt->model, &iv, &n, &dropped, source_name, sizeof source_name, why,
                             sizeof why);
        if (st == TW_OK) source = TW_ATTRIB_MODEL;
        if (st == TW_ENOTFOUND) st = TW_OK; /* the built-in choice, with a warning */
    }
    if (st == TW_OK && source != TW_ATTRIB_MODEL)
        st = pick_intervals(&p, &c, &iv, &n, &source, source_name, sizeof source_name);
    if (st == TW_OK) st = tw_attrib_intervals(iv, n, events, opt, &a);
    if (st == TW_OK) {
        a->source = source;
        snprintf(a->source_column, sizeof a->source_column, "%s", source_name);
        if (source == TW_ATTRIB_BUFFER) a->buffer_j = a->sum_j;
        if (source == TW_ATTRIB_MODEL && p.buf.n >= 1) a->buffer_j = buffer_over(&p.buf, a->start_s, a->end_s);
        if (opt->model && source != TW_ATTRIB_MODEL) {
            char w[sizeof why + 3 * TW_PROFILE_NAME_LEN + 128];
            snprintf(w, sizeof w, "the sensor profile's reading %s%s is not used: %s; energy from %s (%s) instead",
                     prefix, opt->model->name, why, source_name, tw_attrib_source_name(source));
            warn(a, w);
        }
        if (dropped) {
            char w[sizeof source_name + 128];
            snprintf(w, sizeof w, "%zu observation window%s of %s overlapped the one before or was empty: dropped",
                     dropped, dropped == 1 ? "" : "s", source_name);
            warn(a, w);
        }
        if (p.cnt.n >= 2)
            a->counter_j = counter_at(p.cnt.p, p.cnt.n, a->end_s) - counter_at(p.cnt.p, p.cnt.n, a->start_s);
        a->check_pct = 100.0 * (a->sum_j / a->counter_j - 1.0);
        if (source == TW_ATTRIB_TRAPEZOID) {
            char w[sizeof source_name + 160];
            snprintf(w, sizeof w,
                     "no sample buffer and no energy counter in the trace: energy from the trapezoid of %s, "
                     "which does not cover short kernels fully",
                     source_name);
            warn(a, w);
        } else if (source == TW_ATTRIB_COUNTER) {
            warn(a, "no sample buffer in the trace: energy from the energy counter's ~100 ms steps; "
                    "kernels shorter than that share their steps' energy by time");
        }
        st = read_pass2(src, &c, a, opt->cancel);
    }
    if (st == TW_OK) rc_k20(src, &c, a, opt->cancel);
    if (st == TW_OK && opt->cancel && *opt->cancel) st = tw_fail(TW_EINTERRUPTED, "interrupted");
    free(iv);
    free_pass1(&p);
    tw_sensor_close(src);
    if (st != TW_OK) {
        tw_attrib_free(a);
        return st;
    }
    *out = a;
    return TW_OK;
}
