/* The GPU driver layer (internal): the CUDA driver API, loaded with dlopen
 * (cuda_api.h declares the subset we call; libcuda is never linked), enough
 * to run truewatt's own calibration kernels (kernels.c) on one device:
 * open a device's primary context, JIT-load PTX, allocate, launch, time.
 *
 * Every fallible call returns a tw_status and, on failure, leaves the detail
 * in tw_last_error(): for a driver call, "function: CUDA_ERROR_NAME: the
 * driver's message (code)". A tw_gpu and what it made are used by one thread
 * at a time (each call makes the device's context current on that thread). */
#ifndef TW_GPU_GPU_H
#define TW_GPU_GPU_H

#include <stddef.h>
#include <stdint.h>

#include "truewatt.h"

typedef struct tw_gpu tw_gpu;
typedef struct tw_gpu_module tw_gpu_module;
typedef uint64_t tw_gpu_ptr; /* a device address (CUdeviceptr) */

/* A kernel of a loaded module: valid while the module is loaded. */
typedef struct tw_gpu_fn {
    tw_gpu_module *module;
    struct CUfunc_st *handle;
} tw_gpu_fn;

/* Loads the driver library (`library`, else $TW_CUDA_LIBRARY, else
 * libcuda.so.1), initialises it and retains device `device`'s primary
 * context. TW_EUNAVAIL, with the reason, when there is no driver, no device
 * or no such device; TW_EINVAL for a negative device or a NULL out. */
tw_status tw_gpu_open(const char *library, int device, tw_gpu **out);
/* Releases the context and the library; NULL is a no-op. Modules must be unloaded first. */
void tw_gpu_close(tw_gpu *g);

const char *tw_gpu_name(const tw_gpu *g);
int tw_gpu_device(const tw_gpu *g);
int tw_gpu_sm_count(const tw_gpu *g);
/* Compute capability as major * 10 + minor (90 on an H100). */
int tw_gpu_cc(const tw_gpu *g);
/* The typical SM clock in kHz as the driver reports it, 0 when unknown. */
int tw_gpu_clock_khz(const tw_gpu *g);
/* The L2's size, the shared memory an SM has and a block may opt in to, in
 * bytes (driver attributes; 0 when the driver does not say). */
int tw_gpu_l2_bytes(const tw_gpu *g);
/* Resident threads an SM can hold (2048 on an H100; 0 when the driver does not say). */
int tw_gpu_threads_per_sm(const tw_gpu *g);
int tw_gpu_smem_per_sm_bytes(const tw_gpu *g);
int tw_gpu_smem_per_block_bytes(const tw_gpu *g);

/* JIT-compiles and loads NUL-terminated PTX text. A PTX the JIT rejects is
 * TW_EPARSE, with the JIT's error log in tw_last_error(). */
tw_status tw_gpu_load_ptx(tw_gpu *g, const char *ptx, tw_gpu_module **out);
/* The same with the JIT's optimisation level (CU_JIT_OPTIMIZATION_LEVEL,
 * 0..4; -1: the driver's default, 4): Arafa et al.'s -O0 / -O3 analogue. */
tw_status tw_gpu_load_ptx_opt(tw_gpu *g, const char *ptx, int opt_level, tw_gpu_module **out);
/* NULL is a no-op. */
void tw_gpu_module_unload(tw_gpu_module *m);
/* The kernel `name` (an .entry of the module): TW_ENOTFOUND when it has none. */
tw_status tw_gpu_kernel(tw_gpu_module *m, const char *name, tw_gpu_fn *fn);

tw_status tw_gpu_alloc(tw_gpu *g, size_t bytes, tw_gpu_ptr *out);
/* Sets `count` 32-bit words at p to `value` (synchronous with the host for launches that follow). */
tw_status tw_gpu_memset32(tw_gpu *g, tw_gpu_ptr p, uint32_t value, size_t count);
/* Copies `bytes` from the device to dst, waiting for the work before it (results of kernels). */
tw_status tw_gpu_download(tw_gpu *g, void *dst, tw_gpu_ptr src, size_t bytes);
/* 0 is a no-op. */
void tw_gpu_free(tw_gpu *g, tw_gpu_ptr p);

/* Launches fn on a 1-D grid of `grid` blocks of `block` threads on the default
 * stream, asynchronously. args: one pointer per kernel parameter, to its
 * value (cuLaunchKernel's kernelParams), e.g. {&out_ptr, &iterations}. */
tw_status tw_gpu_launch(const tw_gpu_fn *fn, unsigned grid, unsigned block, void **args);
/* Waits for all work on the device's context (launch errors surface here). */
tw_status tw_gpu_sync(tw_gpu *g);
/* Launches like tw_gpu_launch between two events, waits, and stores the
 * GPU-measured duration in milliseconds. */
tw_status tw_gpu_time_ms(const tw_gpu_fn *fn, unsigned grid, unsigned block, void **args, double *ms);

/* Queues `count` launches back to back with an event before each and after
 * the last, waits, and stores count + 1 offsets (ms from the first event):
 * launch i ran from offsets_ms[i] to offsets_ms[i + 1] on the GPU clock. */
tw_status tw_gpu_run_block(const tw_gpu_fn *fn, unsigned grid, unsigned block, void **args, size_t count,
                           double *offsets_ms);

/* NVRTC (dlopen of `library`, else $TW_NVRTC_LIBRARY, else libnvrtc.so.13,
 * .12, .11.2): compiles CUDA C `source` for compute capability cc (90 on an
 * H100) into PTX for tw_gpu_load_ptx. *ptx_out is malloc'd; *log_out (may be
 * NULL) gets the compiler's messages, malloc'd. TW_EUNAVAIL without NVRTC,
 * TW_EPARSE with the log when the source does not compile. Kernels meant to
 * be found by name need extern "C". */
tw_status tw_nvrtc_compile(const char *library, const char *source, const char *name, int cc, char **ptx_out,
                           char **log_out);
tw_status tw_nvrtc_version(const char *library, int *major, int *minor);

/* The calibration kernels' PTX (kernels.c; ISA 8.0, .target sm_70):
 *   tw_spin_fma(.u64 out, .u64 iterations): per thread 8 independent fp32 FMA
 *     chains, 4 FMAs each per iteration (32 FMAs per thread per iteration),
 *     their sum stored to ((float *)out)[global thread id]; out holds one float
 *     per launched thread; the duration is linear in iterations.
 *   tw_stream_copy(.u64 dst, .u64 src, .u64 n_words, .u64 reps): copies n_words
 *     16-byte words from src to dst with 128-bit loads and stores, grid-stride,
 *     reps times over. */
const char *tw_gpu_calibration_ptx(void);

#define TW_GPU_SPIN_FMA_PER_ITER 32 /* FMAs per thread per iteration of tw_spin_fma */

#endif
