/* The report of a run file: what `truewatt run` prints when its command
 * ends and what `truewatt report RUN` prints later, by one path. Everything
 * comes from the run file (devices, samples, activities, the sensor profile
 * used, the run's facts): `run` records, then reads back what it recorded. */
#ifndef TW_REPORT_RUN_PIPELINE_H
#define TW_REPORT_RUN_PIPELINE_H

#include <stdbool.h>
#include <stdio.h>

#include "report/run_report.h"
#include "runfile/runfile.h"
#include "trace/feed.h"

#define run_report_load tw_rep_run_report_load
#define run_pick_profile tw_rep_run_pick_profile
#define run_recorded_profile tw_rep_run_recorded_profile
#define run_pick_profiles tw_rep_run_pick_profiles
#define run_group_feed tw_rep_run_group_feed
#define group_feed_free tw_rep_group_feed_free
#define run_est_groups tw_rep_run_est_groups
#define run_pm_of tw_rep_run_pm_of
#define run_device_pm tw_rep_run_device_pm
#define run_device_counters tw_rep_run_device_counters

/* Computes the report of `run` into r (tw_report_compute). */
tw_status run_report_load(tw_run *run, const tw_report_options *o, tw_report *r);

/* What the sensor profile of a device gave: the run's status and line;
 * `given` (--profile) or the one for the GPU and driver. */
void run_pick_profile(const char *given, const tw_profile *given_prof, const char *given_how, const char *gpu,
                      const char *driver, run_device *x);
/* The profile the run file recorded for device rd (run and report; the merged
 * report of several run files). */
void run_recorded_profile(tw_run *run, const tw_run_device *rd, run_device *x);
/* Each device's profile: the file `profile` (read once) for all, else the
 * one its run file recorded (runs[d], rdev[d]). */
tw_status run_pick_profiles(tw_run *const *runs, const tw_run_device *const *rdev, run_device *const *dev, size_t n,
                            const char *profile);
/* The profile `run` uses for its device `index` (GPU name and driver): the
 * one given (given_prof, loaded by tw_profile_pick, with its line), else the
 * one for the GPU and driver; recorded in the run file (status, line, JSON). */
tw_status tw_run_record_profile(tw_run *run, int index, const char *gpu, const char *driver, const char *given,
                                const tw_profile *given_prof, const char *given_how);

/* The groups asked for by NVTX range (o->range_groups): *out replays `in`
 * with each kernel, copy or memset that starts inside a range of one of
 * those names renamed "range NAME: its name", so that the pattern
 * "range NAME: *" groups them (one replay of `in` finds the ranges; *out is
 * `in` itself and *gf NULL when none is asked for). Free *gf with
 * group_feed_free after the last replay. */
typedef struct group_feed group_feed;
tw_status run_group_feed(const tw_feed *in, const tw_report_options *o, group_feed **gf, tw_feed *out);
void group_feed_free(group_feed *g);
/* What `run` recorded of the activity counters of the GPU `uuid` into *out:
 * its samples, or why there are none; *asked false (and *out untouched)
 * when none were asked for or recorded. */
tw_status run_pm_of(tw_run *run, const char *uuid, tw_run_pm *out, bool *asked);
/* run_pm_of for device x (x->uuid) into x->pm_asked and x->pm, with its
 * line x->pm_line. */
tw_status run_device_pm(tw_run *run, run_device *x);
/* Device x's activity counters (x->pm, recorded in `run`) as the
 * estimator's features, each sample moved by shift_s onto the estimate's
 * timeline (set->c.n 0: none; why not into why, "" when none were recorded). */
struct tw_est_counter_set;
tw_status run_device_counters(tw_run *run, const run_device *x, double shift_s, const tw_report_options *o,
                              struct tw_est_counter_set *set, char *why, size_t cap);
/* The estimator's patterns for o's groups (o->groups, then one per range
 * group), malloc'ed strings in a malloc'ed array (*n of them). */
tw_status run_est_groups(const tw_report_options *o, char ***patterns, size_t *n);

#endif
