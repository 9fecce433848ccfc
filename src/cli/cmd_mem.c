/* truewatt mem: energy of data movement (Delestrac et al. 2024); the
 * calibrate sub-command measures the energy per access of shared memory,
 * L1, L2 and DRAM with pointer chases (bench/mem_run.h). */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/mem_run.h"
#include "bench/mem_sizes.h"
#include "cli/bench_run.h"
#include "cli/cli.h"
#include "cli/experiment.h"
#include "core/json.h"
#include "report/plot.h"
#include "report/table.h"

#define CMD "mem calibrate"
#define MAX_THREADS 32
#define R2_MIN 0.98

/* the paper's A100 lower bounds, pJ per 32-byte sector (Delestrac et al. 2024, §VI) */
static const double paper_a100_pj[TW_MEM_LEVELS] = {82.1, 107, 368, 2090};

static void help(void)
{
    printf("usage: truewatt mem calibrate [--levels shared,l1,l2,dram] [--threads N,...] [--blocks-per-sm N]\n"
           "                              [--reps N] [--target-s S] [--profile FILE] [--out DIR] [--json]\n"
           "                              [--backend nvml|sim] [--sim h100] [--seed N] [--device N]\n\n"
           "Energy per access of each memory level by pointer chases (Delestrac et al. 2024): per level\n"
           "and threads per block (two blocks per SM), the chase without and with its measurement loop\n"
           "and a resident (sleeping) kernel; energy above active idle regressed on the sector accesses\n"
           "with time as a second regressor. The lower bound of a level is the least energy per access\n"
           "over the threads swept. Array sizes follow the GPU's L2 and shared memory sizes. Nothing on\n"
           "the card is changed.\n\n"
           "  --levels LIST   which levels (default all four)\n"
           "  --threads LIST  threads per block to sweep (default 1,4,32,128,512,1024)\n"
           "  --blocks-per-sm N  blocks on each SM (default 2)\n"
           "  --reps N        repeats (default 3); --target-s S: the longest launch (default 0.25)\n"
           "  --profile FILE  the sensor profile (default: looked up, else identified first, ~1 min)\n"
           "  --out DIR       mem.csv, mem-profile.json, launches.csv, mem.dat/.gp/.png, trace, events\n"
           "                  (default truewatt-mem)\n"
           "  --json          the rows as JSON on stdout\n");
}

enum { OPT_LEVELS = 1000, OPT_THREADS, OPT_BLOCKS, OPT_REPS, OPT_TARGET, OPT_PROFILE, OPT_OUT, OPT_JSON, OPT_MAX_MIB };

typedef struct mem_args {
    cli_exp_args exp;
    tw_mem_run_options run;
    unsigned threads[MAX_THREADS];
    const char *profile, *out;
    bool json;
    tw_mem_plan *plan;
} mem_args;

static int parse_levels(mem_args *a, const char *list)
{
    a->run.levels = 0;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", list);
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        int found = -1;
        for (int lv = 0; lv < TW_MEM_LEVELS; lv++)
            if (!strcmp(t, tw_mem_level_name((tw_mem_level)lv))) found = lv;
        if (found < 0) return cli_usage(CMD, "--levels: no level named '%s' (shared, l1, l2, dram)", t);
        a->run.levels |= 1u << found;
    }
    return a->run.levels ? 0 : cli_usage(CMD, "--levels: name at least one level");
}

static int parse_threads(mem_args *a, const char *list)
{
    char buf[512];
    snprintf(buf, sizeof buf, "%s", list);
    a->run.nthreads = 0;
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        uint64_t v;
        if (!cli_parse_u64(t, &v) || v < 1 || v > 1024 || (v & (v - 1)))
            return cli_usage(CMD, "--threads: '%s' is not a power of two from 1 to 1024", t);
        if (a->run.nthreads == MAX_THREADS) return cli_usage(CMD, "--threads: at most %d values", MAX_THREADS);
        a->threads[a->run.nthreads++] = (unsigned)v;
    }
    a->run.threads = a->threads;
    return a->run.nthreads ? 0 : cli_usage(CMD, "--threads: name at least one count");
}

static int parse_args(int argc, char **argv, mem_args *a)
{
    static const struct option opts[] = {{"levels", required_argument, 0, OPT_LEVELS},
                                         {"threads", required_argument, 0, OPT_THREADS},
                                         {"blocks-per-sm", required_argument, 0, OPT_BLOCKS},
                                         {"reps", required_argument, 0, OPT_REPS},
                                         {"target-s", required_argument, 0, OPT_TARGET},
                                         {"profile", required_argument, 0, OPT_PROFILE},
                                         {"out", required_argument, 0, OPT_OUT},
                                         {"json", no_argument, 0, OPT_JSON},
                                         CLI_EXP_LONG_OPTIONS,
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    int c, rc = 0;
    uint64_t u;
    double d;
    optind = 1;
    opterr = 0;
    while (!rc && (c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        switch (c) {
        case 'h':
            help();
            return -1;
        case OPT_LEVELS:
            rc = parse_levels(a, optarg);
            break;
        case OPT_THREADS:
            rc = parse_threads(a, optarg);
            break;
        case OPT_BLOCKS:
            if (!cli_parse_u64(optarg, &u) || u < 1 || u > 32)
                rc = cli_usage(CMD, "--blocks-per-sm must be 1..32, not '%s'", optarg);
            else
                a->run.blocks_per_sm = (unsigned)u;
            break;
        case OPT_REPS:
            if (!cli_parse_u64(optarg, &u) || u < 2 || u > 16)
                rc = cli_usage(CMD, "--reps must be 2..16, not '%s'", optarg);
            else
                a->run.reps = (int)u;
            break;
        case OPT_TARGET:
            if (!cli_parse_double(optarg, &d) || !(d >= 0.02 && d <= 10))
                rc = cli_usage(CMD, "--target-s must be 0.02..10 seconds, not '%s'", optarg);
            else
                a->run.target_s = d;
            break;
        case OPT_PROFILE:
            a->profile = optarg;
            break;
        case OPT_OUT:
            a->out = optarg;
            break;
        case OPT_JSON:
            a->json = true;
            break;
        default:
            rc = cli_opt_other(CMD, c, optarg, argv, &a->exp);
        }
    }
    if (!rc) rc = cli_opt_rest(CMD, argc, argv, optind);
    return rc;
}

/* ---------------------------------------------------------------- output */

/* v with `decimals` decimals, "-" when unknown */
static void cell(table *t, double v, int decimals)
{
    if (isfinite(v))
        table_cell(t, "%.*f", decimals, v);
    else
        table_cell(t, "-");
}

static int print_table(const tw_mem_results *r)
{
    static const char *const h[] = {"level",     "threads",  "pJ/sector",  "+-",        "spread_%",    "r2",
                                    "Gsector/s", "kernel_W", "resident_W", "KiB/block", "sim_truth_pJ"};
    table *t = table_new(11, h);
    if (!t) return cli_fail(CMD, TW_ENOMEM);
    for (size_t i = 0; i < r->n; i++) {
        const tw_mem_row *w = &r->rows[i];
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
        cell(t, w->truth_j * 1e12, 1);
    }
    table_print(t, stdout);
    table_free(t);
    return 0;
}

/* The lower bound of each level beside the paper's A100 values, and whether its fit is good enough. */
static void print_bounds(const tw_mem_results *r)
{
    printf("\nlower bound per level (least over the threads swept), pJ per 32-byte sector:\n");
    for (int lv = 0; lv < TW_MEM_LEVELS; lv++) {
        if (!isfinite(r->lower_j[lv])) continue;
        double r2 = NAN;
        for (size_t i = 0; i < r->n; i++)
            if (r->rows[i].level == (tw_mem_level)lv && r->rows[i].threads == r->lower_threads[lv]) r2 = r->rows[i].r2;
        printf("  %-6s %8.1f pJ at %4u threads per block, r2 %.4f%s   (paper, A100: %.1f pJ)\n",
               tw_mem_level_name((tw_mem_level)lv), r->lower_j[lv] * 1e12, r->lower_threads[lv], r2,
               r2 >= R2_MIN ? "" : " < 0.98", paper_a100_pj[lv]);
    }
}

static int write_csv(const char *dir, const tw_mem_results *r, const char *prov)
{
    char path[4096];
    FILE *f = cli_open_out(CMD, dir, "mem.csv", path, sizeof path);
    if (!f) return CLI_EXIT_FAIL;
    fprintf(f, "# %s; reading %s; SM clock %.0f MHz\n", prov, r->reading, r->clock_mhz);
    fprintf(f, "level,threads,blocks,sub_bytes,energy_per_sector_j,energy_sd_j,spread_pct,r2,sectors_per_s,"
               "kernel_dyn_w,resident_w,accesses,sim_truth_j\n");
    for (size_t i = 0; i < r->n; i++) {
        const tw_mem_row *w = &r->rows[i];
        double v[] = {w->eps_j,        w->eps_sd_j,   w->spread_pct, w->r2,     w->accesses_per_s,
                      w->kernel_dyn_w, w->resident_w, w->accesses,   w->truth_j};
        fprintf(f, "%s,%u,%u,%zu", tw_mem_level_name(w->level), w->threads, w->blocks, w->sub_bytes);
        for (size_t k = 0; k < sizeof v / sizeof v[0]; k++)
            isfinite(v[k]) ? fprintf(f, ",%.6g", v[k]) : fprintf(f, ",");
        fprintf(f, "\n");
    }
    return cli_close_out(CMD, f, path);
}

/* The memory-energy profile: per level its lower bound and every point of the sweep. */
/* Every launch as measured (launches.csv): the rows can be fitted again from it. */
static int write_launches(const char *dir, const tw_mem_results *r, const char *prov)
{
    char path[4096];
    FILE *f = cli_open_out(CMD, dir, "launches.csv", path, sizeof path);
    if (!f) return CLI_EXIT_FAIL;
    fprintf(f, "# %s; reading %s; energies by its model, dyn_j above active idle\n", prov, r->reading);
    fprintf(f, "level,threads,kind,rep,iterations,accesses,start_s,end_s,total_j,dyn_j\n");
    for (size_t i = 0; i < r->nlaunches; i++) {
        const tw_mem_launch_row *l = &r->launches[i];
        fprintf(f, "%s,%u,%s,%d,%.17g,%.17g,%.9f,%.9f,%.9g,%.9g\n", tw_mem_level_name(l->level), l->threads, l->kind,
                l->rep, l->iterations, l->accesses, l->start_s, l->end_s, l->total_j, l->dyn_j);
    }
    return cli_close_out(CMD, f, path);
}

static void print_json(FILE *f, const tw_mem_results *r, const tw_exec *x, const char *prov)
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
    json_key(&j, "levels");
    json_begin_array(&j);
    for (int lv = 0; lv < TW_MEM_LEVELS; lv++) {
        if (!isfinite(r->lower_j[lv])) continue;
        json_begin_object(&j);
        json_kv_string(&j, "level", tw_mem_level_name((tw_mem_level)lv));
        json_kv_number(&j, "energy_per_sector_j", r->lower_j[lv]);
        json_kv_uint(&j, "threads", r->lower_threads[lv]);
        json_kv_number(&j, "paper_a100_j", paper_a100_pj[lv] * 1e-12);
        json_key(&j, "sweep");
        json_begin_array(&j);
        for (size_t i = 0; i < r->n; i++) {
            const tw_mem_row *w = &r->rows[i];
            if (w->level != (tw_mem_level)lv) continue;
            json_begin_object(&j);
            json_kv_uint(&j, "threads", w->threads);
            json_kv_number(&j, "energy_per_sector_j", w->eps_j);
            json_kv_number(&j, "energy_sd_j", w->eps_sd_j);
            json_kv_number(&j, "r2", w->r2);
            json_kv_number(&j, "sectors_per_s", w->accesses_per_s);
            json_kv_uint(&j, "sub_bytes", w->sub_bytes);
            json_kv_number(&j, "sim_truth_j", w->truth_j);
            json_end_object(&j);
        }
        json_end_array(&j);
        json_end_object(&j);
    }
    json_end_array(&j);
    json_end_object(&j);
    json_finish(&j);
}

/* Energy per access against threads per block, one line per level (the paper's Figs. 6-7). */
static void plot(const char *dir, const tw_mem_results *r)
{
    char path[4096];
    FILE *f = cli_open_out(CMD, dir, "mem.dat", path, sizeof path);
    if (!f) return;
    for (int lv = 0; lv < TW_MEM_LEVELS; lv++) {
        fprintf(f, "# %s\n", tw_mem_level_name((tw_mem_level)lv));
        for (size_t i = 0; i < r->n; i++)
            if (r->rows[i].level == (tw_mem_level)lv && r->rows[i].eps_j > 0)
                fprintf(f, "%u %.6g %.6g\n", r->rows[i].threads, r->rows[i].eps_j * 1e12,
                        isfinite(r->rows[i].eps_sd_j) ? r->rows[i].eps_sd_j * 1e12 : 0.0);
        fprintf(f, "\n\n");
    }
    if (cli_close_out(CMD, f, path)) return;
    FILE *g = cli_open_out(CMD, dir, "mem.gp", path, sizeof path);
    if (!g) return;
    fprintf(g, "set terminal pngcairo size 900,600\nset output 'mem.png'\nset logscale xy\n"
               "set xlabel 'threads per block'\nset ylabel 'pJ per 32-byte sector'\n"
               "set title 'energy per access (pointer chase)'\nset key top right\n"
               "plot for [i=0:3] 'mem.dat' index i using 1:2:3 with yerrorlines title "
               "word('shared L1 L2 DRAM', i+1)\n");
    if (cli_close_out(CMD, g, path)) return;
    cli_draw_plot(CMD, dir, "mem.gp", "mem.png");
}

/* ---------------------------------------------------------------- the command */

static tw_status run_mem(tw_exec *x, void *ctx)
{
    mem_args *a = ctx;
    return tw_mem_run(x, &a->run, &a->plan);
}

int tw_cmd_mem_calibrate(int argc, char **argv)
{
    mem_args a;
    memset(&a, 0, sizeof a);
    a.out = "truewatt-mem";
    cli_exp_args_init(&a.exp);
    tw_mem_run_options_init(&a.run);
    int rc = parse_args(argc, argv, &a);
    if (rc) return rc < 0 ? 0 : rc;
    tw_profile p;
    tw_profile_init(&p);
    char prov[1024];
    cli_bench b = {CMD, &a.exp, a.profile, a.out, tw_mem_planned_s(&a.run), run_mem, &a, false};
    tw_exec *x = NULL;
    if ((rc = cli_bench_run(&b, argc, argv, &x, &p, prov, sizeof prov))) {
        tw_mem_plan_free(a.plan);
        return rc;
    }
    tw_mem_results r = {0};
    tw_status st = tw_mem_analyse(a.plan, x->trace, x->events, &p, &r);
    if (st != TW_OK) rc = cli_fail(CMD, st);
    if (rc == 0 && a.json) {
        print_json(stdout, &r, x, prov);
    } else if (rc == 0) {
        printf("energy per memory access, measured by %s", r.reading);
        if (isfinite(r.clock_mhz)) printf(" (SM clock %.0f MHz)", r.clock_mhz);
        printf("\n");
        rc = print_table(&r);
        if (rc == 0) print_bounds(&r);
    }
    if (rc == 0) rc = write_csv(a.out, &r, prov);
    if (rc == 0) rc = write_launches(a.out, &r, prov);
    if (rc == 0) {
        char path[4096];
        FILE *f = cli_open_out(CMD, a.out, "mem-profile.json", path, sizeof path);
        if (!f) {
            rc = CLI_EXIT_FAIL;
        } else {
            print_json(f, &r, x, prov);
            rc = cli_close_out(CMD, f, path);
        }
    }
    if (rc == 0) plot(a.out, &r);
    tw_mem_results_free(&r);
    tw_mem_plan_free(a.plan);
    tw_exec_free(x);
    return rc;
}

/* ---------------------------------------------------------------- mem sizes */

#define CMD_SIZES "mem sizes"

static void help_sizes(void)
{
    printf("usage: truewatt mem sizes [--max-mib N] [--target-s S] [--out DIR] [--json]\n"
           "                          [--backend nvml|sim] [--sim h100] [--seed N] [--device N]\n\n"
           "The memory levels' sizes from access latency (the identification of Delestrac et al. 2024,\n"
           "by time instead of counters): one warp chases arrays of 16 KiB up to --max-mib (default four\n"
           "times the L2), with loads cached in L1 and with loads that skip it; a level's size is the\n"
           "largest array whose time per access stays within 25 %% of the smallest array's. Printed\n"
           "beside the driver's attributes; sizes.csv in --out DIR (default truewatt-mem-sizes).\n");
}

typedef struct sizes_args {
    cli_exp_args exp;
    tw_mem_sizes_options o;
    const char *out;
    bool json;
    tw_mem_sizes r;
} sizes_args;

static int parse_sizes(int argc, char **argv, sizes_args *a)
{
    static const struct option opts[] = {{"max-mib", required_argument, 0, OPT_MAX_MIB},
                                         {"target-s", required_argument, 0, OPT_TARGET},
                                         {"out", required_argument, 0, OPT_OUT},
                                         {"json", no_argument, 0, OPT_JSON},
                                         CLI_EXP_LONG_OPTIONS,
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    int c, rc = 0;
    double d;
    optind = 1;
    opterr = 0;
    while (!rc && (c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        switch (c) {
        case 'h':
            help_sizes();
            return -1;
        case OPT_MAX_MIB:
            if (!cli_parse_double(optarg, &d) || !(d >= 1 && d <= 4096))
                rc = cli_usage(CMD_SIZES, "--max-mib must be 1..4096, not '%s'", optarg);
            else
                a->o.max_bytes = d * 1048576;
            break;
        case OPT_TARGET:
            if (!cli_parse_double(optarg, &d) || !(d >= 0.001 && d <= 10))
                rc = cli_usage(CMD_SIZES, "--target-s must be 0.001..10 seconds, not '%s'", optarg);
            else
                a->o.target_s = d;
            break;
        case OPT_OUT:
            a->out = optarg;
            break;
        case OPT_JSON:
            a->json = true;
            break;
        default:
            rc = cli_opt_other(CMD_SIZES, c, optarg, argv, &a->exp);
        }
    }
    if (!rc) rc = cli_opt_rest(CMD_SIZES, argc, argv, optind);
    return rc;
}

static tw_status run_sizes(tw_exec *x, void *ctx)
{
    sizes_args *a = ctx;
    return tw_mem_sizes_run(x, &a->o, &a->r);
}

static int write_sizes(const char *dir, const tw_mem_sizes *r, const tw_exec *x, const char *prov)
{
    char path[4096];
    FILE *f = cli_open_out(CMD_SIZES, dir, "sizes.csv", path, sizeof path);
    if (!f) return CLI_EXIT_FAIL;
    fprintf(f, "# %s; gpu %s; driver attributes: L2 %.0f bytes, shared per SM %.0f bytes; found: L1 %.0f, L2 %.0f\n",
            prov, x->gpu, x->l2_bytes, x->smem_per_sm_bytes, r->l1_bytes, r->l2_bytes);
    fprintf(f, "array_bytes,l1_load_ns,l2_load_ns\n");
    for (size_t i = 0; i < r->n; i++)
        fprintf(f, "%.0f,%.4g,%.4g\n", r->bytes[i], r->l1_ns[i], r->l2_ns[i]);
    return cli_close_out(CMD_SIZES, f, path);
}

static void print_sizes(const tw_mem_sizes *r, const tw_exec *x, bool as_json)
{
    if (as_json) {
        json j;
        json_init(&j, stdout);
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
    printf("time per dependent access (one warp), ns\n%12s %12s %12s\n", "array_KiB", "L1 loads", "L2 loads");
    for (size_t i = 0; i < r->n; i++)
        printf("%12.0f %12.1f %12.1f\n", r->bytes[i] / 1024, r->l1_ns[i], r->l2_ns[i]);
    double top = r->n ? r->bytes[r->n - 1] / 1048576 : 0;
    if (r->l1_bytes > 0)
        printf("\nL1: %.0f KiB", r->l1_bytes / 1024);
    else
        printf("\nL1: no step up to %.1f MiB", top);
    printf(" (the driver: %.0f KiB of shared memory per SM, L1 and shared are one array)\n",
           x->smem_per_sm_bytes / 1024);
    if (r->l2_bytes > 0)
        printf("L2: %.1f MiB", r->l2_bytes / 1048576);
    else
        printf("L2: no step up to %.1f MiB", top);
    printf(" (the driver: %.1f MiB)\n", x->l2_bytes / 1048576);
}

static int tw_cmd_mem_sizes(int argc, char **argv)
{
    sizes_args a;
    memset(&a, 0, sizeof a);
    a.out = "truewatt-mem-sizes";
    cli_exp_args_init(&a.exp);
    int rc = parse_sizes(argc, argv, &a);
    if (rc) return rc < 0 ? 0 : rc;
    tw_profile p;
    tw_profile_init(&p);
    char prov[1024];
    cli_bench b = {CMD_SIZES, &a.exp, NULL, a.out, 30, run_sizes, &a, true};
    tw_exec *x = NULL;
    if ((rc = cli_bench_run(&b, argc, argv, &x, &p, prov, sizeof prov))) return rc;
    print_sizes(&a.r, x, a.json);
    rc = write_sizes(a.out, &a.r, x, prov);
    tw_exec_free(x);
    return rc;
}

static const cli_command subcommands[] = {
    {"sizes", tw_cmd_mem_sizes, "the levels' sizes from access latency (identification)"},
    {"calibrate", tw_cmd_mem_calibrate, "energy per access of shared memory, L1, L2 and DRAM (pointer chases)"},
};

int cmd_mem(int argc, char **argv)
{
    return cli_dispatch("mem",
                        "Energy of data movement (Delestrac et al. 2024): per-access energy of each memory level.",
                        subcommands, sizeof subcommands / sizeof subcommands[0], argc, argv);
}
