/* The validation's analysis (internal): from a trace and its events (the
 * schedule of bench/plans.h) and a sensor profile, every experiment measured
 * by every method, as flat records (validation.csv is these records; the
 * Markdown tables and plots are rendered from them).
 *
 * Methods (per event, the GPU's total energy while it ran unless noted):
 *   naive_<reading>   the reading's polled value averaged over the event x its
 *                     duration (what nvidia-smi-style sampling gives)
 *   raw_<reading>     a counter's difference across the event (interpolated),
 *                     or the sample buffer's intervals integrated over it
 *   model_<reading>   the reading's identified model: observations (windows
 *                     of known placement, delays removed, boxcars
 *                     deconvolved, rc corrected) and the estimator
 *                     (estimate/estimator.h) on them alone, every compared
 *                     event (pairs, isolated launches) its own name: its
 *                     energy above the baseline plus the baseline's
 *   best              model_ of the reading the profile ranks best
 * and for kernels shorter than the update period, the estimator on the best
 * reading with the events' own names:
 *   regression        the isolated launches as one name: its energy over
 *                     its launches
 *   repetition        phase-shifted blocks of launches (measure-kernel) as
 *                     one name, likewise
 * The reference power of a short kernel is its back-to-back block's name's
 * power in that estimate. Dynamic energies of the naive and raw methods are
 * their totals minus the best reading's baseline. */
#ifndef TW_BENCH_VALIDATE_H
#define TW_BENCH_VALIDATE_H

#include <stddef.h>

#include "correct/profile.h"
#include "truewatt.h"

typedef struct tw_val_record {
    char experiment[24]; /* "linearity", "back_to_back", "short_kernels", "loads" */
    char case_name[32];  /* "T=0.1s", "gap=50ms", "1ms", "load_steady" */
    char method[80];     /* see above */
    char quantity[32];   /* "ratio", "J_per_launch", "J", "W" */
    double value;
    double sigma;         /* its standard uncertainty (spread over repeats / regression SE); NaN when none */
    double reference;     /* what it should be: 2, 1, the reference energy; NaN when none */
    double error_pct;     /* 100 (value / reference - 1); NaN without a reference */
    double tolerance_pct; /* the target; NaN when the row is for information */
    int pass;             /* 1 pass, 0 fail, -1 no target */
    unsigned n;           /* repeats or launches behind the value */
} tw_val_record;

typedef struct tw_val_result {
    tw_val_record *rec;
    size_t n, cap;
    char best[64];     /* the reading the profile ranks best */
    double baseline_w; /* the estimator's baseline on the best reading, mean over its fit */
} tw_val_result;

/* Measures every experiment whose events are present (names as in plans.h)
 * by every method the trace's readings allow. TW_EEMPTY when no validation
 * events are present. */
tw_status tw_validate_analyse(tw_sensor *src, const tw_events *events, const tw_profile *profile, tw_val_result *out);
void tw_val_result_free(tw_val_result *r);

#endif
