/* Chrome trace-event JSON ({"traceEvents":[...]}, timestamps in µs) for
 * ui.perfetto.dev or chrome://tracing: each reading of a sampler trace as a
 * counter track (one "C" event per update, not per poll), kernels, memcpys
 * and memsets as "X" slices with pid = device and tid = stream, NVTX ranges
 * on a thread of their own, and names for the processes and threads. */
#ifndef TW_REPORT_PERFETTO_H
#define TW_REPORT_PERFETTO_H

#include <stddef.h>

#include "truewatt.h"

/* The thread id that NVTX ranges are drawn on (streams use their own ids). */
#define PERFETTO_NVTX_TID 1000000000LL

typedef struct perfetto_device {
    int index;          /* the pid of its tracks */
    const char *prefix; /* its trace columns' prefix ("" when the trace has one device) */
    const char *name;   /* e.g. "NVIDIA H100 80GB HBM3"; NULL or "" when unknown */
} perfetto_device;

/* Writes the file at `path`. trace_path may be NULL (no counters), events may
 * be NULL (no slices); event_energy_j (NULL, or one per event, NaN = unknown)
 * adds each slice's attributed energy to its args; provenance (may be NULL)
 * goes into the file's "metadata". */
tw_status perfetto_write(const char *path, const char *trace_path, const perfetto_device *dev, size_t ndev,
                         const tw_events *events, const double *event_energy_j, const char *provenance);

#endif
