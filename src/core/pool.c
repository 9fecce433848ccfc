/* Records of one size reused by id: see pool.h. */
#include "core/pool.h"

#include <stdlib.h>
#include <string.h>

void tw_pool_init(tw_pool *p, size_t item_size) { *p = (tw_pool){.size = item_size}; }

static bool grow(tw_pool *p)
{
    size_t cap = p->cap ? 2 * p->cap : 64;
    char *items = realloc(p->items, cap * p->size);
    if (!items) return false;
    p->items = items;
    size_t *ids = realloc(p->free_ids, cap * sizeof *ids);
    if (!ids) return false;
    p->free_ids = ids;
    p->cap = cap;
    return true;
}

bool tw_pool_alloc(tw_pool *p, size_t *id)
{
    if (p->n_free)
        *id = p->free_ids[--p->n_free];
    else if (p->n < p->cap || grow(p))
        *id = p->n++;
    else
        return false;
    memset(tw_pool_at(p, *id), 0, p->size);
    return true;
}

void tw_pool_release(tw_pool *p, size_t id) { p->free_ids[p->n_free++] = id; }

void tw_pool_free(tw_pool *p)
{
    free(p->items);
    free(p->free_ids);
    *p = (tw_pool){0};
}
