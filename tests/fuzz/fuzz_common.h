/* Shared helpers of the libFuzzer harnesses (tests/fuzz/fuzz_*.c).
 *
 * Most parsers read a named file (their messages name it), so the input is
 * written to one in-memory file per process (memfd, named /proc/self/fd/N),
 * rewritten for every input: the harness then calls the same entry point the
 * command line uses. Parsers that take a FILE * read the input in place. */
#ifndef TW_FUZZ_COMMON_H
#define TW_FUZZ_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* libFuzzer calls this once per input (defined by each harness). */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The path of the per-process in-memory file, now holding data[0..size). */
const char *fuzz_file(const uint8_t *data, size_t size);
/* data[0..size) as a stream opened for reading (fmemopen; fclose it). */
FILE *fuzz_fopen(const uint8_t *data, size_t size);
/* A second in-memory file's path (for round trips through a writer). */
const char *fuzz_out_path(void);
/* Stops the run with a message: a property of the parser did not hold. */
void fuzz_fail(const char *what);

/* Structured inputs: bytes taken from the front of the input. */
typedef struct fuzz_bytes {
    const uint8_t *p;
    size_t n;
} fuzz_bytes;

uint8_t fuzz_u8(fuzz_bytes *b);
uint64_t fuzz_u64(fuzz_bytes *b);
/* A string of up to `max` bytes (its length is the next byte), copied into
 * buf[max + 1] and NUL-terminated; NUL bytes inside become '?'. */
const char *fuzz_str(fuzz_bytes *b, char *buf, size_t max);

#endif
