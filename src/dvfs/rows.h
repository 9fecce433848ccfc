/* Model rows for kernels measured on the local GPU (internal): the times of
 * apps/dvfs/kernels.cu joined, kernel by kernel, with Nsight Compute's
 * counters of the same kernels, the counters mapped to the nvprof names of
 * Wang & Chu's data (dvfs-model.md §4.3), written in the authors' CSV format
 * so that tw_dvfs_load (data.h) reads them as it reads the authors' rows. */
#ifndef TW_DVFS_ROWS_H
#define TW_DVFS_ROWS_H

#include <stddef.h>
#include <stdio.h>

#include "truewatt.h"
#include "dvfs/data.h"
#include "mem/ncu_csv.h"

/* The ncu metrics the rows are made from, in one table: the order of a
 * report's values (tw_dvfs_ncu_read) and of ncu's --metrics argument. */
const char *const *tw_dvfs_rows_metrics(size_t *n);
/* Those names joined with commas: tw_dvfs_rows_metrics_arg (truewatt.h). */

/* One line of the kernels' timing CSV (kernels.cu's stdout):
 * kernel,launches,grid_x,grid_y,grid_z,block_x,block_y,block_z,time_ms_mean[,time_ms_sd,time_ms_min] */
typedef struct tw_dvfs_timing {
    char kernel[64];               /* at most 63 characters: it is also the row's appName */
    double launches;               /* timed launches behind the mean */
    unsigned grid[3], block[3];    /* the launch configuration */
    double mean_ms, sd_ms, min_ms; /* sd and min NaN when the file lacks them */
    unsigned long line;
} tw_dvfs_timing;

typedef struct tw_dvfs_times {
    tw_dvfs_timing *t;
    size_t n;
} tw_dvfs_times;

/* Reads a timing CSV: columns by name; a line equal to the header is skipped
 * wherever it recurs (files concatenated), as are blank lines and '#'
 * comments. TW_ENOTFOUND names missing columns; TW_EPARSE names the line of
 * a short row, a bad number, a zero dimension, a non-positive time or a
 * kernel named twice; TW_EEMPTY when there are no rows. On error *out is
 * empty. */
tw_status tw_dvfs_times_read(FILE *f, const char *name, tw_dvfs_times *out);
tw_status tw_dvfs_times_load(const char *path, tw_dvfs_times *out);
void tw_dvfs_times_free(tw_dvfs_times *t);

/* Reads ncu's CSV into a report whose values follow tw_dvfs_rows_metrics:
 * - the raw page (ncu --csv --page raw): one row per launch, one column per
 *   metric, the units row after the header; values are scaled by the unit's
 *   prefix (Ksector, usecond, ...) to ncu's base units (counts, %, ns);
 * - the details page (plain ncu --csv): one row per (launch, metric), read
 *   by tw_ncu_read (mem/ncu_csv.h), whose units are taken as base units
 *   (what ncu --csv prints).
 * A metric absent from the file or n/a is NaN (tw_dvfs_rows_build names it).
 * ncu's ==PROF==/==WARNING== lines and the program's own output before the
 * header are skipped. Errors: no header (TW_EUNAVAIL quoting ncu's ==ERROR==
 * line when there is one, else TW_EPARSE), a short row or a value that is
 * not a number (TW_EPARSE, name:line:), out of memory. */
tw_status tw_dvfs_ncu_read(FILE *f, const char *name, tw_ncu_report *out);
tw_status tw_dvfs_ncu_load(const char *path, tw_ncu_report *out);

/* A model row and what else is known about it. */
typedef struct tw_dvfs_built {
    tw_dvfs_row row;      /* appName = kernel = the timing's kernel name */
    double timed;         /* timed launches behind row.time_ms */
    double sd_ms, min_ms; /* of the timed launches, NaN when unknown */
    size_t profiled;      /* ncu launches averaged into the counters */
    double ncu_time_ms;   /* their mean gpu__time_duration */
} tw_dvfs_built;

typedef struct tw_dvfs_rows {
    tw_dvfs_built *r; /* in the timing file's order */
    size_t n;
    size_t ignored;           /* ncu launches of kernels the timing file does not name */
    char ignored_example[64]; /* the first of their names, "" if none */
} tw_dvfs_rows;

/* One row per timed kernel. Its ncu launches are those whose kernel name
 * (the function's name: without "void ", namespaces, template arguments and
 * parameters) equals the timing's; their counters are averaged. Columns
 * (N_w = blocks * ceil(threads per block / 32) of the timing's launch):
 *   warps = N_w; achieved_occupancy = sm__warps_active...pct / 100;
 *   l2_read/write_transactions = lts__t_sectors_srcunit_tex_op_read/write + atom + red (the SMs' requests);
 *   dram_read/write_transactions = dram__sectors_read/write;
 *   shared_load/store_transactions = l1tex shared ld/st wavefronts;
 *   tex_cache_transactions = l1tex global-load sectors;
 *   inst_fp_64 = thread-level FP64 instructions; cf_executed = cbu + adu
 *   warp instructions; inst_per_warp = smsp__inst_executed / N_w;
 *   time/ms = the timing's mean; coreF, memF = the clocks given (MHz).
 * Errors (*out empty): a kernel without ncu launches (TW_ENOTFOUND), a
 * metric missing or n/a in one of its launches (TW_ENOTFOUND, naming the
 * metric, the kernel and the launch ID), a launch whose grid or block
 * differs from the timing's, an occupancy outside (0, 100] % (TW_EPARSE),
 * clocks that are not positive (TW_EINVAL). */
tw_status tw_dvfs_rows_build(const tw_dvfs_times *times, const tw_ncu_report *ncu, double core_mhz, double mem_mhz,
                             tw_dvfs_rows *out);
/* The rows as CSV: data.h's columns first, then timed_launches, time_sd/ms,
 * time_min/ms, profiled_launches, ncu_time/ms. TW_EIO on a write error. */
tw_status tw_dvfs_rows_write(FILE *f, const tw_dvfs_rows *rows);
void tw_dvfs_rows_free(tw_dvfs_rows *r);

#endif
