/* Unit tests of the DVFS parameter fit (src/dvfs/fit.c) and its
 * cross-validation (src/dvfs/cv.c): the fit recovers known parameters from
 * rows the model itself synthesised, from perturbed starting values; what the
 * rows cannot identify is held, with the right reason; folds cover every row
 * once; a fitted set written out loads back and predicts rows it was not
 * fitted on; and, on the authors' data when shared/ has it, the fit is not
 * worse in-sample than the published parameters (no kernel special cases). */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tw_test.h"

#include "dvfs/cv.h"
#include "dvfs/data.h"
#include "dvfs/eval.h"
#include "dvfs/fit.h"
#include "dvfs/model.h"

/* The "true" parameters of the synthetic rows: GTX 980-like, but not the published values. */
static const tw_dvfs_params truth = {.name = "synthetic",
                                     .source = "test_dvfs_fit.c",
                                     .a_l = 150,
                                     .b_l = 120,
                                     .a_d = 900,
                                     .b_d = 6,
                                     .l_l2 = 200,
                                     .d_l2 = 1.5,
                                     .l_inst = 6,
                                     .d_inst = 1.2,
                                     .l_sh = 30,
                                     .d_sh = 1.1,
                                     .d_dp = 16,
                                     .d_tex = 1,
                                     .tex_units = 8,
                                     .w_max = 64,
                                     .n_sm = 16,
                                     .c_sm = 128,
                                     .occ_threshold = 0.30};

/* A synthetic kernel: per-warp counts, so that each parameter has rows that show it. */
typedef struct kernel {
    const char *app;
    double occupancy, n_gld, n_gst, miss, n_sld, n_sst, n_dp, inst_per_warp;
} kernel;

static const kernel kernels[] = {
    {"stream", 0.90, 16, 4, 1.0, 0, 0, 0, 160},     /* memory-bound: a_D, b_D, a_L, b_L */
    {"l2hits", 0.85, 30, 10, 0.3, 0, 0, 0, 120},    /* memory-bound with L2 hits: D_L2 */
    {"compute", 0.80, 2, 0, 1.0, 0, 0, 0, 2000},    /* issue-bound: D_INST, L_INST + L_sh */
    {"shared", 0.70, 4, 1, 0.5, 300, 100, 0, 600},  /* shared-memory pipe: D_sh */
    {"fp64", 0.60, 3, 0, 1.0, 0, 0, 40, 300},       /* FP64 pipe: D_DP */
    {"latency", 0.20, 8, 2, 0.5, 0, 0, 0, 200},     /* too few warps: L_L2, L_INST */
    {"pointer", 0.25, 25, 5, 0.9, 0, 0, 0, 50},     /* too few warps, mostly misses */
    {"balanced", 0.60, 24, 6, 0.8, 20, 10, 0, 900}, /* crosses between compute and memory with the clocks */
};
#define NKERNELS (sizeof kernels / sizeof kernels[0])

static const double cores_mhz[] = {500, 700, 900, 1100}, mems_mhz[] = {500, 750, 1000};
#define NCORES (sizeof cores_mhz / sizeof cores_mhz[0])
#define NMEMS (sizeof mems_mhz / sizeof mems_mhz[0])

#define WARPS 1e5

/* A row of kernel k at (fc, fm) whose measured time is the model's at p. */
static tw_dvfs_row synth_row(const tw_dvfs_params *p, const kernel *k, double fc, double fm)
{
    tw_dvfs_row r = {.core_mhz = fc, .mem_mhz = fm, .time_ms = 1, .warps = WARPS, .occupancy = k->occupancy};
    snprintf(r.app, sizeof r.app, "%s", k->app);
    snprintf(r.kernel, sizeof r.kernel, "%s_kernel", k->app);
    r.l2_read = k->n_gld * WARPS;
    r.l2_write = k->n_gst * WARPS;
    r.dram_read = k->miss * r.l2_read;
    r.dram_write = k->miss * r.l2_write;
    r.shared_load = k->n_sld * WARPS;
    r.shared_store = k->n_sst * WARPS;
    r.inst_fp_64 = k->n_dp * 32 * WARPS;
    r.inst_per_warp = k->inst_per_warp;
    tw_dvfs_prediction pred;
    assert_int_equal(tw_dvfs_predict(p, &r, false, &pred), TW_OK);
    r.time_ms = pred.time_ms;
    return r;
}

/* Rows of the kernels not named in skip (a NULL-ended list, or NULL) at every core clock and the memory clocks given.
 */
static size_t synth_rows(const tw_dvfs_params *p, const char *const *skip, const double *mems, size_t nmems,
                         tw_dvfs_row *rows, const tw_dvfs_row **ptrs)
{
    size_t n = 0;
    for (size_t k = 0; k < NKERNELS; k++) {
        bool skipped = false;
        for (size_t s = 0; skip && skip[s]; s++)
            skipped |= !strcmp(skip[s], kernels[k].app);
        if (skipped) continue;
        for (size_t c = 0; c < NCORES; c++)
            for (size_t m = 0; m < nmems; m++) {
                rows[n] = synth_row(p, &kernels[k], cores_mhz[c], mems[m]);
                rows[n].line = n + 2;
                ptrs[n] = &rows[n];
                n++;
            }
    }
    return n;
}

#define MAX_ROWS (NKERNELS * NCORES * NMEMS)

/* The truth with each fitted parameter moved by a fixed factor between 0.6 and 1.6. */
static tw_dvfs_params perturbed(void)
{
    static const double factor[] = {1.4, 0.7, 1.3, 0.8, 1.25, 0.75, 1.6, 0.85, 0.6, 1.2, 1.5};
    tw_dvfs_params p = truth;
    double *v[] = {&p.a_l, &p.b_l, &p.a_d, &p.b_d, &p.l_l2, &p.d_l2, &p.l_inst, &p.d_inst, &p.l_sh, &p.d_sh, &p.d_dp};
    for (size_t k = 0; k < sizeof v / sizeof v[0]; k++)
        *v[k] *= factor[k];
    snprintf(p.name, sizeof p.name, "start");
    return p;
}

static double truth_value(int k)
{
    const double v[TW_DVFS_FIT_PARAMS] = {truth.a_l,    truth.b_l,    truth.a_d,  truth.b_d,  truth.l_l2, truth.d_l2,
                                          truth.l_inst, truth.d_inst, truth.l_sh, truth.d_sh, truth.d_dp};
    return v[k];
}

static int param_index(const tw_dvfs_fit *fit, const char *key)
{
    for (int k = 0; k < TW_DVFS_FIT_PARAMS; k++)
        if (!strcmp(fit->param[k].key, key)) return k;
    fail_msg("no fitted parameter %s", key);
    return -1;
}

/* The check that can fail: all eleven parameters come back from rows the model made, from 0.6-1.6x off. */
static void test_recovers_synthetic(void **state)
{
    (void)state;
    tw_dvfs_row rows[MAX_ROWS];
    const tw_dvfs_row *ptrs[MAX_ROWS];
    size_t n = synth_rows(&truth, NULL, mems_mhz, NMEMS, rows, ptrs);
    tw_dvfs_params start = perturbed();
    tw_dvfs_fit fit;
    assert_int_equal(tw_dvfs_fit_rows(&start, ptrs, n, &fit), TW_OK);
    assert_int_equal(fit.n, n);
    assert_int_equal(fit.mem_clocks, NMEMS);
    assert_int_equal(fit.free, TW_DVFS_FIT_PARAMS);
    assert_true(fit.start_mape > 0.05); /* the start is really off */
    if (!(fit.mape < 1e-6)) fail_msg("in-sample MAPE %.3g on rows the model made", fit.mape);
    for (int k = 0; k < TW_DVFS_FIT_PARAMS; k++) {
        const tw_dvfs_fit_param *fp = &fit.param[k];
        assert_int_equal(fp->hold, TW_DVFS_FITTED);
        assert_false(fp->at_bound);
        if (!(fabs(fp->value / truth_value(k) - 1) < 1e-4))
            fail_msg("%s: fitted %.8g, true %.8g (start %.8g)", fp->key, fp->value, truth_value(k), fp->start);
    }
    assert_true(fit.params.a_l == fit.param[0].value && fit.params.w_max == truth.w_max);
}

/* One memory clock, no latency-bound row, no FP64: what cannot be identified is held, and says why. */
static void test_holds_unidentified(void **state)
{
    (void)state;
    static const char *const skip[] = {"latency", "pointer", "fp64", NULL};
    static const double one_mem[] = {877};
    tw_dvfs_row rows[MAX_ROWS];
    const tw_dvfs_row *ptrs[MAX_ROWS];
    size_t n = synth_rows(&truth, skip, one_mem, 1, rows, ptrs);
    tw_dvfs_params start = perturbed();
    start.a_l = truth.a_l; /* the held ones at their true values, so that the rest can be recovered */
    start.a_d = truth.a_d;
    tw_dvfs_fit fit;
    assert_int_equal(tw_dvfs_fit_rows(&start, ptrs, n, &fit), TW_OK);
    assert_int_equal(fit.mem_clocks, 1);
    assert_int_equal(fit.param[param_index(&fit, "a_L")].hold, TW_DVFS_HELD_ONE_MEM_CLOCK);
    assert_int_equal(fit.param[param_index(&fit, "a_D")].hold, TW_DVFS_HELD_ONE_MEM_CLOCK);
    assert_int_equal(fit.param[param_index(&fit, "L_L2")].hold, TW_DVFS_HELD_NO_EFFECT);
    assert_int_equal(fit.param[param_index(&fit, "D_DP")].hold, TW_DVFS_HELD_NO_EFFECT);
    /* without latency-bound rows L_INST and L_sh are both constants in T_sm: the smaller (L_INST) is held */
    const tw_dvfs_fit_param *l_inst = &fit.param[param_index(&fit, "L_INST")];
    assert_int_equal(l_inst->hold, TW_DVFS_HELD_COLLINEAR);
    assert_int_equal(l_inst->like, param_index(&fit, "L_sh"));
    assert_int_equal(fit.free, TW_DVFS_FIT_PARAMS - 5);
    for (int k = 0; k < TW_DVFS_FIT_PARAMS; k++) /* held: exactly the start value */
        if (fit.param[k].hold != TW_DVFS_FITTED) assert_true(fit.param[k].value == fit.param[k].start);
    assert_string_equal(tw_dvfs_hold_name(TW_DVFS_HELD_ONE_MEM_CLOCK), "one memory clock");
    /* b_D takes up a_D's part (one number at one memory clock); L_sh carries L_INST's constant: exact again */
    if (!(fit.mape < 1e-6)) fail_msg("in-sample MAPE %.3g with the unidentified parameters held", fit.mape);
}

/* A start of 0 (a_L, a_D of a set measured at one clock pair) cannot move in log parameters: held, not NaN. */
static void test_zero_start(void **state)
{
    (void)state;
    tw_dvfs_row rows[MAX_ROWS];
    const tw_dvfs_row *ptrs[MAX_ROWS];
    size_t n = synth_rows(&truth, NULL, mems_mhz, NMEMS, rows, ptrs);
    tw_dvfs_params start = perturbed();
    start.a_d = 0;
    tw_dvfs_fit fit;
    assert_int_equal(tw_dvfs_fit_rows(&start, ptrs, n, &fit), TW_OK);
    const tw_dvfs_fit_param *a_d = &fit.param[param_index(&fit, "a_D")];
    assert_int_equal(a_d->hold, TW_DVFS_HELD_ZERO_START);
    assert_true(a_d->value == 0 && fit.params.a_d == 0);
    assert_int_equal(fit.free, TW_DVFS_FIT_PARAMS - 1);
    assert_true(isfinite(fit.mape) && fit.mape < fit.start_mape);
    for (int k = 0; k < TW_DVFS_FIT_PARAMS; k++)
        assert_true(isfinite(fit.param[k].value));
}

/* Each row in exactly one fold, a group never split, folds capped at the groups, few pairs: one per fold. */
static void test_folds(void **state)
{
    (void)state;
    tw_dvfs_row rows[MAX_ROWS];
    const tw_dvfs_row *ptrs[MAX_ROWS];
    size_t n = synth_rows(&truth, NULL, mems_mhz, NMEMS, rows, ptrs), fold[MAX_ROWS], groups;
    struct {
        tw_dvfs_cv_by by;
        size_t k, want_folds, want_groups;
    } cases[] = {
        {TW_DVFS_BY_CLOCK_PAIR, 5, 5, NCORES * NMEMS}, /* 12 pairs */
        {TW_DVFS_BY_KERNEL, 5, 5, NKERNELS},
        {TW_DVFS_BY_KERNEL, 50, NKERNELS, NKERNELS}, /* capped: leave-one-kernel-out */
        {TW_DVFS_BY_CLOCK_PAIR, 3, 3, NCORES * NMEMS},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        size_t nf = tw_dvfs_folds(ptrs, n, cases[c].by, cases[c].k, fold, &groups);
        assert_int_equal(nf, cases[c].want_folds);
        assert_int_equal(groups, cases[c].want_groups);
        size_t count[MAX_ROWS] = {0};
        for (size_t i = 0; i < n; i++) {
            assert_true(fold[i] < nf);
            count[fold[i]]++;
            for (size_t j = 0; j < i; j++) { /* the same group, the same fold */
                bool same = cases[c].by == TW_DVFS_BY_KERNEL
                                ? !strcmp(rows[i].app, rows[j].app)
                                : rows[i].core_mhz == rows[j].core_mhz && rows[i].mem_mhz == rows[j].mem_mhz;
                if (same) assert_int_equal(fold[i], fold[j]);
            }
        }
        size_t total = 0;
        for (size_t f = 0; f < nf; f++) {
            assert_true(count[f] > 0);
            total += count[f];
        }
        assert_int_equal(total, n);
    }
    /* 4 pairs (< TW_DVFS_CV_MIN_PAIRS): one pair per fold whatever k says */
    static const double one_mem[] = {877};
    n = synth_rows(&truth, NULL, one_mem, 1, rows, ptrs);
    assert_int_equal(tw_dvfs_folds(ptrs, n, TW_DVFS_BY_CLOCK_PAIR, 2, fold, &groups), NCORES);
    assert_int_equal(groups, NCORES);
    assert_int_equal(tw_dvfs_folds(ptrs, n, TW_DVFS_BY_KERNEL, 1, fold, &groups), 0); /* k < 2 */
}

/* Cross-validated on model-made rows: by clock pair the held-out error is ~0 (every fold identifies every
 * parameter, so the fit predicts clock pairs it did not see); leaving one kernel out, it is ~0 whenever the
 * other kernels identify every parameter, and not when the kernel left out was the only one to show a
 * parameter (fp64 for D_DP): that parameter keeps its wrong start, as it must, since nothing showed it. */
static void test_cross_validation_synthetic(void **state)
{
    (void)state;
    tw_dvfs_row rows[MAX_ROWS];
    const tw_dvfs_row *ptrs[MAX_ROWS];
    size_t n = synth_rows(&truth, NULL, mems_mhz, NMEMS, rows, ptrs);
    tw_dvfs_params start = perturbed();
    for (int by = TW_DVFS_BY_CLOCK_PAIR; by <= TW_DVFS_BY_KERNEL; by++) {
        size_t k = by == TW_DVFS_BY_KERNEL ? NKERNELS : 4, test = 0, identified = 0;
        tw_dvfs_cv cv;
        assert_int_equal(tw_dvfs_cross_validate(&start, ptrs, n, (tw_dvfs_cv_by)by, k, NULL, NULL, &cv), TW_OK);
        assert_int_equal(cv.nfolds, k);
        for (size_t f = 0; f < cv.nfolds; f++) {
            const tw_dvfs_fold *fo = &cv.folds[f];
            test += fo->test;
            assert_int_equal(fo->train + fo->test, n);
            assert_true(fo->start_mape > 0.01);
            /* only what the training rows cannot show is held, so the training rows are fitted exactly */
            if (!(fo->train_mape < 1e-6)) fail_msg("fold %s: training MAPE %.3g", fo->held_out, fo->train_mape);
            if (fo->free == TW_DVFS_FIT_PARAMS) {
                identified++;
                if (!(fo->mape < 1e-6))
                    fail_msg("by %s, fold %zu (%s): held-out MAPE %.3g", tw_dvfs_cv_by_name(cv.by), f, fo->held_out,
                             fo->mape);
            }
            if (!strcmp(fo->held_out, "fp64")) {
                assert_true(fo->free < TW_DVFS_FIT_PARAMS); /* D_DP: no other kernel has FP64 instructions */
                assert_true(fo->mape > 0.01);
            }
        }
        assert_int_equal(test, n);
        if (by == TW_DVFS_BY_CLOCK_PAIR) {
            assert_int_equal(identified, k);
            if (!(cv.mape < 1e-6)) fail_msg("held-out MAPE by clock pair %.3g", cv.mape);
        } else {
            assert_true(identified >= 2); /* stream, l2hits: their parameters show in other kernels too */
        }
        tw_dvfs_cv_free(&cv);
    }
}

/* A fitted set written as a parameter file loads back with the same numbers. */
static void test_write_load(void **state)
{
    (void)state;
    const char *path = tw_test_path(0, "fitted.json");
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    assert_int_equal(tw_dvfs_params_write(f, &truth), TW_OK);
    assert_int_equal(fclose(f), 0);
    tw_dvfs_params back;
    assert_int_equal(tw_dvfs_params_load(path, &back), TW_OK);
    assert_string_equal(back.name, truth.name);
    assert_string_equal(back.source, truth.source);
    const double written[] = {truth.a_l,       truth.b_l,    truth.a_d,  truth.b_d,  truth.l_l2,         truth.d_l2,
                              truth.l_inst,    truth.d_inst, truth.l_sh, truth.d_sh, truth.d_dp,         truth.d_tex,
                              truth.tex_units, truth.w_max,  truth.n_sm, truth.c_sm, truth.occ_threshold};
    const double read[] = {back.a_l,       back.b_l,    back.a_d,  back.b_d,  back.l_l2,         back.d_l2,
                           back.l_inst,    back.d_inst, back.l_sh, back.d_sh, back.d_dp,         back.d_tex,
                           back.tex_units, back.w_max,  back.n_sm, back.c_sm, back.occ_threshold};
    for (size_t k = 0; k < sizeof written / sizeof written[0]; k++)
        if (!(fabs(written[k] - read[k]) <= 1e-9 * written[k]))
            fail_msg("field %zu: %.12g written, %.12g read", k, written[k], read[k]);
}

static bool open_shared(const char *file, tw_dvfs_data *d)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/data/dvfs-wang-chu/%s-Performance.csv", TW_SHARED_DIR, file);
    FILE *probe = fopen(path, "r");
    if (!probe) return false;
    fclose(probe);
    assert_int_equal(tw_dvfs_load(path, d), TW_OK);
    return true;
}

static void load_published(const char *gpu, tw_dvfs_params *p)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/../../data/dvfs/%s.json", TW_TEST_DATA, gpu);
    assert_int_equal(tw_dvfs_params_load(path, p), TW_OK);
}

static size_t paper_rows(const tw_dvfs_data *d, const tw_dvfs_row **ptrs)
{
    size_t n = 0;
    for (size_t i = 0; i < d->n; i++)
        if (tw_dvfs_in_paper_set(&d->rows[i])) ptrs[n++] = &d->rows[i];
    return n;
}

/* On the authors' data: least squares is not worse in-sample than the published set (both honest). */
static void test_shared_not_worse(void **state)
{
    (void)state;
    static const struct {
        const char *gpu, *file;
    } sets[] = {
        {"gtx980", "gtx980-low-dvfs-real-small-workload"},
        {"gtx1080ti", "gtx1080ti-dvfs-real"},
        {"p100", "p100-dvfs-real"},
        {"v100", "v100-dvfs-real"},
    };
    for (size_t s = 0; s < sizeof sets / sizeof sets[0]; s++) {
        tw_dvfs_data d;
        if (!open_shared(sets[s].file, &d)) skip();
        tw_dvfs_params p;
        load_published(sets[s].gpu, &p);
        const tw_dvfs_row **ptrs = calloc(d.n, sizeof *ptrs);
        assert_non_null(ptrs);
        size_t n = paper_rows(&d, ptrs);
        tw_dvfs_fit fit;
        assert_int_equal(tw_dvfs_fit_rows(&p, ptrs, n, &fit), TW_OK);
        tw_dvfs_eval e; /* the fit's start MAPE is eval's honest MAPE */
        assert_int_equal(tw_dvfs_evaluate(&p, &d, false, false, &e), TW_OK);
        assert_true(fabs(e.mape - fit.start_mape) < 1e-12);
        tw_dvfs_eval_free(&e);
        if (!(fit.mape <= fit.start_mape))
            fail_msg("%s: fitted MAPE %.4f %% above the published %.4f %%", sets[s].gpu, 100 * fit.mape,
                     100 * fit.start_mape);
        bool one_mem = fit.mem_clocks == 1;
        assert_int_equal(fit.param[param_index(&fit, "a_D")].hold == TW_DVFS_HELD_ONE_MEM_CLOCK, one_mem);
        free(ptrs);
        tw_dvfs_data_free(&d);
    }
}

/* Fitted on half of the GTX 980 kernels, written out and loaded back, the set predicts the other half. */
static void test_shared_unseen_kernels(void **state)
{
    (void)state;
    tw_dvfs_data d;
    if (!open_shared("gtx980-low-dvfs-real-small-workload", &d)) skip();
    tw_dvfs_params p;
    load_published("gtx980", &p);
    const tw_dvfs_row **all = calloc(d.n, sizeof *all), **train = calloc(d.n, sizeof *train),
                      **test = calloc(d.n, sizeof *test);
    assert_true(all && train && test);
    size_t n = paper_rows(&d, all), ntrain = 0, ntest = 0;
    for (size_t i = 0; i < n; i++) /* by name: A-m fitted, n-z (and lower-case names after 'm') held out */
        if (strcmp(all[i]->app, "m") < 0)
            train[ntrain++] = all[i];
        else
            test[ntest++] = all[i];
    assert_true(ntrain > 0 && ntest > 0);
    tw_dvfs_fit fit;
    assert_int_equal(tw_dvfs_fit_rows(&p, train, ntrain, &fit), TW_OK);
    const char *path = tw_test_path(1, "gtx980-fit.json");
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    assert_int_equal(tw_dvfs_params_write(f, &fit.params), TW_OK);
    assert_int_equal(fclose(f), 0);
    tw_dvfs_params back;
    assert_int_equal(tw_dvfs_params_load(path, &back), TW_OK);
    double direct, loaded;
    assert_int_equal(tw_dvfs_rows_mape(&fit.params, test, ntest, &direct), TW_OK);
    assert_int_equal(tw_dvfs_rows_mape(&back, test, ntest, &loaded), TW_OK);
    assert_true(isfinite(loaded) && loaded > 0);
    if (!(fabs(loaded - direct) < 1e-6)) fail_msg("unseen MAPE %.8f loaded, %.8f fitted", loaded, direct);
    free(all);
    free(train);
    free(test);
    tw_dvfs_data_free(&d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_recovers_synthetic),
        cmocka_unit_test(test_holds_unidentified),
        cmocka_unit_test(test_zero_start),
        cmocka_unit_test(test_folds),
        cmocka_unit_test(test_cross_validation_synthetic),
        cmocka_unit_test(test_write_load),
        cmocka_unit_test(test_shared_not_worse),
        cmocka_unit_test(test_shared_unseen_kernels),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
