/* `truewatt dvfs fit` as a library call (tw_dvfs_fit_report): Wang & Chu's
 * hardware parameters fitted by least squares to measured rows
 * (src/dvfs/fit.c), cross-validated by clock pair and by kernel
 * (src/dvfs/cv.c), beside the starting (e.g. published) set's errors on the
 * same rows, as text or JSON. The model is the honest one: no kernel-name
 * special cases. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/json.h"
#include "dvfs/cv.h"
#include "dvfs/data.h"
#include "dvfs/eval.h"
#include "dvfs/fit.h"
#include "dvfs/model.h"
#include "dvfs/report.h"

#define SETS 2 /* cross-validations: by clock pair, by kernel */

/* ---------------------------------------------------------------- the work */

/* What the command computed, for the printers. */
typedef struct fit_report {
    const tw_dvfs_options *a;
    const tw_dvfs_params *start;
    size_t points, skipped;
    tw_dvfs_fit fit;
    tw_dvfs_cv cv[SETS]; /* nfolds 0: not possible on these rows (one kernel, one clock pair) */
} fit_report;

static const char *rows_meaning(const tw_dvfs_options *a)
{
    return a->all_kernels ? "every row" : "the authors' 20 kernels at clocks >= 500 MHz";
}

/* The rows the fit sees, as eval chooses them. */
static tw_status select_rows(const tw_dvfs_data *d, bool all_kernels, const tw_dvfs_row ***rows, size_t *n)
{
    *n = 0;
    *rows = calloc(d->n ? d->n : 1, sizeof **rows);
    if (!*rows) return tw_fail(TW_ENOMEM, "out of memory selecting rows");
    for (size_t i = 0; i < d->n; i++)
        if (all_kernels || tw_dvfs_in_paper_set(&d->rows[i])) (*rows)[(*n)++] = &d->rows[i];
    return *n ? TW_OK : tw_fail(TW_EEMPTY, "no rows of the authors' 20 kernels at clocks >= 500 MHz");
}

static void progress(void *ctx, const tw_dvfs_cv *cv, size_t f)
{
    const tw_dvfs_options *o = ctx;
    const tw_dvfs_fold *fold = &cv->folds[f];
    tw_dvfs_note(o, "by %s, fold %zu/%zu: %zu %s%s, %zu held-out points, MAPE %.2f %%", tw_dvfs_cv_by_name(cv->by),
                 f + 1, cv->nfolds, fold->groups, tw_dvfs_cv_by_name(cv->by), fold->groups == 1 ? "" : "s", fold->test,
                 100 * fold->mape);
}

static tw_status cross_validate(fit_report *r, const tw_dvfs_row *const *rows, tw_dvfs_cv_by by)
{
    tw_dvfs_cv *cv = &r->cv[by];
    size_t *fold = calloc(r->points, sizeof *fold), groups = 0;
    if (!fold) return tw_fail(TW_ENOMEM, "out of memory cross-validating the DVFS fit");
    size_t nfolds = tw_dvfs_folds(rows, r->points, by, r->a->folds, fold, &groups);
    free(fold);
    if (!nfolds) { /* one kernel or one clock pair: nothing to hold out */
        memset(cv, 0, sizeof *cv);
        cv->by = by;
        cv->groups = groups;
        return TW_OK;
    }
    return tw_dvfs_cross_validate(r->start, rows, r->points, by, r->a->folds, progress, (void *)r->a, cv);
}

/* The fitted set's name and source, so that the file says what it is. */
static void label_fitted(fit_report *r)
{
    tw_dvfs_params *p = &r->fit.params;
    const char *base = strrchr(r->a->data, '/');
    base = base ? base + 1 : r->a->data;
    snprintf(p->name, sizeof p->name, "%.27s-fit", r->start->name);
    int len =
        snprintf(p->source, sizeof p->source,
                 "fitted by truewatt dvfs fit to %s (%zu rows, %s; no kernel special cases), from %s; held:", base,
                 r->points, rows_meaning(r->a), r->start->name);
    for (int k = 0; k < TW_DVFS_FIT_PARAMS && len > 0 && (size_t)len < sizeof p->source; k++)
        if (r->fit.param[k].hold != TW_DVFS_FITTED)
            len += snprintf(p->source + len, sizeof p->source - (size_t)len, " %s", r->fit.param[k].key);
    if (r->fit.free == TW_DVFS_FIT_PARAMS && len > 0 && (size_t)len < sizeof p->source)
        snprintf(p->source + len, sizeof p->source - (size_t)len, " none");
}

static tw_status write_fitted(const fit_report *r)
{
    FILE *f = fopen(r->a->out, "w");
    if (!f) return tw_fail(TW_EIO, "cannot write %s: %s", r->a->out, strerror(errno));
    tw_status st = tw_dvfs_params_write(f, &r->fit.params);
    tw_status closed = tw_dvfs_close_out(f, r->a->out);
    return st != TW_OK ? st : closed;
}

/* ---------------------------------------------------------------- output */

/* Why a parameter is held, in a sentence, for the text report. */
static const char *hold_reason(tw_dvfs_hold h)
{
    switch (h) {
    case TW_DVFS_HELD_ONE_MEM_CLOCK:
        return "the rows have one memory clock: a_D/fm^2 and b_D/fm act as one number and a_L/fm as one\n"
               "      fixed time, so the memory-clock coefficients keep their start values (b_L, b_D take up\n"
               "      the rest); at other memory clocks the fit is the start set's extrapolation";
    case TW_DVFS_HELD_NO_EFFECT:
        return "no prediction moves with it at the start (L_L2 acts only in the latency-bound regime, the\n"
               "      T_sm terms only where the SM pipes outlast memory, D_DP only with FP64 instructions)";
    case TW_DVFS_HELD_ZERO_START:
        return "its start value is 0 (a set measured at one clock pair has no memory-clock terms), and a\n"
               "      fit in log parameters cannot move it; give --gpu a set with a positive value to fit it";
    case TW_DVFS_HELD_COLLINEAR:
        return "it moves the predictions only as the named fitted parameter does (L_sh and L_INST are both\n"
               "      constants added to T_sm when no row is latency-bound), so the rows cannot split them";
    default:
        return "";
    }
}

static void print_params_text(FILE *out, const tw_dvfs_fit *fit)
{
    fprintf(out, "\n  %-8s %12s %12s\n", "param", "start", "fitted");
    bool used[TW_DVFS_HOLDS] = {0};
    for (int k = 0; k < TW_DVFS_FIT_PARAMS; k++) {
        const tw_dvfs_fit_param *fp = &fit->param[k];
        fprintf(out, "  %-8s %12.6g %12.6g", fp->key, fp->start, fp->value);
        if (fp->hold == TW_DVFS_HELD_COLLINEAR && fp->like >= 0)
            fprintf(out, "  held: collinear with %s", fit->param[fp->like].key);
        else if (fp->hold != TW_DVFS_FITTED)
            fprintf(out, "  held: %s", tw_dvfs_hold_name(fp->hold));
        if (fp->at_bound) fprintf(out, "  (at the edge of the search box, start /1000 .. *1000)");
        fprintf(out, "\n");
        used[fp->hold] = true;
    }
    for (int h = TW_DVFS_HELD_ONE_MEM_CLOCK; h < TW_DVFS_HOLDS; h++)
        if (used[h]) fprintf(out, "  held, %s: %s\n", tw_dvfs_hold_name((tw_dvfs_hold)h), hold_reason((tw_dvfs_hold)h));
}

static void print_cv_text(FILE *out, const tw_dvfs_cv *cv)
{
    const char *by = tw_dvfs_cv_by_name(cv->by);
    if (!cv->nfolds) {
        fprintf(out, "\nby %s: not possible, the rows have %zu %s%s\n", by, cv->groups, by, cv->groups == 1 ? "" : "s");
        return;
    }
    fprintf(out, "\nheld-out by %s: %zu folds of %zu %ss; MAPE over all held-out points %.2f %%\n", by, cv->nfolds,
            cv->groups, by, 100 * cv->mape);
    fprintf(out, "  %4s %6s %6s %6s %9s %9s %9s  %s\n", "fold", "groups", "points", "free", "train", "held-out",
            "start", "held out");
    for (size_t f = 0; f < cv->nfolds; f++) {
        const tw_dvfs_fold *fo = &cv->folds[f];
        fprintf(out, "  %4zu %6zu %6zu %6zu %7.2f %% %7.2f %% %7.2f %%  %s\n", f + 1, fo->groups, fo->test, fo->free,
                100 * fo->train_mape, 100 * fo->mape, 100 * fo->start_mape, fo->held_out);
    }
}

static void print_text(FILE *out, const fit_report *r)
{
    const tw_dvfs_options *a = r->a;
    fprintf(out, "Wang & Chu DVFS model fitted to %s, starting from %s, no kernel special cases\n", a->data,
            r->start->name);
    fprintf(out, "points: %zu (%zu rows outside the %s); %zu memory clock%s\n", r->points, r->skipped,
            a->all_kernels ? "file" : "authors' 20 kernels at clocks >= 500 MHz", r->fit.mem_clocks,
            r->fit.mem_clocks == 1 ? "" : "s");
    fprintf(out, "method: least squares on relative time errors, Levenberg-Marquardt in log parameters\n");
    print_params_text(out, &r->fit);
    fprintf(out, "\nMAPE on all %zu points: starting parameters (%s) %.2f %%, fitted (in-sample) %.2f %%\n", r->points,
            r->start->name, 100 * r->fit.start_mape, 100 * r->fit.mape);
    for (int s = 0; s < SETS; s++)
        print_cv_text(out, &r->cv[s]);
    fprintf(out, "\n(train: in-sample MAPE of the fold's fit; held-out: its MAPE on the fold's points; start: the\n"
                 "starting parameters on the same points)\n");
    if (a->out) fprintf(out, "\nfitted parameters (all points) written to %s\n", a->out);
}

static void json_params(json *j, const tw_dvfs_fit *fit)
{
    json_key(j, "params");
    json_begin_array(j);
    for (int k = 0; k < TW_DVFS_FIT_PARAMS; k++) {
        const tw_dvfs_fit_param *fp = &fit->param[k];
        json_begin_object(j);
        json_kv_string(j, "key", fp->key);
        json_kv_number(j, "start", fp->start);
        json_kv_number(j, "fitted", fp->value);
        json_kv_string(j, "held", fp->hold == TW_DVFS_FITTED ? NULL : tw_dvfs_hold_name(fp->hold));
        json_kv_string(j, "like", fp->like >= 0 ? fit->param[fp->like].key : NULL);
        json_kv_bool(j, "at_bound", fp->at_bound);
        json_end_object(j);
    }
    json_end_array(j);
}

static void json_cv(json *j, const tw_dvfs_cv *cv)
{
    json_begin_object(j);
    json_kv_string(j, "by", tw_dvfs_cv_by_name(cv->by));
    json_kv_uint(j, "groups", cv->groups);
    json_kv_uint(j, "nfolds", cv->nfolds);
    if (cv->nfolds) json_kv_number(j, "mape_pct", 100 * cv->mape);
    json_key(j, "folds");
    json_begin_array(j);
    for (size_t f = 0; f < cv->nfolds; f++) {
        const tw_dvfs_fold *fo = &cv->folds[f];
        json_begin_object(j);
        json_kv_string(j, "held_out", fo->held_out);
        json_kv_uint(j, "groups", fo->groups);
        json_kv_uint(j, "train_points", fo->train);
        json_kv_uint(j, "test_points", fo->test);
        json_kv_uint(j, "free", fo->free);
        json_kv_number(j, "train_mape_pct", 100 * fo->train_mape);
        json_kv_number(j, "mape_pct", 100 * fo->mape);
        json_kv_number(j, "start_mape_pct", 100 * fo->start_mape);
        json_end_object(j);
    }
    json_end_array(j);
    json_end_object(j);
}

static void print_json(FILE *out, const fit_report *r)
{
    json j;
    json_init(&j, out);
    json_begin_object(&j);
    json_kv_string(&j, "data", r->a->data);
    json_kv_string(&j, "gpu", r->start->name);
    json_kv_string(&j, "source", r->start->source);
    json_kv_bool(&j, "paper_compat", false);
    json_kv_bool(&j, "all_kernels", r->a->all_kernels);
    json_kv_uint(&j, "points", r->points);
    json_kv_uint(&j, "skipped", r->skipped);
    json_kv_uint(&j, "memory_clocks", r->fit.mem_clocks);
    json_kv_uint(&j, "free", r->fit.free);
    json_params(&j, &r->fit);
    json_kv_number(&j, "start_mape_pct", 100 * r->fit.start_mape);
    json_kv_number(&j, "fitted_mape_pct", 100 * r->fit.mape);
    json_key(&j, "cross_validation");
    json_begin_array(&j);
    for (int s = 0; s < SETS; s++)
        json_cv(&j, &r->cv[s]);
    json_end_array(&j);
    json_kv_string(&j, "out", r->a->out);
    json_end_object(&j);
    json_finish(&j);
}

/* ---------------------------------------------------------------- the command */

static tw_status fit_and_validate(fit_report *r, const tw_dvfs_row *const *rows)
{
    tw_dvfs_note(r->a, "fitting %zu points", r->points);
    tw_status st = tw_dvfs_fit_rows(r->start, rows, r->points, &r->fit);
    if (st == TW_OK) st = cross_validate(r, rows, TW_DVFS_BY_CLOCK_PAIR);
    if (st == TW_OK) st = cross_validate(r, rows, TW_DVFS_BY_KERNEL);
    return st;
}

tw_status tw_dvfs_fit_report(const tw_dvfs_options *a, FILE *out)
{
    tw_status st = tw_dvfs_options_check(a, out);
    if (st != TW_OK) return st;
    if (a->folds < 2) return tw_fail(TW_EINVAL, "dvfs fit: folds must be at least 2, got %zu", a->folds);
    tw_dvfs_params start;
    if ((st = tw_dvfs_params_load(a->params, &start)) != TW_OK) return st;
    tw_dvfs_data d;
    if ((st = tw_dvfs_load(a->data, &d)) != TW_OK) return st;
    const tw_dvfs_row **rows = NULL;
    fit_report r = {.a = a, .start = &start};
    st = select_rows(&d, a->all_kernels, &rows, &r.points);
    r.skipped = d.n - r.points;
    if (st == TW_OK) st = fit_and_validate(&r, rows);
    if (st == TW_OK) {
        label_fitted(&r);
        if (a->out) st = write_fitted(&r);
        if (st == TW_OK && a->json) print_json(out, &r);
        if (st == TW_OK && !a->json) print_text(out, &r);
    } else
        st = tw_dvfs_name_data(a->data, st);
    for (int s = 0; s < SETS; s++)
        tw_dvfs_cv_free(&r.cv[s]);
    free(rows);
    tw_dvfs_data_free(&d);
    return st;
}
