/* Rendering one analysis as text or JSON, from the same accessors. */
#ifndef TW_CLI_REPORT_ANALYSIS_H
#define TW_CLI_REPORT_ANALYSIS_H

#include <stdbool.h>
#include <stdio.h>

#include "core/json.h"
#include "truewatt.h"

typedef struct report_context {
    const char *trace;
    const char *reading;
    const char *corrected_path; /* NULL when not written */
    double dedup_gap_s;
    bool capacitance_given, idle_given, active_idle_given, events_detected;
} report_context;

void report_analysis_text(const tw_analysis *a, const report_context *ctx, FILE *f);
/* Writes the analysis as key/value pairs into an open JSON object. */
void report_analysis_json_fields(json *j, const tw_analysis *a, const report_context *ctx);

#endif
