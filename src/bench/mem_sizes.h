/* The memory levels' sizes from access latency (internal, issue 6): the
 * identification step of Delestrac et al. 2024 (their Fig. 2 uses miss
 * rates from counters; this uses the time per dependent access, which
 * steps up where an array stops fitting a level).
 *
 * One block of one warp chases arrays of 16 KiB .. max_bytes (steps of sqrt 2),
 * once with loads cached in L1 (ld.global) and once with loads that skip
 * it (ld.global.cg); per size the time per access from a launch of about
 * target_s beyond the run without the measurement loop. A level's size is
 * the largest array whose latency stays within 25 % of the smallest
 * array's (L1 from the L1 loads, L2 from the L2 loads). */
#ifndef TW_BENCH_MEM_SIZES_H
#define TW_BENCH_MEM_SIZES_H

#include <stddef.h>

#include "bench/exec.h"

typedef struct tw_mem_sizes_options {
    double max_bytes; /* 0 = 4 x the L2 (or 128 MiB) */
    double target_s;  /* 0 = 0.03 s */
} tw_mem_sizes_options;

#define TW_MEM_SIZES_MAX 40

typedef struct tw_mem_sizes {
    size_t n;
    double bytes[TW_MEM_SIZES_MAX];
    double l1_ns[TW_MEM_SIZES_MAX]; /* per access, loads cached in L1 */
    double l2_ns[TW_MEM_SIZES_MAX]; /* per access, loads that skip L1 */
    double l1_bytes, l2_bytes;      /* the sizes found (0 when no step was seen) */
} tw_mem_sizes;

/* Runs the sweep on x (after its context) and fills out from the launches' times. */
tw_status tw_mem_sizes_run(tw_exec *x, const tw_mem_sizes_options *o, tw_mem_sizes *out);

#endif
