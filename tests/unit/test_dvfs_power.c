/* Unit tests of the DVFS power side (src/dvfs/power.c, power_model.c,
 * energy.c): the Power CSV loader's edge cases and its join to the
 * Performance rows, the power fit on synthesised data, the argmin on a
 * hand-made table, and the numbers docs/dvfs.md reports on the authors' data
 * when shared/ has it. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tw_test.h"

#include "dvfs/data.h"
#include "dvfs/energy.h"
#include "dvfs/model.h"
#include "dvfs/power.h"
#include "dvfs/power_model.h"

#define HEADER "appName,coreF,memF,argNo,kernel,power/W\n"

/* cmocka before 1.1.6 has no assert_double_equal */
#define assert_near(a, b, tol)                                                                                         \
    do {                                                                                                               \
        if (!(fabs((a) - (b)) <= (tol))) fail_msg("%s = %.10g, expected %.10g", #a, (double)(a), (double)(b));         \
    } while (0)

#define assert_error_has(text)                                                                                         \
    do {                                                                                                               \
        if (!strstr(tw_last_error(), text)) fail_msg("error '%s' lacks '%s'", tw_last_error(), text);                  \
    } while (0)

static tw_status load_text(const char *text, tw_dvfs_power_data *d)
{
    return tw_dvfs_power_load(tw_test_file(0, text), d);
}

/* ---------------------------------------------------------------- loader */

static void test_load(void **state)
{
    (void)state;
    tw_dvfs_power_data d;
    /* columns by name, a repeated header skipped, line numbers kept */
    assert_int_equal(load_text("kernel,power/W,memF,coreF,appName\nk,52.5,1000,900,A\n"
                               "kernel,power/W,memF,coreF,appName\nk,40,500,900,A\n",
                               &d),
                     TW_OK);
    assert_int_equal(d.n, 2);
    assert_string_equal(d.rows[1].app, "A");
    assert_true(d.rows[0].core_mhz == 900 && d.rows[0].mem_mhz == 1000 && d.rows[0].power_w == 52.5);
    assert_int_equal(d.rows[1].line, 4);
    tw_dvfs_power_free(&d);
}

static void test_load_errors(void **state)
{
    (void)state;
    tw_dvfs_power_data d;
    assert_int_equal(load_text("appName,coreF,memF,kernel\nA,1,2,k\n", &d), TW_ENOTFOUND);
    assert_error_has(":1: the header lacks the column(s) power/W");
    assert_null(d.rows);
    assert_int_equal(load_text(HEADER "A,1000,500,input00,k,50\nA,900,500,input00,k,4x0\n", &d), TW_EPARSE);
    assert_error_has(":3: power/W is '4x0', not a finite number");
    assert_null(d.rows);
    assert_int_equal(load_text(HEADER "A,1000,500,input00,k,0\n", &d), TW_EPARSE);
    assert_error_has(":2: power/W must be positive");
    assert_int_equal(load_text(HEADER "A,1000,500,input00\n", &d), TW_EPARSE);
    assert_error_has(":2: 4 fields, the header has 6");
    assert_int_equal(load_text(HEADER "A,1000,500,input00,k,50\nB,1000,500,input00,k,50\nA,1000,500,x,k,51\n", &d),
                     TW_EPARSE);
    assert_error_has(":4: a second row for A at 1000/500 MHz (the first is line 2)");
    assert_int_equal(load_text(HEADER, &d), TW_EEMPTY);
}

/* ---------------------------------------------------------------- join */

static tw_dvfs_row perf_row(const char *app, double core_mhz, double mem_mhz, unsigned long line)
{
    tw_dvfs_row r = {.core_mhz = core_mhz, .mem_mhz = mem_mhz, .line = line};
    snprintf(r.app, sizeof r.app, "%s", app);
    return r;
}

static void test_join(void **state)
{
    (void)state;
    tw_dvfs_row rows[3] = {perf_row("A", 1000, 500, 2), perf_row("B", 1000, 500, 3), perf_row("A", 900, 500, 4)};
    tw_dvfs_data perf = {rows, 3};
    tw_dvfs_power_data pw;
    double power_w[3];
    /* in another order: joined by key, not by position */
    assert_int_equal(load_text(HEADER "A,900,500,i,k,40\nA,1000,500,i,k,50\nB,1000,500,i,k,60\n", &pw), TW_OK);
    assert_int_equal(tw_dvfs_power_join(&perf, "perf.csv", &pw, "power.csv", power_w), TW_OK);
    assert_true(power_w[0] == 50 && power_w[1] == 60 && power_w[2] == 40);
    tw_dvfs_power_free(&pw);
    /* a performance row without power: named and counted, not dropped */
    assert_int_equal(load_text(HEADER "A,900,500,i,k,40\nA,1000,500,i,k,50\n", &pw), TW_OK);
    assert_int_equal(tw_dvfs_power_join(&perf, "perf.csv", &pw, "power.csv", power_w), TW_EPARSE);
    assert_error_has("perf.csv:3: no row of power.csv for B at 1000/500 MHz (1 performance row(s) unmatched)");
    tw_dvfs_power_free(&pw);
    /* power rows without a performance row */
    assert_int_equal(
        load_text(HEADER "A,900,500,i,k,40\nA,1000,500,i,k,50\nB,1000,500,i,k,60\nC,1,1,i,k,1\nC,2,2,i,k,1\n", &pw),
        TW_OK);
    assert_int_equal(tw_dvfs_power_join(&perf, "perf.csv", &pw, "power.csv", power_w), TW_EPARSE);
    assert_error_has("power.csv:5: no row of perf.csv for C at 1/1 MHz (2 power row(s) unmatched)");
    /* a performance key twice */
    rows[2] = perf_row("A", 1000, 500, 4);
    assert_int_equal(tw_dvfs_power_join(&perf, "perf.csv", &pw, "power.csv", power_w), TW_EPARSE);
    assert_error_has("perf.csv:4: a second row for A at 1000/500 MHz (the first is line 2)");
    tw_dvfs_power_free(&pw);
}

/* ---------------------------------------------------------------- the power fit */

#define REF_CORE 1000.0
#define REF_MEM 800.0

static double core_term(double core_mhz)
{
    double f = core_mhz / REF_CORE, v = tw_dvfs_voltage_norm(f);
    return v * v * f;
}

/* Power of synthetic kernels on a 4 x 3 grid (or 4 x 1 with one memory clock), from known coefficients. */
static size_t synthesise(const tw_dvfs_kernel_ref *k, size_t nk, const double *coef, bool counters, size_t nmem,
                         tw_dvfs_power_sample *s)
{
    static const double cores[] = {500, 700, 850, 1000}, mems[] = {800, 600, 400};
    size_t n = 0;
    for (size_t i = 0; i < nk; i++)
        for (size_t c = 0; c < 4; c++)
            for (size_t m = 0; m < nmem; m++) {
                double fm = mems[m] / REF_MEM, core = core_term(cores[c]), p;
                if (counters)
                    p = coef[0] + fm * (coef[1] + coef[2] * k[i].dram_gbs) + core * (coef[3] + coef[4] * k[i].ipc);
                else /* the scaled model: one shape, times each kernel's level */
                    p = k[i].power_w * (coef[0] + coef[1] * fm + coef[2] * core) / (coef[0] + coef[1] + coef[2]);
                s[n++] = (tw_dvfs_power_sample){&k[i], cores[c], mems[m], p};
            }
    return n;
}

static const tw_dvfs_kernel_ref kernels[] = {
    {.ipc = 0.5, .dram_gbs = 300, .power_w = 150},
    {.ipc = 3.0, .dram_gbs = 20, .power_w = 200},
    {.ipc = 1.5, .dram_gbs = 150, .power_w = 120},
};

static void test_fit_counters(void **state)
{
    (void)state;
    const double coef[] = {40, 30, 0.1, 50, 20};
    tw_dvfs_power_sample s[36];
    size_t n = synthesise(kernels, 3, coef, true, 3, s);
    tw_dvfs_power_model m;
    assert_int_equal(tw_dvfs_power_fit(TW_DVFS_POWER_COUNTERS, REF_CORE, REF_MEM, s, n, &m), TW_OK);
    assert_true(m.mem_varies);
    assert_int_equal(m.nterms, 5);
    /* regressor order: 1, fm', fm' dram, V^2 fc', V^2 fc' ipc */
    for (size_t i = 0; i < 5; i++)
        assert_near(m.beta[i], coef[i], 1e-9 * fabs(coef[i]) + 1e-9);
    const tw_dvfs_kernel_ref other = {.ipc = 2, .dram_gbs = 100, .power_w = 1};
    assert_near(tw_dvfs_power_predict(&m, &other, 600, 400), 40 + 0.5 * (30 + 10) + core_term(600) * (50 + 40), 1e-9);
    /* one memory clock: fm' = 1, its constant folds into p0 and dram stays */
    n = synthesise(kernels, 3, coef, true, 1, s);
    assert_int_equal(tw_dvfs_power_fit(TW_DVFS_POWER_COUNTERS, REF_CORE, REF_MEM, s, n, &m), TW_OK);
    assert_false(m.mem_varies);
    assert_int_equal(m.nterms, 4);
    assert_near(m.beta[0], 40 + 30, 1e-9);
    assert_near(m.beta[1], 0.1, 1e-12);
    /* one kernel: ipc and dram do not vary, the counter terms are the clock terms' twins */
    n = synthesise(kernels, 1, coef, true, 3, s);
    assert_int_equal(tw_dvfs_power_fit(TW_DVFS_POWER_COUNTERS, REF_CORE, REF_MEM, s, n, &m), TW_EINVAL);
    assert_error_has("not independent");
}

static void test_fit_scaled(void **state)
{
    (void)state;
    const double coef[] = {0.5, 0.2, 0.3}; /* the shape relative to the reference pair: sums to 1 */
    tw_dvfs_power_sample s[36];
    size_t n = synthesise(kernels, 3, coef, false, 3, s);
    tw_dvfs_power_model m;
    assert_int_equal(tw_dvfs_power_fit(TW_DVFS_POWER_SCALED, REF_CORE, REF_MEM, s, n, &m), TW_OK);
    assert_int_equal(m.nterms, 3);
    for (size_t i = 0; i < 3; i++)
        assert_near(m.beta[i], coef[i], 1e-9);
    /* exact at the reference pair, and the shape elsewhere */
    const tw_dvfs_kernel_ref other = {.power_w = 90};
    assert_near(tw_dvfs_power_predict(&m, &other, REF_CORE, REF_MEM), 90, 1e-9);
    assert_near(tw_dvfs_power_predict(&m, &other, 500, 400), 90 * (0.5 + 0.2 * 0.5 + 0.3 * core_term(500)), 1e-9);
    /* one core clock cannot be fitted */
    for (size_t i = 0; i < n; i++)
        s[i].core_mhz = 700;
    assert_int_equal(tw_dvfs_power_fit(TW_DVFS_POWER_SCALED, REF_CORE, REF_MEM, s, n, &m), TW_EINVAL);
    assert_error_has("one core clock");
}

/* ---------------------------------------------------------------- the choice */

static void test_argmin(void **state)
{
    (void)state;
    /* energy 100, 96, 120, 96 mJ; EDP 100, 115.2, 240, 115.2 mJ ms */
    const double power_w[] = {100, 80, 60, 96}, time_ms[] = {1, 1.2, 2, 1};
    assert_int_equal(tw_dvfs_argmin(TW_DVFS_OBJ_ENERGY, power_w, time_ms, 3), 1);
    assert_int_equal(tw_dvfs_argmin(TW_DVFS_OBJ_EDP, power_w, time_ms, 3), 0);
    assert_int_equal(tw_dvfs_argmin(TW_DVFS_OBJ_ENERGY, power_w, time_ms, 4), 1); /* a tie: the first */
    assert_int_equal(tw_dvfs_argmin(TW_DVFS_OBJ_EDP, power_w, time_ms, 4), 3);
    assert_near(tw_dvfs_objective_value(TW_DVFS_OBJ_EDP, 80, 1.2), 115.2, 1e-12);
}

static void test_no_default_pair(void **state)
{
    (void)state;
    tw_dvfs_row rows[2] = {perf_row("A", 500, 500, 2), perf_row("B", 1000, 1000, 3)};
    tw_dvfs_data perf = {rows, 2};
    const double power_w[] = {50, 60};
    tw_dvfs_params p = {.name = "x"};
    tw_dvfs_energy_eval e;
    assert_int_equal(tw_dvfs_energy_evaluate(&p, &perf, power_w, TW_DVFS_POWER_SCALED, TW_DVFS_OBJ_ENERGY, true, &e),
                     TW_EINVAL);
    assert_error_has("A has no row at the default pair 1000/1000 MHz");
    assert_null(e.points);
}

/* ---------------------------------------------------------------- the authors' data */

typedef struct expected {
    const char *gpu, *file;
    double power_mape[2];     /* scaled, counters */
    double above[2][2];       /* scaled; energy, edp; mean */
    double worst[2][2];       /* the same, worst kernel */
    double above_tmeas[2][2]; /* with measured time: mean */
} expected;

static const expected sets[] = {
    {"gtx980", "gtx980-low-dvfs-real-small-workload", {5.55, 7.50}, {{3.75, 10.69}}, {{23.14, 66.80}}, {{0.90, 0.29}}},
    {"gtx1080ti", "gtx1080ti-dvfs-real", {2.88, 12.08}, {{0.98, 2.94}}, {{9.63, 43.45}}, {{0.14, 0.05}}},
    {"p100", "p100-dvfs-real", {8.49, 10.24}, {{0.19, 4.30}}, {{1.70, 15.87}}, {{0.18, 0.49}}},
    {"v100", "v100-dvfs-real", {9.78, 13.79}, {{4.99, 11.95}}, {{17.13, 26.36}}, {{3.07, 2.63}}},
};

static void check_pct(const char *what, const char *gpu, double got, double want)
{
    if (fabs(round(100 * got) / 100 - want) > 1e-9) fail_msg("%s %s: %.4f %%, expected %.2f", gpu, what, got, want);
}

static tw_status load_set(const expected *x, tw_dvfs_params *p, tw_dvfs_data *d, double **power_w)
{
    char perf[1024], power[1024], params[1024];
    snprintf(params, sizeof params, "%s/../../data/dvfs/%s.json", TW_TEST_DATA, x->gpu);
    snprintf(perf, sizeof perf, "%s/data/dvfs-wang-chu/%s-Performance.csv", TW_SHARED_DIR, x->file);
    snprintf(power, sizeof power, "%s/data/dvfs-wang-chu/%s-Power.csv", TW_SHARED_DIR, x->file);
    assert_int_equal(tw_dvfs_params_load(params, p), TW_OK);
    assert_int_equal(tw_dvfs_load(perf, d), TW_OK);
    tw_dvfs_power_data pw;
    assert_int_equal(tw_dvfs_power_load(power, &pw), TW_OK);
    assert_int_equal(pw.n, d->n);
    *power_w = calloc(d->n, sizeof **power_w);
    assert_non_null(*power_w);
    tw_status st = tw_dvfs_power_join(d, perf, &pw, power, *power_w);
    tw_dvfs_power_free(&pw);
    return st;
}

static void test_published_data(void **state)
{
    (void)state;
    char probe_path[1024];
    snprintf(probe_path, sizeof probe_path, "%s/data/dvfs-wang-chu/p100-dvfs-real-Power.csv", TW_SHARED_DIR);
    tw_test_need_data(probe_path);
    for (size_t i = 0; i < sizeof sets / sizeof sets[0]; i++) {
        const expected *x = &sets[i];
        tw_dvfs_params p;
        tw_dvfs_data d;
        double *power_w;
        assert_int_equal(load_set(x, &p, &d, &power_w), TW_OK);
        for (int kind = 0; kind < 2; kind++)
            for (int obj = 0; obj < 2; obj++) {
                tw_dvfs_energy_eval e;
                assert_int_equal(tw_dvfs_energy_evaluate(&p, &d, power_w, (tw_dvfs_power_kind)kind,
                                                         (tw_dvfs_objective)obj, false, &e),
                                 TW_OK);
                assert_int_equal(e.nkernels, 20);
                check_pct("power MAPE", x->gpu, 100 * e.power_mape, x->power_mape[kind]);
                if (kind == TW_DVFS_POWER_SCALED) {
                    check_pct("mean above optimum", x->gpu, 100 * e.mean_above_rec, x->above[kind][obj]);
                    check_pct("worst above optimum", x->gpu, 100 * e.kernels[e.worst_rec].above_rec,
                              x->worst[kind][obj]);
                    check_pct("mean above optimum, measured time", x->gpu, 100 * e.mean_above_tmeas,
                              x->above_tmeas[kind][obj]);
                }
                /* the measured optimum is the floor: nothing lies below it */
                for (size_t k = 0; k < e.nkernels; k++)
                    assert_true(e.kernels[k].above_rec >= 0 && e.kernels[k].above_tmeas >= 0 &&
                                e.kernels[k].saving_opt >= e.kernels[k].saving_rec);
                tw_dvfs_energy_eval_free(&e);
            }
        free(power_w);
        tw_dvfs_data_free(&d);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_load),
        cmocka_unit_test(test_load_errors),
        cmocka_unit_test(test_join),
        cmocka_unit_test(test_fit_counters),
        cmocka_unit_test(test_fit_scaled),
        cmocka_unit_test(test_argmin),
        cmocka_unit_test(test_no_default_pair),
        cmocka_unit_test(test_published_data),
    };
    return tw_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
