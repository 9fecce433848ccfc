/* A session's kernels (internal): with trace_kernels the session traces its
 * process's kernels in-process through CUPTI's activity API (the module the
 * injection library uses, src/inject/cupti_activity.h), keeps their launches
 * on its timeline while its regions and fits may need them, and gives each
 * ended region the energy of every kernel name inside it, by the estimator
 * fitted over the session's history (tw_kfit below).
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

/* The session's per-name powers, which its regions share: the estimator
 * (src/estimate/estimator.h, as `truewatt run`) fitted over the session's
 * trailing history of readings and launches (the source's), refitted when
 * a region is read that the last fit does not serve (it ends over 2 s
 * before the region's end, or lacks one of its names): at that read, never
 * on the sampler's thread or in a region's begin or end. A region's names
 * are its launches' activity inside it times each name's fitted power, with
 * the same fit's baseline over the region beside them, so that a name's
 * energy repeats from region to region as its launches do: a fit over one
 * region of a few hundred milliseconds cannot resolve dozens of names, and
 * gave the same PyTorch step's names energies that differed wildly from
 * window to window (results/h100/api/kernels.txt). Memory: the last fit
 * (names squared) and the history the source keeps. Refcounted: a region
 * may be read after its session closed. */
typedef struct tw_kfit tw_kfit;

/* Device dev's history for a fit, copied: its launches overlapping [*t0,
 * *t1] (*l malloc'ed) and its readings' observations inside it; the span is
 * the source's (the session's history up to where readings and kernels both
 * reach), back to `from` too where it holds that (a region longer than the
 * history it keeps). Called with the fit's lock held. */
typedef tw_status (*tw_kfit_source)(void *arg, size_t dev, double from, tw_klaunch **l, size_t *nl, tw_obs_series *obs,
                                    double *t0, double *t1);

/* power_limit_w: per device (NaN: unknown); reading: the observations' name (kept). */
tw_status tw_kfit_new(size_t ndev, const double *power_limit_w, const char *reading, tw_kfit_source src, void *arg,
                      tw_kfit **out);
tw_kfit *tw_kfit_ref(tw_kfit *f);
void tw_kfit_unref(tw_kfit *f);
/* A region that ended at t1 completed (tw_kfit_expect) and will be read;
 * it was read or freed (tw_kfit_done). Cheap: under the session's lock. */
void tw_kfit_expect(tw_kfit *f, double t1);
void tw_kfit_done(tw_kfit *f);
/* The session closes (without its lock held, its history still there): a
 * last fit when regions wait that the last fit does not reach, then no
 * source. */
void tw_kfit_detach(tw_kfit *f);

/* One kernel name's share of a region on one GPU. */
typedef struct tw_kname {
    const char *name;
    size_t dev;
    uint64_t launches;
    double time_s, energy_j, sd_j;
    const char *status;
    const char *group; /* grouped: its group's label (interned); else NULL */
} tw_kname;

/* The region [t0, t1]'s kernel names on device dev from its launches l
 * (those overlapping it) and the fit (refitted first where it does not
 * serve the region): each name's activity inside the region times its fitted power,
 * its status (below resolution, grouped, at the bound) the fit's; names and
 * the fit's baseline over the region scaled together so that they add up
 * to total_j (the region's energy, the counter's where it anchors; NaN: not
 * scaled). *kernels_j: the names' sum (with the groups' energies, which the
 * names they hold have not: NaN, status "grouped"); *model_j: that plus the
 * baseline. Names by energy, largest first (*out malloc'ed). Without any
 * fit (no readings): the names' launches and time, energies NaN
 * ("unobserved"). */
tw_status tw_kfit_region(tw_kfit *f, size_t dev, const tw_klaunch *l, size_t n, double t0, double t1, double total_j,
                         tw_kname **out, size_t *nout, double *kernels_j, double *model_j);

#endif
