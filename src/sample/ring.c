/* SPSC ring: the producer owns head, the consumer owns tail. A slot is
 * published by the release store of head after it is written, and handed
 * back by the release store of tail after it is read; each side reads the
 * other's counter with acquire, so a slot's bytes are never read while they
 * are written. */
#include "sample/ring.h"

#include <stdlib.h>
#include <string.h>

#include "core/error.h"

tw_status tw_ring_init(tw_ring *r, size_t cap, size_t row_size)
{
    if (!r) return tw_fail(TW_EINVAL, "tw_ring_init: NULL ring");
    memset(r, 0, sizeof *r);
    if (cap < 2 || (cap & (cap - 1)) != 0)
        return tw_fail(TW_EINVAL, "ring capacity must be a power of two >= 2 (got %zu)", cap);
    if (row_size == 0) return tw_fail(TW_EINVAL, "ring row size must be > 0");
    if (cap > SIZE_MAX / row_size)
        return tw_fail(TW_EINVAL, "ring of %zu rows of %zu bytes is too large", cap, row_size);
    r->buf = malloc(cap * row_size);
    if (!r->buf) return tw_fail(TW_ENOMEM, "out of memory (ring of %zu rows of %zu bytes)", cap, row_size);
    r->cap = cap;
    r->mask = cap - 1;
    r->row_size = row_size;
    atomic_init(&r->head, 0);
    atomic_init(&r->tail, 0);
    return TW_OK;
}

void tw_ring_destroy(tw_ring *r)
{
    if (!r) return;
    free(r->buf);
    r->buf = NULL;
    r->cap = r->mask = r->row_size = 0;
}

void *tw_ring_reserve(tw_ring *r)
{
    uint64_t head = atomic_load_explicit(&r->head, memory_order_relaxed);
    uint64_t tail = atomic_load_explicit(&r->tail, memory_order_acquire);
    if (head - tail >= r->cap) return NULL;
    return r->buf + (size_t)(head & r->mask) * r->row_size;
}

void tw_ring_commit(tw_ring *r)
{
    uint64_t head = atomic_load_explicit(&r->head, memory_order_relaxed);
    atomic_store_explicit(&r->head, head + 1, memory_order_release);
}

bool tw_ring_push(tw_ring *r, const void *row)
{
    void *slot = tw_ring_reserve(r);
    if (!slot) return false;
    memcpy(slot, row, r->row_size);
    tw_ring_commit(r);
    return true;
}

const void *tw_ring_peek(tw_ring *r)
{
    uint64_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
    uint64_t head = atomic_load_explicit(&r->head, memory_order_acquire);
    if (head == tail) return NULL;
    return r->buf + (size_t)(tail & r->mask) * r->row_size;
}

void tw_ring_pop(tw_ring *r)
{
    uint64_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
    atomic_store_explicit(&r->tail, tail + 1, memory_order_release);
}

size_t tw_ring_count(tw_ring *r)
{
    uint64_t tail = atomic_load_explicit(&r->tail, memory_order_acquire);
    uint64_t head = atomic_load_explicit(&r->head, memory_order_acquire);
    return (size_t)(head - tail);
}
