/* Streaming reader of CSV traces: one getline buffer, split in place, so
 * memory is bounded by the longest line and no cell is copied. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "core/error.h"
#include "runfile/runfile.h"
#include "trace/csv.h"
#include "truewatt.h"

#define NO_COL ((size_t)-1)
#define TS_SUFFIX "_t_s"
#define TS_SUFFIX_LEN 4
/* cell text quoted in messages is cut here: the point is to recognise it */
#define CELL_SHOWN 80
/* A power outside this range is not a GPU's (issue 19): a unit mistake, a
 * corrupt cell or an overflow (1e307 kW), refused rather than analysed. */
#define POWER_MIN_W 0.0
#define POWER_MAX_W 5000.0

typedef struct scaling {
    double factor;
    bool divide; /* sub-unit scales divide by an exact 10^k: 77076 mW -> exactly 77.076 W */
} scaling;

struct tw_trace_reader {
    tw_run_rows *run; /* a run file's samples instead of a CSV (runfile.h); then nothing below is used */
    tw_csv_file cf;
    locale_t c_locale;
    size_t ncols;   /* fields per row, from the header */
    char *names;    /* all column names, back to back */
    char **colname; /* per column, into names */
    size_t time_col;
    size_t n; /* readings */
    tw_reading_info *info;
    size_t *col;    /* reading -> its column */
    size_t *ts_col; /* reading -> its own-timestamp column, or NO_COL */
    scaling *scale;
    double *value;
    double *t_value;
    uint8_t *valid;
    double *prev_value; /* the row before's values, for a repeated timestamp */
    uint8_t *prev_valid;
    off_t data_off; /* file offset just after the header; -1 when not seekable */
    uint64_t header_line;
    uint64_t row_line;
    double prev_t;
    bool have_prev;
    bool at_eof;
    tw_status sticky; /* first error of next(); repeated until rewind */
    char sticky_msg[1024];
    char notes[1024]; /* what was read with a warning (a cut-off last line); "" if nothing */
};

/* ---------------------------------------------------------------- units */

typedef struct unit_suffix {
    const char *suffix;
    tw_quantity quantity;
    double scale;
} unit_suffix;

static const unit_suffix units[] = {
    {"_w", TW_Q_POWER, 1},    {"_mw", TW_Q_POWER, 1e-3},  {"_uw", TW_Q_POWER, 1e-6},  {"_kw", TW_Q_POWER, 1e3},
    {"_j", TW_Q_ENERGY, 1},   {"_mj", TW_Q_ENERGY, 1e-3}, {"_uj", TW_Q_ENERGY, 1e-6}, {"_s", TW_Q_TIME, 1},
    {"_ms", TW_Q_TIME, 1e-3}, {"_us", TW_Q_TIME, 1e-6},   {"_ns", TW_Q_TIME, 1e-9},
};

static bool ends_with(const char *s, size_t len, const char *suffix)
{
    size_t k = strlen(suffix);
    return len >= k && memcmp(s + len - k, suffix, k) == 0;
}

static void unit_of(const char *name, tw_quantity *q, double *scale)
{
    size_t len = strlen(name);
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
        if (ends_with(name, len, units[i].suffix)) {
            *q = units[i].quantity;
            *scale = units[i].scale;
            return;
        }
    }
    *q = TW_Q_OTHER;
    *scale = 1;
}

static scaling scaling_of(double scale)
{
    if (scale < 1) return (scaling){round(1 / scale), true};
    return (scaling){scale, false};
}

static double apply(scaling s, double v) { return s.divide ? v / s.factor : v * s.factor; }

/* ---------------------------------------------------------------- header */

static bool is_time_name(const char *s)
{
    return strcmp(s, "t_s") == 0 || strcmp(s, "t") == 0 || strcmp(s, "time_s") == 0;
}

static size_t find_column(const tw_trace_reader *r, const char *name, size_t len)
{
    for (size_t c = 0; c < r->ncols; c++)
        if (strlen(r->colname[c]) == len && memcmp(r->colname[c], name, len) == 0) return c;
    return NO_COL;
}

/* Column c is reading X's timestamp when it is "X_t_s" and X is a reading
 * (not the time column, not itself a timestamp). `memo`: 0 unknown, 1 yes, 2 no. */
static bool is_ts_column(const tw_trace_reader *r, size_t c, unsigned char *memo, size_t *owner)
{
    if (memo[c] == 0) {
        const char *name = r->colname[c];
        size_t len = strlen(name);
        size_t x = NO_COL;
        if (len > TS_SUFFIX_LEN && ends_with(name, len, TS_SUFFIX)) x = find_column(r, name, len - TS_SUFFIX_LEN);
        /* X is strictly shorter than c's name, so this recursion ends */
        bool yes = x != NO_COL && x != r->time_col && !is_ts_column(r, x, memo, NULL);
        memo[c] = yes ? 1 : 2;
    }
    if (memo[c] == 1 && owner) {
        const char *name = r->colname[c];
        *owner = find_column(r, name, strlen(name) - TS_SUFFIX_LEN);
    }
    return memo[c] == 1;
}

static tw_status copy_names(tw_trace_reader *r, size_t count)
{
    size_t total = 0;
    for (size_t c = 0; c < count; c++)
        total += strlen(r->cf.field[c]) + 1;
    r->names = malloc(total);
    r->colname = malloc(count * sizeof *r->colname);
    if (!r->names || !r->colname) return tw_fail(TW_ENOMEM, "%s: out of memory", r->cf.path);
    char *p = r->names;
    for (size_t c = 0; c < count; c++) {
        size_t len = strlen(r->cf.field[c]) + 1;
        memcpy(p, r->cf.field[c], len);
        r->colname[c] = p;
        p += len;
    }
    r->ncols = count;
    return TW_OK;
}

static tw_status check_names(const tw_trace_reader *r)
{
    unsigned long long line = (unsigned long long)r->header_line;
    for (size_t c = 0; c < r->ncols; c++) {
        if (r->colname[c][0] == '\0')
            return tw_fail(TW_EPARSE, "%s:%llu: column %zu has no name", r->cf.path, line, c + 1);
        for (size_t d = 0; d < c; d++)
            if (strcmp(r->colname[c], r->colname[d]) == 0)
                return tw_fail(TW_EPARSE, "%s:%llu: duplicate column '%s'", r->cf.path, line, r->colname[c]);
    }
    return TW_OK;
}

static tw_status find_time_column(tw_trace_reader *r)
{
    for (size_t c = 0; c < r->ncols; c++) {
        if (is_time_name(r->colname[c])) {
            r->time_col = c;
            return TW_OK;
        }
    }
    return tw_fail(TW_EPARSE, "%s:%llu: no time column (expected t_s)", r->cf.path, (unsigned long long)r->header_line);
}

static tw_status alloc_readings(tw_trace_reader *r, size_t n)
{
    size_t k = n ? n : 1; /* malloc(0) may be NULL */
    r->info = calloc(k, sizeof *r->info);
    r->col = calloc(k, sizeof *r->col);
    r->ts_col = calloc(k, sizeof *r->ts_col);
    r->scale = calloc(k, sizeof *r->scale);
    r->value = calloc(k, sizeof *r->value);
    r->t_value = calloc(k, sizeof *r->t_value);
    r->valid = calloc(k, sizeof *r->valid);
    r->prev_value = calloc(k, sizeof *r->prev_value);
    r->prev_valid = calloc(k, sizeof *r->prev_valid);
    if (!r->info || !r->col || !r->ts_col || !r->scale || !r->value || !r->t_value || !r->valid || !r->prev_value ||
        !r->prev_valid)
        return tw_fail(TW_ENOMEM, "%s: out of memory", r->cf.path);
    r->n = n;
    return TW_OK;
}

static tw_status classify_columns(tw_trace_reader *r)
{
    unsigned char *memo = calloc(r->ncols, 1);
    if (!memo) return tw_fail(TW_ENOMEM, "%s: out of memory", r->cf.path);
    size_t n = 0;
    for (size_t c = 0; c < r->ncols; c++)
        if (c != r->time_col && !is_ts_column(r, c, memo, NULL)) n++;
    tw_status st = alloc_readings(r, n);
    if (st != TW_OK) {
        free(memo);
        return st;
    }
    size_t i = 0;
    for (size_t c = 0; c < r->ncols; c++) {
        if (c == r->time_col || is_ts_column(r, c, memo, NULL)) continue;
        tw_reading_info *info = &r->info[i];
        info->name = r->colname[c];
        unit_of(info->name, &info->quantity, &info->scale);
        r->scale[i] = scaling_of(info->scale);
        r->col[i] = c;
        r->ts_col[i] = NO_COL;
        i++;
    }
    for (size_t c = 0; c < r->ncols; c++) {
        size_t owner = NO_COL;
        if (!is_ts_column(r, c, memo, &owner)) continue;
        for (size_t k = 0; k < r->n; k++)
            if (r->col[k] == owner) r->ts_col[k] = c;
    }
    free(memo);
    return TW_OK;
}

static tw_status read_header(tw_trace_reader *r)
{
    size_t count = 0;
    tw_status st = tw_csv_read_header(&r->cf, &count);
    if (st != TW_OK) return st;
    r->header_line = r->row_line = r->cf.line;
    if ((st = copy_names(r, count)) != TW_OK || (st = check_names(r)) != TW_OK || (st = find_time_column(r)) != TW_OK ||
        (st = classify_columns(r)) != TW_OK)
        return st;
    r->data_off = ftello(r->cf.f);
    return TW_OK;
}

/* ---------------------------------------------------------------- public */

tw_status tw_trace_reader_open(const char *path, tw_trace_reader **out)
{
    tw_clear_error();
    if (!out) return tw_fail(TW_EINVAL, "tw_trace_reader_open: out is NULL");
    *out = NULL;
    if (!path) return tw_fail(TW_EINVAL, "tw_trace_reader_open: path is NULL");
    tw_trace_reader *r = calloc(1, sizeof *r);
    if (!r) return tw_fail(TW_ENOMEM, "%s: out of memory", path);
    tw_status st = tw_run_is_file(path) ? tw_run_rows_open(path, &r->run) : TW_OK;
    if (r->run) {
        *out = r;
        return TW_OK;
    }
    if (st == TW_OK) st = tw_csv_open(&r->cf, path);
    if (st == TW_OK) st = read_header(r);
    if (st != TW_OK) {
        tw_trace_reader_close(r);
        return st;
    }
    /* only strtod's slow path uses it; without it numbers still parse in "C"
     * unless the program changed LC_NUMERIC */
    r->c_locale = tw_csv_c_locale();
    *out = r;
    return TW_OK;
}

size_t tw_trace_reader_nreadings(const tw_trace_reader *r)
{
    return !r ? 0 : r->run ? tw_run_rows_nreadings(r->run) : r->n;
}

const tw_reading_info *tw_trace_reader_reading(const tw_trace_reader *r, size_t i)
{
    if (r && r->run) return tw_run_rows_reading(r->run, i);
    return r && i < r->n ? &r->info[i] : NULL;
}

/* Lists the reading names into buf, cut with "..." when too long. */
static void list_names(const tw_trace_reader *r, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < tw_trace_reader_nreadings(r) && used < len; i++) {
        int k = snprintf(buf + used, len - used, "%s%s", i ? ", " : "", tw_trace_reader_reading(r, i)->name);
        if (k < 0 || (size_t)k >= len - used) {
            if (len >= 4) memcpy(buf + len - 4, "...", 4);
            return;
        }
        used += (size_t)k;
    }
}

tw_status tw_trace_reader_find(const tw_trace_reader *r, const char *name, size_t *idx)
{
    tw_clear_error();
    if (!r || !name || !idx) return tw_fail(TW_EINVAL, "tw_trace_reader_find: NULL argument");
    size_t n = tw_trace_reader_nreadings(r);
    for (size_t i = 0; i < n; i++) {
        if (strcmp(tw_trace_reader_reading(r, i)->name, name) == 0) {
            *idx = i;
            return TW_OK;
        }
    }
    char names[768];
    list_names(r, names, sizeof names);
    return tw_fail(TW_ENOTFOUND, "%s: no column '%s' (readings: %s)", tw_trace_reader_path(r), name,
                   n ? names : "none");
}

static tw_status remember(tw_trace_reader *r, tw_status st)
{
    r->sticky = st;
    snprintf(r->sticky_msg, sizeof r->sticky_msg, "%s", tw_last_error());
    return st;
}

static tw_status bad_number(const tw_trace_reader *r, size_t col)
{
    return tw_fail(TW_EPARSE, "%s:%llu: column '%s': '%.*s' is not a number", r->cf.path,
                   (unsigned long long)r->cf.line, r->colname[col], CELL_SHOWN, r->cf.field[col]);
}

static tw_status parse_time(tw_trace_reader *r, double *t)
{
    switch (tw_csv_number(r->cf.field[r->time_col], r->c_locale, t)) {
    case TW_CSV_NUM_OK:
        break;
    case TW_CSV_NUM_ABSENT:
        return tw_fail(TW_EPARSE, "%s:%llu: missing time", r->cf.path, (unsigned long long)r->cf.line);
    default:
        return bad_number(r, r->time_col);
    }
    if (r->have_prev && *t < r->prev_t)
        return tw_fail(TW_EORDER, "%s:%llu: time goes backwards (t_s = %.9g after %.9g)", r->cf.path,
                       (unsigned long long)r->cf.line, *t, r->prev_t);
    return TW_OK;
}

/* A value that is a number but no reading of a GPU: it overflowed when
 * scaled to base units, or it is a power outside POWER_MIN_W..POWER_MAX_W. */
static tw_status check_range(const tw_trace_reader *r, size_t i, double v)
{
    size_t col = r->col[i];
    if (!isfinite(v))
        return tw_fail(TW_EPARSE, "%s:%llu: column '%s': '%.*s' is out of range (infinite in base units)", r->cf.path,
                       (unsigned long long)r->cf.line, r->colname[col], CELL_SHOWN, r->cf.field[col]);
    if (r->info[i].quantity == TW_Q_POWER && !(v >= POWER_MIN_W && v <= POWER_MAX_W))
        return tw_fail(TW_EPARSE, "%s:%llu: column '%s': '%.*s' is %.9g W, outside %g .. %g W", r->cf.path,
                       (unsigned long long)r->cf.line, r->colname[col], CELL_SHOWN, r->cf.field[col], v, POWER_MIN_W,
                       POWER_MAX_W);
    return TW_OK;
}

static tw_status parse_readings(tw_trace_reader *r, double t)
{
    char **field = r->cf.field;
    for (size_t i = 0; i < r->n; i++) {
        double v;
        tw_status st;
        switch (tw_csv_number(field[r->col[i]], r->c_locale, &v)) {
        case TW_CSV_NUM_OK:
            r->value[i] = apply(r->scale[i], v);
            r->valid[i] = 1;
            if ((st = check_range(r, i, r->value[i])) != TW_OK) return st;
            break;
        case TW_CSV_NUM_ABSENT:
            r->value[i] = NAN; /* a consumer that ignores valid must not see 0 */
            r->valid[i] = 0;
            break;
        default:
            return bad_number(r, r->col[i]);
        }
        r->t_value[i] = t;
        if (r->ts_col[i] == NO_COL) continue;
        tw_csv_num k = tw_csv_number(field[r->ts_col[i]], r->c_locale, &v);
        if (k == TW_CSV_NUM_BAD) return bad_number(r, r->ts_col[i]);
        if (k == TW_CSV_NUM_OK) r->t_value[i] = v;
    }
    return TW_OK;
}

/* Two rows at one time that disagree on a power or energy reading (without
 * its own timestamp) cannot both be right: refused, not analysed as a jump.
 * Rows that repeat the same values are fine (the deduplication drops them);
 * other columns (a temperature, a label-like number) are not judged. */
static tw_status check_repeat(const tw_trace_reader *r, double t)
{
    if (!r->have_prev || t != r->prev_t) return TW_OK;
    for (size_t i = 0; i < r->n; i++) {
        tw_quantity q = r->info[i].quantity;
        if ((q != TW_Q_POWER && q != TW_Q_ENERGY) || r->ts_col[i] != NO_COL || !r->valid[i] || !r->prev_valid[i] ||
            r->value[i] == r->prev_value[i])
            continue;
        return tw_fail(TW_EPARSE, "%s:%llu: time %.9g s repeats (line %llu) with another '%s' (%.9g after %.9g)",
                       r->cf.path, (unsigned long long)r->cf.line, t, (unsigned long long)r->row_line, r->info[i].name,
                       r->value[i], r->prev_value[i]);
    }
    return TW_OK;
}

static tw_status parse_row(tw_trace_reader *r, size_t count, tw_row *row)
{
    if (count != r->ncols)
        return tw_fail(TW_EPARSE, "%s:%llu: expected %zu fields, found %zu", r->cf.path, (unsigned long long)r->cf.line,
                       r->ncols, count);
    double t;
    memcpy(r->prev_value, r->value, r->n * sizeof *r->value);
    memcpy(r->prev_valid, r->valid, r->n * sizeof *r->valid);
    tw_status st = parse_time(r, &t);
    if (st == TW_OK) st = parse_readings(r, t);
    if (st == TW_OK) st = check_repeat(r, t);
    if (st != TW_OK) return st;
    r->prev_t = t;
    r->have_prev = true;
    r->row_line = r->cf.line;
    row->t_s = t;
    row->n = r->n;
    row->value = r->value;
    row->t_value_s = r->t_value;
    row->valid = r->valid;
    return TW_OK;
}

/* The last line has no line end: a writer that stopped mid-line (a crash,
 * a full disk), whose line may parse to a wrong number ("0.8,2" of
 * "0.8,250"). Every writer of traces ends its lines, so the line is left
 * out and noted, and the rows before it are used (not the whole file
 * refused). */
static tw_status cut_off_end(tw_trace_reader *r, bool *eof)
{
    if (!r->notes[0])
        snprintf(r->notes, sizeof r->notes,
                 "%s:%llu: the last line has no line end (cut off?) and was left out; the rows before it are used",
                 r->cf.path, (unsigned long long)r->cf.line);
    tw_clear_error();
    r->at_eof = true;
    *eof = true;
    return TW_OK;
}

tw_status tw_trace_reader_next(tw_trace_reader *r, tw_row *row, bool *eof)
{
    tw_clear_error();
    if (!r || !row || !eof) return tw_fail(TW_EINVAL, "tw_trace_reader_next: NULL argument");
    if (r->run) return tw_run_rows_next(r->run, row, eof);
    if (r->sticky != TW_OK) return tw_fail(r->sticky, "%s", r->sticky_msg);
    *eof = r->at_eof;
    if (r->at_eof) return TW_OK;
    size_t count = 0;
    tw_status st = tw_csv_read(&r->cf, false, &count, eof);
    if (st == TW_OK && *eof) {
        r->at_eof = true;
        return TW_OK;
    }
    if ((st == TW_OK || st == TW_EPARSE) && r->cf.unterminated) return cut_off_end(r, eof);
    if (st == TW_OK) st = parse_row(r, count, row);
    return st == TW_OK ? TW_OK : remember(r, st);
}

tw_status tw_trace_reader_rewind(tw_trace_reader *r)
{
    tw_clear_error();
    if (!r) return tw_fail(TW_EINVAL, "tw_trace_reader_rewind: NULL reader");
    if (r->run) return tw_run_rows_rewind(r->run);
    if (r->data_off < 0) return tw_fail(TW_EUNSUPPORTED, "%s: cannot rewind: not a regular file", r->cf.path);
    clearerr(r->cf.f);
    if (fseeko(r->cf.f, r->data_off, SEEK_SET) != 0)
        return tw_fail(TW_EIO, "%s: cannot rewind: %s", r->cf.path, strerror(errno));
    r->cf.line = r->row_line = r->header_line;
    r->have_prev = false;
    r->at_eof = false;
    r->sticky = TW_OK;
    return TW_OK;
}

/* a run file: the poll's number */
uint64_t tw_trace_reader_line(const tw_trace_reader *r)
{
    return !r ? 0 : r->run ? tw_run_rows_index(r->run) : r->row_line;
}

const char *tw_trace_reader_notes(const tw_trace_reader *r) { return r ? r->notes : ""; }

const char *tw_trace_reader_path(const tw_trace_reader *r)
{
    return !r ? NULL : r->run ? tw_run_rows_path(r->run) : r->cf.path;
}

void tw_trace_reader_close(tw_trace_reader *r)
{
    if (!r) return;
    tw_run_rows_close(r->run);
    tw_csv_close(&r->cf);
    if (r->c_locale) freelocale(r->c_locale);
    free(r->names);
    free(r->colname);
    free(r->info);
    free(r->col);
    free(r->ts_col);
    free(r->scale);
    free(r->value);
    free(r->t_value);
    free(r->valid);
    free(r->prev_value);
    free(r->prev_valid);
    free(r);
}
