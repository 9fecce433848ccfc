/* The exporter's insides: a GPU's state from sampler rows (the counter's
 * offset and resets, the power window, the fallback integral, failures,
 * stalls) and the page's rendering, checked against the exposition formats'
 * rules by a parser written here from the specifications (Prometheus' text
 * format 0.0.4 and OpenMetrics 1.0), not from the renderer. */
#include <arpa/inet.h>
#include <math.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "tw_test.h"

#include "exporter/expo.h"

#define assert_near(a, b, tol) assert_true(fabs((a) - (b)) <= (tol))

/* ---------------------------------------------------------------- a parser of the formats */

#define MAXL 16
#define MAXF 64

typedef struct sample {
    char name[128];
    int nl;
    char lname[MAXL][64];
    char lval[MAXL][256];
    double value;
    bool has_ts;
    double ts;
} sample;

typedef struct page {
    char fam[MAXF][128]; /* families by TYPE, in order */
    char type[MAXF][16];
    char unit[MAXF][128];
    int nfam;
    sample s[256];
    int ns;
    int sample_fam[256]; /* the family each sample belongs to */
    bool eof;
    char err[256];
} page;

static bool name_ok(const char *p, size_t n, bool colon)
{
    if (n == 0) return false;
    for (size_t i = 0; i < n; i++) {
        char c = p[i];
        bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (colon && c == ':');
        if (!alpha && !(i > 0 && c >= '0' && c <= '9')) return false;
    }
    return true;
}

static bool parse_number(const char *p, double *out, const char **end)
{
    if (strncmp(p, "NaN", 3) == 0) return *out = NAN, *end = p + 3, true;
    if (strncmp(p, "+Inf", 4) == 0) return *out = INFINITY, *end = p + 4, true;
    if (strncmp(p, "-Inf", 4) == 0) return *out = -INFINITY, *end = p + 4, true;
    char *e;
    *out = strtod(p, &e);
    if (e == p) return false;
    *end = e;
    return true;
}

/* The family a sample name belongs to: the text format's TYPE names the
 * sample itself; OpenMetrics' names the family, samples add _total / _info. */
static int family_of(const page *pg, const char *name, bool om)
{
    for (int f = 0; f < pg->nfam; f++) {
        char want[160];
        const char *suffix = "";
        if (om && strcmp(pg->type[f], "counter") == 0) suffix = "_total";
        if (om && strcmp(pg->type[f], "info") == 0) suffix = "_info";
        snprintf(want, sizeof want, "%s%s", pg->fam[f], suffix);
        if (strcmp(want, name) == 0) return f;
    }
    return -1;
}

static bool bad(page *pg, int line, const char *why)
{
    snprintf(pg->err, sizeof pg->err, "line %d: %s", line, why);
    return false;
}

static bool parse_labels(page *pg, int line, const char **pp, sample *s)
{
    const char *p = *pp;
    if (*p != '{') return true;
    p++;
    while (*p != '}') {
        size_t n = strcspn(p, "=");
        if (!name_ok(p, n, false) || n >= 64) return bad(pg, line, "bad label name");
        if (s->nl == MAXL) return bad(pg, line, "too many labels");
        memcpy(s->lname[s->nl], p, n);
        s->lname[s->nl][n] = '\0';
        p += n + 1;
        if (*p++ != '"') return bad(pg, line, "label value without its opening quote");
        size_t k = 0;
        for (; *p != '"'; p++) {
            if (!*p || *p == '\n') return bad(pg, line, "label value not closed");
            char c = *p;
            if (c == '\\') {
                p++;
                c = *p == 'n' ? '\n' : *p == '\\' ? '\\' : *p == '"' ? '"' : 0;
                if (!c) return bad(pg, line, "unknown escape in a label value");
            }
            if (k + 1 < sizeof s->lval[0]) s->lval[s->nl][k++] = c;
        }
        s->lval[s->nl][k] = '\0';
        p++;
        s->nl++;
        if (*p == ',')
            p++;
        else if (*p != '}')
            return bad(pg, line, "labels not separated by ','");
    }
    *pp = p + 1;
    return true;
}

static bool parse_meta(page *pg, int line, const char *p, bool om)
{
    char kw[8], name[128];
    int used = 0;
    if (sscanf(p, "# %7s %127s %n", kw, name, &used) < 2) return bad(pg, line, "comment line without a keyword");
    if (!name_ok(name, strlen(name), true)) return bad(pg, line, "bad metric name in metadata");
    const char *rest = p + used;
    if (strcmp(kw, "TYPE") == 0) {
        static const char *const text_types[] = {"counter", "gauge", "histogram", "summary", "untyped", NULL};
        static const char *const om_types[] = {"counter",  "gauge",          "histogram", "summary", "info",
                                               "stateset", "gaugehistogram", "unknown",   NULL};
        bool known = false;
        for (const char *const *t = om ? om_types : text_types; *t; t++)
            known |= strcmp(*t, rest) == 0;
        if (!known) return bad(pg, line, "unknown type");
        for (int f = 0; f < pg->nfam; f++)
            if (strcmp(pg->fam[f], name) == 0) return bad(pg, line, "a second TYPE for one family");
        if (pg->nfam == MAXF) return bad(pg, line, "too many families");
        snprintf(pg->fam[pg->nfam], sizeof pg->fam[0], "%s", name);
        snprintf(pg->type[pg->nfam], sizeof pg->type[0], "%s", rest);
        pg->unit[pg->nfam][0] = '\0';
        pg->nfam++;
    } else if (strcmp(kw, "UNIT") == 0) {
        if (!om) return bad(pg, line, "UNIT in the text format");
        size_t nl = strlen(name), ul = strlen(rest);
        if (nl <= ul + 1 || strcmp(name + nl - ul, rest) != 0 || name[nl - ul - 1] != '_')
            return bad(pg, line, "a family with a unit must end in _unit");
        if (pg->nfam == 0 || strcmp(pg->fam[pg->nfam - 1], name) != 0)
            return bad(pg, line, "UNIT not right after its family's TYPE");
        snprintf(pg->unit[pg->nfam - 1], sizeof pg->unit[0], "%s", rest);
    } else if (strcmp(kw, "HELP") != 0) {
        if (om) return bad(pg, line, "unknown metadata keyword");
    }
    return true;
}

/* The whole page; false with pg->err naming the line and the rule broken. */
static bool parse_page(const char *text, bool om, page *pg)
{
    memset(pg, 0, sizeof *pg);
    int line = 0, last_fam = -1;
    bool seen[MAXF] = {false};
    for (const char *p = text; *p;) {
        line++;
        const char *nl = strchr(p, '\n');
        if (!nl) return bad(pg, line, "the last line has no line end");
        char buf[2048];
        size_t len = (size_t)(nl - p);
        if (len >= sizeof buf) return bad(pg, line, "line too long for the test");
        memcpy(buf, p, len);
        buf[len] = '\0';
        p = nl + 1;
        if (pg->eof) return bad(pg, line, "text after # EOF");
        if (om && strcmp(buf, "# EOF") == 0) {
            pg->eof = true;
            continue;
        }
        if (buf[0] == '#') {
            if (!parse_meta(pg, line, buf, om)) return false;
            continue;
        }
        if (len == 0) return bad(pg, line, "empty line");
        sample *s = &pg->s[pg->ns];
        memset(s, 0, sizeof *s);
        size_t n = strcspn(buf, "{ ");
        if (!name_ok(buf, n, true) || n >= sizeof s->name) return bad(pg, line, "bad metric name");
        memcpy(s->name, buf, n);
        const char *q = buf + n;
        if (!parse_labels(pg, line, &q, s)) return false;
        if (*q++ != ' ') return bad(pg, line, "no space before the value");
        if (!parse_number(q, &s->value, &q)) return bad(pg, line, "bad value");
        if (*q == ' ') {
            q++;
            if (!parse_number(q, &s->ts, &q)) return bad(pg, line, "bad timestamp");
            if (!om && floor(s->ts) != s->ts) return bad(pg, line, "a text-format timestamp must be integer ms");
            s->has_ts = true;
        }
        if (*q) return bad(pg, line, "text after the value");
        int f = family_of(pg, s->name, om);
        if (f < 0) return bad(pg, line, "a sample without its family's TYPE before it");
        if (f != last_fam && seen[f]) return bad(pg, line, "a family's samples not together");
        seen[f] = true;
        last_fam = f;
        pg->sample_fam[pg->ns++] = f;
    }
    if (om && !pg->eof) return bad(pg, line, "OpenMetrics without # EOF");
    return true;
}

static const char *label(const sample *s, const char *name)
{
    for (int i = 0; i < s->nl; i++)
        if (strcmp(s->lname[i], name) == 0) return s->lval[i];
    return NULL;
}

static const sample *find(const page *pg, const char *name, const char *index)
{
    for (int i = 0; i < pg->ns; i++) {
        const char *idx = label(&pg->s[i], "index");
        if (!idx) idx = label(&pg->s[i], "gpu");
        if (strcmp(pg->s[i].name, name) == 0 && (!index || (idx && strcmp(idx, index) == 0))) return &pg->s[i];
    }
    return NULL;
}

/* ---------------------------------------------------------------- rendering */

#define NASTY_MODEL "NVIDIA \"H100\"\\80GB\nSXM"

static void two_views(expo_view v[2], expo_proc *proc)
{
    memset(v, 0, 2 * sizeof *v);
    for (int i = 0; i < 2; i++) {
        v[i].index = (unsigned)i;
        v[i].uuid = i ? "GPU-b" : "GPU-a";
        v[i].model = NASTY_MODEL;
        v[i].host = "node1";
        v[i].has_energy = true;
        v[i].energy_j = 1234.5 + i;
        v[i].energy_t = 10.25;
        v[i].energy_source = "counter";
        v[i].has_power = i == 0; /* GPU 1 lost: no power */
        v[i].power_w = 301.5;
        v[i].power_reading = "power_buffer_w";
        v[i].response = "boxcar";
        v[i].profile = "data/profiles/x.json";
        v[i].stalls = 2;
        v[i].failures = 3;
        v[i].resets = 1;
        v[i].lost = i == 1;
    }
    *proc = (expo_proc){.pid = 4242, .energy_j = 55.5, .active_j = NAN, .estimate = true};
    v[0].nprocs = 1;
    v[0].procs = proc;
}

static char *render(bool om, bool dcgm)
{
    expo_view v[2];
    expo_proc proc;
    two_views(v, &proc);
    expo_render_opts o = {om, dcgm, 1.0, 1700000000000};
    tw_sbuf out = {0};
    tw_expo_render(v, 2, &o, &out);
    assert_false(out.oom);
    return out.p;
}

static void test_escape(void **state)
{
    (void)state;
    tw_sbuf b = {0};
    tw_expo_escape(&b, "a\\b\"c\nd");
    assert_string_equal(b.p, "a\\\\b\\\"c\\nd");
    free(b.p);
}

static void check_common(const page *pg)
{
    const sample *e = find(pg, "truewatt_gpu_energy_joules_total", "0");
    assert_non_null(e);
    assert_true(e->value == 1234.5);
    assert_string_equal(label(e, "model"), NASTY_MODEL); /* escaped and read back whole */
    assert_string_equal(label(e, "uuid"), "GPU-a");
    assert_string_equal(label(e, "host"), "node1");
    assert_true(e->has_ts);
    assert_non_null(find(pg, "truewatt_gpu_power_watts", "0"));
    assert_null(find(pg, "truewatt_gpu_power_watts", "1")); /* the lost GPU has no power */
    assert_true(find(pg, "truewatt_gpu_lost", "1")->value == 1);
    assert_true(find(pg, "truewatt_gpu_lost", "0")->value == 0);
    assert_true(find(pg, "truewatt_gpu_sensor_stalls_total", "1")->value == 2);
    assert_true(find(pg, "truewatt_gpu_read_failures_total", "1")->value == 3);
    const sample *info = find(pg, "truewatt_gpu_sensor_info", "0");
    assert_non_null(info);
    assert_string_equal(label(info, "power_reading"), "power_buffer_w");
    assert_string_equal(label(info, "energy_source"), "counter");
    const sample *p = find(pg, "truewatt_process_energy_joules_total", "0");
    assert_non_null(p);
    assert_string_equal(label(p, "pid"), "4242");
    assert_string_equal(label(p, "source"), "estimate");
    assert_true(find(pg, "truewatt_gpu_power_window_seconds", NULL)->value == 1.0);
}

static void test_text_format(void **state)
{
    (void)state;
    char *text = render(false, true);
    page pg;
    bool ok = parse_page(text, false, &pg);
    if (!ok) fprintf(stderr, "%s\n%s\n", pg.err, text);
    assert_true(ok);
    check_common(&pg);
    /* ms since 1970: t0's 1700000000000 + 10.25 s */
    assert_true(find(&pg, "truewatt_gpu_energy_joules_total", "0")->ts == 1700000010250.0);
    const sample *d = find(&pg, "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "1");
    assert_non_null(d);
    assert_true(d->value == 1235500.0); /* mJ */
    assert_string_equal(label(d, "UUID"), "GPU-b");
    assert_string_equal(label(d, "device"), "nvidia1");
    assert_string_equal(label(d, "modelName"), NASTY_MODEL);
    assert_string_equal(label(d, "Hostname"), "node1");
    assert_null(strstr(text, "# EOF"));
    free(text);
}

static void test_openmetrics(void **state)
{
    (void)state;
    char *text = render(true, false);
    page pg;
    bool ok = parse_page(text, true, &pg);
    if (!ok) fprintf(stderr, "%s\n%s\n", pg.err, text);
    assert_true(ok);
    check_common(&pg);
    assert_true(find(&pg, "truewatt_gpu_energy_joules_total", "0")->ts == 1700000010.25); /* seconds */
    assert_null(find(&pg, "DCGM_FI_DEV_POWER_USAGE", NULL));                              /* only when asked */
    free(text);
}

/* A checker that accepts anything would pass the tests above: these pages break a rule each. */
static void test_parser_rejects(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        bool om;
    } bad[] = {
        {"x_total 1\n", false},                                                      /* no TYPE */
        {"# TYPE x gauge\nx{a=\"b\\q\"} 1\n", false},                                /* unknown escape */
        {"# TYPE x gauge\nx{a=\"b\"} 1 1.5\n", false},                               /* ms not integer */
        {"# TYPE x counter\nx_total 1\n", false},                                    /* text: TYPE names the sample */
        {"# TYPE x counter\nx_total 1\n", true},                                     /* no # EOF */
        {"# TYPE x gauge\n# TYPE y gauge\nx 1\ny 1\nx 2\n", false},                  /* family split */
        {"# TYPE x_joules gauge\n# UNIT x_joules watts\nx_joules 1\n# EOF\n", true}, /* unit */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        page pg;
        assert_false(parse_page(bad[i].text, bad[i].om, &pg));
    }
}

/* ---------------------------------------------------------------- state from rows */

static void row(expo_gpu *g, double t, const char *name, double value)
{
    const char *names[1] = {name};
    double v[1] = {value}, tv[1] = {t};
    uint8_t valid[1] = {1};
    tw_row r = {t, 1, v, tv, valid};
    tw_expo_gpu_row(g, names, &r);
}

static void test_counter(void **state)
{
    (void)state;
    expo_gpu g;
    assert_int_equal(tw_expo_gpu_init(&g, 0, "GPU-a", "m"), TW_OK);
    /* a counter at 1000 J: 0 at the start, then +50 J, +50 J; then back to 20 J (a reset): +20 J */
    row(&g, 0.0, "energy_j", 1000.0);
    row(&g, 0.5, "energy_j", 1050.0);
    row(&g, 1.0, "energy_j", 1100.0);
    row(&g, 1.5, "energy_j", 20.0);
    expo_view v;
    tw_expo_gpu_view(&g, 1.0, "h", &v);
    assert_true(v.has_energy);
    assert_string_equal(v.energy_source, "counter");
    assert_near(v.energy_j, 120.0, 1e-9);
    assert_near(v.energy_t, 1.5, 1e-12);
    assert_int_equal(v.resets, 1);
    tw_expo_gpu_free(&g);
}

static void test_power_window(void **state)
{
    (void)state;
    expo_gpu g;
    assert_int_equal(tw_expo_gpu_init(&g, 0, "GPU-a", "m"), TW_OK);
    /* buffer samples every 20 ms: 100 W until t = 1 s, then 200 W; each the mean of the 20 ms before it */
    for (int k = 1; k <= 100; k++)
        row(&g, 0.02 * k, "power_buffer_w", k <= 50 ? 100.0 : 200.0);
    expo_view v;
    tw_expo_gpu_view(&g, 0.5, "h", &v);
    assert_true(v.has_power);
    assert_string_equal(v.power_reading, "power_buffer_w");
    assert_near(v.power_w, 200.0, 1e-9); /* the last 0.5 s: all 200 W */
    tw_expo_gpu_view(&g, 2.0, "h", &v);
    /* the whole record, (0.02, 2.0]: 49 samples of 100 W and 50 of 200 W, 20 ms each */
    assert_near(v.power_w, (49 * 100.0 + 50 * 200.0) / 99.0, 1e-9);
    assert_false(v.has_energy); /* 1.98 s of rows without a counter: not chosen yet */
    /* no counter 2 s after the first row: the energy is the buffer's integral, (0.02, 2.1] */
    row(&g, 2.1, "power_buffer_w", 300.0);
    tw_expo_gpu_view(&g, 2.0, "h", &v);
    assert_true(v.has_energy);
    assert_string_equal(v.energy_source, "power_buffer_w");
    assert_near(v.energy_j, 0.02 * (49 * 100.0 + 50 * 200.0) + 0.1 * 300.0, 1e-9);
    tw_expo_gpu_free(&g);
}

static void test_health(void **state)
{
    (void)state;
    expo_gpu g;
    assert_int_equal(tw_expo_gpu_init(&g, 0, "GPU-a", "m"), TW_OK);
    row(&g, 1.0, "power_usage_w", 100.0);
    row(&g, 1.1, "power_usage_w", 100.0);
    row(&g, 4.0, "power_usage_w", 100.0); /* 2.9 s without a row: a stall */
    row(&g, 5.0, "power_usage_w", 100.0);
    expo_view v;
    tw_expo_gpu_view(&g, 1.0, "h", &v);
    assert_int_equal(v.stalls, 1);
    assert_false(v.lost);
    assert_true(v.has_power);
    tw_expo_gpu_failed(&g, "GPU is lost");
    tw_expo_gpu_view(&g, 1.0, "h", &v);
    assert_true(v.lost);
    assert_false(v.has_power); /* a lost GPU has no power, but keeps its energy: */
    assert_true(v.has_energy); /* no counter, so its power reading's integral over (1, 5] s */
    assert_string_equal(v.energy_source, "power_usage_w");
    assert_near(v.energy_j, 400.0, 1e-9);
    tw_expo_gpu_free(&g);
}

/* ---------------------------------------------------------------- the public API, over HTTP */

/* One HTTP/1.0 request to the exporter's address ("127.0.0.1:PORT"); the whole answer (malloc'd). */
static char *http(const char *address, const char *request)
{
    const char *colon = strrchr(address, ':');
    struct sockaddr_in sa = {0};
    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)atoi(colon + 1));
    inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof sa), 0);
    assert_true(write(fd, request, strlen(request)) == (ssize_t)strlen(request));
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    ssize_t k;
    while ((k = read(fd, buf + len, cap - 1 - len)) > 0) {
        len += (size_t)k;
        if (len + 1 >= cap) buf = realloc(buf, cap *= 2);
    }
    close(fd);
    buf[len] = '\0';
    return buf;
}

static void sleep_s(double s)
{
    struct timespec d = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    nanosleep(&d, NULL);
}

/* Two fake GPUs at 250 W and 100 W, the second lost after 0.8 s: the page over HTTP in both
 * formats, the lost GPU marked and the other one still measured. */
/* The exporter on the fake NVML, on a free port of the loopback. */
static tw_exporter_config fake_config(tw_sensor_config *base)
{
    *base = (tw_sensor_config){0};
    base->library = TW_FAKE_NVML_PATH;
    tw_exporter_config cfg = {0};
    cfg.size = sizeof cfg;
    cfg.listen = "127.0.0.1:0";
    cfg.base = base;
    return cfg;
}

static void test_api(void **state)
{
    (void)state;
    setenv("TW_FAKE_NVML_DEVICES", "2", 1);
    setenv("TW_FAKE_NVML_DEVICE_POWER_W", "250,100", 1);
    setenv("TW_FAKE_NVML_LOST_DEVICE", "1", 1);
    setenv("TW_FAKE_NVML_LOST_AFTER_S", "0.8", 1);
    tw_sensor_config base;
    tw_exporter_config cfg = fake_config(&base);
    cfg.hostname = "host\"1";
    tw_exporter *e = NULL;
    assert_int_equal(tw_exporter_start(&cfg, &e), TW_OK);
    const char *addr = tw_exporter_address(e);
    assert_true(strncmp(addr, "127.0.0.1:", 10) == 0 && atoi(addr + 10) > 0);
    sleep_s(2.0);
    char *text = http(addr, "GET /metrics HTTP/1.0\r\n\r\n");
    assert_non_null(strstr(text, "HTTP/1.0 200") ? text : strstr(text, "HTTP/1.1 200"));
    assert_non_null(strstr(text, "Content-Type: text/plain; version=0.0.4"));
    page pg;
    const char *body = strstr(text, "\r\n\r\n") + 4;
    bool ok = parse_page(body, false, &pg);
    if (!ok) fprintf(stderr, "%s\n%s\n", pg.err, body);
    assert_true(ok);
    const sample *p0 = find(&pg, "truewatt_gpu_power_watts", "0");
    assert_non_null(p0);
    assert_near(p0->value, 250.0, 1e-6); /* the fake's buffer samples are the exact means */
    assert_string_equal(label(p0, "host"), "host\"1");
    assert_true(find(&pg, "truewatt_gpu_energy_joules_total", "0")->value > 0);
    assert_true(find(&pg, "truewatt_gpu_lost", "0")->value == 0);
    assert_true(find(&pg, "truewatt_gpu_lost", "1")->value == 1);
    assert_null(find(&pg, "truewatt_gpu_power_watts", "1"));
    free(text);
    text = http(addr, "GET /metrics HTTP/1.0\r\nAccept: application/openmetrics-text;version=1.0.0,*/*;q=0.1\r\n\r\n");
    assert_non_null(strstr(text, "Content-Type: application/openmetrics-text; version=1.0.0"));
    ok = parse_page(strstr(text, "\r\n\r\n") + 4, true, &pg);
    if (!ok) fprintf(stderr, "%s\n", pg.err);
    assert_true(ok);
    free(text);
    text = http(addr, "GET /nothing HTTP/1.0\r\n\r\n");
    assert_non_null(strstr(text, " 404 "));
    free(text);
    text = http(addr, "POST /metrics HTTP/1.0\r\nContent-Length: 0\r\n\r\n");
    assert_non_null(strstr(text, " 405 "));
    free(text);
    char *direct = NULL;
    assert_int_equal(tw_exporter_render(e, false, &direct, NULL), TW_OK);
    assert_non_null(strstr(direct, "truewatt_gpu_energy_joules_total{"));
    free(direct);
    assert_int_equal(tw_exporter_stop(e), TW_OK);
    unsetenv("TW_FAKE_NVML_LOST_DEVICE");
    unsetenv("TW_FAKE_NVML_LOST_AFTER_S");
}

/* Measured processes (--processes with a report folder, through the API): a finished report is
 * published as source="truewatt run" with its energies; a running one's pid gets no estimate; a
 * pid no report names is estimated; a malformed report is said once through the log. */
static char logged[2048];
static void keep_log(void *user, const char *line)
{
    (void)user;
    size_t len = strlen(logged);
    snprintf(logged + len, sizeof logged - len, "%s\n", line);
}

static void test_api_reports(void **state)
{
    (void)state;
    char dir[] = "/tmp/tw-expo-reports.XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[256];
    snprintf(path, sizeof path, "%s/1-1.twproc", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "truewatt-process 1\nwriter\t1\t1\npid\t4321\ncommand\tgemm\njob\t7.0\nstate\tdone\n"
               "gpu\tGPU-fake-0000-0000-0000-000000000000\t12.5\t2.5\n");
    fclose(f);
    snprintf(path, sizeof path, "%s/bad.twproc", dir);
    f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "truewatt-process 1\npid\tx\n");
    fclose(f);
    const char *uuids[] = {"GPU-fake-0000-0000-0000-000000000000"};
    tw_proc_report_info info = {
        .size = sizeof info, .dir = dir, .pid = 4322, .command = "a", .uuids = uuids, .n_uuids = 1};
    tw_proc_report *running = NULL;
    assert_int_equal(tw_proc_report_begin(&info, &running), TW_OK);
    setenv("TW_FAKE_NVML_DEVICES", "1", 1);
    setenv("TW_FAKE_NVML_PROCESSES", "0:4322:50,0:4323:25", 1);
    tw_sensor_config base;
    tw_exporter_config cfg = fake_config(&base);
    cfg.processes = true;
    cfg.process_dir = dir;
    cfg.log = keep_log;
    tw_exporter *e = NULL;
    assert_int_equal(tw_exporter_start(&cfg, &e), TW_OK);
    char *text = NULL;
    for (int i = 0; i < 2; i++) { /* the estimate needs two scrapes: the energy between them */
        sleep_s(1.0);
        free(text);
        assert_int_equal(tw_exporter_render(e, false, &text, NULL), TW_OK);
    }
    page pg;
    assert_true(parse_page(text, false, &pg));
    const sample *m = NULL, *a = NULL, *est = NULL;
    for (int i = 0; i < pg.ns; i++) {
        const sample *x = &pg.s[i];
        const char *pid = label(x, "pid");
        if (!pid) continue;
        assert_string_not_equal(pid, "4322"); /* measured by a run still going: no estimate */
        if (strcmp(x->name, "truewatt_process_energy_joules_total") == 0 && strcmp(pid, "4321") == 0) m = x;
        if (strcmp(x->name, "truewatt_process_active_energy_joules_total") == 0 && strcmp(pid, "4321") == 0) a = x;
        if (strcmp(x->name, "truewatt_process_energy_joules_total") == 0 && strcmp(pid, "4323") == 0) est = x;
    }
    assert_non_null(m);
    assert_true(m->value == 12.5);
    assert_string_equal(label(m, "source"), "truewatt run");
    assert_string_equal(label(m, "job"), "7.0");
    assert_string_equal(label(m, "command"), "gemm");
    assert_non_null(a);
    assert_true(a->value == 2.5);
    assert_non_null(est);
    assert_string_equal(label(est, "source"), "estimate");
    assert_true(est->value == 0); /* its share held while the measured run on its GPU goes on */
    assert_non_null(strstr(logged, "bad.twproc: line 2: pid: not a process id (ignored)"));
    assert_null(strstr(strstr(logged, "bad.twproc") + 1, "bad.twproc")); /* said once */
    free(text);
    /* the run ends without an energy (its estimate failed): the held share is the estimate's */
    assert_int_equal(tw_proc_report_end(running), TW_OK);
    sleep_s(0.3);
    assert_int_equal(tw_exporter_render(e, false, &text, NULL), TW_OK);
    assert_true(parse_page(text, false, &pg));
    est = NULL;
    for (int i = 0; i < pg.ns; i++) {
        const char *pid = label(&pg.s[i], "pid");
        assert_false(pid && strcmp(pid, "4322") == 0); /* done, no energy: not published, not estimated */
        if (pid && strcmp(pg.s[i].name, "truewatt_process_energy_joules_total") == 0 && strcmp(pid, "4323") == 0)
            est = &pg.s[i];
    }
    assert_non_null(est);
    assert_true(est->value > 0);
    free(text);
    assert_int_equal(tw_exporter_stop(e), TW_OK);
    unsetenv("TW_FAKE_NVML_PROCESSES");
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
}

/* NVML errors rather than a lost GPU (999, NVML_ERROR_UNKNOWN, on every call to GPU 1 after 0.3 s):
 * the failed reads are counted, the GPU is given up after 1 s of them, GPU 0 goes on. */
static void test_api_nvml_errors(void **state)
{
    (void)state;
    setenv("TW_FAKE_NVML_DEVICES", "2", 1);
    unsetenv("TW_FAKE_NVML_DEVICE_POWER_W");
    setenv("TW_FAKE_NVML_LOST_DEVICE", "1", 1);
    setenv("TW_FAKE_NVML_LOST_AFTER_S", "0.3", 1);
    setenv("TW_FAKE_NVML_LOST_CODE", "999", 1);
    tw_sensor_config base;
    tw_exporter_config cfg = fake_config(&base);
    tw_exporter *e = NULL;
    assert_int_equal(tw_exporter_start(&cfg, &e), TW_OK);
    sleep_s(2.0);
    char *text = NULL;
    assert_int_equal(tw_exporter_render(e, false, &text, NULL), TW_OK);
    page pg;
    assert_true(parse_page(text, false, &pg));
    assert_true(find(&pg, "truewatt_gpu_read_failures_total", "1")->value >= 5); /* DEAD_ROWS in nvml.c */
    assert_true(find(&pg, "truewatt_gpu_read_failures_total", "0")->value == 0);
    assert_true(find(&pg, "truewatt_gpu_lost", "1")->value == 1);
    assert_true(find(&pg, "truewatt_gpu_lost", "0")->value == 0);
    assert_non_null(find(&pg, "truewatt_gpu_power_watts", "0"));
    free(text);
    assert_int_equal(tw_exporter_stop(e), TW_OK);
    unsetenv("TW_FAKE_NVML_LOST_DEVICE");
    unsetenv("TW_FAKE_NVML_LOST_AFTER_S");
    unsetenv("TW_FAKE_NVML_LOST_CODE");
}

static void test_api_bad_config(void **state)
{
    (void)state;
    tw_exporter *e = NULL;
    tw_exporter_config cfg = {0};
    assert_int_equal(tw_exporter_start(&cfg, &e), TW_EINVAL); /* size not set */
    cfg.size = sizeof cfg;
    cfg.listen = "127.0.0.1";
    assert_int_equal(tw_exporter_start(&cfg, &e), TW_EINVAL);
    assert_non_null(strstr(tw_last_error(), "give ADDR:PORT"));
    cfg.listen = "127.0.0.1:0";
    cfg.window_s = 100;
    assert_int_equal(tw_exporter_start(&cfg, &e), TW_EINVAL);
    assert_null(e);
    assert_int_equal(tw_exporter_stop(NULL), TW_OK);
}

/* ---------------------------------------------------------------- a shared GPU's processes */

/* One GPU at a constant 400 W scraped every second (400 J an interval); another process at 80 %
 * SM (320 J an interval by its share). A measured run is seen running at scrapes 2 and 3 and done
 * at scrape 4 with its report's energy (still there at scrape 5). Expected values by hand from 400 W:
 * the window is scrapes 2-4 (1200 J): the run gets its report (at most 1200 J), the estimate
 * the rest (at most its 3 x 320 J), never more than the GPU's 2000 J together. */
static void shared_gpu(double report_j, bool killed, double *run_j, double *other_j, double *held_mid)
{
    expo_gpu g;
    memset(&g, 0, sizeof g);
    expo_share other = {4242, 320.0};
    expo_report rep = {.writer_pid = 10,
                       .writer_start = 99,
                       .pid = 4243,
                       .command = "gemm",
                       .job = "",
                       .fresh = true,
                       .energy_j = NAN,
                       .active_j = NAN};
    for (int scrape = 1; scrape <= 5; scrape++) {
        size_t nrep = scrape >= 2 && !(killed && scrape >= 4);
        rep.done = scrape >= 4;
        rep.fresh = scrape == 2;
        rep.energy_j = rep.done ? report_j : NAN;
        rep.active_j = rep.done ? report_j / 2 : NAN;
        assert_true(tw_expo_procs_account(&g, 400.0, &other, 1, &rep, nrep, scrape, 600.0));
        if (scrape == 3) *held_mid = g.procs[0].energy_j;
    }
    *run_j = NAN;
    for (size_t i = 0; i < g.nruns; i++)
        if (g.runs[i].settled) *run_j = g.runs[i].energy_j;
    assert_int_equal(g.nprocs, 1);
    assert_int_equal(g.procs[0].pid, 4242);
    *other_j = g.procs[0].energy_j;
    assert_false(g.held);
    tw_expo_gpu_free(&g);
}

static void test_shared_gpu(void **state)
{
    (void)state;
    double run, other, mid;
    /* the run's report 700 J (1.75 s at 400 W): the estimate 320 J (scrape 1) + 1200 - 700 + 320 J (scrape 5) */
    shared_gpu(700.0, false, &run, &other, &mid);
    assert_near(mid, 320.0, 1e-9); /* held while the run goes on */
    assert_near(run, 700.0, 1e-9);
    assert_near(other, 320.0 + 500.0 + 320.0, 1e-9);
    assert_true(run + other <= 5 * 400.0 + 1e-9); /* the old split: 700 + 5 x 320 = 2300 J */
    /* a report of 1500 J, more than the window's 1200 J: the run 1200 J, the estimate nothing of the window */
    shared_gpu(1500.0, false, &run, &other, &mid);
    assert_near(run, 1200.0, 1e-9);
    assert_near(other, 640.0, 1e-9);
    /* a report of 100 J: the estimate its whole share (3 x 320 J), not the rest (1100 J) */
    shared_gpu(100.0, false, &run, &other, &mid);
    assert_near(run, 100.0, 1e-9);
    assert_near(other, 5 * 320.0, 1e-9);
    /* the run killed (its report gone before done): the estimate its whole share, the run nothing */
    shared_gpu(700.0, true, &run, &other, &mid);
    assert_true(isnan(run));
    assert_near(other, 5 * 320.0, 1e-9);
}

/* A report written before the exporter started (not fresh) is published as it says and holds
 * nothing; a second report of the same run later is not accounted again. */
static void test_shared_gpu_old_report(void **state)
{
    (void)state;
    expo_gpu g;
    memset(&g, 0, sizeof g);
    expo_share other = {4242, 320.0};
    expo_report rep = {.writer_pid = 10,
                       .writer_start = 99,
                       .pid = 4243,
                       .command = "gemm",
                       .job = "7.0",
                       .done = true,
                       .fresh = false,
                       .energy_j = 5000.0,
                       .active_j = 100.0};
    for (int scrape = 1; scrape <= 2; scrape++)
        assert_true(tw_expo_procs_account(&g, 400.0, &other, 1, &rep, 1, scrape, 600.0));
    assert_int_equal(g.nruns, 1);
    assert_true(g.runs[0].settled);
    assert_near(g.runs[0].energy_j, 5000.0, 0);
    assert_near(g.runs[0].active_j, 100.0, 0);
    assert_string_equal(g.runs[0].job, "7.0");
    assert_near(g.procs[0].energy_j, 640.0, 1e-9);
    assert_true(tw_expo_procs_measured(&g, 4243));
    assert_false(tw_expo_procs_measured(&g, 4242));
    assert_true(tw_expo_procs_account(&g, 400.0, &other, 1, NULL, 0, 3, 600.0)); /* the report expired */
    assert_int_equal(g.nruns, 0);
    tw_expo_gpu_free(&g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_escape),
        cmocka_unit_test(test_text_format),
        cmocka_unit_test(test_openmetrics),
        cmocka_unit_test(test_parser_rejects),
        cmocka_unit_test(test_counter),
        cmocka_unit_test(test_power_window),
        cmocka_unit_test(test_health),
        cmocka_unit_test(test_api),
        cmocka_unit_test(test_api_nvml_errors),
        cmocka_unit_test(test_api_reports),
        cmocka_unit_test(test_api_bad_config),
        cmocka_unit_test(test_shared_gpu),
        cmocka_unit_test(test_shared_gpu_old_report),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
