/* A small streaming JSON writer (internal: in the library, not its API):
 * reports, profiles and traces are written as they are produced, never built
 * as a tree. NaN and infinities are written as null. */
#ifndef TW_CORE_JSON_H
#define TW_CORE_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define JSON_MAX_DEPTH 32

typedef struct json {
    FILE *f;
    int depth;
    bool has_items[JSON_MAX_DEPTH];
    bool after_key;
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
void json_kv_uint(json *j, const char *key, uint64_t v);
void json_kv_bool(json *j, const char *key, bool v);
/* Ends the document with a newline. */
void json_finish(json *j);

#endif
