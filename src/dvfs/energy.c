/* Energy-optimal clock pairs against the measured optimum (energy.h). */
#include "dvfs/energy.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "dvfs/eval.h"

#define SECTOR_BYTES 32.0 /* nvprof counts DRAM transactions in 32 B sectors */

const char *tw_dvfs_objective_name(tw_dvfs_objective o) { return o == TW_DVFS_OBJ_EDP ? "edp" : "energy"; }

double tw_dvfs_objective_value(tw_dvfs_objective o, double power_w, double time_ms)
{
    double energy_mj = power_w * time_ms;
    return o == TW_DVFS_OBJ_EDP ? energy_mj * time_ms : energy_mj;
}

size_t tw_dvfs_argmin(tw_dvfs_objective o, const double *power_w, const double *time_ms, size_t n)
{
    size_t best = 0;
    for (size_t i = 1; i < n; i++)
        if (tw_dvfs_objective_value(o, power_w[i], time_ms[i]) <
            tw_dvfs_objective_value(o, power_w[best], time_ms[best]))
            best = i;
    return best;
}

/* ---------------------------------------------------------------- the points, grouped by kernel */

static tw_dvfs_kernel_energy *kernel_named(tw_dvfs_energy_eval *e, const char *app)
{
    for (size_t i = 0; i < e->nkernels; i++)
        if (!strcmp(e->kernels[i].name, app)) return &e->kernels[i];
    tw_dvfs_kernel_energy *k = &e->kernels[e->nkernels++]; /* room for one per row */
    snprintf(k->name, sizeof k->name, "%s", app);
    return k;
}

/* Counts each kernel's rows, then places them: the points of a kernel are contiguous. */
static tw_status group_rows(const tw_dvfs_data *d, const double *power_w, bool all_kernels, tw_dvfs_energy_eval *e)
{
    for (size_t i = 0; i < d->n; i++) {
        if (all_kernels || tw_dvfs_in_paper_set(&d->rows[i]))
            kernel_named(e, d->rows[i].app)->n++;
        else
            e->skipped++;
    }
    if (!e->nkernels) return tw_fail(TW_EEMPTY, "no rows of the authors' 20 kernels at clocks >= 500 MHz");
    for (size_t k = 1; k < e->nkernels; k++)
        e->kernels[k].first = e->kernels[k - 1].first + e->kernels[k - 1].n;
    size_t *fill = calloc(e->nkernels, sizeof *fill);
    if (!fill) return tw_fail(TW_ENOMEM, "out of memory evaluating clock pairs");
    for (size_t i = 0; i < d->n; i++) {
        if (!all_kernels && !tw_dvfs_in_paper_set(&d->rows[i])) continue;
        tw_dvfs_kernel_energy *k = kernel_named(e, d->rows[i].app);
        size_t kk = (size_t)(k - e->kernels);
        e->points[k->first + fill[kk]++] = (tw_dvfs_energy_point){.row = &d->rows[i], .power_w = power_w[i]};
        e->n++;
    }
    free(fill);
    return TW_OK;
}

/* The default pair: what the GPU runs at unless told otherwise is taken to be its highest clocks. */
static void find_default(tw_dvfs_energy_eval *e)
{
    for (size_t i = 0; i < e->n; i++) {
        if (e->points[i].row->core_mhz > e->core_def_mhz) e->core_def_mhz = e->points[i].row->core_mhz;
        if (e->points[i].row->mem_mhz > e->mem_def_mhz) e->mem_def_mhz = e->points[i].row->mem_mhz;
    }
}

static tw_status find_kernel_default(tw_dvfs_energy_eval *e, tw_dvfs_kernel_energy *k)
{
    for (size_t i = k->first; i < k->first + k->n; i++)
        if (e->points[i].row->core_mhz == e->core_def_mhz && e->points[i].row->mem_mhz == e->mem_def_mhz) {
            k->def = i;
            return TW_OK;
        }
    return tw_fail(TW_EINVAL,
                   "%s has no row at the default pair %g/%g MHz (the highest clocks), which the models start from",
                   k->name, e->core_def_mhz, e->mem_def_mhz);
}

/* The kernel's profile at the default pair, in the units the power model takes. */
static tw_status kernel_ref(const tw_dvfs_energy_point *def, tw_dvfs_kernel_ref *ref)
{
    const tw_dvfs_row *r = def->row;
    if (!(r->time_ms > 0))
        return tw_fail(TW_EINVAL, "line %lu (%s at the default pair): the time must be positive", r->line, r->app);
    double insts = r->inst_per_warp * r->warps, bytes = (r->dram_read + r->dram_write) * SECTOR_BYTES;
    ref->ipc = insts / (r->time_ms * 1e-3 * r->core_mhz * 1e6);
    ref->dram_gbs = bytes / (r->time_ms * 1e-3) / 1e9;
    ref->power_w = def->power_w;
    return TW_OK;
}

/* ---------------------------------------------------------------- the models */

/* One profile: the counters measured at the default pair, with the clocks of each point. */
static tw_status predict_times(const tw_dvfs_params *p, tw_dvfs_energy_eval *e, const tw_dvfs_kernel_energy *k)
{
    for (size_t i = k->first; i < k->first + k->n; i++) {
        tw_dvfs_row r = *e->points[k->def].row;
        r.core_mhz = e->points[i].row->core_mhz;
        r.mem_mhz = e->points[i].row->mem_mhz;
        tw_dvfs_prediction pred;
        tw_status st = tw_dvfs_predict(p, &r, false, &pred);
        if (st != TW_OK) return st;
        e->points[i].time_pred_ms = pred.time_ms;
    }
    return TW_OK;
}

/* Leave one kernel out: the model that predicts a kernel never saw its power away from the default pair. */
static tw_status predict_power(tw_dvfs_energy_eval *e, const tw_dvfs_kernel_ref *refs, tw_dvfs_power_kind kind)
{
    tw_dvfs_power_sample *train = malloc(e->n * sizeof *train);
    if (!train) return tw_fail(TW_ENOMEM, "out of memory fitting the power model");
    tw_status st = TW_OK;
    for (size_t k = 0; st == TW_OK && k < e->nkernels; k++) {
        size_t n = 0;
        for (size_t j = 0; j < e->nkernels; j++) {
            if (j == k) continue;
            const tw_dvfs_kernel_energy *kj = &e->kernels[j];
            for (size_t i = kj->first; i < kj->first + kj->n; i++)
                train[n++] = (tw_dvfs_power_sample){refs + j, e->points[i].row->core_mhz, e->points[i].row->mem_mhz,
                                                    e->points[i].power_w};
        }
        tw_dvfs_power_model m;
        st = tw_dvfs_power_fit(kind, e->core_def_mhz, e->mem_def_mhz, train, n, &m);
        if (st != TW_OK) {
            char why[512]; /* tw_fail overwrites the message it would quote */
            snprintf(why, sizeof why, "%s", tw_last_error());
            st = tw_fail(st, "%s (fitted without %s)", why, e->kernels[k].name);
            break;
        }
        const tw_dvfs_kernel_energy *kk = &e->kernels[k];
        for (size_t i = kk->first; i < kk->first + kk->n; i++)
            e->points[i].power_pred_w =
                tw_dvfs_power_predict(&m, refs + k, e->points[i].row->core_mhz, e->points[i].row->mem_mhz);
    }
    free(train);
    return st;
}

/* ---------------------------------------------------------------- choices and summary */

/* A kernel's points as the four columns the choices compare. */
typedef struct columns {
    double *power_w, *power_pred_w, *time_ms, *time_pred_ms;
} columns;

static tw_status columns_of(const tw_dvfs_energy_eval *e, const tw_dvfs_kernel_energy *k, columns *c)
{
    double *buf = malloc(4 * k->n * sizeof *buf);
    if (!buf) return tw_fail(TW_ENOMEM, "out of memory evaluating clock pairs");
    *c = (columns){buf, buf + k->n, buf + 2 * k->n, buf + 3 * k->n};
    for (size_t i = 0; i < k->n; i++) {
        const tw_dvfs_energy_point *pt = &e->points[k->first + i];
        c->power_w[i] = pt->power_w;
        c->power_pred_w[i] = pt->power_pred_w;
        c->time_ms[i] = pt->row->time_ms;
        c->time_pred_ms[i] = pt->time_pred_ms;
    }
    return TW_OK;
}

static tw_status choose(const tw_dvfs_energy_eval *e, tw_dvfs_kernel_energy *k)
{
    columns c = {0}; /* (set by columns_of; zeroed for -O3's may-be-uninitialized) */
    tw_status st = columns_of(e, k, &c);
    if (st != TW_OK) return st;
    tw_dvfs_objective o = e->objective;
    size_t opt = tw_dvfs_argmin(o, c.power_w, c.time_ms, k->n);
    size_t rec = tw_dvfs_argmin(o, c.power_pred_w, c.time_pred_ms, k->n);
    size_t rec_tmeas = tw_dvfs_argmin(o, c.power_pred_w, c.time_ms, k->n);
    size_t def = k->def - k->first;
    double measured_def = tw_dvfs_objective_value(o, c.power_w[def], c.time_ms[def]);
    double measured_opt = tw_dvfs_objective_value(o, c.power_w[opt], c.time_ms[opt]);
    double measured_rec = tw_dvfs_objective_value(o, c.power_w[rec], c.time_ms[rec]);
    double measured_tmeas = tw_dvfs_objective_value(o, c.power_w[rec_tmeas], c.time_ms[rec_tmeas]);
    k->saving_pred = 1 - tw_dvfs_objective_value(o, c.power_pred_w[rec], c.time_pred_ms[rec]) /
                             tw_dvfs_objective_value(o, c.power_pred_w[def], c.time_pred_ms[def]);
    k->saving_rec = 1 - measured_rec / measured_def;
    k->saving_opt = 1 - measured_opt / measured_def;
    k->above_rec = measured_rec / measured_opt - 1;
    k->above_tmeas = measured_tmeas / measured_opt - 1;
    k->opt = k->first + opt;
    k->rec = k->first + rec;
    k->rec_tmeas = k->first + rec_tmeas;
    free(c.power_w);
    return TW_OK;
}

static void summarise(tw_dvfs_energy_eval *e)
{
    double power_ape = 0, time_ape = 0;
    for (size_t i = 0; i < e->n; i++) {
        const tw_dvfs_energy_point *pt = &e->points[i];
        time_ape += fabs(pt->time_pred_ms - pt->row->time_ms) / pt->row->time_ms;
        if (pt->row->core_mhz == e->core_def_mhz && pt->row->mem_mhz == e->mem_def_mhz) continue;
        power_ape += fabs(pt->power_pred_w - pt->power_w) / pt->power_w;
        e->power_points++;
    }
    e->time_mape = time_ape / (double)e->n;
    e->power_mape = e->power_points ? power_ape / (double)e->power_points : NAN;
    for (size_t i = 0; i < e->nkernels; i++) {
        const tw_dvfs_kernel_energy *k = &e->kernels[i];
        e->mean_above_rec += k->above_rec;
        e->mean_above_tmeas += k->above_tmeas;
        e->mean_saving_pred += k->saving_pred;
        e->mean_saving_rec += k->saving_rec;
        e->mean_saving_opt += k->saving_opt;
        if (k->above_rec > e->kernels[e->worst_rec].above_rec) e->worst_rec = i;
        if (k->above_tmeas > e->kernels[e->worst_tmeas].above_tmeas) e->worst_tmeas = i;
    }
    double nk = (double)e->nkernels;
    e->mean_above_rec /= nk;
    e->mean_above_tmeas /= nk;
    e->mean_saving_pred /= nk;
    e->mean_saving_rec /= nk;
    e->mean_saving_opt /= nk;
}

static tw_status run(const tw_dvfs_params *p, const tw_dvfs_data *d, const double *power_w, tw_dvfs_power_kind kind,
                     bool all_kernels, tw_dvfs_energy_eval *e)
{
    tw_status st = group_rows(d, power_w, all_kernels, e);
    if (st != TW_OK) return st;
    find_default(e);
    tw_dvfs_kernel_ref *refs = calloc(e->nkernels, sizeof *refs);
    if (!refs) return tw_fail(TW_ENOMEM, "out of memory evaluating clock pairs");
    for (size_t k = 0; st == TW_OK && k < e->nkernels; k++) {
        st = find_kernel_default(e, &e->kernels[k]);
        if (st == TW_OK) st = kernel_ref(&e->points[e->kernels[k].def], &refs[k]);
        if (st == TW_OK) st = predict_times(p, e, &e->kernels[k]);
    }
    if (st == TW_OK) st = predict_power(e, refs, kind);
    free(refs);
    for (size_t k = 0; st == TW_OK && k < e->nkernels; k++)
        st = choose(e, &e->kernels[k]);
    if (st == TW_OK) summarise(e);
    return st;
}

tw_status tw_dvfs_energy_evaluate(const tw_dvfs_params *p, const tw_dvfs_data *d, const double *power_w,
                                  tw_dvfs_power_kind kind, tw_dvfs_objective objective, bool all_kernels,
                                  tw_dvfs_energy_eval *out)
{
    memset(out, 0, sizeof *out);
    out->objective = objective;
    out->power_kind = kind;
    out->points = calloc(d->n ? d->n : 1, sizeof *out->points);
    out->kernels = calloc(d->n ? d->n : 1, sizeof *out->kernels);
    if (!out->points || !out->kernels) {
        tw_dvfs_energy_eval_free(out);
        return tw_fail(TW_ENOMEM, "out of memory evaluating clock pairs");
    }
    tw_status st = run(p, d, power_w, kind, all_kernels, out);
    if (st != TW_OK) tw_dvfs_energy_eval_free(out);
    return st;
}

void tw_dvfs_energy_eval_free(tw_dvfs_energy_eval *e)
{
    free(e->points);
    free(e->kernels);
    memset(e, 0, sizeof *e);
}
