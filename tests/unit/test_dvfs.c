/* Unit tests of the DVFS model (src/dvfs/): the loader's edge cases (a
 * repeated header line and column, a missing column, a bad number, a short
 * row), the model on GTX 980 BlackScholes at 1000/1000 MHz computed by hand
 * (dvfs-model.md §2.10), and the published errors on the authors' data
 * when shared/ has it. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tw_test.h"

#include "dvfs/data.h"
#include "dvfs/eval.h"
#include "dvfs/model.h"

#define HEADER                                                                                                         \
    "appName,coreF,memF,kernel,time/ms,warps,achieved_occupancy,l2_read_transactions,l2_write_transactions,"           \
    "dram_read_transactions,dram_write_transactions,shared_load_transactions,shared_store_transactions,"               \
    "tex_cache_transactions,inst_fp_64,cf_executed,inst_per_warp,l2_tex_write_throughput,l2_tex_write_throughput\n"
/* GTX 980 BlackScholes at 1000/1000 MHz, from the authors' data */
#define ROW                                                                                                            \
    "BlackScholes,1000,1000,BlackScholesGPU,0.16391999999999998,14336.0,0.886978,172496,114694,174135,113267,0,0,"     \
    "172032,0,243712,163.000000,21.223,21.229\n"

/* cmocka before 1.1.6 has no assert_double_equal */
#define assert_near(a, b, tol)                                                                                         \
    do {                                                                                                               \
        if (!(fabs((a) - (b)) <= (tol))) fail_msg("%s = %.10g, expected %.10g", #a, (double)(a), (double)(b));         \
    } while (0)

static tw_status read_text(const char *text, tw_dvfs_data *d) { return tw_dvfs_load(tw_test_file(0, text), d); }

/* result files carry "# provenance: ..." lines (scripts/stamp-results) before and between rows */
static void test_comment_lines(void **state)
{
    (void)state;
    tw_dvfs_data d;
    assert_int_equal(read_text("# provenance: a test\n" HEADER "# between\n" ROW, &d), TW_OK);
    assert_int_equal(d.n, 1);
    assert_int_equal(d.rows[0].line, 4);
    tw_dvfs_data_free(&d);
}

static void test_repeated_header(void **state)
{
    (void)state;
    tw_dvfs_data d;
    assert_int_equal(read_text(HEADER ROW HEADER "\n" ROW, &d), TW_OK);
    assert_int_equal(d.n, 2);
    assert_string_equal(d.rows[1].app, "BlackScholes");
    assert_string_equal(d.rows[1].kernel, "BlackScholesGPU");
    assert_int_equal(d.rows[1].line, 5);
    assert_true(d.rows[0].core_mhz == 1000 && d.rows[0].warps == 14336 && d.rows[0].inst_per_warp == 163);
    tw_dvfs_data_free(&d);
}

static void test_missing_column(void **state)
{
    (void)state;
    tw_dvfs_data d;
    assert_int_equal(read_text("appName,coreF,memF,kernel,time/ms\nx,1,2,k,3\n", &d), TW_ENOTFOUND);
    assert_non_null(strstr(tw_last_error(), ":1: the header lacks the column(s) warps achieved_occupancy"));
    assert_null(d.rows);
}

static void test_bad_number(void **state)
{
    (void)state;
    tw_dvfs_data d;
    char text[2048];
    snprintf(text, sizeof text, "%s%s%s", HEADER, ROW, ROW);
    char *second = strstr(text, ROW) + strlen(ROW);
    memcpy(strstr(second, "0.886978"), "0.8x6978", 8);
    assert_int_equal(read_text(text, &d), TW_EPARSE);
    assert_non_null(strstr(tw_last_error(), ":3: achieved_occupancy is '0.8x6978', not a finite number"));
    assert_int_equal(read_text(HEADER "BlackScholes,1000,1000\n", &d), TW_EPARSE);
    assert_non_null(strstr(tw_last_error(), ":2: 3 fields, the header has 19"));
    assert_int_equal(read_text(HEADER, &d), TW_EEMPTY);
}

static const tw_dvfs_params gtx980 = {.name = "gtx980",
                                      .a_l = 78.417,
                                      .b_l = 97.62,
                                      .a_d = 805.03,
                                      .b_d = 8.1762,
                                      .l_l2 = 222,
                                      .d_l2 = 1.2,
                                      .l_inst = 4,
                                      .d_inst = 1.0,
                                      .l_sh = 28,
                                      .d_sh = 1,
                                      .d_dp = 20,
                                      .d_tex = 1,
                                      .tex_units = 8,
                                      .w_max = 64,
                                      .n_sm = 16,
                                      .c_sm = 128,
                                      .occ_threshold = 0.30};

/* By hand: L_DM = 78.417 + 97.62; D_DM = 0.80503 + 8.1762; all misses (m = 1); W = 64 * 0.886978;
 * n_g = 287190 / 14336; T_mem = n_g D_DM W; T_sm = (163 - n_g) W 32/128 + 4 + 28; C = T_mem + L_DM. */
static void test_hand_point(void **state)
{
    (void)state;
    tw_dvfs_data d;
    assert_int_equal(read_text(HEADER ROW, &d), TW_OK);
    double w = 64 * 0.886978, n_g = 287190.0 / 14336, d_dm = 0.80503 + 8.1762, l_dm = 78.417 + 97.62;
    double t_mem = n_g * d_dm * w, t_sm = (163 - n_g) * w / 4 + 32, c = t_mem + l_dm;
    tw_dvfs_prediction p;
    assert_int_equal(tw_dvfs_predict(&gtx980, &d.rows[0], false, &p), TW_OK);
    assert_int_equal(p.regime, TW_DVFS_MEMORY);
    assert_near(p.t_mem, t_mem, 1e-9 * t_mem);
    assert_near(p.t_sm, t_sm, 1e-9 * t_sm);
    assert_near(p.cycles, c, 1e-9 * c);
    /* §2.10's golden values, rounded as there */
    assert_near(p.cycles, 10389.4, 0.05);
    assert_near(p.real_cycles, 10385.2, 0.05);
    tw_dvfs_prediction q;
    assert_int_equal(tw_dvfs_predict(&gtx980, &d.rows[0], true, &q), TW_OK);
    assert_near(q.cycles, p.cycles, 0); /* no special case for BlackScholes */
    tw_dvfs_data_free(&d);
}

/* The published errors (paper_compat) and the honest ones, to two decimals, on the authors' data. */
static void test_published(void **state)
{
    (void)state;
    static const struct {
        const char *gpu, *file;
        double paper, honest;
    } sets[] = {
        {"gtx980", "gtx980-low-dvfs-real-small-workload", 3.85, 5.13},
        {"gtx1080ti", "gtx1080ti-dvfs-real", 8.56, 11.00},
        {"p100", "p100-dvfs-real", 8.82, 11.44},
        {"v100", "v100-dvfs-real", 8.83, 20.29},
    };
    char path[1024];
    snprintf(path, sizeof path, "%s/data/dvfs-wang-chu/%s-Performance.csv", TW_SHARED_DIR, sets[0].file);
    tw_test_need_data(path);
    for (size_t i = 0; i < sizeof sets / sizeof sets[0]; i++) {
        tw_dvfs_params p;
        tw_dvfs_data d;
        snprintf(path, sizeof path, "%s/../../data/dvfs/%s.json", TW_TEST_DATA, sets[i].gpu);
        assert_int_equal(tw_dvfs_params_load(path, &p), TW_OK);
        snprintf(path, sizeof path, "%s/data/dvfs-wang-chu/%s-Performance.csv", TW_SHARED_DIR, sets[i].file);
        assert_int_equal(tw_dvfs_load(path, &d), TW_OK);
        for (int compat = 0; compat < 2; compat++) {
            tw_dvfs_eval e;
            assert_int_equal(tw_dvfs_evaluate(&p, &d, compat, false, &e), TW_OK);
            double want = compat ? sets[i].paper : sets[i].honest;
            if (fabs(round(10000 * e.mape) / 100 - want) > 1e-9)
                fail_msg("%s %s: MAPE %.4f %%, expected %.2f", sets[i].gpu, compat ? "paper" : "honest", 100 * e.mape,
                         want);
            tw_dvfs_eval_free(&e);
        }
        tw_dvfs_data_free(&d);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_repeated_header), cmocka_unit_test(test_comment_lines),
        cmocka_unit_test(test_missing_column),  cmocka_unit_test(test_bad_number),
        cmocka_unit_test(test_hand_point),      cmocka_unit_test(test_published),
    };
    return tw_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
