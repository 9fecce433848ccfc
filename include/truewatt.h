/*
 * truewatt.h - the one public header of libtruewatt.
 *
 * If a function, type or constant is not declared here, it is not API.
 * Every exported symbol carries the prefix tw_ (checked by a test).
 *
 * Units: one internal unit per quantity, SI throughout: seconds, watts, joules.
 * Every name that carries a quantity says its unit (t_s, power_w, energy_j).
 *
 * Errors: every fallible call returns a tw_status. TW_OK is 0; codes are
 * append-only and never renumbered. tw_last_error() gives the detail of the
 * last failure in the calling thread (file and line for bad input).
 */
#ifndef TRUEWATT_H
#define TRUEWATT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define TW_API __attribute__((visibility("default")))
#else
#define TW_API
#endif

#define TW_VERSION_MAJOR 0
#define TW_VERSION_MINOR 1
#define TW_VERSION_PATCH 0
#define TW_VERSION_STRING "0.1.0"

/* ---------------------------------------------------------------- errors */

typedef enum tw_status {
    TW_OK = 0,
    TW_EINVAL = 1,       /* invalid argument */
    TW_ENOMEM = 2,       /* out of memory */
    TW_EIO = 3,          /* a file could not be opened, read or written */
    TW_EPARSE = 4,       /* malformed input */
    TW_ENOTFOUND = 5,    /* no such column, backend, event or file */
    TW_EUNAVAIL = 6,     /* backend unavailable on this machine */
    TW_EUNSUPPORTED = 7, /* operation or field not supported */
    TW_EEMPTY = 8,       /* input holds no data */
    TW_EORDER = 9,       /* timestamps go backwards */
    TW_ENUMERIC = 10,    /* a fit or estimate could not be computed */
    TW_EINTERRUPTED = 11 /* stopped by a signal */
    /* append new codes here; never renumber */
} tw_status;

/* Short text of a status code, never NULL. */
TW_API const char *tw_strerror(tw_status status);
/* Detail of the last failure in this thread ("" when none). */
TW_API const char *tw_last_error(void);
/* Library version string, e.g. "0.1.0". */
TW_API const char *tw_version(void);

/* ---------------------------------------------------------------- readings */

typedef enum tw_quantity {
    TW_Q_OTHER = 0,
    TW_Q_TIME = 1,  /* seconds */
    TW_Q_POWER = 2, /* watts */
    TW_Q_ENERGY = 3 /* joules */
} tw_quantity;

/* One reading (a column of a trace, a channel of a sensor). */
typedef struct tw_reading_info {
    const char *name;     /* as named in the source, e.g. "power_instant_mw" */
    tw_quantity quantity; /* what the value means, after scaling to SI */
    double scale;         /* factor applied to the source's values (1e-3 for mW) */
} tw_reading_info;

/* One row of samples on one timeline. Arrays have n entries, one per reading.
 * A reading whose valid flag is 0 is absent in this row (never read as 0). */
typedef struct tw_row {
    double t_s;              /* the row's time on the trace timeline */
    size_t n;                /* number of readings */
    const double *value;     /* SI units */
    const double *t_value_s; /* each reading's own timestamp (t_s when it has none) */
    const uint8_t *valid;    /* 1 = present */
} tw_row;

/* ---------------------------------------------------------------- trace files */

/* Streaming reader of a CSV trace. The header names the columns; the time
 * column is "t_s" (or "t", or "time_s"); a column "X_t_s" is the own timestamp
 * of reading X; unit suffixes (_w _mw _j _mj _s _ms _us _ns) scale values to SI.
 * Empty cells and "nan" are absent readings. Lines starting with '#' are comments.
 * Memory is bounded by the longest line, whatever the length of the file.
 * A run file (tw_run, below) is read too: its samples, a row per poll, each
 * reading holding its last update; tw_trace_reader_line is then the poll's number. */
typedef struct tw_trace_reader tw_trace_reader;

TW_API tw_status tw_trace_reader_open(const char *path, tw_trace_reader **out);
TW_API size_t tw_trace_reader_nreadings(const tw_trace_reader *r);
TW_API const tw_reading_info *tw_trace_reader_reading(const tw_trace_reader *r, size_t i);
/* Index of the reading named `name` (TW_ENOTFOUND lists the names in tw_last_error). */
TW_API tw_status tw_trace_reader_find(const tw_trace_reader *r, const char *name, size_t *idx);
/* Next row; *eof is set and TW_OK returned at the end. The row's arrays stay
 * valid until the next call. Time going backwards is TW_EORDER. */
TW_API tw_status tw_trace_reader_next(tw_trace_reader *r, tw_row *row, bool *eof);
TW_API tw_status tw_trace_reader_rewind(tw_trace_reader *r);
/* Line number of the last row read (1 = header). */
TW_API uint64_t tw_trace_reader_line(const tw_trace_reader *r);
/* What was read with a warning, one line each ("" when nothing): a last line
 * without a line end (cut off by a crash?) is left out, the rows before it used. */
TW_API const char *tw_trace_reader_notes(const tw_trace_reader *r);
TW_API const char *tw_trace_reader_path(const tw_trace_reader *r);
TW_API void tw_trace_reader_close(tw_trace_reader *r);

/* Streaming CSV writer. Columns: t_s, then each name; with own_timestamps,
 * also "NAME_t_s" after each reading. Names should carry SI unit suffixes. */
typedef struct tw_trace_writer tw_trace_writer;

TW_API tw_status tw_trace_writer_open(const char *path, size_t n, const char *const *names, bool own_timestamps,
                                      tw_trace_writer **out);
/* Adds a comment line ("# text") before the header; only before the first row. */
TW_API tw_status tw_trace_writer_comment(tw_trace_writer *w, const char *text);
TW_API tw_status tw_trace_writer_write(tw_trace_writer *w, const tw_row *row);
/* Flushes and closes; reports a write error that happened on the way. */
TW_API tw_status tw_trace_writer_close(tw_trace_writer *w);

/* ---------------------------------------------------------------- events */

/* A span of activity on the trace timeline (a kernel, a region). */
typedef struct tw_event {
    const char *name;
    double start_s;
    double end_s;
    int32_t device;       /* -1 when unknown */
    int64_t stream;       /* -1 when unknown */
    double true_energy_j; /* ground truth when known (simulator), else NaN */
    const char *kind;     /* "kernel", "memcpy", "memset", "nvtx", ...; NULL when unknown */
    /* Added later; zero (NULL, 0) when unknown, so older initializers stay right. */
    const char *device_uuid; /* the GPU it ran on, as NVML writes it ("GPU-...", "MIG-...") */
    const char *mangled;     /* kernels: the name as compiled, when `name` is its demangled form */
    const char *domain;      /* NVTX: the range's domain ("" = the default domain) */
    int64_t tid;             /* NVTX: the thread (Linux thread id) that opened the range */
    int32_t depth;           /* NVTX push/pop ranges: nesting depth in its thread and domain,
                                1 = outermost; 0 for start/end ranges and other kinds */
} tw_event;

typedef struct tw_events tw_events;

TW_API tw_status tw_events_new(tw_events **out);
/* CSV with name,start_s,end_s (aliases label,t_start,t_end) and optional
 * device,stream,true_energy_j,kind,device_uuid,mangled,domain,tid,depth.
 * Every string of an event set (names, kinds, UUIDs, ...) is stored once per
 * set, whatever the number of events using it: a string handed out by
 * tw_events_get stays valid, at the same address, until tw_events_free of
 * that set (adding events does not move it); an event added to another set
 * is copied into that set's own store. */
TW_API tw_status tw_events_load(const char *path, tw_events **out);
TW_API tw_status tw_events_add(tw_events *ev, const tw_event *e);
TW_API size_t tw_events_count(const tw_events *ev);
TW_API const tw_event *tw_events_get(const tw_events *ev, size_t i);
/* Stable sort by start time. */
TW_API void tw_events_sort(tw_events *ev);
TW_API tw_status tw_events_save(const tw_events *ev, const char *path);
TW_API void tw_events_free(tw_events *ev);

/* ---------------------------------------------------------------- run files */

/* A run file: the SQLite database `truewatt run` records into while the
 * program runs (samples, kernels, copies, NVTX ranges, devices, the sensor
 * profile used, the reports); schema and example queries in docs/runfile.md.
 * tw_trace_reader_open reads its samples as a trace (one row per poll). */
typedef struct tw_run tw_run;

/* Opens an existing run file: TW_EPARSE when it is not one, TW_EUNSUPPORTED
 * for a schema this version does not read. */
TW_API tw_status tw_run_open(const char *path, tw_run **out);
/* Commits what is pending and closes; reports the first write error. */
TW_API tw_status tw_run_close(tw_run *r);
/* Its kernels, copies, memsets and NVTX ranges as an event set, by start. */
TW_API tw_status tw_run_load_events(tw_run *r, tw_events **out);
/* Its samples as a CSV trace (tw_trace_writer's columns, a row per poll). */
TW_API tw_status tw_run_export_trace(tw_run *r, const char *path);
/* Its activities as the injection library's events CSV, times to the ns. */
TW_API tw_status tw_run_export_events(tw_run *r, const char *path);
/* Its activity counters (truewatt run --activity-counters) as CSV, a row per value:
 * device,device_uuid,start_s,end_s,metric,value. *devices: the GPUs the run
 * asked for counters on (those refused included: the header alone); 0 when it
 * did not ask, and then no file is written. devices may be NULL. */
TW_API tw_status tw_run_export_pm(tw_run *r, const char *path, size_t *devices);

/* ---------------------------------------------------------------- reports */

/* The energy report of a run file: per GPU, where the energy went (baseline,
 * kernels, copies), each kernel name, each group of names, each NVTX range
 * (with its thread, domain and nesting depth), the sensor profile used and
 * the sampler's cost. One record model; text, JSON, CSV and Perfetto are
 * renderings of it. It is what `truewatt run` prints when its command ends
 * and what `truewatt report RUN` prints later. */
typedef struct tw_report tw_report;

typedef enum tw_report_format {
    TW_REPORT_TEXT = 0, /* tables, as `truewatt report RUN` prints them */
    TW_REPORT_JSON = 1, /* every record (keys: docs/usage.md) */
    TW_REPORT_CSV = 2   /* a row per GPU and record (name, group, range): docs/usage.md */
} tw_report_format;

typedef struct tw_report_options {
    size_t size;               /* sizeof(tw_report_options), set by tw_report_options_init */
    const char *profile;       /* a sensor profile file for every GPU instead of the one the run
                                  recorded (NULL: the run's) */
    const char *const *groups; /* name patterns (fnmatch(3), e.g. "*gemm*"): the names matching
                                  one are reported as one group, whatever the data could split */
    size_t ngroups;
    const char *const *range_groups; /* NVTX range names: the names of the kernels run inside such a
                                        range (on any thread) form one group per range name */
    size_t nrange_groups;
    const volatile int *cancel; /* nonzero: the computation stops with TW_EINTERRUPTED */
    bool no_activity_counters;  /* leave the activity counters out of the estimate (today's readings alone) */
    bool no_linger;             /* no lingering-power term (docs/methods.md, "Lingering power"): to compare */
} tw_report_options;

TW_API void tw_report_options_init(tw_report_options *o);
/* The report of a run file open with tw_run_open (or being recorded). */
TW_API tw_status tw_report_compute(tw_run *run, const tw_report_options *o, tw_report **out);
/* The merged report of several run files (the ranks of an MPI job, docs/mpi.md):
 * each GPU (host and UUID) once, the kernels of every rank that ran on it
 * fitted together, per rank. */
TW_API tw_status tw_report_merge(const char *const *paths, size_t n, const tw_report_options *o, tw_report **out);
/* Writes the Perfetto file (ui.perfetto.dev) of a report of one run file; the
 * report then names it (a failure is also a warning line in the report). */
TW_API tw_status tw_report_write_perfetto(tw_report *r, const char *path);
/* The report as text, JSON or CSV, NUL-terminated; the caller frees *text with free(). */
TW_API tw_status tw_report_render(const tw_report *r, tw_report_format format, char **text, size_t *len);
/* Adds the report's JSON to the run file's reports table, with the options that made it. */
TW_API tw_status tw_report_keep(const tw_report *r, tw_run *run, const char *options);
/* Lines about activity on GPUs that were not sampled ("" when none): a
 * command-line tool shows them at once, before the report. */
TW_API const char *tw_report_notice(const tw_report *r);
TW_API void tw_report_free(tw_report *r);

/* The records. Each *_get fills out up to out->size bytes (set it to the
 * struct's sizeof); strings stay valid until tw_report_free. */
typedef struct tw_report_device {
    size_t size;                   /* sizeof(tw_report_device), set by the caller */
    int index;                     /* NVML index */
    const char *uuid;              /* "" when unknown */
    const char *name;              /* e.g. "NVIDIA H100 80GB HBM3"; "" when unknown */
    const char *error;             /* why there is no estimate; NULL when there is one (the numbers below) */
    double fit_start_s, fit_end_s; /* the span estimated, on the run's timeline */
    double energy_j;               /* the model over the span: baseline + kernels + copies */
    double counter_j;              /* the energy counter's difference over it (NaN: none) */
    double kernels_j, copies_j, baseline_j;
    double conservation_pct;      /* the model against the reference reading */
    size_t names, groups, ranges; /* how many records of each kind */
} tw_report_device;

typedef struct tw_report_name {
    size_t size;      /* sizeof(tw_report_name), set by the caller */
    const char *name; /* a kernel name, "memcpy HtoD", ... ("rank N: name" in a merged report) */
    const char *kind; /* "kernel", "memcpy", "memset" */
    /* "ok", "below_resolution" (upper_j bounds it), "grouped" (see group), "unobserved", "at_power_bound"
     * (held at the bound on each name's power: energy_j = upper_j, the most the model can give it) */
    const char *status;
    uint64_t launches;
    double time_s;   /* the time it ran */
    double energy_j; /* above the baseline; NaN unless status is "ok" */
    double energy_sd_j;
    double power_w; /* above the baseline, while it runs */
    double upper_j; /* "below_resolution", "at_power_bound": the one-sided bound; else NaN */
    int group;      /* its group's index, or -1 */
    /* which model gave its power: "readings" (the power readings alone) or "counters" (the activity
     * counters' model over its time plus its own term; docs/methods.md) */
    const char *method;
} tw_report_name;

typedef struct tw_report_group {
    size_t size;       /* sizeof(tw_report_group), set by the caller */
    const char *label; /* the pattern or range asked for, or "group N: NAME (+M)" */
    const char *status;
    size_t members;
    uint64_t launches;
    double time_s, energy_j, energy_sd_j, power_w, upper_j;
} tw_report_group;

typedef struct tw_report_range {
    size_t size; /* sizeof(tw_report_range), set by the caller */
    const char *name;
    const char *domain; /* "" for NVTX's default domain */
    int64_t tid;        /* the thread that opened it (0: unknown) */
    int depth;          /* push/pop nesting, 1 = outermost; 0 for start/end ranges */
    double start_s, end_s;
    double energy_j;         /* the whole GPU's energy over the range */
    double above_baseline_j; /* what the kernels inside it drew above the baseline */
    double baseline_j;       /* energy_j - above_baseline_j */
    double energy_sd_j;      /* energy_j's standard uncertainty (NaN: not known) */
} tw_report_range;

TW_API size_t tw_report_device_count(const tw_report *r);
TW_API tw_status tw_report_device_get(const tw_report *r, size_t d, tw_report_device *out);
TW_API tw_status tw_report_name_get(const tw_report *r, size_t d, size_t i, tw_report_name *out);
TW_API tw_status tw_report_group_get(const tw_report *r, size_t d, size_t i, tw_report_group *out);
TW_API tw_status tw_report_range_get(const tw_report *r, size_t d, size_t i, tw_report_range *out);

/* ---------------------------------------------------------------- simulator scenarios */

typedef enum tw_sim_profile {
    TW_SIM_K20 = 0, /* Burtscher et al. 2014: RC sensor, C = 0.84 s, ~15 ms updates */
    TW_SIM_H100 = 1 /* sensors-h100.md: 1 s boxcar, 25 ms window / 100 ms, counter, buffer */
} tw_sim_profile;

TW_API const char *tw_sim_profile_name(tw_sim_profile p);
TW_API tw_status tw_sim_profile_parse(const char *name, tw_sim_profile *out);

/* A true power signal: idle, active idle, kernels at their power levels and
 * the profile's after-kernel behaviour. Piecewise constant, so its energy is exact. */
typedef struct tw_scenario tw_scenario;

TW_API tw_status tw_scenario_new(tw_sim_profile profile, tw_scenario **out);
/* Kernels from a CSV name,start_s,duration_s,power_w. H100 kernels may
 * overlap: n kernels running together add the mean of their powers above
 * active idle (each counts for 1/n of the time). */
TW_API tw_status tw_scenario_load(const char *path, tw_sim_profile profile, tw_scenario **out);
TW_API tw_status tw_scenario_add_kernel(tw_scenario *s, const char *name, double start_s, double duration_s,
                                        double power_w);
/* The GPU context is created at t_s: before it the power is the profile's
 * idle level, from it the active-idle level (default: H100 a lead of 1 s
 * before the first kernel; K20 none, idle until the first kernel). */
TW_API tw_status tw_scenario_set_context(tw_scenario *s, double t_s);
/* H100: the active-idle level rises by w_per_s each second after the
 * context is created (a warming card; negative: falls). Default 0. */
TW_API tw_status tw_scenario_set_drift(tw_scenario *s, double w_per_s);
/* Total simulated length; default: last kernel end + the profile's full tail + 1 s. */
TW_API tw_status tw_scenario_set_duration(tw_scenario *s, double duration_s);
TW_API double tw_scenario_duration_s(const tw_scenario *s);
TW_API tw_sim_profile tw_scenario_profile(const tw_scenario *s);
TW_API double tw_scenario_idle_w(const tw_scenario *s);
TW_API double tw_scenario_active_idle_w(const tw_scenario *s);
TW_API double tw_scenario_true_power_w(const tw_scenario *s, double t_s);
/* Exact integral of the true power over [t0_s, t1_s]. */
TW_API double tw_scenario_true_energy_j(const tw_scenario *s, double t0_s, double t1_s);
/* The kernels as events, with true_energy_j filled. */
TW_API tw_status tw_scenario_events(const tw_scenario *s, tw_events **out);
TW_API void tw_scenario_free(tw_scenario *s);

/* ---------------------------------------------------------------- sensors */

/* Backend selection and its inputs. Unused fields are ignored by a backend. */
/* Reading groups: fast ones are cheap to read (power, fields, sample buffer),
 * slow ones are not (the energy counter costs ~4 ms on an H100; clocks,
 * temperature, memory) and are read on their own cadence. */
#define TW_READ_FAST 1u
#define TW_READ_SLOW 2u
#define TW_READ_ALL (TW_READ_FAST | TW_READ_SLOW)

typedef struct tw_sensor_config {
    const char *path;            /* replay: the trace file */
    const tw_scenario *scenario; /* sim: the true signal (borrowed: must outlive the sensor
                                    and not change while it is open) */
    uint64_t seed;               /* sim: noise and jitter */
    const char *device;          /* nvml: index ("0") or UUID ("GPU-..."); NULL = "0" */
    unsigned groups;             /* nvml: TW_READ_FAST, TW_READ_SLOW or both (0 = both) */
    const char *library;         /* nvml: libnvidia-ml path; NULL = $TW_NVML_LIBRARY, then
                                    libnvidia-ml.so.1 */
    uint64_t t0_mono_ns;         /* nvml: the trace timeline's origin on CLOCK_MONOTONIC
                                    (ns); 0 = when the sensor opens */
    const char *skip;            /* nvml: readings not to read, comma-separated names
                                    ("power_avg_w,mem_power_instant_w"); NULL = none */
    double buffer_poll_s;        /* nvml: how often the sample buffer is drained (0 = 0.1 s);
                                    a drain gives all its new samples at once, one per row */
} tw_sensor_config;

/* A device a backend can read. */
typedef struct tw_device_info {
    unsigned index;
    char uuid[96];
    char name[96];
    char driver[32];      /* driver version ("" when the backend cannot tell) */
    unsigned arch;        /* NVML's architecture (nvmlDeviceArchitecture_t: 9 Hopper, ...); 0 = unknown */
    double power_limit_w; /* the power limit the GPU enforces (read, never set); NaN = unknown */
} tw_device_info;

TW_API size_t tw_backend_count(void);
TW_API const char *tw_backend_name(size_t i);
TW_API const char *tw_backend_description(size_t i);
/* Whether the backend can be used here; when not, why (into why[why_len]). */
TW_API bool tw_backend_available(const char *name, char *why, size_t why_len);
/* The devices the backend sees (cfg->library is used for nvml). Fills up to
 * cap entries, sets *n to the number of devices. TW_EUNSUPPORTED for backends
 * without devices (sim, replay: one implicit device). */
TW_API tw_status tw_backend_devices(const char *name, const tw_sensor_config *cfg, tw_device_info *out, size_t cap,
                                    size_t *n);

typedef struct tw_sensor tw_sensor;

TW_API tw_status tw_sensor_open(const char *backend, const tw_sensor_config *cfg, tw_sensor **out);
TW_API const char *tw_sensor_backend(const tw_sensor *s);
TW_API size_t tw_sensor_nreadings(const tw_sensor *s);
TW_API const tw_reading_info *tw_sensor_reading(const tw_sensor *s, size_t i);
TW_API tw_status tw_sensor_find(const tw_sensor *s, const char *name, size_t *idx);
/* Next row of readings; *eof at the end of a finite source. */
TW_API tw_status tw_sensor_next(tw_sensor *s, tw_row *row, bool *eof);
/* Starts again from the beginning (TW_EUNSUPPORTED for live sensors). */
TW_API tw_status tw_sensor_rewind(tw_sensor *s);
TW_API void tw_sensor_close(tw_sensor *s);
/* Rows the sensor can give at once without reading the device again (the
 * rest of a drained sample buffer); 0 for most sources. */
TW_API size_t tw_sensor_pending(const tw_sensor *s);
/* What the backend found when it opened (e.g. readings probed as unsupported,
 * with the vendor's message), one per line; "" when nothing to say. */
TW_API const char *tw_sensor_notes(const tw_sensor *s);

/* ---------------------------------------------------------------- sampler */

/* Samples sensors in the background and streams them to a trace file: per
 * device one thread for the fast readings and one for the slow ones, each
 * pushing rows into a lock-free ring; a writer thread merges the rings in
 * time order into the CSV, so memory stays bounded over hours. */
typedef struct tw_sampler_config {
    const char *backend;        /* "nvml" (or "sim" for tests) */
    const char *const *devices; /* indices or UUIDs; NULL/0 = all devices */
    size_t n_devices;
    const tw_sensor_config *base; /* backend settings (library, ...); may be NULL */
    double fast_period_s;         /* fast readings' period; 0 = the sampling plan's */
    double slow_period_s;         /* slow readings' period, fixed; 0 = the plan's (the energy
                                     counter's: 0.5 s, stretched up to 1 s while a read costs more
                                     than 1 % of a core: ~4 ms of CPU on an H100) */
    const char *trace_path;       /* CSV written while sampling; may be NULL with a run */
    uint64_t t0_mono_ns;          /* timeline origin (CLOCK_MONOTONIC ns); 0 = now */
    const char *provenance;       /* a line (command, date, GPU, driver) written as a comment at
                                     the top of the trace; may be NULL */
    /* The sampling plan of each device (which readings, how often) comes from
     * its sensor profile: profile_path for every device, else the one for its
     * GPU and driver in profile_dir, else the default for its generation (said
     * in the notes). Backends without devices (sim, replay) have no plan: every
     * reading, fast ones every 1 ms, slow ones every 0.1 s. */
    const char *profile_path; /* may be NULL */
    const char *profile_dir;  /* may be NULL */
    /* Added later: a run file (truewatt run's, docs/runfile.md) the samples
     * are also recorded into, only each reading's updates; NULL = none. */
    struct tw_run *run;
} tw_sampler_config;

/* Achieved behaviour of one reading over the run. */
typedef struct tw_sampler_reading_stats {
    const char *name; /* column name in the trace */
    uint64_t polls;   /* valid values read */
    uint64_t updates; /* values that differed from the previous one */
    double polls_per_s;
    double updates_per_s;
} tw_sampler_reading_stats;

typedef struct tw_sampler tw_sampler;

TW_API tw_status tw_sampler_start(const tw_sampler_config *cfg, tw_sampler **out);
/* Stops the threads, flushes and closes the trace; keeps the stats. */
TW_API tw_status tw_sampler_stop(tw_sampler *s);
TW_API size_t tw_sampler_reading_count(const tw_sampler *s);
TW_API const tw_sampler_reading_stats *tw_sampler_reading(const tw_sampler *s, size_t i);
/* One sampled device: its plan and, after the stop, its threads' CPU time. */
typedef struct tw_sampler_device {
    int index;                /* the backend's device index */
    double fast_period_s;     /* the fast readings' period */
    double buffer_poll_s;     /* the sample buffer's drain period */
    double slow_period_s;     /* the slow readings' (energy counter's) period ... */
    double slow_max_period_s; /* ... stretched up to this while reads are costly */
    double cpu_s;             /* CPU time of its producer threads (CLOCK_THREAD_CPUTIME_ID) */
    const char *plan;         /* one line: where the plan came from, what it reads how often */
} tw_sampler_device;

TW_API size_t tw_sampler_device_count(const tw_sampler *s);
TW_API const tw_sampler_device *tw_sampler_device_get(const tw_sampler *s, size_t d);
/* CPU time of the writer thread (shared by the devices). */
TW_API double tw_sampler_writer_cpu_s(const tw_sampler *s);
/* CPU time all the sampler's threads used, and the wall time it ran. */
TW_API double tw_sampler_cpu_s(const tw_sampler *s);
TW_API double tw_sampler_wall_s(const tw_sampler *s);
TW_API const char *tw_sampler_notes(const tw_sampler *s);
TW_API void tw_sampler_free(tw_sampler *s);

/* ---------------------------------------------------------------- exporter */

/* A Prometheus exporter: samples every GPU with the sampler (plans from the
 * sensor profiles) and serves each GPU's corrected energy, power, sensor and
 * health over HTTP on /metrics (Prometheus' text format, OpenMetrics when
 * the Accept header asks for application/openmetrics-text). Metrics and
 * their meaning: docs/exporter.md. */
typedef struct tw_exporter_config {
    size_t size;                  /* sizeof(tw_exporter_config): fields added later read as 0 */
    const char *listen;           /* "ADDR:PORT" ("[::1]:9464" for IPv6; port 0: any free one);
                                     NULL = "127.0.0.1:9464" */
    const char *backend;          /* NULL = "nvml" */
    const tw_sensor_config *base; /* backend settings (library, ...); may be NULL */
    const char *profile_path;     /* one sensor profile for every GPU; may be NULL */
    const char *profile_dir;      /* else each GPU's from here; may be NULL (the defaults) */
    double window_s;              /* truewatt_gpu_power_watts' window; 0 = 1 s */
    bool dcgm_names;              /* also dcgm-exporter's DCGM_FI_DEV_POWER_USAGE and
                                     DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION */
    bool processes;               /* per-process energy: measured (reported by `truewatt run`), else estimated
                                     from NVML's utilisation samples */
    const char *hostname;         /* the host label; NULL = gethostname() */
    /* What the exporter has to say while it runs (a GPU lost), a line at a
     * time, from its threads; NULL = nothing said. */
    void (*log)(void *user, const char *line);
    void *log_user;
    /* with processes: the folder `truewatt run` reports measured processes in
     * (created, mode 1777, when absent); NULL: $TW_PROCESS_DIR, else TW_PROC_DIR_DEFAULT */
    const char *process_dir;
} tw_exporter_config;

typedef struct tw_exporter tw_exporter;

#define TW_EXPORTER_DEFAULT_LISTEN "127.0.0.1:9464"

/* Starts sampling and the HTTP server (its own thread); returns at once. */
TW_API tw_status tw_exporter_start(const tw_exporter_config *cfg, tw_exporter **out);
/* The address it listens on, e.g. "127.0.0.1:9464" (the port bound, when 0 was asked). */
TW_API const char *tw_exporter_address(const tw_exporter *e);
/* The page /metrics serves now (openmetrics: that format), NUL-terminated;
 * the caller frees *text with free(). */
TW_API tw_status tw_exporter_render(tw_exporter *e, bool openmetrics, char **text, size_t *len);
/* Serves until *stop turns nonzero (e.g. set by a SIGTERM handler); checks every 0.1 s. */
TW_API tw_status tw_exporter_serve(tw_exporter *e, const volatile int *stop);
/* Stops the server and the sampling and frees the exporter; NULL is a no-op. */
TW_API tw_status tw_exporter_stop(tw_exporter *e);

/* ---------------------------------------------------------------- process reports */

/* A process measured by `truewatt run` tells a running exporter its energy
 * per GPU: a file per run in a folder both know, "running" from the
 * program's start (the exporter then stops estimating that pid), "done" with
 * the energy the run's estimator gave it (docs/exporter.md#per-process-energy). */
#define TW_PROC_DIR_DEFAULT "/tmp/truewatt-processes" /* else $TW_PROCESS_DIR */

typedef struct tw_proc_report tw_proc_report;

typedef struct tw_proc_report_info {
    size_t size;              /* sizeof(tw_proc_report_info) */
    const char *dir;          /* NULL: $TW_PROCESS_DIR, else TW_PROC_DIR_DEFAULT */
    unsigned pid;             /* the measured process */
    const char *command;      /* its program (the label is its base name) */
    const char *job;          /* NULL: from SLURM_JOB_ID[.SLURM_STEP_ID], PBS_JOBID, LSB_JOBID, FLUX_JOB_ID */
    const char *const *uuids; /* the GPUs it is measured on */
    size_t n_uuids;
} tw_proc_report_info;

/* Writes the "running" report; *out is NULL (TW_OK) when the folder does not
 * exist: no exporter is there to tell. */
TW_API tw_status tw_proc_report_begin(const tw_proc_report_info *info, tw_proc_report **out);
/* Writes the "done" report (the GPUs' energies set since; a GPU without an
 * estimate has none) and frees r; NULL is a no-op. */
TW_API tw_status tw_proc_report_end(tw_proc_report *r);
/* Removes the report and frees r (the run stopped without measuring: the
 * exporter estimates the process again); NULL is a no-op. */
TW_API void tw_proc_report_drop(tw_proc_report *r);

/* ---------------------------------------------------------------- analysis */

/* Ways to turn power readings into an event's energy. */
typedef enum tw_method {
    TW_METHOD_CORRECTED = 0,         /* Burtscher §5: repeats dropped, P + C dP/dt integrated over t1..t2,
                                        exactly: the integral of P plus C (P(t2) - P(t1)) */
    TW_METHOD_RAW_T1_T2 = 1,         /* trapezoid of raw readings over the event */
    TW_METHOD_RAW_T1_T3 = 2,         /* ... until the reading reaches active idle */
    TW_METHOD_RAW_T1_T4 = 3,         /* ... until the reading reaches idle */
    TW_METHOD_FIXED_INTERVAL = 4,    /* readings of t1..t4 on equal intervals (Fig. 6) */
    TW_METHOD_MEAN_X_RUNTIME = 5,    /* mean reading over the power bump t1..t4 x runtime */
    TW_METHOD_PAPI = 6,              /* last reading at t2 x runtime */
    TW_METHOD_MTSM = 7,              /* mean of readings in t1..t2 x runtime (Arafa Eq. 2) */
    TW_METHOD_CORRECTED_SAMPLED = 8, /* trapezoid of the corrected samples (the paper's literal
                                        procedure: each step is smeared over +-1 sample) */
    TW_METHOD_COUNT
} tw_method;

TW_API const char *tw_method_name(tw_method m);
TW_API const char *tw_method_description(tw_method m);

typedef struct tw_analysis_options {
    double capacitance_s;       /* RC constant; NaN = 0.84 s (K20) unless fitted */
    bool fit_capacitance;       /* fit C from the longest event's step response */
    int slope_half_width;       /* 1 = the paper's symmetric formula; k > 1 = LS slope over 2k+1 */
    double dedup_gap_s;         /* drop equal consecutive readings at most this far apart (0.004) */
    double idle_w;              /* NaN = estimate from the trace */
    double active_idle_w;       /* NaN = estimate from the trace */
    const char *corrected_path; /* when set, the corrected series is written there (CSV) */
    const volatile int *cancel; /* when set and nonzero, the analysis stops with TW_EINTERRUPTED
                                   (e.g. a flag set by a SIGINT handler) */
} tw_analysis_options;

TW_API void tw_analysis_options_init(tw_analysis_options *o);

/* Energy of an event split by cause (from the corrected power). */
typedef struct tw_energy_split {
    double idle_j;        /* idle level x duration */
    double active_idle_j; /* (active idle - idle) x duration */
    double dynamic_j;     /* what the work added above active idle */
} tw_energy_split;

typedef struct tw_analysis tw_analysis;

/* Analyses reading `reading` of `src` (a power reading). With events, energies
 * are per event; without, activity regions are detected where corrected power
 * rises above active idle, and reported as events named region1, region2, ...
 * May rewind `src` (fitting, level estimation) when the backend allows. The
 * events are copied (sorted by start); their energies are kept in a
 * temporary file in $TMPDIR (else /tmp), read back by the accessors below
 * (not for two threads at once). tw_analyze_stream: the same analysis with
 * the events replayed from a feed. */
TW_API tw_status tw_analyze(tw_sensor *src, size_t reading, const tw_events *events, const tw_analysis_options *opt,
                            tw_analysis **out);
TW_API double tw_analysis_capacitance_s(const tw_analysis *a);
TW_API bool tw_analysis_capacitance_fitted(const tw_analysis *a);
/* RMS residual of the capacitance fit in watts (NaN when not fitted). */
TW_API double tw_analysis_fit_rms_w(const tw_analysis *a);
TW_API double tw_analysis_idle_w(const tw_analysis *a);
TW_API double tw_analysis_active_idle_w(const tw_analysis *a);
TW_API uint64_t tw_analysis_samples_read(const tw_analysis *a);
TW_API uint64_t tw_analysis_samples_kept(const tw_analysis *a);
TW_API double tw_analysis_start_s(const tw_analysis *a);
TW_API double tw_analysis_end_s(const tw_analysis *a);
/* Whole-trace energy from corrected power, and its split. */
TW_API double tw_analysis_total_energy_j(const tw_analysis *a);
TW_API tw_energy_split tw_analysis_total_split(const tw_analysis *a);
TW_API size_t tw_analysis_event_count(const tw_analysis *a);
TW_API const tw_event *tw_analysis_event(const tw_analysis *a, size_t i);
/* NaN when the method cannot say (e.g. no reading inside the event). */
TW_API double tw_analysis_energy_j(const tw_analysis *a, size_t event, tw_method m);
TW_API tw_energy_split tw_analysis_split(const tw_analysis *a, size_t event);
TW_API void tw_analysis_free(tw_analysis *a);

/* Events replayed one at a time, by start, as often as an analysis's passes
 * need them: from a set in memory, or from a run file without ever holding
 * all of them (a run of tens of millions of launches). */
typedef struct tw_event_feed tw_event_feed;

/* The set's events in its order (tw_events_sort it first: an analysis
 * refuses events out of start order with TW_EORDER); ev must outlive the feed. */
TW_API tw_status tw_event_feed_of_events(const tw_events *ev, tw_event_feed **out);
/* The run file's kernels, copies, memsets and NVTX ranges, in the order of
 * tw_run_load_events, read from the file on each replay; free the feed
 * before tw_run_close. */
TW_API tw_status tw_event_feed_of_run(tw_run *r, tw_event_feed **out);
TW_API void tw_event_feed_free(tw_event_feed *f);

/* One event's energies, as tw_analysis_energy_j and tw_analysis_split give them. */
typedef struct tw_event_energy {
    size_t size;                      /* sizeof(tw_event_energy): the fields below that this version fills */
    double energy_j[TW_METHOD_COUNT]; /* by method; NaN when it cannot say */
    tw_energy_split split;
} tw_event_energy;

/* Called once per event when its energies are final: `index` is its place
 * in the feed's order (0, 1, ...); events come in the order they finish
 * (a long event after the short ones it spans), not by index. e and r are
 * valid during the call. A status other than TW_OK stops the analysis with it. */
typedef tw_status (*tw_analysis_event_fn)(void *ctx, size_t index, const tw_event *e, const tw_event_energy *r);

/* tw_analyze as a stream: the events come from `events` (NULL: activity
 * regions are detected, as tw_analyze does), which must outlive the
 * analysis, and each event's energies go to fn as the trace is read; the
 * analysis returned has the trace's figures (levels, capacitance, totals,
 * samples, tw_analysis_event_count) but no per-event ones (tw_analysis_event
 * is NULL). Memory grows with the events running at one time, not with
 * their number. An event reaching outside the trace's data gets NaN
 * energies. With fn NULL each event's energies are kept instead (a
 * temporary file: tw_analysis_energy_j, tw_analysis_report) and such an
 * event is refused (TW_EINVAL), as tw_analyze does. */
TW_API tw_status tw_analyze_stream(tw_sensor *src, size_t reading, const tw_event_feed *events,
                                   const tw_analysis_options *opt, tw_analysis_event_fn fn, void *ctx,
                                   tw_analysis **out);

/* ---------------------------------------------------------------- sessions and regions */

/* A session samples GPUs in the background from inside the measured program
 * (no trace file needed) and measures named regions of the program's time:
 *
 *     tw_session_config c;
 *     tw_session_config_init(&c);
 *     tw_session *s;
 *     if (tw_session_open(&c, &s) != TW_OK) { fprintf(stderr, "%s\n", tw_last_error()); ... }
 *     tw_region_begin(s, "step");
 *     work();
 *     tw_region *r;
 *     tw_region_end(s, "step", &r);
 *     tw_region_device d;
 *     d.size = sizeof d;
 *     tw_region_device_get(r, 0, &d);   (waits for the readings past the end)
 *     tw_region_free(r);
 *     tw_session_close(s);
 *
 * Structs that may grow carry their size: set `size` (the *_init functions
 * do) and the library fills or reads only what that size holds, so a caller
 * built against an older header keeps working. Full guide: docs/api.md. */

typedef struct tw_session_config {
    size_t size;             /* sizeof(tw_session_config): set by tw_session_config_init */
    const char *backend;     /* NULL: "nvml" when available, else "sim" */
    const char *const *gpus; /* NVML index ("0"), "cuda:N" or a UUID; NULL/0 = all */
    size_t ngpus;
    const char *run_path;     /* a run file (`truewatt report FILE`) to record the samples, kernels and regions into */
    const char *profile_path; /* a sensor profile for every GPU; NULL: the GPU's among tw_profile_dir()'s (its sampling
                                 plan), else the built-in models */
    /* trace the program's kernels in-process (CUPTI's activity API, as the
     * injection library): a region then holds each kernel name's energy
     * (tw_region_kernel_get). TW_EUNAVAIL when CUPTI cannot be loaded,
     * TW_EUNSUPPORTED in a library built without CUDA's headers. */
    bool trace_kernels;
    /* Added later. How often the energy counter is read (it gives a region's
     * total; the sample buffer the shape between its reads): 0 = every 4.875
     * of its update periods (0.4875 s on an H100, ~1 % of a core at ~4 ms of
     * CPU a read), where regions of a few hundred ms agree with the counter to
     * ~0.5 % (rms, up to ~2.5 %); 0.0975 (0.975 periods: a read after nearly
     * every update) makes that ~0.1 % (up to ~0.5 %) for 4-12 % of a core. A
     * period that is a whole number of the counter's periods reads it at one
     * phase and the session cannot place its updates: avoid 0.1, 0.5, 1. */
    double counter_period_s;
} tw_session_config;

/* Sets size and the defaults (every field NULL / 0 / false). */
TW_API void tw_session_config_init(tw_session_config *c);

typedef struct tw_session tw_session;

/* Opens the GPUs and starts sampling them on background threads. */
TW_API tw_status tw_session_open(const tw_session_config *c, tw_session **out);
/* Stops sampling; regions not yet complete are completed with what was read
 * (their energies NaN where the readings do not reach their end). NULL is a no-op. */
TW_API void tw_session_close(tw_session *s);
TW_API size_t tw_session_device_count(const tw_session *s);
TW_API tw_status tw_session_device(const tw_session *s, size_t d, tw_device_info *out);
/* The backend in use ("nvml", "sim"). */
TW_API const char *tw_session_backend(const tw_session *s);
/* What the open said about the GPUs, one line each ("" when nothing): e.g. that a MIG instance
 * named (gpus[] or CUDA_VISIBLE_DEVICES "MIG-...") is sampled through its GPU, whose energy
 * includes its other instances'. */
TW_API const char *tw_session_notes(const tw_session *s);
/* The session's timeline origin on CLOCK_MONOTONIC (ns): a region's start and
 * end (tw_region_start_s) are seconds since it. */
TW_API uint64_t tw_session_t0_mono_ns(const tw_session *s);

/* A measured span of the program's time. Regions nest; any thread may begin
 * and end them; an end closes the innermost open region of that name begun by
 * the calling thread, else by any thread. A begin and an end cost a few
 * hundred ns (bench/bench_region prints it). */
typedef struct tw_region tw_region;

TW_API tw_status tw_region_begin(tw_session *s, const char *name);
/* Ends the region; *out (when not NULL) gets its result, whose energy may
 * still wait for the readings past its end (tw_region_wait; every accessor
 * below waits implicitly). Free it with tw_region_free. An end without a
 * matching begin is TW_EINVAL. */
TW_API tw_status tw_region_end(tw_session *s, const char *name, tw_region **out);
/* Blocks until the region's energies are complete or timeout_s passed
 * (TW_EUNAVAIL then; timeout_s < 0: no limit). */
TW_API tw_status tw_region_wait(tw_region *r, double timeout_s);
TW_API void tw_region_free(tw_region *r);

/* One GPU's share of a region. */
typedef struct tw_region_device {
    size_t size;             /* sizeof(tw_region_device), set by the caller */
    char uuid[96];           /* the GPU */
    double time_s;           /* the region's length */
    double energy_j;         /* the GPU's energy over the region (NaN: readings do not reach) */
    double energy_sd_j;      /* its standard uncertainty */
    double baseline_j;       /* the part the GPU's baseline (active idle) power would use anyway */
    double above_baseline_j; /* energy_j - baseline_j: what the work added */
    const char *reading;     /* the reading whose model gave energy_j ("power_buffer_w (rc ...)") */
    /* Added later. trace_kernels: the sum of the kernel names' energies
     * (tw_region_kernel) on this GPU, and that plus the estimator's baseline
     * over the region, both scaled to energy_j (which the second equals);
     * NaN without trace_kernels. */
    double kernels_j;
    double kernels_model_j;
} tw_region_device;

TW_API size_t tw_region_device_count(const tw_region *r);
TW_API tw_status tw_region_device_get(tw_region *r, size_t d, tw_region_device *out);
TW_API const char *tw_region_name(const tw_region *r);
TW_API double tw_region_time_s(const tw_region *r);
/* Begin and end on the session's timeline (seconds since the session opened). */
TW_API double tw_region_start_s(const tw_region *r);
TW_API double tw_region_end_s(const tw_region *r);

/* One kernel name inside a region on one GPU (a session with trace_kernels):
 * its launches' part inside the region, and the energy they drew above the
 * GPU's baseline, by the estimator of `truewatt run` over the session's
 * readings (scaled to the energy counter where the region's total is the
 * counter's). Kernels still running at the region's end are counted once
 * they end; end a region after the GPU's work (a synchronize) to have them. */
typedef struct tw_region_kernel {
    size_t size;        /* sizeof(tw_region_kernel), set by the caller */
    const char *name;   /* demangled; valid for the life of the process */
    size_t device;      /* the session's device (tw_session_device) */
    uint64_t launches;  /* launches inside the region (in part or whole) */
    double time_s;      /* their summed time inside the region */
    double energy_j;    /* above the baseline (NaN: grouped with other names, or unobserved) */
    double energy_sd_j; /* its standard uncertainty */
    /* "ok", "below_resolution" (energy_j + 2 sd bounds it), "grouped", "unobserved", "at_power_bound"
     * (held at the bound on each name's power: energy_j is the most the model can give it) */
    const char *status;
    /* grouped: the group of names the readings cannot tell apart (always
     * together, in fixed proportion: "group 1: NAME (+N)"), whose energy is in
     * tw_region_device.kernels_j; NULL otherwise. Valid for the process's life. */
    const char *group;
} tw_region_kernel;

/* The region's kernel names over all its GPUs, each GPU's by energy,
 * largest first (waits like tw_region_device_get; 0 without trace_kernels). */
TW_API size_t tw_region_kernel_count(tw_region *r);
TW_API tw_status tw_region_kernel_get(tw_region *r, size_t i, tw_region_kernel *out);

/* ---------------------------------------------------------------- measure */

/* Measures a callable however short: it is run back to back in phase-shifted
 * repetitions (the method of `truewatt measure-kernel`) until the energy per
 * call is known to `precision` or the time budget is spent. */
typedef void (*tw_measure_fn)(void *arg);

typedef struct tw_measure_options {
    size_t size;      /* sizeof(tw_measure_options): set by tw_measure_options_init */
    double precision; /* relative standard uncertainty of energy_j asked for; default 0.02 */
    double budget_s;  /* time budget; default 30 */
    size_t device;    /* the session's device to measure on; default 0 */
    /* Added later: when set and nonzero (e.g. a flag a SIGINT handler sets, or
     * a Python callable's KeyboardInterrupt), tw_measure stops within one call
     * of fn (and any sleep between blocks) with TW_EINTERRUPTED; NULL = never. */
    const volatile int *cancel;
    /* Added later: the length of a block of back-to-back calls, s (0 = the
     * default, 1 s); shorter blocks weigh the GPU's first ~0.2 s of work
     * (more energy per call than its steady state) and the power it draws
     * after a block more, longer ones take longer per round (8 blocks). */
    double block_s;
} tw_measure_options;

TW_API void tw_measure_options_init(tw_measure_options *o);

typedef struct tw_measure_result {
    size_t size;                   /* sizeof(tw_measure_result), set by the caller */
    double time_s;                 /* per call */
    double energy_j;               /* per call */
    double energy_sd_j;            /* its standard uncertainty */
    double power_above_baseline_w; /* the calls' power above the GPU's baseline */
    size_t calls;                  /* calls made in all */
} tw_measure_result;

TW_API tw_status tw_measure(tw_session *s, tw_measure_fn fn, void *arg, const tw_measure_options *o,
                            tw_measure_result *out);

/* ---------------------------------------------------------------- GPU clocks (NVML)
 *
 * The supported (memory, graphics) clock pairs, the current and maximum
 * clocks, the clock event reasons, and locking / unlocking the graphics and
 * memory clocks. Reading is harmless. Locking changes the card's settings
 * for every user of the machine until reset or reboot and needs root
 * (NVML_ERROR_NO_PERMISSION otherwise): only `truewatt dvfs lock
 * --allow-clock-changes` calls it.
 *
 *     tw_clocks *c;
 *     if (tw_clocks_open(NULL, "0", &c) != TW_OK) ... tw_last_error() says why
 *     tw_clock_table t;                       // every supported pair
 *     if (tw_clocks_supported(c, &t) == TW_OK) {
 *         for (size_t m = 0; m < t.nmem; m++)
 *             for (size_t g = 0; g < t.mem[m].n; g++)
 *                 use(t.mem[m].mem_mhz, t.mem[m].gfx_mhz[g]);
 *         tw_clock_table_free(&t);
 *     }
 *     tw_clock_now now = {.size = sizeof now}; // current SM / memory clocks and reasons
 *     tw_clocks_current(c, &now);
 *     tw_clocks_close(c);
 */

/* The graphics clocks NVML supports with one memory clock. */
typedef struct tw_clock_mem {
    unsigned mem_mhz;
    size_t n;          /* graphics clocks */
    unsigned *gfx_mhz; /* highest first, as NVML lists them */
} tw_clock_mem;

/* Every supported (memory, graphics) pair: nmem memory clocks, highest first. */
typedef struct tw_clock_table {
    size_t nmem;
    tw_clock_mem *mem;
} tw_clock_table;

TW_API void tw_clock_table_free(tw_clock_table *t);

/* A list of clocks in a few words: "110 clocks, 1980..345 MHz in 15 MHz steps"
 * when evenly spaced, else "3 clocks: 1980, 1500, 345 MHz". Returns what
 * snprintf returns. */
TW_API int tw_clock_list_format(const unsigned *list, size_t n, char *buf, size_t cap);

/* Checks a request against the table: graphics clocks core_min..core_max
 * (equal for one clock; 0, 0: no graphics lock) with memory clock mem_mhz (0:
 * no memory lock; the graphics clocks are then checked against cur_mem_mhz's
 * list, or against every list when cur_mem_mhz is not in the table).
 * TW_EINVAL with a message that names the nearest supported clocks. */
TW_API tw_status tw_clock_check_request(const tw_clock_table *t, unsigned core_min, unsigned core_max, unsigned mem_mhz,
                                        unsigned cur_mem_mhz);

/* The reasons that hold the clocks below the requested ones for power or
 * heat (SW power cap, HW slowdown, SW / HW thermal, HW power brake): any of
 * them seen while clocks were locked means the locked point did not hold. */
#define TW_CLOCK_REASONS_LIMITING 0xECULL

/* The name of one reason bit ("gpu_idle", "sw_power_cap", ...), or NULL. */
TW_API const char *tw_clock_reason_name(unsigned long long bit);
/* "sw_power_cap,sw_thermal" ("none" for 0; an unknown bit as 0x...). */
TW_API int tw_clock_reasons_format(unsigned long long bits, char *buf, size_t cap);

typedef struct tw_clocks tw_clocks;

/* Opens a device through NVML: `library` as for the nvml sensor (NULL: the
 * default search, $TW_NVML_LIBRARY first), `device` an index or UUID (NULL:
 * "0"). TW_EUNAVAIL without NVML, TW_ENOTFOUND without that device. */
TW_API tw_status tw_clocks_open(const char *library, const char *device, tw_clocks **out);
TW_API void tw_clocks_close(tw_clocks *c);

TW_API unsigned tw_clocks_index(const tw_clocks *c);
TW_API const char *tw_clocks_uuid(const tw_clocks *c);
TW_API const char *tw_clocks_name(const tw_clocks *c);

/* Every supported pair (free with tw_clock_table_free). TW_EUNSUPPORTED when
 * the device or driver does not list them. */
TW_API tw_status tw_clocks_supported(tw_clocks *c, tw_clock_table *t);

/* The clocks now. A part that cannot be read is marked absent; the call fails
 * only when none can. */
typedef struct tw_clock_now {
    size_t size;                /* sizeof(tw_clock_now), set by the caller */
    unsigned sm_mhz, mem_mhz;   /* nvmlDeviceGetClockInfo(SM / MEM) */
    unsigned long long reasons; /* nvmlDeviceGetCurrentClocksEventReasons bits */
    bool have_sm, have_mem, have_reasons;
} tw_clock_now;
TW_API tw_status tw_clocks_current(tw_clocks *c, tw_clock_now *now);

/* The maximum SM and memory clocks (nvmlDeviceGetMaxClockInfo). */
TW_API tw_status tw_clocks_max(tw_clocks *c, unsigned *sm_mhz, unsigned *mem_mhz);

/* Whether this driver has the functions to lock (and reset) the graphics /
 * memory clocks; when not, the lock calls fail with TW_EUNSUPPORTED and
 * "... is not supported by this driver". */
TW_API bool tw_clocks_can_lock_gpu(const tw_clocks *c);
TW_API bool tw_clocks_can_lock_mem(const tw_clocks *c);

/* Locking (root only). Every failure is in tw_last_error with NVML's
 * message; NVML_ERROR_NO_PERMISSION says that it needs root. */
TW_API tw_status tw_clocks_lock_gpu(tw_clocks *c, unsigned min_mhz, unsigned max_mhz);
TW_API tw_status tw_clocks_reset_gpu(tw_clocks *c);
TW_API tw_status tw_clocks_lock_mem(tw_clocks *c, unsigned min_mhz, unsigned max_mhz);
TW_API tw_status tw_clocks_reset_mem(tw_clocks *c);

/* ---------------------------------------------------------------- DVFS model reports
 *
 * Wang & Chu's GPU DVFS performance model (IEEE TPDS 2020) with the energy
 * of clock pairs: what `truewatt dvfs eval|fit|energy|predict` print, for a
 * program of the user's own. Each call loads its input files, computes and
 * writes its report, text or JSON (o->json), to `out`; on failure nothing
 * more is written there and tw_last_error() says what failed (a file's
 * name and line for bad rows). */

typedef struct tw_dvfs_options {
    size_t size;              /* sizeof(tw_dvfs_options), set by tw_dvfs_options_init */
    const char *data;         /* measured rows: DATA.csv (eval, fit), PERF.csv (energy), ROWS.csv (predict) */
    const char *power;        /* energy: the rows' power, POWER.csv */
    const char *params;       /* the starting or published parameter file (data/dvfs/NAME.json) */
    const char *gpu;          /* the parameter set as the user named it (predict.csv's header line) */
    bool paper_compat;        /* eval: the authors' kernel-name special cases */
    bool all_kernels;         /* every row, not only the authors' 20 kernels at clocks >= 500 MHz */
    bool json;                /* JSON instead of text */
    size_t folds;             /* fit: cross-validation folds (default 5, at least 2) */
    const char *out;          /* fit: the fitted parameter file (NULL: none); predict: the folder of predict.csv */
    const char *objective;    /* energy: "energy" (default) or "edp" */
    const char *power_model;  /* energy: "scaled" (default) or "counters" */
    const char *device;       /* predict: the GPU whose supported clocks to sweep (NULL: none, the rows' clocks) */
    const char *ncu;          /* rows: Nsight Compute's CSV of the kernels (o->data: their measured times) */
    double core_mhz, mem_mhz; /* rows: the clocks the kernels ran at; params: mem_mhz > 0 overrides NVML's */
    int gpu_index;            /* params: the CUDA device to measure */
    int repeats;              /* params: repeats of each microbenchmark (default 5) */
    /* progress notes (fit's folds, predict's file written), one line each
     * without its newline; NULL: none */
    void (*note)(void *ctx, const char *text);
    void *note_ctx;
} tw_dvfs_options;

TW_API void tw_dvfs_options_init(tw_dvfs_options *o);
/* The model with a published parameter set against measured rows: MAPE over
 * all points, per regime, per kernel and the TW_DVFS_WORST worst points. */
#define TW_DVFS_WORST 5
TW_API tw_status tw_dvfs_eval_report(const tw_dvfs_options *o, FILE *out);
/* Least-squares hardware parameters from measured rows, cross-validated by
 * clock pair and by kernel (with fewer than TW_DVFS_CV_MIN_PAIRS clock
 * pairs, each pair is a fold); o->out receives the fitted set. */
#define TW_DVFS_CV_MIN_PAIRS 10
TW_API tw_status tw_dvfs_fit_report(const tw_dvfs_options *o, FILE *out);
/* Energy-optimal clock pairs from predicted time and a fitted power model,
 * each kernel's power model fitted without it. */
TW_API tw_status tw_dvfs_energy_report(const tw_dvfs_options *o, FILE *out);
/* The rows' predicted times at their measured clocks and, with o->device,
 * over that GPU's supported clock pairs; every prediction goes to
 * o->out/predict.csv. */
TW_API tw_status tw_dvfs_predict_report(const tw_dvfs_options *o, FILE *out);
/* Measured kernels as the model's rows (what eval, fit and predict read):
 * o->data's times (apps/dvfs) joined with o->ncu's counters, at o->core_mhz
 * and o->mem_mhz, written to o->out or, when NULL, to `out`. */
TW_API tw_status tw_dvfs_rows_report(const tw_dvfs_options *o, FILE *out);
/* The metrics the rows need, as ncu's --metrics argument (comma-separated,
 * cut at cap). */
TW_API void tw_dvfs_rows_metrics_arg(char *buf, size_t cap);
/* The local GPU's hardware parameters by microbenchmarks, at the clocks it
 * runs at now (nothing is set): the table (text) or the raw measurements
 * (JSON) to `out`, o->out/params.json (what eval, fit and predict read) and
 * o->out/ubench.json. Needs a GPU with its driver and NVRTC. */
TW_API tw_status tw_dvfs_params_report(const tw_dvfs_options *o, FILE *out);

/* ---------------------------------------------------------------- energy breakdown by memory level
 *
 * Where an application's energy goes (Delestrac et al. 2024, Sec. VII):
 * what `truewatt breakdown` prints. The caller runs the application twice,
 * once measured (`truewatt run --json -o RUN.sqlite`, the launches exported
 * as events) and once under Nsight Compute counting the sectors each memory
 * level served (ncu --csv with tw_breakdown_metrics_arg's metrics, the
 * launches tw_breakdown_launches names); the memory-energy profile of `mem
 * calibrate` prices the accesses. */

typedef struct tw_breakdown_job tw_breakdown_job;

typedef struct tw_breakdown_options {
    size_t size;             /* sizeof(tw_breakdown_options), set by tw_breakdown_options_init */
    const char *profile;     /* mem-profile.json of `truewatt mem calibrate` (required) */
    const char *range;       /* the NVTX range to break down (NULL: every kernel of the run) */
    const char *count_range; /* the NVTX range whose launches ncu counts (NULL: the span's) */
    const char *device;      /* the run report's GPU index (NULL: its first) */
    uint64_t sample;         /* ncu counts the first `sample` launches only (0: all) */
    const char *label;       /* the bar's name in the files */
    const char *provenance;  /* the files' first line (the command that made them) */
    const char *out;         /* the folder of breakdown.csv, .json, .dat, .gp (and .png with gnuplot) */
    bool json;               /* the report on the stream as JSON instead of text */
    /* notes and warnings (a profile of another GPU, missing counts, the plot), one line each; NULL: none */
    void (*note)(void *ctx, const char *text);
    void *note_ctx;
} tw_breakdown_options;

TW_API void tw_breakdown_options_init(tw_breakdown_options *o);
/* The metrics ncu must count, as its --metrics argument (cut at cap). */
TW_API void tw_breakdown_metrics_arg(char *buf, size_t cap);
/* Loads the memory-energy profile (o is copied; its strings must outlive the job). */
TW_API tw_status tw_breakdown_open(const tw_breakdown_options *o, tw_breakdown_job **out);
/* Reads the measured run: its JSON report and its events (the span's energy,
 * time and kernels). */
TW_API tw_status tw_breakdown_read_run(tw_breakdown_job *b, const char *run_json, const char *events);
/* The launches ncu must count: *skip before, *count from there (by index, in start order). */
TW_API void tw_breakdown_launches(const tw_breakdown_job *b, unsigned long *skip, unsigned long *count);
/* Sums ncu's CSV of those launches, scales them to the span, and writes the
 * breakdown to `out` (text or JSON) and its files into o->out. */
TW_API tw_status tw_breakdown_report(tw_breakdown_job *b, const char *ncu_csv, FILE *out);
TW_API void tw_breakdown_free(tw_breakdown_job *b);

/* ---------------------------------------------------------------- sensor profiles
 *
 * A sensor profile (JSON, written by `truewatt sensor identify` and
 * `truewatt validate`) says how each reading of a GPU's power sensor answers:
 * its response, update period, window, delay and coverage, and which reading
 * is best for energy. */

/* The profile at `path` (a bare name that is no file here, with or without .json: the one of
 * that name in tw_profile_dir, e.g. an installed one) as `truewatt sensor show` prints it: the GPU and
 * driver, the idle, active idle and step levels, a table of the readings'
 * models and the best reading for energy; or, with json, re-emitted as JSON.
 * A malformed file fails with its name, line and column in tw_last_error. */
TW_API tw_status tw_profile_show(const char *path, bool json, FILE *out);

/* ---------------------------------------------------------------- the validation report
 *
 * What `truewatt validate` writes from a recorded validation run (a trace
 * and its events: the identification kernels, then linearity, back-to-back,
 * short kernels and 10 s loads): the sensor identified (profile.json), every
 * experiment measured by every method (validation.csv, validation.md, plots
 * with gnuplot) and the targets' PASS/FAIL on the stream. */

typedef struct tw_validation_options {
    size_t size;              /* sizeof(tw_validation_options), set by tw_validation_options_init */
    const char *out_dir;      /* an existing folder for the files (default ".") */
    const char *gpu, *driver; /* the recording's GPU and driver (NULL: "unknown") */
    const char *backend;      /* NULL: the trace sensor's */
    double true_idle_w;       /* the simulator's true levels, beside the identified ones (NaN: not known) */
    double true_active_idle_w;
    double true_step_w;
    const volatile int *cancel;                /* nonzero: stop with TW_EINTERRUPTED (may be NULL) */
    void (*note)(void *ctx, const char *text); /* progress, one line each; NULL: none */
    void *note_ctx;
} tw_validation_options;

TW_API void tw_validation_options_init(tw_validation_options *o);
/* The trace is read from its start (it is rewound as needed). */
TW_API tw_status tw_validation_report(tw_sensor *trace, const tw_events *events, const tw_validation_options *o,
                                      FILE *out);

/* ---------------------------------------------------------------- the analysis report
 *
 * What `truewatt analyze` prints for one analysis (tw_analyze): the trace,
 * the reading, the sensor model, each event's energy by every method and its
 * split, and, when a sensor profile applies, each event's energy by the
 * estimator on the profile's best reading (the energy counter as the
 * reference total when the trace has it). */

typedef struct tw_analysis_profile tw_analysis_profile;

/* The profile that applies to `trace`: the file `profile` (a bad one fails
 * here, before any work), else the one for the GPU and driver the trace's
 * header names (none found: no section; one that cannot be read: a warning
 * through note). */
TW_API tw_status tw_analysis_profile_open(const char *profile, const char *trace,
                                          void (*note)(void *ctx, const char *text), void *note_ctx,
                                          tw_analysis_profile **out);
TW_API bool tw_analysis_profile_applies(const tw_analysis_profile *p);
/* The estimator's energies of the analysis's events from `src` (the trace the
 * analysis read), the events replayed from the analysis (tw_analyze's, or
 * tw_analyze_stream's feed without fn): it borrows their names, so free p
 * before a and its feed. A reading the profile has but the trace lacks, or
 * an estimate that cannot be made, becomes the section's note, not an
 * error; TW_ENOMEM and TW_EINTERRUPTED (cancel nonzero) fail. */
TW_API tw_status tw_analysis_profile_estimate(tw_analysis_profile *p, tw_sensor *src, const tw_analysis *a,
                                              const volatile int *cancel);
TW_API void tw_analysis_profile_free(tw_analysis_profile *p);

typedef struct tw_analysis_report_options {
    size_t size;                /* sizeof(tw_analysis_report_options), set by tw_analysis_report_options_init */
    const char *trace;          /* the trace's name, as the report shows it */
    const char *reading;        /* the reading analysed */
    const char *corrected_path; /* where the corrected series went (NULL: not written) */
    double dedup_gap_s;         /* as in tw_analysis_options */
    bool capacitance_given, idle_given, active_idle_given; /* given, not fitted or estimated */
    bool events_detected;                                  /* no events given: the analysis detected activity regions */
    bool json;                                             /* JSON instead of text */
    void (*note)(void *ctx, const char *text);             /* warnings (names not UTF-8); NULL: none */
    void *note_ctx;
} tw_analysis_report_options;

TW_API void tw_analysis_report_options_init(tw_analysis_report_options *o);
/* Writes the report of `a` (tw_analyze's, or tw_analyze_stream's without fn:
 * its events replayed, their energies read back, never all held) to `out`;
 * p (may be NULL) adds its profile section. */
TW_API tw_status tw_analysis_report(const tw_analysis *a, const tw_analysis_profile *p,
                                    const tw_analysis_report_options *o, FILE *out);

/* ---------------------------------------------------------------- experiments
 *
 * The measurements truewatt runs itself (`truewatt sensor identify`,
 * `validate`, `measure-kernel`, `isa`): a schedule of generated kernels on
 * one GPU, its readings sampled into a trace, or on the simulator (exact
 * truth, what the tests use). Each call below runs its experiment, analyses
 * it and writes its report (text or JSON) to `out` and its files where its
 * options say; on failure tw_last_error() says what failed, and on a GPU the
 * trace so far is kept. Nothing on the card is changed. */

typedef struct tw_experiment_options {
    size_t size;                /* sizeof(tw_experiment_options), set by tw_experiment_options_init */
    const char *backend;        /* "nvml" (a GPU, the default) or "sim" */
    tw_sim_profile sim;         /* sim: the sensor profile simulated (default TW_SIM_H100) */
    uint64_t seed;              /* sim: noise and jitter (default 1) */
    int device;                 /* nvml: the GPU's index (CUDA and NVML; default 0) */
    const char *provenance;     /* a line heading the files written (the command, the date); NULL: none */
    const volatile int *cancel; /* nonzero: stop with TW_EINTERRUPTED, the trace so far kept (may be NULL) */
    /* progress (where the trace goes, how long, every ~10 s of the schedule)
     * and notes, one line each without its newline; NULL: none */
    void (*note)(void *ctx, const char *text);
    void *note_ctx;
} tw_experiment_options;

TW_API void tw_experiment_options_init(tw_experiment_options *o);

/* The sensor's identification: every reading's update period, window, delay,
 * coverage and response (rc, boxcar, window, counter) and the idle, active
 * idle and kernel levels (about a minute), written as a sensor profile and
 * shown as tw_profile_show shows it. */
typedef struct tw_identify_run_options {
    size_t size;           /* sizeof(tw_identify_run_options), set by tw_identify_run_options_init */
    const char *out;       /* the profile (NULL: GPU_DRIVER.json in the current folder) */
    const char *trace_out; /* the recording (its events beside it as .events.csv); default "truewatt-identify.csv" */
    const char *trace;     /* with events: fit this recorded trace instead of running the experiment */
    const char *events;
    double until_s;      /* fit the trace up to this time only (0: all of it) */
    const char *command; /* the command recorded in the profile ("truewatt sensor identify ...") */
    bool json;           /* the profile as JSON on out instead of text */
} tw_identify_run_options;

TW_API void tw_identify_run_options_init(tw_identify_run_options *o);
TW_API tw_status tw_identify_run(const tw_experiment_options *e, const tw_identify_run_options *o, FILE *out);

/* The validation (identification, then linearity, back-to-back, short
 * kernels and 10 s loads, about five minutes) recorded into out_dir
 * (trace.csv, events.csv) and reported by tw_validation_report; from (not
 * NULL): the recording in that folder instead of a new one. */
TW_API tw_status tw_validation_run(const tw_experiment_options *e, const char *out_dir, const char *from, FILE *out);

/* The energy per launch of truewatt's FMA spin kernel run for duration_s,
 * however short, by phase-shifted repetition: `blocks` blocks of back-to-back
 * launches (each about block_s), the gap after block b being gap_s + (b mod
 * phases) x period / phases, the period being the update period of the
 * reading the sensor profile ranks best; and, with reference, the same
 * launches back to back for 4 s. Without a profile for the GPU and driver,
 * the identification runs first. */
typedef struct tw_measure_kernel_options {
    size_t size;           /* sizeof(tw_measure_kernel_options), set by tw_measure_kernel_options_init */
    double duration_s;     /* one launch (default 0.001) */
    double block_s;        /* a block (default 0.2; at least duration_s) */
    double gap_s;          /* the shortest gap between blocks (default 0.3) */
    uint64_t blocks;       /* default 8, at least 2 */
    uint64_t phases;       /* default 4 */
    bool reference;        /* the steady-state reference (default true) */
    const char *profile;   /* the sensor profile (NULL: looked up for the GPU and driver, else identified) */
    const char *trace_out; /* the trace (events beside it, .events.csv); default "truewatt-measure.csv" */
    bool json;
} tw_measure_kernel_options;

TW_API void tw_measure_kernel_options_init(tw_measure_kernel_options *o);
TW_API tw_status tw_measure_kernel(const tw_experiment_options *e, const tw_measure_kernel_options *o, FILE *out);

/* Energy per PTX instruction from generated microbenchmarks (Arafa et al.
 * 2020's Table I and more): the paper's method (one thread, a dependent
 * chain, JIT levels 0 and 4, beside their Volta column) or throughput mode
 * (every SM busy: pJ per thread operation). Writes isa.csv, isa.json,
 * launches.csv, isa.dat/.gp (.png with gnuplot), trace.csv and events.csv
 * into out_dir. */
typedef struct tw_isa_options {
    size_t size;             /* sizeof(tw_isa_options), set by tw_isa_options_init */
    bool throughput;         /* throughput mode instead of the paper's */
    bool seed_operands;      /* throughput: every chain from the seed (none at a fixed point) */
    const char *const *only; /* only these instructions (tw_isa_instruction_known); NULL/0: all */
    size_t nonly;
    const char *profile;     /* the sensor profile (NULL: looked up, else identified first) */
    const char *out_dir;     /* default "truewatt-isa" */
    const char *paper_table; /* the paper's Table I (data/arafa2020_table1.csv); NULL: no paper column */
    bool json;               /* the rows as JSON on out instead of the table */
} tw_isa_options;

TW_API void tw_isa_options_init(tw_isa_options *o);
/* Whether `name` is an instruction of the table (add.s32, fma.rn.f32, ...). */
TW_API bool tw_isa_instruction_known(const char *name);
TW_API tw_status tw_isa_experiment(const tw_experiment_options *e, const tw_isa_options *o, FILE *out);

/* ---------------------------------------------------------------- energy of data movement (mem)
 *
 * What `truewatt mem calibrate|sizes|check|counters` do (Delestrac et al.
 * 2024, docs/mem.md): the energy per access of shared memory, L1, L2 and
 * DRAM by pointer chases, the levels' sizes from access latency, and the
 * counter checks of the chases (Nsight Compute runs tw_mem_counters in a
 * process of its own, with tw_mem_check_metrics_arg's metrics; its CSV and
 * the manifest are then checked by tw_mem_check_report, or by
 * tw_mem_calibrate, which leaves the configurations that fail out of the
 * lower bounds). Experiments as in tw_experiment_options. */

typedef struct tw_mem_options {
    size_t size;             /* sizeof(tw_mem_options), set by tw_mem_options_init */
    const char *levels;      /* "shared,l1,l2,dram" or some of them; NULL: all four */
    const char *ops;         /* "load,store,load+div" or some of them; NULL: all three */
    const unsigned *threads; /* threads per block, powers of two from 1 to 1024; NULL: 1,4,32,128,512,1024 */
    size_t nthreads;
    unsigned blocks_per_sm; /* 0: 2 */
    int reps;               /* calibrate: repeats (0: 3) */
    double target_s;        /* calibrate: the longest launch (0: 0.25 s); sizes: the measured time (0: 0.03 s) */
    uint64_t iterations;    /* counters, check: iterations of the chases' measurement loop (default 4) */
    double max_bytes;       /* sizes: the largest array (0: four times the L2) */
    const char *profile;    /* calibrate: the sensor profile (NULL: looked up, else identified first) */
    const char *out_dir;    /* the files (default "truewatt-mem"; made when missing) */
    const char *isa_table;  /* calibrate: isa.csv of tw_isa_experiment (throughput): its div.u32 beside LOAD+DIV's */
    const char *check_manifest; /* calibrate: the counter checks' manifest and ncu's CSV of them; NULL: unchecked */
    const char *check_ncu;
    bool json; /* the memory-energy profile (calibrate) or the sizes as JSON on out instead of text */
} tw_mem_options;

TW_API void tw_mem_options_init(tw_mem_options *o);
/* levels, ops and threads: TW_EINVAL names the first bad one ("levels: no level named 'l3' ..."). */
TW_API tw_status tw_mem_options_check(const tw_mem_options *o);
/* The calibration: the rows as a table (text) or the memory-energy profile
 * (JSON) on out; mem.csv, mem-profile.json, launches.csv, checks.csv,
 * mem.dat/.gp (.png with gnuplot), trace.csv and events.csv in out_dir. */
TW_API tw_status tw_mem_calibrate(const tw_experiment_options *e, const tw_mem_options *o, FILE *out);
/* The levels' sizes from access latency (one warp chasing arrays of 16 KiB
 * up to max_bytes); sizes.csv in out_dir. */
TW_API tw_status tw_mem_sizes_report(const tw_experiment_options *e, const tw_mem_options *o, FILE *out);
/* Every chase of the calibration with 0 and `iterations` iterations, nothing
 * measured, the launches listed in `manifest` (what ncu profiles). */
TW_API tw_status tw_mem_counters(const tw_experiment_options *e, const tw_mem_options *o, const char *manifest);
/* The metrics the checks need, as ncu's --metrics argument (cut at cap). */
TW_API void tw_mem_check_metrics_arg(char *buf, size_t cap);
/* The checks of ncu's CSV against the manifest: a table on out, checks.csv in o->out_dir. */
TW_API tw_status tw_mem_check_report(const tw_experiment_options *e, const tw_mem_options *o, const char *manifest,
                                     const char *ncu_csv, FILE *out);

/* ---------------------------------------------------------------- simulated runs, the demo, listings */

/* A simulated run: the simulated sensor over a scenario streamed into a
 * trace (a row read, a row written: memory bounded), its kernels with their
 * exact energy into an events file, and a summary on a stream; what
 * `truewatt sim` does. */
typedef struct tw_sim_run_options {
    size_t size;                /* sizeof(tw_sim_run_options), set by tw_sim_run_options_init */
    uint64_t seed;              /* noise and jitter (default 1) */
    const char *trace;          /* the trace to write (required) */
    const char *events;         /* the kernels with true_energy_j (NULL: the trace's name with .events.csv) */
    bool json;                  /* the summary as JSON instead of text */
    const volatile int *cancel; /* nonzero: stop with TW_EINTERRUPTED, the rows so far (and the events) kept */
    void (*note)(void *ctx, const char *text); /* progress of long runs, one line each; NULL: none */
    void *note_ctx;
} tw_sim_run_options;

TW_API void tw_sim_run_options_init(tw_sim_run_options *o);
/* out may be NULL (no summary). */
TW_API tw_status tw_sim_run(const tw_scenario *sc, const tw_sim_run_options *o, FILE *out);

/* The experiments of Burtscher et al. 2014 on the simulated K20 through the
 * real path (simulator -> trace file -> analysis): the sensor's constant
 * fitted, then every method's energy of each kernel against the truth, into
 * out_dir (traces, corrected series, demo.csv, demo.gp and, with gnuplot,
 * the figures) and as text or JSON on a stream; what `truewatt demo` does. */
typedef struct tw_demo_options {
    size_t size;         /* sizeof(tw_demo_options), set by tw_demo_options_init */
    const char *out_dir; /* default "truewatt-demo" (made when missing) */
    uint64_t seed;       /* default 1 */
    bool no_plot;        /* write the plot's script and data, do not run gnuplot */
    bool json;
    const volatile int *cancel;                /* nonzero: stop with TW_EINTERRUPTED */
    void (*note)(void *ctx, const char *text); /* progress, one line each; NULL: none */
    void *note_ctx;
} tw_demo_options;

TW_API void tw_demo_options_init(tw_demo_options *o);
TW_API tw_status tw_demo(const tw_demo_options *o, FILE *out);

/* The sensor backends, whether each can be used here and why not, as a
 * table or JSON ({"backends": [...]}); what `truewatt backends` prints. */
TW_API tw_status tw_backends_report(bool json, FILE *out);

/* A GPU's clocks as `truewatt dvfs clocks` prints them (text or JSON): the
 * current and maximum SM and memory clocks, the clock event reasons and the
 * supported clock pairs; a part that cannot be read says why. */
TW_API tw_status tw_clocks_report(tw_clocks *c, bool json, FILE *out);

/* ---------------------------------------------------------------- recording a command into a run file
 *
 * What `truewatt run -- CMD` does around CMD, which the caller starts and
 * waits for itself: the GPUs chosen, a run file created with what is known
 * (the command, its environment, the job, the GPUs, their MIG instances and
 * sensor profiles), the GPUs sampled into it, the kernels and NVTX ranges
 * the injection library writes (events CSV) imported as they come, and the
 * end recorded; tw_report_compute(tw_recording_run(r), ...) then gives the
 * report. A run that is not finished (a kill) keeps what was committed. */

/* The GPUs to measure: those `list` names (NVML indices, "cuda:N", UUIDs;
 * a MIG instance's UUID stands for its GPU, with a note), else those
 * cuda_visible (the CUDA_VISIBLE_DEVICES the program gets; NULL: unset)
 * names, else every GPU the backend sees; into out[0..*n) in that order. A
 * backend without a device list (sim) gets list's indices, or device 0.
 * Notes (one line each, "" when none) into note. */
TW_API tw_status tw_devices_choose(const char *backend, const char *list, const char *cuda_visible, tw_device_info *out,
                                   size_t cap, size_t *n, char *note, size_t note_len);
/* The syntax of a device list alone (no GPU needed): TW_EINVAL naming the
 * first item that is not an index, cuda:N or GPU-/MIG- UUID (prefix). NULL is fine. */
TW_API tw_status tw_devices_check(const char *list);
/* The folder searched for sensor profiles: $TW_PROFILE_DIR, else tw_data_dir()'s profiles/. */
TW_API const char *tw_profile_dir(void);
/* The folder of truewatt's data (sensor profiles, DVFS parameter sets, the ISA paper's table):
 * $TW_DATA_DIR, else the installed share/truewatt, found from where this library lies (so an
 * installed tree may be moved), else the source tree's data/ (a library in its build tree). */
TW_API const char *tw_data_dir(void);
/* The CUPTI injection library `truewatt run` loads into the program: $TW_INJECT_LIBRARY, else the
 * installed one (lib/truewatt/libtruewatt-inject.so, found like tw_data_dir), else
 * libtruewatt-inject.so beside this library (a build tree). A path, whether or not a file is there. */
TW_API const char *tw_inject_library(void);
/* Whether the file at path is a run file (SQLite's header), not a CSV. */
TW_API bool tw_run_is_file(const char *path);
/* A number the run file records (e.g. "exit_s", set when its command ended); NaN when absent. */
TW_API double tw_run_get_real(tw_run *r, const char *key);

typedef struct tw_recording tw_recording;

typedef struct tw_recording_options {
    size_t size;                   /* sizeof(tw_recording_options), set by tw_recording_options_init */
    const char *backend;           /* NULL: "nvml" */
    const tw_device_info *devices; /* the GPUs (tw_devices_choose) */
    size_t ndevices;
    double fast_period_s, slow_period_s; /* 0: each GPU's sampling plan */
    uint64_t t0_mono_ns;                 /* the timeline's origin on CLOCK_MONOTONIC (0: now) */
    const char *provenance;              /* the line heading the run and its report */
    char *const *command;                /* the measured command's argv (NULL-terminated), recorded */
    char *const *environment;            /* its environment (NULL-terminated), recorded */
    const char *events_path;             /* the injection library's events CSV (NULL: no timeline) */
    const char *no_events;               /* why there is no timeline when none is wanted (NULL: none) */
    const char *host;                    /* recorded (the merged report's key) */
    int rank;                            /* a parallel job's rank (-1: none), world_size and local_rank (-1: unknown) */
    int world_size, local_rank;
    const char *rank_variable;                 /* the variable the rank came from */
    const char *warnings;                      /* lines recorded with the run (NULL: none) */
    void (*note)(void *ctx, const char *text); /* the timeline that cannot be read, a GPU lost; NULL: none */
    void *note_ctx;
    double activity_counters_ms; /* the program records activity counters this often (TW_PM_INTERVAL_MS); 0: none */
} tw_recording_options;

/* The syntax of `truewatt run --activity-windows`' ON,EVERY[,busy] (TW_PM_WINDOWS:
 * PM sampling enabled ON s of every EVERY s, 0.1 <= ON < EVERY <= 3600; busy: a
 * window falls due only once the GPU has run something since the last), as the
 * injection library reads it: TW_EINVAL saying why for anything else. */
TW_API tw_status tw_activity_windows_check(const char *spec);

TW_API void tw_recording_options_init(tw_recording_options *o);
/* Checks what can be checked before anything is created: the sensor
 * profile (NULL: each GPU's own) loads, the run file's folder is writable. */
TW_API tw_status tw_recording_new(const char *path, const char *profile, tw_recording **out);
/* Creates the run file (an old one is replaced), records what is known and starts sampling. */
TW_API tw_status tw_recording_start(tw_recording *r, const tw_recording_options *o);
/* The sampler (its plan per GPU), once started. */
TW_API const tw_sampler *tw_recording_sampler(const tw_recording *r);
/* The run file, for tw_report_compute once the recording finished. */
TW_API tw_run *tw_recording_run(tw_recording *r);
/* The command started spawn_s after t0 (a run not finished is reported from here on). */
TW_API tw_status tw_recording_command_started(tw_recording *r, double spawn_s);
/* Imports the events written since and commits: call it every few seconds while the command runs. */
TW_API tw_status tw_recording_sync(tw_recording *r);

typedef struct tw_recording_end {
    size_t size;           /* sizeof(tw_recording_end) */
    int exit_status;       /* as a shell gives it (128 + N: killed by signal N) */
    int signal;            /* the signal that killed it (0: none) */
    double command_wall_s; /* how long it ran */
    double exit_s;         /* when it ended, after t0 */
    double tail_s;         /* sampled after it ended */
} tw_recording_end;

/* Stops sampling, imports the rest of the events (removing the events file
 * once all of it is in) and records the end. The run stays open. */
TW_API tw_status tw_recording_finish(tw_recording *r, const tw_recording_end *e);
/* Stops sampling and keeps what was recorded, with `warning` (may be NULL)
 * among the run's warnings and no end: `truewatt report` takes it as a run
 * that was not finished. The run stays open. */
TW_API tw_status tw_recording_abandon(tw_recording *r, const char *warning);
/* Closes the run file (reporting a write error) and frees r; discard: the
 * run measured nothing and its file is removed. NULL is a no-op. */
TW_API tw_status tw_recording_close(tw_recording *r, bool discard);
/* Each GPU's energy of the report (tw_report_compute of the recording) into
 * a process report for a running exporter; a GPU on which no kernel or copy
 * was recorded gets none. */
TW_API tw_status tw_proc_report_set_energies(tw_proc_report *p, const tw_report *r);

#ifdef __cplusplus
}
#endif

#endif /* TRUEWATT_H */
