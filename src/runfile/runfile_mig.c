/* The MIG instances in the run file: see runfile_mig.h. */
#include "runfile/runfile_mig.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "runfile/runfile_internal.h"

#define MIG_TABLE                                                                                                      \
    "CREATE TABLE IF NOT EXISTS mig_instances(uuid TEXT PRIMARY KEY, parent_uuid TEXT NOT NULL, "                      \
    "parent_idx INTEGER NOT NULL, position INTEGER NOT NULL, multiprocessors INTEGER, slices INTEGER, "                \
    "memory_mib INTEGER)"

tw_status tw_run_put_mig(tw_run *r, const tw_mig_instance *m)
{
    pthread_mutex_lock(&r->mu);
    sqlite3_stmt *s = NULL;
    tw_status st = TW_OK;
    if (sqlite3_exec(r->db, MIG_TABLE, NULL, NULL, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(r->db, "INSERT OR REPLACE INTO mig_instances VALUES(?,?,?,?,?,?,?)", -1, &s, NULL) !=
            SQLITE_OK) {
        st = run_db_fail(r->db, r->path, "cannot write the MIG instances");
    } else {
        sqlite3_bind_text(s, 1, m->uuid, -1, SQLITE_STATIC);
        sqlite3_bind_text(s, 2, m->parent_uuid, -1, SQLITE_STATIC);
        sqlite3_bind_int64(s, 3, m->parent_index);
        sqlite3_bind_int64(s, 4, m->position);
        sqlite3_bind_int64(s, 5, m->multiprocessors);
        sqlite3_bind_int64(s, 6, m->slices);
        sqlite3_bind_int64(s, 7, (sqlite3_int64)m->memory_mib);
        st = run_step_write(r, s, "cannot write a MIG instance");
    }
    sqlite3_finalize(s);
    pthread_mutex_unlock(&r->mu);
    return st;
}

static void copy_text(sqlite3_stmt *s, int col, char *out, size_t cap)
{
    const unsigned char *t = sqlite3_column_text(s, col);
    snprintf(out, cap, "%s", t ? (const char *)t : "");
}

tw_status tw_run_migs(tw_run *r, tw_mig_instance **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    pthread_mutex_lock(&r->mu);
    sqlite3_stmt *s = NULL;
    tw_status st = TW_OK;
    /* a run file without the table: no MIG instance (not an error) */
    if (sqlite3_prepare_v2(r->db,
                           "SELECT uuid, parent_uuid, parent_idx, position, multiprocessors, slices, memory_mib "
                           "FROM mig_instances ORDER BY parent_idx, position",
                           -1, &s, NULL) != SQLITE_OK) {
        sqlite3_finalize(s);
        pthread_mutex_unlock(&r->mu);
        return TW_OK;
    }
    while (sqlite3_step(s) == SQLITE_ROW) {
        tw_mig_instance *p = realloc(*out, (*n + 1) * sizeof *p);
        if (!p) {
            st = tw_fail(TW_ENOMEM, "out of memory");
            break;
        }
        *out = p;
        tw_mig_instance *m = &p[(*n)++];
        memset(m, 0, sizeof *m);
        copy_text(s, 0, m->uuid, sizeof m->uuid);
        copy_text(s, 1, m->parent_uuid, sizeof m->parent_uuid);
        m->parent_index = (unsigned)sqlite3_column_int64(s, 2);
        m->position = (unsigned)sqlite3_column_int64(s, 3);
        m->multiprocessors = (unsigned)sqlite3_column_int64(s, 4);
        m->slices = (unsigned)sqlite3_column_int64(s, 5);
        m->memory_mib = (unsigned long long)sqlite3_column_int64(s, 6);
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
