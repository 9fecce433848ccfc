/* The DVFS reports' shared part (report.h), their options, and
 * `truewatt dvfs eval` as a library call (tw_dvfs_eval_report): Wang &
 * Chu's model with a published parameter set against the authors' measured
 * rows. */
#include "dvfs/report.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "dvfs/data.h"
#include "dvfs/eval.h"
#include "dvfs/model.h"

void tw_dvfs_options_init(tw_dvfs_options *o)
{
    if (!o) return;
    memset(o, 0, sizeof *o);
    o->size = sizeof *o;
    o->folds = 5;
    o->objective = "energy";
    o->power_model = "scaled";
    o->repeats = 5;
}

tw_status tw_dvfs_options_check(const tw_dvfs_options *o, FILE *out)
{
    if (!o || !out) return tw_fail(TW_EINVAL, "dvfs: no options or no output stream");
    if (o->size < sizeof *o) return tw_fail(TW_EINVAL, "dvfs: options not initialised (tw_dvfs_options_init)");
    if (!o->data || !o->params) return tw_fail(TW_EINVAL, "dvfs: the data and the parameter file are required");
    return TW_OK;
}

tw_status tw_dvfs_close_out(FILE *f, const char *path)
{
    bool bad = ferror(f) != 0;
    if (fclose(f) != 0 || bad) return tw_fail(TW_EIO, "cannot write %s", path);
    return TW_OK;
}

tw_status tw_dvfs_name_data(const char *data, tw_status st)
{
    const char *detail = tw_last_error();
    if (!detail || strncmp(detail, "line ", 5) != 0) return st;
    char copy[1024];
    snprintf(copy, sizeof copy, "%s", detail);
    return tw_fail(st, "%s: %s", data, copy);
}

void tw_dvfs_print_points_header(FILE *out, const char *title)
{
    fprintf(out, "\n%s:\n  %-24s %6s %6s %12s %12s %-8s %8s\n", title, "kernel", "core", "mem", "measured_ms",
            "predicted_ms", "regime", "APE");
}

void tw_dvfs_print_point(FILE *out, const tw_dvfs_point *pt)
{
    fprintf(out, "  %-24s %6.0f %6.0f %12.5g %12.5g %-8s %6.2f %%\n", pt->row->app, pt->row->core_mhz, pt->row->mem_mhz,
            pt->row->time_ms, pt->pred.time_ms, tw_dvfs_regime_name(pt->pred.regime), 100 * pt->ape);
}

void tw_dvfs_json_point_fields(json *j, const tw_dvfs_point *pt)
{
    json_kv_string(j, "kernel", pt->row->app);
    json_kv_number(j, "core_mhz", pt->row->core_mhz);
    json_kv_number(j, "mem_mhz", pt->row->mem_mhz);
    json_kv_number(j, "measured_ms", pt->row->time_ms);
    json_kv_number(j, "predicted_ms", pt->pred.time_ms);
    json_kv_string(j, "regime", tw_dvfs_regime_name(pt->pred.regime));
    json_kv_number(j, "ape_pct", 100 * pt->ape);
}

static void json_group(json *j, const tw_dvfs_group *g)
{
    json_begin_object(j);
    json_kv_string(j, "name", g->name);
    json_kv_uint(j, "points", g->n);
    if (g->n) json_kv_number(j, "mape_pct", 100 * g->mape);
    json_end_object(j);
}

static void json_point(json *j, const tw_dvfs_point *pt)
{
    json_begin_object(j);
    json_kv_uint(j, "line", pt->row->line);
    tw_dvfs_json_point_fields(j, pt);
    json_end_object(j);
}

static void print_json(FILE *out, const tw_dvfs_options *a, const tw_dvfs_params *p, const tw_dvfs_eval *e)
{
    json j;
    json_init(&j, out);
    json_begin_object(&j);
    json_kv_string(&j, "data", a->data);
    json_kv_string(&j, "gpu", p->name);
    json_kv_string(&j, "source", p->source);
    json_kv_bool(&j, "paper_compat", a->paper_compat);
    json_kv_uint(&j, "points", e->n);
    json_kv_uint(&j, "skipped", e->skipped);
    json_kv_number(&j, "mape_pct", 100 * e->mape);
    json_key(&j, "regimes");
    json_begin_array(&j);
    for (int r = 0; r < TW_DVFS_REGIMES; r++)
        json_group(&j, &e->regimes[r]);
    json_end_array(&j);
    json_key(&j, "kernels");
    json_begin_array(&j);
    for (size_t i = 0; i < e->nkernels; i++)
        json_group(&j, &e->kernels[i]);
    json_end_array(&j);
    json_key(&j, "worst");
    json_begin_array(&j);
    for (size_t i = 0; i < e->nworst; i++)
        json_point(&j, &e->points[e->worst[i]]);
    json_end_array(&j);
    json_end_object(&j);
    json_finish(&j);
}

static void print_text(FILE *out, const tw_dvfs_options *a, const tw_dvfs_params *p, const tw_dvfs_eval *e)
{
    fprintf(out, "Wang & Chu DVFS model, %s, parameters %s%s\n", a->data, p->name,
            a->paper_compat ? ", with the authors' kernel special cases (--paper-compat)" : "");
    fprintf(out, "points: %zu (%zu rows outside the %s)\n", e->n, e->skipped,
            a->all_kernels ? "file" : "authors' 20 kernels at clocks >= 500 MHz");
    fprintf(out, "MAPE: %.2f %%\n\nper regime:\n", 100 * e->mape);
    for (int r = 0; r < TW_DVFS_REGIMES; r++) {
        const tw_dvfs_group *g = &e->regimes[r];
        if (g->n)
            fprintf(out, "  %-8s %6.2f %%  (%zu points)\n", g->name, 100 * g->mape, g->n);
        else
            fprintf(out, "  %-8s      -    (0 points)\n", g->name);
    }
    fprintf(out, "\nper kernel:\n");
    for (size_t i = 0; i < e->nkernels; i++)
        fprintf(out, "  %-24s %6.2f %%  (%zu points)\n", e->kernels[i].name, 100 * e->kernels[i].mape, e->kernels[i].n);
    tw_dvfs_print_points_header(out, "worst points");
    for (size_t i = 0; i < e->nworst; i++)
        tw_dvfs_print_point(out, &e->points[e->worst[i]]);
}

tw_status tw_dvfs_eval_report(const tw_dvfs_options *a, FILE *out)
{
    tw_status st = tw_dvfs_options_check(a, out);
    if (st != TW_OK) return st;
    tw_dvfs_params p;
    if ((st = tw_dvfs_params_load(a->params, &p)) != TW_OK) return st;
    tw_dvfs_data d;
    if ((st = tw_dvfs_load(a->data, &d)) != TW_OK) return st;
    tw_dvfs_eval e;
    st = tw_dvfs_evaluate(&p, &d, a->paper_compat, a->all_kernels, &e);
    if (st == TW_OK) {
        if (a->json)
            print_json(out, a, &p, &e);
        else
            print_text(out, a, &p, &e);
        tw_dvfs_eval_free(&e);
    } else
        st = tw_dvfs_name_data(a->data, st);
    tw_dvfs_data_free(&d);
    return st;
}
