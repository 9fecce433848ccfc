/* The report of `truewatt run`, as text or JSON, from the same records. */
#ifndef TW_CLI_RUN_REPORT_H
#define TW_CLI_RUN_REPORT_H

#include <stdbool.h>
#include <stdio.h>

#include "cli/sampler_report.h"
#include "core/json.h"
#include "correct/profile.h"
#include "estimate/estimator.h"
#include "estimate/methods.h"
#include "estimate/trace.h"
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
/* "total": {gpus, gpus_without_estimate, energy_j, counter_j, kernels_j, copies_j, baseline_j} */
void run_total_json(json *j, const run_total *t);
void run_report_json(const run_record *r, FILE *f);

#endif
