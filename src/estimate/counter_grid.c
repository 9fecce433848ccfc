/* The energy counter's windows on its fitted update grid: see counter_grid.h. */
#include "estimate/counter_grid.h"

#include <math.h>
#include <stdlib.h>

#include "api/anchor.h"
#include "api/energy_line.h"
#include "core/error.h"
#include "core/sort.h"

#define TRIM_EVERY 256 /* rows between trims, as the session's */
/* Knots this long before the shape's end are taken as they stand: the
 * anchor's fit spans the last 20 s of reads, so a later refit places them
 * no more (the anchor then lets them and the shape before them go). */
#define SETTLED_S 30.0
/* Reads whose phases on the counter's grid lie within 2 x this of one
 * another count as one phase (a read's stamp, the call's middle, scatters
 * by a few ms on an H100: a call costs ~4 ms) */
#define PHASE_TOL_S 0.004

typedef struct knots {
    tw_anchor_knot *v;
    size_t n, cap;
} knots;

static tw_status push_knot(knots *out, tw_anchor_knot k)
{
    if (out->n == out->cap) {
        size_t cap = out->cap ? 2 * out->cap : 256;
        tw_anchor_knot *v = realloc(out->v, cap * sizeof *v);
        if (!v) return tw_fail(TW_ENOMEM, "out of memory (%zu counter reads)", cap);
        out->v = v;
        out->cap = cap;
    }
    out->v[out->n++] = k;
    return TW_OK;
}

/* The anchor's knots up to t after those taken already (in order of time). */
static tw_status take_knots(knots *out, const tw_anchor *a, double t)
{
    const tw_anchor_knot *k;
    size_t nk = tw_anchor_knots(a, &k);
    tw_status st = TW_OK;
    for (size_t i = 0; i < nk && k[i].t_s <= t && st == TW_OK; i++)
        if (!out->n || k[i].t_s > out->v[out->n - 1].t_s) st = push_knot(out, k[i]);
    return st;
}

/* The start of the window of width 2 PHASE_TOL_S (on the circle of one
 * period) that holds the most reads' phases. */
static tw_status common_phase(const tw_update_series *reads, double period, double delay, double *lo, size_t *most)
{
    size_t n = reads->n;
    double *r = malloc(2 * n * sizeof *r);
    if (!r) return tw_fail(TW_ENOMEM, "out of memory (%zu counter reads)", n);
    for (size_t i = 0; i < n; i++) {
        double g = reads->v[i].t_s - delay;
        r[i] = g - floor(g / period) * period;
    }
    tw_sort_doubles(r, n);
    for (size_t i = 0; i < n; i++)
        r[n + i] = r[i] + period; /* once round the circle */
    *most = 0;
    for (size_t i = 0, j = 0; i < n; i++) {
        if (j < i) j = i;
        while (j + 1 < 2 * n && j + 1 < i + n && r[j + 1] - r[i] <= 2 * PHASE_TOL_S)
            j++;
        if (j - i + 1 > *most) {
            *most = j - i + 1;
            *lo = r[i];
        }
    }
    free(r);
    return TW_OK;
}

/* Whether the reads come further apart than the counter's updates (their
 * median gap over 1.5 periods: `truewatt run` reads it every 0.5 s). A
 * counter read at least as often as it updates shows each update within a
 * read's gap of when it came, where its reads' own times place it (a
 * simulated run's rows, a fast poller): nothing to fit. */
static tw_status reads_sparse(const tw_update_series *reads, const tw_reading_model *m, bool *sparse)
{
    *sparse = false;
    if (reads->n < 3) return TW_OK;
    double *gap = malloc((reads->n - 1) * sizeof *gap);
    if (!gap) return tw_fail(TW_ENOMEM, "out of memory (%zu counter reads)", reads->n);
    for (size_t i = 1; i < reads->n; i++)
        gap[i - 1] = reads->v[i].t_s - reads->v[i - 1].t_s;
    tw_sort_doubles(gap, reads->n - 1);
    *sparse = gap[(reads->n - 1) / 2] > 1.5 * (m->period_s > 0 ? m->period_s : 0.1);
    free(gap);
    return TW_OK;
}

/* Without a fitted grid: the reads at the phase most of them share, each
 * half a period before its own time less the delay (its boundary lies
 * somewhere in the period before that: the middle, not the end, of where
 * it may be; the windows then shifted by at most half a period, all by
 * the same, their energies exact over the shifted span); the reads off it,
 * late or early, left out (a counter loses no energy by a read left out:
 * its neighbours' window spans it). */
static tw_status keep_common_phase(const tw_update_series *reads, const tw_reading_model *m, knots *kept,
                                   tw_counter_placement *how)
{
    double period = m->period_s > 0 ? m->period_s : 0.1, delay = isfinite(m->delay_s) ? m->delay_s : 0.0, lo = 0;
    size_t most = 0;
    how->reads = reads->n;
    tw_status st = common_phase(reads, period, delay, &lo, &most);
    if (st != TW_OK || most < 2) return st; /* too few to say: none (the reads as they come) */
    for (size_t i = 0; i < reads->n && st == TW_OK; i++) {
        double g = reads->v[i].t_s - delay, ph = g - floor(g / period) * period;
        if (ph < lo) ph += period;
        if (ph - lo <= 2 * PHASE_TOL_S)
            st = push_knot(kept, (tw_anchor_knot){g - 0.5 * period, reads->v[i].value, NAN});
    }
    how->left_out = reads->n - kept->n;
    return st;
}

static tw_status windows_of(const knots *k, tw_obs_series *out)
{
    tw_status st = TW_OK;
    for (size_t i = 1; i < k->n && st == TW_OK; i++) {
        double dt = k->v[i].t_s - k->v[i - 1].t_s;
        st = tw_obs_series_push(out, k->v[i - 1].t_s, k->v[i].t_s, (k->v[i].value_j - k->v[i - 1].value_j) / dt);
    }
    return st;
}

/* The anchor's knots over the rows of src (from its start). */
static tw_status fit_grid(tw_sensor *src, size_t shape_col, const tw_reading_model *shape_m, size_t counter_col,
                          const tw_reading_model *counter_m, knots *k)
{
    tw_energy_line line;
    tw_anchor a;
    tw_line_init(&line, TW_LINE_TILES, shape_m);
    tw_anchor_init(&a, counter_m, shape_m->period_s);
    tw_status st = tw_sensor_rewind(src);
    for (size_t rows = 1; st == TW_OK; rows++) {
        tw_row row;
        bool eof = false;
        if ((st = tw_sensor_next(src, &row, &eof)) != TW_OK || eof) break;
        tw_anchor_feed(&a, &line, &row, shape_col, counter_col);
        if (rows % TRIM_EVERY == 0) {
            double keep = tw_line_end_s(&line) - SETTLED_S;
            st = take_knots(k, &a, keep);
            tw_anchor_trim(&a, keep);
            tw_line_trim(&line, fmin(keep, tw_anchor_needed_from(&a)));
        }
    }
    if (st == TW_OK) st = take_knots(k, &a, INFINITY);
    tw_anchor_free(&a);
    tw_line_free(&line);
    return st;
}

tw_status tw_est_counter_windows(tw_sensor *src, size_t shape_col, const tw_reading_model *shape_m, size_t counter_col,
                                 const tw_reading_model *counter_m, const tw_update_series *reads, tw_obs_series *out,
                                 tw_counter_placement *how)
{
    if (!src || !shape_m || !counter_m || !reads || !out || !how)
        return tw_fail(TW_EINVAL, "tw_est_counter_windows: NULL argument");
    *how = (tw_counter_placement){false, reads->n, 0};
    out->period_s = counter_m->period_s;
    out->window_s = counter_m->window_s;
    bool sparse = false;
    tw_status st = reads_sparse(reads, counter_m, &sparse);
    if (st != TW_OK || !sparse) return st; /* read as often as it updates: as the reads came */
    knots k = {NULL, 0, 0};
    st = fit_grid(src, shape_col, shape_m, counter_col, counter_m, &k);
    how->fitted = st == TW_OK && k.n >= 2;
    if (st == TW_OK && !how->fitted) {
        k.n = 0;
        st = keep_common_phase(reads, counter_m, &k, how);
    }
    if (st == TW_OK) st = windows_of(&k, out);
    free(k.v);
    return st;
}
