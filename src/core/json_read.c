#include "core/json_read.h"

#include "core/error.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct tw_json {
    tw_json_type type;
    bool b;
    double num;
    char *str;       /* strings */
    char **keys;     /* objects: keys[i] names items[i] */
    tw_json **items; /* arrays and objects */
    size_t n, cap;
};

typedef struct parser {
    const char *s;
    size_t len, pos;
    int depth;
    char *err;
    size_t errcap;
} parser;

/* ---------------------------------------------------------------- errors and lexing */

static tw_status fail_at(parser *p, size_t pos, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* "LINE:COL: message" for the byte at `pos`. */
static tw_status fail_at(parser *p, size_t pos, const char *fmt, ...)
{
    if (!p->errcap) return TW_EPARSE;
    size_t line = 1, col = 1;
    for (size_t i = 0; i < pos && i < p->len; i++) {
        col++;
        if (p->s[i] == '\n') line++, col = 1;
    }
    int k = snprintf(p->err, p->errcap, "%zu:%zu: ", line, col);
    if (k >= 0 && (size_t)k < p->errcap) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(p->err + k, p->errcap - (size_t)k, fmt, ap);
        va_end(ap);
    }
    return TW_EPARSE;
}

/* What is at the current position, for "expected X, found Y". */
static const char *found(const parser *p)
{
    if (p->pos >= p->len) return "the end of the input";
    unsigned char c = (unsigned char)p->s[p->pos];
    static _Thread_local char buf[32];
    if (c >= 0x20 && c < 0x7f)
        snprintf(buf, sizeof buf, "'%c'", c);
    else
        snprintf(buf, sizeof buf, "byte 0x%02x", c);
    return buf;
}

static void skip_ws(parser *p)
{
    while (p->pos < p->len) {
        char c = p->s[p->pos];
        if (c != ' ' && c != '\t' && c != '\r' && c != '\n') break;
        p->pos++;
    }
}

static int peek(const parser *p) { return p->pos < p->len ? (unsigned char)p->s[p->pos] : -1; }

static bool eat(parser *p, char c)
{
    if (peek(p) != (unsigned char)c) return false;
    p->pos++;
    return true;
}

/* ---------------------------------------------------------------- values */

static tw_json *new_value(tw_json_type type)
{
    tw_json *v = calloc(1, sizeof *v);
    if (v) v->type = type;
    return v;
}

/* Appends item (and, for objects, key: owned from now on, also on failure). */
static tw_status push_item(tw_json *v, char *key, tw_json *item)
{
    if (v->n == v->cap) {
        size_t cap = v->cap ? 2 * v->cap : 8;
        tw_json **items = realloc(v->items, cap * sizeof *items);
        if (items) v->items = items;
        char **keys = v->type == TW_JSON_OBJECT && items ? realloc(v->keys, cap * sizeof *keys) : NULL;
        if (keys) v->keys = keys;
        if (!items || (v->type == TW_JSON_OBJECT && !keys)) {
            free(key);
            tw_json_free(item);
            return TW_ENOMEM;
        }
        v->cap = cap;
    }
    if (v->type == TW_JSON_OBJECT) v->keys[v->n] = key;
    v->items[v->n++] = item;
    return TW_OK;
}

static tw_status parse_value(parser *p, tw_json **out);

static int hex_digit(int c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* Four hex digits after "\u" at p->pos. */
static tw_status parse_hex4(parser *p, unsigned *out)
{
    unsigned v = 0;
    for (int i = 0; i < 4; i++, p->pos++) {
        int d = hex_digit(peek(p));
        if (d < 0) return fail_at(p, p->pos, "expected 4 hex digits after \\u, found %s", found(p));
        v = v * 16 + (unsigned)d;
    }
    *out = v;
    return TW_OK;
}

/* The code point of a \u escape (p->pos just after the 'u'), pairing surrogates. */
static tw_status parse_unicode(parser *p, size_t at, uint32_t *cp)
{
    unsigned hi, lo;
    tw_status st = parse_hex4(p, &hi);
    if (st) return st;
    if (hi >= 0xDC00 && hi <= 0xDFFF) return fail_at(p, at, "expected a high surrogate first, found \\u%04X", hi);
    if (hi < 0xD800 || hi > 0xDBFF) {
        if (hi == 0) return fail_at(p, at, "\\u0000 is not supported (strings are C strings)");
        *cp = hi;
        return TW_OK;
    }
    if (!eat(p, '\\') || !eat(p, 'u'))
        return fail_at(p, p->pos, "expected \\u and a low surrogate after \\u%04X, found %s", hi, found(p));
    if ((st = parse_hex4(p, &lo))) return st;
    if (lo < 0xDC00 || lo > 0xDFFF) return fail_at(p, p->pos - 6, "expected a low surrogate, found \\u%04X", lo);
    *cp = 0x10000 + ((uint32_t)(hi - 0xD800) << 10) + (lo - 0xDC00);
    return TW_OK;
}

static size_t put_utf8(char *o, uint32_t cp)
{
    static const unsigned char lead[] = {0x00, 0xC0, 0xE0, 0xF0};
    size_t n = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
    for (size_t i = n - 1; i > 0; i--, cp >>= 6)
        o[i] = (char)(0x80 | (cp & 0x3F));
    o[0] = (char)(lead[n - 1] | cp);
    return n;
}

/* One escape after '\' into o; returns the bytes written through *n. */
static tw_status parse_escape(parser *p, char *o, size_t *n)
{
    size_t at = p->pos - 1;
    int c = peek(p);
    const char *from = "\"\\/bfnrt", *to = "\"\\/\b\f\n\r\t";
    const char *hit = c > 0 ? strchr(from, c) : NULL;
    p->pos++;
    if (hit) {
        *o = to[hit - from];
        *n = 1;
        return TW_OK;
    }
    if (c != 'u') {
        p->pos--;
        return fail_at(p, at, "expected an escape (\\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX), found %s", found(p));
    }
    uint32_t cp = 0;
    tw_status st = parse_unicode(p, at, &cp);
    if (!st) *n = put_utf8(o, cp);
    return st;
}

/* The length of the well-formed UTF-8 sequence at s[0..len) (RFC 3629: no
 * overlong forms, no surrogates, nothing above U+10FFFF), 0 when there is none. */
static size_t utf8_length(const unsigned char *s, size_t len)
{
    size_t n = s[0] >= 0xF0 ? 4 : s[0] >= 0xE0 ? 3 : s[0] >= 0xC0 ? 2 : 0;
    if (n == 0 || s[0] > 0xF4 || s[0] == 0xC0 || s[0] == 0xC1 || n > len) return 0;
    for (size_t i = 1; i < n; i++)
        if ((s[i] & 0xC0) != 0x80) return 0;
    if (s[0] == 0xE0 && s[1] < 0xA0) return 0; /* overlong */
    if (s[0] == 0xED && s[1] > 0x9F) return 0; /* a surrogate */
    if (s[0] == 0xF0 && s[1] < 0x90) return 0; /* overlong */
    if (s[0] == 0xF4 && s[1] > 0x8F) return 0; /* above U+10FFFF */
    return n;
}

/* A string at p->pos (the opening quote) into a fresh C string. The decoded
 * text is never longer than the source, so one buffer of that size does. */
static tw_status parse_string_raw(parser *p, char **out)
{
    size_t start = p->pos++, end = p->pos;
    while (end < p->len && p->s[end] != '"')
        end += p->s[end] == '\\' ? 2 : 1;
    char *buf = malloc(end - start + 1), *o = buf;
    if (!buf) return TW_ENOMEM;
    tw_status st = TW_OK;
    for (;;) {
        int c = peek(p);
        if (c < 0) {
            st = fail_at(p, start, "expected '\"' to end this string, found the end of the input");
            break;
        }
        p->pos++;
        if (c == '"') break;
        size_t n = 1;
        if (c < 0x20) {
            p->pos--;
            st = fail_at(p, p->pos, "expected a character in a string, found %s (escape it)", found(p));
        } else if (c == '\\') {
            st = parse_escape(p, o, &n);
        } else if (c >= 0x80) { /* JSON is UTF-8 (RFC 8259 8.1): other bytes would not be written back */
            n = utf8_length((const unsigned char *)p->s + p->pos - 1, p->len - (p->pos - 1));
            if (n == 0) st = fail_at(p, p->pos - 1, "expected UTF-8 text in a string, found the byte 0x%02X", c);
            memcpy(o, p->s + p->pos - 1, n);
            p->pos += n ? n - 1 : 0;
        } else {
            *o = (char)c;
        }
        if (st) break;
        o += n;
    }
    if (st) {
        free(buf);
        return st;
    }
    *o = '\0';
    *out = buf;
    return TW_OK;
}

static size_t skip_digits(const parser *p, size_t i)
{
    while (i < p->len && p->s[i] >= '0' && p->s[i] <= '9')
        i++;
    return i;
}

/* -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?, converted by strtod. */
static tw_status parse_number(parser *p, tw_json **out)
{
    size_t start = p->pos, i = start + (peek(p) == '-'), d;
    if ((d = skip_digits(p, i)) == i) return fail_at(p, i, "expected a digit in a number");
    if (p->s[i] == '0' && d > i + 1) return fail_at(p, i, "expected no leading zero in a number");
    i = d;
    if (i < p->len && p->s[i] == '.') {
        if ((d = skip_digits(p, i + 1)) == i + 1) return fail_at(p, i + 1, "expected a digit after '.'");
        i = d;
    }
    if (i < p->len && (p->s[i] == 'e' || p->s[i] == 'E')) {
        i += i + 1 < p->len && (p->s[i + 1] == '+' || p->s[i + 1] == '-') ? 2 : 1;
        if ((d = skip_digits(p, i)) == i) return fail_at(p, i, "expected a digit in the exponent");
        i = d;
    }
    char buf[512];
    if (i - start >= sizeof buf) return fail_at(p, start, "number too long (%zu characters)", i - start);
    memcpy(buf, p->s + start, i - start);
    buf[i - start] = '\0';
    errno = 0;
    double v = strtod(buf, NULL);
    if (errno == ERANGE && isinf(v)) return fail_at(p, start, "number out of range: %s", buf);
    if (!(*out = new_value(TW_JSON_NUMBER))) return TW_ENOMEM;
    (*out)->num = v;
    p->pos = i;
    return TW_OK;
}

/* true, false, null */
static tw_status parse_literal(parser *p, tw_json **out)
{
    static const struct {
        const char *word;
        tw_json_type type;
        bool b;
    } lits[] = {{"true", TW_JSON_BOOL, true}, {"false", TW_JSON_BOOL, false}, {"null", TW_JSON_NULL, false}};
    for (size_t k = 0; k < sizeof lits / sizeof lits[0]; k++) {
        size_t n = strlen(lits[k].word);
        if (p->len - p->pos < n || memcmp(p->s + p->pos, lits[k].word, n)) continue;
        if (!(*out = new_value(lits[k].type))) return TW_ENOMEM;
        (*out)->b = lits[k].b;
        p->pos += n;
        return TW_OK;
    }
    return fail_at(p, p->pos, "expected a value (object, array, string, number, true, false, null), found %s",
                   found(p));
}

/* '[' or '{' at p->pos: the members up to the matching bracket. */
static tw_status parse_container(parser *p, tw_json **out)
{
    bool obj = peek(p) == '{';
    char close = obj ? '}' : ']';
    if (++p->depth > TW_JSON_MAX_DEPTH) return fail_at(p, p->pos, "nesting deeper than %d", TW_JSON_MAX_DEPTH);
    p->pos++;
    tw_json *v = *out = new_value(obj ? TW_JSON_OBJECT : TW_JSON_ARRAY);
    if (!v) return TW_ENOMEM;
    skip_ws(p);
    if (eat(p, close)) return p->depth--, TW_OK;
    for (;;) {
        char *key = NULL;
        tw_json *item = NULL;
        tw_status st = TW_OK;
        skip_ws(p);
        if (obj) {
            if (peek(p) != '"') return fail_at(p, p->pos, "expected a key (a string), found %s", found(p));
            if ((st = parse_string_raw(p, &key))) return st;
            skip_ws(p);
            if (!eat(p, ':')) st = fail_at(p, p->pos, "expected ':' after the key \"%s\", found %s", key, found(p));
        }
        if (st || (st = parse_value(p, &item))) {
            free(key);
            tw_json_free(item);
            return st;
        }
        if ((st = push_item(v, key, item))) return st;
        skip_ws(p);
        if (eat(p, close)) return p->depth--, TW_OK;
        if (!eat(p, ','))
            return fail_at(p, p->pos, "expected ',' or '%c' after %s, found %s", close,
                           obj ? "an object member" : "an array element", found(p));
    }
}

static tw_status parse_value(parser *p, tw_json **out)
{
    *out = NULL;
    skip_ws(p);
    int c = peek(p);
    if (c == '{' || c == '[') return parse_container(p, out);
    if (c == '-' || (c >= '0' && c <= '9')) return parse_number(p, out);
    if (c != '"') return parse_literal(p, out);
    char *s;
    tw_status st = parse_string_raw(p, &s);
    if (st) return st;
    if (!(*out = new_value(TW_JSON_STRING))) return free(s), TW_ENOMEM;
    (*out)->str = s;
    return TW_OK;
}

tw_status tw_json_parse(const char *text, size_t len, tw_json **out, char *err, size_t errcap)
{
    parser p = {.s = text, .len = len, .err = err, .errcap = errcap};
    if (errcap) err[0] = '\0';
    *out = NULL;
    tw_json *v = NULL;
    tw_status st = parse_value(&p, &v);
    if (!st) {
        skip_ws(&p);
        if (p.pos < p.len)
            st = fail_at(&p, p.pos, "expected the end of the input after the value, found %s", found(&p));
    }
    if (st) {
        tw_json_free(v);
        if (st == TW_ENOMEM && errcap) snprintf(err, errcap, "out of memory");
        return st;
    }
    *out = v;
    return TW_OK;
}

void tw_json_free(tw_json *v)
{
    if (!v) return;
    for (size_t i = 0; i < v->n; i++) {
        if (v->keys) free(v->keys[i]);
        tw_json_free(v->items[i]);
    }
    free(v->keys);
    free(v->items);
    free(v->str);
    free(v);
}

/* ---------------------------------------------------------------- access */

tw_json_type tw_json_type_of(const tw_json *v) { return v ? v->type : TW_JSON_NONE; }

const char *tw_json_type_name(tw_json_type t)
{
    static const char *const names[] = {"missing", "null", "boolean", "number", "string", "array", "object"};
    return (unsigned)t < sizeof names / sizeof names[0] ? names[t] : "?";
}

const tw_json *tw_json_get(const tw_json *obj, const char *key)
{
    if (!obj || obj->type != TW_JSON_OBJECT) return NULL;
    for (size_t i = obj->n; i-- > 0;)
        if (!strcmp(obj->keys[i], key)) return obj->items[i];
    return NULL;
}

double tw_json_number(const tw_json *v) { return v && v->type == TW_JSON_NUMBER ? v->num : NAN; }
const char *tw_json_string(const tw_json *v) { return v && v->type == TW_JSON_STRING ? v->str : NULL; }
bool tw_json_bool(const tw_json *v) { return v && v->type == TW_JSON_BOOL && v->b; }

size_t tw_json_len(const tw_json *v) { return v && (v->type == TW_JSON_ARRAY || v->type == TW_JSON_OBJECT) ? v->n : 0; }

const tw_json *tw_json_at(const tw_json *v, size_t i) { return i < tw_json_len(v) ? v->items[i] : NULL; }

const char *tw_json_key_at(const tw_json *obj, size_t i)
{
    return obj && obj->type == TW_JSON_OBJECT && i < obj->n ? obj->keys[i] : NULL;
}

tw_status tw_json_load(const char *path, tw_json **out)
{
    FILE *f = fopen(path, "rb");
    if (!f) return tw_fail(errno == ENOENT ? TW_ENOTFOUND : TW_EIO, "%s: %s", path, strerror(errno));
    size_t n = 0, cap = 1 << 16;
    char *buf = malloc(cap);
    while (buf && !ferror(f)) {
        n += fread(buf + n, 1, cap - n, f);
        if (n < cap) break;
        if (cap >= (size_t)64 << 20) {
            free(buf);
            fclose(f);
            return tw_fail(TW_EPARSE, "%s: larger than 64 MiB", path);
        }
        char *b = realloc(buf, cap *= 2);
        if (!b) free(buf);
        buf = b;
    }
    bool bad = ferror(f);
    fclose(f);
    if (!buf) return tw_fail(TW_ENOMEM, "%s: out of memory", path);
    if (bad) {
        free(buf);
        return tw_fail(TW_EIO, "%s: read error", path);
    }
    char err[256];
    tw_status st = tw_json_parse(buf, n, out, err, sizeof err);
    free(buf);
    if (st == TW_EPARSE) return tw_fail(st, "%s:%s", path, err);
    return st == TW_OK ? st : tw_fail(st, "%s: cannot parse", path);
}
