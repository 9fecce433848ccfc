/* Energy per access of the memory levels (internal, issue 6): the
 * calibration of Delestrac et al. 2024 (§IV-B, §VI) with the pointer
 * chases of mem/chase.h, on a GPU or the simulator.
 *
 * Per level and threads per block (blocks_per_sm blocks per SM), per repeat: the chase
 * without its measurement loop (iterations 0) and with half and all of the
 * iterations that make target_s, and the resident kernel at two lengths.
 * Each launch's energy above active idle is regressed on the sector
 * accesses of its measurement loop, its time and a constant for the chase
 * launches (the ring's building and the warm-up pass):
 *   E_dyn = eps * accesses + b * t + c * [chase]
 * eps per repeat; the value is their mean, the spread their sd / mean, r^2
 * the worst repeat's. The lower bound of a level is the least eps over the
 * threads swept, as in the paper.
 *
 * Array sizes follow the GPU's attributes: shared 32 KiB per block, L1
 * 64 KiB (at most a quarter of the SM's shared/L1), L2 about a sixth of
 * the L2 over all blocks (within one partition), DRAM eight times the L2. */
#ifndef TW_BENCH_MEM_RUN_H
#define TW_BENCH_MEM_RUN_H

#include <stddef.h>

#include "bench/exec.h"
#include "correct/profile.h"
#include "mem/chase.h"

typedef struct tw_mem_run_options {
    unsigned levels;         /* bit (1 << level); 0 = all four */
    const unsigned *threads; /* per block; NULL = 1, 4, 32, 128, 512, 1024 */
    size_t nthreads;
    double target_s;        /* the longest launch; 0 = 0.25 s */
    unsigned blocks_per_sm; /* 0 = 2 */
    int reps;               /* 0 = 3 */
} tw_mem_run_options;

void tw_mem_run_options_init(tw_mem_run_options *o);

typedef struct tw_mem_row {
    tw_mem_level level;
    unsigned threads, blocks;
    size_t sub_bytes;       /* per block */
    double eps_j, eps_sd_j; /* per sector access (granule), mean and sd over repeats */
    double spread_pct;
    double r2;             /* the worst repeat's */
    double resident_w;     /* b */
    double accesses_per_s; /* in the longest launch */
    double kernel_dyn_w;   /* the longest launch's power above active idle */
    double accesses;       /* in the longest launch */
    double truth_j;        /* simulator: the eps it was given; NaN on a GPU */
} tw_mem_row;

/* One launch as measured: what the rows are fitted from. */
typedef struct tw_mem_launch_row {
    tw_mem_level level;
    unsigned threads;
    const char *kind; /* "chase" or "resident" */
    int rep;
    double iterations, accesses, start_s, end_s, total_j, dyn_j;
} tw_mem_launch_row;

typedef struct tw_mem_results {
    tw_mem_row *rows;
    size_t n;
    tw_mem_launch_row *launches;
    size_t nlaunches;
    char reading[64];
    double clock_mhz;
    double lower_j[TW_MEM_LEVELS]; /* least eps over the threads swept; NaN when not measured */
    unsigned lower_threads[TW_MEM_LEVELS];
} tw_mem_results;

typedef struct tw_mem_plan tw_mem_plan;
tw_status tw_mem_run(tw_exec *x, const tw_mem_run_options *o, tw_mem_plan **plan);
double tw_mem_planned_s(const tw_mem_run_options *o);
tw_status tw_mem_analyse(const tw_mem_plan *p, tw_sensor *trace, const tw_events *events, const tw_profile *profile,
                         tw_mem_results *out);
void tw_mem_results_free(tw_mem_results *r);
void tw_mem_plan_free(tw_mem_plan *p);

#endif
