#include "fuzz_common.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char in_path[4096];
static char out_path[4096];
static int in_fd = -1;

static void remove_files(void)
{
    if (in_path[0]) unlink(in_path);
    if (out_path[0]) unlink(out_path);
}

static void make_paths(void)
{
    if (in_fd >= 0) return;
    const char *dir = getenv("TW_TMPDIR");
    if (!dir || !*dir) dir = getenv("TMPDIR");
    if (!dir || !*dir) dir = "/tmp";
    snprintf(in_path, sizeof in_path, "%s/tw-fuzz-in.XXXXXX", dir);
    in_fd = mkstemp(in_path);
    if (in_fd < 0) fuzz_fail("cannot create the temporary input file (TW_TMPDIR, TMPDIR)");
    snprintf(out_path, sizeof out_path, "%s.out", in_path);
    atexit(remove_files);
}

const char *fuzz_file(const uint8_t *data, size_t size)
{
    make_paths();
    if (ftruncate(in_fd, 0) != 0) fuzz_fail("ftruncate");
    size_t done = 0;
    while (done < size) {
        ssize_t k = pwrite(in_fd, data + done, size - done, (off_t)done);
        if (k <= 0) fuzz_fail("pwrite");
        done += (size_t)k;
    }
    return in_path;
}

FILE *fuzz_fopen(const uint8_t *data, size_t size)
{
    FILE *f = fopen(fuzz_file(data, size), "r");
    if (!f) fuzz_fail("cannot reopen the temporary input file");
    return f;
}

const char *fuzz_out_path(void)
{
    make_paths();
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
