/* Energy per kernel name from a power reading with full coverage (internal).
 *
 * The run is cut into intervals (t_{k-1}, t_k] with a known energy E_k: the
 * driver's sample buffer (mean power over each ~20 ms interval), else the
 * energy counter's differences (~100 ms), else (a fallback, with a warning)
 * the trapezoid of a power reading. The idle level P_idle is the median power
 * of the intervals in which no kernel ran, after the first kernel started
 * (the active-idle level with the context alive), else before it. In each
 * interval the energy above idle, E_k - P_idle dt, goes to the kernels active
 * in it in proportion to their time in it (concurrent kernels share); an
 * interval without kernels adds it to "other". Memcpy and memset count as
 * activity like kernels and are listed apart; NVTX ranges get the energy of
 * the intervals they overlap (not exclusive: ranges may nest or overlap).
 *
 * With a sensor profile's model of a reading (correct/profile.h), the
 * intervals are that reading's observations under its model
 * (correct/observe.h) when they tile the time: a counter, an rc reading
 * (corrected), a boxcar whose window is about its period (within 25 %) or at
 * least two periods (deconvolved). */
#ifndef TW_ATTRIB_KERNELS_H
#define TW_ATTRIB_KERNELS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "correct/profile.h"
#include "truewatt.h"

/* One interval of known energy. */
typedef struct tw_attrib_interval {
    double t0_s, t1_s; /* (t0, t1] on the trace timeline */
    double energy_j;
} tw_attrib_interval;

typedef enum tw_attrib_source {
    TW_ATTRIB_BUFFER = 0,    /* power_buffer_w: mean power over each buffer interval */
    TW_ATTRIB_COUNTER = 1,   /* energy_j: differences of the energy counter */
    TW_ATTRIB_TRAPEZOID = 2, /* fallback: trapezoid of power_instant_w or power_usage_w */
    TW_ATTRIB_MODEL = 3      /* a sensor profile's model of one reading: its observations, which tile the time */
} tw_attrib_source;

const char *tw_attrib_source_name(tw_attrib_source s);

typedef enum tw_attrib_class {
    TW_ACT_KERNEL = 0, /* kind "kernel", or no kind */
    TW_ACT_COPY = 1,   /* "memcpy", "memset" */
    TW_ACT_NVTX = 2,   /* "nvtx" */
    TW_ACT_IGNORED = 3 /* another kind, or another device */
} tw_attrib_class;

typedef struct tw_attrib_options {
    const char *prefix;         /* trace column prefix: "" or "gpuN_" */
    int device;                 /* only events of this device (and those without one); -1 = all */
    const volatile int *cancel; /* nonzero: stop with TW_EINTERRUPTED */
    /* A sensor profile's model of the reading to use (its column: prefix +
     * model->name), or NULL: the sample buffer, else the counter, else the
     * trapezoid. When the column is absent or the model's observations do not
     * tile the time (a window reading), that choice is made instead, with a
     * warning saying why. Borrowed: it must outlive tw_attrib_run. */
    const tw_reading_model *model;
} tw_attrib_options;

void tw_attrib_options_init(tw_attrib_options *o);

/* Kernels (or copies) of one name. */
typedef struct tw_attrib_name {
    const char *name; /* borrowed from the events */
    const char *kind; /* "kernel", "memcpy", "memset" (borrowed, or a literal) */
    uint64_t launches;
    double time_s;   /* summed durations */
    double energy_j; /* dynamic: above idle */
    double power_w;  /* energy_j / time_s */
    double share;    /* of all dynamic energy given to kernels and copies (0..1) */
} tw_attrib_name;

/* One NVTX range. */
typedef struct tw_attrib_range {
    const char *name;
    double start_s, end_s;
    double energy_j;     /* all energy of the intervals it overlaps, by overlap */
    double above_idle_j; /* ... the part above idle */
} tw_attrib_range;

typedef struct tw_attrib {
    tw_attrib_source source;
    char source_column[128];
    char warnings[1024]; /* one per line; "" when none */
    double start_s, end_s, run_s;
    size_t nintervals;
    double idle_w;
    const char *idle_basis; /* how P_idle was found */
    /* where the energy went: idle + kernels + copies + other = sum */
    double idle_j, kernels_j, copies_j, other_j, sum_j;
    /* whole-run energy over [start_s, end_s] by each method (NaN when the reading is absent) */
    double counter_j;        /* energy counter, interpolated at the ends */
    double buffer_j;         /* integral of the sample buffer */
    double trap_usage_j;     /* trapezoid of power_usage_w */
    double trap_instant_j;   /* trapezoid of power_instant_w */
    double mtsm_j;           /* mean of power_instant_w polls x run time */
    double rc_k20_j;         /* RC-corrected power_usage_w (K20 model: not valid on H100) */
    char rc_note[256];       /* why rc_k20_j is NaN, when it is */
    double check_pct;        /* 100 (sum_j / counter_j - 1) */
    uint64_t activities;     /* kernels and copies attributed */
    tw_attrib_name *kernels; /* by energy, largest first */
    size_t nkernels;
    tw_attrib_name *copies;
    size_t ncopies;
    tw_attrib_range *ranges; /* in start order */
    size_t nranges;
    size_t nevents;
    double *event_energy_j; /* per input event: dynamic energy (kernels, copies), NaN otherwise */
} tw_attrib;

tw_attrib_class tw_attrib_classify(const tw_event *e, int device);

/* The attribution proper, on given intervals (in time order, not overlapping).
 * Fills the split, the per-name tables and the ranges; the whole-run method
 * fields are left NaN (tw_attrib_run fills them). Names are borrowed from
 * `events`, which must outlive the result. */
tw_status tw_attrib_intervals(const tw_attrib_interval *iv, size_t n, const tw_events *events,
                              const tw_attrib_options *opt, tw_attrib **out);

/* From a trace file written by the sampler: builds the intervals from the
 * profile's model when given and usable (opt->model), else from the best
 * reading present, attributes, and computes the whole-run energy by every method. */
tw_status tw_attrib_run(const char *trace_path, const tw_events *events, const tw_attrib_options *opt, tw_attrib **out);

void tw_attrib_free(tw_attrib *a);

#endif
