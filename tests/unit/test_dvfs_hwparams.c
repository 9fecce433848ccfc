/* Unit tests of src/dvfs/hwparams.c: microbenchmark numbers to the model's
 * parameters, checked against values computed by hand from an H100-like
 * measurement; the one-clock-pair split reproducing the measured latency and
 * departure delay at the measured pair; the written parameter file read back
 * (a_D = 0 allowed); and the refusals of numbers that were not measured. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "tw_test.h"

#include "dvfs/hwparams.h"
#include "dvfs/model.h"

#define assert_near(a, b, tol)                                                                                         \
    do {                                                                                                               \
        if (!(fabs((a) - (b)) <= (tol))) fail_msg("%s = %.10g, expected %.10g", #a, (double)(a), (double)(b));         \
    } while (0)

/* An H100-like run: 132 SMs at 2000 MHz (round numbers, so the expected values are easy to follow). */
static tw_dvfs_ubench sample(void)
{
    tw_dvfs_ubench u = {.cc = 90, .n_sm = 132, .threads_per_sm = 2048, .sm_mhz = 2000, .repeats = 3};
    snprintf(u.gpu, sizeof u.gpu, "test GPU");
    u.dram = (tw_dvfs_chain){.steps = 1000, .cycles = 700000};                           /* 700 cycles */
    u.l2 = (tw_dvfs_chain){.steps = 1000, .cycles = 280000};                             /* 280 */
    u.shared = (tw_dvfs_chain){.steps = 100, .cycles = 2300};                            /* 23 */
    u.fma = (tw_dvfs_chain){.steps = 640, .cycles = 2560};                               /* 4 */
    u.fp32 = (tw_dvfs_pipe){.warps_per_sm = 32, .insts_per_warp = 1000, .cycles = 8000}; /* 0.25/warp inst */
    u.fp64 = (tw_dvfs_pipe){.warps_per_sm = 32, .insts_per_warp = 1000, .cycles = 16000};
    u.lds = (tw_dvfs_pipe){.warps_per_sm = 32, .insts_per_warp = 1000, .cycles = 32000};
    /* 1e9 sectors in 1 ms: 2e6 SM cycles * 132 SMs / 1e9 = 0.264 cycles per sector per SM */
    u.l2_read = (tw_dvfs_stream){.sectors = 1e9, .elapsed_ns = 1e6, .bytes_footprint = 8 << 20};
    u.dram_copy = (tw_dvfs_stream){.sectors = 1e8, .elapsed_ns = 1e6, .bytes_footprint = 512 << 20};
    return u;
}

static void test_measured(void **state)
{
    (void)state;
    tw_dvfs_ubench u = sample();
    tw_dvfs_measured m;
    assert_int_equal(tw_dvfs_measured_from(&u, &m), TW_OK);
    assert_near(m.l_dm, 700, 1e-9);
    assert_near(m.l_l2, 280, 1e-9);
    assert_near(m.l_sh, 23, 1e-9);
    assert_near(m.l_inst, 4, 1e-9);
    assert_near(m.d_inst, 0.25 * 128 / 32, 1e-12); /* 1.0: four warp FMAs per cycle per SM at 128 lanes */
    assert_near(m.d_dp, 0.5, 1e-12);
    assert_near(m.d_sh, 1.0, 1e-12);
    assert_near(m.d_l2, 0.264, 1e-12);
    assert_near(m.d_dm, 2.64, 1e-12);
    assert_near(m.bw_l2_gbs, 32000, 1e-6); /* 32e9 bytes per ms */
    assert_near(m.bw_dram_gbs, 3200, 1e-6);
}

/* The split must give back the measured L_DM and D_DM at the measured pair, whatever fm is. */
static void test_params_at_measured_pair(void **state)
{
    (void)state;
    tw_dvfs_ubench u = sample();
    tw_dvfs_measured m;
    tw_dvfs_params p;
    assert_int_equal(tw_dvfs_measured_from(&u, &m), TW_OK);
    assert_int_equal(tw_dvfs_params_from(&u, &m, 2619, &p), TW_OK);
    double fc = 2000, fm = 2619;
    assert_near(p.a_l * fc / fm + p.b_l, 700, 1e-9);
    assert_near((p.a_d / fm + p.b_d) * fc / fm, 2.64, 1e-12);
    assert_near(p.b_l, 280, 1e-12);
    assert_near(p.a_d, 0, 0);
    assert_near(p.w_max, 64, 0);
    assert_near(p.n_sm, 132, 0);
    assert_near(p.c_sm, 128, 0);
    assert_near(p.occ_threshold, 0.30, 0);
    /* at half the memory clock the memory part of the latency doubles, the departure delay too */
    fm = 2619 / 2.0;
    assert_near(p.a_l * fc / fm + p.b_l, 280 + 2 * 420, 1e-9);
    assert_near((p.a_d / fm + p.b_d) * fc / fm, 2 * 2.64, 1e-12);
}

static void test_fp32_lanes(void **state)
{
    (void)state;
    assert_int_equal(tw_dvfs_fp32_lanes(70), 64);
    assert_int_equal(tw_dvfs_fp32_lanes(80), 64);
    assert_int_equal(tw_dvfs_fp32_lanes(86), 128);
    assert_int_equal(tw_dvfs_fp32_lanes(90), 128);
    assert_int_equal(tw_dvfs_fp32_lanes(52), 128);
}

static void test_round_trip(void **state)
{
    (void)state;
    tw_dvfs_ubench u = sample();
    tw_dvfs_measured m;
    tw_dvfs_params p, q;
    assert_int_equal(tw_dvfs_measured_from(&u, &m), TW_OK);
    assert_int_equal(tw_dvfs_params_from(&u, &m, 2619, &p), TW_OK);
    const char *path = tw_test_path(0, "params.json");
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    assert_int_equal(tw_dvfs_params_write(f, &p), TW_OK);
    assert_int_equal(fclose(f), 0);
    assert_int_equal(tw_dvfs_params_load(path, &q), TW_OK);
    assert_string_equal(q.name, "measured");
    assert_non_null(strstr(q.source, "test GPU"));
    assert_near(q.a_l, p.a_l, 1e-6 * p.a_l);
    assert_near(q.b_d, p.b_d, 1e-6 * p.b_d);
    assert_near(q.a_d, 0, 0);
    assert_near(q.d_l2, p.d_l2, 1e-6 * p.d_l2);
}

static void test_refusals(void **state)
{
    (void)state;
    tw_dvfs_measured m;
    tw_dvfs_params p;
    tw_dvfs_ubench u = sample();
    u.fp64.cycles = 0; /* a kernel that did not run */
    assert_int_equal(tw_dvfs_measured_from(&u, &m), TW_EINVAL);
    assert_non_null(strstr(tw_last_error(), "FP64 issue delay"));
    u = sample();
    u.sm_mhz = NAN;
    assert_int_equal(tw_dvfs_measured_from(&u, &m), TW_EINVAL);
    assert_non_null(strstr(tw_last_error(), "SM clock"));
    u = sample();
    assert_int_equal(tw_dvfs_measured_from(&u, &m), TW_OK);
    assert_int_equal(tw_dvfs_params_from(&u, &m, 0, &p), TW_EINVAL);
    m.l_dm = m.l_l2; /* a "DRAM" chase that stayed in the L2 */
    assert_int_equal(tw_dvfs_params_from(&u, &m, 2619, &p), TW_EINVAL);
    assert_non_null(strstr(tw_last_error(), "not above the L2"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_measured),   cmocka_unit_test(test_params_at_measured_pair),
        cmocka_unit_test(test_fp32_lanes), cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
