/* The results of `truewatt mem calibrate` (mem_report.h). */
#include "cli/mem_report.h"

#include <math.h>
#include <string.h>

#include "cli/cli.h"
#include "core/json.h"
#include "report/table.h"

#define R2_MIN 0.98
#define DIV_MIN_THREADS 8 /* the paper's Fig. 8: consistent above 8 threads per block */

/* the paper's A100 lower bounds, pJ per 32-byte sector (Delestrac et al. 2024, §VI) */
static const double paper_a100_pj[TW_MEM_LEVELS] = {82.1, 107, 368, 2090};

/* "pass", "fail", or NULL when unchecked: the files' word (CSV, JSON) */
static const char *check_word(tw_mem_check c)
{
    return c == TW_MEM_CHECK_PASS ? "pass" : c == TW_MEM_CHECK_FAIL ? "fail" : NULL;
}

/* the table's: a failure stands out */
static const char *check_name(tw_mem_check c)
{
    return c == TW_MEM_CHECK_PASS ? "pass" : c == TW_MEM_CHECK_FAIL ? "FAIL" : "-";
}

/* v with `decimals` decimals, "-" when unknown */
static void cell(table *t, double v, int decimals)
{
    if (isfinite(v))
        table_cell(t, "%.*f", decimals, v);
    else
        table_cell(t, "-");
}

int mem_print_table(const char *cmd, const tw_mem_results *r)
{
    static const char *const h[] = {"op",       "level",  "threads",   "pJ/sector",   "+-",
                                    "spread_%", "r2",     "Gsector/s", "kernel_W",    "resident_W",
                                    "KiB/blk",  "div_pJ", "counters",  "sim_truth_pJ"};
    table *t = table_new(14, h);
    if (!t) return cli_fail(cmd, TW_ENOMEM);
    for (size_t i = 0; i < r->n; i++) {
        const tw_mem_row *w = &r->rows[i];
        table_cell(t, "%s", tw_chase_op_name(w->op));
        table_cell(t, "%s", tw_mem_level_name(w->level));
        table_cell(t, "%u", w->threads);
        cell(t, w->eps_j * 1e12, 1);
        cell(t, w->eps_sd_j * 1e12, 2);
        cell(t, w->spread_pct, 1);
        cell(t, w->r2, 4);
        cell(t, w->accesses_per_s * 1e-9, 2);
        cell(t, w->kernel_dyn_w, 1);
        cell(t, w->resident_w, 1);
        table_cell(t, "%zu", w->sub_bytes / 1024);
        cell(t, w->div_j * 1e12, 1);
        table_cell(t, "%s", check_name(w->check));
        cell(t, w->truth_j * 1e12, 1);
    }
    table_print(t, stdout);
    table_free(t);
    return 0;
}

static double row_r2(const tw_mem_results *r, int op, int lv, unsigned threads)
{
    for (size_t i = 0; i < r->n; i++)
        if (r->rows[i].op == (tw_chase_op)op && r->rows[i].level == (tw_mem_level)lv && r->rows[i].threads == threads)
            return r->rows[i].r2;
    return NAN;
}

/* The lower bound of each level beside the paper's A100 values (loads) and the loads' (stores). */
void mem_print_bounds(const tw_mem_results *r)
{
    for (int op = TW_CHASE_LOAD; op <= TW_CHASE_STORE; op++) {
        int shown = 0;
        for (int lv = 0; lv < TW_MEM_LEVELS; lv++) {
            double e = r->lower_j[op][lv];
            if (!isfinite(e)) continue;
            if (!shown++)
                printf("\n%s: lower bound per level (least over the threads swept, counter checks passed), "
                       "pJ per 32-byte sector:\n",
                       op == TW_CHASE_LOAD ? "loads" : "stores");
            unsigned th = r->lower_threads[op][lv];
            double r2 = row_r2(r, op, lv, th), load = r->lower_j[TW_CHASE_LOAD][lv];
            printf("  %-6s %8.1f pJ at %4u threads per block, r2 %.4f%s", tw_mem_level_name((tw_mem_level)lv), e * 1e12,
                   th, r2, r2 >= R2_MIN ? "" : " < 0.98");
            if (op == TW_CHASE_LOAD)
                printf("   (paper, A100: %.1f pJ)\n", paper_a100_pj[lv]);
            else if (isfinite(load))
                printf("   (%.2fx the load)\n", e / load);
            else
                printf("\n");
        }
    }
}

/* The divisions' mean over rows with at least DIV_MIN_THREADS threads. */
static void div_mean(const tw_mem_results *r, int lv, double *mean, double *sd, int *n)
{
    double v[64];
    *n = 0;
    for (size_t i = 0; i < r->n && *n < 64; i++) {
        const tw_mem_row *w = &r->rows[i];
        if (w->op != TW_CHASE_LOAD_DIV || w->threads < DIV_MIN_THREADS || !isfinite(w->div_j)) continue;
        if (w->check == TW_MEM_CHECK_FAIL || (lv >= 0 && w->level != (tw_mem_level)lv)) continue;
        v[(*n)++] = w->div_j;
    }
    double s = 0, q = 0;
    for (int i = 0; i < *n; i++)
        s += v[i];
    *mean = *n ? s / *n : NAN;
    for (int i = 0; i < *n; i++)
        q += (v[i] - *mean) * (v[i] - *mean);
    *sd = *n > 1 ? sqrt(q / (*n - 1)) : NAN;
}

/* "  l2       175.5 pJ (sd 5.6, 4 rows)"; the sd "-" with one row */
static void print_div_line(const char *what, double mean, double sd, int n, const char *end)
{
    char sds[32] = "-";
    if (isfinite(sd)) snprintf(sds, sizeof sds, "%.1f", sd * 1e12);
    printf("  %-6s %7.1f pJ (sd %s, %d row%s)%s", what, mean * 1e12, sds, n, n == 1 ? "" : "s", end);
}

void mem_print_divisions(const tw_mem_results *r, const mem_div_ref *ref)
{
    double m, sd;
    int n;
    div_mean(r, -1, &m, &sd, &n);
    if (n == 0) return;
    printf("\nLOAD+DIV cross-check (the paper's §VI-D): one div.u32 per thread, from (LOAD+DIV - LOAD) per "
           "sector / divisions per sector, at >= %d threads per block:\n",
           DIV_MIN_THREADS);
    for (int lv = 0; lv < TW_MEM_LEVELS; lv++) {
        double ml, sl;
        int nl;
        div_mean(r, lv, &ml, &sl, &nl);
        if (nl) print_div_line(tw_mem_level_name((tw_mem_level)lv), ml, sl, nl, "\n");
    }
    print_div_line("all", m, sd, n, "");
    if (ref && isfinite(ref->j))
        printf("; instruction table (%s): %.1f pJ, %+.0f %%\n", ref->source, ref->j * 1e12, 100 * (m / ref->j - 1));
    else
        printf("; no instruction table given (--isa-table)\n");
}

int mem_write_csv(const char *cmd, const char *dir, const tw_mem_results *r, const char *prov)
{
    char path[4096];
    FILE *f = cli_open_out(cmd, dir, "mem.csv", path, sizeof path);
    if (!f) return CLI_EXIT_FAIL;
    fprintf(f, "# %s; reading %s; SM clock %.0f MHz\n", prov, r->reading, r->clock_mhz);
    fprintf(f, "op,level,threads,blocks,sub_bytes,energy_per_sector_j,energy_sd_j,spread_pct,r2,sectors_per_s,"
               "kernel_dyn_w,resident_w,accesses,div_j,div_sd_j,counters,sim_truth_j\n");
    for (size_t i = 0; i < r->n; i++) {
        const tw_mem_row *w = &r->rows[i];
        double v[] = {w->eps_j,        w->eps_sd_j,   w->spread_pct, w->r2,    w->accesses_per_s,
                      w->kernel_dyn_w, w->resident_w, w->accesses,   w->div_j, w->div_sd_j};
        fprintf(f, "%s,%s,%u,%u,%zu", tw_chase_op_name(w->op), tw_mem_level_name(w->level), w->threads, w->blocks,
                w->sub_bytes);
        for (size_t k = 0; k < sizeof v / sizeof v[0]; k++)
            isfinite(v[k]) ? fprintf(f, ",%.6g", v[k]) : fprintf(f, ",");
        fprintf(f, ",%s", check_word(w->check) ? check_word(w->check) : "");
        isfinite(w->truth_j) ? fprintf(f, ",%.6g\n", w->truth_j) : fprintf(f, ",\n");
    }
    return cli_close_out(cmd, f, path);
}

/* Every launch as measured (launches.csv): the rows can be fitted again from it. */
int mem_write_launches(const char *cmd, const char *dir, const tw_mem_results *r, const char *prov)
{
    char path[4096];
    FILE *f = cli_open_out(cmd, dir, "launches.csv", path, sizeof path);
    if (!f) return CLI_EXIT_FAIL;
    fprintf(f, "# %s; reading %s; energies by its model, dyn_j above active idle\n", prov, r->reading);
    fprintf(f, "op,level,threads,kind,rep,iterations,accesses,start_s,end_s,total_j,dyn_j\n");
    for (size_t i = 0; i < r->nlaunches; i++) {
        const tw_mem_launch_row *l = &r->launches[i];
        fprintf(f, "%s,%s,%u,%s,%d,%.17g,%.17g,%.9f,%.9f,%.9g,%.9g\n", tw_chase_op_name(l->op),
                tw_mem_level_name(l->level), l->threads, l->kind, l->rep, l->iterations, l->accesses, l->start_s,
                l->end_s, l->total_j, l->dyn_j);
    }
    return cli_close_out(cmd, f, path);
}

static void json_sweep(json *j, const tw_mem_results *r, int op, int lv)
{
    json_key(j, "sweep");
    json_begin_array(j);
    for (size_t i = 0; i < r->n; i++) {
        const tw_mem_row *w = &r->rows[i];
        if (w->op != (tw_chase_op)op || w->level != (tw_mem_level)lv) continue;
        json_begin_object(j);
        json_kv_uint(j, "threads", w->threads);
        json_kv_number(j, "energy_per_sector_j", w->eps_j);
        json_kv_number(j, "energy_sd_j", w->eps_sd_j);
        json_kv_number(j, "r2", w->r2);
        json_kv_number(j, "sectors_per_s", w->accesses_per_s);
        json_kv_uint(j, "sub_bytes", w->sub_bytes);
        json_kv_string(j, "counters", check_word(w->check));
        json_kv_number(j, "division_j", w->div_j);
        json_kv_number(j, "sim_truth_j", w->truth_j);
        json_end_object(j);
    }
    json_end_array(j);
}

/* One array of levels for an operation: its lower bound and every point of the sweep. */
static void json_levels(json *j, const char *key, const tw_mem_results *r, int op)
{
    json_key(j, key);
    json_begin_array(j);
    for (int lv = 0; lv < TW_MEM_LEVELS; lv++) {
        bool any = false;
        for (size_t i = 0; i < r->n; i++)
            any |= r->rows[i].op == (tw_chase_op)op && r->rows[i].level == (tw_mem_level)lv;
        if (!any) continue;
        json_begin_object(j);
        json_kv_string(j, "level", tw_mem_level_name((tw_mem_level)lv));
        json_kv_number(j, "energy_per_sector_j", r->lower_j[op][lv]);
        json_kv_uint(j, "threads", r->lower_threads[op][lv]);
        if (op == TW_CHASE_LOAD) json_kv_number(j, "paper_a100_j", paper_a100_pj[lv] * 1e-12);
        json_sweep(j, r, op, lv);
        json_end_object(j);
    }
    json_end_array(j);
}

/* The memory-energy profile: loads under "levels" (what `truewatt breakdown` reads), stores, LOAD+DIV. */
void mem_print_json(FILE *f, const tw_mem_results *r, const tw_exec *x, const mem_div_ref *ref, const char *prov)
{
    json j;
    json_init(&j, f);
    json_begin_object(&j);
    json_kv_string(&j, "provenance", prov);
    json_kv_string(&j, "gpu", x->gpu);
    json_kv_string(&j, "driver", x->driver);
    json_kv_string(&j, "reading", r->reading);
    json_kv_number(&j, "sm_clock_mhz", r->clock_mhz);
    json_kv_number(&j, "l2_bytes", x->l2_bytes);
    json_kv_number(&j, "smem_per_sm_bytes", x->smem_per_sm_bytes);
    json_kv_uint(&j, "sector_bytes", 32);
    json_levels(&j, "levels", r, TW_CHASE_LOAD);
    json_levels(&j, "stores", r, TW_CHASE_STORE);
    json_levels(&j, "load_div", r, TW_CHASE_LOAD_DIV);
    double m, sd;
    int n;
    div_mean(r, -1, &m, &sd, &n);
    json_key(&j, "division");
    json_begin_object(&j);
    json_kv_number(&j, "energy_j", m);
    json_kv_number(&j, "energy_sd_j", sd);
    json_kv_uint(&j, "rows", (unsigned)n);
    json_kv_uint(&j, "min_threads", DIV_MIN_THREADS);
    json_kv_number(&j, "table_j", ref ? ref->j : NAN);
    json_kv_string(&j, "table", ref && ref->source[0] ? ref->source : NULL);
    json_end_object(&j);
    json_end_object(&j);
    json_finish(&j);
}

/* Energy per access against threads per block, one line per operation and level (the paper's Figs. 6-8). */
void mem_plot(const char *cmd, const char *dir, const tw_mem_results *r)
{
    char path[4096];
    FILE *f = cli_open_out(cmd, dir, "mem.dat", path, sizeof path);
    if (!f) return;
    char titles[1024] = "";
    int blocks = 0;
    for (int op = 0; op < TW_CHASE_OPS; op++)
        for (int lv = 0; lv < TW_MEM_LEVELS; lv++) {
            bool any = false;
            for (size_t i = 0; i < r->n; i++)
                any |= r->rows[i].op == (tw_chase_op)op && r->rows[i].level == (tw_mem_level)lv && r->rows[i].eps_j > 0;
            if (!any) continue;
            fprintf(f, "# %s %s\n", tw_chase_op_name((tw_chase_op)op), tw_mem_level_name((tw_mem_level)lv));
            for (size_t i = 0; i < r->n; i++) {
                const tw_mem_row *w = &r->rows[i];
                if (w->op == (tw_chase_op)op && w->level == (tw_mem_level)lv && w->eps_j > 0)
                    fprintf(f, "%u %.6g %.6g\n", w->threads, w->eps_j * 1e12,
                            isfinite(w->eps_sd_j) ? w->eps_sd_j * 1e12 : 0.0);
            }
            fprintf(f, "\n\n");
            size_t len = strlen(titles);
            snprintf(titles + len, sizeof titles - len, "%s%s_%s", blocks ? " " : "",
                     op == TW_CHASE_LOAD_DIV ? "load+div" : tw_chase_op_name((tw_chase_op)op),
                     tw_mem_level_name((tw_mem_level)lv));
            blocks++;
        }
    if (cli_close_out(cmd, f, path) || blocks == 0) return;
    FILE *g = cli_open_out(cmd, dir, "mem.gp", path, sizeof path);
    if (!g) return;
    fprintf(g,
            "set terminal pngcairo size 1000,650\nset output 'mem.png'\nset logscale xy\n"
            "set xlabel 'threads per block'\nset ylabel 'pJ per 32-byte sector'\n"
            "set title 'energy per access (pointer chase; stores and LOAD+DIV beside the loads)'\n"
            "set key outside right\nt = '%s'\n"
            "plot for [i=0:%d] 'mem.dat' index i using 1:2:3 with yerrorlines title word(t, i+1) noenhanced\n",
            titles, blocks - 1);
    if (cli_close_out(cmd, g, path)) return;
    cli_draw_plot(cmd, dir, "mem.gp", "mem.png");
}
