#include "core/json.h"

#include <math.h>

#include "core/numfmt.h"

void json_init(json *j, FILE *f)
{
    j->f = f;
    j->depth = 0;
    j->has_items[0] = false;
    j->after_key = false;
    j->replaced = 0;
}

static void indent(json *j)
{
    fputc('\n', j->f);
    for (int i = 0; i < j->depth; i++)
        fputs("  ", j->f);
}

/* Separator and indentation before a value or a key. */
static void before_item(json *j)
{
    if (j->after_key) {
        j->after_key = false;
        return;
    }
    if (j->depth == 0) return;
    if (j->has_items[j->depth]) fputc(',', j->f);
    j->has_items[j->depth] = true;
    indent(j);
}

static void open_scope(json *j, char c)
{
    before_item(j);
    fputc(c, j->f);
    if (j->depth + 1 < JSON_MAX_DEPTH) j->depth++;
    j->has_items[j->depth] = false;
}

static void close_scope(json *j, char c)
{
    bool had = j->has_items[j->depth];
    if (j->depth > 0) j->depth--;
    if (had) indent(j);
    fputc(c, j->f);
}

void json_begin_object(json *j) { open_scope(j, '{'); }
void json_end_object(json *j) { close_scope(j, '}'); }
void json_begin_array(json *j) { open_scope(j, '['); }
void json_end_array(json *j) { close_scope(j, ']'); }

/* Length of the valid UTF-8 sequence at p (RFC 3629: no overlong forms, no
 * surrogates, nothing above U+10FFFF), or 0 when the byte at p starts none. */
static size_t utf8_length(const unsigned char *p)
{
    unsigned char c = p[0];
    if (c < 0x80) return 1;
    size_t n;
    unsigned char lo = 0x80, hi = 0xbf; /* the second byte's range */
    if (c >= 0xc2 && c <= 0xdf)
        n = 2;
    else if (c >= 0xe0 && c <= 0xef) {
        n = 3;
        if (c == 0xe0) lo = 0xa0; /* overlong */
        if (c == 0xed) hi = 0x9f; /* surrogates */
    } else if (c >= 0xf0 && c <= 0xf4) {
        n = 4;
        if (c == 0xf0) lo = 0x90; /* overlong */
        if (c == 0xf4) hi = 0x8f; /* above U+10FFFF */
    } else {
        return 0;
    }
    if (p[1] < lo || p[1] > hi) return 0;
    for (size_t k = 2; k < n; k++) /* a NUL ends the string: it fails here too */
        if (p[k] < 0x80 || p[k] > 0xbf) return 0;
    return n;
}

static void write_escaped(json *j, const char *s)
{
    FILE *f = j->f;
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '"':
            fputs("\\\"", f);
            break;
        case '\\':
            fputs("\\\\", f);
            break;
        case '\n':
            fputs("\\n", f);
            break;
        case '\r':
            fputs("\\r", f);
            break;
        case '\t':
            fputs("\\t", f);
            break;
        default:
            if (*p < 0x20) {
                fprintf(f, "\\u%04x", *p);
            } else if (*p < 0x80) {
                fputc(*p, f);
            } else {
                size_t n = utf8_length(p);
                if (n == 0) { /* one byte replaced; the next is looked at afresh */
                    fputs("\\ufffd", f);
                    j->replaced++;
                } else {
                    fwrite(p, 1, n, f);
                    p += n - 1;
                }
            }
        }
    }
    fputc('"', f);
}

uint64_t json_replaced(const json *j) { return j->replaced; }

void json_key(json *j, const char *key)
{
    before_item(j);
    write_escaped(j, key);
    fputs(": ", j->f);
    j->after_key = true;
}

void json_string(json *j, const char *s)
{
    before_item(j);
    if (s)
        write_escaped(j, s);
    else
        fputs("null", j->f);
}

void json_number(json *j, double v)
{
    before_item(j);
    if (isfinite(v))
        fprintf(j->f, "%.10g", v);
    else
        fputs("null", j->f);
}

static void json_number_exact(json *j, double v)
{
    before_item(j);
    char buf[TW_EXACT_LEN];
    if (isfinite(v))
        fputs(tw_format_exact(buf, v), j->f);
    else
        fputs("null", j->f);
}

void json_uint(json *j, uint64_t v)
{
    before_item(j);
    fprintf(j->f, "%llu", (unsigned long long)v);
}

void json_bool(json *j, bool v)
{
    before_item(j);
    fputs(v ? "true" : "false", j->f);
}

void json_kv_string(json *j, const char *key, const char *s)
{
    json_key(j, key);
    json_string(j, s);
}
void json_kv_number(json *j, const char *key, double v)
{
    json_key(j, key);
    json_number(j, v);
}

void json_kv_time(json *j, const char *key, double t_s)
{
    json_key(j, key);
    json_number_exact(j, t_s);
}
void json_kv_uint(json *j, const char *key, uint64_t v)
{
    json_key(j, key);
    json_uint(j, v);
}
void json_kv_bool(json *j, const char *key, bool v)
{
    json_key(j, key);
    json_bool(j, v);
}
void json_kv_numbers(json *j, const char *key, const double *v, size_t n)
{
    json_key(j, key);
    json_begin_array(j);
    for (size_t k = 0; k < n; k++)
        json_number(j, v[k]);
    json_end_array(j);
}

void json_finish(json *j) { fputc('\n', j->f); }
