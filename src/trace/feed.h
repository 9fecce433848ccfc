/* A timeline replayed one event at a time (internal): what reads the events
 * of a run without holding them. A run of tens of millions of launches is
 * read from its run file again on each replay (runfile's tw_run_feed), an
 * event set from memory (tw_feed_of_events); the estimator, the Perfetto
 * writer and the per-GPU split take a feed, so that the report's memory
 * grows with names and readings, not with launches.
 *
 * A replay calls fn once per event, in the same order every time (by start,
 * ties in the order recorded), until fn returns other than TW_OK (that
 * status is returned). An event's position in the replay (0, 1, ...) is its
 * index: the estimator's per-event energies are by it. Strings handed to fn
 * stay valid, at the same address, for as long as the feed's source lives. */
#ifndef TW_TRACE_FEED_H
#define TW_TRACE_FEED_H

#include <stddef.h>

#include "truewatt.h"

typedef tw_status (*tw_feed_fn)(void *ctx, const tw_event *e);

/* The fields of an activity a replay's consumer reads besides its name,
 * kind and span (which every replay gives, and an NVTX range's every
 * field): a source may leave the others unknown (-1, NULL), so that a run
 * file reads fewer of its columns (the estimator reads the span alone). */
enum {
    TW_FEED_SPAN = 0u,   /* name, kind, start_s, end_s, mangled */
    TW_FEED_DEVICE = 1u, /* device, device_uuid */
    TW_FEED_STREAM = 2u, /* stream */
    TW_FEED_ALL = 3u
};

typedef struct tw_feed {
    /* fields: TW_FEED_* the consumer reads; a feed over another asks it for those and its own */
    tw_status (*replay)(const struct tw_feed *f, unsigned fields, tw_feed_fn fn, void *ctx);
    void *src;
    size_t hint; /* about how many events a replay gives (room to reserve; 0: unknown) */
} tw_feed;

static inline tw_status tw_feed_replay(const tw_feed *f, tw_feed_fn fn, void *ctx)
{
    return f->replay(f, TW_FEED_ALL, fn, ctx);
}
static inline tw_status tw_feed_replay_fields(const tw_feed *f, unsigned fields, tw_feed_fn fn, void *ctx)
{
    return f->replay(f, fields, fn, ctx);
}

/* A set's events in its order (sort it first for the order by start). */
tw_feed tw_feed_of_events(const tw_events *ev);

#endif
