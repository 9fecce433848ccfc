/* Plain-text tables with aligned columns (first column left, others right). */
#ifndef TW_REPORT_TABLE_H
#define TW_REPORT_TABLE_H

/* The symbols carry the library's prefix (tests/meta/static_symbols.sh); the call sites keep the short names. */
#define table_new tw_table_new
#define table_cell tw_table_cell
#define table_print tw_table_print
#define table_free tw_table_free

#include <stddef.h>
#include <stdio.h>

typedef struct table table;

table *table_new(size_t ncols, const char *const *headers);
/* Appends a cell to the current row; a row is complete after ncols cells. */
int table_cell(table *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void table_print(const table *t, FILE *f);
void table_free(table *t);

#endif
