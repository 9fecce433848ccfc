/* Energy of an experiment's launches; see launches.h. */
#include "bench/launches.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "correct/identify.h"
#include "correct/observe.h"

tw_status tw_events_own_names(const tw_events *in, bool (*own)(const tw_event *e, void *ctx), void *ctx,
                              tw_events **out)
{
    *out = NULL;
    tw_events *ev = NULL;
    tw_status st = tw_events_new(&ev);
    for (size_t i = 0; st == TW_OK && i < tw_events_count(in); i++) {
        tw_event e = *tw_events_get(in, i);
        char name[512];
        if (!own || own(&e, ctx)) {
            snprintf(name, sizeof name, "%.480s#%zu", e.name, i);
            e.name = name;
        }
        st = tw_events_add(ev, &e);
    }
    if (st != TW_OK) {
        tw_events_free(ev);
        return st;
    }
    *out = ev;
    return TW_OK;
}

static bool is_kernel(const tw_event *e, void *ctx)
{
    (void)ctx;
    return !e->kind || !*e->kind || strcmp(e->kind, "kernel") == 0;
}

tw_status tw_launch_energies(tw_sensor *trace, const tw_events *events, const tw_reading_model *m,
                             const size_t *event_idx, size_t n, tw_launch_energy *out)
{
    if (!trace || !events || !m || (n && (!event_idx || !out)))
        return tw_fail(TW_EINVAL, "tw_launch_energies: NULL argument");
    size_t idx, nall = tw_events_count(events);
    for (size_t i = 0; i < n; i++)
        if (event_idx[i] >= nall || !is_kernel(tw_events_get(events, event_idx[i]), NULL))
            return tw_fail(TW_EINVAL, "launch %zu: no kernel event %zu", i, event_idx[i]);
    tw_status st = tw_sensor_find(trace, m->name, &idx);
    tw_obs_series obs;
    tw_obs_series_init(&obs);
    tw_events *ev = NULL;
    tw_estimate *est = NULL;
    if (st == TW_OK) st = tw_observe(trace, idx, m, true, &obs);
    /* every kernel of the experiment is its own unknown, the unrecorded ones
     * (calibration) too: a reading's window that holds one of them and a
     * recorded launch must give each its own share, not all to the launch */
    if (st == TW_OK) st = tw_events_own_names(events, is_kernel, NULL, &ev);
    if (st == TW_OK) {
        tw_est_reading rd = {m->name, obs.v, obs.n, m->response == TW_RESP_COUNTER, obs.tau_s};
        tw_est_config cfg;
        tw_est_config_init(&cfg);
        cfg.max_names = nall + 1; /* never pooled: each launch's energy is wanted */
        st = tw_estimate_run(&rd, 1, ev, &cfg, &est);
    }
    for (size_t i = 0; st == TW_OK && i < n; i++) {
        const tw_event *e = tw_events_get(events, event_idx[i]);
        double dyn = tw_estimate_event_energy_j(est, event_idx[i]);
        out[i] = (tw_launch_energy){e->start_s, e->end_s, dyn + tw_estimate_baseline_j(est, e->start_s, e->end_s), dyn};
    }
    tw_estimate_free(est);
    tw_events_free(ev);
    tw_obs_series_free(&obs);
    return st;
}

double tw_launch_reading_mean(tw_sensor *trace, const char *name, const tw_launch_energy *le, const bool *keep,
                              size_t n, double fallback)
{
    size_t idx;
    if (!trace || tw_sensor_find(trace, name, &idx) != TW_OK) {
        tw_clear_error();
        return fallback;
    }
    tw_update_series u = {0};
    if (tw_updates_read(trace, idx, &u) != TW_OK) {
        tw_clear_error();
        return fallback;
    }
    double sum = 0, dur = 0;
    for (size_t i = 0; i < n && u.n; i++) {
        if (keep && !keep[i]) continue;
        double c = tw_updates_hold_integral(&u, le[i].t0, le[i].t1);
        if (isfinite(c)) sum += c, dur += le[i].t1 - le[i].t0;
    }
    tw_update_series_free(&u);
    return dur > 0 ? sum / dur : fallback;
}

const tw_reading_model *tw_launch_reading(const tw_profile *p, char *name, size_t cap)
{
    const tw_reading_model *m = tw_profile_best(p, tw_identify_board_reading, NULL);
    if (!m) {
        tw_fail(TW_EINVAL, "the sensor profile names no usable reading");
        return NULL;
    }
    snprintf(name, cap, "%s", m->name);
    return m;
}

void tw_mean_sd(const double *v, int n, double *mean, double *sd)
{
    double s = 0, ss = 0;
    int k = 0;
    for (int i = 0; i < n; i++)
        if (isfinite(v[i])) s += v[i], k++;
    *mean = k ? s / k : NAN;
    for (int i = 0; i < n; i++)
        if (isfinite(v[i])) ss += (v[i] - *mean) * (v[i] - *mean);
    *sd = k > 1 ? sqrt(ss / (k - 1)) : NAN;
}
