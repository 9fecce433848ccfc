/* Unit tests of the rows of kernels measured on the local GPU (src/dvfs/rows.c):
 * a hand-written ncu raw page (tests/data/cli/dvfs-rows-ncu.csv: ==PROF== lines,
 * the program's own output, the units row with Ksector and usecond, thousands
 * separators, two launches of one kernel, a launch of a kernel not timed) and
 * the same counters as ncu's details page, joined with a timing CSV into rows
 * whose every column is computed by hand here, read back by tw_dvfs_load; and
 * the errors: a metric missing or n/a, a kernel without ncu launches, another
 * launch configuration, bad timing files, no ncu CSV at all. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tw_test.h"

#include "dvfs/data.h"
#include "dvfs/rows.h"

#define TIMES TW_TEST_DATA "/cli/dvfs-rows-times.csv"
#define NCU_RAW TW_TEST_DATA "/cli/dvfs-rows-ncu.csv"
#define NCU_DETAILS TW_TEST_DATA "/cli/dvfs-rows-ncu-details.csv"

static void assert_ok(tw_status st)
{
    if (st != TW_OK) fail_msg("%s: %s", tw_strerror(st), tw_last_error());
}

static void assert_error_has(const char *part)
{
    if (!strstr(tw_last_error(), part)) fail_msg("error \"%s\" lacks \"%s\"", tw_last_error(), part);
}

#define assert_near(a, b)                                                                                              \
    do {                                                                                                               \
        double a_ = (a), b_ = (b);                                                                                     \
        if (!(fabs(a_ - b_) <= 1e-12 * fabs(b_))) fail_msg("%s = %.15g, expected %.15g", #a, a_, b_);                  \
    } while (0)

/* `text` with the first `old` replaced by `new` (malloc'd) */
static char *replaced(const char *text, const char *old, const char *new)
{
    const char *at = strstr(text, old);
    if (!at) fail_msg("the test data lacks \"%s\"", old);
    size_t head = (size_t)(at - text), len = strlen(text) - strlen(old) + strlen(new);
    char *s = malloc(len + 1);
    assert_non_null(s);
    memcpy(s, text, head);
    strcpy(s + head, new);
    strcat(s, at + strlen(old));
    return s;
}

/* The ncu file `path` with `old` replaced by `new`, read as an ncu CSV. */
static tw_status read_edited(const char *path, const char *old, const char *new, tw_ncu_report *r)
{
    char *text = tw_test_slurp(path);
    assert_non_null(text);
    char *edited = replaced(text, old, new);
    tw_status st = tw_dvfs_ncu_load(tw_test_file(1, edited), r);
    free(text);
    free(edited);
    return st;
}

static tw_status build_from(const char *times_path, const tw_ncu_report *r, tw_dvfs_rows *rows)
{
    tw_dvfs_times t;
    assert_ok(tw_dvfs_times_load(times_path, &t));
    tw_status st = tw_dvfs_rows_build(&t, r, 1980, 2619, rows);
    tw_dvfs_times_free(&t);
    return st;
}

/* The rows of the test data, by hand: vectorAdd from its launches 3 and 5, averaged. */
static void assert_hand_rows(const tw_dvfs_row *v, const tw_dvfs_row *d)
{
    assert_string_equal(v->app, "vectorAdd");
    assert_string_equal(v->kernel, "vectorAdd");
    assert_near(v->core_mhz, 1980);
    assert_near(v->mem_mhz, 2619);
    assert_near(v->time_ms, 0.26);                         /* the timing's mean, not ncu's 0.25 */
    assert_near(v->warps, 4 * 256 / 32);                   /* grid (4,1,1) x block (256,1,1) */
    assert_near(v->occupancy, (80.5 + 79.5) / 2 / 100);    /* % -> fraction */
    assert_near(v->l2_read, (1000 + 1200) / 2.0 + 20 + 2); /* read + atom + red */
    assert_near(v->l2_write, 500 + 20 + 2);                /* write + atom + red */
    assert_near(v->dram_read, (900 + 1100) / 2.0);
    assert_near(v->dram_write, (500 + 700) / 2.0); /* 0.5 and 0.7 Ksector */
    assert_near(v->shared_load, 0);
    assert_near(v->shared_store, 0);
    assert_near(v->tex_cache, 2000);
    assert_near(v->inst_fp_64, 0);
    assert_near(v->cf_executed, 64 + 16);                    /* cbu + adu */
    assert_near(v->inst_per_warp, (3200 + 3264) / 2.0 / 32); /* 101 */
    /* dependentLoad: block (48,1,1) is two warps, so 4 warps in 2 blocks */
    assert_string_equal(d->app, "dependentLoad");
    assert_near(d->time_ms, 0.55);
    assert_near(d->warps, 4);
    assert_near(d->occupancy, 0.03125);
    assert_near(d->l2_read, 8192);
    assert_near(d->l2_write, 0);
    assert_near(d->dram_read, 4096);
    assert_near(d->tex_cache, 8192);
    assert_near(d->cf_executed, 8);
    assert_near(d->inst_per_warp, 250);
}

static void test_metrics(void **state)
{
    (void)state;
    size_t n;
    const char *const *m = tw_dvfs_rows_metrics(&n);
    assert_int_equal(n, 15);
    const char *want[] = {"sm__warps_active.avg.pct_of_peak_sustained_active",
                          "lts__t_sectors_srcunit_tex_op_read.sum",
                          "lts__t_sectors_srcunit_tex_op_write.sum",
                          "lts__t_sectors_srcunit_tex_op_atom.sum",
                          "lts__t_sectors_srcunit_tex_op_red.sum",
                          "dram__sectors_read.sum",
                          "dram__sectors_write.sum",
                          "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
                          "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
                          "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
                          "smsp__sass_thread_inst_executed_op_fp64_pred_on.sum",
                          "smsp__inst_executed_pipe_cbu.sum",
                          "smsp__inst_executed_pipe_adu.sum",
                          "smsp__inst_executed.sum",
                          "gpu__time_duration.sum"};
    char arg[4096];
    tw_dvfs_rows_metrics_arg(arg, sizeof arg);
    size_t len = 0;
    for (size_t i = 0; i < n; i++) {
        assert_string_equal(m[i], want[i]);
        assert_memory_equal(arg + len, want[i], strlen(want[i]));
        len += strlen(want[i]);
        assert_int_equal(arg[len], i + 1 < n ? ',' : '\0');
        len++;
    }
}

static void test_raw_page_round_trip(void **state)
{
    (void)state;
    tw_ncu_report r;
    assert_ok(tw_dvfs_ncu_load(NCU_RAW, &r));
    assert_int_equal(r.n, 4);
    assert_string_equal(r.launches[1].name, "vectorAdd");
    assert_int_equal(r.launches[1].id, 3);
    assert_int_equal(r.launches[1].grid[0], 4);
    assert_int_equal(r.launches[1].block[0], 256);
    tw_dvfs_rows rows;
    assert_ok(build_from(TIMES, &r, &rows));
    tw_ncu_report_free(&r);
    assert_int_equal(rows.n, 2);
    assert_int_equal(rows.ignored, 1);
    assert_string_equal(rows.ignored_example, "fillUniform");
    assert_hand_rows(&rows.r[0].row, &rows.r[1].row);
    assert_int_equal(rows.r[0].profiled, 2);
    assert_int_equal(rows.r[1].profiled, 1);
    assert_near(rows.r[0].ncu_time_ms, 0.25); /* 250.5 and 249.5 usecond */
    assert_near(rows.r[0].timed, 20);
    assert_near(rows.r[0].sd_ms, 0.001);
    assert_near(rows.r[0].min_ms, 0.259);

    /* written, then read by the model's loader as it reads the authors' rows */
    const char *path = tw_test_path(2, "rows.csv");
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    assert_ok(tw_dvfs_rows_write(f, &rows));
    fclose(f);
    tw_dvfs_rows_free(&rows);
    tw_dvfs_data d;
    assert_ok(tw_dvfs_load(path, &d));
    assert_int_equal(d.n, 2);
    assert_hand_rows(&d.rows[0], &d.rows[1]);
    tw_dvfs_data_free(&d);
    char *text = tw_test_slurp(path);
    assert_non_null(text);
    assert_non_null(strstr(text, ",timed_launches,time_sd/ms,time_min/ms,profiled_launches,ncu_time/ms\n"
                                 "vectorAdd,vectorAdd,1980,2619,0.26,32,0.8,1122,522,1000,600,0,0,2000,0,80,101,"
                                 "20,0.001,0.259,2,0.25\n"));
    free(text);
}

/* The same counters as ncu's details page (base units, C++ kernel names): the same rows. */
static void test_details_page(void **state)
{
    (void)state;
    tw_ncu_report r;
    assert_ok(tw_dvfs_ncu_load(NCU_DETAILS, &r));
    assert_int_equal(r.n, 4);
    assert_string_equal(r.launches[1].name, "void vectorAdd(const float *, const float *, float *, int)");
    tw_dvfs_rows rows;
    assert_ok(build_from(TIMES, &r, &rows));
    tw_ncu_report_free(&r);
    assert_int_equal(rows.n, 2);
    assert_int_equal(rows.ignored, 1);
    assert_hand_rows(&rows.r[0].row, &rows.r[1].row);
    assert_near(rows.r[0].ncu_time_ms, 0.25);
    tw_dvfs_rows_free(&rows);
}

static void test_missing_metric(void **state)
{
    (void)state;
    tw_ncu_report r;
    tw_dvfs_rows rows;
    /* a column ncu was not asked for: no such header field */
    assert_ok(read_edited(NCU_RAW, "\"lts__t_sectors_srcunit_tex_op_red.sum\"",
                          "\"lts__t_sectors_srcunit_tex_op_redux.sum\"", &r));
    assert_int_equal(build_from(TIMES, &r, &rows), TW_ENOTFOUND);
    assert_error_has(
        "kernel 'vectorAdd': metric lts__t_sectors_srcunit_tex_op_red.sum is missing or n/a in ncu launch ID 3");
    assert_null(rows.r);
    tw_ncu_report_free(&r);
    /* n/a in one launch */
    assert_ok(read_edited(NCU_RAW, "\"8,192\",\"0\",\"8,192\"", "\"8,192\",\"0\",\"n/a\"", &r));
    assert_int_equal(build_from(TIMES, &r, &rows), TW_ENOTFOUND);
    assert_error_has(
        "kernel 'dependentLoad': metric lts__t_sectors_srcunit_tex_op_read.sum is missing or n/a in ncu launch ID 7");
    tw_ncu_report_free(&r);
    /* the details page without one metric's rows */
    char *text = tw_test_slurp(NCU_DETAILS), *w = text;
    assert_non_null(text);
    for (char *line = text, *next; *line; line = next) { /* drop the lines of smsp__inst_executed_pipe_adu.sum */
        next = line + strcspn(line, "\n");
        if (*next) next++;
        char keep = *next;
        *next = '\0';
        bool adu = strstr(line, "pipe_adu") != NULL;
        *next = keep;
        if (!adu) {
            memmove(w, line, (size_t)(next - line));
            w += next - line;
        }
    }
    *w = '\0';
    assert_ok(tw_dvfs_ncu_load(tw_test_file(1, text), &r));
    free(text);
    assert_int_equal(build_from(TIMES, &r, &rows), TW_ENOTFOUND);
    assert_error_has("metric smsp__inst_executed_pipe_adu.sum is missing or n/a");
    tw_ncu_report_free(&r);
    /* a value that is no number */
    assert_int_equal(read_edited(NCU_RAW, "\"3,264\"", "\"3;264\"", &r), TW_EPARSE);
    assert_error_has(":8: metric smsp__inst_executed.sum: value '3;264' is not a number");
    assert_null(r.launches);
}

static void test_kernel_not_profiled(void **state)
{
    (void)state;
    tw_ncu_report r;
    assert_ok(tw_dvfs_ncu_load(NCU_RAW, &r));
    char *times = tw_test_slurp(TIMES);
    assert_non_null(times);
    char *more = replaced(times, "dependentLoad,", "histogram,20,528,1,1,256,1,1,0.3,0,0.3\ndependentLoad,");
    tw_dvfs_times t;
    assert_ok(tw_dvfs_times_load(tw_test_file(0, more), &t));
    free(times);
    free(more);
    tw_dvfs_rows rows;
    assert_int_equal(tw_dvfs_rows_build(&t, &r, 1980, 2619, &rows), TW_ENOTFOUND);
    assert_error_has("kernel 'histogram' (timing line 3) has no launch in the ncu CSV");
    assert_null(rows.r);
    tw_dvfs_times_free(&t);
    tw_ncu_report_free(&r);
    /* the clocks */
    assert_ok(tw_dvfs_times_load(TIMES, &t));
    assert_ok(tw_dvfs_ncu_load(NCU_RAW, &r));
    assert_int_equal(tw_dvfs_rows_build(&t, &r, 0, 2619, &rows), TW_EINVAL);
    tw_dvfs_times_free(&t);
    tw_ncu_report_free(&r);
}

static void test_other_launch(void **state)
{
    (void)state;
    tw_ncu_report r;
    assert_ok(read_edited(NCU_RAW, "\"dependentLoad\",\"1\",\"7\",\"(48, 1, 1)\",\"(2, 1, 1)\"",
                          "\"dependentLoad\",\"1\",\"7\",\"(48, 1, 1)\",\"(3, 1, 1)\"", &r));
    tw_dvfs_rows rows;
    assert_int_equal(build_from(TIMES, &r, &rows), TW_EPARSE);
    assert_error_has("kernel 'dependentLoad': ncu launch ID 7 ran grid (3, 1, 1) block (48, 1, 1), the timing (line "
                     "3) grid (2, 1, 1)");
    tw_ncu_report_free(&r);
    /* an occupancy of 0 % is no row the model can use */
    assert_ok(read_edited(NCU_RAW, "\"3.125\"", "\"0\"", &r));
    assert_int_equal(build_from(TIMES, &r, &rows), TW_EPARSE);
    assert_error_has("kernel 'dependentLoad': achieved occupancy 0 % (sm__warps_active");
    tw_ncu_report_free(&r);
}

static void test_times_errors(void **state)
{
    (void)state;
    tw_dvfs_times t;
    const char *header = "kernel,launches,grid_x,grid_y,grid_z,block_x,block_y,block_z,time_ms_mean\n";
    char text[1024];
    assert_int_equal(tw_dvfs_times_load(tw_test_file(0, "kernel,launches,grid_x\nk,1,1\n"), &t), TW_ENOTFOUND);
    assert_error_has(":1: the header lacks the column(s) grid_y grid_z block_x block_y block_z time_ms_mean");
    snprintf(text, sizeof text, "%sk,1,1,1,1,32,1,1,0.5\n# a comment\n%sk,1,1,1,1,32,1,1,0.6\n", header, header);
    assert_int_equal(tw_dvfs_times_load(tw_test_file(0, text), &t), TW_EPARSE);
    assert_error_has(":5: kernel 'k' again (first on line 2)");
    assert_null(t.t);
    snprintf(text, sizeof text, "%sk,1,1,1,1,0,1,1,0.5\n", header);
    assert_int_equal(tw_dvfs_times_load(tw_test_file(0, text), &t), TW_EPARSE);
    assert_error_has(":2: grid and block sizes must be whole numbers >= 1");
    snprintf(text, sizeof text, "%sk,1,1,1,1,32,1,1,fast\n", header);
    assert_int_equal(tw_dvfs_times_load(tw_test_file(0, text), &t), TW_EPARSE);
    assert_error_has(":2: time_ms_mean is 'fast', not a finite number");
    assert_int_equal(tw_dvfs_times_load(tw_test_file(0, header), &t), TW_EEMPTY);
    /* without sd and min, a header repeated (two runs concatenated) */
    snprintf(text, sizeof text, "%sk,3,1,1,1,32,1,1,0.5\n%sj,3,2,1,1,64,1,1,0.25\n", header, header);
    assert_ok(tw_dvfs_times_load(tw_test_file(0, text), &t));
    assert_int_equal(t.n, 2);
    assert_string_equal(t.t[1].kernel, "j");
    assert_true(t.t[1].grid[0] == 2 && t.t[1].block[0] == 64 && t.t[1].mean_ms == 0.25 && isnan(t.t[1].sd_ms));
    tw_dvfs_times_free(&t);
}

static void test_no_ncu_csv(void **state)
{
    (void)state;
    tw_ncu_report r;
    assert_int_equal(tw_dvfs_ncu_load(tw_test_file(0, "==PROF== Connected to process 1\n"
                                                      "==ERROR== ERR_NVGPUCTRPERM - The user does not have "
                                                      "permission to access NVIDIA GPU Performance Counters\n"),
                                      &r),
                     TW_EUNAVAIL);
    assert_error_has("ncu wrote no CSV, it reported: ==ERROR== ERR_NVGPUCTRPERM");
    assert_int_equal(tw_dvfs_ncu_load(tw_test_file(0, "kernel,launches\nvectorAdd,1\n"), &r), TW_EPARSE);
    assert_error_has("no ncu CSV header");
    assert_int_equal(tw_dvfs_ncu_load(tw_test_file(0, ""), &r), TW_EEMPTY);
    /* a truncated last row */
    char *text = tw_test_slurp(NCU_RAW);
    assert_non_null(text);
    char *cut = strstr(text, "\"8,192\",\"0\",\"8,192\"");
    assert_non_null(cut);
    strcpy(cut, "\"8,1\n");
    assert_int_equal(tw_dvfs_ncu_load(tw_test_file(0, text), &r), TW_EPARSE);
    assert_error_has(":9: malformed quoting");
    free(text);
}

/* fuzz_ncu found it: a NUL byte made the raw-page reader loop forever */
static void test_ncu_nul_byte_refused(void **state)
{
    (void)state;
    static const char text[] = "==PROF== x\n\"ID\",\"Kernel Name\"\n\"0\",\"k\0\"\n";
    FILE *f = fmemopen((void *)text, sizeof text - 1, "r");
    assert_non_null(f);
    tw_ncu_report r;
    assert_int_equal(tw_dvfs_ncu_read(f, "nul.csv", &r), TW_EPARSE);
    assert_non_null(strstr(tw_last_error(), "nul.csv:3: NUL byte"));
    fclose(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_metrics),
        cmocka_unit_test(test_ncu_nul_byte_refused),
        cmocka_unit_test(test_raw_page_round_trip),
        cmocka_unit_test(test_details_page),
        cmocka_unit_test(test_missing_metric),
        cmocka_unit_test(test_kernel_not_profiled),
        cmocka_unit_test(test_other_launch),
        cmocka_unit_test(test_times_errors),
        cmocka_unit_test(test_no_ncu_csv),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
