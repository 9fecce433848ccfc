/*
 * demangle.h - C++ kernel names made readable, with a cache.
 *
 * __cxa_demangle is looked up at run time: first in the process's global
 * symbols (a C++ program or PyTorch has libstdc++ loaded), then by dlopen of
 * libstdc++.so.6. Without it, or for names that are not mangled C++ names
 * ("_Z..."), names are returned as given. The library never links libstdc++.
 */
#ifndef TW_INJECT_DEMANGLE_H
#define TW_INJECT_DEMANGLE_H

#include <stdbool.h>
#include <stddef.h>

#include "inject/twi_prefix.h"

typedef struct twi_demangler twi_demangler;

/* A demangler that caches up to `max_entries` names (0 = 4096). NULL when out
 * of memory. */
twi_demangler *twi_demangler_new(size_t max_entries);
/* Whether __cxa_demangle was found. */
bool twi_demangler_available(const twi_demangler *d);
/* The readable form of `name`, or `name` itself when it cannot be demangled.
 * The result stays valid until the next call or twi_demangler_free.
 * Not thread-safe: callers serialize. */
const char *twi_demangle(twi_demangler *d, const char *name);
/* Names in the cache (for tests). */
size_t twi_demangler_cached(const twi_demangler *d);
void twi_demangler_free(twi_demangler *d);

/* For tests: use `fn` (a __cxa_demangle look-alike, or NULL for none) instead
 * of the one found at run time. */
typedef char *(*twi_cxa_demangle_fn)(const char *mangled, char *buf, size_t *len, int *status);
void twi_demangler_set_function(twi_demangler *d, twi_cxa_demangle_fn fn);

#endif
