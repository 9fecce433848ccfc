/* The sampler's rows in memory (internal): the session (src/api/) and the
 * exporter (src/exporter/) read the merged rows as the writer thread
 * produces them, instead of (or besides) a trace file or a run file. */
#ifndef TW_SAMPLE_SAMPLER_SINK_H
#define TW_SAMPLE_SAMPLER_SINK_H

#include <stdbool.h>
#include <stdint.h>

#include "truewatt.h"

/* Called by the sampler's writer thread with every merged row, in time
 * order; the row holds every column (tw_sampler_reading(s, c)->name). It
 * must be quick: the writer drains the rings between calls. */
typedef void (*tw_sampler_sink_fn)(void *arg, const tw_sampler *s, const tw_row *row);

/* tw_sampler_start with a sink; cfg->trace_path and cfg->run may then both be NULL. */
tw_status tw_sampler_start_sink(const tw_sampler_config *cfg, tw_sampler_sink_fn fn, void *arg, tw_sampler **out);

/* The timeline's origin on CLOCK_MONOTONIC (ns). */
uint64_t tw_sampler_t0_mono_ns(const tw_sampler *s);

/* A sampled device's health while sampling (d: 0-based, in the order
 * sampled), safe from any thread: the polls of its readings that read
 * nothing (a failed call: NVML errors; the sample buffer alone coming back
 * empty is not one), and whether its readings stopped on a backend error (a
 * GPU lost, every read failing), with why. Used by the exporter. */
typedef struct tw_sampler_health {
    uint64_t failed_polls;
    bool stopped;
    char why[512];
} tw_sampler_health;

void tw_sampler_device_health(const tw_sampler *s, size_t d, tw_sampler_health *out);

#endif
