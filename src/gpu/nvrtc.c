/* NVRTC by dlopen: CUDA C compiled to PTX at run time, so truewatt's
 * kernels can be written in CUDA C and still need no toolkit at build time.
 * Only the subset used is declared here (no nvrtc.h is needed). */
#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/dl.h"
#include "core/error.h"
#include "gpu/gpu.h"

typedef int nvrtcResult; /* NVRTC_SUCCESS = 0 */
typedef struct _nvrtcProgram *nvrtcProgram;

typedef struct nvrtc_api {
    const char *(*nvrtcGetErrorString)(nvrtcResult);
    nvrtcResult (*nvrtcVersion)(int *, int *);
    nvrtcResult (*nvrtcCreateProgram)(nvrtcProgram *, const char *, const char *, int, const char *const *,
                                      const char *const *);
    nvrtcResult (*nvrtcCompileProgram)(nvrtcProgram, int, const char *const *);
    nvrtcResult (*nvrtcGetPTXSize)(nvrtcProgram, size_t *);
    nvrtcResult (*nvrtcGetPTX)(nvrtcProgram, char *);
    nvrtcResult (*nvrtcGetProgramLogSize)(nvrtcProgram, size_t *);
    nvrtcResult (*nvrtcGetProgramLog)(nvrtcProgram, char *);
    nvrtcResult (*nvrtcDestroyProgram)(nvrtcProgram *);
} nvrtc_api;

#define SYM(name)                                                                                                      \
    {                                                                                                                  \
        {#name, NULL}, offsetof(nvrtc_api, name), 1                                                                    \
    }
static const tw_dl_symbol nvrtc_symbols[] = {
    SYM(nvrtcGetErrorString),    SYM(nvrtcVersion),       SYM(nvrtcCreateProgram),
    SYM(nvrtcCompileProgram),    SYM(nvrtcGetPTXSize),    SYM(nvrtcGetPTX),
    SYM(nvrtcGetProgramLogSize), SYM(nvrtcGetProgramLog), SYM(nvrtcDestroyProgram),
};
#undef SYM

/* Newest first; the toolkit's unversioned name last. */
static const char *const sonames[] = {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so.11.2", "libnvrtc.so"};

static void *open_library(const char *library, char *used, size_t used_cap)
{
    const char *env = getenv("TW_NVRTC_LIBRARY");
    if (!library && env && *env) library = env;
    if (library) {
        snprintf(used, used_cap, "%s", library);
        return dlopen(library, RTLD_NOW | RTLD_LOCAL);
    }
    for (size_t i = 0; i < sizeof sonames / sizeof sonames[0]; i++) {
        snprintf(used, used_cap, "%s", sonames[i]);
        void *dl = dlopen(sonames[i], RTLD_NOW | RTLD_LOCAL);
        if (dl) return dl;
    }
    snprintf(used, used_cap, "libnvrtc.so.{13,12,11.2}");
    return NULL;
}

/* The program's log (the compiler's messages), malloc'd; "" when none. */
static char *program_log(const nvrtc_api *a, nvrtcProgram prog)
{
    size_t n = 0;
    if (a->nvrtcGetProgramLogSize(prog, &n) != 0 || n == 0) return strdup("");
    char *log = malloc(n + 1);
    if (!log) return NULL;
    if (a->nvrtcGetProgramLog(prog, log) != 0) log[0] = '\0';
    log[n] = '\0';
    return log;
}

static tw_status compile(const nvrtc_api *a, const char *source, const char *name, int cc, char **ptx, char **log)
{
    nvrtcProgram prog = NULL;
    nvrtcResult r = a->nvrtcCreateProgram(&prog, source, name, 0, NULL, NULL);
    if (r != 0) return tw_fail(TW_EUNAVAIL, "nvrtcCreateProgram: %s", a->nvrtcGetErrorString(r));
    char arch[48];
    snprintf(arch, sizeof arch, "--gpu-architecture=compute_%d", cc);
    const char *opts[] = {arch, "-default-device", "--std=c++14"};
    r = a->nvrtcCompileProgram(prog, 3, opts);
    *log = program_log(a, prog);
    tw_status st = TW_OK;
    size_t n = 0;
    if (r != 0) {
        st = tw_fail(TW_EPARSE, "%s: NVRTC could not compile it (%s): %s", name, a->nvrtcGetErrorString(r),
                     *log && **log ? *log : "no log");
    } else if ((r = a->nvrtcGetPTXSize(prog, &n)) != 0 || !(*ptx = malloc(n + 1))) {
        st = r ? tw_fail(TW_EUNAVAIL, "nvrtcGetPTXSize: %s", a->nvrtcGetErrorString(r))
               : tw_fail(TW_ENOMEM, "out of memory (PTX of %zu bytes)", n);
    } else if ((r = a->nvrtcGetPTX(prog, *ptx)) != 0) {
        st = tw_fail(TW_EUNAVAIL, "nvrtcGetPTX: %s", a->nvrtcGetErrorString(r));
    } else {
        (*ptx)[n] = '\0';
    }
    a->nvrtcDestroyProgram(&prog);
    return st;
}

tw_status tw_nvrtc_compile(const char *library, const char *source, const char *name, int cc, char **ptx_out,
                           char **log_out)
{
    tw_clear_error();
    if (!source || !name || !ptx_out) return tw_fail(TW_EINVAL, "tw_nvrtc_compile: NULL argument");
    *ptx_out = NULL;
    if (log_out) *log_out = NULL;
    if (cc < 30 || cc > 200) return tw_fail(TW_EINVAL, "tw_nvrtc_compile: compute capability %d is not one", cc);
    char used[512];
    void *dl = open_library(library, used, sizeof used);
    if (!dl) return tw_fail(TW_EUNAVAIL, "cannot load NVRTC %s: %s (set TW_NVRTC_LIBRARY)", used, tw_dl_error());
    nvrtc_api a;
    const tw_dl_symbol *missing = tw_dl_resolve(dl, nvrtc_symbols, sizeof nvrtc_symbols / sizeof nvrtc_symbols[0], &a);
    tw_status st;
    char *log = NULL;
    if (missing)
        st = tw_fail(TW_EUNAVAIL, "%s has no %s (not an NVRTC library?)", used, missing->names[0]);
    else
        st = compile(&a, source, name, cc, ptx_out, &log);
    if (st != TW_OK) {
        free(*ptx_out);
        *ptx_out = NULL;
    }
    if (log_out)
        *log_out = log;
    else
        free(log);
    /* NVRTC stays loaded: it keeps allocations in its own globals, which an
     * unload would leave unreachable (LeakSanitizer reports them) */
    return st;
}

tw_status tw_nvrtc_version(const char *library, int *major, int *minor)
{
    char used[512];
    void *dl = open_library(library, used, sizeof used);
    if (!dl) return tw_fail(TW_EUNAVAIL, "cannot load NVRTC %s: %s", used, tw_dl_error());
    nvrtc_api a;
    tw_status st = TW_OK;
    if (tw_dl_resolve(dl, nvrtc_symbols, sizeof nvrtc_symbols / sizeof nvrtc_symbols[0], &a))
        st = tw_fail(TW_EUNAVAIL, "%s is not an NVRTC library", used);
    else if (a.nvrtcVersion(major, minor) != 0)
        st = tw_fail(TW_EUNAVAIL, "nvrtcVersion failed");
    return st; /* stays loaded, as in tw_nvrtc_compile */
}
