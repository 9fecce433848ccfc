/* Unit tests of the small least-squares solver (src/core/lsq.c): exact data
 * is recovered to rounding even when the regressors differ by 13 orders of
 * magnitude (instructions and seconds, as in truewatt isa), noisy data within
 * its standard error, and a regressor that is a combination of the others,
 * or zero, is refused rather than solved. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tw_test.h"

#include "core/lsq.h"
#include "core/rng.h"

#define N 12
#define P 4

/* Rows like one instruction's launches: ops, loop iterations, seconds, 1. */
static void design(double *X)
{
    for (int i = 0; i < N; i++) {
        double t = 0.08 + 0.02 * i, kind = i % 3;
        X[i * P + 0] = kind == 0 ? 3e13 * t : 0;
        X[i * P + 1] = kind == 2 ? 0 : 2e9 * t * (kind == 0 ? 0.3 : 1.0);
        X[i * P + 2] = t;
        X[i * P + 3] = 1;
    }
}

static const double truth[P] = {4.2e-12, 3.0e-11, 12.5, 0.3};

static void test_exact(void **state)
{
    (void)state;
    double X[N * P], y[N];
    design(X);
    for (int i = 0; i < N; i++) {
        y[i] = 0;
        for (int j = 0; j < P; j++)
            y[i] += X[i * P + j] * truth[j];
    }
    tw_lsq_fit f;
    assert_true(tw_lsq_solve(X, y, N, P, &f));
    for (int j = 0; j < P; j++)
        if (!(fabs(f.beta[j] - truth[j]) <= 1e-9 * fabs(truth[j])))
            fail_msg("beta[%d] = %.12g, expected %.12g", j, f.beta[j], truth[j]);
    assert_true(f.rms < 1e-9);
    assert_true(f.r2 > 1 - 1e-12);
}

static void test_noise(void **state)
{
    (void)state;
    double X[N * P], y[N];
    design(X);
    tw_rng r;
    tw_rng_seed(&r, 7, 0);
    for (int i = 0; i < N; i++) {
        y[i] = tw_rng_gauss(&r) * 0.05;
        for (int j = 0; j < P; j++)
            y[i] += X[i * P + j] * truth[j];
    }
    tw_lsq_fit f;
    assert_true(tw_lsq_solve(X, y, N, P, &f));
    /* 0.05 J of noise on ~30 J of instruction energy */
    assert_true(fabs(f.beta[0] / truth[0] - 1) < 0.02);
    assert_true(f.rms > 0.02 && f.rms < 0.08);
    assert_true(f.r2 > 0.99 && f.r2 < 1);
}

static void test_refused(void **state)
{
    (void)state;
    double X[N * P], y[N] = {0};
    tw_lsq_fit f;
    memset(&f, 0, sizeof f);
    design(X);
    for (int i = 0; i < N; i++) /* the loop count a multiple of the time */
        X[i * P + 1] = 5e9 * X[i * P + 2];
    assert_false(tw_lsq_solve(X, y, N, P, &f));
    design(X);
    for (int i = 0; i < N; i++)
        X[i * P + 0] = 0;
    assert_false(tw_lsq_solve(X, y, N, P, &f));
    design(X);
    assert_false(tw_lsq_solve(X, y, P - 1, P, &f)); /* fewer rows than unknowns */
    assert_false(tw_lsq_solve(X, y, N, TW_LSQ_MAX_P + 1, &f));
    assert_false(tw_lsq_solve(NULL, y, N, P, &f));
    assert_true(f.beta[0] == 0 && f.rms == 0); /* untouched */
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_exact), cmocka_unit_test(test_noise),
                                       cmocka_unit_test(test_refused)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
