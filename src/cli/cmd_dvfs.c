/* truewatt dvfs: kernel time under core and memory frequency scaling, by
 * Wang & Chu's model (src/dvfs/). eval checks the model with a published
 * parameter set against the authors' measured data. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/dvfs_cmds.h"
#include "cli/dvfs_common.h"
#include "core/json.h"
#include "dvfs/data.h"
#include "dvfs/eval.h"
#include "dvfs/model.h"

#define CMD_EVAL "dvfs eval"

typedef struct eval_args {
    const char *data, *gpu;
    bool paper_compat, json, all_kernels;
} eval_args;

#define STR2(x) #x
#define STR(x) STR2(x)

/* The options, declared once (cli/opts.h). */
static int parse_eval(int argc, char **argv, eval_args *a)
{
    const cli_opt opt[] = {
        {.name = "gpu", .type = CLI_OPT_STRING, .arg = "NAME|FILE.json", .help = CLI_DVFS_GPU_HELP, .out = &a->gpu},
        {.name = "paper-compat",
         .type = CLI_OPT_FLAG,
         .help = "the kernel-name special cases of the authors' code, with which it\nreproduces the published "
                 "errors (off: the model as described)",
         .out = &a->paper_compat},
        CLI_DVFS_OPT_ALL_KERNELS(&a->all_kernels),
        {.name = "json", .type = CLI_OPT_FLAG, .help = "the numbers as JSON on stdout", .out = &a->json},
    };
    const cli_opts o = {
        .cmd = CMD_EVAL,
        .synopsis = "DATA.csv --gpu NAME|FILE.json [--paper-compat] [--all-kernels] [--json]",
        .about = "Wang & Chu's DVFS performance model (IEEE TPDS 2020, final form) against measured rows: a\n"
                 "*-Performance.csv of the authors' data set (columns by name). Prints the mean absolute\n"
                 "percentage error over all points, per kernel, per regime as the model classifies each point\n"
                 "(compute-, memory-, latency-bound) and the " STR(TW_DVFS_WORST) " worst points.",
        .opt = opt,
        .n = CLI_OPTS_N(opt),
        .min_args = 1,
        .max_args = 1,
        .missing = "DATA.csv is required"};
    int first;
    int rc = cli_opts_parse(&o, argc, argv, &first);
    if (rc) return rc;
    a->data = argv[first];
    if (!a->gpu) return cli_usage(CMD_EVAL, "--gpu NAME is required (gtx980, gtx1080ti, p100, v100)");
    return 0;
}

static void json_group(json *j, const tw_dvfs_group *g)
{
    json_begin_object(j);
    json_kv_string(j, "name", g->name);
    json_kv_uint(j, "points", g->n);
    if (g->n) json_kv_number(j, "mape_pct", 100 * g->mape);
    json_end_object(j);
}

static void json_point(json *j, const tw_dvfs_point *pt)
{
    json_begin_object(j);
    json_kv_uint(j, "line", pt->row->line);
    cli_dvfs_json_point_fields(j, pt);
    json_end_object(j);
}

static void print_json(const eval_args *a, const tw_dvfs_params *p, const tw_dvfs_eval *e)
{
    json j;
    json_init(&j, stdout);
    json_begin_object(&j);
    json_kv_string(&j, "data", a->data);
    json_kv_string(&j, "gpu", p->name);
    json_kv_string(&j, "source", p->source);
    json_kv_bool(&j, "paper_compat", a->paper_compat);
    json_kv_uint(&j, "points", e->n);
    json_kv_uint(&j, "skipped", e->skipped);
    json_kv_number(&j, "mape_pct", 100 * e->mape);
    json_key(&j, "regimes");
    json_begin_array(&j);
    for (int r = 0; r < TW_DVFS_REGIMES; r++)
        json_group(&j, &e->regimes[r]);
    json_end_array(&j);
    json_key(&j, "kernels");
    json_begin_array(&j);
    for (size_t i = 0; i < e->nkernels; i++)
        json_group(&j, &e->kernels[i]);
    json_end_array(&j);
    json_key(&j, "worst");
    json_begin_array(&j);
    for (size_t i = 0; i < e->nworst; i++)
        json_point(&j, &e->points[e->worst[i]]);
    json_end_array(&j);
    json_end_object(&j);
    json_finish(&j);
}

static void print_text(const eval_args *a, const tw_dvfs_params *p, const tw_dvfs_eval *e)
{
    printf("Wang & Chu DVFS model, %s, parameters %s%s\n", a->data, p->name,
           a->paper_compat ? ", with the authors' kernel special cases (--paper-compat)" : "");
    printf("points: %zu (%zu rows outside the %s)\n", e->n, e->skipped,
           a->all_kernels ? "file" : "authors' 20 kernels at clocks >= 500 MHz");
    printf("MAPE: %.2f %%\n\nper regime:\n", 100 * e->mape);
    for (int r = 0; r < TW_DVFS_REGIMES; r++) {
        const tw_dvfs_group *g = &e->regimes[r];
        if (g->n)
            printf("  %-8s %6.2f %%  (%zu points)\n", g->name, 100 * g->mape, g->n);
        else
            printf("  %-8s      -    (0 points)\n", g->name);
    }
    printf("\nper kernel:\n");
    for (size_t i = 0; i < e->nkernels; i++)
        printf("  %-24s %6.2f %%  (%zu points)\n", e->kernels[i].name, 100 * e->kernels[i].mape, e->kernels[i].n);
    cli_dvfs_print_points_header("worst points");
    for (size_t i = 0; i < e->nworst; i++)
        cli_dvfs_print_point(&e->points[e->worst[i]]);
}

static int tw_cmd_dvfs_eval(int argc, char **argv)
{
    eval_args a = {0};
    int rc = parse_eval(argc, argv, &a);
    if (rc) return rc < 0 ? 0 : rc;
    tw_dvfs_params p;
    if ((rc = cli_dvfs_params_load(CMD_EVAL, a.gpu, &p))) return rc;
    tw_dvfs_data d;
    tw_status st = tw_dvfs_load(a.data, &d);
    if (st != TW_OK) return cli_fail(CMD_EVAL, st);
    tw_dvfs_eval e;
    st = tw_dvfs_evaluate(&p, &d, a.paper_compat, a.all_kernels, &e);
    if (st == TW_OK) {
        if (a.json)
            print_json(&a, &p, &e);
        else
            print_text(&a, &p, &e);
        tw_dvfs_eval_free(&e);
    }
    tw_dvfs_data_free(&d);
    return st == TW_OK ? 0 : cli_dvfs_fail_on_data(CMD_EVAL, a.data, st);
}

static const cli_command subcommands[] = {
    {"eval", tw_cmd_dvfs_eval, "the model with a published parameter set against measured rows (MAPE)"},
    {"fit", tw_cmd_dvfs_fit, "least-squares hardware parameters from measured rows, cross-validated"},
    {"energy", tw_cmd_dvfs_energy, "energy-optimal clock pairs from predicted time and a fitted power model"},
    {"clocks", tw_cmd_dvfs_clocks, "the GPU's supported and current clocks (read only)"},
    {"lock", tw_cmd_dvfs_lock, "run a command under locked clocks (--allow-clock-changes), restored after"},
    {"rows", tw_cmd_dvfs_rows, "measured kernels (times and Nsight Compute counters) as model rows"},
    {"params", tw_cmd_dvfs_params, "the local GPU's hardware parameters by microbenchmarks"},
    {"predict", tw_cmd_dvfs_predict, "a kernel's time over the GPU's supported clock pairs"},
};

int cmd_dvfs(int argc, char **argv)
{
    return cli_dispatch("dvfs", "Kernel time under core and memory frequency scaling (Wang & Chu, TPDS 2020).",
                        subcommands, sizeof subcommands / sizeof subcommands[0], argc, argv);
}
