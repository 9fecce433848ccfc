/* `truewatt dvfs predict` as a library call (tw_dvfs_predict_report):
 * measured kernels (rows of counters and times, as `dvfs rows` writes them)
 * through Wang & Chu's model: the prediction at the clocks each row was
 * measured at against its measured time, and the predicted time over every
 * clock pair the GPU supports (NVML's list, read, never set). The counters
 * are taken as independent of the clocks, which the paper claims
 * (dvfs-model.md §2.11: to be checked where clocks can be set). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/error.h"
#include "core/json.h"
#include "dvfs/data.h"
#include "dvfs/eval.h"
#include "dvfs/model.h"
#include "dvfs/report.h"

/* The supported pairs from NVML (for a->device). */
static tw_status clock_table(const tw_dvfs_options *a, tw_clock_table *t)
{
    tw_clocks *c = NULL;
    tw_status st = tw_clocks_open(NULL, a->device, &c);
    if (st == TW_OK) st = tw_clocks_supported(c, t);
    tw_clocks_close(c);
    if (st == TW_OK) return TW_OK;
    char why[1024];
    snprintf(why, sizeof why, "%s", tw_last_error());
    return tw_fail(st, "the supported clocks: %s (--clocks measured predicts at the rows' clocks only)", why);
}

static tw_status predict_at(const tw_dvfs_params *p, const tw_dvfs_row *r, double core, double mem,
                            tw_dvfs_prediction *out)
{
    tw_dvfs_row at = *r;
    at.core_mhz = core;
    at.mem_mhz = mem;
    return tw_dvfs_predict(p, &at, false, out);
}

static tw_status write_point(FILE *f, const tw_dvfs_params *p, const tw_dvfs_row *r, double fc, double fm)
{
    tw_dvfs_prediction pr;
    tw_status st = predict_at(p, r, fc, fm, &pr);
    if (st != TW_OK) return st;
    fprintf(f, "%s,%.0f,%.0f,%.6g,%s,", r->app, fc, fm, pr.time_ms, tw_dvfs_regime_name(pr.regime));
    if (fabs(fc - r->core_mhz) < 0.5 && fabs(fm - r->mem_mhz) < 0.5) fprintf(f, "%.6g", r->time_ms);
    fputc('\n', f);
    return TW_OK;
}

/* predict.csv: each row at every pair of t, or at its own pair when t is NULL. */
static tw_status write_sweep(const tw_dvfs_options *a, const tw_dvfs_params *p, const tw_dvfs_data *d,
                             const tw_clock_table *t)
{
    char path[4096];
    if (mkdir(a->out, 0777) != 0 && errno != EEXIST)
        return tw_fail(TW_EIO, "cannot create %s: %s", a->out, strerror(errno));
    snprintf(path, sizeof path, "%s/predict.csv", a->out);
    FILE *f = fopen(path, "w");
    if (!f) return tw_fail(TW_EIO, "cannot write %s: %s", path, strerror(errno));
    fprintf(f, "# truewatt dvfs predict %s --gpu %s --clocks %s\n", a->data, a->gpu, t ? "nvml" : "measured");
    fprintf(f, "kernel,core_mhz,mem_mhz,predicted_ms,regime,measured_ms\n");
    tw_status st = TW_OK;
    for (size_t i = 0; i < d->n && st == TW_OK; i++) {
        const tw_dvfs_row *r = &d->rows[i];
        if (!t) st = write_point(f, p, r, r->core_mhz, r->mem_mhz);
        for (size_t m = 0; t && m < t->nmem && st == TW_OK; m++)
            for (size_t g = 0; g < t->mem[m].n && st == TW_OK; g++)
                st = write_point(f, p, r, t->mem[m].gfx_mhz[g], t->mem[m].mem_mhz);
    }
    tw_status closed = tw_dvfs_close_out(f, path);
    if (st != TW_OK) return st;
    if (closed == TW_OK) tw_dvfs_note(a, "wrote %s", path);
    return closed;
}

/* A few graphics clocks of one memory clock's list: the highest, the lowest and three between. */
static size_t pick_columns(const tw_clock_mem *m, size_t *idx, size_t cap)
{
    size_t n = 0;
    if (m->n == 0) return 0;
    for (size_t k = 0; k < cap && k < m->n; k++) {
        size_t i = cap > 1 ? k * (m->n - 1) / (cap - 1) : 0;
        if (n && idx[n - 1] == i) continue;
        idx[n++] = i;
    }
    return n;
}

static void print_sweep(FILE *out, const tw_dvfs_params *p, const tw_dvfs_data *d, const tw_clock_table *t)
{
    for (size_t m = 0; m < t->nmem; m++) {
        const tw_clock_mem *cm = &t->mem[m];
        size_t idx[5], n = pick_columns(cm, idx, 5);
        char list[128];
        tw_clock_list_format(cm->gfx_mhz, cm->n, list, sizeof list);
        fprintf(out, "\nmemory %u MHz (%s): predicted ms at SM clock\n  %-24s", cm->mem_mhz, list, "kernel");
        for (size_t k = 0; k < n; k++)
            fprintf(out, " %10u", cm->gfx_mhz[idx[k]]);
        fprintf(out, "\n");
        for (size_t i = 0; i < d->n; i++) {
            fprintf(out, "  %-24s", d->rows[i].app);
            for (size_t k = 0; k < n; k++) {
                tw_dvfs_prediction pr;
                if (predict_at(p, &d->rows[i], cm->gfx_mhz[idx[k]], cm->mem_mhz, &pr) == TW_OK)
                    fprintf(out, " %10.4g", pr.time_ms);
                else
                    fprintf(out, " %10s", "-");
            }
            fprintf(out, "\n");
        }
    }
}

static void print_measured(FILE *out, const tw_dvfs_options *a, const tw_dvfs_params *p, const tw_dvfs_eval *e)
{
    fprintf(out, "Wang & Chu DVFS model, %s, parameters %s (%s)\n", a->data, p->name, p->source);
    tw_dvfs_print_points_header(out, "at the measured clocks");
    for (size_t i = 0; i < e->n; i++)
        tw_dvfs_print_point(out, &e->points[i]);
    fprintf(out, "MAPE: %.2f %% over %zu rows (%zu kernels)\n", 100 * e->mape, e->n, e->nkernels);
    for (int r = 0; r < TW_DVFS_REGIMES; r++)
        if (e->regimes[r].n)
            fprintf(out, "  %-8s %6.2f %%  (%zu rows)\n", e->regimes[r].name, 100 * e->regimes[r].mape,
                    e->regimes[r].n);
}

static void print_json(FILE *out, const tw_dvfs_options *a, const tw_dvfs_params *p, const tw_dvfs_eval *e)
{
    json j;
    json_init(&j, out);
    json_begin_object(&j);
    json_kv_string(&j, "rows", a->data);
    json_kv_string(&j, "gpu", p->name);
    json_kv_string(&j, "source", p->source);
    json_kv_uint(&j, "points", e->n);
    json_kv_number(&j, "mape_pct", 100 * e->mape);
    json_key(&j, "measured");
    json_begin_array(&j);
    for (size_t i = 0; i < e->n; i++) {
        json_begin_object(&j);
        tw_dvfs_json_point_fields(&j, &e->points[i]);
        json_end_object(&j);
    }
    json_end_array(&j);
    json_end_object(&j);
    json_finish(&j);
}

tw_status tw_dvfs_predict_report(const tw_dvfs_options *a, FILE *out)
{
    tw_status st = tw_dvfs_options_check(a, out);
    if (st == TW_OK && !a->out) st = tw_fail(TW_EINVAL, "dvfs predict: the folder of predict.csv is required");
    if (st != TW_OK) return st;
    tw_dvfs_params p;
    if ((st = tw_dvfs_params_load(a->params, &p)) != TW_OK) return st;
    tw_dvfs_data d;
    if ((st = tw_dvfs_load(a->data, &d)) != TW_OK) return st;
    tw_dvfs_eval e;
    if ((st = tw_dvfs_evaluate(&p, &d, false, true, &e)) != TW_OK) {
        tw_dvfs_data_free(&d);
        return st;
    }
    tw_clock_table t = {0};
    st = a->device ? clock_table(a, &t) : TW_OK;
    if (st == TW_OK) {
        if (a->json)
            print_json(out, a, &p, &e);
        else {
            print_measured(out, a, &p, &e);
            if (a->device) print_sweep(out, &p, &d, &t);
        }
        st = write_sweep(a, &p, &d, a->device ? &t : NULL);
    }
    tw_clock_table_free(&t);
    tw_dvfs_eval_free(&e);
    tw_dvfs_data_free(&d);
    return st;
}
