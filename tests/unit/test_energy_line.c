/* Unit tests of the energy line's lookups (src/api/energy_line.c): a
 * counter's line is its reads joined by straight lines, so the energy
 * between any two times is found here by a plain scan over the reads, and
 * the line's (galloping back from its end, then bisecting) must agree, near
 * the end, near the start, at the knots themselves, outside them (NaN),
 * and after the oldest knots are trimmed away; lookups from guesses (good,
 * stale, past the knots, none) give the same values bit for bit and the
 * knot a plain scan finds. */
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

/* The first live knot at or after t by a plain scan (n when none). */
static size_t scan_knot(const tw_energy_line *l, double t)
{
    size_t i = l->off;
    while (i < l->n && l->k[i].t_s < t)
        i++;
    return i;
}

/* tw_line_cum_at_j and tw_line_seek from any guesses: the value of
 * tw_line_cum_j bit for bit, and the knot of a plain scan. */
static void check_guesses(const tw_energy_line *l, tw_rng *rng, size_t first)
{
    double lo = t_of[first] - 0.5, hi = t_of[READS - 1] + 0.5;
    size_t at = SIZE_MAX;
    for (int k = 0; k < 4000; k++) {
        double u = tw_rng_uniform(rng);
        /* in order of time mostly (the anchor's use), else anywhere, some at knots exactly */
        double t = k % 3 == 0   ? lo + (hi - lo) * u
                   : k % 7 == 0 ? t_of[first + (size_t)(u * (double)(READS - 1 - first))]
                                : fmin(hi, lo + (hi - lo) * (double)k / 4000.0 + 0.01 * u);
        size_t want_knot = scan_knot(l, t);
        size_t second = k % 5 == 0 ? SIZE_MAX : k % 5 == 1 ? (size_t)(u * 2.0 * READS) : tw_line_seek(l, t - u, at);
        if (k % 11 == 0) at = (size_t)(u * 2.0 * READS); /* any guess, even past the knots */
        if (k % 13 == 0) at = SIZE_MAX;
        if (k % 17 == 0 && want_knot < l->n) at = want_knot + 1; /* just after the answer */
        if (tw_line_seek(l, t, second) != want_knot)
            fail_msg("seek %.6f from %zu: %zu, not %zu", t, second, tw_line_seek(l, t, second), want_knot);
        double want = tw_line_cum_j(l, t, NULL), got = tw_line_cum_at_j(l, t, &at, second);
        if (!(isnan(want) ? isnan(got) : got == want))
            fail_msg("cum at %.6f from guesses: %.17g, not %.17g", t, got, want);
        if (!isnan(got) && at != want_knot) fail_msg("cum at %.6f: knot %zu, not %zu", t, at, want_knot);
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
    check_guesses(&l, &rng, 0);
    tw_line_trim(&l, t_of[READS / 2] + 1e-6); /* knots before this may go */
    double start = tw_line_start_s(&l);
    size_t first = 0;
    while (t_of[first] < start)
        first++;
    if (t_of[first] != start) fail_msg("trimmed line starts at %.9f, not at a read", start);
    check_spans(&l, &rng, first);
    check_guesses(&l, &rng, first);
    tw_line_free(&l);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_lookups)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
