/* The energy counter's windows on its fitted update grid
 * (src/estimate/counter_grid.c), and through tw_estimate_trace the energy a
 * short program is charged (tw_procfile_split), against an exact truth
 * computed here: 100 W, a 1.5 s kernel at 400 W (a program like the
 * exporter's check's), a sample buffer of exact 20 ms means, and an energy
 * counter in whole mJ on a 100 ms grid (phase 37 ms) read about every
 * 0.5 s, each read up to 90 ms late (a sampler thread that waited for a
 * core on a loaded host: CI's cli.e2e.gpu_exporter_procs_fake once charged
 * 10 % too little), its value what the counter held when it was read.
 * Placed on the grid, every window's energy is the truth's over it (the
 * counter's mJ); placed at the reads (tw_observe_updates), windows are off
 * by up to ~20 % (checked too: the case tells the two apart). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tw_test.h"

#include "correct/observe.h"
#include "correct/profile.h"
#include "estimate/counter_grid.h"
#include "estimate/trace.h"
#include "exporter/procfile.h"
#include "truewatt.h"

#define BASE_W 100.0
#define KERNEL_W 400.0
#define K0_S 1.03
#define K1_S 2.53
#define TILE_S 0.02
#define GRID_S 0.1
#define GRID_PHASE_S 0.037
#define READ_S 0.5
#define END_S 4.0

/* The exact energy over [a, b]. */
static double truth_j(double a, double b)
{
    double lo = fmax(a, K0_S), hi = fmin(b, K1_S);
    return BASE_W * (b - a) + (hi > lo ? (KERNEL_W - BASE_W) * (hi - lo) : 0.0);
}

static double grid_before(double t) { return GRID_PHASE_S + floor((t - GRID_PHASE_S) / GRID_S) * GRID_S; }

/* The counter's value when read at t: the energy up to its last grid point, in whole mJ. */
static double counter_j(double t) { return round(1e3 * (5e4 + truth_j(0, grid_before(t)))) / 1e3; }

/* A trace: a row per buffer tile (its own timestamp at the tile's end, the
 * row 1 ms later), and a row per counter read, 0.5 s apart plus 0-90 ms late. */
static const char *write_trace(void)
{
    const char *path = tw_test_path(0, "counter_grid.csv");
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "t_s,power_buffer_w,power_buffer_w_t_s,energy_j\n");
    int reads = 0;
    double next_read = 0.31;
    for (double t = TILE_S; t <= END_S + 1e-9; t += TILE_S) {
        double row = t + 0.001;
        if (next_read < row) {
            fprintf(f, "%.6f,,,%.3f\n", next_read, counter_j(next_read));
            reads++;
            next_read = 0.31 + READ_S * reads + 0.009 * (double)((reads * 37) % 11);
        }
        fprintf(f, "%.6f,%.4f,%.6f,\n", row, truth_j(t - TILE_S, t) / TILE_S, t);
    }
    assert_int_equal(fclose(f), 0);
    return path;
}

/* The worst relative error of windows' energies against the truth over them. */
static double worst_window_err(const tw_obs_series *w)
{
    double worst = 0;
    for (size_t i = 0; i < w->n; i++) {
        double got = w->v[i].power_w * (w->v[i].t1_s - w->v[i].t0_s), want = truth_j(w->v[i].t0_s, w->v[i].t1_s);
        worst = fmax(worst, fabs(got / want - 1));
    }
    return worst;
}

static void windows_on_the_grid(void **state)
{
    (void)state;
    const char *trace = write_trace();
    tw_profile prof;
    assert_int_equal(tw_profile_load(TW_TEST_DATA "/profile_fake_h100.json", &prof), TW_OK);
    const tw_reading_model *cm = tw_profile_find(&prof, "energy_j"), *sm = tw_profile_find(&prof, "power_buffer_w");
    assert_non_null(cm);
    assert_non_null(sm);
    tw_sensor_config sc = {.path = trace};
    tw_sensor *src = NULL;
    assert_int_equal(tw_sensor_open("replay", &sc, &src), TW_OK);
    size_t ccol, scol;
    assert_int_equal(tw_sensor_find(src, "energy_j", &ccol), TW_OK);
    assert_int_equal(tw_sensor_find(src, "power_buffer_w", &scol), TW_OK);

    tw_obs_series grid, naive;
    tw_obs_series_init(&grid);
    tw_obs_series_init(&naive);
    assert_int_equal(tw_est_counter_windows(src, scol, sm, ccol, cm, &grid), TW_OK);
    assert_int_equal(tw_observe(src, ccol, cm, true, &naive), TW_OK);
    assert_true(grid.n >= 6);
    for (size_t i = 0; i < grid.n; i++) { /* every edge a grid point */
        double off = grid.v[i].t0_s - grid_before(grid.v[i].t0_s + 1e-9);
        assert_true(fabs(off) < 1e-6);
        if (i) assert_true(grid.v[i].t0_s == grid.v[i - 1].t1_s);
    }
    double g = worst_window_err(&grid), n = worst_window_err(&naive);
    print_message("  %zu windows on the grid: worst %.4f %% off the truth; placed at the reads: %.2f %%\n", grid.n,
                  100 * g, 100 * n);
    assert_true(g < 1e-4); /* the counter's whole mJ over >= 50 J windows */
    assert_true(n > 0.05); /* the case is one the reads' own times get wrong */
    tw_obs_series_free(&grid);
    tw_obs_series_free(&naive);
    tw_sensor_close(src);

    /* through the estimator: the program's charge is the truth over its kernel */
    tw_events *ev = NULL;
    assert_int_equal(tw_events_new(&ev), TW_OK);
    tw_event k = {.name = "gemm",
                  .start_s = K0_S,
                  .end_s = K1_S,
                  .device = 0,
                  .stream = 7,
                  .true_energy_j = NAN,
                  .kind = "kernel",
                  .domain = ""};
    assert_int_equal(tw_events_add(ev, &k), TW_OK);
    tw_est_config cfg;
    tw_est_config_init(&cfg);
    tw_estimate *e = NULL;
    tw_est_trace_info info;
    assert_int_equal(tw_estimate_trace(trace, "", &prof, (const tw_feed[]){tw_feed_of_events(ev)}, &cfg, &e, &info),
                     TW_OK);
    assert_non_null(strstr(info.readings, ", on its fitted 100 ms grid"));
    double proc, active, want = truth_j(K0_S, K1_S);
    tw_procfile_split(e, ev, &proc, &active);
    double ref_want = truth_j(e->reference_t0_s, e->reference_t1_s);
    print_message("  charged %.3f J, truth %.3f J (%+.3f %%); reference %.3f J over [%.3f, %.3f] s, truth %.3f J\n",
                  proc, want, 100 * (proc / want - 1), e->reference_j, e->reference_t0_s, e->reference_t1_s, ref_want);
    assert_true(fabs(e->reference_j / ref_want - 1) < 1e-4);
    assert_true(fabs(proc / want - 1) < 0.005);
    tw_estimate_free(e);
    tw_events_free(ev);
    remove(trace);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(windows_on_the_grid)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
