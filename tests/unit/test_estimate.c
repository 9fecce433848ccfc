/* Unit tests of the window-aware event estimator (src/correct/estimate.c)
 * against analytic truths: kernels of constant power above a known idle
 * level, seen through tiling windows (exact), 25 % coverage windows (exact
 * where seen, NaN where not), overlapping 1 s boxcar windows (exact),
 * concurrent events sharing a window, and the idle level. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tw_test.h"

#include "core/rng.h"
#include "correct/estimate.h"

static void assert_ok(tw_status st)
{
    if (st != TW_OK) fail_msg("%s: %s", tw_strerror(st), tw_last_error());
}

static void near(double got, double want, double tol, const char *what)
{
    if (!(fabs(got - want) <= tol)) fail_msg("%s: %.12g, expected %.12g (+- %g)", what, got, want, tol);
}

#define IDLE_W 100.0

/* The truth: idle plus each kernel's power while it runs (concurrent ones add). */
typedef struct kern {
    double t0, t1, w;
} kern;

static double dyn_energy(const kern *k, size_t nk, double a, double b)
{
    double e = 0;
    for (size_t i = 0; i < nk; i++) {
        double lo = fmax(a, k[i].t0), hi = fmin(b, k[i].t1);
        if (hi > lo) e += k[i].w * (hi - lo);
    }
    return e;
}

/* Windows of length `len` ending every `step` from `first_end` to `last_end`. */
static tw_obs *windows(const kern *k, size_t nk, double first_end, double last_end, double step, double len, size_t *n)
{
    *n = (size_t)floor((last_end - first_end) / step + 1e-9) + 1;
    tw_obs *o = calloc(*n, sizeof *o);
    for (size_t i = 0; i < *n; i++) {
        double t1 = first_end + step * (double)i, t0 = t1 - len;
        o[i] = (tw_obs){t0, t1, IDLE_W + dyn_energy(k, nk, t0, t1) / len, 0};
    }
    return o;
}

static double last_end(const kern *k, size_t nk)
{
    double t = 0;
    for (size_t i = 0; i < nk; i++)
        t = fmax(t, k[i].t1);
    return t;
}

static tw_events *events_of(const kern *k, size_t nk)
{
    tw_events *ev;
    assert_ok(tw_events_new(&ev));
    for (size_t i = 0; i < nk; i++) {
        char name[32];
        snprintf(name, sizeof name, "k%zu", i);
        tw_event e = {.name = name,
                      .start_s = k[i].t0,
                      .end_s = k[i].t1,
                      .device = 0,
                      .stream = (int64_t)(i % 3),
                      .true_energy_j = NAN,
                      .kind = "kernel"};
        assert_ok(tw_events_add(ev, &e));
    }
    return ev;
}

/* Kernels of 1-300 ms at random times, each followed by a gap >= `gap`; powers
 * from `wlo` to `whi`. Returned in a shuffled order. */
static kern *random_kernels(tw_rng *rng, size_t nk, double gap, double wlo, double whi)
{
    kern *k = calloc(nk, sizeof *k);
    double t = 0.5 + tw_rng_uniform(rng);
    for (size_t i = 0; i < nk; i++) {
        double d = 0.001 + 0.299 * tw_rng_uniform(rng);
        k[i] = (kern){t, t + d, tw_rng_range(rng, wlo, whi)};
        t += d + gap + 0.2 * tw_rng_uniform(rng);
    }
    for (size_t i = nk; i-- > 1;) {
        size_t j = (size_t)(tw_rng_uniform(rng) * (double)(i + 1));
        kern x = k[i];
        k[i] = k[j];
        k[j] = x;
    }
    return k;
}

static void test_tiling_exact(void **state)
{
    (void)state;
    tw_rng rng;
    tw_rng_seed(&rng, 42, 1);
    const size_t nk = 200;
    /* separated by at least a window: every window sees one kernel at most */
    kern *k = random_kernels(&rng, nk, 0.021, 50, 400);
    tw_events *ev = events_of(k, nk);
    size_t n;
    double phase = 0.02 * tw_rng_uniform(&rng);
    tw_obs *o = windows(k, nk, phase, last_end(k, nk) + 0.1, 0.02, 0.02, &n);
    tw_event_estimate *est = calloc(nk, sizeof *est);
    assert_ok(tw_estimate_events(o, n, ev, IDLE_W, est));
    for (size_t i = 0; i < nk; i++) {
        double d = k[i].t1 - k[i].t0;
        near(est[i].dyn_j, k[i].w * d, 1e-9, "dynamic energy");
        near(est[i].total_j, (k[i].w + IDLE_W) * d, 1e-9, "total energy");
        near(est[i].power_w, k[i].w, 1e-9, "power");
        near(est[i].seen_s, d, 1e-12, "seen");
        near(est[i].seen_frac, 1, 1e-9, "coverage");
    }
    free(est);
    free(o);
    free(k);
    tw_events_free(ev);
}

/* Back to back and overlapping kernels of one power: still exact, and the
 * energies add up to the windows' energy above idle. */
static void test_tiling_crowded(void **state)
{
    (void)state;
    tw_rng rng;
    tw_rng_seed(&rng, 43, 1);
    const size_t nk = 300;
    kern *k = random_kernels(&rng, nk, -0.0005, 150, 150);
    for (size_t i = 0; i < nk; i += 7)
        k[i].t0 -= 0.05; /* overlaps the kernel before */
    tw_events *ev = events_of(k, nk);
    size_t n;
    tw_obs *o = windows(k, nk, 0.007, last_end(k, nk) + 0.1, 0.02, 0.02, &n);
    tw_event_estimate *est = calloc(nk, sizeof *est);
    assert_ok(tw_estimate_events(o, n, ev, IDLE_W, est));
    double sum = 0, windows_j = 0;
    for (size_t i = 0; i < n; i++)
        windows_j += (o[i].power_w - IDLE_W) * (o[i].t1_s - o[i].t0_s);
    for (size_t i = 0; i < nk; i++)
        sum += est[i].dyn_j;
    near(sum, windows_j, 1e-9 * windows_j, "the kernels share every joule above idle");
    /* powers add where kernels overlap, so sharing in proportion to time is exact here */
    for (size_t i = 0; i < nk; i++)
        near(est[i].dyn_j, 150 * (k[i].t1 - k[i].t0), 1e-9, "kernel of the common power");
    free(est);
    free(o);
    free(k);
    tw_events_free(ev);
}

static void test_partial_coverage(void **state)
{
    (void)state;
    /* 25 ms windows every 100 ms: (0.1 j + 0.075, 0.1 (j + 1)] */
    kern k[] = {{1.013, 1.313, 250}, {2.02, 2.03, 300}, {3.09, 3.11, 180}, {4.0, 4.0, 0}};
    tw_events *ev = events_of(k, 4);
    size_t n;
    tw_obs *o = windows(k, 3, 0.1, 6.0, 0.1, 0.025, &n);
    tw_event_estimate est[4];
    assert_ok(tw_estimate_events(o, n, ev, IDLE_W, est));
    near(est[0].dyn_j, 250 * 0.3, 1e-9, "300 ms kernel, a quarter seen");
    near(est[0].seen_s, 0.075, 1e-12, "three windows saw it");
    near(est[0].seen_frac, 0.25, 1e-9, "coverage");
    assert_true(isnan(est[1].dyn_j) && isnan(est[1].total_j) && isnan(est[1].power_w));
    assert_true(est[1].seen_s == 0 && est[1].seen_frac == 0);
    near(est[2].dyn_j, 180 * 0.02, 1e-9, "half seen");
    near(est[2].seen_frac, 0.5, 1e-9, "half seen");
    assert_true(isnan(est[3].dyn_j) && est[3].seen_s == 0); /* no duration */
    free(o);
    tw_events_free(ev);
}

static void test_overlapping_boxcar_windows(void **state)
{
    (void)state;
    /* 1 s windows every 0.1 s; kernels more than a window apart */
    kern k[] = {{2.0, 2.5, 300}, {5.013, 5.063, 200}, {7.31, 7.311, 400}};
    tw_events *ev = events_of(k, 3);
    size_t n;
    tw_obs *o = windows(k, 3, 0.437, 12.0, 0.1, 1.0, &n);
    tw_event_estimate est[3];
    assert_ok(tw_estimate_events(o, n, ev, IDLE_W, est));
    for (size_t i = 0; i < 3; i++) {
        double d = k[i].t1 - k[i].t0;
        near(est[i].dyn_j, k[i].w * d, 1e-9, "dynamic energy");
        near(est[i].seen_frac, 10, 1e-6, "each instant is in ten windows");
    }
    free(o);
    tw_events_free(ev);
}

/* Two readings at once: 20 ms tiling windows and 1 s windows every 100 ms,
 * merged in order of their ends (so the starts go back and forth). */
static void test_mixed_windows(void **state)
{
    (void)state;
    kern k[] = {{2.0, 2.5, 300}, {3.9, 3.95, 120}, {5.013, 5.063, 200}, {7.31, 7.311, 400}};
    size_t na, nb;
    tw_obs *a = windows(k, 4, 0.02, 10.0, 0.02, 0.02, &na);
    tw_obs *b = windows(k, 4, 0.437, 10.0, 0.1, 1.0, &nb);
    tw_obs *o = calloc(na + nb, sizeof *o);
    size_t n = 0, i = 0, j = 0;
    while (i < na || j < nb)
        o[n++] = j >= nb || (i < na && a[i].t1_s <= b[j].t1_s) ? a[i++] : b[j++];
    tw_events *ev = events_of(k, 4);
    tw_event_estimate est[4];
    assert_ok(tw_estimate_events(o, n, ev, IDLE_W, est));
    for (size_t e = 0; e < 4; e++) {
        double d = k[e].t1 - k[e].t0;
        near(est[e].dyn_j, k[e].w * d, 1e-9, "dynamic energy");
        near(est[e].seen_frac, 11, 1e-6, "once in the tiling, ten times in the boxcar");
    }
    free(o);
    free(a);
    free(b);
    tw_events_free(ev);
}

static void test_concurrent_share(void **state)
{
    (void)state;
    /* A alone, then A and B together: (1.0, 1.05] has A (120 W), (1.05, 1.1] A + B (200 W) */
    kern k[] = {{1.0, 1.1, 120}, {1.05, 1.1, 80}, {2.0, 2.1, 100}, {2.0, 2.1, 60}};
    tw_events *ev = events_of(k, 4);
    size_t n;
    tw_obs *o = windows(k, 4, 0.05, 4.0, 0.05, 0.05, &n);
    tw_event_estimate est[4];
    assert_ok(tw_estimate_events(o, n, ev, IDLE_W, est));
    near(est[0].dyn_j, 120 * 0.05 + 200 * 0.05 / 2, 1e-9, "A: its own window and half the shared one");
    near(est[0].power_w, 110, 1e-9, "A's power");
    near(est[1].dyn_j, 200 * 0.05 / 2, 1e-9, "B: half the shared window");
    near(est[0].dyn_j + est[1].dyn_j, 120 * 0.1 + 80 * 0.05, 1e-9, "A + B");
    near(est[2].dyn_j, 160 * 0.1 / 2, 1e-9, "identical spans share equally");
    near(est[3].dyn_j, 160 * 0.1 / 2, 1e-9, "identical spans share equally");
    free(o);
    tw_events_free(ev);
}

static void test_order_kinds_and_errors(void **state)
{
    (void)state;
    kern k[] = {{1.0, 1.2, 100}, {0.3, 0.4, 200}};
    tw_events *ev = events_of(k, 2);
    tw_event range = {
        .name = "step", .start_s = 0.0, .end_s = 2.0, .device = -1, .stream = -1, .true_energy_j = NAN, .kind = "nvtx"};
    assert_ok(tw_events_add(ev, &range));
    tw_event copy = {
        .name = "h2d", .start_s = 1.5, .end_s = 1.6, .device = 0, .stream = 1, .true_energy_j = NAN, .kind = "memcpy"};
    assert_ok(tw_events_add(ev, &copy));
    kern all[] = {{1.0, 1.2, 100}, {0.3, 0.4, 200}, {1.5, 1.6, 50}};
    size_t n;
    tw_obs *o = windows(all, 3, 0.01, 2.5, 0.01, 0.01, &n);
    /* the observations reversed: the same answer */
    for (size_t i = 0; i < n / 2; i++) {
        tw_obs x = o[i];
        o[i] = o[n - 1 - i];
        o[n - 1 - i] = x;
    }
    tw_event_estimate est[4];
    assert_ok(tw_estimate_events(o, n, ev, IDLE_W, est));
    near(est[0].dyn_j, 20, 1e-9, "k0");
    near(est[1].dyn_j, 20, 1e-9, "k1");
    assert_true(isnan(est[2].dyn_j) && est[2].seen_s == 0); /* NVTX: no power of its own */
    near(est[3].dyn_j, 5, 1e-9, "a copy counts");

    assert_int_equal(tw_estimate_events(o, n, ev, NAN, est), TW_EINVAL);
    assert_ok(tw_estimate_events(NULL, 0, ev, IDLE_W, est));
    assert_true(isnan(est[0].dyn_j) && isnan(est[1].dyn_j));
    assert_ok(tw_estimate_events(o, n, NULL, IDLE_W, NULL));
    free(o);
    tw_events_free(ev);
}

static void test_idle_level(void **state)
{
    (void)state;
    kern k[] = {{3.02, 3.98, 200}, {6.0, 6.5, 100}};
    tw_events *ev = events_of(k, 2);
    tw_event range = {
        .name = "all", .start_s = 0.0, .end_s = 10.0, .device = -1, .stream = -1, .true_energy_j = NAN, .kind = "nvtx"};
    assert_ok(tw_events_add(ev, &range));
    size_t n;
    tw_obs *o = windows(k, 2, 0.1, 10.0, 0.1, 0.1, &n);
    for (size_t i = 0; i < n; i++)
        if (o[i].t1_s <= 2.0 + 1e-9) o[i].power_w -= 10; /* 90 W before 2 s */
    near(tw_estimate_idle_w(o, n, ev, 2.0 - 1e-9, 10.0 + 1e-9), IDLE_W, 1e-12, "idle after 2 s");
    near(tw_estimate_idle_w(o, n, ev, -INFINITY, 2.0 + 1e-9), IDLE_W - 10, 1e-12, "idle before 2 s");
    assert_true(isnan(tw_estimate_idle_w(o, n, ev, 3.1, 3.9))); /* every window there holds a kernel */
    /* with noise: the median of the kernel-free windows */
    tw_rng rng;
    tw_rng_seed(&rng, 5, 2);
    for (size_t i = 0; i < n; i++)
        o[i].power_w += 0.5 * tw_rng_gauss(&rng);
    near(tw_estimate_idle_w(o, n, ev, 2.0, 10.0), IDLE_W, 0.2, "noisy idle");
    /* without events every window counts, the kernels too */
    double all = tw_estimate_idle_w(o, n, NULL, 2.0, 10.0);
    assert_true(all > IDLE_W - 0.5 && all < IDLE_W + 1.0);
    assert_true(isnan(tw_estimate_idle_w(NULL, 0, ev, 0, 10)));
    free(o);
    tw_events_free(ev);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tiling_exact),           cmocka_unit_test(test_tiling_crowded),
        cmocka_unit_test(test_partial_coverage),       cmocka_unit_test(test_overlapping_boxcar_windows),
        cmocka_unit_test(test_mixed_windows),          cmocka_unit_test(test_concurrent_share),
        cmocka_unit_test(test_order_kinds_and_errors), cmocka_unit_test(test_idle_level),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
