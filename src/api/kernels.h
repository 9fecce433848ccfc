/* A session's kernels (internal): with trace_kernels the session traces its
 * process's kernels in-process through CUPTI's activity API (the module the
 * injection library uses, src/inject/cupti_activity.h), keeps their launches
 * on its timeline while its regions may need them, and gives each ended
 * region the energy of every kernel name inside it, by the estimator over
 * the session's readings (src/estimate/estimator.h, as `truewatt run`).
 *
 * The tracer's thread asks CUPTI for its completed buffers every
 * TW_KTRACE_FLUSH_S, reads them into the launch store and tells the session
 * (notify): a region waits until a flush that began after its end. */
#ifndef TW_API_KERNELS_H
#define TW_API_KERNELS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "correct/observe.h"
#include "inject/event_csv.h"
#include "truewatt.h"

#define TW_KTRACE_FLUSH_S 0.1

/* One launch on the session's timeline; name interned for the process. */
typedef struct tw_klaunch {
    const char *name;
    size_t dev; /* the session's device */
    double t0, t1;
} tw_klaunch;

typedef struct tw_ktrace tw_ktrace;

typedef struct tw_ktrace_config {
    uint64_t t0_mono_ns;      /* the session's timeline origin */
    const char *const *uuids; /* the session's devices, as NVML names them */
    size_t ndev;
    void (*notify)(void *arg); /* after each flush (the tracer's thread) */
    /* every record as CUPTI gave it, on the tracer's thread (the run file's
     * events, recorder.h); NULL: none */
    void (*record)(void *arg, const twi_record *r, const twi_clock *c);
    void *arg;
} tw_ktrace_config;

/* TW_EUNSUPPORTED when the library was built without cupti.h; TW_EUNAVAIL
 * when CUPTI cannot be loaded or set up (why in the message). */
tw_status tw_ktrace_start(const tw_ktrace_config *c, tw_ktrace **out);
/* Hands over what CUPTI still holds (forced), reads it and stops the thread. */
void tw_ktrace_stop(tw_ktrace *k);
void tw_ktrace_free(tw_ktrace *k);
/* Every kernel that ended before this time (session seconds) is in the store. */
double tw_ktrace_flushed_s(tw_ktrace *k);
/* A copy of device dev's launches that overlap [t0, t1] (*out malloc'ed). */
tw_status tw_ktrace_window(tw_ktrace *k, size_t dev, double t0, double t1, tw_klaunch **out, size_t *n);
/* Forgets the launches that ended before t. */
void tw_ktrace_trim(tw_ktrace *k, double t);
/* Launches on none of the session's devices (dropped). */
uint64_t tw_ktrace_foreign(tw_ktrace *k);

/* One kernel name's share of a region on one GPU. */
typedef struct tw_kname {
    const char *name;
    size_t dev;
    uint64_t launches;
    double time_s, energy_j, sd_j;
    const char *status;
    const char *group; /* grouped: its group's label (interned); else NULL */
} tw_kname;

/* The region [t0, t1]'s kernel names from the launches (those overlapping
 * [fit_t0, t1]) and the readings' observations over [fit_t0, t1]: the
 * estimator's per-launch energies, the part of each launch inside the region
 * summed per name; names and the estimator's baseline over the region
 * scaled together so that they add up to total_j (the region's energy, the
 * counter's where it anchors; NaN: not scaled). *kernels_j: the names' sum;
 * *model_j: that plus the baseline over the region (with the groups' energies, which the names they hold have
 * not: NaN, status "grouped"). Names by energy, largest first (*out malloc'ed). Without
 * readings over the region: the names' launches and time, energies NaN
 * ("unobserved"). */
tw_status tw_kernels_estimate(const tw_klaunch *l, size_t n, const tw_obs *obs, size_t nobs, const char *reading,
                              double fit_t0, double t0, double t1, double total_j, double power_limit_w, tw_kname **out,
                              size_t *nout, double *kernels_j, double *model_j);

#endif
