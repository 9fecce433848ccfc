/* Unit tests of the plain-text table writer (src/report/table.c, in the library). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tw_test.h"

#include "report/table.h"

/* Prints the table into a string (malloc'd). */
static char *print_to_string(const table *t)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    table_print(t, f);
    assert_int_equal(fclose(f), 0);
    return buf;
}

static void assert_prints(const table *t, const char *want)
{
    char *got = print_to_string(t);
    if (strcmp(got, want) != 0) fail_msg("table printed as\n%s\nwant\n%s", got, want);
    free(got);
}

/* Three rows of two columns: first column left-aligned, the other right-aligned,
 * each as wide as its widest cell (header included), two spaces between. */
static void test_3x2_alignment(void **state)
{
    (void)state;
    const char *headers[] = {"method", "energy_j"};
    table *t = table_new(2, headers);
    assert_non_null(t);
    assert_int_equal(table_cell(t, "%s", "corrected"), 0);
    assert_int_equal(table_cell(t, "%.2f", 12.34), 0);
    assert_int_equal(table_cell(t, "%s", "raw_t1_t2"), 0);
    assert_int_equal(table_cell(t, "%.1f", 9.5), 0);
    assert_int_equal(table_cell(t, "%s", "papi"), 0);
    assert_int_equal(table_cell(t, "%.3f", 123.456), 0);
    assert_prints(t, "method     energy_j\n"
                     "-------------------\n"
                     "corrected     12.34\n"
                     "raw_t1_t2       9.5\n"
                     "papi        123.456\n");
    table_free(t);
}

/* A cell wider than its header widens the column, header included. */
static void test_wide_cells_widen_columns(void **state)
{
    (void)state;
    const char *headers[] = {"k", "n", "j"};
    table *t = table_new(3, headers);
    assert_non_null(t);
    table_cell(t, "%s", "kernel_a");
    table_cell(t, "%d", 7);
    table_cell(t, "%.1f", 1234.5);
    table_cell(t, "%s", "b");
    table_cell(t, "%d", 12345);
    table_cell(t, "%s", "-");
    assert_prints(t, "k             n       j\n"
                     "-----------------------\n"
                     "kernel_a      7  1234.5\n"
                     "b         12345       -\n");
    table_free(t);
}

static void test_headers_only(void **state)
{
    (void)state;
    const char *headers[] = {"a", "bb"};
    table *t = table_new(2, headers);
    assert_non_null(t);
    assert_prints(t, "a  bb\n"
                     "-----\n");
    table_free(t);
}

static void test_partial_last_row_ends_line(void **state)
{
    (void)state;
    const char *headers[] = {"name", "w"};
    table *t = table_new(2, headers);
    assert_non_null(t);
    table_cell(t, "%s", "x");
    table_cell(t, "%s", "1");
    table_cell(t, "%s", "y");
    assert_prints(t, "name  w\n"
                     "-------\n"
                     "x     1\n"
                     "y   \n");
    table_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_3x2_alignment),
        cmocka_unit_test(test_wide_cells_widen_columns),
        cmocka_unit_test(test_headers_only),
        cmocka_unit_test(test_partial_last_row_ends_line),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
