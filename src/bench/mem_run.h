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
#include <stdint.h>
#include <stdio.h>

#include "bench/exec.h"
#include "correct/profile.h"
#include "mem/chase.h"

typedef struct tw_mem_run_options {
    unsigned levels;         /* bit (1 << level); 0 = all four */
    unsigned ops;            /* bit (1 << tw_chase_op); 0 = load, store and load+div (stores skip L1, the
                                LOAD+DIV cross-check skips shared memory, as the paper's §VI-D) */
    const unsigned *threads; /* per block; NULL = 1, 4, 32, 128, 512, 1024 */
    size_t nthreads;
    double target_s;        /* the longest launch; 0 = 0.25 s */
    unsigned blocks_per_sm; /* 0 = 2 */
    int reps;               /* 0 = 3 */
} tw_mem_run_options;

void tw_mem_run_options_init(tw_mem_run_options *o);

/* The counter check of a row (ncu, run apart from the energy runs). */
typedef enum tw_mem_check { TW_MEM_UNCHECKED = 0, TW_MEM_CHECK_PASS = 1, TW_MEM_CHECK_FAIL = -1 } tw_mem_check;

typedef struct tw_mem_row {
    tw_chase_op op;
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
    /* load+div rows: the energy of one division (per thread), (eps - eps of the load row) / divisions per
     * sector, and its sd; NaN otherwise */
    double div_j, div_sd_j;
    tw_mem_check check; /* a failed row is left out of the lower bound */
} tw_mem_row;

/* One launch as measured: what the rows are fitted from. */
typedef struct tw_mem_launch_row {
    tw_chase_op op;
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
    /* per operation and level: the least eps over the threads swept whose counter check did not fail;
     * NaN when not measured */
    double lower_j[TW_CHASE_OPS][TW_MEM_LEVELS];
    unsigned lower_threads[TW_CHASE_OPS][TW_MEM_LEVELS];
} tw_mem_results;

typedef struct tw_mem_plan tw_mem_plan;
tw_status tw_mem_run(tw_exec *x, const tw_mem_run_options *o, tw_mem_plan **plan);
double tw_mem_planned_s(const tw_mem_run_options *o);
tw_status tw_mem_analyse(const tw_mem_plan *p, tw_sensor *trace, const tw_events *events, const tw_profile *profile,
                         tw_mem_results *out);
void tw_mem_results_free(tw_mem_results *r);
/* (Re)computes lower_j and lower_threads from the rows, skipping rows whose check failed. */
void tw_mem_lower_bounds(tw_mem_results *r);

/* The divisions per sector access of a load+div chase: one per thread that reads the sector. */
double tw_mem_divs_per_sector(unsigned threads);

/* The counter runs (for ncu, in a process of their own): every configuration of
 * the options, launched with iterations 0 and `iterations`, nothing recorded. One
 * manifest line per launch (tw_mem_manifest_header()): the launch's index among
 * the chase launches, op, level, threads, blocks, sub_bytes, iterations, and the
 * accesses of its measurement loop (sectors, Eq. 7) and their bytes. */
tw_status tw_mem_counter_run(tw_exec *x, const tw_mem_run_options *o, uint64_t iterations, FILE *manifest);
const char *tw_mem_manifest_header(void);
void tw_mem_plan_free(tw_mem_plan *p);

#endif
