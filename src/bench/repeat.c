/* Phase-shifted repetition's estimate: see repeat.h. */
#include "bench/repeat.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/error.h"

#define BLOCK_GAP_S 0.01 /* launches closer than this form one block */

double tw_repeat_gap_s(size_t b, size_t phases, double period_s, double base_gap_s)
{
    return base_gap_s + (phases ? (double)(b % phases) * period_s / (double)phases : 0.0);
}

/* Blocks of back-to-back launches of `label` (events in time order). */
static unsigned count_blocks(const tw_events *ev, const char *label)
{
    unsigned n = 0;
    double last = -INFINITY;
    for (size_t i = 0; i < tw_events_count(ev); i++) {
        const tw_event *e = tw_events_get(ev, i);
        if (strcmp(e->name, label) != 0) continue;
        if (e->start_s - last >= BLOCK_GAP_S) n++;
        last = e->end_s;
    }
    return n;
}

static tw_repeat_name name_of(const tw_estimate *est, const tw_events *ev, const char *label)
{
    tw_repeat_name r = {.found = false};
    for (size_t i = 0; i < est->nnames; i++) {
        const tw_est_name *x = &est->names[i];
        if (strcmp(x->name, label) != 0) continue;
        double E = x->energy_j, sd = x->energy_sd_j, up = x->upper_j, P = x->power_w;
        r.status = x->status;
        if (x->status == TW_EST_GROUPED && x->group >= 0) { /* with the reference: its group's power */
            const tw_est_group *g = &est->groups[x->group];
            P = g->power_w;
            E = P * x->active_s;
            sd = g->power_sd_w * x->active_s;
            up = g->status == TW_EST_AT_POWER_BOUND ? E : isnan(g->upper_j) ? NAN : E + 2 * sd;
            r.status = g->status;
        }
        r.found = x->launches > 0;
        r.launches = (unsigned)x->launches;
        r.mean_launch_s = x->time_s / (double)x->launches;
        r.per_launch_j = E / (double)x->launches;
        r.per_launch_sd_j = sd / (double)x->launches;
        r.upper_j = up / (double)x->launches;
        r.power_w = P;
        r.blocks = count_blocks(ev, label);
        break;
    }
    return r;
}

tw_status tw_repeat_estimate(const tw_est_reading *rd, size_t nrd, const tw_events *events, const tw_est_config *cfg,
                             const char *label, const char *ref_label, tw_repeat_result *out)
{
    memset(out, 0, sizeof *out);
    tw_estimate *est = NULL;
    tw_status st = tw_estimate_run(rd, nrd, events, cfg, &est);
    if (st != TW_OK) return st;
    snprintf(out->readings, sizeof out->readings, "%s%s%s", rd[0].name, nrd > 1 ? " + " : "",
             nrd > 1 ? "energy_j (reference)" : "");
    out->baseline_w = est->baseline_mean_w;
    out->rep = name_of(est, events, label);
    if (ref_label) out->ref = name_of(est, events, ref_label);
    tw_estimate_free(est);
    if (!out->rep.found) return tw_fail(TW_ENOTFOUND, "no launches of '%s' in the estimate", label);
    return TW_OK;
}
