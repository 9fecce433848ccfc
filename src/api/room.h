/* Room at the end of an array whose live part is [off, n) (internal): the
 * energy line's knots and the anchor's reads both grow at the end and are
 * trimmed at the front. */
#ifndef TW_API_ROOM_H
#define TW_API_ROOM_H

#include <stdlib.h>
#include <string.h>

#include "core/error.h"

/* Makes room for one more element of `size` bytes in *v: the trimmed front
 * is reused when it is over half the array (the live part moves to the
 * start: *moved tells by how many elements), else the array doubles (from
 * `first`). TW_ENOMEM when it cannot grow. */
static inline tw_status tw_room_for_one(void **v, size_t size, size_t *off, size_t *n, size_t *cap, size_t first,
                                        size_t *moved)
{
    *moved = 0;
    if (*n < *cap) return TW_OK;
    if (*off > *n / 2) {
        memmove(*v, (char *)*v + *off * size, (*n - *off) * size);
        *moved = *off;
        *n -= *off;
        *off = 0;
        return TW_OK;
    }
    size_t c = *cap ? 2 * *cap : first;
    void *p = realloc(*v, c * size);
    if (!p) return tw_fail(TW_ENOMEM, "out of memory");
    *v = p;
    *cap = c;
    return TW_OK;
}

#endif
