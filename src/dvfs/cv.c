/* Cross-validation of the DVFS parameter fit (cv.h). */
#include "dvfs/cv.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "dvfs/fit.h"

const char *tw_dvfs_cv_by_name(tw_dvfs_cv_by by) { return by == TW_DVFS_BY_KERNEL ? "kernel" : "clock pair"; }

/* ---------------------------------------------------------------- folds */

typedef struct group {
    const tw_dvfs_row *first; /* a row of the group: its key */
    size_t rank;              /* place in sorted order */
} group;

static int compare_rows(const tw_dvfs_row *a, const tw_dvfs_row *b, tw_dvfs_cv_by by)
{
    if (by == TW_DVFS_BY_KERNEL) return strcmp(a->app, b->app);
    if (a->core_mhz != b->core_mhz) return a->core_mhz < b->core_mhz ? -1 : 1;
    if (a->mem_mhz != b->mem_mhz) return a->mem_mhz < b->mem_mhz ? -1 : 1;
    return 0;
}

/* Index of row's group in groups[0..ng), or ng when it has none yet. */
static size_t find_group(const group *groups, size_t ng, const tw_dvfs_row *row, tw_dvfs_cv_by by)
{
    size_t g = 0;
    while (g < ng && compare_rows(groups[g].first, row, by) != 0)
        g++;
    return g;
}

size_t tw_dvfs_folds(const tw_dvfs_row *const *rows, size_t n, tw_dvfs_cv_by by, size_t k, size_t *fold, size_t *groups)
{
    *groups = 0;
    group *gs = calloc(n ? n : 1, sizeof *gs);
    if (!gs || !n || k < 2) {
        free(gs);
        return 0;
    }
    size_t ng = 0;
    for (size_t i = 0; i < n; i++) {
        size_t g = find_group(gs, ng, rows[i], by);
        if (g == ng) gs[ng++].first = rows[i];
        fold[i] = g; /* the group for now */
    }
    /* rank by counting the groups before each: n is small (hundreds of rows, tens of groups) */
    for (size_t g = 0; g < ng; g++)
        for (size_t h = 0; h < ng; h++)
            if (compare_rows(gs[h].first, gs[g].first, by) < 0) gs[g].rank++;
    if (k > ng || (by == TW_DVFS_BY_CLOCK_PAIR && ng < TW_DVFS_CV_MIN_PAIRS)) k = ng;
    for (size_t i = 0; i < n; i++)
        fold[i] = gs[fold[i]].rank % k;
    free(gs);
    *groups = ng;
    return ng < 2 ? 0 : k;
}

/* ---------------------------------------------------------------- one fold */

static void group_name(const tw_dvfs_row *r, tw_dvfs_cv_by by, char *buf, size_t cap)
{
    if (by == TW_DVFS_BY_KERNEL)
        snprintf(buf, cap, "%s", r->app);
    else
        snprintf(buf, cap, "%.0f/%.0f", r->core_mhz, r->mem_mhz);
}

/* The names of the fold's groups, in row order, each once. */
static void describe_fold(const tw_dvfs_row *const *test, size_t nt, tw_dvfs_cv_by by, tw_dvfs_fold *f)
{
    size_t len = 0, cap = sizeof f->held_out;
    bool cut = false;
    f->held_out[0] = 0;
    for (size_t i = 0; i < nt; i++) {
        size_t j = 0;
        while (j < i && compare_rows(test[j], test[i], by) != 0)
            j++;
        if (j < i) continue; /* seen */
        f->groups++;
        char name[80];
        group_name(test[i], by, name, sizeof name);
        if (cut) continue;
        if (len + strlen(name) + 6 >= cap) { /* keep room for " ..." */
            snprintf(f->held_out + len, cap - len, " ...");
            cut = true;
            continue;
        }
        len += (size_t)snprintf(f->held_out + len, cap - len, "%s%s", len ? " " : "", name);
    }
}

/* Fits the training rows, predicts the test rows; adds the test rows' absolute errors to *ape_sum. */
static tw_status run_fold(const tw_dvfs_params *start, const tw_dvfs_row *const *train, size_t ntrain,
                          const tw_dvfs_row *const *test, size_t ntest, tw_dvfs_fold *f, double *ape_sum)
{
    tw_dvfs_fit fit;
    tw_status st = tw_dvfs_fit_rows(start, train, ntrain, &fit);
    if (st == TW_OK) st = tw_dvfs_rows_mape(&fit.params, test, ntest, &f->mape);
    if (st == TW_OK) st = tw_dvfs_rows_mape(start, test, ntest, &f->start_mape);
    if (st != TW_OK) return st;
    f->train = ntrain;
    f->test = ntest;
    f->free = fit.free;
    f->train_mape = fit.mape;
    *ape_sum += f->mape * (double)ntest;
    return TW_OK;
}

tw_status tw_dvfs_cross_validate(const tw_dvfs_params *start, const tw_dvfs_row *const *rows, size_t n,
                                 tw_dvfs_cv_by by, size_t k, tw_dvfs_cv_progress progress, void *ctx, tw_dvfs_cv *out)
{
    memset(out, 0, sizeof *out);
    out->by = by;
    out->n = n;
    size_t *fold = calloc(n ? n : 1, sizeof *fold);
    const tw_dvfs_row **split = calloc(n ? n : 1, sizeof *split);
    if (!fold || !split) {
        free(fold);
        free(split);
        return tw_fail(TW_ENOMEM, "out of memory cross-validating the DVFS fit");
    }
    out->nfolds = tw_dvfs_folds(rows, n, by, k, fold, &out->groups);
    out->folds = out->nfolds ? calloc(out->nfolds, sizeof *out->folds) : NULL;
    tw_status st = TW_OK;
    if (!out->nfolds)
        st = tw_fail(TW_EINVAL, "cross-validation by %s needs two or more of them and two or more folds (%zu found)",
                     tw_dvfs_cv_by_name(by), out->groups);
    else if (!out->folds)
        st = tw_fail(TW_ENOMEM, "out of memory cross-validating the DVFS fit");
    double ape_sum = 0;
    for (size_t f = 0; st == TW_OK && f < out->nfolds; f++) {
        /* training rows from the front of split, test rows from the back: one array, file order kept in each */
        size_t ntrain = 0, ntest = 0;
        for (size_t i = 0; i < n; i++)
            if (fold[i] != f) split[ntrain++] = rows[i];
        for (size_t i = 0; i < n; i++)
            if (fold[i] == f) split[ntrain + ntest++] = rows[i];
        const tw_dvfs_row *const *s = split;
        describe_fold(s + ntrain, ntest, by, &out->folds[f]);
        st = run_fold(start, s, ntrain, s + ntrain, ntest, &out->folds[f], &ape_sum);
        if (st == TW_OK && progress) progress(ctx, out, f);
    }
    free(fold);
    free(split);
    if (st != TW_OK) {
        tw_dvfs_cv_free(out);
        return st;
    }
    out->mape = ape_sum / (double)n;
    return TW_OK;
}

void tw_dvfs_cv_free(tw_dvfs_cv *cv)
{
    free(cv->folds);
    cv->folds = NULL;
    cv->nfolds = 0;
}
