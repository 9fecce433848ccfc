/* The "sim" backend: a simulated power sensor reading a scenario's exact true
 * power, so every measurement method can be checked against ground truth.
 *
 * Time is simulated (nothing sleeps). K20 follows Burtscher et al. 2014 §4:
 * an RC-lagged sensor that takes a new measurement every ~15 ms and answers
 * the polls in between with the previous value. H100 follows what
 * identification found on a real card (the table below): a 1 s boxcar and a
 * 25 ms window published every 100 ms, an energy counter and a sample buffer
 * that lags like a small capacitor. Everything random comes from the seed,
 * so a rewind replays the same rows bit for bit. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench/exec.h"
#include "core/error.h"
#include "core/rng.h"
#include "sensor/backend.h"
#include "sensor/scenario_internal.h"
#include "sensor/sim_truth.h"

/* ---------------------------------------------------------------- constants */

/* K20 (Burtscher §4.1, §4.3, §5) */
#define K20_CAPACITANCE_S 0.84
#define K20_POLL_S 0.283e-3 /* a poll answered from the last measurement */
#define K20_POLL_JITTER_S 0.02e-3
#define K20_BUSY_S 4.7e-3 /* a poll that waits for a new measurement */
#define K20_BUSY_JITTER_S 0.3e-3
#define K20_PERIOD_S 15e-3 /* from a measurement to the next one's due time */
#define K20_PERIOD_JITTER_S 1.5e-3
/* The measurement interval itself: the first poll to start within K20_BUSY_S
 * of the due time waits for the measurement, so the interval is the period
 * plus that poll's overshoot (uniform over one poll, K20_POLL_S / 2 on
 * average) plus the busy poll's jitter (0 on average): median ~15.14 ms
 * (15.09-15.16 ms in the identification runs of seeds 1-3, p10-p90
 * 13.9-16.4 ms). Random stalls (0.4 %) lengthen a few. */
#define K20_INTERVAL_S (K20_PERIOD_S + 0.5 * K20_POLL_S)
#define K20_STALL_P 0.004 /* chance that a measurement stalls the driver */
#define K20_STALL_MIN_S 20e-3
#define K20_STALL_MAX_S 130e-3
#define K20_NOISE_W 0.02
#define K20_QUANTUM_PER_W 100.0 /* readings are multiples of 0.01 W */

/* H100: the timing; the readings' models are in h100_readings below. */
#define H100_POLL_MIN_S 0.9e-3
#define H100_POLL_MAX_S 1.1e-3
#define H100_UPDATE_S 0.100 /* publication period of the held readings */
#define H100_NOISE_W 0.5
#define H100_ENERGY_OFFSET_J 1000.0  /* the counter counts since driver load, not since t = 0 */
#define H100_QUANTUM_PER_UNIT 1000.0 /* mW and mJ resolution */
/* The sample buffer: samples 11-30 ms apart, uniformly, so the median is halfway. */
#define H100_BUF_MIN_S 0.011
#define H100_BUF_MAX_S 0.030
#define H100_BUF_MEDIAN_S (0.5 * (H100_BUF_MIN_S + H100_BUF_MAX_S))

/* Independent random streams, so e.g. the noise draws never shift the timing. */
enum { STREAM_TIMING = 1, STREAM_NOISE, STREAM_STALL, STREAM_PHASE, STREAM_BUF_TIMING, STREAM_BUF_NOISE };

enum { K20_POWER, K20_TRUE, K20_NREADINGS };
enum { H100_USAGE, H100_AVG, H100_INSTANT, H100_ENERGY, H100_BUFFER, H100_TRUE, H100_NREADINGS };
#define SIM_MAX_READINGS H100_NREADINGS

/* One reading of a simulated sensor and how it is made from the true power,
 * in the terms of correct/profile.h: a value published at update instant u
 * is the mean true power over (u - delay - window, u - delay] (boxcar,
 * window); rc is a first-order lag of time constant C evaluated at
 * u - delay; a counter holds the true energy up to u - delay. Unknown: the
 * exact true power at the row (true_power_w). */
typedef struct sim_model {
    tw_reading_info info;
    tw_response response;
    double period_s;      /* median time between updates (0: every row) */
    double window_s;      /* boxcar, window; counter: its period; NaN for rc */
    double delay_s;       /* from the end of the window (rc: the lag's output) to the update */
    double capacitance_s; /* rc only; NaN otherwise */
    double noise_w;       /* Gaussian noise added to each update (sigma) */
} sim_model;

static const sim_model k20_readings[K20_NREADINGS] = {
    {{"power_w", TW_Q_POWER, 1.0}, TW_RESP_RC, K20_INTERVAL_S, NAN, 0.0, K20_CAPACITANCE_S, K20_NOISE_W},
    {{"true_power_w", TW_Q_POWER, 1.0}, TW_RESP_UNKNOWN, 0.0, NAN, 0.0, NAN, 0.0},
};

/* Identified on an H100 80GB HBM3, driver 580.159.04, by scripts/gpu-validate
 * (results/h100/validation/profile.json): power_usage_w and power_avg_w a
 * 1 s boxcar 31 ms late; energy_j a counter 14 ms late; power_buffer_w (the
 * driver's sample buffer, one sample every 11-30 ms) a lag of 12 ms, 5 ms
 * late, stamped with the sample's time; power_instant_w a short window with
 * a small delay (25 ms as Yang et al. 2024 measured; our fit was unclear).
 * The held readings are published together every 100 ms. */
static const sim_model h100_readings[H100_NREADINGS] = {
    {{"power_usage_w", TW_Q_POWER, 1.0}, TW_RESP_BOXCAR, H100_UPDATE_S, 1.0, 0.031, NAN, 0.0},
    {{"power_avg_w", TW_Q_POWER, 1.0}, TW_RESP_BOXCAR, H100_UPDATE_S, 1.0, 0.031, NAN, 0.0},
    {{"power_instant_w", TW_Q_POWER, 1.0}, TW_RESP_WINDOW, H100_UPDATE_S, 0.025, 0.003, NAN, H100_NOISE_W},
    {{"energy_j", TW_Q_ENERGY, 1.0}, TW_RESP_COUNTER, H100_UPDATE_S, H100_UPDATE_S, 0.014, NAN, 0.0},
    {{"power_buffer_w", TW_Q_POWER, 1.0}, TW_RESP_RC, H100_BUF_MEDIAN_S, NAN, 0.005, 0.012, H100_NOISE_W},
    {{"true_power_w", TW_Q_POWER, 1.0}, TW_RESP_UNKNOWN, 0.0, NAN, 0.0, NAN, 0.0},
};

static const sim_model *readings_of(tw_sim_profile p, size_t *n)
{
    *n = p == TW_SIM_K20 ? K20_NREADINGS : H100_NREADINGS;
    return p == TW_SIM_K20 ? k20_readings : h100_readings;
}

/* ---------------------------------------------------------------- state */

/* A first-order lag of the true power, advanced along the scenario's
 * segments: the output is known at t_s with value w, t_s in segment seg. */
typedef struct rc_lag {
    double t_s, w;
    size_t seg;
} rc_lag;

typedef struct k20_state {
    double meas_w;    /* latest measurement, repeated by ordinary polls */
    double due_s;     /* when the next measurement is due */
    rc_lag rc;        /* the sensor's RC output */
    size_t next_step; /* first K20 tail step not yet stalled on */
} k20_state;

typedef struct h100_state {
    double phase_s;                /* update k happens at phase_s + k * H100_UPDATE_S */
    uint64_t next_k;               /* next update index */
    bool published;                /* an update has happened (held readings valid) */
    double held[SIM_MAX_READINGS]; /* the held readings' values of the last update */
    double u_s;                    /* the last update's instant */
    double buf_next_s;             /* time of the next buffer sample */
    rc_lag buf_rc;                 /* the buffer's lag, evaluated at its samples' delayed times */
} h100_state;

typedef struct sim_state {
    const tw_scenario *sc;
    tw_sim_profile profile;
    uint64_t seed;
    double duration_s;
    bool started; /* the row at t = 0 has been produced */
    bool done;
    double clock_s; /* time of the last row (the next poll starts here) */
    tw_rng timing, noise, stall, buf_timing, buf_noise;
    size_t n;
    const sim_model *rd; /* the profile's readings, n of them */
    k20_state k20;
    h100_state h100;
    double value[SIM_MAX_READINGS];
    double t_value[SIM_MAX_READINGS];
    uint8_t valid[SIM_MAX_READINGS];
} sim_state;

static double quantize(double x, double per_unit) { return round(x * per_unit) / per_unit; }

/* Mean true power over (t0_s, t1_s]. */
static double mean_power_w(const tw_scenario *sc, double t0_s, double t1_s)
{
    return tw_scenario_true_energy_j(sc, t0_s, t1_s) / (t1_s - t0_s);
}

static void fill_row(sim_state *st, tw_row *row, double t_s)
{
    row->t_s = t_s;
    row->n = st->n;
    row->value = st->value;
    row->t_value_s = st->t_value;
    row->valid = st->valid;
}

/* ---------------------------------------------------------------- RC lag */

/* Settled on the true power at t = 0 (segment 0 also stands for t < 0). */
static void rc_lag_reset(rc_lag *l, const tw_scenario *sc)
{
    l->t_s = 0.0;
    l->seg = tw_scenario_segment_at(sc, 0.0);
    l->w = tw_scenario_true_power_w(sc, 0.0);
}

/* Advances the lag (time constant c_s) to t_s and returns its output; times
 * never go back (an earlier t_s gives the output already reached). Exact
 * for piecewise-constant input: across each constant stretch the output
 * relaxes exponentially. */
static double rc_lag_at(rc_lag *l, const tw_scenario *sc, double c_s, double t_s)
{
    const tw_segment *seg = tw_scenario_segments(sc);
    size_t nseg = tw_scenario_nsegments(sc);
    while (l->t_s < t_s) {
        double seg_end = l->seg + 1 < nseg ? seg[l->seg + 1].t0_s : INFINITY;
        double upto = fmin(seg_end, t_s);
        double level = seg[l->seg].power_w;
        l->w = level + (l->w - level) * exp(-(upto - l->t_s) / c_s);
        l->t_s = upto;
        if (upto == seg_end) l->seg++;
    }
    return l->w;
}

/* ---------------------------------------------------------------- K20 */

static double k20_measure(sim_state *st, double t_s)
{
    double v = rc_lag_at(&st->k20.rc, st->sc, K20_CAPACITANCE_S, t_s) + K20_NOISE_W * tw_rng_gauss(&st->noise);
    return quantize(v, K20_QUANTUM_PER_W);
}

/* Whether a tail step (where the driver changes power level, §4.3) falls
 * at or before t_s and has not yet stalled a measurement; consumes it if so. */
static bool k20_take_tail_step(sim_state *st, double t_s)
{
    const tw_segment *seg = tw_scenario_segments(st->sc);
    size_t nseg = tw_scenario_nsegments(st->sc);
    k20_state *k = &st->k20;
    while (k->next_step < nseg && !seg[k->next_step].tail_step)
        k->next_step++;
    if (k->next_step >= nseg || seg[k->next_step].t0_s > t_s) return false;
    k->next_step++;
    return true;
}

/* Time from one measurement to the next one's due time. */
static double k20_period(sim_state *st)
{
    return tw_rng_range(&st->timing, K20_PERIOD_S - K20_PERIOD_JITTER_S, K20_PERIOD_S + K20_PERIOD_JITTER_S);
}

static void k20_reset(sim_state *st)
{
    k20_state *k = &st->k20;
    rc_lag_reset(&k->rc, st->sc);
    k->next_step = 0;
    k->meas_w = k20_measure(st, 0.0);
    k->due_s = k20_period(st);
}

/* Length of the poll starting at poll_s; a busy poll takes a new measurement. */
static double k20_poll_length(sim_state *st, double poll_s, bool *busy)
{
    k20_state *k = &st->k20;
    *busy = poll_s >= k->due_s - K20_BUSY_S;
    if (!*busy) return tw_rng_range(&st->timing, K20_POLL_S - K20_POLL_JITTER_S, K20_POLL_S + K20_POLL_JITTER_S);
    double len = tw_rng_range(&st->timing, K20_BUSY_S - K20_BUSY_JITTER_S, K20_BUSY_S + K20_BUSY_JITTER_S);
    /* The coin is thrown even when a tail step forces the stall, so the random
     * stalls fall on the same measurements whatever the scenario's tails. */
    bool random_stall = tw_rng_uniform(&st->stall) < K20_STALL_P;
    if (k20_take_tail_step(st, poll_s + len) || random_stall)
        len = tw_rng_range(&st->stall, K20_STALL_MIN_S, K20_STALL_MAX_S);
    return len;
}

static void k20_fill(sim_state *st, double t_s)
{
    st->value[K20_POWER] = st->k20.meas_w;
    st->value[K20_TRUE] = tw_scenario_true_power_w(st->sc, t_s);
    for (size_t i = 0; i < K20_NREADINGS; i++) {
        st->t_value[i] = t_s;
        st->valid[i] = 1;
    }
}

static tw_status k20_next(sim_state *st, tw_row *row, bool *eof)
{
    double t_s = 0.0;
    if (st->started) {
        bool busy;
        t_s = st->clock_s + k20_poll_length(st, st->clock_s, &busy);
        if (t_s > st->duration_s) {
            st->done = true;
            *eof = true;
            return TW_OK;
        }
        if (busy) {
            st->k20.meas_w = k20_measure(st, t_s);
            st->k20.due_s = t_s + k20_period(st);
        }
    }
    st->started = true;
    st->clock_s = t_s;
    k20_fill(st, t_s);
    fill_row(st, row, t_s);
    *eof = false;
    return TW_OK;
}

/* ---------------------------------------------------------------- H100 */

static void h100_reset(sim_state *st)
{
    h100_state *h = &st->h100;
    tw_rng phase;
    tw_rng_seed(&phase, st->seed, STREAM_PHASE);
    h->phase_s = tw_rng_range(&phase, 0.0, H100_UPDATE_S);
    h->next_k = 0;
    h->published = false;
    h->u_s = NAN;
    for (size_t i = 0; i < SIM_MAX_READINGS; i++)
        h->held[i] = NAN;
    h->buf_next_s = tw_rng_range(&st->buf_timing, H100_BUF_MIN_S, H100_BUF_MAX_S);
    rc_lag_reset(&h->buf_rc, st->sc);
}

/* The readings published together at every update (the buffer and the
 * truth come with the rows instead). */
static bool h100_held(const sim_model *r)
{
    return r->response == TW_RESP_BOXCAR || r->response == TW_RESP_WINDOW || r->response == TW_RESP_COUNTER;
}

/* Publishes the held readings of update instant u_s, each by its model:
 * power_usage_w and power_avg_w, alike and noiseless, show the same value. */
static void h100_update(sim_state *st, double u_s)
{
    h100_state *h = &st->h100;
    for (size_t i = 0; i < st->n; i++) {
        const sim_model *r = &st->rd[i];
        double end_s = u_s - r->delay_s, v;
        if (!h100_held(r)) continue;
        if (r->response == TW_RESP_COUNTER)
            v = H100_ENERGY_OFFSET_J + tw_scenario_true_energy_j(st->sc, 0.0, end_s);
        else
            v = mean_power_w(st->sc, end_s - r->window_s, end_s);
        if (r->noise_w > 0) v += r->noise_w * tw_rng_gauss(&st->noise);
        h->held[i] = quantize(v, H100_QUANTUM_PER_UNIT);
    }
    h->u_s = u_s;
    h->published = true;
}

/* The held readings: absent before the first update. Only power_instant_w
 * carries the update's instant as its timestamp; the others the row's. */
static void h100_fill_held(sim_state *st, double t_s)
{
    const h100_state *h = &st->h100;
    for (size_t i = 0; i < st->n; i++) {
        if (!h100_held(&st->rd[i])) continue;
        st->value[i] = h->held[i];
        st->t_value[i] = i == H100_INSTANT && h->published ? h->u_s : t_s;
        st->valid[i] = h->published;
    }
}

/* The driver buffer: one sample per row at most, oldest first, so a backlog
 * drains over the following rows and no sample is lost. */
static void h100_fill_buffer(sim_state *st, double t_s)
{
    h100_state *h = &st->h100;
    if (h->buf_next_s > t_s) {
        st->value[H100_BUFFER] = NAN;
        st->t_value[H100_BUFFER] = t_s;
        st->valid[H100_BUFFER] = 0;
        return;
    }
    const sim_model *r = &st->rd[H100_BUFFER];
    double v = rc_lag_at(&h->buf_rc, st->sc, r->capacitance_s, h->buf_next_s - r->delay_s);
    st->value[H100_BUFFER] = quantize(v + r->noise_w * tw_rng_gauss(&st->buf_noise), H100_QUANTUM_PER_UNIT);
    st->t_value[H100_BUFFER] = h->buf_next_s;
    st->valid[H100_BUFFER] = 1;
    h->buf_next_s += tw_rng_range(&st->buf_timing, H100_BUF_MIN_S, H100_BUF_MAX_S);
}

static tw_status h100_next(sim_state *st, tw_row *row, bool *eof)
{
    double t_s = 0.0;
    if (st->started) t_s = st->clock_s + tw_rng_range(&st->timing, H100_POLL_MIN_S, H100_POLL_MAX_S);
    if (t_s > st->duration_s) {
        st->done = true;
        *eof = true;
        return TW_OK;
    }
    st->started = true;
    st->clock_s = t_s;
    h100_state *h = &st->h100;
    /* Instants from the index, not by accumulation, so they do not drift. */
    for (double u = h->phase_s + (double)h->next_k * H100_UPDATE_S; u <= t_s;
         u = h->phase_s + (double)h->next_k * H100_UPDATE_S) {
        h100_update(st, u);
        h->next_k++;
    }
    h100_fill_held(st, t_s);
    h100_fill_buffer(st, t_s);
    st->value[H100_TRUE] = tw_scenario_true_power_w(st->sc, t_s);
    st->t_value[H100_TRUE] = t_s;
    st->valid[H100_TRUE] = 1;
    fill_row(st, row, t_s);
    *eof = false;
    return TW_OK;
}

/* ---------------------------------------------------------------- backend */

static void sim_reset(sim_state *st)
{
    tw_rng_seed(&st->timing, st->seed, STREAM_TIMING);
    tw_rng_seed(&st->noise, st->seed, STREAM_NOISE);
    tw_rng_seed(&st->stall, st->seed, STREAM_STALL);
    tw_rng_seed(&st->buf_timing, st->seed, STREAM_BUF_TIMING);
    tw_rng_seed(&st->buf_noise, st->seed, STREAM_BUF_NOISE);
    st->duration_s = tw_scenario_duration_s(st->sc);
    st->started = false;
    st->done = false;
    st->clock_s = 0.0;
    if (st->profile == TW_SIM_K20)
        k20_reset(st);
    else
        h100_reset(st);
}

static bool sim_available(char *why, size_t why_len)
{
    (void)why;
    (void)why_len;
    return true;
}

static tw_status sim_open(const tw_sensor_config *cfg, void **state)
{
    if (!cfg || !state) return tw_fail(TW_EINVAL, "sim backend: NULL argument");
    *state = NULL;
    if (!cfg->scenario) return tw_fail(TW_EINVAL, "the sim backend needs a scenario");
    sim_state *st = calloc(1, sizeof *st);
    if (!st) return tw_fail(TW_ENOMEM, "out of memory (sim backend)");
    /* The scenario is read live (its segments), so it must not change while
     * the sensor is open; the duration is taken again at each rewind. */
    st->sc = cfg->scenario;
    st->profile = tw_scenario_profile(cfg->scenario);
    st->seed = cfg->seed;
    st->rd = readings_of(st->profile, &st->n);
    sim_reset(st);
    *state = st;
    return TW_OK;
}

static size_t sim_nreadings(const void *state) { return ((const sim_state *)state)->n; }

static const tw_reading_info *sim_reading(const void *state, size_t i)
{
    const sim_state *st = state;
    return i < st->n ? &st->rd[i].info : NULL;
}

static tw_status sim_next(void *state, tw_row *row, bool *eof)
{
    sim_state *st = state;
    if (st->done) {
        *eof = true;
        return TW_OK;
    }
    return st->profile == TW_SIM_K20 ? k20_next(st, row, eof) : h100_next(st, row, eof);
}

static tw_status sim_rewind(void *state)
{
    sim_reset(state);
    return TW_OK;
}

static void sim_close(void *state) { free(state); }

const tw_backend tw_backend_sim = {
    .abi = TW_BACKEND_ABI,
    .name = "sim",
    .description = "simulated sensor with exact ground truth (profiles k20, h100)",
    .available = sim_available,
    .open = sim_open,
    .nreadings = sim_nreadings,
    .reading = sim_reading,
    .next = sim_next,
    .rewind = sim_rewind,
    .close = sim_close,
};

/* ---------------------------------------------------------------- truth */

tw_status tw_sim_truth(tw_sim_profile p, tw_profile *out)
{
    if (!out) return tw_fail(TW_EINVAL, "tw_sim_truth: NULL argument");
    if (p != TW_SIM_K20 && p != TW_SIM_H100) return tw_fail(TW_EINVAL, "unknown sim profile %d", (int)p);
    tw_profile_init(out);
    /* The levels as the simulated experiment sets them, from its executor,
     * so the kernel step here is always the one it runs. */
    tw_exec *x = NULL;
    tw_status st = tw_exec_sim_new(p, 0, &x);
    if (st != TW_OK) return st;
    snprintf(out->gpu, sizeof out->gpu, "%s", x->gpu);
    snprintf(out->driver, sizeof out->driver, "%s", x->driver);
    snprintf(out->backend, sizeof out->backend, "%s", x->backend);
    out->idle_w = x->true_idle_w;
    out->active_idle_w = x->true_active_idle_w;
    out->step_w = x->true_step_w;
    tw_exec_free(x);
    size_t n = 0;
    const sim_model *rd = readings_of(p, &n);
    for (size_t i = 0; i < n && st == TW_OK; i++) {
        const sim_model *r = &rd[i];
        if (r->response == TW_RESP_UNKNOWN) continue;
        tw_reading_model m;
        tw_reading_model_init(&m, r->info.name);
        m.response = r->response;
        m.period_s = r->period_s;
        m.window_s = r->window_s;
        m.delay_s = r->delay_s;
        m.capacitance_s = r->capacitance_s;
        m.coverage = r->response == TW_RESP_RC ? 1.0 : fmin(1.0, r->window_s / r->period_s);
        st = tw_profile_set(out, &m);
    }
    return st;
}
