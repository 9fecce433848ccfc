/* The GPU driver layer: the CUDA driver API through dlopen (gpu.h). No cuda.h
 * at build time: cuda_api.h declares the subset we call. Each tw_gpu holds its
 * own dlopen handle (the loader reference-counts the library) and retains its
 * device's primary context, shared with any CUDA runtime code in the process. */
#include <dlfcn.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/dl.h"
#include "core/error.h"
#include "gpu/cuda_api.h"
#include "gpu/gpu.h"

#define DEFAULT_SONAME "libcuda.so.1"
#define JIT_LOG_CAP 16384

/* ---------------------------------------------------------------- the library */

/* Member names are the driver's names; versioned entry points resolve to the
 * newest one present (cuMemAlloc_v2, ...). */
typedef struct cuda_api {
    cuInit_fn cuInit;
    cuDeviceGetCount_fn cuDeviceGetCount;
    cuDeviceGet_fn cuDeviceGet;
    cuDeviceGetName_fn cuDeviceGetName;
    cuDeviceGetAttribute_fn cuDeviceGetAttribute;
    cuDevicePrimaryCtxRetain_fn cuDevicePrimaryCtxRetain;
    cuDevicePrimaryCtxRelease_fn cuDevicePrimaryCtxRelease;
    cuCtxSetCurrent_fn cuCtxSetCurrent;
    cuCtxSynchronize_fn cuCtxSynchronize;
    cuModuleLoadDataEx_fn cuModuleLoadDataEx;
    cuModuleGetFunction_fn cuModuleGetFunction;
    cuModuleUnload_fn cuModuleUnload;
    cuMemAlloc_fn cuMemAlloc;
    cuMemFree_fn cuMemFree;
    cuMemsetD32_fn cuMemsetD32;
    cuMemcpyDtoH_fn cuMemcpyDtoH;
    cuLaunchKernel_fn cuLaunchKernel;
    cuEventCreate_fn cuEventCreate;
    cuEventRecord_fn cuEventRecord;
    cuEventSynchronize_fn cuEventSynchronize;
    cuEventElapsedTime_fn cuEventElapsedTime;
    cuEventDestroy_fn cuEventDestroy;
    cuGetErrorName_fn cuGetErrorName;
    cuGetErrorString_fn cuGetErrorString;
} cuda_api;

#define SYMBOL(member, newest, older)                                                                                  \
    {                                                                                                                  \
        {newest, older}, offsetof(cuda_api, member), 1                                                                 \
    }

/* All are required. cuEventElapsedTime_v2 is new in 12.8 drivers: older ones have the plain one. */
static const tw_dl_symbol api_symbols[] = {
    SYMBOL(cuInit, "cuInit", NULL),
    SYMBOL(cuDeviceGetCount, "cuDeviceGetCount", NULL),
    SYMBOL(cuDeviceGet, "cuDeviceGet", NULL),
    SYMBOL(cuDeviceGetName, "cuDeviceGetName", NULL),
    SYMBOL(cuDeviceGetAttribute, "cuDeviceGetAttribute", NULL),
    SYMBOL(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", NULL),
    SYMBOL(cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2", "cuDevicePrimaryCtxRelease"),
    SYMBOL(cuCtxSetCurrent, "cuCtxSetCurrent", NULL),
    SYMBOL(cuCtxSynchronize, "cuCtxSynchronize", NULL),
    SYMBOL(cuModuleLoadDataEx, "cuModuleLoadDataEx", NULL),
    SYMBOL(cuModuleGetFunction, "cuModuleGetFunction", NULL),
    SYMBOL(cuModuleUnload, "cuModuleUnload", NULL),
    SYMBOL(cuMemAlloc, "cuMemAlloc_v2", NULL),
    SYMBOL(cuMemFree, "cuMemFree_v2", NULL),
    SYMBOL(cuMemsetD32, "cuMemsetD32_v2", NULL),
    SYMBOL(cuMemcpyDtoH, "cuMemcpyDtoH_v2", NULL),
    SYMBOL(cuLaunchKernel, "cuLaunchKernel", NULL),
    SYMBOL(cuEventCreate, "cuEventCreate", NULL),
    SYMBOL(cuEventRecord, "cuEventRecord", NULL),
    SYMBOL(cuEventSynchronize, "cuEventSynchronize", NULL),
    SYMBOL(cuEventElapsedTime, "cuEventElapsedTime_v2", "cuEventElapsedTime"),
    SYMBOL(cuEventDestroy, "cuEventDestroy_v2", "cuEventDestroy"),
    SYMBOL(cuGetErrorName, "cuGetErrorName", NULL),
    SYMBOL(cuGetErrorString, "cuGetErrorString", NULL),
};

struct tw_gpu {
    void *dl;
    cuda_api api;
    char library[PATH_MAX]; /* the name it was loaded by */
    int device;
    CUdevice dev;
    CUcontext ctx; /* the primary context, retained */
    char name[256];
    int sm_count, cc, clock_khz;
    int l2_bytes, smem_per_sm_bytes, smem_per_block_bytes; /* 0 when the driver does not say */
    int threads_per_sm;                                    /* resident threads an SM holds; 0: unknown */
};

struct tw_gpu_module {
    tw_gpu *gpu;
    CUmodule mod;
};

/* ---------------------------------------------------------------- errors */

static tw_status status_of(CUresult r)
{
    switch (r) {
    case CUDA_ERROR_INVALID_VALUE:
        return TW_EINVAL;
    case CUDA_ERROR_OUT_OF_MEMORY:
        return TW_ENOMEM;
    case CUDA_ERROR_INVALID_IMAGE:
    case CUDA_ERROR_INVALID_PTX:
    case CUDA_ERROR_UNSUPPORTED_PTX_VERSION:
        return TW_EPARSE;
    case CUDA_ERROR_NOT_FOUND:
        return TW_ENOTFOUND;
    default:
        return TW_EUNAVAIL;
    }
}

/* Records a failed call as "function: NAME: the driver's message (code)" in tw_last_error. */
static CUresult cu_check(const cuda_api *a, CUresult r, const char *fn)
{
    if (r == CUDA_SUCCESS) return r;
    const char *name = NULL, *text = NULL;
    if (!a->cuGetErrorName || a->cuGetErrorName(r, &name) != CUDA_SUCCESS || !name) name = "CUDA_ERROR_?";
    if (!a->cuGetErrorString || a->cuGetErrorString(r, &text) != CUDA_SUCCESS || !text) text = "unknown CUDA error";
    (void)tw_fail(status_of(r), "%s: %s: %s (%d)", fn, name, text, (int)r);
    return r;
}

/* Every driver call goes through this: the CUresult is returned and, on
 * failure, recorded with the function's name, the code's name and message. */
#define CU_CALL(a, fn, ...) cu_check((a), (a)->fn(__VA_ARGS__), #fn)

/* Makes the device's context current on the calling thread. */
static tw_status bind(tw_gpu *g)
{
    CUresult r = CU_CALL(&g->api, cuCtxSetCurrent, g->ctx);
    return r == CUDA_SUCCESS ? TW_OK : status_of(r);
}

/* ---------------------------------------------------------------- open / close */

static tw_status load_library(tw_gpu *g, const char *library)
{
    const char *from = "the argument";
    if (!library || !*library) {
        const char *env = getenv("TW_CUDA_LIBRARY");
        if (env && *env) {
            library = env;
            from = "TW_CUDA_LIBRARY";
        } else {
            library = DEFAULT_SONAME;
            from = NULL;
        }
    }
    snprintf(g->library, sizeof g->library, "%s", library);
    g->dl = dlopen(library, RTLD_NOW | RTLD_LOCAL);
    if (!g->dl) {
        if (from)
            return tw_fail(TW_EUNAVAIL, "cannot load the CUDA driver %s (from %s): %s", library, from, tw_dl_error());
        return tw_fail(TW_EUNAVAIL, "cannot load the CUDA driver %s: %s (no NVIDIA driver here? set TW_CUDA_LIBRARY)",
                       library, tw_dl_error());
    }
    const tw_dl_symbol *missing =
        tw_dl_resolve(g->dl, api_symbols, sizeof api_symbols / sizeof api_symbols[0], &g->api);
    if (missing)
        return tw_fail(TW_EUNAVAIL, "%s has no %s%s%s (not a libcuda, or a driver too old?)", library,
                       missing->names[0], missing->names[1] ? " nor " : "", missing->names[1] ? missing->names[1] : "");
    return TW_OK;
}

static tw_status attribute(tw_gpu *g, CUdevice_attribute attr, int *v)
{
    CUresult r = CU_CALL(&g->api, cuDeviceGetAttribute, v, attr, g->dev);
    return r == CUDA_SUCCESS ? TW_OK : status_of(r);
}

tw_status tw_gpu_open(const char *library, int device, tw_gpu **out)
{
    tw_clear_error();
    if (!out) return tw_fail(TW_EINVAL, "tw_gpu_open: out is NULL");
    *out = NULL;
    if (device < 0) return tw_fail(TW_EINVAL, "tw_gpu_open: device %d is negative", device);
    tw_gpu *g = calloc(1, sizeof *g);
    if (!g) return tw_fail(TW_ENOMEM, "tw_gpu_open: out of memory");
    g->device = device;

    tw_status st = load_library(g, library);
    const cuda_api *a = &g->api;
    CUresult r;
    int count = 0, major = 0, minor = 0;
    if (st != TW_OK) goto fail;
    if ((r = CU_CALL(a, cuInit, 0)) != CUDA_SUCCESS) {
        /* no device, or a driver that cannot talk to the kernel module: unavailable */
        char msg[512];
        snprintf(msg, sizeof msg, "%s", tw_last_error());
        st = tw_fail(TW_EUNAVAIL, "%s (driver %s)", msg, g->library);
        goto fail;
    }
    if ((r = CU_CALL(a, cuDeviceGetCount, &count)) != CUDA_SUCCESS) {
        st = TW_EUNAVAIL;
        goto fail;
    }
    if (count <= 0) {
        st = tw_fail(TW_EUNAVAIL, "no CUDA device (driver %s reports 0)", g->library);
        goto fail;
    }
    if (device >= count) {
        st = tw_fail(TW_EUNAVAIL, "no CUDA device %d: %d device%s present (0..%d)", device, count,
                     count == 1 ? "" : "s", count - 1);
        goto fail;
    }
    if ((r = CU_CALL(a, cuDeviceGet, &g->dev, device)) != CUDA_SUCCESS) {
        st = TW_EUNAVAIL;
        goto fail;
    }
    if ((r = CU_CALL(a, cuDeviceGetName, g->name, (int)sizeof g->name - 1, g->dev)) != CUDA_SUCCESS) {
        st = status_of(r);
        goto fail;
    }
    if ((st = attribute(g, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, &g->sm_count)) != TW_OK ||
        (st = attribute(g, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, &major)) != TW_OK ||
        (st = attribute(g, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, &minor)) != TW_OK)
        goto fail;
    g->cc = major * 10 + minor;
    /* deprecated in CUDA 13 and may be refused there: optional */
    if (a->cuDeviceGetAttribute(&g->clock_khz, CU_DEVICE_ATTRIBUTE_CLOCK_RATE, g->dev) != CUDA_SUCCESS)
        g->clock_khz = 0;
    /* the memory levels' sizes, for the memory microbenchmarks: optional */
    if (a->cuDeviceGetAttribute(&g->l2_bytes, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, g->dev) != CUDA_SUCCESS)
        g->l2_bytes = 0;
    if (a->cuDeviceGetAttribute(&g->smem_per_sm_bytes, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR,
                                g->dev) != CUDA_SUCCESS)
        g->smem_per_sm_bytes = 0;
    if (a->cuDeviceGetAttribute(&g->smem_per_block_bytes, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
                                g->dev) != CUDA_SUCCESS)
        g->smem_per_block_bytes = 0;
    if (a->cuDeviceGetAttribute(&g->threads_per_sm, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR, g->dev) !=
        CUDA_SUCCESS)
        g->threads_per_sm = 0;
    if ((r = CU_CALL(a, cuDevicePrimaryCtxRetain, &g->ctx, g->dev)) != CUDA_SUCCESS) {
        st = status_of(r);
        goto fail;
    }
    if ((st = bind(g)) != TW_OK) {
        (void)a->cuDevicePrimaryCtxRelease(g->dev);
        goto fail;
    }
    *out = g;
    return TW_OK;

fail:
    if (g->dl) dlclose(g->dl);
    free(g);
    return st;
}

void tw_gpu_close(tw_gpu *g)
{
    if (!g) return;
    if (g->ctx) {
        (void)g->api.cuCtxSetCurrent(NULL);
        (void)g->api.cuDevicePrimaryCtxRelease(g->dev);
    }
    if (g->dl) dlclose(g->dl);
    free(g);
}

const char *tw_gpu_name(const tw_gpu *g) { return g ? g->name : ""; }
int tw_gpu_device(const tw_gpu *g) { return g ? g->device : -1; }
int tw_gpu_sm_count(const tw_gpu *g) { return g ? g->sm_count : 0; }
int tw_gpu_cc(const tw_gpu *g) { return g ? g->cc : 0; }
int tw_gpu_clock_khz(const tw_gpu *g) { return g ? g->clock_khz : 0; }

int tw_gpu_l2_bytes(const tw_gpu *g) { return g ? g->l2_bytes : 0; }
int tw_gpu_threads_per_sm(const tw_gpu *g) { return g ? g->threads_per_sm : 0; }

int tw_gpu_smem_per_sm_bytes(const tw_gpu *g) { return g ? g->smem_per_sm_bytes : 0; }

int tw_gpu_smem_per_block_bytes(const tw_gpu *g) { return g ? g->smem_per_block_bytes : 0; }

/* ---------------------------------------------------------------- modules */

tw_status tw_gpu_load_ptx(tw_gpu *g, const char *ptx, tw_gpu_module **out)
{
    return tw_gpu_load_ptx_opt(g, ptx, -1, out);
}

tw_status tw_gpu_load_ptx_opt(tw_gpu *g, const char *ptx, int opt_level, tw_gpu_module **out)
{
    tw_clear_error();
    if (!g || !ptx || !out) return tw_fail(TW_EINVAL, "tw_gpu_load_ptx: NULL argument");
    if (opt_level > 4) return tw_fail(TW_EINVAL, "JIT optimisation level %d (0..4, or -1 for the default)", opt_level);
    *out = NULL;
    tw_status st = bind(g);
    if (st != TW_OK) return st;
    tw_gpu_module *m = calloc(1, sizeof *m);
    char *log = calloc(1, JIT_LOG_CAP);
    if (!m || !log) {
        free(m);
        free(log);
        return tw_fail(TW_ENOMEM, "tw_gpu_load_ptx: out of memory");
    }
    CUjit_option opts[3] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, CU_JIT_OPTIMIZATION_LEVEL};
    void *vals[3] = {log, (void *)(uintptr_t)(JIT_LOG_CAP - 1), (void *)(uintptr_t)(opt_level < 0 ? 4 : opt_level)};
    CUresult r = CU_CALL(&g->api, cuModuleLoadDataEx, &m->mod, ptx, opt_level < 0 ? 2 : 3, opts, vals);
    if (r != CUDA_SUCCESS) {
        char msg[512];
        snprintf(msg, sizeof msg, "%s", tw_last_error());
        log[JIT_LOG_CAP - 1] = '\0';
        size_t n = strlen(log);
        while (n > 0 && (log[n - 1] == '\n' || log[n - 1] == ' '))
            log[--n] = '\0';
        st = tw_fail(status_of(r), "%s%s%s", msg, *log ? "; JIT log: " : "", log);
        free(log);
        free(m);
        return st;
    }
    free(log);
    m->gpu = g;
    *out = m;
    return TW_OK;
}

void tw_gpu_module_unload(tw_gpu_module *m)
{
    if (!m) return;
    if (bind(m->gpu) == TW_OK) (void)m->gpu->api.cuModuleUnload(m->mod);
    free(m);
}

tw_status tw_gpu_kernel(tw_gpu_module *m, const char *name, tw_gpu_fn *fn)
{
    tw_clear_error();
    if (!m || !name || !fn) return tw_fail(TW_EINVAL, "tw_gpu_kernel: NULL argument");
    memset(fn, 0, sizeof *fn);
    tw_status st = bind(m->gpu);
    if (st != TW_OK) return st;
    CUfunction f = NULL;
    CUresult r = CU_CALL(&m->gpu->api, cuModuleGetFunction, &f, m->mod, name);
    if (r != CUDA_SUCCESS) {
        char msg[512];
        snprintf(msg, sizeof msg, "%s", tw_last_error());
        return tw_fail(status_of(r), "kernel %s: %s", name, msg);
    }
    fn->module = m;
    fn->handle = f;
    return TW_OK;
}

/* ---------------------------------------------------------------- memory */

tw_status tw_gpu_alloc(tw_gpu *g, size_t bytes, tw_gpu_ptr *out)
{
    tw_clear_error();
    if (!g || !out || bytes == 0) return tw_fail(TW_EINVAL, "tw_gpu_alloc: NULL argument or 0 bytes");
    *out = 0;
    tw_status st = bind(g);
    if (st != TW_OK) return st;
    CUdeviceptr p = 0;
    CUresult r = CU_CALL(&g->api, cuMemAlloc, &p, bytes);
    if (r != CUDA_SUCCESS) return status_of(r);
    *out = (tw_gpu_ptr)p;
    return TW_OK;
}

tw_status tw_gpu_memset32(tw_gpu *g, tw_gpu_ptr p, uint32_t value, size_t count)
{
    tw_clear_error();
    if (!g || !p) return tw_fail(TW_EINVAL, "tw_gpu_memset32: NULL argument");
    tw_status st = bind(g);
    if (st != TW_OK) return st;
    CUresult r = CU_CALL(&g->api, cuMemsetD32, (CUdeviceptr)p, value, count);
    return r == CUDA_SUCCESS ? TW_OK : status_of(r);
}

tw_status tw_gpu_download(tw_gpu *g, void *dst, tw_gpu_ptr src, size_t bytes)
{
    tw_clear_error();
    if (!g || !dst || !src) return tw_fail(TW_EINVAL, "tw_gpu_download: NULL argument");
    tw_status st = bind(g);
    if (st != TW_OK) return st;
    CUresult r = CU_CALL(&g->api, cuMemcpyDtoH, dst, (CUdeviceptr)src, bytes);
    return r == CUDA_SUCCESS ? TW_OK : status_of(r);
}

void tw_gpu_free(tw_gpu *g, tw_gpu_ptr p)
{
    if (!g || !p) return;
    if (bind(g) == TW_OK) (void)g->api.cuMemFree((CUdeviceptr)p);
}

/* ---------------------------------------------------------------- launches */

static tw_status launch(tw_gpu *g, const tw_gpu_fn *fn, unsigned grid, unsigned block, void **args)
{
    CUresult r = CU_CALL(&g->api, cuLaunchKernel, fn->handle, grid, 1, 1, block, 1, 1, 0, NULL, args, NULL);
    return r == CUDA_SUCCESS ? TW_OK : status_of(r);
}

static tw_status check_fn(const tw_gpu_fn *fn, unsigned grid, unsigned block, const char *who)
{
    if (!fn || !fn->module || !fn->handle) return tw_fail(TW_EINVAL, "%s: no kernel", who);
    if (grid == 0 || block == 0) return tw_fail(TW_EINVAL, "%s: empty launch (grid %u, block %u)", who, grid, block);
    return TW_OK;
}

tw_status tw_gpu_launch(const tw_gpu_fn *fn, unsigned grid, unsigned block, void **args)
{
    tw_clear_error();
    tw_status st = check_fn(fn, grid, block, "tw_gpu_launch");
    if (st != TW_OK) return st;
    tw_gpu *g = fn->module->gpu;
    if ((st = bind(g)) != TW_OK) return st;
    return launch(g, fn, grid, block, args);
}

tw_status tw_gpu_sync(tw_gpu *g)
{
    tw_clear_error();
    if (!g) return tw_fail(TW_EINVAL, "tw_gpu_sync: NULL argument");
    tw_status st = bind(g);
    if (st != TW_OK) return st;
    CUresult r = CU_CALL(&g->api, cuCtxSynchronize);
    return r == CUDA_SUCCESS ? TW_OK : status_of(r);
}

tw_status tw_gpu_time_ms(const tw_gpu_fn *fn, unsigned grid, unsigned block, void **args, double *ms)
{
    tw_clear_error();
    if (!ms) return tw_fail(TW_EINVAL, "tw_gpu_time_ms: ms is NULL");
    *ms = 0;
    tw_status st = check_fn(fn, grid, block, "tw_gpu_time_ms");
    if (st != TW_OK) return st;
    tw_gpu *g = fn->module->gpu;
    const cuda_api *a = &g->api;
    if ((st = bind(g)) != TW_OK) return st;
    CUevent ev[2] = {NULL, NULL};
    CUresult r;
    float elapsed = 0;
    if ((r = CU_CALL(a, cuEventCreate, &ev[0], CU_EVENT_DEFAULT)) != CUDA_SUCCESS ||
        (r = CU_CALL(a, cuEventCreate, &ev[1], CU_EVENT_DEFAULT)) != CUDA_SUCCESS ||
        (r = CU_CALL(a, cuEventRecord, ev[0], NULL)) != CUDA_SUCCESS) {
        st = status_of(r);
        goto done;
    }
    if ((st = launch(g, fn, grid, block, args)) != TW_OK) goto done;
    if ((r = CU_CALL(a, cuEventRecord, ev[1], NULL)) != CUDA_SUCCESS ||
        (r = CU_CALL(a, cuEventSynchronize, ev[1])) != CUDA_SUCCESS ||
        (r = CU_CALL(a, cuEventElapsedTime, &elapsed, ev[0], ev[1])) != CUDA_SUCCESS) {
        st = status_of(r);
        goto done;
    }
    *ms = elapsed;
done:
    for (int i = 0; i < 2; i++)
        if (ev[i]) (void)a->cuEventDestroy(ev[i]);
    return st;
}

/* Destroys the events that were created (NULL entries are skipped). */
static void destroy_events(const cuda_api *a, CUevent *ev, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (ev[i]) (void)a->cuEventDestroy(ev[i]);
}

/* Elapsed ms from ev[0] to every event; ev[0] maps to 0. */
static tw_status event_offsets(const cuda_api *a, CUevent *ev, size_t n, double *ms)
{
    ms[0] = 0.0;
    for (size_t i = 1; i < n; i++) {
        float e = 0;
        CUresult r = CU_CALL(a, cuEventElapsedTime, &e, ev[0], ev[i]);
        if (r != CUDA_SUCCESS) return status_of(r);
        ms[i] = e;
    }
    return TW_OK;
}

tw_status tw_gpu_run_block(const tw_gpu_fn *fn, unsigned grid, unsigned block, void **args, size_t count,
                           double *offsets_ms)
{
    tw_clear_error();
    if (!offsets_ms || count == 0) return tw_fail(TW_EINVAL, "tw_gpu_run_block: no launches or no output");
    tw_status st = check_fn(fn, grid, block, "tw_gpu_run_block");
    if (st != TW_OK) return st;
    tw_gpu *g = fn->module->gpu;
    const cuda_api *a = &g->api;
    if ((st = bind(g)) != TW_OK) return st;
    size_t nev = count + 1;
    CUevent *ev = calloc(nev, sizeof *ev);
    if (!ev) return tw_fail(TW_ENOMEM, "out of memory (%zu events)", nev);
    CUresult r = CUDA_SUCCESS;
    for (size_t i = 0; i < nev && r == CUDA_SUCCESS; i++)
        r = CU_CALL(a, cuEventCreate, &ev[i], CU_EVENT_DEFAULT);
    if (r != CUDA_SUCCESS) {
        st = status_of(r);
        goto done;
    }
    /* Launches are queued back to back; an event between each pair of
     * launches marks one's end and the next one's start on the GPU clock. */
    for (size_t i = 0; i < count; i++) {
        if ((r = CU_CALL(a, cuEventRecord, ev[i], NULL)) != CUDA_SUCCESS) {
            st = status_of(r);
            goto done;
        }
        if ((st = launch(g, fn, grid, block, args)) != TW_OK) goto done;
    }
    if ((r = CU_CALL(a, cuEventRecord, ev[count], NULL)) != CUDA_SUCCESS ||
        (r = CU_CALL(a, cuEventSynchronize, ev[count])) != CUDA_SUCCESS) {
        st = status_of(r);
        goto done;
    }
    st = event_offsets(a, ev, nev, offsets_ms);
done:
    destroy_events(a, ev, nev);
    free(ev);
    return st;
}
