/* Scenarios: the true power signal of each profile, its exact energy,
 * argument checking and CSV loading. Expected values are computed by hand. */
#include "tw_test.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "truewatt.h"

#define EPS 1e-9

static tw_scenario *make(tw_sim_profile p)
{
    tw_scenario *s = NULL;
    assert_int_equal(tw_scenario_new(p, &s), TW_OK);
    assert_non_null(s);
    return s;
}

static void add(tw_scenario *s, const char *name, double start, double dur, double power)
{
    assert_int_equal(tw_scenario_add_kernel(s, name, start, dur, power), TW_OK);
}

static void assert_power(const tw_scenario *s, double t, double expect)
{
    double got = tw_scenario_true_power_w(s, t);
    if (fabs(got - expect) > EPS) fail_msg("power at t=%.6f: got %.6f, expected %.6f", t, got, expect);
}

static void assert_contains(const char *text, const char *part)
{
    if (!strstr(text, part)) fail_msg("'%s' does not contain '%s'", text, part);
}

static void test_profile_names(void **state)
{
    (void)state;
    tw_sim_profile p;
    assert_string_equal(tw_sim_profile_name(TW_SIM_K20), "k20");
    assert_string_equal(tw_sim_profile_name(TW_SIM_H100), "h100");
    assert_int_equal(tw_sim_profile_parse("k20", &p), TW_OK);
    assert_int_equal(p, TW_SIM_K20);
    assert_int_equal(tw_sim_profile_parse("H100", &p), TW_OK);
    assert_int_equal(p, TW_SIM_H100);
    assert_int_equal(tw_sim_profile_parse("a100", &p), TW_EINVAL);
    assert_contains(tw_last_error(), "a100");
}

static void test_k20_levels_and_tail(void **state)
{
    (void)state;
    tw_scenario *s = make(TW_SIM_K20);
    assert_true(fabs(tw_scenario_idle_w(s) - 25.0) < EPS);
    assert_true(fabs(tw_scenario_active_idle_w(s) - 52.5) < EPS);
    add(s, "a", 2.0, 3.0, 100.0); /* ends at 5.0 */
    assert_power(s, 0.0, 25.0);
    assert_power(s, 1.999, 25.0);
    assert_power(s, 2.0, 100.0);
    assert_power(s, 4.999, 100.0);
    assert_power(s, 5.0, 52.5); /* active idle held 3.5 s */
    assert_power(s, 8.499, 52.5);
    assert_power(s, 8.5, 45.625); /* then four 1 s steps */
    assert_power(s, 9.499, 45.625);
    assert_power(s, 9.5, 38.75);
    assert_power(s, 10.5, 31.875);
    assert_power(s, 11.5, 25.0);
    assert_power(s, 1000.0, 25.0);
    /* default: end 5 + tail 7.5 + 1 */
    assert_true(fabs(tw_scenario_duration_s(s) - 13.5) < EPS);
    assert_int_equal(tw_scenario_profile(s), TW_SIM_K20);
    tw_scenario_free(s);
}

static void test_k20_tail_cancelled_and_restarted(void **state)
{
    (void)state;
    tw_scenario *s = make(TW_SIM_K20);
    add(s, "b", 5.0, 1.0, 80.0); /* added out of order on purpose */
    add(s, "a", 0.0, 1.0, 100.0);
    assert_power(s, -1.0, 100.0); /* before t = 0: the level at t = 0 */
    assert_power(s, 0.5, 100.0);
    assert_power(s, 1.0, 52.5);
    assert_power(s, 4.5, 45.625); /* a's tail reached its first step ... */
    assert_power(s, 4.999, 45.625);
    assert_power(s, 5.0, 80.0); /* ... when b cancelled it */
    assert_power(s, 6.0, 52.5); /* and the tail restarts after b */
    assert_power(s, 9.499, 52.5);
    assert_power(s, 9.5, 45.625);
    assert_power(s, 12.5, 25.0);
    assert_true(fabs(tw_scenario_duration_s(s) - 14.5) < EPS);
    /* back-to-back kernels: no tail in between */
    add(s, "c", 20.0, 1.0, 60.0);
    add(s, "d", 21.0, 1.0, 70.0);
    assert_power(s, 20.999, 60.0);
    assert_power(s, 21.0, 70.0);
    assert_power(s, 22.0, 52.5);
    tw_scenario_free(s);
}

static void test_h100_levels(void **state)
{
    (void)state;
    tw_scenario *s = make(TW_SIM_H100);
    assert_true(fabs(tw_scenario_idle_w(s) - 75.0) < EPS);
    assert_true(fabs(tw_scenario_active_idle_w(s) - 120.0) < EPS);
    assert_power(s, 0.5, 75.0); /* no kernels: no context */
    assert_true(fabs(tw_scenario_duration_s(s) - 1.0) < EPS);
    add(s, "k", 3.0, 2.0, 300.0);
    assert_power(s, 1.999, 75.0);
    assert_power(s, 2.0, 120.0); /* context 1 s before the first kernel */
    assert_power(s, 3.0, 300.0);
    assert_power(s, 4.999, 300.0);
    assert_power(s, 5.0, 120.0); /* no tail */
    assert_true(fabs(tw_scenario_duration_s(s) - 6.0) < EPS);
    assert_power(s, 5.999, 120.0);
    assert_power(s, 6.0, 75.0); /* the context ends with the scenario */
    assert_int_equal(tw_scenario_set_duration(s, 10.0), TW_OK);
    assert_true(fabs(tw_scenario_duration_s(s) - 10.0) < EPS);
    assert_power(s, 9.0, 120.0);
    assert_power(s, 10.5, 75.0);
    tw_scenario_free(s);

    /* a first kernel within 1 s of t = 0: the context exists from t = 0 */
    s = make(TW_SIM_H100);
    add(s, "early", 0.5, 0.5, 200.0);
    assert_power(s, 0.0, 120.0);
    assert_power(s, -0.5, 120.0);
    assert_power(s, 0.75, 200.0);
    tw_scenario_free(s);
}

static void assert_energy(const tw_scenario *s, double t0, double t1, double expect)
{
    double got = tw_scenario_true_energy_j(s, t0, t1);
    if (fabs(got - expect) > 1e-9) fail_msg("energy [%g,%g]: got %.12f, expected %.12f", t0, t1, got, expect);
}

static void test_exact_energy(void **state)
{
    (void)state;
    tw_scenario *s = make(TW_SIM_K20);
    add(s, "a", 2.0, 3.0, 100.0);
    assert_energy(s, 2.0, 5.0, 300.0);                             /* the kernel */
    assert_energy(s, 1.0, 3.0, 25.0 + 100.0);                      /* idle into kernel */
    assert_energy(s, 4.0, 9.0, 100.0 + 52.5 * 3.5 + 45.625 * 0.5); /* across three segments */
    assert_energy(s, 0.0, 13.5, 25 * 2 + 300 + 52.5 * 3.5 + 45.625 + 38.75 + 31.875 + 25 * 2);
    assert_energy(s, 3.0, 3.0, 0.0);
    assert_energy(s, 3.0, 1.0, -125.0);
    assert_energy(s, -1.0, 0.0, 25.0); /* before t = 0: the level at t = 0 */
    double a = tw_scenario_true_energy_j(s, 0.0, 6.7), b = tw_scenario_true_energy_j(s, 6.7, 13.5);
    assert_true(fabs(a + b - 700.0) < 1e-9);
    tw_scenario_free(s);

    s = make(TW_SIM_H100);
    add(s, "k", 3.0, 2.0, 300.0);
    assert_energy(s, 1.5, 3.5, 75.0 * 0.5 + 120.0 + 300.0 * 0.5);
    assert_energy(s, 4.9, 5.1, 300.0 * 0.1 + 120.0 * 0.1);
    tw_scenario_free(s);
}

/* Kernels added after the signal was read (in and out of order), and a
 * duration set after: what is read next includes them. */
static void test_changes_after_reading(void **state)
{
    (void)state;
    tw_scenario *s = make(TW_SIM_H100);
    add(s, "a", 3.0, 2.0, 300.0);
    assert_energy(s, 3.0, 5.0, 600.0);
    add(s, "b", 10.0, 1.0, 200.0);
    assert_energy(s, 5.0, 11.0, 120.0 * 5 + 200.0);
    add(s, "c", 1.5, 0.5, 250.0); /* before the others: the context now starts at 0.5 s */
    assert_energy(s, 0.0, 2.0, 75.0 * 0.5 + 120.0 + 125.0);
    assert_true(fabs(tw_scenario_duration_s(s) - 12.0) < 1e-12); /* the last end + 1 s to settle */
    assert_int_equal(tw_scenario_set_duration(s, 20.0), TW_OK);
    assert_energy(s, 11.0, 20.0, 120.0 * 9); /* the context lives to the end */
    tw_scenario_free(s);
}

/* Many kernels added one by one (each add once rebuilt the whole signal:
 * K^2): the energy is the sum worked out here. */
static void test_many_kernels(void **state)
{
    (void)state;
    enum { K = 50000 };
    tw_scenario *s = make(TW_SIM_H100);
    double want = 75.0 * 1.0 + 120.0 * 1.0; /* idle to the context at 1 s, active idle to the first kernel */
    for (int i = 0; i < K; i++) {
        double power = 200.0 + (i % 7) * 50.0;
        add(s, i % 2 ? "odd" : "even", 2.0 + 2e-3 * i, 1e-3, power);
        want += power * 1e-3 + 120.0 * 1e-3; /* the kernel, then active idle to the next */
    }
    double got = tw_scenario_true_energy_j(s, 0.0, 2.0 + 2e-3 * K);
    if (!(fabs(got - want) <= 1e-11 * want)) /* sums of 10^5 terms in another order */
        fail_msg("energy of %d kernels: got %.12f, expected %.12f", K, got, want);
    tw_scenario_free(s);
}

static void test_invalid_kernels(void **state)
{
    (void)state;
    tw_scenario *s = make(TW_SIM_K20);
    assert_int_equal(tw_scenario_add_kernel(s, "x", 1.0, 0.0, 100.0), TW_EINVAL);
    assert_contains(tw_last_error(), "duration_s");
    assert_int_equal(tw_scenario_add_kernel(s, "x", 1.0, -1.0, 100.0), TW_EINVAL);
    assert_int_equal(tw_scenario_add_kernel(s, "x", -0.1, 1.0, 100.0), TW_EINVAL);
    assert_contains(tw_last_error(), "start_s");
    assert_int_equal(tw_scenario_add_kernel(s, "x", NAN, 1.0, 100.0), TW_EINVAL);
    assert_int_equal(tw_scenario_add_kernel(s, "x", 1.0, INFINITY, 100.0), TW_EINVAL);
    assert_int_equal(tw_scenario_add_kernel(s, "x", 1.0, 1.0, 0.0), TW_EINVAL);
    assert_contains(tw_last_error(), "power_w");
    assert_int_equal(tw_scenario_add_kernel(s, "x", 1.0, 1.0, INFINITY), TW_EINVAL);
    assert_int_equal(tw_scenario_add_kernel(s, NULL, 1.0, 1.0, 100.0), TW_EINVAL);
    assert_int_equal(tw_scenario_add_kernel(s, "", 1.0, 1.0, 100.0), TW_EINVAL);

    add(s, "a", 1.0, 2.0, 100.0);
    assert_int_equal(tw_scenario_add_kernel(s, "b", 2.0, 2.0, 90.0), TW_EINVAL);
    assert_string_equal(tw_last_error(), "kernel 'b' overlaps kernel 'a'");
    assert_int_equal(tw_scenario_add_kernel(s, "c", 0.5, 0.6, 90.0), TW_EINVAL);
    assert_string_equal(tw_last_error(), "kernel 'c' overlaps kernel 'a'");
    assert_int_equal(tw_scenario_add_kernel(s, "inside", 1.5, 0.1, 90.0), TW_EINVAL);
    add(s, "adjacent", 3.0, 1.0, 90.0); /* touching is not overlapping */
    assert_string_equal(tw_last_error(), "");
    assert_power(s, 2.0, 100.0); /* failed adds left the signal alone */
    assert_power(s, 3.5, 90.0);

    assert_int_equal(tw_scenario_set_duration(s, 0.0), TW_EINVAL);
    assert_int_equal(tw_scenario_set_duration(s, NAN), TW_EINVAL);
    assert_int_equal(tw_scenario_set_duration(s, -2.0), TW_EINVAL);
    assert_true(fabs(tw_scenario_duration_s(s) - 12.5) < EPS);
    tw_scenario_free(s);

    assert_int_equal(tw_scenario_new((tw_sim_profile)7, &s), TW_EINVAL);
    assert_null(s);
}

static void test_load_good(void **state)
{
    (void)state;
    const char *path = tw_test_file(0, "# kernels of a test\n"
                                       "name,start_s,duration_s,power_w\r\n"
                                       "\n"
                                       "k1, 1.0, 2.0, 150\r\n"
                                       "# a comment between rows\n"
                                       "\"k,2\",4,0.5,90\n");
    assert_non_null(path);
    tw_scenario *s = NULL;
    assert_int_equal(tw_scenario_load(path, TW_SIM_K20, &s), TW_OK);
    assert_power(s, 0.5, 25.0);
    assert_power(s, 2.0, 150.0);
    assert_power(s, 3.5, 52.5);
    assert_power(s, 4.2, 90.0);
    assert_energy(s, 1.0, 3.0, 300.0);
    assert_true(fabs(tw_scenario_duration_s(s) - (4.5 + 7.5 + 1.0)) < EPS);
    tw_scenario_free(s);

    /* columns in another order, extra columns ignored */
    path = tw_test_file(1, "power_w,note,name,duration_s,start_s\n200,x,only,1,0.25\n");
    assert_int_equal(tw_scenario_load(path, TW_SIM_H100, &s), TW_OK);
    assert_int_equal(tw_scenario_profile(s), TW_SIM_H100);
    assert_power(s, 0.5, 200.0);
    assert_power(s, 1.5, 120.0);
    tw_scenario_free(s);
}

/* Loads `text` and expects `status` with a message holding the path and `where`. */
static void expect_load_error(int slot, const char *text, tw_status status, const char *where, const char *why)
{
    const char *path = tw_test_file(slot, text);
    assert_non_null(path);
    tw_scenario *s = (tw_scenario *)1;
    tw_status st = tw_scenario_load(path, TW_SIM_K20, &s);
    if (st != status) fail_msg("'%s': status %d (%s), expected %d", text, st, tw_last_error(), status);
    assert_null(s);
    assert_contains(tw_last_error(), path);
    if (where) {
        char place[600];
        snprintf(place, sizeof place, "%s%s", path, where);
        assert_contains(tw_last_error(), place);
    }
    if (why) assert_contains(tw_last_error(), why);
}

static void test_load_malformed(void **state)
{
    (void)state;
    const char *hdr = "name,start_s,duration_s,power_w\n";
    char text[256];
    snprintf(text, sizeof text, "%sk1,1,1,100\nk2,abc,1,100\n", hdr);
    expect_load_error(0, text, TW_EPARSE, ":3:", "start_s");
    expect_load_error(1, "name,start_s,power_w\nk1,1,100\n", TW_EPARSE, ":1:", "duration_s");
    snprintf(text, sizeof text, "%sk1,1,1\n", hdr);
    expect_load_error(2, text, TW_EPARSE, ":2:", "fields");
    snprintf(text, sizeof text, "%sk1,1,-1,100\n", hdr);
    expect_load_error(3, text, TW_EPARSE, ":2:", "duration_s");
    snprintf(text, sizeof text, "%sa,1,2,100\nb,2,1,100\n", hdr);
    expect_load_error(4, text, TW_EPARSE, ":3:", "kernel 'b' overlaps kernel 'a'");
    snprintf(text, sizeof text, "%s\"unterminated,1,1,100\n", hdr);
    expect_load_error(5, text, TW_EPARSE, ":2:", "quote");
    snprintf(text, sizeof text, "%sk1,1,1,\n", hdr);
    expect_load_error(6, text, TW_EPARSE, ":2:", "power_w");
    expect_load_error(7, hdr, TW_EEMPTY, NULL, "no kernels");
    expect_load_error(0, "", TW_EEMPTY, NULL, NULL);
    expect_load_error(1, "# only a comment\n\n", TW_EEMPTY, NULL, NULL);

    tw_scenario *s = NULL;
    const char *missing = tw_test_path(2, "does-not-exist.csv");
    assert_int_equal(tw_scenario_load(missing, TW_SIM_K20, &s), TW_EIO);
    assert_contains(tw_last_error(), missing);
    assert_null(s);
}

static void test_events_carry_true_energy(void **state)
{
    (void)state;
    tw_scenario *s = make(TW_SIM_K20);
    add(s, "late", 10.0, 0.5, 90.0);
    add(s, "early", 1.0, 2.0, 150.0);
    tw_events *ev = NULL;
    assert_int_equal(tw_scenario_events(s, &ev), TW_OK);
    tw_scenario_free(s); /* the events must not borrow from the scenario */
    assert_int_equal(tw_events_count(ev), 2);
    const tw_event *e = tw_events_get(ev, 0);
    assert_string_equal(e->name, "early");
    assert_true(fabs(e->start_s - 1.0) < EPS);
    assert_true(fabs(e->end_s - 3.0) < EPS);
    assert_int_equal(e->device, 0);
    assert_int_equal(e->stream, 0);
    assert_true(fabs(e->true_energy_j - 300.0) < 1e-9);
    e = tw_events_get(ev, 1);
    assert_string_equal(e->name, "late");
    assert_true(fabs(e->end_s - 10.5) < EPS);
    assert_true(fabs(e->true_energy_j - 45.0) < 1e-9);
    tw_events_free(ev);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_profile_names),
        cmocka_unit_test(test_k20_levels_and_tail),
        cmocka_unit_test(test_k20_tail_cancelled_and_restarted),
        cmocka_unit_test(test_h100_levels),
        cmocka_unit_test(test_exact_energy),
        cmocka_unit_test(test_changes_after_reading),
        cmocka_unit_test(test_many_kernels),
        cmocka_unit_test(test_invalid_kernels),
        cmocka_unit_test(test_load_good),
        cmocka_unit_test(test_load_malformed),
        cmocka_unit_test(test_events_carry_true_energy),
    };
    return cmocka_run_group_tests_name("scenario", tests, NULL, NULL);
}
