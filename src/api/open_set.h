/* A session's open regions (internal): one stack per thread, so that a
 * begin and an end on different threads never wait for each other.
 *
 * Each thread that begins a region gets its own stack (found again through
 * a thread-local cache, the set's list only at its first use), guarded by
 * its own mutex: uncontended on the common path (begin and end on the same
 * thread), taken by another thread only to end a region this one began, and
 * by the sampler's thread a few times a second to see the oldest begin. */
#ifndef TW_API_OPEN_SET_H
#define TW_API_OPEN_SET_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "truewatt.h"

typedef struct tw_open_stack tw_open_stack;

typedef struct tw_open_set {
    pthread_mutex_t mu;    /* the list of stacks */
    tw_open_stack *stacks; /* one per thread that began a region, newest first */
    uint64_t id;           /* unique per set: a cache of a freed set's stack is never used */
} tw_open_set;

tw_status tw_open_init(tw_open_set *o);
/* Frees every stack and the names still open. */
void tw_open_free(tw_open_set *o);
/* Opens `name` at t0 on the calling thread's stack (the name is copied). */
tw_status tw_open_push(tw_open_set *o, const char *name, double t0);
/* Closes the innermost open region named `name` begun by the calling thread,
 * else the latest begun by any thread: its name (the caller frees it) and
 * begin. TW_EINVAL naming the open regions when there is none. */
tw_status tw_open_pop(tw_open_set *o, const char *fn, const char *name, char **name_out, double *t0_out);
/* The earliest begin of an open region (INFINITY: none). */
double tw_open_oldest(tw_open_set *o);

/* Each thread's grave: a lock-free list (linked by the caller) of what the
 * thread allocated and another thread is done with, for the thread itself to
 * free at its next call (memory goes back to the thread that took it: a
 * free elsewhere costs the allocating thread a slow allocation each time).
 * The calling thread's grave (NULL: out of memory). */
_Atomic(void *) *tw_open_grave(tw_open_set *o);
/* Every thread's grave taken (emptied), each passed to fn (at the set's end). */
void tw_open_each_grave(tw_open_set *o, void (*fn)(void *head, void *arg), void *arg);

#endif
