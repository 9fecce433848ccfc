/* The report of `truewatt run`, as text or JSON, from the same records. */
#ifndef TW_CLI_RUN_REPORT_H
#define TW_CLI_RUN_REPORT_H

#include <stdbool.h>
#include <stdio.h>

#include "attrib/kernels.h"
#include "truewatt.h"

typedef struct run_device {
    int index;
    char prefix[32];
    char name[96];
    tw_attrib *attrib; /* NULL when the attribution failed */
    char attrib_error[512];
} run_device;

typedef struct run_record {
    char *const *argv; /* the command */
    int exit_code;     /* the exit status truewatt returns */
    int signal;        /* 0, or the signal that killed the command */
    double child_wall_s;
    const char *backend;
    unsigned long long t0_mono_ns;
    double fast_period_s, slow_period_s;
    const char *trace_path, *events_path, *perfetto_path; /* NULL when not written */
    size_t nevents;
    const char *events_note; /* why there are no events, or NULL */
    const tw_sampler *sampler;
    run_device *dev;
    size_t ndev;
    const char *warnings;   /* lines */
    const char *provenance; /* command, date, GPU, driver */
} run_record;

void run_report_text(const run_record *r, FILE *f);
void run_report_json(const run_record *r, FILE *f);

#endif
