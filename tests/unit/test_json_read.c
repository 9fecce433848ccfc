/* Unit tests of the JSON reader (src/core/json_read.c): every kind of value,
 * escapes decoded to UTF-8, the depth limit, errors with line:column and what
 * was expected, and documents written by the JSON writer read back. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tw_test.h"

#include "core/json.h"
#include "core/json_read.h"

static tw_json *parse_ok(const char *text)
{
    tw_json *v = NULL;
    char err[256];
    tw_status st = tw_json_parse(text, strlen(text), &v, err, sizeof err);
    if (st != TW_OK) fail_msg("parse of %s failed: %s", text, err);
    return v;
}

/* Parsing fails with an error message containing `want`. */
static void parse_bad(const char *text, const char *want)
{
    tw_json *v = (tw_json *)1;
    char err[256] = "x";
    tw_status st = tw_json_parse(text, strlen(text), &v, err, sizeof err);
    if (st != TW_EPARSE) fail_msg("'%s' parsed (status %d)", text, st);
    assert_null(v);
    if (!strstr(err, want)) fail_msg("'%s': error '%s' lacks '%s'", text, err, want);
}

static void test_scalars(void **state)
{
    (void)state;
    tw_json *v = parse_ok(" 42 ");
    assert_int_equal(tw_json_type_of(v), TW_JSON_NUMBER);
    assert_true(tw_json_number(v) == 42.0);
    tw_json_free(v);
    v = parse_ok("-1.5e-3");
    assert_true(tw_json_number(v) == -1.5e-3);
    tw_json_free(v);
    v = parse_ok("0");
    assert_true(tw_json_number(v) == 0.0);
    tw_json_free(v);
    v = parse_ok("true");
    assert_int_equal(tw_json_type_of(v), TW_JSON_BOOL);
    assert_true(tw_json_bool(v));
    tw_json_free(v);
    v = parse_ok("false");
    assert_false(tw_json_bool(v));
    tw_json_free(v);
    v = parse_ok("null");
    assert_int_equal(tw_json_type_of(v), TW_JSON_NULL);
    assert_true(isnan(tw_json_number(v)));
    assert_null(tw_json_string(v));
    tw_json_free(v);
    v = parse_ok("\"hi\"");
    assert_string_equal(tw_json_string(v), "hi");
    assert_true(isnan(tw_json_number(v)));
    tw_json_free(v);
}

static void test_containers(void **state)
{
    (void)state;
    tw_json *v = parse_ok("{\"a\": [1, 2, {\"b\": null}], \"c\": {}, \"d\": [], \"a2\": \"x\", \"a\": 7}");
    assert_int_equal(tw_json_type_of(v), TW_JSON_OBJECT);
    assert_int_equal(tw_json_len(v), 5);
    assert_string_equal(tw_json_key_at(v, 1), "c");
    assert_true(tw_json_number(tw_json_get(v, "a")) == 7.0); /* the last of repeated keys */
    const tw_json *a = tw_json_at(v, 0);
    assert_int_equal(tw_json_type_of(a), TW_JSON_ARRAY);
    assert_int_equal(tw_json_len(a), 3);
    assert_true(tw_json_number(tw_json_at(a, 1)) == 2.0);
    assert_null(tw_json_at(a, 3));
    assert_int_equal(tw_json_type_of(tw_json_get(tw_json_at(a, 2), "b")), TW_JSON_NULL);
    assert_int_equal(tw_json_len(tw_json_get(v, "c")), 0);
    assert_int_equal(tw_json_type_of(tw_json_get(v, "d")), TW_JSON_ARRAY);
    assert_null(tw_json_get(v, "missing"));
    assert_int_equal(tw_json_type_of(tw_json_get(v, "missing")), TW_JSON_NONE);
    assert_null(tw_json_get(a, "a")); /* not an object */
    assert_null(tw_json_key_at(a, 0));
    assert_int_equal(tw_json_len(NULL), 0);
    tw_json_free(v);
    tw_json_free(NULL);
}

static void test_escapes(void **state)
{
    (void)state;
    tw_json *v = parse_ok("\"q\\\" b\\\\ s\\/ \\b\\f\\n\\r\\t\"");
    assert_string_equal(tw_json_string(v), "q\" b\\ s/ \b\f\n\r\t");
    tw_json_free(v);
    v = parse_ok("\"\\u0041\\u00e9\\u20AC\\ud83d\\ude00\"");
    assert_string_equal(tw_json_string(v), "A\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80"); /* A, e acute, euro, emoji */
    tw_json_free(v);
    v = parse_ok("\"raw \xc3\xa9 UTF-8\"");
    assert_string_equal(tw_json_string(v), "raw \xc3\xa9 UTF-8");
    tw_json_free(v);
}

static void test_errors(void **state)
{
    (void)state;
    parse_bad("", "1:1: expected a value");
    parse_bad("   ", "found the end of the input");
    parse_bad("{\"a\": 1,\n  \"b\" 2}", "2:7: expected ':' after the key \"b\", found '2'");
    parse_bad("[1, 2", "1:6: expected ',' or ']' after an array element, found the end of the input");
    parse_bad("{\"a\": 1 \"b\": 2}", "1:9: expected ',' or '}' after an object member");
    parse_bad("{1: 2}", "1:2: expected a key (a string)");
    parse_bad("[1,]", "1:4: expected a value");
    parse_bad("tru", "expected a value");
    parse_bad("nul", "expected a value");
    parse_bad("1 2", "1:3: expected the end of the input after the value");
    parse_bad("01", "leading zero");
    parse_bad("-", "expected a digit");
    parse_bad("1.", "expected a digit after '.'");
    parse_bad("1e+", "expected a digit in the exponent");
    parse_bad("1e999", "out of range");
    parse_bad("NaN", "expected a value");
    parse_bad("\"abc", "1:1: expected '\"' to end this string");
    parse_bad("\"a\nb\"", "1:3: expected a character in a string, found byte 0x0a");
    parse_bad("\"\\x\"", "1:2: expected an escape");
    parse_bad("\"\\u12g4\"", "expected 4 hex digits");
    parse_bad("\"\\u0000\"", "\\u0000 is not supported");
    parse_bad("\"\\ude00\"", "expected a high surrogate first");
    parse_bad("\"\\ud83d x\"", "expected \\u and a low surrogate");
    parse_bad("\"\\ud83d\\u0041\"", "expected a low surrogate");
    /* text with a NUL inside len, and text not NUL-terminated */
    tw_json *v = NULL;
    char err[128];
    assert_int_equal(tw_json_parse("[1]\0x", 5, &v, err, sizeof err), TW_EPARSE);
    assert_non_null(strstr(err, "byte 0x00"));
    assert_int_equal(tw_json_parse("[1]]]]", 3, &v, err, sizeof err), TW_OK);
    assert_int_equal(tw_json_len(v), 1);
    tw_json_free(v);
    /* no error buffer */
    assert_int_equal(tw_json_parse("[", 1, &v, NULL, 0), TW_EPARSE);
}

/* fuzz_dvfs_params found it: raw bytes that are not UTF-8 were taken into
 * strings, and written back as U+FFFD they no longer fit (a 31-byte name
 * came back longer): a JSON document is UTF-8, other bytes are refused */
static void test_utf8_in_strings(void **state)
{
    (void)state;
    parse_bad("\"ab\xFF\"", "1:4: expected UTF-8 text in a string, found the byte 0xFF");
    parse_bad("\"\xC0\x80\"", "byte 0xC0");         /* overlong NUL */
    parse_bad("\"\xE0\x80\xAF\"", "byte 0xE0");     /* overlong '/' */
    parse_bad("\"\xED\xA0\x80\"", "byte 0xED");     /* a surrogate */
    parse_bad("\"\xF4\x90\x80\x80\"", "byte 0xF4"); /* above U+10FFFF */
    parse_bad("\"\xE2\x82\"", "byte 0xE2");         /* cut short */
    parse_bad("\"\x80\"", "byte 0x80");             /* a lone continuation byte */
    tw_json *v = parse_ok("[\"\xC3\xA9\", \"\xE2\x82\xAC\", \"\xF0\x9F\x98\x80\", \"\xF4\x8F\xBF\xBF\"]");
    assert_string_equal(tw_json_string(tw_json_at(v, 0)), "\xC3\xA9"); /* e acute */
    assert_string_equal(tw_json_string(tw_json_at(v, 1)), "\xE2\x82\xAC");
    assert_string_equal(tw_json_string(tw_json_at(v, 2)), "\xF0\x9F\x98\x80");
    assert_string_equal(tw_json_string(tw_json_at(v, 3)), "\xF4\x8F\xBF\xBF"); /* U+10FFFF */
    tw_json_free(v);
}

static void test_depth_limit(void **state)
{
    (void)state;
    char deep[2 * TW_JSON_MAX_DEPTH + 8];
    size_t n = 0;
    for (int i = 0; i < TW_JSON_MAX_DEPTH; i++)
        deep[n++] = '[';
    for (int i = 0; i < TW_JSON_MAX_DEPTH; i++)
        deep[n++] = ']';
    deep[n] = '\0';
    tw_json *v = parse_ok(deep);
    tw_json_free(v);
    char deeper[sizeof deep + 2];
    snprintf(deeper, sizeof deeper, "[%s]", deep);
    parse_bad(deeper, "nesting deeper than 64");
}

/* What the writer writes, the reader reads: strings with every escape, NaN as null. */
static void test_writer_round_trip(void **state)
{
    (void)state;
    const char *path = tw_test_path(0, "round.json");
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    json j;
    json_init(&j, f);
    json_begin_object(&j);
    json_kv_string(&j, "s", "tab\there \"quoted\" back\\slash \x01 \xc3\xa9");
    json_kv_number(&j, "x", 0.125);
    json_kv_number(&j, "nan", NAN);
    json_kv_uint(&j, "u", 12345678901ull);
    json_kv_bool(&j, "b", true);
    json_key(&j, "arr");
    json_begin_array(&j);
    json_number(&j, 1);
    json_begin_object(&j);
    json_end_object(&j);
    json_end_array(&j);
    json_end_object(&j);
    json_finish(&j);
    fclose(f);
    char *text = tw_test_slurp(path);
    assert_non_null(text);
    tw_json *v = parse_ok(text);
    assert_string_equal(tw_json_string(tw_json_get(v, "s")), "tab\there \"quoted\" back\\slash \x01 \xc3\xa9");
    assert_true(tw_json_number(tw_json_get(v, "x")) == 0.125);
    assert_int_equal(tw_json_type_of(tw_json_get(v, "nan")), TW_JSON_NULL);
    assert_true(tw_json_number(tw_json_get(v, "u")) == 12345678901.0);
    assert_true(tw_json_bool(tw_json_get(v, "b")));
    assert_int_equal(tw_json_len(tw_json_get(v, "arr")), 2);
    assert_string_equal(tw_json_type_name(tw_json_type_of(tw_json_at(tw_json_get(v, "arr"), 1))), "object");
    tw_json_free(v);
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scalars),           cmocka_unit_test(test_containers),
        cmocka_unit_test(test_escapes),           cmocka_unit_test(test_errors),
        cmocka_unit_test(test_utf8_in_strings),   cmocka_unit_test(test_depth_limit),
        cmocka_unit_test(test_writer_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
