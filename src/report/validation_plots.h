/* The validation's records, looked up and ordered for its tables, and its
 * plots (gnuplot): validation_short.png, validation_ratios.png and
 * validation_loads.png, each beside its .dat files and one script,
 * validation.gp, so anyone can re-plot. */
#ifndef TW_REPORT_VALIDATION_PLOTS_H
#define TW_REPORT_VALIDATION_PLOTS_H

/* the library's global names carry tw_ (tests/meta/static_symbols.sh) */
#define val_find tw_valrep_find
#define val_is_best tw_valrep_is_best
#define val_is_reference tw_valrep_is_reference
#define val_methods tw_valrep_methods
#define val_cases tw_valrep_cases
#define val_case_seconds tw_valrep_case_seconds
#define val_reference tw_valrep_reference
#define val_naive_method tw_valrep_naive_method
#define val_plots tw_valrep_plots

#include <stdio.h>

#include <stdbool.h>
#include <stddef.h>

#include "bench/validate.h"
#include "core/outfile.h"
#include "truewatt.h"

#define VAL_MAX_KEYS 64

/* The record of experiment/case/method, or NULL. */
const tw_val_record *val_find(const tw_val_result *r, const char *experiment, const char *case_name,
                              const char *method);
/* Whether a method is the best reading's: "best", or model_ of r->best. */
bool val_is_best(const tw_val_result *r, const char *method);
/* "reference", "reference_power", ...: what a case is measured against. */
bool val_is_reference(const char *method);
/* The methods of one experiment: best (and model_ of the best reading),
 * regression, repetition and the naive instant reading first (when present),
 * then the others in record order; the reference methods left out when
 * skip_reference. Returns the count (<= cap). */
size_t val_methods(const tw_val_result *r, const char *experiment, bool skip_reference, const char **out, size_t cap);
/* The cases of one experiment, by their length when every case names one
 * ("T=0.1s", "gap=50ms", "3ms"), else in record order. */
size_t val_cases(const tw_val_result *r, const char *experiment, const char **out, size_t cap);
/* "T=0.1s" -> 0.1, "gap=50ms" -> 0.05, "1ms" -> 0.001; NaN when no length. */
double val_case_seconds(const char *case_name);
/* What a case is measured against: the "reference" method's record when
 * there is one, else the first reference a record of the case carries
 * (NaN when none); its sigma into *sigma (may be NULL). */
double val_reference(const tw_val_result *r, const char *experiment, const char *case_name, double *sigma);
/* The naive instant-power method ("naive_power_instant_w", else the first
 * naive_ method of the experiment), or NULL. */
const char *val_naive_method(const tw_val_result *r, const char *experiment);

/* Writes the .dat files and validation.gp into outdir and, when gnuplot is
 * on PATH, draws the pictures. Returns 0 when the files were written (drawn
 * or not; note[] says which), -1 on an I/O error (tw_last_error says what). */
int val_plots(const char *outdir, const tw_val_result *r, tw_sensor *trace, const tw_events *events, char *note,
              size_t note_cap);

#endif
