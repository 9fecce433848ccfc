/* tw_profile_show through the public header: a profile's levels as the file
 * states them, its JSON form, and a malformed file named by line and column. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "truewatt.h"
#include "tw_test.h"

static char *show(const char *path, bool json, tw_status *st)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    assert_non_null(f);
    *st = tw_profile_show(path, json, f);
    assert_int_equal(fclose(f), 0);
    return text;
}

/* The file says idle 61.5 W, active idle 116.75 W, step 300 W. */
static void test_text(void **state)
{
    (void)state;
    char path[1024];
    snprintf(path, sizeof path, "%s/profile_h100_sim.json", TW_TEST_DATA);
    tw_status st;
    char *text = show(path, false, &st);
    assert_int_equal(st, TW_OK);
    char title[1100];
    snprintf(title, sizeof title, "sensor profile %s\n", path);
    assert_true(!strncmp(text, title, strlen(title)));
    assert_non_null(strstr(text, "\ngpu:          NVIDIA H100 80GB HBM3\n"));
    assert_non_null(strstr(text, "\nidle:         61.50 W  (no CUDA context)\n"));
    assert_non_null(strstr(text, "\nactive idle:  116.75 W  (context alive, no kernel running)\n"));
    assert_non_null(strstr(text, "\nstep:         300.00 W  (calibration kernel above active idle)\n"));
    assert_non_null(strstr(text, "\nbest for energy: "));
    free(text);
    text = show(path, true, &st);
    assert_int_equal(st, TW_OK);
    assert_non_null(strstr(text, "\"schema\": \"truewatt-sensor-profile\""));
    assert_non_null(strstr(text, "\"active_idle_w\": 116.75"));
    free(text);
}

static void test_malformed(void **state)
{
    (void)state;
    char path[1024];
    snprintf(path, sizeof path, "%s/cli/profile_malformed.json", TW_TEST_DATA);
    tw_status st;
    char *text = show(path, false, &st);
    assert_int_not_equal(st, TW_OK);
    assert_string_equal(text, "");
    char want[1100];
    snprintf(want, sizeof want, "%s:5:3:", path);
    if (strncmp(tw_last_error(), want, strlen(want)) != 0) fail_msg("'%s' does not start '%s'", tw_last_error(), want);
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_text),
        cmocka_unit_test(test_malformed),
    };
    return tw_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
