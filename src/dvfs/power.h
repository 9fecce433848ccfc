/* The measured power of Wang & Chu's DVFS study (NV-DVFS-Benchmark,
 * csvs/raw/ *-Power.csv, internal): one row per (benchmark, core clock,
 * memory clock), the NVML average power while the benchmark looped its
 * kernel. Clocks in MHz as in the matching Performance file, power in W. */
#ifndef TW_DVFS_POWER_H
#define TW_DVFS_POWER_H

#include <stddef.h>

#include "dvfs/data.h"
#include "truewatt.h"

typedef struct tw_dvfs_power_row {
    char app[64]; /* appName: joins to the Performance row */
    double core_mhz, mem_mhz, power_w;
    unsigned long line; /* in the file, for messages */
} tw_dvfs_power_row;

typedef struct tw_dvfs_power_data {
    tw_dvfs_power_row *rows;
    size_t n;
} tw_dvfs_power_data;

/* Reads a Power CSV: the columns appName, coreF, memF and power/W by name
 * (others, such as kernel and argNo, are ignored); a repeated header line is
 * skipped. TW_ENOTFOUND names missing columns; TW_EPARSE names the line
 * (path:line:) of a short row, a value that is not a finite number, a power
 * that is not positive, or a second row for the same (appName, coreF, memF);
 * TW_EEMPTY when there are no rows; TW_EIO when the file cannot be opened.
 * On error *out is left empty. */
tw_status tw_dvfs_power_load(const char *path, tw_dvfs_power_data *out);
void tw_dvfs_power_free(tw_dvfs_power_data *d);

/* Joins power to performance rows by (appName, coreF, memF): power_w[i] is
 * the power of perf->rows[i]. Every row of either file must have its partner:
 * TW_EPARSE names the first unmatched row (file:line:) and how many there are,
 * so that a mismatch of files is not silently narrowed to their overlap.
 * perf_name and power_name are what the messages call the two files. */
tw_status tw_dvfs_power_join(const tw_dvfs_data *perf, const char *perf_name, const tw_dvfs_power_data *power,
                             const char *power_name, double *power_w);

#endif
