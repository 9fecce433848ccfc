/* The sampling plan (src/sample/plan.c): given profiles, the readings read
 * and their periods; without a profile, the default of the GPU's generation.
 * Expected periods are worked out by hand from the rules in plan.h. */
#include "tw_test.h"

#include <math.h>
#include <string.h>

#include "correct/profile.h"
#include "sample/plan.h"

static tw_reading_model model(const char *name, tw_response resp, double period, double p10, double window,
                              double delay, double c, double step)
{
    tw_reading_model m;
    tw_reading_model_init(&m, name);
    m.response = resp;
    m.period_s = period;
    m.period_p10_s = p10;
    m.window_s = window;
    m.delay_s = delay;
    m.capacitance_s = c;
    m.step_w = step;
    m.coverage = 1;
    return m;
}

/* The readings of data/profiles/nvidia-h100-80gb-hbm3_580.159.04.json. */
static void h100(tw_profile *p)
{
    tw_profile_init(p);
    tw_reading_model r[] = {
        model("power_usage_w", TW_RESP_BOXCAR, 0.0999931965, 0.0393607645, 1.00515518, 0.03088667727, NAN, 162.07),
        model("power_avg_w", TW_RESP_BOXCAR, 0.09999334, 0.039608464, 1.005108375, 0.03091007997, NAN, 162.07),
        model("power_instant_w", TW_RESP_RC, 0.0999957005, 0.039495996, NAN, 0.009139090776, 0.01817335469, 161.72),
        model("mem_power_avg_w", TW_RESP_BOXCAR, 0.099993422, 0.039638642, 1.240647899, 0.2220228128, NAN, 4.05),
        model("power_buffer_w", TW_RESP_RC, 0.019998, 0.011326999, NAN, 0.003947885586, 0.01321065694, 161.53),
        model("energy_j", TW_RESP_COUNTER, 0.100000362, 0.0999547585, 0.100000362, 0.01362729692, NAN, 161.08),
    };
    for (size_t i = 0; i < sizeof r / sizeof r[0]; i++)
        assert_int_equal(tw_profile_set(p, &r[i]), TW_OK);
}

static const tw_plan_reading *must_find(const tw_sample_plan *pl, const char *name)
{
    const tw_plan_reading *r = tw_sample_plan_find(pl, name);
    if (!r) fail_msg("the plan has no entry for %s", name);
    return r;
}

static void test_h100_profile(void **state)
{
    (void)state;
    tw_profile p;
    h100(&p);
    tw_sample_plan pl;
    tw_sample_plan_from_profile(&p, "h100.json", &pl);
    assert_true(pl.from_profile);
    /* field 185 repeats power usage: the same 1 s boxcar, delay and step */
    const tw_plan_reading *avg = must_find(&pl, "power_avg_w");
    assert_false(avg->read);
    assert_non_null(strstr(avg->why, "repeats power_usage_w"));
    assert_string_equal(pl.skip, "power_avg_w");
    /* the memory rail's boxcar is not a duplicate of the board's (another step, window) */
    assert_true(must_find(&pl, "mem_power_avg_w")->read);
    /* polled twice per 100 ms update */
    assert_float_equal(must_find(&pl, "power_usage_w")->period_s, 0.050, 1e-12);
    assert_float_equal(must_find(&pl, "power_instant_w")->period_s, 0.050, 1e-12);
    /* buffer: 120 samples x 11.327 ms (p10) / 4 = 339.8 ms, whole ms down: 339 ms */
    const tw_plan_reading *buf = must_find(&pl, "power_buffer_w");
    assert_true(buf->read);
    assert_float_equal(buf->period_s, 0.339, 1e-12);
    assert_float_equal(pl.buffer_poll_s, 0.339, 1e-12);
    assert_float_equal(pl.fast_period_s, 0.050, 1e-12);
    /* the counter: every 0.5 s (it updates every 0.1 s, the estimator needs 0.5 s), up to 1 s at 1 % */
    assert_true(must_find(&pl, "energy_j")->read);
    assert_float_equal(pl.slow_period_s, 0.5, 1e-12);
    assert_float_equal(pl.slow_max_period_s, 1.0, 1e-12);
    assert_float_equal(pl.slow_cpu_budget, 0.01, 1e-12);
    assert_non_null(strstr(pl.summary, "h100.json"));
    assert_non_null(strstr(pl.summary, "power_avg_w not read (repeats power_usage_w)"));
}

/* Readings the profile cannot model are not read; a buffer of fast samples is
 * drained sooner; a counter slower than the need sets its own period. */
static void test_other_profiles(void **state)
{
    (void)state;
    tw_profile p;
    tw_profile_init(&p);
    tw_reading_model r[] = {
        model("power_usage_w", TW_RESP_UNKNOWN, NAN, NAN, NAN, NAN, NAN, NAN),
        model("power_buffer_w", TW_RESP_BOXCAR, 0.005, NAN, 0.005, 0.0, NAN, 100),
        model("energy_j", TW_RESP_COUNTER, 2.0, 2.0, 2.0, 0.0, NAN, 100),
    };
    for (size_t i = 0; i < 3; i++)
        assert_int_equal(tw_profile_set(&p, &r[i]), TW_OK);
    tw_sample_plan pl;
    tw_sample_plan_from_profile(&p, NULL, &pl);
    assert_false(must_find(&pl, "power_usage_w")->read);
    assert_non_null(strstr(must_find(&pl, "power_usage_w")->why, "could not model"));
    assert_string_equal(pl.skip, "power_usage_w");
    /* no p10: the median 5 ms; 120 x 5 ms / 4 = 150 ms */
    assert_float_equal(pl.buffer_poll_s, 0.150, 1e-12);
    /* nothing polled: the drain sets the fast thread's period */
    assert_float_equal(pl.fast_period_s, 0.150, 1e-12);
    assert_float_equal(pl.slow_period_s, 2.0, 1e-12);
    assert_float_equal(pl.slow_max_period_s, 2.0, 1e-12);

    /* a K20-like profile: power usage with a 15 ms update, polled every 7.5 ms
     * (to the nearest ms: 8 ms); a 1 ms buffer drained every 30 ms */
    tw_profile_init(&p);
    tw_reading_model k[] = {
        model("power_usage_w", TW_RESP_RC, 0.015, 0.014, NAN, 0.0, 0.84, 100),
        model("power_buffer_w", TW_RESP_BOXCAR, 0.001, 0.001, 0.001, 0.0, NAN, 100),
    };
    for (size_t i = 0; i < 2; i++)
        assert_int_equal(tw_profile_set(&p, &k[i]), TW_OK);
    tw_sample_plan_from_profile(&p, "k20.json", &pl);
    assert_float_equal(must_find(&pl, "power_usage_w")->period_s, 0.008, 1e-12);
    assert_float_equal(pl.buffer_poll_s, 0.030, 1e-12);
    assert_float_equal(pl.fast_period_s, 0.008, 1e-12);
    assert_string_equal(pl.skip, "");
    /* no counter in the profile: the counter's default period */
    assert_float_equal(pl.slow_period_s, 0.5, 1e-12);
}

static void test_generation(void **state)
{
    (void)state;
    assert_int_equal(tw_plan_arch("NVIDIA H200", 0), TW_ARCH_HOPPER);
    assert_int_equal(tw_plan_arch("NVIDIA H200 NVL", 0xffffffffu), TW_ARCH_HOPPER);
    assert_int_equal(tw_plan_arch("NVIDIA H20", 0), TW_ARCH_HOPPER);
    assert_int_equal(tw_plan_arch("NVIDIA H100 80GB HBM3", 0), TW_ARCH_HOPPER);
    assert_int_equal(tw_plan_arch("NVIDIA A100-SXM4-80GB", 0), TW_ARCH_AMPERE);
    assert_int_equal(tw_plan_arch("Tesla V100-SXM2-16GB", 0), TW_ARCH_VOLTA);
    assert_int_equal(tw_plan_arch("Tesla K20c", 0), TW_ARCH_UNKNOWN); /* "K20c" is not the word "K20" */
    assert_int_equal(tw_plan_arch("Tesla K20", 0), TW_ARCH_KEPLER);
    assert_int_equal(tw_plan_arch("NVIDIA GeForce RTX 4090", 0), TW_ARCH_UNKNOWN);
    assert_int_equal(tw_plan_arch("NVIDIA GeForce RTX 4090", TW_ARCH_ADA), TW_ARCH_ADA); /* NVML's answer wins */
    assert_int_equal(tw_plan_arch("NVIDIA H100", TW_ARCH_BLACKWELL), TW_ARCH_BLACKWELL);
    assert_int_equal(tw_plan_arch(NULL, 0), TW_ARCH_UNKNOWN);
    assert_string_equal(tw_plan_arch_name(TW_ARCH_HOPPER), "Hopper");
    assert_string_equal(tw_plan_arch_name(42), "a newer generation");
}

static void test_defaults(void **state)
{
    (void)state;
    tw_sample_plan pl;
    /* a Hopper GPU without a profile at hand: Hopper's default, as the H100's sensors */
    tw_sample_plan_default(tw_plan_arch("NVIDIA H200", 0), &pl);
    assert_false(pl.from_profile);
    assert_float_equal(pl.fast_period_s, 0.05, 1e-12);
    assert_float_equal(pl.buffer_poll_s, 0.25, 1e-12);
    assert_float_equal(pl.slow_period_s, 0.5, 1e-12);
    assert_float_equal(pl.slow_max_period_s, 1.0, 1e-12);
    assert_float_equal(pl.slow_cpu_budget, 0.01, 1e-12);
    assert_string_equal(pl.skip, "");
    assert_non_null(strstr(pl.summary, "the default for Hopper"));

    tw_sample_plan_default(TW_ARCH_VOLTA, &pl);
    assert_float_equal(pl.fast_period_s, 0.005, 1e-12);
    assert_float_equal(pl.slow_period_s, 0.1, 1e-12);
    assert_float_equal(pl.slow_cpu_budget, 0.005, 1e-12);
    assert_non_null(strstr(pl.summary, "Volta (before Ampere)"));

    tw_sample_plan_default(TW_ARCH_UNKNOWN, &pl);
    assert_float_equal(pl.fast_period_s, 0.005, 1e-12);
    assert_non_null(strstr(pl.summary, "unknown generation"));
}

static void test_override(void **state)
{
    (void)state;
    tw_sample_plan pl;
    tw_sample_plan_default(TW_ARCH_HOPPER, &pl);
    tw_sample_plan_override(&pl, 0, 0); /* nothing given: unchanged */
    assert_float_equal(pl.fast_period_s, 0.05, 1e-12);
    assert_float_equal(pl.slow_cpu_budget, 0.01, 1e-12);
    tw_sample_plan_override(&pl, 0.001, 0.2);
    assert_float_equal(pl.fast_period_s, 0.001, 1e-12);
    assert_float_equal(pl.slow_period_s, 0.2, 1e-12);
    assert_float_equal(pl.slow_max_period_s, 0.2, 1e-12);
    assert_float_equal(pl.slow_cpu_budget, 0.0, 0); /* a period given is fixed */
    assert_float_equal(pl.buffer_poll_s, 0.25, 1e-12);
    assert_non_null(strstr(pl.summary, "every 0.001 s (--fast-period)"));
    assert_non_null(strstr(pl.summary, "every 0.2 s (--slow-period)"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_h100_profile), cmocka_unit_test(test_other_profiles), cmocka_unit_test(test_generation),
        cmocka_unit_test(test_defaults),     cmocka_unit_test(test_override),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
