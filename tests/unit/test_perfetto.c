/* Unit tests of the Perfetto protobuf writer (src/report/perfetto.c; compiled
 * in here for its static helpers). Each file is decoded by
 * tests/perfetto/decode.py (protoc against Perfetto's published field
 * numbers, then the format's sequence, interning and clock rules) and
 * checked: one counter value per update (not per poll), one slice per event
 * on the track of its stream, NVTX on a track of their own, interned names,
 * energies as arguments, the corrected power against a sum worked out here. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tw_test.h"

#include "report/perfetto.c"

static void assert_ok(tw_status st)
{
    if (st != TW_OK) fail_msg("%s: %s", tw_strerror(st), tw_last_error());
}

static bool have_decoder(void)
{
    return system("python3 -c 'import json' >/dev/null 2>&1") == 0 && system("protoc --version >/dev/null 2>&1") == 0;
}

/* Decodes the file with tests/perfetto/decode.py (protoc against Perfetto's
 * published field numbers) and runs a python3 check on the result, given as
 * d (tracks, counters, slices, interned_names, packets). */
static void py_check(const char *path, const char *code)
{
    const char *script = tw_test_path(6, "check.py");
    FILE *f = fopen(script, "w");
    assert_non_null(f);
    fprintf(f,
            "import json, subprocess, sys, collections\n"
            "r = subprocess.run([sys.executable, sys.argv[1], sys.argv[2]], capture_output=True, text=True)\n"
            "assert r.returncode == 0, r.stderr\n"
            "d = json.loads(r.stdout)\n"
            "tracks, counters, slices = d['tracks'], d['counters'], d['slices']\n%s\n",
            code);
    fclose(f);
    char cmd[1400];
    snprintf(cmd, sizeof cmd, "python3 '%s' '%s/../perfetto/decode.py' '%s'", script, TW_TEST_DATA, path);
    if (system(cmd) != 0) fail_msg("python check failed on %s:\n%s", path, code);
}

/* 1 kHz rows for 0.5 s: power_usage_w changes every 100 ms (5 updates), the
 * buffer has a sample every 20 ms (25), energy_j in slow rows every 100 ms. */
static const char *write_trace(const char *prefix_a, const char *prefix_b)
{
    const char *path = tw_test_path(0, "trace.csv");
    FILE *f = fopen(path, "w");
    fprintf(f, "t_s,%spower_usage_w,%spower_usage_w_t_s,%spower_buffer_w,%spower_buffer_w_t_s", prefix_a, prefix_a,
            prefix_a, prefix_a);
    if (prefix_b) fprintf(f, ",%senergy_j,%senergy_j_t_s", prefix_b, prefix_b);
    fprintf(f, "\n");
    for (int i = 0; i < 500; i++) {
        double t = i * 1e-3;
        fprintf(f, "%.6f,%d,%.6f,", t, 100 + i / 100, t);
        if (i % 20 == 19)
            fprintf(f, "%.3f,%.6f", 150.0 + i, t);
        else
            fprintf(f, ",");
        if (prefix_b) fprintf(f, ",%s", i % 100 == 0 ? "" : ",");
        if (prefix_b && i % 100 == 0) fprintf(f, "%d,%.6f", 1000 + i, t);
        fprintf(f, "\n");
    }
    fclose(f);
    return path;
}

static void add(tw_events *ev, const char *name, double s, double e, int dev, long stream, const char *kind)
{
    tw_event x = {
        .name = name, .start_s = s, .end_s = e, .device = dev, .stream = stream, .true_energy_j = NAN, .kind = kind};
    assert_ok(tw_events_add(ev, &x));
}

/* The writer takes a feed in order of start: *ev replaced by its events by
 * start (ties in their order), and energy (NULL: none) permuted alike. */
static const tw_events *sorting;

static int start_cmp(const void *a, const void *b)
{
    size_t i = *(const size_t *)a, j = *(const size_t *)b;
    double x = tw_events_get(sorting, i)->start_s, y = tw_events_get(sorting, j)->start_s;
    if (x != y) return x < y ? -1 : 1;
    return (i > j) - (i < j);
}

static tw_feed by_start(tw_events **ev, double *energy)
{
    size_t n = tw_events_count(*ev);
    size_t *o = malloc(n * sizeof *o);
    double *e = malloc(n * sizeof *e);
    assert_non_null(o);
    assert_non_null(e);
    for (size_t i = 0; i < n; i++)
        o[i] = i;
    sorting = *ev;
    qsort(o, n, sizeof *o, start_cmp);
    tw_events *out;
    assert_ok(tw_events_new(&out));
    for (size_t i = 0; i < n; i++) {
        assert_ok(tw_events_add(out, tw_events_get(*ev, o[i])));
        if (energy) e[i] = energy[o[i]];
    }
    if (energy) memcpy(energy, e, n * sizeof *e);
    free(o);
    free(e);
    tw_events_free(*ev);
    *ev = out;
    return tw_feed_of_events(out);
}

/* An estimate that holds only these event energies (all the slices read of it). */
static tw_estimate *with_energies(const double *j, size_t n)
{
    tw_estimate *e = calloc(1, sizeof *e);
    assert_non_null(e);
    assert_ok(tw_estimate_set_event_energies(e, j, n));
    return e;
}

static void test_one_device(void **state)
{
    (void)state;
    if (!have_decoder()) skip();
    const char *trace = write_trace("", NULL);
    tw_events *ev;
    assert_ok(tw_events_new(&ev));
    add(ev, "gemm", 0.1, 0.2, 0, 7, "kernel");
    add(ev, "gemm", 0.25, 0.3, 0, 7, "kernel");
    add(ev, "relu", 0.15, 0.22, 0, 13, "kernel");
    add(ev, "memcpy HtoD", 0.05, 0.06, 0, 7, "memcpy");
    add(ev, "step \"1\"", 0.0, 0.4, -1, -1, "nvtx");
    double energy[] = {12.5, 6.0, 3.25, NAN, NAN};
    tw_feed feed = by_start(&ev, energy);
    perfetto_device dev = {0, "", "NVIDIA H100 80GB HBM3", NULL, NULL};
    const char *out = tw_test_path(1, "p.perfetto-trace");
    tw_estimate *en = with_energies(energy, 5);
    assert_ok(perfetto_write(out, trace, &dev, 1, &feed, en, "command: truewatt run -- app; date: x"));
    tw_estimate_free(en);
    py_check(out, "g = 'GPU 0 (NVIDIA H100 80GB HBM3)'\n"
                  "assert tracks[g]['description'] == 'command: truewatt run -- app; date: x', tracks\n"
                  "assert sorted(tracks) == sorted([g] + [g + ' / ' + t for t in ('power_usage', 'power_buffer', "
                  "'stream 7', 'stream 13', 'NVTX ranges')]), sorted(tracks)\n"
                  "assert tracks[g + ' / power_usage'] == {'counter': True, 'unit': 'W', 'description': ''}\n"
                  "u = counters[g + ' / power_usage']\n"
                  "assert u == [[i * 100000000, 100.0 + i] for i in range(5)], u\n"
                  "b = counters[g + ' / power_buffer']\n"
                  "assert len(b) == 25, len(b)\n"
                  "assert b[0] == [19000000, 169.0] and b[1] == [19000000, 189.0], b[:3]  # from the start of its "
                  "interval\n"
                  "assert len(slices) == 5, slices\n"
                  "per = collections.Counter(s['track'] for s in slices)\n"
                  "assert per == {g + ' / stream 7': 3, g + ' / stream 13': 1, g + ' / NVTX ranges': 1}, per\n"
                  "gm = sorted((s for s in slices if s['name'] == 'gemm'), key=lambda s: s['ts'])\n"
                  "assert gm[0]['ts'] == 100000000 and gm[0]['dur'] == 100000000, gm\n"
                  "assert gm[0]['args'] == {'energy_above_idle_uJ': 12500000} and gm[1]['args'] == "
                  "{'energy_above_idle_uJ': 6000000}, gm\n"
                  "m = [s for s in slices if s['name'] == 'memcpy HtoD']\n"
                  "assert m[0]['args'] == {} and m[0]['dur'] == 10000000, m\n"
                  "n = [s for s in slices if s['track'].endswith('NVTX ranges')]\n"
                  "assert n[0]['name'] == 'step \"1\"' and n[0]['ts'] == 0 and n[0]['dur'] == 400000000, n\n"
                  "assert sorted(d['interned_names']) == sorted(['gemm', 'relu', 'memcpy HtoD', 'step \"1\"']), "
                  "d['interned_names']\n");
    tw_events_free(ev);
}

/* The corrected power: a 50 W baseline plus each launch's energy over its
 * time, against the sum worked out here from the same inputs. */
static void test_corrected_power(void **state)
{
    (void)state;
    if (!have_decoder()) skip();
    tw_events *ev;
    assert_ok(tw_events_new(&ev));
    add(ev, "gemm", 0.1, 0.2, 0, 7, "kernel");
    add(ev, "relu", 0.15, 0.22, 0, 13, "kernel");
    add(ev, "gemm", 0.25, 0.3, 0, 7, "kernel");
    double energy[] = {12.5, 3.25, 6.0}, knots[] = {50.0, 50.0};
    tw_estimate *est = with_energies(energy, 3);
    est->fit_t0_s = 0.0;
    est->fit_t1_s = 0.5;
    est->nknots = 2;
    est->knot_s = 0.5;
    assert_non_null(est->knot_w = malloc(sizeof knots));
    memcpy(est->knot_w, knots, sizeof knots);
    tw_feed feed = tw_feed_of_events(ev); /* in order of start */
    perfetto_device dev = {0, "", NULL, est, &feed};
    const char *out = tw_test_path(1, "c.perfetto-trace");
    assert_ok(perfetto_write(out, NULL, &dev, 1, &feed, est, NULL));
    py_check(out, "c = counters['GPU 0 / corrected power (model)']\n"
                  "assert tracks['GPU 0 / corrected power (model)']['unit'] == 'W'\n"
                  "def at(t):\n"
                  "    return [v for ts, v in c if ts <= t * 1e9][-1]\n"
                  "runs = [(0.1, 0.2, 12.5), (0.15, 0.22, 3.25), (0.25, 0.3, 6.0)]\n"
                  "for t in (0.05, 0.12, 0.17, 0.21, 0.26, 0.4, 0.4995):\n"
                  "    want = 50 + sum(j / (b - a) for a, b, j in runs if a < t < b)\n"
                  "    assert abs(at(t) - want) < 1e-9 * want, (t, at(t), want)\n"
                  "ts = [x[0] for x in c] + [500000000]\n"
                  "total = sum(c[i][1] * (ts[i + 1] - ts[i]) * 1e-9 for i in range(len(c)))\n"
                  "assert abs(total - (50 * 0.5 + 12.5 + 3.25 + 6.0)) < 1e-9, total\n"
                  "assert len(c) < 20, len(c)  # a value where it changes, not one per bin\n");
    tw_estimate_free(est);
    tw_events_free(ev);
}

static void test_two_devices(void **state)
{
    (void)state;
    if (!have_decoder()) skip();
    const char *trace = write_trace("gpu0_", "gpu1_");
    tw_events *ev;
    assert_ok(tw_events_new(&ev));
    add(ev, "a", 0.1, 0.2, 0, 1, "kernel");
    add(ev, "b", 0.1, 0.2, 1, 1, "kernel");
    perfetto_device dev[] = {{0, "gpu0_", NULL, NULL, NULL}, {1, "gpu1_", NULL, NULL, NULL}};
    const char *out = tw_test_path(1, "p2.perfetto-trace");
    tw_feed feed = tw_feed_of_events(ev);
    assert_ok(perfetto_write(out, trace, dev, 2, &feed, NULL, NULL));
    py_check(out, "e1 = counters['GPU 1 / energy']\n"
                  "assert [v for t, v in e1] == [1000.0 + 100 * i for i in range(5)], e1\n"
                  "assert tracks['GPU 1 / energy']['unit'] == 'J'\n"
                  "assert sorted(counters) == ['GPU 0 / power_buffer', 'GPU 0 / power_usage', 'GPU 1 / energy'], "
                  "sorted(counters)\n"
                  "x = {s['name']: s['track'] for s in slices}\n"
                  "assert x == {'a': 'GPU 0 / stream 1', 'b': 'GPU 1 / stream 1'}, x\n"
                  "assert all(s['args'] == {} for s in slices)\n");
    tw_events_free(ev);
}

/* Many launches, made out of order and sorted (a feed out of order is
 * refused), on streams that overlap each other and under nested NVTX
 * ranges: every slice comes back with its time, and the file passes the
 * writer's buffer several times. */
static void test_many(void **state)
{
    (void)state;
    if (!have_decoder()) skip();
    tw_events *ev;
    assert_ok(tw_events_new(&ev));
    enum { N = 30000, NAMES = 300 };
    static char label[NAMES][32];
    for (int k = 0; k < NAMES; k++)
        snprintf(label[k], sizeof label[k], "kernel_%d<float>", k);
    static double energy[N + 2];
    for (int i = N - 1; i >= 0; i--) { /* backwards: refused as they are */
        int stream = i % 4;
        double t = 1e-5 * (i / 4) + 1e-6 * stream;
        add(ev, label[(i * 7) % NAMES], t, t + 8e-6, 0, stream, "kernel");
        energy[N - 1 - i] = 1e-3 * i;
    }
    add(ev, "outer", 0.0, 0.2, -1, -1, "nvtx");
    add(ev, "inner", 0.05, 0.1, -1, -1, "nvtx");
    energy[N] = energy[N + 1] = NAN;
    perfetto_device dev = {0, "", NULL, NULL, NULL};
    const char *out = tw_test_path(1, "m.perfetto-trace");
    tw_feed unsorted = tw_feed_of_events(ev);
    tw_estimate *en = with_energies(energy, N + 2);
    assert_int_equal(perfetto_write(out, NULL, &dev, 1, &unsorted, en, NULL), TW_EINVAL);
    assert_non_null(strstr(tw_last_error(), "not in order of start"));
    tw_estimate_free(en);
    tw_feed feed = by_start(&ev, energy);
    en = with_energies(energy, N + 2);
    assert_ok(perfetto_write(out, NULL, &dev, 1, &feed, en, NULL));
    tw_estimate_free(en);
    char code[1500];
    snprintf(code, sizeof code,
             "N, NAMES = %d, %d\n"
             "assert len(slices) == N + 2, len(slices)\n"
             "per = collections.Counter(s['track'] for s in slices)\n"
             "assert per == {**{'GPU 0 / stream %%d' %% k: N // 4 for k in range(4)}, 'GPU 0 / NVTX ranges': 2}, per\n"
             "for s in slices:\n"
             "    if s['track'].endswith('NVTX ranges'): continue\n"
             "    i = int(s['track'][-1]) + 4 * round((s['ts'] - 1000 * int(s['track'][-1])) / 10000)\n"
             "    assert s['dur'] == 8000 and s['name'] == 'kernel_%%d<float>' %% ((i * 7) %% NAMES), (i, s)\n"
             "    assert s['args']['energy_above_idle_uJ'] == 1000 * i, (i, s)\n"
             "nv = {s['name']: (s['ts'], s['dur']) for s in slices if s['track'].endswith('NVTX ranges')}\n"
             "assert nv == {'outer': (0, 200000000), 'inner': (50000000, 50000000)}, nv\n"
             "pairs = {(s['track'], s['name']) for s in slices}  # each track interns its names once\n"
             "assert len(d['interned_names']) == len(pairs), (len(d['interned_names']), len(pairs))\n"
             "assert set(d['interned_names']) == {s['name'] for s in slices}\n",
             N, NAMES);
    py_check(out, code);
    tw_events_free(ev);
}

static void test_no_trace_and_errors(void **state)
{
    (void)state;
    if (!have_decoder()) skip();
    const char *out = tw_test_path(1, "p3.perfetto-trace");
    assert_ok(perfetto_write(out, NULL, NULL, 0, NULL, NULL, NULL));
    py_check(out, "assert list(tracks) == ['GPU 0'] and not counters and not slices, d\n");
    assert_int_equal(perfetto_write("/nonexistent-dir/p.perfetto-trace", NULL, NULL, 0, NULL, NULL, NULL), TW_EIO);
    assert_non_null(strstr(tw_last_error(), "/nonexistent-dir/p.perfetto-trace"));
    assert_int_equal(perfetto_write(out, "/nonexistent-trace.csv", NULL, 0, NULL, NULL, NULL), TW_EIO);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_device),          cmocka_unit_test(test_corrected_power),
        cmocka_unit_test(test_two_devices),         cmocka_unit_test(test_many),
        cmocka_unit_test(test_no_trace_and_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
