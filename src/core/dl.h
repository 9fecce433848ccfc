/* Resolving a vendor library's functions into a table of function pointers
 * (NVML, the CUDA driver): each entry names the newest symbol first and an
 * older fallback, and says whether the library is useless without it. */
#ifndef TW_CORE_DL_H
#define TW_CORE_DL_H

#include <stddef.h>

typedef struct tw_dl_symbol {
    const char *names[2]; /* newest first; NULL when there is no older one */
    size_t offset;        /* of the member in the caller's table */
    int required;
} tw_dl_symbol;

/* Fills api + offset for each symbol (NULL for a missing optional one).
 * Returns the first required symbol that is missing, or NULL when all are there. */
const tw_dl_symbol *tw_dl_resolve(void *dl, const tw_dl_symbol *syms, size_t n, void *api);

/* dlerror()'s text, never NULL. */
const char *tw_dl_error(void);

#endif
