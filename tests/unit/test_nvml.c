/* The nvml backend against the fake libnvidia-ml.so.1 (tests/fakes/fake_nvml.c),
 * which answers from a scenario's exact true power on the real clocks: the
 * fake's simulated time is the trace timeline (both start at the same
 * CLOCK_MONOTONIC instant), so every value and own timestamp the backend
 * reads can be checked exactly. Each test sleeps for real, < 2 s. */
#include "tw_test.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "truewatt.h"

#ifndef TW_FAKE_NVML_PATH
#error "TW_FAKE_NVML_PATH must name the fake libnvidia-ml.so.1"
#endif

static const char *const fake_vars[] = {
    "TW_FAKE_NVML_SCENARIO",       "TW_FAKE_NVML_T0_MONO_NS",      "TW_FAKE_NVML_DEVICES",
    "TW_FAKE_NVML_UNSUPPORTED",    "TW_FAKE_NVML_INIT_ERROR",      "TW_FAKE_NVML_LOST_AFTER_S",
    "TW_FAKE_NVML_ENERGY_COST_US", "TW_FAKE_NVML_FIELD_TIMESTAMP", "TW_FAKE_NVML_LOST_CODE",
};

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void sleep_s(double s)
{
    if (s <= 0) return;
    struct timespec ts = {(time_t)s, (long)((s - floor(s)) * 1e9)};
    nanosleep(&ts, NULL);
}

/* Sleeps until t_s seconds after t0 (CLOCK_MONOTONIC ns). */
static void sleep_until(uint64_t t0, double t_s) { sleep_s(t_s - (double)(mono_ns() - t0) * 1e-9); }

/* A fresh fake for each test: no TW_FAKE_NVML_* left from the last one, the
 * library found through TW_NVML_LIBRARY as well as cfg.library. */
static int reset_env(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof fake_vars / sizeof fake_vars[0]; i++)
        unsetenv(fake_vars[i]);
    setenv("TW_NVML_LIBRARY", TW_FAKE_NVML_PATH, 1);
    return 0;
}

/* Starts the fake's simulated time (and the timeline) now, with kernels. */
static uint64_t start_fake(const char *kernels_csv)
{
    if (kernels_csv) setenv("TW_FAKE_NVML_SCENARIO", tw_test_file(0, kernels_csv), 1);
    uint64_t t0 = mono_ns();
    char buf[32];
    snprintf(buf, sizeof buf, "%llu", (unsigned long long)t0);
    setenv("TW_FAKE_NVML_T0_MONO_NS", buf, 1);
    return t0;
}

static tw_status open_nvml(const char *device, unsigned groups, uint64_t t0, tw_sensor **s)
{
    tw_sensor_config cfg = {.device = device, .groups = groups, .library = TW_FAKE_NVML_PATH, .t0_mono_ns = t0};
    return tw_sensor_open("nvml", &cfg, s);
}

/* Sensors a test opened with must_open: a failed test leaves them open, and
 * the teardown closes them, so the library (and the fake's configuration)
 * does not outlive the test. */
static tw_sensor *opened[16];

static tw_sensor *must_open(const char *device, unsigned groups, uint64_t t0)
{
    tw_sensor *s = NULL;
    if (open_nvml(device, groups, t0, &s) != TW_OK) fail_msg("tw_sensor_open(nvml): %s", tw_last_error());
    for (size_t i = 0; i < sizeof opened / sizeof opened[0]; i++)
        if (!opened[i]) {
            opened[i] = s;
            break;
        }
    return s;
}

static void close_sensor(tw_sensor *s)
{
    for (size_t i = 0; i < sizeof opened / sizeof opened[0]; i++)
        if (opened[i] == s) opened[i] = NULL;
    tw_sensor_close(s);
}

static int close_all(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof opened / sizeof opened[0]; i++) {
        tw_sensor_close(opened[i]);
        opened[i] = NULL;
    }
    return 0;
}

static size_t col(const tw_sensor *s, const char *name)
{
    size_t i = 0;
    if (tw_sensor_find(s, name, &i) != TW_OK) fail_msg("%s", tw_last_error());
    return i;
}

static void must_next(tw_sensor *s, tw_row *row)
{
    bool eof = true;
    if (tw_sensor_next(s, row, &eof) != TW_OK) fail_msg("tw_sensor_next: %s", tw_last_error());
    assert_false(eof);
    assert_int_equal(row->n, tw_sensor_nreadings(s));
}

static bool contains(const char *hay, const char *needle)
{
    if (!strstr(hay, needle)) {
        print_message("expected \"%s\" in:\n%s\n", needle, hay);
        return false;
    }
    return true;
}

static tw_scenario *load_scenario(const char *csv)
{
    tw_scenario *sc = NULL;
    if (tw_scenario_load(tw_test_file(1, csv), TW_SIM_H100, &sc) != TW_OK) fail_msg("%s", tw_last_error());
    return sc;
}

/* ---------------------------------------------------------------- discovery */

static void test_available(void **state)
{
    (void)state;
    char why[512] = "";
    bool ok = tw_backend_available("nvml", why, sizeof why);
    if (!ok) fail_msg("nvml unavailable with the fake: %s", why);
    bool listed = false;
    for (size_t i = 0; i < tw_backend_count(); i++)
        if (strcmp(tw_backend_name(i), "nvml") == 0) {
            listed = true;
            assert_string_equal(tw_backend_description(i), "NVIDIA GPUs through libnvidia-ml (dlopen)");
        }
    assert_true(listed);
}

static void test_devices(void **state)
{
    (void)state;
    setenv("TW_FAKE_NVML_DEVICES", "2", 1);
    /* cfg.library wins over TW_NVML_LIBRARY */
    setenv("TW_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1", 1);
    tw_sensor_config cfg = {.library = TW_FAKE_NVML_PATH};
    tw_device_info d[4];
    size_t n = 0;
    if (tw_backend_devices("nvml", &cfg, d, 4, &n) != TW_OK) fail_msg("%s", tw_last_error());
    print_message("devices: %zu: %u %s %s, %u %s %s\n", n, d[0].index, d[0].uuid, d[0].name, d[1].index, d[1].uuid,
                  d[1].name);
    assert_int_equal(n, 2);
    assert_int_equal(d[0].index, 0);
    assert_int_equal(d[1].index, 1);
    assert_string_equal(d[0].uuid, "GPU-fake-0000-0000-0000-000000000000");
    assert_string_equal(d[1].uuid, "GPU-fake-0001-0000-0000-000000000000");
    assert_string_equal(d[1].name, "Fake H100");
    /* fewer slots than devices: *n is still the count */
    memset(d, 0, sizeof d);
    assert_int_equal(tw_backend_devices("nvml", &cfg, d, 1, &n), TW_OK);
    assert_int_equal(n, 2);
    assert_string_equal(d[0].uuid, "GPU-fake-0000-0000-0000-000000000000");
    assert_string_equal(d[1].uuid, "");

    setenv("TW_NVML_LIBRARY", TW_FAKE_NVML_PATH, 1);
    tw_sensor *s1 = must_open("GPU-fake-0001-0000-0000-000000000000", TW_READ_FAST, 0);
    tw_sensor *s0 = must_open("0", TW_READ_SLOW, 0);
    tw_sensor *s2 = must_open("1", TW_READ_ALL, 0);
    tw_sensor *s3 = must_open(NULL, 0, 0);
    assert_string_equal(tw_sensor_backend(s1), "nvml");
    tw_row row;
    must_next(s1, &row);
    must_next(s0, &row);
    /* while loaded, another library path is refused with a reason */
    tw_sensor_config other = {.library = "/other/libnvidia-ml.so.1"};
    assert_int_equal(tw_backend_devices("nvml", &other, d, 4, &n), TW_EINVAL);
    assert_true(contains(tw_last_error(), "already loaded"));
    close_sensor(s1);
    close_sensor(s0);
    close_sensor(s2);
    close_sensor(s3);
}

static void test_bad_device(void **state)
{
    (void)state;
    tw_sensor *s = NULL;
    assert_int_equal(open_nvml("7", 0, 0, &s), TW_ENOTFOUND);
    assert_null(s);
    print_message("%s\n", tw_last_error());
    assert_true(contains(tw_last_error(), "no device 7"));
    assert_true(contains(tw_last_error(), "GPU-fake-0000"));
    assert_int_equal(open_nvml("GPU-nope", 0, 0, &s), TW_ENOTFOUND);
    print_message("%s\n", tw_last_error());
    assert_true(contains(tw_last_error(), "'GPU-nope'"));
    tw_sensor_config cfg = {.library = TW_FAKE_NVML_PATH, .groups = 4};
    assert_int_equal(tw_sensor_open("nvml", &cfg, &s), TW_EINVAL);
}

/* ---------------------------------------------------------------- readings */

static void check_names(const tw_sensor *s, const char *const *names, size_t n)
{
    assert_int_equal(tw_sensor_nreadings(s), n);
    for (size_t i = 0; i < n; i++)
        assert_string_equal(tw_sensor_reading(s, i)->name, names[i]);
}

static void test_readings(void **state)
{
    (void)state;
    static const char *const fast[] = {"power_usage_w",   "power_avg_w",         "power_instant_w",
                                       "mem_power_avg_w", "mem_power_instant_w", "power_buffer_w"};
    static const char *const slow[] = {"energy_j", "sm_clock_mhz", "mem_clock_mhz", "temperature_c", "memory_used_mib"};
    uint64_t t0 = start_fake(NULL);
    tw_sensor *f = must_open("0", TW_READ_FAST, t0);
    tw_sensor *sl = must_open("0", TW_READ_SLOW, t0);
    tw_sensor *both = must_open("0", 0, t0);
    check_names(f, fast, 6);
    check_names(sl, slow, 5);
    assert_int_equal(tw_sensor_nreadings(both), 11);
    assert_string_equal(tw_sensor_reading(both, 0)->name, "power_usage_w");
    assert_string_equal(tw_sensor_reading(both, 6)->name, "energy_j");
    for (size_t i = 0; i < 6; i++) {
        assert_int_equal(tw_sensor_reading(f, i)->quantity, TW_Q_POWER);
        assert_true(tw_sensor_reading(f, i)->scale == 1e-3);
    }
    assert_int_equal(tw_sensor_reading(sl, 0)->quantity, TW_Q_ENERGY);
    assert_true(tw_sensor_reading(sl, 0)->scale == 1e-3);
    for (size_t i = 1; i < 5; i++)
        assert_int_equal(tw_sensor_reading(sl, i)->quantity, TW_Q_OTHER);
    assert_string_equal(tw_sensor_notes(f), "");
    assert_string_equal(tw_sensor_notes(sl), "");
    assert_int_equal(tw_sensor_rewind(f), TW_EUNSUPPORTED);

    /* an idle device (no kernels): 75 W, 40 W memory, idle clocks */
    tw_row row;
    must_next(f, &row);
    print_message("fast row at %.6f s: usage %.3f W avg %.3f W inst %.3f W mem %.3f W\n", row.t_s, row.value[0],
                  row.value[1], row.value[2], row.value[3]);
    for (size_t i = 0; i < 5; i++)
        assert_true(row.valid[i]);
    assert_float_equal(row.value[col(f, "power_usage_w")], 75.0, 1e-3);
    assert_float_equal(row.value[col(f, "power_avg_w")], 75.0, 1e-3);
    assert_float_equal(row.value[col(f, "mem_power_avg_w")], 40.0, 1e-3);
    assert_float_equal(row.value[col(f, "mem_power_instant_w")], 40.0, 1e-3);
    /* field timestamps are the time of the call (as on an H100): on the row */
    for (size_t i = 0; i < 5; i++)
        assert_true(fabs(row.t_value_s[i] - row.t_s) < 0.002);
    must_next(sl, &row);
    print_message("slow row at %.6f s: %.3f J, %g MHz, %g MHz, %g C, %g MiB\n", row.t_s, row.value[0], row.value[1],
                  row.value[2], row.value[3], row.value[4]);
    for (size_t i = 0; i < 5; i++)
        assert_true(row.valid[i]);
    assert_true(row.value[0] >= 1000.0 && row.value[0] < 1100.0);
    assert_float_equal(row.value[1], 345.0, 0);
    assert_float_equal(row.value[2], 2619.0, 0);
    assert_float_equal(row.value[3], 40.0, 0);
    assert_float_equal(row.value[4], 1024.0, 1e-9);
    must_next(both, &row);
    assert_int_equal(row.n, 11);
    close_sensor(f);
    close_sensor(sl);
    close_sensor(both);
}

/* power_avg_w is the 1 s boxcar published every 100 ms: exactly the mean true
 * power over the second before its own timestamp. */
static void check_boxcar(const tw_scenario *sc, const tw_row *row, size_t avg, size_t inst, size_t usage)
{
    double u = round(row->t_value_s[avg] * 10.0) / 10.0;
    double want_avg = tw_scenario_true_energy_j(sc, u - 1.0, u);
    double want_inst = tw_scenario_true_energy_j(sc, u - 0.025, u) / 0.025;
    print_message("t %.4f s: avg %.3f W (own t %.6f, want %.3f), inst %.3f W (want %.3f), usage %.3f W\n", row->t_s,
                  row->value[avg], row->t_value_s[avg], want_avg, row->value[inst], want_inst, row->value[usage]);
    assert_float_equal(row->t_value_s[avg], u, 1e-4);
    assert_float_equal(row->value[avg], want_avg, 1.5e-3);
    assert_float_equal(row->value[inst], want_inst, 1.5e-3);
    assert_true(row->t_value_s[avg] <= row->t_s + 1e-4 && row->t_s - row->t_value_s[avg] < 0.15);
    assert_float_equal(row->t_value_s[inst], row->t_value_s[avg], 1e-6);
    assert_true(fabs(row->t_value_s[usage] - row->t_s) < 0.01);
}

static void test_fields_follow_kernel(void **state)
{
    (void)state;
    static const char *const csv = "name,start_s,duration_s,power_w\nk,0.2,2.0,300\n";
    tw_scenario *sc = load_scenario(csv);
    /* fields stamped with their update instant */
    setenv("TW_FAKE_NVML_FIELD_TIMESTAMP", "update", 1);
    uint64_t t0 = start_fake(csv);
    tw_sensor *s = must_open("0", TW_READ_FAST, t0);
    size_t avg = col(s, "power_avg_w"), inst = col(s, "power_instant_w"), usage = col(s, "power_usage_w");
    tw_row row;

    sleep_until(t0, 0.35); /* 150 ms into the kernel: a step of the boxcar */
    must_next(s, &row);
    check_boxcar(sc, &row, avg, inst, usage);
    assert_true(row.value[avg] > 120.5 && row.value[avg] < 200.0);
    assert_float_equal(row.value[inst], 300.0, 1.5e-3);

    sleep_until(t0, 0.75); /* half way up */
    must_next(s, &row);
    check_boxcar(sc, &row, avg, inst, usage);
    assert_true(row.value[avg] > 180.0 && row.value[avg] < 280.0);

    sleep_until(t0, 1.35); /* 1.15 s into the 2 s kernel: the boxcar has reached it */
    must_next(s, &row);
    check_boxcar(sc, &row, avg, inst, usage);
    assert_float_equal(row.value[avg], 300.0, 1.5e-3);
    assert_float_equal(row.value[usage], 300.0, 1.5e-3);
    assert_float_equal(row.value[inst], 300.0, 1.5e-3);
    close_sensor(s);
    tw_scenario_free(sc);
}

static void test_buffer_lossless(void **state)
{
    (void)state;
    static const char *const csv = "name,start_s,duration_s,power_w\nk,0.1,0.2,350\n";
    tw_scenario *sc = load_scenario(csv);
    uint64_t t0 = start_fake(csv);
    tw_sensor *s = must_open("0", TW_READ_FAST, t0);
    size_t b = col(s, "power_buffer_w");
    double v[256], tv[256], prev_t = -1.0;
    size_t n = 0, rows = 0;
    tw_row row;
    while ((double)(mono_ns() - t0) * 1e-9 < 0.55 && n < 256) {
        must_next(s, &row);
        rows++;
        assert_true(row.t_s >= prev_t);
        prev_t = row.t_s;
        if (row.valid[b]) {
            v[n] = row.value[b];
            tv[n] = row.t_value_s[b];
            assert_true(tv[n] <= row.t_s + 1e-4 && row.t_s - tv[n] < 0.25); /* < 150 ms but after the pause */
            n++;
        }
        /* once, a slow caller: the next poll gets ~5 samples, emitted one a row */
        sleep_s(rows == 200 ? 0.1 : 0.001);
    }
    double e = 0, worst = 0;
    for (size_t i = 0; i < n; i++) {
        /* each sample is the mean over its 20 ms, stamped at its end */
        double end = round(tv[i] / 0.02) * 0.02;
        assert_float_equal(tv[i], end, 1e-4);
        double want = tw_scenario_true_energy_j(sc, end - 0.02, end) / 0.02;
        worst = fmax(worst, fabs(v[i] - want));
        e += v[i] * 0.02;
        if (i > 0) assert_float_equal(tv[i] - tv[i - 1], 0.020, 2e-5); /* none lost, none twice */
    }
    assert_true(n >= 2);
    double truth = tw_scenario_true_energy_j(sc, tv[0] - 0.02, tv[n - 1]);
    print_message("%zu rows, %zu samples over %.3f..%.3f s (expected %.0f); energy %.4f J vs %.4f J true; "
                  "worst sample error %.4f W\n",
                  rows, n, tv[0], tv[n - 1], (tv[n - 1] - tv[0]) / 0.02 + 1, e, truth, worst);
    assert_true(n >= 20);
    assert_float_equal(e, truth, 0.02 * truth);
    assert_true(worst < 2e-3);
    close_sensor(s);
    tw_scenario_free(sc);
}

/* The counter: 1e6 mJ + the energy up to the last 100 ms update. */
static bool energy_matches(const tw_scenario *sc, double t1, double t2, double diff_j)
{
    for (int i = -1; i <= 1; i++)
        for (int j = -1; j <= 1; j++) {
            double u1 = floor((t1 + i * 0.004) * 10.0) / 10.0, u2 = floor((t2 + j * 0.004) * 10.0) / 10.0;
            if (fabs(tw_scenario_true_energy_j(sc, u1, u2) - diff_j) < 2e-3) return true;
        }
    return false;
}

static void test_energy_counter(void **state)
{
    (void)state;
    static const char *const csv = "name,start_s,duration_s,power_w\nk,0.1,0.5,300\n";
    tw_scenario *sc = load_scenario(csv);
    setenv("TW_FAKE_NVML_ENERGY_COST_US", "4000", 1);
    uint64_t t0 = start_fake(csv);
    tw_sensor *s = must_open("0", TW_READ_SLOW, t0);
    size_t e = col(s, "energy_j");
    tw_row row;
    sleep_until(t0, 0.05);
    must_next(s, &row);
    double e1 = row.value[e], t1 = row.t_value_s[e];
    assert_true(fabs(t1 - row.t_s) < 0.15);
    sleep_until(t0, 0.85);
    must_next(s, &row);
    double e2 = row.value[e], t2 = row.t_value_s[e];
    assert_true(fabs(t2 - row.t_s) < 0.15);
    double truth = tw_scenario_true_energy_j(sc, floor(t1 * 10) / 10, floor(t2 * 10) / 10);
    print_message("energy %.4f J at %.4f s, %.4f J at %.4f s: diff %.4f J, scenario %.4f J\n", e1, t1, e2, t2, e2 - e1,
                  truth);
    assert_true(energy_matches(sc, t1, t2, e2 - e1));
    assert_true(e2 - e1 > 140.0); /* the kernel's 0.5 s at 300 W is in there */
    close_sensor(s);
    tw_scenario_free(sc);
}

static void test_timeline(void **state)
{
    (void)state;
    start_fake(NULL);
    /* t0 = 0: the timeline starts when the sensor opens */
    tw_sensor *s = must_open("0", 0, 0);
    tw_row row;
    sleep_s(0.12);
    must_next(s, &row);
    print_message("row at %.4f s since open\n", row.t_s);
    assert_true(row.t_s > 0.1 && row.t_s < 0.6);
    for (size_t i = 0; i < row.n; i++) {
        if (!row.valid[i]) continue;
        print_message("  %-20s %12.3f at %.4f s\n", tw_sensor_reading(s, i)->name, row.value[i], row.t_value_s[i]);
        assert_true(fabs(row.t_value_s[i] - row.t_s) < 0.15);
    }
    close_sensor(s);
    /* an origin 5 s ago */
    uint64_t t0 = mono_ns() - 5000000000u;
    s = must_open("0", TW_READ_FAST, t0);
    must_next(s, &row);
    assert_true(row.t_s > 5.0 && row.t_s < 5.5);
    for (size_t i = 0; i < row.n; i++)
        if (row.valid[i]) assert_true(fabs(row.t_value_s[i] - row.t_s) < 0.15);
    close_sensor(s);
}

/* ---------------------------------------------------------------- failures */

static void test_unsupported(void **state)
{
    (void)state;
    setenv("TW_FAKE_NVML_UNSUPPORTED", "186,samples,clocks", 1);
    tw_sensor *s = must_open("0", 0, 0);
    const char *notes = tw_sensor_notes(s);
    print_message("notes:\n%s\n", notes);
    static const char *const gone[] = {"power_instant_w", "mem_power_instant_w", "power_buffer_w", "sm_clock_mhz",
                                       "mem_clock_mhz"};
    size_t idx;
    for (size_t i = 0; i < sizeof gone / sizeof gone[0]; i++) {
        assert_int_equal(tw_sensor_find(s, gone[i], &idx), TW_ENOTFOUND);
        assert_true(contains(notes, gone[i]));
    }
    assert_true(contains(notes, "power_instant_w: field 186 not supported: Not Supported (3)"));
    assert_true(contains(notes, "power_buffer_w: nvmlDeviceGetSamples not supported: Not Supported (3)"));
    assert_int_equal(tw_sensor_nreadings(s), 6);
    tw_row row;
    must_next(s, &row);
    for (size_t i = 0; i < row.n; i++)
        assert_true(row.valid[i]);
    close_sensor(s);

    /* nothing left of a group: open says why */
    setenv("TW_FAKE_NVML_UNSUPPORTED", "energy,clocks,temperature,memory", 1);
    assert_int_equal(open_nvml("0", TW_READ_SLOW, 0, &s), TW_EUNSUPPORTED);
    print_message("%s\n", tw_last_error());
    assert_true(contains(tw_last_error(), "energy_j: nvmlDeviceGetTotalEnergyConsumption not supported"));
}

static void test_init_failure(void **state)
{
    (void)state;
    char why[512] = "";
    setenv("TW_FAKE_NVML_INIT_ERROR", "9", 1);
    assert_false(tw_backend_available("nvml", why, sizeof why));
    print_message("why: %s\n", why);
    assert_true(contains(why, "nvmlInit: Driver Not Loaded (9)"));
    tw_sensor *s = NULL;
    assert_int_equal(open_nvml("0", 0, 0, &s), TW_EUNAVAIL);
    assert_true(contains(tw_last_error(), "Driver Not Loaded (9)"));
    setenv("TW_FAKE_NVML_INIT_ERROR", "18", 1);
    assert_false(tw_backend_available("nvml", why, sizeof why));
    assert_true(contains(why, "nvmlInit: RM has detected an NVML/RM version mismatch. (18)"));
}

static void test_missing_library(void **state)
{
    (void)state;
    char why[512] = "";
    setenv("TW_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1", 1);
    assert_false(tw_backend_available("nvml", why, sizeof why));
    print_message("why: %s\n", why);
    assert_true(contains(why, "/nonexistent/libnvidia-ml.so.1: cannot open shared object file"));
    assert_true(contains(why, "TW_NVML_LIBRARY"));

    tw_sensor_config cfg = {.library = "/nonexistent/lib.so"};
    tw_device_info d[1];
    size_t n = 0;
    assert_int_equal(tw_backend_devices("nvml", &cfg, d, 1, &n), TW_EUNAVAIL);
    assert_true(contains(tw_last_error(), "/nonexistent/lib.so"));

    /* a library that is not NVML */
    cfg.library = "libm.so.6";
    assert_int_equal(tw_backend_devices("nvml", &cfg, d, 1, &n), TW_EUNAVAIL);
    print_message("%s\n", tw_last_error());
    assert_true(contains(tw_last_error(), "has no nvmlInit_v2 nor nvmlInit"));

    /* the default sonames: on a machine without the driver, a hint */
    unsetenv("TW_NVML_LIBRARY");
    if (tw_backend_available("nvml", why, sizeof why)) {
        print_message("a real libnvidia-ml loads here: default-soname check skipped\n");
        return;
    }
    print_message("why: %s\n", why);
    assert_true(contains(why, "libnvidia-ml.so.1: cannot open shared object file"));
    assert_true(contains(why, "no NVIDIA driver here? set TW_NVML_LIBRARY"));
}

static void check_lost(unsigned groups)
{
    setenv("TW_FAKE_NVML_LOST_AFTER_S", "0.3", 1);
    uint64_t t0 = start_fake(NULL);
    tw_sensor *s = must_open("0", groups, t0);
    tw_row row;
    bool eof = false;
    tw_status st = TW_OK;
    while (st == TW_OK && (double)(mono_ns() - t0) * 1e-9 < 1.5) {
        st = tw_sensor_next(s, &row, &eof);
        sleep_s(0.005);
    }
    double at = (double)(mono_ns() - t0) * 1e-9;
    print_message("groups %u: status %d at %.3f s: %s\n", groups, (int)st, at, tw_last_error());
    assert_int_equal(st, TW_EUNAVAIL);
    assert_true(at >= 0.3 && at < 1.0);
    assert_true(contains(tw_last_error(), "GPU is lost (15)"));
    assert_true(contains(tw_last_error(), "GPU-fake-0000"));
    assert_int_equal(tw_sensor_next(s, &row, &eof), TW_EUNAVAIL); /* and stays so */
    close_sensor(s);
}

static void test_gpu_lost(void **state)
{
    (void)state;
    check_lost(TW_READ_FAST);
    check_lost(TW_READ_SLOW);
}

/* Every read failing (not a lost GPU): invalid readings, never 0, the first
 * failure of each in the notes, and after 1 s of nothing, TW_EUNAVAIL. */
static void test_failing_reads(void **state)
{
    (void)state;
    setenv("TW_FAKE_NVML_LOST_AFTER_S", "0.2", 1);
    setenv("TW_FAKE_NVML_LOST_CODE", "999", 1);
    uint64_t t0 = start_fake(NULL);
    tw_sensor *s = must_open("0", 0, t0);
    tw_row row;
    bool eof = false;
    tw_status st = TW_OK;
    unsigned good = 0, bad = 0;
    while ((double)(mono_ns() - t0) * 1e-9 < 2.0) {
        st = tw_sensor_next(s, &row, &eof);
        if (st != TW_OK) break;
        unsigned nvalid = 0;
        for (size_t i = 0; i < row.n; i++)
            nvalid += row.valid[i];
        if (row.t_s < 0.19) good += nvalid >= 10;
        if (row.t_s > 0.21) {
            bad++;
            assert_int_equal(nvalid, 0);
        }
        sleep_s(0.01);
    }
    double at = (double)(mono_ns() - t0) * 1e-9;
    const char *notes = tw_sensor_notes(s);
    print_message("%u good rows, %u failed rows; status %d at %.3f s: %s\nnotes:\n%s\n", good, bad, (int)st, at,
                  tw_last_error(), notes);
    assert_int_equal(st, TW_EUNAVAIL);
    assert_true(at > 1.15 && at < 1.9);
    assert_true(good >= 5 && bad >= 5);
    assert_true(contains(tw_last_error(), "every reading failed"));
    assert_true(contains(tw_last_error(), "Unknown Error (999)"));
    assert_true(contains(notes, "power_usage_w: read failed: nvmlDeviceGetPowerUsage: Unknown Error (999)"));
    assert_true(contains(notes, "energy_j: read failed: nvmlDeviceGetTotalEnergyConsumption: Unknown Error (999)"));
    assert_true(contains(notes, "power_avg_w: read failed: nvmlDeviceGetFieldValues: Unknown Error (999)"));
    /* each failure once */
    assert_null(strstr(strstr(notes, "power_usage_w: read failed") + 1, "power_usage_w: read failed"));
    /* and counted: every failed row failed its power read, every row read it (the last call too) */
    const char *count = strstr(notes, "power_usage_w: ");
    unsigned long long failed = 0, reads = 0;
    while (count && sscanf(count, "power_usage_w: %llu of %llu reads failed", &failed, &reads) != 2)
        count = strstr(count + 1, "power_usage_w: ");
    assert_non_null(count);
    assert_true(failed >= bad + 1 && failed <= reads && reads >= good + bad + 1);
    close_sensor(s);
}

/* ---------------------------------------------------------------- threads */

typedef struct reader {
    tw_sensor *s;
    uint64_t t0;
    unsigned rows, errors;
} reader;

static void *read_loop(void *arg)
{
    reader *r = arg;
    tw_row row;
    bool eof;
    while ((double)(mono_ns() - r->t0) * 1e-9 < 0.3) {
        if (tw_sensor_next(r->s, &row, &eof) == TW_OK)
            r->rows++;
        else
            r->errors++;
        sleep_s(0.001);
    }
    return NULL;
}

static void *open_close_loop(void *arg)
{
    reader *r = arg;
    while ((double)(mono_ns() - r->t0) * 1e-9 < 0.3) {
        tw_sensor *s = NULL;
        if (open_nvml("1", TW_READ_SLOW, 0, &s) == TW_OK) {
            r->rows++;
            tw_sensor_close(s);
        } else {
            r->errors++;
        }
    }
    return NULL;
}

static void test_threads(void **state)
{
    (void)state;
    setenv("TW_FAKE_NVML_DEVICES", "2", 1);
    uint64_t t0 = start_fake(NULL);
    reader r[4] = {{must_open("0", TW_READ_FAST, t0), t0, 0, 0},
                   {must_open("0", TW_READ_SLOW, t0), t0, 0, 0},
                   {must_open("1", TW_READ_FAST, t0), t0, 0, 0},
                   {NULL, t0, 0, 0}};
    pthread_t th[4];
    for (int i = 0; i < 3; i++)
        assert_int_equal(pthread_create(&th[i], NULL, read_loop, &r[i]), 0);
    assert_int_equal(pthread_create(&th[3], NULL, open_close_loop, &r[3]), 0);
    for (int i = 0; i < 4; i++)
        pthread_join(th[i], NULL);
    print_message("rows: %u %u %u, opens %u; errors %u %u %u %u\n", r[0].rows, r[1].rows, r[2].rows, r[3].rows,
                  r[0].errors, r[1].errors, r[2].errors, r[3].errors);
    for (int i = 0; i < 4; i++) {
        assert_int_equal(r[i].errors, 0);
        assert_true(r[i].rows > 10);
    }
    for (int i = 0; i < 3; i++)
        close_sensor(r[i].s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_available, reset_env, close_all),
        cmocka_unit_test_setup_teardown(test_devices, reset_env, close_all),
        cmocka_unit_test_setup_teardown(test_bad_device, reset_env, close_all),
        cmocka_unit_test_setup_teardown(test_readings, reset_env, close_all),
        cmocka_unit_test_setup_teardown(test_fields_follow_kernel, reset_env, close_all),
        cmocka_unit_test_setup_teardown(test_buffer_lossless, reset_env, close_all),
        cmocka_unit_test_setup_teardown(test_energy_counter, reset_env, close_all),
        cmocka_unit_test_setup_teardown(test_timeline, reset_env, close_all),
        cmocka_unit_test_setup_teardown(test_unsupported, reset_env, close_all),
        cmocka_unit_test_setup_teardown(test_init_failure, reset_env, close_all),
        cmocka_unit_test_setup_teardown(test_missing_library, reset_env, close_all),
        cmocka_unit_test_setup_teardown(test_gpu_lost, reset_env, close_all),
        cmocka_unit_test_setup_teardown(test_failing_reads, reset_env, close_all),
        cmocka_unit_test_setup_teardown(test_threads, reset_env, close_all),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
