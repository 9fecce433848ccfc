/* truewatt dvfs energy: per kernel, the clock pair of least predicted energy
 * (or energy-delay product), with time from Wang & Chu's model and power
 * from a model fitted on the other kernels (src/dvfs/energy.c), checked
 * against the energy measured at every pair of the authors' data. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/dvfs_cmds.h"
#include "cli/dvfs_common.h"
#include "core/error.h"
#include "core/json.h"
#include "dvfs/data.h"
#include "dvfs/energy.h"
#include "dvfs/model.h"
#include "dvfs/power.h"
#include "dvfs/power_model.h"

#define CMD_ENERGY "dvfs energy"

typedef struct energy_args {
    const char *perf, *power, *gpu;
    tw_dvfs_objective objective;
    tw_dvfs_power_kind power_kind;
    bool all_kernels, json;
} energy_args;

/* The options, declared once (cli/opts.h). */
static int parse_energy(int argc, char **argv, energy_args *a)
{
    const char *objective, *power_model;
    const cli_opt opt[] = {
        {.name = "gpu",
         .type = CLI_OPT_STRING,
         .arg = "NAME|FILE.json",
         .help = "the time model's parameters: " CLI_DVFS_GPU_HELP,
         .out = &a->gpu},
        {.name = "objective",
         .type = CLI_OPT_ENUM,
         .choices = "energy|edp",
         .def = "energy",
         .help = "what to minimise",
         .out = &objective},
        {.name = "power-model",
         .type = CLI_OPT_ENUM,
         .choices = "scaled|counters",
         .def = "scaled",
         .help = "scaled: the GPU's power shape P0 + a fm + b V(fc)^2 fc (Mei et al.),\n"
                 "scaled by the kernel's power measured at the default pair;\n"
                 "counters: no power reading of the kernel, its DRAM throughput and\n"
                 "instructions per cycle at the default pair weigh the fm and fc terms",
         .out = &power_model},
        CLI_DVFS_OPT_ALL_KERNELS(&a->all_kernels),
        {.name = "json", .type = CLI_OPT_FLAG, .help = "the numbers as JSON on stdout", .out = &a->json},
    };
    const cli_opts o = {
        .cmd = CMD_ENERGY,
        .synopsis = "PERF.csv POWER.csv --gpu NAME|FILE.json [--objective energy|edp]\n"
                    "                            [--power-model scaled|counters] [--all-kernels] [--json]",
        .about = "Energy-optimal clock pairs on the authors' data: a *-Performance.csv and the matching\n"
                 "*-Power.csv (joined by appName, coreF, memF; every row must have its partner). Per kernel,\n"
                 "the pair of least predicted energy = power x time (or EDP = power x time^2) among the\n"
                 "measured pairs, with its predicted saving against the default pair (the highest core and\n"
                 "memory clocks), and what was measured there: the saving, and how far above the measured\n"
                 "optimum it lies. Time is Wang & Chu's model (no kernel special cases) from the kernel's\n"
                 "counters at the default pair; power is a model fitted on the other kernels (leave one\n"
                 "kernel out). The recommendation is also given with measured time, to separate the errors.",
        .opt = opt,
        .n = CLI_OPTS_N(opt),
        .min_args = 2,
        .max_args = 2,
        .missing = "PERF.csv and POWER.csv are required"};
    int first;
    int rc = cli_opts_parse(&o, argc, argv, &first);
    if (rc) return rc;
    a->perf = argv[first];
    a->power = argv[first + 1];
    a->objective = !strcmp(objective, "edp") ? TW_DVFS_OBJ_EDP : TW_DVFS_OBJ_ENERGY;
    a->power_kind = !strcmp(power_model, "counters") ? TW_DVFS_POWER_COUNTERS : TW_DVFS_POWER_SCALED;
    if (!a->gpu) return cli_usage(CMD_ENERGY, "--gpu NAME is required (gtx980, gtx1080ti, p100, v100)");
    return 0;
}

/* ---------------------------------------------------------------- output */

static const char *rows_meaning(const energy_args *a)
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

static void print_json(const energy_args *a, const tw_dvfs_params *p, const tw_dvfs_energy_eval *e)
{
    json j;
    json_init(&j, stdout);
    json_begin_object(&j);
    json_kv_string(&j, "performance", a->perf);
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

static void print_kernel(const tw_dvfs_energy_eval *e, const tw_dvfs_kernel_energy *k)
{
    char rec[32], opt[32], tmeas[32];
    printf("  %-24s %11s %7.1f %% %7.1f %% %7.2f %%  %11s %7.1f %%  %11s %7.2f %%\n", k->name,
           pair_text(&e->points[k->rec], rec, sizeof rec), 100 * k->saving_pred, 100 * k->saving_rec,
           100 * k->above_rec, pair_text(&e->points[k->opt], opt, sizeof opt), 100 * k->saving_opt,
           pair_text(&e->points[k->rec_tmeas], tmeas, sizeof tmeas), 100 * k->above_tmeas);
}

static void print_text(const energy_args *a, const tw_dvfs_params *p, const tw_dvfs_energy_eval *e)
{
    const char *what = e->objective == TW_DVFS_OBJ_EDP ? "EDP" : "energy";
    printf("Clock pairs of least %s, %s with %s\n", what, a->perf, a->power);
    printf("time: Wang & Chu, parameters %s, from each kernel's counters at the default pair\n", p->name);
    printf("power: %s, fitted without the kernel\n", power_meaning(e->power_kind));
    printf("default pair: %.0f/%.0f MHz (the highest core and memory clocks)\n", e->core_def_mhz, e->mem_def_mhz);
    printf("points: %zu of %zu kernels (%zu rows outside the %s)\n", e->n, e->nkernels, e->skipped, rows_meaning(a));
    printf("power model, leave one kernel out: MAPE %.2f %% over %zu points away from the default pair\n",
           100 * e->power_mape, e->power_points);
    printf("time model, one profile: MAPE %.2f %% over %zu points\n\n", 100 * e->time_mape, e->n);
    printf("  %-24s %11s %9s %9s %9s  %11s %9s  %11s %9s\n", "kernel", "recommended", "saving", "saving", "above",
           "measured", "saving", "measured T", "above");
    printf("  %-24s %11s %9s %9s %9s  %11s %9s  %11s %9s\n", "", "core/mem", "predicted", "measured", "optimum",
           "optimum", "there", "recommends", "optimum");
    for (size_t i = 0; i < e->nkernels; i++)
        print_kernel(e, &e->kernels[i]);
    printf("\n%s at the recommended pair, above the measured optimum: mean %.2f %%, worst %.2f %% (%s)\n", what,
           100 * e->mean_above_rec, 100 * e->kernels[e->worst_rec].above_rec, e->kernels[e->worst_rec].name);
    printf("the same with measured time: mean %.2f %%, worst %.2f %% (%s)\n", 100 * e->mean_above_tmeas,
           100 * e->kernels[e->worst_tmeas].above_tmeas, e->kernels[e->worst_tmeas].name);
    printf("mean saving against the default pair: predicted %.1f %%, measured %.1f %%, measured optimum %.1f %%\n",
           100 * e->mean_saving_pred, 100 * e->mean_saving_rec, 100 * e->mean_saving_opt);
}

/* ---------------------------------------------------------------- the work */

/* The two files, joined: *power_w (malloc'd) holds each performance row's power. */
static tw_status load_joined(const energy_args *a, tw_dvfs_data *d, double **power_w)
{
    tw_dvfs_power_data pw;
    *power_w = NULL;
    tw_status st = tw_dvfs_load(a->perf, d);
    if (st != TW_OK) return st;
    if ((st = tw_dvfs_power_load(a->power, &pw)) == TW_OK) {
        if (!(*power_w = calloc(d->n, sizeof **power_w)))
            st = tw_fail(TW_ENOMEM, "out of memory joining the power data");
        if (st == TW_OK) st = tw_dvfs_power_join(d, a->perf, &pw, a->power, *power_w);
        tw_dvfs_power_free(&pw);
    }
    if (st != TW_OK) {
        free(*power_w);
        *power_w = NULL;
        tw_dvfs_data_free(d);
    }
    return st;
}

int tw_cmd_dvfs_energy(int argc, char **argv)
{
    energy_args a = {0};
    int rc = parse_energy(argc, argv, &a);
    if (rc) return rc < 0 ? 0 : rc;
    tw_dvfs_params p;
    if ((rc = cli_dvfs_params_load(CMD_ENERGY, a.gpu, &p))) return rc;
    tw_dvfs_data d;
    double *power_w;
    tw_status st = load_joined(&a, &d, &power_w);
    if (st != TW_OK) return cli_fail(CMD_ENERGY, st);
    tw_dvfs_energy_eval e;
    st = tw_dvfs_energy_evaluate(&p, &d, power_w, a.power_kind, a.objective, a.all_kernels, &e);
    if (st == TW_OK) {
        if (a.json)
            print_json(&a, &p, &e);
        else
            print_text(&a, &p, &e);
        tw_dvfs_energy_eval_free(&e);
    }
    free(power_w);
    tw_dvfs_data_free(&d);
    return st == TW_OK ? 0 : cli_fail(CMD_ENERGY, st);
}
