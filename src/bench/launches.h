/* Energy of an experiment's launches (internal): each chosen event's
 * energy by a reading's model, total and above active idle (one idle level
 * from the time between the kernels), and the mean SM clock over them.
 * Shared by the microbenchmark analyses (isa_run, mem_run). */
#ifndef TW_BENCH_LAUNCHES_H
#define TW_BENCH_LAUNCHES_H

#include <stdbool.h>
#include <stddef.h>

#include "correct/profile.h"
#include "truewatt.h"

typedef struct tw_launch_energy {
    double t0, t1;  /* the event's span */
    double total_j; /* by the reading's model */
    double dyn_j;   /* above active idle */
} tw_launch_energy;

/* out[i] for events[event_idx[i]], i < n. */
tw_status tw_launch_energies(tw_sensor *trace, const tw_events *events, const tw_reading_model *m,
                             const size_t *event_idx, size_t n, tw_launch_energy *out);

/* The mean of reading `name` over the spans of le[i] for which keep[i] (all
 * when keep is NULL), time-weighted; `fallback` when the trace has no such
 * reading. */
double tw_launch_reading_mean(tw_sensor *trace, const char *name, const tw_launch_energy *le, const bool *keep,
                              size_t n, double fallback);

/* The profile's best reading for board energy, its name into name; NULL with
 * the error set when the profile has none. */
const tw_reading_model *tw_launch_reading(const tw_profile *p, char *name, size_t cap);

/* Mean and sample standard deviation of the finite values among v[0..n). */
void tw_mean_sd(const double *v, int n, double *mean, double *sd);

#endif
