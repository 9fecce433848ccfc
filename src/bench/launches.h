/* Energy of an experiment's launches (internal): each chosen event's
 * energy by the estimator (estimate/estimator.h) on a reading's model, every
 * kernel launch its own unknown, total and above the estimator's baseline,
 * and the mean SM clock over them. Shared by the microbenchmark analyses
 * (isa_run, mem_run) and the validation. */
#ifndef TW_BENCH_LAUNCHES_H
#define TW_BENCH_LAUNCHES_H

#include <stdbool.h>
#include <stddef.h>

#include "correct/profile.h"
#include "estimate/estimator.h"
#include "truewatt.h"

typedef struct tw_launch_energy {
    double t0, t1;  /* the event's span */
    double total_j; /* dyn_j + the baseline's energy over the span */
    double dyn_j;   /* above the baseline */
} tw_launch_energy;

/* A copy of `in` in the same order in which every event that `own` selects
 * (all when NULL) is renamed "<name>#<index>", so that the estimator gives
 * it its own power instead of its name's. */
tw_status tw_events_own_names(const tw_events *in, bool (*own)(const tw_event *e, void *ctx), void *ctx,
                              tw_events **out);

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
