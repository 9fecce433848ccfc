/* Unit tests of least squares with sign constraints on the normal equations
 * (src/core/nnls.c) against brute force: on small random problems every
 * split of the constrained variables into "held at 0" and "free" is solved
 * unconstrained (Gaussian elimination here, not the module's Cholesky); the
 * answer is the feasible one that satisfies the optimality conditions
 * (a variable held at 0 has a gradient that would not lower the objective).
 * The objective is strictly convex, so exactly one split qualifies. With
 * upper bounds, each variable may also be held at its bound. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tw_test.h"

#include "core/nnls.h"
#include "core/rng.h"

#define PMAX 7

/* Solves the free block of G x = c by Gaussian elimination with partial
 * pivoting; the other variables are held at hval[j] (0 when hval is NULL).
 * False when singular. */
static bool solve_free(const double *G, const double *c, size_t p, const bool *held, const double *hval, double *x)
{
    size_t idx[PMAX], m = 0;
    for (size_t j = 0; j < p; j++) {
        x[j] = held[j] && hval ? hval[j] : 0;
        if (!held[j]) idx[m++] = j;
    }
    double A[PMAX][PMAX + 1];
    for (size_t a = 0; a < m; a++) {
        for (size_t b = 0; b < m; b++)
            A[a][b] = G[idx[a] * p + idx[b]];
        A[a][m] = c[idx[a]];
        for (size_t k = 0; k < p; k++)
            if (held[k]) A[a][m] -= G[idx[a] * p + k] * x[k];
    }
    for (size_t k = 0; k < m; k++) {
        size_t piv = k;
        for (size_t r = k + 1; r < m; r++)
            if (fabs(A[r][k]) > fabs(A[piv][k])) piv = r;
        if (fabs(A[piv][k]) < 1e-12) return false;
        for (size_t col = 0; col <= m; col++) {
            double t = A[k][col];
            A[k][col] = A[piv][col];
            A[piv][col] = t;
        }
        for (size_t r = k + 1; r < m; r++) {
            double f = A[r][k] / A[k][k];
            for (size_t col = k; col <= m; col++)
                A[r][col] -= f * A[k][col];
        }
    }
    for (size_t k = m; k-- > 0;) {
        double v = A[k][m];
        for (size_t col = k + 1; col < m; col++)
            v -= A[k][col] * x[idx[col]];
        x[idx[k]] = v / A[k][k];
    }
    return true;
}

static double objective(const double *G, const double *c, size_t p, const double *x)
{
    double f = 0;
    for (size_t i = 0; i < p; i++) {
        f -= c[i] * x[i];
        for (size_t j = 0; j < p; j++)
            f += 0.5 * x[i] * G[i * p + j] * x[j];
    }
    return f;
}

/* The brute-force optimum: over every subset of the constrained variables
 * held at 0, the feasible unconstrained solutions; the lowest objective. */
static void brute_force(const double *G, const double *c, size_t p, const bool *nonneg, double *best, bool *best_held)
{
    double fbest = INFINITY;
    for (unsigned mask = 0; mask < (1u << p); mask++) {
        bool held[PMAX], ok = true;
        for (size_t j = 0; j < p; j++) {
            held[j] = (mask >> j) & 1u;
            if (held[j] && !nonneg[j]) ok = false; /* only constrained variables can be held */
        }
        if (!ok) continue;
        double x[PMAX];
        if (!solve_free(G, c, p, held, NULL, x)) continue;
        for (size_t j = 0; j < p; j++)
            if (nonneg[j] && x[j] < -1e-12) ok = false;
        if (!ok) continue;
        double f = objective(G, c, p, x);
        if (f < fbest) {
            fbest = f;
            memcpy(best, x, p * sizeof *x);
            memcpy(best_held, held, p * sizeof *held);
        }
    }
}

/* A random least-squares problem of p unknowns on its normal equations
 * (G = A'A, c = A'y, a few more rows than unknowns; correlated columns when
 * `correlated`), about 3 in 4 unknowns constrained. */
static void random_problem(tw_rng *rng, size_t p, bool correlated, double *G, double *c, bool *nonneg)
{
    size_t rows = p + 3 + (size_t)(tw_rng_uniform(rng) * 6);
    double A[20][PMAX], y[20];
    for (size_t r = 0; r < rows; r++) {
        for (size_t j = 0; j < p; j++)
            A[r][j] = tw_rng_gauss(rng) + (correlated ? 0.8 : 0.0);
        y[r] = 2.0 * tw_rng_gauss(rng);
    }
    for (size_t i = 0; i < p; i++) {
        c[i] = 0;
        for (size_t r = 0; r < rows; r++)
            c[i] += A[r][i] * y[r];
        for (size_t j = 0; j < p; j++) {
            G[i * p + j] = 0;
            for (size_t r = 0; r < rows; r++)
                G[i * p + j] += A[r][i] * A[r][j];
        }
        nonneg[i] = tw_rng_uniform(rng) < 0.75;
    }
}

/* The brute-force optimum with upper bounds too: every variable free, held
 * at 0 (if constrained) or held at its upper bound (if finite); the lowest
 * objective among the feasible. */
static void brute_force_box(const double *G, const double *c, size_t p, const bool *nonneg, const double *upper,
                            double *best, int *best_state)
{
    double fbest = INFINITY;
    unsigned total = 1;
    for (size_t j = 0; j < p; j++)
        total *= 3;
    for (unsigned code = 0; code < total; code++) {
        bool held[PMAX], ok = true;
        double hval[PMAX];
        int state[PMAX];
        unsigned k = code;
        for (size_t j = 0; j < p; j++, k /= 3) {
            state[j] = (int)(k % 3); /* 0 free, 1 at 0, 2 at the upper bound */
            held[j] = state[j] != 0;
            hval[j] = state[j] == 2 ? upper[j] : 0;
            if ((state[j] == 1 && !nonneg[j]) || (state[j] == 2 && !isfinite(upper[j]))) ok = false;
        }
        if (!ok) continue;
        double x[PMAX];
        if (!solve_free(G, c, p, held, hval, x)) continue;
        for (size_t j = 0; j < p; j++)
            if ((nonneg[j] && x[j] < -1e-12) || x[j] > upper[j] * (1 + 1e-12) + 1e-12) ok = false;
        if (!ok) continue;
        double f = objective(G, c, p, x);
        if (f < fbest) {
            fbest = f;
            memcpy(best, x, p * sizeof *x);
            memcpy(best_state, state, p * sizeof *state);
        }
    }
}

/* Random problems (as test_against_brute_force) with upper bounds on some
 * variables, low enough to bind often. */
static void test_upper_bounds_against_brute_force(void **state)
{
    (void)state;
    tw_rng rng;
    tw_rng_seed(&rng, 11, 5);
    unsigned upper_seen = 0, zero_seen = 0, free_seen = 0;
    const size_t pmax = 6;
    for (int trial = 0; trial < 300; trial++) {
        size_t p = 1 + (size_t)(tw_rng_uniform(&rng) * pmax);
        if (p > pmax) p = pmax;
        double G[PMAX * PMAX], c[PMAX], upper[PMAX];
        bool nonneg[PMAX];
        random_problem(&rng, p, trial % 2, G, c, nonneg);
        for (size_t i = 0; i < p; i++)
            upper[i] = tw_rng_uniform(&rng) < 0.6 ? 0.05 + 0.4 * tw_rng_uniform(&rng) : INFINITY;
        double want[PMAX], got[PMAX];
        int want_state[PMAX];
        bool at_zero[PMAX], at_upper[PMAX];
        brute_force_box(G, c, p, nonneg, upper, want, want_state);
        assert_int_equal(tw_nnls_gram(G, c, p, nonneg, upper, got, at_zero, at_upper), TW_OK);
        for (size_t j = 0; j < p; j++) {
            double scale = fmax(1.0, fabs(want[j]));
            if (!(fabs(got[j] - want[j]) <= 1e-7 * scale))
                fail_msg("trial %d, p %zu, x[%zu]: %.12g, brute force %.12g", trial, p, j, got[j], want[j]);
            assert_true(got[j] <= upper[j]);
            if (want_state[j] == 2 && fabs(want[j]) > 1e-9) assert_true(at_upper[j]);
            upper_seen += want_state[j] == 2;
            zero_seen += want_state[j] == 1;
            free_seen += want_state[j] == 0;
        }
    }
    /* every kind of variable was exercised */
    assert_true(upper_seen > 50);
    assert_true(zero_seen > 50);
    assert_true(free_seen > 50);
}

static void test_against_brute_force(void **state)
{
    (void)state;
    tw_rng rng;
    tw_rng_seed(&rng, 7, 3);
    unsigned bound_seen = 0, free_seen = 0;
    for (int trial = 0; trial < 400; trial++) {
        size_t p = 1 + (size_t)(tw_rng_uniform(&rng) * PMAX);
        if (p > PMAX) p = PMAX;
        double G[PMAX * PMAX], c[PMAX];
        bool nonneg[PMAX];
        random_problem(&rng, p, trial % 2, G, c, nonneg);
        double want[PMAX], got[PMAX];
        bool want_held[PMAX], at_bound[PMAX];
        brute_force(G, c, p, nonneg, want, want_held);
        assert_int_equal(tw_nnls_gram(G, c, p, nonneg, NULL, got, at_bound, NULL), TW_OK);
        for (size_t j = 0; j < p; j++) {
            double scale = fmax(1.0, fabs(want[j]));
            if (!(fabs(got[j] - want[j]) <= 1e-7 * scale))
                fail_msg("trial %d, p %zu, x[%zu]: %.12g, brute force %.12g", trial, p, j, got[j], want[j]);
            if (nonneg[j]) assert_true(got[j] >= 0);
            /* held at 0 exactly where brute force holds it (a free variable
             * that lands on 0 by itself is either) */
            if (want_held[j] != at_bound[j] && fabs(want[j]) > 1e-9)
                fail_msg("trial %d, x[%zu]: at_bound %d, brute force held %d", trial, j, at_bound[j], want_held[j]);
            if (want_held[j])
                bound_seen++;
            else
                free_seen++;
        }
    }
    /* the problems exercised both sides of the constraint */
    assert_true(bound_seen > 100);
    assert_true(free_seen > 100);
}

/* A constrained variable whose unconstrained optimum is negative is held at
 * 0 (x = (-1, 2) unconstrained: with x0 >= 0 the answer is (0, c1/G11)). */
static void test_hand_worked(void **state)
{
    (void)state;
    /* G = [[2, 1], [1, 2]], unconstrained x = G^-1 c = (-1, 2) for c = (0, 3) */
    double G[4] = {2, 1, 1, 2}, c[2] = {0, 3}, x[2];
    bool nn[2] = {true, true}, free_first[2] = {false, true}, at[2];
    assert_int_equal(tw_nnls_gram(G, c, 2, nn, NULL, x, at, NULL), TW_OK);
    assert_true(fabs(x[0]) < 1e-12 && fabs(x[1] - 1.5) < 1e-12);
    assert_true(at[0] && !at[1]);
    /* unconstrained first variable: the plain solution */
    assert_int_equal(tw_nnls_gram(G, c, 2, free_first, NULL, x, NULL, NULL), TW_OK);
    assert_true(fabs(x[0] + 1) < 1e-12 && fabs(x[1] - 2) < 1e-12);
}

static void test_errors(void **state)
{
    (void)state;
    double G[1] = {1}, c[1] = {1}, x[1];
    bool nn[1] = {true};
    assert_int_equal(tw_nnls_gram(NULL, c, 1, nn, NULL, x, NULL, NULL), TW_EINVAL);
    assert_int_equal(tw_nnls_gram(G, NULL, 1, nn, NULL, x, NULL, NULL), TW_EINVAL);
    assert_int_equal(tw_nnls_gram(G, c, 1, nn, NULL, NULL, NULL, NULL), TW_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_against_brute_force),
        cmocka_unit_test(test_upper_bounds_against_brute_force),
        cmocka_unit_test(test_hand_worked),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
