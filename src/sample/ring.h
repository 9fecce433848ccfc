/* A single-producer single-consumer lock-free ring of fixed-size rows.
 *
 * One thread pushes, one thread peeks and pops; neither ever waits for the
 * other. The capacity is a power of two, so positions wrap with a mask; the
 * head and tail counters only grow (64-bit: they do not wrap in practice).
 * A push into a full ring fails at once: the producer counts the row as
 * dropped and goes on, it never blocks. */
#ifndef TW_SAMPLE_RING_H
#define TW_SAMPLE_RING_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "truewatt.h"

#define TW_RING_CACHE_LINE 64

typedef struct tw_ring {
    unsigned char *buf; /* cap * row_size bytes */
    size_t cap;         /* rows, a power of two */
    size_t mask;        /* cap - 1 */
    size_t row_size;    /* bytes per row */
    /* Each counter is written by one side only; padding keeps them a cache
     * line apart (padding, not alignas: rings live in malloc'ed structs). */
    char pad0[TW_RING_CACHE_LINE];
    _Atomic uint64_t head; /* producer */
    char pad1[TW_RING_CACHE_LINE - sizeof(uint64_t)];
    _Atomic uint64_t tail; /* consumer */
    char pad2[TW_RING_CACHE_LINE - sizeof(uint64_t)];
} tw_ring;

/* cap must be a power of two >= 2, row_size > 0. */
tw_status tw_ring_init(tw_ring *r, size_t cap, size_t row_size);
void tw_ring_destroy(tw_ring *r);

/* Producer: copies row_size bytes of row in; false when the ring is full. */
bool tw_ring_push(tw_ring *r, const void *row);
/* Producer, zero-copy: the slot to fill (NULL when full), then commit it. */
void *tw_ring_reserve(tw_ring *r);
void tw_ring_commit(tw_ring *r);

/* Consumer: the oldest row, or NULL when empty; stays valid until the pop. */
const void *tw_ring_peek(tw_ring *r);
void tw_ring_pop(tw_ring *r);

/* Rows in the ring (exact from either side's own thread, a snapshot else). */
size_t tw_ring_count(tw_ring *r);

#endif
