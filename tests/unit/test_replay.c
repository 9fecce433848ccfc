/* Unit tests of the replay backend (src/sensor/replay.c), through its vtable
 * and through the public tw_sensor API. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "tw_test.h"

#include "sensor/backend.h"
#include "truewatt.h"

#define SMALL TW_TEST_DATA "/replay_small.csv"
#define H100_TRACE TW_SHARED_DIR "/data/h100-probe/trace.csv"

static void assert_error(tw_status got, tw_status want, const char *needle)
{
    const char *m = tw_last_error();
    if (got != want) fail_msg("status %d (%s), expected %d; detail: %s", got, tw_strerror(got), want, m);
    if (!strstr(m, needle)) fail_msg("detail '%s' lacks '%s'", m, needle);
}

static void assert_ok(tw_status st)
{
    if (st != TW_OK) fail_msg("%s: %s", tw_strerror(st), tw_last_error());
}

/* What replay_small.csv holds, in SI units. */
static const struct {
    double t, p, p_t, e;
    int p_ok, e_ok;
    unsigned line;
} small[] = {
    {0.0, 50, 0.0, 0, 1, 1, 3},     {0.1, 52, 0.09, 5.1, 1, 1, 4},    {0.2, NAN, 0.2, 10.3, 0, 1, 5},
    {0.2, 150, 0.19, NAN, 1, 0, 6}, {0.35, 148, 0.34, 32.5, 1, 1, 7},
};
#define NSMALL (sizeof small / sizeof small[0])

static void check_small_row(const tw_row *row, size_t i)
{
    assert_true(row->t_s == small[i].t);
    assert_int_equal(row->n, 2);
    assert_int_equal(row->valid[0], small[i].p_ok);
    assert_int_equal(row->valid[1], small[i].e_ok);
    if (small[i].p_ok) assert_true(fabs(row->value[0] - small[i].p) < 1e-12);
    if (small[i].e_ok) assert_true(row->value[1] == small[i].e);
    assert_true(row->t_value_s[0] == small[i].p_t);
    assert_true(row->t_value_s[1] == small[i].t);
}

static void test_vtable(void **state)
{
    (void)state;
    const tw_backend *b = &tw_backend_replay;
    assert_int_equal(b->abi, TW_BACKEND_ABI);
    assert_string_equal(b->name, "replay");
    assert_string_equal(b->description, "replays a recorded trace file through the live-sensor path");
    assert_non_null(b->open);
    assert_non_null(b->nreadings);
    assert_non_null(b->reading);
    assert_non_null(b->next);
    assert_non_null(b->rewind);
    assert_non_null(b->close);
    char why[64] = "untouched";
    assert_true(b->available(why, sizeof why));
    assert_string_equal(why, "");
    assert_true(b->available(NULL, 0));
}

static void test_open_needs_path(void **state)
{
    (void)state;
    const tw_backend *b = &tw_backend_replay;
    void *st = (void *)&st;
    tw_sensor_config cfg = {0};
    assert_error(b->open(&cfg, &st), TW_EINVAL, "replay: no trace file given");
    assert_null(st);
    assert_error(b->open(NULL, &st), TW_EINVAL, "tw_sensor_config.path");
    cfg.path = "";
    assert_error(b->open(&cfg, &st), TW_EINVAL, "no trace file");
}

static void test_open_missing_file(void **state)
{
    (void)state;
    const char *path = TW_TEST_DATA "/no-such-trace.csv";
    tw_sensor_config cfg = {.path = path};
    void *st = NULL;
    assert_error(tw_backend_replay.open(&cfg, &st), TW_EIO, path);
    assert_null(st);
}

static void test_replay_rows_and_rewind(void **state)
{
    (void)state;
    const tw_backend *b = &tw_backend_replay;
    tw_sensor_config cfg = {.path = SMALL};
    void *st = NULL;
    assert_ok(b->open(&cfg, &st));
    assert_int_equal(b->nreadings(st), 2);
    const tw_reading_info *p = b->reading(st, 0);
    assert_string_equal(p->name, "power_mw");
    assert_int_equal(p->quantity, TW_Q_POWER);
    assert_true(p->scale == 1e-3);
    assert_int_equal(b->reading(st, 1)->quantity, TW_Q_ENERGY);
    assert_null(b->reading(st, 2));
    for (int pass = 0; pass < 2; pass++) {
        for (size_t i = 0; i < NSMALL; i++) {
            tw_row row;
            bool eof = true;
            assert_ok(b->next(st, &row, &eof));
            assert_false(eof);
            check_small_row(&row, i);
            assert_int_equal(tw_trace_reader_line(st), small[i].line);
        }
        tw_row row;
        bool eof = false;
        assert_ok(b->next(st, &row, &eof));
        assert_true(eof);
        assert_ok(b->rewind(st));
    }
    b->close(st);
}

static void test_errors_pass_through(void **state)
{
    (void)state;
    const char *path = tw_test_file(0, "t_s,p_w\n1,5\n0.5,6\n");
    tw_sensor_config cfg = {.path = path};
    void *st = NULL;
    assert_ok(tw_backend_replay.open(&cfg, &st));
    tw_row row;
    bool eof;
    assert_ok(tw_backend_replay.next(st, &row, &eof));
    assert_error(tw_backend_replay.next(st, &row, &eof), TW_EORDER, ":3: time goes backwards");
    tw_backend_replay.close(st);

    path = tw_test_file(0, "p_w\n1\n");
    cfg.path = path;
    assert_error(tw_backend_replay.open(&cfg, &st), TW_EPARSE, ":1: no time column");
}

/* The same file through tw_sensor_open, as the CLI and tw_analyze see it. */
static void test_public_sensor_api(void **state)
{
    (void)state;
    char why[128];
    assert_true(tw_backend_available("replay", why, sizeof why));
    bool listed = false;
    for (size_t i = 0; i < tw_backend_count(); i++)
        if (strcmp(tw_backend_name(i), "replay") == 0)
            listed = strstr(tw_backend_description(i), "recorded trace") != NULL;
    assert_true(listed);

    tw_sensor_config cfg = {.path = SMALL};
    tw_sensor *s = NULL;
    assert_ok(tw_sensor_open("replay", &cfg, &s));
    assert_string_equal(tw_sensor_backend(s), "replay");
    assert_int_equal(tw_sensor_nreadings(s), 2);
    size_t idx = 9;
    assert_ok(tw_sensor_find(s, "energy_j", &idx));
    assert_int_equal(idx, 1);
    tw_row row;
    bool eof = false;
    size_t n = 0;
    while (tw_sensor_next(s, &row, &eof) == TW_OK && !eof)
        check_small_row(&row, n++);
    assert_true(eof);
    assert_int_equal(n, NSMALL);
    assert_ok(tw_sensor_rewind(s));
    assert_ok(tw_sensor_next(s, &row, &eof));
    check_small_row(&row, 0);
    tw_sensor_close(s);

    cfg.path = NULL;
    assert_error(tw_sensor_open("replay", &cfg, &s), TW_EINVAL, "no trace file given");
    assert_null(s);
}

static void test_replay_h100_trace(void **state)
{
    (void)state;
    tw_test_need_data(H100_TRACE);
    tw_sensor_config cfg = {.path = H100_TRACE};
    tw_sensor *s = NULL;
    assert_ok(tw_sensor_open("replay", &cfg, &s));
    size_t idx;
    assert_ok(tw_sensor_find(s, "power_instant_mw", &idx));
    tw_row row;
    bool eof = false;
    size_t n = 0;
    double last = 0;
    tw_status st;
    while ((st = tw_sensor_next(s, &row, &eof)) == TW_OK && !eof) {
        assert_true(row.t_s >= last);
        last = row.t_s;
        n++;
    }
    assert_ok(st);
    assert_true(n > 10000);
    tw_sensor_close(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_vtable),
        cmocka_unit_test(test_open_needs_path),
        cmocka_unit_test(test_open_missing_file),
        cmocka_unit_test(test_replay_rows_and_rewind),
        cmocka_unit_test(test_errors_pass_through),
        cmocka_unit_test(test_public_sensor_api),
        cmocka_unit_test(test_replay_h100_trace),
    };
    return tw_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
