/* `truewatt measure-kernel` as a library call (tw_measure_kernel,
 * truewatt.h): the energy per launch of one kernel, even one far shorter
 * than the sensor's update period. The plan is phase-shifted repetition
 * (after Yang et al. 2024): blocks of back-to-back launches whose starts
 * are spread over the phases of the best reading's update period, so the
 * sensor's windows see the kernel at every phase. The estimate is the
 * estimator's (estimate/estimator.h) over those launches and the steady
 * reference's, each name one unknown: per launch its energy over its
 * launches, with its standard error likewise. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bench/experiment.h"
#include "bench/plans.h"
#include "bench/repeat.h"
#include "core/error.h"
#include "core/json.h"
#include "core/note.h"
#include "correct/identify.h"
#include "correct/observe.h"
#include "correct/profile_pick.h"
#include "estimate/estimator.h"

#define REF_S 4.0 /* the steady-state reference block */

void tw_measure_kernel_options_init(tw_measure_kernel_options *o)
{
    memset(o, 0, sizeof *o);
    o->size = sizeof *o;
    o->duration_s = 1e-3;
    o->block_s = 0.2;
    o->gap_s = 0.3;
    o->blocks = 8;
    o->phases = 4;
    o->reference = true;
    o->trace_out = "truewatt-measure.csv";
}

typedef struct plan_ctx {
    const tw_measure_kernel_options *a;
    bool identify;   /* no profile: identification first */
    double period_s; /* the best reading's update period */
    char label[48], ref_label[48];
} plan_ctx;

static tw_status plan(tw_exec *x, void *p)
{
    plan_ctx *c = p;
    const tw_measure_kernel_options *a = c->a;
    tw_status st = c->identify ? tw_plan_identify(x) : TW_OK;
    if (st == TW_OK && !c->identify) st = tw_exec_idle(x, 1.0);
    if (st == TW_OK && !c->identify) st = tw_exec_context(x);
    if (st == TW_OK) st = tw_exec_idle(x, 2.0);
    size_t per_ref = (size_t)ceil(REF_S / a->duration_s - 1e-9);
    if (st == TW_OK && a->reference) st = tw_exec_block(x, c->ref_label, a->duration_s, per_ref);
    if (st == TW_OK && a->reference) st = tw_exec_idle(x, 1.5);
    size_t per_block = (size_t)ceil(a->block_s / a->duration_s - 1e-9);
    if (st == TW_OK)
        st = tw_plan_repeat(x, c->label, a->duration_s, per_block, a->blocks, a->phases, c->period_s, a->gap_s);
    return st == TW_OK ? tw_exec_idle(x, 1.0) : st;
}

typedef struct outcome {
    tw_repeat_result r;
    const tw_reading_model *m;
} outcome;

/* The reading's windows, and the energy counter's as the reference when the
 * profile models it as a counter and the trace has it. */
static tw_status analyse(const plan_ctx *c, tw_exec *x, const tw_profile *p, outcome *o)
{
    memset(o, 0, sizeof *o);
    o->m = tw_profile_best(p, tw_identify_board_reading, NULL);
    size_t idx, cidx;
    if (!o->m || tw_sensor_find(x->trace, o->m->name, &idx) != TW_OK) {
        return tw_fail(TW_ENOTFOUND, "the trace has no reading the profile can use");
    }
    tw_obs_series obs[2];
    tw_obs_series_init(&obs[0]);
    tw_obs_series_init(&obs[1]);
    tw_est_reading rd[2];
    size_t nrd = 0;
    bool is_counter = o->m->response == TW_RESP_COUNTER;
    tw_status st = tw_observe(x->trace, idx, o->m, true, &obs[0]);
    if (st == TW_OK) rd[nrd++] = (tw_est_reading){o->m->name, obs[0].v, obs[0].n, is_counter, obs[0].tau_s};
    const tw_reading_model *cm = is_counter ? NULL : tw_profile_find(p, "energy_j");
    if (st == TW_OK && cm && cm->response == TW_RESP_COUNTER && tw_sensor_find(x->trace, "energy_j", &cidx) == TW_OK) {
        st = tw_observe(x->trace, cidx, cm, true, &obs[1]);
        if (st == TW_OK) rd[nrd++] = (tw_est_reading){"energy_j", obs[1].v, obs[1].n, true, obs[1].tau_s};
    }
    tw_clear_error();
    if (st == TW_OK) {
        tw_est_config cfg;
        tw_est_config_init(&cfg);
        st = tw_repeat_estimate(rd, nrd, x->events, &cfg, c->label, c->a->reference ? c->ref_label : NULL, &o->r);
    }
    tw_obs_series_free(&obs[0]);
    tw_obs_series_free(&obs[1]);
    return st;
}

static void print_text(FILE *f, const tw_measure_kernel_options *a, const outcome *o, const char *how)
{
    fprintf(f, "kernel:          tw_spin_fma, %.3f ms per launch (measured mean %.4f ms)\n", a->duration_s * 1e3,
            o->r.rep.mean_launch_s * 1e3);
    fprintf(f, "reading:         %s (%s, update every %.1f ms, coverage %.0f %%)\n", o->m->name,
            tw_response_name(o->m->response), o->m->period_s * 1e3, o->m->coverage * 100);
    fprintf(f, "profile:         %s\n", how);
    fprintf(f, "estimator:       %s; baseline %.2f W\n", o->r.readings, o->r.baseline_w);
    fprintf(f, "repetition:      %u blocks, %u launches\n", o->r.rep.blocks, o->r.rep.launches);
    if (o->r.rep.status == TW_EST_BELOW_RESOLUTION)
        fprintf(f, "energy/launch:   < %.6g J (below resolution: %.6g J +- %.2g J, dynamic, above the baseline)\n",
                o->r.rep.upper_j, o->r.rep.per_launch_j, o->r.rep.per_launch_sd_j);
    else if (o->r.rep.status == TW_EST_AT_POWER_BOUND)
        fprintf(f, "energy/launch:   <= %.6g J (at the power bound: the most the model can give it, dynamic)\n",
                o->r.rep.upper_j);
    else
        fprintf(f, "energy/launch:   %.6g J +- %.2g J (dynamic, above the baseline)\n", o->r.rep.per_launch_j,
                o->r.rep.per_launch_sd_j);
    fprintf(f, "                 %.6g J with its share of the baseline (%.2f W x %.4f ms)\n",
            o->r.rep.per_launch_j + o->r.baseline_w * o->r.rep.mean_launch_s, o->r.baseline_w,
            o->r.rep.mean_launch_s * 1e3);
    fprintf(f, "dynamic power:   %.2f W\n", o->r.rep.power_w);
    if (o->r.ref.found)
        fprintf(f, "steady state:    %.2f W dynamic over %.1f s back to back -> %.6g J per launch (%+.2f %%)\n",
                o->r.ref.power_w, o->r.ref.mean_launch_s * o->r.ref.launches, o->r.ref.power_w * o->r.rep.mean_launch_s,
                100.0 * (o->r.rep.per_launch_j / (o->r.ref.power_w * o->r.rep.mean_launch_s) - 1.0));
}

static void print_json(FILE *f, const tw_measure_kernel_options *a, const outcome *o, const char *how)
{
    json j;
    json_init(&j, f);
    json_begin_object(&j);
    json_kv_string(&j, "kernel", "tw_spin_fma");
    json_kv_number(&j, "requested_s", a->duration_s);
    json_kv_number(&j, "mean_launch_s", o->r.rep.mean_launch_s);
    json_kv_string(&j, "reading", o->m->name);
    json_kv_string(&j, "response", tw_response_name(o->m->response));
    json_kv_string(&j, "profile", how);
    json_kv_string(&j, "estimator_readings", o->r.readings);
    json_kv_uint(&j, "blocks", o->r.rep.blocks);
    json_kv_uint(&j, "launches", o->r.rep.launches);
    json_kv_number(&j, "baseline_w", o->r.baseline_w);
    json_kv_number(&j, "energy_per_launch_j", o->r.rep.per_launch_j);
    json_kv_number(&j, "energy_per_launch_se_j", o->r.rep.per_launch_sd_j);
    json_kv_string(&j, "status", tw_est_status_name(o->r.rep.status));
    json_kv_number(&j, "upper_per_launch_j",
                   o->r.rep.status == TW_EST_BELOW_RESOLUTION || o->r.rep.status == TW_EST_AT_POWER_BOUND
                       ? o->r.rep.upper_j
                       : NAN);
    json_kv_number(&j, "dynamic_power_w", o->r.rep.power_w);
    json_kv_number(&j, "steady_state_power_w", o->r.ref.found ? o->r.ref.power_w : NAN);
    json_end_object(&j);
    json_finish(&j);
}

/* The options' values a plan can be made of. */
static tw_status check_options(const tw_measure_kernel_options *a)
{
    if (!(a->duration_s > 0) || !(a->gap_s > 0) || !isfinite(a->duration_s) || !isfinite(a->gap_s))
        return tw_fail(TW_EINVAL, "a launch's length and the gap must be > 0");
    if (!(a->block_s >= a->duration_s) || !isfinite(a->block_s))
        return tw_fail(TW_EINVAL, "a block must hold at least one launch");
    if (a->blocks < 2 || a->phases < 1) return tw_fail(TW_EINVAL, "at least 2 blocks and 1 phase");
    return TW_OK;
}

tw_status tw_measure_kernel(const tw_experiment_options *e_in, const tw_measure_kernel_options *a_in, FILE *out)
{
    tw_experiment_options e_full;
    tw_measure_kernel_options a_full;
    tw_measure_kernel_options_init(&a_full);
    tw_status sized = xp_read_options(&e_full, e_in, &a_full, sizeof a_full, a_in, "tw_measure_kernel");
    if (sized != TW_OK) return sized;
    const tw_experiment_options *e = &e_full;
    const tw_measure_kernel_options *a = &a_full;
    if (!out) return tw_fail(TW_EINVAL, "tw_measure_kernel: NULL argument"); /* NULL options: xp_read_options */
    tw_status st = check_options(a);
    if (st != TW_OK) return st;
    const char *trace = a->trace_out ? a->trace_out : "truewatt-measure.csv";
    char events[4096];
    xp_events_path(trace, events, sizeof events);

    plan_ctx c = {.a = a, .period_s = 0.1};
    snprintf(c.label, sizeof c.label, "measure_%gms", a->duration_s * 1e3);
    snprintf(c.ref_label, sizeof c.ref_label, "reference_%gms", a->duration_s * 1e3);
    tw_profile p;
    tw_profile_init(&p);
    char how[4352];
    /* a profile that was named must load before anything starts */
    if (a->profile && (st = tw_profile_pick(a->profile, NULL, NULL, &p, how, sizeof how)) != TW_OK) return st;
    tw_exec *x = NULL;
    double per = (double)a->blocks * (a->block_s + a->gap_s + 0.05) + (a->reference ? REF_S + 1.5 : 0) + 4.0;
    if ((st = xp_start(e, trace, events, per, &x)) != TW_OK) return st;
    if (!a->profile) st = tw_profile_pick(NULL, x->gpu, x->driver, &p, how, sizeof how);
    if (st == TW_ENOTFOUND) {
        tw_notef(e->note, e->note_ctx, "%s: identifying the sensor first (~%.0f s)", how, tw_plan_identify_s());
        c.identify = true;
        x->planned_s += tw_plan_identify_s();
        st = TW_OK;
    }
    const tw_reading_model *best = c.identify ? NULL : tw_profile_best(&p, tw_identify_board_reading, NULL);
    if (best && best->period_s > 0) c.period_s = best->period_s;
    if (st == TW_OK) st = xp_run(x, plan, &c);
    if (st == TW_OK) st = xp_keep_sim_run(x, trace, events, e->provenance);
    if (st == TW_OK && c.identify) {
        tw_identify_options o;
        tw_identify_options_init(&o);
        double end = 0;
        for (size_t i = 0; i < tw_events_count(x->events); i++) {
            const tw_event *ev = tw_events_get(x->events, i);
            if (!strncmp(ev->name, "id_", 3)) end = fmax(end, ev->end_s);
        }
        o.t_end_s = end + 2.5;
        st = tw_identify(x->trace, x->events, &o, &p, NULL);
        snprintf(how, sizeof how, "identified in this run (save one with 'truewatt sensor identify')");
    }
    outcome res;
    if (st == TW_OK) st = analyse(&c, x, &p, &res);
    if (st == TW_OK) {
        if (a->json)
            print_json(out, a, &res, how);
        else
            print_text(out, a, &res, how);
    }
    tw_exec_free(x);
    return st;
}
