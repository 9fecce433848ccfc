/* Events: named spans on the trace timeline, loaded from and saved to CSV. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/strmap.h"
#include "trace/csv.h"
#include "trace/events_source.h"
#include "truewatt.h"

#define CELL_SHOWN 80

typedef struct ev_item {
    tw_event e;    /* first, so tw_events_get can hand out &item.e */
    size_t seq;    /* position before sorting: the tie-break that makes qsort stable */
    uint64_t line; /* the line of the file it was loaded from; 0 when added */
} ev_item;

struct tw_events {
    ev_item *item;
    size_t n;
    size_t cap;
    size_t in_order;            /* the first in_order items are in order of start (kept by append) */
    size_t shares;              /* owners beyond the first (tw_events_share): each tw_events_free drops one */
    tw_strmap strings;          /* each string of the set once (values unused) */
    char *source;               /* the file loaded, for messages; NULL when built by hand */
    tw_events_record_fn record; /* NULL: lines of a CSV ("PATH:LINE") */
};

tw_status tw_events_new(tw_events **out)
{
    tw_clear_error();
    if (!out) return tw_fail(TW_EINVAL, "tw_events_new: out is NULL");
    *out = calloc(1, sizeof **out);
    return *out ? TW_OK : tw_fail(TW_ENOMEM, "tw_events_new: out of memory");
}

size_t tw_events_count(const tw_events *ev) { return ev ? ev->n : 0; }

const tw_event *tw_events_get(const tw_events *ev, size_t i) { return ev && i < ev->n ? &ev->item[i].e : NULL; }

void tw_events_free(tw_events *ev)
{
    if (!ev) return;
    if (ev->shares) {
        ev->shares--;
        return;
    }
    tw_strmap_free(&ev->strings);
    free(ev->item);
    free(ev->source);
    free(ev);
}

static tw_status grow(tw_events *ev)
{
    if (ev->n < ev->cap) return TW_OK;
    size_t cap = ev->cap ? 2 * ev->cap : 16;
    ev_item *p = realloc(ev->item, cap * sizeof *p);
    if (!p) return tw_fail(TW_ENOMEM, "tw_events_add: out of memory");
    ev->item = p;
    ev->cap = cap;
    return TW_OK;
}

/* The set's copy of an optional string (NULL stays NULL); false when out of memory. */
static bool intern_opt(tw_events *ev, const char *s, const char **out)
{
    *out = NULL;
    bool added;
    return !s || tw_strmap_get(&ev->strings, s, out, &added);
}

/* What tw_events_add refuses; grows the set for one more. */
static tw_status check_and_grow(tw_events *ev, const tw_event *e)
{
    if (!ev || !e || !e->name) return tw_fail(TW_EINVAL, "tw_events_add: NULL argument or name");
    if (ev->shares) return tw_fail(TW_EINVAL, "tw_events_add: the set is shared (read-only)");
    if (!isfinite(e->start_s) || !isfinite(e->end_s))
        return tw_fail(TW_EINVAL, "tw_events_add: event '%s' has a non-finite time", e->name);
    if (e->end_s < e->start_s) return tw_fail(TW_EINVAL, "tw_events_add: event '%s' ends before it starts", e->name);
    if (isinf(e->true_energy_j)) return tw_fail(TW_EINVAL, "tw_events_add: event '%s' has an infinite energy", e->name);
    if (e->depth < 0) return tw_fail(TW_EINVAL, "tw_events_add: event '%s' has a negative depth", e->name);
    return grow(ev);
}

static void append(tw_events *ev, const tw_event *e, uint64_t line)
{
    if (ev->in_order == ev->n && (ev->n == 0 || ev->item[ev->n - 1].e.start_s <= e->start_s)) ev->in_order++;
    ev_item *it = &ev->item[ev->n++];
    it->e = *e;
    it->seq = 0;
    it->line = line;
}

tw_events *tw_events_share(tw_events *ev)
{
    if (ev) ev->shares++;
    return ev;
}

tw_status tw_events_add(tw_events *ev, const tw_event *e)
{
    tw_clear_error();
    tw_status st = check_and_grow(ev, e);
    if (st != TW_OK) return st;
    /* strings first, into the set's store: the caller's may be gone after this call */
    tw_event c = *e;
    if (!intern_opt(ev, e->name, &c.name) || !intern_opt(ev, e->kind, &c.kind) ||
        !intern_opt(ev, e->device_uuid, &c.device_uuid) || !intern_opt(ev, e->mangled, &c.mangled) ||
        !intern_opt(ev, e->domain, &c.domain))
        return tw_fail(TW_ENOMEM, "tw_events_add: out of memory");
    append(ev, &c, 0);
    return TW_OK;
}

const char *tw_events_intern(tw_events *ev, const char *s)
{
    const char *out = NULL;
    return s && intern_opt(ev, s, &out) ? out : NULL;
}

tw_status tw_events_add_interned(tw_events *ev, const tw_event *e, uint64_t line)
{
    tw_status st = check_and_grow(ev, e);
    if (st == TW_OK) append(ev, e, line);
    return st;
}

const char *tw_events_source(const tw_events *ev) { return ev ? ev->source : NULL; }

uint64_t tw_events_line(const tw_events *ev, size_t i) { return ev && i < ev->n ? ev->item[i].line : 0; }

int tw_events_where(const tw_events *ev, size_t i, char *buf, size_t cap)
{
    uint64_t line = tw_events_line(ev, i);
    if (!ev || !ev->source || !line) return snprintf(buf, cap, "event %zu", i + 1);
    if (ev->record)
        return snprintf(buf, cap, "%s: %s %llu", ev->source, ev->record(&ev->item[i].e), (unsigned long long)line);
    return snprintf(buf, cap, "%s:%llu", ev->source, (unsigned long long)line);
}

bool tw_events_set_source(tw_events *ev, const char *source, tw_events_record_fn record)
{
    char *copy = strdup(source);
    if (!copy) return false;
    free(ev->source);
    ev->source = copy;
    ev->record = record;
    return true;
}

bool tw_events_reserve(tw_events *ev, size_t n)
{
    if (n <= ev->cap) return true;
    ev_item *p = realloc(ev->item, n * sizeof *p);
    if (!p) return false;
    ev->item = p;
    ev->cap = n;
    return true;
}

void tw_events_set_last_line(tw_events *ev, uint64_t line)
{
    if (ev->n) ev->item[ev->n - 1].line = line;
}

static int by_start(const void *a, const void *b)
{
    const ev_item *x = a, *y = b;
    if (x->e.start_s != y->e.start_s) return x->e.start_s < y->e.start_s ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* items[0 .. n) in order, then the tail items[n .. n + m) sorted: merged
 * from the back (at equal starts the tail's after, as it came after), with
 * room for the tail only. False when out of memory. */
static bool merge_tail(ev_item *item, size_t n, size_t m)
{
    ev_item *tail = malloc((m ? m : 1) * sizeof *tail);
    if (!tail) return false;
    memcpy(tail, item + n, m * sizeof *tail);
    size_t i = n, j = m, k = n + m;
    while (j > 0) {
        if (i > 0 && item[i - 1].e.start_s > tail[j - 1].e.start_s)
            item[--k] = item[--i];
        else
            item[--k] = tail[--j];
    }
    free(tail);
    return true;
}

static void sort_from(ev_item *item, size_t from, size_t n)
{
    for (size_t i = from; i < n; i++)
        item[i].seq = i;
    qsort(item + from, n - from, sizeof *item, by_start);
}

void tw_events_sort(tw_events *ev)
{
    /* a recorded run comes in order, or nearly (its activities, then its few
     * NVTX ranges): what came in order needs no sort, and a short tail out of
     * order is sorted alone and merged in */
    if (!ev || ev->in_order == ev->n) return;
    size_t i = ev->in_order, m = ev->n - i;
    if (m <= ev->n / 16) {
        sort_from(ev->item, i, ev->n);
        if (merge_tail(ev->item, i, m)) {
            ev->in_order = ev->n;
            return;
        }
    }
    sort_from(ev->item, 0, ev->n);
    ev->in_order = ev->n;
}

/* ---------------------------------------------------------------- load */

enum {
    COL_NAME,
    COL_START,
    COL_END,
    COL_DEVICE,
    COL_STREAM,
    COL_ENERGY,
    COL_KIND,
    COL_UUID,
    COL_MANGLED,
    COL_DOMAIN,
    COL_TID,
    COL_DEPTH,
    NCOLS
};

/* Accepted header names per column; the first is the one reported missing. */
static const char *const col_names[NCOLS][3] = {
    [COL_NAME] = {"name", "label", NULL},    [COL_START] = {"start_s", "t_start", NULL},
    [COL_END] = {"end_s", "t_end", NULL},    [COL_DEVICE] = {"device", NULL, NULL},
    [COL_STREAM] = {"stream", NULL, NULL},   [COL_ENERGY] = {"true_energy_j", NULL, NULL},
    [COL_KIND] = {"kind", NULL, NULL},       [COL_UUID] = {"device_uuid", NULL, NULL},
    [COL_MANGLED] = {"mangled", NULL, NULL}, [COL_DOMAIN] = {"domain", NULL, NULL},
    [COL_TID] = {"tid", NULL, NULL},         [COL_DEPTH] = {"depth", NULL, NULL},
};

#define NO_COL ((size_t)-1)

typedef struct loader {
    tw_csv_file cf;
    locale_t c_locale;
    size_t ncols;
    size_t col[NCOLS];            /* header position of each column, or NO_COL */
    const char *col_title[NCOLS]; /* the header name as written, for messages */
    tw_events *ev;
} loader;

static const char *match_alias(int k, const char *s)
{
    for (int a = 0; a < 3 && col_names[k][a]; a++)
        if (strcmp(s, col_names[k][a]) == 0) return col_names[k][a];
    return NULL;
}

static tw_status map_header(loader *L, size_t count)
{
    L->ncols = count;
    for (int k = 0; k < NCOLS; k++) {
        L->col[k] = NO_COL;
        for (size_t c = 0; c < count && L->col[k] == NO_COL; c++) {
            const char *title = match_alias(k, L->cf.field[c]);
            if (title) {
                L->col[k] = c;
                L->col_title[k] = title;
            }
        }
    }
    for (int k = COL_NAME; k <= COL_END; k++)
        if (L->col[k] == NO_COL)
            return tw_fail(TW_EPARSE, "%s:%llu: missing column '%s'", L->cf.path, (unsigned long long)L->cf.line,
                           col_names[k][0]);
    return TW_OK;
}

static tw_status bad_cell(const loader *L, int k, const char *what)
{
    return tw_fail(TW_EPARSE, "%s:%llu: column '%s': '%.*s' is not %s", L->cf.path, (unsigned long long)L->cf.line,
                   L->col_title[k], CELL_SHOWN, L->cf.field[L->col[k]], what);
}

static tw_status parse_time(const loader *L, int k, double *out)
{
    switch (tw_csv_number(L->cf.field[L->col[k]], L->c_locale, out)) {
    case TW_CSV_NUM_OK:
        return TW_OK;
    case TW_CSV_NUM_ABSENT:
        return tw_fail(TW_EPARSE, "%s:%llu: missing %s", L->cf.path, (unsigned long long)L->cf.line, L->col_title[k]);
    default:
        return bad_cell(L, k, "a number");
    }
}

/* Blank, "nan" or absent column: NaN. */
static tw_status parse_optional_number(const loader *L, int k, double *out)
{
    *out = NAN;
    if (L->col[k] == NO_COL) return TW_OK;
    tw_csv_num r = tw_csv_number(L->cf.field[L->col[k]], L->c_locale, out);
    if (r == TW_CSV_NUM_ABSENT) *out = NAN;
    return r == TW_CSV_NUM_BAD ? bad_cell(L, k, "a number") : TW_OK;
}

/* Blank or absent column: -1. Integers are read as integers: stream ids may
 * exceed what a double holds exactly. */
static tw_status parse_optional_int(const loader *L, int k, long long lo, long long hi, long long *out)
{
    *out = -1;
    if (L->col[k] == NO_COL) return TW_OK;
    const char *s = L->cf.field[L->col[k]];
    while (*s == ' ' || *s == '\t')
        s++;
    if (*s == '\0') return TW_OK;
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    bool ok = end != s && errno == 0 && v >= lo && v <= hi;
    while (*end == ' ' || *end == '\t')
        end++;
    if (!ok || *end != '\0') return bad_cell(L, k, "an integer");
    *out = v;
    return TW_OK;
}

/* A text cell; NULL when blank or the column is absent. */
static const char *optional_text(const loader *L, int k)
{
    return L->col[k] != NO_COL && L->cf.field[L->col[k]][0] ? L->cf.field[L->col[k]] : NULL;
}

static tw_status parse_event(const loader *L, size_t count, tw_event *e)
{
    memset(e, 0, sizeof *e);
    if (count != L->ncols)
        return tw_fail(TW_EPARSE, "%s:%llu: expected %zu fields, found %zu", L->cf.path, (unsigned long long)L->cf.line,
                       L->ncols, count);
    long long device, stream;
    e->name = L->cf.field[L->col[COL_NAME]];
    tw_status st;
    if ((st = parse_time(L, COL_START, &e->start_s)) != TW_OK || (st = parse_time(L, COL_END, &e->end_s)) != TW_OK ||
        (st = parse_optional_int(L, COL_DEVICE, INT32_MIN, INT32_MAX, &device)) != TW_OK ||
        (st = parse_optional_int(L, COL_STREAM, INT64_MIN, INT64_MAX, &stream)) != TW_OK ||
        (st = parse_optional_number(L, COL_ENERGY, &e->true_energy_j)) != TW_OK)
        return st;
    e->device = (int32_t)device;
    e->stream = (int64_t)stream;
    /* blank or absent strings: unknown */
    e->kind = optional_text(L, COL_KIND);
    e->device_uuid = optional_text(L, COL_UUID);
    e->mangled = optional_text(L, COL_MANGLED);
    e->domain = L->col[COL_DOMAIN] == NO_COL ? NULL : L->cf.field[L->col[COL_DOMAIN]]; /* "": the default domain */
    if (e->device_uuid && strncmp(e->device_uuid, "GPU-", 4) != 0 && strncmp(e->device_uuid, "MIG-", 4) != 0)
        return bad_cell(L, COL_UUID, "a GPU UUID (GPU-... or MIG-...)");
    long long tid, depth;
    if ((st = parse_optional_int(L, COL_TID, 1, INT64_MAX, &tid)) != TW_OK ||
        (st = parse_optional_int(L, COL_DEPTH, 1, INT32_MAX, &depth)) != TW_OK)
        return st;
    e->tid = tid < 0 ? 0 : (int64_t)tid;
    e->depth = depth < 0 ? 0 : (int32_t)depth;
    if (e->domain && !(e->kind && strcmp(e->kind, "nvtx") == 0)) e->domain = NULL; /* NVTX only */
    if (e->end_s < e->start_s)
        return tw_fail(TW_EPARSE, "%s:%llu: event '%s' ends before it starts", L->cf.path,
                       (unsigned long long)L->cf.line, e->name);
    return TW_OK;
}

static tw_status load_rows(loader *L)
{
    for (;;) {
        size_t count = 0;
        bool eof = false;
        tw_status st = tw_csv_read(&L->cf, false, &count, &eof);
        if (st != TW_OK || eof) return st;
        tw_event e;
        if ((st = parse_event(L, count, &e)) != TW_OK || (st = tw_events_add(L->ev, &e)) != TW_OK) return st;
        tw_events_set_last_line(L->ev, L->cf.line);
    }
}

tw_status tw_events_load(const char *path, tw_events **out)
{
    tw_clear_error();
    if (!out) return tw_fail(TW_EINVAL, "tw_events_load: out is NULL");
    *out = NULL;
    if (!path) return tw_fail(TW_EINVAL, "tw_events_load: path is NULL");
    loader L = {0};
    size_t count = 0;
    tw_status st = tw_csv_open(&L.cf, path);
    if (st != TW_OK) return st;
    L.c_locale = tw_csv_c_locale();
    if ((st = tw_csv_read_header(&L.cf, &count)) == TW_OK && (st = map_header(&L, count)) == TW_OK &&
        (st = tw_events_new(&L.ev)) == TW_OK) {
        st = tw_events_set_source(L.ev, path, NULL) ? load_rows(&L) : tw_fail(TW_ENOMEM, "%s: out of memory", path);
    }
    tw_csv_close(&L.cf);
    if (L.c_locale) freelocale(L.c_locale);
    if (st != TW_OK) {
        tw_events_free(L.ev);
        return st;
    }
    *out = L.ev;
    return TW_OK;
}

/* ---------------------------------------------------------------- save */

static int put_opt_text(FILE *f, const char *s)
{
    return putc(',', f) == EOF || (s && tw_csv_write_field(f, s) < 0) ? -1 : 0;
}

static int put_opt_int(FILE *f, long long v, bool known)
{
    return putc(',', f) == EOF || (known && fprintf(f, "%lld", v) < 0) ? -1 : 0;
}

static int write_row(FILE *f, const tw_event *e, bool with_kind, bool with_more)
{
    if (tw_csv_write_field(f, e->name) < 0 || putc(',', f) == EOF || tw_csv_write_exact(f, e->start_s) < 0 ||
        putc(',', f) == EOF || tw_csv_write_exact(f, e->end_s) < 0 || putc(',', f) == EOF)
        return -1;
    if (e->device != -1 && fprintf(f, "%d", (int)e->device) < 0) return -1;
    if (putc(',', f) == EOF) return -1;
    if (e->stream != -1 && fprintf(f, "%lld", (long long)e->stream) < 0) return -1;
    if (putc(',', f) == EOF) return -1;
    if (!isnan(e->true_energy_j) && tw_csv_write_exact(f, e->true_energy_j) < 0) return -1;
    if (with_kind && put_opt_text(f, e->kind) < 0) return -1;
    if (with_more &&
        (put_opt_text(f, e->device_uuid) < 0 || put_opt_text(f, e->mangled) < 0 || put_opt_text(f, e->domain) < 0 ||
         put_opt_int(f, e->tid, e->tid > 0) < 0 || put_opt_int(f, e->depth, e->depth > 0) < 0))
        return -1;
    return putc('\n', f) == EOF ? -1 : 0;
}

static bool has_more(const tw_event *e)
{
    return e->device_uuid || e->mangled || e->domain || e->tid > 0 || e->depth > 0;
}

/* The kind column is written only when some event has a kind, and the later
 * columns (device_uuid .. depth) only when some event has one of them, so
 * files of simpler events keep their former shape. */
static int write_all(FILE *f, const tw_events *ev)
{
    bool with_kind = false, with_more = false;
    for (size_t i = 0; i < ev->n; i++) {
        with_kind = with_kind || ev->item[i].e.kind != NULL;
        with_more = with_more || has_more(&ev->item[i].e);
    }
    with_kind = with_kind || with_more;
    if (fputs(with_kind ? "name,start_s,end_s,device,stream,true_energy_j,kind"
                        : "name,start_s,end_s,device,stream,true_energy_j",
              f) < 0 ||
        (with_more && fputs(",device_uuid,mangled,domain,tid,depth", f) < 0) || putc('\n', f) == EOF)
        return -1;
    for (size_t i = 0; i < ev->n; i++)
        if (write_row(f, &ev->item[i].e, with_kind, with_more) < 0) return -1;
    return fflush(f) == EOF || ferror(f) ? -1 : 0;
}

tw_status tw_events_save(const tw_events *ev, const char *path)
{
    tw_clear_error();
    if (!ev || !path) return tw_fail(TW_EINVAL, "tw_events_save: NULL argument");
    /* refused before the file is touched: a line break cannot be read back */
    for (size_t i = 0; i < ev->n; i++) {
        if (!tw_csv_storable(ev->item[i].e.name))
            return tw_fail(TW_EINVAL, "%s: event %zu: name holds a line break", path, i + 1);
        const tw_event *e = &ev->item[i].e;
        const char *texts[] = {e->kind, e->device_uuid, e->mangled, e->domain};
        const char *what[] = {"kind", "device_uuid", "mangled name", "domain"};
        for (size_t k = 0; k < sizeof texts / sizeof texts[0]; k++)
            if (texts[k] && !tw_csv_storable(texts[k]))
                return tw_fail(TW_EINVAL, "%s: event %zu: %s holds a line break", path, i + 1, what[k]);
    }
    locale_t c_locale = tw_csv_c_locale();
    if (!c_locale) return tw_fail(TW_ENOMEM, "%s: cannot create the C locale", path);
    FILE *f = fopen(path, "w");
    if (!f) {
        tw_status st = tw_fail(TW_EIO, "%s: cannot open for writing: %s", path, strerror(errno));
        freelocale(c_locale);
        return st;
    }
    locale_t old = uselocale(c_locale); /* '.' as decimal point, whatever setlocale said */
    errno = 0;
    int rc = write_all(f, ev);
    int err = rc < 0 ? (errno ? errno : EIO) : 0;
    uselocale(old);
    freelocale(c_locale);
    errno = 0;
    if (fclose(f) != 0 && !err) err = errno ? errno : EIO;
    if (err) return tw_fail(TW_EIO, "%s: write failed: %s", path, strerror(err));
    return TW_OK;
}
