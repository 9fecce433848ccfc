/* truewatt isa: energy per instruction from PTX microbenchmarks (Arafa et
 * al. 2020), in their paper mode beside their Table I and in a throughput
 * mode that measures the instruction's own energy; see bench/isa_run.h. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/isa_run.h"
#include "cli/cli.h"
#include "cli/bench_run.h"
#include "cli/experiment.h"
#include "core/json.h"
#include "report/plot.h"
#include "report/table.h"

#define CMD "isa"
#ifndef TW_DATA_DIR_DEFAULT
#define TW_DATA_DIR_DEFAULT "data"
#endif
#define MAX_ONLY 128

typedef struct isa_args {
    cli_exp_args exp;
    tw_isa_run_options run;
    const char *profile, *out;
    char *only_buf;
    const char *only[MAX_ONLY];
    bool json;
    tw_isa_plan *plan; /* what ran */
} isa_args;

static int split_only(isa_args *a, const char *list)
{
    free(a->only_buf);
    if (!(a->only_buf = strdup(list))) return cli_fail(CMD, TW_ENOMEM);
    a->run.nonly = 0;
    for (char *save = NULL, *t = strtok_r(a->only_buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (!tw_isa_find(t)) return cli_usage(CMD, "--only: no instruction named '%s' (see the table in docs)", t);
        if (a->run.nonly == MAX_ONLY) return cli_usage(CMD, "--only: at most %d names", MAX_ONLY);
        a->only[a->run.nonly++] = t;
    }
    a->run.only = a->only;
    return 0;
}

/* The options, declared once (cli/opts.h). */
static int parse_args(int argc, char **argv, isa_args *a)
{
    const char *mode, *operands, *only = NULL;
    const cli_opt opt[] = {
        {.name = "mode",
         .type = CLI_OPT_ENUM,
         .choices = "paper|throughput",
         .def = "paper",
         .help = "the method (above)",
         .out = &mode},
        {.name = "only",
         .type = CLI_OPT_STRING,
         .arg = "LIST",
         .help = "only these instructions (names as in the table: add.s32,fma.rn.f32,...)",
         .out = &only},
        {.name = "operands",
         .type = CLI_OPT_ENUM,
         .choices = "fixed|seed",
         .def = "fixed",
         .help = "throughput mode: fixed (chains that have a fixed point start\n"
                 "there - integers at 0, fp adds and fmas saturated - so operands stay\n"
                 "the same) or seed (every chain from the seed: data's share of the energy)",
         .out = &operands},
        {.name = "profile",
         .type = CLI_OPT_STRING,
         .arg = "FILE",
         .help = "the sensor profile (default: looked up, see 'truewatt sensor')",
         .out = &a->profile},
        {.name = "out",
         .type = CLI_OPT_STRING,
         .arg = "DIR",
         .def = "truewatt-isa",
         .help = "isa.csv, isa.json, isa.png, launches.csv (every launch as measured),\nthe trace and events",
         .out = &a->out},
        {.name = "json", .type = CLI_OPT_FLAG, .help = "the rows as JSON on stdout", .out = &a->json},
    };
    const cli_opts o = {
        .cmd = CMD,
        .synopsis = "[--mode paper|throughput] [--only NAME,...] [--operands fixed|seed]\n"
                    "                    [--profile FILE] [--out DIR]\n"
                    "                    [--backend nvml|sim] [--sim h100] [--seed N] [--device N] [--json]",
        .about = "Energy per PTX instruction from generated microbenchmarks (every row of Arafa et al.\n"
                 "2020's Table I, and fp64 fma, half2, tensor-core mma, loads, stores, shuffles, atomics).\n"
                 "  paper       their method: one thread, a dependent chain, the overhead loop subtracted,\n"
                 "              JIT levels 0 and 4 (their -O0/-O3); truewatt's corrected energy beside SMA,\n"
                 "              PAPI-style and MTSM; cycles per instruction beside, and their Volta column\n"
                 "              (data/arafa2020_table1.csv). Energies in uJ per instruction: mostly board\n"
                 "              power x latency.\n"
                 "  throughput  every SM busy, independent chains; dynamic energy regressed on instructions\n"
                 "              with time as a second regressor: pJ per thread operation and per warp\n"
                 "              instruction, with the spread over repeats.\n"
                 "Without a profile for this GPU and driver, the sensor is identified first (~1 min).\n"
                 "Nothing on the card is changed. On the simulator (--backend sim): a synthetic cost model.",
        .opt = opt,
        .n = CLI_OPTS_N(opt)};
    int rc = cli_exp_parse(o, &a->exp, argc, argv);
    if (rc) return rc;
    a->run.mode = !strcmp(mode, "throughput") ? TW_ISA_THROUGHPUT : TW_ISA_PAPER;
    a->run.seed_operands = !strcmp(operands, "seed");
    return only ? split_only(a, only) : 0;
}

/* ---------------------------------------------------------------- the paper's Table I */

/* ---------------------------------------------------------------- output */

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

static int print_table(const tw_isa_results *r, tw_isa_mode mode, const double *paper_uj)
{
    static const char *const hp[] = {"instruction", "group", "JIT",  "uJ/inst", "+-",
                                     "cycles",      "SMA",   "PAPI", "MTSM",    "Volta(paper)"};
    static const char *const ht[] = {"instruction", "group",    "pJ/thread-op", "+-", "spread_%", "pJ/warp-inst",
                                     "op/SM/clk",   "kernel_W", "resident_W",   "r2", "operands"};
    bool paper = mode == TW_ISA_PAPER;
    table *t = paper ? table_new(10, hp) : table_new(11, ht);
    if (!t) return cli_fail(CMD, TW_ENOMEM);
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
    table_print(t, stdout);
    table_free(t);
    return 0;
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
static void throughput_summary(const tw_isa_results *r, double min_pj)
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
    printf("spread over repeats <= 5 %%: %d of %d instructions of >= %g pJ per thread operation", ok, n, min_pj);
    if (worst) printf(" (largest: %s, %.1f %%)", worst->e->name, worst->spread_pct);
    printf("\n");
    const tw_isa_row *div = row_named(r, "div.rn.f64"), *fma = row_named(r, "fma.rn.f32"),
                     *add = row_named(r, "add.s32");
    if (div && fma && add) {
        bool holds = div->e_inst_j > 10 * fma->e_inst_j && fma->e_inst_j >= add->e_inst_j;
        printf("ordering div.rn.f64 %.1f pJ >> fma.rn.f32 %.2f pJ >= add.s32 %.2f pJ: %s\n", div->e_inst_j * 1e12,
               fma->e_inst_j * 1e12, add->e_inst_j * 1e12, holds ? "holds" : "does NOT hold");
    }
}

static int write_csv(const char *dir, const tw_isa_results *r, tw_isa_mode mode, const double *paper_uj,
                     const char *prov)
{
    char path[4096];
    FILE *f = cli_open_out(CMD, dir, "isa.csv", path, sizeof path);
    if (!f) return CLI_EXIT_FAIL;
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
    return cli_close_out(CMD, f, path);
}

/* Every launch as measured (launches.csv): the rows can be fitted again from it. */
static int write_launches(const char *dir, const tw_isa_results *r, const char *prov)
{
    char path[4096];
    FILE *f = cli_open_out(CMD, dir, "launches.csv", path, sizeof path);
    if (!f) return CLI_EXIT_FAIL;
    fprintf(f, "# %s; reading %s; energies by its model, dyn_j above active idle\n", prov, r->reading);
    fprintf(f, "instruction,kind,jit_level,rep,iterations,ops,loops,start_s,end_s,total_j,dyn_j\n");
    for (size_t i = 0; i < r->nlaunches; i++) {
        const tw_isa_launch_row *l = &r->launches[i];
        fprintf(f, "%s,%s,%d,%d,%.17g,%.17g,%.17g,%.9f,%.9f,%.9g,%.9g\n", l->e->name, l->kind, l->opt_level, l->rep,
                l->iterations, l->ops, l->loops, l->start_s, l->end_s, l->total_j, l->dyn_j);
    }
    return cli_close_out(CMD, f, path);
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
static void plot(const char *dir, const tw_isa_results *r, tw_isa_mode mode)
{
    char path[4096];
    FILE *f = cli_open_out(CMD, dir, "isa.dat", path, sizeof path);
    if (!f) return;
    for (size_t i = 0; i < r->n; i++) {
        const tw_isa_row *w = &r->rows[i];
        if (mode == TW_ISA_PAPER && w->opt_level != 0) continue;
        double v = mode == TW_ISA_PAPER ? w->e_inst_j * 1e6 : w->e_inst_j * 1e12;
        if (isfinite(v) && v > 0) fprintf(f, "\"%s\" %.6g\n", w->e->name, v);
    }
    if (cli_close_out(CMD, f, path)) return;
    FILE *g = cli_open_out(CMD, dir, "isa.gp", path, sizeof path);
    if (!g) return;
    fprintf(g,
            "set terminal pngcairo size 1600,600\nset output 'isa.png'\nset logscale y\nset style fill solid\n"
            "set xtics rotate by -60 font ',8' noenhanced\nset rmargin 8\nset boxwidth 0.8\n"
            "set ylabel '%s'\nset title 'energy per instruction (%s mode)'\n"
            "plot 'isa.dat' using 2:xtic(1) with boxes notitle\n",
            mode == TW_ISA_PAPER ? "uJ per instruction (JIT level 0)" : "pJ per thread operation",
            mode == TW_ISA_PAPER ? "paper" : "throughput");
    if (cli_close_out(CMD, g, path)) return;
    cli_draw_plot(CMD, dir, "isa.gp", "isa.png");
}

/* ---------------------------------------------------------------- the command */

static tw_status run_isa(tw_exec *x, void *ctx)
{
    isa_args *a = ctx;
    return tw_isa_run(x, &a->run, &a->plan);
}

int cmd_isa(int argc, char **argv)
{
    isa_args a;
    memset(&a, 0, sizeof a);
    cli_exp_args_init(&a.exp);
    tw_isa_run_options_init(&a.run);
    int rc = parse_args(argc, argv, &a);
    if (rc) {
        free(a.only_buf);
        return rc < 0 ? 0 : rc;
    }
    tw_profile p;
    tw_profile_init(&p);
    char prov[1024];
    cli_bench b = {CMD, &a.exp, a.profile, a.out, tw_isa_planned_s(&a.run, 132, 90), run_isa, &a, false};
    tw_exec *x = NULL;
    tw_status st = TW_OK;
    if ((rc = cli_bench_run(&b, argc, argv, &x, &p, prov, sizeof prov))) {
        tw_isa_plan_free(a.plan);
        free(a.only_buf);
        return rc;
    }
    tw_isa_results r = {0};
    if (rc == 0 && (st = tw_isa_analyse(a.plan, x->trace, x->events, &p, &r)) != TW_OK) rc = cli_fail(CMD, st);
    char paper_csv[4096];
    const char *data = getenv("TW_DATA_DIR");
    snprintf(paper_csv, sizeof paper_csv, "%s/arafa2020_table1.csv", data && *data ? data : TW_DATA_DIR_DEFAULT);
    double *paper_uj = calloc(r.n ? r.n : 1, sizeof *paper_uj);
    if (rc == 0 && !paper_uj) rc = cli_fail(CMD, TW_ENOMEM);
    /* the paper's column is a comparison: without the table the results still stand */
    if (rc == 0 && (st = tw_isa_paper_values(paper_csv, &r, paper_uj)) != TW_OK)
        fprintf(stderr, "truewatt %s: warning: no paper values: %s\n", CMD, tw_last_error());
    if (rc == 0 && a.json) {
        print_json(stdout, &r, a.run.mode);
    } else if (rc == 0) {
        printf("energy per instruction, %s mode, measured by %s (SM clock %.0f MHz)\n",
               a.run.mode == TW_ISA_PAPER ? "paper" : "throughput", r.reading, r.clock_mhz);
        rc = print_table(&r, a.run.mode, paper_uj);
        if (rc == 0 && a.run.mode == TW_ISA_THROUGHPUT) throughput_summary(&r, 5.0);
    }
    if (rc == 0) rc = write_csv(a.out, &r, a.run.mode, paper_uj, prov);
    if (rc == 0) rc = write_launches(a.out, &r, prov);
    if (rc == 0) {
        /* the same rows as JSON beside the CSV */
        char jpath[4096];
        FILE *jf = cli_open_out(CMD, a.out, "isa.json", jpath, sizeof jpath);
        if (!jf) {
            rc = CLI_EXIT_FAIL;
        } else {
            print_json(jf, &r, a.run.mode);
            rc = cli_close_out(CMD, jf, jpath);
        }
    }
    if (rc == 0) plot(a.out, &r, a.run.mode);
    free(paper_uj);
    tw_isa_results_free(&r);
    tw_isa_plan_free(a.plan);
    tw_exec_free(x);
    free(a.only_buf);
    return rc;
}
