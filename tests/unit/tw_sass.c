/* SASS helpers for the unit tests (tw_sass.h). */
#include "tw_sass.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tw_test.h"

/* ---------------------------------------------------------------- tools */

int executable(const char *path) { return path && *path && access(path, X_OK) == 0; }

/* tool: $env, else on PATH, else /usr/local/cuda/bin; 1 when found. */
int find_tool(const char *env, const char *tool, char *out, size_t cap)
{
    if (!out || cap == 0) return 0;
    const char *v = getenv(env);
    if (executable(v)) {
        snprintf(out, cap, "%s", v);
        return 1;
    }
    const char *path = getenv("PATH");
    char dirs[8192];
    snprintf(dirs, sizeof dirs, "%s:/usr/local/cuda/bin", path ? path : "");
    char *save = NULL;
    for (char *d = strtok_r(dirs, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
        snprintf(out, cap, "%s/%s", *d ? d : ".", tool);
        if (executable(out)) return 1;
    }
    return 0;
}

/* nvdisasm from the pip package nvidia-cuda-nvdisasm: <site>/nvidia/cu*\/bin/nvdisasm. */
int find_pip_nvdisasm(char *out, size_t cap)
{
    if (!out || cap == 0) return 0;
    char *got = NULL;
    int rc = tw_test_run("python3 -c \"import glob, nvidia; c = [f for p in nvidia.__path__ for f in "
                         "sorted(glob.glob(p + '/cu*/bin/nvdisasm'))]; print(c[-1] if c else '')\" 2>/dev/null",
                         &got);
    got[strcspn(got, "\n")] = '\0';
    int ok = rc == 0 && executable(got);
    if (ok) snprintf(out, cap, "%s", got);
    free(got);
    return ok;
}

/* ---------------------------------------------------------------- SASS */

void put(text *t, const char *s, size_t n)
{
    if (t->len + n + 1 > t->cap) {
        while (t->len + n + 1 > t->cap)
            t->cap = t->cap ? t->cap * 2 : 1 << 20;
        t->p = realloc(t->p, t->cap);
        assert_non_null(t->p);
    }
    memcpy(t->p + t->len, s, n);
    t->len += n;
    t->p[t->len] = '\0';
}

void puts_text(text *t, const char *s) { put(t, s, strlen(s)); }

/* Appends s with every `from` replaced by `to`. */
void put_replaced(text *t, const char *s, const char *from, const char *to)
{
    size_t nf = strlen(from);
    for (const char *hit; (hit = strstr(s, from)) != NULL; s = hit + nf) {
        put(t, s, (size_t)(hit - s));
        puts_text(t, to);
    }
    puts_text(t, s);
}

void sass_free(sass *s)
{
    for (int i = 0; i < s->nk; i++)
        free(s->k[i].lines);
    free(s->k);
    free(s->buf);
}

static void add_line(kernel *k, char *l)
{
    if (k->n == k->cap) {
        k->cap = k->cap ? k->cap * 2 : 256;
        k->lines = realloc(k->lines, (size_t)k->cap * sizeof *k->lines);
        assert_non_null(k->lines);
    }
    k->lines[k->n++] = l;
}

/* Splits nvdisasm -c output (taking ownership of buf) into kernels. */
void sass_parse(char *buf, sass *s)
{
    memset(s, 0, sizeof *s);
    s->buf = buf;
    int capk = 0;
    kernel *cur = NULL;
    for (char *l = buf, *next; l && *l; l = next) {
        next = strchr(l, '\n');
        if (next) *next++ = '\0';
        char *sec = strstr(l, ".section\t.text.");
        if (!sec) sec = strstr(l, ".section .text.");
        if (sec) {
            char *name = sec + strlen(".section\t.text.");
            name[strcspn(name, ",")] = '\0';
            if (s->nk == capk) {
                capk = capk ? capk * 2 : 64;
                s->k = realloc(s->k, (size_t)capk * sizeof *s->k);
                assert_non_null(s->k);
            }
            cur = &s->k[s->nk++];
            memset(cur, 0, sizeof *cur);
            cur->name = name;
            continue;
        }
        if (!cur) continue;
        while (*l == ' ' || *l == '\t')
            l++;
        if (strncmp(l, ".L_", 3) == 0 && l[strlen(l) - 1] == ':') {
            add_line(cur, l);
            continue;
        }
        if (strncmp(l, "/*", 2) != 0) continue;
        char *end = strstr(l, "*/");
        if (!end) continue;
        char *ins = end + 2;
        while (*ins == ' ')
            ins++;
        if (*ins == '@') /* predicate guard: @P0, @!P1, @!UP0, @PT */
            ins += strcspn(ins, " ") + (ins[strcspn(ins, " ")] ? 1 : 0);
        char *semi = strrchr(ins, ';');
        if (semi) *semi = '\0';
        size_t n = strlen(ins);
        while (n > 0 && ins[n - 1] == ' ')
            ins[--n] = '\0';
        if (n > 0) add_line(cur, ins);
    }
}

const kernel *sass_kernel(const sass *s, const char *name)
{
    for (int i = 0; i < s->nk; i++)
        if (strcmp(s->k[i].name, name) == 0) return &s->k[i];
    return NULL;
}

/* The kernel's main loop: the widest span from a label to a branch back to
 * it ("BRA `(.L_x_3)", "BRA.U !UP0, `(.L_x_2)"). 0 when there is none. */
int sass_loop(const kernel *k, int *lo, int *hi)
{
    int best = -1;
    for (int i = 0; i < k->n; i++) {
        if (strncmp(k->lines[i], "BRA", 3) != 0) continue;
        const char *t = strstr(k->lines[i], "`(");
        if (!t) continue;
        char label[64];
        size_t n = strcspn(t + 2, ")");
        if (n + 2 > sizeof label) continue;
        snprintf(label, sizeof label, "%.*s:", (int)n, t + 2);
        for (int j = 0; j < i; j++)
            if (strcmp(k->lines[j], label) == 0 && i - j > best) {
                best = i - j;
                *lo = j;
                *hi = i;
            }
    }
    return best > 0;
}

int count_matches(const kernel *k, int lo, int hi, const regex_t *re)
{
    int n = 0;
    for (int i = lo; i <= hi; i++)
        if (k->lines[i][0] != '.' && regexec(re, k->lines[i], 0, NULL, 0) == 0) n++;
    return n;
}

void print_loop(const kernel *k, int lo, int hi)
{
    if (hi < lo) {
        lo = 0;
        hi = k->n - 1;
    }
    int shown = 0;
    for (int i = lo; i <= hi && shown < 4000; i++, shown++)
        fprintf(stderr, "    %s\n", k->lines[i]);
    if (hi - lo + 1 > shown) fprintf(stderr, "    ... (%d more lines)\n", hi - lo + 1 - shown);
}

int sass_loops(const kernel *k, int *lo, int *hi, int cap)
{
    int n = 0;
    for (int i = 0; i < k->n && n < cap; i++) {
        if (strncmp(k->lines[i], "BRA", 3) != 0) continue;
        const char *t = strstr(k->lines[i], "`(");
        if (!t) continue;
        char label[64];
        size_t len = strcspn(t + 2, ")");
        if (len + 2 > sizeof label) continue;
        snprintf(label, sizeof label, "%.*s:", (int)len, t + 2);
        for (int j = 0; j < i; j++)
            if (strcmp(k->lines[j], label) == 0) {
                lo[n] = j;
                hi[n++] = i;
                break;
            }
    }
    return n;
}
