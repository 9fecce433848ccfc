/* The report of a run file: what `truewatt run` prints when its command
 * ends and what `truewatt report RUN` prints later, by one path. Everything
 * comes from the run file (devices, samples, activities, the sensor profile
 * used, the run's facts): `run` records, then reads back what it recorded. */
#ifndef TW_CLI_RUN_PIPELINE_H
#define TW_CLI_RUN_PIPELINE_H

#include <stdbool.h>
#include <stdio.h>

#include "cli/run_report.h"
#include "runfile/runfile.h"

typedef struct run_report_opts {
    const char *cmd;      /* "run" or "report", for messages */
    const char *profile;  /* a sensor profile instead of the one the run used (NULL: the run's) */
    const char *perfetto; /* write the Perfetto file here (NULL: none) */
    bool json;            /* the report as JSON, else text */
    const char *options;  /* the options, as stored with the report */
    /* given each device's estimate once computed (run: the process report to the exporter); NULL: none */
    void (*on_devices)(void *user, const run_device *dev, size_t n);
    void *user;
} run_report_opts;

/* Computes the report of `run`, prints it on `out` and stores its JSON in
 * the run file's reports. Returns 0, or an exit code after a message on
 * stderr (CLI_EXIT_INTERRUPTED when Ctrl-C stopped it). */
int run_report_file(tw_run *run, const run_report_opts *o, FILE *out);

/* What the sensor profile of a device gave: the run's status and line, and
 * the profile's JSON (NULL when there is none); `given` (--profile) or the
 * one for the GPU and driver. Used by `run` to record the profile it used. */
void run_pick_profile(const char *given, const tw_profile *given_prof, const char *given_how, const char *gpu,
                      const char *driver, run_device *x);
/* The profile the run file recorded for device rd (run and report; the merged
 * report of several run files). */
void run_recorded_profile(tw_run *run, const tw_run_device *rd, run_device *x);
/* Each device's profile: --profile (o->profile, read once) for all, else the
 * one its run file recorded (runs[d], rdev[d]); 0 or the exit code. */
int run_pick_profiles(tw_run *const *runs, const tw_run_device *const *rdev, run_device *const *dev, size_t n,
                      const run_report_opts *o);
/* The profile of x as JSON for the run file (malloc'ed), NULL when none. */
char *run_profile_json(const run_device *x);

#endif
