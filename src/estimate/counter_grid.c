/* The energy counter's windows on its fitted update grid: see counter_grid.h. */
#include "estimate/counter_grid.h"

#include <math.h>
#include <stdlib.h>

#include "api/anchor.h"
#include "api/energy_line.h"
#include "core/error.h"

#define TRIM_EVERY 256 /* rows between trims, as the session's */
/* Knots this long before the shape's end are taken as they stand: the
 * anchor's fit spans the last 20 s of reads, so a later refit places them
 * no more (the anchor then lets them and the shape before them go). */
#define SETTLED_S 30.0

typedef struct knots {
    tw_anchor_knot *v;
    size_t n, cap;
} knots;

/* The anchor's knots up to t after those taken already (in order of time). */
static tw_status take_knots(knots *out, const tw_anchor *a, double t)
{
    const tw_anchor_knot *k;
    size_t nk = tw_anchor_knots(a, &k);
    for (size_t i = 0; i < nk && k[i].t_s <= t; i++) {
        if (out->n && !(k[i].t_s > out->v[out->n - 1].t_s)) continue;
        if (out->n == out->cap) {
            size_t cap = out->cap ? 2 * out->cap : 256;
            tw_anchor_knot *v = realloc(out->v, cap * sizeof *v);
            if (!v) return tw_fail(TW_ENOMEM, "out of memory (%zu counter reads)", cap);
            out->v = v;
            out->cap = cap;
        }
        out->v[out->n++] = k[i];
    }
    return TW_OK;
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

tw_status tw_est_counter_windows(tw_sensor *src, size_t shape_col, const tw_reading_model *shape_m, size_t counter_col,
                                 const tw_reading_model *counter_m, tw_obs_series *out)
{
    if (!src || !shape_m || !counter_m || !out) return tw_fail(TW_EINVAL, "tw_est_counter_windows: NULL argument");
    tw_energy_line line;
    tw_anchor a;
    knots k = {NULL, 0, 0};
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
            st = take_knots(&k, &a, keep);
            tw_anchor_trim(&a, keep);
            tw_line_trim(&line, fmin(keep, tw_anchor_needed_from(&a)));
        }
    }
    if (st == TW_OK) st = take_knots(&k, &a, INFINITY);
    out->period_s = counter_m->period_s;
    out->window_s = counter_m->window_s;
    if (st == TW_OK) st = windows_of(&k, out);
    free(k.v);
    tw_anchor_free(&a);
    tw_line_free(&line);
    return st;
}
