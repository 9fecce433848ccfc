/* Activity counters in the run file (internal): CUPTI PM sampling's samples
 * (src/inject/pm_sampling.h), imported from the pm_* lines of the events
 * file into the tables pm_devices and pm_samples (docs/runfile.md), made at
 * the first such line; a run without activity counters has neither.
 *
 * pm_samples stores one row per sample and device with its values packed
 * as a BLOB of little-endian float32, in the order of pm_devices.metrics:
 * 65 bytes a sample on disk with 11 metrics (1 ms samples for an hour:
 * ~235 MB), against 121 for a row of REAL columns or ~11 rows of a long
 * layout (docs/runfile.md). */
#ifndef TW_RUNFILE_RUNFILE_PM_H
#define TW_RUNFILE_RUNFILE_PM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "runfile/runfile.h"

/* The run meta key truewatt run sets when activity counters were asked for (their interval, ms). */
#define TW_RUN_PM_ASKED_KEY "activity_counters_ms"

/* Whether an events file line of kind `kind` is PM sampling's. */
bool tw_run_pm_kind(const char *kind);
/* One such line (under r->mu, from the events import): its name column,
 * device, UUID ("" or NULL: none) and span on the timeline. A bad line is
 * TW_EPARSE naming path:line. */
tw_status tw_run_pm_line(tw_run *r, const char *path, unsigned long line, const char *kind, const char *text,
                         int64_t device, const char *uuid, int64_t start_ns, int64_t end_ns);

/* A device's activity counters as recorded. */
typedef struct tw_run_pm {
    int device;    /* CUDA device ordinal in the program; -1: every device (a reason for all) */
    char uuid[96]; /* "" when none */
    bool on;       /* samples were set up (else reason says why not) */
    uint64_t interval_ns;
    char metrics[1536]; /* comma-separated, in the order of the values */
    char refused[1024]; /* comma-separated */
    char reason[600];
    uint64_t samples;
    int64_t first_ns, last_ns; /* the samples' span on the timeline (0 when none) */
    double busy_s;             /* seconds the program's process spent decoding them (NaN: not said) */
    uint64_t overflows;        /* decodes that found the hardware buffer overflowed */
} tw_run_pm;

/* Every device's record, by device; *out malloc'ed (NULL and 0 when the run has none). */
tw_status tw_run_pms(tw_run *r, tw_run_pm **out, size_t *n);
/* The record for the GPU with `uuid` (else the one for every device); NULL when none. */
const tw_run_pm *tw_run_pm_for(const tw_run_pm *v, size_t n, const char *uuid);
/* busy_s as a percentage of one core over the samples' span (NaN when unknown). */
double tw_run_pm_busy_pct(const tw_run_pm *p);
/* "N samples every X ms (PM sampling: a, b, ...)[; refused: ...][; decoding P % of one core][; overflows]"
 * or "not recorded (reason)" into buf. */
void tw_run_pm_text(const tw_run_pm *p, char *buf, size_t cap);
/* Device `device`'s samples in order of start (pm_samples.device: the
 * record's device), each handed to fn with its span on the timeline (s) and
 * its values as recorded (nvalues float32, in the order of the record's
 * metrics), none held: a sample with another number of values is TW_EPARSE
 * naming the run file; fn's error stops the reading and is returned. */
typedef tw_status (*tw_run_pm_fn)(void *ctx, double t0_s, double t1_s, const float *values);
tw_status tw_run_pm_each(tw_run *r, int device, size_t nvalues, tw_run_pm_fn fn, void *ctx);
/* Device `device`'s PM sampling windows (sampling in windows: the spans it
 * was enabled in), in order of start, to fn as run seconds; none (and
 * TW_OK) for a run that sampled throughout or not at all. */
typedef tw_status (*tw_run_pm_window_fn)(void *ctx, double t0_s, double t1_s);
tw_status tw_run_pm_windows(tw_run *r, int device, tw_run_pm_window_fn fn, void *ctx);
/* tw_run_export_pm (pm_samples.csv): truewatt.h. */

#endif
