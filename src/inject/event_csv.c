/* Activity records to CSV lines, device UUIDs, CUPTI-to-monotonic time. No CUPTI here. */
#include "inject/event_csv.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *twi_memcpy_kind_name(uint32_t copy_kind)
{
    static const char *const names[] = {
        [TWI_MEMCPY_UNKNOWN] = "unknown", [TWI_MEMCPY_HTOD] = "HtoD", [TWI_MEMCPY_DTOH] = "DtoH",
        [TWI_MEMCPY_HTOA] = "HtoA",       [TWI_MEMCPY_ATOH] = "AtoH", [TWI_MEMCPY_ATOA] = "AtoA",
        [TWI_MEMCPY_ATOD] = "AtoD",       [TWI_MEMCPY_DTOA] = "DtoA", [TWI_MEMCPY_DTOD] = "DtoD",
        [TWI_MEMCPY_HTOH] = "HtoH",       [TWI_MEMCPY_PTOP] = "PtoP",
    };
    return copy_kind < sizeof names / sizeof names[0] ? names[copy_kind] : "unknown";
}

const char *twi_kind_name(twi_kind kind)
{
    switch (kind) {
    case TWI_KERNEL:
        return "kernel";
    case TWI_MEMCPY:
        return "memcpy";
    case TWI_MEMSET:
        return "memset";
    case TWI_NVTX:
        return "nvtx";
    case TWI_PM_METRICS:
        return "pm_metrics";
    case TWI_PM_SAMPLE:
        return "pm_sample";
    case TWI_PM_OFF:
        return "pm_off";
    case TWI_PM_END:
        return "pm_end";
    case TWI_PM_WINDOW:
        return "pm_window";
    }
    return "unknown";
}

/* ---------------------------------------------------------------- clock */

bool twi_clock_calibrate(twi_clock *c, twi_clock_read_fn read_cupti, twi_clock_read_fn read_mono, void *ctx, int rounds,
                         uint64_t *gap_ns)
{
    bool found = false;
    uint64_t best_gap = UINT64_MAX;
    for (int k = 0; k < rounds; k++) {
        uint64_t m0, cu, m1;
        if (!read_mono(ctx, &m0) || !read_cupti(ctx, &cu) || !read_mono(ctx, &m1)) continue;
        if (m1 < m0) continue;
        uint64_t gap = m1 - m0;
        if (!found || gap < best_gap) {
            found = true;
            best_gap = gap;
            c->cupti_ref_ns = cu;
            c->mono_ref_ns = m0 + gap / 2;
        }
    }
    if (gap_ns) *gap_ns = found ? best_gap : 0;
    return found;
}

int64_t twi_clock_rel_ns(const twi_clock *c, uint64_t cupti_ns)
{
    /* differences first, in integers: no precision lost to large absolute
     * values; summed unsigned (wrapping, never undefined) before the cast */
    return (int64_t)((cupti_ns - c->cupti_ref_ns) + (c->mono_ref_ns - c->t0_mono_ns));
}

int64_t twi_clock_drift_ns(const twi_clock *a, const twi_clock *b)
{
    /* offset = mono - cupti at the reference instant */
    int64_t off_a = (int64_t)(a->mono_ref_ns - a->cupti_ref_ns);
    int64_t off_b = (int64_t)(b->mono_ref_ns - b->cupti_ref_ns);
    return off_b - off_a;
}

bool twi_parse_u64(const char *s, uint64_t *out)
{
    if (!s) return false;
    while (*s == ' ' || *s == '\t')
        s++;
    if (!isdigit((unsigned char)*s)) return false;
    uint64_t v = 0;
    for (; isdigit((unsigned char)*s); s++) {
        unsigned d = (unsigned)(*s - '0');
        if (v > (UINT64_MAX - d) / 10) return false;
        v = v * 10 + d;
    }
    while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')
        s++;
    if (*s) return false;
    *out = v;
    return true;
}

/* ---------------------------------------------------------------- text buffer */

void twi_buf_free(twi_buf *b)
{
    free(b->p);
    b->p = NULL;
    b->len = b->cap = 0;
}

static bool reserve(twi_buf *b, size_t more)
{
    if (b->cap - b->len > more) return true; /* keeps room for a NUL */
    size_t cap = b->cap ? b->cap : 4096;
    while (cap - b->len <= more) {
        if (cap > SIZE_MAX / 2) return false;
        cap *= 2;
    }
    char *p = realloc(b->p, cap);
    if (!p) return false;
    b->p = p;
    b->cap = cap;
    return true;
}

static bool put(twi_buf *b, const char *s, size_t n)
{
    if (!reserve(b, n)) return false;
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
    return true;
}

static bool put_str(twi_buf *b, const char *s) { return put(b, s, strlen(s)); }

static bool put_i64(twi_buf *b, int64_t v)
{
    char tmp[32];
    int n = snprintf(tmp, sizeof tmp, "%" PRId64, v);
    return n > 0 && put(b, tmp, (size_t)n);
}

bool twi_buf_put_seconds(twi_buf *b, int64_t ns)
{
    /* integers only: the host program's locale cannot turn '.' into ',' */
    uint64_t mag = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
    char tmp[48];
    int n =
        snprintf(tmp, sizeof tmp, "%s%" PRIu64 ".%09" PRIu64, ns < 0 ? "-" : "", mag / 1000000000u, mag % 1000000000u);
    return n > 0 && put(b, tmp, (size_t)n);
}

static bool needs_quotes(const char *s, size_t n)
{
    if (n == 0 || s[0] == '#' || s[0] == ' ' || s[0] == '\t' || s[n - 1] == ' ' || s[n - 1] == '\t') return true;
    return strpbrk(s, ",\"") != NULL;
}

bool twi_buf_put_field(twi_buf *b, const char *s)
{
    if (!s) s = "";
    size_t n = strlen(s);
    /* worst case: every character doubled, plus two quotes */
    if (n > (SIZE_MAX - 3) / 2 || !reserve(b, 2 * n + 2)) return false;
    /* line breaks (and other control characters) become spaces first, so
     * the quoting decision sees the text as written */
    size_t start = b->len;
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        b->p[b->len++] = (ch < 0x20 && ch != '\t') || ch == 0x7f ? ' ' : (char)ch;
    }
    b->p[b->len] = '\0';
    char *text = b->p + start;
    if (!needs_quotes(text, n)) return true;
    /* rewrite in place from the back: quotes doubled, then enclosed */
    size_t nq = 0;
    for (size_t i = 0; i < n; i++)
        nq += text[i] == '"';
    size_t total = n + nq + 2;
    size_t w = total;
    text[w--] = '\0';
    text[w--] = '"';
    for (size_t i = n; i-- > 0;) {
        text[w--] = text[i];
        if (text[i] == '"') text[w--] = '"';
    }
    text[0] = '"';
    b->len = start + total;
    return true;
}

/* ns since t0 of either clock */
static int64_t rel_ns(const twi_record *r, const twi_clock *c, uint64_t t)
{
    return r->mono ? (int64_t)(t - c->t0_mono_ns) : twi_clock_rel_ns(c, t);
}

static bool put_opt_i64(twi_buf *b, int64_t v, bool known) { return put(b, ",", 1) && (!known || put_i64(b, v)); }

bool twi_append_line(twi_buf *b, const twi_record *r, const twi_clock *c, twi_demangler *dm)
{
    if (r->start_ns == 0 && r->end_ns == 0) return true; /* not timed by CUPTI */
    int64_t start = rel_ns(r, c, r->start_ns), end = rel_ns(r, c, r->end_ns);
    if (r->start_ns == 0 || r->end_ns == 0 || end < start) {
        b->bad_span++;
        return true;
    }
    size_t mark = b->len;
    char name[96];
    const char *text = r->name ? r->name : "";
    const char *mangled = NULL;
    if (r->kind == TWI_KERNEL && dm) {
        text = twi_demangle(dm, text);
        if (r->name && strcmp(text, r->name) != 0) mangled = r->name;
    }
    if (r->kind == TWI_MEMCPY) {
        snprintf(name, sizeof name, "memcpy %s %" PRIu64 " B", twi_memcpy_kind_name(r->copy_kind), r->bytes);
        text = name;
    } else if (r->kind == TWI_MEMSET) {
        snprintf(name, sizeof name, "memset %" PRIu64 " B", r->bytes);
        text = name;
    }
    bool ok = twi_buf_put_field(b, text) && put(b, ",", 1) && twi_buf_put_seconds(b, start) && put(b, ",", 1) &&
              twi_buf_put_seconds(b, end) && put(b, ",", 1) && put_i64(b, r->device) && put(b, ",", 1) &&
              put_i64(b, r->stream) && put(b, ",", 1) && put_str(b, twi_kind_name(r->kind));
    if (ok && r->kind == TWI_KERNEL) {
        for (int k = 0; ok && k < 3; k++)
            ok = put(b, ",", 1) && put_i64(b, r->grid[k]);
        for (int k = 0; ok && k < 3; k++)
            ok = put(b, ",", 1) && put_i64(b, r->block[k]);
    } else if (ok) {
        ok = put_str(b, ",,,,,,");
    }
    ok = ok && put_opt_i64(b, r->correlation_id, r->correlation_id >= 0);
    /* device_uuid, mangled, domain (NVTX only: "" is the default domain), tid, depth */
    ok = ok && put(b, ",", 1) && (!r->device_uuid || !*r->device_uuid || twi_buf_put_field(b, r->device_uuid));
    ok = ok && put(b, ",", 1) && (!mangled || twi_buf_put_field(b, mangled));
    ok = ok && put(b, ",", 1) && (r->kind != TWI_NVTX || !r->domain || !*r->domain || twi_buf_put_field(b, r->domain));
    ok = ok && put_opt_i64(b, r->tid, r->tid > 0) && put_opt_i64(b, r->depth, r->depth > 0);
    ok = ok && put(b, "\n", 1);
    if (!ok) {
        b->len = mark;
        if (b->p) b->p[b->len] = '\0';
        b->oom = true;
    }
    return ok;
}

/* ---------------------------------------------------------------- devices */

void twi_format_uuid(const unsigned char bytes[16], bool mig, char out[TWI_UUID_LEN])
{
    static const char hex[] = "0123456789abcdef";
    size_t w = 0;
    memcpy(out, mig ? "MIG-" : "GPU-", 4);
    w = 4;
    for (int i = 0; i < 16; i++) {
        if (i == 4 || i == 6 || i == 8 || i == 10) out[w++] = '-';
        out[w++] = hex[bytes[i] >> 4];
        out[w++] = hex[bytes[i] & 15];
    }
    out[w] = '\0';
}
