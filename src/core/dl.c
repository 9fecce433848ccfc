#include "core/dl.h"

#include <dlfcn.h>
#include <string.h>

_Static_assert(sizeof(void (*)(void)) == sizeof(void *), "function pointers are object-pointer sized (POSIX dlsym)");

const tw_dl_symbol *tw_dl_resolve(void *dl, const tw_dl_symbol *syms, size_t n, void *api)
{
    for (size_t i = 0; i < n; i++) {
        const tw_dl_symbol *sym = &syms[i];
        void *p = NULL;
        for (size_t k = 0; k < 2 && !p && sym->names[k]; k++) {
            (void)dlerror();
            p = dlsym(dl, sym->names[k]);
        }
        if (!p && sym->required) return sym;
        memcpy((char *)api + sym->offset, &p, sizeof p);
    }
    return NULL;
}

const char *tw_dl_error(void)
{
    const char *e = dlerror();
    return e ? e : "unknown dlopen error";
}
