/* NVTX ranges' energy anchored at the energy counter's reads
 * (src/estimate/range_energy.c, through tw_estimate_trace), against an exact
 * truth computed here: 100 W between kernels, training-step-like ranges of
 * 0.7-0.9 s with a 400 W and a 250 W kernel in each, a range nested in each,
 * and a range before the first kernel. The trace holds a sample buffer of 20 ms means whose gain
 * wanders +-3 % over 3.7 s (as an H100's scatters against its counter over a
 * fraction of a second) and an energy counter in whole mJ on a 100 ms grid
 * (phase 37 ms) read about every 0.5 s, as `truewatt run` reads it. Over the
 * whole run the buffer's gain averages out, so the buffer scaled over the fit
 * is off by more than 1 % on some steps; the counter-anchored energy must be
 * within 0.5 % of the truth (the shape between reads 0.5 s apart moves by up
 * to ~2.5 % here) and within 3 of its own sd. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tw_test.h"

#include "correct/profile.h"
#include "estimate/trace.h"
#include "truewatt.h"

#define BASE_W 100.0
#define TILE_S 0.02
#define GRID_PHASE_S 0.037
#define READ_S 0.5
#define END_S 13.0
#define NSTEPS 10

typedef struct kern {
    const char *name;
    double t0, t1, w;
} kern;

static kern K[2 * NSTEPS];
static double step_t0[NSTEPS], step_t1[NSTEPS];

/* Steps of 0.7-0.9 s, 1.1 s apart from 1.5 s; gemm at 400 W and relu at 250 W in each. */
static void make_steps(void)
{
    for (int k = 0; k < NSTEPS; k++) {
        double s = 1.5 + 1.1 * k, len = 0.7 + 0.2 * (double)((k * 7) % 5) / 4.0;
        step_t0[k] = s;
        step_t1[k] = s + len;
        K[2 * k] = (kern){"gemm", s + 0.05, s + 0.05 + 0.25 + 0.02 * (k % 3), 400.0};
        K[2 * k + 1] = (kern){"relu", s + len - 0.3, s + len - 0.1, 250.0};
    }
}

/* The exact energy over [a, b]. */
static double truth_j(double a, double b)
{
    double e = BASE_W * (b - a);
    for (size_t i = 0; i < 2 * NSTEPS; i++) {
        double lo = fmax(a, K[i].t0), hi = fmin(b, K[i].t1);
        if (hi > lo) e += (K[i].w - BASE_W) * (hi - lo);
    }
    return e;
}

/* The buffer's gain against the truth: +-3 % over 3.7 s. */
static double gain(double t) { return 1.0 + 0.03 * sin(2 * 3.14159265358979 * t / 3.7); }

/* The buffer's tile ending at t (as the buffer reads it). */
static double tile_w(double t) { return gain(t - TILE_S / 2) * truth_j(t - TILE_S, t) / TILE_S; }

/* The counter's value when read at t: the energy up to its last grid point, in whole mJ. */
static double counter_j(double t)
{
    double g = GRID_PHASE_S + floor((t - GRID_PHASE_S) / 0.1) * 0.1;
    return round(1e3 * (5e4 + truth_j(0, g))) / 1e3;
}

/* A trace: a row per buffer tile (its own timestamp at the tile's end, the
 * row 1 ms later), and a row per counter read about every 0.5 s (a few ms
 * late, as a thread's wake-up is). */
static const char *write_trace(void)
{
    const char *path = tw_test_path(0, "range_energy.csv");
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "t_s,power_buffer_w,power_buffer_w_t_s,energy_j\n");
    double next_read = 0.3;
    int reads = 0;
    for (double t = TILE_S; t <= END_S + 1e-9; t += TILE_S) {
        double row = t + 0.001;
        if (next_read < row) {
            fprintf(f, "%.6f,,,%.3f\n", next_read, counter_j(next_read));
            reads++;
            next_read += READ_S + 0.001 * (double)((reads * 37) % 11);
        }
        fprintf(f, "%.6f,%.4f,%.6f,\n", row, tile_w(t), t);
    }
    assert_int_equal(fclose(f), 0);
    return path;
}

static void add_event(tw_events *ev, const char *name, const char *kind, double t0, double t1, int depth)
{
    tw_event e = {.name = name,
                  .start_s = t0,
                  .end_s = t1,
                  .device = 0,
                  .stream = depth ? -1 : 7,
                  .true_energy_j = NAN,
                  .kind = kind,
                  .domain = "",
                  .tid = depth ? 100 : 0,
                  .depth = depth};
    assert_int_equal(tw_events_add(ev, &e), TW_OK);
}

/* What the estimator gave before (and gives without a counter): the buffer
 * over the span, scaled by its gain over the whole run. Computed here from
 * the tiles, independently of the code. */
static double buffer_alone_j(double a, double b)
{
    double whole = 0, span = 0;
    for (double t = TILE_S; t <= END_S + 1e-9; t += TILE_S) {
        double w = tile_w(t);
        whole += w * TILE_S;
        double lo = fmax(a, t - TILE_S), hi = fmin(b, t);
        if (hi > lo) span += w * (hi - lo);
    }
    return span * truth_j(0, END_S) / whole;
}

static void ranges_at_the_counter(void **state)
{
    (void)state;
    make_steps();
    const char *trace = write_trace();
    tw_events *ev = NULL;
    assert_int_equal(tw_events_new(&ev), TW_OK);
    add_event(ev, "idle", "nvtx", 0.6, 1.2, 1); /* before the first kernel */
    for (int k = 0; k < NSTEPS; k++) {
        add_event(ev, "gemm", "kernel", K[2 * k].t0, K[2 * k].t1, 0);
        add_event(ev, "step", "nvtx", step_t0[k], step_t1[k], 1);
        add_event(ev, "fwd", "nvtx", step_t0[k] + 0.02, step_t0[k] + 0.4, 2); /* nested, ends first */
        add_event(ev, "relu", "kernel", K[2 * k + 1].t0, K[2 * k + 1].t1, 0);
    }
    tw_profile prof;
    assert_int_equal(tw_profile_load(TW_TEST_DATA "/profile_fake_h100.json", &prof), TW_OK);
    tw_est_config cfg;
    tw_est_config_init(&cfg);
    tw_estimate *e = NULL;
    assert_int_equal(tw_estimate_trace(trace, "", &prof, (const tw_feed[]){tw_feed_of_events(ev)}, &cfg, &e, NULL),
                     TW_OK);
    assert_int_equal(e->nranges, 2 * NSTEPS + 1);
    double worst_buffer = 0;
    for (size_t i = 0; i < e->nranges; i++) {
        const tw_est_range *r = &e->ranges[i];
        double want = truth_j(r->start_s, r->end_s), buf = buffer_alone_j(r->start_s, r->end_s);
        double err = 100 * (r->energy_j / want - 1), berr = 100 * (buf / want - 1);
        print_message("  %-5s %6.3f .. %6.3f s: %9.4f J +- %.4f, truth %9.4f J (%+.3f %%; the buffer alone %+.2f %%)\n",
                      r->name, r->start_s, r->end_s, r->energy_j, r->energy_sd_j, want, err, berr);
        worst_buffer = fmax(worst_buffer, fabs(berr));
        /* the steps, 0.7-0.9 s, as issue 17 asks of them (1 %, with a margin); a
         * nested 0.38 s range lies inside one or two of the counter's 0.5 s
         * intervals, where the buffer's shape is all there is: its sd says so */
        if (strcmp(r->name, "fwd") != 0) assert_true(fabs(err) <= 0.5);
        assert_true(isfinite(r->energy_sd_j) && r->energy_sd_j > 0);
        assert_true(fabs(r->energy_j - want) <= 3 * r->energy_sd_j + 0.002);
        assert_true(fabs(r->baseline_j - (r->energy_j - r->above_j)) <= 1e-9 * r->energy_j);
    }
    /* the case is one where the buffer alone fails the 1 % the ranges must meet */
    assert_true(worst_buffer > 1.0);
    tw_estimate_free(e);
    tw_events_free(ev);
    remove(trace);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(ranges_at_the_counter)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
