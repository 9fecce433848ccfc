/* Sensor identification; see identify.h. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "correct/identify.h"
#include "correct/observe.h"
#include "core/sort.h"

#define FIT_START_AFTER_CONTEXT_S 3.0 /* the plan's active-idle phase: windows start after the context */
#define FIT_END_AFTER_LAST_S 2.5
#define MIN_UPDATES 20
#define W_MIN_S 0.001
#define W_MAX_S 2.5
#define W_STEPS 80
#define C_MIN_S 0.005
#define C_MAX_S 5.0
#define C_STEPS 40
#define D_MIN_S (-0.1)
#define D_MAX_S 0.6
#define D_STEP_S 0.005
#define REFINE_ROUNDS 16
#define REFINE_SHRINK 0.6
#define RC_MARGIN 0.9 /* rc must beat the windows' residual by 10 % to be chosen */

/* ---------------------------------------------------------------- the kernels' on-signal */

typedef struct on_signal {
    double *t0, *t1, *cum; /* merged busy intervals; cum[i] = busy time before t0[i] */
    size_t n;
} on_signal;

static int cmp_start(const void *a, const void *b)
{
    const double *x = a, *y = b;
    return (x[0] > y[0]) - (x[0] < y[0]);
}

static bool is_kernel(const tw_event *e) { return !e->kind || !strcmp(e->kind, "kernel"); }

static tw_status on_signal_build(const tw_events *ev, on_signal *s)
{
    size_t n = tw_events_count(ev), m = 0;
    double *pairs = malloc((n ? n : 1) * 2 * sizeof *pairs);
    s->t0 = malloc((n ? n : 1) * sizeof *s->t0);
    s->t1 = malloc((n ? n : 1) * sizeof *s->t1);
    s->cum = malloc((n + 1) * sizeof *s->cum);
    if (!pairs || !s->t0 || !s->t1 || !s->cum) {
        free(pairs);
        return tw_fail(TW_ENOMEM, "out of memory (%zu events)", n);
    }
    for (size_t i = 0; i < n; i++) {
        const tw_event *e = tw_events_get(ev, i);
        if (!is_kernel(e) || !(e->end_s > e->start_s)) continue;
        pairs[2 * m] = e->start_s;
        pairs[2 * m + 1] = e->end_s;
        m++;
    }
    qsort(pairs, m, 2 * sizeof *pairs, cmp_start);
    s->n = 0;
    for (size_t i = 0; i < m; i++) {
        if (s->n && pairs[2 * i] <= s->t1[s->n - 1]) {
            s->t1[s->n - 1] = fmax(s->t1[s->n - 1], pairs[2 * i + 1]);
            continue;
        }
        s->t0[s->n] = pairs[2 * i];
        s->t1[s->n] = pairs[2 * i + 1];
        s->n++;
    }
    free(pairs);
    s->cum[0] = 0;
    for (size_t i = 0; i < s->n; i++)
        s->cum[i + 1] = s->cum[i] + (s->t1[i] - s->t0[i]);
    return TW_OK;
}

static void on_signal_free(on_signal *s)
{
    free(s->t0);
    free(s->t1);
    free(s->cum);
}

/* Busy time before t. */
static double busy_before(const on_signal *s, double t)
{
    size_t lo = 0, hi = s->n; /* first interval starting after t */
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (s->t0[mid] <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0) return 0.0;
    size_t i = lo - 1;
    return s->cum[i] + fmin(t, s->t1[i]) - s->t0[i];
}

static double busy_frac(const on_signal *s, double a, double b)
{
    return b > a ? (busy_before(s, b) - busy_before(s, a)) / (b - a) : 0.0;
}

/* ---------------------------------------------------------------- one reading's data */

typedef struct fit_data {
    const on_signal *on;   /* the kernels */
    const on_signal *ctx;  /* the context: on from its creation */
    double *u, *y, *uprev; /* update instants, values, previous update (for tiling) */
    size_t n;
    double *x, *z; /* scratch: predicted unit responses to the kernels and to the context */
} fit_data;

/* y = a + b x + c z: a the level before the context, c the context's step
 * (active idle = a + c), b the kernels' step. */
typedef struct fit_result {
    double rms, a, b, c;
} fit_result;

/* y = a + b x + c z by least squares (centred sums, for precision); z drops
 * out when it does not vary over the fit (every window after the context). */
static fit_result plane_fit(const double *x, const double *z, const double *y, size_t n)
{
    double mx = 0, mz = 0, my = 0;
    for (size_t k = 0; k < n; k++) {
        mx += x[k];
        mz += z[k];
        my += y[k];
    }
    mx /= (double)n;
    mz /= (double)n;
    my /= (double)n;
    double sxx = 0, sxz = 0, szz = 0, sxy = 0, szy = 0, syy = 0;
    for (size_t k = 0; k < n; k++) {
        double dx = x[k] - mx, dz = z[k] - mz, dy = y[k] - my;
        sxx += dx * dx;
        sxz += dx * dz;
        szz += dz * dz;
        sxy += dx * dy;
        szy += dz * dy;
        syy += dy * dy;
    }
    fit_result r = {INFINITY, my, 0.0, 0.0};
    if (!(sxx > 1e-12 * (double)n)) return r; /* the candidate sees no kernel: useless */
    double det = sxx * szz - sxz * sxz;
    if (szz > 1e-9 * (double)n && det > 1e-9 * sxx * szz) {
        r.b = (szz * sxy - sxz * szy) / det;
        r.c = (sxx * szy - sxz * sxy) / det;
    } else {
        r.b = sxy / sxx;
    }
    r.a = my - r.b * mx - r.c * mz;
    double rss = fmax(0.0, syy - r.b * sxy - r.c * szy);
    r.rms = sqrt(rss / (double)n);
    /* without a context term the intercept is the active-idle level itself */
    if (r.c == 0.0) r.c = 0.0;
    return r;
}

typedef enum { CAND_BOX, CAND_TILE, CAND_RC } cand_kind;

/* Unit response of a first-order lag (time constant c) to the busy signal,
 * at the sorted times t[k]. */
static void rc_response(const on_signal *s, const double *t, size_t n, double c, double *x)
{
    double y = 0.0, now = -INFINITY;
    size_t i = 0; /* next busy interval not yet ended before `now` */
    for (size_t k = 0; k < n; k++) {
        double target = t[k];
        if (now == -INFINITY) now = fmin(target, s->n ? s->t0[0] : target);
        while (now < target) {
            while (i < s->n && s->t1[i] <= now)
                i++;
            bool busy = i < s->n && s->t0[i] <= now;
            double until = i >= s->n ? target : fmin(target, busy ? s->t1[i] : s->t0[i]);
            double level = busy ? 1.0 : 0.0;
            y = level + (y - level) * exp(-(until - now) / c);
            now = until;
        }
        x[k] = y;
    }
}

/* The candidate's unit response to signal s at every update, into out. */
static void respond(const fit_data *d, const on_signal *s, cand_kind kind, double p, double delay, double *out)
{
    size_t n = d->n;
    if (kind == CAND_RC) {
        for (size_t k = 0; k < n; k++)
            out[k] = d->u[k] - delay; /* times, then responses in place */
        rc_response(s, out, n, p, out);
        return;
    }
    for (size_t k = 0; k < n; k++) {
        double t1 = d->u[k] - delay;
        double t0 = kind == CAND_TILE ? d->uprev[k] - delay : t1 - p;
        out[k] = busy_frac(s, t0, t1);
    }
}

static fit_result evaluate(fit_data *d, cand_kind kind, double p, double delay)
{
    respond(d, d->on, kind, p, delay, d->x);
    respond(d, d->ctx, kind, p, delay, d->z);
    return plane_fit(d->x, d->z, d->y, d->n);
}

typedef struct best_fit {
    cand_kind kind;
    double p, delay; /* p = window (box) or C (rc); unused for tiling */
    fit_result r;
} best_fit;

static void consider(best_fit *b, fit_data *d, cand_kind kind, double p, double delay)
{
    fit_result r = evaluate(d, kind, p, delay);
    if (r.rms < b->r.rms) *b = (best_fit){kind, p, delay, r};
}

/* Coarse grid over (p, delay), p log-spaced, then a shrinking local search. */
static best_fit search(fit_data *d, cand_kind kind, double pmin, double pmax, int psteps)
{
    best_fit b = {kind, NAN, NAN, {INFINITY, NAN, NAN, NAN}};
    double ratio = pow(pmax / pmin, 1.0 / (psteps - 1));
    for (int i = 0; i < psteps; i++)
        for (double dl = D_MIN_S; dl <= D_MAX_S + 1e-12; dl += D_STEP_S)
            consider(&b, d, kind, kind == CAND_TILE ? NAN : pmin * pow(ratio, i), dl);
    if (!isfinite(b.r.rms)) return b;
    /* A pattern search in (p, centre), centre = delay + k p: window and delay
     * trade off along a narrow valley that keeps the response's centre (k =
     * 1/2 for a window, 1 for a lag) in place, so the search walks along it. */
    double k = kind == CAND_BOX ? 0.5 : kind == CAND_RC ? 1.0 : 0.0;
    double lpr = log(ratio), ds = D_STEP_S;
    for (int round = 0; round < REFINE_ROUNDS; round++) {
        double pr = exp(lpr);
        lpr *= REFINE_SHRINK;
        best_fit c = b;
        double centre = b.delay + (kind == CAND_TILE ? 0.0 : k * b.p);
        for (int i = -2; i <= 2; i++) {
            double p = kind == CAND_TILE ? NAN : b.p * pow(pr, i);
            for (int j = -2; j <= 2; j++) {
                consider(&c, d, kind, p, centre + j * ds - (kind == CAND_TILE ? 0.0 : k * p));
                /* and moves that keep the delay: for changes faster than a lag's
                 * C the centre is not what stays put */
                if (kind != CAND_TILE) consider(&c, d, kind, p, b.delay + j * ds);
            }
        }
        b = c;
        ds *= REFINE_SHRINK;
    }
    return b;
}

/* ---------------------------------------------------------------- per reading */

static double quantile(double *v, size_t n, double q)
{
    if (n == 0) return NAN;
    tw_sort_doubles(v, n);
    return v[(size_t)fmin((double)(n - 1), floor(q * (double)(n - 1) + 0.5))];
}

static void period_stats(const tw_update_series *u, tw_reading_model *m)
{
    if (u->n < 2) return;
    double *gap = malloc((u->n - 1) * sizeof *gap);
    if (!gap) return;
    for (size_t k = 1; k < u->n; k++)
        gap[k - 1] = u->v[k].t_s - u->v[k - 1].t_s;
    m->period_p10_s = quantile(gap, u->n - 1, 0.10);
    m->period_s = quantile(gap, u->n - 1, 0.50);
    m->period_p90_s = quantile(gap, u->n - 1, 0.90);
    free(gap);
}

/* Updates turned into fit points within [t_from, t_to]: power as published;
 * a counter as the mean power since its previous update. */
static tw_status make_points(const tw_update_series *u, bool counter, double t_from, double t_to, fit_data *d)
{
    d->u = malloc((u->n ? u->n : 1) * sizeof *d->u);
    d->y = malloc((u->n ? u->n : 1) * sizeof *d->y);
    d->uprev = malloc((u->n ? u->n : 1) * sizeof *d->uprev);
    d->x = malloc((u->n ? u->n : 1) * sizeof *d->x);
    d->z = malloc((u->n ? u->n : 1) * sizeof *d->z);
    if (!d->u || !d->y || !d->uprev || !d->x || !d->z) return tw_fail(TW_ENOMEM, "out of memory (%zu updates)", u->n);
    d->n = 0;
    for (size_t k = 1; k < u->n; k++) {
        double t = u->v[k].t_s, tp = u->v[k - 1].t_s;
        if (t < t_from || t > t_to || !(t > tp)) continue;
        d->u[d->n] = t;
        d->uprev[d->n] = tp;
        d->y[d->n] = counter ? (u->v[k].value - u->v[k - 1].value) / (t - tp) : u->v[k].value;
        d->n++;
    }
    return TW_OK;
}

static void free_points(fit_data *d)
{
    free(d->u);
    free(d->y);
    free(d->uprev);
    free(d->x);
    free(d->z);
}

/* The reading's level before the context: its values whose window ended
 * before the context was created. */
static double pre_context_level(const tw_update_series *u, bool counter, double t_ctx, double delay)
{
    double *v = malloc((u->n ? u->n : 1) * sizeof *v);
    if (!v) return NAN;
    size_t m = 0;
    for (size_t k = 1; k < u->n; k++) {
        double t = u->v[k].t_s, tp = u->v[k - 1].t_s;
        if (t - delay > t_ctx - 0.05 || !(t > tp) || t < 0.5) continue;
        v[m++] = counter ? (u->v[k].value - u->v[k - 1].value) / (t - tp) : u->v[k].value;
    }
    double level = quantile(v, m, 0.5);
    free(v);
    return level;
}

static void fill_model(tw_reading_model *m, bool counter, const best_fit *box, const best_fit *tile, const best_fit *rc)
{
    const best_fit *win = tile->r.rms <= box->r.rms ? tile : box;
    m->rms_boxcar_w = win->r.rms;
    m->rms_rc_w = rc->r.rms;
    bool use_rc = !counter && rc->r.rms < RC_MARGIN * win->r.rms;
    const best_fit *b = use_rc ? rc : win;
    m->rms_w = b->r.rms;
    m->delay_s = b->delay;
    if (use_rc) {
        m->response = TW_RESP_RC;
        m->capacitance_s = rc->p;
        m->window_s = NAN;
        m->coverage = 1.0;
        return;
    }
    m->window_s = win == tile ? m->period_s : win->p;
    m->coverage = fmin(1.0, m->window_s / m->period_s);
    if (counter)
        m->response = TW_RESP_COUNTER;
    else
        m->response = m->window_s >= 0.9 * m->period_s ? TW_RESP_BOXCAR : TW_RESP_WINDOW;
}

typedef struct scope {
    double t_ctx, t_from, t_to;
    double ctx_t0[1], ctx_t1[1], ctx_cum[2]; /* the context as a signal: on from t_ctx */
    on_signal ctx;
} scope;

static tw_status identify_reading(tw_sensor *src, size_t i, const on_signal *on, const scope *sc, tw_reading_model *m,
                                  tw_identify_extra *ex, bool *used)
{
    const tw_reading_info *info = tw_sensor_reading(src, i);
    bool counter = info->quantity == TW_Q_ENERGY;
    tw_reading_model_init(m, info->name);
    *used = false;
    tw_update_series u = {0};
    fit_data d = {.on = on, .ctx = &sc->ctx};
    tw_status st = tw_updates_read(src, i, &u);
    if (st == TW_OK) st = make_points(&u, counter, sc->t_from, sc->t_to, &d);
    if (st == TW_OK && d.n >= MIN_UPDATES) {
        period_stats(&u, m);
        m->updates = d.n;
        best_fit box = search(&d, CAND_BOX, W_MIN_S, W_MAX_S, W_STEPS);
        best_fit tile = search(&d, CAND_TILE, 1.0, 1.0, 1);
        best_fit rc = counter ? (best_fit){CAND_RC, NAN, NAN, {INFINITY, NAN, NAN, NAN}}
                              : search(&d, CAND_RC, C_MIN_S, C_MAX_S, C_STEPS);
        fill_model(m, counter, &box, &tile, &rc);
        const best_fit *b = m->response == TW_RESP_RC ? &rc : (tile.r.rms <= box.r.rms ? &tile : &box);
        ex->active_idle_w = b->r.a + b->r.c;
        ex->step_w = b->r.b;
        m->step_w = b->r.b;
        ex->idle_w = pre_context_level(&u, counter, sc->t_ctx, m->delay_s);
        *used = isfinite(m->rms_w);
    }
    free_points(&d);
    tw_update_series_free(&u);
    return st;
}

/* ---------------------------------------------------------------- driver */

void tw_identify_options_init(tw_identify_options *o)
{
    o->t_end_s = NAN;
    o->cancel = NULL;
}

bool tw_identify_board_reading(const char *name, void *ctx)
{
    (void)ctx;
    /* memory and Grace Hopper module scopes are not the board's power */
    return strncmp(name, "mem_", 4) != 0 && strncmp(name, "true_", 5) != 0 && strstr(name, "_mem_") == NULL &&
           strncmp(name, "module_", 7) != 0 && strstr(name, "_module_") == NULL;
}

static tw_status find_scope(const tw_events *ev, const on_signal *on, const tw_identify_options *opt, scope *sc)
{
    sc->t_ctx = NAN;
    for (size_t i = 0; i < tw_events_count(ev); i++) {
        const tw_event *e = tw_events_get(ev, i);
        if (e->kind && !strcmp(e->kind, "marker") && !strcmp(e->name, "context")) sc->t_ctx = e->end_s;
    }
    if (isnan(sc->t_ctx))
        return tw_fail(TW_EINVAL, "identification needs the moment the GPU context was created "
                                  "(an event 'context' of kind 'marker')");
    if (on->n < 3) return tw_fail(TW_EINVAL, "identification needs kernels after the context (found %zu)", on->n);
    sc->ctx_t0[0] = sc->t_ctx;
    sc->ctx_t1[0] = 1e300;
    sc->ctx_cum[0] = 0;
    sc->ctx_cum[1] = 1e300;
    sc->ctx = (on_signal){sc->ctx_t0, sc->ctx_t1, sc->ctx_cum, 1};
    sc->t_from = sc->t_ctx + FIT_START_AFTER_CONTEXT_S;
    double last = -INFINITY;
    for (size_t i = 0; i < on->n; i++)
        if (isnan(opt->t_end_s) || on->t1[i] <= opt->t_end_s) last = on->t1[i];
    sc->t_to = last + FIT_END_AFTER_LAST_S;
    if (!isnan(opt->t_end_s)) sc->t_to = fmin(sc->t_to, opt->t_end_s);
    return TW_OK;
}

tw_status tw_identify(tw_sensor *src, const tw_events *events, const tw_identify_options *opt, tw_profile *out,
                      tw_identify_extra *extra)
{
    if (!src || !events || !out) return tw_fail(TW_EINVAL, "tw_identify: NULL argument");
    tw_identify_options o;
    if (opt)
        o = *opt;
    else
        tw_identify_options_init(&o);
    on_signal on = {0};
    tw_status st = on_signal_build(events, &on);
    scope sc = {.t_ctx = NAN, .t_from = NAN, .t_to = NAN};
    if (st == TW_OK) st = find_scope(events, &on, &o, &sc);
    tw_identify_extra ex[TW_PROFILE_MAX_READINGS];
    out->n = 0;
    for (size_t i = 0; st == TW_OK && i < tw_sensor_nreadings(src) && out->n < TW_PROFILE_MAX_READINGS; i++) {
        const tw_reading_info *info = tw_sensor_reading(src, i);
        if (info->quantity != TW_Q_POWER && info->quantity != TW_Q_ENERGY) continue;
        if (!strcmp(info->name, "true_power_w")) continue;
        if (o.cancel && *o.cancel) st = tw_fail(TW_EINTERRUPTED, "identification interrupted");
        bool used = false;
        if (st == TW_OK) st = identify_reading(src, i, &on, &sc, &out->r[out->n], &ex[out->n], &used);
        if (st == TW_OK && used) out->n++;
    }
    on_signal_free(&on);
    if (st != TW_OK) return st;
    if (out->n == 0)
        return tw_fail(TW_EEMPTY, "no reading updated often enough to identify (at least %d updates)", MIN_UPDATES);
    const tw_reading_model *best = tw_profile_best(out, tw_identify_board_reading, NULL);
    if (best) {
        size_t b = (size_t)(best - out->r);
        out->idle_w = ex[b].idle_w;
        out->active_idle_w = ex[b].active_idle_w;
        out->step_w = ex[b].step_w;
    }
    if (extra)
        for (size_t i = 0; i < out->n; i++)
            extra[i] = ex[i];
    return TW_OK;
}
