/* The exporter's page: Prometheus' text format 0.0.4, or OpenMetrics 1.0
 * when the scraper asks for it. The two differ in a family's name (a
 * counter's family is named without "_total" in OpenMetrics, its samples
 * with it; an info family's samples end in "_info"), in the UNIT line, in
 * timestamps (ms integers; seconds) and in the closing "# EOF". Every
 * family's samples are written together, GPU by GPU. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exporter/expo.h"

typedef enum { F_COUNTER, F_GAUGE, F_INFO } family_type;

typedef struct family {
    const char *name; /* OpenMetrics' family name */
    family_type type;
    const char *unit; /* "" when none */
    const char *help;
} family;

void tw_expo_escape(tw_sbuf *out, const char *s)
{
    for (; s && *s; s++) {
        if (*s == '\\')
            tw_sbuf_putn(out, "\\\\", 2);
        else if (*s == '"')
            tw_sbuf_putn(out, "\\\"", 2);
        else if (*s == '\n')
            tw_sbuf_putn(out, "\\n", 2);
        else
            tw_sbuf_putn(out, s, 1);
    }
}

/* A number as both formats write it: the shortest text that reads back the same. */
static void put_number(tw_sbuf *out, double x)
{
    if (isnan(x)) {
        tw_sbuf_printf(out, "NaN");
        return;
    }
    if (isinf(x)) {
        tw_sbuf_printf(out, x > 0 ? "+Inf" : "-Inf");
        return;
    }
    char buf[40];
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(buf, sizeof buf, "%.*g", prec, x);
        if (strtod(buf, NULL) == x) break;
    }
    tw_sbuf_printf(out, "%s", buf);
}

/* The sample's name: the family's, with "_total" (counters) or "_info" (info). */
static void put_sample_name(tw_sbuf *out, const family *f)
{
    tw_sbuf_printf(out, "%s%s", f->name, f->type == F_COUNTER ? "_total" : f->type == F_INFO ? "_info" : "");
}

static void put_header(tw_sbuf *out, const family *f, const expo_render_opts *o)
{
    if (o->openmetrics) {
        static const char *const om_type[] = {"counter", "gauge", "info"};
        tw_sbuf_printf(out, "# TYPE %s %s\n", f->name, om_type[f->type]);
        if (f->unit[0]) tw_sbuf_printf(out, "# UNIT %s %s\n", f->name, f->unit);
        tw_sbuf_printf(out, "# HELP %s %s\n", f->name, f->help);
        return;
    }
    tw_sbuf_printf(out, "# HELP ");
    put_sample_name(out, f);
    tw_sbuf_printf(out, " %s\n# TYPE ", f->help);
    put_sample_name(out, f);
    tw_sbuf_printf(out, " %s\n", f->type == F_COUNTER ? "counter" : "gauge");
}

static void put_label(tw_sbuf *out, bool *first, const char *name, const char *value)
{
    tw_sbuf_printf(out, "%s%s=\"", *first ? "" : ",", name);
    tw_expo_escape(out, value);
    tw_sbuf_putn(out, "\"", 1);
    *first = false;
}

/* The GPU's labels (uuid, index, model, host), then `extra` pairs (NULL-terminated). */
static void put_gpu_labels(tw_sbuf *out, const expo_view *v, const char *const *extra)
{
    char idx[16];
    snprintf(idx, sizeof idx, "%u", v->index);
    bool first = true;
    tw_sbuf_putn(out, "{", 1);
    put_label(out, &first, "uuid", v->uuid);
    put_label(out, &first, "index", idx);
    put_label(out, &first, "model", v->model);
    put_label(out, &first, "host", v->host);
    for (size_t i = 0; extra && extra[i]; i += 2)
        put_label(out, &first, extra[i], extra[i + 1]);
    tw_sbuf_putn(out, "}", 1);
}

/* dcgm-exporter's labels: gpu, UUID, device, modelName, Hostname. */
static void put_dcgm_labels(tw_sbuf *out, const expo_view *v)
{
    char idx[16], dev[32];
    snprintf(idx, sizeof idx, "%u", v->index);
    snprintf(dev, sizeof dev, "nvidia%u", v->index);
    bool first = true;
    tw_sbuf_putn(out, "{", 1);
    put_label(out, &first, "gpu", idx);
    put_label(out, &first, "UUID", v->uuid);
    put_label(out, &first, "device", dev);
    put_label(out, &first, "modelName", v->model);
    put_label(out, &first, "Hostname", v->host);
    tw_sbuf_putn(out, "}", 1);
}

/* " value[ timestamp]\n"; t: timeline seconds of the value (NaN: no timestamp). */
static void put_value(tw_sbuf *out, double x, double t, const expo_render_opts *o)
{
    tw_sbuf_putn(out, " ", 1);
    put_number(out, x);
    if (!isnan(t)) {
        double ms = (double)o->wall_ms_at_t0 + 1e3 * t;
        if (o->openmetrics)
            tw_sbuf_printf(out, " %.3f", ms / 1e3);
        else
            tw_sbuf_printf(out, " %" PRId64, (int64_t)llround(ms));
    }
    tw_sbuf_putn(out, "\n", 1);
}

static const family f_energy = {
    "truewatt_gpu_energy_joules", F_COUNTER, "joules",
    "Energy the GPU used since the exporter started: its energy counter's increments (the first reading taken as "
    "0, a counter that starts again added from its new value), else the integral of its best power reading "
    "(truewatt_gpu_sensor_info's energy_source says which); stamped with the time the value refers to"};
static const family f_power = {"truewatt_gpu_power_watts", F_GAUGE, "watts",
                               "Mean power of the GPU over the last truewatt_gpu_power_window_seconds of its best "
                               "reading (the sensor profile's choice; each value itself a mean over its model's "
                               "window): values weighted by the time each covers, or the energy counter's slope"};
static const family f_window = {"truewatt_gpu_power_window_seconds", F_GAUGE, "seconds",
                                "The window truewatt_gpu_power_watts is a mean over (--window)"};
static const family f_sensor = {
    "truewatt_gpu_sensor", F_INFO, "",
    "What the GPU's numbers come from: power_reading (the reading truewatt_gpu_power_watts is made of) and "
    "its model's response, the sensor profile (\"none\": the defaults) and energy_source (\"counter\", or the "
    "power reading integrated where the GPU has no energy counter)"};
static const family f_stalls = {"truewatt_gpu_sensor_stalls", F_COUNTER, "",
                                "Times the GPU's sensor gave no reading for more than 2 s"};
static const family f_failures = {"truewatt_gpu_read_failures", F_COUNTER, "",
                                  "Polls of the GPU in which no reading could be read (NVML errors)"};
static const family f_resets = {"truewatt_gpu_energy_resets", F_COUNTER, "",
                                "Times the GPU's energy counter went back (driver reload, GPU reset)"};
static const family f_lost = {"truewatt_gpu_lost", F_GAUGE, "",
                              "1 when the GPU's readings stopped for good (fell off the bus, every read failing); "
                              "its energy keeps its last value"};
static const family f_proc = {
    "truewatt_process_energy_joules", F_COUNTER, "joules",
    "Energy of a process on the GPU. source=\"truewatt run\": measured (its kernels' and copies' energy above the "
    "GPU's baseline, plus the baseline while they ran), reported when its run ended; source=\"estimate\": the GPU's "
    "energy since the exporter saw it split by NVML's per-process SM utilisation (docs/exporter.md)"};
static const family f_proc_active = {
    "truewatt_process_active_energy_joules", F_COUNTER, "joules",
    "The part of a measured process's energy above the GPU's baseline: its kernels and copies alone "
    "(source=\"truewatt run\" only)"};
static const family f_dcgm_power = {"DCGM_FI_DEV_POWER_USAGE", F_GAUGE, "",
                                    "Power draw (in W), as truewatt_gpu_power_watts (dcgm-exporter's name)"};
static const family f_dcgm_energy = {
    "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", F_GAUGE, "",
    "Total energy consumption (in mJ) since the exporter started, as truewatt_gpu_energy_joules_total "
    "(dcgm-exporter's name; a counter there)"};

/* A GPU's value of one family, with the time it refers to (NaN: none); false when it has none. */
typedef bool (*pick_fn)(const expo_view *v, double *x, double *t);

static bool pick_energy(const expo_view *v, double *x, double *t)
{
    *x = v->energy_j, *t = v->energy_t;
    return v->has_energy;
}

static bool pick_energy_mj(const expo_view *v, double *x, double *t)
{
    *x = 1e3 * v->energy_j, *t = v->energy_t;
    return v->has_energy;
}

static bool pick_power(const expo_view *v, double *x, double *t)
{
    *x = v->power_w, *t = NAN;
    return v->has_power;
}

static bool pick_stalls(const expo_view *v, double *x, double *t)
{
    *x = (double)v->stalls, *t = NAN;
    return true;
}

static bool pick_failures(const expo_view *v, double *x, double *t)
{
    *x = (double)v->failures, *t = NAN;
    return true;
}

static bool pick_resets(const expo_view *v, double *x, double *t)
{
    *x = (double)v->resets, *t = NAN;
    return true;
}

static bool pick_lost(const expo_view *v, double *x, double *t)
{
    *x = v->lost ? 1.0 : 0.0, *t = NAN;
    return true;
}

/* One family: its header, then a sample per GPU that has a value (dcgm: dcgm-exporter's labels). */
static void render_gpus(const expo_view *v, size_t n, const family *f, pick_fn pick, bool dcgm,
                        const expo_render_opts *o, tw_sbuf *out)
{
    put_header(out, f, o);
    for (size_t i = 0; i < n; i++) {
        double x, t;
        if (!pick(&v[i], &x, &t)) continue;
        put_sample_name(out, f);
        if (dcgm)
            put_dcgm_labels(out, &v[i]);
        else
            put_gpu_labels(out, &v[i], NULL);
        put_value(out, x, t, o);
    }
}

static void render_sensor(const expo_view *v, size_t n, const expo_render_opts *o, tw_sbuf *out)
{
    put_header(out, &f_sensor, o);
    for (size_t i = 0; i < n; i++) {
        const char *extra[] = {"power_reading", v[i].power_reading, "response",         v[i].response, "profile",
                               v[i].profile,    "energy_source",    v[i].energy_source, NULL};
        put_sample_name(out, &f_sensor);
        put_gpu_labels(out, &v[i], extra);
        put_value(out, 1, NAN, o);
    }
}

/* The processes of every GPU (active: only the measured ones' part above the baseline). */
static void render_procs(const expo_view *v, size_t n, const family *f, bool active, const expo_render_opts *o,
                         tw_sbuf *out)
{
    put_header(out, f, o);
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < v[i].nprocs; k++) {
            const expo_proc *p = &v[i].procs[k];
            double x = active ? p->active_j : p->energy_j;
            if ((active && p->estimate) || !isfinite(x)) continue;
            char pid[16];
            snprintf(pid, sizeof pid, "%u", p->pid);
            const char *extra[] = {"pid", pid,    "command", p->command,
                                   "job", p->job, "source",  p->estimate ? "estimate" : "truewatt run",
                                   NULL};
            put_sample_name(out, f);
            put_gpu_labels(out, &v[i], extra);
            put_value(out, x, NAN, o);
        }
}

void tw_expo_render(const expo_view *v, size_t n, const expo_render_opts *o, tw_sbuf *out)
{
    render_gpus(v, n, &f_energy, pick_energy, false, o, out);
    render_gpus(v, n, &f_power, pick_power, false, o, out);
    put_header(out, &f_window, o);
    put_sample_name(out, &f_window);
    put_value(out, o->window_s, NAN, o);
    render_sensor(v, n, o, out);
    render_gpus(v, n, &f_stalls, pick_stalls, false, o, out);
    render_gpus(v, n, &f_failures, pick_failures, false, o, out);
    render_gpus(v, n, &f_resets, pick_resets, false, o, out);
    render_gpus(v, n, &f_lost, pick_lost, false, o, out);
    render_procs(v, n, &f_proc, false, o, out);
    render_procs(v, n, &f_proc_active, true, o, out);
    if (o->dcgm) {
        render_gpus(v, n, &f_dcgm_power, pick_power, true, o, out);
        /* a counter in dcgm-exporter's text, which OpenMetrics would rename to ..._total: a gauge in both */
        render_gpus(v, n, &f_dcgm_energy, pick_energy_mj, true, o, out);
    }
    if (o->openmetrics) tw_sbuf_printf(out, "# EOF\n");
}
