#include "core/json.h"

#include <math.h>

void json_init(json *j, FILE *f)
{
    j->f = f;
    j->depth = 0;
    j->has_items[0] = false;
    j->after_key = false;
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

static void write_escaped(FILE *f, const char *s)
{
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
            if (*p < 0x20)
                fprintf(f, "\\u%04x", *p);
            else
                fputc(*p, f);
        }
    }
    fputc('"', f);
}

void json_key(json *j, const char *key)
{
    before_item(j);
    write_escaped(j->f, key);
    fputs(": ", j->f);
    j->after_key = true;
}

void json_string(json *j, const char *s)
{
    before_item(j);
    if (s)
        write_escaped(j->f, s);
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

void json_finish(json *j) { fputc('\n', j->f); }
