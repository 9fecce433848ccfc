/* Experiments (internal): a schedule of GPU context creation, idle time and
 * blocks of calibration kernels, run either on a real GPU (the sampler
 * records every reading; the driver layer launches the FMA spin kernel) or
 * on the simulator (the schedule becomes a scenario). Either way the result
 * is a sensor over the recorded readings and the kernels' events on the
 * same timeline, so identification and validation describe their
 * experiments once and are tested in CI on the simulator. */
#ifndef TW_BENCH_EXEC_H
#define TW_BENCH_EXEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "truewatt.h"

typedef struct tw_exec tw_exec;

/* A kernel of the caller's (an instruction microbenchmark, say): PTX whose
 * entry takes (.u64 out, .u64 iterations, .u64 seed); the executor provides
 * `out` (out_bytes, at least 8 bytes per launched thread; its contents are
 * whatever earlier launches left). The simulator cannot run PTX: it
 * takes each launch's length and its power above active idle from sim_s and
 * sim_w. */
typedef struct tw_exec_kernel {
    const char *label; /* the events' name */
    const char *ptx;   /* the module; the same text (and level) is loaded once */
    const char *entry;
    int opt_level; /* JIT optimisation level 0..4; -1: the default */
    unsigned grid, block;
    uint64_t iterations, seed;
    size_t out_bytes; /* 0: 8 per thread */
    double sim_s, sim_w;
} tw_exec_kernel;

typedef struct tw_exec_ops {
    const char *name;
    /* Creates the GPU context: ends the pre-context phase. */
    tw_status (*context)(tw_exec *x);
    /* Nothing runs for s seconds (measured from the end of the last action). */
    tw_status (*idle)(tw_exec *x, double s);
    /* `count` launches of about kernel_s each, back to back; one event each
     * named `label`. */
    tw_status (*block)(tw_exec *x, const char *label, double kernel_s, size_t count);
    /* `count` launches of k back to back, one event each named k->label. */
    tw_status (*kernel)(tw_exec *x, const tw_exec_kernel *k, size_t count);
    /* Stops recording; x->trace and x->events then hold the result. */
    tw_status (*finish)(tw_exec *x);
    void (*destroy)(tw_exec *x);
} tw_exec_ops;

struct tw_exec {
    const tw_exec_ops *ops;
    tw_events *events;          /* kernels (kind "kernel") and a "context" marker (kind "marker") */
    tw_sensor *trace;           /* after finish: the readings */
    double now_s;               /* the timeline position the schedule has reached */
    double context_s;           /* when the context was created (NaN before) */
    char gpu[128];              /* device name */
    char driver[64];            /* driver version */
    char backend[32];           /* "nvml" or "sim" */
    const volatile int *cancel; /* nonzero: stop with TW_EINTERRUPTED */
    void (*progress)(void *ctx, double done_s, double total_s); /* may be NULL */
    void *progress_ctx;
    double planned_s;                       /* total planned length, for progress */
    double true_step_w;                     /* sim: the kernels' power above active idle; NaN on a GPU */
    int sm_count, cc;                       /* the GPU's SMs and compute capability (x10), once the context exists */
    double l2_bytes, smem_per_sm_bytes;     /* the driver's attributes then (0: not known) */
    double true_idle_w, true_active_idle_w; /* sim: the levels; NaN on a GPU */
};

/* The simulator: profile k20 or h100, `seed` for noise and jitter. */
tw_status tw_exec_sim_new(tw_sim_profile profile, uint64_t seed, tw_exec **out);

typedef struct tw_exec_gpu_config {
    int device;                              /* CUDA and NVML index */
    const char *trace_path;                  /* the sampler's CSV */
    const char *events_path;                 /* written at finish */
    const char *provenance;                  /* heads both files; may be NULL */
    const char *cuda_library, *nvml_library; /* NULL: defaults */
} tw_exec_gpu_config;

/* A real GPU: starts sampling at once (the pre-context phase). TW_EUNAVAIL
 * with the reason when there is no driver or GPU. */
tw_status tw_exec_gpu_new(const tw_exec_gpu_config *cfg, tw_exec **out);

/* Shorthands that also check x->cancel and report progress. */
tw_status tw_exec_context(tw_exec *x);
tw_status tw_exec_idle(tw_exec *x, double s);
tw_status tw_exec_block(tw_exec *x, const char *label, double kernel_s, size_t count);
tw_status tw_exec_kernel_run(tw_exec *x, const tw_exec_kernel *k, size_t count);
tw_status tw_exec_finish(tw_exec *x);
void tw_exec_free(tw_exec *x);

/* Adds one event to x->events (kind "kernel" unless `kind` is given). */
tw_status tw_exec_add_event(tw_exec *x, const char *name, const char *kind, double t0_s, double t1_s);

#endif
