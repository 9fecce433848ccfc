/* A small JSON reader (internal): parses a whole document (RFC 8259) into a
 * tree. Our own because the GPU machines cannot install packages. Strings are
 * decoded to UTF-8 (\uXXXX escapes and surrogate pairs included; \u0000 is
 * refused, so every string is a C string), numbers go through strtod, nesting
 * is limited to TW_JSON_MAX_DEPTH. Errors name the line and column (1-based,
 * bytes) and what was expected there: "3:14: expected ',' or '}' ...". */
#ifndef TW_CORE_JSON_READ_H
#define TW_CORE_JSON_READ_H

#include <stdbool.h>
#include <stddef.h>

#include "truewatt.h"

#define TW_JSON_MAX_DEPTH 64

typedef enum tw_json_type {
    TW_JSON_NONE = 0, /* no value: what tw_json_type(NULL) says (a missing key) */
    TW_JSON_NULL,
    TW_JSON_BOOL,
    TW_JSON_NUMBER,
    TW_JSON_STRING,
    TW_JSON_ARRAY,
    TW_JSON_OBJECT,
} tw_json_type;

typedef struct tw_json tw_json;

/* Parses text[0..len) (which need not end in '\0'). TW_EPARSE with the
 * message in err (when errcap > 0) on malformed input, TW_ENOMEM. */
tw_status tw_json_parse(const char *text, size_t len, tw_json **out, char *err, size_t errcap);
void tw_json_free(tw_json *v);
/* Reads and parses a whole file (at most 64 MiB); errors name the path. */
tw_status tw_json_load(const char *path, tw_json **out);

/* The accessors take NULL (a missing value) and values of the wrong type. */
tw_json_type tw_json_type_of(const tw_json *v);
const char *tw_json_type_name(tw_json_type t); /* "missing", "null", "boolean", ... */
/* The member `key` of an object (the last one when repeated), NULL if none. */
const tw_json *tw_json_get(const tw_json *obj, const char *key);
double tw_json_number(const tw_json *v);      /* NaN unless a number */
const char *tw_json_string(const tw_json *v); /* NULL unless a string */
bool tw_json_bool(const tw_json *v);          /* false unless true */
/* Arrays: elements; objects: member values (in order) and their keys. */
size_t tw_json_len(const tw_json *v); /* 0 unless an array or an object */
const tw_json *tw_json_at(const tw_json *v, size_t i);
const char *tw_json_key_at(const tw_json *obj, size_t i);

#endif
