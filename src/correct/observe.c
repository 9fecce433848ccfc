/* Observations and update instants of one reading; see observe.h. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "core/error.h"
#include "correct/observe.h"
#include "core/sort.h"

/* A value stamped this much before the row that carries it has a timestamp
 * of its own (the driver's sample buffer); otherwise the stamp is the query. */
#define OWN_STAMP_S 0.2e-3
/* The poll gap is split in half to place an update, but never by more than
 * this: a poll that blocked (K20: 4.7 ms) returns a value fresh at its end. */
#define MAX_HALF_GAP_S 0.5e-3
/* Own stamps on a sampling grid (tw_updates_regularize): the neighbours on
 * each side that place a stamp on the grid, the share of them that must sit
 * on it (within GRID_TOL of a period) for the series to count as a grid, and
 * the most a stamp may be off it to be moved onto it. */
#define GRID_HALF 8
#define GRID_MIN_SHARE 0.6
#define GRID_TOL 0.05
#define GRID_MAX_OFF 0.25

static tw_status push_update(tw_update_series *s, double t_s, double value)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 1024;
        tw_update *p = realloc(s->v, cap * sizeof *p);
        if (!p) return tw_fail(TW_ENOMEM, "out of memory (%zu updates)", cap);
        s->v = p;
        s->cap = cap;
    }
    s->v[s->n++] = (tw_update){t_s, value};
    return TW_OK;
}

/* One reading's updates as the rows come (tw_updates_read_many). */
typedef struct update_reader {
    size_t reading;
    tw_update_series *out;
    bool have;
    size_t first, own_n;
    double last_v, last_stamp;
} update_reader;

static tw_status update_row(update_reader *r, const tw_row *row, double prev_row, double prev_gap)
{
    size_t k = r->reading;
    if (!(k < row->n && row->valid[k] && isfinite(row->value[k]))) return TW_OK;
    double row_t = row->t_s, v = row->value[k], stamp = row->t_value_s ? row->t_value_s[k] : row_t;
    bool own = row_t - stamp > OWN_STAMP_S;
    bool fresh = !r->have || v != r->last_v || (own && stamp != r->last_stamp);
    if (fresh) {
        /* half the poll gap, but no more than half the gap before it: a
         * poll that blocked until a new value (K20: 4.7 ms) returns it fresh */
        double gap = isnan(prev_row) ? 0.0 : fmin(row_t - prev_row, prev_gap);
        double u = own ? stamp : row_t - fmin(0.5 * gap, MAX_HALF_GAP_S);
        tw_status st = push_update(r->out, u, v);
        if (st != TW_OK) return st;
        r->own_n += own;
    }
    r->have = true;
    r->last_v = v;
    r->last_stamp = stamp;
    return TW_OK;
}

tw_status tw_updates_read_many(tw_sensor *src, const size_t *reading, size_t n, tw_update_series *out)
{
    if (!src || !out || (n && !reading)) return tw_fail(TW_EINVAL, "tw_updates_read: NULL argument");
    update_reader *r = calloc(n ? n : 1, sizeof *r);
    if (!r) return tw_fail(TW_ENOMEM, "out of memory");
    for (size_t k = 0; k < n; k++)
        r[k] = (update_reader){reading[k], &out[k], false, out[k].n, 0, NAN, NAN};
    tw_status st = tw_sensor_rewind(src);
    double prev_row = NAN, prev_gap = INFINITY;
    while (st == TW_OK) {
        tw_row row;
        bool eof = false;
        if ((st = tw_sensor_next(src, &row, &eof)) != TW_OK || eof) break;
        for (size_t k = 0; k < n && st == TW_OK; k++)
            st = update_row(&r[k], &row, prev_row, prev_gap);
        if (!isnan(prev_row)) prev_gap = row.t_s - prev_row;
        prev_row = row.t_s;
    }
    /* stamps of the reading's own (the sample buffer) only: a poll's instant is no grid */
    for (size_t k = 0; k < n && st == TW_OK; k++)
        if (r[k].own_n > 0 && r[k].own_n == out[k].n - r[k].first) {
            tw_update_series own = {out[k].v + r[k].first, out[k].n - r[k].first, out[k].n - r[k].first};
            st = tw_updates_regularize(&own);
        }
    free(r);
    return st;
}

tw_status tw_updates_read(tw_sensor *src, size_t reading, tw_update_series *out)
{
    return tw_updates_read_many(src, &reading, 1, out);
}

/* ---------------------------------------------------------------- stamps on a sampling grid */

/* The median period: the sampling grid's step, robust to a late stamp now and then. */
static tw_status median_step(const tw_update_series *u, double *step)
{
    double *d = malloc((u->n - 1) * sizeof *d);
    if (!d) return tw_fail(TW_ENOMEM, "out of memory (%zu stamps)", u->n);
    size_t m = 0;
    for (size_t k = 1; k < u->n; k++)
        if (u->v[k].t_s > u->v[k - 1].t_s) d[m++] = u->v[k].t_s - u->v[k - 1].t_s;
    tw_sort_doubles(d, m);
    *step = m ? d[m / 2] : NAN;
    free(d);
    return TW_OK;
}

/* Where the grid through neighbours t[lo..hi] (originals) puts stamp k: the
 * median of their stamps moved by their whole number of steps; NaN where
 * fewer than GRID_MIN_SHARE of them sit on that grid; INFINITY where there
 * are too few to tell (the series' ends). */
static double grid_side(const double *t, size_t lo, size_t hi, size_t k, double step)
{
    double c[GRID_HALF];
    size_t m = 0;
    for (size_t j = lo; j <= hi && m < GRID_HALF; j++)
        c[m++] = t[j] - round((t[j] - t[k]) / step) * step;
    if (m < 3) return INFINITY;
    tw_sort_doubles(c, m);
    double at = c[m / 2];
    size_t on = 0;
    for (size_t j = 0; j < m; j++)
        on += fabs(c[j] - at) <= GRID_TOL * step;
    return (double)on >= GRID_MIN_SHARE * (double)m ? at : NAN;
}

/* Where the grid puts stamp k: the grids through its neighbours before and
 * after it, where both are grids and agree (no phase jump, no gap of a
 * fraction of a period in between), or the one side at an end of the
 * series; NaN otherwise. */
static double grid_place(const double *t, size_t n, size_t k, double step)
{
    if (k == 0 || k + 1 >= n) return NAN;
    double before = grid_side(t, k > GRID_HALF ? k - GRID_HALF : 0, k - 1, k, step);
    double after = grid_side(t, k + 1, k + GRID_HALF < n ? k + GRID_HALF : n - 1, k, step);
    if (isinf(before)) return after;
    if (isinf(after)) return before;
    if (!(fabs(before - after) <= GRID_TOL * step)) return NAN;
    return 0.5 * (before + after);
}

tw_status tw_updates_regularize(tw_update_series *u)
{
    if (!u || u->n < GRID_HALF + 1) return TW_OK;
    double step = NAN;
    tw_status st = median_step(u, &step);
    if (st != TW_OK || !(step > 0)) return st;
    double *t = malloc(u->n * sizeof *t);
    if (!t) return tw_fail(TW_ENOMEM, "out of memory (%zu stamps)", u->n);
    for (size_t k = 0; k < u->n; k++)
        t[k] = u->v[k].t_s;
    for (size_t k = 0; k < u->n; k++) {
        double at = grid_place(t, u->n, k, step); /* finite: k has neighbours on both sides */
        if (!isfinite(at) || !(fabs(at - t[k]) <= GRID_MAX_OFF * step)) continue;
        /* each interval it closes and opens stays at least half a period long */
        if (at - u->v[k - 1].t_s >= 0.5 * step && t[k + 1] - at >= (0.5 + GRID_MAX_OFF) * step) u->v[k].t_s = at;
    }
    free(t);
    return TW_OK;
}

/* ---------------------------------------------------------------- integrals of updates */

/* Index of the last update at or before t (SIZE_MAX when none). */
size_t tw_updates_index_at(const tw_update_series *u, double t)
{
    size_t lo = 0, hi = u->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (u->v[mid].t_s <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo == 0 ? SIZE_MAX : lo - 1;
}

/* The held value integrated over [a, b] (a poll in between sees the last update). */
double tw_updates_hold_integral(const tw_update_series *u, double a, double b)
{
    size_t k = tw_updates_index_at(u, a);
    if (k == SIZE_MAX) return NAN;
    double sum = 0, t = a;
    for (; k < u->n && t < b; k++) {
        double next = k + 1 < u->n ? fmin(b, u->v[k + 1].t_s) : b;
        if (next > t) sum += u->v[k].value * (next - t);
        t = fmax(t, next);
    }
    return sum;
}

/* A counter read at t, interpolated between its updates. */
double tw_updates_counter_at(const tw_update_series *u, double t)
{
    size_t k = tw_updates_index_at(u, t);
    if (k == SIZE_MAX || k + 1 >= u->n) return NAN;
    const tw_update *p = &u->v[k], *q = &u->v[k + 1];
    return p->value + (q->value - p->value) * (t - p->t_s) / (q->t_s - p->t_s);
}

/* Sample-buffer values as the mean power of the interval each closes. */
double tw_updates_tiles_integral(const tw_update_series *u, double a, double b)
{
    size_t k = tw_updates_index_at(u, a);
    if (k == SIZE_MAX) return NAN;
    double sum = 0;
    for (k = k + 1; k < u->n; k++) {
        double t0 = fmax(a, u->v[k - 1].t_s), t1 = fmin(b, u->v[k].t_s);
        if (t1 > t0) sum += u->v[k].value * (t1 - t0);
        if (u->v[k - 1].t_s >= b) break;
    }
    return k < u->n ? sum : NAN;
}

/* rc: the lag inverted exactly for an input constant between updates. The
 * output relaxes towards the input, y_k = P_k + (y_{k-1} - P_k) e^{-dt/C},
 * so the mean power of the interval is
 *     P_k = (y_k - y_{k-1} a) / (1 - a),  a = e^{-dt/C}.
 * Unlike the symmetric-slope form P + C dP/dt (Burtscher §5), which spreads
 * a step over the samples on both sides of it, this keeps each interval's
 * energy in that interval; the sum over intervals telescopes to the same
 * total. Noise grows by 1 / (1 - a): 1.2 for the H100's buffer (C = 12 ms,
 * 20 ms apart), ~60 for a K20 polled every 15 ms (C = 0.84 s). Updates are
 * placed at their own instants (the sample buffer's timestamps). */
static tw_status observe_rc(const tw_update_series *u, const tw_reading_model *m, tw_obs_series *out)
{
    tw_status st = TW_OK;
    out->tau_s = m->capacitance_s;
    for (size_t k = 1; k < u->n && st == TW_OK; k++) {
        double dt = u->v[k].t_s - u->v[k - 1].t_s;
        if (!(dt > 0)) continue;
        double a = m->capacitance_s > 0 ? exp(-dt / m->capacitance_s) : 0.0;
        double p = (u->v[k].value - u->v[k - 1].value * a) / (1.0 - a);
        st = tw_obs_series_push(out, u->v[k - 1].t_s - m->delay_s, u->v[k].t_s - m->delay_s, p);
    }
    return st;
}

/* A window mean published at each update, or (window about one period, as
 * the sample buffer) the intervals between updates, which tile the time. */
static tw_status observe_windows(const tw_update_series *u, const tw_reading_model *m, tw_obs_series *out)
{
    bool tiles = fabs(m->window_s - m->period_s) <= 0.25 * m->period_s;
    tw_status st = TW_OK;
    for (size_t k = tiles ? 1 : 0; k < u->n && st == TW_OK; k++) {
        double t1 = u->v[k].t_s - m->delay_s;
        double t0 = tiles ? u->v[k - 1].t_s - m->delay_s : t1 - m->window_s;
        if (t1 > t0) st = tw_obs_series_push(out, t0, t1, u->v[k].value);
    }
    return st;
}

/* A counter: the mean power between updates. */
static tw_status observe_counter(const tw_update_series *u, const tw_reading_model *m, tw_obs_series *out)
{
    tw_status st = TW_OK;
    for (size_t k = 1; k < u->n && st == TW_OK; k++) {
        double dt = u->v[k].t_s - u->v[k - 1].t_s;
        if (dt > 0)
            st = tw_obs_series_push(out, u->v[k - 1].t_s - m->delay_s, u->v[k].t_s - m->delay_s,
                                    (u->v[k].value - u->v[k - 1].value) / dt);
    }
    return st;
}

/* A held reading publishes every period, but an unchanged value is not seen
 * as an update: the publications in a gap of about m periods are put back
 * (same value), so windows and deconvolved tiles stay one period long. */
static tw_status fill_held(const tw_update_series *u, double period_s, tw_update_series *out)
{
    tw_status st = TW_OK;
    for (size_t k = 0; k < u->n && st == TW_OK; k++) {
        if (k > 0 && period_s > 0) {
            double gap = u->v[k].t_s - u->v[k - 1].t_s;
            double m = round(gap / period_s);
            if (m >= 2 && fabs(gap - m * period_s) < 0.3 * period_s)
                for (double j = 1; j < m && st == TW_OK; j++)
                    st = push_update(out, u->v[k - 1].t_s + j * gap / m, u->v[k - 1].value);
        }
        if (st == TW_OK) st = push_update(out, u->v[k].t_s, u->v[k].value);
    }
    return st;
}

static tw_status observe_boxcar(const tw_update_series *u, const tw_reading_model *m, tw_obs_series *out)
{
    if (!(m->window_s >= 2 * m->period_s)) return observe_windows(u, m, out);
    tw_obs_series raw;
    tw_obs_series_init(&raw);
    tw_status st = observe_windows(u, m, &raw);
    if (st == TW_OK) st = tw_deconvolve_boxcar(raw.v, raw.n, m->window_s, out);
    tw_obs_series_free(&raw);
    return st;
}

/* The series' room cut to its windows (grown by doubling: up to twice
 * what it holds, which an estimator keeps for the whole report). */
static void shrink_to_fit(tw_obs_series *s)
{
    if (s->n == 0 || s->n == s->cap) return;
    tw_obs *v = realloc(s->v, s->n * sizeof *s->v);
    if (!v) return; /* kept as it is */
    s->v = v;
    s->cap = s->n;
}

/* Whether model m can observe a reading (TW_EINVAL saying why if not). */
static tw_status model_usable(const tw_reading_model *m)
{
    if (m->response == TW_RESP_RC && !(m->capacitance_s >= 0))
        return tw_fail(TW_EINVAL, "%s: the rc model needs a capacitance", m->name);
    if (m->response != TW_RESP_RC && m->response != TW_RESP_COUNTER && !(m->window_s > 0 && m->period_s > 0))
        return tw_fail(TW_EINVAL, "%s: the %s model needs a window and a period", m->name,
                       tw_response_name(m->response));
    return TW_OK;
}

tw_status tw_observe(tw_sensor *src, size_t reading, const tw_reading_model *m, bool rewind, tw_obs_series *out)
{
    (void)rewind; /* the updates are read from the start */
    if (!src || !m || !out) return tw_fail(TW_EINVAL, "tw_observe: NULL argument");
    tw_status st = model_usable(m);
    if (st != TW_OK) return st;
    tw_update_series u = {0};
    st = tw_updates_read(src, reading, &u);
    if (st == TW_OK) st = tw_observe_updates(&u, m, out);
    tw_update_series_free(&u);
    return st;
}

tw_status tw_observe_updates(const tw_update_series *updates, const tw_reading_model *m, tw_obs_series *out)
{
    if (!updates || !m || !out) return tw_fail(TW_EINVAL, "tw_observe_updates: NULL argument");
    const tw_update_series u = *updates;
    double delay = isfinite(m->delay_s) ? m->delay_s : 0.0;
    tw_reading_model mm = *m;
    mm.delay_s = delay;
    out->period_s = m->period_s;
    out->window_s = m->window_s;
    tw_status st = model_usable(m);
    if (st == TW_OK) {
        switch (m->response) {
        case TW_RESP_COUNTER:
            st = observe_counter(&u, &mm, out);
            break;
        case TW_RESP_RC:
            st = observe_rc(&u, &mm, out);
            break;
        case TW_RESP_BOXCAR:
        case TW_RESP_WINDOW: {
            bool tiles = fabs(mm.window_s - mm.period_s) <= 0.25 * mm.period_s;
            tw_update_series full = {0};
            st = tiles ? TW_OK : fill_held(&u, mm.period_s, &full);
            const tw_update_series *src_u = tiles ? &u : &full;
            if (st == TW_OK)
                st = m->response == TW_RESP_BOXCAR ? observe_boxcar(src_u, &mm, out) : observe_windows(src_u, &mm, out);
            tw_update_series_free(&full);
            break;
        }
        default:
            st = tw_fail(TW_EINVAL, "%s: no model (response %s)", m->name, tw_response_name(m->response));
        }
    }
    if (st == TW_OK) shrink_to_fit(out);
    return st;
}
