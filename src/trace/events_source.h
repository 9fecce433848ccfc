/* Where the events of a loaded events file came from (internal): the file
 * and each event's line, so that later checks (an event outside the trace)
 * can name them as a parse error would. */
#ifndef TW_TRACE_EVENTS_SOURCE_H
#define TW_TRACE_EVENTS_SOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "truewatt.h"

/* The path tw_events_load read; NULL for a set built with tw_events_add. */
const char *tw_events_source(const tw_events *ev);
/* Event i's line in that file; 0 when it was added by hand. */
uint64_t tw_events_line(const tw_events *ev, size_t i);
/* "PATH:LINE" for a loaded event, else "event N" (1-based), into buf; snprintf's result. */
int tw_events_where(const tw_events *ev, size_t i, char *buf, size_t cap);

/* A set read from elsewhere than an events CSV (a run file's tables): its
 * source (copied) and how an event's record is named there, e.g. "activities
 * row" (then tw_events_where gives "SOURCE: activities row N"); false when out
 * of memory. */
typedef const char *(*tw_events_record_fn)(const tw_event *e);
bool tw_events_set_source(tw_events *ev, const char *source, tw_events_record_fn record);
/* The record number of the event added last (its line, its row id). */
void tw_events_set_last_line(tw_events *ev, uint64_t line);
/* Room for n events in all, when the source knows how many come (a run
 * file's rows): no doubling past them; false when out of memory. */
bool tw_events_reserve(tw_events *ev, size_t n);
/* The set's copy of s (stored once, whatever the number of events using
 * it); NULL for NULL or when out of memory. */
const char *tw_events_intern(tw_events *ev, const char *s);
/* tw_events_add for an event whose strings are all the set's own copies
 * (tw_events_intern): no string is looked up, for a source that holds few
 * strings for many events (a run file); `line` its record number. */
tw_status tw_events_add_interned(tw_events *ev, const tw_event *e, uint64_t line);
/* ev again, with one more owner (each tw_events_free drops one; the last
 * frees it): for a reader that would otherwise copy all of it (a run's
 * millions of launches). A shared set is read-only: adding to it fails. */
tw_events *tw_events_share(tw_events *ev);

#endif
