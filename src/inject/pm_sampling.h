/*
 * pm_sampling.h - CUPTI's PM sampling in the injection library (opt-in:
 * `truewatt run --activity-counters[=MS]` sets TW_PM_INTERVAL_MS; it raises
 * the GPU's power, docs/usage.md): hardware activity counters (SM cycles
 * active, DRAM and L2 traffic, clocks) sampled every MS on each GPU where the
 * program has a context, for a power model B + sum_m c_m * metric_m(t)
 * fitted against the sensor's readings (issue 15, "Where it helps, activity
 * counters").
 *
 * One thread of its own, below the program's threads (nice +10): every
 * TWI_PM_DECODE_MS it looks for devices whose primary context became active
 * (asking the program's libcuda, never loading one), sets PM sampling up
 * there, and decodes what each device's hardware buffer holds into metric
 * values. The program's threads never wait for any of it. Each device
 * becomes records for the events file (event_csv.h):
 *   pm_metrics  name "interval_ns=N metrics=a,b,... refused=x,y,...": what was
 *               enabled (the metrics in the order of the samples' values)
 *   pm_sample   name "v1 v2 ...": one sample's values, start/end its span on
 *               CUPTI's clock (the kernels' clock)
 *   pm_off      name: why the device has no samples (no permission, old
 *               CUPTI, MIG, none of the metrics accepted, ...)
 *   pm_window   name "on": start/end the span sampling was enabled in (sampling
 *               in windows only: enable .. disable, each ~0.1 s, inside it)
 *   pm_end      name "samples=N overflows=N busy_s=S": at the end, the samples
 *               recorded, the decodes that found the hardware buffer overflowed,
 *               and the seconds spent decoding and evaluating (this process's
 *               cost, mostly CPU)
 * Whatever fails is recorded as pm_off and the program goes on.
 *
 * The call sequence is the one apps/pmprobe/pmprobe.c measured on the H100
 * (results/h100/pm-probe*): profiler initialised, counter availability,
 * metrics chosen greedily into one pass, enable, config with the time
 * trigger (the SYSCLK one where refused), counter data image, start; decode,
 * per-sample info and evaluation; stop, decode the rest, disable.
 */
#ifndef TW_INJECT_PM_SAMPLING_H
#define TW_INJECT_PM_SAMPLING_H

#include <stdbool.h>
#include <stdint.h>

#include "inject/event_csv.h"
#include "inject/pm_device.h"

#define TWI_PM_DECODE_MS 250 /* how often the hardware buffers are decoded */

/* What PM sampling hands its records to: called on its thread (or the one
 * calling twi_pm_stop), never on the program's. */
typedef void (*twi_pm_emit_fn)(void *ctx, const twi_record *r);

typedef struct twi_pm_config {
    uint64_t interval_ns; /* the sampling interval */
    /* sampling in windows: enabled window_ns of every period_ns, disabled in
     * between (0: enabled throughout). The GPU draws more while it is
     * enabled (results/h100/pm-cycle); each window becomes a pm_window record */
    uint64_t window_ns, period_ns;
    /* windows only where the GPU works: a window falls due once period_ns has
     * passed and the device has run a kernel, copy or memset since the last
     * one closed (twi_pm_saw_activity), so that a program's short stretches
     * of GPU work are sampled wherever they fall ("ON,EVERY,busy") */
    bool busy_windows;
    /* the metrics to ask for, comma-separated, most important first (NULL or
     * "": twi_pm_wanted); TW_PM_METRICS, for studies of the features
     * (scripts/gpu-activity-calib): the per-SM pipe metrics cost ~30 % of a
     * core each to decode (pm_sampling.c) */
    const char *metrics;
    const char *prefix; /* of messages on stderr */
    bool verbose;       /* also what was set up */
    twi_pm_emit_fn emit;
    void *ctx;
} twi_pm_config;

/* Starts the PM thread with libcupti's handle `cupti` (loaded by
 * cupti_activity.c). False (and a message) when it cannot start. */
bool twi_pm_start(const twi_pm_config *c, void *cupti);
/* Stops the thread, decodes what is left, stops and disables sampling on
 * every device; emits the last records. Safe to call when not started. */
void twi_pm_stop(void);
/* In a forked child: the thread and the devices are the parent's. */
void twi_pm_after_fork(void);
/* CUDA device `device` ran a kernel, copy or memset (its activity record
 * arrived): any thread, lock-free. */
void twi_pm_saw_activity(int device);

/* The metrics asked for, most important first (the chip may refuse some;
 * one pass is kept): the cheap ones to decode (pm_sampling.c says why). */
extern const char *const twi_pm_wanted[];
extern const unsigned twi_pm_n_wanted;

#endif
