/* The run file: creation, transactions, the run's facts, devices, readings
 * and samples. See runfile.h; the schema is documented in docs/runfile.md
 * (keep the two in step). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/error.h"
#include "core/strmap.h"
#include "runfile/runfile_internal.h"

static const char schema[] =
    "CREATE TABLE meta(key TEXT PRIMARY KEY, value) WITHOUT ROWID;\n"
    "CREATE TABLE strings(id INTEGER PRIMARY KEY, value TEXT NOT NULL UNIQUE);\n"
    "CREATE TABLE command_line(position INTEGER PRIMARY KEY, argument TEXT NOT NULL);\n"
    "CREATE TABLE environment(position INTEGER PRIMARY KEY, name TEXT NOT NULL, value TEXT NOT NULL);\n"
    "CREATE TABLE devices(idx INTEGER PRIMARY KEY, uuid TEXT, name TEXT, driver TEXT, arch INTEGER,\n"
    "  power_limit_w REAL, column_prefix TEXT NOT NULL, fast_period_s REAL, buffer_poll_s REAL, slow_period_s REAL,\n"
    "  slow_max_period_s REAL, sampler_cpu_s REAL, plan TEXT);\n"
    "CREATE TABLE sensor_profiles(device INTEGER PRIMARY KEY REFERENCES devices(idx), status INTEGER NOT NULL,\n"
    "  source TEXT, profile_json TEXT);\n"
    "CREATE TABLE readings(id INTEGER PRIMARY KEY, device INTEGER REFERENCES devices(idx), name TEXT NOT NULL "
    "UNIQUE,\n"
    "  quantity INTEGER NOT NULL, producer INTEGER NOT NULL, polls INTEGER, updates INTEGER, polls_per_s REAL,\n"
    "  updates_per_s REAL);\n"
    "CREATE TABLE polls(producer INTEGER NOT NULL, t_ns INTEGER NOT NULL);\n"
    "CREATE TABLE samples(reading INTEGER NOT NULL REFERENCES readings(id), t_ns INTEGER NOT NULL, value REAL,\n"
    "  value_t_ns INTEGER);\n"
    "CREATE TABLE activity_types(id INTEGER PRIMARY KEY, kind INTEGER NOT NULL REFERENCES strings(id),\n"
    "  name INTEGER NOT NULL REFERENCES strings(id), mangled INTEGER REFERENCES strings(id), grid_x INTEGER,\n"
    "  grid_y INTEGER, grid_z INTEGER, block_x INTEGER, block_y INTEGER, block_z INTEGER);\n"
    "CREATE TABLE activities(id INTEGER PRIMARY KEY, type INTEGER NOT NULL REFERENCES activity_types(id),\n"
    "  device INTEGER, device_uuid INTEGER REFERENCES strings(id), stream INTEGER, correlation_id INTEGER,\n"
    "  start_ns INTEGER NOT NULL, duration_ns INTEGER NOT NULL);\n"
    "CREATE TABLE nvtx_ranges(id INTEGER PRIMARY KEY, name INTEGER NOT NULL REFERENCES strings(id),\n"
    "  domain INTEGER NOT NULL REFERENCES strings(id), tid INTEGER, depth INTEGER, start_ns INTEGER NOT NULL,\n"
    "  end_ns INTEGER NOT NULL);\n"
    "CREATE TABLE reports(id INTEGER PRIMARY KEY, created_utc TEXT NOT NULL, truewatt_version TEXT NOT NULL,\n"
    "  options TEXT, json TEXT NOT NULL);\n"
    "CREATE VIEW samples_named AS SELECT r.name AS reading, r.device AS device, s.t_ns, s.value, s.value_t_ns\n"
    "  FROM samples s JOIN readings r ON r.id = s.reading;\n"
    "CREATE VIEW activities_named AS SELECT a.id, k.value AS kind, n.value AS name, m.value AS mangled, a.device,\n"
    "  u.value AS device_uuid, a.stream, a.correlation_id, a.start_ns, a.start_ns + a.duration_ns AS end_ns,\n"
    "  t.grid_x, t.grid_y, t.grid_z, t.block_x, t.block_y, t.block_z\n"
    "  FROM activities a JOIN activity_types t ON t.id = a.type JOIN strings k ON k.id = t.kind\n"
    "  JOIN strings n ON n.id = t.name LEFT JOIN strings m ON m.id = t.mangled\n"
    "  LEFT JOIN strings u ON u.id = a.device_uuid;\n"
    "CREATE VIEW nvtx_named AS SELECT x.id, n.value AS name, d.value AS domain, x.tid, x.depth, x.start_ns, "
    "x.end_ns\n"
    "  FROM nvtx_ranges x JOIN strings n ON n.id = x.name JOIN strings d ON d.id = x.domain;\n";

/* ---------------------------------------------------------------- helpers */

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int64_t run_ns_of(double t_s) { return (int64_t)llround(t_s * 1e9); }

/* the division rounds once: the double nearest to ns / 1e9 */
double run_s_of(int64_t ns) { return (double)ns / 1e9; }

/* Whether the run file (with its WAL) has reached RLIMIT_FSIZE (`ulimit -f`, a
 * quota): SQLite then says only "disk I/O error", the OS's EFBIG long gone. */
static bool at_size_limit(const char *path)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_FSIZE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY) return false;
    char wal[4096];
    snprintf(wal, sizeof wal, "%s-wal", path);
    struct stat a, b;
    off_t size = stat(path, &a) == 0 ? a.st_size : 0;
    if (stat(wal, &b) == 0 && b.st_size > size) size = b.st_size;
    return (rlim_t)size + 65536 >= rl.rlim_cur; /* within a write of the limit */
}

tw_status run_db_fail(sqlite3 *db, const char *path, const char *what)
{
    int code = db ? sqlite3_errcode(db) : SQLITE_ERROR;
    const char *msg = db ? sqlite3_errmsg(db) : "cannot allocate";
    if (code == SQLITE_FULL) return tw_fail(TW_EIO, "%s: %s: the disk is full (%s)", path, what, msg);
    if (code == SQLITE_IOERR && at_size_limit(path))
        return tw_fail(TW_EIO, "%s: %s: the file size limit is reached (ulimit -f) (%s)", path, what, msg);
    return tw_fail(TW_EIO, "%s: %s: %s", path, what, msg);
}

bool tw_run_is_file(const char *path)
{
    static const char magic[16] = "SQLite format 3";
    struct stat sb;
    if (!path || stat(path, &sb) != 0 || !S_ISREG(sb.st_mode)) return false; /* a pipe is read once: not here */
    FILE *f = fopen(path, "rb");
    if (!f) return false;
    char head[16];
    bool yes = fread(head, 1, sizeof head, f) == sizeof head && memcmp(head, magic, sizeof magic) == 0;
    fclose(f);
    return yes;
}

static tw_status exec(sqlite3 *db, const char *path, const char *sql)
{
    char *msg = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &msg) == SQLITE_OK) return TW_OK;
    tw_status st = tw_fail(TW_EIO, "%s: %s", path, msg ? msg : sqlite3_errmsg(db));
    sqlite3_free(msg);
    return st;
}

tw_status run_db_open(const char *path, sqlite3 **db, bool *writable)
{
    *db = NULL;
    *writable = access(path, W_OK) == 0;
    if (access(path, R_OK) != 0) return tw_fail(TW_EIO, "%s: cannot open: %s", path, strerror(errno));
    if (!tw_run_is_file(path)) return tw_fail(TW_EPARSE, "%s: not a run file (no SQLite header)", path);
    /* read-write even to read: after a kill -9 the WAL must be recovered */
    int flags = (*writable ? SQLITE_OPEN_READWRITE : SQLITE_OPEN_READONLY) | SQLITE_OPEN_NOMUTEX;
    if (sqlite3_open_v2(path, db, flags, NULL) != SQLITE_OK) {
        tw_status st = run_db_fail(*db, path, "cannot open");
        sqlite3_close(*db);
        *db = NULL;
        return st;
    }
    sqlite3_busy_timeout(*db, 5000);
    sqlite3_stmt *st = NULL;
    int64_t version = -1;
    if (sqlite3_prepare_v2(*db, "SELECT value FROM meta WHERE key = 'schema_version'", -1, &st, NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
        version = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    if (version != TW_RUN_SCHEMA_VERSION) {
        sqlite3_close(*db);
        *db = NULL;
        if (version < 0) return tw_fail(TW_EPARSE, "%s: not a truewatt run file (no schema_version)", path);
        return tw_fail(TW_EUNSUPPORTED, "%s: run file schema %lld, this truewatt reads schema %d", path,
                       (long long)version, TW_RUN_SCHEMA_VERSION);
    }
    return TW_OK;
}

tw_status run_prepare(tw_run *r, sqlite3_stmt **st, const char *sql)
{
    if (*st) {
        sqlite3_reset(*st);
        sqlite3_clear_bindings(*st);
        return TW_OK;
    }
    if (sqlite3_prepare_v3(r->db, sql, -1, SQLITE_PREPARE_PERSISTENT, st, NULL) != SQLITE_OK)
        return run_db_fail(r->db, r->path, "cannot prepare a statement");
    return TW_OK;
}

static tw_status keep_error(tw_run *r, tw_status st)
{
    if (r->err == TW_OK) {
        r->err = st;
        snprintf(r->errmsg, sizeof r->errmsg, "%s", tw_last_error());
    }
    return st;
}

/* The first write error again, for every later write. */
static tw_status kept_error(const tw_run *r) { return tw_fail(r->err, "%s", r->errmsg); }

tw_status run_step_write(tw_run *r, sqlite3_stmt *st, const char *what)
{
    if (r->err != TW_OK) return kept_error(r);
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    if (rc != SQLITE_DONE && rc != SQLITE_ROW) return keep_error(r, run_db_fail(r->db, r->path, what));
    r->pending++;
    return run_maybe_commit(r);
}

static tw_status commit_locked(tw_run *r)
{
    if (r->err != TW_OK) return kept_error(r);
    if (!r->in_tx) return TW_OK;
    r->in_tx = false;
    if (sqlite3_exec(r->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
        return keep_error(r, run_db_fail(r->db, r->path, "cannot commit"));
    r->pending = 0;
    r->last_commit_ns = mono_ns();
    if (sqlite3_exec(r->db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK)
        return keep_error(r, run_db_fail(r->db, r->path, "cannot begin a transaction"));
    r->in_tx = true;
    return TW_OK;
}

tw_status run_maybe_commit(tw_run *r)
{
    if (r->pending < TW_RUN_COMMIT_ROWS && (double)(mono_ns() - r->last_commit_ns) < TW_RUN_COMMIT_S * 1e9)
        return TW_OK;
    return commit_locked(r);
}

tw_status tw_run_commit(tw_run *r)
{
    pthread_mutex_lock(&r->mu);
    tw_status st = commit_locked(r);
    pthread_mutex_unlock(&r->mu);
    return st;
}

/* ---------------------------------------------------------------- strings */

/* An id of 0 is a string not yet in the table (a failed insert is tried again). */
/* The id of `key` in map m, when new added by stepping `insert` (prepared
 * and bound by the caller) and kept. */
static tw_status intern(tw_run *r, tw_strmap *m, const char *key, sqlite3_stmt *insert, const char *what, int64_t *id)
{
    const char *k;
    bool added;
    int64_t *v = tw_strmap_get(m, key, &k, &added);
    if (!v) return tw_fail(TW_ENOMEM, "out of memory (interned names)");
    if (*v > 0) {
        *id = *v;
        return TW_OK;
    }
    tw_status st = run_step_write(r, insert, what);
    if (st != TW_OK) return st;
    /* the step may have committed, and a commit rehashes nothing: v is still the slot */
    *id = *v = sqlite3_last_insert_rowid(r->db);
    return TW_OK;
}

tw_status run_string_id(tw_run *r, const char *text, int64_t *id)
{
    tw_status st = run_prepare(r, &r->st_string, "INSERT INTO strings(value) VALUES(?)");
    if (st != TW_OK) return st;
    sqlite3_bind_text(r->st_string, 1, text, -1, SQLITE_STATIC);
    return intern(r, &r->strings, text, r->st_string, "cannot add a string", id);
}

tw_status run_type_id(tw_run *r, const char *key, sqlite3_stmt *insert, int64_t *id)
{
    return intern(r, &r->types, key, insert, "cannot add an activity type", id);
}

/* The meta facts that say a table's rows are in order of start: a replay
 * then reads them as stored, without a pass over the table to find out
 * (tw_run_feed_open). */
static const char *const order_key[2] = {"activities_by_start", "nvtx_by_start"};

tw_status run_note_start(tw_run *r, int table, int64_t start_ns)
{
    if (r->order_known[table] && !r->order_kept[table]) return TW_OK; /* nothing more to say */
    char sql[128];
    if (!r->order_known[table]) /* a file made elsewhere: appending may break its order; unknown then */
        snprintf(sql, sizeof sql, "DELETE FROM meta WHERE key = '%s'", order_key[table]);
    else if (start_ns < r->last_start[table]) /* said in the transaction that writes the row */
        snprintf(sql, sizeof sql, "UPDATE meta SET value = 0 WHERE key = '%s'", order_key[table]);
    else {
        r->last_start[table] = start_ns;
        return TW_OK;
    }
    char *msg = NULL;
    if (sqlite3_exec(r->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
        tw_status st = tw_fail(TW_EIO, "%s: cannot write the order of the rows: %s", r->path, msg ? msg : "?");
        sqlite3_free(msg);
        return st;
    }
    r->order_known[table] = true;
    r->order_kept[table] = false;
    return TW_OK;
}

tw_status run_order_fact(tw_run *r, int table, bool *known, bool *in_order)
{
    char sql[128];
    snprintf(sql, sizeof sql, "SELECT value FROM meta WHERE key = '%s'", order_key[table]);
    sqlite3_stmt *s = NULL;
    if (sqlite3_prepare_v2(r->db, sql, -1, &s, NULL) != SQLITE_OK)
        return run_db_fail(r->db, r->path, "cannot read the facts");
    int rc = sqlite3_step(s);
    *known = rc == SQLITE_ROW && sqlite3_column_type(s, 0) == SQLITE_INTEGER;
    *in_order = *known && sqlite3_column_int64(s, 0) == 1;
    sqlite3_finalize(s);
    return rc == SQLITE_ROW || rc == SQLITE_DONE ? TW_OK : run_db_fail(r->db, r->path, "cannot read the facts");
}

/* ---------------------------------------------------------------- open and close */

static tw_status run_new(const char *path, tw_run **out)
{
    tw_run *r = calloc(1, sizeof *r);
    if (!r || !(r->path = strdup(path))) {
        free(r);
        return tw_fail(TW_ENOMEM, "out of memory");
    }
    pthread_mutex_init(&r->mu, NULL);
    *out = r;
    return TW_OK;
}

static void run_free(tw_run *r)
{
    sqlite3_finalize(r->st_poll);
    sqlite3_finalize(r->st_sample);
    sqlite3_finalize(r->st_string);
    sqlite3_finalize(r->st_activity);
    sqlite3_finalize(r->st_nvtx);
    sqlite3_finalize(r->st_type);
    sqlite3_close(r->db);
    tw_strmap_free(&r->strings);
    tw_strmap_free(&r->types);
    free(r->last);
    pthread_mutex_destroy(&r->mu);
    free(r->path);
    free(r);
}

static tw_status remove_old(const char *path)
{
    static const char *const suffix[] = {"", "-wal", "-shm", "-journal"};
    for (size_t i = 0; i < 4; i++) {
        char p[4096];
        snprintf(p, sizeof p, "%s%s", path, suffix[i]);
        if (remove(p) != 0 && errno != ENOENT) return tw_fail(TW_EIO, "%s: cannot remove: %s", p, strerror(errno));
    }
    return TW_OK;
}

tw_status tw_run_create(const char *path, tw_run **out)
{
    tw_clear_error();
    if (!path || !out) return tw_fail(TW_EINVAL, "tw_run_create: NULL argument");
    *out = NULL;
    tw_status st = remove_old(path);
    if (st != TW_OK) return st;
    tw_run *r = NULL;
    if ((st = run_new(path, &r)) != TW_OK) return st;
    r->writable = true;
    if (sqlite3_open_v2(path, &r->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL) !=
        SQLITE_OK) {
        st = run_db_fail(r->db, path, "cannot create");
        run_free(r);
        return st;
    }
    sqlite3_busy_timeout(r->db, 5000);
    /* WAL: readers see the last commit while the run goes on, and a crash
     * loses at most the open transaction; NORMAL: no fsync per commit */
    char version[160];
    /* the activities and NVTX ranges go in order of start as they come (run_note_start keeps it said) */
    snprintf(version, sizeof version,
             "INSERT INTO meta VALUES('schema_version', %d), ('activities_by_start', 1), ('nvtx_by_start', 1)",
             TW_RUN_SCHEMA_VERSION);
    if ((st = exec(r->db, path, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; BEGIN")) != TW_OK ||
        (st = exec(r->db, path, schema)) != TW_OK || (st = exec(r->db, path, version)) != TW_OK ||
        (st = exec(r->db, path, "COMMIT; BEGIN")) != TW_OK) {
        run_free(r);
        return st;
    }
    r->in_tx = true;
    r->last_commit_ns = mono_ns();
    for (int k = 0; k < 2; k++) {
        r->order_kept[k] = r->order_known[k] = true;
        r->last_start[k] = INT64_MIN;
    }
    *out = r;
    return tw_run_set_text(r, "truewatt_version", tw_version());
}

tw_status tw_run_open(const char *path, tw_run **out)
{
    tw_clear_error();
    if (!path || !out) return tw_fail(TW_EINVAL, "tw_run_open: NULL argument");
    *out = NULL;
    tw_run *r = NULL;
    tw_status st = run_new(path, &r);
    if (st != TW_OK) return st;
    if ((st = run_db_open(path, &r->db, &r->writable)) != TW_OK) {
        run_free(r);
        return st;
    }
    if (r->writable && sqlite3_exec(r->db, "BEGIN", NULL, NULL, NULL) == SQLITE_OK) r->in_tx = true;
    r->last_commit_ns = mono_ns();
    /* strings already there: the interning goes on from them */
    sqlite3_stmt *s = NULL;
    if (sqlite3_prepare_v2(r->db, "SELECT id, value FROM strings", -1, &s, NULL) != SQLITE_OK) {
        st = run_db_fail(r->db, path, "cannot read strings");
        run_free(r);
        return st;
    }
    while (st == TW_OK && sqlite3_step(s) == SQLITE_ROW) {
        const char *key;
        bool added;
        int64_t *v = tw_strmap_get(&r->strings, (const char *)sqlite3_column_text(s, 1), &key, &added);
        if (v)
            *v = sqlite3_column_int64(s, 0);
        else
            st = tw_fail(TW_ENOMEM, "out of memory (strings)");
    }
    sqlite3_finalize(s);
    if (st != TW_OK) {
        run_free(r);
        return st;
    }
    *out = r;
    return TW_OK;
}

tw_status tw_run_close(tw_run *r)
{
    tw_clear_error();
    if (!r) return TW_OK;
    tw_status st = r->err != TW_OK ? kept_error(r) : TW_OK;
    if (st == TW_OK && r->in_tx && sqlite3_exec(r->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
        st = run_db_fail(r->db, r->path, "cannot commit");
    if (r->in_tx && st != TW_OK) sqlite3_exec(r->db, "ROLLBACK", NULL, NULL, NULL);
    run_free(r);
    return st;
}

const char *tw_run_path(const tw_run *r) { return r ? r->path : NULL; }

/* ---------------------------------------------------------------- meta */

static tw_status set_meta(tw_run *r, const char *key, int type, const char *text, int64_t i, double d)
{
    pthread_mutex_lock(&r->mu);
    sqlite3_stmt *st = NULL;
    tw_status rc = TW_OK;
    if (sqlite3_prepare_v2(r->db, "INSERT OR REPLACE INTO meta VALUES(?, ?)", -1, &st, NULL) != SQLITE_OK) {
        rc = run_db_fail(r->db, r->path, "cannot prepare a statement");
    } else {
        sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
        if (type == SQLITE_TEXT && text)
            sqlite3_bind_text(st, 2, text, -1, SQLITE_STATIC);
        else if (type == SQLITE_INTEGER)
            sqlite3_bind_int64(st, 2, i);
        else if (type == SQLITE_FLOAT && !isnan(d))
            sqlite3_bind_double(st, 2, d);
        rc = run_step_write(r, st, "cannot write a fact of the run");
    }
    sqlite3_finalize(st);
    pthread_mutex_unlock(&r->mu);
    return rc;
}

tw_status tw_run_set_text(tw_run *r, const char *key, const char *value)
{
    return set_meta(r, key, SQLITE_TEXT, value, 0, 0);
}
tw_status tw_run_set_int(tw_run *r, const char *key, int64_t value)
{
    return set_meta(r, key, SQLITE_INTEGER, NULL, value, 0);
}
tw_status tw_run_set_real(tw_run *r, const char *key, double value)
{
    return set_meta(r, key, SQLITE_FLOAT, NULL, 0, value);
}

/* Runs `sql` with one text parameter; *row is the statement on its first row. */
static tw_status query_one(tw_run *r, const char *sql, const char *param, sqlite3_stmt **row)
{
    *row = NULL;
    if (sqlite3_prepare_v2(r->db, sql, -1, row, NULL) != SQLITE_OK) return run_db_fail(r->db, r->path, "bad query");
    if (param) sqlite3_bind_text(*row, 1, param, -1, SQLITE_STATIC);
    int rc = sqlite3_step(*row);
    if (rc == SQLITE_ROW) return TW_OK;
    tw_status st = rc == SQLITE_DONE ? tw_fail(TW_ENOTFOUND, "%s: no %s", r->path, param ? param : "row")
                                     : run_db_fail(r->db, r->path, "cannot read");
    sqlite3_finalize(*row);
    *row = NULL;
    return st;
}

tw_status tw_run_get_text(tw_run *r, const char *key, char **out)
{
    sqlite3_stmt *s = NULL;
    pthread_mutex_lock(&r->mu);
    tw_status st = query_one(r, "SELECT value FROM meta WHERE key = ?", key, &s);
    const char *v = s && sqlite3_column_type(s, 0) != SQLITE_NULL ? (const char *)sqlite3_column_text(s, 0) : "";
    *out = strdup(v ? v : "");
    sqlite3_finalize(s);
    pthread_mutex_unlock(&r->mu);
    if (!*out) return tw_fail(TW_ENOMEM, "out of memory");
    return st;
}

tw_status tw_run_get_int(tw_run *r, const char *key, int64_t *out)
{
    sqlite3_stmt *s = NULL;
    pthread_mutex_lock(&r->mu);
    tw_status st = query_one(r, "SELECT value FROM meta WHERE key = ?", key, &s);
    *out = s ? sqlite3_column_int64(s, 0) : 0;
    sqlite3_finalize(s);
    pthread_mutex_unlock(&r->mu);
    return st;
}

double tw_run_get_real(tw_run *r, const char *key)
{
    sqlite3_stmt *s = NULL;
    pthread_mutex_lock(&r->mu);
    double v = NAN;
    if (query_one(r, "SELECT value FROM meta WHERE key = ?", key, &s) == TW_OK &&
        sqlite3_column_type(s, 0) != SQLITE_NULL)
        v = sqlite3_column_double(s, 0);
    sqlite3_finalize(s);
    pthread_mutex_unlock(&r->mu);
    tw_clear_error();
    return v;
}

/* ---------------------------------------------------------------- command and environment */

static tw_status put_list(tw_run *r, const char *sql, char *const *v, bool split)
{
    pthread_mutex_lock(&r->mu);
    sqlite3_stmt *s = NULL;
    tw_status st = TW_OK;
    if (sqlite3_prepare_v2(r->db, sql, -1, &s, NULL) != SQLITE_OK)
        st = run_db_fail(r->db, r->path, "cannot prepare a statement");
    for (size_t i = 0; st == TW_OK && v && v[i]; i++) {
        sqlite3_bind_int64(s, 1, (int64_t)i);
        const char *eq = split ? strchr(v[i], '=') : NULL;
        if (split) {
            sqlite3_bind_text(s, 2, v[i], eq ? (int)(eq - v[i]) : -1, SQLITE_STATIC);
            sqlite3_bind_text(s, 3, eq ? eq + 1 : "", -1, SQLITE_STATIC);
        } else {
            sqlite3_bind_text(s, 2, v[i], -1, SQLITE_STATIC);
        }
        st = run_step_write(r, s, "cannot write the command");
    }
    sqlite3_finalize(s);
    pthread_mutex_unlock(&r->mu);
    return st;
}

tw_status tw_run_set_command(tw_run *r, char *const *argv)
{
    return put_list(r, "INSERT INTO command_line VALUES(?, ?)", argv, false);
}

tw_status tw_run_set_environment(tw_run *r, char *const *envp)
{
    return put_list(r, "INSERT INTO environment VALUES(?, ?, ?)", envp, true);
}

void tw_run_free_strv(char **v)
{
    for (size_t i = 0; v && v[i]; i++)
        free(v[i]);
    free(v);
}

tw_status tw_run_get_command(tw_run *r, char ***argv)
{
    *argv = NULL;
    pthread_mutex_lock(&r->mu);
    sqlite3_stmt *s = NULL;
    tw_status st = TW_OK;
    size_t n = 0;
    char **v = calloc(1, sizeof *v);
    if (!v) st = tw_fail(TW_ENOMEM, "out of memory");
    if (st == TW_OK &&
        sqlite3_prepare_v2(r->db, "SELECT argument FROM command_line ORDER BY position", -1, &s, NULL) != SQLITE_OK)
        st = run_db_fail(r->db, r->path, "cannot read the command");
    while (st == TW_OK && sqlite3_step(s) == SQLITE_ROW) {
        char **p = realloc(v, (n + 2) * sizeof *p);
        if (!p) {
            st = tw_fail(TW_ENOMEM, "out of memory");
            break;
        }
        v = p;
        v[n] = strdup((const char *)sqlite3_column_text(s, 0));
        v[++n] = NULL;
        if (!v[n - 1]) st = tw_fail(TW_ENOMEM, "out of memory");
    }
    sqlite3_finalize(s);
    pthread_mutex_unlock(&r->mu);
    if (st != TW_OK) {
        tw_run_free_strv(v);
        return st;
    }
    *argv = v;
    return TW_OK;
}

/* ---------------------------------------------------------------- devices */

static void bind_real(sqlite3_stmt *s, int i, double v)
{
    if (isnan(v))
        sqlite3_bind_null(s, i);
    else
        sqlite3_bind_double(s, i, v);
}

static double column_real(sqlite3_stmt *s, int i)
{
    return sqlite3_column_type(s, i) == SQLITE_NULL ? NAN : sqlite3_column_double(s, i);
}

static void column_copy(sqlite3_stmt *s, int i, char *out, size_t cap)
{
    const unsigned char *t = sqlite3_column_text(s, i);
    snprintf(out, cap, "%s", t ? (const char *)t : "");
}

tw_status tw_run_put_device(tw_run *r, const tw_run_device *d)
{
    pthread_mutex_lock(&r->mu);
    sqlite3_stmt *s = NULL;
    tw_status st = TW_OK;
    if (sqlite3_prepare_v2(r->db, "INSERT OR REPLACE INTO devices VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?)", -1, &s, NULL) !=
        SQLITE_OK) {
        st = run_db_fail(r->db, r->path, "cannot prepare a statement");
    } else {
        sqlite3_bind_int(s, 1, d->index);
        sqlite3_bind_text(s, 2, d->uuid, -1, SQLITE_STATIC);
        sqlite3_bind_text(s, 3, d->name, -1, SQLITE_STATIC);
        sqlite3_bind_text(s, 4, d->driver, -1, SQLITE_STATIC);
        sqlite3_bind_int64(s, 5, d->arch);
        bind_real(s, 6, d->power_limit_w);
        sqlite3_bind_text(s, 7, d->prefix, -1, SQLITE_STATIC);
        bind_real(s, 8, d->fast_period_s);
        bind_real(s, 9, d->buffer_poll_s);
        bind_real(s, 10, d->slow_period_s);
        bind_real(s, 11, d->slow_max_period_s);
        bind_real(s, 12, d->sampler_cpu_s);
        sqlite3_bind_text(s, 13, d->plan, -1, SQLITE_STATIC);
        st = run_step_write(r, s, "cannot write a device");
    }
    sqlite3_finalize(s);
    pthread_mutex_unlock(&r->mu);
    return st;
}

tw_status tw_run_set_profile(tw_run *r, int index, int status, const char *how, const char *json)
{
    pthread_mutex_lock(&r->mu);
    sqlite3_stmt *s = NULL;
    tw_status st = TW_OK;
    if (sqlite3_prepare_v2(r->db, "INSERT OR REPLACE INTO sensor_profiles VALUES(?,?,?,?)", -1, &s, NULL) !=
        SQLITE_OK) {
        st = run_db_fail(r->db, r->path, "cannot prepare a statement");
    } else {
        sqlite3_bind_int(s, 1, index);
        sqlite3_bind_int(s, 2, status);
        sqlite3_bind_text(s, 3, how, -1, SQLITE_STATIC);
        if (json) sqlite3_bind_text(s, 4, json, -1, SQLITE_STATIC);
        st = run_step_write(r, s, "cannot write a sensor profile");
    }
    sqlite3_finalize(s);
    pthread_mutex_unlock(&r->mu);
    return st;
}

tw_status tw_run_devices(tw_run *r, tw_run_device **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    pthread_mutex_lock(&r->mu);
    sqlite3_stmt *s = NULL;
    tw_status st = TW_OK;
    if (sqlite3_prepare_v2(
            r->db,
            "SELECT d.idx, d.uuid, d.name, d.driver, d.arch, d.column_prefix, d.fast_period_s, "
            "d.buffer_poll_s, d.slow_period_s, d.slow_max_period_s, d.sampler_cpu_s, d.plan, p.status, "
            "p.source, d.power_limit_w FROM devices d LEFT JOIN sensor_profiles p ON p.device = d.idx ORDER BY d.idx",
            -1, &s, NULL) != SQLITE_OK)
        st = run_db_fail(r->db, r->path, "cannot read the devices");
    while (st == TW_OK && sqlite3_step(s) == SQLITE_ROW) {
        tw_run_device *p = realloc(*out, (*n + 1) * sizeof *p);
        if (!p) {
            st = tw_fail(TW_ENOMEM, "out of memory");
            break;
        }
        *out = p;
        tw_run_device *d = &p[(*n)++];
        memset(d, 0, sizeof *d);
        d->index = sqlite3_column_int(s, 0);
        column_copy(s, 1, d->uuid, sizeof d->uuid);
        column_copy(s, 2, d->name, sizeof d->name);
        column_copy(s, 3, d->driver, sizeof d->driver);
        d->arch = (unsigned)sqlite3_column_int64(s, 4);
        column_copy(s, 5, d->prefix, sizeof d->prefix);
        d->fast_period_s = column_real(s, 6);
        d->buffer_poll_s = column_real(s, 7);
        d->slow_period_s = column_real(s, 8);
        d->slow_max_period_s = column_real(s, 9);
        d->sampler_cpu_s = column_real(s, 10);
        column_copy(s, 11, d->plan, sizeof d->plan);
        d->profile_status = sqlite3_column_int(s, 12);
        column_copy(s, 13, d->profile_how, sizeof d->profile_how);
        d->power_limit_w = column_real(s, 14);
    }
    sqlite3_finalize(s);
    pthread_mutex_unlock(&r->mu);
    return st;
}

tw_status tw_run_get_profile(tw_run *r, int index, char **json)
{
    *json = NULL;
    pthread_mutex_lock(&r->mu);
    sqlite3_stmt *s = NULL;
    tw_status st = TW_OK;
    if (sqlite3_prepare_v2(r->db, "SELECT profile_json FROM sensor_profiles WHERE device = ?", -1, &s, NULL) !=
        SQLITE_OK) {
        st = run_db_fail(r->db, r->path, "cannot read the sensor profiles");
    } else {
        sqlite3_bind_int(s, 1, index);
        if (sqlite3_step(s) == SQLITE_ROW && sqlite3_column_type(s, 0) != SQLITE_NULL &&
            !(*json = strdup((const char *)sqlite3_column_text(s, 0))))
            st = tw_fail(TW_ENOMEM, "out of memory");
    }
    sqlite3_finalize(s);
    pthread_mutex_unlock(&r->mu);
    return st;
}

/* ---------------------------------------------------------------- readings and samples */

tw_status tw_run_add_reading(tw_run *r, int device, const char *name, tw_quantity q, int producer, int64_t *id)
{
    pthread_mutex_lock(&r->mu);
    sqlite3_stmt *s = NULL;
    tw_status st = TW_OK;
    if (sqlite3_prepare_v2(r->db, "INSERT INTO readings(device, name, quantity, producer) VALUES(?,?,?,?)", -1, &s,
                           NULL) != SQLITE_OK) {
        st = run_db_fail(r->db, r->path, "cannot prepare a statement");
    } else {
        sqlite3_bind_int(s, 1, device);
        sqlite3_bind_text(s, 2, name, -1, SQLITE_STATIC);
        sqlite3_bind_int(s, 3, (int)q);
        sqlite3_bind_int(s, 4, producer);
        st = run_step_write(r, s, "cannot write a reading");
    }
    sqlite3_finalize(s);
    if (st == TW_OK) {
        *id = sqlite3_last_insert_rowid(r->db);
        if ((size_t)*id >= r->nlast) {
            size_t cap = (size_t)*id + 16;
            run_last *p = realloc(r->last, cap * sizeof *p);
            if (!p) {
                st = tw_fail(TW_ENOMEM, "out of memory");
            } else {
                memset(p + r->nlast, 0, (cap - r->nlast) * sizeof *p);
                r->last = p;
                r->nlast = cap;
            }
        }
    }
    pthread_mutex_unlock(&r->mu);
    return st;
}

/* Whether this poll's value of a reading is an update (see tw_run_poll). */
static bool is_update(const run_last *l, bool valid, double v, bool own, int64_t stamp_ns)
{
    if (!l->have || valid != l->valid) return true;
    if (!valid) return false;
    return memcmp(&v, &l->value, sizeof v) != 0 || own != l->own || (own && stamp_ns != l->stamp_ns);
}

static tw_status put_sample(tw_run *r, int64_t id, int64_t t_ns, bool valid, double v, bool own, int64_t stamp_ns)
{
    tw_status st = run_prepare(r, &r->st_sample, "INSERT INTO samples VALUES(?,?,?,?)");
    if (st != TW_OK) return st;
    sqlite3_bind_int64(r->st_sample, 1, id);
    sqlite3_bind_int64(r->st_sample, 2, t_ns);
    if (valid) sqlite3_bind_double(r->st_sample, 3, v);
    if (valid && own) sqlite3_bind_int64(r->st_sample, 4, stamp_ns);
    return run_step_write(r, r->st_sample, "cannot write a sample");
}

tw_status tw_run_poll(tw_run *r, int producer, double t_s, size_t n, const int64_t *ids, const double *value,
                      const double *t_value_s, const uint8_t *valid)
{
    pthread_mutex_lock(&r->mu);
    int64_t t_ns = run_ns_of(t_s);
    tw_status st = run_prepare(r, &r->st_poll, "INSERT INTO polls VALUES(?,?)");
    if (st == TW_OK) {
        sqlite3_bind_int(r->st_poll, 1, producer);
        sqlite3_bind_int64(r->st_poll, 2, t_ns);
        st = run_step_write(r, r->st_poll, "cannot write a poll");
    }
    for (size_t i = 0; st == TW_OK && i < n; i++) {
        if (ids[i] <= 0 || (size_t)ids[i] >= r->nlast) continue;
        run_last *l = &r->last[ids[i]];
        bool ok = valid[i] && !isnan(value[i]); /* NaN is absent, as in a CSV trace */
        int64_t stamp_ns = ok && t_value_s ? run_ns_of(t_value_s[i]) : t_ns;
        bool own = stamp_ns != t_ns;
        if (!is_update(l, ok, ok ? value[i] : 0, own, stamp_ns)) continue;
        st = put_sample(r, ids[i], t_ns, ok, value[i], own, stamp_ns);
        *l = (run_last){true, ok, own, ok ? value[i] : 0, stamp_ns};
    }
    pthread_mutex_unlock(&r->mu);
    return st;
}

double tw_run_last_poll_s(tw_run *r)
{
    pthread_mutex_lock(&r->mu);
    sqlite3_stmt *s = NULL;
    double t = NAN;
    if (sqlite3_prepare_v2(r->db, "SELECT max(t_ns) FROM polls", -1, &s, NULL) == SQLITE_OK &&
        sqlite3_step(s) == SQLITE_ROW && sqlite3_column_type(s, 0) != SQLITE_NULL)
        t = run_s_of(sqlite3_column_int64(s, 0));
    sqlite3_finalize(s);
    pthread_mutex_unlock(&r->mu);
    return t;
}

tw_status tw_run_set_reading_stats(tw_run *r, const char *name, const tw_sampler_reading_stats *x)
{
    pthread_mutex_lock(&r->mu);
    sqlite3_stmt *s = NULL;
    tw_status st = TW_OK;
    if (sqlite3_prepare_v2(r->db,
                           "UPDATE readings SET polls = ?, updates = ?, polls_per_s = ?, updates_per_s = ? "
                           "WHERE name = ?",
                           -1, &s, NULL) != SQLITE_OK) {
        st = run_db_fail(r->db, r->path, "cannot prepare a statement");
    } else {
        sqlite3_bind_int64(s, 1, (int64_t)x->polls);
        sqlite3_bind_int64(s, 2, (int64_t)x->updates);
        bind_real(s, 3, x->polls_per_s);
        bind_real(s, 4, x->updates_per_s);
        sqlite3_bind_text(s, 5, name, -1, SQLITE_STATIC);
        st = run_step_write(r, s, "cannot write a reading's counts");
    }
    sqlite3_finalize(s);
    pthread_mutex_unlock(&r->mu);
    return st;
}

tw_status tw_run_readings(tw_run *r, tw_run_reading **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    pthread_mutex_lock(&r->mu);
    sqlite3_stmt *s = NULL;
    tw_status st = TW_OK;
    if (sqlite3_prepare_v2(r->db, "SELECT name, polls, updates, polls_per_s, updates_per_s FROM readings ORDER BY id",
                           -1, &s, NULL) != SQLITE_OK)
        st = run_db_fail(r->db, r->path, "cannot read the readings");
    while (st == TW_OK && sqlite3_step(s) == SQLITE_ROW) {
        tw_run_reading *p = realloc(*out, (*n + 1) * sizeof *p);
        if (!p) {
            st = tw_fail(TW_ENOMEM, "out of memory");
            break;
        }
        *out = p;
        tw_run_reading *x = &p[(*n)++];
        column_copy(s, 0, x->name, sizeof x->name);
        x->polls = (uint64_t)sqlite3_column_int64(s, 1);
        x->updates = (uint64_t)sqlite3_column_int64(s, 2);
        x->polls_per_s = column_real(s, 3);
        x->updates_per_s = column_real(s, 4);
    }
    sqlite3_finalize(s);
    pthread_mutex_unlock(&r->mu);
    return st;
}

/* ---------------------------------------------------------------- reports */

tw_status tw_run_add_report(tw_run *r, const char *options, const char *json)
{
    char date[32] = "";
    time_t now = time(NULL);
    struct tm tm;
    if (gmtime_r(&now, &tm)) strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", &tm);
    pthread_mutex_lock(&r->mu);
    sqlite3_stmt *s = NULL;
    tw_status st = TW_OK;
    if (sqlite3_prepare_v2(r->db, "INSERT INTO reports(created_utc, truewatt_version, options, json) VALUES(?,?,?,?)",
                           -1, &s, NULL) != SQLITE_OK) {
        st = run_db_fail(r->db, r->path, "cannot prepare a statement");
    } else {
        sqlite3_bind_text(s, 1, date, -1, SQLITE_STATIC);
        sqlite3_bind_text(s, 2, tw_version(), -1, SQLITE_STATIC);
        sqlite3_bind_text(s, 3, options ? options : "", -1, SQLITE_STATIC);
        sqlite3_bind_text(s, 4, json, -1, SQLITE_STATIC);
        st = run_step_write(r, s, "cannot write the report");
    }
    sqlite3_finalize(s);
    if (st == TW_OK) st = commit_locked(r);
    pthread_mutex_unlock(&r->mu);
    return st;
}
