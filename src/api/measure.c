/* tw_measure (truewatt.h): the energy per call of a caller's function,
 * however short, by phase-shifted repetition (bench/repeat.h, the method
 * of `truewatt measure-kernel`): rounds of blocks of back-to-back calls, the
 * gap after each block shifted by a fraction of the reading's update period,
 * until the estimate's relative uncertainty reaches the precision asked for
 * or the next round would pass the time budget, or the caller's cancel flag
 * is set (looked at after every call and every 10 ms of a gap).
 *
 * The readings are the session's (its energy line's tiles, corrected by the
 * reading's model), the blocks are events on the session's timeline, and
 * the estimator fits the baseline plus the blocks' power above it. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "api/session_internal.h"
#include "api/sized.h"
#include "bench/repeat.h"
#include "core/error.h"
#include "correct/observe.h"
#include "estimate/estimator.h"
#include "truewatt.h"

/* A block of back-to-back calls (options.block_s). Not measure-kernel's 0.2 s:
 * on the H100 a ~100 us PyTorch operator in 0.2 s blocks came out +6.3 %
 * against itself back to back for 6 s (+3.2 % by the counter alone: the
 * GPU's first ~0.2 s of work draws more per call), in 1 s and 2 s blocks
 * +1.1 % and +1.0 % (results/h100/api-measure). */
#define BLOCK_S 1.0
#define GAP_S 0.3        /* the shortest gap after a block (measure-kernel's default) */
#define PHASES 4         /* the phases the blocks cycle through */
#define ROUND_BLOCKS 8   /* blocks between estimates: each phase twice */
#define LEAD_S 0.5       /* idle before the first block: the baseline before */
#define CALIBRATE_S 0.02 /* calls timed first: a call's time (the round's length; sim) */
#define COVER_WAIT_S 5.0 /* the readings must reach a round's end this soon */
#define DEFAULT_PERIOD_S 0.1
#define LABEL "tw_measure"
#define HOLD "truewatt.measure" /* a region held open: the session keeps the readings since its begin */

void tw_measure_options_init(tw_measure_options *o)
{
    if (!o) return;
    memset(o, 0, sizeof *o);
    o->size = sizeof *o;
    o->precision = 0.02;
    o->budget_s = 30.0;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

#define CANCEL_POLL_S 0.01 /* a sleep looks at the cancel flag this often */

static bool cancelled(const volatile int *cancel) { return cancel && *cancel; }

/* Sleeps s seconds, in slices so that a cancel is seen within CANCEL_POLL_S;
 * false when cancelled. */
static bool sleep_s(double s, const volatile int *cancel)
{
    double until = now_s() + s;
    for (double left = s; left > 0 && !cancelled(cancel); left = until - now_s()) {
        double slice = fmin(left, CANCEL_POLL_S);
        struct timespec ts = {(time_t)slice, (long)((slice - floor(slice)) * 1e9)};
        nanosleep(&ts, NULL);
    }
    return !cancelled(cancel);
}

static tw_status interrupted(void) { return tw_fail(TW_EINTERRUPTED, "tw_measure: cancelled"); }

static tw_status read_options(const tw_measure_options *in, tw_measure_options *o)
{
    tw_measure_options_init(o);
    if (!in) return TW_OK;
    tw_status st = tw_sized_read(o, sizeof *o, in, "tw_measure: options");
    if (st != TW_OK) return st;
    if (!(o->precision > 0 && o->precision < 1))
        return tw_fail(TW_EINVAL, "tw_measure: precision %g must be in (0, 1) (relative, 0.02 = 2 %%)", o->precision);
    if (!(o->budget_s > 0 && isfinite(o->budget_s)))
        return tw_fail(TW_EINVAL, "tw_measure: budget_s %g must be > 0", o->budget_s);
    if (o->block_s == 0) o->block_s = BLOCK_S;
    if (!(o->block_s >= 0.01 && o->block_s <= 60))
        return tw_fail(TW_EINVAL, "tw_measure: block_s %g must be 0 (the default) or 0.01..60 s", o->block_s);
    return TW_OK;
}

/* The time of one call, from calls timed for CALIBRATE_S (after one to warm up). */
static double call_time_s(tw_measure_fn fn, void *arg, size_t *calls)
{
    fn(arg);
    size_t n = 0;
    double t0 = now_s(), t;
    do {
        fn(arg);
        n++;
        t = now_s();
    } while (t - t0 < CALIBRATE_S);
    *calls += n + 1;
    return (t - t0) / (double)n;
}

typedef struct plan {
    tw_session *s;
    const volatile int *cancel;
    tw_measure_fn fn;
    void *arg;
    size_t device, blocks;
    double block_s;     /* the options' */
    size_t calls;       /* all of them, the calibration's too */
    size_t block_calls; /* those inside the blocks */
    double period_s, busy_s, fit_t0_s, last_end_s;
    tw_events *ev;
} plan;

/* One block: back-to-back calls for BLOCK_S (at least one; the time, not a
 * count, so a slow call or a busy machine cannot shorten it), an event on
 * the session's timeline, then its gap. */
static tw_status run_block(plan *p)
{
    double t0 = tw_session_now_s(p->s), t1;
    size_t n = 0;
    do {
        p->fn(p->arg);
        n++;
        t1 = tw_session_now_s(p->s);
    } while (t1 - t0 < p->block_s && !cancelled(p->cancel));
    if (cancelled(p->cancel)) {
        p->calls += n;
        return interrupted();
    }
    tw_event e = {.name = LABEL, .start_s = t0, .end_s = t1, .device = -1, .stream = -1, .kind = "kernel"};
    e.true_energy_j = NAN;
    tw_status st = tw_events_add(p->ev, &e);
    if (st != TW_OK) return st;
    p->calls += n;
    p->block_calls += n;
    p->busy_s += t1 - t0;
    p->last_end_s = t1;
    return sleep_s(tw_repeat_gap_s(p->blocks++, PHASES, p->period_s, GAP_S), p->cancel) ? TW_OK : interrupted();
}

/* The estimate over every block so far. */
static tw_status estimate(plan *p, tw_repeat_result *r)
{
    tw_status st = tw_session_wait_covered(p->s, p->last_end_s + GAP_S, COVER_WAIT_S);
    if (st != TW_OK) return st;
    tw_obs_series obs;
    tw_obs_series_init(&obs);
    tw_reading_model m;
    double t1 = tw_session_now_s(p->s);
    st = tw_session_observations(p->s, p->device, p->fit_t0_s, t1, &obs, &m);
    if (st == TW_OK) {
        tw_est_reading rd = {m.name, obs.v, obs.n, m.response == TW_RESP_COUNTER, obs.tau_s};
        tw_est_config cfg;
        tw_est_config_init(&cfg);
        cfg.fit_t0_s = p->fit_t0_s;
        cfg.fit_t1_s = t1;
        st = tw_repeat_estimate(&rd, 1, p->ev, &cfg, LABEL, NULL, r);
    }
    tw_obs_series_free(&obs);
    return st;
}

/* The simulator's GPU runs at active idle whatever the function does. */
static tw_status measure_sim(tw_session *s, tw_measure_fn fn, void *arg, tw_measure_result *full)
{
    size_t calls = 0;
    double t = call_time_s(fn, arg, &calls);
    full->time_s = t;
    full->energy_j = tw_session_baseline_w(s, 0) * t;
    full->energy_sd_j = 0;
    full->power_above_baseline_w = 0;
    full->calls = calls;
    return TW_OK;
}

static tw_status measure_gpu(tw_session *s, tw_measure_fn fn, void *arg, const tw_measure_options *o,
                             tw_measure_result *full)
{
    plan p = {.s = s, .cancel = o->cancel, .fn = fn, .arg = arg, .device = o->device, .block_s = o->block_s};
    double start = now_s();
    double call_s = call_time_s(fn, arg, &p.calls);
    tw_status st = tw_events_new(&p.ev);
    if (st != TW_OK) return st;
    if ((st = tw_region_begin(s, HOLD)) != TW_OK) {
        tw_events_free(p.ev);
        return st;
    }
    p.fit_t0_s = tw_session_now_s(s);
    if (!sleep_s(LEAD_S, o->cancel)) st = interrupted();
    tw_repeat_result r;
    tw_obs_series probe;
    tw_obs_series_init(&probe);
    tw_reading_model m;
    if (st == TW_OK) st = tw_session_observations(s, o->device, 0, 0, &probe, &m);
    tw_obs_series_free(&probe);
    p.period_s = st == TW_OK && m.period_s > 0 ? m.period_s : DEFAULT_PERIOD_S;
    double round_s = ROUND_BLOCKS * (fmax(p.block_s, call_s) + GAP_S + p.period_s) + GAP_S;
    bool done = false;
    while (st == TW_OK && !done) {
        for (size_t b = 0; b < ROUND_BLOCKS && st == TW_OK; b++)
            st = run_block(&p);
        if (st == TW_OK) st = estimate(&p, &r);
        if (st != TW_OK) break;
        double per_call = r.rep.per_launch_j * r.rep.launches / (double)p.block_calls;
        double sd = r.rep.per_launch_sd_j * r.rep.launches / (double)p.block_calls;
        done = sd <= o->precision * fabs(per_call) || now_s() - start + round_s > o->budget_s;
    }
    tw_region_end(s, HOLD, NULL);
    double in_blocks = (double)p.block_calls;
    tw_events_free(p.ev);
    if (st != TW_OK) return st;
    double t = p.busy_s / in_blocks;
    double above = r.rep.per_launch_j * r.rep.launches / in_blocks;
    full->time_s = t;
    full->energy_j = above + r.baseline_w * t;
    full->energy_sd_j = r.rep.per_launch_sd_j * r.rep.launches / in_blocks;
    full->power_above_baseline_w = r.rep.power_w;
    full->calls = p.calls;
    return TW_OK;
}

tw_status tw_measure(tw_session *s, tw_measure_fn fn, void *arg, const tw_measure_options *oin, tw_measure_result *out)
{
    tw_clear_error();
    if (!s || !fn || !out) return tw_fail(TW_EINVAL, "tw_measure: NULL session, function or result");
    if (out->size < sizeof(size_t)) /* said before the calls, not after them */
        return tw_fail(TW_EINVAL, "tw_measure: result size is %zu (set it to sizeof the struct)", out->size);
    tw_measure_options o;
    tw_status st = read_options(oin, &o);
    if (st != TW_OK) return st;
    if (o.device >= tw_session_device_count(s))
        return tw_fail(TW_EINVAL, "tw_measure: device %zu of %zu", o.device, tw_session_device_count(s));
    if (cancelled(o.cancel)) return interrupted();
    tw_measure_result full = {.size = sizeof full};
    st = tw_session_is_sim(s) ? measure_sim(s, fn, arg, &full) : measure_gpu(s, fn, arg, &o, &full);
    if (st != TW_OK) return st;
    return tw_sized_write(out, &full, sizeof full, "tw_measure: result");
}
