/* Unit tests of the Perfetto / Chrome trace-event writer (src/report/perfetto.c,
 * built into the CLI, so compiled in here): the file parses as JSON (checked
 * by python3), has one counter event per update (not per poll), one slice per
 * event on the thread of its stream, NVTX on a thread of its own, and names. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tw_test.h"

#include "core/json.h"
#include "report/perfetto.c"

static void assert_ok(tw_status st)
{
    if (st != TW_OK) fail_msg("%s: %s", tw_strerror(st), tw_last_error());
}

static bool have_python(void) { return system("python3 -c 'import json' >/dev/null 2>&1") == 0; }

/* Runs a python3 check on the file; the script gets the parsed document as d. */
static void py_check(const char *path, const char *code)
{
    const char *script = tw_test_path(6, "check.py");
    FILE *f = fopen(script, "w");
    assert_non_null(f);
    fprintf(f,
            "import json, sys, collections\n"
            "def reject(name):\n    raise ValueError('not JSON: ' + name)\n"
            "d = json.load(open(sys.argv[1]), parse_constant=reject)\n"
            "ev = d['traceEvents']\n%s\n",
            code);
    fclose(f);
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "python3 '%s' '%s'", script, path);
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

static void test_one_device(void **state)
{
    (void)state;
    if (!have_python()) skip();
    const char *trace = write_trace("", NULL);
    tw_events *ev;
    assert_ok(tw_events_new(&ev));
    add(ev, "gemm", 0.1, 0.2, 0, 7, "kernel");
    add(ev, "gemm", 0.25, 0.3, 0, 7, "kernel");
    add(ev, "relu", 0.15, 0.22, 0, 13, "kernel");
    add(ev, "memcpy HtoD", 0.05, 0.06, 0, 7, "memcpy");
    add(ev, "step \"1\"", 0.0, 0.4, -1, -1, "nvtx");
    double energy[] = {12.5, 6.0, 3.25, NAN, NAN};
    perfetto_device dev = {0, "", "NVIDIA H100 80GB HBM3"};
    const char *out = tw_test_path(1, "p.json");
    assert_ok(perfetto_write(out, trace, &dev, 1, ev, energy, "command: truewatt run -- app; date: x"));
    py_check(out, "assert d['metadata']['truewatt'] == 'command: truewatt run -- app; date: x', d.get('metadata')\n"
                  "c = [e for e in ev if e['ph'] == 'C']\n"
                  "n = collections.Counter(e['name'] for e in c)\n"
                  "assert n['power_usage'] == 5, n\n"
                  "assert n['power_buffer'] == 25, n\n"
                  "assert all(set(e['args']) == {'W'} for e in c)\n"
                  "x = [e for e in ev if e['ph'] == 'X']\n"
                  "assert len(x) == 5\n"
                  "tids = collections.Counter(e['tid'] for e in x)\n"
                  "assert tids[7] == 3 and tids[13] == 1 and tids[1000000000] == 1, tids\n"
                  "g = [e for e in x if e['name'] == 'gemm']\n"
                  "assert abs(g[0]['ts'] - 100000) < 1e-3 and abs(g[0]['dur'] - 100000) < 1e-3, g\n"
                  "assert g[0]['args']['energy_above_idle_J'] == 12.5 and g[0]['pid'] == 0\n"
                  "assert 'energy_above_idle_J' not in [e for e in x if e['name'] == 'memcpy HtoD'][0]['args']\n"
                  "assert [e for e in x if e['tid'] == 1000000000][0]['name'] == 'step \"1\"'\n"
                  "m = {(e['name'], e.get('tid')): e['args']['name'] for e in ev if e['ph'] == 'M'}\n"
                  "assert m[('process_name', None)] == 'GPU 0 (NVIDIA H100 80GB HBM3)', m\n"
                  "assert m[('thread_name', 7)] == 'stream 7' and m[('thread_name', 13)] == 'stream 13', m\n"
                  "assert m[('thread_name', 1000000000)] == 'NVTX ranges', m\n"
                  "b = sorted(e['ts'] for e in c if e['name'] == 'power_buffer')\n"
                  "assert abs(b[1] - 19000) < 1e-3, b[:3]  # from the start of its interval\n");
    tw_events_free(ev);
}

static void test_two_devices(void **state)
{
    (void)state;
    if (!have_python()) skip();
    const char *trace = write_trace("gpu0_", "gpu1_");
    tw_events *ev;
    assert_ok(tw_events_new(&ev));
    add(ev, "a", 0.1, 0.2, 0, 1, "kernel");
    add(ev, "b", 0.1, 0.2, 1, 1, "kernel");
    perfetto_device dev[] = {{0, "gpu0_", NULL}, {1, "gpu1_", NULL}};
    const char *out = tw_test_path(1, "p2.json");
    assert_ok(perfetto_write(out, trace, dev, 2, ev, NULL, NULL));
    py_check(out, "c = [e for e in ev if e['ph'] == 'C']\n"
                  "e1 = [e for e in c if e['pid'] == 1]\n"
                  "assert len(e1) == 5 and all(e['name'] == 'energy' and 'J' in e['args'] for e in e1), e1\n"
                  "assert all(e['pid'] == 0 for e in c if e['name'] != 'energy')\n"
                  "x = {e['name']: e['pid'] for e in ev if e['ph'] == 'X'}\n"
                  "assert x == {'a': 0, 'b': 1}, x\n"
                  "p = sorted(e['args']['name'] for e in ev if e['ph'] == 'M' and e['name'] == 'process_name')\n"
                  "assert p == ['GPU 0', 'GPU 1'], p\n");
    tw_events_free(ev);
}

static void test_no_trace_and_errors(void **state)
{
    (void)state;
    if (!have_python()) skip();
    const char *out = tw_test_path(1, "p3.json");
    assert_ok(perfetto_write(out, NULL, NULL, 0, NULL, NULL, NULL));
    py_check(out, "assert [e['ph'] for e in ev] == ['M'], ev\n");
    assert_int_equal(perfetto_write("/nonexistent-dir/p.json", NULL, NULL, 0, NULL, NULL, NULL), TW_EIO);
    assert_non_null(strstr(tw_last_error(), "/nonexistent-dir/p.json"));
    assert_int_equal(perfetto_write(out, "/nonexistent-trace.csv", NULL, 0, NULL, NULL, NULL), TW_EIO);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_device),
        cmocka_unit_test(test_two_devices),
        cmocka_unit_test(test_no_trace_and_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
