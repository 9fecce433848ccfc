/* Unit tests of the readings' update instants (src/correct/observe.c): a
 * sample buffer's own stamps put back on its sampling grid. The H100's buffer
 * samples every 20 ms but stamps one value in five 1-3 ms late; the truth
 * here is the grid the samples were made on. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tw_test.h"

#include "correct/observe.h"
#include "truewatt.h"

#define STEP_S 0.02
#define LATE_S 2.5e-3 /* what the H100 showed: 1.2-3.0 ms */
#define FIRST_S 0.1
#define N 100
#define STEP_AT 43 /* the true power steps at this grid instant */

static void assert_ok(tw_status st)
{
    if (st != TW_OK) fail_msg("%s: %s", tw_strerror(st), tw_last_error());
}

static double grid_at(size_t k) { return FIRST_S + STEP_S * (double)k; }
static bool late(size_t k) { return k % 5 == 3; }

/* A replay trace of the buffer: sample k is the mean power of (t_{k-1}, t_k]
 * (100 W up to the step, 300 W after), polled 4 ms after it is made, stamped
 * late one time in five. */
static const char *buffer_trace(void)
{
    static char text[N * 64 + 128];
    size_t len = (size_t)snprintf(text, sizeof text, "t_s,power_mw,power_mw_t_s\n");
    for (size_t k = 0; k < N; k++) {
        double stamp = grid_at(k) + (late(k) ? LATE_S : 0.0), w = k <= STEP_AT ? 100.0 : 300.0;
        len += (size_t)snprintf(text + len, sizeof text - len, "%.6f,%.1f,%.6f\n", grid_at(k) + 4e-3, 1000 * w, stamp);
    }
    return tw_test_file(0, text);
}

/* The energy after the step, from the buffer's intervals: 300 W x 0.1 s. A
 * late stamp at the step gives 2.5 ms of it 100 W (29.5 J). */
static void test_late_stamp_moves_no_energy(void **state)
{
    (void)state;
    tw_sensor_config cfg = {.path = buffer_trace()};
    tw_sensor *s = NULL;
    assert_ok(tw_sensor_open("replay", &cfg, &s));
    tw_update_series u = {0};
    assert_ok(tw_updates_read(s, 0, &u));
    assert_int_equal(u.n, N);
    double step = grid_at(STEP_AT), e = tw_updates_tiles_integral(&u, step, step + 0.1);
    if (fabs(e - 30.0) > 1e-6) fail_msg("energy after the step %.6f J, want 30 (300 W x 0.1 s)", e);
    for (size_t k = 0; k < u.n; k++)
        if (fabs(u.v[k].t_s - grid_at(k)) > 1e-9)
            fail_msg("stamp %zu at %.6f s, grid %.6f s", k, u.v[k].t_s, grid_at(k));
    tw_update_series_free(&u);
    tw_sensor_close(s);
}

static tw_update_series series(const double *t, size_t n)
{
    tw_update_series u = {malloc(n * sizeof *u.v), n, n};
    assert_non_null(u.v);
    for (size_t k = 0; k < n; k++)
        u.v[k] = (tw_update){t[k], 100.0};
    return u;
}

/* The grid jumps by 7 ms (a sampler restart): each stamp ends on its own
 * grid instant or where it was; none goes to the other side's grid. */
static void test_phase_jump_is_kept(void **state)
{
    (void)state;
    double t[N], truth[N];
    for (size_t k = 0; k < N; k++) {
        truth[k] = grid_at(k) + (k >= N / 2 ? 7e-3 : 0.0);
        t[k] = truth[k] + (late(k) ? LATE_S : 0.0);
    }
    tw_update_series u = series(t, N);
    assert_ok(tw_updates_regularize(&u));
    for (size_t k = 0; k < N; k++) {
        bool on_grid = fabs(u.v[k].t_s - truth[k]) < 1e-9, kept = u.v[k].t_s == t[k];
        if (!on_grid && !kept)
            fail_msg("stamp %zu moved to %.6f s (was %.6f, grid %.6f)", k, u.v[k].t_s, t[k], truth[k]);
        size_t from_jump = k >= N / 2 ? k - N / 2 : N / 2 - k;
        if (from_jump > 9 && !on_grid) fail_msg("stamp %zu, far from the jump, left at %.6f s", k, u.v[k].t_s);
    }
    tw_update_series_free(&u);
}

/* Sampling without a grid (intervals of 10-30 ms): no stamp moves. */
static void test_irregular_stamps_kept(void **state)
{
    (void)state;
    double t[N];
    unsigned x = 12345;
    t[0] = FIRST_S;
    for (size_t k = 1; k < N; k++) {
        x = x * 1103515245u + 12345u;
        t[k] = t[k - 1] + 0.010 + 0.020 * (double)((x >> 16) & 0x7fff) / 32767.0;
    }
    tw_update_series u = series(t, N);
    assert_ok(tw_updates_regularize(&u));
    for (size_t k = 0; k < N; k++)
        if (u.v[k].t_s != t[k]) fail_msg("stamp %zu moved from %.6f to %.6f s", k, t[k], u.v[k].t_s);
    tw_update_series_free(&u);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_late_stamp_moves_no_energy),
        cmocka_unit_test(test_phase_jump_is_kept),
        cmocka_unit_test(test_irregular_stamps_kept),
    };
    return tw_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
