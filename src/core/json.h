/* A small streaming JSON writer (internal: in the library, not its API):
 * reports, profiles and traces are written as they are produced, never built
 * as a tree. NaN and infinities are written as null. The output is valid
 * UTF-8 whatever the input: a byte of a string that is not part of a valid
 * UTF-8 sequence (a name read from a binary, a truncated multi-byte
 * character) is written as U+FFFD and counted (json_replaced). */
#ifndef TW_CORE_JSON_H
#define TW_CORE_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define JSON_MAX_DEPTH 32

/* The functions' symbols carry the library's prefix (a program that links
 * the static library may have json_* functions of its own; tests/meta
 * checks every global symbol); the call sites keep the short names. */
#define json_init tw_jsonw_init
#define json_begin_object tw_jsonw_begin_object
#define json_end_object tw_jsonw_end_object
#define json_begin_array tw_jsonw_begin_array
#define json_end_array tw_jsonw_end_array
#define json_key tw_jsonw_key
#define json_string tw_jsonw_string
#define json_number tw_jsonw_number
#define json_uint tw_jsonw_uint
#define json_bool tw_jsonw_bool
#define json_kv_string tw_jsonw_kv_string
#define json_kv_number tw_jsonw_kv_number
#define json_kv_time tw_jsonw_kv_time
#define json_kv_uint tw_jsonw_kv_uint
#define json_kv_bool tw_jsonw_kv_bool
#define json_kv_numbers tw_jsonw_kv_numbers
#define json_replaced tw_jsonw_replaced
#define json_finish tw_jsonw_finish

typedef struct json {
    FILE *f;
    int depth;
    bool has_items[JSON_MAX_DEPTH];
    bool after_key;
    uint64_t replaced; /* invalid UTF-8 bytes written as U+FFFD so far */
} json;

void json_init(json *j, FILE *f);
void json_begin_object(json *j);
void json_end_object(json *j);
void json_begin_array(json *j);
void json_end_array(json *j);
void json_key(json *j, const char *key);
void json_string(json *j, const char *s);
void json_number(json *j, double v);
void json_uint(json *j, uint64_t v);
void json_bool(json *j, bool v);
/* key + value shorthands */
void json_kv_string(json *j, const char *key, const char *s);
void json_kv_number(json *j, const char *key, double v);
/* An instant on a timeline (s): every digit that the double holds (json_number's
 * 10 significant digits lose microseconds after 2.78 h). */
void json_kv_time(json *j, const char *key, double t_s);
void json_kv_uint(json *j, const char *key, uint64_t v);
void json_kv_bool(json *j, const char *key, bool v);
/* "key": [v[0], ..., v[n-1]] */
void json_kv_numbers(json *j, const char *key, const double *v, size_t n);
/* Bytes of strings (keys and values) that were not valid UTF-8, each written as U+FFFD. */
uint64_t json_replaced(const json *j);
/* Ends the document with a newline. */
void json_finish(json *j);

#endif
