/* Unit tests of the run file (src/runfile/): written, closed, reopened and
 * read back; only updates stored as samples, yet every poll read back with
 * its held values; strings interned; nanoseconds exact after 3 days; the
 * events file tailed line by line; bad events named by file and line, events
 * read back by table and row; the trace reader on a run file. Expected values are the inputs themselves. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tw_test.h"

#include <sqlite3.h>

#include "runfile/runfile.h"
#include "trace/events_source.h"
#include "truewatt.h"

static void assert_ok(tw_status st)
{
    if (st != TW_OK) fail_msg("%s: %s", tw_strerror(st), tw_last_error());
}

/* One integer from an SQL query on the file (its own connection). */
static long long query_int(const char *path, const char *sql)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *s = NULL;
    assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK) fail_msg("%s: %s", sql, sqlite3_errmsg(db));
    assert_int_equal(sqlite3_step(s), SQLITE_ROW);
    long long v = sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);
    sqlite3_close(db);
    return v;
}

#define DAY_NS 86400000000000LL

/* The polls written: producer 0 reads A and B, producer 1 reads C. */
typedef struct poll {
    int producer;
    double t;
    double v[2], tv[2];
    uint8_t ok[2];
} poll;

static const poll polls[] = {
    {0, 0.010, {100, 5}, {0.010, 0.004}, {1, 1}}, /* first: both updates */
    {1, 0.020, {7, 0}, {0.020, 0}, {1, 0}},       /* first of C */
    {0, 0.060, {100, 5}, {0.060, 0.004}, {1, 1}}, /* same values, same own stamp of B: no update */
    {0, 0.110, {101, 5}, {0.110, 0.104}, {1, 1}}, /* A changed; B's own stamp moved: both updates */
    {0, 0.160, {101, 0}, {0.160, 0}, {1, 0}},     /* B absent: an update (to absent) */
    {1, 0.520, {7, 0}, {0.520, 0}, {1, 0}},       /* C unchanged */
    {0, 259200.000000001, {101, 6}, {259200.000000001, 259200.000000001}, {1, 1}}, /* 3 days + 1 ns */
};
#define NPOLLS (sizeof polls / sizeof polls[0])

static const char events_csv[] =
    "# provenance\n"
    "name,start_s,end_s,device,stream,kind,grid_x,grid_y,grid_z,block_x,block_y,block_z,correlation_id,device_uuid,"
    "mangled,domain,tid,depth\n"
    "gemm,1.000000000,1.600000000,0,7,kernel,8,1,1,256,1,1,2,GPU-0a0a0a0a-0000-4000-8000-00000000aa00,_Z4gemmv,,,\n"
    "\"f(int, float)\",2.000000000,2.300000000,0,7,kernel,1,1,1,32,1,1,3,,,,,\n"
    "gemm,259200.000000001,259200.000000002,0,7,kernel,8,1,1,256,1,1,4,GPU-0a0a0a0a-0000-4000-8000-00000000aa00,_"
    "Z4gemmv,,,\n"
    "gemm,3.0,3.5,0,8,kernel,8,1,1,256,1,1,5,,,,,\n"
    "memcpy HtoD 64 B,0.500000000,0.520000000,0,7,memcpy,,,,,,,1,,,,,\n"
    "step,0.900000000,2.400000000,-1,-1,nvtx,,,,,,,,,,,4242,1\n"
    "mark,0.950000000,0.960000000,-1,-1,nvtx,,,,,,,,,,mydomain,4242,\n";

static tw_run *create(const char *path)
{
    tw_run *r = NULL;
    assert_ok(tw_run_create(path, &r));
    return r;
}

static void write_run(const char *path, const char *events)
{
    tw_run *r = create(path);
    assert_ok(tw_run_set_text(r, "provenance", "command: test"));
    assert_ok(tw_run_set_int(r, "t0_mono_ns", 3 * DAY_NS + 1));
    assert_ok(tw_run_set_real(r, "spawn_s", 1.25));
    char *argv[] = {"app", "--flag", "a b", NULL};
    assert_ok(tw_run_set_command(r, argv));
    char *envp[] = {"A=1", "B=x=y", NULL};
    assert_ok(tw_run_set_environment(r, envp));
    tw_run_device d = {.index = 3, .uuid = "GPU-0a0a0a0a-0000-4000-8000-00000000aa00", .name = "Fake", .driver = "1.0"};
    d.fast_period_s = 0.05;
    d.power_limit_w = 700;
    d.buffer_poll_s = d.slow_period_s = d.slow_max_period_s = d.sampler_cpu_s = NAN;
    assert_ok(tw_run_put_device(r, &d));
    assert_ok(tw_run_set_profile(r, 3, 3, "sensor profile x.json", "{\"schema\": 1}"));
    int64_t id[3];
    assert_ok(tw_run_add_reading(r, 3, "a_w", TW_Q_POWER, 0, &id[0]));
    assert_ok(tw_run_add_reading(r, 3, "b_w", TW_Q_POWER, 0, &id[1]));
    assert_ok(tw_run_add_reading(r, 3, "c_j", TW_Q_ENERGY, 1, &id[2]));
    for (size_t i = 0; i < NPOLLS; i++) {
        const poll *p = &polls[i];
        const int64_t *ids = p->producer == 0 ? id : id + 2;
        assert_ok(tw_run_poll(r, p->producer, p->t, p->producer == 0 ? 2 : 1, ids, p->v, p->tv, p->ok));
    }
    tw_run_tail t;
    tw_run_tail_init(&t);
    assert_ok(tw_run_import_events(r, events, &t));
    assert_int_equal(t.events, 7);
    assert_ok(tw_run_close(r));
}

static void test_write_reopen(void **state)
{
    (void)state;
    const char *path = tw_test_path(0, "rt.sqlite");
    write_run(path, tw_test_file(1, events_csv));
    assert_true(tw_run_is_file(path));
    /* updates only: A 0.010, 0.110 (the 3-day poll repeats 101); B 0.010, 0.110, 0.160 (absent), 3 days; C once */
    assert_int_equal(query_int(path, "SELECT count(*) FROM samples"), 7);
    assert_int_equal(query_int(path, "SELECT count(*) FROM polls"), NPOLLS);
    assert_int_equal(query_int(path, "SELECT max(t_ns) FROM polls"), 3 * DAY_NS + 1);
    assert_int_equal(query_int(path, "SELECT count(*) FROM samples WHERE value IS NULL"), 1);
    /* interned: gemm (three launches), its mangled name and its UUID once each */
    assert_int_equal(query_int(path, "SELECT count(*) FROM strings WHERE value = 'gemm'"), 1);
    assert_int_equal(query_int(path, "SELECT count(*) FROM activities_named WHERE name = 'gemm'"), 3);
    /* its kind, names and configuration once per combination in activity_types: two for its three
     * launches (the third has no mangled name) */
    assert_int_equal(query_int(path, "SELECT count(*) FROM activity_types t JOIN strings s ON s.id = t.name "
                                     "WHERE s.value = 'gemm'"),
                     2);
    /* kernel, gemm, _Z4gemmv, GPU-..., f(int, float), memcpy, memcpy HtoD 64 B, step, "", mark, mydomain */
    assert_int_equal(query_int(path, "SELECT count(*) FROM strings"), 11);
    assert_int_equal(query_int(path, "SELECT start_ns FROM activities WHERE correlation_id = 4"), 3 * DAY_NS + 1);
    assert_int_equal(query_int(path, "SELECT duration_ns FROM activities WHERE correlation_id = 4"), 1);
    assert_int_equal(query_int(path, "SELECT end_ns FROM activities_named WHERE correlation_id = 4"), 3 * DAY_NS + 2);
    assert_int_equal(query_int(path, "SELECT count(*) FROM nvtx_ranges"), 2);

    tw_run *r = NULL;
    assert_ok(tw_run_open(path, &r));
    char *text = NULL;
    assert_ok(tw_run_get_text(r, "provenance", &text));
    assert_string_equal(text, "command: test");
    free(text);
    int64_t t0 = 0;
    assert_ok(tw_run_get_int(r, "t0_mono_ns", &t0));
    assert_int_equal(t0, 3 * DAY_NS + 1);
    assert_true(tw_run_get_real(r, "spawn_s") == 1.25);
    assert_true(isnan(tw_run_get_real(r, "no_such_key")));
    char **argv = NULL;
    assert_ok(tw_run_get_command(r, &argv));
    assert_string_equal(argv[0], "app");
    assert_string_equal(argv[2], "a b");
    assert_null(argv[3]);
    tw_run_free_strv(argv);
    tw_run_device *dev = NULL;
    size_t n = 0;
    assert_ok(tw_run_devices(r, &dev, &n));
    assert_int_equal(n, 1);
    assert_int_equal(dev[0].index, 3);
    assert_string_equal(dev[0].uuid, "GPU-0a0a0a0a-0000-4000-8000-00000000aa00");
    assert_true(dev[0].fast_period_s == 0.05 && isnan(dev[0].slow_period_s) && dev[0].power_limit_w == 700);
    assert_int_equal(dev[0].profile_status, 3);
    assert_string_equal(dev[0].profile_how, "sensor profile x.json");
    free(dev);
    char *prof = NULL;
    assert_ok(tw_run_get_profile(r, 3, &prof));
    assert_string_equal(prof, "{\"schema\": 1}");
    free(prof);

    tw_events *ev = NULL;
    assert_ok(tw_run_load_events(r, &ev));
    assert_int_equal(tw_events_count(ev), 7);
    const tw_event *last = tw_events_get(ev, 6); /* sorted by start: the 3-day launch */
    assert_string_equal(last->name, "gemm");
    assert_string_equal(last->mangled, "_Z4gemmv");
    assert_true(last->start_s == 259200.000000001 && last->end_s == 259200.000000002);
    const tw_event *step = tw_events_get(ev, 1);
    assert_string_equal(step->kind, "nvtx");
    assert_string_equal(step->domain, "");
    assert_int_equal(step->tid, 4242);
    assert_int_equal(step->depth, 1);
    assert_int_equal(step->device, -1);
    /* named in messages by their table's row (the 3-day launch was the third activity imported) */
    char where[600], want[600];
    tw_events_where(ev, 6, where, sizeof where);
    snprintf(want, sizeof want, "%s: activities row 3", path);
    assert_string_equal(where, want);
    tw_events_where(ev, 1, where, sizeof where);
    snprintf(want, sizeof want, "%s: nvtx_ranges row 1", path);
    assert_string_equal(where, want);
    tw_events_free(ev);

    /* the export writes the injection library's lines back, to the ns */
    const char *out = tw_test_path(2, "rt.events.csv");
    assert_ok(tw_run_export_events(r, out));
    char *csv = tw_test_slurp(out);
    assert_non_null(strstr(csv, "\ngemm,259200.000000001,259200.000000002,0,7,kernel,8,1,1,256,1,1,4,GPU-0a0a0a0a-"
                                "0000-4000-8000-00000000aa00,_Z4gemmv,,,\n"));
    assert_non_null(strstr(csv, "\n\"f(int, float)\",2.000000000,2.300000000,0,7,kernel,1,1,1,32,1,1,3,,,,,\n"));
    assert_non_null(strstr(csv, "\nmark,0.950000000,0.960000000,-1,-1,nvtx,,,,,,,,,,mydomain,4242,\n"));
    free(csv);
    assert_ok(tw_run_close(r));
}

static void check_feed(const char *events);

static tw_status count_one(void *ctx, const tw_event *e)
{
    (void)e;
    ++*(size_t *)ctx;
    return TW_OK;
}

/* The feed replays what tw_run_load_events loads, in its order, field by
 * field, with the same text addresses on every replay; a callback's status
 * stops the replay and is returned. */
typedef struct feed_check {
    const tw_events *want;
    size_t i, stop_at;
    const char *names[16];
    unsigned fields; /* what the replay asked for (TW_FEED_*): an activity's other fields unknown */
} feed_check;

static bool same_text(const char *a, const char *b) { return (!a && !b) || (a && b && strcmp(a, b) == 0); }

static tw_status check_one(void *ctx, const tw_event *e)
{
    feed_check *c = ctx;
    if (c->i == c->stop_at) return TW_EPARSE;
    tw_event w = *tw_events_get(c->want, c->i);
    if (strcmp(w.kind, "nvtx") != 0) { /* a range has every field */
        if (!(c->fields & TW_FEED_DEVICE)) {
            w.device = -1;
            w.device_uuid = NULL;
        }
        if (!(c->fields & TW_FEED_STREAM)) w.stream = -1;
    }
    assert_string_equal(e->name, w.name);
    assert_true(same_text(e->kind, w.kind) && same_text(e->device_uuid, w.device_uuid) &&
                same_text(e->mangled, w.mangled) && same_text(e->domain, w.domain));
    assert_true(e->start_s == w.start_s && e->end_s == w.end_s);
    assert_true(e->device == w.device && e->stream == w.stream && e->tid == w.tid && e->depth == w.depth);
    if (c->names[c->i]) assert_ptr_equal(c->names[c->i], e->name); /* the same address on a second replay */
    c->names[c->i++] = e->name;
    return TW_OK;
}

/* events_csv's activities as the injection library mostly writes them: in order of start */
static const char events_in_order_csv[] =
    "name,start_s,end_s,device,stream,kind,grid_x,grid_y,grid_z,block_x,block_y,block_z,correlation_id,device_uuid,"
    "mangled,domain,tid,depth\n"
    "memcpy HtoD 64 B,0.500000000,0.520000000,0,7,memcpy,,,,,,,1,,,,,\n"
    "gemm,1.000000000,1.600000000,0,7,kernel,8,1,1,256,1,1,2,GPU-0a0a0a0a-0000-4000-8000-00000000aa00,_Z4gemmv,,,\n"
    "\"f(int, float)\",2.000000000,2.300000000,0,7,kernel,1,1,1,32,1,1,3,,,,,\n"
    "gemm,3.0,3.5,0,8,kernel,8,1,1,256,1,1,5,,,,,\n"
    "gemm,259200.000000001,259200.000000002,0,7,kernel,8,1,1,256,1,1,4,GPU-0a0a0a0a-0000-4000-8000-00000000aa00,_"
    "Z4gemmv,,,\n"
    "step,0.900000000,2.400000000,-1,-1,nvtx,,,,,,,,,,,4242,1\n"
    "mark,0.950000000,0.960000000,-1,-1,nvtx,,,,,,,,,,mydomain,4242,\n";

/* both ways: rows stored out of order (SQLite sorts them) and in order (read as stored) */
static void test_feed(void **state)
{
    (void)state;
    for (int sorted = 0; sorted < 2; sorted++)
        check_feed(sorted ? events_in_order_csv : events_csv);
}
static void check_feed(const char *events)
{
    const char *path = tw_test_path(0, "feed.sqlite");
    write_run(path, tw_test_file(1, events));
    tw_run *r = NULL;
    assert_ok(tw_run_open(path, &r));
    tw_events *ev = NULL;
    assert_ok(tw_run_load_events(r, &ev));
    tw_run_feed *rf = NULL;
    tw_feed feed;
    assert_ok(tw_run_feed_open(r, &rf, &feed));
    assert_int_equal(feed.hint, 7);
    feed_check c = {.want = ev, .stop_at = SIZE_MAX, .fields = TW_FEED_ALL};
    for (int pass = 0; pass < 2; pass++) {
        c.i = 0;
        assert_ok(tw_feed_replay(&feed, check_one, &c));
        assert_int_equal(c.i, 7);
    }
    /* fewer fields asked for: the same events, the rest unknown (the events' devices are 0 and their streams 7
     * and 8, not -1: a field read that was not asked for, or not read that was, is seen) */
    static const unsigned some[] = {TW_FEED_SPAN, TW_FEED_DEVICE};
    for (size_t k = 0; k < sizeof some / sizeof *some; k++) {
        c.i = 0;
        c.fields = some[k];
        assert_ok(tw_feed_replay_fields(&feed, some[k], check_one, &c));
        assert_int_equal(c.i, 7);
    }
    c.fields = TW_FEED_ALL;
    c.i = 0;
    c.stop_at = 3;
    assert_int_equal(tw_feed_replay(&feed, check_one, &c), TW_EPARSE);
    assert_int_equal(c.i, 3);
    tw_run_feed_free(rf);
    tw_events_free(ev);
    assert_ok(tw_run_close(r));
}

/* An activity whose type is gone: every replay, whatever fields it reads, names its row. */
static void test_feed_bad_type(void **state)
{
    (void)state;
    const char *path = tw_test_path(0, "badtype.sqlite");
    write_run(path, tw_test_file(1, events_in_order_csv));
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, "UPDATE activities SET type = 999 WHERE rowid = 3", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
    tw_run *r = NULL;
    assert_ok(tw_run_open(path, &r));
    tw_run_feed *rf = NULL;
    tw_feed feed;
    assert_ok(tw_run_feed_open(r, &rf, &feed));
    static const unsigned fields[] = {TW_FEED_SPAN, TW_FEED_DEVICE, TW_FEED_ALL};
    for (size_t k = 0; k < sizeof fields / sizeof *fields; k++) {
        size_t n = 0;
        assert_int_equal(tw_feed_replay_fields(&feed, fields[k], count_one, &n), TW_EPARSE);
        assert_non_null(strstr(tw_last_error(), "activities row 3: type 999 has no kind or name"));
    }
    tw_run_feed_free(rf);
    assert_ok(tw_run_close(r));
}

/* Starts in order through a replay. */
static tw_status starts_in_order(void *ctx, const tw_event *e)
{
    double *last = ctx;
    if (e->start_s < *last) fail_msg("replay: '%s' at %.9f after %.9f", e->name, e->start_s, *last);
    *last = e->start_s;
    return TW_OK;
}

static void replay_in_order(const char *path)
{
    tw_run *r = NULL;
    assert_ok(tw_run_open(path, &r));
    tw_run_feed *rf = NULL;
    tw_feed feed;
    assert_ok(tw_run_feed_open(r, &rf, &feed));
    double last = -INFINITY;
    assert_ok(tw_feed_replay(&feed, starts_in_order, &last));
    tw_run_feed_free(rf);
    assert_ok(tw_run_close(r));
}

/* The file says whether its activities and NVTX ranges came in order of
 * start (a replay then skips a pass over them to find out): events_csv's
 * activities did not (3.0 after 259200), its ranges did; the in-order file's
 * both did. Events appended by a handle that did not make the file leave it
 * unknown (the key gone): the replay looks, and sorts. */
static void test_order_facts(void **state)
{
    (void)state;
    const char *path = tw_test_path(0, "order.sqlite");
    write_run(path, tw_test_file(1, events_csv));
    assert_int_equal(query_int(path, "SELECT value FROM meta WHERE key = 'activities_by_start'"), 0);
    assert_int_equal(query_int(path, "SELECT value FROM meta WHERE key = 'nvtx_by_start'"), 1);
    replay_in_order(path);
    write_run(path, tw_test_file(1, events_in_order_csv));
    assert_int_equal(query_int(path, "SELECT value FROM meta WHERE key = 'activities_by_start'"), 1);
    assert_int_equal(query_int(path, "SELECT value FROM meta WHERE key = 'nvtx_by_start'"), 1);
    tw_run *r = NULL;
    assert_ok(tw_run_open(path, &r));
    tw_run_tail t;
    tw_run_tail_init(&t);
    assert_ok(tw_run_import_events(r, tw_test_file(2, "name,start_s,end_s,kind\nearly,0.1,0.2,kernel\n"), &t));
    assert_ok(tw_run_close(r));
    assert_int_equal(query_int(path, "SELECT count(*) FROM meta WHERE key IN ('activities_by_start', 'nvtx_by_start')"),
                     1);
    replay_in_order(path);
}

/* Every poll read back, each reading held from its last update. */
static void test_rows(void **state)
{
    (void)state;
    const char *path = tw_test_path(0, "rows.sqlite");
    write_run(path, tw_test_file(1, events_csv));
    tw_trace_reader *tr = NULL;
    assert_ok(tw_trace_reader_open(path, &tr));
    assert_int_equal(tw_trace_reader_nreadings(tr), 3);
    size_t idx = 9;
    assert_ok(tw_trace_reader_find(tr, "c_j", &idx));
    assert_int_equal(idx, 2);
    assert_int_equal(tw_trace_reader_reading(tr, 2)->quantity, TW_Q_ENERGY);
    for (int pass = 0; pass < 2; pass++) { /* and again after a rewind */
        for (size_t i = 0; i < NPOLLS; i++) {
            const poll *p = &polls[i];
            tw_row row;
            bool eof = true;
            assert_ok(tw_trace_reader_next(tr, &row, &eof));
            assert_false(eof);
            assert_true(row.t_s == p->t);
            for (size_t k = 0; k < 3; k++) {
                bool mine = (p->producer == 0) == (k < 2);
                size_t j = p->producer == 0 ? k : 0;
                bool valid = mine && p->ok[j];
                assert_int_equal(row.valid[k], valid);
                if (!valid) continue;
                assert_true(row.value[k] == p->v[j]);
                assert_true(row.t_value_s[k] == p->tv[j]);
            }
        }
        tw_row row;
        bool eof = false;
        assert_ok(tw_trace_reader_next(tr, &row, &eof));
        assert_true(eof);
        assert_ok(tw_trace_reader_rewind(tr));
    }
    tw_trace_reader_close(tr);
}

/* Lines still being written are left for the next call. */
static void test_tail(void **state)
{
    (void)state;
    const char *path = tw_test_path(0, "tail.sqlite");
    const char *ev = tw_test_path(1, "tail.events.csv");
    remove(ev);
    tw_run *r = create(path);
    tw_run_tail t;
    tw_run_tail_init(&t);
    assert_ok(tw_run_import_events(r, ev, &t)); /* not there yet */
    assert_int_equal(t.events, 0);
    FILE *f = fopen(ev, "w");
    fputs("name,start_s,end_s,device,stream,kind\nk1,1.0,1.5,0,7,kernel\nk2,2.0,", f);
    fflush(f);
    assert_ok(tw_run_import_events(r, ev, &t));
    assert_int_equal(t.events, 1);
    fputs("2.5,0,7,kernel\n", f);
    fclose(f);
    assert_ok(tw_run_import_events(r, ev, &t));
    assert_int_equal(t.events, 2);
    assert_ok(tw_run_import_events(r, ev, &t));
    assert_int_equal(t.events, 2);
    assert_ok(tw_run_close(r));
    assert_int_equal(query_int(path, "SELECT count(*) FROM activities"), 2);
}

/* A header that cannot be read stops the import (TW_EPARSE, the file and line named). */
static void import_fails(const char *text, const char *needle)
{
    const char *path = tw_test_path(0, "bad.sqlite");
    const char *ev = tw_test_file(1, text);
    tw_run *r = create(path);
    tw_run_tail t;
    tw_run_tail_init(&t);
    tw_status st = tw_run_import_events(r, ev, &t);
    if (st != TW_EPARSE || !strstr(tw_last_error(), ev) || !strstr(tw_last_error(), needle))
        fail_msg("status %d, '%s' lacks '%s' or '%s'", st, tw_last_error(), ev, needle);
    tw_run_close(r);
}

/* A line after the header that cannot be read is left out and counted, the
 * file and line named, and the lines after it are imported (the good line
 * appended here: 4 fields, the header's first 4 columns). */
static void import_skips(const char *text, const char *needle)
{
    const char *path = tw_test_path(0, "bad.sqlite");
    char with_good[512];
    snprintf(with_good, sizeof with_good, "%sgood,3.0,4.0,kernel%s\n", text,
             strstr(text, "device_uuid") ? ","
             : strstr(text, ",device\n") ? ",0"
                                         : "");
    const char *ev = tw_test_file(1, with_good);
    tw_run *r = create(path);
    tw_run_tail t;
    tw_run_tail_init(&t);
    assert_ok(tw_run_import_events(r, ev, &t));
    if (t.skipped != 1 || !strstr(t.first_skipped, ev) || !strstr(t.first_skipped, needle))
        fail_msg("skipped %lu, '%s' lacks '%s' or '%s'", t.skipped, t.first_skipped, ev, needle);
    assert_int_equal(t.events, 1); /* the good line after it */
    tw_run_close(r);
}

static void test_bad_events(void **state)
{
    (void)state;
    import_skips("name,start_s,end_s,kind\nk,1.0,x,kernel\n", ":2: end_s 'x' is not seconds");
    import_skips("name,start_s,end_s,kind\nk,1.0000000001,2,kernel\n", ":2: start_s '1.0000000001' is not seconds");
    import_skips("name,start_s,end_s,kind\nk,2.0,1.0,kernel\n", ":2: event 'k' ends before it starts");
    import_skips("name,start_s,end_s,kind\nk,1.0,2.0\n", ":2: expected 4 fields, found 3");
    import_fails("name,start_s,kind\n", ":1: the header has no column end_s");
    import_skips("name,start_s,end_s,kind,device\nk,1,2,kernel,zero\n", ":2: device 'zero' is not an integer");
    import_skips("name,start_s,end_s,kind,device_uuid\nk,1,2,kernel,XYZ\n", ":2: device_uuid 'XYZ' is not a GPU UUID");
}

static void test_not_a_run(void **state)
{
    (void)state;
    const char *csv = tw_test_file(0, "t_s,power_w\n0,1\n");
    tw_run *r = (tw_run *)&r;
    tw_status st = tw_run_open(csv, &r);
    assert_int_equal(st, TW_EPARSE);
    assert_non_null(strstr(tw_last_error(), "not a run file"));
    assert_null(r);
    assert_false(tw_run_is_file(csv));
    assert_int_equal(tw_run_open(tw_test_path(1, "none.sqlite"), &r), TW_EIO);
    /* a SQLite database that is not a run file */
    const char *other = tw_test_path(2, "other.sqlite");
    remove(other);
    sqlite3 *db = NULL;
    sqlite3_open(other, &db);
    sqlite3_exec(db, "CREATE TABLE x(y)", NULL, NULL, NULL);
    sqlite3_close(db);
    assert_int_equal(tw_run_open(other, &r), TW_EPARSE);
    assert_non_null(strstr(tw_last_error(), "not a truewatt run file"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_write_reopen),  cmocka_unit_test(test_rows),        cmocka_unit_test(test_tail),
        cmocka_unit_test(test_bad_events),    cmocka_unit_test(test_not_a_run),   cmocka_unit_test(test_feed),
        cmocka_unit_test(test_feed_bad_type), cmocka_unit_test(test_order_facts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
