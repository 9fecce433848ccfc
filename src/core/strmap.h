/* Strings stored once, each with a 64-bit value: an open-addressing hash
 * table (FNV-1a) of pointers to separately allocated copies. The table is
 * rehashed as it grows; the copies never move, so a key pointer stays valid
 * until tw_strmap_free. Used for the names an event set holds once
 * (trace/events.c), the ids of the run file's strings table (runfile/) and
 * the interned slice names of a Perfetto file (report/perfetto.c). */
#ifndef TW_CORE_STRMAP_H
#define TW_CORE_STRMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct tw_strmap {
    char **key;   /* NULL = empty slot */
    int64_t *val; /* the value of each slot */
    size_t cap;   /* a power of two, or 0 */
    size_t n;
} tw_strmap;

/* A zeroed tw_strmap is an empty map. */
void tw_strmap_free(tw_strmap *m);
/* The entry of s, added (a copy of s, value 0) when absent: *key gets the
 * map's copy, *added whether it was added now. Returns the address of its
 * value (valid until the next call), NULL when out of memory. */
int64_t *tw_strmap_get(tw_strmap *m, const char *s, const char **key, bool *added);

#endif
