/* A run file's samples read back as the rows of a trace: one row per poll,
 * in the order they were written (time order), each of the poll's readings
 * holding its last update. Memory is the readings, whatever the run's
 * length. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "runfile/runfile_internal.h"

struct tw_run_rows {
    sqlite3 *db;
    char *path;
    size_t n;
    tw_reading_info *info;
    char **names;
    int *producer;    /* by reading */
    size_t *index_of; /* reading id -> position (SIZE_MAX: none) */
    size_t nids;
    double *value, *t_value, *held, *held_stamp; /* held_stamp NaN: the poll's own time */
    uint8_t *valid, *held_valid;
    sqlite3_stmt *polls, *samples;
    bool sample_peeked, samples_done;
    uint64_t rows;
};

static void rows_free(tw_run_rows *c)
{
    if (!c) return;
    sqlite3_finalize(c->polls);
    sqlite3_finalize(c->samples);
    sqlite3_close(c->db);
    for (size_t i = 0; c->names && i < c->n; i++)
        free(c->names[i]);
    free(c->names);
    free(c->info);
    free(c->producer);
    free(c->index_of);
    free(c->value);
    free(c->t_value);
    free(c->held);
    free(c->held_stamp);
    free(c->valid);
    free(c->held_valid);
    free(c->path);
    free(c);
}

static tw_status load_readings(tw_run_rows *c)
{
    sqlite3_stmt *s = NULL;
    if (sqlite3_prepare_v2(c->db, "SELECT id, name, quantity, producer FROM readings ORDER BY id", -1, &s, NULL) !=
        SQLITE_OK)
        return run_db_fail(c->db, c->path, "cannot read the readings");
    tw_status st = TW_OK;
    size_t cap = 0;
    while (st == TW_OK && sqlite3_step(s) == SQLITE_ROW) {
        if (c->n == cap) {
            cap = cap ? 2 * cap : 16;
            char **nm = realloc(c->names, cap * sizeof *nm);
            if (nm) c->names = nm;
            tw_reading_info *in = realloc(c->info, cap * sizeof *in);
            if (in) c->info = in;
            int *pr = realloc(c->producer, cap * sizeof *pr);
            if (pr) c->producer = pr;
            if (!nm || !in || !pr) {
                st = tw_fail(TW_ENOMEM, "out of memory");
                break;
            }
        }
        int64_t id = sqlite3_column_int64(s, 0);
        if (id <= 0 || id > 1000000) {
            st = tw_fail(TW_EPARSE, "%s: readings: id %lld out of range", c->path, (long long)id);
            break;
        }
        if ((size_t)id >= c->nids) {
            size_t k = (size_t)id + 16;
            size_t *p = realloc(c->index_of, k * sizeof *p);
            if (!p) {
                st = tw_fail(TW_ENOMEM, "out of memory");
                break;
            }
            for (size_t i = c->nids; i < k; i++)
                p[i] = SIZE_MAX;
            c->index_of = p;
            c->nids = k;
        }
        c->index_of[id] = c->n;
        c->names[c->n] = strdup((const char *)sqlite3_column_text(s, 1));
        if (!c->names[c->n]) st = tw_fail(TW_ENOMEM, "out of memory");
        c->info[c->n] = (tw_reading_info){c->names[c->n], (tw_quantity)sqlite3_column_int(s, 2), 1.0};
        c->producer[c->n] = sqlite3_column_int(s, 3);
        c->n++;
    }
    sqlite3_finalize(s);
    return st;
}

static tw_status alloc_row(tw_run_rows *c)
{
    size_t k = c->n ? c->n : 1;
    c->value = calloc(k, sizeof *c->value);
    c->t_value = calloc(k, sizeof *c->t_value);
    c->held = calloc(k, sizeof *c->held);
    c->held_stamp = calloc(k, sizeof *c->held_stamp);
    c->valid = calloc(k, 1);
    c->held_valid = calloc(k, 1);
    if (!c->value || !c->t_value || !c->held || !c->held_stamp || !c->valid || !c->held_valid)
        return tw_fail(TW_ENOMEM, "out of memory");
    return TW_OK;
}

tw_status tw_run_rows_open(const char *path, tw_run_rows **out)
{
    tw_clear_error();
    if (!path || !out) return tw_fail(TW_EINVAL, "tw_run_rows_open: NULL argument");
    *out = NULL;
    tw_run_rows *c = calloc(1, sizeof *c);
    if (!c || !(c->path = strdup(path))) {
        free(c);
        return tw_fail(TW_ENOMEM, "out of memory");
    }
    bool writable;
    tw_status st = run_db_open(path, &c->db, &writable);
    /* two scans in rowid order: a small page cache does, and it stays the same size whatever the run's
     * length (SQLite's default, 2 MB, fills only on runs of millions of launches: issue 16) */
    if (st == TW_OK && sqlite3_exec(c->db, "PRAGMA cache_size = -256", NULL, NULL, NULL) != SQLITE_OK)
        st = run_db_fail(c->db, path, "cannot set the page cache");
    if (st == TW_OK) st = load_readings(c);
    if (st == TW_OK) st = alloc_row(c);
    if (st == TW_OK && (sqlite3_prepare_v2(c->db, "SELECT producer, t_ns FROM polls ORDER BY rowid", -1, &c->polls,
                                           NULL) != SQLITE_OK ||
                        sqlite3_prepare_v2(c->db, "SELECT reading, t_ns, value, value_t_ns FROM samples ORDER BY rowid",
                                           -1, &c->samples, NULL) != SQLITE_OK))
        st = run_db_fail(c->db, path, "cannot read the samples");
    if (st == TW_OK && c->n == 0) st = tw_fail(TW_EEMPTY, "%s: the run has no readings", path);
    if (st != TW_OK) {
        rows_free(c);
        return st;
    }
    tw_run_rows_rewind(c);
    *out = c;
    return TW_OK;
}

size_t tw_run_rows_nreadings(const tw_run_rows *c) { return c ? c->n : 0; }

const tw_reading_info *tw_run_rows_reading(const tw_run_rows *c, size_t i)
{
    return c && i < c->n ? &c->info[i] : NULL;
}

/* Applies every sample up to t_ns to the held values. */
static tw_status apply_samples(tw_run_rows *c, int64_t t_ns)
{
    for (;;) {
        if (!c->sample_peeked) {
            if (c->samples_done) return TW_OK;
            int rc = sqlite3_step(c->samples);
            if (rc == SQLITE_DONE) {
                c->samples_done = true;
                return TW_OK;
            }
            if (rc != SQLITE_ROW) return run_db_fail(c->db, c->path, "cannot read the samples");
            c->sample_peeked = true;
        }
        if (sqlite3_column_int64(c->samples, 1) > t_ns) return TW_OK;
        int64_t id = sqlite3_column_int64(c->samples, 0);
        if (id <= 0 || (size_t)id >= c->nids || c->index_of[id] == SIZE_MAX)
            return tw_fail(TW_EPARSE, "%s: samples: reading %lld is not in readings", c->path, (long long)id);
        size_t i = c->index_of[id];
        c->held_valid[i] = sqlite3_column_type(c->samples, 2) != SQLITE_NULL;
        c->held[i] = c->held_valid[i] ? sqlite3_column_double(c->samples, 2) : NAN;
        c->held_stamp[i] =
            sqlite3_column_type(c->samples, 3) == SQLITE_NULL ? NAN : run_s_of(sqlite3_column_int64(c->samples, 3));
        c->sample_peeked = false;
    }
}

tw_status tw_run_rows_next(tw_run_rows *c, tw_row *row, bool *eof)
{
    *eof = false;
    int rc = sqlite3_step(c->polls);
    if (rc == SQLITE_DONE) {
        *eof = true;
        return TW_OK;
    }
    if (rc != SQLITE_ROW) return run_db_fail(c->db, c->path, "cannot read the polls");
    int producer = sqlite3_column_int(c->polls, 0);
    int64_t t_ns = sqlite3_column_int64(c->polls, 1);
    tw_status st = apply_samples(c, t_ns);
    if (st != TW_OK) return st;
    double t = run_s_of(t_ns);
    for (size_t i = 0; i < c->n; i++) {
        bool mine = c->producer[i] == producer;
        c->valid[i] = mine && c->held_valid[i];
        c->value[i] = c->valid[i] ? c->held[i] : NAN;
        c->t_value[i] = c->valid[i] && !isnan(c->held_stamp[i]) ? c->held_stamp[i] : t;
    }
    c->rows++;
    *row = (tw_row){t, c->n, c->value, c->t_value, c->valid};
    return TW_OK;
}

tw_status tw_run_rows_rewind(tw_run_rows *c)
{
    sqlite3_reset(c->polls);
    sqlite3_reset(c->samples);
    c->sample_peeked = c->samples_done = false;
    c->rows = 0;
    for (size_t i = 0; i < c->n; i++) {
        c->held_valid[i] = 0;
        c->held[i] = NAN;
        c->held_stamp[i] = NAN;
    }
    return TW_OK;
}

uint64_t tw_run_rows_index(const tw_run_rows *c) { return c ? c->rows : 0; }

const char *tw_run_rows_path(const tw_run_rows *c) { return c ? c->path : NULL; }

void tw_run_rows_close(tw_run_rows *c) { rows_free(c); }
