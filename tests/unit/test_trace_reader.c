/* Unit tests of the CSV trace reader (src/trace/reader.c) and the CSV helpers
 * it stands on (src/trace/csv.c). */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tw_test.h"

#include "trace/csv.h"
#include "truewatt.h"

#define H100_TRACE TW_SHARED_DIR "/data/h100-probe/trace.csv"

/* The message names the file and holds `needle` (e.g. ":3: missing time"). */
static void assert_error(tw_status got, tw_status want, const char *path, const char *needle)
{
    const char *m = tw_last_error();
    if (got != want) fail_msg("status %d (%s), expected %d; detail: %s", got, tw_strerror(got), want, m);
    if (!strstr(m, path) || !strstr(m, needle)) fail_msg("detail '%s' lacks '%s' or '%s'", m, path, needle);
}

/* cmocka 1.1 compares floats only */
static void assert_near(double got, double want, double tol)
{
    if (!(fabs(got - want) <= tol)) fail_msg("%.17g is not within %g of %.17g", got, tol, want);
}

static tw_trace_reader *open_ok(const char *path)
{
    tw_trace_reader *r = NULL;
    tw_status st = tw_trace_reader_open(path, &r);
    if (st != TW_OK) fail_msg("open %s: %s", path, tw_last_error());
    return r;
}

static void next_ok(tw_trace_reader *r, tw_row *row)
{
    bool eof = true;
    tw_status st = tw_trace_reader_next(r, row, &eof);
    if (st != TW_OK) fail_msg("next: %s", tw_last_error());
    assert_false(eof);
}

static void expect_eof(tw_trace_reader *r)
{
    tw_row row;
    bool eof = false;
    assert_int_equal(tw_trace_reader_next(r, &row, &eof), TW_OK);
    assert_true(eof);
}

/* Opens text that must fail at open with `want`. */
static void open_fails(const char *text, tw_status want, const char *needle)
{
    const char *path = tw_test_file(0, text);
    tw_trace_reader *r = (tw_trace_reader *)&r; /* must be reset to NULL */
    assert_error(tw_trace_reader_open(path, &r), want, path, needle);
    assert_null(r);
}

/* Opens text whose first rows are fine and whose row after `good_rows` fails. */
static void row_fails(const char *text, int good_rows, tw_status want, const char *needle)
{
    const char *path = tw_test_file(0, text);
    tw_trace_reader *r = open_ok(path);
    tw_row row;
    for (int i = 0; i < good_rows; i++)
        next_ok(r, &row);
    bool eof = false;
    assert_error(tw_trace_reader_next(r, &row, &eof), want, path, needle);
    /* the error sticks, message included */
    assert_error(tw_trace_reader_next(r, &row, &eof), want, path, needle);
    assert_false(eof);
    tw_trace_reader_close(r);
}

/* ---------------------------------------------------------------- good paths */

static void test_basic(void **state)
{
    (void)state;
    const char *path = tw_test_file(0, "t_s,power_w,energy_mj,clock_ms,temp_c\n"
                                       "0.5,100,2500,10,40\n"
                                       "1.0,110.5,,20,nan\n");
    tw_trace_reader *r = open_ok(path);
    assert_string_equal(tw_trace_reader_path(r), path);
    assert_int_equal(tw_trace_reader_nreadings(r), 4);
    assert_int_equal(tw_trace_reader_line(r), 1);
    const tw_reading_info *p = tw_trace_reader_reading(r, 0);
    assert_string_equal(p->name, "power_w");
    assert_int_equal(p->quantity, TW_Q_POWER);
    assert_true(p->scale == 1);
    const tw_reading_info *e = tw_trace_reader_reading(r, 1);
    assert_int_equal(e->quantity, TW_Q_ENERGY);
    assert_true(e->scale == 1e-3);
    assert_int_equal(tw_trace_reader_reading(r, 2)->quantity, TW_Q_TIME);
    assert_int_equal(tw_trace_reader_reading(r, 3)->quantity, TW_Q_OTHER);
    assert_null(tw_trace_reader_reading(r, 4));

    tw_row row;
    next_ok(r, &row);
    assert_int_equal(tw_trace_reader_line(r), 2);
    assert_int_equal(row.n, 4);
    assert_true(row.t_s == 0.5);
    assert_true(row.value[0] == 100);
    assert_true(row.value[1] == 2.5);
    assert_true(row.value[2] == 0.01);
    assert_true(row.value[3] == 40);
    for (int i = 0; i < 4; i++) {
        assert_int_equal(row.valid[i], 1);
        assert_true(row.t_value_s[i] == 0.5);
    }
    next_ok(r, &row);
    assert_int_equal(tw_trace_reader_line(r), 3);
    assert_true(row.value[0] == 110.5);
    assert_int_equal(row.valid[0], 1);
    assert_int_equal(row.valid[1], 0);
    assert_true(isnan(row.value[1])); /* never a silent 0 */
    assert_int_equal(row.valid[3], 0);
    expect_eof(r);
    expect_eof(r); /* eof stays */
    assert_int_equal(tw_trace_reader_line(r), 3);
    tw_trace_reader_close(r);
}

static void test_unit_suffixes(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        tw_quantity q;
        double scale;
        double value; /* of the cell "1000" */
    } cases[] = {
        {"a_w", TW_Q_POWER, 1, 1000},      {"a_mw", TW_Q_POWER, 1e-3, 1},   {"a_uw", TW_Q_POWER, 1e-6, 1e-3},
        {"a_kj", TW_Q_OTHER, 1, 1000},     {"a_j", TW_Q_ENERGY, 1, 1000},   {"a_mj", TW_Q_ENERGY, 1e-3, 1},
        {"a_uj", TW_Q_ENERGY, 1e-6, 1e-3}, {"a_s", TW_Q_TIME, 1, 1000},     {"a_ms", TW_Q_TIME, 1e-3, 1},
        {"a_us", TW_Q_TIME, 1e-6, 1e-3},   {"a_ns", TW_Q_TIME, 1e-9, 1e-6}, {"a_W", TW_Q_OTHER, 1, 1000},
        {"watts", TW_Q_OTHER, 1, 1000},    {"a_c", TW_Q_OTHER, 1, 1000},
    };
    size_t n = sizeof cases / sizeof cases[0];
    char head[512] = "t_s", row1[512] = "0";
    for (size_t i = 0; i < n; i++) {
        strcat(head, ",");
        strcat(head, cases[i].name);
        strcat(row1, ",1000");
    }
    char text[1100];
    snprintf(text, sizeof text, "%s\n%s\n", head, row1);
    tw_trace_reader *r = open_ok(tw_test_file(0, text));
    assert_int_equal(tw_trace_reader_nreadings(r), n);
    tw_row row;
    next_ok(r, &row);
    for (size_t i = 0; i < n; i++) {
        const tw_reading_info *info = tw_trace_reader_reading(r, i);
        assert_string_equal(info->name, cases[i].name);
        assert_int_equal(info->quantity, cases[i].q);
        assert_true(info->scale == cases[i].scale);
        assert_near(row.value[i], cases[i].value, cases[i].value * 1e-15);
    }
    tw_trace_reader_close(r);
}

static void test_kw_scaling(void **state)
{
    (void)state;
    tw_trace_reader *r = open_ok(tw_test_file(0, "t_s,a_kw\n0,0.35\n"));
    assert_true(tw_trace_reader_reading(r, 0)->quantity == TW_Q_POWER && tw_trace_reader_reading(r, 0)->scale == 1e3);
    tw_row row;
    next_ok(r, &row);
    assert_near(row.value[0], 350, 350 * 1e-15);
    tw_trace_reader_close(r);
}

static void test_mw_scaling_is_exact(void **state)
{
    (void)state;
    /* 77076 mW must be the double nearest 77.076, as a user would type it */
    tw_trace_reader *r = open_ok(tw_test_file(0, "t,p_mw\n0,77076\n"));
    tw_row row;
    next_ok(r, &row);
    assert_true(row.value[0] == 77.076);
    tw_trace_reader_close(r);
}

static void test_time_column_names(void **state)
{
    (void)state;
    const char *texts[] = {"t_s,a_w\n1.5,2\n", "a_w,t\n2,1.5\n", "time_s,a_w\n1.5,2\n"};
    for (int i = 0; i < 3; i++) {
        tw_trace_reader *r = open_ok(tw_test_file(0, texts[i]));
        assert_int_equal(tw_trace_reader_nreadings(r), 1);
        assert_string_equal(tw_trace_reader_reading(r, 0)->name, "a_w");
        tw_row row;
        next_ok(r, &row);
        assert_true(row.t_s == 1.5);
        assert_true(row.value[0] == 2);
        tw_trace_reader_close(r);
    }
    /* the first time column wins; a later one is a reading like any other */
    tw_trace_reader *r = open_ok(tw_test_file(0, "t,t_s\n1,2\n"));
    assert_int_equal(tw_trace_reader_nreadings(r), 1);
    assert_string_equal(tw_trace_reader_reading(r, 0)->name, "t_s");
    assert_int_equal(tw_trace_reader_reading(r, 0)->quantity, TW_Q_TIME);
    tw_row row;
    next_ok(r, &row);
    assert_true(row.t_s == 1);
    assert_true(row.value[0] == 2);
    tw_trace_reader_close(r);
}

static void test_own_timestamps(void **state)
{
    (void)state;
    const char *path = tw_test_file(0, "t_s,a_w,a_w_t_s,b_w,c_t_s,t_s_t_s\n"
                                       "1,10,0.9,20,5,6\n"
                                       "2,11,,21,7,8\n"
                                       "3,,2.9,,9,10\n");
    tw_trace_reader *r = open_ok(path);
    /* a_w_t_s belongs to a_w; c_t_s has no column c and t_s_t_s's X is the
     * time column, so both are readings */
    assert_int_equal(tw_trace_reader_nreadings(r), 4);
    assert_string_equal(tw_trace_reader_reading(r, 0)->name, "a_w");
    assert_string_equal(tw_trace_reader_reading(r, 1)->name, "b_w");
    assert_string_equal(tw_trace_reader_reading(r, 2)->name, "c_t_s");
    assert_string_equal(tw_trace_reader_reading(r, 3)->name, "t_s_t_s");
    size_t idx;
    assert_int_equal(tw_trace_reader_find(r, "a_w_t_s", &idx), TW_ENOTFOUND);
    tw_row row;
    next_ok(r, &row);
    assert_true(row.t_value_s[0] == 0.9);
    assert_true(row.t_value_s[1] == 1);
    assert_true(row.value[2] == 5);
    next_ok(r, &row);
    assert_true(row.t_value_s[0] == 2); /* empty own timestamp: the row's */
    assert_true(row.value[0] == 11);
    next_ok(r, &row);
    assert_int_equal(row.valid[0], 0);
    assert_true(row.t_value_s[0] == 2.9);
    assert_int_equal(row.valid[1], 0);
    tw_trace_reader_close(r);
}

static void test_timestamp_of_timestamp(void **state)
{
    (void)state;
    /* a_t_s is a's timestamp, so a_t_s_t_s cannot be one: it is a reading */
    tw_trace_reader *r = open_ok(tw_test_file(0, "t_s,a,a_t_s,a_t_s_t_s\n1,2,3,4\n"));
    assert_int_equal(tw_trace_reader_nreadings(r), 2);
    assert_string_equal(tw_trace_reader_reading(r, 1)->name, "a_t_s_t_s");
    tw_row row;
    next_ok(r, &row);
    assert_true(row.t_value_s[0] == 3);
    assert_true(row.value[1] == 4);
    tw_trace_reader_close(r);
}

static void test_comments_blank_lines_crlf(void **state)
{
    (void)state;
    const char *path = tw_test_file(0, "# recorded by hand\r\n"
                                       "\r\n"
                                       "  \r\n"
                                       "t_s,p_w\r\n"
                                       "# a comment between rows\r\n"
                                       "1,10\r\n"
                                       "\r\n"
                                       "2,20\r\n"
                                       "3,30"); /* no line end: cut off? (test_cut_off_last_line) */
    tw_trace_reader *r = open_ok(path);
    assert_int_equal(tw_trace_reader_line(r), 4);
    tw_row row;
    next_ok(r, &row);
    assert_int_equal(tw_trace_reader_line(r), 6);
    assert_true(row.value[0] == 10);
    next_ok(r, &row);
    assert_int_equal(tw_trace_reader_line(r), 8);
    assert_true(row.value[0] == 20);
    expect_eof(r);
    assert_non_null(strstr(tw_trace_reader_notes(r), ":9: the last line has no line end"));
    tw_trace_reader_close(r);
}

static void test_bom_and_blanks(void **state)
{
    (void)state;
    const char *path = tw_test_file(0, "\xEF\xBB\xBFt_s , p_w\n 1 , 10 \n\"2\",\" 20 \"\n");
    tw_trace_reader *r = open_ok(path);
    size_t idx = 9;
    assert_int_equal(tw_trace_reader_find(r, "p_w", &idx), TW_OK);
    assert_int_equal(idx, 0);
    tw_row row;
    next_ok(r, &row);
    assert_true(row.t_s == 1 && row.value[0] == 10);
    next_ok(r, &row);
    assert_true(row.t_s == 2 && row.value[0] == 20);
    tw_trace_reader_close(r);
}

static void test_nan_spellings(void **state)
{
    (void)state;
    tw_trace_reader *r = open_ok(tw_test_file(0, "t_s,a,b,c,d,e\n0,nan,NaN,NAN,,  \n1,1e3,-2.5E-1,+3,.5,0x10\n"));
    tw_row row;
    next_ok(r, &row);
    for (int i = 0; i < 5; i++)
        assert_int_equal(row.valid[i], 0);
    next_ok(r, &row);
    assert_true(row.value[0] == 1000);
    assert_true(row.value[1] == -0.25);
    assert_true(row.value[2] == 3);
    assert_true(row.value[3] == 0.5);
    assert_true(row.value[4] == 16); /* strtod consumes hex whole: a number */
    tw_trace_reader_close(r);
}

/* time may stand still (not go back); a power or energy reading must then
 * keep its value (test_repeated_time_other_value), other columns need not */
static void test_equal_times_allowed(void **state)
{
    (void)state;
    tw_trace_reader *r = open_ok(tw_test_file(0, "t_s,a,p_w\n1,1,5\n1,2,5\n1,3,5\n"));
    tw_row row;
    for (int i = 0; i < 3; i++)
        next_ok(r, &row);
    expect_eof(r);
    tw_trace_reader_close(r);
}

/* issue 19: a power or energy reading that takes another value at the same
 * time is refused (one kernel became thousands of regions); the same value
 * again, another column's values or a reading with its own timestamp are not */
static void test_repeated_time_other_value(void **state)
{
    (void)state;
    row_fails("t_s,p_w\n0,10\n1,20\n1,20\n1,30\n", 3, TW_EPARSE,
              ":5: time 1 s repeats (line 4) with another 'p_w' (30 after 20)");
    row_fails("t_s,e_mj\n1,1000\n1,2000\n", 1, TW_EPARSE, ":3: time 1 s repeats (line 2) with another 'e_mj'");
    tw_trace_reader *r = open_ok(tw_test_file(0, "t_s,p_w,p_w_t_s,temp_c\n1,10,0.9,40\n1,20,1.0,41\n"));
    tw_row row;
    next_ok(r, &row);
    next_ok(r, &row);
    expect_eof(r);
    tw_trace_reader_close(r);
}

/* issue 19: 1e307 kW overflowed to inf and was dropped in silence; powers
 * outside 0..5 kW are refused with the line */
static void test_values_out_of_range(void **state)
{
    (void)state;
    row_fails("t_s,p_kw\n0,0.1\n0.1,1e307\n", 1, TW_EPARSE, ":3: column 'p_kw': '1e307' is out of range");
    row_fails("t_s,p_w\n0,-0.5\n", 0, TW_EPARSE, ":2: column 'p_w': '-0.5' is -0.5 W, outside 0 .. 5000 W");
    row_fails("t_s,p_mw\n0,5000001\n", 0, TW_EPARSE, ":2: column 'p_mw': '5000001' is 5000.001 W, outside");
    /* the edges and other quantities are fine */
    tw_trace_reader *r = open_ok(tw_test_file(0, "t_s,p_w,p_kw,e_j,temp_c\n0,0,5,-1e300,-40\n1,5000,0,1e300,-41\n"));
    tw_row row;
    next_ok(r, &row);
    next_ok(r, &row);
    assert_true(row.value[0] == 5000 && row.value[1] == 0);
    expect_eof(r);
    tw_trace_reader_close(r);
}

/* issue 19: a last line cut off (no line end) made the whole trace refused;
 * it is left out, noted, and the rows before it read */
static void test_cut_off_last_line(void **state)
{
    (void)state;
    static const char *const texts[] = {"t_s,p_w\n0,10\n1,20\n2", "t_s,p_w\n0,10\n1,20\n2,\"3",
                                        "t_s,p_w\n0,10\n1,20\n2,25"};
    for (size_t k = 0; k < sizeof texts / sizeof texts[0]; k++) {
        const char *path = tw_test_file(0, texts[k]);
        tw_trace_reader *r = open_ok(path);
        assert_string_equal(tw_trace_reader_notes(r), "");
        for (int pass = 0; pass < 2; pass++) {
            tw_row row;
            next_ok(r, &row);
            next_ok(r, &row);
            assert_true(row.value[0] == 20);
            expect_eof(r);
            assert_non_null(strstr(tw_trace_reader_notes(r), ":4: the last line has no line end"));
            assert_non_null(strstr(tw_trace_reader_notes(r), path));
            assert_int_equal(tw_trace_reader_rewind(r), TW_OK);
        }
        tw_trace_reader_close(r);
    }
    /* a line end on the last line: no note */
    tw_trace_reader *r = open_ok(tw_test_file(0, "t_s,p_w\n0,10\n"));
    tw_row row;
    next_ok(r, &row);
    expect_eof(r);
    assert_string_equal(tw_trace_reader_notes(r), "");
    tw_trace_reader_close(r);
}

static void test_header_only(void **state)
{
    (void)state;
    tw_trace_reader *r = open_ok(tw_test_file(0, "# c\nt_s,a_w\n# trailing\n\n"));
    assert_int_equal(tw_trace_reader_nreadings(r), 1);
    expect_eof(r);
    assert_int_equal(tw_trace_reader_rewind(r), TW_OK);
    expect_eof(r);
    tw_trace_reader_close(r);
}

static void test_time_only(void **state)
{
    (void)state;
    tw_trace_reader *r = open_ok(tw_test_file(0, "t_s\n1\n2\n"));
    assert_int_equal(tw_trace_reader_nreadings(r), 0);
    tw_row row;
    next_ok(r, &row);
    assert_int_equal(row.n, 0);
    assert_true(row.t_s == 1);
    tw_trace_reader_close(r);
}

static void test_quoted_names(void **state)
{
    (void)state;
    const char *path = tw_test_file(0, "t_s,\"gpu0, board_w\",\"say \"\"hi\"\"\"\n1,2,3\n");
    tw_trace_reader *r = open_ok(path);
    assert_string_equal(tw_trace_reader_reading(r, 0)->name, "gpu0, board_w");
    assert_int_equal(tw_trace_reader_reading(r, 0)->quantity, TW_Q_POWER);
    assert_string_equal(tw_trace_reader_reading(r, 1)->name, "say \"hi\"");
    tw_row row;
    next_ok(r, &row);
    assert_true(row.value[0] == 2 && row.value[1] == 3);
    tw_trace_reader_close(r);
}

static void test_find(void **state)
{
    (void)state;
    const char *path = tw_test_file(0, "t_s,a,b,c\n");
    tw_trace_reader *r = open_ok(path);
    size_t idx = 0;
    assert_int_equal(tw_trace_reader_find(r, "c", &idx), TW_OK);
    assert_int_equal(idx, 2);
    assert_error(tw_trace_reader_find(r, "d", &idx), TW_ENOTFOUND, path, ": no column 'd' (readings: a, b, c)");
    assert_int_equal(tw_trace_reader_find(r, "t_s", &idx), TW_ENOTFOUND);
    assert_int_equal(tw_trace_reader_find(r, "A", &idx), TW_ENOTFOUND);
    tw_trace_reader_close(r);
}

static void test_find_long_list_is_cut(void **state)
{
    (void)state;
    char text[8192] = "t_s";
    for (int i = 0; i < 300; i++) {
        char col[32];
        snprintf(col, sizeof col, ",reading_number_%d", i);
        strcat(text, col);
    }
    strcat(text, "\n");
    const char *path = tw_test_file(0, text);
    tw_trace_reader *r = open_ok(path);
    size_t idx;
    assert_error(tw_trace_reader_find(r, "x", &idx), TW_ENOTFOUND, path, "reading_number_0, ");
    assert_non_null(strstr(tw_last_error(), "..."));
    tw_trace_reader_close(r);
}

static void test_rewind(void **state)
{
    (void)state;
    tw_trace_reader *r = open_ok(tw_test_file(0, "# c\nt_s,a\n1,10\n2,20\n3,30\n"));
    tw_row row;
    next_ok(r, &row);
    next_ok(r, &row);
    assert_int_equal(tw_trace_reader_line(r), 4);
    assert_int_equal(tw_trace_reader_rewind(r), TW_OK);
    assert_int_equal(tw_trace_reader_line(r), 2);
    /* the backwards-time check starts over: t = 1 after t = 2 is fine */
    next_ok(r, &row);
    assert_int_equal(tw_trace_reader_line(r), 3);
    assert_true(row.t_s == 1 && row.value[0] == 10);
    next_ok(r, &row);
    next_ok(r, &row);
    assert_true(row.value[0] == 30);
    expect_eof(r);
    assert_int_equal(tw_trace_reader_rewind(r), TW_OK);
    next_ok(r, &row);
    assert_true(row.value[0] == 10);
    tw_trace_reader_close(r);
}

static void test_rewind_after_error(void **state)
{
    (void)state;
    const char *path = tw_test_file(0, "t_s,a\n1,10\n2,x\n");
    tw_trace_reader *r = open_ok(path);
    tw_row row;
    bool eof;
    next_ok(r, &row);
    assert_error(tw_trace_reader_next(r, &row, &eof), TW_EPARSE, path, ":3:");
    assert_int_equal(tw_trace_reader_rewind(r), TW_OK);
    next_ok(r, &row);
    assert_true(row.value[0] == 10);
    tw_trace_reader_close(r);
}

static void test_long_line(void **state)
{
    (void)state;
    /* a line far beyond any buffer a fixed-size reader would have */
    size_t n = 20000;
    size_t cap = 16 * n + 64;
    char *text = malloc(cap);
    assert_non_null(text);
    size_t used = (size_t)snprintf(text, cap, "t_s");
    for (size_t i = 0; i < n; i++)
        used += (size_t)snprintf(text + used, cap - used, ",c%zu_mw", i); /* mW: 0 .. 20 W, a GPU's range */
    used += (size_t)snprintf(text + used, cap - used, "\n0");
    for (size_t i = 0; i < n; i++)
        used += (size_t)snprintf(text + used, cap - used, ",%zu", i);
    snprintf(text + used, cap - used, "\n");
    tw_trace_reader *r = open_ok(tw_test_file(0, text));
    free(text);
    assert_int_equal(tw_trace_reader_nreadings(r), n);
    tw_row row;
    next_ok(r, &row);
    assert_true(row.value[n - 1] == (double)(n - 1) / 1000);
    tw_trace_reader_close(r);
}

static void test_null_arguments(void **state)
{
    (void)state;
    tw_trace_reader *r = NULL;
    assert_int_equal(tw_trace_reader_open(NULL, &r), TW_EINVAL);
    assert_int_equal(tw_trace_reader_open("x", NULL), TW_EINVAL);
    assert_int_equal(tw_trace_reader_nreadings(NULL), 0);
    assert_null(tw_trace_reader_reading(NULL, 0));
    assert_null(tw_trace_reader_path(NULL));
    assert_int_equal(tw_trace_reader_rewind(NULL), TW_EINVAL);
    tw_trace_reader_close(NULL);
}

/* ---------------------------------------------------------------- errors */

static void test_no_time_column(void **state)
{
    (void)state;
    open_fails("time,a_w\n1,2\n", TW_EPARSE, ":1: no time column (expected t_s)");
    open_fails("# c\nT_S,a_w\n", TW_EPARSE, ":2: no time column (expected t_s)");
}

static void test_duplicate_column(void **state)
{
    (void)state;
    open_fails("t_s,a_w,b,a_w\n", TW_EPARSE, ":1: duplicate column 'a_w'");
    open_fails("t_s,a,\"a\"\n", TW_EPARSE, ":1: duplicate column 'a'");
}

static void test_unnamed_column(void **state)
{
    (void)state;
    open_fails("t_s,a,,b\n", TW_EPARSE, ":1: column 3 has no name");
}

static void test_missing_file(void **state)
{
    (void)state;
    const char *path = tw_test_path(1, "does-not-exist.csv");
    tw_trace_reader *r = NULL;
    assert_error(tw_trace_reader_open(path, &r), TW_EIO, path, ": cannot open: No such file");
    assert_null(r);
    const char *dir = TW_TEST_DATA;
    assert_error(tw_trace_reader_open(dir, &r), TW_EIO, dir, ": cannot open:");
}

static void test_unreadable_file(void **state)
{
    (void)state;
    if (geteuid() == 0) skip(); /* root reads anything */
    const char *path = tw_test_file(7, "t_s\n");
    assert_int_equal(chmod(path, 0), 0);
    tw_trace_reader *r = NULL;
    tw_status st = tw_trace_reader_open(path, &r);
    unlink(path);
    assert_error(st, TW_EIO, path, ": cannot open: Permission denied");
}

static void test_empty_file(void **state)
{
    (void)state;
    open_fails("", TW_EEMPTY, ": empty file (no header)");
    open_fails("# only\n\n# comments\n  \n", TW_EEMPTY, ": empty file (no header)");
    open_fails("\r\n\n", TW_EEMPTY, ": empty file (no header)");
}

static void test_bad_quotes(void **state)
{
    (void)state;
    open_fails("t_s,\"a\n", TW_EPARSE, ":1: malformed quoted field");
    row_fails("t_s,a\n1,\"2\"x\n", 0, TW_EPARSE, ":2: malformed quoted field");
}

static void test_nul_byte(void **state)
{
    (void)state;
    const char *path = tw_test_path(0, "nul.csv");
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fwrite("t_s,a\n1,2\0\n", 1, 11, f);
    fclose(f);
    tw_trace_reader *r = open_ok(path);
    tw_row row;
    bool eof;
    assert_error(tw_trace_reader_next(r, &row, &eof), TW_EPARSE, path, ":2: NUL byte");
    tw_trace_reader_close(r);
}

static void test_field_count(void **state)
{
    (void)state;
    row_fails("t_s,a,b\n1,2,3\n2,3\n", 1, TW_EPARSE, ":3: expected 3 fields, found 2");
    row_fails("t_s,a,b\n1,2,3,4,5\n", 0, TW_EPARSE, ":2: expected 3 fields, found 5");
    row_fails("t_s,a,b\n# x\n\n1,2,3,\n", 0, TW_EPARSE, ":4: expected 3 fields, found 4");
}

static void test_bad_numbers(void **state)
{
    (void)state;
    row_fails("t_s,p_w\n1,abc\n", 0, TW_EPARSE, ":2: column 'p_w': 'abc' is not a number");
    row_fails("t_s,p_w\n1,2\n2,inf\n", 1, TW_EPARSE, ":3: column 'p_w': 'inf' is not a number");
    row_fails("t_s,p_w\n1,-Infinity\n", 0, TW_EPARSE, "column 'p_w': '-Infinity' is not a number");
    row_fails("t_s,p_w\n1,1.5x\n", 0, TW_EPARSE, ":2: column 'p_w': '1.5x' is not a number");
    row_fails("t_s,p_w\n1,1e999\n", 0, TW_EPARSE, ":2: column 'p_w': '1e999' is not a number");
    row_fails("t_s,p_w\n1,1 2\n", 0, TW_EPARSE, ":2: column 'p_w': '1 2' is not a number");
    row_fails("t_s,p_w\n1,nan(1)\n", 0, TW_EPARSE, "'nan(1)' is not a number");
    row_fails("t_s,p_w\n1,-nan\n", 0, TW_EPARSE, "'-nan' is not a number");
    row_fails("t_s,p_w\n1,1,5\n", 0, TW_EPARSE, ":2: expected 2 fields, found 3");
    row_fails("t_s,a,a_t_s\n1,2,x\n", 0, TW_EPARSE, ":2: column 'a_t_s': 'x' is not a number");
    row_fails("t,p_w\nzero,1\n", 0, TW_EPARSE, ":2: column 't': 'zero' is not a number");
    row_fails("t_s,p_w\ninf,1\n", 0, TW_EPARSE, ":2: column 't_s': 'inf' is not a number");
}

static void test_missing_time(void **state)
{
    (void)state;
    row_fails("t_s,p_w\n1,2\n,3\n", 1, TW_EPARSE, ":3: missing time");
    row_fails("p_w,t_s\n3,nan\n", 0, TW_EPARSE, ":2: missing time");
}

static void test_time_backwards(void **state)
{
    (void)state;
    row_fails("t_s,p_w\n1,1\n2,2\n# c\n1.5,3\n", 2, TW_EORDER, ":5: time goes backwards (t_s = 1.5 after 2)");
}

/* ---------------------------------------------------------------- csv.c */

static void test_split(void **state)
{
    (void)state;
    char line[] = "a, b ,\"c,\"\"d\"\" \" ,,\"\",e";
    char *f[8];
    size_t n = 0;
    assert_true(tw_csv_split(line, f, 8, &n));
    assert_int_equal(n, 6);
    assert_string_equal(f[0], "a");
    assert_string_equal(f[1], "b");
    assert_string_equal(f[2], "c,\"d\" ");
    assert_string_equal(f[3], "");
    assert_string_equal(f[4], "");
    assert_string_equal(f[5], "e");

    char few[] = "1,2,3,4";
    assert_true(tw_csv_split(few, f, 2, &n));
    assert_int_equal(n, 4); /* counted beyond the capacity */
    assert_string_equal(f[1], "2");

    char one[] = "";
    assert_true(tw_csv_split(one, f, 8, &n));
    assert_int_equal(n, 1);

    char unclosed[] = "a,\"b";
    assert_false(tw_csv_split(unclosed, f, 8, &n));
    char trailing[] = "\"a\"b,c";
    assert_false(tw_csv_split(trailing, f, 8, &n));
}

static void test_number_fast_path_matches_strtod(void **state)
{
    (void)state;
    /* the fast path must give strtod's result to the bit */
    const char *fixed[] = {"0",
                           "-0",
                           "0.000166",
                           "77076",
                           "1795320791462462",
                           "9007199254740993",
                           "0.1",
                           "123456789.123456789",
                           "1e22",
                           "1e23",
                           "4.9e-324",
                           "1.7976931348623157e308",
                           "2.5e-22",
                           "3.14159265358979323846",
                           "000123.4500",
                           "1.",
                           ".5e1",
                           "-12.75e-3"};
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) {
        double a = 0;
        assert_int_equal(tw_csv_number(fixed[i], (locale_t)0, &a), TW_CSV_NUM_OK);
        double b = strtod(fixed[i], NULL);
        if (memcmp(&a, &b, sizeof a) != 0) fail_msg("'%s': %.17g vs strtod %.17g", fixed[i], a, b);
    }
    srand(12345);
    for (int i = 0; i < 200000; i++) {
        char buf[64];
        unsigned long long mant =
            ((unsigned long long)rand() << 31 | (unsigned)rand()) % (i % 3 == 0 ? 1000ULL : 100000000000000000ULL);
        int e = rand() % 50 - 25;
        int decimals = rand() % 12;
        if (i % 2)
            snprintf(buf, sizeof buf, "%s%llue%d", rand() % 2 ? "-" : "", mant, e);
        else
            snprintf(buf, sizeof buf, "%.*f", decimals, (double)mant * pow(10, -decimals));
        double a = 0;
        assert_int_equal(tw_csv_number(buf, (locale_t)0, &a), TW_CSV_NUM_OK);
        double b = strtod(buf, NULL);
        if (memcmp(&a, &b, sizeof a) != 0) fail_msg("'%s': %.17g vs strtod %.17g", buf, a, b);
    }
}

static void test_number_classes(void **state)
{
    (void)state;
    double v;
    assert_int_equal(tw_csv_number("", (locale_t)0, &v), TW_CSV_NUM_ABSENT);
    assert_int_equal(tw_csv_number(" \t", (locale_t)0, &v), TW_CSV_NUM_ABSENT);
    assert_int_equal(tw_csv_number(" NaN ", (locale_t)0, &v), TW_CSV_NUM_ABSENT);
    assert_int_equal(tw_csv_number("nAn", (locale_t)0, &v), TW_CSV_NUM_BAD);
    assert_int_equal(tw_csv_number("inf", (locale_t)0, &v), TW_CSV_NUM_BAD);
    assert_int_equal(tw_csv_number(".", (locale_t)0, &v), TW_CSV_NUM_BAD);
    assert_int_equal(tw_csv_number("1e", (locale_t)0, &v), TW_CSV_NUM_BAD);
    assert_int_equal(tw_csv_number("--1", (locale_t)0, &v), TW_CSV_NUM_BAD);
    assert_int_equal(tw_csv_number(" 2.5 ", (locale_t)0, &v), TW_CSV_NUM_OK);
    assert_true(v == 2.5);
    assert_int_equal(tw_csv_number("1e-400", (locale_t)0, &v), TW_CSV_NUM_OK); /* underflow: 0 */
}

static void test_number_ignores_locale(void **state)
{
    (void)state;
    /* a program may setlocale() to one with ',' as decimal point */
    locale_t de = newlocale(LC_NUMERIC_MASK, "de_DE.UTF-8", (locale_t)0);
    if (!de) skip();
    locale_t c = tw_csv_c_locale();
    assert_non_null(c);
    locale_t old = uselocale(de);
    double v = 0;
    /* too many digits for the fast path: goes through strtod */
    tw_csv_num k = tw_csv_number("0.12345678901234567890123", c, &v);
    uselocale(old);
    freelocale(de);
    freelocale(c);
    assert_int_equal(k, TW_CSV_NUM_OK);
    assert_near(v, 0.123456789, 1e-9);
}

/* ---------------------------------------------------------------- real trace */

static void test_h100_trace(void **state)
{
    (void)state;
    tw_test_need_data(H100_TRACE);
    tw_trace_reader *r = open_ok(H100_TRACE);
    static const struct {
        const char *name;
        tw_quantity q;
        double scale;
    } want[] = {
        {"power_usage_mw", TW_Q_POWER, 1e-3}, {"power_instant_mw", TW_Q_POWER, 1e-3},
        {"power_avg_mw", TW_Q_POWER, 1e-3},   {"energy_mj", TW_Q_ENERGY, 1e-3},
        {"inst_ts_us", TW_Q_TIME, 1e-6},
    };
    assert_int_equal(tw_trace_reader_nreadings(r), 5);
    for (size_t i = 0; i < 5; i++) {
        const tw_reading_info *info = tw_trace_reader_reading(r, i);
        assert_string_equal(info->name, want[i].name);
        assert_int_equal(info->quantity, want[i].q);
        assert_true(info->scale == want[i].scale);
    }
    /* count the data lines independently of the reader */
    FILE *f = fopen(H100_TRACE, "r");
    assert_non_null(f);
    char line[512];
    unsigned long lines = 0, data = 0;
    while (fgets(line, sizeof line, f)) {
        lines++;
        if (lines > 1 && line[0] != '#' && line[0] != '\n') data++;
    }
    fclose(f);

    tw_row row;
    unsigned long rows = 0;
    double prev = -INFINITY;
    bool eof = false;
    for (;;) {
        tw_status st = tw_trace_reader_next(r, &row, &eof);
        if (st != TW_OK) fail_msg("%s", tw_last_error());
        if (eof) break;
        if (rows == 0) {
            assert_near(row.value[0], 77.076, 1e-12);
            assert_true(row.t_s == 0.000166);
        }
        assert_true(row.t_s >= prev);
        prev = row.t_s;
        for (size_t i = 0; i < 5; i++)
            assert_int_equal(row.valid[i], 1);
        rows++;
    }
    assert_int_equal(rows, data);
    assert_true(rows > 10000);
    assert_int_equal(tw_trace_reader_line(r), lines);
    tw_trace_reader_close(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_basic),
        cmocka_unit_test(test_unit_suffixes),
        cmocka_unit_test(test_mw_scaling_is_exact),
        cmocka_unit_test(test_time_column_names),
        cmocka_unit_test(test_own_timestamps),
        cmocka_unit_test(test_timestamp_of_timestamp),
        cmocka_unit_test(test_comments_blank_lines_crlf),
        cmocka_unit_test(test_bom_and_blanks),
        cmocka_unit_test(test_nan_spellings),
        cmocka_unit_test(test_equal_times_allowed),
        cmocka_unit_test(test_header_only),
        cmocka_unit_test(test_time_only),
        cmocka_unit_test(test_quoted_names),
        cmocka_unit_test(test_find),
        cmocka_unit_test(test_find_long_list_is_cut),
        cmocka_unit_test(test_rewind),
        cmocka_unit_test(test_rewind_after_error),
        cmocka_unit_test(test_long_line),
        cmocka_unit_test(test_null_arguments),
        cmocka_unit_test(test_no_time_column),
        cmocka_unit_test(test_duplicate_column),
        cmocka_unit_test(test_unnamed_column),
        cmocka_unit_test(test_missing_file),
        cmocka_unit_test(test_unreadable_file),
        cmocka_unit_test(test_empty_file),
        cmocka_unit_test(test_bad_quotes),
        cmocka_unit_test(test_nul_byte),
        cmocka_unit_test(test_field_count),
        cmocka_unit_test(test_bad_numbers),
        cmocka_unit_test(test_missing_time),
        cmocka_unit_test(test_time_backwards),
        cmocka_unit_test(test_split),
        cmocka_unit_test(test_number_fast_path_matches_strtod),
        cmocka_unit_test(test_number_classes),
        cmocka_unit_test(test_number_ignores_locale),
        cmocka_unit_test(test_h100_trace),
        cmocka_unit_test(test_repeated_time_other_value),
        cmocka_unit_test(test_kw_scaling),
        cmocka_unit_test(test_values_out_of_range),
        cmocka_unit_test(test_cut_off_last_line),
    };
    return tw_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
