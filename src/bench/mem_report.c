/* `truewatt mem` as library calls (tw_mem_calibrate, tw_mem_sizes_report,
 * tw_mem_counters, tw_mem_check_report; truewatt.h): the energy of data
 * movement (Delestrac et al. 2024) by pointer chases (bench/mem_run.h), the
 * levels' sizes (bench/mem_sizes.h), the counter checks (bench/mem_check.h),
 * and their results as a table, CSV, every launch, the memory-energy
 * profile (JSON) and plots, from the same rows. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/experiment.h"
#include "bench/mem_check.h"
#include "bench/mem_run.h"
#include "bench/mem_sizes.h"
#include "api/sized.h"
#include "core/error.h"
#include "core/json.h"
#include "core/note.h"
#include "core/outfile.h"
#include "mem/ncu_csv.h"
#include "report/table.h"
#include "trace/csv.h"

#define MAX_THREADS 32

/* The instruction table's energy of one div.u32 per thread (isa.csv), NaN when not given. */
typedef struct mem_div_ref {
    double j;
    char source[512];
} mem_div_ref;

void tw_mem_options_init(tw_mem_options *o)
{
    memset(o, 0, sizeof *o);
    o->size = sizeof *o;
    o->iterations = 4;
    o->out_dir = "truewatt-mem";
}

/* A comma-separated list of names as a bit mask; what names the bits is `name`. */
static tw_status parse_mask(const char *what, const char *list, int n, const char *(*name)(int), const char *all,
                            unsigned *mask)
{
    *mask = 0;
    if (!list) return TW_OK;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", list);
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        int found = -1;
        for (int i = 0; i < n; i++)
            if (!strcmp(t, name(i))) found = i;
        if (found < 0)
            return tw_fail(TW_EINVAL, "%s: no %s named '%s' (%s)", what, what[0] == 'l' ? "level" : "operation", t,
                           all);
        *mask |= 1u << found;
    }
    if (!*mask) return tw_fail(TW_EINVAL, "%s: name at least one %s", what, what[0] == 'l' ? "level" : "operation");
    return TW_OK;
}

static const char *level_name(int i) { return tw_mem_level_name((tw_mem_level)i); }
static const char *op_name(int i) { return tw_chase_op_name((tw_chase_op)i); }

/* The chases the options ask for. */
static tw_status run_options(const tw_mem_options *o, tw_mem_run_options *run)
{
    tw_mem_run_options_init(run);
    tw_status st = parse_mask("levels", o->levels, TW_MEM_LEVELS, level_name, "shared, l1, l2, dram", &run->levels);
    if (st == TW_OK) st = parse_mask("ops", o->ops, TW_CHASE_OPS, op_name, "load, store, load+div", &run->ops);
    if (st != TW_OK) return st;
    if (o->threads && o->nthreads > MAX_THREADS) return tw_fail(TW_EINVAL, "threads: at most %d values", MAX_THREADS);
    for (size_t i = 0; o->threads && i < o->nthreads; i++) {
        unsigned v = o->threads[i];
        if (v < 1 || v > 1024 || (v & (v - 1)))
            return tw_fail(TW_EINVAL, "threads: '%u' is not a power of two from 1 to 1024", v);
    }
    run->threads = o->nthreads ? o->threads : NULL;
    run->nthreads = o->threads ? o->nthreads : 0;
    run->blocks_per_sm = o->blocks_per_sm;
    run->reps = o->reps;
    run->target_s = o->target_s;
    return TW_OK;
}

tw_status tw_mem_options_check(const tw_mem_options *o_in)
{
    if (!o_in) return tw_fail(TW_EINVAL, "tw_mem_options_check: NULL options");
    tw_mem_options o_full;
    tw_mem_options_init(&o_full);
    tw_status sized = tw_sized_read(&o_full, sizeof o_full, o_in, "tw_mem_options_check: options");
    if (sized != TW_OK) return sized;
    const tw_mem_options *o = &o_full;
    tw_mem_run_options run;
    return run_options(o, &run);
}

void tw_mem_check_metrics_arg(char *buf, size_t cap)
{
    size_t nm;
    const char *const *m = tw_mem_check_metrics(&nm);
    tw_ncu_metrics_arg(m, nm, buf, cap);
}

static bool parse_double(const char *s, double *out)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || *end || !isfinite(v)) return false;
    *out = v;
    return true;
}

/* The column named `name` among n fields, -1 when absent. */
static int csv_column(char **fields, size_t n, const char *name)
{
    for (size_t k = 0; k < n; k++)
        if (!strcmp(fields[k], name)) return (int)k;
    return -1;
}

/* div.u32's energy from an isa.csv (columns by name: instruction, energy_j). */
static tw_status read_div_ref(const char *path, mem_div_ref *ref)
{
    ref->j = NAN;
    snprintf(ref->source, sizeof ref->source, "%s", path);
    FILE *f = fopen(path, "r");
    if (!f) return tw_fail(TW_EIO, "cannot read the instruction table %s: %s", path, strerror(errno));
    char line[8192], *fields[64];
    int name_col = -1, e_col = -1;
    while (fgets(line, sizeof line, f) && !isfinite(ref->j)) {
        if (line[0] == '#') continue;
        line[strcspn(line, "\r\n")] = '\0';
        size_t n = 0;
        if (!tw_csv_split(line, fields, 64, &n) || n > 64) break;
        if (name_col < 0) {
            name_col = csv_column(fields, n, "instruction");
            e_col = csv_column(fields, n, "energy_j");
            if (name_col < 0 || e_col < 0) break;
        } else if ((size_t)name_col < n && (size_t)e_col < n && !strcmp(fields[name_col], "div.u32")) {
            parse_double(fields[e_col], &ref->j);
        }
    }
    fclose(f);
    if (isfinite(ref->j)) return TW_OK;
    return tw_fail(TW_EPARSE, "the instruction table %s: no div.u32 row with an energy_j (an isa.csv of truewatt isa)",
                   path);
}

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

static tw_status print_table(FILE *out, const tw_mem_results *r)
{
    static const char *const h[] = {"op",       "level",  "threads",   "pJ/sector",   "+-",
                                    "spread_%", "r2",     "Gsector/s", "kernel_W",    "resident_W",
                                    "KiB/blk",  "div_pJ", "counters",  "sim_truth_pJ"};
    table *t = table_new(14, h);
    if (!t) return TW_ENOMEM;
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
    table_print(t, out);
    table_free(t);
    return TW_OK;
}

static double row_r2(const tw_mem_results *r, int op, int lv, unsigned threads)
{
    for (size_t i = 0; i < r->n; i++)
        if (r->rows[i].op == (tw_chase_op)op && r->rows[i].level == (tw_mem_level)lv && r->rows[i].threads == threads)
            return r->rows[i].r2;
    return NAN;
}

/* The lower bound of each level beside the paper's A100 values (loads) and the loads' (stores). */
static void print_bounds(FILE *out, const tw_mem_results *r)
{
    for (int op = TW_CHASE_LOAD; op <= TW_CHASE_STORE; op++) {
        int shown = 0;
        for (int lv = 0; lv < TW_MEM_LEVELS; lv++) {
            double e = r->lower_j[op][lv];
            if (!isfinite(e)) continue;
            if (!shown++)
                fprintf(out,
                        "\n%s: lower bound per level (least over the threads swept, counter checks passed), "
                        "pJ per 32-byte sector:\n",
                        op == TW_CHASE_LOAD ? "loads" : "stores");
            unsigned th = r->lower_threads[op][lv];
            double r2 = row_r2(r, op, lv, th), load = r->lower_j[TW_CHASE_LOAD][lv];
            fprintf(out, "  %-6s %8.1f pJ at %4u threads per block, r2 %.4f%s", tw_mem_level_name((tw_mem_level)lv),
                    e * 1e12, th, r2, r2 >= R2_MIN ? "" : " < 0.98");
            if (op == TW_CHASE_LOAD)
                fprintf(out, "   (paper, A100: %.1f pJ)\n", paper_a100_pj[lv]);
            else if (isfinite(load))
                fprintf(out, "   (%.2fx the load)\n", e / load);
            else
                fprintf(out, "\n");
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
static void print_div_line(FILE *out, const char *what, double mean, double sd, int n, const char *end)
{
    char sds[32] = "-";
    if (isfinite(sd)) snprintf(sds, sizeof sds, "%.1f", sd * 1e12);
    fprintf(out, "  %-6s %7.1f pJ (sd %s, %d row%s)%s", what, mean * 1e12, sds, n, n == 1 ? "" : "s", end);
}

static void print_divisions(FILE *out, const tw_mem_results *r, const mem_div_ref *ref)
{
    double m, sd;
    int n;
    div_mean(r, -1, &m, &sd, &n);
    if (n == 0) return;
    fprintf(out,
            "\nLOAD+DIV cross-check (the paper's §VI-D): one div.u32 per thread, from (LOAD+DIV - LOAD) per "
            "sector / divisions per sector, at >= %d threads per block:\n",
            DIV_MIN_THREADS);
    for (int lv = 0; lv < TW_MEM_LEVELS; lv++) {
        double ml, sl;
        int nl;
        div_mean(r, lv, &ml, &sl, &nl);
        if (nl) print_div_line(out, tw_mem_level_name((tw_mem_level)lv), ml, sl, nl, "\n");
    }
    print_div_line(out, "all", m, sd, n, "");
    if (ref && isfinite(ref->j))
        fprintf(out, "; instruction table (%s): %.1f pJ, %+.0f %%\n", ref->source, ref->j * 1e12,
                100 * (m / ref->j - 1));
    else
        fprintf(out, "; no instruction table given (--isa-table)\n");
}

static tw_status write_csv(const char *dir, const tw_mem_results *r, const char *prov)
{
    char path[4096];
    FILE *f = out_open(dir, "mem.csv", path, sizeof path);
    if (!f) return TW_EIO;
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
    return out_close(f, path);
}

/* Every launch as measured (launches.csv): the rows can be fitted again from it. */
static tw_status write_launches(const char *dir, const tw_mem_results *r, const char *prov)
{
    char path[4096];
    FILE *f = out_open(dir, "launches.csv", path, sizeof path);
    if (!f) return TW_EIO;
    fprintf(f, "# %s; reading %s; energies by its model, dyn_j above active idle\n", prov, r->reading);
    fprintf(f, "op,level,threads,kind,rep,iterations,accesses,start_s,end_s,total_j,dyn_j\n");
    for (size_t i = 0; i < r->nlaunches; i++) {
        const tw_mem_launch_row *l = &r->launches[i];
        fprintf(f, "%s,%s,%u,%s,%d,%.17g,%.17g,%.9f,%.9f,%.9g,%.9g\n", tw_chase_op_name(l->op),
                tw_mem_level_name(l->level), l->threads, l->kind, l->rep, l->iterations, l->accesses, l->start_s,
                l->end_s, l->total_j, l->dyn_j);
    }
    return out_close(f, path);
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
static void print_json(FILE *f, const tw_mem_results *r, const tw_exec *x, const mem_div_ref *ref, const char *prov)
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
static void plot(const tw_experiment_options *e, const char *dir, const tw_mem_results *r)
{
    char path[4096];
    FILE *f = out_open(dir, "mem.dat", path, sizeof path);
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
    if (out_close(f, path) != TW_OK || blocks == 0) return;
    FILE *g = out_open(dir, "mem.gp", path, sizeof path);
    if (!g) return;
    fprintf(g,
            "set terminal pngcairo size 1000,650\nset output 'mem.png'\nset logscale xy\n"
            "set xlabel 'threads per block'\nset ylabel 'pJ per 32-byte sector'\n"
            "set title 'energy per access (pointer chase; stores and LOAD+DIV beside the loads)'\n"
            "set key outside right\nt = '%s'\n"
            "plot for [i=0:%d] 'mem.dat' index i using 1:2:3 with yerrorlines title word(t, i+1) noenhanced\n",
            titles, blocks - 1);
    if (out_close(g, path) != TW_OK) return;
    out_draw_plot(e->note, e->note_ctx, dir, "mem.gp", "mem.png");
}

/* ---------------------------------------------------------------- checks as rows */

static void checks_print(FILE *out, const tw_mem_check_row *rows, size_t n)
{
    static const char *const h[] = {"op",      "level", "threads",  "counter", "Eq7",
                                    "counted", "off_%", "target_%", "check"};
    table *t = table_new(9, h);
    if (!t) return;
    size_t failed = 0;
    for (size_t i = 0; i < n; i++) {
        const tw_mem_check_row *w = &rows[i];
        table_cell(t, "%s", tw_chase_op_name(w->op));
        table_cell(t, "%s", tw_mem_level_name(w->level));
        table_cell(t, "%u", w->threads);
        table_cell(t, "%s", w->counter);
        table_cell(t, "%.4g", w->expected);
        table_cell(t, "%.4g", w->counted);
        table_cell(t, "%+.2f", 100 * (w->counted / w->expected - 1));
        if (isfinite(w->hit))
            table_cell(t, "%.2f", 100 * w->hit);
        else
            table_cell(t, "-");
        table_cell(t, "%s", w->pass ? "pass" : "FAIL");
        failed += !w->pass;
    }
    fprintf(out, "counter checks (Nsight Compute; the measurement loop = launch(N) - launch(0)): %zu of %zu pass\n",
            n - failed, n);
    table_print(t, out);
    table_free(t);
    for (size_t i = 0; i < n; i++)
        if (!rows[i].pass)
            fprintf(out, "  left out: %s %s, %u threads: %s\n", tw_chase_op_name(rows[i].op),
                    tw_mem_level_name(rows[i].level), rows[i].threads, rows[i].why);
}

static tw_status checks_write(const char *dir, const tw_mem_check_row *rows, size_t n, const char *prov)
{
    char path[4096];
    FILE *f = out_open(dir, "checks.csv", path, sizeof path);
    if (!f) return TW_EIO;
    fprintf(f, "# %s; counters by Nsight Compute; tolerance %.0f %% on Eq. 7, target share >= %.0f %%\n", prov,
            100 * TW_MEM_CHECK_COUNT_TOL, 100 * TW_MEM_CHECK_HIT_MIN);
    fprintf(f, "op,level,threads,blocks,counter,unit,expected,counted,target_share,pass,why\n");
    for (size_t i = 0; i < n; i++) {
        const tw_mem_check_row *w = &rows[i];
        fprintf(f, "%s,%s,%u,%u,%s,%s,%.17g,%.17g,", tw_chase_op_name(w->op), tw_mem_level_name(w->level), w->threads,
                w->blocks, w->counter, w->unit, w->expected, w->counted);
        isfinite(w->hit) ? fprintf(f, "%.6g", w->hit) : 0;
        fprintf(f, ",%d,\"%s\"\n", w->pass ? 1 : 0, w->why);
    }
    return out_close(f, path);
}

static tw_status write_sizes(const char *dir, const tw_mem_sizes *r, const tw_exec *x, const char *prov)
{
    char path[4096];
    FILE *f = out_open(dir, "sizes.csv", path, sizeof path);
    if (!f) return TW_EIO;
    fprintf(f, "# %s; gpu %s; driver attributes: L2 %.0f bytes, shared per SM %.0f bytes; found: L1 %.0f, L2 %.0f\n",
            prov, x->gpu, x->l2_bytes, x->smem_per_sm_bytes, r->l1_bytes, r->l2_bytes);
    fprintf(f, "array_bytes,l1_load_ns,l2_load_ns\n");
    for (size_t i = 0; i < r->n; i++)
        fprintf(f, "%.0f,%.4g,%.4g\n", r->bytes[i], r->l1_ns[i], r->l2_ns[i]);
    return out_close(f, path);
}

static void print_sizes(FILE *out, const tw_mem_sizes *r, const tw_exec *x, bool as_json)
{
    if (as_json) {
        json j;
        json_init(&j, out);
        json_begin_object(&j);
        json_kv_number(&j, "l1_bytes", r->l1_bytes);
        json_kv_number(&j, "l2_bytes", r->l2_bytes);
        json_kv_number(&j, "driver_l2_bytes", x->l2_bytes);
        json_kv_number(&j, "driver_smem_per_sm_bytes", x->smem_per_sm_bytes);
        json_key(&j, "sweep");
        json_begin_array(&j);
        for (size_t i = 0; i < r->n; i++) {
            json_begin_object(&j);
            json_kv_number(&j, "array_bytes", r->bytes[i]);
            json_kv_number(&j, "l1_load_ns", r->l1_ns[i]);
            json_kv_number(&j, "l2_load_ns", r->l2_ns[i]);
            json_end_object(&j);
        }
        json_end_array(&j);
        json_end_object(&j);
        json_finish(&j);
        return;
    }
    fprintf(out, "time per dependent access (one warp), ns\n%12s %12s %12s\n", "array_KiB", "L1 loads", "L2 loads");
    for (size_t i = 0; i < r->n; i++)
        fprintf(out, "%12.0f %12.1f %12.1f\n", r->bytes[i] / 1024, r->l1_ns[i], r->l2_ns[i]);
    double top = r->n ? r->bytes[r->n - 1] / 1048576 : 0;
    if (r->l1_bytes > 0)
        fprintf(out, "\nL1: %.0f KiB", r->l1_bytes / 1024);
    else
        fprintf(out, "\nL1: no step up to %.1f MiB", top);
    fprintf(out, " (the driver: %.0f KiB of shared memory per SM, L1 and shared are one array)\n",
            x->smem_per_sm_bytes / 1024);
    if (r->l2_bytes > 0)
        fprintf(out, "L2: %.1f MiB", r->l2_bytes / 1048576);
    else
        fprintf(out, "L2: no step up to %.1f MiB", top);
    fprintf(out, " (the driver: %.1f MiB)\n", x->l2_bytes / 1048576);
}

/* ---------------------------------------------------------------- the counter checks */

/* ncu's CSV checked against the manifest. */
static tw_status evaluate_checks(const char *manifest, const char *ncu_csv, tw_mem_check_row **rows, size_t *n)
{
    size_t nm;
    const char *const *m = tw_mem_check_metrics(&nm);
    tw_ncu_report rep;
    tw_status st = tw_ncu_read_path(ncu_csv, m, nm, &rep);
    if (st != TW_OK) return st;
    st = tw_mem_check_evaluate(manifest, &rep, rows, n);
    tw_ncu_report_free(&rep);
    return st;
}

tw_status tw_mem_check_report(const tw_experiment_options *e_in, const tw_mem_options *o_in, const char *manifest,
                              const char *ncu_csv, FILE *out)
{
    if (!e_in || !o_in || !manifest || !ncu_csv || !out)
        return tw_fail(TW_EINVAL, "tw_mem_check_report: NULL argument");
    tw_experiment_options e_full;
    tw_mem_options o_full;
    tw_experiment_options_init(&e_full);
    tw_mem_options_init(&o_full);
    tw_status sized = tw_sized_read(&e_full, sizeof e_full, e_in, "tw_mem_check_report: experiment options");
    if (sized == TW_OK) sized = tw_sized_read(&o_full, sizeof o_full, o_in, "tw_mem_check_report: options");
    if (sized != TW_OK) return sized;
    const tw_experiment_options *e = &e_full;
    const tw_mem_options *o = &o_full;
    tw_mem_check_row *rows = NULL;
    size_t n = 0;
    tw_status st = evaluate_checks(manifest, ncu_csv, &rows, &n);
    if (st == TW_OK) {
        checks_print(out, rows, n);
        st = checks_write(o->out_dir ? o->out_dir : ".", rows, n, e->provenance ? e->provenance : "");
    }
    free(rows);
    return st;
}

/* ---------------------------------------------------------------- counters */

typedef struct counters_job {
    tw_mem_run_options run;
    const char *manifest;
    uint64_t iterations;
} counters_job;

static tw_status run_counters(tw_exec *x, void *ctx)
{
    counters_job *c = ctx;
    FILE *f = fopen(c->manifest, "w");
    if (!f) return tw_fail(TW_EIO, "cannot write the manifest %s", c->manifest);
    tw_status st = tw_mem_counter_run(x, &c->run, c->iterations, f);
    if (fclose(f) != 0 && st == TW_OK) st = tw_fail(TW_EIO, "cannot write the manifest %s", c->manifest);
    return st;
}

tw_status tw_mem_counters(const tw_experiment_options *e_in, const tw_mem_options *o_in, const char *manifest)
{
    tw_experiment_options e_full;
    tw_mem_options o_full;
    tw_mem_options_init(&o_full);
    tw_status sized = xp_read_options(&e_full, e_in, &o_full, sizeof o_full, o_in, "tw_mem_counters");
    if (sized != TW_OK) return sized;
    const tw_experiment_options *e = &e_full;
    const tw_mem_options *o = &o_full;
    if (!manifest) return tw_fail(TW_EINVAL, "tw_mem_counters: NULL argument"); /* NULL options: xp_read_options */
    counters_job c = {.manifest = manifest, .iterations = o->iterations ? o->iterations : 4};
    tw_status st = run_options(o, &c.run);
    if (st != TW_OK) return st;
    tw_profile p;
    tw_profile_init(&p);
    xp_bench b = {NULL, o->out_dir ? o->out_dir : "truewatt-mem-counters", 5, run_counters, &c, true};
    tw_exec *x = NULL;
    st = xp_bench_run(e, &b, &x, &p);
    tw_exec_free(x);
    return st;
}

/* ---------------------------------------------------------------- sizes */

typedef struct sizes_job {
    tw_mem_sizes_options o;
    tw_mem_sizes r;
} sizes_job;

static tw_status run_sizes(tw_exec *x, void *ctx)
{
    sizes_job *j = ctx;
    return tw_mem_sizes_run(x, &j->o, &j->r);
}

tw_status tw_mem_sizes_report(const tw_experiment_options *e_in, const tw_mem_options *o_in, FILE *out)
{
    tw_experiment_options e_full;
    tw_mem_options o_full;
    tw_mem_options_init(&o_full);
    tw_status sized = xp_read_options(&e_full, e_in, &o_full, sizeof o_full, o_in, "tw_mem_sizes_report");
    if (sized != TW_OK) return sized;
    const tw_experiment_options *e = &e_full;
    const tw_mem_options *o = &o_full;
    if (!out) return tw_fail(TW_EINVAL, "tw_mem_sizes_report: NULL argument"); /* NULL options: xp_read_options */
    sizes_job j;
    memset(&j, 0, sizeof j);
    j.o.max_bytes = o->max_bytes;
    j.o.target_s = o->target_s;
    const char *dir = o->out_dir ? o->out_dir : "truewatt-mem-sizes";
    tw_profile p;
    tw_profile_init(&p);
    xp_bench b = {NULL, dir, 30, run_sizes, &j, true};
    tw_exec *x = NULL;
    tw_status st = xp_bench_run(e, &b, &x, &p);
    if (st != TW_OK) return st;
    print_sizes(out, &j.r, x, o->json);
    st = write_sizes(dir, &j.r, x, e->provenance ? e->provenance : "");
    tw_exec_free(x);
    return st;
}

/* ---------------------------------------------------------------- calibrate */

typedef struct calibrate_job {
    tw_mem_run_options run;
    tw_mem_plan *plan;
} calibrate_job;

static tw_status run_mem(tw_exec *x, void *ctx)
{
    calibrate_job *j = ctx;
    return tw_mem_run(x, &j->run, &j->plan);
}

static tw_status write_profile(const char *dir, const tw_mem_results *r, const tw_exec *x, const mem_div_ref *ref,
                               const char *prov)
{
    char path[4096];
    FILE *f = out_open(dir, "mem-profile.json", path, sizeof path);
    if (!f) return TW_EIO;
    print_json(f, r, x, ref, prov);
    return out_close(f, path);
}

static tw_status report(const tw_experiment_options *e, const tw_mem_options *o, const char *dir, tw_mem_results *r,
                        const tw_exec *x, const mem_div_ref *ref, FILE *out)
{
    const char *prov = e->provenance ? e->provenance : "";
    tw_status st = TW_OK;
    if (o->json) {
        print_json(out, r, x, ref, prov);
    } else {
        fprintf(out, "\nenergy per memory access, measured by %s", r->reading);
        if (isfinite(r->clock_mhz)) fprintf(out, " (SM clock %.0f MHz)", r->clock_mhz);
        fprintf(out, "\n");
        st = print_table(out, r);
        if (st == TW_OK) {
            print_bounds(out, r);
            print_divisions(out, r, ref);
        }
    }
    if (st == TW_OK) st = write_csv(dir, r, prov);
    if (st == TW_OK) st = write_launches(dir, r, prov);
    if (st == TW_OK) st = write_profile(dir, r, x, ref, prov);
    if (st == TW_OK) plot(e, dir, r);
    return st;
}

tw_status tw_mem_calibrate(const tw_experiment_options *e_in, const tw_mem_options *o_in, FILE *out)
{
    tw_experiment_options e_full;
    tw_mem_options o_full;
    tw_mem_options_init(&o_full);
    tw_status sized = xp_read_options(&e_full, e_in, &o_full, sizeof o_full, o_in, "tw_mem_calibrate");
    if (sized != TW_OK) return sized;
    const tw_experiment_options *e = &e_full;
    const tw_mem_options *o = &o_full;
    if (!out) return tw_fail(TW_EINVAL, "tw_mem_calibrate: NULL argument"); /* NULL options: xp_read_options */
    calibrate_job j = {0};
    tw_status st = run_options(o, &j.run);
    if (st != TW_OK) return st;
    const char *dir = o->out_dir ? o->out_dir : "truewatt-mem";
    mem_div_ref ref = {NAN, ""};
    if (o->isa_table && (st = read_div_ref(o->isa_table, &ref)) != TW_OK) return st;
    tw_mem_check_row *checks = NULL;
    size_t nchecks = 0;
    if (o->check_manifest && o->check_ncu) {
        if ((st = evaluate_checks(o->check_manifest, o->check_ncu, &checks, &nchecks)) != TW_OK) return st;
        checks_print(out, checks, nchecks);
    }
    tw_profile p;
    tw_profile_init(&p);
    xp_bench b = {o->profile, dir, tw_mem_planned_s(&j.run), run_mem, &j, false};
    tw_exec *x = NULL;
    if ((st = xp_bench_run(e, &b, &x, &p)) != TW_OK) {
        free(checks);
        tw_mem_plan_free(j.plan);
        return st;
    }
    tw_mem_results r = {0};
    st = tw_mem_analyse(j.plan, x->trace, x->events, &p, &r);
    if (st == TW_OK && nchecks) {
        tw_mem_check_apply(checks, nchecks, &r);
        st = checks_write(dir, checks, nchecks, e->provenance ? e->provenance : "");
    }
    if (st == TW_OK) st = report(e, o, dir, &r, x, &ref, out);
    free(checks);
    tw_mem_results_free(&r);
    tw_mem_plan_free(j.plan);
    tw_exec_free(x);
    return st;
}
