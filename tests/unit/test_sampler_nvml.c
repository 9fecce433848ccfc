/* The sampler on the nvml backend against the fake libnvidia-ml.so.1: the
 * plan it takes from a profile (or, without one, the default and a note),
 * the energy counter's thread not holding up the fast readings, and the CPU
 * it costs per GPU. CPU shares are printed; only robust bounds are asserted
 * (the test machine may be loaded). Each test sleeps for real, < 4 s. */
#include "tw_test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "correct/profile.h"
#include "truewatt.h"

#ifndef TW_FAKE_NVML_PATH
#error "TW_FAKE_NVML_PATH must name the fake libnvidia-ml.so.1"
#endif

static const char *const fake_vars[] = {"TW_FAKE_NVML_DEVICES", "TW_FAKE_NVML_ENERGY_SPIN_US", "TW_FAKE_NVML_NAME",
                                        "TW_FAKE_NVML_ARCH", "TW_FAKE_NVML_SCENARIO"};

static int reset_env(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof fake_vars / sizeof fake_vars[0]; i++)
        unsetenv(fake_vars[i]);
    setenv("TW_NVML_LIBRARY", TW_FAKE_NVML_PATH, 1);
    return 0;
}

/* Removes what the tests wrote under $TW_TMPDIR. */
static int cleanup(void **state)
{
    (void)state;
    static const char *const traces[] = {"noprof.csv", "prof.csv", "spin.csv", "cpu.csv"};
    for (size_t i = 0; i < sizeof traces / sizeof traces[0]; i++)
        unlink(tw_test_path(0, traces[i]));
    char file[256], path[4400];
    tw_profile_file_name("Fake H100", "fake-580.0", file, sizeof file);
    snprintf(path, sizeof path, "%s/%s", tw_test_path(1, "profiles"), file);
    unlink(path);
    rmdir(tw_test_path(1, "profiles"));
    rmdir(tw_test_path(1, "empty"));
    return 0;
}

static void sleep_s(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - floor(s)) * 1e9)};
    nanosleep(&ts, NULL);
}

/* An empty folder for profiles. */
static const char *profile_dir(const char *name)
{
    static char dir[4096];
    snprintf(dir, sizeof dir, "%s", tw_test_path(1, name));
    mkdir(dir, 0755);
    return dir;
}

static const char *run_skip; /* the caller's readings not to read (cfg->base->skip); NULL = none */

static tw_sampler *run_sampler(tw_sampler_config *cfg, double seconds)
{
    tw_sensor_config base = {.library = TW_FAKE_NVML_PATH, .skip = run_skip};
    cfg->backend = "nvml";
    cfg->base = &base;
    tw_sampler *s = NULL;
    if (tw_sampler_start(cfg, &s) != TW_OK) fail_msg("tw_sampler_start: %s", tw_last_error());
    cfg->base = NULL;
    sleep_s(seconds);
    if (tw_sampler_stop(s) != TW_OK) fail_msg("tw_sampler_stop: %s", tw_last_error());
    return s;
}

static bool has_reading(const tw_sampler *s, const char *name)
{
    for (size_t i = 0; i < tw_sampler_reading_count(s); i++)
        if (!strcmp(tw_sampler_reading(s, i)->name, name)) return true;
    return false;
}

/* No profile for the GPU: Hopper's default (the fake is an "H200" here, with
 * an empty profile folder: no profile at hand for it), and the notes say so. */
static void test_no_profile(void **state)
{
    (void)state;
    setenv("TW_FAKE_NVML_NAME", "NVIDIA H200", 1);
    setenv("TW_FAKE_NVML_ARCH", "none", 1); /* the name alone tells the generation */
    tw_sampler_config cfg = {.trace_path = tw_test_path(0, "noprof.csv"), .profile_dir = profile_dir("empty")};
    tw_sampler *s = run_sampler(&cfg, 0.3);
    const char *notes = tw_sampler_notes(s);
    printf("notes: %s", notes);
    assert_non_null(strstr(notes, "GPU 0: no sensor profile for NVIDIA H200"));
    assert_non_null(strstr(notes, "the default for Hopper"));
    assert_int_equal(tw_sampler_device_count(s), 1);
    const tw_sampler_device *d = tw_sampler_device_get(s, 0);
    assert_float_equal(d->fast_period_s, 0.05, 1e-12);
    assert_float_equal(d->buffer_poll_s, 0.25, 1e-12);
    assert_float_equal(d->slow_period_s, 0.5, 1e-12);
    assert_true(has_reading(s, "power_avg_w")); /* nothing known to skip */
    char *trace = tw_test_slurp(cfg.trace_path);
    assert_non_null(strstr(trace, "# sampling plan: the default for Hopper"));
    free(trace);
    tw_sampler_free(s);
}

/* A profile for the GPU and driver in the folder: its plan, field 185 not read. */
static void test_profile_plan(void **state)
{
    (void)state;
    const char *dir = profile_dir("profiles");
    tw_profile p;
    tw_profile_init(&p);
    snprintf(p.gpu, sizeof p.gpu, "Fake H100");
    snprintf(p.driver, sizeof p.driver, "fake-580.0");
    const char *names[] = {"power_usage_w", "power_avg_w"};
    for (size_t i = 0; i < 2; i++) { /* two readings with one model: the second repeats the first */
        tw_reading_model m;
        tw_reading_model_init(&m, names[i]);
        m.response = TW_RESP_BOXCAR;
        m.period_s = 0.1, m.window_s = 1.0, m.delay_s = 0.03, m.step_w = 160, m.coverage = 1;
        assert_int_equal(tw_profile_set(&p, &m), TW_OK);
    }
    char file[256], path[4400];
    tw_profile_file_name(p.gpu, p.driver, file, sizeof file);
    snprintf(path, sizeof path, "%s/%s", dir, file);
    assert_int_equal(tw_profile_save(&p, path), TW_OK);
    tw_sampler_config cfg = {.trace_path = tw_test_path(0, "prof.csv"), .profile_dir = dir};
    tw_sampler *s = run_sampler(&cfg, 0.3);
    const tw_sampler_device *d = tw_sampler_device_get(s, 0);
    printf("plan: %s\n", d->plan);
    assert_non_null(strstr(d->plan, "from the sensor profile"));
    assert_non_null(strstr(d->plan, "power_avg_w not read (repeats power_usage_w)"));
    assert_false(has_reading(s, "power_avg_w"));
    assert_true(has_reading(s, "power_usage_w"));
    assert_true(has_reading(s, "power_buffer_w")); /* not in the profile: read along */
    assert_null(strstr(tw_sampler_notes(s), "no sensor profile"));
    tw_sampler_free(s);
    /* the caller's own skip list (the Slurm plugin's) is kept beside the plan's */
    run_skip = "power_buffer_w";
    s = run_sampler(&cfg, 0.3);
    run_skip = NULL;
    assert_false(has_reading(s, "power_buffer_w"));
    assert_false(has_reading(s, "power_avg_w"));
    assert_true(has_reading(s, "power_usage_w"));
    tw_sampler_free(s);
}

/* Times of one column's values (own timestamps) in a trace. */
static size_t column_times(const char *path, const char *name, double *t, size_t cap)
{
    tw_trace_reader *r = NULL;
    if (tw_trace_reader_open(path, &r) != TW_OK) fail_msg("%s", tw_last_error());
    size_t col = 0, n = 0;
    if (tw_trace_reader_find(r, name, &col) != TW_OK) fail_msg("%s", tw_last_error());
    tw_row row;
    bool eof = false;
    while (tw_trace_reader_next(r, &row, &eof) == TW_OK && !eof)
        if (row.valid[col] && n < cap) t[n++] = row.t_value_s[col];
    tw_trace_reader_close(r);
    return n;
}

/* The counter costs 30 ms of CPU a read; the fast readings (every 5 ms) go on
 * during those reads: most counter reads have a power reading inside them.
 * Were they in one thread, none would. */
static void test_counter_does_not_delay(void **state)
{
    (void)state;
    setenv("TW_FAKE_NVML_ENERGY_SPIN_US", "30000", 1);
    tw_sampler_config cfg = {.trace_path = tw_test_path(0, "spin.csv"),
                             .profile_dir = profile_dir("empty"),
                             .fast_period_s = 0.005,
                             .slow_period_s = 0.25};
    tw_sampler *s = run_sampler(&cfg, 2.0);
    static double te[64], tp[4096];
    size_t ne = column_times(cfg.trace_path, "energy_j", te, 64);
    size_t np = column_times(cfg.trace_path, "power_usage_w", tp, 4096);
    size_t inside = 0;
    for (size_t i = 0; i < ne; i++) { /* the read ran over ~[t - 15 ms, t + 15 ms] */
        bool hit = false;
        for (size_t k = 0; k < np && !hit; k++)
            hit = fabs(tp[k] - te[i]) < 0.010;
        inside += hit;
    }
    printf("%zu counter reads of 30 ms, %zu with a power reading within 10 ms of their middle; %zu power readings\n",
           ne, inside, np);
    assert_true(ne >= 3);
    assert_true(2 * inside >= ne);
    tw_sampler_free(s);
}

/* The default plan on the fake (a counter read costing 4 ms of CPU, as on an
 * H100) for one and two GPUs: the CPU share per GPU, printed, well under a busy loop's; the
 * per-device and writer times add up to the total. */
static void cpu_share(unsigned ndev)
{
    char n[8];
    snprintf(n, sizeof n, "%u", ndev);
    setenv("TW_FAKE_NVML_DEVICES", n, 1);
    setenv("TW_FAKE_NVML_ENERGY_SPIN_US", "4000", 1);
    tw_sampler_config cfg = {.trace_path = tw_test_path(0, "cpu.csv"), .profile_dir = profile_dir("empty")};
    tw_sampler *s = run_sampler(&cfg, 3.0);
    double wall = tw_sampler_wall_s(s), sum = tw_sampler_writer_cpu_s(s);
    assert_int_equal(tw_sampler_device_count(s), ndev);
    printf("%u GPU(s): %.2f %% of one core per GPU (", ndev, 100 * tw_sampler_cpu_s(s) / wall / ndev);
    for (size_t d = 0; d < ndev; d++) {
        const tw_sampler_device *x = tw_sampler_device_get(s, d);
        assert_int_equal(x->index, (int)d);
        printf("GPU %d: %.2f %%, ", x->index, 100 * x->cpu_s / wall);
        sum += x->cpu_s;
    }
    printf("writer %.2f %%) over %.2f s\n", 100 * tw_sampler_writer_cpu_s(s) / wall, wall);
    assert_float_equal(sum, tw_sampler_cpu_s(s), 1e-9);
    /* the counter alone: 4 ms every 0.5 s = 0.8 %; a loaded machine adds little CPU time */
    assert_true(tw_sampler_cpu_s(s) / wall / ndev > 0.004);
    /* A bound that catches a sampler that polls instead of sleeping (a busy loop is ~100 %), not
     * the 2 % target: CPU time on a shared 2-core CI machine varies with its load (2.05 % for one
     * GPU in a CI run of the optimised build, 2.83 % under AddressSanitizer), so the target is
     * measured and printed by bench/sampler_cpu (docs/results.md), not asserted here. */
    assert_true(tw_sampler_cpu_s(s) / wall / ndev < 0.1);
    tw_sampler_free(s);
}

static void test_cpu_one_gpu(void **state)
{
    (void)state;
    cpu_share(1);
}

static void test_cpu_two_gpus(void **state)
{
    (void)state;
    cpu_share(2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_no_profile, reset_env, cleanup),
        cmocka_unit_test_setup_teardown(test_profile_plan, reset_env, cleanup),
        cmocka_unit_test_setup_teardown(test_counter_does_not_delay, reset_env, cleanup),
        cmocka_unit_test_setup_teardown(test_cpu_one_gpu, reset_env, cleanup),
        cmocka_unit_test_setup_teardown(test_cpu_two_gpus, reset_env, cleanup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
