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
    tw_est_span **by_end;
    double *first_start; /* the earliest start among by_end[k ..] */
    size_t n, next;
} pending;

static int by_end(const void *a, const void *b)
{
    const tw_est_span *x = *(tw_est_span *const *)a, *y = *(tw_est_span *const *)b;
    return (x->end_s > y->end_s) - (x->end_s < y->end_s);
}

static tw_status collect_ranges(const tw_events *events, tw_est_anchored *out, pending *p)
{
    size_t n = tw_events_count(events), m = 0;
    for (size_t i = 0; i < n; i++) {
        const tw_event *ev = tw_events_get(events, i);
        m += ev->kind && strcmp(ev->kind, "nvtx") == 0;
    }
    memset(p, 0, sizeof *p);
    if (m == 0) return TW_OK;
    out->ranges = malloc(m * sizeof *out->ranges);
    p->by_end = malloc(m * sizeof *p->by_end);
    p->first_start = malloc(m * sizeof *p->first_start);
    if (!out->ranges || !p->by_end || !p->first_start) return tw_fail(TW_ENOMEM, "out of memory (%zu NVTX ranges)", m);
    for (size_t i = 0; i < n; i++) {
        const tw_event *ev = tw_events_get(events, i);
        if (!ev->kind || strcmp(ev->kind, "nvtx") != 0) continue;
        out->ranges[out->nranges] = (tw_est_span){i, ev->start_s, ev->end_s, NAN, NAN};
        p->by_end[out->nranges] = &out->ranges[out->nranges];
        out->nranges++;
    }
    p->n = m;
    qsort(p->by_end, m, sizeof *p->by_end, by_end);
    double first = INFINITY;
    for (size_t k = m; k-- > 0;)
        p->first_start[k] = first = fmin(first, p->by_end[k]->start_s);
    return TW_OK;
}

/* The ranges whose ends the rows have passed by TW_ANCHOR_WAIT_S (or all, at
 * the end of the rows). Unlike a live region, a range can wait: the grid's
 * phase is then fitted on reads after it too, and ranges nested in one
 * another, measured a little apart, are measured under one phase. A range
 * the shape does not cover stays NaN (the estimator's then). */
static void measure_ready(pending *p, const tw_anchor *a, const tw_energy_line *shape, bool all)
{
    for (; p->next < p->n; p->next++) {
        tw_est_span *r = p->by_end[p->next];
        if (!all && !(tw_line_end_s(shape) >= r->end_s + TW_ANCHOR_WAIT_S)) break;
        r->energy_j = tw_anchor_span_j(a, shape, r->start_s, r->end_s, &r->sd_j, NULL);
    }
}

tw_status tw_est_anchor_pass(tw_sensor *src, size_t shape_col, const tw_reading_model *shape_m, size_t counter_col,
                             const tw_reading_model *counter_m, const tw_events *events, tw_est_anchored *out)
{
    memset(out, 0, sizeof *out);
    if (!src || !shape_m || !counter_m || !events) return tw_fail(TW_EINVAL, "tw_est_anchor_pass: NULL argument");
    pending p;
    tw_status st = collect_ranges(events, out, &p);
    tw_energy_line line;
    tw_anchor a;
    tw_line_init(&line, TW_LINE_TILES, shape_m);
    tw_anchor_init(&a, counter_m, shape_m->period_s);
    if (st == TW_OK) st = tw_sensor_rewind(src);
    for (size_t rows = 1; st == TW_OK; rows++) {
        tw_row row;
        bool eof = false;
        if ((st = tw_sensor_next(src, &row, &eof)) != TW_OK || eof) break;
        tw_anchor_feed(&a, &line, &row, shape_col, counter_col);
        measure_ready(&p, &a, &line, false);
        /* what the ranges still to come need, and the anchor's fit */
        if (rows % TRIM_EVERY == 0) {
            double keep = p.next < p.n ? p.first_start[p.next] : tw_line_end_s(&line);
            tw_anchor_trim(&a, keep);
            tw_line_trim(&line, fmin(keep, tw_anchor_needed_from(&a)));
        }
    }
    if (st == TW_OK) measure_ready(&p, &a, &line, true);
    tw_anchor_free(&a);
    tw_line_free(&line);
    free(p.by_end);
    free(p.first_start);
    if (st != TW_OK) tw_est_anchored_free(out);
    return st;
}

static int by_event(const void *key, const void *elem)
{
    size_t e = *(const size_t *)key, f = ((const tw_est_span *)elem)->event;
    return (e > f) - (e < f);
}

void tw_est_anchored_apply(const tw_est_anchored *a, tw_estimate *e)
{
    for (size_t i = 0; a->nranges && i < e->nranges; i++) {
        tw_est_range *r = &e->ranges[i];
        const tw_est_span *s = bsearch(&r->event, a->ranges, a->nranges, sizeof *a->ranges, by_event);
        if (!s || isnan(s->energy_j)) continue;
        r->energy_j = s->energy_j;
        r->energy_sd_j = s->sd_j;
        r->baseline_j = s->energy_j - r->above_j;
    }
}

void tw_est_anchored_free(tw_est_anchored *a)
{
    free(a->ranges);
    a->ranges = NULL;
    a->nranges = 0;
}
