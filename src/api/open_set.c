/* A session's open regions, a stack per thread: see open_set.h. */
#include "api/open_set.h"

#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"

typedef struct entry {
    char *name;
    double t0;
} entry;

struct tw_open_stack {
    pthread_mutex_t mu;
    pthread_t tid;
    entry *e; /* in the order of their begins: e[0] is the oldest */
    size_t n, cap;
    _Atomic(void *) grave;
    tw_open_stack *next;
};

static atomic_uint_fast64_t next_id = 1;

/* The calling thread's stack of the last set it used. */
static _Thread_local struct {
    const tw_open_set *set;
    uint64_t id;
    tw_open_stack *st;
} cache;

tw_status tw_open_init(tw_open_set *o)
{
    o->stacks = NULL;
    o->id = atomic_fetch_add(&next_id, 1);
    if (pthread_mutex_init(&o->mu, NULL) != 0) return tw_fail(TW_ENOMEM, "cannot create a mutex");
    return TW_OK;
}

void tw_open_free(tw_open_set *o)
{
    for (tw_open_stack *st = o->stacks, *next; st; st = next) {
        next = st->next;
        for (size_t i = 0; i < st->n; i++)
            free(st->e[i].name);
        free(st->e);
        pthread_mutex_destroy(&st->mu);
        free(st);
    }
    o->stacks = NULL;
    pthread_mutex_destroy(&o->mu);
}

/* The calling thread's stack, made at its first begin (NULL: out of memory). */
static tw_open_stack *my_stack(tw_open_set *o, bool create)
{
    if (cache.set == o && cache.id == o->id) return cache.st;
    pthread_t self = pthread_self();
    pthread_mutex_lock(&o->mu);
    tw_open_stack *st = o->stacks;
    while (st && !pthread_equal(st->tid, self))
        st = st->next;
    if (!st && create && (st = calloc(1, sizeof *st)) != NULL) {
        if (pthread_mutex_init(&st->mu, NULL) != 0) {
            free(st);
            st = NULL;
        } else {
            st->tid = self;
            st->next = o->stacks;
            o->stacks = st;
        }
    }
    pthread_mutex_unlock(&o->mu);
    if (st) {
        cache.set = o;
        cache.id = o->id;
        cache.st = st;
    }
    return st;
}

tw_status tw_open_push(tw_open_set *o, const char *name, double t0)
{
    tw_open_stack *st = my_stack(o, true);
    char *copy = strdup(name);
    if (!st || !copy) {
        free(copy);
        return tw_fail(TW_ENOMEM, "out of memory");
    }
    pthread_mutex_lock(&st->mu);
    if (st->n == st->cap) {
        size_t cap = st->cap ? 2 * st->cap : 16;
        entry *e = realloc(st->e, cap * sizeof *e);
        if (!e) {
            pthread_mutex_unlock(&st->mu);
            free(copy);
            return tw_fail(TW_ENOMEM, "out of memory");
        }
        st->e = e;
        st->cap = cap;
    }
    st->e[st->n++] = (entry){copy, t0};
    pthread_mutex_unlock(&st->mu);
    return TW_OK;
}

/* Under st->mu: the innermost entry named `name` (SIZE_MAX: none). */
static size_t find_in(const tw_open_stack *st, const char *name)
{
    for (size_t i = st->n; i-- > 0;)
        if (strcmp(st->e[i].name, name) == 0) return i;
    return SIZE_MAX;
}

static void take(tw_open_stack *st, size_t i, char **name_out, double *t0_out)
{
    *name_out = st->e[i].name;
    *t0_out = st->e[i].t0;
    memmove(st->e + i, st->e + i + 1, (st->n - i - 1) * sizeof *st->e);
    st->n--;
}

/* Under o->mu: "'a', 'b'" of every open region, for the message. */
static void open_names(const tw_open_set *o, char *buf, size_t cap)
{
    buf[0] = 0;
    for (tw_open_stack *st = o->stacks; st; st = st->next) {
        pthread_mutex_lock(&st->mu);
        for (size_t i = 0; i < st->n; i++) {
            size_t len = strlen(buf);
            snprintf(buf + len, cap - len, "%s'%s'", len ? ", " : "", st->e[i].name);
        }
        pthread_mutex_unlock(&st->mu);
    }
}

/* Another thread's region: the latest begin of that name among all stacks.
 * o->mu held throughout, so no stack is added meanwhile; each stack's own
 * mutex while it is looked at (its owner may pop meanwhile: then again). */
static tw_status pop_any(tw_open_set *o, const char *fn, const char *name, char **name_out, double *t0_out)
{
    pthread_mutex_lock(&o->mu);
    for (;;) {
        tw_open_stack *best = NULL;
        double best_t0 = -INFINITY;
        for (tw_open_stack *st = o->stacks; st; st = st->next) {
            pthread_mutex_lock(&st->mu);
            size_t i = find_in(st, name);
            if (i != SIZE_MAX && st->e[i].t0 >= best_t0) {
                best = st;
                best_t0 = st->e[i].t0;
            }
            pthread_mutex_unlock(&st->mu);
        }
        if (!best) {
            char open[512];
            open_names(o, open, sizeof open);
            pthread_mutex_unlock(&o->mu);
            return tw_fail(TW_EINVAL, "%s: no open region named '%s' (open: %s)", fn, name, open[0] ? open : "none");
        }
        pthread_mutex_lock(&best->mu);
        size_t i = find_in(best, name);
        bool same = i != SIZE_MAX && best->e[i].t0 == best_t0;
        if (same) take(best, i, name_out, t0_out);
        pthread_mutex_unlock(&best->mu);
        if (same) break;
    }
    pthread_mutex_unlock(&o->mu);
    return TW_OK;
}

tw_status tw_open_pop(tw_open_set *o, const char *fn, const char *name, char **name_out, double *t0_out)
{
    tw_open_stack *st = my_stack(o, false);
    if (st) {
        pthread_mutex_lock(&st->mu);
        size_t i = find_in(st, name);
        if (i != SIZE_MAX) take(st, i, name_out, t0_out);
        pthread_mutex_unlock(&st->mu);
        if (i != SIZE_MAX) return TW_OK;
    }
    return pop_any(o, fn, name, name_out, t0_out);
}

_Atomic(void *) *tw_open_grave(tw_open_set *o)
{
    tw_open_stack *st = my_stack(o, true);
    return st ? &st->grave : NULL;
}

void tw_open_each_grave(tw_open_set *o, void (*fn)(void *head, void *arg), void *arg)
{
    pthread_mutex_lock(&o->mu);
    for (tw_open_stack *st = o->stacks; st; st = st->next) {
        void *head = atomic_exchange(&st->grave, NULL);
        if (head) fn(head, arg);
    }
    pthread_mutex_unlock(&o->mu);
}

double tw_open_oldest(tw_open_set *o)
{
    double t = INFINITY;
    pthread_mutex_lock(&o->mu);
    for (tw_open_stack *st = o->stacks; st; st = st->next) {
        pthread_mutex_lock(&st->mu);
        if (st->n && st->e[0].t0 < t) t = st->e[0].t0;
        pthread_mutex_unlock(&st->mu);
    }
    pthread_mutex_unlock(&o->mu);
    return t;
}
