/* NVTX range pairing: push/pop per thread and domain, start/end by id. No NVTX header here. */
#include "inject/nvtx_ranges.h"

#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 4096                /* a runaway push loop stops being recorded here */
#define MAX_PENDING ((size_t)1 << 20) /* open start/end ranges kept at most */

/* Copies s into a reusable buffer; false when out of memory. */
static bool keep_text(char **buf, size_t *cap, const char *s)
{
    size_t n = strlen(s) + 1;
    if (n > *cap) {
        size_t c = *cap ? *cap : 64;
        while (c < n)
            c *= 2;
        char *p = realloc(*buf, c);
        if (!p) return false;
        *buf = p;
        *cap = c;
    }
    memcpy(*buf, s, n);
    return true;
}

void twi_nvtx_record(twi_record *out, const char *name, const char *domain, int64_t tid, int32_t depth,
                     uint64_t start_ns, uint64_t end_ns)
{
    memset(out, 0, sizeof *out);
    out->kind = TWI_NVTX;
    out->name = name;
    out->domain = domain;
    out->tid = tid;
    out->depth = depth;
    out->start_ns = start_ns;
    out->end_ns = end_ns;
    out->mono = true;
    out->device = -1;
    out->stream = -1;
    out->correlation_id = -1;
}

/* ---------------------------------------------------------------- push/pop */

typedef struct slot {
    const void *domain;
    const char *domain_name; /* the caller's (domains live as long as the process) */
    int depth;
    uint64_t start_ns;
    char *name; /* reused buffer */
    size_t name_cap;
} slot;

struct twi_stack {
    int64_t tid;
    slot *s;
    size_t n, cap;
    char *last_name; /* the name handed out by the last pop */
    size_t last_cap;
};

twi_stack *twi_stack_new(int64_t tid)
{
    twi_stack *s = calloc(1, sizeof *s);
    if (s) s->tid = tid;
    return s;
}

/* Index of the innermost open range of `domain`, or n. */
static size_t innermost(const twi_stack *s, const void *domain)
{
    for (size_t i = s->n; i-- > 0;)
        if (s->s[i].domain == domain) return i;
    return s->n;
}

int twi_stack_push(twi_stack *s, const void *domain, const char *domain_name, const char *name, uint64_t t_ns)
{
    if (s->n >= MAX_DEPTH) return -1;
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 16;
        slot *p = realloc(s->s, cap * sizeof *p);
        if (!p) return -1;
        memset(p + s->cap, 0, (cap - s->cap) * sizeof *p);
        s->s = p;
        s->cap = cap;
    }
    slot *x = &s->s[s->n];
    if (!keep_text(&x->name, &x->name_cap, name ? name : "")) return -1;
    size_t below = innermost(s, domain);
    x->domain = domain;
    x->domain_name = domain_name ? domain_name : "";
    x->depth = below < s->n ? s->s[below].depth + 1 : 1;
    x->start_ns = t_ns;
    s->n++;
    return x->depth;
}

int twi_stack_pop(twi_stack *s, const void *domain, uint64_t t_ns, twi_record *out)
{
    size_t i = innermost(s, domain);
    if (i == s->n) return 0;
    slot x = s->s[i];
    /* the popped slot's buffer becomes the hand-out buffer; the old one is reused in its place */
    char *spare = s->last_name;
    size_t spare_cap = s->last_cap;
    s->last_name = x.name;
    s->last_cap = x.name_cap;
    /* ranges of other domains opened inside it stay open: close the gap */
    memmove(&s->s[i], &s->s[i + 1], (s->n - i - 1) * sizeof *s->s);
    s->n--;
    s->s[s->n].name = spare;
    s->s[s->n].name_cap = spare_cap;
    twi_nvtx_record(out, s->last_name, x.domain_name, s->tid, x.depth, x.start_ns, t_ns);
    return x.depth;
}

size_t twi_stack_open(const twi_stack *s) { return s ? s->n : 0; }

void twi_stack_set_tid(twi_stack *s, int64_t tid)
{
    if (s) s->tid = tid;
}

int64_t twi_stack_tid(const twi_stack *s) { return s ? s->tid : 0; }

void twi_stack_free(twi_stack *s)
{
    if (!s) return;
    for (size_t i = 0; i < s->cap; i++)
        free(s->s[i].name);
    free(s->s);
    free(s->last_name);
    free(s);
}

/* ---------------------------------------------------------------- start/end */

typedef struct pending {
    uint64_t id;
    uint64_t start_ns;
    int64_t tid;
    const char *domain_name;
    char *name;
    struct pending *next;
} pending;

struct twi_ranges {
    pending **bucket;
    size_t nbuckets; /* power of two */
    size_t count;
    pending *last; /* handed out by the last end */
};

twi_ranges *twi_ranges_new(void)
{
    twi_ranges *rg = calloc(1, sizeof *rg);
    if (!rg) return NULL;
    rg->nbuckets = 256;
    rg->bucket = calloc(rg->nbuckets, sizeof *rg->bucket);
    if (!rg->bucket) {
        free(rg);
        return NULL;
    }
    return rg;
}

static size_t bucket_of(uint64_t id, size_t nbuckets)
{
    return (size_t)((id * 0x9e3779b97f4a7c15u) >> 32) & (nbuckets - 1);
}

static void grow(twi_ranges *rg)
{
    size_t n = rg->nbuckets * 2;
    pending **b = calloc(n, sizeof *b);
    if (!b) return; /* keep the longer chains */
    for (size_t i = 0; i < rg->nbuckets; i++) {
        for (pending *p = rg->bucket[i], *next; p; p = next) {
            next = p->next;
            size_t k = bucket_of(p->id, n);
            p->next = b[k];
            b[k] = p;
        }
    }
    free(rg->bucket);
    rg->bucket = b;
    rg->nbuckets = n;
}

int twi_ranges_start(twi_ranges *rg, uint64_t id, const char *domain_name, const char *name, int64_t tid, uint64_t t_ns)
{
    if (rg->count >= MAX_PENDING) return -1;
    pending *p = calloc(1, sizeof *p);
    if (!p || !(p->name = strdup(name ? name : ""))) {
        free(p);
        return -1;
    }
    p->id = id;
    p->start_ns = t_ns;
    p->tid = tid;
    p->domain_name = domain_name ? domain_name : "";
    if (rg->count >= 2 * rg->nbuckets) grow(rg);
    size_t k = bucket_of(id, rg->nbuckets);
    p->next = rg->bucket[k];
    rg->bucket[k] = p;
    rg->count++;
    return 0;
}

int twi_ranges_end(twi_ranges *rg, uint64_t id, uint64_t t_ns, twi_record *out)
{
    for (pending **pp = &rg->bucket[bucket_of(id, rg->nbuckets)]; *pp; pp = &(*pp)->next) {
        pending *p = *pp;
        if (p->id != id) continue;
        *pp = p->next;
        rg->count--;
        if (rg->last) free(rg->last->name);
        free(rg->last);
        rg->last = p;
        twi_nvtx_record(out, p->name, p->domain_name, p->tid, 0, p->start_ns, t_ns);
        return 1;
    }
    return 0;
}

size_t twi_ranges_pending(const twi_ranges *rg) { return rg ? rg->count : 0; }

void twi_ranges_free(twi_ranges *rg)
{
    if (!rg) return;
    for (size_t i = 0; i < rg->nbuckets; i++) {
        for (pending *p = rg->bucket[i], *next; p; p = next) {
            next = p->next;
            free(p->name);
            free(p);
        }
    }
    if (rg->last) free(rg->last->name);
    free(rg->last);
    free(rg->bucket);
    free(rg);
}
