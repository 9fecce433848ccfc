/* `truewatt isa` as a library call (tw_isa_experiment, truewatt.h): energy
 * per instruction from PTX microbenchmarks (Arafa et al. 2020), in their
 * paper mode beside their Table I and in a throughput mode that measures the
 * instruction's own energy (bench/isa_run.h); the rows as a table, JSON,
 * CSV, every launch and a plot. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/experiment.h"
#include "bench/isa_run.h"
#include "core/error.h"
#include "core/json.h"
#include "core/note.h"
#include "core/outfile.h"
#include "report/table.h"

#define MAX_ONLY 128

void tw_isa_options_init(tw_isa_options *o)
{
    memset(o, 0, sizeof *o);
    o->size = sizeof *o;
    o->out_dir = "truewatt-isa";
}

bool tw_isa_instruction_known(const char *name) { return name && tw_isa_find(name) != NULL; }

typedef struct isa_job {
    tw_isa_run_options run;
    tw_isa_plan *plan; /* what ran */
} isa_job;

/* v with `digits` significant digits (g) or decimals (f); "-" when unknown. */
static void cell(table *t, double v, int digits, bool fixed)
{
    if (!isfinite(v))
        table_cell(t, "-");
    else if (fixed)
        table_cell(t, "%.*f", digits, v);
    else
        table_cell(t, "%.*g", digits, v);
}

static tw_status print_table(FILE *out, const tw_isa_results *r, tw_isa_mode mode, const double *paper_uj)
{
    static const char *const hp[] = {"instruction", "group", "JIT",  "uJ/inst", "+-",
                                     "cycles",      "SMA",   "PAPI", "MTSM",    "Volta(paper)"};
    static const char *const ht[] = {"instruction", "group",    "pJ/thread-op", "+-", "spread_%", "pJ/warp-inst",
                                     "op/SM/clk",   "kernel_W", "resident_W",   "r2", "operands"};
    bool paper = mode == TW_ISA_PAPER;
    table *t = paper ? table_new(10, hp) : table_new(11, ht);
    if (!t) return TW_ENOMEM;
    for (size_t i = 0; i < r->n; i++) {
        const tw_isa_row *w = &r->rows[i];
        table_cell(t, "%s", w->e->name);
        table_cell(t, "%s", w->e->group);
        if (paper) {
            table_cell(t, "O%d", w->opt_level);
            cell(t, w->e_inst_j * 1e6, 4, false);
            cell(t, w->e_inst_sd_j * 1e6, 2, false);
            cell(t, w->cycles_per_inst, 1, true);
            cell(t, w->sma_j * 1e6, 4, false);
            cell(t, w->papi_j * 1e6, 4, false);
            cell(t, w->mtsm_j * 1e6, 4, false);
            cell(t, paper_uj[i], 4, false);
        } else {
            cell(t, w->e_inst_j * 1e12, 3, true);
            cell(t, w->e_inst_sd_j * 1e12, 2, false);
            cell(t, w->spread_pct, 1, true);
            cell(t, w->pj_warp_inst, 1, true);
            cell(t, w->ops_per_sm_clk, 1, true);
            cell(t, w->kernel_dyn_w, 1, true);
            cell(t, w->resident_w, 1, true);
            cell(t, w->fit_r2, 4, true);
            table_cell(t, "%s", tw_isa_operands(w->e, mode));
        }
    }
    table_print(t, out);
    table_free(t);
    return TW_OK;
}

static const tw_isa_row *row_named(const tw_isa_results *r, const char *name)
{
    for (size_t i = 0; i < r->n; i++)
        if (!strcmp(r->rows[i].e->name, name)) return &r->rows[i];
    return NULL;
}

/* How repeatable the throughput numbers are (spread over repeats, for the
 * instructions of at least min_pj per thread operation) and whether the
 * ordering physics demands holds: a slow sequence (fp64 div) far above a
 * pipelined fp32 fma, at least an integer add. */
static void throughput_summary(FILE *out, const tw_isa_results *r, double min_pj)
{
    int n = 0, ok = 0;
    const tw_isa_row *worst = NULL;
    for (size_t i = 0; i < r->n; i++) {
        const tw_isa_row *w = &r->rows[i];
        if (!(w->e_inst_j * 1e12 >= min_pj)) continue;
        n++;
        ok += w->spread_pct <= 5.0;
        if (!worst || !(w->spread_pct <= worst->spread_pct)) worst = w;
    }
    fprintf(out, "spread over repeats <= 5 %%: %d of %d instructions of >= %g pJ per thread operation", ok, n, min_pj);
    if (worst) fprintf(out, " (largest: %s, %.1f %%)", worst->e->name, worst->spread_pct);
    fprintf(out, "\n");
    const tw_isa_row *div = row_named(r, "div.rn.f64"), *fma = row_named(r, "fma.rn.f32"),
                     *add = row_named(r, "add.s32");
    if (div && fma && add) {
        bool holds = div->e_inst_j > 10 * fma->e_inst_j && fma->e_inst_j >= add->e_inst_j;
        fprintf(out, "ordering div.rn.f64 %.1f pJ >> fma.rn.f32 %.2f pJ >= add.s32 %.2f pJ: %s\n", div->e_inst_j * 1e12,
                fma->e_inst_j * 1e12, add->e_inst_j * 1e12, holds ? "holds" : "does NOT hold");
    }
}

static tw_status write_csv(const char *dir, const tw_isa_results *r, tw_isa_mode mode, const double *paper_uj,
                           const char *prov)
{
    char path[4096];
    FILE *f = out_open(dir, "isa.csv", path, sizeof path);
    if (!f) return TW_EIO;
    fprintf(f, "# %s; reading %s; SM clock %.0f MHz\n", prov, r->reading, r->clock_mhz);
    fprintf(
        f,
        "instruction,group,paper_row,mode,jit_level,operands,energy_j,energy_sd_j,cycles_per_inst,sma_j,papi_j,mtsm_j,"
        "pj_per_warp_inst,spread_pct,ops_per_sm_clk,kernel_dyn_w,resident_w,loop_j,launch_j,fit_r2,kernel_s,"
        "instructions,paper_volta_mtsm_uj,sim_truth_j\n");
    for (size_t i = 0; i < r->n; i++) {
        const tw_isa_row *w = &r->rows[i];
        double pv = mode == TW_ISA_PAPER ? paper_uj[i] : NAN;
        double v[] = {w->e_inst_j,
                      w->e_inst_sd_j,
                      w->cycles_per_inst,
                      w->sma_j,
                      w->papi_j,
                      w->mtsm_j,
                      w->pj_warp_inst,
                      w->spread_pct,
                      w->ops_per_sm_clk,
                      w->kernel_dyn_w,
                      w->resident_w,
                      w->loop_j,
                      w->launch_j,
                      w->fit_r2,
                      w->kernel_s,
                      w->instructions,
                      pv,
                      w->truth_j};
        fprintf(f, "%s,%s,%s,%s,%d,%s", w->e->name, w->e->group, w->e->paper_row ? w->e->paper_row : "",
                mode == TW_ISA_PAPER ? "paper" : "throughput", w->opt_level, tw_isa_operands(w->e, mode));
        for (size_t k = 0; k < sizeof v / sizeof v[0]; k++)
            isfinite(v[k]) ? fprintf(f, ",%.6g", v[k]) : fprintf(f, ",");
        fprintf(f, "\n");
    }
    return out_close(f, path);
}

/* Every launch as measured (launches.csv): the rows can be fitted again from it. */
static tw_status write_launches(const char *dir, const tw_isa_results *r, const char *prov)
{
    char path[4096];
    FILE *f = out_open(dir, "launches.csv", path, sizeof path);
    if (!f) return TW_EIO;
    fprintf(f, "# %s; reading %s; energies by its model, dyn_j above active idle\n", prov, r->reading);
    fprintf(f, "instruction,kind,jit_level,rep,iterations,ops,loops,start_s,end_s,total_j,dyn_j\n");
    for (size_t i = 0; i < r->nlaunches; i++) {
        const tw_isa_launch_row *l = &r->launches[i];
        fprintf(f, "%s,%s,%d,%d,%.17g,%.17g,%.17g,%.9f,%.9f,%.9g,%.9g\n", l->e->name, l->kind, l->opt_level, l->rep,
                l->iterations, l->ops, l->loops, l->start_s, l->end_s, l->total_j, l->dyn_j);
    }
    return out_close(f, path);
}

static void print_json(FILE *f, const tw_isa_results *r, tw_isa_mode mode)
{
    json j;
    json_init(&j, f);
    json_begin_object(&j);
    json_kv_string(&j, "mode", mode == TW_ISA_PAPER ? "paper" : "throughput");
    json_kv_string(&j, "reading", r->reading);
    json_kv_number(&j, "sm_clock_mhz", r->clock_mhz);
    json_key(&j, "rows");
    json_begin_array(&j);
    for (size_t i = 0; i < r->n; i++) {
        const tw_isa_row *w = &r->rows[i];
        json_begin_object(&j);
        json_kv_string(&j, "instruction", w->e->name);
        json_kv_string(&j, "group", w->e->group);
        json_kv_uint(&j, "jit_level", (uint64_t)w->opt_level);
        json_kv_string(&j, "operands", tw_isa_operands(w->e, mode));
        json_kv_number(&j, "energy_j", w->e_inst_j);
        json_kv_number(&j, "energy_sd_j", w->e_inst_sd_j);
        json_kv_number(&j, "cycles_per_inst", w->cycles_per_inst);
        json_kv_number(&j, "pj_per_warp_inst", w->pj_warp_inst);
        json_kv_number(&j, "spread_pct", w->spread_pct);
        json_kv_number(&j, "ops_per_sm_clk", w->ops_per_sm_clk);
        json_kv_number(&j, "kernel_dyn_w", w->kernel_dyn_w);
        json_kv_number(&j, "resident_w", w->resident_w);
        json_kv_number(&j, "loop_j", w->loop_j);
        json_kv_number(&j, "launch_j", w->launch_j);
        json_kv_number(&j, "fit_r2", w->fit_r2);
        json_kv_number(&j, "sim_truth_j", w->truth_j);
        json_end_object(&j);
    }
    json_end_array(&j);
    json_end_object(&j);
    json_finish(&j);
}

/* A bar chart of the energies, log scale, drawn when gnuplot exists. */
static void plot(const tw_experiment_options *e, const char *dir, const tw_isa_results *r, tw_isa_mode mode)
{
    char path[4096];
    FILE *f = out_open(dir, "isa.dat", path, sizeof path);
    if (!f) {
        tw_notef(e->note, e->note_ctx, "%s", tw_last_error());
        return;
    }
    for (size_t i = 0; i < r->n; i++) {
        const tw_isa_row *w = &r->rows[i];
        if (mode == TW_ISA_PAPER && w->opt_level != 0) continue;
        double v = mode == TW_ISA_PAPER ? w->e_inst_j * 1e6 : w->e_inst_j * 1e12;
        if (isfinite(v) && v > 0) fprintf(f, "\"%s\" %.6g\n", w->e->name, v);
    }
    if (out_close(f, path) != TW_OK) {
        tw_notef(e->note, e->note_ctx, "%s", tw_last_error());
        return;
    }
    FILE *g = out_open(dir, "isa.gp", path, sizeof path);
    if (!g) {
        tw_notef(e->note, e->note_ctx, "%s", tw_last_error());
        return;
    }
    fprintf(g,
            "set terminal pngcairo size 1600,600\nset output 'isa.png'\nset logscale y\nset style fill solid\n"
            "set xtics rotate by -60 font ',8' noenhanced\nset rmargin 8\nset boxwidth 0.8\n"
            "set ylabel '%s'\nset title 'energy per instruction (%s mode)'\n"
            "plot 'isa.dat' using 2:xtic(1) with boxes notitle\n",
            mode == TW_ISA_PAPER ? "uJ per instruction (JIT level 0)" : "pJ per thread operation",
            mode == TW_ISA_PAPER ? "paper" : "throughput");
    if (out_close(g, path) != TW_OK) {
        tw_notef(e->note, e->note_ctx, "%s", tw_last_error());
        return;
    }
    out_draw_plot(e->note, e->note_ctx, dir, "isa.gp", "isa.png");
}

static tw_status run_isa(tw_exec *x, void *ctx)
{
    isa_job *j = ctx;
    return tw_isa_run(x, &j->run, &j->plan);
}

/* The rows as JSON beside the CSV. */
static tw_status write_json(const char *dir, const tw_isa_results *r, tw_isa_mode mode)
{
    char path[4096];
    FILE *f = out_open(dir, "isa.json", path, sizeof path);
    if (!f) return TW_EIO;
    print_json(f, r, mode);
    return out_close(f, path);
}

/* The rows to `out` and the files: what tw_isa_experiment does after the run. */
static tw_status report(const tw_experiment_options *e, const tw_isa_options *o, const isa_job *j, tw_exec *x,
                        const tw_profile *p, FILE *out)
{
    const char *dir = o->out_dir;
    tw_isa_mode mode = j->run.mode;
    tw_isa_results r = {0};
    tw_status st = tw_isa_analyse(j->plan, x->trace, x->events, p, &r);
    double *paper_uj = st == TW_OK ? calloc(r.n ? r.n : 1, sizeof *paper_uj) : NULL;
    if (st == TW_OK && !paper_uj) st = TW_ENOMEM;
    /* the paper's column is a comparison: without the table the results still stand */
    for (size_t i = 0; paper_uj && i < r.n; i++)
        paper_uj[i] = NAN;
    if (st == TW_OK && o->paper_table && tw_isa_paper_values(o->paper_table, &r, paper_uj) != TW_OK)
        tw_notef(e->note, e->note_ctx, "warning: no paper values: %s", tw_last_error());
    if (st == TW_OK && o->json) {
        print_json(out, &r, mode);
    } else if (st == TW_OK) {
        fprintf(out, "energy per instruction, %s mode, measured by %s (SM clock %.0f MHz)\n",
                mode == TW_ISA_PAPER ? "paper" : "throughput", r.reading, r.clock_mhz);
        st = print_table(out, &r, mode, paper_uj);
        if (st == TW_OK && mode == TW_ISA_THROUGHPUT) throughput_summary(out, &r, 5.0);
    }
    if (st == TW_OK) st = write_csv(dir, &r, mode, paper_uj, e->provenance ? e->provenance : "");
    if (st == TW_OK) st = write_launches(dir, &r, e->provenance ? e->provenance : "");
    if (st == TW_OK) st = write_json(dir, &r, mode);
    if (st == TW_OK) plot(e, dir, &r, mode);
    free(paper_uj);
    tw_isa_results_free(&r);
    return st;
}

tw_status tw_isa_experiment(const tw_experiment_options *e_in, const tw_isa_options *o_in, FILE *out)
{
    tw_experiment_options e_full;
    tw_isa_options o_full;
    tw_isa_options_init(&o_full);
    tw_status sized = xp_read_options(&e_full, e_in, &o_full, sizeof o_full, o_in, "tw_isa_experiment");
    if (sized != TW_OK) return sized;
    const tw_experiment_options *e = &e_full;
    const tw_isa_options *o = &o_full;
    if (!out) return tw_fail(TW_EINVAL, "tw_isa_experiment: NULL argument"); /* NULL options: xp_read_options */
    isa_job j = {0};
    tw_isa_run_options_init(&j.run);
    j.run.mode = o->throughput ? TW_ISA_THROUGHPUT : TW_ISA_PAPER;
    j.run.seed_operands = o->seed_operands;
    if (o->nonly > MAX_ONLY) return tw_fail(TW_EINVAL, "at most %d instructions", MAX_ONLY);
    for (size_t i = 0; i < o->nonly; i++)
        if (!tw_isa_instruction_known(o->only[i]))
            return tw_fail(TW_EINVAL, "no instruction named '%s' (see the table in docs)", o->only[i]);
    j.run.only = o->only;
    j.run.nonly = o->nonly;
    tw_isa_options oo = *o;
    if (!oo.out_dir) oo.out_dir = "truewatt-isa";
    tw_profile p;
    tw_profile_init(&p);
    xp_bench b = {oo.profile, oo.out_dir, tw_isa_planned_s(&j.run, 132, 90), run_isa, &j, false};
    tw_exec *x = NULL;
    tw_status st = xp_bench_run(e, &b, &x, &p);
    if (st == TW_OK) st = report(e, &oo, &j, x, &p, out);
    tw_isa_plan_free(j.plan);
    tw_exec_free(x);
    return st;
}
