/* Unit tests of the fixed-bin power histogram (src/correct/hist.c). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "tw_test.h"

#include "correct/hist.h"

static int setup(void **state)
{
    tw_hist *h = malloc(sizeof *h);
    if (!h || tw_hist_init(h)) {
        free(h);
        return -1;
    }
    *state = h;
    return 0;
}

static int teardown(void **state)
{
    tw_hist *h = *state;
    tw_hist_free(h);
    free(h);
    return 0;
}

/* Within one bin of the expected value. */
static void assert_near_bin(double got, double want)
{
    if (!(fabs(got - want) <= TW_HIST_BIN_W))
        fail_msg("quantile %.6g, want %.6g within one bin (%g W)", got, want, TW_HIST_BIN_W);
}

static void test_empty_is_nan(void **state)
{
    tw_hist *h = *state;
    assert_true(isnan(tw_hist_quantile(h, 0.0)));
    assert_true(isnan(tw_hist_quantile(h, 0.5)));
    assert_true(isnan(tw_hist_quantile(h, 1.0)));
    /* non-finite values are not counted: still empty */
    tw_hist_add(h, NAN);
    tw_hist_add(h, INFINITY);
    assert_int_equal(h->count, 0);
    assert_true(isnan(tw_hist_quantile(h, 0.5)));
}

static void test_quantiles_of_1_to_100(void **state)
{
    tw_hist *h = *state;
    /* added out of order: 1..100 W */
    for (int i = 0; i < 100; i++)
        tw_hist_add(h, (double)((i * 37) % 100 + 1));
    assert_int_equal(h->count, 100);
    /* the quantile is the value of rank floor(q (n - 1)) */
    assert_near_bin(tw_hist_quantile(h, 0.0), 1.0);
    assert_near_bin(tw_hist_quantile(h, 0.05), 5.0);
    assert_near_bin(tw_hist_quantile(h, 0.5), 50.0);
    assert_near_bin(tw_hist_quantile(h, 0.995), 99.0);
    assert_near_bin(tw_hist_quantile(h, 1.0), 100.0);
}

static void test_single_value(void **state)
{
    tw_hist *h = *state;
    tw_hist_add(h, 52.5);
    for (double q = 0.0; q <= 1.0; q += 0.25)
        assert_near_bin(tw_hist_quantile(h, q), 52.5);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void test_quantiles_match_sorted_data(void **state)
{
    tw_hist *h = *state;
    enum { N = 5001 };
    static double v[N];
    uint64_t s = 2024;
    for (int i = 0; i < N; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        /* two levels, like idle and a kernel, with some spread */
        double u = (double)(s >> 11) * 0x1.0p-53;
        v[i] = (i % 3 ? 25.0 : 150.0) + 4.0 * u;
        tw_hist_add(h, v[i]);
    }
    qsort(v, N, sizeof *v, cmp_double);
    const double qs[] = {0.0, 0.05, 0.25, 0.5, 0.66, 0.7, 0.9, 0.995, 1.0};
    for (size_t i = 0; i < sizeof qs / sizeof qs[0]; i++) {
        size_t rank = (size_t)(qs[i] * (N - 1));
        assert_near_bin(tw_hist_quantile(h, qs[i]), v[rank]);
    }
}

static void test_out_of_range_clamped(void **state)
{
    tw_hist *h = *state;
    tw_hist_add(h, -1e6);
    tw_hist_add(h, 1e6);
    assert_int_equal(h->count, 2);
    assert_near_bin(tw_hist_quantile(h, 0.0), TW_HIST_MIN_W);
    assert_near_bin(tw_hist_quantile(h, 1.0), TW_HIST_MAX_W);
}

static void test_negative_power(void **state)
{
    tw_hist *h = *state;
    tw_hist_add(h, -3.0);
    tw_hist_add(h, -1.0);
    tw_hist_add(h, 2.0);
    assert_near_bin(tw_hist_quantile(h, 0.0), -3.0);
    assert_near_bin(tw_hist_quantile(h, 0.5), -1.0);
    assert_near_bin(tw_hist_quantile(h, 1.0), 2.0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_empty_is_nan, setup, teardown),
        cmocka_unit_test_setup_teardown(test_quantiles_of_1_to_100, setup, teardown),
        cmocka_unit_test_setup_teardown(test_single_value, setup, teardown),
        cmocka_unit_test_setup_teardown(test_quantiles_match_sorted_data, setup, teardown),
        cmocka_unit_test_setup_teardown(test_out_of_range_clamped, setup, teardown),
        cmocka_unit_test_setup_teardown(test_negative_power, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
