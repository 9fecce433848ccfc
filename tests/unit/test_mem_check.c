/* Unit tests of the memory calibration's counter checks (src/bench/mem_check.c):
 * a manifest as `truewatt mem counters` writes it and an ncu report built by
 * hand (launches 0 and N of each configuration, the warm-up's counts in both)
 * give one row per configuration; an ideal GPU passes on every level and
 * operation; a target level that served half the accesses, or counted
 * sectors 10 % off Eq. 7, fail with their reason, 4 % off still passes; a
 * report with another number of launches, or a launch whose block or grid is
 * not the manifest's, is an error; a malformed manifest too. Then
 * tw_mem_check_apply marks the calibration's rows and the lower bounds leave
 * the failed ones out. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tw_test.h"

#include "truewatt.h"
#include "bench/mem_check.h"

#define NMETRICS 10
#define MAX_CFG 8
#define ITERS 4
#define WARMUP 1000.0 /* every counter's count outside the measurement loop */

static void assert_ok(tw_status st)
{
    if (st != TW_OK) fail_msg("%s: %s", tw_strerror(st), tw_last_error());
}

static void assert_has(const char *text, const char *part)
{
    if (!strstr(text, part)) fail_msg("\"%s\" lacks \"%s\"", text, part);
}

/* The index of a metric in tw_mem_check_metrics' order. */
static int mi(const char *name)
{
    size_t n;
    const char *const *m = tw_mem_check_metrics(&n);
    for (size_t i = 0; i < n; i++)
        if (!strcmp(m[i], name)) return (int)i;
    fail_msg("no metric %s", name);
    return -1;
}

typedef struct cfg {
    tw_chase_op op;
    tw_mem_level level;
    unsigned threads, blocks;
    double accesses, bytes; /* of the measurement loop at ITERS iterations */
    double count_scale;     /* the target level's counted sectors / Eq. 7's */
    double hit;             /* the target level's share */
} cfg;

typedef struct fixture {
    cfg c[MAX_CFG];
    size_t n;
    double values[2 * MAX_CFG][NMETRICS];
    char names[2 * MAX_CFG][16];
    tw_ncu_launch launches[2 * MAX_CFG];
    tw_ncu_report rep;
    const char *manifest;
} fixture;

static void add(fixture *f, tw_chase_op op, tw_mem_level level, unsigned threads, double accesses)
{
    assert_true(f->n < MAX_CFG);
    f->c[f->n++] = (cfg){op, level, threads, 264, accesses, accesses * 32, 1.0, 1.0};
}

/* What an ideal GPU counts in the measurement loop of c (as tests/fakes/fake_ncu.py). */
static void loop_counts(const cfg *c, double *v)
{
    bool st = c->op == TW_CHASE_STORE;
    double a = c->accesses, counted = a * c->count_scale;
    switch (c->level) {
    case TW_MEM_SHARED:
        v[mi(st ? "sm__sass_data_bytes_mem_shared_op_st.sum" : "sm__sass_data_bytes_mem_shared_op_ld.sum")] +=
            c->bytes * c->count_scale;
        break;
    case TW_MEM_L1:
        v[mi("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum")] += counted;
        v[mi("l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum")] += counted * c->hit;
        break;
    case TW_MEM_L2:
        if (st) {
            v[mi("lts__t_sectors_srcunit_tex_op_write.sum")] += counted;
            v[mi("lts__t_sectors_srcunit_tex_op_write_lookup_hit.sum")] += counted * c->hit;
        } else {
            v[mi("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum")] += a;
            v[mi("lts__t_sectors_srcunit_tex_op_read.sum")] += counted;
            v[mi("lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum")] += counted * c->hit;
        }
        break;
    default: /* DRAM's share of the L2's sectors: the L2 saw a / hit sectors, DRAM served a */
        if (st) {
            v[mi("lts__t_sectors_srcunit_tex_op_write.sum")] += a / c->hit;
            v[mi("dram__sectors_write.sum")] += counted;
        } else {
            v[mi("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum")] += a;
            v[mi("lts__t_sectors_srcunit_tex_op_read.sum")] += a / c->hit;
            v[mi("dram__sectors_read.sum")] += counted;
        }
        break;
    }
}

/* The manifest file and the report of f's configurations, in order. */
static void build(fixture *f)
{
    size_t n;
    tw_mem_check_metrics(&n);
    assert_int_equal(n, NMETRICS);
    f->manifest = tw_test_path(0, "manifest.csv");
    FILE *m = fopen(f->manifest, "w");
    assert_non_null(m);
    fprintf(m, "%s\n", tw_mem_manifest_header());
    for (size_t i = 0; i < f->n; i++) {
        const cfg *c = &f->c[i];
        for (int k = 0; k < 2; k++) {
            size_t li = 2 * i + (size_t)k;
            fprintf(m, "%zu,%s,%s,%u,%u,32768,%d,%.17g,%.17g\n", li, tw_chase_op_name(c->op),
                    tw_mem_level_name(c->level), c->threads, c->blocks, k ? ITERS : 0, k ? c->accesses : 0.0,
                    k ? c->bytes : 0.0);
            for (int j = 0; j < NMETRICS; j++)
                f->values[li][j] = WARMUP;
            if (k) loop_counts(c, f->values[li]);
            snprintf(f->names[li], sizeof f->names[li], "tw_chase");
            f->launches[li] = (tw_ncu_launch){.pid = 4242,
                                              .id = (long)li,
                                              .name = f->names[li],
                                              .block = {c->threads, 1, 1},
                                              .grid = {c->blocks, 1, 1},
                                              .values = f->values[li]};
        }
    }
    assert_int_equal(fclose(m), 0);
    memset(&f->rep, 0, sizeof f->rep);
    f->rep.launches = f->launches;
    f->rep.n = 2 * f->n;
    f->rep.nmetrics = NMETRICS;
}

static void all_levels(fixture *f)
{
    memset(f, 0, sizeof *f);
    add(f, TW_CHASE_LOAD, TW_MEM_SHARED, 32, 131072);
    add(f, TW_CHASE_STORE, TW_MEM_SHARED, 1024, 131072);
    add(f, TW_CHASE_LOAD, TW_MEM_L1, 32, 540672);
    add(f, TW_CHASE_LOAD, TW_MEM_L2, 1024, 1081344);
    add(f, TW_CHASE_STORE, TW_MEM_L2, 32, 1081344);
    add(f, TW_CHASE_LOAD_DIV, TW_MEM_L2, 32, 1081344);
    add(f, TW_CHASE_LOAD, TW_MEM_DRAM, 32, 69206016);
    add(f, TW_CHASE_STORE, TW_MEM_DRAM, 1024, 69206016);
}

static void test_all_pass(void **state)
{
    (void)state;
    fixture f;
    all_levels(&f);
    build(&f);
    tw_mem_check_row *rows = NULL;
    size_t n = 0;
    assert_ok(tw_mem_check_evaluate(f.manifest, &f.rep, &rows, &n));
    assert_int_equal(n, f.n);
    for (size_t i = 0; i < n; i++) {
        const tw_mem_check_row *w = &rows[i];
        const cfg *c = &f.c[i];
        if (!w->pass)
            fail_msg("row %zu (%s %s) failed: %s", i, tw_chase_op_name(c->op), tw_mem_level_name(c->level), w->why);
        assert_string_equal(w->why, "");
        assert_int_equal(w->op, c->op);
        assert_int_equal(w->level, c->level);
        assert_int_equal(w->threads, c->threads);
        assert_int_equal(w->blocks, c->blocks);
        bool shared = c->level == TW_MEM_SHARED;
        assert_string_equal(w->unit, shared ? "bytes" : "sectors");
        assert_true(fabs(w->expected - (shared ? c->bytes : c->accesses)) < 1e-6);
        assert_true(fabs(w->counted - w->expected) < 1e-6);
        if (shared)
            assert_true(isnan(w->hit));
        else
            assert_true(fabs(w->hit - 1.0) < 1e-12);
    }
    assert_string_equal(rows[0].counter, "sm__sass_data_bytes_mem_shared_op_ld.sum");
    assert_string_equal(rows[1].counter, "sm__sass_data_bytes_mem_shared_op_st.sum");
    assert_string_equal(rows[2].counter, "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum");
    assert_string_equal(rows[3].counter, "lts__t_sectors_srcunit_tex_op_read.sum");
    assert_string_equal(rows[4].counter, "lts__t_sectors_srcunit_tex_op_write.sum");
    assert_string_equal(rows[5].counter, "lts__t_sectors_srcunit_tex_op_read.sum");
    assert_string_equal(rows[6].counter, "dram__sectors_read.sum");
    assert_string_equal(rows[7].counter, "dram__sectors_write.sum");
    free(rows);
    remove(f.manifest);
}

static void test_low_hit_rate(void **state)
{
    (void)state;
    fixture f;
    all_levels(&f);
    f.c[3].hit = 0.5;  /* load l2 */
    f.c[6].hit = 0.5;  /* load dram: the L2 saw twice the sectors DRAM served */
    f.c[2].hit = 0.96; /* load l1: above 95 % */
    build(&f);
    tw_mem_check_row *rows = NULL;
    size_t n = 0;
    assert_ok(tw_mem_check_evaluate(f.manifest, &f.rep, &rows, &n));
    assert_int_equal(n, f.n);
    for (size_t i = 0; i < n; i++)
        if ((i == 3 || i == 6) == rows[i].pass) fail_msg("row %zu: pass %d (%s)", i, rows[i].pass, rows[i].why);
    assert_true(fabs(rows[3].hit - 0.5) < 1e-9);
    assert_true(fabs(rows[2].hit - 0.96) < 1e-9);
    assert_has(rows[3].why, "the l2 served 50.0 % of the accesses");
    assert_has(rows[3].why, "95 %");
    assert_has(rows[6].why, "the dram served 50.0 %");
    free(rows);
    remove(f.manifest);
}

static void test_count_off(void **state)
{
    (void)state;
    fixture f;
    all_levels(&f);
    f.c[2].count_scale = 0.9;  /* load l1: 10 % too few */
    f.c[4].count_scale = 1.1;  /* store l2: 10 % too many */
    f.c[0].count_scale = 0.9;  /* load shared: 10 % too few bytes */
    f.c[7].count_scale = 1.04; /* store dram: within 5 % */
    build(&f);
    tw_mem_check_row *rows = NULL;
    size_t n = 0;
    assert_ok(tw_mem_check_evaluate(f.manifest, &f.rep, &rows, &n));
    assert_int_equal(n, f.n);
    for (size_t i = 0; i < n; i++)
        if ((i == 0 || i == 2 || i == 4) == rows[i].pass)
            fail_msg("row %zu: pass %d (%s)", i, rows[i].pass, rows[i].why);
    assert_has(rows[2].why, "Eq. 7");
    assert_has(rows[2].why, "-10.0 %");
    assert_has(rows[2].why, "sectors");
    assert_has(rows[4].why, "Eq. 7");
    assert_has(rows[4].why, "+10.0 %");
    assert_has(rows[0].why, "Eq. 7");
    assert_has(rows[0].why, "bytes");
    assert_true(fabs(rows[7].counted / rows[7].expected - 1.04) < 1e-9);
    free(rows);
    remove(f.manifest);
}

static void test_launch_count(void **state)
{
    (void)state;
    fixture f;
    all_levels(&f);
    build(&f);
    tw_mem_check_row *rows = NULL;
    size_t n = 0;
    f.rep.n = 2 * f.n - 1; /* ncu missed the last launch */
    assert_int_equal(tw_mem_check_evaluate(f.manifest, &f.rep, &rows, &n), TW_EPARSE);
    assert_has(tw_last_error(), "ncu profiled 15 chase launches, the manifest lists 16");
    assert_null(rows);
    snprintf(f.rep.message, sizeof f.rep.message, "==ERROR== something");
    f.rep.n = 0;
    assert_int_equal(tw_mem_check_evaluate(f.manifest, &f.rep, &rows, &n), TW_EPARSE);
    assert_has(tw_last_error(), "profiled 0");
    assert_has(tw_last_error(), "==ERROR== something");
    assert_null(rows);
    remove(f.manifest);
}

static void test_launch_differs(void **state)
{
    (void)state;
    fixture f;
    all_levels(&f);
    build(&f);
    tw_mem_check_row *rows = NULL;
    size_t n = 0;
    f.launches[5].block[0] = 64; /* load l1, 32 threads: its launch N */
    assert_int_equal(tw_mem_check_evaluate(f.manifest, &f.rep, &rows, &n), TW_EPARSE);
    assert_has(tw_last_error(), "differ");
    assert_has(tw_last_error(), "launch 5");
    assert_has(tw_last_error(), "block 64");
    assert_has(tw_last_error(), "load l1");
    assert_null(rows);
    f.launches[5].block[0] = 32;
    f.launches[0].grid[0] = 132; /* the grid too */
    assert_int_equal(tw_mem_check_evaluate(f.manifest, &f.rep, &rows, &n), TW_EPARSE);
    assert_has(tw_last_error(), "differ");
    assert_has(tw_last_error(), "grid 132");
    assert_null(rows);
    remove(f.manifest);
}

static void test_bad_input(void **state)
{
    (void)state;
    fixture f;
    all_levels(&f);
    build(&f);
    tw_mem_check_row *rows = NULL;
    size_t n = 0;
    assert_int_equal(tw_mem_check_evaluate(NULL, &f.rep, &rows, &n), TW_EINVAL);
    assert_int_equal(tw_mem_check_evaluate(f.manifest, NULL, &rows, &n), TW_EINVAL);
    f.rep.nmetrics = 9;
    assert_int_equal(tw_mem_check_evaluate(f.manifest, &f.rep, &rows, &n), TW_EINVAL);
    f.rep.nmetrics = NMETRICS;
    assert_int_equal(tw_mem_check_evaluate("/nonexistent/manifest.csv", &f.rep, &rows, &n), TW_EIO);
    assert_has(tw_last_error(), "/nonexistent/manifest.csv");

    const char *p = tw_test_file(1, "op,level\nload,l1\n");
    assert_int_equal(tw_mem_check_evaluate(p, &f.rep, &rows, &n), TW_EPARSE);
    assert_has(tw_last_error(), "not a truewatt mem manifest");

    char text[512];
    snprintf(text, sizeof text, "%s\n0,load,l1,32,264,32768,0,0,0\n", tw_mem_manifest_header());
    p = tw_test_file(1, text); /* one launch: not a pair */
    f.rep.n = 1;
    assert_int_equal(tw_mem_check_evaluate(p, &f.rep, &rows, &n), TW_EPARSE);
    assert_has(tw_last_error(), "expected pairs");

    snprintf(text, sizeof text, "%s\n0,load,l3,32,264,32768,0,0,0\n1,load,l3,32,264,32768,4,1,32\n",
             tw_mem_manifest_header());
    p = tw_test_file(1, text);
    f.rep.n = 2;
    assert_int_equal(tw_mem_check_evaluate(p, &f.rep, &rows, &n), TW_EPARSE);
    assert_has(tw_last_error(), "l3");

    snprintf(text, sizeof text, "%s\n0,load,l1,32\n", tw_mem_manifest_header());
    p = tw_test_file(1, text);
    assert_int_equal(tw_mem_check_evaluate(p, &f.rep, &rows, &n), TW_EPARSE);
    assert_has(tw_last_error(), ":2:");

    snprintf(text, sizeof text, "%s\n", tw_mem_manifest_header());
    p = tw_test_file(1, text); /* no launches at all */
    f.rep.n = 0;
    assert_int_equal(tw_mem_check_evaluate(p, &f.rep, &rows, &n), TW_EPARSE);
    assert_null(rows);
    remove(p);
    remove(f.manifest);
}

/* ---------------------------------------------------------------- apply */

static tw_mem_row row(tw_chase_op op, tw_mem_level level, unsigned threads, double eps_pj)
{
    tw_mem_row w;
    memset(&w, 0, sizeof w);
    w.op = op;
    w.level = level;
    w.threads = threads;
    w.blocks = 264;
    w.eps_j = eps_pj * 1e-12;
    w.eps_sd_j = w.truth_j = w.div_j = w.div_sd_j = NAN;
    w.check = TW_MEM_CHECK_PASS; /* apply must reset what it has no check for */
    return w;
}

static tw_mem_check_row check(tw_chase_op op, tw_mem_level level, unsigned threads, bool pass)
{
    tw_mem_check_row c;
    memset(&c, 0, sizeof c);
    c.op = op;
    c.level = level;
    c.threads = threads;
    c.blocks = 264;
    c.pass = pass;
    c.hit = NAN;
    if (!pass) snprintf(c.why, sizeof c.why, "the l2 served 50.0 %% of the accesses");
    return c;
}

static void test_apply(void **state)
{
    (void)state;
    tw_mem_row rows[] = {
        row(TW_CHASE_LOAD, TW_MEM_L1, 32, 290),    row(TW_CHASE_LOAD, TW_MEM_L1, 1024, 113),
        row(TW_CHASE_LOAD, TW_MEM_L2, 32, 1000),   row(TW_CHASE_LOAD, TW_MEM_L2, 1024, 388),
        row(TW_CHASE_STORE, TW_MEM_L2, 32, 1300),  row(TW_CHASE_STORE, TW_MEM_L2, 1024, 500),
        row(TW_CHASE_LOAD, TW_MEM_DRAM, 32, 3000), row(TW_CHASE_LOAD, TW_MEM_DRAM, 1024, 2100),
    };
    tw_mem_results r;
    memset(&r, 0, sizeof r);
    r.rows = rows;
    r.n = sizeof rows / sizeof rows[0];
    tw_mem_lower_bounds(&r); /* before any check: the least of each sweep */
    assert_true(fabs(r.lower_j[TW_CHASE_LOAD][TW_MEM_L2] - 388e-12) < 1e-18);
    assert_int_equal(r.lower_threads[TW_CHASE_LOAD][TW_MEM_L2], 1024);

    const tw_mem_check_row checks[] = {
        check(TW_CHASE_LOAD, TW_MEM_L1, 32, true),    check(TW_CHASE_LOAD, TW_MEM_L1, 1024, true),
        check(TW_CHASE_LOAD, TW_MEM_L2, 32, true),    check(TW_CHASE_LOAD, TW_MEM_L2, 1024, false),
        check(TW_CHASE_STORE, TW_MEM_L2, 32, false),  check(TW_CHASE_STORE, TW_MEM_L2, 1024, false),
        check(TW_CHASE_LOAD, TW_MEM_DRAM, 64, false), /* no such row: matches nothing */
    };
    tw_mem_check_apply(checks, sizeof checks / sizeof checks[0], &r);
    const tw_mem_check want[] = {TW_MEM_CHECK_PASS, TW_MEM_CHECK_PASS, TW_MEM_CHECK_PASS, TW_MEM_CHECK_FAIL,
                                 TW_MEM_CHECK_FAIL, TW_MEM_CHECK_FAIL, TW_MEM_UNCHECKED,  TW_MEM_UNCHECKED};
    for (size_t i = 0; i < r.n; i++)
        if (rows[i].check != want[i]) fail_msg("row %zu: check %d, expected %d", i, rows[i].check, want[i]);

    /* l1: both passed, the least; l2 loads: 1024 failed, so 32 threads' */
    assert_true(fabs(r.lower_j[TW_CHASE_LOAD][TW_MEM_L1] - 113e-12) < 1e-18);
    assert_int_equal(r.lower_threads[TW_CHASE_LOAD][TW_MEM_L1], 1024);
    assert_true(fabs(r.lower_j[TW_CHASE_LOAD][TW_MEM_L2] - 1000e-12) < 1e-18);
    assert_int_equal(r.lower_threads[TW_CHASE_LOAD][TW_MEM_L2], 32);
    /* l2 stores: every row failed, no bound */
    assert_true(isnan(r.lower_j[TW_CHASE_STORE][TW_MEM_L2]));
    assert_int_equal(r.lower_threads[TW_CHASE_STORE][TW_MEM_L2], 0);
    /* dram: unchecked rows count */
    assert_true(fabs(r.lower_j[TW_CHASE_LOAD][TW_MEM_DRAM] - 2100e-12) < 1e-18);
    assert_int_equal(r.lower_threads[TW_CHASE_LOAD][TW_MEM_DRAM], 1024);
    /* not measured */
    assert_true(isnan(r.lower_j[TW_CHASE_LOAD][TW_MEM_SHARED]));
    assert_true(isnan(r.lower_j[TW_CHASE_LOAD_DIV][TW_MEM_L2]));

    /* no checks at all: every row unchecked, every row counts */
    tw_mem_check_apply(NULL, 0, &r);
    for (size_t i = 0; i < r.n; i++)
        assert_int_equal(rows[i].check, TW_MEM_UNCHECKED);
    assert_true(fabs(r.lower_j[TW_CHASE_LOAD][TW_MEM_L2] - 388e-12) < 1e-18);
    assert_true(fabs(r.lower_j[TW_CHASE_STORE][TW_MEM_L2] - 500e-12) < 1e-18);
}

/* The whole path: evaluate's rows applied to the calibration's. */
static void test_evaluate_then_apply(void **state)
{
    (void)state;
    fixture f;
    memset(&f, 0, sizeof f);
    add(&f, TW_CHASE_LOAD, TW_MEM_L2, 32, 1081344);
    add(&f, TW_CHASE_LOAD, TW_MEM_L2, 1024, 1081344);
    f.c[1].hit = 0.5;
    build(&f);
    tw_mem_check_row *checks = NULL;
    size_t n = 0;
    assert_ok(tw_mem_check_evaluate(f.manifest, &f.rep, &checks, &n));
    assert_int_equal(n, 2);
    tw_mem_row rows[] = {row(TW_CHASE_LOAD, TW_MEM_L2, 32, 1000), row(TW_CHASE_LOAD, TW_MEM_L2, 1024, 388)};
    tw_mem_results r;
    memset(&r, 0, sizeof r);
    r.rows = rows;
    r.n = 2;
    tw_mem_check_apply(checks, n, &r);
    assert_int_equal(rows[0].check, TW_MEM_CHECK_PASS);
    assert_int_equal(rows[1].check, TW_MEM_CHECK_FAIL);
    assert_int_equal(r.lower_threads[TW_CHASE_LOAD][TW_MEM_L2], 32);
    free(checks);
    remove(f.manifest);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_all_pass),       cmocka_unit_test(test_low_hit_rate),
        cmocka_unit_test(test_count_off),      cmocka_unit_test(test_launch_count),
        cmocka_unit_test(test_launch_differs), cmocka_unit_test(test_bad_input),
        cmocka_unit_test(test_apply),          cmocka_unit_test(test_evaluate_then_apply)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
