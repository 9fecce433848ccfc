/* MIG in the report of a run (see timeline/mig.h): the run file's MIG
 * instances, their kernels charged to the parent GPU under the instance's
 * label, and a table per GPU of each instance's energy, an estimate. */
#ifndef TW_REPORT_RUN_MIG_H
#define TW_REPORT_RUN_MIG_H

#define run_mig_apply tw_rep_run_mig_apply
#define run_mig_text tw_rep_run_mig_text
#define run_mig_json tw_rep_run_mig_json

#include <stdio.h>

#include "report/run_report.h"
#include "core/json.h"
#include "runfile/runfile.h"
#include "timeline/mig.h"

/* Loads the run's MIG instances (*mig malloc'ed, NULL when none) and, when
 * there are any, replaces *events by their remapped copy (tw_mig_remap). */
tw_status run_mig_apply(tw_run *run, tw_events **events, tw_mig_instance **mig, size_t *n);

/* The instances of d's GPU (those of mig[0..n) whose parent is d->index), as
 * text and as the JSON key "mig_instances" ([] when none). */
void run_mig_text(const run_device *d, FILE *f);
void run_mig_json(json *j, const run_device *d);

#endif
