/* Unit tests of events (src/trace/events.c): load, add, sort, save. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tw_test.h"

#include "truewatt.h"

#define H100_EVENTS TW_SHARED_DIR "/data/h100-probe/events.csv"

static void assert_error(tw_status got, tw_status want, const char *path, const char *needle)
{
    const char *m = tw_last_error();
    if (got != want) fail_msg("status %d (%s), expected %d; detail: %s", got, tw_strerror(got), want, m);
    if ((path && !strstr(m, path)) || !strstr(m, needle))
        fail_msg("detail '%s' lacks '%s' or '%s'", m, path ? path : "", needle);
}

static void assert_ok(tw_status st)
{
    if (st != TW_OK) fail_msg("%s: %s", tw_strerror(st), tw_last_error());
}

static tw_events *load_ok(const char *text)
{
    tw_events *ev = NULL;
    assert_ok(tw_events_load(tw_test_file(0, text), &ev));
    assert_non_null(ev);
    return ev;
}

static void load_fails(const char *text, tw_status want, const char *needle)
{
    const char *path = tw_test_file(0, text);
    tw_events *ev = (tw_events *)&ev;
    assert_error(tw_events_load(path, &ev), want, path, needle);
    assert_null(ev);
}

static tw_event ev_make(const char *name, double start, double end)
{
    return (tw_event){.name = name, .start_s = start, .end_s = end, .device = -1, .stream = -1, .true_energy_j = NAN};
}

/* ---------------------------------------------------------------- load */

static void test_load_full(void **state)
{
    (void)state;
    tw_events *ev = load_ok("# kernels\n"
                            "name,start_s,end_s,device,stream,true_energy_j\n"
                            "gemm,1.5,2.25,0,7,310.5\n"
                            "\n"
                            "\"copy, async\",3,3,,,\n"
                            "idle,4,5, 1 ,-1,nan\n");
    assert_int_equal(tw_events_count(ev), 3);
    const tw_event *e = tw_events_get(ev, 0);
    assert_string_equal(e->name, "gemm");
    assert_true(e->start_s == 1.5 && e->end_s == 2.25);
    assert_int_equal(e->device, 0);
    assert_int_equal(e->stream, 7);
    assert_true(e->true_energy_j == 310.5);
    e = tw_events_get(ev, 1);
    assert_string_equal(e->name, "copy, async");
    assert_true(e->start_s == 3 && e->end_s == 3); /* zero length is fine */
    assert_int_equal(e->device, -1);
    assert_int_equal(e->stream, -1);
    assert_true(isnan(e->true_energy_j));
    e = tw_events_get(ev, 2);
    assert_int_equal(e->device, 1);
    assert_true(isnan(e->true_energy_j));
    assert_null(tw_events_get(ev, 3));
    tw_events_free(ev);
}

static void test_load_aliases_and_extra_columns(void **state)
{
    (void)state;
    tw_events *ev = load_ok("t_end,comment,label,t_start\n"
                            "2,whatever text,k1,1\n"
                            "5,,k2,4\n");
    assert_int_equal(tw_events_count(ev), 2);
    const tw_event *e = tw_events_get(ev, 1);
    assert_string_equal(e->name, "k2");
    assert_true(e->start_s == 4 && e->end_s == 5);
    assert_int_equal(e->device, -1);
    assert_int_equal(e->stream, -1);
    assert_true(isnan(e->true_energy_j));
    tw_events_free(ev);
}

static void test_load_large_stream_id(void **state)
{
    (void)state;
    /* stream handles can be 64-bit pointers: no trip through a double */
    tw_events *ev = load_ok("name,start_s,end_s,stream\nk,0,1,9007199254740993\n");
    assert_true(tw_events_get(ev, 0)->stream == INT64_C(9007199254740993));
    tw_events_free(ev);
}

static void test_load_header_only(void **state)
{
    (void)state;
    tw_events *ev = load_ok("name,start_s,end_s\n# nothing ran\n");
    assert_int_equal(tw_events_count(ev), 0);
    assert_null(tw_events_get(ev, 0));
    tw_events_free(ev);
}

static void test_load_h100_probe(void **state)
{
    (void)state;
    tw_test_need_data(H100_EVENTS);
    tw_events *ev = NULL;
    assert_ok(tw_events_load(H100_EVENTS, &ev));
    assert_true(tw_events_count(ev) >= 4);
    const tw_event *e = tw_events_get(ev, 0);
    assert_string_equal(e->name, "k3s");
    assert_true(e->start_s == 3.000307 && e->end_s == 5.991062);
    tw_events_free(ev);
}

static void test_load_missing_columns(void **state)
{
    (void)state;
    load_fails("label,start_s\n", TW_EPARSE, ":1: missing column 'end_s'");
    load_fails("name,end_s\n", TW_EPARSE, ":1: missing column 'start_s'");
    load_fails("start_s,end_s,device\n", TW_EPARSE, ":1: missing column 'name'");
    load_fails("# c\nname,t_begin,t_end\n", TW_EPARSE, ":2: missing column 'start_s'");
}

static void test_load_bad_numbers(void **state)
{
    (void)state;
    load_fails("name,start_s,end_s\nk,abc,2\n", TW_EPARSE, ":2: column 'start_s': 'abc' is not a number");
    load_fails("name,t_start,t_end\nk,1,2\nk,1,inf\n", TW_EPARSE, ":3: column 't_end': 'inf' is not a number");
    load_fails("name,start_s,end_s\nk,,2\n", TW_EPARSE, ":2: missing start_s");
    load_fails("name,start_s,end_s\nk,1,nan\n", TW_EPARSE, ":2: missing end_s");
    load_fails("name,start_s,end_s,true_energy_j\nk,1,2,lots\n", TW_EPARSE,
               ":2: column 'true_energy_j': 'lots' is not a number");
    load_fails("name,start_s,end_s,device\nk,1,2,1.5\n", TW_EPARSE, ":2: column 'device': '1.5' is not an integer");
    load_fails("name,start_s,end_s,device\nk,1,2,4294967296\n", TW_EPARSE,
               ":2: column 'device': '4294967296' is not an integer");
    load_fails("name,start_s,end_s,stream\nk,1,2,99999999999999999999\n", TW_EPARSE,
               ":2: column 'stream': '99999999999999999999' is not an integer");
}

static void test_load_field_count(void **state)
{
    (void)state;
    load_fails("name,start_s,end_s\nk,1,2\n\nk,1\n", TW_EPARSE, ":4: expected 3 fields, found 2");
    load_fails("name,start_s,end_s\nk,1,2,3\n", TW_EPARSE, ":2: expected 3 fields, found 4");
}

static void test_load_ends_before_start(void **state)
{
    (void)state;
    load_fails("name,start_s,end_s\nk1,1,2\nk2,3,2.5\n", TW_EPARSE, ":3: event 'k2' ends before it starts");
}

static void test_load_empty_and_missing(void **state)
{
    (void)state;
    load_fails("", TW_EEMPTY, ": empty file (no header)");
    load_fails("# only a comment\n\n", TW_EEMPTY, ": empty file (no header)");
    load_fails("name,start_s,end_s\n\"k,1,2\n", TW_EPARSE, ":2: malformed quoted field");
    const char *path = tw_test_path(1, "no-such-events.csv");
    tw_events *ev = NULL;
    assert_error(tw_events_load(path, &ev), TW_EIO, path, ": cannot open: No such file");
    assert_int_equal(tw_events_load(NULL, &ev), TW_EINVAL);
    assert_int_equal(tw_events_load(path, NULL), TW_EINVAL);
}

/* ---------------------------------------------------------------- in memory */

static void test_add_copies_name(void **state)
{
    (void)state;
    tw_events *ev = NULL;
    assert_ok(tw_events_new(&ev));
    assert_int_equal(tw_events_count(ev), 0);
    char name[16] = "kernel";
    tw_event e = ev_make(name, 1, 2);
    e.device = 3;
    e.stream = 4;
    e.true_energy_j = 9.5;
    assert_ok(tw_events_add(ev, &e));
    strcpy(name, "changed");
    const tw_event *got = tw_events_get(ev, 0);
    assert_string_equal(got->name, "kernel");
    assert_int_equal(got->device, 3);
    assert_int_equal(got->stream, 4);
    assert_true(got->true_energy_j == 9.5);
    /* many adds: the array grows */
    for (int i = 0; i < 1000; i++) {
        tw_event x = ev_make("x", i, i + 1);
        assert_ok(tw_events_add(ev, &x));
    }
    assert_int_equal(tw_events_count(ev), 1001);
    assert_true(tw_events_get(ev, 1000)->start_s == 999);
    tw_events_free(ev);
    tw_events_free(NULL);
}

static void test_add_rejects(void **state)
{
    (void)state;
    tw_events *ev = NULL;
    assert_ok(tw_events_new(&ev));
    tw_event e = ev_make("k", 2, 1);
    assert_error(tw_events_add(ev, &e), TW_EINVAL, NULL, "event 'k' ends before it starts");
    e = ev_make("k", NAN, 1);
    assert_error(tw_events_add(ev, &e), TW_EINVAL, NULL, "non-finite");
    e = ev_make(NULL, 0, 1);
    assert_int_equal(tw_events_add(ev, &e), TW_EINVAL);
    e = ev_make("k", 0, 1);
    e.true_energy_j = INFINITY;
    assert_error(tw_events_add(ev, &e), TW_EINVAL, NULL, "infinite energy");
    assert_int_equal(tw_events_add(ev, NULL), TW_EINVAL);
    assert_int_equal(tw_events_add(NULL, &e), TW_EINVAL);
    assert_int_equal(tw_events_count(ev), 0);
    assert_int_equal(tw_events_new(NULL), TW_EINVAL);
    tw_events_free(ev);
}

static void test_sort_is_stable(void **state)
{
    (void)state;
    tw_events *ev = NULL;
    assert_ok(tw_events_new(&ev));
    /* many ties, in an order qsort alone would likely scramble */
    enum { N = 300 };
    for (int i = 0; i < N; i++) {
        char name[16];
        snprintf(name, sizeof name, "e%03d", i);
        tw_event e = ev_make(name, (i * 7) % 5, 10);
        assert_ok(tw_events_add(ev, &e));
    }
    tw_events_sort(ev);
    for (int i = 1; i < N; i++) {
        const tw_event *a = tw_events_get(ev, (size_t)i - 1), *b = tw_events_get(ev, (size_t)i);
        assert_true(a->start_s <= b->start_s);
        if (a->start_s == b->start_s) assert_true(strcmp(a->name, b->name) < 0); /* insertion order kept */
    }
    /* sorting again, after more adds, keeps the current order of ties */
    tw_event e = ev_make("z-last", 0, 1);
    assert_ok(tw_events_add(ev, &e));
    tw_events_sort(ev);
    size_t last_zero = 0;
    for (size_t i = 0; i < tw_events_count(ev); i++)
        if (tw_events_get(ev, i)->start_s == 0) last_zero = i;
    assert_string_equal(tw_events_get(ev, last_zero)->name, "z-last");
    tw_events_sort(NULL);
    tw_events_free(ev);
}

/* A run's events: in order, then a short tail out of order (its NVTX
 * ranges), sorted alone and merged in: the order is the stable sort's. */
static void test_sort_short_tail(void **state)
{
    (void)state;
    tw_events *ev = NULL;
    assert_ok(tw_events_new(&ev));
    enum { N = 200, M = 9 };
    for (int i = 0; i < N + M; i++) {
        char name[16];
        snprintf(name, sizeof name, "e%03d", i);
        /* 0, 0, 1, 1, ... then the tail 8, 7, ... 0: ties with the ordered part and in itself */
        double t = i < N ? (double)(i / 2) : (double)((N + M - 1 - i) % 9);
        tw_event e = ev_make(name, t, t + 1);
        assert_ok(tw_events_add(ev, &e));
    }
    tw_events_sort(ev);
    assert_int_equal(tw_events_count(ev), N + M);
    for (int i = 1; i < N + M; i++) {
        const tw_event *a = tw_events_get(ev, (size_t)i - 1), *b = tw_events_get(ev, (size_t)i);
        assert_true(a->start_s <= b->start_s);
        if (a->start_s == b->start_s) assert_true(strcmp(a->name, b->name) < 0); /* insertion order kept */
    }
    /* at start 0: e000, e001 (in order), then the tail's e208 */
    assert_string_equal(tw_events_get(ev, 0)->name, "e000");
    assert_string_equal(tw_events_get(ev, 2)->name, "e208");
    tw_events_free(ev);
}

/* ---------------------------------------------------------------- save */

static void test_save_format(void **state)
{
    (void)state;
    tw_events *ev = NULL;
    assert_ok(tw_events_new(&ev));
    tw_event a = ev_make("gemm", 0.1, 0.30000000000000004);
    a.device = 0;
    a.stream = 12;
    a.true_energy_j = 42;
    tw_event b = ev_make("say \"hi\", twice", 1, 2);
    assert_ok(tw_events_add(ev, &a));
    assert_ok(tw_events_add(ev, &b));
    const char *path = tw_test_path(0, "ev.csv");
    assert_ok(tw_events_save(ev, path));
    char *text = tw_test_slurp(path);
    assert_non_null(text);
    assert_string_equal(text, "name,start_s,end_s,device,stream,true_energy_j\n"
                              "gemm,0.1,0.30000000000000004,0,12,42\n"
                              "\"say \"\"hi\"\", twice\",1,2,,,\n");
    free(text);
    tw_events_free(ev);
}

static void test_save_load_round_trip(void **state)
{
    (void)state;
    const char *names[] = {"plain", "with,comma", "\"quoted\"", "#hash", " padded ", "", "ünïcode"};
    enum { N = sizeof names / sizeof names[0] };
    tw_events *ev = NULL;
    assert_ok(tw_events_new(&ev));
    for (int i = 0; i < N; i++) {
        tw_event e = ev_make(names[i], 1.0 / (i + 3), 1.0 / (i + 3) + 1e-7 * i);
        e.device = i % 2 ? -1 : i;
        e.stream = i % 3 ? INT64_C(1) << 40 : -1;
        e.true_energy_j = i % 2 ? NAN : 3.0 / (i + 7);
        assert_ok(tw_events_add(ev, &e));
    }
    const char *path = tw_test_path(0, "rt.csv");
    assert_ok(tw_events_save(ev, path));
    tw_events *back = NULL;
    assert_ok(tw_events_load(path, &back));
    assert_int_equal(tw_events_count(back), N);
    for (size_t i = 0; i < N; i++) {
        const tw_event *x = tw_events_get(ev, i), *y = tw_events_get(back, i);
        assert_string_equal(x->name, y->name);
        assert_true(x->start_s == y->start_s); /* exact, not approximately */
        assert_true(x->end_s == y->end_s);
        assert_int_equal(x->device, y->device);
        assert_true(x->stream == y->stream);
        if (isnan(x->true_energy_j))
            assert_true(isnan(y->true_energy_j));
        else
            assert_true(x->true_energy_j == y->true_energy_j);
    }
    tw_events_free(ev);
    tw_events_free(back);
}

static void test_save_empty(void **state)
{
    (void)state;
    tw_events *ev = NULL;
    assert_ok(tw_events_new(&ev));
    const char *path = tw_test_path(0, "none.csv");
    assert_ok(tw_events_save(ev, path));
    tw_events *back = NULL;
    assert_ok(tw_events_load(path, &back));
    assert_int_equal(tw_events_count(back), 0);
    tw_events_free(back);
    tw_events_free(ev);
}

static void test_save_errors(void **state)
{
    (void)state;
    tw_events *ev = NULL;
    assert_ok(tw_events_new(&ev));
    tw_event e = ev_make("ok", 0, 1);
    assert_ok(tw_events_add(ev, &e));
    const char *bad = "/nonexistent-dir-of-truewatt/ev.csv";
    assert_error(tw_events_save(ev, bad), TW_EIO, bad, ": cannot open for writing:");
    if (access("/dev/full", W_OK) == 0)
        assert_error(tw_events_save(ev, "/dev/full"), TW_EIO, "/dev/full", ": write failed: No space");
    e = ev_make("two\nlines", 0, 1);
    assert_ok(tw_events_add(ev, &e));
    const char *path = tw_test_path(0, "nl.csv");
    assert_error(tw_events_save(ev, path), TW_EINVAL, path, "event 2: name holds a line break");
    assert_int_equal(tw_events_save(NULL, path), TW_EINVAL);
    assert_int_equal(tw_events_save(ev, NULL), TW_EINVAL);
    tw_events_free(ev);
}

/* ---------------------------------------------------------------- strings: stored once, never moved */

static void test_names_interned(void **state)
{
    (void)state;
    tw_events *ev = NULL;
    assert_ok(tw_events_new(&ev));
    char name[32];
    for (int i = 0; i < 1000; i++) {
        snprintf(name, sizeof name, "k%d", i % 3);
        tw_event e = ev_make(name, i, i + 0.5);
        e.kind = "kernel";
        assert_ok(tw_events_add(ev, &e));
    }
    /* one copy per distinct string, whatever the number of events */
    const tw_event *a = tw_events_get(ev, 0), *b = tw_events_get(ev, 3), *c = tw_events_get(ev, 999);
    assert_ptr_equal(a->name, b->name);
    assert_ptr_equal(a->name, c->name);
    assert_ptr_equal(a->kind, c->kind);
    assert_ptr_not_equal(a->name, tw_events_get(ev, 1)->name);
    assert_string_equal(tw_events_get(ev, 2)->name, "k2");
    tw_events_free(ev);
}

/* The garbage-name bug of issue 15 was a name borrowed from an event set
 * that was freed while the name was still in use (the lagged regression
 * took a name from its temporary set of shifted copies; names longer than
 * its 512-byte buffer lost their lag suffix and were not mapped back). This
 * checks the contract the timeline's users rely on instead: a name handed
 * out stays valid and unmoved while the set grows (event array reallocated,
 * string table rehashed), and a set built from another owns its names, so
 * freeing the source does not touch them. Under ASan a borrowed pointer
 * here is a heap-use-after-free. */
static void test_names_outlive_growth_and_source(void **state)
{
    (void)state;
    /* longer than any fixed buffer on the way (C++ template names are) */
    size_t len = 3000;
    char *longname = malloc(len + 1);
    assert_non_null(longname);
    for (size_t i = 0; i < len; i++)
        longname[i] = (char)('a' + i % 26);
    longname[len] = '\0';

    tw_events *src = NULL, *copy = NULL;
    assert_ok(tw_events_new(&src));
    tw_event e = ev_make(longname, 0, 1);
    e.mangled = "_Z4longv";
    e.device_uuid = "GPU-00000000-0000-0000-0000-000000000001";
    assert_ok(tw_events_add(src, &e));
    longname[0] = '#'; /* the caller's buffer changes: the set has its own copy */
    const char *first = tw_events_get(src, 0)->name;
    assert_int_equal(first[0], 'a');
    char name[64];
    for (int i = 0; i < 5000; i++) { /* many distinct names: the table and the array grow many times */
        snprintf(name, sizeof name, "kernel_%d", i);
        tw_event x = ev_make(name, i, i + 1);
        assert_ok(tw_events_add(src, &x));
    }
    assert_ptr_equal(tw_events_get(src, 0)->name, first);
    assert_int_equal(strlen(first), len);

    assert_ok(tw_events_new(&copy));
    for (size_t i = 0; i < tw_events_count(src); i += 7)
        assert_ok(tw_events_add(copy, tw_events_get(src, i)));
    tw_events_free(src); /* the copy's strings are its own */
    const tw_event *c0 = tw_events_get(copy, 0);
    assert_int_equal(strlen(c0->name), len);
    assert_int_equal(c0->name[0], 'a');
    assert_string_equal(c0->mangled, "_Z4longv");
    assert_string_equal(c0->device_uuid, "GPU-00000000-0000-0000-0000-000000000001");
    assert_string_equal(tw_events_get(copy, 1)->name, "kernel_6");
    tw_events_free(copy);
    free(longname);
}

/* ---------------------------------------------------------------- the injection library's columns */

static void test_load_inject_columns(void **state)
{
    (void)state;
    tw_events *ev =
        load_ok("name,start_s,end_s,device,stream,kind,grid_x,grid_y,grid_z,block_x,block_y,block_z,correlation_id,"
                "device_uuid,mangled,domain,tid,depth\n"
                "spin(float*),1,2,0,7,kernel,1,1,1,32,1,1,5,GPU-11111111-2222-3333-4444-555555555555,_Z4spinPf,,,\n"
                "outer,0.5,3,,,nvtx,,,,,,,,,,,4242,1\n"
                "inner,0.75,2.5,,,nvtx,,,,,,,,,,train,4242,2\n"
                "async,0.6,0.9,,,nvtx,,,,,,,,,,,4243,\n");
    assert_int_equal(tw_events_count(ev), 4);
    const tw_event *k = tw_events_get(ev, 0);
    assert_string_equal(k->device_uuid, "GPU-11111111-2222-3333-4444-555555555555");
    assert_string_equal(k->mangled, "_Z4spinPf");
    assert_null(k->domain); /* kernels have none */
    assert_int_equal(k->tid, 0);
    assert_int_equal(k->depth, 0);
    const tw_event *o = tw_events_get(ev, 1), *i = tw_events_get(ev, 2), *a = tw_events_get(ev, 3);
    assert_null(o->device_uuid);
    assert_null(o->mangled);
    assert_string_equal(o->domain, ""); /* the default domain */
    assert_int_equal(o->tid, 4242);
    assert_int_equal(o->depth, 1);
    assert_string_equal(i->domain, "train");
    assert_int_equal(i->depth, 2);
    assert_int_equal(a->depth, 0); /* a start/end range */
    tw_events_free(ev);
}

static void test_load_inject_columns_bad(void **state)
{
    (void)state;
    load_fails("name,start_s,end_s,kind,device_uuid\nk,0,1,kernel,0000-1111\n", TW_EPARSE, "device_uuid");
    load_fails("name,start_s,end_s,kind,tid\nr,0,1,nvtx,-3\n", TW_EPARSE, "tid");
    load_fails("name,start_s,end_s,kind,depth\nr,0,1,nvtx,0\n", TW_EPARSE, "depth");
    load_fails("name,start_s,end_s,kind,depth\nr,0,1,nvtx,x\n", TW_EPARSE, ":2:");
}

static void test_save_load_new_columns(void **state)
{
    (void)state;
    tw_events *ev = NULL;
    assert_ok(tw_events_new(&ev));
    tw_event k = ev_make("f(int)", 1, 2);
    k.kind = "kernel";
    k.device = 0;
    k.device_uuid = "MIG-aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee";
    k.mangled = "_Z1fi";
    tw_event r = ev_make("step, 1", 0, 3);
    r.kind = "nvtx";
    r.domain = "my domain";
    r.tid = 77;
    r.depth = 3;
    assert_ok(tw_events_add(ev, &k));
    assert_ok(tw_events_add(ev, &r));
    const char *path = tw_test_path(0, "new-columns.csv");
    assert_ok(tw_events_save(ev, path));
    tw_events *back = NULL;
    assert_ok(tw_events_load(path, &back));
    assert_int_equal(tw_events_count(back), 2);
    const tw_event *k2 = tw_events_get(back, 0), *r2 = tw_events_get(back, 1);
    assert_string_equal(k2->device_uuid, k.device_uuid);
    assert_string_equal(k2->mangled, "_Z1fi");
    assert_string_equal(r2->name, "step, 1");
    assert_string_equal(r2->domain, "my domain");
    assert_int_equal(r2->tid, 77);
    assert_int_equal(r2->depth, 3);
    tw_events_free(back);
    tw_events_free(ev);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_load_full),
        cmocka_unit_test(test_load_aliases_and_extra_columns),
        cmocka_unit_test(test_load_large_stream_id),
        cmocka_unit_test(test_load_header_only),
        cmocka_unit_test(test_load_h100_probe),
        cmocka_unit_test(test_load_missing_columns),
        cmocka_unit_test(test_load_bad_numbers),
        cmocka_unit_test(test_load_field_count),
        cmocka_unit_test(test_load_ends_before_start),
        cmocka_unit_test(test_load_empty_and_missing),
        cmocka_unit_test(test_add_copies_name),
        cmocka_unit_test(test_add_rejects),
        cmocka_unit_test(test_sort_is_stable),
        cmocka_unit_test(test_sort_short_tail),
        cmocka_unit_test(test_save_format),
        cmocka_unit_test(test_save_load_round_trip),
        cmocka_unit_test(test_save_empty),
        cmocka_unit_test(test_save_errors),
        cmocka_unit_test(test_names_interned),
        cmocka_unit_test(test_names_outlive_growth_and_source),
        cmocka_unit_test(test_load_inject_columns),
        cmocka_unit_test(test_load_inject_columns_bad),
        cmocka_unit_test(test_save_load_new_columns),
    };
    return tw_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
