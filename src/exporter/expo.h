/* The exporter's insides (internal): each GPU's live state, fed by the
 * sampler's rows (expo_state.c), and the rendering of all GPUs' states as
 * Prometheus' text format or OpenMetrics (tw_expo_render.c). The daemon
 * (exporter.c) holds one lock around the states: rows come from the
 * sampler's writer thread, scrapes from the HTTP server's thread.
 *
 * Time: readings carry their time on the sampler's timeline (seconds since
 * the exporter's start on CLOCK_MONOTONIC); the energy counter is published
 * with the wall-clock time its value refers to (Unix ms), so that a
 * Prometheus rate() divides by the time the energy was used in, not by the
 * scrape times (which lag the counter's reads by up to its read period). */
#ifndef TW_EXPORTER_EXPO_H
#define TW_EXPORTER_EXPO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/sbuf.h"
#include "correct/profile.h"
#include "truewatt.h"

#define EXPO_WINDOW_CAP 8192 /* points a reading's window holds (the buffer's 50/s for 160 s) */
#define EXPO_STALL_S 2.0     /* a device without any row this long: a stall (plans read every <= 0.5 s) */
#define EXPO_MAX_PROCS 256   /* processes remembered per GPU */

/* The readings the exporter follows: the GPU's power readings and its counter. */
enum { EXPO_R_BUFFER, EXPO_R_USAGE, EXPO_R_AVG, EXPO_R_INSTANT, EXPO_R_ENERGY, EXPO_NREADINGS };

/* One reading's recent points (a ring) and, for power readings, its integral. */
typedef struct expo_series {
    double *t, *v; /* EXPO_WINDOW_CAP each */
    size_t head, n;
    double integral_j; /* power readings: sum of v_i (t_i - t_{i-1}) since the first point */
    uint64_t points;
} expo_series;

/* One process's energy on one GPU. */
typedef struct expo_proc {
    unsigned pid;
    double energy_j;
    double active_j;  /* measured: the part above the GPU's baseline (NaN for an estimate) */
    bool estimate;    /* from NVML's utilisation samples; else measured by `truewatt run` (a report) */
    double last_seen; /* timeline s (estimates) */
    double pending_j; /* an estimate's shares held while a measured run on its GPU goes on (expo_procs.c) */
    char command[128];
    char job[64];
} expo_proc;

/* A measured run on one GPU (a `truewatt run` report naming it), as the exporter accounts it. */
typedef struct expo_run {
    unsigned writer_pid;
    unsigned long long writer_start; /* with writer_pid: the report's identity */
    unsigned pid;
    char command[128];
    char job[64];
    bool done;       /* its report says done */
    bool whole;      /* begun since the scrape before it was first seen: the run lies in this exporter's accounting */
    bool settled;    /* energy_j, active_j are final (published) */
    double energy_j; /* its report's, bounded by the GPU's energy over its window once settled; NaN: none */
    double active_j;
    bool seen; /* scratch: named by a report at this scrape */
} expo_run;

/* One report naming this GPU, as read at a scrape (the exporter's input to the accounting). */
typedef struct expo_report {
    unsigned writer_pid;
    unsigned long long writer_start;
    unsigned pid;
    const char *command, *job;
    bool done;
    bool fresh;                /* its writer (truewatt run) started since the scrape before */
    double energy_j, active_j; /* the report's, on this GPU (NaN: none) */
} expo_report;

/* An estimated process's share of the GPU's energy over one scrape interval. */
typedef struct expo_share {
    unsigned pid;
    double energy_j;
} expo_share;

typedef struct expo_gpu {
    unsigned index;
    char uuid[96];
    char model[96];
    char profile[4096]; /* the profile file, or "none" */
    bool have_profile;
    tw_profile prof;
    expo_series r[EXPO_NREADINGS];
    /* the published energy: from the counter, else a power reading's integral (fixed once chosen) */
    int energy_src; /* -1: not chosen yet; EXPO_R_* */
    double counter_prev_raw;
    bool counter_started;
    double counter_j;   /* counter increments since the first read, resets added */
    uint64_t resets;    /* counter went back (driver reload, reset): counted from 0 again */
    double first_row_t; /* timeline s */
    double last_row_t;  /* timeline s; < 0: none yet */
    uint64_t rows;      /* rows taken */
    uint64_t stalls;    /* gaps of more than EXPO_STALL_S between rows */
    uint64_t failures;  /* polls in which no reading could be read (NVML errors): the sampler's count */
    bool lost;          /* its readings stopped after a backend error */
    char lost_msg[256];
    expo_proc procs[EXPO_MAX_PROCS];
    size_t nprocs;
    unsigned long long proc_last_us; /* NVML's timestamp of the last utilisation sample taken */
    double proc_energy_at;           /* the GPU's energy (J) when the processes were last updated */
    expo_run *runs;                  /* measured runs named by the reports (expo_procs.c) */
    size_t nruns, runs_cap;
    bool held;     /* a window is open: a measured run on this GPU goes on, the estimates are held */
    double held_j; /* the GPU's energy over the open window */
} expo_gpu;

/* One scrape interval of GPU g's processes (expo_procs.c, docs/exporter.md#shared-gpus): de, the
 * GPU's energy over it; share[0..nshare), the estimated processes' shares of de (their NVML
 * utilisation); rep[0..nrep), the reports naming the GPU now. While a measured run goes on, the
 * estimates are held; when every run of the window is done, the runs get their reports' energies
 * (at most the window's energy together) and the estimates the rest (at most their shares).
 * now: timeline s. false when out of memory (the reports not taken: nothing counted twice). */
bool tw_expo_procs_account(expo_gpu *g, double de, const expo_share *share, size_t nshare, const expo_report *rep,
                           size_t nrep, double now, double forget_s);
/* Whether pid has a measured run on g (its estimate is never published). */
bool tw_expo_procs_measured(const expo_gpu *g, unsigned pid);

/* Reading names (the sampler's column names) of EXPO_R_*. */
const char *tw_expo_reading_name(int r);

/* A GPU's state, empty (allocates its windows). */
tw_status tw_expo_gpu_init(expo_gpu *g, unsigned index, const char *uuid, const char *model);
void tw_expo_gpu_free(expo_gpu *g);
/* One row of this GPU's readings (those of the sampler's merged row that are its own). */
void tw_expo_gpu_row(expo_gpu *g, const char *const *names, const tw_row *row);
/* Its readings stopped for good. */
void tw_expo_gpu_failed(expo_gpu *g, const char *msg);

/* What is published for one GPU at a scrape (computed from its state). */
typedef struct expo_view {
    unsigned index;
    const char *uuid, *model, *host;
    bool has_energy;
    double energy_j;
    double energy_t;           /* timeline s the energy refers to */
    const char *energy_source; /* "counter" or a power reading's name */
    bool has_power;
    double power_w;
    const char *power_reading; /* the reading the power comes from */
    const char *response;      /* its model's response ("boxcar", ...; "unknown" without a profile) */
    const char *profile;
    uint64_t stalls, failures, resets;
    bool lost;
    size_t nprocs;
    const expo_proc *procs;
} expo_view;

/* The view of g; window_s: the power's window. */
void tw_expo_gpu_view(const expo_gpu *g, double window_s, const char *host, expo_view *out);

/* Rendering options. */
typedef struct expo_render_opts {
    bool openmetrics; /* OpenMetrics 1.0 (else Prometheus text 0.0.4) */
    bool dcgm;        /* also dcgm-exporter's names */
    double window_s;
    int64_t wall_ms_at_t0; /* Unix ms at timeline 0 (the energy's timestamps) */
} expo_render_opts;

/* The page: every GPU's metrics, family by family. */
void tw_expo_render(const expo_view *v, size_t n, const expo_render_opts *o, tw_sbuf *out);
/* A label value escaped for the exposition formats (\\, \", \n). */
void tw_expo_escape(tw_sbuf *out, const char *s);

#endif
