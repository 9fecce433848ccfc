/* The measured data of Wang & Chu's DVFS study (NV-DVFS-Benchmark, csvs/raw/
 * *-Performance.csv, internal): one row per (benchmark, core clock, memory
 * clock), with nvprof's counters measured at that clock pair. Units are the
 * file's: clocks in MHz as the tool reported them (GDDR5 cards report twice
 * the bus clock), time in ms, counters as counts. */
#ifndef TW_DVFS_DATA_H
#define TW_DVFS_DATA_H

#include <stddef.h>
#include <stdio.h>

#include "truewatt.h"

typedef struct tw_dvfs_row {
    char app[64];     /* appName: the benchmark, which the per-kernel figures and special cases name */
    char kernel[128]; /* the CUDA kernel's name */
    double core_mhz, mem_mhz, time_ms;
    double warps;                                    /* launched warps, N_w */
    double occupancy;                                /* achieved_occupancy, 0..1 */
    double l2_read, l2_write, dram_read, dram_write; /* transactions (32 B sectors) */
    double shared_load, shared_store, tex_cache;     /* transactions */
    double inst_fp_64, cf_executed;                  /* thread-level instruction counts */
    double inst_per_warp;
    unsigned long line; /* in the file, for messages */
} tw_dvfs_row;

typedef struct tw_dvfs_data {
    tw_dvfs_row *rows;
    size_t n;
} tw_dvfs_data;

/* Reads a whole Performance CSV: columns by header name (order differs
 * between GPUs; a column named twice is read from its first copy, as the
 * files repeat l2_tex_write_throughput); a line equal to the header is
 * skipped wherever it recurs, as are a blank line and a line starting with
 * # (a comment: result files carry a provenance line). No quoting: the files
 * have none. TW_EPARSE names the line (name:line:) of a row with the wrong
 * number of fields or a value that is not a finite number; TW_ENOTFOUND
 * names the missing columns; TW_EEMPTY when there are no rows. On error
 * *out is left empty. `name` is what the messages call the stream. */
tw_status tw_dvfs_read(FILE *f, const char *name, tw_dvfs_data *out);
/* The same from a path: TW_EIO when it cannot be opened. */
tw_status tw_dvfs_load(const char *path, tw_dvfs_data *out);
void tw_dvfs_data_free(tw_dvfs_data *d);

#endif
