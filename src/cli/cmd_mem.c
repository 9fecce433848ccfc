/* truewatt mem: energy of data movement (Delestrac et al. 2024). calibrate
 * measures the energy per access of shared memory, L1, L2 and DRAM with
 * pointer chases (bench/mem_run.h), after the counter checks; check runs
 * the checks alone; counters is what Nsight Compute profiles for them. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/mem_run.h"
#include "cli/bench_run.h"
#include "cli/cli.h"
#include "cli/experiment.h"
#include "cli/mem_checks.h"
#include "cli/mem_report.h"
#include "cli/spawn.h"
#include "core/error.h"
#include "trace/csv.h"

#define MAX_THREADS 32
#define CHECK_ITERATIONS 4

enum {
    OPT_LEVELS = 1000,
    OPT_OPS,
    OPT_THREADS,
    OPT_BLOCKS,
    OPT_REPS,
    OPT_TARGET,
    OPT_PROFILE,
    OPT_OUT,
    OPT_JSON,
    OPT_ISA_TABLE,
    OPT_NCU,
    OPT_NO_CHECKS,
    OPT_MANIFEST,
    OPT_ITERATIONS
};

typedef struct mem_args {
    const char *cmd;
    cli_exp_args exp;
    tw_mem_run_options run;
    unsigned threads[MAX_THREADS];
    const char *profile, *out, *isa_table, *ncu, *manifest;
    bool json, no_checks;
    uint64_t iterations;
    tw_mem_plan *plan;
} mem_args;

static void help_calibrate(void)
{
    printf("usage: truewatt mem calibrate [--levels shared,l1,l2,dram] [--ops load,store,load+div]\n"
           "                              [--threads N,...] [--blocks-per-sm N] [--reps N] [--target-s S]\n"
           "                              [--ncu PATH | --no-counter-checks] [--isa-table ISA.csv]\n"
           "                              [--profile FILE] [--out DIR] [--json]\n"
           "                              [--backend nvml|sim] [--sim h100] [--seed N] [--device N]\n\n"
           "Energy per access of each memory level by pointer chases (Delestrac et al. 2024): per operation,\n"
           "level and threads per block (two blocks per SM), the chase without and with its measurement\n"
           "loop and a resident (sleeping) kernel; energy above active idle regressed on the sector accesses\n"
           "with time as a second regressor. The lower bound of a level is the least energy per access over\n"
           "the threads swept whose counter check passed. First, when Nsight Compute is found, the counter\n"
           "checks (as `truewatt mem check`) in a process of their own. Array sizes follow the GPU's L2 and\n"
           "shared memory sizes. Nothing on the card is changed.\n\n"
           "  --levels LIST   which levels (default all four)\n"
           "  --ops LIST      load, store (no L1: stores write through it), load+div (the cross-check with\n"
           "                  the instruction table; not in shared memory); default all three\n"
           "  --threads LIST  threads per block to sweep (default 1,4,32,128,512,1024)\n"
           "  --blocks-per-sm N  blocks on each SM (default 2)\n"
           "  --reps N        repeats (default 3); --target-s S: the longest launch (default 0.25)\n"
           "  --ncu PATH      Nsight Compute (default: ncu on $PATH on a GPU; checks are skipped without it)\n"
           "  --no-counter-checks  no ncu run; every row is used unchecked\n"
           "  --isa-table F   isa.csv of `truewatt isa --mode throughput`: its div.u32 beside LOAD+DIV's\n"
           "  --profile FILE  the sensor profile (default: looked up, else identified first, ~1 min)\n"
           "  --out DIR       mem.csv, mem-profile.json, launches.csv, checks.csv, mem.dat/.gp/.png, trace,\n"
           "                  events (default truewatt-mem)\n"
           "  --json          the memory-energy profile on stdout\n");
}

static void help_check(void)
{
    printf("usage: truewatt mem check [--levels LIST] [--ops LIST] [--threads N,...] [--blocks-per-sm N]\n"
           "                          [--iterations N] [--ncu PATH] [--out DIR]\n"
           "                          [--backend nvml|sim] [--sim h100] [--seed N] [--device N]\n\n"
           "The counter checks of the calibration: Nsight Compute (ncu --csv --clock-control none) counts the\n"
           "sectors of each chase launched with 0 and N iterations; the difference is the measurement loop.\n"
           "A configuration passes when the target level served at least 95 %% of its accesses (L1/L2 hit\n"
           "rate; DRAM: the L2's sectors that went to DRAM) and the counted sectors are within 5 %% of the\n"
           "paper's Eq. 7. Writes checks.csv, ncu.csv and manifest.csv to --out DIR (default\n"
           "truewatt-mem-check).\n");
}

static void help_counters(void)
{
    printf("usage: truewatt mem counters --manifest FILE [--iterations N] [--levels LIST] [--ops LIST]\n"
           "                             [--threads N,...] [--blocks-per-sm N] [--out DIR] [experiment options]\n\n"
           "Launches every chase of the calibration with 0 and N iterations (default %d), nothing measured,\n"
           "and lists the launches in FILE: what `truewatt mem check` runs under Nsight Compute.\n",
           CHECK_ITERATIONS);
}

static int parse_levels(mem_args *a, const char *list)
{
    a->run.levels = 0;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", list);
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        int found = -1;
        for (int lv = 0; lv < TW_MEM_LEVELS; lv++)
            if (!strcmp(t, tw_mem_level_name((tw_mem_level)lv))) found = lv;
        if (found < 0) return cli_usage(a->cmd, "--levels: no level named '%s' (shared, l1, l2, dram)", t);
        a->run.levels |= 1u << found;
    }
    return a->run.levels ? 0 : cli_usage(a->cmd, "--levels: name at least one level");
}

static int parse_ops(mem_args *a, const char *list)
{
    a->run.ops = 0;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", list);
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        int op = tw_chase_op_parse(t);
        if (op < 0) return cli_usage(a->cmd, "--ops: no operation named '%s' (load, store, load+div)", t);
        a->run.ops |= 1u << op;
    }
    return a->run.ops ? 0 : cli_usage(a->cmd, "--ops: name at least one operation");
}

static int parse_threads(mem_args *a, const char *list)
{
    char buf[512];
    snprintf(buf, sizeof buf, "%s", list);
    a->run.nthreads = 0;
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        uint64_t v;
        if (!cli_parse_u64(t, &v) || v < 1 || v > 1024 || (v & (v - 1)))
            return cli_usage(a->cmd, "--threads: '%s' is not a power of two from 1 to 1024", t);
        if (a->run.nthreads == MAX_THREADS) return cli_usage(a->cmd, "--threads: at most %d values", MAX_THREADS);
        a->threads[a->run.nthreads++] = (unsigned)v;
    }
    a->run.threads = a->threads;
    return a->run.nthreads ? 0 : cli_usage(a->cmd, "--threads: name at least one count");
}

static int parse_number(mem_args *a, int c, const char *arg)
{
    uint64_t u;
    double d;
    switch (c) {
    case OPT_BLOCKS:
        if (!cli_parse_u64(arg, &u) || u < 1 || u > 32)
            return cli_usage(a->cmd, "--blocks-per-sm must be 1..32, not '%s'", arg);
        a->run.blocks_per_sm = (unsigned)u;
        return 0;
    case OPT_REPS:
        if (!cli_parse_u64(arg, &u) || u < 2 || u > 16) return cli_usage(a->cmd, "--reps must be 2..16, not '%s'", arg);
        a->run.reps = (int)u;
        return 0;
    case OPT_ITERATIONS:
        if (!cli_parse_u64(arg, &u) || u < 1 || u > 1000000)
            return cli_usage(a->cmd, "--iterations must be 1..1000000, not '%s'", arg);
        a->iterations = u;
        return 0;
    default: /* OPT_TARGET */
        if (!cli_parse_double(arg, &d) || !(d >= 0.02 && d <= 10))
            return cli_usage(a->cmd, "--target-s must be 0.02..10 seconds, not '%s'", arg);
        a->run.target_s = d;
        return 0;
    }
}

static int parse_one(mem_args *a, int c, const char *arg, char **argv)
{
    switch (c) {
    case OPT_LEVELS:
        return parse_levels(a, arg);
    case OPT_OPS:
        return parse_ops(a, arg);
    case OPT_THREADS:
        return parse_threads(a, arg);
    case OPT_BLOCKS:
    case OPT_REPS:
    case OPT_TARGET:
    case OPT_ITERATIONS:
        return parse_number(a, c, arg);
    case OPT_PROFILE:
        a->profile = arg;
        return 0;
    case OPT_OUT:
        a->out = arg;
        return 0;
    case OPT_JSON:
        a->json = true;
        return 0;
    case OPT_ISA_TABLE:
        a->isa_table = arg;
        return 0;
    case OPT_NCU:
        a->ncu = arg;
        return 0;
    case OPT_NO_CHECKS:
        a->no_checks = true;
        return 0;
    case OPT_MANIFEST:
        a->manifest = arg;
        return 0;
    default:
        return cli_opt_other(a->cmd, c, arg, argv, &a->exp);
    }
}

#define SELECT_OPTIONS                                                                                                 \
    {"levels", required_argument, 0, OPT_LEVELS}, {"ops", required_argument, 0, OPT_OPS},                              \
        {"threads", required_argument, 0, OPT_THREADS}, {"blocks-per-sm", required_argument, 0, OPT_BLOCKS},           \
        {"out", required_argument, 0, OPT_OUT}, CLI_EXP_LONG_OPTIONS, {"help", no_argument, 0, 'h'},                   \
    {                                                                                                                  \
        0, 0, 0, 0                                                                                                     \
    }

static int parse_args(int argc, char **argv, const struct option *opts, void (*help)(void), mem_args *a)
{
    int c, rc = 0;
    optind = 1;
    opterr = 0;
    while (!rc && (c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        if (c == 'h') {
            help();
            return -1;
        }
        rc = parse_one(a, c, optarg, argv);
    }
    if (!rc) rc = cli_opt_rest(a->cmd, argc, argv, optind);
    return rc;
}

static void args_init(mem_args *a, const char *cmd, const char *out)
{
    memset(a, 0, sizeof *a);
    a->cmd = cmd;
    a->out = out;
    a->ncu = "ncu";
    a->iterations = CHECK_ITERATIONS;
    cli_exp_args_init(&a->exp);
    tw_mem_run_options_init(&a->run);
}

/* ---------------------------------------------------------------- the instruction table */

/* The column named `name` among n fields, -1 when absent. */
static int csv_column(char **fields, size_t n, const char *name)
{
    for (size_t k = 0; k < n; k++)
        if (!strcmp(fields[k], name)) return (int)k;
    return -1;
}

/* div.u32's energy from an isa.csv (columns by name: instruction, energy_j). */
static int read_div_ref(const char *cmd, const char *path, mem_div_ref *ref)
{
    ref->j = NAN;
    snprintf(ref->source, sizeof ref->source, "%s", path);
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "truewatt %s: cannot read --isa-table %s\n", cmd, path);
        return CLI_EXIT_FAIL;
    }
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
            cli_parse_double(fields[e_col], &ref->j);
        }
    }
    fclose(f);
    if (isfinite(ref->j)) return 0;
    fprintf(stderr, "truewatt %s: --isa-table %s: no div.u32 row with an energy_j (an isa.csv of truewatt isa)\n", cmd,
            path);
    return CLI_EXIT_FAIL;
}

/* ---------------------------------------------------------------- calibrate */

static tw_status run_mem(tw_exec *x, void *ctx)
{
    mem_args *a = ctx;
    return tw_mem_run(x, &a->run, &a->plan);
}

/* The counter checks before the energy runs: when asked for (--ncu), else on a GPU when ncu is on $PATH. */
static int calibrate_checks(mem_args *a, bool asked, tw_mem_check_row **rows, size_t *n)
{
    char found[4096];
    if (a->no_checks) return 0;
    if (!asked && (strcmp(a->exp.backend, "nvml") || cli_find_program(a->ncu, found, sizeof found) != 0)) {
        fprintf(stderr, "truewatt %s: no counter checks (%s); the rows are used unchecked\n", a->cmd,
                strcmp(a->exp.backend, "nvml") ? "the simulator has no counters; --ncu runs a stand-in"
                                               : "ncu not found on $PATH");
        return 0;
    }
    char dir[4200];
    snprintf(dir, sizeof dir, "%s/checks", a->out);
    if (cli_make_dir(a->cmd, a->out) != 0) return CLI_EXIT_FAIL;
    mem_check_request q = {a->ncu, dir, a->iterations, &a->run, &a->exp};
    int rc = mem_checks_run(a->cmd, &q, rows, n);
    if (rc == 0) mem_checks_print(*rows, *n);
    return rc;
}

static int write_profile(mem_args *a, const tw_mem_results *r, const tw_exec *x, const mem_div_ref *ref,
                         const char *prov)
{
    char path[4096];
    FILE *f = cli_open_out(a->cmd, a->out, "mem-profile.json", path, sizeof path);
    if (!f) return CLI_EXIT_FAIL;
    mem_print_json(f, r, x, ref, prov);
    return cli_close_out(a->cmd, f, path);
}

static int report(mem_args *a, tw_mem_results *r, const tw_exec *x, const mem_div_ref *ref, const char *prov)
{
    int rc = 0;
    if (a->json) {
        mem_print_json(stdout, r, x, ref, prov);
    } else {
        printf("\nenergy per memory access, measured by %s", r->reading);
        if (isfinite(r->clock_mhz)) printf(" (SM clock %.0f MHz)", r->clock_mhz);
        printf("\n");
        rc = mem_print_table(a->cmd, r);
        if (rc == 0) {
            mem_print_bounds(r);
            mem_print_divisions(r, ref);
        }
    }
    if (rc == 0) rc = mem_write_csv(a->cmd, a->out, r, prov);
    if (rc == 0) rc = mem_write_launches(a->cmd, a->out, r, prov);
    if (rc == 0) rc = write_profile(a, r, x, ref, prov);
    if (rc == 0) mem_plot(a->cmd, a->out, r);
    return rc;
}

int tw_cmd_mem_calibrate(int argc, char **argv)
{
    static const struct option opts[] = {{"reps", required_argument, 0, OPT_REPS},
                                         {"target-s", required_argument, 0, OPT_TARGET},
                                         {"profile", required_argument, 0, OPT_PROFILE},
                                         {"json", no_argument, 0, OPT_JSON},
                                         {"isa-table", required_argument, 0, OPT_ISA_TABLE},
                                         {"ncu", required_argument, 0, OPT_NCU},
                                         {"no-counter-checks", no_argument, 0, OPT_NO_CHECKS},
                                         {"iterations", required_argument, 0, OPT_ITERATIONS},
                                         SELECT_OPTIONS};
    mem_args a;
    args_init(&a, "mem calibrate", "truewatt-mem");
    a.ncu = NULL;
    int rc = parse_args(argc, argv, opts, help_calibrate, &a);
    if (rc) return rc < 0 ? 0 : rc;
    bool asked = a.ncu != NULL;
    if (!a.ncu) a.ncu = "ncu";
    if (asked && a.no_checks) return cli_usage(a.cmd, "--ncu and --no-counter-checks exclude each other");
    mem_div_ref ref = {NAN, ""};
    if (a.isa_table && (rc = read_div_ref(a.cmd, a.isa_table, &ref))) return rc;
    tw_mem_check_row *checks = NULL;
    size_t nchecks = 0;
    if ((rc = calibrate_checks(&a, asked, &checks, &nchecks))) return rc;
    tw_profile p;
    tw_profile_init(&p);
    char prov[1024];
    cli_bench b = {a.cmd, &a.exp, a.profile, a.out, tw_mem_planned_s(&a.run), run_mem, &a, false};
    tw_exec *x = NULL;
    if ((rc = cli_bench_run(&b, argc, argv, &x, &p, prov, sizeof prov))) {
        free(checks);
        tw_mem_plan_free(a.plan);
        return rc;
    }
    tw_mem_results r = {0};
    tw_status st = tw_mem_analyse(a.plan, x->trace, x->events, &p, &r);
    if (st != TW_OK) rc = cli_fail(a.cmd, st);
    if (rc == 0 && nchecks) {
        tw_mem_check_apply(checks, nchecks, &r);
        rc = mem_checks_write(a.cmd, a.out, checks, nchecks, prov);
    }
    if (rc == 0) rc = report(&a, &r, x, &ref, prov);
    free(checks);
    tw_mem_results_free(&r);
    tw_mem_plan_free(a.plan);
    tw_exec_free(x);
    return rc;
}

/* ---------------------------------------------------------------- counters and check */

static tw_status run_counters(tw_exec *x, void *ctx)
{
    mem_args *a = ctx;
    FILE *f = fopen(a->manifest, "w");
    if (!f) return tw_fail(TW_EIO, "cannot write the manifest %s", a->manifest);
    tw_status st = tw_mem_counter_run(x, &a->run, a->iterations, f);
    if (fclose(f) != 0 && st == TW_OK) st = tw_fail(TW_EIO, "cannot write the manifest %s", a->manifest);
    return st;
}

static int tw_cmd_mem_counters(int argc, char **argv)
{
    static const struct option opts[] = {{"manifest", required_argument, 0, OPT_MANIFEST},
                                         {"iterations", required_argument, 0, OPT_ITERATIONS},
                                         SELECT_OPTIONS};
    mem_args a;
    args_init(&a, "mem counters", "truewatt-mem-counters");
    int rc = parse_args(argc, argv, opts, help_counters, &a);
    if (rc) return rc < 0 ? 0 : rc;
    if (!a.manifest) return cli_usage(a.cmd, "--manifest FILE is required");
    tw_profile p;
    tw_profile_init(&p);
    char prov[1024];
    cli_bench b = {a.cmd, &a.exp, NULL, a.out, 5, run_counters, &a, true};
    tw_exec *x = NULL;
    if ((rc = cli_bench_run(&b, argc, argv, &x, &p, prov, sizeof prov))) return rc;
    tw_exec_free(x);
    return 0;
}

static int tw_cmd_mem_check(int argc, char **argv)
{
    static const struct option opts[] = {
        {"iterations", required_argument, 0, OPT_ITERATIONS}, {"ncu", required_argument, 0, OPT_NCU}, SELECT_OPTIONS};
    mem_args a;
    args_init(&a, "mem check", "truewatt-mem-check");
    int rc = parse_args(argc, argv, opts, help_check, &a);
    if (rc) return rc < 0 ? 0 : rc;
    tw_mem_check_row *rows = NULL;
    size_t n = 0;
    char prov[1024];
    cli_exp_provenance(prov, sizeof prov, argc, argv);
    mem_check_request q = {a.ncu, a.out, a.iterations, &a.run, &a.exp};
    rc = mem_checks_run(a.cmd, &q, &rows, &n);
    if (rc == 0) {
        mem_checks_print(rows, n);
        rc = mem_checks_write(a.cmd, a.out, rows, n, prov);
    }
    free(rows);
    return rc;
}

static const cli_command subcommands[] = {
    {"sizes", tw_cmd_mem_sizes, "the levels' sizes from access latency (identification)"},
    {"calibrate", tw_cmd_mem_calibrate, "energy per access of shared memory, L1, L2 and DRAM (pointer chases)"},
    {"check", tw_cmd_mem_check, "the calibration's counter checks through Nsight Compute"},
    {"counters", tw_cmd_mem_counters, "the chases of the counter checks (run under ncu by check)"},
};

int cmd_mem(int argc, char **argv)
{
    return cli_dispatch("mem",
                        "Energy of data movement (Delestrac et al. 2024): per-access energy of each memory level.",
                        subcommands, sizeof subcommands / sizeof subcommands[0], argc, argv);
}
