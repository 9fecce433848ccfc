/* `truewatt dvfs energy` as a library call (tw_dvfs_energy_report): the
 * clock pairs of least energy (or energy-delay product) per kernel, time by
 * Wang & Chu's model and power by a model fitted without the kernel
 * (src/dvfs/energy.c), against the measured optimum, as text or JSON. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/json.h"
#include "dvfs/data.h"
#include "dvfs/energy.h"
#include "dvfs/model.h"
#include "dvfs/power.h"
#include "dvfs/power_model.h"
#include "dvfs/report.h"

/* ---------------------------------------------------------------- output */

static const char *rows_meaning(const tw_dvfs_options *a)
{
    return a->all_kernels ? "file" : "authors' 20 kernels at clocks >= 500 MHz";
}

static const char *power_meaning(tw_dvfs_power_kind k)
{
    return k == TW_DVFS_POWER_COUNTERS
               ? "counters (P0 + fm (b0 + b1 DRAM GB/s) + V(fc)^2 fc (c0 + c1 IPC), at the default pair)"
               : "scaled (the GPU's P0 + a fm + b V(fc)^2 fc, times the kernel's power at the default pair)";
}

static void json_pair(json *j, const char *key, const tw_dvfs_energy_point *pt)
{
    json_key(j, key);
    json_begin_object(j);
    json_kv_number(j, "core_mhz", pt->row->core_mhz);
    json_kv_number(j, "mem_mhz", pt->row->mem_mhz);
    json_kv_number(j, "power_w", pt->power_w);
    json_kv_number(j, "time_ms", pt->row->time_ms);
    json_kv_number(j, "power_pred_w", pt->power_pred_w);
    json_kv_number(j, "time_pred_ms", pt->time_pred_ms);
    json_end_object(j);
}

static void json_kernel(json *j, const tw_dvfs_energy_eval *e, const tw_dvfs_kernel_energy *k)
{
    json_begin_object(j);
    json_kv_string(j, "kernel", k->name);
    json_kv_uint(j, "pairs", k->n);
    json_pair(j, "default", &e->points[k->def]);
    json_pair(j, "recommended", &e->points[k->rec]);
    json_pair(j, "optimum", &e->points[k->opt]);
    json_pair(j, "recommended_measured_time", &e->points[k->rec_tmeas]);
    json_kv_number(j, "saving_predicted_pct", 100 * k->saving_pred);
    json_kv_number(j, "saving_measured_pct", 100 * k->saving_rec);
    json_kv_number(j, "saving_optimum_pct", 100 * k->saving_opt);
    json_kv_number(j, "above_optimum_pct", 100 * k->above_rec);
    json_kv_number(j, "above_optimum_measured_time_pct", 100 * k->above_tmeas);
    json_end_object(j);
}

static void print_json(FILE *out, const tw_dvfs_options *a, const tw_dvfs_params *p, const tw_dvfs_energy_eval *e)
{
    json j;
    json_init(&j, out);
    json_begin_object(&j);
    json_kv_string(&j, "performance", a->data);
    json_kv_string(&j, "power", a->power);
    json_kv_string(&j, "gpu", p->name);
    json_kv_string(&j, "objective", tw_dvfs_objective_name(e->objective));
    json_kv_string(&j, "power_model", tw_dvfs_power_kind_name(e->power_kind));
    json_kv_number(&j, "default_core_mhz", e->core_def_mhz);
    json_kv_number(&j, "default_mem_mhz", e->mem_def_mhz);
    json_kv_uint(&j, "points", e->n);
    json_kv_uint(&j, "skipped", e->skipped);
    json_kv_number(&j, "power_mape_pct", 100 * e->power_mape);
    json_kv_uint(&j, "power_points", e->power_points);
    json_kv_number(&j, "time_mape_pct", 100 * e->time_mape);
    json_kv_number(&j, "mean_above_optimum_pct", 100 * e->mean_above_rec);
    json_kv_number(&j, "worst_above_optimum_pct", 100 * e->kernels[e->worst_rec].above_rec);
    json_kv_string(&j, "worst_kernel", e->kernels[e->worst_rec].name);
    json_kv_number(&j, "mean_above_optimum_measured_time_pct", 100 * e->mean_above_tmeas);
    json_kv_number(&j, "worst_above_optimum_measured_time_pct", 100 * e->kernels[e->worst_tmeas].above_tmeas);
    json_kv_string(&j, "worst_kernel_measured_time", e->kernels[e->worst_tmeas].name);
    json_kv_number(&j, "mean_saving_predicted_pct", 100 * e->mean_saving_pred);
    json_kv_number(&j, "mean_saving_measured_pct", 100 * e->mean_saving_rec);
    json_kv_number(&j, "mean_saving_optimum_pct", 100 * e->mean_saving_opt);
    json_key(&j, "kernels");
    json_begin_array(&j);
    for (size_t i = 0; i < e->nkernels; i++)
        json_kernel(&j, e, &e->kernels[i]);
    json_end_array(&j);
    json_end_object(&j);
    json_finish(&j);
}

static const char *pair_text(const tw_dvfs_energy_point *pt, char *buf, size_t cap)
{
    snprintf(buf, cap, "%.0f/%.0f", pt->row->core_mhz, pt->row->mem_mhz);
    return buf;
}

static void print_kernel(FILE *out, const tw_dvfs_energy_eval *e, const tw_dvfs_kernel_energy *k)
{
    char rec[32], opt[32], tmeas[32];
    fprintf(out, "  %-24s %11s %7.1f %% %7.1f %% %7.2f %%  %11s %7.1f %%  %11s %7.2f %%\n", k->name,
            pair_text(&e->points[k->rec], rec, sizeof rec), 100 * k->saving_pred, 100 * k->saving_rec,
            100 * k->above_rec, pair_text(&e->points[k->opt], opt, sizeof opt), 100 * k->saving_opt,
            pair_text(&e->points[k->rec_tmeas], tmeas, sizeof tmeas), 100 * k->above_tmeas);
}

static void print_text(FILE *out, const tw_dvfs_options *a, const tw_dvfs_params *p, const tw_dvfs_energy_eval *e)
{
    const char *what = e->objective == TW_DVFS_OBJ_EDP ? "EDP" : "energy";
    fprintf(out, "Clock pairs of least %s, %s with %s\n", what, a->data, a->power);
    fprintf(out, "time: Wang & Chu, parameters %s, from each kernel's counters at the default pair\n", p->name);
    fprintf(out, "power: %s, fitted without the kernel\n", power_meaning(e->power_kind));
    fprintf(out, "default pair: %.0f/%.0f MHz (the highest core and memory clocks)\n", e->core_def_mhz, e->mem_def_mhz);
    fprintf(out, "points: %zu of %zu kernels (%zu rows outside the %s)\n", e->n, e->nkernels, e->skipped,
            rows_meaning(a));
    fprintf(out, "power model, leave one kernel out: MAPE %.2f %% over %zu points away from the default pair\n",
            100 * e->power_mape, e->power_points);
    fprintf(out, "time model, one profile: MAPE %.2f %% over %zu points\n\n", 100 * e->time_mape, e->n);
    fprintf(out, "  %-24s %11s %9s %9s %9s  %11s %9s  %11s %9s\n", "kernel", "recommended", "saving", "saving", "above",
            "measured", "saving", "measured T", "above");
    fprintf(out, "  %-24s %11s %9s %9s %9s  %11s %9s  %11s %9s\n", "", "core/mem", "predicted", "measured", "optimum",
            "optimum", "there", "recommends", "optimum");
    for (size_t i = 0; i < e->nkernels; i++)
        print_kernel(out, e, &e->kernels[i]);
    fprintf(out, "\n%s at the recommended pair, above the measured optimum: mean %.2f %%, worst %.2f %% (%s)\n", what,
            100 * e->mean_above_rec, 100 * e->kernels[e->worst_rec].above_rec, e->kernels[e->worst_rec].name);
    fprintf(out, "the same with measured time: mean %.2f %%, worst %.2f %% (%s)\n", 100 * e->mean_above_tmeas,
            100 * e->kernels[e->worst_tmeas].above_tmeas, e->kernels[e->worst_tmeas].name);
    fprintf(out,
            "mean saving against the default pair: predicted %.1f %%, measured %.1f %%, measured optimum %.1f %%\n",
            100 * e->mean_saving_pred, 100 * e->mean_saving_rec, 100 * e->mean_saving_opt);
}

/* ---------------------------------------------------------------- the work */

/* The two files, joined: *power_w (malloc'd) holds each performance row's power. */
static tw_status load_joined(const tw_dvfs_options *a, tw_dvfs_data *d, double **power_w)
{
    tw_dvfs_power_data pw;
    *power_w = NULL;
    tw_status st = tw_dvfs_load(a->data, d);
    if (st != TW_OK) return st;
    if ((st = tw_dvfs_power_load(a->power, &pw)) == TW_OK) {
        if (!(*power_w = calloc(d->n, sizeof **power_w)))
            st = tw_fail(TW_ENOMEM, "out of memory joining the power data");
        if (st == TW_OK) st = tw_dvfs_power_join(d, a->data, &pw, a->power, *power_w);
        tw_dvfs_power_free(&pw);
    }
    if (st != TW_OK) {
        free(*power_w);
        *power_w = NULL;
        tw_dvfs_data_free(d);
    }
    return st;
}

/* The option's words as the model's enums; TW_EINVAL for another word. */
static tw_status parse_choices(const tw_dvfs_options *a, tw_dvfs_objective *obj, tw_dvfs_power_kind *kind)
{
    const char *o = a->objective ? a->objective : "energy", *k = a->power_model ? a->power_model : "scaled";
    if (strcmp(o, "energy") && strcmp(o, "edp"))
        return tw_fail(TW_EINVAL, "dvfs energy: objective must be energy or edp, got '%s'", o);
    if (strcmp(k, "scaled") && strcmp(k, "counters"))
        return tw_fail(TW_EINVAL, "dvfs energy: power model must be scaled or counters, got '%s'", k);
    *obj = !strcmp(o, "edp") ? TW_DVFS_OBJ_EDP : TW_DVFS_OBJ_ENERGY;
    *kind = !strcmp(k, "counters") ? TW_DVFS_POWER_COUNTERS : TW_DVFS_POWER_SCALED;
    return TW_OK;
}

tw_status tw_dvfs_energy_report(const tw_dvfs_options *a, FILE *out)
{
    tw_dvfs_objective objective = TW_DVFS_OBJ_ENERGY;
    tw_dvfs_power_kind power_kind = TW_DVFS_POWER_SCALED;
    tw_status st = tw_dvfs_options_check(a, out);
    if (st == TW_OK && !a->power) st = tw_fail(TW_EINVAL, "dvfs energy: the power rows (POWER.csv) are required");
    if (st == TW_OK) st = parse_choices(a, &objective, &power_kind);
    if (st != TW_OK) return st;
    tw_dvfs_params p;
    if ((st = tw_dvfs_params_load(a->params, &p)) != TW_OK) return st;
    tw_dvfs_data d;
    double *power_w;
    if ((st = load_joined(a, &d, &power_w)) != TW_OK) return st;
    tw_dvfs_energy_eval e;
    st = tw_dvfs_energy_evaluate(&p, &d, power_w, power_kind, objective, a->all_kernels, &e);
    if (st == TW_OK) {
        if (a->json)
            print_json(out, a, &p, &e);
        else
            print_text(out, a, &p, &e);
        tw_dvfs_energy_eval_free(&e);
    }
    free(power_w);
    tw_dvfs_data_free(&d);
    return st;
}
