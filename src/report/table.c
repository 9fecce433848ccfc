#include "report/table.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

struct table {
    size_t ncols, ncells, cap;
    char **cells; /* headers first, then rows */
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

int table_cell(table *t, const char *fmt, ...)
{
    char buf[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    char *s = strdup(buf);
    if (!s || push(t, s)) {
        free(s);
        return -1;
    }
    return 0;
}

void table_print(const table *t, FILE *f)
{
    size_t w[64] = {0}, nc = t->ncols < 64 ? t->ncols : 64;
    for (size_t i = 0; i < t->ncells; i++) {
        size_t c = i % t->ncols, len = strlen(t->cells[i]);
        if (c < nc && len > w[c]) w[c] = len;
    }
    for (size_t i = 0; i < t->ncells; i++) {
        size_t c = i % t->ncols;
        if (c >= nc) continue;
        if (c == 0)
            fprintf(f, "%-*s", (int)w[c], t->cells[i]);
        else
            fprintf(f, "  %*s", (int)w[c], t->cells[i]);
        if (c == t->ncols - 1 || i == t->ncells - 1) fputc('\n', f);
        if (i == t->ncols - 1) {
            size_t total = 0;
            for (size_t k = 0; k < nc; k++)
                total += w[k] + (k ? 2 : 0);
            for (size_t k = 0; k < total; k++)
                fputc('-', f);
            fputc('\n', f);
        }
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
