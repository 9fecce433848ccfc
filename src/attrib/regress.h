/* Energy per kernel name by regression (internal), for kernels shorter than
 * the sensor's windows: each observation (a window of mean power, see
 * correct/observe.h) is modelled as
 *     P_obs = P_idle + sum_n P_n * f_{n}
 * where f_n is the fraction of the window during which kernels of name n ran
 * (their time inside the window / window length). Least squares over all
 * windows give P_n (the dynamic power of name n) with its standard error from
 * the residual variance and (X^T X)^-1; P_idle is fitted as an intercept or
 * held at a given value. Energy per launch of name n = P_n x its mean
 * duration. Names beyond `max_names` (by total time) are pooled into one
 * regressor "(other kernels)" so the system stays small and well posed. */
#ifndef TW_ATTRIB_REGRESS_H
#define TW_ATTRIB_REGRESS_H

#include <stddef.h>
#include <stdint.h>

#include "correct/observe.h"
#include "truewatt.h"

typedef struct tw_regress_name {
    const char *name; /* borrowed from the events ("(other kernels)" is a literal) */
    uint64_t launches;
    double time_s;       /* summed durations */
    double mean_s;       /* mean duration */
    double power_w;      /* dynamic power above idle */
    double power_se_w;   /* its standard error */
    double per_launch_j; /* power_w * mean_s */
    double per_launch_se_j;
    double energy_j; /* power_w * time_s */
    double windows;  /* windows in which it ran (support of its estimate) */
} tw_regress_name;

typedef struct tw_regress {
    double idle_w;    /* fitted (or the given value) */
    double idle_se_w; /* 0 when given */
    double rms_w;     /* residual RMS */
    double r2;
    size_t nobs; /* observations used (those within the events' span + margin) */
    size_t nnames;
    tw_regress_name *names; /* by energy, largest first */
    char warnings[512];     /* e.g. a name whose time never varies independently; "" when none */
} tw_regress;

typedef struct tw_regress_options {
    double idle_w;    /* NaN: fit it as an intercept */
    size_t max_names; /* 0 = 64 */
    double margin_s;  /* observations this far before the first / after the last event are used too (0 = 1 s) */
} tw_regress_options;

void tw_regress_options_init(tw_regress_options *o);

/* Kernels only: events of kind "kernel" or without a kind. TW_EINVAL when
 * there are fewer usable observations than unknowns + 2; a singular system
 * (two names always running together) is TW_ERANGE naming them. */
tw_status tw_regress_names(const tw_obs *obs, size_t n, const tw_events *events, const tw_regress_options *opt,
                           tw_regress **out);
void tw_regress_free(tw_regress *r);

#endif

/* Distributed lags: a sensor whose response outlasts one window (a lag, a
 * delay spread) leaks part of a kernel's energy into the next windows, which
 * biases tw_regress_names low. With `lags` > 0 every kernel also gets
 * regressors for its time shifted by j * step_s (j = 1..lags): the energy
 * that shows up j windows later. A name's power is the sum of its lag
 * coefficients (unbiased for any response shorter than lags + 1 windows);
 * its standard error combines theirs as if independent (conservative when,
 * as usual, neighbouring lags are anti-correlated). lags = 0 is
 * tw_regress_names. */
tw_status tw_regress_names_lagged(const tw_obs *obs, size_t n, const tw_events *events, const tw_regress_options *opt,
                                  int lags, double step_s, tw_regress **out);

/* Lags that cover a reading's response: its delay and (rc) 3 C beyond half a
 * window, in windows of its period; 1 to 4. */
int tw_regress_lags_for(double period_s, double delay_s, double capacitance_s);
