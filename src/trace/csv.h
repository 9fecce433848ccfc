/* Internal CSV support shared by the trace reader, the trace writer and the
 * events file: an RFC-4180 line tokenizer that splits in place, a
 * locale-independent number parser, and quoting for writers.
 *
 * Deliberate limits: one record is one physical line (a quoted field cannot
 * hold a line break; writers refuse such text), and blanks around unquoted
 * fields are trimmed (hand-written "t_s, power_w" means what it looks like). */
#ifndef TW_TRACE_CSV_H
#define TW_TRACE_CSV_H

#include <locale.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "truewatt.h"

/* Splits the NUL-terminated `line` (without its line ending) in place.
 * Stores up to `cap` field pointers and sets *count to the number of fields
 * found, which may exceed `cap` (so callers can report "found M").
 * Returns false when the quoting is malformed. */
bool tw_csv_split(char *line, char **fields, size_t cap, size_t *count);

typedef enum tw_csv_num {
    TW_CSV_NUM_OK = 0, /* a finite number */
    TW_CSV_NUM_ABSENT, /* empty (after blanks) or nan/NaN/NAN */
    TW_CSV_NUM_BAD     /* anything else, "inf" and out-of-range included */
} tw_csv_num;

/* Parses a whole cell as a finite double. Blanks around it are allowed.
 * `c_locale` is used for the rare cells the fast path leaves to strtod, so a
 * program that called setlocale() still reads '.' as the decimal point. */
tw_csv_num tw_csv_number(const char *cell, locale_t c_locale, double *out);

/* The "C" locale as a new object (freelocale() it), or (locale_t)0. */
locale_t tw_csv_c_locale(void);

/* Writes a double with the fewest digits (up to 17) that read back exactly. */
int tw_csv_write_exact(FILE *f, double v);

/* Whether a field needs quotes to read back as written: it holds ',', '"',
 * a line break, blanks at either end, starts with '#' or is empty. */
bool tw_csv_needs_quotes(const char *s);
/* Whether text can be stored in a field at all (no line break). */
bool tw_csv_storable(const char *s);
/* Writes one field, quoted when needed. Returns < 0 on a write error. */
int tw_csv_write_field(FILE *f, const char *s);

/* A CSV file read record by record with getline: memory is bounded by the
 * longest line. Blank lines and '#' comment lines are skipped. */
typedef struct tw_csv_file {
    char *path; /* owned copy, for messages */
    FILE *f;
    char *buf; /* getline buffer, reused */
    size_t bufcap;
    uint64_t line; /* physical lines consumed so far */
    char **field;  /* field pointers into buf */
    size_t fieldcap;
    bool unterminated; /* the record last read had no line end: the file's last line, perhaps cut off */
} tw_csv_file;

/* Opens `path` for reading: TW_EIO "PATH: cannot open: ..." on failure. */
tw_status tw_csv_open(tw_csv_file *cf, const char *path);
/* Reads the next record and splits it. With `header`, the field array grows
 * to hold every field; otherwise only the first cf->fieldcap are stored and
 * *count still says how many there were. At the end sets *eof. Errors
 * (read failure, NUL byte, bad quoting) carry "PATH:LINE:". */
tw_status tw_csv_read(tw_csv_file *cf, bool header, size_t *count, bool *eof);
/* Reads the header: like tw_csv_read, but end of file is TW_EEMPTY. */
tw_status tw_csv_read_header(tw_csv_file *cf, size_t *count);
void tw_csv_close(tw_csv_file *cf);

#endif
