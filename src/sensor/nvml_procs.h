/* Per-process utilisation of a GPU from NVML (internal): the samples the
 * driver keeps of each process's SM use (nvmlDeviceGetProcessUtilization),
 * for the exporter's per-process energy estimate. */
#ifndef TW_SENSOR_NVML_PROCS_H
#define TW_SENSOR_NVML_PROCS_H

#include <stddef.h>

#include "truewatt.h"

typedef struct tw_proc_util {
    unsigned pid;
    double sm_util;           /* mean SM utilisation of its samples, 0..1 */
    unsigned samples;         /* how many samples the mean is of */
    unsigned long long ts_us; /* its newest sample's time (CLOCK_REALTIME us) */
} tw_proc_util;

/* The processes with samples on device `index` newer than since_us, one entry
 * per pid (up to cap; *n set), and the newest sample's time in *newest_us.
 * None since then: TW_OK with *n = 0. A driver without the call: TW_EUNSUPPORTED. */
tw_status tw_nvml_process_util(const char *library, unsigned index, unsigned long long since_us, tw_proc_util *out,
                               size_t cap, size_t *n, unsigned long long *newest_us);

#endif
