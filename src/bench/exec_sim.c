/* The executor on the simulator: the schedule becomes a scenario (context
 * time, kernels at the planned instants with the profile's kernel power),
 * read back through the sim backend with its exact ground truth. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/exec.h"
#include "core/error.h"

#define SIM_LAUNCH_GAP_S 5e-6 /* between back-to-back launches, as on a GPU */
#define SIM_TAIL_S 1.0        /* recorded after the last action */

typedef struct sim_exec {
    tw_exec x; /* first: the executor is cast back and forth */
    tw_scenario *sc;
    uint64_t seed;
} sim_exec;

static double kernel_step_w(tw_sim_profile p)
{
    /* sensors-h100.md: the spin kernel draws ~340 W over ~120 W active idle;
     * K20: a kernel well above the 52.5 W active idle (Burtscher §4) */
    return p == TW_SIM_H100 ? 220.0 : 80.0;
}

static tw_status sim_context(tw_exec *x)
{
    sim_exec *s = (sim_exec *)x;
    tw_status st = tw_scenario_set_context(s->sc, x->now_s);
    if (st != TW_OK) return st;
    x->context_s = x->now_s;
    return tw_exec_add_event(x, "context", "marker", x->now_s, x->now_s);
}

static tw_status sim_idle(tw_exec *x, double s)
{
    x->now_s += s;
    return TW_OK;
}

static tw_status sim_block(tw_exec *x, const char *label, double kernel_s, size_t count)
{
    sim_exec *s = (sim_exec *)x;
    double power_w = x->true_active_idle_w + x->true_step_w;
    for (size_t i = 0; i < count; i++) {
        double t0 = x->now_s + (i ? SIM_LAUNCH_GAP_S : 0.0);
        tw_status st = tw_scenario_add_kernel(s->sc, label, t0, kernel_s, power_w);
        if (st == TW_OK) st = tw_exec_add_event(x, label, NULL, t0, t0 + kernel_s);
        if (st != TW_OK) return st;
        x->now_s = t0 + kernel_s;
    }
    return TW_OK;
}

/* The simulator cannot run PTX: each launch lasts k->sim_s at k->sim_w above active idle. */
static tw_status sim_kernel(tw_exec *x, const tw_exec_kernel *k, size_t count)
{
    sim_exec *s = (sim_exec *)x;
    if (!(k->sim_s > 0) || !isfinite(k->sim_w))
        return tw_fail(TW_EINVAL, "the simulator needs a length and a power for kernel '%s'", k->label);
    for (size_t i = 0; i < count; i++) {
        double t0 = x->now_s + (i ? SIM_LAUNCH_GAP_S : 0.0);
        tw_status st = tw_scenario_add_kernel(s->sc, k->label, t0, k->sim_s, x->true_active_idle_w + k->sim_w);
        if (st == TW_OK) st = tw_exec_add_event(x, k->label, NULL, t0, t0 + k->sim_s);
        if (st != TW_OK) return st;
        x->now_s = t0 + k->sim_s;
    }
    return TW_OK;
}

static tw_status sim_finish(tw_exec *x)
{
    sim_exec *s = (sim_exec *)x;
    x->now_s += SIM_TAIL_S;
    tw_status st = tw_scenario_set_duration(s->sc, x->now_s);
    if (st != TW_OK) return st;
    tw_sensor_config cfg = {.scenario = s->sc, .seed = s->seed};
    return tw_sensor_open("sim", &cfg, &x->trace);
}

static void sim_destroy(tw_exec *x)
{
    sim_exec *s = (sim_exec *)x;
    tw_scenario_free(s->sc);
    free(s);
}

static const tw_exec_ops sim_ops = {
    .name = "sim",
    .context = sim_context,
    .idle = sim_idle,
    .block = sim_block,
    .kernel = sim_kernel,
    .finish = sim_finish,
    .destroy = sim_destroy,
};

tw_status tw_exec_sim_new(tw_sim_profile profile, uint64_t seed, tw_exec **out)
{
    if (!out) return tw_fail(TW_EINVAL, "tw_exec_sim_new: NULL out");
    *out = NULL;
    sim_exec *s = calloc(1, sizeof *s);
    if (!s) return tw_fail(TW_ENOMEM, "out of memory (sim executor)");
    tw_status st = tw_scenario_new(profile, &s->sc);
    if (st == TW_OK) st = tw_events_new(&s->x.events);
    if (st != TW_OK) {
        tw_scenario_free(s->sc);
        free(s);
        return st;
    }
    s->seed = seed;
    tw_exec *x = &s->x;
    x->ops = &sim_ops;
    x->context_s = NAN;
    x->true_idle_w = tw_scenario_idle_w(s->sc);
    x->true_active_idle_w = tw_scenario_active_idle_w(s->sc);
    x->true_step_w = kernel_step_w(profile);
    x->sm_count = profile == TW_SIM_H100 ? 132 : 13;
    /* the attributes the drivers report: H100 SXM 50 MiB L2, 228 KiB shared per SM; K20 1.5 MiB, 48 KiB */
    x->l2_bytes = profile == TW_SIM_H100 ? 52428800.0 : 1572864.0;
    x->smem_per_sm_bytes = profile == TW_SIM_H100 ? 233472.0 : 49152.0;
    x->cc = profile == TW_SIM_H100 ? 90 : 35;
    snprintf(x->gpu, sizeof x->gpu, "simulated %s", tw_sim_profile_name(profile));
    snprintf(x->driver, sizeof x->driver, "sim");
    snprintf(x->backend, sizeof x->backend, "sim");
    *out = x;
    return TW_OK;
}
