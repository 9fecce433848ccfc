/* truewatt mem sizes: the memory levels' sizes from access latency (the
 * identification step of Delestrac et al. 2024, by time instead of counters). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/mem_sizes.h"
#include "cli/bench_run.h"
#include "cli/cli.h"
#include "cli/experiment.h"
#include "core/json.h"

#define CMD_SIZES "mem sizes"

typedef struct sizes_args {
    cli_exp_args exp;
    tw_mem_sizes_options o;
    const char *out;
    bool json;
    tw_mem_sizes r;
} sizes_args;

/* The options, declared once (cli/opts.h). */
static int parse_sizes(int argc, char **argv, sizes_args *a)
{
    double max_mib = 0;
    const cli_opt opt[] = {
        {.name = "max-mib",
         .type = CLI_OPT_DOUBLE,
         .arg = "N",
         .help = "the largest array (default four times the L2)",
         .out = &max_mib,
         .min = 1,
         .max = 4096},
        {.name = "target-s",
         .type = CLI_OPT_DOUBLE,
         .arg = "S",
         .def = "0.03",
         .help = "the measured time beyond the run without the measurement loop",
         .out = &a->o.target_s,
         .min = 0.001,
         .max = 10},
        {.name = "out",
         .type = CLI_OPT_STRING,
         .arg = "DIR",
         .def = "truewatt-mem-sizes",
         .help = "sizes.csv goes here",
         .out = &a->out},
        {.name = "json", .type = CLI_OPT_FLAG, .help = "the sizes as JSON on stdout", .out = &a->json},
    };
    const cli_opts o = {
        .cmd = CMD_SIZES,
        .synopsis = "[--max-mib N] [--target-s S] [--out DIR] [--json]\n"
                    "                          [--backend nvml|sim] [--sim h100] [--seed N] [--device N]",
        .about = "The memory levels' sizes from access latency (the identification of Delestrac et al. 2024,\n"
                 "by time instead of counters): one warp chases arrays of 16 KiB up to --max-mib, with loads\n"
                 "cached in L1 and with loads that skip it; a level's size is the largest array whose time per\n"
                 "access stays within 25 % of the smallest array's. Printed beside the driver's attributes.",
        .opt = opt,
        .n = CLI_OPTS_N(opt)};
    int rc = cli_exp_parse(o, &a->exp, argc, argv);
    a->o.max_bytes = max_mib * 1048576;
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

int tw_cmd_mem_sizes(int argc, char **argv)
{
    sizes_args a;
    memset(&a, 0, sizeof a);
    cli_exp_args_init(&a.exp, CMD_SIZES);
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
