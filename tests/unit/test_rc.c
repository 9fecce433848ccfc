/* Unit tests of the RC-lag correction (src/correct/rc.c): Burtscher §5 step 3,
 * P_true(t_i) = P(t_i) + C dP/dt(t_i), with the slope from the neighbours. */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tw_test.h"

#include "correct/rc.h"

#define C_S 0.84
#define P0_W 25.0
#define PK_W 158.0

/* A small fixed-seed generator of our own (splitmix64), for the jitter. */
static uint64_t rng_state;
static double uniform01(void)
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return (double)(z >> 11) * 0x1.0p-53;
}

/* The sensor's output after a step from P0 to Pk at t1 = 0, sampled every
 * 15 ms +- 1.5 ms: P_m(t) = Pk + (P0 - Pk) exp(-t / C). */
static size_t rc_response(double *t, double *p, size_t cap, double span_s)
{
    size_t n = 0;
    for (double x = 0.0; x < span_s && n < cap; x += 0.0135 + 0.003 * uniform01()) {
        t[n] = x;
        p[n] = PK_W + (P0_W - PK_W) * exp(-x / C_S);
        n++;
    }
    return n;
}

enum { CAP = 4096 };

static void check_recovers_step(int half)
{
    static double t[CAP], p[CAP], to[CAP], ro[CAP], co[CAP];
    rng_state = 12345;
    size_t n = rc_response(t, p, CAP, 3.0);
    assert_true(n > 150);
    tw_rc rc;
    tw_rc_init(&rc, C_S, half);
    size_t m = tw_rc_run(&rc, t, p, n, to, ro, co);
    m += tw_rc_finish(&rc, to + m, ro + m, co + m);
    assert_int_equal(m, n);
    for (size_t i = 0; i < n; i++) {
        assert_true(to[i] == t[i]);
        assert_true(ro[i] == p[i]);
        if (i < (size_t)half || i + (size_t)half >= n) continue; /* one-sided slopes at the edges */
        double rel = fabs(co[i] - PK_W) / PK_W;
        if (rel > 0.005)
            fail_msg("half width %d: sample %zu (t = %g s, raw %g W) corrected to %g W, want %g W +- 0.5%%", half, i,
                     t[i], p[i], co[i], PK_W);
    }
    /* the raw readings themselves are far from Pk: the correction did the work */
    assert_true(fabs(p[n / 10] - PK_W) / PK_W > 0.2);
}

static void test_recovers_step_paper_formula(void **state)
{
    (void)state;
    check_recovers_step(1);
}

static void test_recovers_step_ls_slope(void **state)
{
    (void)state;
    check_recovers_step(3);
}

/* k = 1 on three points, by hand:
 *   t = 0, 0.01, 0.03 s; P = 10, 12, 20 W; C = 0.5 s
 *   first:  one-sided  10 + 0.5 (12 - 10) / 0.01 = 110
 *   middle: symmetric  12 + 0.5 (20 - 10) / 0.03 = 178.666...
 *   last:   one-sided  20 + 0.5 (20 - 12) / 0.02 = 220 */
static void test_symmetric_formula_by_hand(void **state)
{
    (void)state;
    const double t[] = {0.0, 0.01, 0.03}, p[] = {10.0, 12.0, 20.0};
    double to[3], ro[3], co[3];
    tw_rc rc;
    tw_rc_init(&rc, 0.5, 1);
    size_t m = tw_rc_run(&rc, t, p, 3, to, ro, co);
    assert_int_equal(m, 2); /* the last sample waits for its right neighbour */
    assert_int_equal(tw_rc_finish(&rc, to + m, ro + m, co + m), 1);
    assert_true(to[0] == 0.0 && to[1] == 0.01 && to[2] == 0.03);
    assert_true(ro[0] == 10.0 && ro[1] == 12.0 && ro[2] == 20.0);
    assert_true(fabs(co[0] - 110.0) < 1e-9);
    assert_true(fabs(co[1] - (12.0 + 0.5 * 10.0 / 0.03)) < 1e-9);
    assert_true(fabs(co[1] - 178.66666666666666) < 1e-9);
    assert_true(fabs(co[2] - 220.0) < 1e-9);
}

/* The LS slope over 2k+1 points of a straight line is its slope exactly. */
static void test_ls_slope_of_a_line(void **state)
{
    (void)state;
    enum { N = 40 };
    double t[N], p[N], to[N], co[N];
    rng_state = 7;
    double x = 0.0;
    for (int i = 0; i < N; i++) {
        t[i] = x;
        p[i] = 30.0 + 200.0 * x; /* 200 W/s */
        x += 0.01 + 0.01 * uniform01();
    }
    const int halves[] = {1, 2, 3, 4, 5, TW_RC_MAX_HALF};
    for (size_t h = 0; h < sizeof halves / sizeof halves[0]; h++) {
        int half = halves[h];
        tw_rc rc;
        tw_rc_init(&rc, 0.5, half);
        size_t m = tw_rc_run(&rc, t, p, N, to, NULL, co);
        m += tw_rc_finish(&rc, to + m, NULL, co + m);
        assert_int_equal(m, N);
        for (int i = 0; i < N; i++)
            if (fabs(co[i] - (p[i] + 0.5 * 200.0)) > 1e-6)
                fail_msg("half %d sample %d: %.12g, want %.12g", half, i, co[i], p[i] + 100.0);
    }
}

static size_t run_chunked(int half, const double *t, const double *p, size_t n, size_t chunk, double *to, double *ro,
                          double *co)
{
    tw_rc rc;
    tw_rc_init(&rc, C_S, half);
    size_t m = 0;
    for (size_t i = 0; i < n; i += chunk) {
        size_t len = n - i < chunk ? n - i : chunk;
        size_t got = tw_rc_run(&rc, t + i, p + i, len, to + m, ro + m, co + m);
        assert_true(got <= len);
        m += got;
    }
    m += tw_rc_finish(&rc, to + m, ro + m, co + m);
    return m;
}

static void test_chunking_is_bit_identical(void **state)
{
    (void)state;
    static double t[CAP], p[CAP], rt[CAP], rr[CAP], rcorr[CAP], ct[CAP], cr[CAP], cc[CAP];
    rng_state = 99;
    size_t n = rc_response(t, p, CAP, 2.0);
    /* some repeats and noise so every path sees non-trivial data */
    for (size_t i = 0; i < n; i++)
        p[i] = round((p[i] + (uniform01() - 0.5)) * 100.0) / 100.0;
    const size_t chunks[] = {1, 2, 7, 1000};
    const int halves[] = {1, 2, 3, TW_RC_MAX_HALF};
    for (size_t h = 0; h < sizeof halves / sizeof halves[0]; h++) {
        size_t nref = run_chunked(halves[h], t, p, n, n, rt, rr, rcorr);
        assert_int_equal(nref, n);
        for (size_t c = 0; c < sizeof chunks / sizeof chunks[0]; c++) {
            memset(cc, 0, sizeof cc);
            size_t m = run_chunked(halves[h], t, p, n, chunks[c], ct, cr, cc);
            if (m != n) fail_msg("half %d chunk %zu: %zu samples out of %zu", halves[h], chunks[c], m, n);
            if (memcmp(ct, rt, n * sizeof *ct) || memcmp(cr, rr, n * sizeof *cr) || memcmp(cc, rcorr, n * sizeof *cc))
                fail_msg("half %d chunk %zu: output differs from one call", halves[h], chunks[c]);
        }
    }
}

/* Output count == input count, for short inputs too, and finish emits the rest. */
static void test_finish_emits_the_rest(void **state)
{
    (void)state;
    double t[40], p[40], to[40], co[40];
    for (int i = 0; i < 40; i++) {
        t[i] = 0.015 * i;
        p[i] = 50.0 + i;
    }
    for (int half = 1; half <= 4; half++) {
        for (size_t n = 0; n <= 12; n++) {
            tw_rc rc;
            tw_rc_init(&rc, C_S, half);
            size_t m = tw_rc_run(&rc, t, p, n, to, NULL, co);
            size_t held = n < (size_t)half ? n : (size_t)half;
            assert_int_equal(m, n - held); /* output lags input by k samples */
            size_t f = tw_rc_finish(&rc, to + m, NULL, co + m);
            assert_int_equal(f, held);
            assert_int_equal(m + f, n);
            for (size_t i = 0; i < n; i++)
                assert_true(to[i] == t[i]);
            /* a second finish has nothing left */
            assert_int_equal(tw_rc_finish(&rc, to, NULL, co), 0);
        }
    }
}

static void test_half_width_clamped(void **state)
{
    (void)state;
    tw_rc rc;
    tw_rc_init(&rc, C_S, 0);
    assert_int_equal(rc.half, 1);
    tw_rc_init(&rc, C_S, -5);
    assert_int_equal(rc.half, 1);
    tw_rc_init(&rc, C_S, TW_RC_MAX_HALF + 10);
    assert_int_equal(rc.half, TW_RC_MAX_HALF);
}

static void check_finite_with_duplicates(int half, const double *t, const double *p, size_t n)
{
    double to[16], co[16];
    tw_rc rc;
    tw_rc_init(&rc, C_S, half);
    size_t m = tw_rc_run(&rc, t, p, n, to, NULL, co);
    m += tw_rc_finish(&rc, to + m, NULL, co + m);
    assert_int_equal(m, n);
    for (size_t i = 0; i < n; i++)
        if (!isfinite(co[i])) fail_msg("half %d: sample %zu (t = %g) corrected to %g", half, i, t[i], co[i]);
}

static void test_duplicate_timestamps_stay_finite(void **state)
{
    (void)state;
    const double t[] = {0.0, 0.01, 0.01, 0.01, 0.02, 0.03, 0.03};
    const double p[] = {10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0};
    for (int half = 1; half <= 4; half++)
        check_finite_with_duplicates(half, t, p, 7);
    /* all at one instant */
    const double t2[] = {1.0, 1.0, 1.0, 1.0, 1.0};
    for (int half = 1; half <= 3; half++)
        check_finite_with_duplicates(half, t2, p, 5);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_recovers_step_paper_formula), cmocka_unit_test(test_recovers_step_ls_slope),
        cmocka_unit_test(test_symmetric_formula_by_hand),   cmocka_unit_test(test_ls_slope_of_a_line),
        cmocka_unit_test(test_chunking_is_bit_identical),   cmocka_unit_test(test_finish_emits_the_rest),
        cmocka_unit_test(test_half_width_clamped),          cmocka_unit_test(test_duplicate_timestamps_stay_finite),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
