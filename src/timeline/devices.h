/*
 * devices.h - which GPU each event of a timeline ran on, and which GPUs to
 * sample (internal).
 *
 * The injection library writes each kernel's CUDA device ordinal (its
 * number inside the process, after CUDA_VISIBLE_DEVICES) and the device's
 * UUID as NVML writes it. Only the UUID names the same GPU for CUDA and for
 * NVML, so events are matched to the sampled NVML devices by UUID; an event
 * whose GPU is not sampled is "unmeasured", never charged to another GPU.
 *
 * The GPUs to sample are NVML devices, named as NVML indices ("1"), CUDA
 * ordinals ("cuda:1", resolved through CUDA_VISIBLE_DEVICES as the measured
 * program sees it) or UUIDs ("GPU-...", a unique prefix is enough).
 */
#ifndef TW_TIMELINE_DEVICES_H
#define TW_TIMELINE_DEVICES_H

#include <stddef.h>
#include <stdint.h>

#include "timeline/mig.h"
#include "trace/feed.h"
#include "truewatt.h"

/* ---------------------------------------------------------------- events to devices */

/* A GPU whose events no sampled device takes. */
typedef struct tw_unmeasured_device {
    char uuid[96];  /* its UUID; "" for events without one (matched by device number) */
    int32_t device; /* the device number its first event gave (-1: none) */
    size_t events;  /* its kernels, copies and memsets */
    double busy_s;  /* their summed durations */
} tw_unmeasured_device;

typedef struct tw_unmeasured_summary {
    tw_unmeasured_device *dev; /* one per GPU, in order of first appearance; owned */
    size_t n;
    size_t events; /* all of them */
} tw_unmeasured_summary;

/* Splits `ev` by device: per_dev[k] (k < ndev) receives a new event set
 * (the caller frees each with tw_events_free) with the events of the GPU
 * dev[k], in the order of `ev`; *unm (cleared first; free it with
 * tw_unmeasured_summary_free) counts the events of GPUs not in dev.
 *
 * Which slot an event goes to:
 *   - an event with a device_uuid goes to the device with that UUID
 *     (compared without case), else it is unmeasured;
 *   - NVTX ranges, and events without a UUID or device number (-1), are host
 *     activity: they go to every slot;
 *   - an event without a UUID but with a device number (files from before
 *     UUIDs were written, the simulator): with one device, to it; with
 *     several, to the device whose NVML index is that number, else
 *     unmeasured;
 *   - when no device in dev has a UUID (a backend that cannot tell), UUIDs
 *     are ignored and the rule above applies.
 * Every set returned owns its strings (they stay valid after `ev` is freed).
 * With one device and every event on it, per_dev[0] is `ev` itself, shared
 * (tw_events_share: free both; neither may be added to), not a copy of a
 * run's millions of launches.
 * On failure (TW_ENOMEM) nothing is returned: per_dev[k] are NULL. */
tw_status tw_timeline_split(tw_events *ev, const tw_device_info *dev, size_t ndev, tw_events **per_dev,
                            tw_unmeasured_summary *unm);
void tw_unmeasured_summary_free(tw_unmeasured_summary *unm);

/* The same split as a stream (trace/feed.h), for a run of millions of
 * launches: device dev[slot]'s events of the feed `all`, replayed from it
 * each time (*feed), as tw_timeline_split would give them, after events on
 * a MIG instance of mig[0..nmig) have taken their GPU's UUID and the
 * instance's label, as tw_mig_remap gives them ("MIG 1: gemm"). Nothing is
 * held but those labels; `all` and dev must outlive it. Free with
 * tw_device_feed_free after the last replay. */
typedef struct tw_device_feed tw_device_feed;
tw_status tw_device_feed_open(const tw_feed *all, const tw_device_info *dev, size_t ndev, size_t slot,
                              const tw_mig_instance *mig, size_t nmig, tw_device_feed **out, tw_feed *feed);
void tw_device_feed_free(tw_device_feed *f);
/* Counts what tw_timeline_unmeasured counts into *unm (cleared) during the
 * feed's next replay that runs to its end, and sets *done then: the report
 * replays the run once less. */
void tw_device_feed_count(tw_device_feed *f, tw_unmeasured_summary *unm, bool *done);
/* What tw_timeline_split counts of `all` as unmeasured (one replay). */
tw_status tw_timeline_unmeasured(const tw_feed *all, const tw_device_info *dev, size_t ndev, const tw_mig_instance *mig,
                                 size_t nmig, tw_unmeasured_summary *unm);
/* One warning line per unmeasured GPU ("warning: 12 kernels, copies or
 * memsets (0.5 s) ran on GPU-..., which is not sampled: ..."), appended to
 * buf (NUL-terminated, truncated to cap). */
void tw_unmeasured_describe(const tw_unmeasured_summary *unm, char *buf, size_t cap);

/* ---------------------------------------------------------------- the GPUs to sample */

/* Resolves the devices to sample among the `nall` devices NVML lists (all):
 *   list      comma-separated items, each an NVML index ("1"), a CUDA
 *             ordinal ("cuda:1") or a UUID or unique UUID prefix
 *             ("GPU-3f2a..."); NULL = the default below;
 *   cuda_visible  the CUDA_VISIBLE_DEVICES the measured program gets (NULL
 *             when unset). A CUDA ordinal N is its N-th entry, itself an
 *             index or a UUID (prefix), as CUDA reads it; without it,
 *             ordinal N is NVML index N (CUDA and NVML number GPUs alike
 *             with CUDA_DEVICE_ORDER=PCI_BUS_ID, or on identical GPUs).
 * Default (list NULL): the GPUs cuda_visible names, else all of them.
 * Fills pos[0..*n) with positions into `all`, without repeats, in the order
 * given. Errors (TW_ENOTFOUND, TW_EINVAL) name the item and list the GPUs
 * NVML sees; a note (e.g. that CUDA_VISIBLE_DEVICES names a MIG instance, or
 * entries CUDA ignores) goes to note[note_len] ("" when none). */
/* tw_devices_check (a --device list's syntax alone): truewatt.h */
tw_status tw_devices_resolve(const char *list, const char *cuda_visible, const tw_device_info *all, size_t nall,
                             size_t *pos, size_t cap, size_t *n, char *note, size_t note_len);
/* The same, where a MIG instance's UUID (in cuda_visible or list, "MIG-...")
 * stands for its GPU: mig[0..nmig) are the instances of the GPUs in `all`
 * (tw_nvml_mig_instances); a note says which instance of which GPU, and that
 * the GPU's energy includes its other instances'. An instance not among
 * them: as tw_devices_resolve (a note for CUDA_VISIBLE_DEVICES, an error for
 * --device). */
tw_status tw_devices_resolve_mig(const char *list, const char *cuda_visible, const tw_device_info *all, size_t nall,
                                 const tw_mig_instance *mig, size_t nmig, size_t *pos, size_t cap, size_t *n,
                                 char *note, size_t note_len);

#endif
