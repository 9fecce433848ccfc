/* Unit tests of the sampler (src/sample/sampler.c) with the sim backend: it
 * polls on its period, streams a readable trace in time order, keeps stats,
 * stops at the end of a finite source, and refuses bad configurations
 * without leaving threads or files behind. (Fast + slow producers merged from
 * two rings are exercised end to end against the fake NVML: tests/e2e/run_*.sh.) */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tw_test.h"

#include "truewatt.h"

static void assert_ok(tw_status st)
{
    if (st != TW_OK) fail_msg("%s: %s", tw_strerror(st), tw_last_error());
}

static void sleep_s(double s)
{
    struct timespec d = {(time_t)s, (long)((s - floor(s)) * 1e9)};
    nanosleep(&d, NULL);
}

static tw_scenario *h100(double duration_s)
{
    tw_scenario *sc = NULL;
    assert_ok(tw_scenario_new(TW_SIM_H100, &sc));
    assert_ok(tw_scenario_add_kernel(sc, "k", 0.5, 0.2, 300));
    assert_ok(tw_scenario_set_duration(sc, duration_s));
    return sc;
}

/* Reads the trace back: rows in time order, the sim's readings as columns. */
static uint64_t check_trace(const char *path, size_t ncols)
{
    tw_trace_reader *r = NULL;
    assert_ok(tw_trace_reader_open(path, &r));
    assert_int_equal(tw_trace_reader_nreadings(r), ncols);
    size_t idx;
    assert_ok(tw_trace_reader_find(r, "power_buffer_w", &idx));
    uint64_t rows = 0;
    for (;;) {
        tw_row row;
        bool eof;
        assert_ok(tw_trace_reader_next(r, &row, &eof)); /* time going back would be TW_EORDER */
        if (eof) break;
        rows++;
    }
    tw_trace_reader_close(r);
    return rows;
}

static void test_samples_and_stats(void **state)
{
    (void)state;
    tw_scenario *sc = h100(1000.0); /* longer than the test: the sampler is stopped */
    tw_sensor_config base = {.scenario = sc, .seed = 1};
    const char *path = tw_test_path(0, "sampled.csv");
    tw_sampler_config cfg = {.backend = "sim", .base = &base, .fast_period_s = 0.002, .trace_path = path};
    tw_sampler *s = NULL;
    assert_ok(tw_sampler_start(&cfg, &s));
    sleep_s(0.3);
    assert_ok(tw_sampler_stop(s));
    assert_ok(tw_sampler_stop(s)); /* twice is fine */
    double wall = tw_sampler_wall_s(s);
    assert_true(wall >= 0.29 && wall < 5);
    assert_true(tw_sampler_cpu_s(s) >= 0 && tw_sampler_cpu_s(s) < wall);
    /* the sim ignores groups: its slow sensor would repeat the fast one's readings, so only one runs */
    assert_int_equal(tw_sampler_reading_count(s), 6);
    const tw_sampler_reading_stats *u = NULL;
    for (size_t i = 0; i < tw_sampler_reading_count(s); i++)
        if (!strcmp(tw_sampler_reading(s, i)->name, "true_power_w")) u = tw_sampler_reading(s, i);
    assert_non_null(u);
    /* every 2 ms for ~0.3 s: ~150 polls (loose: a loaded test machine oversleeps) */
    if (u->polls < 40 || u->polls > 170) fail_msg("%llu polls in %.3f s", (unsigned long long)u->polls, wall);
    assert_true(fabs(u->polls_per_s - (double)u->polls / wall) < 1e-6);
    assert_true(u->updates <= u->polls);
    assert_string_equal(tw_sampler_notes(s), "");
    uint64_t rows = check_trace(path, 6);
    assert_int_equal(rows, u->polls);
    tw_sampler_free(s);
    tw_scenario_free(sc);
}

/* A finite source ends its producer; the others (none here) and the trace go on. */
static void test_source_ends(void **state)
{
    (void)state;
    tw_scenario *sc = h100(0.05); /* 50 simulated ms: ~50 rows at 1 ms */
    tw_sensor_config base = {.scenario = sc};
    const char *path = tw_test_path(0, "short.csv");
    tw_sampler_config cfg = {.backend = "sim", .base = &base, .trace_path = path};
    tw_sampler *s = NULL;
    assert_ok(tw_sampler_start(&cfg, &s));
    sleep_s(0.3);
    assert_ok(tw_sampler_stop(s));
    uint64_t rows = check_trace(path, 6);
    assert_true(rows >= 45 && rows <= 56);
    tw_sampler_free(s);
    tw_scenario_free(sc);
}

static void test_rejects(void **state)
{
    (void)state;
    tw_sampler *s = NULL;
    tw_scenario *sc = h100(1.0);
    tw_sensor_config base = {.scenario = sc};
    tw_sampler_config cfg = {.backend = "sim", .base = &base, .trace_path = "/nonexistent-dir/t.csv"};
    assert_int_equal(tw_sampler_start(&cfg, &s), TW_EIO);
    assert_non_null(strstr(tw_last_error(), "/nonexistent-dir/t.csv"));
    assert_null(s);
    cfg.trace_path = tw_test_path(0, "never.csv");
    unlink(cfg.trace_path);
    cfg.backend = "frob";
    assert_int_equal(tw_sampler_start(&cfg, &s), TW_ENOTFOUND);
    assert_int_equal(access(cfg.trace_path, F_OK), -1); /* nothing left behind */
    cfg.backend = "sim";
    cfg.fast_period_s = 1e-9;
    assert_int_equal(tw_sampler_start(&cfg, &s), TW_EINVAL);
    cfg.fast_period_s = 0;
    base.scenario = NULL; /* the sim cannot open */
    assert_int_equal(tw_sampler_start(&cfg, &s), TW_EINVAL);
    assert_non_null(strstr(tw_last_error(), "scenario"));
    assert_int_equal(access(cfg.trace_path, F_OK), -1);
    assert_int_equal(tw_sampler_start(NULL, &s), TW_EINVAL);
    tw_sampler_free(NULL);
    tw_scenario_free(sc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_samples_and_stats),
        cmocka_unit_test(test_source_ends),
        cmocka_unit_test(test_rejects),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
