/* truewatt mem: energy of data movement (Delestrac et al. 2024). calibrate
 * measures the energy per access of shared memory, L1, L2 and DRAM with
 * pointer chases (bench/mem_run.h), after the counter checks; check runs
 * the checks alone; counters is what Nsight Compute profiles for them. */
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

typedef struct mem_args {
    const char *cmd;
    cli_exp_args exp;
    tw_mem_run_options run;
    unsigned threads[MAX_THREADS];
    const char *profile, *out, *isa_table, *ncu, *manifest;
    bool json, no_checks;
    uint64_t iterations;
    int blocks_per_sm, reps;
    tw_mem_plan *plan;
} mem_args;

static int parse_levels(const char *cmd, const char *list, void *out)
{
    mem_args *a = out;
    a->run.levels = 0;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", list);
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        int found = -1;
        for (int lv = 0; lv < TW_MEM_LEVELS; lv++)
            if (!strcmp(t, tw_mem_level_name((tw_mem_level)lv))) found = lv;
        if (found < 0) return cli_usage(cmd, "--levels: no level named '%s' (shared, l1, l2, dram)", t);
        a->run.levels |= 1u << found;
    }
    return a->run.levels ? 0 : cli_usage(cmd, "--levels: name at least one level");
}

static int parse_ops(const char *cmd, const char *list, void *out)
{
    mem_args *a = out;
    a->run.ops = 0;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", list);
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        int op = tw_chase_op_parse(t);
        if (op < 0) return cli_usage(cmd, "--ops: no operation named '%s' (load, store, load+div)", t);
        a->run.ops |= 1u << op;
    }
    return a->run.ops ? 0 : cli_usage(cmd, "--ops: name at least one operation");
}

static int parse_threads(const char *cmd, const char *list, void *out)
{
    mem_args *a = out;
    char buf[512];
    snprintf(buf, sizeof buf, "%s", list);
    a->run.nthreads = 0;
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        uint64_t v;
        if (!cli_parse_u64(t, &v) || v < 1 || v > 1024 || (v & (v - 1)))
            return cli_usage(cmd, "--threads: '%s' is not a power of two from 1 to 1024", t);
        if (a->run.nthreads == MAX_THREADS) return cli_usage(cmd, "--threads: at most %d values", MAX_THREADS);
        a->threads[a->run.nthreads++] = (unsigned)v;
    }
    a->run.threads = a->threads;
    return a->run.nthreads ? 0 : cli_usage(cmd, "--threads: name at least one count");
}

/* What a mem command takes beside the options every one of them has. */
typedef struct mem_cmd {
    const char *synopsis, *about, *after;
    const cli_opt *own;
    size_t n;
} mem_cmd;

#define MAX_MEM_OPTS 24

/* The options, declared once (cli/opts.h): the command's own, then those of
 * every mem command (what to chase, where the files go), then the experiment's. */
static int parse_args(int argc, char **argv, const mem_cmd *c, mem_args *a)
{
    const cli_opt common[] = {
        {.name = "levels",
         .type = CLI_OPT_CALL,
         .arg = "LIST",
         .help = "which levels: shared,l1,l2,dram (default all four)",
         .out = a,
         .call = parse_levels},
        {.name = "ops",
         .type = CLI_OPT_CALL,
         .arg = "LIST",
         .help = "load, store (no L1: stores write through it), load+div (the\n"
                 "cross-check with the instruction table; not in shared memory);\ndefault all three",
         .out = a,
         .call = parse_ops},
        {.name = "threads",
         .type = CLI_OPT_CALL,
         .arg = "LIST",
         .help = "threads per block to sweep, powers of two (default 1,4,32,128,512,1024)",
         .out = a,
         .call = parse_threads},
        {.name = "blocks-per-sm",
         .type = CLI_OPT_INT,
         .arg = "N",
         .def = "2",
         .help = "blocks on each SM",
         .out = &a->blocks_per_sm,
         .min = 1,
         .max = 32},
        {.name = "out",
         .type = CLI_OPT_STRING,
         .arg = "DIR",
         .def = a->out,
         .help = "where the files go",
         .out = &a->out},
    };
    cli_opt opt[MAX_MEM_OPTS];
    size_t n = CLI_OPTS_N(common);
    memcpy(opt, c->own, c->n * sizeof *opt);
    memcpy(opt + c->n, common, sizeof common);
    const cli_opts o = {
        .cmd = a->cmd, .synopsis = c->synopsis, .about = c->about, .after = c->after, .opt = opt, .n = c->n + n};
    int rc = cli_exp_parse(o, &a->exp, argc, argv);
    a->run.blocks_per_sm = (unsigned)a->blocks_per_sm;
    a->run.reps = a->reps;
    return rc;
}

/* --iterations, for check and counters */
#define ITERATIONS_OPT(a, def_text)                                                                                    \
    {                                                                                                                  \
        .name = "iterations", .type = CLI_OPT_U64, .arg = "N", .def = def_text,                                        \
        .help = "iterations of the chases' measurement loop (the other launch has 0)", .out = &(a).iterations,         \
        .min = 1, .max = 1000000                                                                                       \
    }

static void args_init(mem_args *a, const char *cmd, const char *out)
{
    memset(a, 0, sizeof *a);
    a->cmd = cmd;
    a->out = out;
    cli_exp_args_init(&a->exp, cmd);
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
    if (!asked && (strcmp(a->exp.o.backend, "nvml") || cli_find_program(a->ncu, found, sizeof found) != 0)) {
        fprintf(stderr, "truewatt %s: no counter checks (%s); the rows are used unchecked\n", a->cmd,
                strcmp(a->exp.o.backend, "nvml") ? "the simulator has no counters; --ncu runs a stand-in"
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
    mem_args a;
    args_init(&a, "mem calibrate", "truewatt-mem");
    const cli_opt own[] = {
        {.name = "reps",
         .type = CLI_OPT_INT,
         .arg = "N",
         .def = "3",
         .help = "repeats",
         .out = &a.reps,
         .min = 2,
         .max = 16},
        {.name = "target-s",
         .type = CLI_OPT_DOUBLE,
         .arg = "S",
         .def = "0.25",
         .help = "the longest launch",
         .out = &a.run.target_s,
         .min = 0.02,
         .max = 10},
        {.name = "ncu",
         .type = CLI_OPT_STRING,
         .arg = "PATH",
         .help = "Nsight Compute (default: ncu on $PATH on a GPU; checks are skipped\nwithout it)",
         .out = &a.ncu},
        {.name = "no-counter-checks",
         .type = CLI_OPT_FLAG,
         .help = "no ncu run; every row is used unchecked",
         .out = &a.no_checks},
        ITERATIONS_OPT(a, "4"),
        {.name = "isa-table",
         .type = CLI_OPT_STRING,
         .arg = "F",
         .help = "isa.csv of `truewatt isa --mode throughput`: its div.u32 beside\nLOAD+DIV's",
         .out = &a.isa_table},
        {.name = "profile",
         .type = CLI_OPT_STRING,
         .arg = "FILE",
         .help = "the sensor profile (default: looked up, else identified first, ~1 min)",
         .out = &a.profile},
        {.name = "json", .type = CLI_OPT_FLAG, .help = "the memory-energy profile on stdout", .out = &a.json},
    };
    const mem_cmd c = {
        "[--levels shared,l1,l2,dram] [--ops load,store,load+div]\n"
        "                              [--threads N,...] [--blocks-per-sm N] [--reps N] [--target-s S]\n"
        "                              [--ncu PATH | --no-counter-checks] [--isa-table ISA.csv]\n"
        "                              [--profile FILE] [--out DIR] [--json]\n"
        "                              [--backend nvml|sim] [--sim h100] [--seed N] [--device N]",
        "Energy per access of each memory level by pointer chases (Delestrac et al. 2024): per operation,\n"
        "level and threads per block (two blocks per SM), the chase without and with its measurement\n"
        "loop and a resident (sleeping) kernel; energy above active idle regressed on the sector accesses\n"
        "with time as a second regressor. The lower bound of a level is the least energy per access over\n"
        "the threads swept whose counter check passed. First, when Nsight Compute is found, the counter\n"
        "checks (as `truewatt mem check`) in a process of their own. Array sizes follow the GPU's L2 and\n"
        "shared memory sizes. Nothing on the card is changed. --out DIR gets mem.csv, mem-profile.json,\n"
        "launches.csv, checks.csv, mem.dat/.gp/.png, the trace and events.",
        NULL, own, CLI_OPTS_N(own)};
    int rc = parse_args(argc, argv, &c, &a);
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
    mem_args a;
    args_init(&a, "mem counters", "truewatt-mem-counters");
    const cli_opt own[] = {
        {.name = "manifest",
         .type = CLI_OPT_STRING,
         .arg = "FILE",
         .help = "where the list of launches goes (required)",
         .out = &a.manifest},
        ITERATIONS_OPT(a, "4"),
    };
    const mem_cmd c = {"--manifest FILE [--iterations N] [--levels LIST] [--ops LIST]\n"
                       "                             [--threads N,...] [--blocks-per-sm N] [--out DIR] [experiment "
                       "options]",
                       "Launches every chase of the calibration with 0 and N iterations, nothing measured,\n"
                       "and lists the launches in FILE: what `truewatt mem check` runs under Nsight Compute.",
                       NULL, own, CLI_OPTS_N(own)};
    int rc = parse_args(argc, argv, &c, &a);
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
    mem_args a;
    args_init(&a, "mem check", "truewatt-mem-check");
    const cli_opt own[] = {
        ITERATIONS_OPT(a, "4"),
        {.name = "ncu", .type = CLI_OPT_STRING, .arg = "PATH", .def = "ncu", .help = "Nsight Compute", .out = &a.ncu},
    };
    const mem_cmd c = {
        "[--levels LIST] [--ops LIST] [--threads N,...] [--blocks-per-sm N]\n"
        "                          [--iterations N] [--ncu PATH] [--out DIR]\n"
        "                          [--backend nvml|sim] [--sim h100] [--seed N] [--device N]",
        "The counter checks of the calibration: Nsight Compute (ncu --csv --clock-control none) counts the\n"
        "sectors of each chase launched with 0 and N iterations; the difference is the measurement loop.\n"
        "A configuration passes when the target level served at least 95 % of its accesses (L1/L2 hit\n"
        "rate; DRAM: the L2's sectors that went to DRAM) and the counted sectors are within 5 % of the\n"
        "paper's Eq. 7. Writes checks.csv, ncu.csv and manifest.csv to --out DIR.",
        NULL, own, CLI_OPTS_N(own)};
    int rc = parse_args(argc, argv, &c, &a);
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
