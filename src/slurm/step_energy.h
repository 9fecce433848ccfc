/* step_energy - a job step's energy on its GPUs, through libtruewatt's public
 * API only (include/truewatt.h: the nvml backend's device list and the
 * sampler), so that the plugin stays a thin layer and can move to the
 * session API when it lands.
 *
 * The sampler records each GPU's energy counter and board power into a trace
 * file while the step runs (the power once a second, the counter at the
 * sampling plan's period, ~0.5 s: a few rows a second, ~1 MB an hour). The energy of each GPU is the
 * difference of its energy counter (nvmlDeviceGetTotalEnergyConsumption, the
 * reading a sensor profile calls best on Volta and later) between the step's
 * start and end, each taken on the line through the two readings nearest to
 * it by their own timestamps: exact while the power between those readings
 * is steady, otherwise off by at most the counter's update period (100 ms on
 * an H100) times the power. A GPU without a counter (before Volta) gets the
 * trapezoid of its board power (nvmlDeviceGetPowerUsage) instead, which on
 * such GPUs lags and smooths the true power: fine over a long step, off by
 * up to the sensor's lag times the change of power at each end. */
#ifndef TW_SLURM_STEP_ENERGY_H
#define TW_SLURM_STEP_ENERGY_H

#include <stddef.h>
#include <stdint.h>

#include "truewatt.h"

typedef struct step_gpu_energy {
    unsigned index;      /* NVML index */
    char uuid[96];       /* "GPU-..." */
    char name[96];       /* model */
    double energy_j;     /* NaN when the counter could not be read twice */
    size_t readings;     /* readings of it in the trace */
    const char *reading; /* the reading used: "energy_j" (the counter), "power_usage_w" (none) */
    const char *method;  /* "energy counter difference", "board power trapezoid ...", or why there is no number */
} step_gpu_energy;

typedef struct step_meter step_meter;

/* Starts sampling the GPUs `ids` (NVML indices or UUIDs; each must exist).
 * trace_path: the trace file to write (removed by step_meter_free);
 * profile_dir: sensor profiles for the sampling plan (may be NULL).
 * On failure, what went wrong is in err. */
tw_status step_meter_start(const char *const *ids, size_t n, const char *trace_path, const char *profile_dir,
                           step_meter **out, char *err, size_t err_len);
/* Ends the step now: stops sampling and works out each GPU's energy. */
tw_status step_meter_stop(step_meter *m);
size_t step_meter_count(const step_meter *m);
const step_gpu_energy *step_meter_gpu(const step_meter *m, size_t i);
double step_meter_time_s(const step_meter *m);       /* the step's length, start to stop */
double step_meter_start_unix_s(const step_meter *m); /* when it started (CLOCK_REALTIME) */
const char *step_meter_notes(const step_meter *m);   /* the sampler's notes ("" when none) */
/* Stops sampling if still running, removes the trace file, frees. */
void step_meter_free(step_meter *m);

/* The energy between start_s and end_s on a trace's energy counter `column`
 * (joules, with its own timestamps): the counter at each end on the line
 * through the two readings nearest to it. *readings: counter readings in the
 * trace. TW_EEMPTY when fewer than two. */
tw_status step_counter_energy(const char *trace_path, const char *column, double start_s, double end_s,
                              double *energy_j, size_t *readings);

/* The energy between start_s and end_s from a power column (watts, with its
 * own timestamps): the trapezoid of its readings, each end held at the
 * nearest reading's power. TW_EEMPTY when it has none. */
tw_status step_power_energy(const char *trace_path, const char *column, double start_s, double end_s, double *energy_j,
                            size_t *readings);

#endif
