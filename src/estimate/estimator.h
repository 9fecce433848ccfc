/* The estimator (internal): every energy truewatt reports for kernels,
 * copies and time spans of one GPU comes from here.
 *
 * Model. The GPU's true power is a slowly varying baseline plus each
 * activity name's power while it runs:
 *
 *     P(t) = B(t) + sum_name P_name * a_name(t)
 *
 * a_name(t) is the name's activity: 1 while one of its launches runs alone;
 * launches that overlap share the time (each counts 1/n of it while n run).
 * B(t) is piecewise linear between knots a few seconds apart (the level
 * drifts with temperature), with a penalty on its curvature, so that it
 * follows the data where the GPU is idle and interpolates straight across
 * busy stretches, where kernels and baseline cannot be told apart.
 *
 * Observations. Each reading (correct/observe.h) gives windows with the
 * mean true power over each, its response already undone (delay, boxcar,
 * rc, counter differences). Every window of every reading is one equation
 *     mean of P over the window = observed value / gain_reading
 * weighted by its length over the reading's noise density (estimated from
 * its own residuals). The energy counter, where present, is the reference:
 * every other reading is scaled to it over the fit window (its gain), and
 * its total is one more equation of its own precision, so that baseline +
 * activities integrate to the counter's energy.
 *
 * Solution. Weighted least squares with P_name >= 0 (tw_nnls_gram), from
 * the normal equations accumulated in one pass over the windows: memory is
 * the number of names squared, not the launches or windows. Names whose
 * activity the windows cannot tell apart (always together, in fixed
 * proportion) are merged into a group, whose energy is reported instead of
 * an arbitrary split; the user may ask for groups by name pattern. Each
 * name's power has a standard error from the inverse normal matrix
 * (inflated for residuals correlated between neighbouring windows). A name
 * whose energy is under two standard errors, or that the fit holds at zero,
 * is reported below resolution with a one-sided upper bound (estimate + 2 sd,
 * the sd taken with the constraint freed); a name the fit holds at the power
 * bound is reported at the bound, its energy the bound times its activity:
 * the most the model can give it, which the data wanted exceeded. Nothing is
 * ever negative. */
#ifndef TW_ESTIMATE_ESTIMATOR_H
#define TW_ESTIMATE_ESTIMATOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "correct/observe.h"
#include "trace/feed.h"
#include "truewatt.h"

/* PM sampling's power around its windows: spans of TW_EST_PM_EDGE_S, TW_EST_PM_LEAD before each
 * window's recorded start and TW_EST_PM_TRAIL after its end (estimator.c, pm_edge_span) */
#define TW_EST_PM_EDGE_S 0.1
#define TW_EST_PM_LEAD 5
#define TW_EST_PM_TRAIL 2
#define TW_EST_PM_EDGES (TW_EST_PM_LEAD + TW_EST_PM_TRAIL)

/* The GPU's activity counters (CUPTI PM sampling, runfile_pm.h), as
 * features of its power: per sample, its span on the activities' clock and
 * each feature's GPU-wide mean over it as a share of its peak (0 .. 1;
 * counters.h builds them from the recorded metrics). Borrowed. */
#define TW_EST_MAX_FEATURES 8
typedef struct tw_est_counters {
    size_t n;                   /* samples, in order of start, not overlapping */
    const double *t0_s, *t1_s;  /* their spans */
    size_t nf;                  /* features, at most TW_EST_MAX_FEATURES */
    const char *const *feature; /* their names */
    const double *v;            /* n x nf, row by sample */
    /* the spans PM sampling was enabled in, when it was enabled in windows
     * (`truewatt run`'s default, docs/methods.md "Activity counters in
     * windows"): in order, not overlapping, on the activities' clock. The
     * GPU draws more while it is (+30-40 W on an idle H100,
     * results/h100/pm-cycle): that power is a term of its own, not the
     * baseline's or a kernel's. nw = 0: enabled throughout, no such term. */
    size_t nw;
    const double *w0_s, *w1_s;
    /* the reference clock the per-cycle features were scaled to (estimate/counters.h), MHz; 0: not
     * scaled. A calibrated model is the coefficients' prior only where its clock_mhz is this one. */
    double clock_mhz;
} tw_est_counters;

/* One reading's observations (borrowed). */
typedef struct tw_est_reading {
    const char *name;  /* trace column, for the report */
    const tw_obs *obs; /* windows with their mean power (W) */
    size_t n;
    bool reference; /* the energy counter: the total every other reading is scaled to */
    double tau_s;   /* its windows' weighting (tw_obs_series' tau_s): 0 plain, > 0 rc intervals */
} tw_est_reading;

typedef struct tw_est_config {
    size_t size;                 /* sizeof(tw_est_config): set by tw_est_config_init */
    double fit_t0_s, fit_t1_s;   /* NaN: from the first activity start to the last end + tail_s */
    double tail_s;               /* after the last activity (0 = 1 s); capped by fit_t1_s when given */
    double knot_s;               /* baseline knot spacing; 0 = max(5 s, fit span / 40) */
    double smooth;               /* curvature penalty over a knot span's data weight; 0 = 10 */
    double group_cos;            /* columns closer than this (cosine) are one group; 0 = 0.9995 */
    size_t max_names;            /* the rest (least time first) pooled; 0 = 2000 */
    const char *const *patterns; /* names matching one pattern (fnmatch) form one group each */
    size_t npatterns;
    /* spans whose mean power is reported as idle before and after the
     * program (NaN: not reported) */
    double idle_before_t0_s, idle_before_t1_s, idle_after_t0_s, idle_after_t1_s;
    const volatile int *cancel; /* nonzero: stop with TW_EINTERRUPTED */
    /* the power limit the GPU enforces (NaN or 0: unknown): no name's power
     * above the baseline may exceed it less the finest reading's quiet level */
    double power_limit_w;
    /* the GPU's active-idle level (its sensor profile's; NaN: unknown): a weak
     * prior on the baseline (sd BASELINE_PRIOR_SD_W), which decides it only
     * where the run never lets the GPU idle, so that a GPU busy from start to
     * end does not report its kernels' power as baseline */
    double active_idle_w;
    /* the GPU's activity counters (NULL or no samples: none): each kernel
     * name they cover gets its power from them (docs/methods.md) */
    const tw_est_counters *counters;
    /* called where the estimator will not read the readings' windows for a
     * while (before each fit, and after its passes over them), so that a
     * caller holding them in a file mapping can let their pages go (NULL:
     * not called; tw_estimate_trace's, for a run of hours) */
    void (*windows_idle)(void *ctx);
    void *windows_ctx;
    /* the power that lingers after a kernel (docs/methods.md, "Lingering
     * power"): each of the names with the most time gets a second term, its
     * activity's decay with this time constant after each launch, counted in
     * its energy (<= 0: none; tw_estimate_trace takes the sensor profile's
     * linger_s where this is 0), under a prior N(0, linger_prior_w^2) (0 = 10 W) */
    double linger_s;
    double linger_prior_w;
    /* power models of the activity counters calibrated on this GPU (its sensor
     * profile's activity_models; tw_estimate_trace takes the profile's where
     * this is NULL): where the features a run's samples give are exactly one
     * model's, its coefficients and their errors are the prior on the
     * counters' coefficients, instead of one learned from the coefficients'
     * own scatter (docs/methods.md, "A calibrated prior") */
    const tw_activity_model *activity_models;
    size_t n_activity_models;
} tw_est_config;

void tw_est_config_init(tw_est_config *c);
/* *c = the defaults overlaid with what `given` holds (NULL: none), as far as
 * its size says: a caller built against a smaller struct keeps the defaults
 * of the fields it does not know. */
void tw_est_config_from(tw_est_config *c, const tw_est_config *given);

/* Which constraint of the fit is active for a name (or group) says what its
 * figures mean: none (ok, or below resolution where the data resolve under
 * 2 sd of it), zero (below resolution), the power bound (at_power_bound). */
typedef enum tw_est_status {
    TW_EST_OK = 0, /* resolved: energy and sd */
    /* energy under 2 sd, or held at zero: upper_j bounds it (one-sided,
     * ~97.7 %: estimate + 2 sd; held at zero, 2 sd with zero freed) */
    TW_EST_BELOW_RESOLUTION = 1,
    TW_EST_GROUPED = 2,    /* indistinguishable from others: see its group */
    TW_EST_UNOBSERVED = 3, /* no window saw it (outside the fit span) */
    /* held at the power bound: the data asked for more than the bound allows
     * (a misfit of the model, or bursts above the limit); energy_j = upper_j =
     * the bound x its activity, the most the model can give, not a measurement */
    TW_EST_AT_POWER_BOUND = 4
} tw_est_status;

/* "ok", "below_resolution", "grouped", "unobserved", "at_power_bound" */
const char *tw_est_status_name(tw_est_status s);
/* True where the figure is one-sided: upper_j holds, energy_j +- sd does not
 * (below resolution, at the power bound). */
bool tw_est_status_one_sided(tw_est_status s);

/* Which model gave a name its power. */
typedef enum tw_est_method {
    TW_EST_BY_READINGS = 0, /* its own power, from the readings alone */
    TW_EST_BY_COUNTERS = 1  /* the activity counters' model over its time plus its own term (docs/methods.md) */
} tw_est_method;

/* "readings", "counters" */
const char *tw_est_method_name(tw_est_method m);

typedef struct tw_est_name {
    const char *name; /* borrowed from the events */
    const char *kind; /* "kernel", "memcpy", "memset" */
    uint64_t launches;
    double time_s;      /* summed durations */
    double active_s;    /* its activity integral (concurrent launches share) */
    double power_w;     /* above the baseline while it runs alone; NaN when grouped */
    double power_sd_w;  /* its standard error (held at a constraint: with it freed) */
    double energy_j;    /* power_w * active_s; NaN when grouped or unobserved */
    double energy_sd_j; /* its standard error (held at a constraint: with it freed) */
    double upper_j;     /* one-sided statuses (tw_est_status_one_sided): the upper bound; else NaN */
    int group;          /* index into groups, or -1 */
    tw_est_status status;
    tw_est_method method;
    double counter_w; /* TW_EST_BY_COUNTERS: the counters' model's mean power over its time (else NaN) */
    double own_w;     /* TW_EST_BY_COUNTERS: its own term, power_w - counter_w (else NaN) */
    /* the energy its linger term adds to energy_j, of either sign (docs/methods.md, "Lingering
     * power"): NaN where it has none (not among the names with the most time, held at a
     * constraint, grouped); the names' sum is tw_estimate.linger_j */
    double linger_j;
} tw_est_name;

/* How the activity counters were used (tw_estimate.counters). */
typedef struct tw_est_counter_fit {
    bool used;     /* some name's power came from them */
    char why[160]; /* not used: why ("" where none were given) */
    size_t nf;
    char feature[TW_EST_MAX_FEATURES][48];
    double coef_w[TW_EST_MAX_FEATURES];    /* power at full activity of each feature, W (>= 0) */
    double coef_sd_w[TW_EST_MAX_FEATURES]; /* standard errors */
    double coef_prior_sd_w;                /* sd of the prior on each coefficient (from the coefficients' scatter) */
    /* the coefficients' prior from a calibrated model (tw_est_config.activity_models): its source ("": none,
     * the prior is N(0, coef_prior_sd_w^2)); each feature's prior mean and sd */
    char calibrated[160];
    double cal_w[TW_EST_MAX_FEATURES], cal_sd_w[TW_EST_MAX_FEATURES];
    double cal_clock_mhz; /* its reference clock: the per-cycle features were scaled by the clock over it (NaN: none) */
    double own_sd_w;      /* sd of the prior on each name's own term (estimated from the names' scatter) */
    size_t names_apart;   /* names whose own term the readings put apart from the counters' model: under the
                             prior own_sd_w still, but left out of the scatter that sets it (APART_Z) */
    size_t names;         /* names given their power by the counters */
    double coverage;      /* share of the time of what the counters see (kernels, copies within the device's memory)
                             that the samples cover */
    size_t samples;       /* samples inside the fit span */
    /* PM sampling in windows (tw_est_counters.nw > 0): the windows inside
     * the fit span, their time, the power the GPU drew more while they were
     * on (its sd) and its energy, which the baseline's energy includes */
    size_t windows;
    double window_s, window_share;
    double window_sampled; /* the samples' time over the windows' (the rest: enabling, disabling and
                            * decoding at each window's end, or samples lost) */
    double pm_w, pm_sd_w, pm_j;
    /* the power PM sampling adds just outside each window as recorded: TW_EST_PM_LEAD spans of
     * TW_EST_PM_EDGE_S before its start (nearest first), then TW_EST_PM_TRAIL after its end, each
     * its own power fitted from every window, and their energy, which the baseline's includes */
    double pm_edge_w[TW_EST_PM_EDGES], pm_edge_j;
} tw_est_counter_fit;

typedef struct tw_est_group {
    char label[160]; /* "group 1: NAME (+N)" or the pattern */
    size_t nmembers;
    size_t *members; /* into names */
    uint64_t launches;
    double time_s, active_s;
    double power_w, power_sd_w, energy_j, energy_sd_j, upper_j;
    tw_est_status status; /* OK, BELOW_RESOLUTION or AT_POWER_BOUND */
    /* names the data cannot split (not parallel columns: interleaved below the readings' resolution,
     * their energies traded against each other); their summed energy, each member fitted apart */
    bool traded;
} tw_est_group;

/* An NVTX range (or any span): the energy measured over it and the part
 * the activities inside it drew above the baseline. */
typedef struct tw_est_range {
    const char *name; /* borrowed */
    double start_s, end_s;
    double energy_j;    /* the GPU's energy over the span: the finest reading's, scaled to the reference over
                           the fit; on a trace with the counter, anchored at its reads (range_energy.h) */
    double above_j;     /* sum over names of P_name x their activity inside the span */
    double baseline_j;  /* energy_j - above_j */
    size_t event;       /* index into the events given */
    const char *domain; /* its NVTX domain, thread and depth (tw_event's; borrowed) */
    int64_t tid;
    int32_t depth;
    double energy_sd_j; /* energy_j's standard uncertainty (NaN: not known, the finest reading alone) */
} tw_est_range;

typedef struct tw_est_reading_stats {
    char name[64];
    size_t used;    /* windows inside the fit span */
    double gain;    /* its energy over the counter's (1 for the reference) */
    double noise_w; /* residual rms of a 1 s mean (noise density, W sqrt(s)) */
    double rms_w;   /* residual rms of its windows */
    double lag1;    /* residual correlation between neighbouring windows */
} tw_est_reading_stats;

/* The events' energies, spilled to a temporary file (estimator.c). */
typedef struct tw_est_evj tw_est_evj;

typedef struct tw_estimate {
    double fit_t0_s, fit_t1_s;
    size_t nknots;
    double knot_s;
    double *knot_w;     /* the baseline at fit_t0_s + k knot_s (linear between, flat beyond) */
    double baseline_j;  /* integral of B over the fit span */
    double kernels_j;   /* sum of kernel names' energies (groups included) */
    double copies_j;    /* memcpy and memset */
    double model_j;     /* baseline + kernels + copies */
    double reference_j; /* the counter's energy over its windows inside the fit span (else the best reading's
                           over the fit span) */
    double reference_t0_s, reference_t1_s; /* those windows' span; NaN without a reference */
    double model_ref_j;                    /* the model's energy over that span (the fit span without one) */
    char reference[64];                    /* which reading reference_j is from */
    double conservation_pct;               /* 100 (model / reference - 1), the model over the reference's span */
    double baseline_mean_w, baseline_min_w, baseline_max_w;
    double idle_before_w, idle_after_w; /* NaN when not asked for or not seen */
    size_t nreadings;
    tw_est_reading_stats readings[8];
    size_t nnames;
    tw_est_name *names; /* by energy, largest first (groups' members after) */
    size_t ngroups;
    tw_est_group *groups;
    size_t nranges;
    tw_est_range *ranges; /* in start order */
    size_t nevents;
    tw_est_evj *energies_j; /* per input event: its share of its name's energy, spilled (tw_estimate_event_energy_j) */
    size_t pooled;          /* names pooled into "(other names)" past max_names */
    double shift_s;         /* the activities' clock against the readings' (fitted; added to activity times) */
    double shift_sd_s;      /* its standard error (NaN: not fitted); each power's error includes what it moves */
    double prior_w;         /* sd of the prior on each name's power (the GPU's observed range) */
    double linger_s;        /* the lingering power's time constant (NaN: no linger term) */
    size_t lingering;       /* names with a linger term */
    double linger_j;        /* the energy their linger terms add to them (in their energies) */
    double power_limit_w;   /* the GPU's power limit given (NaN: none) */
    double power_bound_w;   /* the bound on each name's power it gave (NaN: none) */
    double active_idle_w;   /* the baseline's prior level given (NaN: none) */
    double idle_share;      /* the share of the fit span with no activity */
    size_t at_limit;        /* names (or groups) whose power sits at that bound (status AT_POWER_BOUND) */
    double activity_t0_s, activity_t1_s; /* the first kernel's or copy's start, the last one's end (NaN: none) */
    char warnings[1024];                 /* lines; "" when none */
    tw_est_counter_fit counters;         /* the activity counters' part */
    /* PM sampling's windows inside the fit span's design (counters.windows of them inside the span), for
     * tw_estimate_baseline_j with counters.pm_w */
    size_t pm_nw;
    double *pm_w0, *pm_w1;
} tw_estimate;

/* Kernels, copies and NVTX ranges (kind "nvtx") come from `events`; other
 * kinds are ignored. Names are borrowed from `events`, which must outlive
 * the result. TW_EEMPTY when no reading has a window in the fit span. */
tw_status tw_estimate_run(const tw_est_reading *readings, size_t nreadings, const tw_events *events,
                          const tw_est_config *cfg, tw_estimate **out);
/* The same over a feed (trace/feed.h), replayed once: the events are not
 * held; each launch's span, name and rate (32 bytes) are spilled to a
 * temporary file in $TMPDIR (else /tmp), not kept in memory; names are
 * borrowed from the feed, which must outlive the result. */
tw_status tw_estimate_feed(const tw_est_reading *readings, size_t nreadings, const tw_feed *feed,
                           const tw_est_config *cfg, tw_estimate **out);
void tw_estimate_free(tw_estimate *e);

/* Input event i's share of its name's energy (NaN for ranges, instants,
 * other kinds, i >= nevents, or a read error of the temporary file that
 * holds them, said in tw_last_error). Read from it in chunks: cheapest for
 * i in increasing order; not for two threads at once. */
double tw_estimate_event_energy_j(const tw_estimate *e, size_t i);
/* The event energies of an estimate made by hand (tests, the Perfetto
 * writer's callers): n of them, from j. */
tw_status tw_estimate_set_event_energies(tw_estimate *e, const double *j, size_t n);

/* The baseline's energy over [a, b] (held at its end values outside the fit
 * span), PM sampling's own power in its windows included. */
double tw_estimate_baseline_j(const tw_estimate *e, double a, double b);

#endif
