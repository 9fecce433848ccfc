/* step_energy - a job step's energy on its GPUs (step_energy.h says how). */
#include "slurm/step_energy.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define FAST_PERIOD_S 1.0 /* the fast readings are not used: read them rarely */
/* Only the energy counter and the board's power (kept for a look at the trace)
 * are read: the rest would fill the trace (the sample buffer, 50 rows a second
 * on an H100) and cost reads (clocks, temperature, memory) for nothing. */
#define SKIPPED_READINGS                                                                                               \
    "power_avg_w,power_instant_w,mem_power_avg_w,mem_power_instant_w,power_buffer_w,sm_clock_mhz,mem_clock_mhz,"       \
    "temperature_c,memory_used_mib"

struct step_meter {
    tw_sampler *sampler; /* NULL once stopped */
    char *trace_path;
    uint64_t t0_ns; /* CLOCK_MONOTONIC at the start */
    double start_unix_s;
    double time_s;
    size_t n;
    step_gpu_energy *gpu;
    char notes[1024];
};

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static double unix_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static bool all_digits(const char *s)
{
    if (!*s) return false;
    for (; *s; s++)
        if (*s < '0' || *s > '9') return false;
    return true;
}

/* Each requested GPU as the backend knows it (index, UUID, name): a GPU the
 * node does not have is an error, never another GPU's energy. */
static tw_status resolve_gpus(step_meter *m, const char *const *ids, size_t n, char *err, size_t err_len)
{
    tw_device_info info[64];
    size_t have = 0;
    tw_status st = tw_backend_devices("nvml", NULL, info, sizeof info / sizeof info[0], &have);
    if (st != TW_OK) {
        snprintf(err, err_len, "the node's NVML devices: %s", tw_last_error());
        return st;
    }
    if (have > sizeof info / sizeof info[0]) have = sizeof info / sizeof info[0];
    for (size_t i = 0; i < n; i++) {
        const tw_device_info *found = NULL;
        for (size_t k = 0; k < have && !found; k++)
            if (all_digits(ids[i]) ? info[k].index == (unsigned)strtoul(ids[i], NULL, 10)
                                   : strcmp(info[k].uuid, ids[i]) == 0)
                found = &info[k];
        if (!found) {
            snprintf(err, err_len, "GPU %s of the step is not among the node's %zu NVML devices", ids[i], have);
            return TW_ENOTFOUND;
        }
        step_gpu_energy *g = &m->gpu[i];
        g->index = found->index;
        snprintf(g->uuid, sizeof g->uuid, "%s", found->uuid);
        snprintf(g->name, sizeof g->name, "%s", found->name);
        g->energy_j = NAN;
        g->reading = "";
        g->method = "not measured";
    }
    return TW_OK;
}

tw_status step_meter_start(const char *const *ids, size_t n, const char *trace_path, const char *profile_dir,
                           step_meter **out, char *err, size_t err_len)
{
    *out = NULL;
    snprintf(err, err_len, "out of memory");
    if (!ids || n == 0 || !trace_path) return TW_EINVAL;
    step_meter *m = calloc(1, sizeof *m);
    if (!m || !(m->gpu = calloc(n, sizeof *m->gpu)) || !(m->trace_path = strdup(trace_path))) {
        step_meter_free(m);
        return TW_ENOMEM;
    }
    m->n = n;
    tw_status st = n <= 64 ? resolve_gpus(m, ids, n, err, err_len) : TW_EINVAL;
    const char *uuids[64];
    for (size_t i = 0; i < n && i < 64; i++)
        uuids[i] = m->gpu[i].uuid; /* by UUID: the sampler cannot pick another GPU */
    m->t0_ns = mono_ns();
    m->start_unix_s = unix_s();
    tw_sensor_config base = {.skip = SKIPPED_READINGS};
    tw_sampler_config cfg = {.backend = "nvml",
                             .base = &base,
                             .devices = uuids,
                             .n_devices = n,
                             .fast_period_s = FAST_PERIOD_S,
                             .trace_path = m->trace_path,
                             .t0_mono_ns = m->t0_ns,
                             .provenance = "truewatt_spank: a Slurm job step",
                             .profile_dir = profile_dir};
    if (st == TW_OK && (st = tw_sampler_start(&cfg, &m->sampler)) != TW_OK)
        snprintf(err, err_len, "the sampler: %s", tw_last_error());
    if (st != TW_OK) {
        step_meter_free(m);
        return st;
    }
    *out = m;
    return TW_OK;
}

/* A point (t, v) of a counter, and the line through two of them at t. */
typedef struct point {
    double t, v;
} point;

static double line_at(point a, point b, double t)
{
    return b.t > a.t ? a.v + (b.v - a.v) * (t - a.t) / (b.t - a.t) : a.v;
}

/* Keeps the two points nearest to `at` among those streamed in time order. */
typedef struct nearest2 {
    double at;
    point p[2];
    size_t n;
} nearest2;

static void nearest2_add(nearest2 *k, point q)
{
    if (k->n < 2) {
        k->p[k->n++] = q;
        return;
    }
    /* in time order: q replaces the older point while that one is farther from `at` */
    if (fabs(q.t - k->at) < fabs(k->p[0].t - k->at)) {
        k->p[0] = k->p[1];
        k->p[1] = q;
    }
}

/* Feeds each reading of `column` (at its own timestamp) to add(ctx, point); *readings counts them. */
static tw_status scan_column(const char *trace_path, const char *column, void (*add)(void *, point), void *ctx,
                             size_t *readings)
{
    *readings = 0;
    tw_trace_reader *r = NULL;
    tw_status st = tw_trace_reader_open(trace_path, &r);
    size_t col = 0;
    if (st == TW_OK) st = tw_trace_reader_find(r, column, &col);
    for (bool eof = false; st == TW_OK;) {
        tw_row row;
        st = tw_trace_reader_next(r, &row, &eof);
        if (st != TW_OK || eof) break;
        if (!row.valid[col]) continue; /* a row of another reading */
        add(ctx, (point){row.t_value_s[col], row.value[col]});
        (*readings)++;
    }
    tw_trace_reader_close(r);
    return st;
}

typedef struct counter_ends {
    nearest2 a, b;
} counter_ends;

static void counter_add(void *ctx, point q)
{
    counter_ends *c = ctx;
    nearest2_add(&c->a, q);
    nearest2_add(&c->b, q);
}

tw_status step_counter_energy(const char *trace_path, const char *column, double start_s, double end_s,
                              double *energy_j, size_t *readings)
{
    *energy_j = NAN;
    counter_ends c = {.a = {.at = start_s}, .b = {.at = end_s}};
    tw_status st = scan_column(trace_path, column, counter_add, &c, readings);
    if (st != TW_OK) return st;
    if (c.a.n < 2) return TW_EEMPTY;
    *energy_j = line_at(c.b.p[0], c.b.p[1], end_s) - line_at(c.a.p[0], c.a.p[1], start_s);
    return TW_OK;
}

/* The trapezoid of power readings over [start, end], streamed in time order. */
typedef struct trapezoid {
    double start, end, energy_j;
    point last;
    size_t n;
} trapezoid;

static void trapezoid_add(void *ctx, point q)
{
    trapezoid *z = ctx;
    if (z->n++ == 0) { /* before the first reading: its power */
        double hi = fmin(q.t, z->end);
        if (hi > z->start) z->energy_j += q.v * (hi - z->start);
    } else {
        double lo = fmax(z->last.t, z->start), hi = fmin(q.t, z->end);
        if (hi > lo) z->energy_j += 0.5 * (line_at(z->last, q, lo) + line_at(z->last, q, hi)) * (hi - lo);
    }
    z->last = q;
}

tw_status step_power_energy(const char *trace_path, const char *column, double start_s, double end_s, double *energy_j,
                            size_t *readings)
{
    *energy_j = NAN;
    trapezoid z = {.start = start_s, .end = end_s};
    tw_status st = scan_column(trace_path, column, trapezoid_add, &z, readings);
    if (st != TW_OK) return st;
    if (z.n == 0) return TW_EEMPTY;
    double lo = fmax(z.last.t, start_s); /* after the last reading: its power */
    if (end_s > lo) z.energy_j += z.last.v * (end_s - lo);
    *energy_j = z.energy_j;
    return TW_OK;
}

/* GPU g's column `reading` in the trace: the sampler prefixes gpuN_ when it reads several GPUs. */
static void column_name(const step_meter *m, size_t g, const char *reading, char *buf, size_t len)
{
    if (m->n > 1)
        snprintf(buf, len, "gpu%u_%s", m->gpu[g].index, reading);
    else
        snprintf(buf, len, "%s", reading);
}

/* GPU g's energy: its counter's difference, else (a GPU before Volta has no
 * counter) the trapezoid of its board power. */
static void gpu_energy(step_meter *m, size_t g)
{
    step_gpu_energy *e = &m->gpu[g];
    char column[64];
    column_name(m, g, "energy_j", column, sizeof column);
    tw_status st = step_counter_energy(m->trace_path, column, 0.0, m->time_s, &e->energy_j, &e->readings);
    e->reading = "energy_j";
    e->method = "energy counter difference";
    if (st != TW_ENOTFOUND && st != TW_EEMPTY) {
        if (st != TW_OK) e->method = "the trace could not be read";
        return;
    }
    column_name(m, g, "power_usage_w", column, sizeof column);
    st = step_power_energy(m->trace_path, column, 0.0, m->time_s, &e->energy_j, &e->readings);
    e->reading = "power_usage_w";
    e->method = st == TW_OK ? "board power trapezoid (no energy counter)"
                            : "neither an energy counter nor a power reading was read";
}

tw_status step_meter_stop(step_meter *m)
{
    if (!m || !m->sampler) return TW_EINVAL;
    m->time_s = (double)(mono_ns() - m->t0_ns) * 1e-9;
    tw_status st = tw_sampler_stop(m->sampler);
    snprintf(m->notes, sizeof m->notes, "%s", tw_sampler_notes(m->sampler));
    tw_sampler_free(m->sampler);
    m->sampler = NULL;
    for (size_t g = 0; g < m->n && st == TW_OK; g++)
        gpu_energy(m, g);
    return st;
}

size_t step_meter_count(const step_meter *m) { return m ? m->n : 0; }
const step_gpu_energy *step_meter_gpu(const step_meter *m, size_t i) { return m && i < m->n ? &m->gpu[i] : NULL; }
double step_meter_time_s(const step_meter *m) { return m ? m->time_s : NAN; }
double step_meter_start_unix_s(const step_meter *m) { return m ? m->start_unix_s : NAN; }
const char *step_meter_notes(const step_meter *m) { return m ? m->notes : ""; }

void step_meter_free(step_meter *m)
{
    if (!m) return;
    if (m->sampler) {
        tw_sampler_stop(m->sampler);
        tw_sampler_free(m->sampler);
    }
    if (m->trace_path) remove(m->trace_path);
    free(m->trace_path);
    free(m->gpu);
    free(m);
}
