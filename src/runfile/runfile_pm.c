/* Activity counters in the run file: see runfile_pm.h. */
#include "runfile/runfile_pm.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "runfile/runfile_internal.h"

#define PM_TABLES                                                                                                      \
    "CREATE TABLE IF NOT EXISTS pm_devices(device INTEGER PRIMARY KEY, uuid TEXT, interval_ns INTEGER, "               \
    "metrics TEXT, refused TEXT, reason TEXT, t_ns INTEGER NOT NULL, busy_s REAL, overflows INTEGER);\n"               \
    "CREATE TABLE IF NOT EXISTS pm_samples(device INTEGER NOT NULL, start_ns INTEGER NOT NULL, "                       \
    "dur_ns INTEGER NOT NULL, v BLOB NOT NULL);\n"                                                                     \
    "CREATE TABLE IF NOT EXISTS pm_windows(device INTEGER NOT NULL, start_ns INTEGER NOT NULL, end_ns INTEGER NOT "    \
    "NULL)"

#define MAX_VALUES 64

bool tw_run_pm_kind(const char *kind) { return kind && strncmp(kind, "pm_", 3) == 0; }

static tw_status bad_line(const char *path, unsigned long line, const char *what, const char *text)
{
    return tw_fail(TW_EPARSE, "%s:%lu: %s: '%.120s'", path, line, what, text ? text : "");
}

/* "key=value" of a pm_metrics line's name into out ("" when absent). */
static bool field_of(const char *text, const char *key, char *out, size_t cap)
{
    size_t klen = strlen(key);
    out[0] = '\0';
    for (const char *p = text; p && *p;) {
        while (*p == ' ')
            p++;
        size_t len = strcspn(p, " ");
        if (len > klen && strncmp(p, key, klen) == 0 && p[klen] == '=') {
            if (len - klen - 1 >= cap) return false;
            memcpy(out, p + klen + 1, len - klen - 1);
            out[len - klen - 1] = '\0';
            return true;
        }
        p += len;
    }
    return true;
}

static tw_status exec_tables(tw_run *r)
{
    if (sqlite3_exec(r->db, PM_TABLES, NULL, NULL, NULL) != SQLITE_OK)
        return run_db_fail(r->db, r->path, "cannot make the activity counter tables");
    return TW_OK;
}

/* pm_metrics or pm_off: the device's row (a later one replaces it). */
static tw_status put_device(tw_run *r, const char *path, unsigned long line, bool on, const char *text, int64_t device,
                            const char *uuid, int64_t t_ns)
{
    char interval[32] = "", metrics[1536] = "", refused[1024] = "";
    uint64_t iv = 0;
    if (on) {
        if (!field_of(text, "interval_ns", interval, sizeof interval) ||
            !field_of(text, "metrics", metrics, sizeof metrics) || !field_of(text, "refused", refused, sizeof refused))
            return bad_line(path, line, "pm_metrics: a field too long", text);
        char *end;
        errno = 0;
        iv = strtoull(interval, &end, 10);
        if (!interval[0] || *end || errno || iv == 0)
            return bad_line(path, line, "pm_metrics: interval_ns is not a positive integer", text);
        if (!metrics[0]) return bad_line(path, line, "pm_metrics: no metrics", text);
    }
    /* a device that one process samples may be refused to another (a child process on the same
     * GPU): a reason never replaces samples set up, a set-up replaces a reason */
    const char *sql = on ? "INSERT OR REPLACE INTO pm_devices VALUES(?,?,?,?,?,?,?,NULL,NULL)"
                         : "INSERT INTO pm_devices VALUES(?,?,?,?,?,?,?,NULL,NULL) ON CONFLICT(device) DO UPDATE SET "
                           "uuid = excluded.uuid, reason = excluded.reason, t_ns = excluded.t_ns "
                           "WHERE pm_devices.interval_ns IS NULL";
    sqlite3_stmt *s = NULL;
    if (sqlite3_prepare_v2(r->db, sql, -1, &s, NULL) != SQLITE_OK) {
        sqlite3_finalize(s);
        return run_db_fail(r->db, r->path, "cannot write the activity counters' device");
    }
    sqlite3_bind_int64(s, 1, device);
    if (uuid && *uuid) sqlite3_bind_text(s, 2, uuid, -1, SQLITE_STATIC);
    if (on) {
        sqlite3_bind_int64(s, 3, (sqlite3_int64)iv);
        sqlite3_bind_text(s, 4, metrics, -1, SQLITE_STATIC);
        sqlite3_bind_text(s, 5, refused, -1, SQLITE_STATIC);
    } else {
        sqlite3_bind_text(s, 6, text, -1, SQLITE_STATIC);
    }
    sqlite3_bind_int64(s, 7, t_ns);
    tw_status st = run_step_write(r, s, "cannot write the activity counters' device");
    sqlite3_finalize(s);
    return st;
}

/* The values "v1 v2 ..." as little-endian float32 into out; their number in *n. */
static bool pack_values(const char *text, unsigned char *out, size_t *n)
{
    *n = 0;
    const char *p = text;
    while (*p) {
        while (*p == ' ')
            p++;
        if (!*p) break;
        if (*n == MAX_VALUES) return false;
        char *end;
        errno = 0;
        double v = strtod(p, &end);
        if (end == p || errno == ERANGE || !isfinite(v) || (*end && *end != ' ')) return false;
        float f = (float)v;
        uint32_t bits;
        memcpy(&bits, &f, 4);
        for (int b = 0; b < 4; b++)
            out[4 * *n + (size_t)b] = (unsigned char)(bits >> (8 * b));
        (*n)++;
        p = end;
    }
    return *n > 0;
}

static tw_status put_sample(tw_run *r, const char *path, unsigned long line, const char *text, int64_t device,
                            int64_t start, int64_t end)
{
    unsigned char blob[4 * MAX_VALUES];
    size_t n;
    if (!pack_values(text, blob, &n))
        return bad_line(path, line, "pm_sample: the name is not 1 to 64 finite numbers separated by blanks", text);
    sqlite3_stmt *s = NULL;
    if (sqlite3_prepare_v2(r->db, "INSERT INTO pm_samples VALUES(?,?,?,?)", -1, &s, NULL) != SQLITE_OK) {
        sqlite3_finalize(s);
        return run_db_fail(r->db, r->path, "cannot write an activity counter sample");
    }
    sqlite3_bind_int64(s, 1, device);
    sqlite3_bind_int64(s, 2, start);
    sqlite3_bind_int64(s, 3, end - start);
    sqlite3_bind_blob(s, 4, blob, (int)(4 * n), SQLITE_STATIC);
    tw_status st = run_step_write(r, s, "cannot write an activity counter sample");
    sqlite3_finalize(s);
    return st;
}

/* pm_window: a span PM sampling was enabled in (sampling in windows). */
static tw_status put_window(tw_run *r, const char *path, unsigned long line, const char *text, int64_t device,
                            int64_t start, int64_t end)
{
    if (!(end > start)) return bad_line(path, line, "pm_window: its end is not after its start", text);
    sqlite3_stmt *s = NULL;
    if (sqlite3_prepare_v2(r->db, "INSERT INTO pm_windows VALUES(?,?,?)", -1, &s, NULL) != SQLITE_OK) {
        sqlite3_finalize(s);
        return run_db_fail(r->db, r->path, "cannot write a PM sampling window");
    }
    sqlite3_bind_int64(s, 1, device);
    sqlite3_bind_int64(s, 2, start);
    sqlite3_bind_int64(s, 3, end);
    tw_status st = run_step_write(r, s, "cannot write a PM sampling window");
    sqlite3_finalize(s);
    return st;
}

/* pm_end: the device's cost and overflows, into its row. */
static tw_status put_end(tw_run *r, const char *path, unsigned long line, const char *text, int64_t device)
{
    char busy[40], over[40];
    if (!field_of(text, "busy_s", busy, sizeof busy) || !field_of(text, "overflows", over, sizeof over))
        return bad_line(path, line, "pm_end: a field too long", text);
    char *e1, *e2;
    errno = 0;
    double b = strtod(busy, &e1);
    unsigned long long o = strtoull(over, &e2, 10);
    if (!busy[0] || *e1 || !over[0] || *e2 || errno || !(b >= 0) || !isfinite(b))
        return bad_line(path, line, "pm_end: busy_s or overflows is not a number", text);
    sqlite3_stmt *s = NULL;
    if (sqlite3_prepare_v2(r->db, "UPDATE pm_devices SET busy_s = ?, overflows = ? WHERE device = ?", -1, &s, NULL) !=
        SQLITE_OK) {
        sqlite3_finalize(s);
        return run_db_fail(r->db, r->path, "cannot write the activity counters' cost");
    }
    sqlite3_bind_double(s, 1, b);
    sqlite3_bind_int64(s, 2, (sqlite3_int64)o);
    sqlite3_bind_int64(s, 3, device);
    tw_status st = run_step_write(r, s, "cannot write the activity counters' cost");
    sqlite3_finalize(s);
    return st;
}

tw_status tw_run_pm_line(tw_run *r, const char *path, unsigned long line, const char *kind, const char *text,
                         int64_t device, const char *uuid, int64_t start_ns, int64_t end_ns)
{
    tw_status st = exec_tables(r);
    if (st != TW_OK) return st;
    if (strcmp(kind, "pm_sample") == 0) return put_sample(r, path, line, text, device, start_ns, end_ns);
    if (strcmp(kind, "pm_metrics") == 0) return put_device(r, path, line, true, text, device, uuid, start_ns);
    if (strcmp(kind, "pm_off") == 0) return put_device(r, path, line, false, text, device, uuid, start_ns);
    if (strcmp(kind, "pm_end") == 0) return put_end(r, path, line, text, device);
    if (strcmp(kind, "pm_window") == 0) return put_window(r, path, line, text, device, start_ns, end_ns);
    return tw_fail(TW_EPARSE, "%s:%lu: unknown kind '%.40s' (pm_metrics, pm_sample, pm_off, pm_end, pm_window)", path,
                   line, kind);
}

/* ---------------------------------------------------------------- reading back */

static void copy_col(sqlite3_stmt *s, int col, char *out, size_t cap)
{
    const unsigned char *t = sqlite3_column_text(s, col);
    snprintf(out, cap, "%s", t ? (const char *)t : "");
}

tw_status tw_run_pms(tw_run *r, tw_run_pm **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    pthread_mutex_lock(&r->mu);
    sqlite3_stmt *s = NULL;
    /* a run file without the tables: no activity counters (not an error) */
    if (sqlite3_prepare_v2(r->db,
                           "SELECT d.device, d.uuid, d.interval_ns, d.metrics, d.refused, d.reason, "
                           "(SELECT count(*) FROM pm_samples s WHERE s.device = d.device), "
                           "(SELECT min(start_ns) FROM pm_samples s WHERE s.device = d.device), "
                           "(SELECT max(start_ns + dur_ns) FROM pm_samples s WHERE s.device = d.device), "
                           "d.busy_s, d.overflows FROM pm_devices d ORDER BY d.device",
                           -1, &s, NULL) != SQLITE_OK) {
        sqlite3_finalize(s);
        pthread_mutex_unlock(&r->mu);
        return TW_OK;
    }
    tw_status st = TW_OK;
    while (sqlite3_step(s) == SQLITE_ROW) {
        tw_run_pm *p = realloc(*out, (*n + 1) * sizeof *p);
        if (!p) {
            st = tw_fail(TW_ENOMEM, "out of memory");
            break;
        }
        *out = p;
        tw_run_pm *x = &p[(*n)++];
        memset(x, 0, sizeof *x);
        x->device = (int)sqlite3_column_int64(s, 0);
        copy_col(s, 1, x->uuid, sizeof x->uuid);
        x->on = sqlite3_column_type(s, 2) != SQLITE_NULL;
        x->interval_ns = (uint64_t)sqlite3_column_int64(s, 2);
        copy_col(s, 3, x->metrics, sizeof x->metrics);
        copy_col(s, 4, x->refused, sizeof x->refused);
        copy_col(s, 5, x->reason, sizeof x->reason);
        x->samples = (uint64_t)sqlite3_column_int64(s, 6);
        x->first_ns = sqlite3_column_int64(s, 7);
        x->last_ns = sqlite3_column_int64(s, 8);
        x->busy_s = sqlite3_column_type(s, 9) == SQLITE_NULL ? NAN : sqlite3_column_double(s, 9);
        x->overflows = (uint64_t)sqlite3_column_int64(s, 10);
    }
    sqlite3_finalize(s);
    pthread_mutex_unlock(&r->mu);
    if (st != TW_OK) {
        free(*out);
        *out = NULL;
        *n = 0;
    }
    return st;
}

const tw_run_pm *tw_run_pm_for(const tw_run_pm *v, size_t n, const char *uuid)
{
    const tw_run_pm *all = NULL;
    for (size_t i = 0; i < n; i++) {
        if (uuid && *uuid && strcmp(v[i].uuid, uuid) == 0) return &v[i];
        if (v[i].device < 0) all = &v[i];
    }
    return all;
}

double tw_run_pm_busy_pct(const tw_run_pm *p)
{
    double span_s = (double)(p->last_ns - p->first_ns) * 1e-9;
    return p->samples > 1 && span_s > 0 && !isnan(p->busy_s) ? 100.0 * p->busy_s / span_s : NAN;
}

void tw_run_pm_text(const tw_run_pm *p, char *buf, size_t cap)
{
    if (!p->on) {
        snprintf(buf, cap, "not recorded (%s)", p->reason[0] ? p->reason : "no reason given");
        return;
    }
    char metrics[1600];
    size_t w = 0;
    for (const char *c = p->metrics; *c && w + 3 < sizeof metrics; c++) { /* "a,b" -> "a, b" */
        metrics[w++] = *c;
        if (*c == ',') metrics[w++] = ' ';
    }
    metrics[w] = '\0';
    int n = snprintf(buf, cap, "%" PRIu64 " samples every %g ms (PM sampling: %s)%s%s", p->samples,
                     (double)p->interval_ns / 1e6, metrics, p->refused[0] ? "; refused: " : "", p->refused);
    size_t used = n < 0 ? 0 : (size_t)n < cap ? (size_t)n : cap - 1;
    double pct = tw_run_pm_busy_pct(p);
    if (!isnan(pct)) used += (size_t)snprintf(buf + used, cap - used, "; decoding %.2f %% of one core", pct);
    if (p->overflows && used < cap)
        snprintf(buf + used, cap - used, "; %" PRIu64 " decodes found the hardware buffer overflowed (samples lost)",
                 p->overflows);
}

/* A packed little-endian float32 (pack_values'). */
static float unpack_value(const unsigned char *v, size_t k)
{
    uint32_t bits =
        (uint32_t)v[4 * k] | (uint32_t)v[4 * k + 1] << 8 | (uint32_t)v[4 * k + 2] << 16 | (uint32_t)v[4 * k + 3] << 24;
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

tw_status tw_run_pm_each(tw_run *r, int device, size_t nvalues, tw_run_pm_fn fn, void *ctx)
{
    if (nvalues == 0 || nvalues > MAX_VALUES) return tw_fail(TW_EINVAL, "tw_run_pm_each: %zu values", nvalues);
    pthread_mutex_lock(&r->mu);
    sqlite3_stmt *s = NULL;
    if (sqlite3_prepare_v2(r->db, "SELECT start_ns, dur_ns, v FROM pm_samples WHERE device = ? ORDER BY start_ns", -1,
                           &s, NULL) != SQLITE_OK) {
        sqlite3_finalize(s);
        pthread_mutex_unlock(&r->mu);
        return TW_OK; /* no activity counters */
    }
    sqlite3_bind_int64(s, 1, device);
    tw_status st = TW_OK;
    float v[MAX_VALUES];
    int rc;
    while (st == TW_OK && (rc = sqlite3_step(s)) == SQLITE_ROW) {
        int64_t start = sqlite3_column_int64(s, 0), dur = sqlite3_column_int64(s, 1);
        const unsigned char *b = sqlite3_column_blob(s, 2);
        size_t nb = (size_t)sqlite3_column_bytes(s, 2);
        if (nb != 4 * nvalues || !b) {
            st = tw_fail(TW_EPARSE, "%s: a sample of device %d at %" PRId64 " ns has %zu values for %zu metrics",
                         r->path, device, start, nb / 4, nvalues);
            break;
        }
        for (size_t k = 0; k < nvalues; k++)
            v[k] = unpack_value(b, k);
        st = fn(ctx, run_s_of(start), run_s_of(start + dur), v);
    }
    if (st == TW_OK && rc != SQLITE_DONE) st = run_db_fail(r->db, r->path, "cannot read the activity counter samples");
    sqlite3_finalize(s);
    pthread_mutex_unlock(&r->mu);
    return st;
}

tw_status tw_run_pm_windows(tw_run *r, int device, tw_run_pm_window_fn fn, void *ctx)
{
    pthread_mutex_lock(&r->mu);
    sqlite3_stmt *s = NULL;
    if (sqlite3_prepare_v2(r->db, "SELECT start_ns, end_ns FROM pm_windows WHERE device = ? ORDER BY start_ns", -1, &s,
                           NULL) != SQLITE_OK) {
        sqlite3_finalize(s);
        pthread_mutex_unlock(&r->mu);
        return TW_OK; /* a run file from before windows, or without counters */
    }
    sqlite3_bind_int64(s, 1, device);
    tw_status st = TW_OK;
    int rc;
    while (st == TW_OK && (rc = sqlite3_step(s)) == SQLITE_ROW)
        st = fn(ctx, run_s_of(sqlite3_column_int64(s, 0)), run_s_of(sqlite3_column_int64(s, 1)));
    if (st == TW_OK && rc != SQLITE_DONE) st = run_db_fail(r->db, r->path, "cannot read the PM sampling windows");
    sqlite3_finalize(s);
    pthread_mutex_unlock(&r->mu);
    return st;
}

/* ---------------------------------------------------------------- export */

/* The metric names of every device (its pm_devices.metrics split). */
typedef struct names_of {
    int device;
    char list[1536];
    const char *name[MAX_VALUES];
    size_t n;
    char uuid[96];
} names_of;

static void split_names(names_of *x)
{
    x->n = 0;
    for (char *p = x->list; *p && x->n < MAX_VALUES;) {
        x->name[x->n++] = p;
        char *comma = strchr(p, ',');
        if (!comma) break;
        *comma = '\0';
        p = comma + 1;
    }
}

static int put_seconds(FILE *f, int64_t ns)
{
    const char *sign = ns < 0 ? "-" : "";
    uint64_t a = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
    return fprintf(f, "%s%" PRIu64 ".%09" PRIu64, sign, a / 1000000000u, a % 1000000000u);
}

static tw_status export_rows(tw_run *r, FILE *f, const names_of *nm, size_t nn, const char *path)
{
    sqlite3_stmt *s = NULL;
    if (sqlite3_prepare_v2(r->db, "SELECT device, start_ns, dur_ns, v FROM pm_samples ORDER BY device, start_ns", -1,
                           &s, NULL) != SQLITE_OK) {
        sqlite3_finalize(s);
        return TW_OK; /* no activity counters: the header only */
    }
    tw_status st = TW_OK;
    int rc;
    while (st == TW_OK && (rc = sqlite3_step(s)) == SQLITE_ROW) {
        int device = (int)sqlite3_column_int64(s, 0);
        int64_t start = sqlite3_column_int64(s, 1), dur = sqlite3_column_int64(s, 2);
        const unsigned char *v = sqlite3_column_blob(s, 3);
        size_t nv = (size_t)sqlite3_column_bytes(s, 3) / 4;
        const names_of *x = NULL;
        for (size_t i = 0; i < nn; i++)
            if (nm[i].device == device) x = &nm[i];
        if (!x || x->n != nv) {
            st = tw_fail(TW_EPARSE, "%s: a sample of device %d has %zu values for %zu metrics", r->path, device, nv,
                         x ? x->n : 0);
            break;
        }
        for (size_t k = 0; k < nv; k++) {
            float fv = unpack_value(v, k);
            int w = fprintf(f, "%d,%s,", device, x->uuid);
            if (w >= 0) w = put_seconds(f, start);
            if (w >= 0) w = fputc(',', f);
            if (w >= 0) w = put_seconds(f, start + dur);
            if (w >= 0) w = fprintf(f, ",%s,%.9g\n", x->name[k], (double)fv);
            if (w < 0) {
                st = tw_fail(TW_EIO, "%s: write failed: %s", path, strerror(errno));
                break;
            }
        }
    }
    sqlite3_finalize(s);
    return st;
}

tw_status tw_run_export_pm(tw_run *r, const char *path, size_t *devices)
{
    tw_run_pm *v = NULL;
    size_t n = 0;
    if (devices) *devices = 0;
    tw_status st = tw_run_pms(r, &v, &n);
    if (st != TW_OK) return st;
    if (devices) *devices = n;
    if (n == 0) return TW_OK; /* a run without --activity-counters: no empty file beside the others */
    names_of *nm = calloc(n ? n : 1, sizeof *nm);
    FILE *f = nm ? fopen(path, "w") : NULL;
    if (!nm)
        st = TW_ENOMEM;
    else if (!f)
        st = tw_fail(TW_EIO, "%s: cannot write: %s", path, strerror(errno));
    for (size_t i = 0; st == TW_OK && i < n; i++) {
        nm[i].device = v[i].device;
        snprintf(nm[i].list, sizeof nm[i].list, "%s", v[i].metrics);
        snprintf(nm[i].uuid, sizeof nm[i].uuid, "%s", v[i].uuid);
        split_names(&nm[i]);
    }
    if (st == TW_OK && fputs("device,device_uuid,start_s,end_s,metric,value\n", f) < 0)
        st = tw_fail(TW_EIO, "%s: write failed: %s", path, strerror(errno));
    if (st == TW_OK) {
        pthread_mutex_lock(&r->mu);
        st = export_rows(r, f, nm, n, path);
        pthread_mutex_unlock(&r->mu);
    }
    if (f && fclose(f) != 0 && st == TW_OK) st = tw_fail(TW_EIO, "%s: write failed: %s", path, strerror(errno));
    free(nm);
    free(v);
    return st;
}
