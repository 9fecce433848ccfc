/* Benchmark: the sensor-model path of issue 4 on the simulated H100 -
 * identification (the ~1 min schedule of `sensor identify`), then, on a long
 * run of short kernels, a reading's observations (tw_observe) and the
 * estimator (estimate/estimator.h) on them, with their speed and the
 * process's peak memory.
 *
 *   bench_models [SECONDS]     (default 600: a 10 min run of 1-30 ms kernels)
 *
 * Everything is simulated (nothing sleeps), so the times are the tool's own. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "bench/exec.h"
#include "bench/plans.h"
#include "core/rng.h"
#include "correct/identify.h"
#include "correct/observe.h"
#include "estimate/estimator.h"

#define BENCH_NAME "bench_models"
#include "bench_common.h"

/* Kernels of four names and 1-30 ms at random gaps, for `seconds`. */
static tw_status short_kernels(tw_exec *x, double seconds)
{
    static const char *const names[] = {"gemm", "relu", "softmax", "copy"};
    static const double len_s[] = {0.030, 0.001, 0.003, 0.010};
    tw_rng rng;
    tw_rng_seed(&rng, 42, 1);
    tw_status st = TW_OK;
    double end = x->now_s + seconds;
    while (st == TW_OK && x->now_s < end) {
        int k = (int)(tw_rng_uniform(&rng) * 4) & 3;
        st = tw_exec_block(x, names[k], len_s[k], 1);
        if (st == TW_OK) st = tw_exec_idle(x, tw_rng_range(&rng, 0.005, 0.06));
    }
    return st;
}

int main(int argc, char **argv)
{
    double seconds = argc > 1 ? atof(argv[1]) : 600.0;
    tw_exec *x = NULL;
    if (check(tw_exec_sim_new(TW_SIM_H100, 1, &x), "simulator")) return 1;
    if (check(tw_plan_identify(x), "identification schedule")) return 1;
    double id_end = x->now_s;
    if (check(short_kernels(x, seconds), "kernels") || check(tw_exec_finish(x), "finish")) return 1;
    size_t nev = tw_events_count(x->events);

    double t0 = now_s();
    tw_profile p;
    tw_profile_init(&p);
    tw_identify_options o;
    tw_identify_options_init(&o);
    o.t_end_s = id_end;
    if (check(tw_identify(x->trace, x->events, &o, &p, NULL), "identify")) return 1;
    double t_id = now_s() - t0;
    printf("identification: %.2f s for %.0f s of simulated schedule, %zu readings\n", t_id, id_end, p.n);

    const tw_reading_model *m = tw_profile_best(&p, tw_identify_board_reading, NULL);
    size_t idx;
    if (!m || check(tw_sensor_find(x->trace, m->name, &idx), "best reading")) return 1;
    tw_obs_series obs;
    tw_obs_series_init(&obs);
    t0 = now_s();
    if (check(tw_observe(x->trace, idx, m, true, &obs), "observe")) return 1;
    double t_obs = now_s() - t0;
    printf("observations of %s (%s): %zu in %.3f s (the trace read once: %.1f M rows/s)\n", m->name,
           tw_response_name(m->response), obs.n, t_obs, (x->now_s * 1000.0) / t_obs / 1e6);

    tw_est_reading rd = {m->name, obs.v, obs.n, m->response == TW_RESP_COUNTER, obs.tau_s};
    tw_estimate *est = NULL;
    t0 = now_s();
    if (check(tw_estimate_run(&rd, 1, x->events, NULL, &est), "estimate")) return 1;
    double t_est = now_s() - t0;
    printf("estimator: %zu events, %zu names over %zu observations in %.3f s\n", nev, est->nnames, obs.n, t_est);
    for (size_t i = 0; i < est->nnames; i++) {
        const tw_est_name *n = &est->names[i];
        printf("  %-8s %6llu launches  %.4f +- %.4f J per launch (dynamic power %.1f W; simulated 220 W) %s\n", n->name,
               (unsigned long long)n->launches, n->energy_j / (double)n->launches, n->energy_sd_j / (double)n->launches,
               n->power_w, tw_est_status_name(n->status));
    }
    printf("peak memory: %.1f MiB (the simulated trace is generated on the fly)\n", peak_rss_mib());
    tw_estimate_free(est);
    tw_obs_series_free(&obs);
    tw_exec_free(x);
    return 0;
}
