/* A sensor profile shown (tw_profile_show, truewatt.h): what `truewatt
 * sensor show` prints, readable (the levels, a table of the readings' models
 * and the best reading for energy) or re-emitted as JSON. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/error.h"
#include "correct/identify.h"
#include "correct/profile.h"
#include "report/table.h"

/* "%.*f" of v scaled, or "-" for NaN. */
static void cell_num(table *t, double v, double scale, int decimals)
{
    if (isnan(v))
        table_cell(t, "-");
    else
        table_cell(t, "%.*f", decimals, v * scale);
}

static void print_level(FILE *out, const char *label, double w, const char *what)
{
    if (isnan(w))
        fprintf(out, "%-13s -  (%s: not measured)\n", label, what);
    else
        fprintf(out, "%-13s %.2f W  (%s)\n", label, w, what);
}

static tw_status print_table(FILE *out, const tw_profile *p, const tw_reading_model *best)
{
    /* "best" right after the name, so no row ends in blanks */
    static const char *const headers[] = {"reading",   "pick",     "response",   "period_ms", "p10-p90_ms",
                                          "window_ms", "delay_ms", "coverage_%", "C_s",       "fit_rms_w"};
    table *t = table_new(sizeof headers / sizeof headers[0], headers);
    if (!t) return tw_fail(TW_ENOMEM, "out of memory");
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
    table_print(t, out);
    table_free(t);
    return TW_OK;
}

/* The calibrated activity counters' models, one line each (none: nothing). */
static void print_activity(FILE *out, const tw_profile *p)
{
    for (size_t i = 0; i < p->n_activity; i++) {
        const tw_activity_model *a = &p->activity[i];
        fprintf(out, "%sactivity counters' model %zu, power above the quiet level at full activity:", i ? "" : "\n",
                i + 1);
        for (size_t k = 0; k < a->nf; k++)
            fprintf(out, "%s %s %.1f +- %.1f W", k ? "," : "", a->feature[k], a->power_w[k], a->sd_w[k]);
        if (isfinite(a->residual_w)) fprintf(out, "; residual %.1f W rms", a->residual_w);
        if (a->clock_mhz > 0) fprintf(out, "; at %.0f MHz (features x clock / it)", a->clock_mhz);
        fprintf(out, "%s%s\n", a->source[0] ? "; " : "", a->source);
    }
}

tw_status tw_profile_print(FILE *out, const char *path, const tw_profile *p)
{
    fprintf(out, "sensor profile %s\n", path);
    fprintf(out, "%-13s %s\n", "gpu:", p->gpu);
    fprintf(out, "%-13s %s\n", "driver:", p->driver);
    fprintf(out, "%-13s %s\n", "backend:", p->backend);
    fprintf(out, "%-13s %s\n", "created:", p->created);
    fprintf(out, "%-13s %s\n", "command:", p->command);
    print_level(out, "idle:", p->idle_w, "no CUDA context");
    print_level(out, "active idle:", p->active_idle_w, "context alive, no kernel running");
    print_level(out, "step:", p->step_w, "calibration kernel above active idle");
    if (isfinite(p->linger_s))
        fprintf(out, "%-13s %.3f s time constant of the power after a kernel ends (docs/methods.md)\n",
                "linger:", p->linger_s);
    fprintf(out, "\n");
    const tw_reading_model *best = tw_profile_best(p, tw_identify_board_reading, NULL);
    if (p->n == 0) {
        fprintf(out, "no readings\n");
        return TW_OK;
    }
    tw_status st = print_table(out, p, best);
    if (st != TW_OK) return st;
    if (best)
        fprintf(out, "\nbest for energy: %s (%s, coverage %.0f %%, period %.1f ms)\n", best->name,
                tw_response_name(best->response), isnan(best->coverage) ? 0.0 : best->coverage * 100,
                best->period_s * 1e3);
    else
        fprintf(out, "\nbest for energy: none (no reading has a known response)\n");
    print_activity(out, p);
    return TW_OK;
}

/* A bare name that is no file here (no '/': "nvidia-h100-80gb-hbm3_580.159.04", with or without
 * .json) is one of the profiles in tw_profile_dir (the installed ones); into buf, else path itself. */
static const char *resolve_profile(const char *path, char *buf, size_t cap)
{
    if (strchr(path, '/') || access(path, F_OK) == 0) return path;
    size_t len = strlen(path);
    bool has_json = len > 5 && strcmp(path + len - 5, ".json") == 0;
    snprintf(buf, cap, "%s/%s%s", tw_profile_dir(), path, has_json ? "" : ".json");
    return access(buf, F_OK) == 0 ? buf : path;
}

tw_status tw_profile_show(const char *path, bool json, FILE *out)
{
    if (!path || !out) return tw_fail(TW_EINVAL, "tw_profile_show: no path or no stream");
    char buf[4096];
    path = resolve_profile(path, buf, sizeof buf);
    tw_profile p;
    tw_status st = tw_profile_load(path, &p);
    if (st != TW_OK) return st;
    return json ? tw_profile_write_json(&p, out) : tw_profile_print(out, path, &p);
}
