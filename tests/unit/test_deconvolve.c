/* Unit tests of the boxcar deconvolution (src/correct/deconvolve.c) and the
 * observation series (src/correct/obs_series.c): a piecewise-constant true
 * power seen through a 1 s boxcar published every 0.1 s at a random phase
 * comes back as its exact per-period means; with reading noise, the error of
 * a kernel's energy is what the linear recursion predicts, and small. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tw_test.h"

#include "core/rng.h"
#include "correct/observe.h"

static void assert_ok(tw_status st)
{
    if (st != TW_OK) fail_msg("%s: %s", tw_strerror(st), tw_last_error());
}

static void near(double got, double want, double tol, const char *what)
{
    if (!(fabs(got - want) <= tol)) fail_msg("%s: %.12g, expected %.12g (+- %g)", what, got, want, tol);
}

#define IDLE_W 100.0
#define STEP_W 200.0
#define W_S 1.0
#define PERIOD_S 0.1

/* The true power: idle, with +200 W over each span. */
typedef struct span {
    double t0, t1;
} span;

static const span steps[] = {{2.0, 2.3}, {3.1, 5.1}, {6.02, 6.07}, {7.55, 8.05}};
#define NSTEPS (sizeof steps / sizeof steps[0])

static double true_energy(double a, double b)
{
    double e = IDLE_W * (b - a);
    for (size_t i = 0; i < NSTEPS; i++) {
        double lo = fmax(a, steps[i].t0), hi = fmin(b, steps[i].t1);
        if (hi > lo) e += STEP_W * (hi - lo);
    }
    return e;
}

/* The boxcar's readings u_k = phase + 0.1 k (k = 0 .. n-1), values over (u_k - 1, u_k]. */
static tw_obs *boxcar(double phase, size_t n)
{
    tw_obs *in = calloc(n, sizeof *in);
    for (size_t k = 0; k < n; k++) {
        double u = phase + PERIOD_S * (double)k;
        in[k] = (tw_obs){u - W_S, u, true_energy(u - W_S, u) / W_S};
    }
    return in;
}

/* Energy over [a, b] from tiling observations (linear interpolation of F). */
static double series_energy(const tw_obs_series *s, double a, double b)
{
    double e = 0;
    for (size_t k = 0; k < s->n; k++) {
        double lo = fmax(a, s->v[k].t0_s), hi = fmin(b, s->v[k].t1_s);
        if (hi > lo) e += s->v[k].power_w * (hi - lo);
    }
    return e;
}

static void test_series_growth(void **state)
{
    (void)state;
    tw_obs_series s;
    tw_obs_series_init(&s);
    assert_int_equal(s.n, 0);
    assert_true(isnan(s.period_s) && isnan(s.window_s));
    for (size_t i = 0; i < 100000; i++)
        assert_ok(tw_obs_series_push(&s, (double)i, (double)i + 1, (double)(i % 7)));
    assert_int_equal(s.n, 100000);
    assert_true(s.cap >= s.n);
    for (size_t i = 0; i < s.n; i += 997) {
        assert_true(s.v[i].t0_s == (double)i && s.v[i].t1_s == (double)i + 1);
        assert_true(s.v[i].power_w == (double)(i % 7));
    }
    tw_obs_series_free(&s);
    assert_null(s.v);
    assert_int_equal(s.n, 0);
    tw_obs_series_free(&s); /* twice is harmless */

    tw_update_series u = {calloc(4, sizeof(tw_update)), 2, 4};
    tw_update_series_free(&u);
    assert_null(u.v);
    assert_int_equal(u.n + u.cap, 0);
}

static void test_exact_per_period_means(void **state)
{
    (void)state;
    tw_rng rng;
    tw_rng_seed(&rng, 20240611, 1);
    for (int rep = 0; rep < 20; rep++) {
        double phase = tw_rng_uniform(&rng) * PERIOD_S; /* first window (phase - 1, phase] is idle */
        size_t n = 100;
        tw_obs *in = boxcar(phase, n);
        tw_obs_series out;
        tw_obs_series_init(&out);
        assert_ok(tw_deconvolve_boxcar(in, n, W_S, &out));
        assert_int_equal(out.n, n - 1);
        near(out.period_s, PERIOD_S, 1e-12, "period");
        near(out.window_s, PERIOD_S, 1e-12, "window");
        for (size_t k = 0; k < out.n; k++) {
            const tw_obs *o = &out.v[k];
            assert_true(o->t0_s == in[k].t1_s && o->t1_s == in[k + 1].t1_s);
            char what[64];
            snprintf(what, sizeof what, "period %zu (phase %.4f)", k, phase);
            near(o->power_w, true_energy(o->t0_s, o->t1_s) / (o->t1_s - o->t0_s), 1e-9, what);
        }
        /* energies over spans whose ends lie in idle periods: interpolation is exact there */
        const span around[] = {{1.5, 2.8}, {2.9, 5.5}, {5.55, 6.51}, {7.2, 8.4}, {1.23, 9.6}};
        for (size_t i = 0; i < sizeof around / sizeof around[0]; i++) {
            double a = around[i].t0, b = around[i].t1;
            near(series_energy(&out, a, b), true_energy(a, b), 1e-9, "energy over [a, b]");
        }
        tw_obs_series_free(&out);
        free(in);
    }
}

/* Noise: the output is linear in the readings, so the energy error over
 * [a, b] is sum_k g_k n_k with g_k the energy the impulse e_k gives; its
 * standard deviation is sigma sqrt(sum g_k^2). */
static double energy_of_readings(const tw_obs *in, size_t n, double a, double b)
{
    tw_obs_series out;
    tw_obs_series_init(&out);
    assert_ok(tw_deconvolve_boxcar(in, n, W_S, &out));
    double e = series_energy(&out, a, b);
    tw_obs_series_free(&out);
    return e;
}

static void test_noise_on_a_kernel(void **state)
{
    (void)state;
    const double sigma = 0.5, phase = 0.0371;
    const size_t n = 100;
    tw_obs *clean = boxcar(phase, n);
    tw_obs *in = calloc(n, sizeof *in);
    /* the 0.5 s kernel at [7.55, 8.05), bracketed by the update instants around it */
    const double a = phase + 75 * PERIOD_S, b = phase + 81 * PERIOD_S;
    const double truth = true_energy(a, b), kernel_j = STEP_W * 0.5;
    near(energy_of_readings(clean, n, a, b), truth, 1e-9, "no noise");

    double g2 = 0;
    for (size_t i = 0; i < n; i++) {
        for (size_t k = 0; k < n; k++)
            in[k] = (tw_obs){clean[k].t0_s, clean[k].t1_s, k == i ? 1.0 : 0.0};
        double g = energy_of_readings(in, n, a, b);
        g2 += g * g;
    }
    double sd = sigma * sqrt(g2);
    /* the random walk: two independent chains of (t - u_0) / W readings, each weighted W */
    double walk = W_S * sigma * sqrt(2 * ((b - phase) / W_S + 1));
    print_message("energy error sd over the kernel: %.3f J (random-walk bound %.3f J) on %.1f J\n", sd, walk, kernel_j);
    assert_true(sd <= walk);
    assert_true(sd < 0.04 * kernel_j);

    tw_rng rng;
    tw_rng_seed(&rng, 7, 3);
    double sum2 = 0, worst = 0;
    const int reps = 400;
    for (int rep = 0; rep < reps; rep++) {
        for (size_t k = 0; k < n; k++)
            in[k] = (tw_obs){clean[k].t0_s, clean[k].t1_s, clean[k].power_w + sigma * tw_rng_gauss(&rng)};
        double err = energy_of_readings(in, n, a, b) - truth;
        sum2 += err * err;
        if (fabs(err) > worst) worst = fabs(err);
    }
    double rms = sqrt(sum2 / reps);
    print_message("over %d noisy traces: rms %.3f J, worst %.3f J\n", reps, rms, worst);
    near(rms, sd, 0.15 * sd, "rms error matches the prediction");
    assert_true(worst < 4.5 * sd);
    free(in);
    free(clean);
}

static void test_short_window_and_edges(void **state)
{
    (void)state;
    tw_obs_series out;
    tw_obs_series_init(&out);
    /* a window shorter than the gaps: each period takes its own reading */
    tw_obs in[] = {{0.95, 1.0, 10}, {1.05, 1.1, 20}, {1.25, 1.3, 30}, {1.35, 1.4, 40}};
    assert_ok(tw_deconvolve_boxcar(in, 4, 0.05, &out));
    assert_int_equal(out.n, 3);
    for (size_t k = 0; k < 3; k++)
        near(out.v[k].power_w, in[k + 1].power_w, 1e-12, "level of the gap");
    near(out.period_s, 0.1, 1e-12, "median gap");

    assert_ok(tw_deconvolve_boxcar(in, 1, 1.0, &out));
    assert_int_equal(out.n, 0);
    assert_ok(tw_deconvolve_boxcar(NULL, 0, 1.0, &out));
    assert_int_equal(out.n, 0);
    assert_int_equal(tw_deconvolve_boxcar(in, 4, 0.0, &out), TW_EINVAL);
    assert_int_equal(tw_deconvolve_boxcar(in, 4, NAN, &out), TW_EINVAL);
    tw_obs back[] = {{0, 1.0, 1}, {0, 1.2, 1}, {0, 1.1, 1}};
    assert_int_equal(tw_deconvolve_boxcar(back, 3, 1.0, &out), TW_EORDER);
    assert_non_null(strstr(tw_last_error(), "update 2"));
    tw_obs_series_free(&out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_series_growth),
        cmocka_unit_test(test_exact_per_period_means),
        cmocka_unit_test(test_noise_on_a_kernel),
        cmocka_unit_test(test_short_window_and_edges),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
