/* An event set as a feed: see feed.h. */
#include "trace/feed.h"

static tw_status replay_set(const tw_feed *f, unsigned fields, tw_feed_fn fn, void *ctx)
{
    (void)fields; /* in memory: every field at no cost */
    const tw_events *ev = f->src;
    size_t n = tw_events_count(ev);
    tw_status st = TW_OK;
    for (size_t i = 0; i < n && st == TW_OK; i++)
        st = fn(ctx, tw_events_get(ev, i));
    return st;
}

tw_feed tw_feed_of_events(const tw_events *ev) { return (tw_feed){replay_set, (void *)ev, tw_events_count(ev)}; }
