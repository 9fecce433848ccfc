/* The library calls the command-line tool is a thin layer over (issue 17),
 * through the public header: their options structs carry their size, bad
 * lists are named, a cancelled simulated run keeps its rows and says where,
 * and the listings and device choice give what an independent count says. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "truewatt.h"
#include "tw_test.h"

/* What a call wrote to a stream, as a string (caller frees). */
typedef struct capture {
    char *text;
    size_t len;
    FILE *f;
} capture;

static void capture_open(capture *c)
{
    memset(c, 0, sizeof *c);
    c->f = open_memstream(&c->text, &c->len);
    assert_non_null(c->f);
}

static char *capture_close(capture *c)
{
    assert_int_equal(fclose(c->f), 0);
    return c->text;
}

/* Options with no size set are refused by name, nothing run. */
static void test_options_need_their_size(void **state)
{
    (void)state;
    tw_experiment_options e;
    tw_experiment_options_init(&e);
    e.backend = "sim";
    tw_measure_kernel_options m;
    tw_measure_kernel_options_init(&m);
    m.size = 0;
    capture c;
    capture_open(&c);
    assert_int_equal(tw_measure_kernel(&e, &m, c.f), TW_EINVAL);
    assert_non_null(strstr(tw_last_error(), "tw_measure_kernel"));
    char *text = capture_close(&c);
    assert_string_equal(text, "");
    free(text);
}

/* A list's bad name is named, with the names it could be. */
static void test_mem_lists(void **state)
{
    (void)state;
    tw_mem_options o;
    tw_mem_options_init(&o);
    assert_int_equal(tw_mem_options_check(&o), TW_OK);
    o.levels = "l2,l3";
    assert_int_equal(tw_mem_options_check(&o), TW_EINVAL);
    assert_string_equal(tw_last_error(), "levels: no level named 'l3' (shared, l1, l2, dram)");
    o.levels = "dram";
    o.ops = "fetch";
    assert_int_equal(tw_mem_options_check(&o), TW_EINVAL);
    assert_string_equal(tw_last_error(), "ops: no operation named 'fetch' (load, store, load+div)");
    unsigned threads[] = {32, 48};
    o.ops = NULL;
    o.threads = threads;
    o.nthreads = 2;
    assert_int_equal(tw_mem_options_check(&o), TW_EINVAL);
    assert_string_equal(tw_last_error(), "threads: '48' is not a power of two from 1 to 1024");
    assert_true(tw_isa_instruction_known("add.s32"));
    assert_false(tw_isa_instruction_known("add.s33"));
}

/* Two kernels simulated on the K20: rows over the scenario's 5 s (the
 * sensor updates every ~15 ms), both kernels in the events with their exact
 * energy, power x duration (100 W x 1 s, 50 W x 0.5 s); cancelled at once,
 * the message says where the rows so far are. */
static void test_sim_run(void **state)
{
    (void)state;
    tw_scenario *sc = NULL;
    assert_int_equal(tw_scenario_new(TW_SIM_K20, &sc), TW_OK);
    assert_int_equal(tw_scenario_add_kernel(sc, "a", 1.0, 1.0, 100.0), TW_OK);
    assert_int_equal(tw_scenario_add_kernel(sc, "b", 3.0, 0.5, 50.0), TW_OK);
    assert_int_equal(tw_scenario_set_duration(sc, 5.0), TW_OK);
    tw_sim_run_options o;
    tw_sim_run_options_init(&o);
    char trace[1024];
    snprintf(trace, sizeof trace, "%s", tw_test_path(0, "cli_api_sim.csv"));
    o.trace = trace;
    o.json = true;
    capture c;
    capture_open(&c);
    assert_int_equal(tw_sim_run(sc, &o, c.f), TW_OK);
    char *text = capture_close(&c);
    assert_non_null(strstr(text, "\"kernels\""));
    free(text);
    char events[1100];
    snprintf(events, sizeof events, "%.*s.events.csv", (int)(strlen(trace) - 4), trace);
    tw_events *ev = NULL;
    assert_int_equal(tw_events_load(events, &ev), TW_OK);
    assert_int_equal(tw_events_count(ev), 2);
    assert_true(fabs(tw_events_get(ev, 0)->true_energy_j - 100.0 * 1.0) < 1e-9);
    assert_true(fabs(tw_events_get(ev, 1)->true_energy_j - 50.0 * 0.5) < 1e-9);
    tw_events_free(ev);
    tw_trace_reader *r = NULL;
    assert_int_equal(tw_trace_reader_open(trace, &r), TW_OK);
    size_t rows = 0;
    for (;;) {
        tw_row row;
        bool eof = false;
        assert_int_equal(tw_trace_reader_next(r, &row, &eof), TW_OK);
        if (eof) break;
        rows++;
    }
    tw_trace_reader_close(r);
    assert_true(rows > 5.0 / 0.03); /* updates every ~15 ms, polled faster */

    volatile int stop = 1;
    o.cancel = &stop;
    o.json = false;
    assert_int_equal(tw_sim_run(sc, &o, NULL), TW_EINTERRUPTED);
    char want[1200];
    snprintf(want, sizeof want, "the trace so far is in %s", trace);
    assert_non_null(strstr(tw_last_error(), want));
    tw_scenario_free(sc);
}

/* The backends listed, one line each, as many as tw_backend_count says, the
 * simulator always available; then a blank line and the folder the sensor
 * profiles come from (tw_profile_dir). The simulator's devices: the list's
 * indices. */
static void test_listings(void **state)
{
    (void)state;
    capture c;
    capture_open(&c);
    assert_int_equal(tw_backends_report(false, c.f), TW_OK);
    char *text = capture_close(&c);
    const char *blank = strstr(text, "\n\n");
    assert_non_null(blank);
    size_t lines = 0;
    for (const char *p = text; p <= blank; p++)
        lines += *p == '\n';
    assert_int_equal(lines, tw_backend_count());
    assert_non_null(strstr(text, "sim      available"));
    char want[1100];
    snprintf(want, sizeof want, "\nsensor profiles: %s (", tw_profile_dir());
    assert_non_null(strstr(blank, want));
    free(text);
    tw_device_info d[4];
    size_t n = 0;
    char note[256];
    assert_int_equal(tw_devices_choose("sim", "2,5", NULL, d, 4, &n, note, sizeof note), TW_OK);
    assert_int_equal(n, 2);
    assert_int_equal(d[0].index, 2);
    assert_int_equal(d[1].index, 5);
    assert_int_equal(tw_devices_choose("sim", NULL, NULL, d, 4, &n, note, sizeof note), TW_OK);
    assert_int_equal(n, 1);
    assert_int_equal(d[0].index, 0);
    assert_int_equal(tw_devices_check("0,cuda:1,GPU-abc"), TW_OK);
    assert_int_equal(tw_devices_check("zero"), TW_EINVAL);
    /* --activity-windows ON,EVERY[,busy]: 0.1 <= ON < EVERY <= 3600 s */
    assert_int_equal(tw_activity_windows_check("1,10"), TW_OK);
    assert_int_equal(tw_activity_windows_check("0.1,0.2"), TW_OK);
    assert_int_equal(tw_activity_windows_check("1,3600"), TW_OK);
    assert_int_equal(tw_activity_windows_check("1,5,busy"), TW_OK);
    const char *bad[] = {"2,1",   "1,1",     "0.05,1",    "1,3601",     "1",        "1,",        ",10", "1;10",
                         "1,10x", "1,5,bus", "1,5,busyx", "1,5,busy,1", "2,1,busy", "1,5,,busy", "",    NULL};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        assert_int_equal(tw_activity_windows_check(bad[i]), TW_EINVAL);
        assert_non_null(strstr(tw_last_error(), "ON,EVERY in seconds"));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_options_need_their_size),
        cmocka_unit_test(test_mem_lists),
        cmocka_unit_test(test_sim_run),
        cmocka_unit_test(test_listings),
    };
    return tw_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
