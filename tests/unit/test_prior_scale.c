/* Unit tests of a prior's scale from the coefficients it is for
 * (src/estimate/prior_scale.c) against independent calculations: the
 * closed form where every variance is the same, the defining equation
 * sum_j b_j^2 / (s^2 + v_j) = n evaluated here, draws from a known scale,
 * and the H100 realapps PyTorch run's own terms, on which the estimator's
 * earlier fixed-point iteration went round a cycle. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "tw_test.h"

#include "core/rng.h"
#include "estimate/prior_scale.h"

static void near(double got, double want, double tol, const char *what)
{
    if (!(fabs(got - want) <= tol)) fail_msg("%s: %.12g, expected %.12g (+- %g)", what, got, want, tol);
}

/* sum_j b_j^2 / (s^2 + v_j) - n, written out again here */
static double equation(const double *b, const double *v, size_t n, double s)
{
    double q = 0;
    for (size_t j = 0; j < n; j++)
        q += b[j] * b[j] / (s * s + v[j]);
    return q - (double)n;
}

/* One variance for all: s^2 = mean(b^2) - v. */
static void test_equal_variances(void **state)
{
    (void)state;
    const double b[] = {30, -40, 50, 0}, v[] = {100, 100, 100, 100};
    near(tw_prior_scale_sd(b, v, 4), sqrt(1250.0 - 100.0), 1e-6, "sqrt(mean b^2 - v)");
}

/* Every coefficient within its error of 0 (sum b^2 / v <= n): 0; none: 0. */
static void test_within_errors(void **state)
{
    (void)state;
    const double b[] = {1, -2, 0.5}, v[] = {4, 9, 1};
    assert_true(tw_prior_scale_sd(b, v, 3) == 0);
    assert_true(tw_prior_scale_sd(b, v, 0) == 0);
    const double at[] = {2, -3}, vat[] = {4, 9}; /* exactly n: 0 too */
    assert_true(tw_prior_scale_sd(at, vat, 2) == 0);
}

/* Entries without a usable variance (0, NaN, infinite) or coefficient are left out. */
static void test_unusable_left_out(void **state)
{
    (void)state;
    const double b[] = {30, -40, 50, 0, 1e6, NAN, 7}, v[] = {100, 100, 100, 100, 0, 100, INFINITY};
    near(tw_prior_scale_sd(b, v, 7), sqrt(1250.0 - 100.0), 1e-6, "the usable four");
}

/* 4000 coefficients drawn from N(0, 40^2 + v_j), v_j from 1 to 2500 W^2:
 * the scale within 5 % of 40 (its sampling error here is ~2 %). */
static void test_draws(void **state)
{
    (void)state;
    enum { N = 4000 };
    static double b[N], v[N];
    tw_rng r;
    tw_rng_seed(&r, 20261128, 1);
    for (size_t j = 0; j < N; j++) {
        v[j] = tw_rng_range(&r, 1, 2500);
        b[j] = sqrt(40.0 * 40.0 + v[j]) * tw_rng_gauss(&r);
    }
    double s = tw_prior_scale_sd(b, v, N);
    near(s, 40, 2, "the scale the draws were made with");
    near(equation(b, v, N, s), 0, 1e-6 * N, "its equation");
}

/* The own terms of the H100's realapps PyTorch run (results/h100/realapps-s41b,
 * the estimator's step 2 with copies in the counters' model): a GEMM at
 * +524 +- 29 W beside 28 names about within their errors of 0. */
static const double own_b[] = {-518.82, 524.08,  -14.17,  -288.28, 181.98,  218.42,  -174.66, 416.64,  147.88, 102.90,
                               -456.58, -122.82, -96.75,  -231.35, -30.74,  62.07,   -527.33, -226.64, 122.97, 254.86,
                               191.78,  48.96,   -394.77, -242.68, -369.67, -399.09, -64.02,  -86.37,  -102.40};
static const double own_sd[] = {466.64, 28.62,  8.27,   429.78, 544.43, 526.97, 396.78, 555.39, 530.85, 561.43,
                                400.12, 314.76, 509.49, 490.86, 562.35, 499.11, 505.45, 556.42, 570.46, 543.02,
                                565.95, 570.32, 435.02, 490.15, 487.96, 487.87, 541.06, 541.88, 460.77};
#define NOWN (sizeof own_b / sizeof own_b[0])

/* The fixed-point iteration the estimator used before on these: s^2 the
 * mean of b^2 - v weighted by 1 / (s^2 + v)^2, 50 steps from 0; its last
 * steps' spread (the cycle: 45, 310 and 0 W over and over). */
static double old_iteration_spread(const double *b, const double *v, size_t n)
{
    double s2 = 0, lo = INFINITY, hi = 0;
    for (int it = 0; it < 50; it++) {
        double num = 0, den = 0;
        for (size_t j = 0; j < n; j++) {
            double w = 1.0 / ((s2 + v[j]) * (s2 + v[j]));
            num += w * (b[j] * b[j] - v[j]);
            den += w;
        }
        s2 = fmax(0, num / den);
        if (it >= 40) {
            lo = fmin(lo, sqrt(s2));
            hi = fmax(hi, sqrt(s2));
        }
    }
    return hi - lo;
}

static void test_realapps_own_terms(void **state)
{
    (void)state;
    double v[NOWN];
    for (size_t j = 0; j < NOWN; j++)
        v[j] = own_sd[j] * own_sd[j];
    assert_true(old_iteration_spread(own_b, v, NOWN) > 100); /* the defect this module replaced */
    /* all 29: the one root of the equation, which the GEMM alone puts at ~111 W */
    double s = tw_prior_scale_sd(own_b, v, NOWN);
    near(equation(own_b, v, NOWN, s), 0, 1e-6, "its equation at the root");
    assert_true(equation(own_b, v, NOWN, 0.99 * s) > 0 && equation(own_b, v, NOWN, 1.01 * s) < 0);
    near(s, 111.2, 0.5, "the root");
    /* robust: the GEMM apart (18 of its errors from 0), the others' scale 0 */
    bool apart[NOWN];
    assert_true(tw_prior_scale_robust_sd(own_b, v, NOWN, 5.0, apart) == 0);
    for (size_t j = 0; j < NOWN; j++)
        assert_int_equal(apart[j], j == 1);
    double rest_b[NOWN - 1], rest_v[NOWN - 1];
    for (size_t j = 0, k = 0; j < NOWN; j++)
        if (j != 1) {
            rest_b[k] = own_b[j];
            rest_v[k++] = v[j];
        }
    assert_true(equation(rest_b, rest_v, NOWN - 1, 0) <= 0); /* the others within their errors of 0 */
}

/* Robust: 300 coefficients from N(0, 30^2 + v) and 3 far out: the 3 apart,
 * the scale within 15 % of 30; none apart where none is far out. */
static void test_robust_draws(void **state)
{
    (void)state;
    enum { N = 303 };
    double b[N], v[N];
    bool apart[N];
    tw_rng r;
    tw_rng_seed(&r, 7, 2);
    for (size_t j = 0; j < N; j++) {
        v[j] = tw_rng_range(&r, 25, 400);
        b[j] = j < 300 ? sqrt(30.0 * 30.0 + v[j]) * tw_rng_gauss(&r) : (j % 2 ? 1 : -1) * 2000.0;
    }
    double s = tw_prior_scale_robust_sd(b, v, N, 5.0, apart);
    near(s, 30, 4.5, "the scale without the three");
    size_t n = 0;
    for (size_t j = 0; j < N; j++)
        n += apart[j];
    assert_int_equal(n, 3);
    assert_true(apart[300] && apart[301] && apart[302]);
    assert_true(tw_prior_scale_sd(b, v, N) > 100); /* with them: wider than any of the 300 draws */
    s = tw_prior_scale_robust_sd(b, v, 300, 5.0, apart);
    n = 0;
    for (size_t j = 0; j < 300; j++)
        n += apart[j];
    assert_int_equal(n, 0);
    near(s, tw_prior_scale_sd(b, v, 300), 1e-9, "none apart: the plain scale");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_equal_variances),    cmocka_unit_test(test_within_errors),
        cmocka_unit_test(test_unusable_left_out),  cmocka_unit_test(test_draws),
        cmocka_unit_test(test_realapps_own_terms), cmocka_unit_test(test_robust_draws),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
