/* The scale of a prior from the coefficients it is for (internal): empirical
 * Bayes by the method of moments, for the estimator's priors on the
 * counters' coefficients and on the names' own terms (docs/methods.md,
 * "The priors"). */
#ifndef TW_ESTIMATE_PRIOR_SCALE_H
#define TW_ESTIMATE_PRIOR_SCALE_H

#include <stdbool.h>
#include <stddef.h>

/* The sd s of a prior N(0, s^2) on n coefficients, each fitted under a
 * broad prior as b[j] with variance v[j]: the root of
 * sum_j b_j^2 / (s^2 + v_j) = n (E[b_j^2] = s^2 + v_j), unique; 0 where
 * sum_j b_j^2 / v_j <= n (all within their errors of 0). Entries with a
 * variance that is not finite and positive are left out. */
double tw_prior_scale_sd(const double *b, const double *v, size_t n);

/* tw_prior_scale_sd over the coefficients not apart: a coefficient further
 * from 0 than z sqrt(v_j) (no scatter), then than z sqrt(s^2 + v_j) at the
 * s of the others, is apart (apart[j] true) and left out of s. -1 when out
 * of memory. */
double tw_prior_scale_robust_sd(const double *b, const double *v, size_t n, double z, bool *apart);

#endif
