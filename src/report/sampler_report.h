/* The sampler's CPU cost and plan in `truewatt run`'s report (kept apart
 * from run_report.c so that the report's other sections can change alone). */
#ifndef TW_REPORT_SAMPLER_REPORT_H
#define TW_REPORT_SAMPLER_REPORT_H

#define sampler_cpu_pct_per_gpu tw_rep_sampler_cpu_pct_per_gpu
#define sampler_cpu_text tw_rep_sampler_cpu_text
#define sampler_cpu_json tw_rep_sampler_cpu_json

#include <stdio.h>

#include "core/json.h"
#include "runfile/runfile.h"
#include "truewatt.h"

/* What the sampler did, as the run file keeps it (readings: polls and
 * updates; devices: plan, periods, CPU time). */
typedef struct run_sampler {
    double cpu_s, wall_s, writer_cpu_s;
    const char *notes; /* lines */
    const tw_run_reading *readings;
    size_t nreadings;
    const tw_run_device *devices;
    size_t ndev;
} run_sampler;

/* The share of one core all the sampler's threads used, per GPU sampled. */
double sampler_cpu_pct_per_gpu(const run_sampler *s);
/* "sampler: X % of one core per GPU (GPU 0: a %, GPU 1: b %, writer c %), ..."
 * and each device's plan, one line each. */
void sampler_cpu_text(const run_sampler *s, FILE *f);
/* Keys cpu_pct_per_gpu, writer_cpu_s and per_device[] in the open sampler object. */
void sampler_cpu_json(json *j, const run_sampler *s);

#endif
