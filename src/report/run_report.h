/* The records of a run's report (tw_report in truewatt.h) and their
 * renderings as text, JSON and CSV: `truewatt run`'s report, one run file's
 * (run_pipeline.c) or several merged (run_merge.c). */
#ifndef TW_REPORT_RUN_REPORT_H
#define TW_REPORT_RUN_REPORT_H

/* The symbols carry the library's prefix (tests/meta/static_symbols.sh); the call sites keep the short names. */
#define run_report_text tw_rep_run_report_text
#define run_report_json tw_rep_run_report_json
#define run_report_csv tw_rep_run_report_csv
#define run_name_json tw_rep_run_name_json
#define run_total_of tw_rep_run_total_of
#define run_scope_text tw_rep_run_scope_text
#define run_scope_json tw_rep_run_scope_json
#define run_counters_text tw_rep_run_counters_text
#define run_pm_json tw_rep_run_pm_json
#define run_counters_json tw_rep_run_counters_json
#define run_pm_note tw_rep_run_pm_note
#define run_total_json tw_rep_run_total_json
#define run_range_of tw_rep_run_range_of
#define run_group_label tw_rep_run_group_label
#define run_split_json tw_rep_run_split_json
#define run_json_lines tw_rep_run_json_lines
#define run_status_notes tw_rep_run_status_notes

#include <stdbool.h>
#include <stdio.h>

#include "report/sampler_report.h"
#include "core/json.h"
#include "correct/profile.h"
#include "estimate/estimator.h"
#include "estimate/methods.h"
#include "estimate/trace.h"
#include "runfile/runfile_pm.h"
#include "timeline/mig.h"
#include "truewatt.h"

/* What the sensor profile of a device gave. */
typedef enum run_profile {
    RUN_PROFILE_NONE = 0,       /* no profile for this GPU and driver */
    RUN_PROFILE_ERROR = 1,      /* one exists but cannot be read */
    RUN_PROFILE_NO_READING = 2, /* it has no reading of the board's power with a model */
    RUN_PROFILE_MODEL = 3       /* model: its best reading, given to the attribution */
} run_profile;

typedef struct run_device {
    int index;
    char prefix[32];
    char name[96];
    char driver[32];
    tw_estimate *est; /* NULL when the estimate failed */
    char est_error[512];
    tw_est_trace_info info; /* the readings the estimator fitted, and its notes */
    tw_methods methods;     /* the naive methods over the fit span (NaN where absent) */
    run_profile profile;
    char profile_how[1200];     /* which file and why, or where none was found, or why it cannot be read */
    tw_profile prof;            /* RUN_PROFILE_MODEL: the profile itself */
    tw_reading_model model;     /* RUN_PROFILE_MODEL: its best reading of the board */
    const tw_mig_instance *mig; /* the run's MIG instances (of every GPU: those of this one have its index) */
    size_t nmig;
    const char *uuid;            /* the GPU's UUID ("" when unknown) */
    const tw_events *events;     /* the events the estimate was made from (its ranges' thread and domain) */
    const char *const *patterns; /* the groups asked for (the estimator's patterns): labels of groups */
    size_t npatterns;
    bool pm_asked;      /* activity counters were asked for or recorded (else no line on them) */
    tw_run_pm pm;       /* pm_asked: what was recorded (pm.on false: pm.reason says why not) */
    char pm_line[2048]; /* pm_asked: "N samples every X ms (PM sampling: ...)" or "not recorded (why)" */
} run_device;

typedef struct run_record {
    char *const *argv; /* the command */
    int exit_code;     /* the exit status truewatt returns */
    int signal;        /* 0, or the signal that killed the command */
    double child_wall_s;
    const char *backend;
    unsigned long long t0_mono_ns;
    double fast_period_s, slow_period_s;
    const char *run_path, *perfetto_path; /* the run file; the Perfetto file, NULL when not written */
    size_t nevents;
    const char *events_note; /* why there are no events, or NULL */
    const run_sampler *sampler;
    run_device *dev;
    size_t ndev;
    double spawn_s, exit_s; /* the command's start and end on the trace timeline */
    const char *warnings;   /* lines */
    const char *provenance; /* command, date, GPU, driver */
} run_record;

void run_report_text(const run_record *r, FILE *f);
/* A row per GPU and record (name, group, NVTX range), the same numbers as the JSON. */
void run_report_csv(const run_device *const *dev, size_t n, FILE *f);
/* Group g's label: the pattern asked for when every member matches it, else the estimator's. */
const char *run_group_label(const run_device *d, size_t g);
/* A range of d's estimate with its thread, domain and depth. */
void run_range_of(const run_device *d, size_t i, tw_report_range *out);

/* The footnotes under a table of names: what '<' (below resolution) and
 * '<=' (at the power bound, bound_w above the baseline) mean and what to do;
 * nothing for a count of 0. */
void run_status_notes(size_t below, size_t at_bound, double bound_w, FILE *f);

/* A name's fields in the JSON report (`name` as given: the merged report's without its rank). */
void run_name_json(json *j, const tw_est_name *x, const char *name);

/* The sum over GPUs, each once (a run's GPUs; the merged report's). */
typedef struct run_total {
    double model_j, counter_j, kernels_j, copies_j, baseline_j;
    size_t with, without; /* GPUs with an estimate; without one (not in the sums) */
} run_total;
run_total run_total_of(const run_device *const *dev, size_t n);
/* Which power the energies are (the GPU's), and on Grace Hopper the module's
 * energy over the fit span beside it (a line; keys power_scope,
 * module_energy_j, module_reading). */
void run_scope_text(const run_device *d, FILE *f);
void run_scope_json(json *j, const run_device *d);
/* The activity counters (a run's GPUs; the merged report's): how they
 * entered the estimate, a line (nothing where none were recorded); key
 * activity_counters (what was recorded, when asked for) and key
 * activity_model (how the estimate used them; d->est set). */
void run_counters_text(const run_device *d, FILE *f);
/* The note on what recording them did to the energy (NULL: none recorded). */
const char *run_pm_note(const run_device *d);
void run_pm_json(json *j, const run_device *d);
void run_counters_json(json *j, const run_device *d);
/* Keys kernels_j, copies_j, baseline_j: where a GPU's (or the total's) energy went. */
void run_split_json(json *j, double kernels_j, double copies_j, double baseline_j);
/* Key `key`: an array of text's lines (the empty ones left out). */
void run_json_lines(json *j, const char *key, const char *text);
/* "total": {gpus, gpus_without_estimate, energy_j, counter_j, kernels_j, copies_j, baseline_j} */
void run_total_json(json *j, const run_total *t);
void run_report_json(const run_record *r, FILE *f);

/* ---------------------------------------------------------------- tw_report */

typedef struct run_loaded run_loaded; /* one run file: run_pipeline.c */
typedef struct run_merged run_merged; /* several: run_merge.c */

#define run_loaded_json tw_rep_run_loaded_json
#define run_loaded_text tw_rep_run_loaded_text
#define run_loaded_perfetto tw_rep_run_loaded_perfetto
#define run_loaded_free tw_rep_run_loaded_free
#define run_merged_json tw_rep_run_merged_json
#define run_merged_text tw_rep_run_merged_text
#define run_merged_free tw_rep_run_merged_free

struct tw_report {
    run_loaded *one;        /* one run file, or NULL */
    run_merged *merged;     /* several, or NULL */
    const run_device **dev; /* the GPUs, each once (into one's or merged's) */
    size_t ndev;
    const char *notice; /* activity on GPUs not sampled ("" when none) */
};

/* Device d's estimate (NULL: none, or no such device): for code inside truewatt that takes
 * the estimator's records themselves (the exporter's process report). */
const tw_estimate *tw_report_device_estimate(const tw_report *r, size_t d);
/* The events device d's estimate was made from (NULL: none, or no such device). */
const tw_events *tw_report_device_events(const tw_report *r, size_t d);

void run_loaded_json(const run_loaded *L, FILE *f);
void run_loaded_text(const run_loaded *L, FILE *f);
tw_status run_loaded_perfetto(run_loaded *L, const char *path);
void run_loaded_free(run_loaded *L);
void run_merged_json(const run_merged *m, FILE *f);
void run_merged_text(const run_merged *m, FILE *f);
void run_merged_free(run_merged *m);

#endif
