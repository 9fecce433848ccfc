/* Records spilled to a temporary file: see spill.h. */
#define _DEFAULT_SOURCE /* MAP_POPULATE */
#include "estimate/spill.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/error.h"

#define SPILL_CHUNK_BYTES (64 * 1024) /* the append buffer, and a reader's that cannot map the file */
#define SPILL_MAP_BYTES (128 * 1024)  /* a reader's chunk of the file mapped */

tw_status tw_spill_open(tw_spill *s, size_t size)
{
    memset(s, 0, sizeof *s);
    s->fd = -1;
    s->size = size;
    const char *dir = getenv("TMPDIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/truewatt-spill.XXXXXX", dir && *dir ? dir : "/tmp");
    s->fd = mkstemp(path);
    if (s->fd < 0) return tw_fail(TW_EIO, "%s: cannot make a temporary file: %s", path, strerror(errno));
    unlink(path); /* gone when closed, or when the process ends */
    s->wcap = SPILL_CHUNK_BYTES / size * size;
    if (s->wcap == 0) s->wcap = size;
    if (!(s->wbuf = malloc(s->wcap))) {
        tw_spill_close(s);
        return tw_fail(TW_ENOMEM, "out of memory");
    }
    return TW_OK;
}

void tw_spill_close(tw_spill *s)
{
    if (s->fd >= 0) close(s->fd);
    free(s->wbuf);
    memset(s, 0, sizeof *s);
    s->fd = -1;
}

/* All of [p, p + len) written at offset off (else read into it), retried
 * on short transfers. */
static tw_status transfer_at(int fd, unsigned char *p, size_t len, off_t off, bool out)
{
    while (len > 0) {
        ssize_t n = out ? pwrite(fd, p, len, off) : pread(fd, p, len, off);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0)
            return tw_fail(TW_EIO, "temporary file: cannot %s: %s", out ? "write" : "read",
                           n < 0 ? strerror(errno)
                           : out ? "no space"
                                 : "too short");
        p += n;
        len -= (size_t)n;
        off += n;
    }
    return TW_OK;
}

tw_status tw_spill_flush(tw_spill *s)
{
    if (s->wlen == 0) return TW_OK;
    size_t in_file = s->n - s->wlen / s->size;
    tw_status st = transfer_at(s->fd, s->wbuf, s->wlen, (off_t)(in_file * s->size), true);
    s->wlen = 0;
    return st;
}

tw_status tw_spill_append(tw_spill *s, const void *rec)
{
    if (s->wlen + s->size > s->wcap) {
        tw_status st = tw_spill_flush(s);
        if (st != TW_OK) return st;
    }
    memcpy(s->wbuf + s->wlen, rec, s->size);
    s->wlen += s->size;
    s->n++;
    return TW_OK;
}

tw_status tw_spill_read(const tw_spill *s, size_t i, void *rec, size_t n)
{
    return transfer_at(s->fd, rec, n * s->size, (off_t)(i * s->size), false);
}

tw_status tw_spill_write(tw_spill *s, size_t i, const void *rec, size_t n)
{
    return transfer_at(s->fd, (unsigned char *)rec, n * s->size, (off_t)(i * s->size), true);
}

tw_status tw_spill_reader_open(tw_spill_reader *r, const tw_spill *s)
{
    memset(r, 0, sizeof *r);
    r->s = s;
    return TW_OK;
}

static void unmap(tw_spill_reader *r)
{
    if (r->map) munmap(r->map, r->map_len);
    r->map = NULL;
}

void tw_spill_reader_close(tw_spill_reader *r)
{
    unmap(r);
    if (r->own) free(r->buf);
    r->buf = NULL;
    r->own = false;
}

/* Records [pos, pos + n) mapped (false: the file cannot be mapped). */
static bool map_chunk(tw_spill_reader *r, size_t pos, size_t n)
{
    static long page;
    if (!page) page = sysconf(_SC_PAGESIZE);
    if (page <= 0) return false;
    const tw_spill *s = r->s;
    off_t start = (off_t)(pos * s->size), from = start / page * page;
    size_t len = (size_t)(start - from) + n * s->size;
    void *m = mmap(NULL, len, PROT_READ, MAP_SHARED | MAP_POPULATE, s->fd, from);
    if (m == MAP_FAILED) return false;
    r->map = m;
    r->map_len = len;
    r->buf = (unsigned char *)m + (start - from);
    return true;
}

const void *tw_spill_load(tw_spill_reader *r, tw_status *st)
{
    const tw_spill *s = r->s;
    if (r->pos >= s->n) return NULL;
    if (r->pos < r->base || r->pos >= r->base + r->len) {
        unmap(r);
        size_t cap = SPILL_MAP_BYTES / s->size ? SPILL_MAP_BYTES / s->size : 1;
        size_t n = s->n - r->pos < cap ? s->n - r->pos : cap;
        if (!r->own && !map_chunk(r, r->pos, n)) { /* read instead, into a buffer of its own from now on */
            r->cap = SPILL_CHUNK_BYTES / s->size ? SPILL_CHUNK_BYTES / s->size : 1;
            if (!(r->buf = malloc(r->cap * s->size))) {
                *st = tw_fail(TW_ENOMEM, "out of memory");
                return NULL;
            }
            r->own = true;
        }
        if (r->own) {
            n = s->n - r->pos < r->cap ? s->n - r->pos : r->cap;
            if ((*st = tw_spill_read(s, r->pos, r->buf, n)) != TW_OK) return NULL;
        }
        r->base = r->pos;
        r->len = n;
    }
    return r->buf + (r->pos - r->base) * s->size;
}
