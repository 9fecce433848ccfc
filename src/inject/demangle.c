/* C++ kernel names made readable: __cxa_demangle found at run time, with a cache. */
#include "inject/demangle.h"

#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct entry {
    char *mangled;   /* NULL: free slot */
    char *demangled; /* NULL: the name stays as it is */
} entry;

struct twi_demangler {
    twi_cxa_demangle_fn fn;
    entry *slot;
    size_t nslots; /* power of two, at least twice max */
    size_t count;
    size_t max;
    char *scratch; /* the last result that did not fit in the cache */
};

static twi_cxa_demangle_fn find_cxa_demangle(void)
{
    void *sym = NULL;
    /* the process's global symbols: a C++ program has libstdc++ loaded */
    void *self = dlopen(NULL, RTLD_LAZY);
    if (self) sym = dlsym(self, "__cxa_demangle");
    /* PyTorch loads libstdc++ as a dependency of RTLD_LOCAL modules: dlopen
     * finds that copy by its soname; otherwise it loads one (never closed,
     * the function must stay valid) */
    if (!sym) {
        void *h = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);
        if (h) sym = dlsym(h, "__cxa_demangle");
    }
    twi_cxa_demangle_fn fn = NULL;
    if (sym) memcpy(&fn, &sym, sizeof fn); /* object to function pointer, as POSIX dlsym allows */
    return fn;
}

twi_demangler *twi_demangler_new(size_t max_entries)
{
    twi_demangler *d = calloc(1, sizeof *d);
    if (!d) return NULL;
    d->max = max_entries ? max_entries : 4096;
    d->nslots = 16;
    while (d->nslots < 2 * d->max)
        d->nslots *= 2;
    d->slot = calloc(d->nslots, sizeof *d->slot);
    if (!d->slot) {
        free(d);
        return NULL;
    }
    d->fn = find_cxa_demangle();
    return d;
}

bool twi_demangler_available(const twi_demangler *d) { return d && d->fn; }

void twi_demangler_set_function(twi_demangler *d, twi_cxa_demangle_fn fn)
{
    if (d) d->fn = fn;
}

size_t twi_demangler_cached(const twi_demangler *d) { return d ? d->count : 0; }

static uint64_t hash_name(const char *s)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

/* The demangled text (malloc'd), or NULL when the name stays as it is. */
static char *demangle_now(const twi_demangler *d, const char *name)
{
    /* only mangled C++ names: C kernels and library kernels with C names
     * would come back unchanged anyway, at a cost */
    if (!d->fn || strncmp(name, "_Z", 2) != 0) return NULL;
    int status = -1;
    char *out = d->fn(name, NULL, NULL, &status);
    if (status != 0 || !out) {
        free(out);
        return NULL;
    }
    return out;
}

const char *twi_demangle(twi_demangler *d, const char *name)
{
    if (!name) return "";
    if (!d) return name;
    size_t mask = d->nslots - 1;
    size_t i = (size_t)hash_name(name) & mask;
    for (; d->slot[i].mangled; i = (i + 1) & mask)
        if (strcmp(d->slot[i].mangled, name) == 0) return d->slot[i].demangled ? d->slot[i].demangled : name;

    char *dem = demangle_now(d, name);
    if (d->count < d->max) {
        char *key = strdup(name);
        if (key) {
            d->slot[i].mangled = key;
            d->slot[i].demangled = dem;
            d->count++;
            return dem ? dem : name;
        }
    }
    /* cache full (or no memory for the key): hand out a scratch copy */
    free(d->scratch);
    d->scratch = dem;
    return dem ? dem : name;
}

void twi_demangler_free(twi_demangler *d)
{
    if (!d) return;
    for (size_t i = 0; i < d->nslots; i++) {
        free(d->slot[i].mangled);
        free(d->slot[i].demangled);
    }
    free(d->slot);
    free(d->scratch);
    free(d);
}
