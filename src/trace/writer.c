/* Streaming CSV trace writer. The header is written with the first row (or at
 * close) so that comments can still go above it until then. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "trace/csv.h"
#include "truewatt.h"

#define TS_SUFFIX "_t_s"

struct tw_trace_writer {
    char *path;
    FILE *f;
    locale_t c_locale;
    size_t n;
    char **names;
    bool own_ts;
    bool header_done;
    bool have_prev;
    double prev_t;
    int write_errno; /* first failed write, 0 when none */
};

/* Records the first write failure: stdio may only notice it at a flush, so
 * once a write failed every later call reports it. */
static void note_io(tw_trace_writer *w, int rc)
{
    if (rc < 0 && w->write_errno == 0) w->write_errno = errno ? errno : EIO;
}

static tw_status io_status(const tw_trace_writer *w)
{
    if (w->write_errno) return tw_fail(TW_EIO, "%s: write failed: %s", w->path, strerror(w->write_errno));
    return TW_OK;
}

static tw_status check_io(tw_trace_writer *w, int rc)
{
    note_io(w, rc);
    return io_status(w);
}

static void free_writer(tw_trace_writer *w)
{
    if (!w) return;
    if (w->names)
        for (size_t i = 0; i < w->n; i++)
            free(w->names[i]);
    free(w->names);
    if (w->c_locale) freelocale(w->c_locale);
    free(w->path);
    free(w);
}

/* ---------------------------------------------------------------- open */

static bool ts_name_is(const char *ts, const char *name)
{
    size_t len = strlen(name);
    return strncmp(ts, name, len) == 0 && strcmp(ts + len, TS_SUFFIX) == 0;
}

/* A header whose columns would read back differently is refused: the reader
 * must find the same readings, in the same order. */
static tw_status check_names(size_t n, const char *const *names)
{
    for (size_t i = 0; i < n; i++) {
        const char *a = names[i];
        if (!a || !*a) return tw_fail(TW_EINVAL, "tw_trace_writer_open: name %zu is empty", i + 1);
        if (!tw_csv_storable(a)) return tw_fail(TW_EINVAL, "tw_trace_writer_open: name %zu holds a line break", i + 1);
        if (strcmp(a, "t_s") == 0)
            return tw_fail(TW_EINVAL, "tw_trace_writer_open: name '%s' is taken by the time column", a);
        for (size_t j = 0; j < n; j++) {
            const char *b = names[j];
            if (!b) continue;
            if (j < i && strcmp(a, b) == 0) return tw_fail(TW_EINVAL, "tw_trace_writer_open: duplicate name '%s'", a);
            if (j != i && ts_name_is(a, b))
                return tw_fail(TW_EINVAL, "tw_trace_writer_open: name '%s' would read back as the timestamp of '%s'", a,
                               b);
        }
    }
    return TW_OK;
}

static tw_status copy_names(tw_trace_writer *w, size_t n, const char *const *names)
{
    w->names = calloc(n ? n : 1, sizeof *w->names);
    if (!w->names) return tw_fail(TW_ENOMEM, "%s: out of memory", w->path);
    w->n = n;
    for (size_t i = 0; i < n; i++)
        if (!(w->names[i] = strdup(names[i]))) return tw_fail(TW_ENOMEM, "%s: out of memory", w->path);
    return TW_OK;
}

tw_status tw_trace_writer_open(const char *path, size_t n, const char *const *names, bool own_timestamps,
                               tw_trace_writer **out)
{
    tw_clear_error();
    if (!out) return tw_fail(TW_EINVAL, "tw_trace_writer_open: out is NULL");
    *out = NULL;
    if (!path || (n > 0 && !names)) return tw_fail(TW_EINVAL, "tw_trace_writer_open: path or names is NULL");
    tw_status st = check_names(n, names);
    if (st != TW_OK) return st;
    tw_trace_writer *w = calloc(1, sizeof *w);
    if (!w) return tw_fail(TW_ENOMEM, "%s: out of memory", path);
    w->own_ts = own_timestamps;
    w->path = strdup(path);
    if (!w->path) {
        free_writer(w);
        return tw_fail(TW_ENOMEM, "%s: out of memory", path);
    }
    if ((st = copy_names(w, n, names)) != TW_OK) {
        free_writer(w);
        return st;
    }
    w->c_locale = tw_csv_c_locale();
    if (!w->c_locale) {
        free_writer(w);
        return tw_fail(TW_ENOMEM, "%s: cannot create the C locale", path);
    }
    w->f = fopen(path, "w");
    if (!w->f) {
        st = tw_fail(TW_EIO, "%s: cannot open for writing: %s", path, strerror(errno));
        free_writer(w);
        return st;
    }
    *out = w;
    return TW_OK;
}

/* ---------------------------------------------------------------- writing */

static int write_ts_name(FILE *f, const char *name)
{
    size_t len = strlen(name) + sizeof TS_SUFFIX;
    char *ts = malloc(len);
    if (!ts) {
        errno = ENOMEM;
        return -1;
    }
    snprintf(ts, len, "%s%s", name, TS_SUFFIX);
    int rc = tw_csv_write_field(f, ts);
    free(ts);
    return rc;
}

static int write_header_cells(tw_trace_writer *w)
{
    errno = 0;
    int rc = fputs("t_s", w->f);
    for (size_t i = 0; i < w->n && rc >= 0; i++) {
        rc = putc(',', w->f) == EOF ? -1 : tw_csv_write_field(w->f, w->names[i]);
        if (rc >= 0 && w->own_ts) rc = putc(',', w->f) == EOF ? -1 : write_ts_name(w->f, w->names[i]);
    }
    if (rc >= 0) rc = putc('\n', w->f) == EOF ? -1 : 0;
    w->header_done = true;
    return rc;
}

tw_status tw_trace_writer_comment(tw_trace_writer *w, const char *text)
{
    tw_clear_error();
    if (!w || !text) return tw_fail(TW_EINVAL, "tw_trace_writer_comment: NULL argument");
    if (w->header_done) return tw_fail(TW_EINVAL, "%s: comments must come before the first row", w->path);
    /* every line of a multi-line text becomes its own comment line */
    errno = 0;
    int rc = 0;
    const char *p = text;
    do {
        size_t len = strcspn(p, "\r\n");
        if (fprintf(w->f, "# %.*s\n", (int)len, p) < 0) rc = -1;
        p += len;
        if (*p == '\r' && p[1] == '\n') p++;
        if (*p) p++;
    } while (*p && rc >= 0);
    return check_io(w, rc);
}

static tw_status check_row(const tw_trace_writer *w, const tw_row *row)
{
    if (row->n != w->n) return tw_fail(TW_EINVAL, "%s: row has %zu readings, the writer %zu", w->path, row->n, w->n);
    if (w->n > 0 && !row->value) return tw_fail(TW_EINVAL, "%s: row has no values", w->path);
    if (!isfinite(row->t_s)) return tw_fail(TW_EINVAL, "%s: row time is not finite", w->path);
    if (w->have_prev && row->t_s < w->prev_t)
        return tw_fail(TW_EORDER, "%s: time goes backwards (t_s = %.9g after %.9g)", w->path, row->t_s, w->prev_t);
    for (size_t i = 0; i < w->n; i++)
        if (isinf(row->value[i]) && (!row->valid || row->valid[i]))
            return tw_fail(TW_EINVAL, "%s: reading '%s' is infinite", w->path, w->names[i]);
    return TW_OK;
}

/* NaN values count as absent: the file can only say "absent" for them. */
static int write_cells(tw_trace_writer *w, const tw_row *row)
{
    FILE *f = w->f;
    int rc = fprintf(f, "%.9f", row->t_s);
    for (size_t i = 0; i < w->n && rc >= 0; i++) {
        bool valid = (!row->valid || row->valid[i]) && !isnan(row->value[i]);
        rc = putc(',', f) == EOF ? -1 : 0;
        if (rc >= 0 && valid) rc = fprintf(f, "%.10g", row->value[i]);
        if (rc >= 0 && w->own_ts) {
            double t = row->t_value_s ? row->t_value_s[i] : row->t_s;
            rc = putc(',', f) == EOF ? -1 : 0;
            if (rc >= 0 && valid && isfinite(t)) rc = fprintf(f, "%.9f", t);
        }
    }
    if (rc >= 0) rc = putc('\n', f) == EOF ? -1 : 0;
    return rc;
}

tw_status tw_trace_writer_write(tw_trace_writer *w, const tw_row *row)
{
    tw_clear_error();
    if (!w || !row) return tw_fail(TW_EINVAL, "tw_trace_writer_write: NULL argument");
    tw_status st = check_row(w, row);
    if (st != TW_OK) return st;
    if (!w->header_done && (st = check_io(w, write_header_cells(w))) != TW_OK) return st;
    locale_t old = uselocale(w->c_locale); /* '.' as decimal point, whatever setlocale said */
    errno = 0;
    int rc = write_cells(w, row);
    uselocale(old);
    w->prev_t = row->t_s;
    w->have_prev = true;
    return check_io(w, rc);
}

tw_status tw_trace_writer_close(tw_trace_writer *w)
{
    tw_clear_error();
    if (!w) return TW_OK;
    if (!w->header_done) note_io(w, write_header_cells(w));
    errno = 0;
    note_io(w, fflush(w->f) == EOF || ferror(w->f) ? -1 : 0);
    errno = 0;
    note_io(w, fclose(w->f) != 0 ? -1 : 0);
    tw_status st = io_status(w);
    free_writer(w);
    return st;
}
