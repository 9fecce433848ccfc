/* Unit tests of the CSV trace writer (src/trace/writer.c), read back through
 * the trace reader. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tw_test.h"

#include "truewatt.h"

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

static void assert_file(const char *path, const char *want)
{
    char *got = tw_test_slurp(path);
    assert_non_null(got);
    if (strcmp(got, want) != 0) fail_msg("file holds:\n%s\nexpected:\n%s", got, want);
    free(got);
}

static tw_row make_row(double t, size_t n, const double *v, const double *tv, const uint8_t *ok)
{
    return (tw_row){.t_s = t, .n = n, .value = v, .t_value_s = tv, .valid = ok};
}

static void test_header_and_rows(void **state)
{
    (void)state;
    const char *path = tw_test_path(0, "out.csv");
    const char *names[] = {"power_w", "energy_j"};
    tw_trace_writer *w = NULL;
    assert_ok(tw_trace_writer_open(path, 2, names, false, &w));
    double v[] = {123.456, 7.25};
    uint8_t ok[] = {1, 0};
    tw_row row = make_row(0.5, 2, v, NULL, ok);
    assert_ok(tw_trace_writer_write(w, &row));
    row = make_row(1.000000001, 2, v, NULL, NULL);
    assert_ok(tw_trace_writer_write(w, &row));
    assert_ok(tw_trace_writer_close(w));
    assert_file(path, "t_s,power_w,energy_j\n"
                      "0.500000000,123.456,\n"
                      "1.000000001,123.456,7.25\n");
}

static void test_own_timestamps_layout(void **state)
{
    (void)state;
    const char *path = tw_test_path(0, "out.csv");
    const char *names[] = {"a_w", "b_w"};
    tw_trace_writer *w = NULL;
    assert_ok(tw_trace_writer_open(path, 2, names, true, &w));
    double v[] = {1, 2}, tv[] = {0.25, 0.5};
    uint8_t ok[] = {1, 0};
    tw_row row = make_row(1, 2, v, tv, ok);
    assert_ok(tw_trace_writer_write(w, &row));
    assert_ok(tw_trace_writer_close(w));
    assert_file(path, "t_s,a_w,a_w_t_s,b_w,b_w_t_s\n1.000000000,1,0.250000000,,\n");
}

static void test_round_trip(void **state)
{
    (void)state;
    const char *path = tw_test_path(0, "rt.csv");
    const char *names[] = {"power_w", "energy_j", "odd, \"name\"", "#first"};
    enum { N = 4, ROWS = 50 };
    tw_trace_writer *w = NULL;
    assert_ok(tw_trace_writer_open(path, N, names, true, &w));
    assert_ok(tw_trace_writer_comment(w, "written by test_round_trip"));
    double v[ROWS][N], tv[ROWS][N], t[ROWS];
    uint8_t ok[ROWS][N];
    for (int i = 0; i < ROWS; i++) {
        t[i] = 0.001 * i + 0.123456789;
        for (int k = 0; k < N; k++) {
            v[i][k] = (i * 37 + k * 11) % 97 * 1.25e-3 + k * 1e5 + 7; /* power_w within 0 .. 5 kW */
            tv[i][k] = t[i] - 0.0005 * k;
            ok[i][k] = (uint8_t)((i + k) % 5 != 0);
        }
        tw_row row = make_row(t[i], N, v[i], tv[i], ok[i]);
        assert_ok(tw_trace_writer_write(w, &row));
    }
    assert_ok(tw_trace_writer_close(w));

    tw_trace_reader *r = NULL;
    assert_ok(tw_trace_reader_open(path, &r));
    assert_int_equal(tw_trace_reader_nreadings(r), N);
    for (int k = 0; k < N; k++)
        assert_string_equal(tw_trace_reader_reading(r, k)->name, names[k]);
    for (int i = 0; i < ROWS; i++) {
        tw_row row;
        bool eof = true;
        assert_ok(tw_trace_reader_next(r, &row, &eof));
        assert_false(eof);
        assert_true(fabs(row.t_s - t[i]) <= 5e-10);
        for (int k = 0; k < N; k++) {
            assert_int_equal(row.valid[k], ok[i][k]);
            if (!ok[i][k]) continue;
            /* "%.10g": ten significant digits */
            assert_true(fabs(row.value[k] - v[i][k]) <= fabs(v[i][k]) * 5e-10);
            assert_true(fabs(row.t_value_s[k] - tv[i][k]) <= 5e-10);
        }
    }
    bool eof = false;
    tw_row row;
    assert_ok(tw_trace_reader_next(r, &row, &eof));
    assert_true(eof);
    tw_trace_reader_close(r);
}

static void test_comments(void **state)
{
    (void)state;
    const char *path = tw_test_path(0, "c.csv");
    const char *names[] = {"p_w"};
    tw_trace_writer *w = NULL;
    assert_ok(tw_trace_writer_open(path, 1, names, false, &w));
    assert_ok(tw_trace_writer_comment(w, "device: H100"));
    assert_ok(tw_trace_writer_comment(w, "two\nlines\r\n"));
    double v[] = {3};
    tw_row row = make_row(0, 1, v, NULL, NULL);
    assert_ok(tw_trace_writer_write(w, &row));
    assert_error(tw_trace_writer_comment(w, "late"), TW_EINVAL, "before the first row");
    assert_ok(tw_trace_writer_close(w));
    assert_file(path, "# device: H100\n# two\n# lines\nt_s,p_w\n0.000000000,3\n");
}

static void test_no_rows(void **state)
{
    (void)state;
    const char *path = tw_test_path(0, "empty.csv");
    tw_trace_writer *w = NULL;
    assert_ok(tw_trace_writer_open(path, 0, NULL, false, &w));
    assert_ok(tw_trace_writer_close(w));
    assert_file(path, "t_s\n");
    tw_trace_reader *r = NULL;
    assert_ok(tw_trace_reader_open(path, &r));
    assert_int_equal(tw_trace_reader_nreadings(r), 0);
    tw_trace_reader_close(r);
}

static void test_open_errors(void **state)
{
    (void)state;
    tw_trace_writer *w = (tw_trace_writer *)&w;
    const char *bad_dir = "/nonexistent-dir-of-truewatt/out.csv";
    const char *one[] = {"a"};
    assert_error(tw_trace_writer_open(bad_dir, 1, one, false, &w), TW_EIO, bad_dir);
    assert_non_null(strstr(tw_last_error(), "cannot open for writing: No such file"));
    assert_null(w);
    const char *path = tw_test_path(0, "x.csv");
    assert_int_equal(tw_trace_writer_open(NULL, 1, one, false, &w), TW_EINVAL);
    assert_int_equal(tw_trace_writer_open(path, 1, NULL, false, &w), TW_EINVAL);
    assert_int_equal(tw_trace_writer_open(path, 1, one, false, NULL), TW_EINVAL);
    const char *dup[] = {"a", "b", "a"};
    assert_error(tw_trace_writer_open(path, 3, dup, false, &w), TW_EINVAL, "duplicate name 'a'");
    const char *null_name[] = {"a", NULL};
    assert_error(tw_trace_writer_open(path, 2, null_name, false, &w), TW_EINVAL, "name 2 is empty");
    const char *empty[] = {""};
    assert_error(tw_trace_writer_open(path, 1, empty, false, &w), TW_EINVAL, "name 1 is empty");
    const char *nl[] = {"a\nb"};
    assert_error(tw_trace_writer_open(path, 1, nl, false, &w), TW_EINVAL, "line break");
    const char *time[] = {"t_s"};
    assert_error(tw_trace_writer_open(path, 1, time, false, &w), TW_EINVAL, "time column");
    const char *ts[] = {"a_w_t_s", "a_w"};
    assert_error(tw_trace_writer_open(path, 2, ts, false, &w), TW_EINVAL,
                 "'a_w_t_s' would read back as the timestamp of 'a_w'");
    assert_null(w);
}

static void test_write_errors(void **state)
{
    (void)state;
    const char *path = tw_test_path(0, "we.csv");
    const char *names[] = {"a", "b"};
    tw_trace_writer *w = NULL;
    assert_ok(tw_trace_writer_open(path, 2, names, false, &w));
    double v[] = {1, 2};
    tw_row row = make_row(2, 1, v, NULL, NULL);
    assert_error(tw_trace_writer_write(w, &row), TW_EINVAL, "row has 1 readings, the writer 2");
    row = make_row(NAN, 2, v, NULL, NULL);
    assert_error(tw_trace_writer_write(w, &row), TW_EINVAL, "not finite");
    row = make_row(2, 2, NULL, NULL, NULL);
    assert_error(tw_trace_writer_write(w, &row), TW_EINVAL, "no values");
    double inf[] = {1, INFINITY};
    row = make_row(2, 2, inf, NULL, NULL);
    assert_error(tw_trace_writer_write(w, &row), TW_EINVAL, "reading 'b' is infinite");
    uint8_t ok[] = {1, 0}; /* an absent infinity is just absent */
    row = make_row(2, 2, inf, NULL, ok);
    assert_ok(tw_trace_writer_write(w, &row));
    double nan[] = {NAN, 5};
    row = make_row(2, 2, nan, NULL, NULL); /* NaN reads back as absent */
    assert_ok(tw_trace_writer_write(w, &row));
    row = make_row(1.5, 2, v, NULL, NULL);
    assert_error(tw_trace_writer_write(w, &row), TW_EORDER, "time goes backwards (t_s = 1.5 after 2)");
    assert_int_equal(tw_trace_writer_write(w, NULL), TW_EINVAL);
    assert_int_equal(tw_trace_writer_write(NULL, &row), TW_EINVAL);
    assert_int_equal(tw_trace_writer_comment(NULL, "x"), TW_EINVAL);
    assert_ok(tw_trace_writer_close(w));
    assert_file(path, "t_s,a,b\n2.000000000,1,\n2.000000000,,5\n");
    assert_ok(tw_trace_writer_close(NULL));
}

static void test_close_reports_write_error(void **state)
{
    (void)state;
    const char *full = "/dev/full";
    if (access(full, W_OK) != 0) skip();
    const char *names[] = {"a_w"};
    tw_trace_writer *w = NULL;
    assert_ok(tw_trace_writer_open(full, 1, names, false, &w));
    double v[] = {1};
    tw_row row = make_row(0, 1, v, NULL, NULL);
    assert_ok(tw_trace_writer_write(w, &row)); /* still in the stdio buffer */
    assert_error(tw_trace_writer_close(w), TW_EIO, "/dev/full: write failed: No space left");
}

static void test_write_reports_error_on_the_way(void **state)
{
    (void)state;
    const char *full = "/dev/full";
    if (access(full, W_OK) != 0) skip();
    const char *names[] = {"a_w"};
    tw_trace_writer *w = NULL;
    assert_ok(tw_trace_writer_open(full, 1, names, false, &w));
    double v[] = {1};
    tw_status st = TW_OK;
    /* enough rows to overflow the stdio buffer: the failure surfaces in write */
    for (int i = 0; i < 100000 && st == TW_OK; i++) {
        tw_row row = make_row(i, 1, v, NULL, NULL);
        st = tw_trace_writer_write(w, &row);
    }
    assert_error(st, TW_EIO, "/dev/full: write failed");
    tw_row row = make_row(1e6, 1, v, NULL, NULL);
    assert_error(tw_trace_writer_write(w, &row), TW_EIO, "write failed"); /* sticks */
    assert_error(tw_trace_writer_close(w), TW_EIO, "write failed");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_header_and_rows),
        cmocka_unit_test(test_own_timestamps_layout),
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_comments),
        cmocka_unit_test(test_no_rows),
        cmocka_unit_test(test_open_errors),
        cmocka_unit_test(test_write_errors),
        cmocka_unit_test(test_close_reports_write_error),
        cmocka_unit_test(test_write_reports_error_on_the_way),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
