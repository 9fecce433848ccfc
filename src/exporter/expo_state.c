/* Each GPU's live state in the exporter: the sampler's rows in, what a
 * scrape publishes out (expo.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "exporter/expo.h"

/* How long after a GPU's first row the energy's source is fixed when no
 * counter reading came: the slow thread reads the counter at its start. */
#define CHOOSE_SOURCE_S 2.0

static const char *const reading_names[EXPO_NREADINGS] = {
    [EXPO_R_BUFFER] = "power_buffer_w",   [EXPO_R_USAGE] = "power_usage_w", [EXPO_R_AVG] = "power_avg_w",
    [EXPO_R_INSTANT] = "power_instant_w", [EXPO_R_ENERGY] = "energy_j",
};

const char *tw_expo_reading_name(int r) { return r >= 0 && r < EXPO_NREADINGS ? reading_names[r] : ""; }

static int reading_of(const char *name)
{
    for (int r = 0; r < EXPO_NREADINGS; r++)
        if (strcmp(name, reading_names[r]) == 0) return r;
    return -1;
}

tw_status tw_expo_gpu_init(expo_gpu *g, unsigned index, const char *uuid, const char *model)
{
    memset(g, 0, sizeof *g);
    g->index = index;
    snprintf(g->uuid, sizeof g->uuid, "%s", uuid ? uuid : "");
    snprintf(g->model, sizeof g->model, "%s", model ? model : "");
    snprintf(g->profile, sizeof g->profile, "none");
    tw_profile_init(&g->prof);
    g->energy_src = -1;
    g->last_row_t = -1.0;
    for (int r = 0; r < EXPO_NREADINGS; r++) {
        g->r[r].t = calloc(EXPO_WINDOW_CAP, sizeof(double));
        g->r[r].v = calloc(EXPO_WINDOW_CAP, sizeof(double));
        if (!g->r[r].t || !g->r[r].v) {
            tw_expo_gpu_free(g);
            return tw_fail(TW_ENOMEM, "out of memory (exporter windows)");
        }
    }
    return TW_OK;
}

void tw_expo_gpu_free(expo_gpu *g)
{
    for (int r = 0; r < EXPO_NREADINGS; r++) {
        free(g->r[r].t);
        free(g->r[r].v);
        g->r[r].t = g->r[r].v = NULL;
    }
    free(g->runs);
    g->runs = NULL;
    g->nruns = g->runs_cap = 0;
}

/* The i-th newest point (0 = the last). */
static size_t at(const expo_series *s, size_t back) { return (s->head + EXPO_WINDOW_CAP - 1 - back) % EXPO_WINDOW_CAP; }

/* A power value holds from the point before to its own time (a sample is the
 * mean of its interval, a boxcar the mean of the window before it). */
static void series_add(expo_series *s, bool power, double t, double v)
{
    if (s->n > 0) {
        double t_prev = s->t[at(s, 0)];
        if (!(t > t_prev)) return; /* the same value again, or out of order: nothing new */
        if (power) s->integral_j += v * (t - t_prev);
    }
    s->t[s->head] = t;
    s->v[s->head] = v;
    s->head = (s->head + 1) % EXPO_WINDOW_CAP;
    if (s->n < EXPO_WINDOW_CAP) s->n++;
    s->points++;
}

/* The counter's increments since the first read; a value lower than the one
 * before is a counter that started again (driver reload, GPU reset): its
 * value is then the energy since, and is added whole. */
static void counter_add(expo_gpu *g, double raw_j)
{
    if (!g->counter_started) {
        g->counter_started = true;
        g->counter_prev_raw = raw_j;
        return;
    }
    double d = raw_j - g->counter_prev_raw;
    if (d < 0) {
        g->resets++;
        d = raw_j;
    }
    g->counter_j += d;
    g->counter_prev_raw = raw_j;
}

/* A reading the exporter follows, with at least two values (a window's mean needs two). */
static bool usable_two(const char *name, void *ctx)
{
    int r = reading_of(name);
    return r >= 0 && ((const expo_gpu *)ctx)->r[r].n >= 2;
}

/* The best reading with two values or more: the profile's ranking, else the
 * buffer, the polled power readings, the counter, in that order (power_only:
 * not the counter). -1 when none has two values yet. */
static int best_reading(const expo_gpu *g, bool power_only)
{
    if (g->have_profile) {
        const tw_reading_model *m = tw_profile_best(&g->prof, usable_two, (void *)g);
        int r = m ? reading_of(m->name) : -1;
        if (r >= 0 && !(power_only && r == EXPO_R_ENERGY)) return r;
    }
    for (int r = 0; r < EXPO_NREADINGS; r++) {
        if (power_only && r == EXPO_R_ENERGY) continue;
        if (g->r[r].n >= 2) return r;
    }
    return -1;
}

static void choose_energy_source(expo_gpu *g, double t)
{
    if (g->energy_src >= 0) return;
    if (g->r[EXPO_R_ENERGY].n > 0)
        g->energy_src = EXPO_R_ENERGY;
    else if (t - g->first_row_t >= CHOOSE_SOURCE_S)
        g->energy_src = best_reading(g, true);
}

void tw_expo_gpu_row(expo_gpu *g, const char *const *names, const tw_row *row)
{
    if (g->last_row_t >= 0 && row->t_s - g->last_row_t > EXPO_STALL_S) g->stalls++;
    if (row->t_s > g->last_row_t) g->last_row_t = row->t_s;
    if (g->rows++ == 0) g->first_row_t = row->t_s;
    for (size_t i = 0; i < row->n; i++) {
        int r = reading_of(names[i]);
        if (r < 0 || (row->valid && !row->valid[i])) continue;
        double t = row->t_value_s ? row->t_value_s[i] : row->t_s;
        size_t before = g->r[r].points;
        series_add(&g->r[r], r != EXPO_R_ENERGY, t, row->value[i]);
        if (r == EXPO_R_ENERGY && g->r[r].points > before) counter_add(g, row->value[i]);
    }
    choose_energy_source(g, row->t_s);
}

void tw_expo_gpu_failed(expo_gpu *g, const char *msg)
{
    g->lost = true;
    snprintf(g->lost_msg, sizeof g->lost_msg, "%s", msg ? msg : "");
}

/* How far before its timestamp a reading's value refers to, on average: its
 * model's delay plus half its update period (a value is published at some
 * update instant up to one period before it is read). 0 without a model. */
static double model_lag_s(const expo_gpu *g, int r)
{
    if (!g->have_profile) return 0.0;
    const tw_reading_model *m = tw_profile_find(&g->prof, tw_expo_reading_name(r));
    if (!m) return 0.0;
    double lag = 0.0;
    if (isfinite(m->delay_s) && m->delay_s > 0) lag += m->delay_s;
    if (r == EXPO_R_ENERGY && isfinite(m->period_s) && m->period_s > 0) lag += 0.5 * m->period_s;
    return lag;
}

/* The mean over the window ending at the reading's last point: the power
 * values weighted by the time each covers, or the counter's slope. At least
 * the last two points are used, however far apart. */
static bool window_mean(const expo_series *s, bool counter, double window_s, double *out)
{
    if (s->n < 2) return false;
    size_t last = at(s, 0);
    double t_end = s->t[last];
    size_t k = 1; /* the oldest point used, counted back from the last */
    while (k + 1 < s->n && s->t[at(s, k + 1)] >= t_end - window_s - 1e-9)
        k++;
    if (counter) {
        size_t first = at(s, k);
        double dt = t_end - s->t[first];
        if (!(dt > 0)) return false;
        double de = s->v[last] - s->v[first];
        if (de < 0) return false; /* a reset inside the window */
        *out = de / dt;
        return true;
    }
    double sum = 0, span = 0;
    for (size_t j = 0; j < k; j++) {
        double dt = s->t[at(s, j)] - s->t[at(s, j + 1)];
        sum += s->v[at(s, j)] * dt;
        span += dt;
    }
    if (!(span > 0)) return false;
    *out = sum / span;
    return true;
}

void tw_expo_gpu_view(const expo_gpu *g, double window_s, const char *host, expo_view *v)
{
    memset(v, 0, sizeof *v);
    v->index = g->index;
    v->uuid = g->uuid;
    v->model = g->model;
    v->host = host;
    v->profile = g->profile;
    v->stalls = g->stalls;
    v->failures = g->failures;
    v->resets = g->resets;
    v->lost = g->lost;
    v->nprocs = g->nprocs;
    v->procs = g->procs;
    v->energy_source = "none";
    v->power_reading = "none";
    v->response = "unknown";
    int src = g->energy_src;
    if (src >= 0 && g->r[src].n > 0) {
        const expo_series *s = &g->r[src];
        v->has_energy = true;
        v->energy_source = src == EXPO_R_ENERGY ? "counter" : tw_expo_reading_name(src);
        v->energy_j = src == EXPO_R_ENERGY ? g->counter_j : s->integral_j;
        v->energy_t = s->t[at(s, 0)] - model_lag_s(g, src);
    }
    int best = best_reading(g, false);
    if (best >= 0 && !g->lost) {
        v->power_reading = tw_expo_reading_name(best);
        v->has_power = window_mean(&g->r[best], best == EXPO_R_ENERGY, window_s, &v->power_w);
        const tw_reading_model *m = g->have_profile ? tw_profile_find(&g->prof, v->power_reading) : NULL;
        if (m) v->response = tw_response_name(m->response);
    }
}
