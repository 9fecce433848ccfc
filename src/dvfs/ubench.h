/* The microbenchmarks behind `truewatt dvfs params` (internal): latencies by
 * dependent chains (pointer chases through DRAM, the L2 and shared memory; a
 * chain of FMAs) and throughputs at full occupancy (FP32 and FP64 FMAs,
 * shared-memory loads, L2-resident reads, a DRAM copy), in SM cycles read
 * with clock64 inside the kernels. The SM clock itself is measured too (SM
 * cycles over %globaltimer nanoseconds), never set: the card runs as it is.
 * ubench.c compiles them with NVRTC and runs them through the driver layer;
 * hwparams.h turns the numbers into the model's parameters. */
#ifndef TW_DVFS_UBENCH_H
#define TW_DVFS_UBENCH_H

#include "truewatt.h"

struct tw_gpu;

/* A dependent chain: `steps` links that took `cycles` SM cycles. */
typedef struct tw_dvfs_chain {
    double steps, cycles;
} tw_dvfs_chain;

/* A throughput kernel: each of `warps_per_sm` warps issued `insts_per_warp`
 * of the instruction under test; `cycles` is the median over the blocks
 * (one block per SM) of the block's SM cycles. */
typedef struct tw_dvfs_pipe {
    double warps_per_sm, insts_per_warp, cycles;
} tw_dvfs_pipe;

/* A bandwidth kernel: `sectors` 32-byte sectors moved (reads + writes) by
 * the whole GPU in `elapsed_ns` (first block's start to the last block's end
 * on %globaltimer). */
typedef struct tw_dvfs_stream {
    double sectors, elapsed_ns, bytes_footprint;
} tw_dvfs_stream;

typedef struct tw_dvfs_ubench {
    char gpu[128];
    int cc, n_sm, threads_per_sm;
    double sm_mhz;                           /* measured during the throughput kernels */
    tw_dvfs_chain dram, l2, shared, fma;     /* latencies */
    tw_dvfs_pipe fp32, fp64, lds;            /* issue throughputs */
    tw_dvfs_stream l2_read, dram_copy;       /* bandwidths */
    double dram_chase_bytes, l2_chase_bytes; /* the chases' footprints */
    int repeats;                             /* each number is the median of this many runs */
} tw_dvfs_ubench;

/* Progress lines go to note(note_ctx, line) (note may be NULL). TW_EUNAVAIL without a driver,
 * a GPU or NVRTC (the reason in tw_last_error()); the driver's errors as they
 * come. */
tw_status tw_dvfs_ubench_run(struct tw_gpu *g, int repeats, void (*note)(void *ctx, const char *line), void *note_ctx,
                             tw_dvfs_ubench *out);

#endif
