/* A min-heap of (key, id) pairs (internal): what a streaming pass needs
 * to meet its records by time (the earliest end, the earliest window). */
#ifndef TW_CORE_KEYHEAP_H
#define TW_CORE_KEYHEAP_H

#include <stdbool.h>
#include <stddef.h>

typedef struct tw_keyheap_item {
    double key;
    size_t id;
} tw_keyheap_item;

typedef struct tw_keyheap {
    tw_keyheap_item *v;
    size_t n, cap;
} tw_keyheap;

/* false when out of memory (the heap unchanged) */
bool tw_keyheap_push(tw_keyheap *h, double key, size_t id);
/* The smallest key's id, taken off, when that key is <= `key` (INFINITY:
 * any); false when empty or the smallest is larger. Ties in no set order. */
bool tw_keyheap_pop_upto(tw_keyheap *h, double key, size_t *id);
void tw_keyheap_free(tw_keyheap *h);

#endif
