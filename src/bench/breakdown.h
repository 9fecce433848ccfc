/* The energy breakdown of an application (internal, issue 6; Delestrac et
 * al. 2024, §VII): measured energy = static + each memory level's accesses
 * times its calibrated energy per access + the rest of the dynamic energy.
 *
 * Accesses are assigned to the level that served them, because each level's
 * calibrated energy is that of a whole access served there (an L2 access's
 * includes its L1 miss, a DRAM access's its L2 miss): loads that hit L1 at
 * the L1's, L2 read hits at the L2's, DRAM reads at the DRAM's; every global
 * store at the L2 store energy, and the sectors the L2 writes back to DRAM
 * at the difference between the DRAM and L2 store energies; shared memory by
 * bytes / 32 at its load and store energies (other shared traffic, e.g.
 * LDSM, LDGSTS or wgmma operands, at the load energy). A level without a
 * store calibration uses its load energy for stores (the paper's choice). */
#ifndef TW_BENCH_BREAKDOWN_H
#define TW_BENCH_BREAKDOWN_H

#include <stdbool.h>
#include <stddef.h>

#include "mem/chase.h"
#include "truewatt.h"

/* Nsight Compute's metrics, in this order (tw_breakdown_metrics). */
typedef enum tw_bd_metric {
    TW_BD_SHARED_ALL = 0, /* sm__sass_data_bytes_mem_shared.sum */
    TW_BD_SHARED_LD,
    TW_BD_SHARED_ST,
    TW_BD_L1_LD_HIT,
    TW_BD_L2_RD_HIT,
    TW_BD_L2_WR,
    TW_BD_L2_ALL_TEX, /* lts__t_sectors_srcunit_tex.sum: for the note on what was not assigned */
    TW_BD_L2_ALL,     /* lts__t_sectors.sum */
    TW_BD_DRAM_RD,
    TW_BD_DRAM_WR,
    TW_BD_TIME_NS, /* gpu__time_duration.sum: the profiled kernels' time, for scaling a sample */
    TW_BD_METRICS
} tw_bd_metric;

const char *const *tw_breakdown_metrics(size_t *n);

/* The memory-energy profile's lower bounds, J per 32-byte sector; NaN when absent. */
typedef struct tw_bd_eps {
    double load[TW_MEM_LEVELS], store[TW_MEM_LEVELS];
} tw_bd_eps;

/* Reads mem-profile.json (truewatt mem calibrate): "levels" (loads) and "stores". */
tw_status tw_bd_eps_load(const char *path, tw_bd_eps *out, char *gpu, size_t gpucap);

typedef struct tw_bd_input {
    double counts[TW_BD_METRICS]; /* summed over the kernels profiled */
    double total_j;               /* measured: the span's energy */
    double dynamic_j;             /* measured: above idle */
    double time_s;                /* the span's (kernels') time */
} tw_bd_input;

typedef struct tw_breakdown {
    double static_j;
    double level_j[TW_MEM_LEVELS];
    double sectors[TW_MEM_LEVELS]; /* assigned to each level (shared: bytes / 32) */
    double memory_j, rest_j;
    double total_j, sum_j, sum_diff_pct;
    bool memory_fits; /* the memory lower bound is within the dynamic energy (rest >= 0) */
    char note[512];
} tw_breakdown;

/* 0, or -1 with tw_last_error() when an energy per access the counts need is missing. */
int tw_breakdown_compute(const tw_bd_input *in, const tw_bd_eps *eps, tw_breakdown *out);

#endif
