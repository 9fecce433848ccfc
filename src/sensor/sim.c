/* The "sim" backend: a simulated power sensor reading a scenario's exact true
 * power, so every measurement method can be checked against ground truth.
 *
 * Time is simulated (nothing sleeps). K20 follows Burtscher et al. 2014 §4:
 * an RC-lagged sensor that takes a new measurement every ~15 ms and answers
 * the polls in between with the previous value. H100 follows sensors-h100.md:
 * a 1 s boxcar average, a 25 ms window published every 100 ms, an energy
 * counter and a ~20 ms sample buffer. Everything random comes from the seed,
 * so a rewind replays the same rows bit for bit. */
#include <math.h>
#include <stdlib.h>

#include "core/error.h"
#include "core/rng.h"
#include "sensor/backend.h"
#include "sensor/scenario_internal.h"

/* ---------------------------------------------------------------- constants */

/* K20 (Burtscher §4.1, §4.3, §5) */
#define K20_CAPACITANCE_S 0.84
#define K20_POLL_S 0.283e-3 /* a poll answered from the last measurement */
#define K20_POLL_JITTER_S 0.02e-3
#define K20_BUSY_S 4.7e-3 /* a poll that waits for a new measurement */
#define K20_BUSY_JITTER_S 0.3e-3
#define K20_PERIOD_S 15e-3 /* between new measurements */
#define K20_PERIOD_JITTER_S 1.5e-3
#define K20_STALL_P 0.004 /* chance that a measurement stalls the driver */
#define K20_STALL_MIN_S 20e-3
#define K20_STALL_MAX_S 130e-3
#define K20_NOISE_W 0.02
#define K20_QUANTUM_PER_W 100.0 /* readings are multiples of 0.01 W */

/* H100 (sensors-h100.md) */
#define H100_POLL_MIN_S 0.9e-3
#define H100_POLL_MAX_S 1.1e-3
#define H100_UPDATE_S 0.100 /* publication period of the held readings */
#define H100_AVG_WINDOW_S 1.0
#define H100_INSTANT_WINDOW_S 0.025
#define H100_NOISE_W 0.5
#define H100_ENERGY_OFFSET_J 1000.0 /* the counter counts since driver load, not since t = 0 */
#define H100_BUF_MIN_S 0.011
#define H100_BUF_MAX_S 0.030
#define H100_QUANTUM_PER_UNIT 1000.0 /* mW and mJ resolution */

/* Independent random streams, so e.g. the noise draws never shift the timing. */
enum { STREAM_TIMING = 1, STREAM_NOISE, STREAM_STALL, STREAM_PHASE, STREAM_BUF_TIMING, STREAM_BUF_NOISE };

enum { K20_POWER, K20_TRUE, K20_NREADINGS };
enum { H100_USAGE, H100_AVG, H100_INSTANT, H100_ENERGY, H100_BUFFER, H100_TRUE, H100_NREADINGS };
#define SIM_MAX_READINGS H100_NREADINGS

static const tw_reading_info k20_readings[K20_NREADINGS] = {
    {"power_w", TW_Q_POWER, 1.0},
    {"true_power_w", TW_Q_POWER, 1.0},
};

static const tw_reading_info h100_readings[H100_NREADINGS] = {
    {"power_usage_w", TW_Q_POWER, 1.0}, {"power_avg_w", TW_Q_POWER, 1.0},    {"power_instant_w", TW_Q_POWER, 1.0},
    {"energy_j", TW_Q_ENERGY, 1.0},     {"power_buffer_w", TW_Q_POWER, 1.0}, {"true_power_w", TW_Q_POWER, 1.0},
};

/* ---------------------------------------------------------------- state */

typedef struct k20_state {
    double meas_w;    /* latest measurement, repeated by ordinary polls */
    double due_s;     /* when the next measurement is due */
    double rc_t_s;    /* the RC output is known at this time ... */
    double rc_w;      /* ... with this value */
    size_t rc_seg;    /* segment holding rc_t_s */
    size_t next_step; /* first K20 tail step not yet stalled on */
} k20_state;

typedef struct h100_state {
    double phase_s;  /* update k happens at phase_s + k * H100_UPDATE_S */
    uint64_t next_k; /* next update index */
    bool published;  /* an update has happened (held readings valid) */
    double avg_w, inst_w, inst_t_s, energy_j;
    double buf_prev_s; /* the pending buffer sample covers (buf_prev_s, buf_next_s] */
    double buf_next_s;
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
    const tw_reading_info *info;
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

/* ---------------------------------------------------------------- K20 */

/* Advances the sensor's RC output to t_s. Exact for piecewise-constant
 * input: across each constant stretch the output relaxes exponentially. */
static double k20_rc_at(sim_state *st, double t_s)
{
    k20_state *k = &st->k20;
    const tw_segment *seg = tw_scenario_segments(st->sc);
    size_t nseg = tw_scenario_nsegments(st->sc);
    while (k->rc_t_s < t_s) {
        double seg_end = k->rc_seg + 1 < nseg ? seg[k->rc_seg + 1].t0_s : INFINITY;
        double upto = fmin(seg_end, t_s);
        double level = seg[k->rc_seg].power_w;
        k->rc_w = level + (k->rc_w - level) * exp(-(upto - k->rc_t_s) / K20_CAPACITANCE_S);
        k->rc_t_s = upto;
        if (upto == seg_end) k->rc_seg++;
    }
    return k->rc_w;
}

static double k20_measure(sim_state *st, double t_s)
{
    double v = k20_rc_at(st, t_s) + K20_NOISE_W * tw_rng_gauss(&st->noise);
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
    k->rc_t_s = 0.0;
    k->rc_seg = tw_scenario_segment_at(st->sc, 0.0);
    k->rc_w = tw_scenario_true_power_w(st->sc, 0.0);
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
    h->avg_w = h->inst_w = h->inst_t_s = h->energy_j = NAN;
    h->buf_prev_s = 0.0;
    h->buf_next_s = tw_rng_range(&st->buf_timing, H100_BUF_MIN_S, H100_BUF_MAX_S);
}

/* Publishes the held readings of update instant u_s. */
static void h100_update(sim_state *st, double u_s)
{
    h100_state *h = &st->h100;
    const tw_scenario *sc = st->sc;
    h->avg_w = quantize(mean_power_w(sc, u_s - H100_AVG_WINDOW_S, u_s), H100_QUANTUM_PER_UNIT);
    double inst = mean_power_w(sc, u_s - H100_INSTANT_WINDOW_S, u_s);
    h->inst_w = quantize(inst + H100_NOISE_W * tw_rng_gauss(&st->noise), H100_QUANTUM_PER_UNIT);
    h->inst_t_s = u_s;
    double energy_j = H100_ENERGY_OFFSET_J + tw_scenario_true_energy_j(sc, 0.0, u_s);
    h->energy_j = quantize(energy_j, H100_QUANTUM_PER_UNIT);
    h->published = true;
}

static void h100_fill_held(sim_state *st, double t_s)
{
    const h100_state *h = &st->h100;
    uint8_t ok = h->published;
    st->value[H100_USAGE] = h->avg_w;
    st->value[H100_AVG] = h->avg_w;
    st->value[H100_INSTANT] = h->inst_w;
    st->value[H100_ENERGY] = h->energy_j;
    st->t_value[H100_USAGE] = st->t_value[H100_AVG] = st->t_value[H100_ENERGY] = t_s;
    st->t_value[H100_INSTANT] = ok ? h->inst_t_s : t_s;
    st->valid[H100_USAGE] = st->valid[H100_AVG] = st->valid[H100_INSTANT] = st->valid[H100_ENERGY] = ok;
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
    double v = mean_power_w(st->sc, h->buf_prev_s, h->buf_next_s);
    st->value[H100_BUFFER] = quantize(v + H100_NOISE_W * tw_rng_gauss(&st->buf_noise), H100_QUANTUM_PER_UNIT);
    st->t_value[H100_BUFFER] = h->buf_next_s;
    st->valid[H100_BUFFER] = 1;
    h->buf_prev_s = h->buf_next_s;
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
    if (st->profile == TW_SIM_K20) {
        st->n = K20_NREADINGS;
        st->info = k20_readings;
    } else {
        st->n = H100_NREADINGS;
        st->info = h100_readings;
    }
    sim_reset(st);
    *state = st;
    return TW_OK;
}

static size_t sim_nreadings(const void *state) { return ((const sim_state *)state)->n; }

static const tw_reading_info *sim_reading(const void *state, size_t i)
{
    const sim_state *st = state;
    return i < st->n ? &st->info[i] : NULL;
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
