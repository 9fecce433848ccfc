/* truewatt sensor show: a sensor profile, readable (or re-emitted as JSON). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/opts.h"
#include "correct/identify.h"
#include "correct/profile.h"
#include "report/table.h"

#define CMD "sensor show"

/* The options, declared once (cli/opts.h). */
static int parse_args(int argc, char **argv, bool *as_json, const char **path)
{
    const cli_opt opt[] = {
        {.name = "json",
         .type = CLI_OPT_FLAG,
         .help = "re-emit the profile as JSON (schema truewatt-sensor-profile, version 1)",
         .out = as_json},
    };
    const cli_opts o = {.cmd = CMD,
                        .synopsis = "[--json] PROFILE.json",
                        .about =
                            "Prints a sensor profile (written by 'truewatt sensor identify'): the GPU, driver and\n"
                            "levels, and for every reading its response model (rc, boxcar, window, counter), update\n"
                            "period (median, p10-p90), window, delay, time constant C, coverage and fit residual.\n"
                            "The reading truewatt would pick for energy is marked 'best' (full coverage first,\n"
                            "then the finest time resolution).",
                        .opt = opt,
                        .n = CLI_OPTS_N(opt),
                        .min_args = 1,
                        .max_args = 1,
                        .missing = "which profile? (PROFILE.json)"};
    int first;
    int rc = cli_opts_parse(&o, argc, argv, &first);
    if (rc == 0) *path = argv[first];
    return rc;
}

/* "%.*f" of v scaled, or "-" for NaN. */
static void cell_num(table *t, double v, double scale, int decimals)
{
    if (isnan(v))
        table_cell(t, "-");
    else
        table_cell(t, "%.*f", decimals, v * scale);
}

static void print_level(const char *label, double w, const char *what)
{
    if (isnan(w))
        printf("%-13s -  (%s: not measured)\n", label, what);
    else
        printf("%-13s %.2f W  (%s)\n", label, w, what);
}

static int print_table(const tw_profile *p, const tw_reading_model *best)
{
    /* "best" right after the name, so no row ends in blanks */
    static const char *const headers[] = {"reading",   "pick",     "response",   "period_ms", "p10-p90_ms",
                                          "window_ms", "delay_ms", "coverage_%", "C_s",       "fit_rms_w"};
    table *t = table_new(sizeof headers / sizeof headers[0], headers);
    if (!t) return cli_fail(CMD, TW_ENOMEM);
    for (size_t i = 0; i < p->n; i++) {
        const tw_reading_model *m = &p->r[i];
        table_cell(t, "%s", m->name);
        /* a model whose residual exceeds 2 % of its step is not used for energy */
        table_cell(t, "%s", m == best ? "best" : !tw_reading_model_trusted(m) ? "poor fit" : "");
        table_cell(t, "%s", tw_response_name(m->response));
        cell_num(t, m->period_s, 1e3, 1);
        if (isnan(m->period_p10_s) || isnan(m->period_p90_s))
            table_cell(t, "-");
        else
            table_cell(t, "%.1f-%.1f", m->period_p10_s * 1e3, m->period_p90_s * 1e3);
        cell_num(t, m->window_s, 1e3, 1);
        cell_num(t, m->delay_s, 1e3, 1);
        cell_num(t, m->coverage, 100, 0);
        cell_num(t, m->capacitance_s, 1, 3);
        cell_num(t, m->rms_w, 1, 3);
    }
    table_print(t, stdout);
    table_free(t);
    return 0;
}

int cli_profile_print(const char *path, const tw_profile *p)
{
    printf("sensor profile %s\n", path);
    printf("%-13s %s\n", "gpu:", p->gpu);
    printf("%-13s %s\n", "driver:", p->driver);
    printf("%-13s %s\n", "backend:", p->backend);
    printf("%-13s %s\n", "created:", p->created);
    printf("%-13s %s\n", "command:", p->command);
    print_level("idle:", p->idle_w, "no CUDA context");
    print_level("active idle:", p->active_idle_w, "context alive, no kernel running");
    print_level("step:", p->step_w, "calibration kernel above active idle");
    printf("\n");
    const tw_reading_model *best = tw_profile_best(p, tw_identify_board_reading, NULL);
    if (p->n == 0) {
        printf("no readings\n");
        return 0;
    }
    int rc = print_table(p, best);
    if (rc) return rc;
    if (best)
        printf("\nbest for energy: %s (%s, coverage %.0f %%, period %.1f ms)\n", best->name,
               tw_response_name(best->response), isnan(best->coverage) ? 0.0 : best->coverage * 100,
               best->period_s * 1e3);
    else
        printf("\nbest for energy: none (no reading has a known response)\n");
    return 0;
}

int tw_cmd_sensor_show(int argc, char **argv)
{
    bool as_json;
    const char *path;
    int rc = parse_args(argc, argv, &as_json, &path);
    if (rc) return rc < 0 ? 0 : rc;
    tw_profile p;
    tw_status st = tw_profile_load(path, &p);
    if (st) return cli_fail(CMD, st);
    if (as_json) {
        st = tw_profile_write_json(&p, stdout);
        return st ? cli_fail(CMD, st) : 0;
    }
    return cli_profile_print(path, &p);
}
