/* Records of one size reused by id (internal): a streaming pass holds the
 * events running at one time, each freed when it is done, so that its
 * memory grows with the largest number running, not with the events. */
#ifndef TW_CORE_POOL_H
#define TW_CORE_POOL_H

#include <stdbool.h>
#include <stddef.h>

typedef struct tw_pool {
    char *items;
    size_t size, n, cap;
    size_t *free_ids; /* room for cap ids: a release never fails */
    size_t n_free;
} tw_pool;

void tw_pool_init(tw_pool *p, size_t item_size);
/* A zeroed record's id; false when out of memory. Pointers from
 * tw_pool_at stay valid until the next tw_pool_alloc. */
bool tw_pool_alloc(tw_pool *p, size_t *id);
static inline void *tw_pool_at(const tw_pool *p, size_t id) { return p->items + id * p->size; }
void tw_pool_release(tw_pool *p, size_t id);
void tw_pool_free(tw_pool *p);

#endif
