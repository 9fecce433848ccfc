/* truewatt mem: energy of data movement (Delestrac et al. 2024). calibrate
 * measures the energy per access of shared memory, L1, L2 and DRAM with
 * pointer chases, after the counter checks; check runs the checks alone;
 * counters is what Nsight Compute profiles for them: the options, Nsight
 * Compute run (cli/mem_checks.h), then the library's tw_mem_* calls. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/experiment.h"
#include "cli/mem_checks.h"
#include "cli/spawn.h"

#define MAX_THREADS 32

typedef struct mem_args {
    const char *cmd;
    cli_exp_args exp;
    tw_mem_options mem;
    unsigned threads[MAX_THREADS];
    const char *out, *ncu, *manifest;
    bool no_checks;
    uint64_t iterations;
    int blocks_per_sm, reps;
} mem_args;

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
    tw_mem_options_init(&a->mem);
}

static int parse_threads(const char *cmd, const char *list, void *out)
{
    mem_args *a = out;
    char buf[512];
    snprintf(buf, sizeof buf, "%s", list);
    a->mem.nthreads = 0;
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        uint64_t v; /* which counts a sweep takes: the library's check (parse_args) */
        if (!cli_parse_u64(t, &v) || v > 1u << 20)
            return cli_usage(cmd, "--threads: '%s' is not a power of two from 1 to 1024", t);
        if (a->mem.nthreads == MAX_THREADS) return cli_usage(cmd, "--threads: at most %d values", MAX_THREADS);
        a->threads[a->mem.nthreads++] = (unsigned)v;
    }
    a->mem.threads = a->threads;
    return a->mem.nthreads ? 0 : cli_usage(cmd, "--threads: name at least one count");
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
         .type = CLI_OPT_STRING,
         .arg = "LIST",
         .help = "which levels: shared,l1,l2,dram (default all four)",
         .out = &a->mem.levels},
        {.name = "ops",
         .type = CLI_OPT_STRING,
         .arg = "LIST",
         .help = "load, store (no L1: stores write through it), load+div (the\n"
                 "cross-check with the instruction table; not in shared memory);\ndefault all three",
         .out = &a->mem.ops},
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
    if (rc) return rc;
    a->mem.blocks_per_sm = (unsigned)a->blocks_per_sm;
    a->mem.reps = a->reps;
    a->mem.out_dir = a->out;
    a->mem.iterations = a->iterations;
    /* the lists, checked as the library takes them ("levels: no level named ...") */
    return tw_mem_options_check(&a->mem) == TW_OK ? 0 : cli_usage(a->cmd, "--%s", tw_last_error());
}

/* --iterations, for check and counters */
#define ITERATIONS_OPT(a, def_text)                                                                                    \
    {                                                                                                                  \
        .name = "iterations", .type = CLI_OPT_U64, .arg = "N", .def = def_text,                                        \
        .help = "iterations of the chases' measurement loop (the other launch has 0)", .out = &(a).iterations,         \
        .min = 1, .max = 1000000                                                                                       \
    }

/* ---------------------------------------------------------------- calibrate */

/* The counter checks before the energy runs: when asked for (--ncu), else on
 * a GPU when ncu is on $PATH; their files' paths into manifest and log. */
static int calibrate_checks(mem_args *a, bool asked, char *manifest, char *log, size_t cap)
{
    char found[4096];
    if (a->no_checks) return 0;
    bool sim = strcmp(a->exp.o.backend, "nvml") != 0;
    if (!asked && (sim || cli_find_program(a->ncu, found, sizeof found) != 0)) {
        fprintf(stderr, "truewatt %s: no counter checks (%s); the rows are used unchecked\n", a->cmd,
                sim ? "the simulator has no counters; --ncu runs a stand-in" : "ncu not found on $PATH");
        return 0;
    }
    char dir[4200];
    snprintf(dir, sizeof dir, "%s/checks", a->out);
    if (cli_make_dir(a->cmd, a->out) != 0) return CLI_EXIT_FAIL;
    mem_check_request q = {a->ncu, dir, a->iterations, &a->mem, &a->exp};
    int rc = mem_checks_run(a->cmd, &q, manifest, log, cap);
    if (rc == 0) {
        a->mem.check_manifest = manifest;
        a->mem.check_ncu = log;
    }
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
         .out = &a.mem.target_s,
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
         .out = &a.mem.isa_table},
        {.name = "profile",
         .type = CLI_OPT_STRING,
         .arg = "FILE",
         .help = "the sensor profile (default: looked up, else identified first, ~1 min)",
         .out = &a.mem.profile},
        {.name = "json", .type = CLI_OPT_FLAG, .help = "the memory-energy profile on stdout", .out = &a.mem.json},
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
    char manifest[4200], log[4200];
    if ((rc = calibrate_checks(&a, asked, manifest, log, sizeof manifest))) return rc;
    tw_status st = tw_mem_calibrate(&a.exp.o, &a.mem, stdout);
    return st == TW_OK ? 0 : cli_fail(a.cmd, st);
}

/* ---------------------------------------------------------------- counters and check */

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
    tw_status st = tw_mem_counters(&a.exp.o, &a.mem, a.manifest);
    return st == TW_OK ? 0 : cli_fail(a.cmd, st);
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
    char manifest[4200], log[4200];
    mem_check_request q = {a.ncu, a.out, a.iterations, &a.mem, &a.exp};
    if ((rc = mem_checks_run(a.cmd, &q, manifest, log, sizeof manifest))) return rc;
    tw_status st = tw_mem_check_report(&a.exp.o, &a.mem, manifest, log, stdout);
    return st == TW_OK ? 0 : cli_fail(a.cmd, st);
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
