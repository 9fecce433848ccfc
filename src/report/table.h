/* Plain-text tables with aligned columns (first column left, others right). */
#ifndef TW_REPORT_TABLE_H
#define TW_REPORT_TABLE_H

/* The symbols carry the library's prefix (tests/meta/static_symbols.sh); the call sites keep the short names. */
#define table_new tw_table_new
#define table_cell tw_table_cell
#define table_print tw_table_print
#define table_free tw_table_free
#define table_new_streamed tw_table_new_streamed
#define table_stream_print tw_table_stream_print

#include <stddef.h>
#include <stdio.h>

typedef struct table table;

table *table_new(size_t ncols, const char *const *headers);
/* Appends a cell to the current row; a row is complete after ncols cells. */
int table_cell(table *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void table_print(const table *t, FILE *f);

/* A table of rows too many to hold, made in two passes over them: the
 * first pass's cells (table_cell) are only measured; table_stream_print
 * then prints the header with the widths found, and the second pass's cells
 * are printed as they come, aligned as table_print aligns them. */
table *table_new_streamed(size_t ncols, const char *const *headers);
void table_stream_print(table *t, FILE *f);
void table_free(table *t);

#endif
