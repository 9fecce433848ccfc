/* A binary min-heap of (key, id): see keyheap.h. */
#include "core/keyheap.h"

#include <stdlib.h>

static void swap(tw_keyheap_item *a, tw_keyheap_item *b)
{
    tw_keyheap_item t = *a;
    *a = *b;
    *b = t;
}

bool tw_keyheap_push(tw_keyheap *h, double key, size_t id)
{
    if (h->n == h->cap) {
        size_t cap = h->cap ? 2 * h->cap : 64;
        tw_keyheap_item *v = realloc(h->v, cap * sizeof *v);
        if (!v) return false;
        h->v = v;
        h->cap = cap;
    }
    size_t k = h->n++;
    h->v[k] = (tw_keyheap_item){key, id};
    while (k > 0 && h->v[(k - 1) / 2].key > h->v[k].key) {
        swap(&h->v[(k - 1) / 2], &h->v[k]);
        k = (k - 1) / 2;
    }
    return true;
}

bool tw_keyheap_pop_upto(tw_keyheap *h, double key, size_t *id)
{
    if (h->n == 0 || !(h->v[0].key <= key)) return false;
    *id = h->v[0].id;
    h->v[0] = h->v[--h->n];
    for (size_t k = 0;;) {
        size_t l = 2 * k + 1, r = l + 1, m = k;
        if (l < h->n && h->v[l].key < h->v[m].key) m = l;
        if (r < h->n && h->v[r].key < h->v[m].key) m = r;
        if (m == k) break;
        swap(&h->v[m], &h->v[k]);
        k = m;
    }
    return true;
}

void tw_keyheap_free(tw_keyheap *h)
{
    free(h->v);
    *h = (tw_keyheap){0};
}
