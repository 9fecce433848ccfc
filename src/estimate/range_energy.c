/* NVTX ranges' energy anchored at the energy counter's reads: see range_energy.h. */
#include "estimate/range_energy.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "api/anchor.h"
#include "api/energy_line.h"
#include "core/error.h"

#define TRIM_EVERY 256 /* rows between trims, as the session's */

/* The ranges still to measure, in order of end. */
typedef struct pending {
    tw_est_range **by_end;
    double *first_start; /* the earliest start among by_end[k ..] */
    size_t n, next;
} pending;

static int by_end(const void *a, const void *b)
{
    const tw_est_range *x = *(tw_est_range *const *)a, *y = *(tw_est_range *const *)b;
    return (x->end_s > y->end_s) - (x->end_s < y->end_s);
}

static tw_status pending_open(pending *p, tw_estimate *e)
{
    memset(p, 0, sizeof *p);
    p->n = e->nranges;
    p->by_end = malloc(p->n * sizeof *p->by_end);
    p->first_start = malloc(p->n * sizeof *p->first_start);
    if (!p->by_end || !p->first_start) return tw_fail(TW_ENOMEM, "out of memory (%zu NVTX ranges)", p->n);
    for (size_t k = 0; k < p->n; k++)
        p->by_end[k] = &e->ranges[k];
    qsort(p->by_end, p->n, sizeof *p->by_end, by_end);
    double first = INFINITY;
    for (size_t k = p->n; k-- > 0;)
        p->first_start[k] = first = fmin(first, p->by_end[k]->start_s);
    return TW_OK;
}

/* The ranges whose ends the rows have passed by TW_ANCHOR_WAIT_S (or all, at
 * the end of the rows). Unlike a live region, a range can wait: the grid's
 * phase is then fitted on reads after it too, and ranges nested in one
 * another, measured a little apart, are measured under one phase. A range
 * the shape does not cover keeps the estimator's energy. */
static void measure_ready(pending *p, const tw_anchor *a, const tw_energy_line *shape, bool all)
{
    for (; p->next < p->n; p->next++) {
        tw_est_range *r = p->by_end[p->next];
        if (!all && !(tw_line_end_s(shape) >= r->end_s + TW_ANCHOR_WAIT_S)) break;
        double sd, e = tw_anchor_span_j(a, shape, r->start_s, r->end_s, &sd, NULL);
        if (isnan(e)) continue;
        r->energy_j = e;
        r->energy_sd_j = sd;
        r->baseline_j = e - r->above_j;
    }
}

tw_status tw_est_anchor_ranges(tw_sensor *src, size_t shape_col, const tw_reading_model *shape_m, size_t counter_col,
                               const tw_reading_model *counter_m, tw_estimate *e)
{
    if (!src || !shape_m || !counter_m || !e) return tw_fail(TW_EINVAL, "tw_est_anchor_ranges: NULL argument");
    if (e->nranges == 0) return TW_OK;
    pending p;
    tw_status st = pending_open(&p, e);
    tw_energy_line line;
    tw_anchor a;
    tw_line_init(&line, TW_LINE_TILES, shape_m);
    tw_anchor_init(&a, counter_m, shape_m->period_s);
    if (st == TW_OK) st = tw_sensor_rewind(src);
    for (size_t rows = 1; st == TW_OK && p.next < p.n; rows++) {
        tw_row row;
        bool eof = false;
        if ((st = tw_sensor_next(src, &row, &eof)) != TW_OK || eof) break;
        tw_anchor_feed(&a, &line, &row, shape_col, counter_col);
        measure_ready(&p, &a, &line, false);
        if (rows % TRIM_EVERY == 0 && p.next < p.n) { /* what the ranges still to come need, and the fit */
            double keep = p.first_start[p.next];
            tw_anchor_trim(&a, keep);
            tw_line_trim(&line, fmin(keep, tw_anchor_needed_from(&a)));
        }
    }
    if (st == TW_OK) measure_ready(&p, &a, &line, true);
    tw_anchor_free(&a);
    tw_line_free(&line);
    free(p.by_end);
    free(p.first_start);
    return st;
}
