/* Unit tests of src/api/anchor.c without clocks: a synthetic true power, a
 * sample buffer of its 20 ms means that reads 3 % high, and an energy
 * counter on a 100 ms grid (phase 37 ms) publishing the exact energy up to
 * each grid point 11 ms after it; the anchor sees the buffer and the
 * counter's reads every 0.4875 s, as a session does. The expected energy of
 * a span is the true power's exact integral (computed here). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "tw_test.h"

#include "api/anchor.h"
#include "api/energy_line.h"
#include "truewatt.h"

#define GRID_PHASE_S 0.037
#define PUBLISH_DELAY_S 0.011
#define BUFFER_GAIN 1.03
#define TILE_S 0.02

/* Idle at 80 W with 250 ms bursts at 450 W every 0.9 s, and a 2 s plateau at 300 W every 20 s. */
static double power_w(double t)
{
    double p = fmod(t, 0.9) < 0.25 ? 450.0 : 80.0;
    return fmod(t, 20.0) >= 10.0 && fmod(t, 20.0) < 12.0 ? 300.0 : p;
}

/* Exact integral over [0, t]: every change of power_w falls on a multiple of
 * 1 ms, so the cumulative energy on that grid (summed once) plus the part of
 * the last millisecond is exact. */
#define GRID_S 0.001
#define GRID_N 601000 /* 601 s */
static double cum[GRID_N + 1];

static void make_cum(void)
{
    for (long i = 0; i < GRID_N; i++)
        cum[i + 1] = cum[i] + power_w(((double)i + 0.5) * GRID_S) * GRID_S;
}

static double energy_to(double t)
{
    long n = (long)floor(t / GRID_S);
    if (n >= GRID_N) fail_msg("energy_to(%g): past the table", t);
    return cum[n] + power_w(((double)n + 0.5) * GRID_S) * (t - (double)n * GRID_S);
}

static double span_j(double a, double b) { return energy_to(b) - energy_to(a); }

typedef struct sim {
    tw_energy_line line;
    tw_anchor anchor;
    double t;      /* simulated now */
    double e_tile; /* energy_to at the last tile's end */
    double next_read;
} sim;

static void sim_init(sim *s)
{
    memset(s, 0, sizeof *s);
    tw_reading_model buf, cnt;
    memset(&buf, 0, sizeof buf);
    buf.response = TW_RESP_BOXCAR; /* a mean over each tile, no delay, no lag */
    buf.window_s = TILE_S;
    buf.period_s = TILE_S;
    memset(&cnt, 0, sizeof cnt);
    cnt.response = TW_RESP_COUNTER;
    cnt.period_s = 0.1;
    cnt.delay_s = 0.0136; /* the profile's: 2.6 ms off the simulated 11 ms */
    tw_line_init(&s->line, TW_LINE_TILES, &buf);
    tw_anchor_init(&s->anchor, &cnt, TILE_S);
    s->next_read = 0.05;
}

/* The counter's value at time t: the energy up to the last grid point published by t. */
static double counter_at(double t)
{
    double k = floor((t - PUBLISH_DELAY_S - GRID_PHASE_S) / 0.1);
    return 1000.0 + energy_to(GRID_PHASE_S + k * 0.1);
}

static double read_period = 0.4875; /* the session's: 4.875 of the counter's periods */

/* Runs the simulation to t_end: a buffer tile every 20 ms, a read every 0.4875 s. */
static void sim_run(sim *s, double t_end)
{
    while (s->t + TILE_S <= t_end) {
        double b = s->t + TILE_S;
        double e = energy_to(b);
        assert_int_equal(tw_line_push(&s->line, BUFFER_GAIN * (e - s->e_tile) / TILE_S, b), TW_OK);
        s->e_tile = e;
        s->t = b;
        if (b >= s->next_read) {
            assert_int_equal(tw_anchor_push(&s->anchor, counter_at(s->next_read), s->next_read), TW_OK);
            s->next_read += read_period;
        }
        tw_anchor_refit(&s->anchor, &s->line);
    }
}

/* Spans of 0.3 s over bursts and idle: within 3 sd of the exact energy, and
 * far closer than the buffer's 3 %. */
static void spans_match(void **state)
{
    (void)state;
    sim s;
    sim_init(&s);
    sim_run(&s, 4.0);
    assert_true(isfinite(s.anchor.phase_s));
    double ph = fmod(s.anchor.phase_s - GRID_PHASE_S + 1.0, 0.1);
    fprintf(stderr, "  phase %.4f s (grid %.4f), slope %.5f (1 / %.2f), rel_sd %.4g\n", s.anchor.phase_s, GRID_PHASE_S,
            s.anchor.slope, BUFFER_GAIN, s.anchor.rel_sd);
    assert_true(ph < 0.001 || ph > 0.099); /* the grid, to the phase step */
    assert_true(fabs(s.anchor.slope * BUFFER_GAIN - 1) < 1e-3);
    int n = 0;
    for (double a = 1.5; a + 0.3 < 3.5; a += 0.0731) {
        double b = a + 0.3, sd;
        double e = tw_anchor_energy_j(&s.anchor, &s.line, a, b, &sd), want = span_j(a, b);
        if (!(fabs(e - want) <= 3 * sd + 1e-9) || !(fabs(e - want) <= 0.2 * (BUFFER_GAIN - 1) * want))
            fail_msg("[%.4f, %.4f]: %.4f J +- %.4f, want %.4f J", a, b, e, sd, want);
        n++;
    }
    assert_true(n >= 20);
    tw_line_free(&s.line);
    tw_anchor_free(&s.anchor);
}

/* An hour-long session trimmed as the session trims it: the reads and knots
 * stay bounded, and a span at the end is still right. */
static void long_session_stays_bounded(void **state)
{
    (void)state;
    sim s;
    sim_init(&s);
    for (double t = 60; t <= 600; t += 60) {
        sim_run(&s, t);
        tw_anchor_trim(&s.anchor, t - 2.0);
        tw_line_trim(&s.line, fmin(t - 2.0, tw_anchor_needed_from(&s.anchor)));
    }
    size_t reads = s.anchor.n - s.anchor.off;
    fprintf(stderr, "  after 600 s: %zu reads, %zu knots kept\n", reads, s.anchor.nk);
    assert_true(reads <= 2 * 64 && s.anchor.nk <= 2 * 64);
    double sd, a = 596.0, b = 596.3;
    double e = tw_anchor_energy_j(&s.anchor, &s.line, a, b, &sd), want = span_j(a, b);
    assert_true(fabs(e - want) <= 3 * sd + 1e-9);
    tw_line_free(&s.line);
    tw_anchor_free(&s.anchor);
}

/* Before eight reads there is no fit: no knots, energies NaN (the session then
 * uses the buffer scaled by 1 with a 1 % uncertainty). */
static void no_fit_before_six_reads(void **state)
{
    (void)state;
    sim s;
    sim_init(&s);
    sim_run(&s, 2.0); /* reads at 0.05, 0.54, 1.03, 1.51: four */
    assert_true(isnan(s.anchor.phase_s));
    double sd, rel;
    assert_true(isnan(tw_anchor_energy_j(&s.anchor, &s.line, 0.6, 0.9, &sd)));
    assert_true(tw_anchor_scale(&s.anchor, &rel) == 1.0 && rel == 0.01);
    assert_false(tw_anchor_reaches(&s.anchor, &s.line, 0.9));
    tw_line_free(&s.line);
    tw_anchor_free(&s.anchor);
}

/* The fitted phase is the grid's, to the phase step. */
static void assert_on_grid(const sim *s)
{
    assert_true(isfinite(s->anchor.phase_s));
    double ph = fmod(s->anchor.phase_s - GRID_PHASE_S + 1.0, 0.1);
    fprintf(stderr, "  at %.2f s: phase %.4f s (grid %.4f)\n", s->t, s->anchor.phase_s, GRID_PHASE_S);
    assert_true(ph < 0.001 || ph > 0.099);
}

/* Reads that start where six of them leave the true grid only three clear
 * reads (49, 37, 24, 12, 99.5 and 87 ms past a grid point, 4.875 periods
 * apart): the first fit still finds the grid (it waits for eight reads,
 * which hold at least five clear ones under every phase). */
static void first_fit_on_the_grid(void **state)
{
    (void)state;
    sim s;
    sim_init(&s);
    s.next_read = GRID_PHASE_S + 0.0136 + 0.049 + 0.5; /* the model's delay, then 49 ms past the grid */
    while (isnan(s.anchor.phase_s) && s.t < 10.0)
        sim_run(&s, s.t + TILE_S);
    assert_on_grid(&s);
    tw_line_free(&s.line);
    tw_anchor_free(&s.anchor);
}

/* Reads at one phase of the grid, every 0.5 s (5 periods, as `truewatt run`
 * reads the counter), 92 ms past a grid point: under the true phase no read
 * is clear of the grid, and the fit still finds it (all reads at their
 * boundaries where a phase has too few clear ones). */
static void reads_at_one_phase_near_the_grid(void **state)
{
    (void)state;
    sim s;
    sim_init(&s);
    read_period = 0.5;
    s.next_read = GRID_PHASE_S + 0.0136 + 0.092 + 0.5;
    sim_run(&s, 8.0);
    read_period = 0.4875;
    assert_on_grid(&s);
    double sd, e = tw_anchor_energy_j(&s.anchor, &s.line, 5.0, 5.3, &sd), want = span_j(5.0, 5.3);
    assert_true(fabs(e - want) <= 3 * sd + 1e-9);
    tw_line_free(&s.line);
    tw_anchor_free(&s.anchor);
}

/* The refits' knots are made when first needed (a query, a trim): an
 * anchor asked after every row (each refit's knots made at once, as they
 * were before) and one asked only at the end, fed the same rows and trimmed
 * alike (a range open since 5 s, as a report's), hold the same knots, bit
 * for bit, the same scatter, and give the same energies. */
static void lockstep(double period, double first_read)
{
    sim now, later;
    sim_init(&now);
    sim_init(&later);
    read_period = period;
    now.next_read = later.next_read = first_read;
    size_t resets = 0, pending_max = 0, seen = 0;
    for (int step = 1; now.t < 120.0; step++) {
        double t = now.t + TILE_S;
        sim_run(&now, t);
        sim_run(&later, t);
        double rel;
        tw_anchor_scale(&now.anchor, &rel);      /* makes its knots */
        if (later.anchor.npend < seen) seen = 0; /* made */
        for (; seen < later.anchor.npend; seen++)
            resets += later.anchor.pend[seen].reset;
        if (later.anchor.npend > pending_max) pending_max = later.anchor.npend;
        if (step % 256 == 0) {
            tw_anchor_trim(&now.anchor, 5.0);
            tw_anchor_trim(&later.anchor, 5.0);
            tw_line_trim(&now.line, fmin(5.0, tw_anchor_needed_from(&now.anchor)));
            tw_line_trim(&later.line, fmin(5.0, tw_anchor_needed_from(&later.anchor)));
        }
    }
    read_period = 0.4875;
    fprintf(stderr, "  reads every %.4f s: %zu refits re-knotted every read, at most %zu refits pending\n", period,
            resets, pending_max);
    assert_true(pending_max > 1 && resets > 1);
    double sd_now, sd_later;
    int finite = 0;
    for (double a = 5.0; a < 119.0; a += 3.7) {
        double e_now = tw_anchor_energy_j(&now.anchor, &now.line, a, 119.0, &sd_now);
        double e_later = tw_anchor_energy_j(&later.anchor, &later.line, a, 119.0, &sd_later);
        finite += isfinite(e_now);
        bool same = (isnan(e_now) && isnan(e_later)) || (e_now == e_later && sd_now == sd_later);
        if (!same)
            fail_msg("[%.1f, 119]: %.17g +- %.17g made at once, %.17g +- %.17g made later", a, e_now, sd_now, e_later,
                     sd_later);
    }
    assert_true(finite >= 25);
    assert_int_equal(now.anchor.nk, later.anchor.nk);
    assert_true(now.anchor.nk > 100);
    assert_memory_equal(now.anchor.k, later.anchor.k, now.anchor.nk * sizeof *now.anchor.k);
    assert_true(now.anchor.rel_sd == later.anchor.rel_sd);
    tw_line_free(&now.line);
    tw_anchor_free(&now.anchor);
    tw_line_free(&later.line);
    tw_anchor_free(&later.anchor);
}

/* As a session reads the counter; as truewatt run does, near the grid (each
 * read's boundary then chosen by the last knot and the fit's slope); and at
 * a period that walks across the grid. */
static void knots_made_when_needed(void **state)
{
    (void)state;
    lockstep(0.4875, 0.05);
    lockstep(0.5, GRID_PHASE_S + 0.0136 + 0.092 + 0.5);
    lockstep(0.3013, 0.05);
}

int main(void)
{
    make_cum();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(spans_match),
        cmocka_unit_test(long_session_stays_bounded),
        cmocka_unit_test(no_fit_before_six_reads),
        cmocka_unit_test(first_fit_on_the_grid),
        cmocka_unit_test(reads_at_one_phase_near_the_grid),
        cmocka_unit_test(knots_made_when_needed),
    };
    return tw_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
