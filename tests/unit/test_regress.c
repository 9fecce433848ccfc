/* Unit tests of the regression of power per kernel name (src/attrib/regress.c):
 * two names, A (1 ms, +150 W) and B (3 ms, +300 W), launched 500 times each
 * at random times over 20 s above a 100 W idle level, seen through 25 ms
 * windows every 100 ms (a quarter of the time) and through tiling 20 ms
 * windows, with and without 1 W of reading noise. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tw_test.h"

#include "attrib/regress.h"
#include "core/rng.h"

static void assert_ok(tw_status st)
{
    if (st != TW_OK) fail_msg("%s: %s", tw_strerror(st), tw_last_error());
}

static void near(double got, double want, double tol, const char *what)
{
    if (!(fabs(got - want) <= tol)) fail_msg("%s: %.12g, expected %.12g (+- %g)", what, got, want, tol);
}

#define IDLE_W 100.0
#define NOISE_W 1.0

typedef struct launch {
    const char *name;
    double t0, t1, w;
} launch;

typedef struct trace {
    launch *l;
    size_t nl;
    tw_events *ev;
    tw_obs *o;
    size_t n;
} trace;

static void add_launch(trace *t, const char *name, double t0, double dur, double w)
{
    t->l = realloc(t->l, (t->nl + 1) * sizeof *t->l);
    t->l[t->nl++] = (launch){name, t0, t0 + dur, w};
    tw_event e = {.name = name,
                  .start_s = t0,
                  .end_s = t0 + dur,
                  .device = 0,
                  .stream = -1,
                  .true_energy_j = NAN,
                  .kind = "kernel"};
    assert_ok(tw_events_add(t->ev, &e));
}

static trace make_launches(tw_rng *rng, size_t per_name)
{
    trace t = {0};
    assert_ok(tw_events_new(&t.ev));
    for (size_t i = 0; i < per_name; i++) {
        add_launch(&t, "A", 0.5 + 20 * tw_rng_uniform(rng), 0.001, 150);
        add_launch(&t, "B", 0.5 + 20 * tw_rng_uniform(rng), 0.003, 300);
    }
    return t;
}

/* Windows of length `len` ending every `step` over [0, end]; the true mean
 * power plus gaussian noise of `noise` W. */
static void observe(trace *t, tw_rng *rng, double step, double len, double end, double noise)
{
    free(t->o);
    t->n = (size_t)floor((end - len) / step + 1e-9) + 1;
    t->o = calloc(t->n, sizeof *t->o);
    for (size_t k = 0; k < t->n; k++) {
        double t0 = step * (double)k, t1 = t0 + len, e = IDLE_W * len;
        for (size_t i = 0; i < t->nl; i++) {
            double lo = fmax(t0, t->l[i].t0), hi = fmin(t1, t->l[i].t1);
            if (hi > lo) e += t->l[i].w * (hi - lo);
        }
        t->o[k] = (tw_obs){t0, t1, e / len + noise * tw_rng_gauss(rng), 0};
    }
}

static void trace_free(trace *t)
{
    free(t->l);
    free(t->o);
    tw_events_free(t->ev);
}

/* Windows within [first start - margin, last end + margin]. */
static size_t count_within(const trace *t, double margin)
{
    double first = INFINITY, last = -INFINITY;
    for (size_t i = 0; i < t->nl; i++) {
        first = fmin(first, t->l[i].t0);
        last = fmax(last, t->l[i].t1);
    }
    size_t within = 0;
    for (size_t k = 0; k < t->n; k++)
        within += t->o[k].t0_s >= first - margin && t->o[k].t1_s <= last + margin;
    return within;
}

static const tw_regress_name *find(const tw_regress *r, const char *name)
{
    for (size_t i = 0; i < r->nnames; i++)
        if (strcmp(r->names[i].name, name) == 0) return &r->names[i];
    fail_msg("no name '%s'", name);
    return NULL;
}

/* Powers within 3 standard errors and 5 %, per launch and totals consistent. */
static void check_names(const tw_regress *r, const char *what)
{
    static const struct {
        const char *name;
        double w, dur;
    } truth[] = {{"A", 150, 0.001}, {"B", 300, 0.003}};
    assert_int_equal(r->nnames, 2);
    assert_string_equal(r->names[0].name, "B"); /* by energy: 500 x 0.9 J before 500 x 0.15 J */
    for (size_t i = 0; i < 2; i++) {
        const tw_regress_name *x = find(r, truth[i].name);
        char msg[128];
        snprintf(msg, sizeof msg, "%s: %s power (se %.3g W)", what, x->name, x->power_se_w);
        print_message("%s: %s %.2f +- %.2f W over %.0f windows\n", what, x->name, x->power_w, x->power_se_w,
                      x->windows);
        assert_true(x->power_se_w > 0);
        near(x->power_w, truth[i].w, 3 * x->power_se_w, msg);
        near(x->power_w, truth[i].w, 0.05 * truth[i].w, msg);
        assert_int_equal(x->launches, 500);
        near(x->mean_s, truth[i].dur, 1e-12, "mean duration");
        near(x->time_s, 500 * truth[i].dur, 1e-9, "time");
        near(x->per_launch_j, truth[i].w * truth[i].dur, 0.05 * truth[i].w * truth[i].dur, "per launch");
        near(x->per_launch_j, x->power_w * x->mean_s, 1e-12, "per launch = power x mean duration");
        near(x->per_launch_se_j, x->power_se_w * x->mean_s, 1e-12, "its error");
        near(x->energy_j, x->power_w * x->time_s, 1e-9, "energy");
        assert_true(x->windows > 0);
    }
}

static void test_partial_coverage(void **state)
{
    (void)state;
    tw_rng rng;
    tw_rng_seed(&rng, 1234, 1);
    trace t = make_launches(&rng, 500);
    tw_regress_options opt;
    tw_regress_options_init(&opt);
    tw_regress *r;

    /* without noise the model is exact */
    observe(&t, &rng, 0.1, 0.025, 22, 0);
    assert_ok(tw_regress_names(t.o, t.n, t.ev, &opt, &r));
    near(find(r, "A")->power_w, 150, 1e-6, "A exact");
    near(find(r, "B")->power_w, 300, 1e-6, "B exact");
    near(r->idle_w, IDLE_W, 1e-7, "idle exact");
    near(r->r2, 1, 1e-12, "R^2");
    assert_int_equal(r->nobs, count_within(&t, 1.0)); /* the windows within the span + 1 s */
    assert_true(r->nobs < t.n);
    tw_regress_free(r);

    observe(&t, &rng, 0.1, 0.025, 22, NOISE_W);
    assert_ok(tw_regress_names(t.o, t.n, t.ev, &opt, &r));
    check_names(r, "25 ms / 100 ms");
    near(r->idle_w, IDLE_W, 3 * r->idle_se_w, "idle fitted");
    near(r->rms_w, NOISE_W, 0.2 * NOISE_W, "residual rms");
    assert_true(r->r2 > 0.9 && r->r2 < 1);
    assert_string_equal(r->warnings, "");
    double se_a = find(r, "A")->power_se_w;
    tw_regress_free(r);

    /* the idle level given: no intercept, a smaller error */
    opt.idle_w = IDLE_W;
    assert_ok(tw_regress_names(t.o, t.n, t.ev, &opt, &r));
    check_names(r, "25 ms / 100 ms, idle given");
    assert_true(r->idle_w == IDLE_W && r->idle_se_w == 0);
    assert_true(find(r, "A")->power_se_w < se_a);
    tw_regress_free(r);
    trace_free(&t);
}

static void test_tiling(void **state)
{
    (void)state;
    tw_rng rng;
    tw_rng_seed(&rng, 99, 1);
    trace t = make_launches(&rng, 500);
    tw_regress *r;
    observe(&t, &rng, 0.02, 0.02, 22, NOISE_W);
    assert_ok(tw_regress_names(t.o, t.n, t.ev, NULL, &r));
    check_names(r, "20 ms tiling");
    near(r->idle_w, IDLE_W, 3 * r->idle_se_w, "idle fitted");
    tw_regress_free(r);

    /* a narrower margin drops the windows far from the kernels */
    tw_regress_options opt;
    tw_regress_options_init(&opt);
    opt.margin_s = 0.1;
    assert_ok(tw_regress_names(t.o, t.n, t.ev, &opt, &r));
    assert_int_equal(r->nobs, count_within(&t, 0.1));
    assert_true(r->nobs < t.n);
    tw_regress_free(r);
    trace_free(&t);
}

/* Over many traces the standard errors are honest: ~95 % of the estimates lie
 * within 1.96 of them. */
static void test_error_coverage(void **state)
{
    (void)state;
    tw_rng rng;
    tw_rng_seed(&rng, 2025, 1);
    const int reps = 200;
    int inside = 0, total = 0;
    for (int rep = 0; rep < reps; rep++) {
        trace t = make_launches(&rng, 100);
        observe(&t, &rng, 0.1, 0.025, 22, NOISE_W);
        tw_regress *r;
        assert_ok(tw_regress_names(t.o, t.n, t.ev, NULL, &r));
        const tw_regress_name *a = find(r, "A"), *b = find(r, "B");
        inside += fabs(a->power_w - 150) < 1.96 * a->power_se_w;
        inside += fabs(b->power_w - 300) < 1.96 * b->power_se_w;
        inside += fabs(r->idle_w - IDLE_W) < 1.96 * r->idle_se_w;
        total += 3;
        tw_regress_free(r);
        trace_free(&t);
    }
    double frac = (double)inside / total;
    print_message("%.1f %% within 1.96 standard errors\n", 100 * frac);
    assert_true(frac > 0.92 && frac < 0.98);
}

static void test_singular_and_too_few(void **state)
{
    (void)state;
    tw_rng rng;
    tw_rng_seed(&rng, 7, 1);
    trace t = {0};
    assert_ok(tw_events_new(&t.ev));
    for (int i = 0; i < 200; i++) {
        double s = 0.5 + 20 * tw_rng_uniform(&rng);
        add_launch(&t, "A", s, 0.002, 150);
        add_launch(&t, "B", s, 0.002, 300); /* always with A */
    }
    observe(&t, &rng, 0.02, 0.02, 22, NOISE_W);
    tw_regress dummy, *r = &dummy; /* set to NULL on failure */
    assert_int_equal(tw_regress_names(t.o, t.n, t.ev, NULL, &r), TW_ENUMERIC);
    assert_null(r);
    assert_non_null(strstr(tw_last_error(), "'A'"));
    assert_non_null(strstr(tw_last_error(), "'B'"));
    /* a kernel that runs the whole time cannot be told from the idle level */
    tw_event whole = {
        .name = "resident", .start_s = 0, .end_s = 30, .device = 0, .stream = -1, .true_energy_j = NAN, .kind = NULL};
    tw_events *ev2;
    assert_ok(tw_events_new(&ev2));
    assert_ok(tw_events_add(ev2, &whole));
    assert_int_equal(tw_regress_names(t.o, t.n, ev2, NULL, &r), TW_ENUMERIC);
    assert_non_null(strstr(tw_last_error(), "'resident'"));
    assert_non_null(strstr(tw_last_error(), "idle"));
    tw_events_free(ev2);

    /* three windows for three unknowns */
    assert_int_equal(tw_regress_names(t.o + 100, 3, t.ev, NULL, &r), TW_EINVAL);
    assert_non_null(strstr(tw_last_error(), "3 usable observations"));
    /* no kernels at all */
    tw_events *none;
    assert_ok(tw_events_new(&none));
    tw_event range = {
        .name = "step", .start_s = 1, .end_s = 2, .device = -1, .stream = -1, .true_energy_j = NAN, .kind = "nvtx"};
    assert_ok(tw_events_add(none, &range));
    assert_int_equal(tw_regress_names(t.o, t.n, none, NULL, &r), TW_EEMPTY);
    tw_events_free(none);
    trace_free(&t);
}

static void test_pooling_and_unseen(void **state)
{
    (void)state;
    tw_rng rng;
    tw_rng_seed(&rng, 11, 1);
    trace t = make_launches(&rng, 500);
    for (int i = 0; i < 200; i++) {
        add_launch(&t, "C", 0.5 + 20 * tw_rng_uniform(&rng), 0.0005, 200);
        add_launch(&t, "D", 0.5 + 20 * tw_rng_uniform(&rng), 0.0007, 200);
    }
    /* one launch in a gap of the 25 ms / 100 ms windows: never seen */
    add_launch(&t, "E", 10.03, 0.01, 500);
    tw_event copy = {.name = "h2d",
                     .start_s = 3.0,
                     .end_s = 3.5,
                     .device = 0,
                     .stream = 1,
                     .true_energy_j = NAN,
                     .kind = "memcpy"}; /* not a kernel, nor in the truth: ignored */
    assert_ok(tw_events_add(t.ev, &copy));
    observe(&t, &rng, 0.1, 0.025, 22, 0);

    tw_regress_options opt;
    tw_regress_options_init(&opt);
    opt.max_names = 3; /* B, A, D by time; C and E pooled */
    tw_regress *r;
    assert_ok(tw_regress_names(t.o, t.n, t.ev, &opt, &r));
    assert_int_equal(r->nnames, 4);
    const tw_regress_name *other = find(r, "(other kernels)");
    assert_int_equal(other->launches, 201);
    near(other->time_s, 200 * 0.0005 + 0.01, 1e-9, "pooled time");
    near(other->power_w, 200, 1e-6, "pooled power (E unseen)");
    near(find(r, "D")->power_w, 200, 1e-6, "D");
    near(find(r, "A")->power_w, 150, 1e-6, "A");
    assert_non_null(strstr(r->warnings, "pooled"));
    tw_regress_free(r);

    opt.max_names = 0; /* 64: every name its own */
    assert_ok(tw_regress_names(t.o, t.n, t.ev, &opt, &r));
    assert_int_equal(r->nnames, 5);
    const tw_regress_name *e = find(r, "E");
    assert_true(isnan(e->power_w) && isnan(e->energy_j) && e->windows == 0);
    assert_string_equal(r->names[4].name, "E"); /* unknown energies last */
    assert_non_null(strstr(r->warnings, "'E'"));
    near(find(r, "C")->power_w, 200, 1e-6, "C");
    near(find(r, "B")->power_w, 300, 1e-6, "B");
    tw_regress_free(r);
    trace_free(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_partial_coverage),   cmocka_unit_test(test_tiling),
        cmocka_unit_test(test_error_coverage),     cmocka_unit_test(test_singular_and_too_few),
        cmocka_unit_test(test_pooling_and_unseen),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
