#include "trace/csv.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "core/error.h"
#include "core/numfmt.h"

static bool is_blank(char c) { return c == ' ' || c == '\t'; }

/* ---------------------------------------------------------------- tokenizer */

/* Unquotes the field starting at the opening quote `p`, in place. Returns a
 * pointer to the character after the field (',' or NUL), or NULL when the
 * quote is never closed or text follows the closing quote. */
static char *split_quoted(char *p)
{
    char *w = p; /* the unquoted text is shorter, so it can overwrite the quoted */
    p++;
    for (;;) {
        if (*p == '\0') return NULL;
        if (*p == '"') {
            if (p[1] != '"') break;
            p++;
        }
        *w++ = *p++;
    }
    p++;
    while (is_blank(*p))
        p++;
    if (*p != ',' && *p != '\0') return NULL;
    *w = '\0'; /* w trails p by at least the two quotes */
    return p;
}

bool tw_csv_split(char *line, char **fields, size_t cap, size_t *count)
{
    size_t n = 0;
    char *p = line;
    for (;;) {
        while (is_blank(*p))
            p++;
        char *start = p;
        char *end;
        if (*p == '"') {
            end = split_quoted(p);
            if (!end) return false;
        } else {
            end = p + strcspn(p, ",");
            char *t = end;
            while (t > start && is_blank(t[-1]))
                t--;
            if (t < end) *t = '\0';
        }
        if (n < cap) fields[n] = start;
        n++;
        if (*end == '\0') break;
        *end = '\0';
        p = end + 1;
    }
    *count = n;
    return true;
}

/* ---------------------------------------------------------------- numbers */

static const double pow10_exact[] = {
    1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
    1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
};

#define MAX_EXACT_MANTISSA (UINT64_C(1) << 53)

/* Reads decimal digits into a mantissa; leading zeros are not significant.
 * Returns false when there are more significant digits than fit exactly. */
static bool read_digits(const char **pp, uint64_t *mant, int *ndig, int *exp10, bool fraction, bool *any)
{
    const char *p = *pp;
    while (*p >= '0' && *p <= '9') {
        unsigned d = (unsigned)(*p - '0');
        *any = true;
        if (*mant == 0 && d == 0) {
            if (fraction) (*exp10)--;
        } else {
            if (*ndig >= 19) return false;
            *mant = *mant * 10 + d;
            (*ndig)++;
            if (fraction) (*exp10)--;
        }
        p++;
    }
    *pp = p;
    return true;
}

/* Clinger's fast path: a mantissa below 2^53 times an exact power of ten
 * below 1e23 is one correctly rounded operation, identical to strtod.
 * Returns false for whatever it does not handle; strtod decides those. */
static bool parse_fast(const char *p, double *out)
{
#if FLT_EVAL_METHOD != 0
    (void)p;
    (void)out;
    return false; /* extended-precision intermediates would round twice */
#else
    bool neg = false;
    if (*p == '+' || *p == '-') neg = *p++ == '-';
    uint64_t mant = 0;
    int ndig = 0, exp10 = 0;
    bool any = false;
    if (!read_digits(&p, &mant, &ndig, &exp10, false, &any)) return false;
    if (*p == '.') {
        p++;
        if (!read_digits(&p, &mant, &ndig, &exp10, true, &any)) return false;
    }
    if (!any) return false;
    if (*p == 'e' || *p == 'E') {
        p++;
        int sign = 1, e = 0, edig = 0;
        if (*p == '+' || *p == '-') sign = *p++ == '-' ? -1 : 1;
        while (*p >= '0' && *p <= '9') {
            if (++edig > 4) return false;
            e = e * 10 + (*p++ - '0');
        }
        if (edig == 0) return false;
        exp10 += sign * e;
    }
    while (is_blank(*p))
        p++;
    if (*p != '\0' || mant > MAX_EXACT_MANTISSA) return false;
    double v = (double)mant;
    if (mant == 0)
        v = 0.0;
    else if (exp10 > 0 && exp10 <= 22)
        v *= pow10_exact[exp10];
    else if (exp10 < 0 && exp10 >= -22)
        v /= pow10_exact[-exp10];
    else if (exp10 != 0)
        return false;
    *out = neg ? -v : v;
    return true;
#endif
}

static bool is_nan_word(const char *s, size_t len)
{
    return len == 3 && (memcmp(s, "nan", 3) == 0 || memcmp(s, "NaN", 3) == 0 || memcmp(s, "NAN", 3) == 0);
}

static bool parse_strtod(const char *s, locale_t c_locale, double *out)
{
    locale_t old = (locale_t)0;
    if (c_locale) old = uselocale(c_locale);
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (c_locale) uselocale(old);
    if (end == s) return false;
    while (is_blank(*end))
        end++;
    if (*end != '\0' || !isfinite(v)) return false;
    *out = v;
    return true;
}

tw_csv_num tw_csv_number(const char *cell, locale_t c_locale, double *out)
{
    while (is_blank(*cell))
        cell++;
    size_t len = strlen(cell);
    while (len > 0 && is_blank(cell[len - 1]))
        len--;
    if (len == 0 || is_nan_word(cell, len)) return TW_CSV_NUM_ABSENT;
    if (parse_fast(cell, out)) return TW_CSV_NUM_OK;
    /* strtod's "inf", "nan(...)" and overflow land here as non-finite */
    return parse_strtod(cell, c_locale, out) ? TW_CSV_NUM_OK : TW_CSV_NUM_BAD;
}

locale_t tw_csv_c_locale(void) { return newlocale(LC_ALL_MASK, "C", (locale_t)0); }

int tw_csv_write_exact(FILE *f, double v)
{
    char buf[TW_EXACT_LEN];
    return fputs(tw_format_exact(buf, v), f);
}

/* ---------------------------------------------------------------- quoting */

bool tw_csv_needs_quotes(const char *s)
{
    size_t len = strlen(s);
    if (len == 0 || s[0] == '#' || is_blank(s[0]) || is_blank(s[len - 1])) return true;
    return strpbrk(s, ",\"\r\n") != NULL;
}

bool tw_csv_storable(const char *s) { return strpbrk(s, "\r\n") == NULL; }

int tw_csv_write_field(FILE *f, const char *s)
{
    if (!tw_csv_needs_quotes(s)) return fputs(s, f);
    if (putc('"', f) == EOF) return -1;
    for (; *s; s++) {
        if (*s == '"' && putc('"', f) == EOF) return -1;
        if (putc(*s, f) == EOF) return -1;
    }
    return putc('"', f) == EOF ? -1 : 0;
}

/* ---------------------------------------------------------------- files */

tw_status tw_csv_open(tw_csv_file *cf, const char *path)
{
    memset(cf, 0, sizeof *cf);
    cf->path = strdup(path);
    if (!cf->path) return tw_fail(TW_ENOMEM, "%s: out of memory", path);
    cf->f = fopen(path, "r");
    if (!cf->f) {
        tw_status st = tw_fail(TW_EIO, "%s: cannot open: %s", path, strerror(errno));
        tw_csv_close(cf);
        return st;
    }
    /* a directory opens fine on Linux and only fails on the first read */
    struct stat sb;
    if (fstat(fileno(cf->f), &sb) == 0 && S_ISDIR(sb.st_mode)) {
        tw_status st = tw_fail(TW_EIO, "%s: cannot open: %s", path, strerror(EISDIR));
        tw_csv_close(cf);
        return st;
    }
    return TW_OK;
}

static bool skippable(const char *line)
{
    while (is_blank(*line))
        line++;
    return *line == '\0' || *line == '#';
}

/* Strips the line ending (LF, CRLF or a lone CR) in place. */
static void chomp(char *line, size_t *len)
{
    while (*len > 0 && (line[*len - 1] == '\n' || line[*len - 1] == '\r'))
        line[--*len] = '\0';
}

/* Reads the next physical line that is neither blank nor a comment. */
static tw_status read_line(tw_csv_file *cf, size_t *len, bool *eof)
{
    for (;;) {
        errno = 0;
        ssize_t n = getline(&cf->buf, &cf->bufcap, cf->f);
        if (n < 0) {
            if (ferror(cf->f))
                return tw_fail(TW_EIO, "%s:%llu: read error: %s", cf->path, (unsigned long long)(cf->line + 1),
                               strerror(errno ? errno : EIO));
            if (errno == ENOMEM)
                return tw_fail(TW_ENOMEM, "%s:%llu: out of memory", cf->path, (unsigned long long)(cf->line + 1));
            *eof = true;
            return TW_OK;
        }
        cf->line++;
        size_t l = (size_t)n;
        cf->unterminated = cf->buf[l - 1] != '\n';
        if (memchr(cf->buf, '\0', l))
            return tw_fail(TW_EPARSE, "%s:%llu: NUL byte in text (binary file?)", cf->path,
                           (unsigned long long)cf->line);
        chomp(cf->buf, &l);
        /* spreadsheets prefix UTF-8 files with a byte order mark */
        if (cf->line == 1 && l >= 3 && memcmp(cf->buf, "\xEF\xBB\xBF", 3) == 0) {
            memmove(cf->buf, cf->buf + 3, l - 3 + 1);
            l -= 3;
        }
        if (!skippable(cf->buf)) {
            *len = l;
            *eof = false;
            return TW_OK;
        }
    }
}

static tw_status ensure_fields(tw_csv_file *cf, size_t need)
{
    if (need <= cf->fieldcap) return TW_OK;
    char **p = realloc(cf->field, need * sizeof *p);
    if (!p) return tw_fail(TW_ENOMEM, "%s:%llu: out of memory", cf->path, (unsigned long long)cf->line);
    cf->field = p;
    cf->fieldcap = need;
    return TW_OK;
}

/* Quoted commas only lower the count, so commas + 1 bounds the fields. */
static size_t max_fields(const char *line, size_t len)
{
    size_t n = 1;
    for (const char *p = line; (p = memchr(p, ',', len - (size_t)(p - line))) != NULL; p++)
        n++;
    return n;
}

tw_status tw_csv_read(tw_csv_file *cf, bool header, size_t *count, bool *eof)
{
    size_t len = 0;
    tw_status st = read_line(cf, &len, eof);
    if (st != TW_OK || *eof) return st;
    if (header && (st = ensure_fields(cf, max_fields(cf->buf, len))) != TW_OK) return st;
    if (!tw_csv_split(cf->buf, cf->field, cf->fieldcap, count))
        return tw_fail(TW_EPARSE, "%s:%llu: malformed quoted field", cf->path, (unsigned long long)cf->line);
    return TW_OK;
}

tw_status tw_csv_read_header(tw_csv_file *cf, size_t *count)
{
    bool eof = false;
    tw_status st = tw_csv_read(cf, true, count, &eof);
    if (st == TW_OK && eof) return tw_fail(TW_EEMPTY, "%s: empty file (no header)", cf->path);
    return st;
}

void tw_csv_close(tw_csv_file *cf)
{
    if (cf->f) fclose(cf->f);
    free(cf->buf);
    free(cf->field);
    free(cf->path);
    memset(cf, 0, sizeof *cf);
}
