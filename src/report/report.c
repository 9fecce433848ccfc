/* The public report API (truewatt.h, "reports"): one record model, built
 * from one run file (run_pipeline.c) or several (run_merge.c), rendered as
 * text, JSON or CSV (run_report.c) and Perfetto (perfetto.c). */
#define _GNU_SOURCE /* open_memstream */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "report/run_merge.h"
#include "report/run_pipeline.h"
#include "report/run_report.h"
#include "truewatt.h"

void tw_report_options_init(tw_report_options *o)
{
    memset(o, 0, sizeof *o);
    o->size = sizeof *o;
}

/* The caller's options, whatever their size (fields it does not know: 0). */
static tw_report_options options_of(const tw_report_options *o)
{
    tw_report_options x;
    tw_report_options_init(&x);
    if (o) memcpy(&x, o, o->size < sizeof x ? o->size : sizeof x);
    x.size = sizeof x;
    return x;
}

static tw_status made(tw_status st, tw_report *r, tw_report **out)
{
    if (st == TW_OK) {
        *out = r;
        return TW_OK;
    }
    char why[1024]; /* freeing may touch the thread's last error: the caller reads this one */
    snprintf(why, sizeof why, "%s", tw_last_error());
    tw_report_free(r);
    return tw_fail(st, "%s", why);
}

tw_status tw_report_compute(tw_run *run, const tw_report_options *o, tw_report **out)
{
    if (!run || !out) return tw_fail(TW_EINVAL, "tw_report_compute: no run or no out");
    *out = NULL;
    tw_report *r = calloc(1, sizeof *r);
    if (!r) return tw_fail(TW_ENOMEM, "out of memory");
    tw_report_options x = options_of(o);
    return made(run_report_load(run, &x, r), r, out);
}

tw_status tw_report_merge(const char *const *paths, size_t n, const tw_report_options *o, tw_report **out)
{
    if (!paths || n == 0 || !out) return tw_fail(TW_EINVAL, "tw_report_merge: no run files");
    *out = NULL;
    tw_report *r = calloc(1, sizeof *r);
    if (!r) return tw_fail(TW_ENOMEM, "out of memory");
    tw_report_options x = options_of(o);
    return made(run_merge_load(paths, n, &x, r), r, out);
}

tw_status tw_report_write_perfetto(tw_report *r, const char *path)
{
    if (!r || !path) return tw_fail(TW_EINVAL, "tw_report_write_perfetto: no report or no path");
    if (!r->one) return tw_fail(TW_EUNSUPPORTED, "a Perfetto file is written from one run file's report");
    return run_loaded_perfetto(r->one, path);
}

tw_status tw_report_render(const tw_report *r, tw_report_format format, char **text, size_t *len)
{
    if (!r || !text) return tw_fail(TW_EINVAL, "tw_report_render: no report");
    *text = NULL;
    size_t n = 0;
    FILE *f = open_memstream(text, &n);
    if (!f) return tw_fail(TW_ENOMEM, "out of memory");
    tw_status st = TW_OK;
    switch (format) {
    case TW_REPORT_TEXT:
        if (r->one)
            run_loaded_text(r->one, f);
        else
            run_merged_text(r->merged, f);
        break;
    case TW_REPORT_JSON:
        if (r->one)
            run_loaded_json(r->one, f);
        else
            run_merged_json(r->merged, f);
        break;
    case TW_REPORT_CSV:
        run_report_csv(r->dev, r->ndev, f);
        break;
    default:
        st = tw_fail(TW_EINVAL, "tw_report_render: no format %d", (int)format);
    }
    if (fclose(f) != 0 && st == TW_OK) st = tw_fail(TW_ENOMEM, "out of memory");
    if (st != TW_OK) {
        free(*text);
        *text = NULL;
        return st;
    }
    if (len) *len = n;
    return TW_OK;
}

tw_status tw_report_keep(const tw_report *r, tw_run *run, const char *options)
{
    char *text = NULL;
    tw_status st = tw_report_render(r, TW_REPORT_JSON, &text, NULL);
    if (st == TW_OK) st = tw_run_add_report(run, options ? options : "", text);
    free(text);
    return st;
}

const char *tw_report_notice(const tw_report *r) { return r && r->notice ? r->notice : ""; }

void tw_report_free(tw_report *r)
{
    if (!r) return;
    run_loaded_free(r->one);
    run_merged_free(r->merged);
    free(r->dev);
    free(r);
}

/* ---------------------------------------------------------------- the records */

size_t tw_report_device_count(const tw_report *r) { return r ? r->ndev : 0; }

/* Copies what the caller's struct holds of x (its size first). */
#define COPY_OUT(out, x) memcpy((out), &(x), (out)->size < sizeof(x) ? (out)->size : sizeof(x))

/* Device d, or NULL after tw_fail (the caller returns TW_EINVAL). */
static const run_device *device_of(const tw_report *r, size_t d)
{
    if (r && d < r->ndev) return r->dev[d];
    tw_fail(TW_EINVAL, "no device %zu in the report", d);
    return NULL;
}

tw_status tw_report_device_get(const tw_report *r, size_t d, tw_report_device *out)
{
    const run_device *x = device_of(r, d);
    if (!x) return TW_EINVAL;
    const tw_estimate *e = x->est;
    tw_report_device v = {.size = sizeof v,
                          .index = x->index,
                          .uuid = x->uuid ? x->uuid : "",
                          .name = x->name,
                          .error = e ? NULL : x->est_error,
                          .fit_start_s = e ? e->fit_t0_s : NAN,
                          .fit_end_s = e ? e->fit_t1_s : NAN,
                          .energy_j = e ? e->model_j : NAN,
                          .counter_j = e ? x->methods.counter_j : NAN,
                          .kernels_j = e ? e->kernels_j : NAN,
                          .copies_j = e ? e->copies_j : NAN,
                          .baseline_j = e ? e->baseline_j : NAN,
                          .conservation_pct = e ? e->conservation_pct : NAN,
                          .names = e ? e->nnames : 0,
                          .groups = e ? e->ngroups : 0,
                          .ranges = e ? e->nranges : 0};
    COPY_OUT(out, v);
    return TW_OK;
}

tw_status tw_report_name_get(const tw_report *r, size_t d, size_t i, tw_report_name *out)
{
    const run_device *x = device_of(r, d);
    if (!x) return TW_EINVAL;
    if (!x->est || i >= x->est->nnames) return tw_fail(TW_EINVAL, "no name %zu on device %zu", i, d);
    const tw_est_name *n = &x->est->names[i];
    tw_report_name v = {.size = sizeof v,
                        .name = n->name,
                        .kind = n->kind,
                        .status = tw_est_status_name(n->status),
                        .launches = n->launches,
                        .time_s = n->time_s,
                        .energy_j = n->energy_j,
                        .energy_sd_j = n->energy_sd_j,
                        .power_w = n->power_w,
                        .upper_j = n->upper_j,
                        .group = n->group,
                        .method = tw_est_method_name(n->method)};
    COPY_OUT(out, v);
    return TW_OK;
}

tw_status tw_report_group_get(const tw_report *r, size_t d, size_t i, tw_report_group *out)
{
    const run_device *x = device_of(r, d);
    if (!x) return TW_EINVAL;
    if (!x->est || i >= x->est->ngroups) return tw_fail(TW_EINVAL, "no group %zu on device %zu", i, d);
    const tw_est_group *g = &x->est->groups[i];
    tw_report_group v = {.size = sizeof v,
                         .label = run_group_label(x, i),
                         .status = tw_est_status_name(g->status),
                         .members = g->nmembers,
                         .launches = g->launches,
                         .time_s = g->time_s,
                         .energy_j = g->energy_j,
                         .energy_sd_j = g->energy_sd_j,
                         .power_w = g->power_w,
                         .upper_j = g->upper_j};
    COPY_OUT(out, v);
    return TW_OK;
}

tw_status tw_report_range_get(const tw_report *r, size_t d, size_t i, tw_report_range *out)
{
    const run_device *x = device_of(r, d);
    if (!x) return TW_EINVAL;
    if (!x->est || i >= x->est->nranges) return tw_fail(TW_EINVAL, "no range %zu on device %zu", i, d);
    run_range_of(x, i, out);
    return TW_OK;
}

const tw_estimate *tw_report_device_estimate(const tw_report *r, size_t d)
{
    return r && d < r->ndev ? r->dev[d]->est : NULL;
}

const tw_events *tw_report_device_events(const tw_report *r, size_t d)
{
    return r && d < r->ndev ? r->dev[d]->events : NULL;
}
