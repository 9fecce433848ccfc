/* Reader of Nsight Compute's CSV; see ncu_csv.h.
 *
 * ncu --csv writes free-form "==PROF==" / "==WARNING==" lines, then one
 * header and one row per (launch, metric), every field quoted. Columns are
 * found by name because their order has changed between ncu versions. One
 * record is one physical line: ncu never puts a line break in a field, so an
 * unterminated quote means a truncated file, not a continued record. */
#include "mem/ncu_csv.h"

#include <errno.h>
#include <locale.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"

#define NO_COL SIZE_MAX
#define SHOWN 60 /* characters of a bad field quoted in a message */

enum { COL_ID, COL_NAME, COL_METRIC, COL_VALUE, COL_REQUIRED, COL_PID = COL_REQUIRED, COL_BLOCK, COL_GRID, NCOLS };
static const char *const col_names[NCOLS] = {"ID",         "Kernel Name", "Metric Name", "Metric Value",
                                             "Process ID", "Block Size",  "Grid Size"};

typedef struct fields {
    char **v; /* into the line buffer */
    size_t n, cap;
} fields;

typedef struct parser {
    const char *const *metrics;
    size_t nmetrics;
    tw_ncu_launch *launches;
    size_t n, cap;
    size_t *slot; /* open-addressing table of (pid, id): launch index + 1, 0 when empty */
    size_t nslot; /* a power of two, or 0 */
    size_t last;  /* launch of the previous row + 1: rows of one launch usually follow each other */
    fields fl;
    size_t col[NCOLS]; /* field index of each column, NO_COL when absent */
    size_t ncols;      /* fields in the header */
    bool header, any_text;
    size_t line;
    char message[sizeof((tw_ncu_report *)0)->message];
} parser;

typedef enum split_result { SPLIT_OK, SPLIT_UNTERMINATED, SPLIT_TRAILING, SPLIT_NOMEM } split_result;

static bool push_field(fields *fl, char *s)
{
    if (fl->n == fl->cap) {
        size_t cap = fl->cap ? 2 * fl->cap : 32;
        char **v = realloc(fl->v, cap * sizeof *v);
        if (!v) return false;
        fl->v = v;
        fl->cap = cap;
    }
    fl->v[fl->n++] = s;
    return true;
}

/* Splits `s` in place into fields: quoted ones lose their quotes and have ""
 * turned into ", unquoted ones are taken as they are. */
static split_result split_line(char *s, fields *fl)
{
    fl->n = 0;
    for (;;) {
        char *start = s, *w;
        if (*s == '"') {
            w = s++; /* the text moves left over the opening quote */
            for (;;) {
                if (*s == '\0') return SPLIT_UNTERMINATED;
                if (*s == '"' && s[1] != '"') break;
                if (*s == '"') s++; /* "" stands for one quote */
                *w++ = *s++;
            }
            s++;
            if (*s != ',' && *s != '\0') return SPLIT_TRAILING;
        } else {
            while (*s != ',' && *s != '\0')
                s++;
            w = s;
        }
        char end = *s; /* read before the terminator may overwrite it (unquoted: w == s) */
        *w = '\0';
        if (!push_field(fl, start)) return SPLIT_NOMEM;
        if (end == '\0') return SPLIT_OK;
        s++;
    }
}

/* Removes the thousands separators ncu prints ("44,729"): commas between digits. */
static void strip_separators(char *s)
{
    char *w = s;
    for (const char *r = s; *r; r++) {
        if (*r == ',' && w > s && w[-1] >= '0' && w[-1] <= '9' && r[1] >= '0' && r[1] <= '9') continue;
        *w++ = *r;
    }
    *w = '\0';
}

static char *trim(char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    size_t n = strlen(s);
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t'))
        s[--n] = '\0';
    return s;
}

/* A whole field as a finite decimal number. Only digits, signs, '.', 'e' are
 * let through to strtod, which would also take "nan", "inf" and hex floats.
 * The caller has switched to the C locale, so '.' is the decimal point. */
static bool parse_number(char *s, double *out)
{
    s = trim(s);
    strip_separators(s);
    if (*s == '\0' || strspn(s, "0123456789.eE+-") != strlen(s)) return false;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end != '\0' || !isfinite(v)) return false;
    *out = v;
    return true;
}

/* A metric value: a number, or NaN for n/a and empty. */
static bool parse_value(char *s, double *out)
{
    char *t = trim(s);
    if (*t == '\0' || strcmp(t, "n/a") == 0 || strcmp(t, "N/A") == 0) {
        *out = NAN;
        return true;
    }
    return parse_number(t, out);
}

static bool parse_long(char *s, long *out)
{
    s = trim(s);
    strip_separators(s);
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (end == s || *end != '\0' || errno == ERANGE) return false;
    *out = v;
    return true;
}

/* "(32, 1, 1)"; all zero when it is anything else. */
static void parse_dim3(const char *s, unsigned d[3])
{
    unsigned v[3] = {0};
    s += strspn(s, " ");
    bool ok = *s++ == '(';
    for (int i = 0; ok && i < 3; i++) {
        s += strspn(s, " ");
        char *end;
        errno = 0;
        unsigned long x = *s >= '0' && *s <= '9' ? strtoul(s, &end, 10) : 0;
        ok = *s >= '0' && *s <= '9' && errno == 0 && x <= 0xffffffffUL;
        if (ok) {
            v[i] = (unsigned)x;
            s = end + strspn(end, " ");
            ok = *s++ == (i < 2 ? ',' : ')');
        }
    }
    ok = ok && s[strspn(s, " ")] == '\0';
    for (int i = 0; i < 3; i++)
        d[i] = ok ? v[i] : 0;
}

/* The split fields as a header: true (and the columns noted) when it has the required columns. */
static bool take_header(parser *p)
{
    size_t col[NCOLS];
    for (int c = 0; c < NCOLS; c++) {
        col[c] = NO_COL;
        for (size_t i = 0; i < p->fl.n && col[c] == NO_COL; i++)
            if (strcmp(trim(p->fl.v[i]), col_names[c]) == 0) col[c] = i;
        if (c < COL_REQUIRED && col[c] == NO_COL) return false;
    }
    memcpy(p->col, col, sizeof col);
    p->ncols = p->fl.n;
    p->header = true;
    return true;
}

static uint64_t key_hash(long pid, long id)
{
    uint64_t h = (uint64_t)pid * 0x9E3779B97F4A7C15u ^ (uint64_t)id;
    h ^= h >> 29;
    h *= 0xBF58476D1CE4E5B9u;
    return h ^ (h >> 32);
}

/* The table slot holding (pid, id), or the empty one where it would go. */
static size_t *find_slot(const parser *p, size_t *slot, size_t nslot, long pid, long id)
{
    for (size_t i = key_hash(pid, id) & (nslot - 1);; i = (i + 1) & (nslot - 1)) {
        size_t k = slot[i];
        if (k == 0 || (p->launches[k - 1].pid == pid && p->launches[k - 1].id == id)) return &slot[i];
    }
}

/* Keeps the table at most half full so that probes stay short. */
static bool grow_table(parser *p)
{
    if (2 * (p->n + 1) <= p->nslot) return true;
    size_t nslot = p->nslot ? 2 * p->nslot : 64;
    size_t *slot = calloc(nslot, sizeof *slot);
    if (!slot) return false;
    for (size_t k = 0; k < p->n; k++)
        *find_slot(p, slot, nslot, p->launches[k].pid, p->launches[k].id) = k + 1;
    free(p->slot);
    p->slot = slot;
    p->nslot = nslot;
    return true;
}

/* A new launch from the row's fields; false when out of memory. */
static bool add_launch(parser *p, long pid, long id, size_t *idx)
{
    if (!grow_table(p)) return false;
    if (p->n == p->cap) {
        size_t cap = p->cap ? 2 * p->cap : 16;
        tw_ncu_launch *v = realloc(p->launches, cap * sizeof *v);
        if (!v) return false;
        p->launches = v;
        p->cap = cap;
    }
    tw_ncu_launch *l = &p->launches[p->n];
    memset(l, 0, sizeof *l);
    l->pid = pid;
    l->id = id;
    l->name = strdup(p->fl.v[p->col[COL_NAME]]);
    l->values = p->nmetrics ? malloc(p->nmetrics * sizeof *l->values) : NULL;
    if (!l->name || (p->nmetrics && !l->values)) {
        free(l->name);
        free(l->values);
        return false;
    }
    for (size_t m = 0; m < p->nmetrics; m++)
        l->values[m] = NAN;
    if (p->col[COL_BLOCK] != NO_COL) parse_dim3(p->fl.v[p->col[COL_BLOCK]], l->block);
    if (p->col[COL_GRID] != NO_COL) parse_dim3(p->fl.v[p->col[COL_GRID]], l->grid);
    *find_slot(p, p->slot, p->nslot, pid, id) = p->n + 1;
    *idx = p->n++;
    return true;
}

static tw_status launch_of(parser *p, long pid, long id, size_t *idx)
{
    if (p->last && p->launches[p->last - 1].pid == pid && p->launches[p->last - 1].id == id) {
        *idx = p->last - 1;
        return TW_OK;
    }
    size_t k = p->nslot ? *find_slot(p, p->slot, p->nslot, pid, id) : 0;
    if (k) {
        *idx = k - 1;
    } else if (!add_launch(p, pid, id, idx)) {
        return tw_fail(TW_ENOMEM, "out of memory reading the ncu CSV");
    }
    p->last = *idx + 1;
    return TW_OK;
}

static size_t metric_index(const parser *p, const char *name)
{
    for (size_t m = 0; m < p->nmetrics; m++)
        if (strcmp(p->metrics[m], name) == 0) return m;
    return NO_COL;
}

static tw_status take_row(parser *p)
{
    char **v = p->fl.v;
    /* a repeated header (output appended by a second ncu run) starts a new layout; no launch has the ID "ID" */
    if (p->fl.n > p->col[COL_ID] && strcmp(v[p->col[COL_ID]], "ID") == 0 && take_header(p)) return TW_OK;
    if (p->fl.n < p->ncols)
        return tw_fail(TW_EPARSE, "line %zu: %zu fields, the header has %zu (a truncated row?)", p->line, p->fl.n,
                       p->ncols);
    long pid = 0, id;
    if (!parse_long(v[p->col[COL_ID]], &id))
        return tw_fail(TW_EPARSE, "line %zu: ID \"%.*s\" is not an integer", p->line, SHOWN, v[p->col[COL_ID]]);
    if (p->col[COL_PID] != NO_COL && !parse_long(v[p->col[COL_PID]], &pid))
        return tw_fail(TW_EPARSE, "line %zu: Process ID \"%.*s\" is not an integer", p->line, SHOWN,
                       v[p->col[COL_PID]]);
    size_t idx = 0;
    tw_status st = launch_of(p, pid, id, &idx);
    if (st != TW_OK) return st;
    const char *metric = v[p->col[COL_METRIC]];
    size_t m = metric_index(p, metric);
    if (m == NO_COL) return TW_OK;
    char *text = v[p->col[COL_VALUE]];
    double x;
    if (!parse_value(text, &x))
        return tw_fail(TW_EPARSE, "line %zu: metric %s: value \"%.*s\" is not a number", p->line, metric, SHOWN, text);
    double *slot = &p->launches[idx].values[m];
    if (isnan(*slot)) *slot = x; /* a metric listed in two sections: the first number wins */
    return TW_OK;
}

/* One physical line, its line ending removed. */
static tw_status take_line(parser *p, char *s)
{
    if (s[strspn(s, " \t")] == '\0') return TW_OK;
    p->any_text = true;
    if (strncmp(s, "==", 2) == 0) { /* ncu's own messages, wherever they are */
        if (strncmp(s, "==ERROR==", 9) == 0 && p->message[0] == '\0') snprintf(p->message, sizeof p->message, "%s", s);
        return TW_OK;
    }
    split_result r = split_line(s, &p->fl);
    if (r == SPLIT_NOMEM) return tw_fail(TW_ENOMEM, "out of memory reading the ncu CSV");
    if (!p->header) { /* anything before the header that is not it: the application's output */
        if (r == SPLIT_OK) take_header(p);
        return TW_OK;
    }
    if (r == SPLIT_UNTERMINATED) return tw_fail(TW_EPARSE, "line %zu: unterminated quote (a truncated row?)", p->line);
    if (r == SPLIT_TRAILING) return tw_fail(TW_EPARSE, "line %zu: text after a closing quote", p->line);
    return take_row(p);
}

static tw_status read_lines(parser *p, FILE *f)
{
    char *buf = NULL;
    size_t cap = 0;
    tw_status st = TW_OK;
    for (;;) {
        errno = 0;
        ssize_t len = getline(&buf, &cap, f);
        if (len < 0) {
            if (ferror(f) || errno == ENOMEM)
                st = errno == ENOMEM ? tw_fail(TW_ENOMEM, "out of memory reading the ncu CSV")
                                     : tw_fail(TW_EIO, "line %zu: read error: %s", p->line + 1, strerror(errno));
            break;
        }
        p->line++;
        size_t n = strlen(buf); /* a NUL byte ends the line early: no ncu text holds one */
        while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
            buf[--n] = '\0';
        char *s = buf;
        if (p->line == 1 && strncmp(s, "\xEF\xBB\xBF", 3) == 0) s += 3; /* a byte-order mark */
        st = take_line(p, s);
        if (st != TW_OK) break;
    }
    free(buf);
    if (st == TW_OK && !p->header) {
        if (p->message[0]) return tw_fail(TW_EUNAVAIL, "ncu wrote no CSV, it reported: %s", p->message);
        if (!p->any_text) return tw_fail(TW_EEMPTY, "the file is empty: no ncu CSV header");
        return tw_fail(TW_EPARSE, "no ncu CSV header (a line with the columns ID, Kernel Name, Metric Name, Metric "
                                  "Value: written by ncu --csv --page details?)");
    }
    return st;
}

static void free_launches(tw_ncu_launch *l, size_t n)
{
    for (size_t k = 0; k < n; k++) {
        free(l[k].name);
        free(l[k].values);
    }
    free(l);
}

tw_status tw_ncu_read(FILE *f, const char *const *metrics, size_t nmetrics, tw_ncu_report *out)
{
    if (!out) return tw_fail(TW_EINVAL, "tw_ncu_read: no report to fill");
    memset(out, 0, sizeof *out);
    if (!f || (nmetrics && !metrics)) return tw_fail(TW_EINVAL, "tw_ncu_read: no file or no metric names");
    for (size_t m = 0; m < nmetrics; m++)
        if (!metrics[m]) return tw_fail(TW_EINVAL, "tw_ncu_read: metric %zu has no name", m);
    parser p = {.metrics = metrics, .nmetrics = nmetrics};
    /* ncu prints '.' as the decimal point whatever the locale; strtod must read it so */
    locale_t c = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
    locale_t old = c ? uselocale(c) : (locale_t)0;
    tw_status st = read_lines(&p, f);
    if (c) {
        uselocale(old);
        freelocale(c);
    }
    free(p.fl.v);
    free(p.slot);
    memcpy(out->message, p.message, sizeof out->message);
    if (st != TW_OK) {
        free_launches(p.launches, p.n);
        return st;
    }
    out->launches = p.launches;
    out->n = p.n;
    out->nmetrics = nmetrics;
    return TW_OK;
}

tw_status tw_ncu_read_path(const char *path, const char *const *metrics, size_t nmetrics, tw_ncu_report *out)
{
    if (out) memset(out, 0, sizeof *out);
    if (!path) return tw_fail(TW_EINVAL, "tw_ncu_read_path: no path");
    FILE *f = fopen(path, "r");
    if (!f) return tw_fail(TW_EIO, "%s: cannot open: %s", path, strerror(errno));
    tw_status st = tw_ncu_read(f, metrics, nmetrics, out);
    fclose(f);
    if (st != TW_OK) {
        char detail[1024]; /* tw_fail writes the buffer tw_last_error() points to */
        snprintf(detail, sizeof detail, "%s", tw_last_error());
        tw_fail(st, "%s: %s", path, detail);
    }
    return st;
}

void tw_ncu_report_free(tw_ncu_report *r)
{
    if (!r) return;
    free_launches(r->launches, r->n);
    memset(r, 0, sizeof *r);
}

double tw_ncu_sum(const tw_ncu_report *r, size_t m, size_t *missing)
{
    size_t miss = 0;
    double sum = 0;
    if (!r || m >= r->nmetrics) {
        sum = NAN;
        miss = r ? r->n : 0;
    } else {
        for (size_t k = 0; k < r->n; k++) {
            double v = r->launches[k].values[m];
            if (isnan(v))
                miss++;
            else
                sum += v;
        }
    }
    if (missing) *missing = miss;
    return sum;
}

void tw_ncu_metrics_arg(const char *const *metrics, size_t nmetrics, char *buf, size_t cap)
{
    size_t len = 0;
    if (cap) buf[0] = '\0';
    for (size_t i = 0; i < nmetrics; i++)
        len += (size_t)snprintf(buf + len, len < cap ? cap - len : 0, "%s%s", i ? "," : "", metrics[i]);
}
