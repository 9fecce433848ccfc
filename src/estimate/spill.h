/* Fixed-size records spilled to a temporary file and read back in chunks
 * (internal): the estimator keeps its launches here, not in memory, so that
 * its memory grows with names and readings, not with launches (issue 16).
 * The file is unlinked as soon as it is made: nothing is left behind, even
 * on a crash. It lies in $TMPDIR (else /tmp); the page cache, not the
 * process, holds what is read often. */
#ifndef TW_ESTIMATE_SPILL_H
#define TW_ESTIMATE_SPILL_H

#include <stdbool.h>
#include <stddef.h>

#include "truewatt.h"

typedef struct tw_spill {
    int fd;      /* -1: none */
    size_t size; /* bytes per record */
    size_t n;    /* records written */
    unsigned char *wbuf;
    size_t wlen, wcap; /* the append buffer (records not yet in the file) */
} tw_spill;

/* An empty spill of records of `size` bytes. */
tw_status tw_spill_open(tw_spill *s, size_t size);
void tw_spill_close(tw_spill *s);

tw_status tw_spill_append(tw_spill *s, const void *rec);
/* Everything appended into the file (before reading it back). */
tw_status tw_spill_flush(tw_spill *s);
/* Records [i, i + n) into rec / over what is there, after tw_spill_flush. */
tw_status tw_spill_read(const tw_spill *s, size_t i, void *rec, size_t n);
tw_status tw_spill_write(tw_spill *s, size_t i, const void *rec, size_t n);

/* A sequential reader with its own chunk: many may read one spill at once.
 * The chunk is the file's pages mapped (a pass reads the page cache where
 * it lies, not a copy of it: a third of a pass's time went to copying),
 * else read into a buffer of its own. */
typedef struct tw_spill_reader {
    const tw_spill *s;
    unsigned char *buf;
    size_t base, len, cap; /* buf holds records [base, base + len) */
    size_t pos;            /* the next record */
    void *map;             /* the chunk's pages (NULL: none; buf then malloc'd when needed) */
    size_t map_len;
    bool own; /* buf is malloc'd */
} tw_spill_reader;

tw_status tw_spill_reader_open(tw_spill_reader *r, const tw_spill *s);
void tw_spill_reader_close(tw_spill_reader *r);
/* The record at r->pos (NULL at the end, or *st set on a read error);
 * valid until the reader moves out of its chunk. Inside the chunk it is
 * one comparison (every pass over the launches asks for each one). */
const void *tw_spill_load(tw_spill_reader *r, tw_status *st);
static inline const void *tw_spill_peek(tw_spill_reader *r, tw_status *st)
{
    if (r->pos - r->base < r->len) return r->buf + (r->pos - r->base) * r->s->size; /* pos < base wraps: not */
    return tw_spill_load(r, st);
}

#endif
