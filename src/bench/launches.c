/* Energy of an experiment's launches; see launches.h. */
#include "bench/launches.h"

#include <math.h>
#include <stdlib.h>

#include "core/error.h"
#include "correct/estimate.h"
#include "correct/observe.h"

tw_status tw_launch_energies(tw_sensor *trace, const tw_events *events, const tw_reading_model *m,
                             const size_t *event_idx, size_t n, tw_launch_energy *out)
{
    if (!trace || !events || !m || (n && (!event_idx || !out)))
        return tw_fail(TW_EINVAL, "tw_launch_energies: NULL argument");
    size_t idx;
    tw_status st = tw_sensor_find(trace, m->name, &idx);
    tw_obs_series obs;
    tw_obs_series_init(&obs);
    tw_events *ev = NULL;
    tw_event_estimate *est = calloc(n ? n : 1, sizeof *est);
    if (!est) st = tw_fail(TW_ENOMEM, "out of memory (estimates)");
    if (st == TW_OK) st = tw_observe(trace, idx, m, true, &obs);
    if (st == TW_OK) st = tw_events_new(&ev);
    for (size_t i = 0; st == TW_OK && i < n; i++) {
        const tw_event *e = tw_events_get(events, event_idx[i]);
        if (!e) st = tw_fail(TW_EINVAL, "launch %zu: no event %zu", i, event_idx[i]);
        if (st == TW_OK) st = tw_events_add(ev, e);
    }
    /* one idle level: its error goes into the analyses' time regressors */
    double idle = st == TW_OK ? tw_estimate_idle_w(obs.v, obs.n, events, NAN, NAN) : NAN;
    if (st == TW_OK && !isfinite(idle)) st = tw_fail(TW_ENUMERIC, "no idle time between the kernels");
    if (st == TW_OK) st = tw_estimate_events(obs.v, obs.n, ev, idle, est);
    for (size_t i = 0; st == TW_OK && i < n; i++) {
        const tw_event *e = tw_events_get(events, event_idx[i]);
        out[i] = (tw_launch_energy){e->start_s, e->end_s, est[i].total_j, est[i].dyn_j};
    }
    tw_events_free(ev);
    free(est);
    tw_obs_series_free(&obs);
    return st;
}

double tw_launch_reading_mean(tw_sensor *trace, const char *name, const double *t0, const double *t1, size_t n,
                              double fallback)
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
        double c = tw_updates_hold_integral(&u, t0[i], t1[i]);
        if (isfinite(c)) sum += c, dur += t1[i] - t0[i];
    }
    tw_update_series_free(&u);
    return dur > 0 ? sum / dur : fallback;
}
