/* Unit tests of the step-response fit of the RC constant (src/correct/fit.c). */
#include <math.h>
#include <stdint.h>

#include "tw_test.h"

#include "correct/fit.h"

#define P0_W 25.0
#define PK_W 158.0
#define SIGMA_W 0.05

/* A fixed-seed generator of our own: splitmix64 and Box-Muller. */
typedef struct rng {
    uint64_t s;
} rng;

static double uniform01(rng *r)
{
    uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return (double)(z >> 11) * 0x1.0p-53;
}

static double gauss(rng *r)
{
    double u1 = uniform01(r), u2 = uniform01(r);
    if (u1 < 1e-300) u1 = 1e-300;
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

enum { CAP = 8192 };
static double ts[CAP], ps[CAP];

/* Readings of an RC sensor after a step at t0 from P0 to Pk: every 15 ms +-
 * 1.5 ms for span_s, with gaussian noise. */
static size_t step_response(rng *r, double c_s, double t0_s, double span_s)
{
    size_t n = 0;
    for (double x = 0.0; x < span_s && n < CAP; x += 0.0135 + 0.003 * uniform01(r)) {
        ts[n] = t0_s + x;
        ps[n] = PK_W + (P0_W - PK_W) * exp(-x / c_s) + SIGMA_W * gauss(r);
        n++;
    }
    return n;
}

static void check_recovers(double c_s, uint64_t seed)
{
    rng r = {seed};
    double t0 = 3.25; /* the step need not be at t = 0 */
    double span = fmax(3.0, 5.0 * c_s);
    size_t n = step_response(&r, c_s, t0, span);
    tw_step_fit fit;
    assert_int_equal(tw_fit_step(ts, ps, n, t0, &fit), 0);
    if (!(fabs(fit.c_s - c_s) <= 0.01 * c_s))
        fail_msg("C = %g s: fitted %.6g s (seed %llu)", c_s, fit.c_s, (unsigned long long)seed);
    assert_true(fabs(fit.final_w - PK_W) < 0.5);
    assert_true(fabs(fit.start_w - P0_W) < 0.5);
    /* the residual is the noise */
    assert_true(fit.rms_w > 0.5 * SIGMA_W && fit.rms_w < 2.0 * SIGMA_W);
}

static void test_recovers_k20_constant(void **state)
{
    (void)state;
    check_recovers(0.84, 1);
    check_recovers(0.84, 2);
    check_recovers(0.84, 3);
}

static void test_recovers_short_constant(void **state)
{
    (void)state;
    check_recovers(0.2, 4);
    check_recovers(0.2, 5);
}

static void test_recovers_long_constant(void **state)
{
    (void)state;
    check_recovers(2.0, 6);
    check_recovers(2.0, 7);
}

static void test_step_down(void **state)
{
    (void)state;
    /* a fall from 158 to 52.5 W (kernel end to active idle), noise-free */
    size_t n = 0;
    for (double x = 0.0; x < 3.0; x += 0.015, n++) {
        ts[n] = 10.0 + x;
        ps[n] = 52.5 + (158.0 - 52.5) * exp(-x / 0.84);
    }
    tw_step_fit fit;
    assert_int_equal(tw_fit_step(ts, ps, n, 10.0, &fit), 0);
    assert_true(fabs(fit.c_s - 0.84) < 1e-4);
    assert_true(fabs(fit.final_w - 52.5) < 1e-3);
    assert_true(fabs(fit.start_w - 158.0) < 1e-3);
    assert_true(fit.rms_w < 1e-3);
}

static void test_too_few_samples(void **state)
{
    (void)state;
    rng r = {11};
    size_t n = step_response(&r, 0.84, 0.0, 3.0);
    assert_true(n > 100);
    tw_step_fit fit = {-7.0, -7.0, -7.0, -7.0};
    assert_int_equal(tw_fit_step(ts, ps, 0, 0.0, &fit), -1);
    assert_int_equal(tw_fit_step(ts, ps, 3, 0.0, &fit), -1);
    assert_int_equal(tw_fit_step(ts, ps, 7, 0.0, &fit), -1);
    assert_true(fit.c_s == -7.0); /* untouched on failure */
}

static void test_flat_signal(void **state)
{
    (void)state;
    const double levels[] = {25.0, 52.37, 158.0};
    for (size_t l = 0; l < sizeof levels / sizeof levels[0]; l++) {
        size_t n = 0;
        for (double x = 0.0; x < 3.0; x += 0.015, n++) {
            ts[n] = x;
            ps[n] = levels[l];
        }
        tw_step_fit fit;
        if (tw_fit_step(ts, ps, n, 0.0, &fit) != -1)
            fail_msg("flat %g W: fit succeeded with C = %g s, start %g W, final %g W", levels[l], fit.c_s, fit.start_w,
                     fit.final_w);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_recovers_k20_constant),  cmocka_unit_test(test_recovers_short_constant),
        cmocka_unit_test(test_recovers_long_constant), cmocka_unit_test(test_step_down),
        cmocka_unit_test(test_too_few_samples),        cmocka_unit_test(test_flat_signal),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
