/* Unit tests of the Nsight Compute CSV reader (src/mem/ncu_csv.c): a real
 * file from an H100 (ncu 2025.3) with its ==PROF== preamble and thousands
 * separators, C++ kernel names full of commas and quotes, columns in another
 * order, n/a values, two processes with the same launch IDs; and that ncu's
 * own ==ERROR== line, a truncated row and a non-numeric value are reported
 * with where they are, leaving the report empty. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tw_test.h"

#include "truewatt.h"
#include "mem/ncu_csv.h"

static void assert_ok(tw_status st)
{
    if (st != TW_OK) fail_msg("%s: %s", tw_strerror(st), tw_last_error());
}

/* the detail of the last error contains `part` */
static void assert_error_has(const char *part)
{
    if (!strstr(tw_last_error(), part)) fail_msg("error \"%s\" lacks \"%s\"", tw_last_error(), part);
}

static tw_status read_text(const char *text, const char *const *metrics, size_t nmetrics, tw_ncu_report *out)
{
    FILE *f = tmpfile();
    assert_non_null(f);
    fputs(text, f);
    rewind(f);
    tw_status st = tw_ncu_read(f, metrics, nmetrics, out);
    fclose(f);
    return st;
}

static void assert_empty(const tw_ncu_report *r)
{
    assert_null(r->launches);
    assert_int_equal(r->n, 0);
}

#define HEADER                                                                                                         \
    "\"ID\",\"Process ID\",\"Process Name\",\"Host Name\",\"Kernel Name\",\"Context\",\"Stream\",\"Block Size\","      \
    "\"Grid Size\",\"Device\",\"CC\",\"Section Name\",\"Metric Name\",\"Metric Unit\",\"Metric Value\"\n"
#define ROW(id, pid, name, metric, value)                                                                              \
    "\"" id "\",\"" pid "\",\"truewatt\",\"127.0.0.1\",\"" name "\",\"1\",\"7\",\"(32, 1, 1)\",\"(1, 1, 1)\",\"0\","   \
    "\"9.0\",\"Command line profiler metrics\",\"" metric "\",\"sector\",\"" value "\"\n"

static const char SAMPLE[] =
    "==WARNING== Note: Running with unmodified GPU clocks. If not controlled otherwise, profiling results may be "
    "inconsistent.\n"
    "==PROF== Connected to process 1103 (/work/main/build-gpu/truewatt)\n"
    "==PROF== Disconnected from process 1103\n" HEADER ROW("0", "1103", "tw_chase", "dram__sectors_read.sum", "112")
        ROW("0", "1103", "tw_chase", "lts__t_sectors.sum", "44,729")
            ROW("1", "1103", "tw_chase", "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", "1,024");

static const char *const METRICS[] = {"dram__sectors_read.sum", "lts__t_sectors.sum",
                                      "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"};

static void test_real_sample(void **state)
{
    (void)state;
    tw_ncu_report r;
    assert_ok(read_text(SAMPLE, METRICS, 3, &r));
    assert_int_equal(r.n, 2);
    assert_int_equal(r.nmetrics, 3);
    assert_string_equal(r.message, "");
    for (size_t k = 0; k < 2; k++) {
        const tw_ncu_launch *l = &r.launches[k];
        assert_int_equal(l->pid, 1103);
        assert_int_equal(l->id, (long)k);
        assert_string_equal(l->name, "tw_chase");
        assert_int_equal(l->block[0], 32);
        assert_int_equal(l->block[1], 1);
        assert_int_equal(l->block[2], 1);
        assert_int_equal(l->grid[0], 1);
        assert_int_equal(l->grid[2], 1);
    }
    assert_true(r.launches[0].values[0] == 112);
    assert_true(r.launches[0].values[1] == 44729);
    assert_true(isnan(r.launches[0].values[2])); /* launch 0 has no l1tex row */
    assert_true(isnan(r.launches[1].values[0]));
    assert_true(r.launches[1].values[2] == 1024);
    tw_ncu_report_free(&r);
    assert_empty(&r);
    tw_ncu_report_free(&r); /* twice is harmless */
}

static void test_cpp_names(void **state)
{
    (void)state;
    static const char text[] =
        HEADER ROW("0", "9", "void at::native::foo<float, 4>(int, float *)", "dram__sectors_read.sum", "1")
            ROW("1", "9", "void k<\"\"a,b\"\">(char const* = \"\"x\"\")", "dram__sectors_read.sum", "2")
                ROW("1", "9", "void k<\"\"a,b\"\">(char const* = \"\"x\"\")", "lts__t_sectors.sum", "3");
    tw_ncu_report r;
    assert_ok(read_text(text, METRICS, 2, &r));
    assert_int_equal(r.n, 2);
    assert_string_equal(r.launches[0].name, "void at::native::foo<float, 4>(int, float *)");
    assert_string_equal(r.launches[1].name, "void k<\"a,b\">(char const* = \"x\")");
    assert_true(r.launches[1].values[0] == 2 && r.launches[1].values[1] == 3);
    tw_ncu_report_free(&r);
}

/* an older layout: the value first, no Process ID, no sizes; blank lines and
 * unquoted fields, as a hand edit would leave them */
static void test_other_order(void **state)
{
    (void)state;
    static const char text[] = "\"Metric Value\",\"Metric Name\",\"Kernel Name\",\"ID\"\r\n"
                               "\"5.5\",\"lts__t_sectors.sum\",\"k\",\"3\"\r\n"
                               "\r\n"
                               "1e3,dram__sectors_read.sum,k,3\r\n";
    tw_ncu_report r;
    assert_ok(read_text(text, METRICS, 2, &r));
    assert_int_equal(r.n, 1);
    assert_int_equal(r.launches[0].pid, 0);
    assert_int_equal(r.launches[0].id, 3);
    assert_int_equal(r.launches[0].block[0], 0);
    assert_int_equal(r.launches[0].grid[1], 0);
    assert_true(r.launches[0].values[0] == 1000);
    assert_true(r.launches[0].values[1] == 5.5);
    tw_ncu_report_free(&r);
}

/* two runs appended to one log file, the second with another column order */
static void test_repeated_header(void **state)
{
    (void)state;
    static const char text[] = "\"ID\",\"Kernel Name\",\"Metric Name\",\"Metric Value\"\n"
                               "\"0\",\"k\",\"lts__t_sectors.sum\",\"1.5\"\n"
                               "==PROF== Disconnected from process 5\n"
                               "\"ID\",\"Metric Name\",\"Kernel Name\",\"Metric Value\"\n"
                               "\"1\",\"lts__t_sectors.sum\",\"k2\",\"2\"\n";
    tw_ncu_report r;
    assert_ok(read_text(text, METRICS, 2, &r));
    assert_int_equal(r.n, 2);
    assert_string_equal(r.launches[1].name, "k2");
    assert_true(r.launches[1].values[1] == 2);
    tw_ncu_report_free(&r);
}

static void test_na_and_sum(void **state)
{
    (void)state;
    static const char text[] = HEADER ROW("0", "1", "a", "dram__sectors_read.sum", "n/a")
        ROW("1", "1", "a", "dram__sectors_read.sum", "1,000,000") ROW("2", "1", "a", "dram__sectors_read.sum", "")
            ROW("3", "1", "a", "dram__sectors_read.sum", "0.25") ROW("4", "1", "a", "lts__t_sectors.sum", "7");
    tw_ncu_report r;
    assert_ok(read_text(text, METRICS, 2, &r));
    assert_int_equal(r.n, 5);
    assert_true(isnan(r.launches[0].values[0]));
    assert_true(isnan(r.launches[2].values[0]));
    size_t missing = 99;
    assert_true(tw_ncu_sum(&r, 0, &missing) == 1000000.25);
    assert_int_equal(missing, 3); /* n/a, empty, and launch 4 that has no such row */
    assert_true(tw_ncu_sum(&r, 1, &missing) == 7);
    assert_int_equal(missing, 4);
    assert_true(tw_ncu_sum(&r, 1, NULL) == 7);
    assert_true(isnan(tw_ncu_sum(&r, 2, &missing))); /* no such metric */
    tw_ncu_report_free(&r);
}

/* what ncu writes without the permission to read the counters */
static void test_error_only(void **state)
{
    (void)state;
    static const char text[] =
        "==PROF== Connected to process 77 (/usr/bin/python3)\n"
        "==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU Performance Counters on "
        "the target device 0.\n"
        "==ERROR== Another error\n"
        "==PROF== Disconnected from process 77\n";
    tw_ncu_report r;
    tw_status st = read_text(text, METRICS, 3, &r);
    assert_int_not_equal(st, TW_OK);
    assert_empty(&r);
    assert_true(strncmp(r.message, "==ERROR== ERR_NVGPUCTRPERM", 26) == 0);
    assert_error_has("ERR_NVGPUCTRPERM");
    tw_ncu_report_free(&r);

    /* with a header but no rows it is not an error: the caller decides */
    char *with_header = malloc(sizeof text + sizeof HEADER);
    assert_non_null(with_header);
    strcpy(with_header, text);
    strcat(with_header, HEADER);
    assert_ok(read_text(with_header, METRICS, 3, &r));
    assert_int_equal(r.n, 0);
    assert_true(strstr(r.message, "ERR_NVGPUCTRPERM") != NULL);
    tw_ncu_report_free(&r);
    free(with_header);
}

static void test_truncated_row(void **state)
{
    (void)state;
    /* the last row cut inside the kernel name's quotes */
    static const char text[] = "==PROF== x\n" HEADER ROW("0", "1", "a", "lts__t_sectors.sum",
                                                         "1") "\"1\",\"1\",\"truewatt\",\"127.0.0.1\",\"void f<int, ";
    tw_ncu_report r;
    assert_int_equal(read_text(text, METRICS, 2, &r), TW_EPARSE);
    assert_empty(&r);
    assert_error_has("line 4");
    assert_error_has("unterminated quote");

    /* cut right after a closing quote */
    static const char fewer[] = HEADER ROW("0", "1", "a", "lts__t_sectors.sum", "1") "\"1\",\"1\",\"truewatt\"\n";
    assert_int_equal(read_text(fewer, METRICS, 2, &r), TW_EPARSE);
    assert_empty(&r);
    assert_error_has("line 3");
}

static void test_not_a_number(void **state)
{
    (void)state;
    static const char text[] = HEADER ROW("0", "1", "a", "lts__t_sectors.sum", "1")
        ROW("0", "1", "a", "launch__func_cache_config", "CachePreferNone") /* not asked for: never looked at */
        ROW("1", "1", "a", "lts__t_sectors.sum", "12 sectors");
    tw_ncu_report r;
    assert_int_equal(read_text(text, METRICS, 2, &r), TW_EPARSE);
    assert_empty(&r);
    assert_error_has("line 4");
    assert_error_has("lts__t_sectors.sum");
    assert_error_has("12 sectors");

    static const char *const bad[] = {"nan", "inf", "0x10", "1e999", "-", "1.2.3x"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char buf[1024];
        snprintf(buf, sizeof buf, HEADER ROW("0", "1", "a", "lts__t_sectors.sum", "%s"), bad[i]);
        if (read_text(buf, METRICS, 2, &r) != TW_EPARSE) fail_msg("value \"%s\" was taken", bad[i]);
    }
}

static void test_empty_and_no_header(void **state)
{
    (void)state;
    tw_ncu_report r;
    assert_int_equal(read_text("", METRICS, 3, &r), TW_EEMPTY);
    assert_empty(&r);
    assert_error_has("no ncu CSV header");
    assert_int_equal(read_text("==PROF== Disconnected\nhello, world\n\"a\",\"b\"\n", METRICS, 3, &r), TW_EPARSE);
    assert_string_equal(r.message, "");
    assert_error_has("no ncu CSV header");
}

static void test_two_processes(void **state)
{
    (void)state;
    static const char text[] = HEADER ROW("0", "200", "parent", "lts__t_sectors.sum", "1")
        ROW("0", "201", "child", "lts__t_sectors.sum", "2") ROW("0", "200", "parent", "dram__sectors_read.sum", "3")
            ROW("1", "201", "child", "dram__sectors_read.sum", "4");
    tw_ncu_report r;
    assert_ok(read_text(text, METRICS, 2, &r));
    assert_int_equal(r.n, 3);
    assert_int_equal(r.launches[0].pid, 200);
    assert_int_equal(r.launches[1].pid, 201);
    assert_int_equal(r.launches[1].id, 0);
    assert_string_equal(r.launches[1].name, "child");
    assert_true(r.launches[0].values[0] == 3 && r.launches[0].values[1] == 1);
    assert_true(r.launches[1].values[1] == 2 && isnan(r.launches[1].values[0]));
    assert_true(r.launches[2].values[0] == 4);
    size_t missing;
    assert_true(tw_ncu_sum(&r, 0, &missing) == 7);
    assert_int_equal(missing, 1);
    tw_ncu_report_free(&r);
}

/* many launches, interleaved, and a name longer than any first buffer */
static void test_many_and_long(void **state)
{
    (void)state;
    enum { N = 5000, NAME = 100000 };
    FILE *f = tmpfile();
    assert_non_null(f);
    fputs(HEADER, f);
    char *name = malloc(NAME + 1);
    assert_non_null(name);
    memset(name, 'x', NAME);
    name[NAME] = '\0';
    for (int pass = 0; pass < 2; pass++)
        for (int k = 0; k < N; k++)
            fprintf(f, ROW("%d", "1", "%s", "%s", "%d"), k, k == N - 1 ? name : "k", METRICS[pass], k);
    rewind(f);
    tw_ncu_report r;
    assert_ok(tw_ncu_read(f, METRICS, 2, &r));
    fclose(f);
    assert_int_equal(r.n, N);
    assert_int_equal(strlen(r.launches[N - 1].name), NAME);
    size_t missing;
    assert_true(tw_ncu_sum(&r, 1, &missing) == (double)N * (N - 1) / 2);
    assert_int_equal(missing, 0);
    tw_ncu_report_free(&r);
    free(name);
}

static void test_path(void **state)
{
    (void)state;
    tw_ncu_report r;
    assert_int_equal(tw_ncu_read_path("/nonexistent/ncu.csv", METRICS, 3, &r), TW_EIO);
    assert_error_has("/nonexistent/ncu.csv");
    assert_empty(&r);
    const char *p = tw_test_file(0, SAMPLE);
    assert_non_null(p);
    assert_ok(tw_ncu_read_path(p, METRICS, 3, &r));
    assert_int_equal(r.n, 2);
    tw_ncu_report_free(&r);
    p = tw_test_file(1, HEADER ROW("0", "1", "a", "lts__t_sectors.sum", "?"));
    assert_int_equal(tw_ncu_read_path(p, METRICS, 3, &r), TW_EPARSE);
    assert_error_has(p);
    assert_error_has("line 2");
    remove(tw_test_path(0, "input.csv"));
    remove(tw_test_path(1, "input.csv"));
    assert_int_equal(tw_ncu_read(NULL, METRICS, 3, &r), TW_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_real_sample),         cmocka_unit_test(test_cpp_names),
        cmocka_unit_test(test_other_order),         cmocka_unit_test(test_repeated_header),
        cmocka_unit_test(test_na_and_sum),          cmocka_unit_test(test_error_only),
        cmocka_unit_test(test_truncated_row),       cmocka_unit_test(test_not_a_number),
        cmocka_unit_test(test_empty_and_no_header), cmocka_unit_test(test_two_processes),
        cmocka_unit_test(test_many_and_long),       cmocka_unit_test(test_path)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
