/* The run file's internals shared by runfile.c (the file, its facts and
 * samples), runfile_rows.c (samples read back as trace rows) and
 * runfile_events.c (activities in and out). */
#ifndef TW_RUNFILE_INTERNAL_H
#define TW_RUNFILE_INTERNAL_H

#include <pthread.h>
#include <sqlite3.h>

#include "core/strmap.h"
#include "runfile/runfile.h"

/* The symbols carry the library's prefix (tests/meta checks every global
 * symbol of the static library); the call sites keep the short names. */
#define run_db_fail tw_run_db_fail
#define run_db_open tw_run_db_open
#define run_prepare tw_run_prepare
#define run_step_write tw_run_step_write
#define run_maybe_commit tw_run_maybe_commit
#define run_string_id tw_run_string_id
#define run_type_id tw_run_type_id
#define run_ns_of tw_run_ns_of
#define run_s_of tw_run_s_of
#define run_note_start tw_run_note_start
#define run_order_fact tw_run_order_fact

/* What the last poll stored of a reading, to keep only its updates. */
typedef struct run_last {
    bool have, valid, own;
    double value;
    int64_t stamp_ns;
} run_last;

struct tw_run {
    sqlite3 *db;
    char *path;
    pthread_mutex_t mu;
    bool writable;
    bool in_tx;
    uint64_t last_commit_ns;
    size_t pending; /* rows since the last commit */
    tw_status err;  /* the first write error, kept */
    char errmsg[512];
    sqlite3_stmt *st_poll, *st_sample, *st_string, *st_activity, *st_nvtx, *st_type;
    tw_strmap strings; /* text -> strings.id, so that each name is stored once */
    tw_strmap types;   /* an activity type's fields, joined -> activity_types.id */
    run_last *last;    /* by reading id */
    size_t nlast;
    /* activities, NVTX ranges: whether this handle keeps the meta facts
     * activities_by_start / nvtx_by_start (it made the file), and the
     * last start written (run_note_start) */
    bool order_kept[2], order_known[2];
    int64_t last_start[2];
};

/* TW_EIO naming the file and SQLite's message. */
tw_status run_db_fail(sqlite3 *db, const char *path, const char *what);
/* Opens the database (read-write when allowed, else read-only). */
tw_status run_db_open(const char *path, sqlite3 **db, bool *writable);
/* Under r->mu: a statement prepared once, reset for reuse. */
tw_status run_prepare(tw_run *r, sqlite3_stmt **st, const char *sql);
/* Under r->mu: steps a write statement; a failure is kept in r->err. */
tw_status run_step_write(tw_run *r, sqlite3_stmt *st, const char *what);
/* Under r->mu: commits when TW_RUN_COMMIT_S passed or TW_RUN_COMMIT_ROWS rows wait. */
tw_status run_maybe_commit(tw_run *r);
/* Under r->mu: the id of `text` in strings, added when new. */
tw_status run_string_id(tw_run *r, const char *text, int64_t *id);
/* Under r->mu: the id in activity_types of `key` (the type's fields joined,
 * the map's key) whose row `insert` (a prepared INSERT, bound) adds when new. */
tw_status run_type_id(tw_run *r, const char *key, sqlite3_stmt *insert, int64_t *id);

/* Under r->mu, before an activity (table 0) or NVTX range (1) starting at
 * start_ns is written: keeps the meta fact that the table's rows are in
 * order of start (set to 0 in the row's transaction when this one breaks
 * it), or, in a file this handle did not make, removes it (unknown). */
tw_status run_note_start(tw_run *r, int table, int64_t start_ns);
/* Under r->mu: whether a table's rows are in order of start by the meta
 * fact (*known false: the file does not say). */
tw_status run_order_fact(tw_run *r, int table, bool *known, bool *in_order);

/* ns <-> seconds on the trace timeline */
int64_t run_ns_of(double t_s);
double run_s_of(int64_t ns);

#endif
