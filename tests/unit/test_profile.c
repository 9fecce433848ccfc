/* Unit tests of sensor profiles (src/correct/profile.c): the ranking of
 * readings, JSON save/load round trips (NaN as null), unknown keys ignored,
 * malformed files rejected with a message naming the file, file names,
 * lookup by GPU and driver, and the committed example
 * tests/data/profile_h100_sim.json, which this test writes: run it with
 * TW_UPDATE_EXAMPLE=1 to regenerate the file after a deliberate change. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tw_test.h"

#include "correct/profile.h"

#define EXAMPLE TW_TEST_DATA "/profile_h100_sim.json"

static void assert_ok(tw_status st)
{
    if (st != TW_OK) fail_msg("%s: %s", tw_strerror(st), tw_last_error());
}

static tw_reading_model model(const char *name, tw_response r, double period_s, double window_s, double coverage)
{
    tw_reading_model m;
    tw_reading_model_init(&m, name);
    m.response = r;
    m.period_s = m.period_p10_s = m.period_p90_s = period_s;
    m.window_s = window_s;
    m.delay_s = 0.0;
    m.coverage = coverage;
    m.rms_w = 0.5;
    m.updates = 100;
    return m;
}

/* The simulated H100 (src/sensor/sim.c) as `sensor identify` would describe
 * it. Illustrative numbers written by this test, not a measurement (the
 * command field says so). */
static void example_profile(tw_profile *p)
{
    tw_profile_init(p);
    snprintf(p->gpu, sizeof p->gpu, "NVIDIA H100 80GB HBM3");
    snprintf(p->driver, sizeof p->driver, "sim");
    snprintf(p->backend, sizeof p->backend, "sim");
    snprintf(p->created, sizeof p->created, "2026-01-01T00:00:00Z");
    snprintf(p->command, sizeof p->command,
             "example written by tests/unit/test_profile.c (illustrative numbers for the simulated H100, "
             "not a measurement)");
    p->idle_w = 61.5;
    p->active_idle_w = 116.75;
    p->step_w = 300.0;
    tw_reading_model m = model("power_usage_w", TW_RESP_BOXCAR, 0.100, 1.0, 1.0);
    m.rms_w = m.rms_boxcar_w = 0.41;
    m.rms_rc_w = 6.2;
    m.updates = 170;
    assert_ok(tw_profile_set(p, &m));
    m = model("power_instant_w", TW_RESP_WINDOW, 0.100, 0.025, 0.25);
    m.delay_s = 0.0005;
    m.rms_w = m.rms_boxcar_w = 0.52;
    m.rms_rc_w = 9.8;
    m.updates = 170;
    assert_ok(tw_profile_set(p, &m));
    m = model("energy_j", TW_RESP_COUNTER, 0.100, 0.100, 1.0);
    m.rms_w = 0.02;
    m.updates = 170;
    assert_ok(tw_profile_set(p, &m));
    m = model("power_buffer_w", TW_RESP_BOXCAR, 0.020, 0.020, 1.0);
    m.period_p10_s = 0.013;
    m.period_p90_s = 0.028;
    m.rms_w = m.rms_boxcar_w = 0.03;
    m.rms_rc_w = 4.1;
    m.updates = 850;
    assert_ok(tw_profile_set(p, &m));
}

static bool same_number(double a, double b)
{
    if (isnan(a) || isnan(b)) return isnan(a) && isnan(b);
    return fabs(a - b) <= 1e-9 * fmax(1.0, fabs(a));
}

static void assert_same_profile(const tw_profile *a, const tw_profile *b)
{
    assert_string_equal(a->gpu, b->gpu);
    assert_string_equal(a->driver, b->driver);
    assert_string_equal(a->backend, b->backend);
    assert_string_equal(a->created, b->created);
    assert_string_equal(a->command, b->command);
    assert_true(same_number(a->idle_w, b->idle_w));
    assert_true(same_number(a->active_idle_w, b->active_idle_w));
    assert_true(same_number(a->step_w, b->step_w));
    assert_int_equal(a->n, b->n);
    for (size_t i = 0; i < a->n; i++) {
        const tw_reading_model *x = &a->r[i], *y = &b->r[i];
        assert_string_equal(x->name, y->name);
        assert_int_equal(x->response, y->response);
        const double xs[] = {x->period_s, x->period_p10_s,  x->period_p90_s, x->window_s,
                             x->delay_s,  x->capacitance_s, x->coverage,     x->rms_w,
                             x->rms_rc_w, x->rms_boxcar_w,  x->step_w};
        const double ys[] = {y->period_s, y->period_p10_s,  y->period_p90_s, y->window_s,
                             y->delay_s,  y->capacitance_s, y->coverage,     y->rms_w,
                             y->rms_rc_w, y->rms_boxcar_w,  y->step_w};
        for (size_t k = 0; k < sizeof xs / sizeof xs[0]; k++)
            if (!same_number(xs[k], ys[k])) fail_msg("%s: field %zu: %.17g vs %.17g", x->name, k, xs[k], ys[k]);
        assert_true(x->updates == y->updates);
    }
}

/* Loading `text` fails with TW_EPARSE and a message naming the file and holding `want`. */
static void load_bad(const char *text, const char *want)
{
    const char *path = tw_test_file(1, text);
    tw_profile p;
    tw_status st = tw_profile_load(path, &p);
    if (st != TW_EPARSE) fail_msg("loaded (status %d) but should not: %s", st, text);
    const char *e = tw_last_error();
    if (!strstr(e, path) || !strstr(e, want)) fail_msg("error '%s' lacks the path or '%s'", e, want);
    assert_int_equal(p.n, 0);
}

/* One reading of a profile with the given response, period and updates (JSON text). */
static void reading(char *out, size_t cap, const char *response, const char *period, const char *updates)
{
    snprintf(out, cap,
             "{\"name\": \"r\", \"response\": \"%s\", \"period_s\": %s, \"period_p10_s\": 1, "
             "\"period_p90_s\": 1, \"window_s\": 1, \"delay_s\": 1, \"capacitance_s\": 1, "
             "\"coverage\": 1, \"rms_w\": 1, \"rms_rc_w\": 1, \"rms_boxcar_w\": 1, \"step_w\": 1, \"updates\": %s}",
             response, period, updates);
}

/* ---------------------------------------------------------------- tests */

static void test_init_set_find(void **state)
{
    (void)state;
    tw_profile p;
    tw_profile_init(&p);
    assert_string_equal(p.gpu, "");
    assert_true(isnan(p.idle_w) && isnan(p.active_idle_w) && isnan(p.step_w));
    assert_int_equal(p.n, 0);
    tw_reading_model m;
    tw_reading_model_init(&m, "power_w");
    assert_string_equal(m.name, "power_w");
    assert_int_equal(m.response, TW_RESP_UNKNOWN);
    assert_true(isnan(m.period_s) && isnan(m.window_s) && isnan(m.capacitance_s) && isnan(m.rms_boxcar_w));
    assert_true(m.updates == 0);
    assert_null(tw_profile_find(&p, "power_w"));
    assert_ok(tw_profile_set(&p, &m));
    m.response = TW_RESP_RC;
    assert_ok(tw_profile_set(&p, &m)); /* replaces */
    assert_int_equal(p.n, 1);
    assert_int_equal(tw_profile_find(&p, "power_w")->response, TW_RESP_RC);
    for (int i = 1; i < TW_PROFILE_MAX_READINGS; i++) {
        char name[32];
        snprintf(name, sizeof name, "r%d", i);
        tw_reading_model_init(&m, name);
        assert_ok(tw_profile_set(&p, &m));
    }
    tw_reading_model_init(&m, "one_too_many");
    assert_int_equal(tw_profile_set(&p, &m), TW_EINVAL);
    assert_int_equal(p.n, TW_PROFILE_MAX_READINGS);
}

static void test_response_names(void **state)
{
    (void)state;
    for (int r = 0; r < TW_RESP_COUNT; r++) {
        tw_response back;
        assert_ok(tw_response_parse(tw_response_name((tw_response)r), &back));
        assert_int_equal(back, r);
    }
    assert_string_equal(tw_response_name(TW_RESP_BOXCAR), "boxcar");
    tw_response x;
    assert_int_equal(tw_response_parse("sinc", &x), TW_EPARSE);
    assert_int_equal(tw_response_parse("Boxcar", &x), TW_EPARSE);
}

static bool not_buffer(const char *name, void *ctx)
{
    (void)ctx;
    return strcmp(name, "power_buffer_w") != 0;
}

static void test_score_and_best(void **state)
{
    (void)state;
    tw_profile p;
    tw_profile_init(&p);
    tw_reading_model counter = model("energy_j", TW_RESP_COUNTER, 0.100, 0.100, 1.0);
    tw_reading_model buffer = model("power_buffer_w", TW_RESP_BOXCAR, 0.020, 0.020, 1.0);
    tw_reading_model window = model("power_instant_w", TW_RESP_WINDOW, 0.100, 0.025, 0.25);
    assert_ok(tw_profile_set(&p, &window));
    assert_ok(tw_profile_set(&p, &counter));
    assert_ok(tw_profile_set(&p, &buffer));
    double sc = tw_reading_model_score(&counter), sb = tw_reading_model_score(&buffer),
           sw = tw_reading_model_score(&window);
    assert_true(sb > sc && sc > sw && sw >= 0);
    assert_string_equal(tw_profile_best(&p, NULL, NULL)->name, "power_buffer_w");
    assert_string_equal(tw_profile_best(&p, not_buffer, NULL)->name, "energy_j");

    /* the documented formula (the helper's residual is 0.5 W):
     * 10000 round1(clamp(coverage)) + 999 - merit + 1e-3 (10 - clamp(resolution, 0, 10)) */
    assert_true(fabs(sb - (10000.0 + 999.0 - 0.5 * sqrt(0.020) + 1e-3 * (10.0 - 0.020))) < 1e-9);
    assert_true(fabs(sw - (3000.0 + 999.0 - 0.5 * sqrt(0.100) + 1e-3 * (10.0 - 0.100))) < 1e-9);
    /* coverage first: 0.50 at 10 s beats 0.39 at 1 ms; coverages equal to 1 decimal: resolution decides */
    tw_reading_model a = model("a", TW_RESP_BOXCAR, 10.0, 10.0, 0.50), b = model("b", TW_RESP_BOXCAR, 0.001, 1, 0.39);
    assert_true(tw_reading_model_score(&a) > tw_reading_model_score(&b));
    a = model("a", TW_RESP_BOXCAR, 0.100, 0.100, 0.999);
    b = model("b", TW_RESP_BOXCAR, 0.050, 0.050, 0.96);
    assert_true(tw_reading_model_score(&b) > tw_reading_model_score(&a));
    /* then the noise an estimate keeps: rms x (W / P for a deconvolved boxcar) x sqrt(resolution) */
    a = model("a", TW_RESP_COUNTER, 0.100, 0.100, 1.0);
    a.rms_w = 1.7;
    b = model("b", TW_RESP_BOXCAR, 0.100, 1.0, 1.0);
    b.rms_w = 2.2; /* x 10 by deconvolution */
    assert_true(tw_reading_model_score(&a) > tw_reading_model_score(&b));
    /* a window longer than the period sets a window reading's resolution; rc: the period */
    a = model("a", TW_RESP_WINDOW, 0.100, 0.300, 1.0);
    assert_true(fabs(tw_reading_model_score(&a) - (10000.0 + 999.0 - 0.5 * sqrt(0.300) + 1e-3 * (10.0 - 0.300))) <
                1e-9);
    a = model("a", TW_RESP_RC, 0.060, NAN, 1.0);
    a.capacitance_s = 0.84;
    assert_true(fabs(tw_reading_model_score(&a) - (10000.0 + 999.0 - 0.5 * sqrt(0.060) + 1e-3 * (10.0 - 0.060))) <
                1e-9);
    /* clamps and NaN: never below 0 for a known response; unknown is -1 */
    a = model("a", TW_RESP_COUNTER, NAN, NAN, NAN);
    assert_true(fabs(tw_reading_model_score(&a) - (999.0 - 0.5 * sqrt(10.0))) < 1e-9);
    a = model("a", TW_RESP_COUNTER, 100.0, 100.0, 1.7);
    assert_true(fabs(tw_reading_model_score(&a) - (10999.0 - 0.5 * sqrt(10.0))) < 1e-9);
    /* trust: a model whose residual exceeds 2 % of its step loses to any trusted one */
    tw_profile t;
    tw_profile_init(&t);
    a = model("fine", TW_RESP_COUNTER, 0.100, 0.100, 1.0);
    a.rms_w = 1.7;
    a.step_w = 170;
    b = model("coarse", TW_RESP_BOXCAR, 0.020, 0.020, 1.0);
    b.rms_w = 5.3;
    b.step_w = 170;
    assert_false(tw_reading_model_trusted(&b));
    assert_true(tw_reading_model_trusted(&a));
    assert_ok(tw_profile_set(&t, &b));
    assert_ok(tw_profile_set(&t, &a));
    assert_string_equal(tw_profile_best(&t, NULL, NULL)->name, "fine");
    a = model("a", TW_RESP_UNKNOWN, 0.001, 0.001, 1.0);
    assert_true(tw_reading_model_score(&a) == -1.0);

    /* unknown responses are never picked; nothing usable: NULL */
    tw_profile q;
    tw_profile_init(&q);
    assert_null(tw_profile_best(&q, NULL, NULL));
    assert_ok(tw_profile_set(&q, &a));
    assert_null(tw_profile_best(&q, NULL, NULL));
    tw_reading_model z = model("z", TW_RESP_WINDOW, NAN, NAN, NAN);
    assert_ok(tw_profile_set(&q, &z));
    assert_string_equal(tw_profile_best(&q, NULL, NULL)->name, "z");
}

static void test_round_trip_with_nan(void **state)
{
    (void)state;
    tw_profile p, back;
    example_profile(&p);
    snprintf(p.command, sizeof p.command, "truewatt sensor identify -o \"x y\\z.json\" \t caf\xc3\xa9");
    p.idle_w = NAN;    /* not measured */
    p.linger_s = 0.25; /* written only where measured */
    tw_reading_model m = model("power_w", TW_RESP_RC, 0.066, NAN, 1.0);
    m.capacitance_s = 0.8401234567;
    m.rms_w = 0.0201;
    m.rms_boxcar_w = NAN;
    m.updates = 123456789012ull;
    assert_ok(tw_profile_set(&p, &m));
    tw_reading_model u;
    tw_reading_model_init(&u, "power_mystery_w"); /* everything NaN, unknown response */
    assert_ok(tw_profile_set(&p, &u));
    const char *path = tw_test_path(2, "profile.json");
    assert_ok(tw_profile_save(&p, path));
    char tmp[600];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    assert_int_equal(access(tmp, F_OK), -1); /* renamed into place */
    assert_ok(tw_profile_load(path, &back));
    assert_same_profile(&p, &back);
    assert_true(back.linger_s == 0.25);
    char *text = tw_test_slurp(path);
    assert_non_null(text);
    assert_non_null(strstr(text, "\"idle_w\": null"));
    assert_non_null(strstr(text, "\"linger_s\": 0.25"));
    assert_non_null(strstr(text, "\"schema\": \"truewatt-sensor-profile\""));
    assert_non_null(strstr(text, "\"response\": \"unknown\""));
    assert_null(strstr(text, "nan"));
    free(text);
    unlink(path);
}

static void test_unknown_keys_ignored(void **state)
{
    (void)state;
    const char *text =
        "{\"schema\": \"truewatt-sensor-profile\", \"version\": 1, \"future\": {\"deep\": [1, {\"x\": null}]},\n"
        " \"gpu\": \"G\", \"driver\": \"1.2\", \"backend\": \"nvml\", \"created\": \"c\", \"command\": \"cmd\",\n"
        " \"idle_w\": 50, \"active_idle_w\": null, \"step_w\": 1e2, \"notes\": \"hi\",\n"
        " \"readings\": [{\"name\": \"energy_j\", \"response\": \"counter\", \"period_s\": 0.1,\n"
        "   \"period_p10_s\": 0.09, \"period_p90_s\": 0.11, \"window_s\": 0.1, \"delay_s\": 0, \"capacitance_s\": "
        "null,\n"
        "   \"coverage\": 1, \"rms_w\": 0.1, \"rms_rc_w\": null, \"rms_boxcar_w\": null, \"step_w\": null, "
        "\"updates\": 42,\n"
        "   \"extra\": [true, false]}]}\n";
    const char *path = tw_test_file(1, text);
    tw_profile p;
    assert_ok(tw_profile_load(path, &p));
    assert_string_equal(p.driver, "1.2");
    assert_true(p.idle_w == 50.0 && isnan(p.active_idle_w) && p.step_w == 100.0);
    assert_true(isnan(p.linger_s)); /* none measured: the estimator adds no linger term */
    assert_int_equal(p.n, 1);
    assert_int_equal(p.r[0].response, TW_RESP_COUNTER);
    assert_true(p.r[0].period_p90_s == 0.11 && isnan(p.r[0].capacitance_s) && p.r[0].updates == 42);
}

/* A valid document's start, up to its readings' array (a test adds one reading and the end). */
#define VALID_HEAD                                                                                                     \
    "{\"schema\": \"truewatt-sensor-profile\", \"version\": 1, \"gpu\": \"G\", \"driver\": \"D\", "                    \
    "\"backend\": \"sim\", \"created\": \"c\", \"command\": \"x\", \"idle_w\": 1, "                                    \
    "\"active_idle_w\": 2, \"step_w\": 3, \"readings\": ["

static void test_malformed_rejected(void **state)
{
    (void)state;
    /* a valid document to break one piece at a time */
    const char *head = VALID_HEAD;
    char doc[4096], r[1024];
    reading(r, sizeof r, "boxcar", "0.1", "1");
    snprintf(doc, sizeof doc, "%s%s]}", head, r);
    tw_profile p;
    assert_ok(tw_profile_load(tw_test_file(1, doc), &p));

    load_bad("{\"schema\": \"truewatt-sensor-profile\",\n \"version\" 1}", ":2:12: expected ':' after the key");
    load_bad("", ":1:1: expected a value");
    load_bad("[1, 2]", "not a truewatt sensor profile (expected an object, found array)");
    load_bad("{\"schema\": \"truewatt-trace\", \"version\": 1}", "not a truewatt sensor profile (\"schema\" is "
                                                                 "\"truewatt-trace\"");
    load_bad("{\"version\": 1}", "\"schema\" is missing or not a string");
    load_bad("{\"schema\": \"truewatt-sensor-profile\", \"version\": 2}", "version 2 is not supported");
    load_bad("{\"schema\": \"truewatt-sensor-profile\", \"version\": 1, \"gpu\": \"G\"}",
             "\"driver\": expected a string, found missing");
    snprintf(doc, sizeof doc, "%s%s]}", head, "7");
    load_bad(doc, "readings[0]: expected an object, found number");
    reading(r, sizeof r, "sinc", "0.1", "1");
    snprintf(doc, sizeof doc, "%s%s]}", head, r);
    load_bad(doc, "readings[0].\"response\": unknown response \"sinc\"");
    reading(r, sizeof r, "boxcar", "\"fast\"", "1");
    snprintf(doc, sizeof doc, "%s%s]}", head, r);
    load_bad(doc, "readings[0].\"period_s\": expected a number or null, found string");
    reading(r, sizeof r, "boxcar", "0.1", "-3");
    snprintf(doc, sizeof doc, "%s%s]}", head, r);
    load_bad(doc, "\"updates\": expected a count");
    reading(r, sizeof r, "boxcar", "0.1", "1");
    snprintf(doc, sizeof doc, "%s%s, %s]}", head, r, r);
    load_bad(doc, "reading \"r\" appears twice");
    snprintf(doc, sizeof doc, "%s%s]}", head, "{\"name\": \"r\", \"response\": \"rc\"}");
    load_bad(doc, "readings[0].\"period_s\": expected a number or null, found missing");
    char longname[200];
    memset(longname, 'x', sizeof longname - 1);
    longname[sizeof longname - 1] = '\0';
    snprintf(doc, sizeof doc, "{\"schema\": \"truewatt-sensor-profile\", \"version\": 1, \"gpu\": \"%s\"}", longname);
    load_bad(doc, "\"gpu\" is longer than 127 bytes");

    /* the optional linger: a time constant or null */
    static const char *const lingers[][2] = {{"-1", "\"linger_s\": -1 is not a time constant"},
                                             {"0", "\"linger_s\": 0 is not a time constant"},
                                             {"\"0.2\"", "\"linger_s\": expected a number or null, found string"}};
    reading(r, sizeof r, "boxcar", "0.1", "1");
    for (size_t i = 0; i < sizeof lingers / sizeof lingers[0]; i++) {
        snprintf(doc, sizeof doc, "{\"linger_s\": %s, %s%s]}", lingers[i][0], head + 1, r);
        load_bad(doc, lingers[i][1]);
    }
    snprintf(doc, sizeof doc, "{\"linger_s\": null, %s%s]}", head + 1, r);
    assert_ok(tw_profile_load(tw_test_file(1, doc), &p));
    assert_true(isnan(p.linger_s));

    const char *missing = tw_test_path(3, "no-such-profile.json");
    assert_int_equal(tw_profile_load(missing, &p), TW_ENOTFOUND);
    assert_non_null(strstr(tw_last_error(), missing));
}

static void test_file_name(void **state)
{
    (void)state;
    char name[256];
    tw_profile_file_name("NVIDIA H100 80GB HBM3", "580.159.04", name, sizeof name);
    assert_string_equal(name, "nvidia-h100-80gb-hbm3_580.159.04.json");
    tw_profile_file_name("  Tesla K20c (rev. A) ", "", name, sizeof name);
    assert_string_equal(name, "tesla-k20c-rev.-a_unknown.json");
    tw_profile_file_name("a__b/../c", "r 1_2", name, sizeof name);
    assert_string_equal(name, "a-b-..-c_r-1-2.json");
    char small[12];
    tw_profile_file_name("NVIDIA H100", "580", small, sizeof small);
    assert_string_equal(small, "nvidia-h100"); /* truncated, terminated */
}

static void test_lookup(void **state)
{
    (void)state;
    const char *dir = tw_test_path(4, "profiles");
    mkdir(dir, 0700);
    tw_profile p, got;
    example_profile(&p);
    snprintf(p.gpu, sizeof p.gpu, "NVIDIA H100 80GB HBM3");
    const char *drivers[] = {"575.64", "580.159.04", "570.86.10"};
    char path[700], name[256], used[700];
    for (size_t i = 0; i < 3; i++) {
        snprintf(p.driver, sizeof p.driver, "%s", drivers[i]);
        tw_profile_file_name(p.gpu, p.driver, name, sizeof name);
        snprintf(path, sizeof path, "%s/%s", dir, name);
        assert_ok(tw_profile_save(&p, path));
    }
    /* another GPU whose slug starts like this one's */
    snprintf(p.gpu, sizeof p.gpu, "NVIDIA H100 80GB HBM3 e");
    snprintf(p.driver, sizeof p.driver, "999");
    tw_profile_file_name(p.gpu, p.driver, name, sizeof name);
    snprintf(path, sizeof path, "%s/%s", dir, name);
    assert_ok(tw_profile_save(&p, path));

    bool exact = false;
    assert_ok(tw_profile_lookup(dir, "NVIDIA H100 80GB HBM3", "575.64", &got, used, sizeof used, &exact));
    assert_true(exact);
    assert_string_equal(got.driver, "575.64");
    assert_non_null(strstr(used, "nvidia-h100-80gb-hbm3_575.64.json"));

    exact = true;
    assert_ok(tw_profile_lookup(dir, "NVIDIA H100 80GB HBM3", "590.1", &got, used, sizeof used, &exact));
    assert_false(exact);
    assert_string_equal(got.driver, "580.159.04"); /* the newest other driver */
    assert_non_null(strstr(used, "nvidia-h100-80gb-hbm3_580.159.04.json"));

    assert_int_equal(tw_profile_lookup(dir, "NVIDIA A100-SXM4-40GB", "580.159.04", &got, used, sizeof used, &exact),
                     TW_ENOTFOUND);
    assert_non_null(strstr(tw_last_error(), "NVIDIA A100-SXM4-40GB"));
    assert_int_equal(tw_profile_lookup("/nonexistent-truewatt-dir", "G", "1", &got, NULL, 0, NULL), TW_ENOTFOUND);
    for (size_t i = 0; i < 3; i++) {
        tw_profile_file_name("NVIDIA H100 80GB HBM3", drivers[i], name, sizeof name);
        snprintf(path, sizeof path, "%s/%s", dir, name);
        unlink(path);
    }
    tw_profile_file_name("NVIDIA H100 80GB HBM3 e", "999", name, sizeof name);
    snprintf(path, sizeof path, "%s/%s", dir, name);
    unlink(path);
    rmdir(dir);
}

/* The committed example is exactly what example_profile() writes, loads,
 * and picks the driver's sample buffer. */
static void test_example_file(void **state)
{
    (void)state;
    tw_profile p, back;
    example_profile(&p);
    const char *update = getenv("TW_UPDATE_EXAMPLE");
    if (update && *update == '1') assert_ok(tw_profile_save(&p, EXAMPLE));
    const char *path = tw_test_path(5, "example.json");
    assert_ok(tw_profile_save(&p, path));
    char *want = tw_test_slurp(EXAMPLE), *got = tw_test_slurp(path);
    assert_non_null(got);
    if (!want) fail_msg("%s is missing: run test_profile with TW_UPDATE_EXAMPLE=1", EXAMPLE);
    if (strcmp(want, got))
        fail_msg("%s differs from what the test writes (%s): regenerate with TW_UPDATE_EXAMPLE=1", EXAMPLE, path);
    free(want);
    free(got);
    unlink(path);
    assert_ok(tw_profile_load(EXAMPLE, &back));
    assert_same_profile(&p, &back);
    assert_string_equal(tw_profile_best(&back, NULL, NULL)->name, "power_buffer_w");
}

/* ---------------------------------------------------------------- activity models */

/* One activity model of the features `names` (comma separated) with the given numbers. */
static void activity_model(tw_activity_model *a, const char *names, const double *power_w, const double *sd_w,
                           double residual_w, const char *source)
{
    memset(a, 0, sizeof *a);
    char buf[128];
    snprintf(buf, sizeof buf, "%s", names);
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        assert_true(a->nf < TW_PROFILE_MAX_FEATURES);
        snprintf(a->feature[a->nf], sizeof a->feature[a->nf], "%s", t);
        a->power_w[a->nf] = power_w[a->nf];
        a->sd_w[a->nf] = sd_w[a->nf];
        a->nf++;
    }
    a->residual_w = residual_w;
    snprintf(a->source, sizeof a->source, "%s", source);
}

/* The profile's JSON text (malloc'd, caller frees). */
static char *profile_text(const tw_profile *p)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    assert_non_null(f);
    assert_ok(tw_profile_write_json(p, f));
    assert_int_equal(fclose(f), 0);
    assert_non_null(text);
    return text;
}

static void assert_same_activity(const tw_profile *a, const tw_profile *b)
{
    assert_int_equal(a->n_activity, b->n_activity);
    for (size_t i = 0; i < a->n_activity; i++) {
        const tw_activity_model *x = &a->activity[i], *y = &b->activity[i];
        assert_int_equal(x->nf, y->nf);
        for (size_t k = 0; k < x->nf; k++) {
            assert_string_equal(x->feature[k], y->feature[k]);
            if (!same_number(x->power_w[k], y->power_w[k]) || !same_number(x->sd_w[k], y->sd_w[k]))
                fail_msg("model %zu, %s: %.17g +- %.17g vs %.17g +- %.17g", i, x->feature[k], x->power_w[k], x->sd_w[k],
                         y->power_w[k], y->sd_w[k]);
        }
        assert_true(same_number(x->residual_w, y->residual_w));
        /* a clock of 0 (none) is not written and reads back as NaN */
        assert_true(x->clock_mhz > 0 ? same_number(x->clock_mhz, y->clock_mhz) : isnan(y->clock_mhz));
        assert_string_equal(x->source, y->source);
    }
}

static void test_activity_round_trip(void **state)
{
    (void)state;
    tw_profile p, back;
    example_profile(&p);
    p.n_activity = 2;
    activity_model(&p.activity[0], "sm,tensor,issue,dram,l2", (const double[]){41.25, 0.0, 12.5, 87.0625, 23.1234567},
                   (const double[]){1.5, 0.75, 2.125, 3.0625, 0.0123456789}, 4.375,
                   "results/h100/activity-calib (2026-01-02, \"quoted\" \\ path)");
    activity_model(&p.activity[1], "sm,dram,l2", (const double[]){52.5, 90.25, 19.0}, (const double[]){0.5, 1.25, 2.0},
                   NAN, "");
    p.activity[0].clock_mhz = 1979.125;
    char *text = profile_text(&p);
    assert_non_null(strstr(text, "\"activity_models\""));
    assert_non_null(strstr(text, "\"clock_mhz\": 1979.125"));
    assert_ok(tw_profile_parse(text, "memory", &back));
    free(text);
    assert_same_profile(&p, &back);
    assert_same_activity(&p, &back);
    assert_true(isnan(back.activity[1].residual_w)); /* null in the file */

    /* none: no key written, none read back */
    example_profile(&p);
    assert_int_equal(p.n_activity, 0);
    text = profile_text(&p);
    assert_null(strstr(text, "activity_models"));
    back.n_activity = 3;
    assert_ok(tw_profile_parse(text, "memory", &back));
    free(text);
    assert_same_profile(&p, &back);
    assert_int_equal(back.n_activity, 0);
}

static void test_activity_for(void **state)
{
    (void)state;
    tw_activity_model m[2];
    activity_model(&m[0], "sm,tensor,issue,dram,l2", (const double[]){1, 2, 3, 4, 5}, (const double[]){1, 1, 1, 1, 1},
                   NAN, "");
    activity_model(&m[1], "sm,dram,l2", (const double[]){6, 7, 8}, (const double[]){1, 1, 1}, NAN, "");
    size_t order[TW_PROFILE_MAX_FEATURES] = {99, 99, 99, 99};

    const char *const names[] = {"l2", "sm", "dram"};
    assert_ptr_equal(tw_profile_activity_for(m, 2, names, 3, order), &m[1]);
    assert_int_equal(order[0], 2); /* l2 */
    assert_int_equal(order[1], 0); /* sm */
    assert_int_equal(order[2], 1); /* dram */
    for (size_t k = 0; k < 3; k++)
        assert_string_equal(m[1].feature[order[k]], names[k]);

    const char *const all[] = {"dram", "issue", "l2", "tensor", "sm"};
    assert_ptr_equal(tw_profile_activity_for(m, 2, all, 5, order), &m[0]);
    for (size_t k = 0; k < 5; k++)
        assert_string_equal(m[0].feature[order[k]], all[k]);

    const char *const subset[] = {"sm", "dram"};
    assert_null(tw_profile_activity_for(m, 2, subset, 2, order));
    const char *const other[] = {"sm", "dram", "tensor"};
    assert_null(tw_profile_activity_for(m, 2, other, 3, order));
    assert_null(tw_profile_activity_for(m, 1, names, 3, order)); /* only the first model searched */
    assert_null(tw_profile_activity_for(NULL, 0, names, 3, order));
}

/* Parsing `text` fails with TW_EPARSE and a message naming the origin and holding `want`. */
static void parse_bad(const char *text, const char *want)
{
    tw_profile p;
    tw_status st = tw_profile_parse(text, "bad-profile.json", &p);
    if (st != TW_EPARSE) fail_msg("parsed (status %d) but should not: %s", st, text);
    const char *e = tw_last_error();
    if (!strstr(e, "bad-profile.json") || !strstr(e, want)) fail_msg("error '%s' lacks the origin or '%s'", e, want);
    assert_int_equal(p.n, 0);
    assert_int_equal(p.n_activity, 0);
}

static void test_activity_malformed(void **state)
{
    (void)state;
    /* the valid document of test_malformed_rejected, then "activity_models": %s */
    const char *head = VALID_HEAD;
    char doc[4096], r[1024];
    reading(r, sizeof r, "boxcar", "0.1", "1");
#define DOC(models) snprintf(doc, sizeof doc, "%s%s], \"activity_models\": %s}", head, r, models)

    tw_profile p;
    DOC("[{\"features\": [\"sm\", \"dram\", \"l2\"], \"power_w\": [50, 0, 20], \"sd_w\": [1, 2, 3]}]");
    assert_ok(tw_profile_parse(doc, "good.json", &p));
    assert_int_equal(p.n_activity, 1);
    assert_int_equal(p.activity[0].nf, 3);
    assert_true(p.activity[0].power_w[1] == 0.0 && p.activity[0].sd_w[2] == 3.0);
    assert_true(isnan(p.activity[0].residual_w)); /* optional */
    assert_true(isnan(p.activity[0].clock_mhz));  /* optional: the features unscaled */
    assert_string_equal(p.activity[0].source, "");
    DOC("[{\"features\": [\"sm\"], \"power_w\": [50], \"sd_w\": [1], \"clock_mhz\": 1755}]");
    assert_ok(tw_profile_parse(doc, "good.json", &p));
    assert_true(p.activity[0].clock_mhz == 1755.0);
    DOC("[]");
    assert_ok(tw_profile_parse(doc, "good.json", &p));
    assert_int_equal(p.n_activity, 0);

    DOC("[{\"features\": [\"sm\", \"dram\", \"l2\"], \"power_w\": [50, 30, 20], \"sd_w\": [1, 2]}]");
    parse_bad(doc, "activity_models[0].\"sd_w\": expected an array of 3 numbers (one per feature)");
    DOC("[{\"features\": [\"sm\", \"dram\", \"l2\"], \"power_w\": [50, 30, 20], \"sd_w\": [1, 0, 3]}]");
    parse_bad(doc, "activity_models[0].\"sd_w\"[1]: expected a number > 0");
    DOC("[{\"features\": [\"sm\", \"dram\", \"l2\"], \"power_w\": [50, 30, -0.5], \"sd_w\": [1, 2, 3]}]");
    parse_bad(doc, "activity_models[0].\"power_w\"[2]: expected a number >= 0");
    DOC("[{\"features\": [\"sm\"], \"power_w\": [50], \"sd_w\": [1]},"
        " {\"features\": [\"sm\", \"dram\", \"sm\"], \"power_w\": [50, 30, 20], \"sd_w\": [1, 2, 3]}]");
    parse_bad(doc, "activity_models[1].\"features\": \"sm\" appears twice");
    DOC("{\"features\": [\"sm\"], \"power_w\": [50], \"sd_w\": [1]}");
    parse_bad(doc, "\"activity_models\": expected an array, found object");
    DOC("[{\"features\": [], \"power_w\": [], \"sd_w\": []}]");
    parse_bad(doc, "activity_models[0].\"features\": expected an array of 1 to 8 names");
    DOC("[{\"features\": [\"sm\"], \"power_w\": [50], \"sd_w\": [1], \"clock_mhz\": 0}]");
    parse_bad(doc, "activity_models[0].\"clock_mhz\": expected a clock above 0 MHz");
    DOC("[{\"features\": [\"sm\"], \"power_w\": [50], \"sd_w\": [1], \"clock_mhz\": \"boost\"}]");
    parse_bad(doc, "activity_models[0].\"clock_mhz\": expected a number or null, found string");
#undef DOC
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_init_set_find),
        cmocka_unit_test(test_response_names),
        cmocka_unit_test(test_score_and_best),
        cmocka_unit_test(test_round_trip_with_nan),
        cmocka_unit_test(test_unknown_keys_ignored),
        cmocka_unit_test(test_malformed_rejected),
        cmocka_unit_test(test_file_name),
        cmocka_unit_test(test_lookup),
        cmocka_unit_test(test_example_file),
        cmocka_unit_test(test_activity_round_trip),
        cmocka_unit_test(test_activity_for),
        cmocka_unit_test(test_activity_malformed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
