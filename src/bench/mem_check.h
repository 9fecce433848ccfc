/* The counter checks of the memory calibration (internal, issue 6; the
 * paper's §IV-B "performance counters"): Nsight Compute counts what each
 * chase's measurement loop did, apart from the energy runs, and a row whose
 * target level did not serve ~all of its accesses, or whose counted sectors
 * differ from Eq. 7's, is reported and left out of the lower bound.
 *
 * Each configuration runs twice (iterations 0 and N, `tw_mem_counter_run`'s
 * manifest); the differences of the counters isolate the measurement loop. */
#ifndef TW_BENCH_MEM_CHECK_H
#define TW_BENCH_MEM_CHECK_H

#include <stdbool.h>
#include <stddef.h>

#include "bench/mem_run.h"
#include "mem/ncu_csv.h"

#define TW_MEM_CHECK_COUNT_TOL 0.05 /* counted vs Eq. 7 */
#define TW_MEM_CHECK_HIT_MIN 0.95   /* the target level's share of the accesses */

typedef struct tw_mem_check_row {
    tw_chase_op op;
    tw_mem_level level;
    unsigned threads, blocks;
    double expected; /* Eq. 7: sectors (shared memory: bytes) of the measurement loop */
    double counted;  /* the same, counted */
    double hit;      /* the target level's share (L1/L2: hit rate; DRAM: L2 misses that DRAM served); NaN: n/a */
    const char *counter, *unit;
    bool pass;
    char why[200]; /* "" when it passed */
} tw_mem_check_row;

/* The metrics to give ncu --metrics, in the order tw_ncu_read wants them. */
const char *const *tw_mem_check_metrics(size_t *n);

/* Pairs the manifest's launches with ncu's (same order; block and grid sizes
 * must agree) and checks each configuration. rows: malloc'd. */
tw_status tw_mem_check_evaluate(const char *manifest_path, const tw_ncu_report *rep, tw_mem_check_row **rows,
                                size_t *n);

/* Marks each calibration row with its check (op, level, threads); rows without one stay unchecked. */
void tw_mem_check_apply(const tw_mem_check_row *checks, size_t n, tw_mem_results *r);

#endif
