/* Energy of an experiment's launches; see launches.h. */
#include "bench/launches.h"

#include <math.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "correct/identify.h"
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
    if (st == TW_OK) st = tw_observe(trace, idx, m, true, &obs);
    /* every kernel of the experiment is estimated, the unrecorded ones
     * (calibration) too: a reading's window that holds one of them and a
     * recorded launch must give each its own share, not all to the launch */
    size_t nall = tw_events_count(events), *at = calloc(nall + 1, sizeof *at), nk = 0;
    tw_event_estimate *all = calloc(nall + 1, sizeof *all);
    if (st == TW_OK && (!at || !all)) st = tw_fail(TW_ENOMEM, "out of memory (estimates)");
    if (st == TW_OK) st = tw_events_new(&ev);
    for (size_t i = 0; st == TW_OK && i < nall; i++) {
        const tw_event *e = tw_events_get(events, i);
        at[i] = SIZE_MAX;
        if (e->kind && strcmp(e->kind, "kernel") != 0) continue;
        at[i] = nk++;
        st = tw_events_add(ev, e);
    }
    for (size_t i = 0; st == TW_OK && i < n; i++)
        if (event_idx[i] >= nall || at[event_idx[i]] == SIZE_MAX)
            st = tw_fail(TW_EINVAL, "launch %zu: no kernel event %zu", i, event_idx[i]);
    /* one idle level: its error goes into the analyses' time regressors */
    double idle = st == TW_OK ? tw_estimate_idle_w(obs.v, obs.n, events, NAN, NAN) : NAN;
    if (st == TW_OK && !isfinite(idle)) st = tw_fail(TW_ENUMERIC, "no idle time between the kernels");
    if (st == TW_OK) st = tw_estimate_events(obs.v, obs.n, ev, idle, all);
    for (size_t i = 0; st == TW_OK && i < n; i++) {
        const tw_event *e = tw_events_get(events, event_idx[i]);
        const tw_event_estimate *x = &all[at[event_idx[i]]];
        out[i] = (tw_launch_energy){e->start_s, e->end_s, x->total_j, x->dyn_j};
    }
    free(at);
    free(all);
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
