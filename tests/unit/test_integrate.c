/* Unit tests of tw_seg_integral (src/correct/integrate.h): the integral over a
 * window of one linear segment between two samples, zero outside the segment. */
#include <math.h>

#include "tw_test.h"

#include "correct/integrate.h"

#define EPS 1e-12

/* The segment used throughout: (0 s, 10 W) to (2 s, 30 W), i.e. y = 10 + 10 t. */
static double seg(double a, double b) { return tw_seg_integral(0.0, 10.0, 2.0, 30.0, a, b); }

static void test_window_inside(void **state)
{
    (void)state;
    /* y(0.5) = 15, y(1.5) = 25: mean 20 over 1 s */
    assert_true(fabs(seg(0.5, 1.5) - 20.0) < EPS);
    /* y(0.2) = 12, y(0.3) = 13: 12.5 x 0.1 */
    assert_true(fabs(seg(0.2, 0.3) - 1.25) < EPS);
}

static void test_window_covers_segment(void **state)
{
    (void)state;
    assert_true(fabs(seg(-1.0, 3.0) - 40.0) < EPS);
    assert_true(fabs(seg(0.0, 2.0) - 40.0) < EPS);
}

static void test_overlap_left_edge(void **state)
{
    (void)state;
    /* [-1, 1] clipped to [0, 1]: y 10..20, mean 15 */
    assert_true(fabs(seg(-1.0, 1.0) - 15.0) < EPS);
}

static void test_overlap_right_edge(void **state)
{
    (void)state;
    /* [1, 5] clipped to [1, 2]: y 20..30, mean 25 */
    assert_true(fabs(seg(1.0, 5.0) - 25.0) < EPS);
    /* [1.5, 2.5] clipped to [1.5, 2]: y 25..30, 27.5 x 0.5 */
    assert_true(fabs(seg(1.5, 2.5) - 13.75) < EPS);
}

static void test_disjoint(void **state)
{
    (void)state;
    assert_true(seg(3.0, 4.0) == 0.0);
    assert_true(seg(-2.0, -1.0) == 0.0);
    /* touching at one point is no overlap */
    assert_true(seg(2.0, 3.0) == 0.0);
    assert_true(seg(-1.0, 0.0) == 0.0);
}

static void test_zero_length(void **state)
{
    (void)state;
    /* a zero-length segment (two samples at one instant) adds nothing */
    assert_true(tw_seg_integral(1.0, 10.0, 1.0, 99.0, 0.0, 2.0) == 0.0);
    /* nor does an empty or reversed window */
    assert_true(seg(1.0, 1.0) == 0.0);
    assert_true(seg(1.5, 0.5) == 0.0);
    /* a reversed segment is no segment */
    assert_true(tw_seg_integral(2.0, 30.0, 0.0, 10.0, 0.0, 2.0) == 0.0);
}

static void test_negative_values_and_additivity(void **state)
{
    (void)state;
    /* (1, -4) to (3, 4): zero at 2, so it integrates to 0 over [1, 3] */
    assert_true(fabs(tw_seg_integral(1.0, -4.0, 3.0, 4.0, 0.0, 10.0)) < EPS);
    assert_true(fabs(tw_seg_integral(1.0, -4.0, 3.0, 4.0, 1.0, 2.0) + 2.0) < EPS);
    /* adjacent windows add up to the whole */
    double parts = seg(-1.0, 0.37) + seg(0.37, 1.21) + seg(1.21, 5.0);
    assert_true(fabs(parts - 40.0) < 1e-9);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_window_inside),
        cmocka_unit_test(test_window_covers_segment),
        cmocka_unit_test(test_overlap_left_edge),
        cmocka_unit_test(test_overlap_right_edge),
        cmocka_unit_test(test_disjoint),
        cmocka_unit_test(test_zero_length),
        cmocka_unit_test(test_negative_values_and_additivity),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
