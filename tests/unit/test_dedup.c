/* Unit tests of the repeat filter (src/correct/dedup.c): Burtscher §5 step 2,
 * consecutive equal readings at most gap_s apart repeat the last measurement. */
#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "tw_test.h"

#include "correct/dedup.h"

#define GAP 0.004
#define POLL 0.28e-3

/* A K20-like stream: runs of repeats 0.28 ms apart, then a new value; the
 * last measurement (at 45 ms) happens to equal the one before it. */
static const double run_t[] = {0.0,   POLL,         2 * POLL, 3 * POLL,    0.015, 0.015 + POLL, 0.015 + 2 * POLL,
                               0.030, 0.030 + POLL, 0.045,    0.045 + POLL};
static const double run_p[] = {50.0, 50.0, 50.0, 50.0, 51.25, 51.25, 51.25, 49.5, 49.5, 49.5, 49.5};
#define NRUN (sizeof run_t / sizeof run_t[0])

static void test_runs_collapse_to_first(void **state)
{
    (void)state;
    tw_dedup d;
    tw_dedup_init(&d, GAP);
    double t[NRUN], p[NRUN];
    size_t n = tw_dedup_run(&d, run_t, run_p, NRUN, t, p);
    assert_int_equal(n, 4);
    assert_true(t[0] == 0.0 && p[0] == 50.0);
    assert_true(t[1] == 0.015 && p[1] == 51.25);
    assert_true(t[2] == 0.030 && p[2] == 49.5);
    assert_true(t[3] == 0.045 && p[3] == 49.5);
}

/* A long run: each repeat is close to the previous one, though far from the
 * first; the whole run is one reading. */
static void test_long_run_is_one_reading(void **state)
{
    (void)state;
    enum { N = 100 };
    double t[N], p[N], to[N], po[N];
    for (int i = 0; i < N; i++) {
        t[i] = i * POLL; /* the run lasts 28 ms, far more than the gap */
        p[i] = 42.0;
    }
    tw_dedup d;
    tw_dedup_init(&d, GAP);
    assert_int_equal(tw_dedup_run(&d, t, p, N, to, po), 1);
    assert_true(to[0] == 0.0 && po[0] == 42.0);
}

static void test_equal_values_far_apart_kept(void **state)
{
    (void)state;
    /* equal values more than the gap apart are new measurements that agree */
    const double t[] = {0.0, 0.0041, 0.0200, 0.0400};
    const double p[] = {60.0, 60.0, 60.0, 60.0};
    double to[4], po[4];
    tw_dedup d;
    tw_dedup_init(&d, GAP);
    assert_int_equal(tw_dedup_run(&d, t, p, 4, to, po), 4);
    for (int i = 0; i < 4; i++)
        assert_true(to[i] == t[i] && po[i] == p[i]);

    /* exactly at the gap is still a repeat ("at most gap_s apart") */
    const double t2[] = {0.0, 0.004};
    tw_dedup_init(&d, GAP);
    assert_int_equal(tw_dedup_run(&d, t2, p, 2, to, po), 1);
}

static void test_changed_value_kept(void **state)
{
    (void)state;
    const double t[] = {0.0, POLL, 2 * POLL, 3 * POLL};
    const double p[] = {60.0, 60.01, 60.0, 60.0};
    double to[4], po[4];
    tw_dedup d;
    tw_dedup_init(&d, GAP);
    assert_int_equal(tw_dedup_run(&d, t, p, 4, to, po), 3);
    assert_true(po[0] == 60.0 && po[1] == 60.01 && po[2] == 60.0);
    assert_true(to[0] == 0.0 && to[1] == POLL && to[2] == 2 * POLL);
}

static void test_first_sample_always_kept(void **state)
{
    (void)state;
    /* a fresh filter has no previous reading, whatever the values (0 included) */
    const double t[] = {0.0}, p[] = {0.0};
    double to[1], po[1];
    tw_dedup d;
    tw_dedup_init(&d, GAP);
    assert_int_equal(tw_dedup_run(&d, t, p, 1, to, po), 1);
    assert_int_equal(tw_dedup_run(&d, t, p, 0, to, po), 0);
}

/* Split input gives the same as one call, for every split point. */
static void test_state_carries_across_calls(void **state)
{
    (void)state;
    double ref_t[NRUN], ref_p[NRUN];
    tw_dedup d;
    tw_dedup_init(&d, GAP);
    size_t nref = tw_dedup_run(&d, run_t, run_p, NRUN, ref_t, ref_p);
    for (size_t cut = 0; cut <= NRUN; cut++) {
        double t[NRUN], p[NRUN];
        tw_dedup_init(&d, GAP);
        size_t n = tw_dedup_run(&d, run_t, run_p, cut, t, p);
        n += tw_dedup_run(&d, run_t + cut, run_p + cut, NRUN - cut, t + n, p + n);
        assert_int_equal(n, nref);
        assert_memory_equal(t, ref_t, n * sizeof *t);
        assert_memory_equal(p, ref_p, n * sizeof *p);
    }
    /* one sample at a time */
    double t[NRUN], p[NRUN];
    size_t n = 0;
    tw_dedup_init(&d, GAP);
    for (size_t i = 0; i < NRUN; i++)
        n += tw_dedup_run(&d, run_t + i, run_p + i, 1, t + n, p + n);
    assert_int_equal(n, nref);
    assert_memory_equal(t, ref_t, n * sizeof *t);
    assert_memory_equal(p, ref_p, n * sizeof *p);
}

static void test_in_place(void **state)
{
    (void)state;
    double t[NRUN], p[NRUN], ref_t[NRUN], ref_p[NRUN];
    memcpy(t, run_t, sizeof t);
    memcpy(p, run_p, sizeof p);
    tw_dedup d;
    tw_dedup_init(&d, GAP);
    size_t nref = tw_dedup_run(&d, run_t, run_p, NRUN, ref_t, ref_p);
    tw_dedup_init(&d, GAP);
    size_t n = tw_dedup_run(&d, t, p, NRUN, t, p);
    assert_int_equal(n, nref);
    assert_memory_equal(t, ref_t, n * sizeof *t);
    assert_memory_equal(p, ref_p, n * sizeof *p);
}

static void test_zero_gap_keeps_everything_distinct_in_time(void **state)
{
    (void)state;
    double t[NRUN], p[NRUN];
    tw_dedup d;
    tw_dedup_init(&d, 0.0);
    assert_int_equal(tw_dedup_run(&d, run_t, run_p, NRUN, t, p), NRUN);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_runs_collapse_to_first),
        cmocka_unit_test(test_long_run_is_one_reading),
        cmocka_unit_test(test_equal_values_far_apart_kept),
        cmocka_unit_test(test_changed_value_kept),
        cmocka_unit_test(test_first_sample_always_kept),
        cmocka_unit_test(test_state_carries_across_calls),
        cmocka_unit_test(test_in_place),
        cmocka_unit_test(test_zero_gap_keeps_everything_distinct_in_time),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
