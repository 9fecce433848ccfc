/* Energy of each event from observations (internal): the window-aware
 * estimator every model shares.
 *
 * For each observation window, the energy above `idle_w` in it,
 * (P_obs - idle_w) * (t1 - t0), goes to the events active in it, split in
 * proportion to each event's time inside the window (concurrent events share;
 * a window without events gives its energy to nobody). Each event then has
 * the dynamic energy the windows saw of it and the time of it they saw
 * (overlap summed over windows; overlapping windows count each time, which is
 * consistent because both sums count them). Its dynamic power is
 * received / seen, its dynamic energy that power times its duration. With
 * tiling windows (coverage 1) this is the plain split of interval energies;
 * with a 25 %-coverage reading it extrapolates from what was seen; an event no
 * window saw has no estimate (NaN, seen_s = 0). */
#ifndef TW_CORRECT_ESTIMATE_H
#define TW_CORRECT_ESTIMATE_H

#include <stddef.h>

#include "correct/observe.h"
#include "truewatt.h"

typedef struct tw_event_estimate {
    double dyn_j;     /* energy above idle_w over the event; NaN when not seen */
    double total_j;   /* dyn_j + idle_w * duration */
    double power_w;   /* dynamic power while it ran */
    double seen_s;    /* time of the event the windows saw (summed over windows) */
    double seen_frac; /* seen_s / duration, capped at 1 only for display by callers */
} tw_event_estimate;

/* out[i] for events[i] (tw_events_get order); `events` need not be sorted.
 * Events of kind "nvtx" are skipped (NaN), as they do not draw power. */
tw_status tw_estimate_events(const tw_obs *obs, size_t n, const tw_events *events, double idle_w,
                             tw_event_estimate *out);

/* The level of the observations whose windows contain no event and lie
 * within [t_from, t_to] (median). NaN when none. */
double tw_estimate_idle_w(const tw_obs *obs, size_t n, const tw_events *events, double t_from_s, double t_to_s);

#endif
