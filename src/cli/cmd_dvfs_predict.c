/* truewatt dvfs predict: measured kernels (rows of counters and times, as
 * `dvfs rows` writes them) through Wang & Chu's model: the prediction at the
 * clocks each row was measured at against its measured time, and the
 * predicted time over every clock pair the GPU supports (NVML's list, read,
 * never set). The counters are taken as independent of the clocks, which the
 * paper claims (dvfs-model.md §2.11: to be checked where clocks can be set). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/dvfs_cmds.h"
#include "cli/dvfs_common.h"
#include "core/json.h"
#include "dvfs/data.h"
#include "dvfs/eval.h"
#include "dvfs/model.h"

#define CMD "dvfs predict"

typedef struct predict_args {
    const char *rows, *gpu, *device, *out;
    bool sweep, json; /* sweep: NVML's supported pairs; else only the measured ones */
} predict_args;

/* The options, declared once (cli/opts.h). */
static int parse(int argc, char **argv, predict_args *a)
{
    *a = (predict_args){0};
    const char *clocks;
    const cli_opt opt[] = {
        {.name = "gpu",
         .type = CLI_OPT_STRING,
         .arg = "NAME|FILE",
         .help = "the parameter set: a published one (gtx980, gtx1080ti, p100, v100)\nor a file, e.g. the "
                 "params.json of truewatt dvfs params",
         .out = &a->gpu},
        {.name = "clocks",
         .type = CLI_OPT_ENUM,
         .choices = "nvml|measured",
         .def = "nvml",
         .help = "nvml: predict over NVML's supported pairs; measured: only at the\nrows' own clocks (no NVML needed)",
         .out = &clocks},
        {.name = "device",
         .type = CLI_OPT_STRING,
         .arg = "N",
         .def = "0",
         .help = "NVML's device, index or UUID",
         .out = &a->device},
        {.name = "out",
         .type = CLI_OPT_STRING,
         .arg = "DIR",
         .def = "truewatt-dvfs-predict",
         .help = "predict.csv: every kernel at every pair",
         .out = &a->out},
        {.name = "json", .type = CLI_OPT_FLAG, .help = "the summary as JSON on stdout", .out = &a->json},
    };
    const cli_opts o = {
        .cmd = CMD,
        .synopsis = "ROWS.csv --gpu NAME|FILE.json [--clocks nvml|measured] [--device N]\n"
                    "                             [--out DIR] [--json]",
        .about = "Wang & Chu's model (without the authors' kernel special cases) for measured kernels: ROWS.csv\n"
                 "in the authors' column format (truewatt dvfs rows writes it). Prints each kernel's predicted\n"
                 "time at the clocks it was measured at against the measured time (MAPE), and its predicted\n"
                 "time over the GPU's supported clock pairs, which NVML lists (read only: nothing is set).",
        .opt = opt,
        .n = CLI_OPTS_N(opt),
        .min_args = 1,
        .max_args = 1,
        .missing = "ROWS.csv is required"};
    int first;
    int rc = cli_opts_parse(&o, argc, argv, &first);
    if (rc) return rc;
    a->sweep = !strcmp(clocks, "nvml");
    a->rows = argv[first];
    if (!a->gpu) return cli_usage(CMD, "--gpu NAME|FILE.json is required");
    return 0;
}

/* The supported pairs from NVML (for --clocks nvml). */
static int clock_table(const predict_args *a, tw_clock_table *t)
{
    tw_clocks *c = NULL;
    tw_status st = tw_clocks_open(NULL, a->device, &c);
    if (st == TW_OK) st = tw_clocks_supported(c, t);
    tw_clocks_close(c);
    if (st == TW_OK) return 0;
    fprintf(stderr, "truewatt %s: the supported clocks: %s (--clocks measured predicts at the rows' clocks only)\n",
            CMD, tw_last_error());
    return CLI_EXIT_FAIL;
}

static tw_status predict_at(const tw_dvfs_params *p, const tw_dvfs_row *r, double core, double mem,
                            tw_dvfs_prediction *out)
{
    tw_dvfs_row at = *r;
    at.core_mhz = core;
    at.mem_mhz = mem;
    return tw_dvfs_predict(p, &at, false, out);
}

static tw_status write_point(FILE *f, const tw_dvfs_params *p, const tw_dvfs_row *r, double fc, double fm)
{
    tw_dvfs_prediction pr;
    tw_status st = predict_at(p, r, fc, fm, &pr);
    if (st != TW_OK) return st;
    fprintf(f, "%s,%.0f,%.0f,%.6g,%s,", r->app, fc, fm, pr.time_ms, tw_dvfs_regime_name(pr.regime));
    if (fabs(fc - r->core_mhz) < 0.5 && fabs(fm - r->mem_mhz) < 0.5) fprintf(f, "%.6g", r->time_ms);
    fputc('\n', f);
    return TW_OK;
}

/* predict.csv: each row at every pair of t, or at its own pair when t is NULL. */
static int write_sweep(const predict_args *a, const tw_dvfs_params *p, const tw_dvfs_data *d, const tw_clock_table *t)
{
    char path[4096];
    if (cli_make_dir(CMD, a->out)) return CLI_EXIT_FAIL;
    FILE *f = cli_open_out(CMD, a->out, "predict.csv", path, sizeof path);
    if (!f) return CLI_EXIT_FAIL;
    fprintf(f, "# truewatt dvfs predict %s --gpu %s --clocks %s\n", a->rows, a->gpu, t ? "nvml" : "measured");
    fprintf(f, "kernel,core_mhz,mem_mhz,predicted_ms,regime,measured_ms\n");
    tw_status st = TW_OK;
    for (size_t i = 0; i < d->n && st == TW_OK; i++) {
        const tw_dvfs_row *r = &d->rows[i];
        if (!t) st = write_point(f, p, r, r->core_mhz, r->mem_mhz);
        for (size_t m = 0; t && m < t->nmem && st == TW_OK; m++)
            for (size_t g = 0; g < t->mem[m].n && st == TW_OK; g++)
                st = write_point(f, p, r, t->mem[m].gfx_mhz[g], t->mem[m].mem_mhz);
    }
    int rc = cli_close_out(CMD, f, path);
    if (st != TW_OK) return cli_fail(CMD, st);
    if (!rc) cli_note("truewatt %s: wrote %s", CMD, path);
    return rc;
}

/* A few graphics clocks of one memory clock's list: the highest, the lowest and three between. */
static size_t pick_columns(const tw_clock_mem *m, size_t *idx, size_t cap)
{
    size_t n = 0;
    if (m->n == 0) return 0;
    for (size_t k = 0; k < cap && k < m->n; k++) {
        size_t i = cap > 1 ? k * (m->n - 1) / (cap - 1) : 0;
        if (n && idx[n - 1] == i) continue;
        idx[n++] = i;
    }
    return n;
}

static void print_sweep(const tw_dvfs_params *p, const tw_dvfs_data *d, const tw_clock_table *t)
{
    for (size_t m = 0; m < t->nmem; m++) {
        const tw_clock_mem *cm = &t->mem[m];
        size_t idx[5], n = pick_columns(cm, idx, 5);
        char list[128];
        tw_clock_list_format(cm->gfx_mhz, cm->n, list, sizeof list);
        printf("\nmemory %u MHz (%s): predicted ms at SM clock\n  %-24s", cm->mem_mhz, list, "kernel");
        for (size_t k = 0; k < n; k++)
            printf(" %10u", cm->gfx_mhz[idx[k]]);
        printf("\n");
        for (size_t i = 0; i < d->n; i++) {
            printf("  %-24s", d->rows[i].app);
            for (size_t k = 0; k < n; k++) {
                tw_dvfs_prediction pr;
                if (predict_at(p, &d->rows[i], cm->gfx_mhz[idx[k]], cm->mem_mhz, &pr) == TW_OK)
                    printf(" %10.4g", pr.time_ms);
                else
                    printf(" %10s", "-");
            }
            printf("\n");
        }
    }
}

static void print_measured(const predict_args *a, const tw_dvfs_params *p, const tw_dvfs_eval *e)
{
    printf("Wang & Chu DVFS model, %s, parameters %s (%s)\n", a->rows, p->name, p->source);
    cli_dvfs_print_points_header("at the measured clocks");
    for (size_t i = 0; i < e->n; i++)
        cli_dvfs_print_point(&e->points[i]);
    printf("MAPE: %.2f %% over %zu rows (%zu kernels)\n", 100 * e->mape, e->n, e->nkernels);
    for (int r = 0; r < TW_DVFS_REGIMES; r++)
        if (e->regimes[r].n)
            printf("  %-8s %6.2f %%  (%zu rows)\n", e->regimes[r].name, 100 * e->regimes[r].mape, e->regimes[r].n);
}

static void print_json(const predict_args *a, const tw_dvfs_params *p, const tw_dvfs_eval *e)
{
    json j;
    json_init(&j, stdout);
    json_begin_object(&j);
    json_kv_string(&j, "rows", a->rows);
    json_kv_string(&j, "gpu", p->name);
    json_kv_string(&j, "source", p->source);
    json_kv_uint(&j, "points", e->n);
    json_kv_number(&j, "mape_pct", 100 * e->mape);
    json_key(&j, "measured");
    json_begin_array(&j);
    for (size_t i = 0; i < e->n; i++) {
        json_begin_object(&j);
        cli_dvfs_json_point_fields(&j, &e->points[i]);
        json_end_object(&j);
    }
    json_end_array(&j);
    json_end_object(&j);
    json_finish(&j);
}

int tw_cmd_dvfs_predict(int argc, char **argv)
{
    predict_args a;
    int rc = parse(argc, argv, &a);
    if (rc) return rc < 0 ? 0 : rc;
    tw_dvfs_params p;
    if ((rc = cli_dvfs_params_load(CMD, a.gpu, &p))) return rc;
    tw_dvfs_data d;
    tw_status st = tw_dvfs_load(a.rows, &d);
    if (st != TW_OK) return cli_fail(CMD, st);
    tw_dvfs_eval e;
    if ((st = tw_dvfs_evaluate(&p, &d, false, true, &e)) != TW_OK) {
        tw_dvfs_data_free(&d);
        return cli_fail(CMD, st);
    }
    tw_clock_table t = {0};
    rc = a.sweep ? clock_table(&a, &t) : 0;
    if (!rc) {
        if (a.json)
            print_json(&a, &p, &e);
        else {
            print_measured(&a, &p, &e);
            if (a.sweep) print_sweep(&p, &d, &t);
        }
        rc = write_sweep(&a, &p, &d, a.sweep ? &t : NULL);
    }
    tw_clock_table_free(&t);
    tw_dvfs_eval_free(&e);
    tw_dvfs_data_free(&d);
    return rc;
}
