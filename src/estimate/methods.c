/* Whole-run energy by each naive method: see methods.h. */
#include "estimate/methods.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"

#define NO_COL ((size_t)-1)
/* The energy counter's own update period (H100: ~100 ms, sensors-h100.md). A
 * value first seen at a poll was published at the counter's last update
 * before it: within the last update period, and after the poll before. */
#define COUNTER_UPDATE_S 0.1

/* One interval of known energy. */
typedef struct interval {
    double t0_s, t1_s;
    double energy_j;
} interval;

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
    size_t buffer, counter, usage, instant, module;
    char buffer_name[128], counter_name[128], usage_name[128], instant_name[128], module_name[128];
} columns;

static const char *const buffer_names[] = {"power_buffer_w", "power_samples_w", "power_sample_w", NULL};
static const char *const counter_names[] = {"energy_j", "total_energy_j", "energy_total_j", NULL};
static const char *const usage_names[] = {"power_usage_w", "power_w", NULL};
static const char *const instant_names[] = {"power_instant_w", NULL};
/* Grace Hopper's module scope: the 25 ms reading, else the 1 s average (which lags by half a second) */
static const char *const module_names[] = {"module_power_instant_w", "module_power_avg_w", NULL};

/* Pass 1: the buffer's intervals, the counter's change points (placed in the
 * middle of the span where its update can have been: the last update period
 * before the poll that saw it, and after the poll before), and the points of
 * the fallback reading (power_instant_w, else power_usage_w). */
typedef struct pass1 {
    vec buf; /* interval */
    vec cnt; /* point */
} pass1;

static tw_status read_pass1(tw_sensor *src, const columns *c, pass1 *p, const volatile int *cancel)
{
    double buf_prev = NAN, cnt_val = NAN, cnt_poll = NAN;
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
                    interval iv = {buf_prev, t, v * (t - buf_prev)};
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
static tw_status read_pass2(tw_sensor *src, const columns *c, tw_methods *a, const volatile int *cancel)
{
    tw_status st = tw_sensor_rewind(src);
    if (st != TW_OK) return st;
    trap tu = {.a = a->start_s, .b = a->end_s}, ti = tu, tm = tu;
    double msum = 0;
    uint64_t mn = 0;
    for (uint64_t rows = 0;; rows++) {
        tw_row row;
        bool eof;
        if ((st = tw_sensor_next(src, &row, &eof)) != TW_OK) return st;
        if (eof) break;
        if (cancel && *cancel && (rows & 1023) == 0) return tw_fail(TW_EINTERRUPTED, "interrupted");
        if (c->usage != NO_COL && row.valid[c->usage]) trap_add(&tu, row.t_value_s[c->usage], row.value[c->usage]);
        if (c->module != NO_COL && row.valid[c->module]) trap_add(&tm, row.t_value_s[c->module], row.value[c->module]);
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
    a->module_j = trap_end(&tm);
    a->mtsm_j = mn ? msum / (double)mn * (a->end_s - a->start_s) : NAN;
    return TW_OK;
}

/* The K20 model (Burtscher et al. 2014) on power_usage_w, over the same window. */
static void rc_k20(tw_sensor *src, const columns *c, tw_methods *a, const volatile int *cancel)
{
    if (c->usage == NO_COL) {
        snprintf(a->rc_note, sizeof a->rc_note, "no power_usage_w in the trace");
        return;
    }
    tw_events *ev = NULL;
    tw_analysis *an = NULL;
    tw_event run = {
        .name = "run", .start_s = a->start_s, .end_s = a->end_s, .device = -1, .stream = -1, .true_energy_j = NAN};
    tw_analysis_options o;
    tw_analysis_options_init(&o);
    o.idle_w = o.active_idle_w = 0.0; /* not used for the corrected energy: spares a pass */
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
}

/* The integral of the sample buffer's intervals over [a, b]. */
static double buffer_over(const vec *buf, double a, double b)
{
    const interval *v = buf->p;
    double e = 0;
    for (size_t k = 0; k < buf->n; k++) {
        double lo = fmax(a, v[k].t0_s), hi = fmin(b, v[k].t1_s), dt = v[k].t1_s - v[k].t0_s;
        if (hi > lo && dt > 0) e += v[k].energy_j * (hi - lo) / dt;
    }
    return e;
}

tw_status tw_methods_run(const char *trace_path, const char *prefix, double start_s, double end_s,
                         const volatile int *cancel, tw_methods *out)
{
    if (!trace_path || !out) return tw_fail(TW_EINVAL, "tw_methods_run: NULL argument");
    memset(out, 0, sizeof *out);
    out->start_s = start_s;
    out->end_s = end_s;
    out->counter_j = out->buffer_j = out->trap_usage_j = out->trap_instant_j = out->mtsm_j = out->rc_k20_j = NAN;
    out->module_j = NAN;
    if (!prefix) prefix = "";
    tw_sensor_config cfg = {.path = trace_path};
    tw_sensor *src = NULL;
    tw_status st = tw_sensor_open("replay", &cfg, &src);
    if (st != TW_OK) return st;
    columns c;
    c.buffer = find_col(src, prefix, buffer_names, c.buffer_name, sizeof c.buffer_name);
    c.counter = find_col(src, prefix, counter_names, c.counter_name, sizeof c.counter_name);
    c.usage = find_col(src, prefix, usage_names, c.usage_name, sizeof c.usage_name);
    c.instant = find_col(src, prefix, instant_names, c.instant_name, sizeof c.instant_name);
    c.module = find_col(src, prefix, module_names, c.module_name, sizeof c.module_name);
    if (c.module != NO_COL) snprintf(out->module_reading, sizeof out->module_reading, "%s", c.module_name);
    pass1 p = {{NULL, 0, 0, sizeof(interval)}, {NULL, 0, 0, sizeof(point)}};
    st = read_pass1(src, &c, &p, cancel);
    if (st == TW_OK) {
        if (p.buf.n >= 1) out->buffer_j = buffer_over(&p.buf, start_s, end_s);
        if (p.cnt.n >= 2) out->counter_j = counter_at(p.cnt.p, p.cnt.n, end_s) - counter_at(p.cnt.p, p.cnt.n, start_s);
        st = read_pass2(src, &c, out, cancel);
    }
    if (st == TW_OK) rc_k20(src, &c, out, cancel);
    free_pass1(&p);
    tw_sensor_close(src);
    return st;
}
