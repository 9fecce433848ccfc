/* The DVFS reports through the public header only (tw_dvfs_*_report): the
 * published error of the paper's set on the authors' data, the data file
 * named in a row's error, and failures that write nothing to the stream. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "truewatt.h"
#include "tw_test.h"

/* The report of `run` (one of the calls) into a string; its status into *st. */
static char *report(tw_status (*run)(const tw_dvfs_options *, FILE *), const tw_dvfs_options *o, tw_status *st)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    assert_non_null(f);
    *st = run(o, f);
    assert_int_equal(fclose(f), 0);
    return text;
}

static const char *params_path(const char *gpu)
{
    static char path[1024];
    snprintf(path, sizeof path, "%s/../../data/dvfs/%s.json", TW_TEST_DATA, gpu);
    return path;
}

/* Wang & Chu's Table: 3.85 % MAPE of their GTX 980 set with their kernel
 * special cases, over the 720 rows of their 20 kernels (the paper's number,
 * not this code's). */
static void test_eval_published(void **state)
{
    (void)state;
    char data[1024];
    snprintf(data, sizeof data, "%s/data/dvfs-wang-chu/gtx980-low-dvfs-real-small-workload-Performance.csv",
             TW_SHARED_DIR);
    tw_test_need_data(data);
    tw_dvfs_options o;
    tw_dvfs_options_init(&o);
    o.data = data;
    o.params = params_path("gtx980");
    o.paper_compat = true;
    tw_status st;
    char *text = report(tw_dvfs_eval_report, &o, &st);
    assert_int_equal(st, TW_OK);
    assert_non_null(strstr(text, "\nMAPE: 3.85 %\n"));
    assert_non_null(strstr(text, "\npoints: 720 "));
    free(text);
}

/* A row the model cannot predict is named by its line; the report adds the file. */
static void test_row_error_names_file(void **state)
{
    (void)state;
    char data[1024];
    snprintf(data, sizeof data, "%s/cli/dvfs-no-prediction.csv", TW_TEST_DATA);
    tw_dvfs_options o;
    tw_dvfs_options_init(&o);
    o.data = data;
    o.params = params_path("v100");
    o.all_kernels = true;
    tw_status st;
    char *text = report(tw_dvfs_eval_report, &o, &st);
    assert_int_not_equal(st, TW_OK);
    assert_string_equal(text, "");
    char want[1200];
    snprintf(want, sizeof want, "%s: line 2 (NoTraffic at 1000/1000 MHz): no finite prediction", data);
    if (strncmp(tw_last_error(), want, strlen(want)) != 0) fail_msg("'%s' does not start '%s'", tw_last_error(), want);
    free(text);
}

/* Options not made by tw_dvfs_options_init, an unknown objective, a fit of
 * rows the model cannot predict: an error, nothing on the stream (and no
 * fitted file). */
static void test_refusals(void **state)
{
    (void)state;
    tw_dvfs_options o;
    memset(&o, 0, sizeof o);
    tw_status st;
    char *text = report(tw_dvfs_eval_report, &o, &st);
    assert_int_equal(st, TW_EINVAL);
    assert_string_equal(text, "");
    free(text);

    char data[1024];
    snprintf(data, sizeof data, "%s/cli/dvfs-no-prediction.csv", TW_TEST_DATA);
    tw_dvfs_options_init(&o);
    o.data = data;
    o.power = data;
    o.params = params_path("v100");
    o.objective = "time";
    text = report(tw_dvfs_energy_report, &o, &st);
    assert_int_equal(st, TW_EINVAL);
    assert_non_null(strstr(tw_last_error(), "'time'"));
    assert_string_equal(text, "");
    free(text);

    tw_dvfs_options_init(&o);
    o.data = data;
    o.params = params_path("v100");
    o.all_kernels = true;
    o.out = tw_test_path(0, "fitted.json");
    remove(o.out);
    text = report(tw_dvfs_fit_report, &o, &st);
    assert_int_not_equal(st, TW_OK);
    assert_string_equal(text, "");
    assert_null(fopen(o.out, "r"));
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_eval_published),
        cmocka_unit_test(test_row_error_names_file),
        cmocka_unit_test(test_refusals),
    };
    return tw_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
