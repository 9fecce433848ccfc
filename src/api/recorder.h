/* A session's run file (internal): with run_path the session records into
 * the run file `truewatt run` writes (src/runfile, docs/runfile.md), so that
 * `truewatt report FILE` reads it: the sampler stores the readings itself
 * (tw_sampler_config.run); the kernels CUPTI gives (trace_kernels) and the
 * regions, as NVTX ranges of the default domain, go as lines of the events
 * file format (src/inject/event_csv.h) into FILE.events.csv, which is
 * imported into the run file every TW_RUN_COMMIT_S and at the close, as
 * `truewatt run` imports the injection library's. */
#ifndef TW_API_RECORDER_H
#define TW_API_RECORDER_H

#include <stddef.h>
#include <stdint.h>

#include "correct/profile.h"
#include "inject/event_csv.h"
#include "truewatt.h"

typedef struct tw_recorder tw_recorder;

typedef struct tw_recorder_config {
    const char *path;          /* the run file (created afresh) */
    const char *backend;       /* "nvml" */
    uint64_t t0_mono_ns;       /* the session's timeline origin */
    const tw_device_info *dev; /* the session's GPUs */
    const char *const *prefix; /* their columns' prefixes in the sampler's rows ("" or "gpuN_") */
    size_t ndev;
    const char *profile_path; /* the session's profile (NULL: each GPU's own) */
} tw_recorder_config;

tw_status tw_recorder_open(const tw_recorder_config *c, tw_recorder **out);
/* The run file, for the sampler (tw_sampler_config.run). */
tw_run *tw_recorder_run(tw_recorder *r);
/* A region (session seconds) as an NVTX range of the calling thread. */
void tw_recorder_region(tw_recorder *r, const char *name, double t0, double t1);
/* A CUPTI record (the kernel tracer's thread), its clock to the timeline. */
void tw_recorder_activity(tw_recorder *r, const twi_record *rec, const twi_clock *c);
/* The lines so far into the events file and the run file, committed; at
 * most every TW_RUN_COMMIT_S unless forced. */
void tw_recorder_sync(tw_recorder *r, bool forced);
/* The sampler's periods, plans and counts after it stopped (NULL: none),
 * the last lines, then the file closed. The first error on the way, kept
 * (the file holds everything up to the last commit). */
tw_status tw_recorder_close(tw_recorder *r, const tw_sampler *smp);

#endif
