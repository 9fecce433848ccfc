/* Small dense least squares (internal): y ~ X beta for a few regressors,
 * by Householder QR on column-scaled X, so that regressors of very
 * different magnitudes (instructions ~1e12, seconds ~0.1) lose no
 * precision, as the normal equations would. */
#ifndef TW_CORE_LSQ_H
#define TW_CORE_LSQ_H

#include <stdbool.h>
#include <stddef.h>

#define TW_LSQ_MAX_P 8

typedef struct tw_lsq_fit {
    double beta[TW_LSQ_MAX_P];
    double rms; /* of the residuals */
    double r2;  /* 1 - RSS / (sum of squares about the mean); NaN when y does not vary */
} tw_lsq_fit;

/* X is row-major n x p (p <= TW_LSQ_MAX_P, n >= p). Returns false (fit
 * untouched) when a column is zero or a combination of the others to within
 * 1e-10 of its scale, or on bad arguments. */
bool tw_lsq_solve(const double *X, const double *y, size_t n, size_t p, tw_lsq_fit *fit);

#endif
