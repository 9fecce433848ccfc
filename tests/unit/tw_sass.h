/* SASS helpers for the unit tests: find ptxas and nvdisasm, split
 * `nvdisasm -c` output into kernels and lines, find a kernel's loops and
 * count the instructions that match a pattern in them. */
#ifndef TW_SASS_H
#define TW_SASS_H

#include <regex.h>
#include <stddef.h>

typedef struct text {
    char *p;
    size_t len, cap;
} text;
/* One kernel of the disassembly: its SASS lines (labels "L:" and
 * instructions without their predicate guard), pointers into the buffer. */
typedef struct kernel {
    const char *name;
    char **lines;
    int n, cap;
} kernel;
typedef struct sass {
    char *buf;
    kernel *k;
    int nk;
} sass;

/* 1 when path is an executable file. */
int executable(const char *path);
/* tool: $env, else on PATH, else /usr/local/cuda/bin; 1 when found (path in out). */
int find_tool(const char *env, const char *tool, char *out, size_t cap);
/* nvdisasm from the pip package nvidia-cuda-nvdisasm; 1 when found. */
int find_pip_nvdisasm(char *out, size_t cap);

void put(text *t, const char *s, size_t n);
void puts_text(text *t, const char *s);
/* Appends s with every `from` replaced by `to`. */
void put_replaced(text *t, const char *s, const char *from, const char *to);

/* Splits nvdisasm -c output (taking ownership of buf) into kernels. */
void sass_parse(char *buf, sass *s);
void sass_free(sass *s);
const kernel *sass_kernel(const sass *s, const char *name);
/* The kernel's widest loop (label .. branch back), 1 when there is one. */
int sass_loop(const kernel *k, int *lo, int *hi);
/* Every loop, in order of its branch back: up to cap spans; returns how many. */
int sass_loops(const kernel *k, int *lo, int *hi, int cap);
/* Instructions in lines lo..hi matching re. */
int count_matches(const kernel *k, int lo, int hi, const regex_t *re);
/* Lines lo..hi (all when hi < lo) to stderr. */
void print_loop(const kernel *k, int lo, int hi);

#endif
