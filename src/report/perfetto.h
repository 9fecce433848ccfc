/* A Perfetto trace in Perfetto's native protobuf format (Trace { repeated
 * TracePacket }) for ui.perfetto.dev: a group of tracks per GPU holding a
 * counter track per reading of the sampler trace (one value per update, not
 * per poll), the corrected power (the estimate's model), a slice track per
 * stream for kernels, memcpys and memsets, and one for NVTX ranges, each
 * slice with its energy as an argument (energy_above_idle_uJ, an integer of
 * microjoules; a launch of a name whose figure is one-sided, below
 * resolution or at the power bound, also with energy_status and its share of
 * the upper bound, energy_upper_uJ). Names are interned, timestamps are deltas on a
 * sequence-scoped incremental clock (ns), and the file is written through
 * one buffer: ~36 bytes per launch. */
#ifndef TW_REPORT_PERFETTO_H
#define TW_REPORT_PERFETTO_H

/* The symbols carry the library's prefix (tests/meta/static_symbols.sh); the call sites keep the short names. */
#define perfetto_write tw_perfetto_write

#include <stddef.h>

#include "estimate/estimator.h"
#include "trace/feed.h"
#include "truewatt.h"

typedef struct perfetto_device {
    int index;          /* the GPU's number, in its track group's name */
    const char *prefix; /* its trace columns' prefix ("" when the trace has one device) */
    const char *name;   /* e.g. "NVIDIA H100 80GB HBM3"; NULL or "" when unknown */
    /* The corrected power track: the estimate of this device and the feed it
     * was made from (its event energies are per event of est_events); NULL: none. */
    const tw_estimate *est;
    const tw_feed *est_events;
} perfetto_device;

/* Writes the file at `path`. trace_path may be NULL (no counters), events may
 * be NULL (no slices; else replayed once, each track's events (a stream's of
 * a GPU, NVTX ranges) in order of start: TW_EINVAL when one starts before the
 * one before it on its track); energy (NULL, or an estimate whose event
 * energies, tw_estimate_event_energy_j, are per event of the feed, NaN = unknown)
 * adds each slice's attributed energy as its argument energy_above_idle_uJ;
 * provenance (may be NULL) is the description of each GPU's track group. */
tw_status perfetto_write(const char *path, const char *trace_path, const perfetto_device *dev, size_t ndev,
                         const tw_feed *events, const tw_estimate *energy, const char *provenance);

#endif
