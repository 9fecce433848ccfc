#include "report/table.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define MAX_COLS 64

struct table {
    size_t ncols, ncells, cap;
    char **cells; /* headers first, then rows (a streamed table: the headers alone) */
    /* a streamed table (table_new_streamed): its rows measured, then printed as they come */
    bool streamed;
    FILE *out; /* NULL while measuring */
    size_t w[MAX_COLS];
    size_t col; /* the next cell's column */
};

static int push(table *t, char *s)
{
    if (t->ncells == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 64;
        char **c = realloc(t->cells, cap * sizeof *c);
        if (!c) return -1;
        t->cells = c;
        t->cap = cap;
    }
    t->cells[t->ncells++] = s;
    return 0;
}

table *table_new(size_t ncols, const char *const *headers)
{
    table *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    t->ncols = ncols;
    for (size_t i = 0; i < ncols; i++) {
        char *s = strdup(headers[i]);
        if (!s || push(t, s)) {
            free(s);
            table_free(t);
            return NULL;
        }
    }
    return t;
}

table *table_new_streamed(size_t ncols, const char *const *headers)
{
    table *t = table_new(ncols, headers);
    if (!t) return NULL;
    t->streamed = true;
    for (size_t c = 0; c < ncols && c < MAX_COLS; c++)
        t->w[c] = strlen(headers[c]);
    return t;
}

static size_t printed_cols(const table *t) { return t->ncols < MAX_COLS ? t->ncols : MAX_COLS; }

static void put_cell(const table *t, const size_t *w, size_t c, const char *s, FILE *f)
{
    if (c >= printed_cols(t)) return;
    if (c == 0)
        fprintf(f, "%-*s", (int)w[c], s);
    else
        fprintf(f, "  %*s", (int)w[c], s);
}

static void put_rule(const table *t, const size_t *w, FILE *f)
{
    size_t total = 0;
    for (size_t k = 0; k < printed_cols(t); k++)
        total += w[k] + (k ? 2 : 0);
    for (size_t k = 0; k < total; k++)
        fputc('-', f);
    fputc('\n', f);
}

/* A streamed table's cell: measured, or printed with the widths measured. */
static void stream_cell(table *t, const char *s)
{
    size_t c = t->col;
    t->col = (c + 1) % t->ncols;
    if (!t->out) {
        size_t len = strlen(s);
        if (c < MAX_COLS && len > t->w[c]) t->w[c] = len;
        return;
    }
    put_cell(t, t->w, c, s, t->out);
    if (c == t->ncols - 1) fputc('\n', t->out);
}

int table_cell(table *t, const char *fmt, ...)
{
    char buf[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (t->streamed) {
        stream_cell(t, buf);
        return 0;
    }
    char *s = strdup(buf);
    if (!s || push(t, s)) {
        free(s);
        return -1;
    }
    return 0;
}

void table_stream_print(table *t, FILE *f)
{
    for (size_t c = 0; c < t->ncols; c++)
        put_cell(t, t->w, c, t->cells[c], f);
    fputc('\n', f);
    put_rule(t, t->w, f);
    t->out = f;
    t->col = 0;
}

void table_print(const table *t, FILE *f)
{
    size_t w[MAX_COLS] = {0}, nc = printed_cols(t);
    for (size_t i = 0; i < t->ncells; i++) {
        size_t c = i % t->ncols, len = strlen(t->cells[i]);
        if (c < nc && len > w[c]) w[c] = len;
    }
    for (size_t i = 0; i < t->ncells; i++) {
        size_t c = i % t->ncols;
        if (c >= nc) continue;
        put_cell(t, w, c, t->cells[i], f);
        if (c == t->ncols - 1 || i == t->ncells - 1) fputc('\n', f);
        if (i == t->ncols - 1) put_rule(t, w, f);
    }
}

void table_free(table *t)
{
    if (!t) return;
    for (size_t i = 0; i < t->ncells; i++)
        free(t->cells[i]);
    free(t->cells);
    free(t);
}
