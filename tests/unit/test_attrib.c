/* Unit tests of the energy attribution (src/attrib/kernels.c) on synthetic
 * intervals: the idle level, concurrent kernels sharing an interval, copies
 * and NVTX ranges, the sums; then from small trace files: the choice of the
 * source (buffer, counter, fallback), a sensor profile's model of a reading
 * (its observations as the intervals, or the fallback with a warning) and
 * the whole-run methods. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tw_test.h"

#include "attrib/kernels.h"

static void assert_ok(tw_status st)
{
    if (st != TW_OK) fail_msg("%s: %s", tw_strerror(st), tw_last_error());
}

static void near(double got, double want, double tol, const char *what)
{
    if (!(fabs(got - want) <= tol)) fail_msg("%s: %.9g, expected %.9g (+- %g)", what, got, want, tol);
}

/* Power as a function of time: piecewise constant levels. */
typedef struct level {
    double t0, t1, w;
} level;

static double energy_of(const level *lv, size_t n, double a, double b)
{
    double e = 0;
    for (size_t i = 0; i < n; i++) {
        double lo = fmax(a, lv[i].t0), hi = fmin(b, lv[i].t1);
        if (hi > lo) e += lv[i].w * (hi - lo);
    }
    return e;
}

/* Intervals of width dt over [0, end]. */
static tw_attrib_interval *intervals(const level *lv, size_t nlv, double end, double dt, size_t *n)
{
    *n = (size_t)llround(end / dt);
    tw_attrib_interval *iv = calloc(*n, sizeof *iv);
    for (size_t k = 0; k < *n; k++) {
        double a = k * dt, b = (k + 1) * dt;
        iv[k] = (tw_attrib_interval){a, b, energy_of(lv, nlv, a, b)};
    }
    return iv;
}

static void add(tw_events *ev, const char *name, double s, double e, int dev, long stream, const char *kind)
{
    tw_event x = {
        .name = name, .start_s = s, .end_s = e, .device = dev, .stream = stream, .true_energy_j = NAN, .kind = kind};
    assert_ok(tw_events_add(ev, &x));
}

static const tw_attrib_name *find_name(const tw_attrib_name *k, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(k[i].name, name) == 0) return &k[i];
    fail_msg("no entry '%s'", name);
    return NULL;
}

static void check_sums(const tw_attrib *a, double total)
{
    near(a->idle_j + a->kernels_j + a->copies_j + a->other_j, a->sum_j, 1e-9, "idle + kernels + copies + other");
    near(a->sum_j, total, 1e-9, "sum of the intervals");
    near(a->idle_j, a->idle_w * a->run_s, 1e-9, "idle = P_idle x T");
}

/* ---------------------------------------------------------------- on intervals */

static void test_one_kernel(void **state)
{
    (void)state;
    level lv[] = {{0, 0.3, 120}, {0.3, 0.5, 400}, {0.5, 1.0, 120}};
    size_t n;
    tw_attrib_interval *iv = intervals(lv, 3, 1.0, 0.01, &n);
    tw_events *ev;
    assert_ok(tw_events_new(&ev));
    add(ev, "gemm", 0.3, 0.5, 0, 7, "kernel");
    tw_attrib *a;
    assert_ok(tw_attrib_intervals(iv, n, ev, NULL, &a));
    near(a->idle_w, 120, 1e-9, "idle");
    assert_int_equal(a->nkernels, 1);
    near(a->kernels[0].energy_j, 280 * 0.2, 1e-9, "gemm dynamic energy");
    near(a->kernels[0].time_s, 0.2, 1e-12, "gemm time");
    near(a->kernels[0].power_w, 280, 1e-9, "gemm dynamic power");
    near(a->kernels[0].share, 1.0, 1e-12, "gemm share");
    near(a->other_j, 0, 1e-9, "other");
    near(a->run_s, 1.0, 1e-9, "run time");
    check_sums(a, energy_of(lv, 3, 0, 1));
    near(a->event_energy_j[0], 56, 1e-9, "per-event energy");
    tw_attrib_free(a);
    tw_events_free(ev);
    free(iv);
}

/* Two kernels overlapping on two streams share the intervals they share, by
 * time; a kernel covering part of an interval gets all of its excess. */
static void test_concurrency_split(void **state)
{
    (void)state;
    level lv[] = {{0, 0.3, 120}, {0.3, 0.6, 400}, {0.6, 0.75, 120}, {0.75, 0.8, 400}, {0.8, 1.0, 120}};
    size_t n;
    tw_attrib_interval *iv = intervals(lv, 5, 1.0, 0.1, &n);
    tw_events *ev;
    assert_ok(tw_events_new(&ev));
    add(ev, "A", 0.3, 0.5, 0, 1, "kernel");
    add(ev, "B", 0.4, 0.6, 0, 2, "kernel");
    add(ev, "C", 0.75, 0.8, 0, 1, "kernel");
    tw_attrib *a;
    assert_ok(tw_attrib_intervals(iv, n, ev, NULL, &a));
    near(a->idle_w, 120, 1e-9, "idle");
    /* [0.3,0.4] A alone 28 J; [0.4,0.5] A and B 14 J each; [0.5,0.6] B alone 28 J */
    near(find_name(a->kernels, a->nkernels, "A")->energy_j, 42, 1e-9, "A");
    near(find_name(a->kernels, a->nkernels, "B")->energy_j, 42, 1e-9, "B");
    /* [0.7,0.8] holds 0.05 s at 400 W: 14 J above idle, C's alone */
    near(find_name(a->kernels, a->nkernels, "C")->energy_j, 14, 1e-9, "C");
    near(a->kernels_j, 98, 1e-9, "kernels");
    near(find_name(a->kernels, a->nkernels, "A")->share, 42.0 / 98, 1e-12, "A share");
    /* sorted by energy, ties by name */
    assert_string_equal(a->kernels[0].name, "A");
    assert_string_equal(a->kernels[2].name, "C");
    check_sums(a, energy_of(lv, 5, 0, 1));
    tw_attrib_free(a);
    tw_events_free(ev);
    free(iv);
}

/* Unequal overlap: 3/4 of the busy time is X's, so 3/4 of the excess. */
static void test_unequal_share(void **state)
{
    (void)state;
    tw_attrib_interval iv[] = {{0, 1, 100}, {1, 2, 100}, {2, 3, 500}, {3, 4, 100}};
    tw_events *ev;
    assert_ok(tw_events_new(&ev));
    add(ev, "X", 2.0, 3.0, 0, 1, NULL); /* no kind: a kernel */
    add(ev, "Y", 2.5, 2.8, 0, 2, "kernel");
    add(ev, "X", 3.5, 3.5, 0, 1, "kernel"); /* zero length: a launch, no time, no energy */
    tw_attrib *a;
    assert_ok(tw_attrib_intervals(iv, 4, ev, NULL, &a));
    near(a->idle_w, 100, 1e-9, "idle");
    const tw_attrib_name *x = find_name(a->kernels, a->nkernels, "X");
    assert_int_equal(x->launches, 2);
    near(x->energy_j, 400 * 1.0 / 1.3, 1e-9, "X");
    near(find_name(a->kernels, a->nkernels, "Y")->energy_j, 400 * 0.3 / 1.3, 1e-9, "Y");
    check_sums(a, 800);
    tw_attrib_free(a);
    tw_events_free(ev);
}

/* The idle level comes from after the first kernel (context alive, 120 W),
 * not from before it (no context, 75 W); power above idle without a kernel
 * is "other", below it counts negative. */
static void test_idle_level_and_other(void **state)
{
    (void)state;
    level lv[] = {{0, 1, 75}, {1, 2, 120}, {2, 2.5, 300}, {2.5, 3.5, 120}, {3.5, 3.7, 150}, {3.7, 5, 120}};
    size_t n;
    tw_attrib_interval *iv = intervals(lv, 6, 5.0, 0.02, &n);
    tw_events *ev;
    assert_ok(tw_events_new(&ev));
    add(ev, "k", 2.0, 2.5, 0, 1, "kernel");
    tw_attrib *a;
    assert_ok(tw_attrib_intervals(iv, n, ev, NULL, &a));
    near(a->idle_w, 120, 1e-9, "idle after the first kernel");
    assert_non_null(strstr(a->idle_basis, "after the first kernel"));
    near(a->kernels_j, 180 * 0.5, 1e-9, "k");
    near(a->other_j, 30 * 0.2 - 45 * 1.0, 1e-9, "other: 3.5..3.7 above idle, 0..1 below it");
    check_sums(a, energy_of(lv, 6, 0, 5));
    tw_attrib_free(a);
    tw_events_free(ev);

    /* without kernels: the median of all intervals */
    assert_ok(tw_events_new(&ev));
    assert_ok(tw_attrib_intervals(iv, n, ev, NULL, &a));
    near(a->idle_w, 120, 1e-9, "idle without kernels");
    assert_int_equal(a->nkernels, 0);
    tw_attrib_free(a);
    tw_events_free(ev);
    /* a kernel until the end: idle from the intervals before it */
    assert_ok(tw_events_new(&ev));
    add(ev, "long", 1.0, 5.0, 0, 1, "kernel");
    assert_ok(tw_attrib_intervals(iv, n, ev, NULL, &a));
    near(a->idle_w, 75, 1e-9, "idle before the only kernel");
    assert_non_null(strstr(a->idle_basis, "before the first kernel"));
    check_sums(a, energy_of(lv, 6, 0, 5));
    tw_attrib_free(a);
    tw_events_free(ev);
    free(iv);
}

static void test_copies_ranges_devices(void **state)
{
    (void)state;
    level lv[] = {{0, 1, 100}, {1, 2, 200}, {2, 3, 150}, {3, 4, 100}};
    size_t n;
    tw_attrib_interval *iv = intervals(lv, 4, 4.0, 0.5, &n);
    tw_events *ev;
    assert_ok(tw_events_new(&ev));
    add(ev, "k", 1.0, 2.0, 0, 1, "kernel");
    add(ev, "memcpy HtoD", 2.0, 3.0, 0, 3, "memcpy");
    add(ev, "other-gpu", 0.0, 4.0, 1, 1, "kernel"); /* device 1: not ours */
    add(ev, "step", 0.5, 3.0, -1, -1, "nvtx");
    add(ev, "inner", 1.0, 1.5, -1, -1, "nvtx");
    add(ev, "sync", 3.0, 3.5, 0, 1, "synchronization"); /* unknown kind: ignored */
    tw_attrib_options o;
    tw_attrib_options_init(&o);
    o.device = 0;
    tw_attrib *a;
    assert_ok(tw_attrib_intervals(iv, n, ev, &o, &a));
    near(a->idle_w, 100, 1e-9, "idle");
    assert_int_equal(a->nkernels, 1);
    assert_int_equal(a->ncopies, 1);
    assert_string_equal(a->copies[0].kind, "memcpy");
    near(a->kernels_j, 100, 1e-9, "kernel");
    near(a->copies_j, 50, 1e-9, "memcpy");
    near(a->copies[0].share, 50.0 / 150, 1e-12, "memcpy share of the dynamic energy");
    assert_int_equal(a->nranges, 2);
    near(a->ranges[0].energy_j, 50 + 200 + 150, 1e-9, "range step: all energy it spans");
    near(a->ranges[0].above_idle_j, 150, 1e-9, "range step above idle");
    near(a->ranges[1].energy_j, 100, 1e-9, "nested range inner");
    assert_true(isnan(a->event_energy_j[2])); /* another device's kernel */
    assert_true(isnan(a->event_energy_j[3])); /* a range */
    check_sums(a, energy_of(lv, 4, 0, 4));
    tw_attrib_free(a);
    tw_events_free(ev);
    free(iv);
}

static void test_rejects(void **state)
{
    (void)state;
    tw_attrib *a = NULL;
    assert_int_equal(tw_attrib_intervals(NULL, 0, NULL, NULL, &a), TW_EEMPTY);
    tw_attrib_interval bad[] = {{0, 1, 1}, {0.5, 2, 1}};
    assert_int_equal(tw_attrib_intervals(bad, 2, NULL, NULL, &a), TW_EORDER);
    assert_null(a);
}

/* The kind column of events files (src/trace/events.c) round-trips. */
static void test_event_kind_round_trip(void **state)
{
    (void)state;
    tw_events *ev, *back;
    assert_ok(tw_events_new(&ev));
    add(ev, "gemm", 0.1, 0.2, 0, 7, "kernel");
    add(ev, "copy", 0.2, 0.3, 0, 8, "memcpy");
    add(ev, "plain", 0.3, 0.4, -1, -1, NULL);
    const char *path = tw_test_path(0, "kinds.csv");
    assert_ok(tw_events_save(ev, path));
    char *text = tw_test_slurp(path);
    assert_non_null(strstr(text, "name,start_s,end_s,device,stream,true_energy_j,kind\n"));
    free(text);
    assert_ok(tw_events_load(path, &back));
    assert_int_equal(tw_events_count(back), 3);
    assert_string_equal(tw_events_get(back, 0)->kind, "kernel");
    assert_string_equal(tw_events_get(back, 1)->kind, "memcpy");
    assert_null(tw_events_get(back, 2)->kind);
    tw_events_free(back);
    tw_events_free(ev);
    /* the injection library's columns: extra ones are ignored */
    const char *inj = tw_test_file(1, "name,start_s,end_s,device,stream,kind,grid_x,correlation_id\n"
                                      "k1,1.0,1.5,0,13,kernel,132,5\nm,2,2.1,0,13,memset,,6\n");
    assert_ok(tw_events_load(inj, &back));
    assert_string_equal(tw_events_get(back, 1)->kind, "memset");
    assert_int_equal(tw_events_get(back, 0)->stream, 13);
    tw_events_free(back);
}

/* ---------------------------------------------------------------- from a trace */

/* A sampler-like trace: fast rows every 1 ms with a buffer sample every 20 ms
 * (mean power of its interval) and power_usage_w / power_instant_w, slow rows
 * every 100 ms with the energy counter; power 120 W, 400 W in 1.0..1.6 s. */
static double truth_w(double t) { return t >= 1.0 && t < 1.6 ? 400.0 : 120.0; }

static double truth_j(double a, double b)
{
    level lv[] = {{-10, 1.0, 120}, {1.0, 1.6, 400}, {1.6, 100, 120}};
    return energy_of(lv, 3, a, b);
}

static const char *write_trace(int slot, bool buffer, bool counter)
{
    const char *path = tw_test_path(slot, "trace.csv");
    FILE *f = fopen(path, "w");
    fprintf(f, "# test\nt_s,power_usage_w,power_usage_w_t_s,power_instant_w,power_instant_w_t_s,"
               "power_buffer_w,power_buffer_w_t_s,energy_j,energy_j_t_s\n");
    double energy0 = 5000;
    for (int i = 0; i <= 3000; i++) {
        double t = i * 1e-3;
        int upd = (i / 100) * 100; /* held readings publish every 100 ms */
        double tu = upd * 1e-3;
        fprintf(f, "%.6f,%.3f,%.6f,%.3f,%.6f,", t, truth_j(tu - 1.0, tu), t, truth_w(tu - 0.001), tu);
        if (buffer && i > 0 && i % 20 == 0)
            fprintf(f, "%.6f,%.6f,", truth_j(t - 0.02, t) / 0.02, t);
        else
            fprintf(f, ",,");
        fprintf(f, ",\n");
        if (counter && i % 100 == 50) /* a slow row: the counter as of the last update */
            fprintf(f, "%.6f,,,,,,,%.6f,%.6f\n", t, energy0 + truth_j(0, tu), t);
    }
    fclose(f);
    return path;
}

static void test_run_buffer(void **state)
{
    (void)state;
    const char *path = write_trace(2, true, true);
    tw_events *ev;
    assert_ok(tw_events_new(&ev));
    add(ev, "gemm", 1.0, 1.6, 0, 7, "kernel");
    tw_attrib *a;
    assert_ok(tw_attrib_run(path, ev, NULL, &a));
    assert_int_equal(a->source, TW_ATTRIB_BUFFER);
    assert_string_equal(a->source_column, "power_buffer_w");
    assert_string_equal(a->warnings, "");
    near(a->start_s, 0.02, 1e-9, "start: the first buffer sample's interval is unknown");
    near(a->end_s, 3.0, 1e-9, "end");
    near(a->kernels[0].energy_j, 280 * 0.6, 1e-6, "gemm");
    near(a->buffer_j, truth_j(0.02, 3.0), 1e-6, "buffer integral");
    /* the counter is polled at 0.05, 0.15, ...: each change is placed midway
     * between the polls around it, at the update instant here */
    near(a->counter_j, truth_j(0.02, 3.0), 0.01 * truth_j(0.02, 3.0), "counter");
    near(a->check_pct, 100 * (a->sum_j / a->counter_j - 1), 1e-9, "check");
    assert_true(fabs(a->check_pct) < 2);
    near(a->trap_usage_j, truth_j(0.02, 3.0), 0.05 * truth_j(0.02, 3.0), "trapezoid of the 1 s average");
    assert_true(isfinite(a->trap_instant_j));
    assert_true(isfinite(a->mtsm_j));
    assert_true(isfinite(a->rc_k20_j));
    tw_attrib_free(a);
    tw_events_free(ev);
}

static void test_run_counter_and_fallback(void **state)
{
    (void)state;
    tw_events *ev;
    assert_ok(tw_events_new(&ev));
    add(ev, "gemm", 1.0, 1.6, 0, 7, "kernel");
    tw_attrib *a;
    assert_ok(tw_attrib_run(write_trace(3, false, true), ev, NULL, &a));
    assert_int_equal(a->source, TW_ATTRIB_COUNTER);
    assert_non_null(strstr(a->warnings, "no sample buffer"));
    assert_true(isnan(a->buffer_j));
    near(a->kernels[0].energy_j, 168, 0.1 * 168, "gemm from the counter's 100 ms steps");
    near(a->check_pct, 0, 1e-6, "the counter checks itself");
    tw_attrib_free(a);

    assert_ok(tw_attrib_run(write_trace(4, false, false), ev, NULL, &a));
    assert_int_equal(a->source, TW_ATTRIB_TRAPEZOID);
    assert_string_equal(a->source_column, "power_instant_w");
    assert_non_null(strstr(a->warnings, "trapezoid"));
    assert_true(isnan(a->counter_j));
    assert_true(isnan(a->check_pct));
    tw_attrib_free(a);
    tw_events_free(ev);

    const char *none = tw_test_file(5, "t_s,temperature_c\n0,30\n1,31\n");
    assert_int_equal(tw_attrib_run(none, NULL, NULL, &a), TW_EEMPTY);
    assert_non_null(strstr(tw_last_error(), "coverage"));
}

/* A sensor profile's model of one reading. */
static tw_reading_model model_of(const char *name, tw_response r, double period_s, double window_s, double delay_s)
{
    tw_reading_model m;
    tw_reading_model_init(&m, name);
    m.response = r;
    m.period_s = period_s;
    m.window_s = window_s;
    m.delay_s = delay_s;
    m.coverage = fmin(1.0, window_s / period_s);
    return m;
}

static void test_run_model_counter(void **state)
{
    (void)state;
    tw_events *ev;
    assert_ok(tw_events_new(&ev));
    add(ev, "gemm", 1.0, 1.6, 0, 7, "kernel");
    /* the counter updates at 0.1, 0.2, ... and is polled 50 ms later: with
     * that delay, its differences are the exact energy of (0.0, 0.1], ... */
    tw_reading_model m = model_of("energy_j", TW_RESP_COUNTER, 0.1, 0.1, 0.05);
    tw_attrib_options o;
    tw_attrib_options_init(&o);
    assert_null(o.model);
    o.model = &m;
    tw_attrib *a;
    assert_ok(tw_attrib_run(write_trace(2, true, true), ev, &o, &a));
    assert_int_equal(a->source, TW_ATTRIB_MODEL);
    assert_string_equal(tw_attrib_source_name(a->source), "profile model");
    assert_string_equal(a->source_column, "energy_j");
    assert_string_equal(a->warnings, "");
    assert_int_equal(a->nintervals, 29);
    near(a->start_s, 0.0, 1e-9, "the first counter difference starts at its first update less the delay");
    near(a->end_s, 2.9, 1e-9, "end");
    near(a->idle_w, 120, 1e-3, "idle");
    near(a->kernels[0].energy_j, 280 * 0.6, 1e-3, "gemm, exact from the counter with its delay");
    near(a->sum_j, truth_j(0.0, 2.9), 1e-3, "the intervals tile the time");
    near(a->buffer_j, truth_j(0.02, 2.9), 1e-6, "buffer integral over the same span");
    assert_true(fabs(a->check_pct) < 0.1);
    tw_attrib_free(a);

    /* the same trace without a model: the buffer, as before */
    o.model = NULL;
    assert_ok(tw_attrib_run(write_trace(2, true, true), ev, &o, &a));
    assert_int_equal(a->source, TW_ATTRIB_BUFFER);
    tw_attrib_free(a);
    tw_events_free(ev);
}

static void test_run_model_deconvolved_and_fallback(void **state)
{
    (void)state;
    tw_events *ev;
    assert_ok(tw_events_new(&ev));
    add(ev, "gemm", 1.0, 1.6, 0, 7, "kernel");
    const char *path = write_trace(3, true, true);
    tw_attrib_options o;
    tw_attrib_options_init(&o);
    tw_attrib *a;

    /* a 1 s boxcar published every 100 ms: deconvolved into 100 ms tiles */
    tw_reading_model box = model_of("power_usage_w", TW_RESP_BOXCAR, 0.1, 1.0, 0.0);
    o.model = &box;
    assert_ok(tw_attrib_run(path, ev, &o, &a));
    assert_int_equal(a->source, TW_ATTRIB_MODEL);
    assert_string_equal(a->source_column, "power_usage_w");
    near(a->kernels[0].energy_j, 168, 0.03 * 168, "gemm from the deconvolved boxcar");
    tw_attrib_free(a);

    /* a window reading (1 ms of every 100 ms) does not tile: the buffer instead, said so */
    tw_reading_model win = model_of("power_instant_w", TW_RESP_WINDOW, 0.1, 0.001, 0.0);
    o.model = &win;
    assert_ok(tw_attrib_run(path, ev, &o, &a));
    assert_int_equal(a->source, TW_ATTRIB_BUFFER);
    assert_string_equal(a->source_column, "power_buffer_w");
    assert_non_null(strstr(a->warnings, "power_instant_w is not used"));
    assert_non_null(strstr(a->warnings, "window reading"));
    near(a->kernels[0].energy_j, 168, 1e-6, "gemm from the buffer");
    tw_attrib_free(a);

    /* a boxcar between one and two periods: overlapping windows, not deconvolved */
    tw_reading_model mid = model_of("power_usage_w", TW_RESP_BOXCAR, 0.1, 0.15, 0.0);
    o.model = &mid;
    assert_ok(tw_attrib_run(path, ev, &o, &a));
    assert_int_equal(a->source, TW_ATTRIB_BUFFER);
    assert_non_null(strstr(a->warnings, "overlap"));
    tw_attrib_free(a);

    /* a reading the trace lacks, with a column prefix */
    tw_reading_model gone = model_of("energy_j", TW_RESP_COUNTER, 0.1, 0.1, 0.0);
    o.model = &gone;
    o.prefix = "gpu1_";
    assert_int_equal(tw_attrib_run(path, ev, &o, &a), TW_EEMPTY); /* no gpu1_ columns at all */
    o.prefix = "";
    snprintf(gone.name, sizeof gone.name, "energy_total_j");
    assert_ok(tw_attrib_run(path, ev, &o, &a));
    assert_int_equal(a->source, TW_ATTRIB_BUFFER);
    assert_non_null(strstr(a->warnings, "the trace has no column energy_total_j"));
    tw_attrib_free(a);

    /* an rc model without a capacitance cannot observe: the buffer, said so */
    tw_reading_model rc = model_of("power_usage_w", TW_RESP_RC, 0.1, NAN, 0.0);
    o.model = &rc;
    assert_ok(tw_attrib_run(path, ev, &o, &a));
    assert_int_equal(a->source, TW_ATTRIB_BUFFER);
    assert_non_null(strstr(a->warnings, "capacitance"));
    tw_attrib_free(a);
    tw_events_free(ev);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_kernel),
        cmocka_unit_test(test_concurrency_split),
        cmocka_unit_test(test_unequal_share),
        cmocka_unit_test(test_idle_level_and_other),
        cmocka_unit_test(test_copies_ranges_devices),
        cmocka_unit_test(test_rejects),
        cmocka_unit_test(test_event_kind_round_trip),
        cmocka_unit_test(test_run_buffer),
        cmocka_unit_test(test_run_counter_and_fallback),
        cmocka_unit_test(test_run_model_counter),
        cmocka_unit_test(test_run_model_deconvolved_and_fallback),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
