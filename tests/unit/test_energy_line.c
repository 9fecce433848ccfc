/* Unit tests of the energy line's lookups (src/api/energy_line.c): a
 * counter's line is its reads joined by straight lines, so the energy
 * between any two times is found here by a plain scan over the reads, and
 * the line's (galloping back from its end, then bisecting) must agree, near
 * the end, near the start, at the knots themselves, outside them (NaN),
 * and after the oldest knots are trimmed away. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "tw_test.h"

#include "api/energy_line.h"
#include "core/rng.h"

enum { READS = 3000 };
static double t_of[READS], j_of[READS];

/* The counter at t by a linear scan of the reads (NaN outside them). */
static double scan_j(double t, size_t first)
{
    if (!(t >= t_of[first]) || !(t <= t_of[READS - 1])) return NAN;
    for (size_t i = first + 1; i < READS; i++)
        if (t <= t_of[i]) return j_of[i - 1] + (j_of[i] - j_of[i - 1]) * (t - t_of[i - 1]) / (t_of[i] - t_of[i - 1]);
    return NAN;
}

static void check_spans(const tw_energy_line *l, tw_rng *rng, size_t first)
{
    double lo = t_of[first], hi = t_of[READS - 1];
    for (int k = 0; k < 4000; k++) {
        double u = tw_rng_uniform(rng);
        /* a quarter near the end, some at knots exactly, some outside */
        double a = k % 4 == 0 ? hi - 2.0 * u : lo - 1.0 + (hi - lo + 2.0) * u;
        double b = k % 7 == 0 ? t_of[first + (size_t)(u * (double)(READS - 1 - first))] : fmin(hi + 0.5, a + 5.0 * u);
        if (b < a) { /* a span runs forward */
            double x = a;
            a = b;
            b = x;
        }
        double want = scan_j(b, first) - scan_j(a, first), got = tw_line_energy_j(l, a, b, NULL);
        if (isnan(want) ? !isnan(got) : !(fabs(got - want) <= 1e-9 * fmax(1.0, fabs(want))))
            fail_msg("energy over [%.6f, %.6f]: %.12g, expected %.12g", a, b, got, want);
    }
}

static void test_lookups(void **state)
{
    (void)state;
    tw_reading_model m = {.name = "energy_j",
                          .response = TW_RESP_COUNTER,
                          .period_s = 0.1,
                          .window_s = 0.1,
                          .delay_s = 0,
                          .capacitance_s = NAN,
                          .coverage = 1};
    tw_energy_line l;
    tw_line_init(&l, TW_LINE_COUNTER, &m);
    tw_rng rng;
    tw_rng_seed(&rng, 7, 0);
    double t = 1.0, j = 100.0;
    for (size_t i = 0; i < READS; i++) {
        t += 0.05 + 0.1 * tw_rng_uniform(&rng);
        j += 10.0 + 300.0 * tw_rng_uniform(&rng);
        t_of[i] = t;
        j_of[i] = j;
        if (tw_line_push(&l, j, t) != TW_OK) fail_msg("push: %s", tw_last_error());
    }
    check_spans(&l, &rng, 0);
    tw_line_trim(&l, t_of[READS / 2] + 1e-6); /* knots before this may go */
    double start = tw_line_start_s(&l);
    size_t first = 0;
    while (t_of[first] < start)
        first++;
    if (t_of[first] != start) fail_msg("trimmed line starts at %.9f, not at a read", start);
    check_spans(&l, &rng, first);
    tw_line_free(&l);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_lookups)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
