/* Unit tests of the streaming JSON writer (src/core/json.c, internal to the
 * library: linked from libtruewatt's static build). */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tw_test.h"

#include "core/json.h"

/* ---------------------------------------------------------------- a minimal JSON parser
 * Enough of RFC 8259 to check that the output parses back: validates the
 * grammar and collects every decoded string (keys and values) in order. */

typedef struct parser {
    const char *p;
    char strings[64][128];
    size_t nstrings;
    size_t nulls, numbers, bools;
} parser;

static void skip_ws(parser *ps)
{
    while (*ps->p == ' ' || *ps->p == '\n' || *ps->p == '\r' || *ps->p == '\t')
        ps->p++;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

static bool parse_value(parser *ps);

static bool parse_string(parser *ps)
{
    if (*ps->p != '"' || ps->nstrings >= 64) return false;
    ps->p++;
    char *out = ps->strings[ps->nstrings++];
    size_t n = 0;
    for (;;) {
        unsigned char c = (unsigned char)*ps->p++;
        if (c == '"') break;
        if (c < 0x20) return false; /* raw control characters are not allowed */
        if (c == '\\') {
            char e = *ps->p++;
            switch (e) {
            case '"':
                c = '"';
                break;
            case '\\':
                c = '\\';
                break;
            case '/':
                c = '/';
                break;
            case 'b':
                c = '\b';
                break;
            case 'f':
                c = '\f';
                break;
            case 'n':
                c = '\n';
                break;
            case 'r':
                c = '\r';
                break;
            case 't':
                c = '\t';
                break;
            case 'u': {
                int v = 0;
                for (int i = 0; i < 4; i++) {
                    int h = hexval(*ps->p++);
                    if (h < 0) return false;
                    v = v * 16 + h;
                }
                if (v >= 0x80) return false; /* only ASCII escapes are expected here */
                c = (unsigned char)v;
                break;
            }
            default:
                return false;
            }
        }
        if (n + 1 >= sizeof ps->strings[0]) return false;
        out[n++] = (char)c;
    }
    out[n] = '\0';
    return true;
}

static bool parse_number(parser *ps)
{
    const char *p = ps->p;
    if (*p == '-') p++;
    if (*p == '0')
        p++;
    else if (*p >= '1' && *p <= '9')
        while (*p >= '0' && *p <= '9')
            p++;
    else
        return false;
    if (*p == '.') {
        p++;
        if (!(*p >= '0' && *p <= '9')) return false;
        while (*p >= '0' && *p <= '9')
            p++;
    }
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '+' || *p == '-') p++;
        if (!(*p >= '0' && *p <= '9')) return false;
        while (*p >= '0' && *p <= '9')
            p++;
    }
    ps->p = p;
    ps->numbers++;
    return true;
}

static bool literal(parser *ps, const char *word)
{
    size_t n = strlen(word);
    if (strncmp(ps->p, word, n) != 0) return false;
    ps->p += n;
    return true;
}

static bool parse_container(parser *ps, char open, char close, bool object)
{
    if (*ps->p != open) return false;
    ps->p++;
    skip_ws(ps);
    if (*ps->p == close) {
        ps->p++;
        return true;
    }
    for (;;) {
        skip_ws(ps);
        if (object) {
            if (!parse_string(ps)) return false;
            skip_ws(ps);
            if (*ps->p++ != ':') return false;
        }
        if (!parse_value(ps)) return false;
        skip_ws(ps);
        char c = *ps->p++;
        if (c == close) return true;
        if (c != ',') return false;
    }
}

static bool parse_value(parser *ps)
{
    skip_ws(ps);
    switch (*ps->p) {
    case '{':
        return parse_container(ps, '{', '}', true);
    case '[':
        return parse_container(ps, '[', ']', false);
    case '"':
        return parse_string(ps);
    case 't':
        ps->bools++;
        return literal(ps, "true");
    case 'f':
        ps->bools++;
        return literal(ps, "false");
    case 'n':
        ps->nulls++;
        return literal(ps, "null");
    default:
        return parse_number(ps);
    }
}

/* Parses a whole document: one value, then only whitespace. */
static bool parse_document(parser *ps, const char *text)
{
    memset(ps, 0, sizeof *ps);
    ps->p = text;
    if (!parse_value(ps)) return false;
    skip_ws(ps);
    return *ps->p == '\0';
}

/* ---------------------------------------------------------------- tests */

static char *buf;
static size_t buf_len;

static FILE *open_buf(void)
{
    buf = NULL;
    buf_len = 0;
    FILE *f = open_memstream(&buf, &buf_len);
    assert_non_null(f);
    return f;
}

static char *close_buf(FILE *f)
{
    assert_int_equal(fclose(f), 0);
    return buf;
}

static const char *const QUOTED = "kernel \"k1\"\nsecond line";
static const char *const CONTROL = "a\tb\001c\\d\r\037e";

static void write_nested(json *j)
{
    json_begin_object(j);
    json_kv_string(j, "name", QUOTED);
    json_kv_string(j, "ctrl", CONTROL);
    json_kv_number(j, "energy_j", NAN);
    json_kv_number(j, "inf", INFINITY);
    json_kv_number(j, "power_w", 158.25);
    json_kv_uint(j, "samples", UINT64_MAX);
    json_kv_bool(j, "fitted", true);
    json_key(j, "values");
    json_begin_array(j);
    json_number(j, 1.5);
    json_number(j, -NAN);
    json_number(j, -2.0);
    json_number(j, 1e-20);
    json_bool(j, false);
    json_string(j, NULL);
    json_end_array(j);
    json_key(j, "nested");
    json_begin_object(j);
    json_key(j, "empty_array");
    json_begin_array(j);
    json_end_array(j);
    json_key(j, "empty_object");
    json_begin_object(j);
    json_end_object(j);
    json_key(j, "events");
    json_begin_array(j);
    json_begin_object(j);
    json_kv_string(j, "key \"q\"", "v");
    json_kv_number(j, "e", 0.1);
    json_end_object(j);
    json_begin_array(j);
    json_uint(j, 0);
    json_end_array(j);
    json_end_array(j);
    json_end_object(j);
    json_end_object(j);
    json_finish(j);
}

static const char *const NESTED_EXPECTED = "{\n"
                                           "  \"name\": \"kernel \\\"k1\\\"\\nsecond line\",\n"
                                           "  \"ctrl\": \"a\\tb\\u0001c\\\\d\\r\\u001fe\",\n"
                                           "  \"energy_j\": null,\n"
                                           "  \"inf\": null,\n"
                                           "  \"power_w\": 158.25,\n"
                                           "  \"samples\": 18446744073709551615,\n"
                                           "  \"fitted\": true,\n"
                                           "  \"values\": [\n"
                                           "    1.5,\n"
                                           "    null,\n"
                                           "    -2,\n"
                                           "    1e-20,\n"
                                           "    false,\n"
                                           "    null\n"
                                           "  ],\n"
                                           "  \"nested\": {\n"
                                           "    \"empty_array\": [],\n"
                                           "    \"empty_object\": {},\n"
                                           "    \"events\": [\n"
                                           "      {\n"
                                           "        \"key \\\"q\\\"\": \"v\",\n"
                                           "        \"e\": 0.1\n"
                                           "      },\n"
                                           "      [\n"
                                           "        0\n"
                                           "      ]\n"
                                           "    ]\n"
                                           "  }\n"
                                           "}\n";

static void test_nested_document_exact(void **state)
{
    (void)state;
    FILE *f = open_buf();
    json j;
    json_init(&j, f);
    write_nested(&j);
    char *out = close_buf(f);
    if (strcmp(out, NESTED_EXPECTED) != 0) fail_msg("JSON written as\n%s\nwant\n%s", out, NESTED_EXPECTED);
    free(out);
}

static void test_nested_document_parses_back(void **state)
{
    (void)state;
    FILE *f = open_buf();
    json j;
    json_init(&j, f);
    write_nested(&j);
    char *out = close_buf(f);
    static parser ps;
    if (!parse_document(&ps, out)) fail_msg("does not parse at offset %td:\n%s", ps.p - out, out);
    /* the strings come back as they went in, keys included, in order */
    static const char *const want[] = {"name",         QUOTED,    "ctrl",      CONTROL,  "energy_j", "inf",
                                       "power_w",      "samples", "fitted",    "values", "nested",   "empty_array",
                                       "empty_object", "events",  "key \"q\"", "v",      "e"};
    assert_int_equal(ps.nstrings, sizeof want / sizeof want[0]);
    for (size_t i = 0; i < ps.nstrings; i++)
        assert_string_equal(ps.strings[i], want[i]);
    assert_int_equal(ps.nulls, 4); /* NaN, inf, -NaN, NULL string: all null */
    assert_int_equal(ps.bools, 2);
    assert_int_equal(ps.numbers, 7);
    free(out);
}

static void test_scalar_documents(void **state)
{
    (void)state;
    FILE *f = open_buf();
    json j;
    json_init(&j, f);
    json_number(&j, -INFINITY);
    json_finish(&j);
    char *out = close_buf(f);
    assert_string_equal(out, "null\n");
    free(out);

    f = open_buf();
    json_init(&j, f);
    json_begin_array(&j);
    json_end_array(&j);
    json_finish(&j);
    out = close_buf(f);
    assert_string_equal(out, "[]\n");
    free(out);
}

/* An instant three days into a run, to the ns: json_kv_time keeps every
 * digit (%.10g would write 259205.1235); whole values stay short. */
static void test_times_exact(void **state)
{
    (void)state;
    const double t = 3 * 86400.0 + 5.123456789;
    FILE *f = open_buf();
    json j;
    json_init(&j, f);
    json_begin_object(&j);
    json_kv_time(&j, "start_s", t);
    json_kv_time(&j, "end_s", 1.5);
    json_kv_time(&j, "none", NAN);
    json_end_object(&j);
    json_finish(&j);
    char *out = close_buf(f);
    const char *v = strstr(out, "\"start_s\": ");
    assert_non_null(v);
    assert_true(strtod(v + strlen("\"start_s\": "), NULL) == t);
    assert_non_null(strstr(out, "\"end_s\": 1.5,"));
    assert_non_null(strstr(out, "\"none\": null"));
    free(out);
}

/* The parser itself must reject what is not JSON, or the round trip proves nothing. */
static void test_parser_rejects_bad_json(void **state)
{
    (void)state;
    static parser ps;
    assert_true(parse_document(&ps, "{\"a\": [1, null, \"x\\n\"]}\n"));
    assert_false(parse_document(&ps, "{\"a\": nan}"));
    assert_false(parse_document(&ps, "{\"a\": 1,}"));
    assert_false(parse_document(&ps, "[1 2]"));
    assert_false(parse_document(&ps, "\"raw\nnewline\""));
    assert_false(parse_document(&ps, "\"\\x01\""));
    assert_false(parse_document(&ps, "{\"a\": 1}}"));
    assert_false(parse_document(&ps, "[01]"));
}
/* Any bytes in, valid UTF-8 out: invalid bytes become U+FFFD (escaped) and
 * are counted; valid multi-byte characters pass unchanged. Expected output
 * written by hand from RFC 3629's table of well-formed sequences. */
static void test_invalid_utf8_replaced(void **state)
{
    (void)state;
    static const struct {
        const char *in, *out;
        uint64_t replaced;
    } cases[] = {
        {"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"", 0},
        {"a\xff"
         "b",
         "\"a\\ufffdb\"", 1},                                        /* never valid */
        {"\xc3", "\"\\ufffd\"", 1},                                  /* truncated at the end */
        {"\xc3(", "\"\\ufffd(\"", 1},                                /* bad continuation: the next byte kept */
        {"\xc0\xaf", "\"\\ufffd\\ufffd\"", 2},                       /* overlong '/' */
        {"\xe0\x80\xaf", "\"\\ufffd\\ufffd\\ufffd\"", 3},            /* overlong, 3 bytes */
        {"\xed\xa0\x80", "\"\\ufffd\\ufffd\\ufffd\"", 3},            /* a surrogate */
        {"\xf4\x90\x80\x80", "\"\\ufffd\\ufffd\\ufffd\\ufffd\"", 4}, /* above U+10FFFF */
        {"\x80k", "\"\\ufffdk\"", 1},                                /* a lone continuation byte */
        {"\xef\xbf\xbd", "\"\xef\xbf\xbd\"", 0},                     /* U+FFFD itself is fine */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        FILE *f = open_buf();
        json j;
        json_init(&j, f);
        json_string(&j, cases[i].in);
        uint64_t replaced = json_replaced(&j);
        char *out = close_buf(f);
        if (strcmp(out, cases[i].out) != 0) fail_msg("case %zu: got %s, want %s", i, out, cases[i].out);
        assert_int_equal(replaced, cases[i].replaced);
        free(out);
    }
    /* keys too, and the count adds up over the document */
    FILE *f = open_buf();
    json j;
    json_init(&j, f);
    json_begin_object(&j);
    json_kv_string(&j, "k\xfe", "v\xfe\xfe");
    json_end_object(&j);
    assert_int_equal(json_replaced(&j), 3);
    char *out = close_buf(f);
    assert_non_null(strstr(out, "\"k\\ufffd\": \"v\\ufffd\\ufffd\""));
    free(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nested_document_exact), cmocka_unit_test(test_nested_document_parses_back),
        cmocka_unit_test(test_scalar_documents),      cmocka_unit_test(test_parser_rejects_bad_json),
        cmocka_unit_test(test_invalid_utf8_replaced), cmocka_unit_test(test_times_exact),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
