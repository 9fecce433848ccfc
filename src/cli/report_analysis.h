/* Rendering one analysis as text or JSON, from the same accessors. */
#ifndef TW_CLI_REPORT_ANALYSIS_H
#define TW_CLI_REPORT_ANALYSIS_H

#include <stdbool.h>
#include <stdio.h>

#include "core/json.h"
#include "correct/profile.h"
#include "estimate/estimator.h"
#include "truewatt.h"

typedef struct report_context {
    const char *trace;
    const char *reading;
    const char *corrected_path; /* NULL when not written */
    double dedup_gap_s;
    bool capacitance_given, idle_given, active_idle_given, events_detected;
} report_context;

/* The energy of each event by the estimator (estimate/estimator.h) on a
 * sensor profile's best reading, with the energy counter as the reference
 * when the trace has it (the events are the analysis's, in its order). */
typedef struct report_profile {
    const char *source;        /* which profile file and why (tw_profile_pick's line) */
    const tw_reading_model *m; /* NULL: no reading the trace has; see note */
    const char *column;        /* the trace column read (the model's name, perhaps with a prefix) */
    const char *note;          /* why there is no estimate, or NULL */
    const tw_estimate *est;    /* NULL with a note; event_energy_j in the analysis's event order */
    const tw_events *events;   /* the events the estimate was made from (the analysis's) */
} report_profile;

/* pr: NULL when no profile applies (no section). */
void report_analysis_text(const tw_analysis *a, const report_context *ctx, const report_profile *pr, FILE *f);
/* Writes the analysis as key/value pairs into an open JSON object ("profile": only with pr). */
void report_analysis_json_fields(json *j, const tw_analysis *a, const report_context *ctx, const report_profile *pr);

#endif
