/* Activities and NVTX ranges in the run file: imported from the injection
 * library's events CSV (tailed while the program runs), read back as
 * events, written out again as that CSV; and the samples written out as a
 * trace CSV. The events file's format is known here only (tw_run_import_events
 * and export_line), and its header line comes from src/inject/event_csv.h. */
#define _GNU_SOURCE /* getline, fseeko */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "inject/event_csv.h"
#include "runfile/runfile_internal.h"
#include "runfile/runfile_pm.h"
#include "trace/csv.h"
#include "trace/events_source.h"

/* The events file's columns (TWI_CSV_HEADER), by name. */
enum {
    EC_NAME,
    EC_START,
    EC_END,
    EC_DEVICE,
    EC_STREAM,
    EC_KIND,
    EC_GRID_X,
    EC_GRID_Y,
    EC_GRID_Z,
    EC_BLOCK_X,
    EC_BLOCK_Y,
    EC_BLOCK_Z,
    EC_CORRELATION,
    EC_UUID,
    EC_MANGLED,
    EC_DOMAIN,
    EC_TID,
    EC_DEPTH,
    EC_COUNT
};

static const char *const column_name[EC_COUNT] = {
    "name",    "start_s", "end_s",   "device",         "stream",      "kind",    "grid_x", "grid_y", "grid_z",
    "block_x", "block_y", "block_z", "correlation_id", "device_uuid", "mangled", "domain", "tid",    "depth"};

#define MAX_FIELDS 64

void tw_run_tail_init(tw_run_tail *t)
{
    memset(t, 0, sizeof *t);
    for (size_t k = 0; k < sizeof t->col / sizeof t->col[0]; k++)
        t->col[k] = -1;
}

/* ---------------------------------------------------------------- parsing one line */

typedef struct line_ctx {
    const char *path;
    unsigned long line;
    char **field;
    size_t count;
    const tw_run_tail *t;
} line_ctx;

static const char *cell(const line_ctx *L, int k)
{
    int c = L->t->col[k];
    return c >= 0 && (size_t)c < L->count ? L->field[c] : NULL;
}

static tw_status bad(const line_ctx *L, int k, const char *what)
{
    const char *v = cell(L, k);
    return tw_fail(TW_EPARSE, "%s:%lu: %s '%.80s' is not %s", L->path, L->line, column_name[k], v ? v : "", what);
}

/* Seconds with up to 9 decimals, as the injection library writes them,
 * to exact nanoseconds (never through a double). */
static bool parse_ns(const char *s, int64_t *out)
{
    bool neg = *s == '-';
    if (neg || *s == '+') s++;
    if (*s < '0' || *s > '9') return false;
    int64_t sec = 0, frac = 0;
    for (; *s >= '0' && *s <= '9'; s++) {
        if (sec > (INT64_MAX / 1000000000 - 10) / 10) return false;
        sec = sec * 10 + (*s - '0');
    }
    int digits = 0;
    if (*s == '.')
        for (s++; *s >= '0' && *s <= '9'; s++, digits++) {
            if (digits == 9) return false; /* finer than a nanosecond */
            frac = frac * 10 + (*s - '0');
        }
    if (*s) return false;
    for (; digits < 9; digits++)
        frac *= 10;
    *out = (neg ? -1 : 1) * (sec * 1000000000 + frac);
    return true;
}

/* An optional integer cell: *present false when empty. */
static tw_status opt_int(const line_ctx *L, int k, int64_t lo, int64_t hi, int64_t *v, bool *present)
{
    const char *s = cell(L, k);
    *present = s && *s;
    if (!*present) return TW_OK;
    char *end;
    errno = 0;
    long long x = strtoll(s, &end, 10);
    if (errno || *end || x < lo || x > hi) return bad(L, k, "an integer in range");
    *v = x;
    return TW_OK;
}

static const char *opt_text(const line_ctx *L, int k)
{
    const char *s = cell(L, k);
    return s && *s ? s : NULL;
}

static void bind_opt(sqlite3_stmt *s, int i, bool present, int64_t v)
{
    if (present) sqlite3_bind_int64(s, i, v);
}

static tw_status put_nvtx(tw_run *r, const line_ctx *L, int64_t start, int64_t end)
{
    int64_t tid = 0, depth = 0;
    bool has_tid, has_depth;
    tw_status st;
    if ((st = opt_int(L, EC_TID, 1, INT64_MAX, &tid, &has_tid)) != TW_OK ||
        (st = opt_int(L, EC_DEPTH, 1, INT32_MAX, &depth, &has_depth)) != TW_OK)
        return st;
    /* the strings first: interning may write a row, which resets statements */
    int64_t name_id, domain_id;
    const char *domain = cell(L, EC_DOMAIN);
    if ((st = run_string_id(r, cell(L, EC_NAME), &name_id)) != TW_OK ||
        (st = run_string_id(r, domain ? domain : "", &domain_id)) != TW_OK)
        return st;
    if ((st = run_prepare(r, &r->st_nvtx,
                          "INSERT INTO nvtx_ranges(name, domain, tid, depth, start_ns, end_ns) VALUES(?,?,?,?,?,?)")) !=
            TW_OK ||
        (st = run_note_start(r, 1, start)) != TW_OK)
        return st;
    sqlite3_bind_int64(r->st_nvtx, 1, name_id);
    sqlite3_bind_int64(r->st_nvtx, 2, domain_id);
    bind_opt(r->st_nvtx, 3, has_tid, tid);
    bind_opt(r->st_nvtx, 4, has_depth, depth);
    sqlite3_bind_int64(r->st_nvtx, 5, start);
    sqlite3_bind_int64(r->st_nvtx, 6, end);
    return run_step_write(r, r->st_nvtx, "cannot write an NVTX range");
}

static tw_status put_activity(tw_run *r, const line_ctx *L, int64_t start, int64_t end)
{
    int64_t v[EC_COUNT] = {0};
    bool has[EC_COUNT] = {0};
    static const int ints[] = {EC_DEVICE,  EC_STREAM,  EC_GRID_X,  EC_GRID_Y,     EC_GRID_Z,
                               EC_BLOCK_X, EC_BLOCK_Y, EC_BLOCK_Z, EC_CORRELATION};
    tw_status st = TW_OK;
    for (size_t i = 0; i < sizeof ints / sizeof ints[0] && st == TW_OK; i++) {
        int k = ints[i];
        int64_t lo = k == EC_DEVICE ? INT32_MIN : INT64_MIN, hi = k == EC_DEVICE ? INT32_MAX : INT64_MAX;
        st = opt_int(L, k, lo, hi, &v[k], &has[k]);
    }
    if (st != TW_OK) return st;
    const char *uuid = opt_text(L, EC_UUID);
    if (uuid && strncmp(uuid, "GPU-", 4) != 0 && strncmp(uuid, "MIG-", 4) != 0)
        return bad(L, EC_UUID, "a GPU UUID (GPU-... or MIG-...)");
    int64_t kind_id, name_id, mangled_id = 0, uuid_id = 0, type_id;
    const char *mangled = opt_text(L, EC_MANGLED);
    if ((st = run_string_id(r, cell(L, EC_KIND), &kind_id)) != TW_OK ||
        (st = run_string_id(r, cell(L, EC_NAME), &name_id)) != TW_OK ||
        (mangled && (st = run_string_id(r, mangled, &mangled_id)) != TW_OK) ||
        (uuid && (st = run_string_id(r, uuid, &uuid_id)) != TW_OK))
        return st;
    /* what is the same for every launch of a kernel (its kind, names and
     * launch configuration) is one row of activity_types: an activity row
     * holds only its own fields (docs/runfile.md) */
    if ((st = run_prepare(r, &r->st_type,
                          "INSERT INTO activity_types(kind, name, mangled, grid_x, grid_y, grid_z, block_x, block_y, "
                          "block_z) VALUES(?,?,?,?,?,?,?,?,?)")) != TW_OK)
        return st;
    char key[256];
    int len = snprintf(key, sizeof key, "%lld %lld %lld", (long long)kind_id, (long long)name_id,
                       mangled ? (long long)mangled_id : -1LL);
    sqlite3_stmt *t = r->st_type;
    sqlite3_bind_int64(t, 1, kind_id);
    sqlite3_bind_int64(t, 2, name_id);
    bind_opt(t, 3, mangled != NULL, mangled_id);
    for (int k = EC_GRID_X; k <= EC_BLOCK_Z; k++) {
        bind_opt(t, 4 + (k - EC_GRID_X), has[k], v[k]);
        if (has[k])
            len += snprintf(key + len, sizeof key - (size_t)len, " %lld", (long long)v[k]);
        else
            len += snprintf(key + len, sizeof key - (size_t)len, " -");
    }
    if ((st = run_type_id(r, key, t, &type_id)) != TW_OK) return st;
    if ((st = run_prepare(r, &r->st_activity,
                          "INSERT INTO activities(type, device, device_uuid, stream, correlation_id, start_ns, "
                          "duration_ns) VALUES(?,?,?,?,?,?,?)")) != TW_OK ||
        (st = run_note_start(r, 0, start)) != TW_OK)
        return st;
    sqlite3_stmt *s = r->st_activity;
    sqlite3_bind_int64(s, 1, type_id);
    bind_opt(s, 2, has[EC_DEVICE], v[EC_DEVICE]);
    bind_opt(s, 3, uuid != NULL, uuid_id);
    bind_opt(s, 4, has[EC_STREAM], v[EC_STREAM]);
    bind_opt(s, 5, has[EC_CORRELATION], v[EC_CORRELATION]);
    sqlite3_bind_int64(s, 6, start);
    sqlite3_bind_int64(s, 7, end - start);
    return run_step_write(r, s, "cannot write an activity");
}

/* PM sampling's lines (runfile_pm.h): their own tables. */
static tw_status put_pm(tw_run *r, const line_ctx *L, int64_t start, int64_t end)
{
    int64_t device = -1;
    bool has = false;
    tw_status st = opt_int(L, EC_DEVICE, INT32_MIN, INT32_MAX, &device, &has);
    if (st != TW_OK) return st;
    return tw_run_pm_line(r, L->path, L->line, cell(L, EC_KIND), cell(L, EC_NAME), has ? device : -1,
                          opt_text(L, EC_UUID), start, end);
}

static tw_status import_line(tw_run *r, const line_ctx *L)
{
    const char *name = cell(L, EC_NAME), *kind = cell(L, EC_KIND);
    if (!name) return tw_fail(TW_EPARSE, "%s:%lu: expected the header's fields, found %zu", L->path, L->line, L->count);
    if (!kind || !*kind) return bad(L, EC_KIND, "a kind (kernel, memcpy, memset, nvtx)");
    int64_t start, end;
    if (!cell(L, EC_START) || !parse_ns(cell(L, EC_START), &start))
        return bad(L, EC_START, "seconds with at most 9 decimals");
    if (!cell(L, EC_END) || !parse_ns(cell(L, EC_END), &end)) return bad(L, EC_END, "seconds with at most 9 decimals");
    if (end < start) return tw_fail(TW_EPARSE, "%s:%lu: event '%.80s' ends before it starts", L->path, L->line, name);
    if (tw_run_pm_kind(kind)) return put_pm(r, L, start, end);
    return strcmp(kind, "nvtx") == 0 ? put_nvtx(r, L, start, end) : put_activity(r, L, start, end);
}

static tw_status read_header(const line_ctx *L, tw_run_tail *t)
{
    for (int k = 0; k < EC_COUNT; k++) {
        t->col[k] = -1;
        for (size_t c = 0; c < L->count; c++)
            if (strcmp(L->field[c], column_name[k]) == 0) t->col[k] = (int)c;
    }
    static const int required[] = {EC_NAME, EC_START, EC_END, EC_KIND};
    for (size_t i = 0; i < sizeof required / sizeof required[0]; i++)
        if (t->col[required[i]] < 0)
            return tw_fail(TW_EPARSE, "%s:%lu: the header has no column %s", L->path, L->line,
                           column_name[required[i]]);
    t->col[EC_COUNT] = (int)L->count; /* fields per line */
    t->have_header = true;
    return TW_OK;
}

static tw_status import_text(tw_run *r, const char *path, tw_run_tail *t, char *text)
{
    size_t len = strlen(text);
    while (len && (text[len - 1] == '\n' || text[len - 1] == '\r'))
        text[--len] = '\0';
    if (len == 0 || text[0] == '#') return TW_OK;
    char *field[MAX_FIELDS];
    line_ctx L = {path, t->line, field, 0, t};
    if (!tw_csv_split(text, field, MAX_FIELDS, &L.count))
        return tw_fail(TW_EPARSE, "%s:%lu: malformed quoting", path, t->line);
    if (L.count > MAX_FIELDS)
        return tw_fail(TW_EPARSE, "%s:%lu: %zu fields, at most %d", path, t->line, L.count, MAX_FIELDS);
    if (!t->have_header) return read_header(&L, t);
    if (L.count != (size_t)t->col[EC_COUNT])
        return tw_fail(TW_EPARSE, "%s:%lu: expected %d fields, found %zu", path, t->line, t->col[EC_COUNT], L.count);
    tw_status st = import_line(r, &L);
    if (st == TW_OK) t->events++;
    return st;
}

/* A line that could not be read (tw_last_error says why): counted, the first kept. */
static void skip_line(tw_run_tail *t)
{
    if (t->skipped++ == 0) snprintf(t->first_skipped, sizeof t->first_skipped, "%s", tw_last_error());
    tw_clear_error();
}

tw_status tw_run_import_events(tw_run *r, const char *path, tw_run_tail *t)
{
    FILE *f = fopen(path, "r");
    if (!f) return errno == ENOENT ? TW_OK : tw_fail(TW_EIO, "%s: cannot open: %s", path, strerror(errno));
    if (fseeko(f, (off_t)t->offset, SEEK_SET) != 0) {
        fclose(f);
        return tw_fail(TW_EIO, "%s: cannot seek: %s", path, strerror(errno));
    }
    char *buf = NULL;
    size_t cap = 0;
    ssize_t n;
    tw_status st = TW_OK;
    pthread_mutex_lock(&r->mu);
    while (st == TW_OK && (n = getline(&buf, &cap, f)) > 0) {
        if (buf[n - 1] != '\n') break; /* a line still being written: the next call takes it */
        if (memchr(buf, '\0', (size_t)n)) {
            st = tw_fail(TW_EPARSE, "%s:%lu: a NUL byte", path, t->line + 1);
            break;
        }
        t->line++;
        bool header = t->have_header;
        st = import_text(r, path, t, buf);
        if (st == TW_EPARSE && header) {
            skip_line(t);
            st = TW_OK;
        }
        if (st == TW_OK) t->offset += n;
    }
    pthread_mutex_unlock(&r->mu);
    if (st == TW_OK && ferror(f)) st = tw_fail(TW_EIO, "%s: read failed", path);
    free(buf);
    fclose(f);
    return st;
}

/* ---------------------------------------------------------------- reading back */

/* An integer field that may be absent (NULL). */
typedef struct opt_i64 {
    bool has;
    int64_t v;
} opt_i64;

/* One activity or NVTX range read back, as the events file's fields; texts NULL when absent. */
typedef struct ev_row {
    const char *kind, *name, *mangled, *uuid, *domain;
    int64_t start_ns, end_ns, rowid;
    opt_i64 device, stream, corr, cfg[6], tid, depth; /* cfg: grid_x .. block_z */
} ev_row;

typedef tw_status (*event_fn)(void *ctx, const ev_row *row);

/* A column that may be NULL: one fetch of its value (a replay reads tens of millions of rows). */
static opt_i64 col_opt(sqlite3_stmt *s, int i)
{
    sqlite3_value *v = sqlite3_column_value(s, i);
    opt_i64 o = {sqlite3_value_type(v) != SQLITE_NULL, 0};
    if (o.has) o.v = sqlite3_value_int64(v);
    return o;
}

/* What the few rows of strings and activity_types hold, read once, so that the
 * many activities are read without a join. */
typedef struct lookup {
    char **text; /* by strings.id; NULL where none */
    size_t ntext;
    const char **own; /* the same, an events set's own copies (lookup_intern); NULL: none */
    struct type_row {
        int64_t kind, name, mangled; /* strings ids, 0 = none */
        opt_i64 cfg[6];
    } * type; /* by activity_types.id */
    size_t ntype;
} lookup;

static void lookup_free(lookup *L)
{
    for (size_t i = 0; i < L->ntext; i++)
        free(L->text[i]);
    free(L->text);
    free(L->own);
    free(L->type);
}

static const char *text_of(const lookup *L, int64_t id)
{
    return id > 0 && (size_t)id < L->ntext ? (L->own ? L->own[id] : L->text[id]) : NULL;
}

/* Every string into ev's store once, so that the events read hand it the
 * set's own copies (no look-up per event). */
static tw_status lookup_intern(const tw_run *r, lookup *L, tw_events *ev)
{
    if (!(L->own = calloc(L->ntext ? L->ntext : 1, sizeof *L->own))) return tw_fail(TW_ENOMEM, "out of memory");
    for (size_t i = 0; i < L->ntext; i++)
        if (L->text[i] && !(L->own[i] = tw_events_intern(ev, L->text[i])))
            return tw_fail(TW_ENOMEM, "%s: out of memory (strings)", r->path);
    return TW_OK;
}

/* Grows *p (n elements of size) to hold index id; false when out of memory or absurd. */
static bool room_for(void **p, size_t *n, size_t size, int64_t id)
{
    if (id < 0 || id > (int64_t)1 << 40) return false;
    if ((size_t)id < *n) return true;
    size_t cap = *n ? *n : 64;
    while (cap <= (size_t)id)
        cap *= 2;
    void *q = realloc(*p, cap * size);
    if (!q) return false;
    memset((char *)q + *n * size, 0, (cap - *n) * size);
    *p = q;
    *n = cap;
    return true;
}

static tw_status lookup_load(tw_run *r, lookup *L)
{
    sqlite3_stmt *s = NULL;
    tw_status st = TW_OK;
    int rc = SQLITE_DONE;
    if (sqlite3_prepare_v2(r->db, "SELECT id, value FROM strings", -1, &s, NULL) != SQLITE_OK)
        return run_db_fail(r->db, r->path, "cannot read the strings");
    while (st == TW_OK && (rc = sqlite3_step(s)) == SQLITE_ROW) {
        int64_t id = sqlite3_column_int64(s, 0);
        const char *v = (const char *)sqlite3_column_text(s, 1);
        if (!room_for((void **)&L->text, &L->ntext, sizeof *L->text, id) || !v || !(L->text[id] = strdup(v)))
            st = tw_fail(TW_ENOMEM, "%s: strings row %lld: out of memory or a bad id", r->path, (long long)id);
    }
    if (st == TW_OK && rc != SQLITE_DONE) st = run_db_fail(r->db, r->path, "cannot read the strings");
    sqlite3_finalize(s);
    if (st != TW_OK) return st;
    if (sqlite3_prepare_v2(r->db,
                           "SELECT id, kind, name, mangled, grid_x, grid_y, grid_z, block_x, block_y, block_z "
                           "FROM activity_types",
                           -1, &s, NULL) != SQLITE_OK)
        return run_db_fail(r->db, r->path, "cannot read the activity types");
    while (st == TW_OK && (rc = sqlite3_step(s)) == SQLITE_ROW) {
        int64_t id = sqlite3_column_int64(s, 0);
        if (!room_for((void **)&L->type, &L->ntype, sizeof *L->type, id)) {
            st = tw_fail(TW_ENOMEM, "%s: activity_types row %lld: out of memory or a bad id", r->path, (long long)id);
            break;
        }
        struct type_row *t = &L->type[id];
        t->kind = sqlite3_column_int64(s, 1);
        t->name = sqlite3_column_int64(s, 2);
        t->mangled = sqlite3_column_int64(s, 3); /* NULL reads 0: none */
        for (int k = 0; k < 6; k++)
            t->cfg[k] = col_opt(s, 4 + k);
    }
    if (st == TW_OK && rc != SQLITE_DONE) st = run_db_fail(r->db, r->path, "cannot read the activity types");
    sqlite3_finalize(s);
    return st;
}

/* The activities' columns in the order a statement reads them (act_query):
 * a prefix of them, the type, the span and the rowid always. Each column
 * read costs a replay of tens of millions of rows about a second: the
 * estimator's reads only the first four. */
enum { AC_TYPE, AC_START, AC_DURATION, AC_ROWID, AC_DEVICE, AC_UUID, AC_STREAM, AC_CORR, AC_COUNT };

/* The statement for fields (TW_FEED_*; corr: the correlation id too), as
 * many of its columns into *ncols. */
static void act_query(unsigned fields, bool corr, char *sql, size_t cap, int *ncols)
{
    *ncols = corr ? AC_COUNT : fields & TW_FEED_STREAM ? AC_CORR : fields & TW_FEED_DEVICE ? AC_STREAM : AC_DEVICE;
    static const char *const name[AC_COUNT] = {"type",   "start_ns",    "duration_ns", "rowid",
                                               "device", "device_uuid", "stream",      "correlation_id"};
    size_t len = (size_t)snprintf(sql, cap, "SELECT");
    for (int k = 0; k < *ncols && len < cap; k++)
        len += (size_t)snprintf(sql + len, cap - len, "%s %s", k ? "," : "", name[k]);
    if (len < cap) snprintf(sql + len, cap - len, " FROM activities");
}

/* An activities row (of a statement of ncols of the columns, act_query):
 * its type's fields from the lookup. The fields it does not set (an NVTX
 * range's, the columns not read) stay as the caller made them, zero: not
 * cleared on every row (the clearing was a fifth of a replay's own time). */
static tw_status activity_row(tw_run *r, const lookup *L, sqlite3_stmt *s, int ncols, ev_row *e)
{
    int64_t type = sqlite3_column_int64(s, AC_TYPE);
    const struct type_row *t = type > 0 && (size_t)type < L->ntype ? &L->type[type] : NULL;
    e->kind = t ? text_of(L, t->kind) : NULL;
    e->name = t ? text_of(L, t->name) : NULL;
    if (!e->kind || !e->name)
        return tw_fail(TW_EPARSE, "%s: activities row %lld: type %lld has no kind or name", r->path,
                       (long long)sqlite3_column_int64(s, AC_ROWID), (long long)type);
    e->mangled = text_of(L, t->mangled);
    memcpy(e->cfg, t->cfg, sizeof e->cfg);
    e->start_ns = sqlite3_column_int64(s, AC_START);
    e->end_ns = e->start_ns + sqlite3_column_int64(s, AC_DURATION);
    if (ncols <= AC_DEVICE) return TW_OK; /* the span alone: the rowid (read above only for a message) not asked for */
    e->rowid = sqlite3_column_int64(s, AC_ROWID);
    e->device = col_opt(s, AC_DEVICE);
    opt_i64 uuid = col_opt(s, AC_UUID);
    e->uuid = uuid.has ? text_of(L, uuid.v) : NULL;
    if (ncols > AC_STREAM) e->stream = col_opt(s, AC_STREAM);
    if (ncols > AC_CORR) e->corr = col_opt(s, AC_CORR);
    return TW_OK;
}

/* An nvtx_ranges row (device and stream -1, as the injection library writes them). */
static void nvtx_row(const lookup *L, sqlite3_stmt *s, ev_row *e)
{
    memset(e, 0, sizeof *e);
    e->kind = "nvtx";
    e->name = text_of(L, sqlite3_column_int64(s, 0));
    e->domain = text_of(L, sqlite3_column_int64(s, 1));
    e->tid = col_opt(s, 2);
    e->depth = col_opt(s, 3);
    e->start_ns = sqlite3_column_int64(s, 4);
    e->end_ns = sqlite3_column_int64(s, 5);
    e->rowid = sqlite3_column_int64(s, 6);
    e->device = e->stream = (opt_i64){true, -1};
}

/* Every activity, then every NVTX range, in rowid order, through fn; with
 * `into`, every text of a row is that set's own copy. */
static tw_status each_event(tw_run *r, event_fn fn, void *ctx, tw_events *into)
{
    char activities[200];
    int ncols;
    act_query(TW_FEED_ALL, !into, activities, sizeof activities, &ncols); /* an events set holds no correlation ids */
    const char *const query[2] = {activities,
                                  "SELECT name, domain, tid, depth, start_ns, end_ns, rowid FROM nvtx_ranges"};
    pthread_mutex_lock(&r->mu);
    lookup L = {0};
    tw_status st = lookup_load(r, &L);
    if (st == TW_OK && into) st = lookup_intern(r, &L, into);
    for (int q = 0; q < 2 && st == TW_OK; q++) {
        sqlite3_stmt *s = NULL;
        if (sqlite3_prepare_v2(r->db, query[q], -1, &s, NULL) != SQLITE_OK) {
            st = run_db_fail(r->db, r->path, "cannot read the activities");
            break;
        }
        int rc = SQLITE_ROW;
        ev_row e = {0}; /* (the fields an activity row leaves as they are: zero) */
        while (st == TW_OK && (rc = sqlite3_step(s)) == SQLITE_ROW) {
            if (q == 0)
                st = activity_row(r, &L, s, ncols, &e);
            else
                nvtx_row(&L, s, &e);
            if (st == TW_OK && !e.name)
                st = tw_fail(TW_EPARSE, "%s: nvtx_ranges row %lld: no name", r->path, (long long)e.rowid);
            if (st == TW_OK) st = fn(ctx, &e);
        }
        if (st == TW_OK && rc != SQLITE_DONE) st = run_db_fail(r->db, r->path, "cannot read the activities");
        sqlite3_finalize(s);
    }
    lookup_free(&L);
    pthread_mutex_unlock(&r->mu);
    return st;
}

/* How many activities and NVTX ranges the file holds (for the room they take). */
static tw_status run_count(tw_run *r, int64_t *n)
{
    pthread_mutex_lock(&r->mu);
    sqlite3_stmt *s = NULL;
    tw_status st = TW_OK;
    if (sqlite3_prepare_v2(r->db, "SELECT (SELECT count(*) FROM activities) + (SELECT count(*) FROM nvtx_ranges)", -1,
                           &s, NULL) != SQLITE_OK ||
        sqlite3_step(s) != SQLITE_ROW)
        st = run_db_fail(r->db, r->path, "cannot count the activities");
    else
        *n = sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);
    pthread_mutex_unlock(&r->mu);
    return st;
}

/* The events set being read into, with its own copies of the texts that no strings row holds. */
typedef struct adding {
    tw_events *ev;
    const char *nvtx, *empty;
    const char *kind; /* the last row's kind text (one address per text) and whether it is "nvtx" */
    bool kind_nvtx;
} adding;

/* A row as an event; its texts are those of the row. */
static tw_event event_of(adding *a, const ev_row *r)
{
    if (r->kind != a->kind) {
        a->kind = r->kind;
        a->kind_nvtx = strcmp(r->kind, "nvtx") == 0;
    }
    bool nvtx = a->kind_nvtx;
    return (tw_event){.name = r->name,
                      .start_s = run_s_of(r->start_ns),
                      .end_s = run_s_of(r->end_ns),
                      .device = r->device.has ? (int32_t)r->device.v : -1,
                      .stream = r->stream.has ? r->stream.v : -1,
                      .true_energy_j = NAN,
                      .kind = nvtx ? a->nvtx : r->kind,
                      .device_uuid = r->uuid,
                      .mangled = r->mangled,
                      .domain = nvtx ? (r->domain ? r->domain : a->empty) : NULL,
                      .tid = r->tid.has ? r->tid.v : 0,
                      .depth = r->depth.has ? (int32_t)r->depth.v : 0};
}

static tw_status add_event(void *ctx, const ev_row *r)
{
    adding *a = ctx;
    tw_event e = event_of(a, r);
    return tw_events_add_interned(a->ev, &e, (uint64_t)r->rowid);
}

/* Where an event of the run file is, for messages (an event outside the samples). */
static const char *event_table(const tw_event *e)
{
    return e->kind && strcmp(e->kind, "nvtx") == 0 ? "nvtx_ranges row" : "activities row";
}

tw_status tw_run_load_events(tw_run *r, tw_events **out)
{
    tw_clear_error();
    if (!r || !out) return tw_fail(TW_EINVAL, "tw_run_load_events: NULL argument");
    *out = NULL;
    tw_events *ev = NULL;
    tw_status st = tw_events_new(&ev);
    if (st == TW_OK && !tw_events_set_source(ev, r->path, event_table)) st = tw_fail(TW_ENOMEM, "out of memory");
    int64_t rows = 0;
    if (st == TW_OK && run_count(r, &rows) == TW_OK && !tw_events_reserve(ev, (size_t)rows))
        st = tw_fail(TW_ENOMEM, "out of memory (%lld events)", (long long)rows);
    adding a = {.ev = ev};
    if (st == TW_OK && (!(a.nvtx = tw_events_intern(ev, "nvtx")) || !(a.empty = tw_events_intern(ev, ""))))
        st = tw_fail(TW_ENOMEM, "out of memory");
    if (st == TW_OK) st = each_event(r, add_event, &a, ev);
    if (st != TW_OK) {
        tw_events_free(ev);
        return st;
    }
    tw_events_sort(ev);
    *out = ev;
    return TW_OK;
}

/* ---------------------------------------------------------------- export */

static int put_seconds(FILE *f, int64_t ns)
{
    uint64_t a = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
    return fprintf(f, "%s%" PRIu64 ".%09" PRIu64, ns < 0 ? "-" : "", a / 1000000000u, a % 1000000000u);
}

static int put_int(FILE *f, opt_i64 v)
{
    if (putc(',', f) == EOF) return -1;
    return v.has ? fprintf(f, "%lld", (long long)v.v) : 0;
}

static int put_text(FILE *f, const char *t)
{
    if (putc(',', f) == EOF) return -1;
    return t && *t ? tw_csv_write_field(f, t) : 0;
}

/* One line as the injection library writes it (event_csv.c's twi_append_line). */
static tw_status export_line(void *ctx, const ev_row *e)
{
    FILE *f = ctx;
    int rc = tw_csv_write_field(f, e->name);
    rc = rc < 0 || putc(',', f) == EOF ? -1 : put_seconds(f, e->start_ns);
    rc = rc < 0 || putc(',', f) == EOF ? -1 : put_seconds(f, e->end_ns);
    if (rc >= 0) rc = put_int(f, e->device);
    if (rc >= 0) rc = put_int(f, e->stream);
    if (rc >= 0) rc = put_text(f, e->kind);
    for (int i = 0; rc >= 0 && i < 6; i++)
        rc = put_int(f, e->cfg[i]);
    if (rc >= 0) rc = put_int(f, e->corr);
    if (rc >= 0) rc = put_text(f, e->uuid);
    if (rc >= 0) rc = put_text(f, e->mangled);
    if (rc >= 0) rc = put_text(f, e->domain);
    if (rc >= 0) rc = put_int(f, e->tid);
    if (rc >= 0) rc = put_int(f, e->depth);
    if (rc >= 0) rc = putc('\n', f) == EOF ? -1 : 0;
    return rc < 0 ? tw_fail(TW_EIO, "write failed: %s", strerror(errno)) : TW_OK;
}

static tw_status close_out(FILE *f, const char *path, tw_status st)
{
    bool bad = fflush(f) != 0 || ferror(f);
    if (fclose(f) != 0) bad = true;
    if (st == TW_OK && bad) st = tw_fail(TW_EIO, "%s: write failed: %s", path, strerror(errno));
    return st;
}

tw_status tw_run_export_events(tw_run *r, const char *path)
{
    tw_clear_error();
    if (!r || !path) return tw_fail(TW_EINVAL, "tw_run_export_events: NULL argument");
    FILE *f = fopen(path, "w");
    if (!f) return tw_fail(TW_EIO, "%s: cannot create: %s", path, strerror(errno));
    char *prov = NULL;
    tw_status st = TW_OK;
    if (tw_run_get_text(r, "provenance", &prov) == TW_OK && *prov && tw_csv_storable(prov)) fprintf(f, "# %s\n", prov);
    tw_clear_error();
    free(prov);
    if (fputs(TWI_CSV_HEADER, f) == EOF) st = tw_fail(TW_EIO, "%s: write failed: %s", path, strerror(errno));
    if (st == TW_OK) st = each_event(r, export_line, f, NULL);
    return close_out(f, path, st);
}

/* The comments a sampled trace starts with. */
static tw_status trace_comments(tw_run *r, tw_trace_writer *w)
{
    char *text = NULL;
    tw_status st = TW_OK;
    if (tw_run_get_text(r, "provenance", &text) == TW_OK && *text) st = tw_trace_writer_comment(w, text);
    free(text);
    tw_run_device *dev = NULL;
    size_t n = 0;
    if (st == TW_OK) st = tw_run_devices(r, &dev, &n);
    for (size_t d = 0; st == TW_OK && d < n; d++)
        if (dev[d].plan[0]) {
            char line[1200], who[32] = ""; /* the sampler's own prefix: "GPU N: " when several */
            if (n > 1) snprintf(who, sizeof who, "GPU %d: ", dev[d].index);
            snprintf(line, sizeof line, "%ssampling plan: %s", who, dev[d].plan);
            st = tw_trace_writer_comment(w, line);
        }
    free(dev);
    int64_t t0 = 0;
    if (st == TW_OK && tw_run_get_int(r, "t0_mono_ns", &t0) == TW_OK) {
        char line[64];
        snprintf(line, sizeof line, "t0_mono_ns=%lld", (long long)t0);
        st = tw_trace_writer_comment(w, line);
    }
    tw_clear_error();
    return st;
}

tw_status tw_run_export_trace(tw_run *r, const char *path)
{
    tw_clear_error();
    if (!r || !path) return tw_fail(TW_EINVAL, "tw_run_export_trace: NULL argument");
    tw_status st = tw_run_commit(r); /* the rows cursor has its own connection */
    tw_run_rows *c = NULL;
    if (st == TW_OK) st = tw_run_rows_open(r->path, &c);
    if (st != TW_OK) return st;
    size_t n = tw_run_rows_nreadings(c);
    const char **names = calloc(n, sizeof *names);
    if (!names) {
        tw_run_rows_close(c);
        return tw_fail(TW_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < n; i++)
        names[i] = tw_run_rows_reading(c, i)->name;
    tw_trace_writer *w = NULL;
    st = tw_trace_writer_open(path, n, names, true, &w);
    if (st == TW_OK) st = trace_comments(r, w);
    for (bool eof = false; st == TW_OK;) {
        tw_row row;
        if ((st = tw_run_rows_next(c, &row, &eof)) != TW_OK || eof) break;
        st = tw_trace_writer_write(w, &row);
    }
    if (w) {
        tw_status cst = tw_trace_writer_close(w);
        if (st == TW_OK) st = cst;
    }
    free(names);
    tw_run_rows_close(c);
    return st;
}

/* ---------------------------------------------------------------- the feed */

/* The run's events replayed by start from the file itself (trace/feed.h):
 * the activities and the NVTX ranges each in order of start (ties by rowid),
 * as stored or else from SQLite's sorter, merged as they come, activities first at equal
 * starts: the order of tw_run_load_events, without holding the events. The
 * strings and activity types are read once, when the feed opens. */
struct tw_run_feed {
    tw_run *run;
    lookup L;
    bool in_order[2]; /* activities, NVTX ranges: rowid order is start order (no sort needed) */
};

/* Whether a table's rows come in order of start_ns by rowid, as a run's
 * usually do (the injection library writes them as they end, per buffer):
 * then a replay reads them as stored, without SQLite's sorter (a third of
 * a replay's time). The file says so (run_note_start kept it as the rows
 * came); else (a file from before) one pass over the column. */
static tw_status in_start_order(tw_run *r, int table, const char *query, bool *yes)
{
    bool known;
    tw_status fact = run_order_fact(r, table, &known, yes);
    if (fact != TW_OK || known) return fact;
    sqlite3_stmt *s = NULL;
    if (sqlite3_prepare_v2(r->db, query, -1, &s, NULL) != SQLITE_OK)
        return run_db_fail(r->db, r->path, "cannot read the activities");
    int rc;
    int64_t last = INT64_MIN;
    *yes = true;
    while (*yes && (rc = sqlite3_step(s)) == SQLITE_ROW) {
        int64_t t = sqlite3_column_int64(s, 0);
        *yes = t >= last;
        last = t;
    }
    tw_status st = *yes && rc != SQLITE_DONE ? run_db_fail(r->db, r->path, "cannot read the activities") : TW_OK;
    sqlite3_finalize(s);
    return st;
}

tw_status tw_run_feed_open(tw_run *r, tw_run_feed **out, tw_feed *feed)
{
    tw_clear_error();
    if (!r || !out || !feed) return tw_fail(TW_EINVAL, "tw_run_feed_open: NULL argument");
    *out = NULL;
    tw_run_feed *f = calloc(1, sizeof *f);
    if (!f) return tw_fail(TW_ENOMEM, "out of memory");
    f->run = r;
    pthread_mutex_lock(&r->mu);
    tw_status st = lookup_load(r, &f->L);
    if (st == TW_OK) st = in_start_order(r, 0, "SELECT start_ns FROM activities", &f->in_order[0]);
    if (st == TW_OK) st = in_start_order(r, 1, "SELECT start_ns FROM nvtx_ranges", &f->in_order[1]);
    pthread_mutex_unlock(&r->mu);
    int64_t rows = 0;
    if (st == TW_OK) st = run_count(r, &rows);
    if (st != TW_OK) {
        tw_run_feed_free(f);
        return st;
    }
    *out = f;
    *feed = (tw_feed){tw_run_feed_replay, f, (size_t)rows};
    return TW_OK;
}

void tw_run_feed_free(tw_run_feed *f)
{
    if (!f) return;
    lookup_free(&f->L);
    free(f);
}

/* One of the two ordered statements: its current row, read ahead. */
typedef struct cursor {
    sqlite3_stmt *s;
    int ncols; /* the activities' (act_query) */
    bool nvtx, have;
    ev_row row;
} cursor;

static tw_status cursor_step(const tw_run_feed *f, cursor *c)
{
    int rc = sqlite3_step(c->s);
    c->have = rc == SQLITE_ROW;
    if (rc == SQLITE_DONE) return TW_OK;
    if (rc != SQLITE_ROW) return run_db_fail(f->run->db, f->run->path, "cannot read the activities");
    if (!c->nvtx) return activity_row(f->run, &f->L, c->s, c->ncols, &c->row);
    nvtx_row(&f->L, c->s, &c->row);
    if (!c->row.name)
        return tw_fail(TW_EPARSE, "%s: nvtx_ranges row %lld: no name", f->run->path, (long long)c->row.rowid);
    return TW_OK;
}

tw_status tw_run_feed_replay(const tw_feed *feed, unsigned fields, tw_feed_fn fn, void *ctx)
{
    const tw_run_feed *f = feed->src;
    tw_run *r = f->run;
    char activities[200];
    cursor c[2] = {{.nvtx = false}, {.nvtx = true}};
    act_query(fields, false, activities, sizeof activities, &c[0].ncols);
    const char *const query[2] = {activities,
                                  "SELECT name, domain, tid, depth, start_ns, end_ns, rowid FROM nvtx_ranges"};
    adding a = {.nvtx = "nvtx", .empty = ""};
    pthread_mutex_lock(&r->mu);
    tw_status st = TW_OK;
    for (int q = 0; q < 2 && st == TW_OK; q++) {
        char sql[300];
        snprintf(sql, sizeof sql, "%s%s", query[q], f->in_order[q] ? "" : " ORDER BY start_ns, rowid");
        if (sqlite3_prepare_v2(r->db, sql, -1, &c[q].s, NULL) != SQLITE_OK)
            st = run_db_fail(r->db, r->path, "cannot read the activities");
        else
            st = cursor_step(f, &c[q]);
    }
    while (st == TW_OK && (c[0].have || c[1].have)) {
        cursor *next = !c[1].have || (c[0].have && c[0].row.start_ns <= c[1].row.start_ns) ? &c[0] : &c[1];
        tw_event e = event_of(&a, &next->row);
        st = fn(ctx, &e);
        if (st == TW_OK) st = cursor_step(f, next);
    }
    sqlite3_finalize(c[0].s);
    sqlite3_finalize(c[1].s);
    pthread_mutex_unlock(&r->mu);
    return st;
}
