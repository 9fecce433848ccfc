#define _GNU_SOURCE /* memfd_create */
#include "fuzz_common.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* Two anonymous in-memory files (memfd), named by their /proc/self/fd path:
 * a file on disk made every input cost a write-back on close (ext4 flushes a
 * file truncated and rewritten), which held the harnesses to a few hundred
 * executions a second. */
static int in_fd = -1;
static int out_fd = -1;
static char in_path[64];
static char out_path[64];

static int memfd_path(const char *name, char *path, size_t cap)
{
    int fd = memfd_create(name, MFD_CLOEXEC);
    if (fd < 0) fuzz_fail("memfd_create failed (Linux 3.17 or later is needed)");
    snprintf(path, cap, "/proc/self/fd/%d", fd);
    return fd;
}

/* The parsers open the path themselves: without /proc every input would be
 * refused as unreadable and the run would test nothing, so that stops it. */
static void check_path(int fd, const char *path)
{
    if (pwrite(fd, "ok", 2, 0) != 2) fuzz_fail("cannot write the in-memory file");
    char back[3] = "";
    FILE *f = fopen(path, "r");
    if (!f || fread(back, 1, 2, f) != 2 || strcmp(back, "ok") != 0)
        fuzz_fail("the in-memory file does not read back through /proc/self/fd (is /proc mounted?)");
    fclose(f);
}

static void make_files(void)
{
    if (in_fd >= 0) return;
    in_fd = memfd_path("tw-fuzz-in", in_path, sizeof in_path);
    out_fd = memfd_path("tw-fuzz-out", out_path, sizeof out_path);
    check_path(in_fd, in_path);
    check_path(out_fd, out_path);
}

const char *fuzz_file(const uint8_t *data, size_t size)
{
    make_files();
    size_t done = 0;
    while (done < size) {
        ssize_t k = pwrite(in_fd, data + done, size - done, (off_t)done);
        if (k <= 0) fuzz_fail("pwrite");
        done += (size_t)k;
    }
    /* truncated after writing: the pages already there are reused */
    if (ftruncate(in_fd, (off_t)size) != 0) fuzz_fail("ftruncate");
    return in_path;
}

FILE *fuzz_fopen(const uint8_t *data, size_t size)
{
    /* read-only: fmemopen does not write to the buffer in mode "r" */
    FILE *f = fmemopen((void *)(uintptr_t)data, size, "r");
    if (!f) fuzz_fail("fmemopen");
    return f;
}

const char *fuzz_out_path(void)
{
    make_files();
    return out_path;
}

void fuzz_fail(const char *what)
{
    fprintf(stderr, "fuzz: %s\n", what);
    abort();
}

uint8_t fuzz_u8(fuzz_bytes *b)
{
    if (b->n == 0) return 0;
    b->n--;
    return *b->p++;
}

uint64_t fuzz_u64(fuzz_bytes *b)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = v << 8 | fuzz_u8(b);
    return v;
}

const char *fuzz_str(fuzz_bytes *b, char *buf, size_t max)
{
    size_t len = fuzz_u8(b);
    if (len > max) len = max;
    if (len > b->n) len = b->n;
    for (size_t i = 0; i < len; i++)
        buf[i] = b->p[i] ? (char)b->p[i] : '?';
    buf[len] = '\0';
    b->p += len;
    b->n -= len;
    return buf;
}
