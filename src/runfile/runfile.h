/* The run file (internal): one SQLite database that `truewatt run` records
 * into while the program runs, and that `truewatt report` and `truewatt
 * export` read back. Schema and example queries: docs/runfile.md.
 *
 * Writes go into one open transaction that is committed every
 * TW_RUN_COMMIT_S seconds (or TW_RUN_COMMIT_ROWS rows), in WAL mode: a
 * crash, kill -9 or a full disk leaves everything up to the last commit
 * readable. Every timestamp is an integer of nanoseconds on the trace
 * timeline (since t0_mono_ns on CLOCK_MONOTONIC), exact over days.
 *
 * A tw_run may be written from several threads (the sampler's writer, the
 * events import); a mutex orders them. */
#ifndef TW_RUNFILE_RUNFILE_H
#define TW_RUNFILE_RUNFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "trace/feed.h"
#include "truewatt.h"

#define TW_RUN_SCHEMA_VERSION 2
#define TW_RUN_COMMIT_S 0.5
#define TW_RUN_COMMIT_ROWS 200000

/* tw_run_is_file (SQLite's header: a run file, not a CSV): truewatt.h */

/* Creates `path` afresh (an old file and its -wal/-shm are removed). */
tw_status tw_run_create(const char *path, tw_run **out);
/* tw_run_open, tw_run_close: truewatt.h (a run opened to read can take reports). */
const char *tw_run_path(const tw_run *r);
/* Commits now (and starts the next transaction). */
tw_status tw_run_commit(tw_run *r);

/* ---------------------------------------------------------------- what the run is */

/* Key/value facts of the run (meta table): text, integers or reals. */
tw_status tw_run_set_text(tw_run *r, const char *key, const char *value);
tw_status tw_run_set_int(tw_run *r, const char *key, int64_t value);
tw_status tw_run_set_real(tw_run *r, const char *key, double value);
/* *out is malloc'ed ("" when absent: TW_ENOTFOUND). */
tw_status tw_run_get_text(tw_run *r, const char *key, char **out);
tw_status tw_run_get_int(tw_run *r, const char *key, int64_t *out);
/* tw_run_get_real (NaN when absent or NULL): truewatt.h */

/* The measured command's arguments, and its environment ("NAME=value"). */
tw_status tw_run_set_command(tw_run *r, char *const *argv);
tw_status tw_run_get_command(tw_run *r, char ***argv); /* NULL-terminated; tw_run_free_strv */
tw_status tw_run_set_environment(tw_run *r, char *const *envp);
void tw_run_free_strv(char **v);

/* A sampled GPU (index: the backend's device index, the key of readings). */
typedef struct tw_run_device {
    int index;
    char uuid[96], name[96], driver[32];
    unsigned arch;
    double power_limit_w; /* the power limit it enforced (read, never set); NaN = unknown */
    char prefix[32];      /* the trace columns' prefix: "" or "gpuN_" */
    /* the sampler's, after the run (NaN / "" until then) */
    double fast_period_s, buffer_poll_s, slow_period_s, slow_max_period_s, sampler_cpu_s;
    char plan[1024];
    /* the sensor profile used: its status (run_report.h's run_profile), the
     * line saying which file and why, and the profile itself as JSON */
    int profile_status;
    char profile_how[1200];
} tw_run_device;

tw_status tw_run_put_device(tw_run *r, const tw_run_device *d);
/* Sets the profile of device `index`; json may be NULL (none). */
tw_status tw_run_set_profile(tw_run *r, int index, int status, const char *how, const char *json);
/* The devices in index order; *out is malloc'ed. */
tw_status tw_run_devices(tw_run *r, tw_run_device **out, size_t *n);
/* The profile JSON of device `index`: *json malloc'ed, NULL when none. */
tw_status tw_run_get_profile(tw_run *r, int index, char **json);

/* ---------------------------------------------------------------- samples */

/* A reading (a trace column) of device `device`, polled by `producer` (the
 * sampler's thread: every poll of it reads all its readings). *id is its
 * reading id, for tw_run_poll. */
tw_status tw_run_add_reading(tw_run *r, int device, const char *name, tw_quantity q, int producer, int64_t *id);
/* One poll of `producer` at t_s: its n readings' values (valid[i] = 0:
 * absent), own timestamps t_value_s (= t_s when none). Only updates are
 * stored as samples: a value that differs (or whose own timestamp moved)
 * from the reading's previous poll; the poll itself is a row of polls. */
tw_status tw_run_poll(tw_run *r, int producer, double t_s, size_t n, const int64_t *ids, const double *value,
                      const double *t_value_s, const uint8_t *valid);
/* The time of the last poll (NaN when none). */
double tw_run_last_poll_s(tw_run *r);
/* The sampler's counts for the reading named `name`. */
tw_status tw_run_set_reading_stats(tw_run *r, const char *name, const tw_sampler_reading_stats *st);

typedef struct tw_run_reading {
    char name[128];
    uint64_t polls, updates;
    double polls_per_s, updates_per_s;
} tw_run_reading;
tw_status tw_run_readings(tw_run *r, tw_run_reading **out, size_t *n);

/* The samples as the rows of a trace (tw_trace_reader over a run file):
 * one row per poll, in time order, each reading's value held from its
 * last update. */
typedef struct tw_run_rows tw_run_rows;
tw_status tw_run_rows_open(const char *path, tw_run_rows **out);
size_t tw_run_rows_nreadings(const tw_run_rows *c);
const tw_reading_info *tw_run_rows_reading(const tw_run_rows *c, size_t i);
tw_status tw_run_rows_next(tw_run_rows *c, tw_row *row, bool *eof);
tw_status tw_run_rows_rewind(tw_run_rows *c);
uint64_t tw_run_rows_index(const tw_run_rows *c); /* rows read so far */
const char *tw_run_rows_path(const tw_run_rows *c);
void tw_run_rows_close(tw_run_rows *c);

/* ---------------------------------------------------------------- activities */

/* Tails the injection library's events CSV into the run file: each call
 * imports the complete lines written since the last one (state in *t).
 * This is the only place that knows the events file's format. */
typedef struct tw_run_tail {
    long long offset;   /* bytes of the file already imported */
    unsigned long line; /* its lines */
    int col[20];        /* header position of each known column, -1 when absent */
    bool have_header;
    unsigned long events;    /* imported so far */
    unsigned long skipped;   /* lines after the header that could not be read: left out */
    char first_skipped[400]; /* the first of them: file, line and problem */
} tw_run_tail;
void tw_run_tail_init(tw_run_tail *t);
/* A file that does not exist yet is no error (nothing to import). A line
 * after the header that cannot be read is left out and counted (t->skipped,
 * t->first_skipped), not a reason to lose every line after it; a header that
 * cannot be read, or a failing read or write, stops the import. */
tw_status tw_run_import_events(tw_run *r, const char *path, tw_run_tail *t);

/* tw_run_load_events, tw_run_export_events, tw_run_export_trace: truewatt.h. */

/* The run's events as a feed (trace/feed.h), replayed from the file by start
 * in the order of tw_run_load_events, never all held: *feed is valid, and
 * its strings, until tw_run_feed_free (before tw_run_close). */
typedef struct tw_run_feed tw_run_feed;
tw_status tw_run_feed_open(tw_run *r, tw_run_feed **out, tw_feed *feed);
tw_status tw_run_feed_replay(const tw_feed *feed, unsigned fields, tw_feed_fn fn, void *ctx);
void tw_run_feed_free(tw_run_feed *f);

/* ---------------------------------------------------------------- the report */

tw_status tw_run_add_report(tw_run *r, const char *options, const char *json);

#endif
