/* Unit tests of the activity counters in the run file (src/runfile/runfile_pm.c):
 * the events file's pm_* lines imported into pm_devices and pm_samples, the
 * values packed as float32 and read back exactly (values chosen exact in
 * float32), a device's reason, the report's line, export's CSV, the samples
 * read back one by one (tw_run_pm_each), and bad
 * lines named by file and line. Expected values are the inputs themselves. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tw_test.h"

#include <sqlite3.h>

#include "core/error.h"
#include "runfile/runfile.h"
#include "runfile/runfile_pm.h"
#include "truewatt.h"

static void assert_ok(tw_status st)
{
    if (st != TW_OK) fail_msg("%s: %s", tw_strerror(st), tw_last_error());
}

#define HEADER "name,start_s,end_s,device,stream,kind,device_uuid\n"
#define UUID0 "GPU-11223344-5566-7788-99aa-bbccddeeff00"

static const char events[] =
    HEADER "\"interval_ns=1000000 metrics=a.sum,b.avg refused=c.max\",0.5,0.5,0,-1,pm_metrics," UUID0 "\n"
           "k,0.500000000,0.600000000,0,7,kernel," UUID0 "\n"
           "1000 0.25,0.501000000,0.502000000,0,-1,pm_sample," UUID0 "\n"
           "1001 -0.5,0.502000000,0.503000000,0,-1,pm_sample," UUID0 "\n"
           "16777216 3.5e+09,0.503000000,0.504000000,0,-1,pm_sample," UUID0 "\n"
           "samples=3 overflows=2 busy_s=0.0015,0.9,0.9,0,-1,pm_end," UUID0 "\n"
           "a second process refused,0.95,0.95,0,-1,pm_off," UUID0 "\n" /* does not replace the samples set up */
           "cuptiPmSamplingEnable: CUPTI_ERROR_INSUFFICIENT_PRIVILEGES (CUPTI error 35),0.7,0.7,1,-1,pm_off,"
           "GPU-c0de0001-0000-4000-8000-000000000001\n";

static tw_run *imported(const char *path, const char *text)
{
    tw_run *r = NULL;
    assert_ok(tw_run_create(path, &r));
    tw_run_tail t;
    tw_run_tail_init(&t);
    assert_ok(tw_run_import_events(r, tw_test_file(1, text), &t));
    return r;
}

/* What tw_run_pm_each handed over (at most 4 samples of 2 values). */
typedef struct got {
    double t0[4], t1[4];
    float v[8];
    size_t n, stop_after; /* stop_after: fail after this many (0: never) */
} got;

static tw_status collect(void *ctx, double t0_s, double t1_s, const float *values)
{
    got *g = ctx;
    if (g->stop_after && g->n == g->stop_after) return tw_fail(TW_EIO, "stopped");
    g->t0[g->n] = t0_s;
    g->t1[g->n] = t1_s;
    memcpy(g->v + 2 * g->n, values, 2 * sizeof *values);
    g->n++;
    return TW_OK;
}

static void test_import(void **state)
{
    (void)state;
    const char *path = tw_test_path(0, "pm.sqlite");
    tw_run *r = imported(path, events);
    tw_run_pm *v = NULL;
    size_t n = 0;
    assert_ok(tw_run_pms(r, &v, &n));
    assert_int_equal(n, 2);
    assert_int_equal(v[0].device, 0);
    assert_true(v[0].on);
    assert_string_equal(v[0].uuid, UUID0);
    assert_int_equal(v[0].interval_ns, 1000000);
    assert_string_equal(v[0].metrics, "a.sum,b.avg");
    assert_string_equal(v[0].refused, "c.max");
    assert_int_equal(v[0].samples, 3);
    assert_int_equal(v[0].first_ns, 501000000);
    assert_int_equal(v[0].last_ns, 504000000);
    assert_true(v[0].busy_s == 0.0015);
    assert_int_equal(v[0].overflows, 2);
    assert_int_equal(v[1].device, 1);
    assert_false(v[1].on);
    assert_int_equal(v[1].samples, 0);
    char line[2048];
    tw_run_pm_text(&v[0], line, sizeof line);
    /* 1.5 ms busy over the samples' 3 ms: 50 % */
    assert_string_equal(line, "3 samples every 1 ms (PM sampling: a.sum, b.avg); refused: c.max; decoding 50.00 % of "
                              "one core; 2 decodes found the hardware buffer overflowed (samples lost)");
    assert_true(isnan(v[1].busy_s));
    tw_run_pm_text(&v[1], line, sizeof line);
    assert_string_equal(line,
                        "not recorded (cuptiPmSamplingEnable: CUPTI_ERROR_INSUFFICIENT_PRIVILEGES (CUPTI error 35))");
    assert_ptr_equal(tw_run_pm_for(v, n, UUID0), &v[0]);
    assert_null(tw_run_pm_for(v, n, "GPU-ffffffff-0000-4000-8000-000000000001"));
    free(v);
    /* the samples read back for the estimator, one by one: spans in seconds, values as packed */
    got g = {0};
    assert_ok(tw_run_pm_each(r, 0, 2, collect, &g));
    assert_int_equal(g.n, 3);
    static const float want_v[6] = {1000, 0.25f, 1001, -0.5f, 16777216, 3.5e9f};
    for (size_t k = 0; k < 3; k++) {
        assert_true(fabs(g.t0[k] - (0.501 + 0.001 * (double)k)) < 1e-12);
        assert_true(fabs(g.t1[k] - g.t0[k] - 0.001) < 1e-12);
    }
    assert_memory_equal(g.v, want_v, sizeof want_v);
    /* another count of values than the samples hold: an error naming the run file */
    g.n = 0;
    assert_int_equal(tw_run_pm_each(r, 0, 3, collect, &g), TW_EPARSE);
    assert_non_null(strstr(tw_last_error(), path));
    assert_int_equal(g.n, 0);
    /* the callback's error stops the reading and is returned */
    g.stop_after = 1;
    assert_int_equal(tw_run_pm_each(r, 0, 2, collect, &g), TW_EIO);
    assert_int_equal(g.n, 1);
    /* a device without samples: none */
    g = (got){0};
    assert_ok(tw_run_pm_each(r, 1, 2, collect, &g));
    assert_int_equal(g.n, 0);
    /* the kernel went where kernels go */
    const char *csv = tw_test_path(2, "pm_samples.csv");
    size_t devices = 0;
    assert_ok(tw_run_export_pm(r, csv, &devices));
    assert_int_equal(devices, 2);
    assert_ok(tw_run_close(r));

    FILE *f = fopen(csv, "r");
    assert_non_null(f);
    char text[4096];
    size_t len = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[len] = '\0';
    assert_string_equal(text, "device,device_uuid,start_s,end_s,metric,value\n"
                              "0," UUID0 ",0.501000000,0.502000000,a.sum,1000\n"
                              "0," UUID0 ",0.501000000,0.502000000,b.avg,0.25\n"
                              "0," UUID0 ",0.502000000,0.503000000,a.sum,1001\n"
                              "0," UUID0 ",0.502000000,0.503000000,b.avg,-0.5\n"
                              "0," UUID0 ",0.503000000,0.504000000,a.sum,16777216\n"
                              "0," UUID0 ",0.503000000,0.504000000,b.avg,3.5e+09\n");

    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    sqlite3_stmt *s = NULL;
    assert_int_equal(sqlite3_prepare_v2(db, "SELECT count(*) FROM activities", -1, &s, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(s), SQLITE_ROW);
    assert_int_equal(sqlite3_column_int64(s, 0), 1);
    sqlite3_finalize(s);
    /* 8 bytes a sample: two float32, little-endian (1000.0f = 0x447a0000) */
    assert_int_equal(sqlite3_prepare_v2(db, "SELECT v FROM pm_samples ORDER BY start_ns LIMIT 1", -1, &s, NULL),
                     SQLITE_OK);
    assert_int_equal(sqlite3_step(s), SQLITE_ROW);
    assert_int_equal(sqlite3_column_bytes(s, 0), 8);
    const unsigned char *b = sqlite3_column_blob(s, 0);
    static const unsigned char want[8] = {0x00, 0x00, 0x7a, 0x44, 0x00, 0x00, 0x80, 0x3e};
    assert_memory_equal(b, want, 8);
    sqlite3_finalize(s);
    sqlite3_close(db);
}

/* What tw_run_pm_windows handed over (at most 4). */
typedef struct spans {
    double t0[4], t1[4];
    size_t n;
} spans;

static tw_status collect_window(void *ctx, double t0_s, double t1_s)
{
    spans *w = ctx;
    if (w->n == 4) return tw_fail(TW_EIO, "more than 4 windows");
    w->t0[w->n] = t0_s;
    w->t1[w->n++] = t1_s;
    return TW_OK;
}

/* pm_window lines (--activity-windows): per device, in order of start whatever the file's order;
 * none for another device or a run without them. */
static void test_windows(void **state)
{
    (void)state;
    tw_run *r = imported(tw_test_path(0, "windows.sqlite"),
                         HEADER "on,2.25,2.5,0,-1,pm_window," UUID0 "\n"
                                "on,0.5,0.75,0,-1,pm_window," UUID0 "\n"
                                "on,1.0,1.5,1,-1,pm_window,GPU-c0de0001-0000-4000-8000-000000000001\n");
    spans w = {0};
    assert_ok(tw_run_pm_windows(r, 0, collect_window, &w));
    assert_int_equal(w.n, 2);
    const double want[4] = {0.5, 0.75, 2.25, 2.5};
    for (size_t k = 0; k < 2; k++) {
        assert_true(fabs(w.t0[k] - want[2 * k]) < 1e-12);
        assert_true(fabs(w.t1[k] - want[2 * k + 1]) < 1e-12);
    }
    spans none = {0};
    assert_ok(tw_run_pm_windows(r, 5, collect_window, &none));
    assert_int_equal(none.n, 0);
    assert_ok(tw_run_close(r));
    r = imported(tw_test_path(0, "nowindows.sqlite"), events);
    assert_ok(tw_run_pm_windows(r, 0, collect_window, &none));
    assert_int_equal(none.n, 0);
    assert_ok(tw_run_close(r));
}

/* A run without activity counters: no tables, none read, no file exported. */
static void test_none(void **state)
{
    (void)state;
    tw_run *r = imported(tw_test_path(0, "none.sqlite"), HEADER "k,0.5,0.6,0,7,kernel," UUID0 "\n");
    tw_run_pm *v = (tw_run_pm *)&v;
    size_t n = 9;
    assert_ok(tw_run_pms(r, &v, &n));
    assert_int_equal(n, 0);
    assert_null(v);
    const char *csv = tw_test_path(2, "none.csv");
    size_t devices = 9;
    remove(csv);
    assert_ok(tw_run_export_pm(r, csv, &devices));
    assert_int_equal(devices, 0);
    assert_ok(tw_run_close(r));
    assert_null(fopen(csv, "r")); /* no file for a run that did not ask for counters */
}

/* A bad pm_* line is left out and counted, the file and line named; the lines after it are read. */
static void import_skips(const char *text, const char *needle)
{
    tw_run *r = NULL;
    assert_ok(tw_run_create(tw_test_path(0, "bad.sqlite"), &r));
    char with_good[1024];
    snprintf(with_good, sizeof with_good, "%sk,0.7,0.8,0,7,kernel," UUID0 "\n", text);
    const char *ev = tw_test_file(1, with_good);
    tw_run_tail t;
    tw_run_tail_init(&t);
    assert_ok(tw_run_import_events(r, ev, &t));
    if (t.skipped != 1 || !strstr(t.first_skipped, ev) || !strstr(t.first_skipped, needle))
        fail_msg("skipped %lu, '%s' lacks '%s' or '%s'", t.skipped, t.first_skipped, ev, needle);
    assert_int_equal(t.events, 1);
    tw_run_close(r);
}

static void test_bad_lines(void **state)
{
    (void)state;
    import_skips(HEADER "1 x 3,0.5,0.6,0,-1,pm_sample,\n", ":2: pm_sample: the name is not 1 to 64 finite numbers");
    import_skips(HEADER ",0.5,0.6,0,-1,pm_sample,\n", ":2: pm_sample: the name is not");
    import_skips(HEADER "1 inf,0.5,0.6,0,-1,pm_sample,\n", ":2: pm_sample: the name is not");
    import_skips(HEADER "interval_ns=0 metrics=a,0.5,0.5,0,-1,pm_metrics,\n", ":2: pm_metrics: interval_ns is not");
    import_skips(HEADER "interval_ns=5 metrics=,0.5,0.5,0,-1,pm_metrics,\n", ":2: pm_metrics: no metrics");
    import_skips(HEADER "x,0.5,0.5,0,-1,pm_frob,\n", ":2: unknown kind 'pm_frob'");
    import_skips(HEADER "1,0.5,0.6,zero,-1,pm_sample,\n", ":2: device 'zero' is not an integer");
    import_skips(HEADER "samples=1 overflows=x busy_s=1,0.5,0.5,0,-1,pm_end,\n", ":2: pm_end: busy_s or overflows");
    import_skips(HEADER "samples=1 overflows=0 busy_s=-1,0.5,0.5,0,-1,pm_end,\n", ":2: pm_end: busy_s or overflows");
    import_skips(HEADER "on,0.6,0.5,0,-1,pm_window,\n", ":2: event 'on' ends before it starts");
    import_skips(HEADER "on,0.5,0.5,0,-1,pm_window,\n", ":2: pm_window: its end is not after its start");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_import),
        cmocka_unit_test(test_none),
        cmocka_unit_test(test_bad_lines),
        cmocka_unit_test(test_windows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
