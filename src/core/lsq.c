/* Small dense least squares; see lsq.h. */
#include "core/lsq.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define RANK_TOL 1e-10

/* Householder QR of the n x p column-major A in place, applied to b as well;
 * the column norms before scaling are in scale. */
static bool qr_solve(double *A, double *b, size_t n, size_t p, double *x)
{
    for (size_t j = 0; j < p; j++) {
        double *a = A + j * n, norm = 0;
        for (size_t i = j; i < n; i++)
            norm += a[i] * a[i];
        norm = sqrt(norm);
        if (!(norm > RANK_TOL)) return false; /* columns are scaled to norm 1: this one is the others' span */
        double alpha = a[j] > 0 ? -norm : norm;
        a[j] -= alpha; /* v = a - alpha e_j, stored in place */
        double vv = 0;
        for (size_t i = j; i < n; i++)
            vv += a[i] * a[i];
        for (size_t k = j + 1; k <= p; k++) {
            double *c = k < p ? A + k * n : b, s = 0;
            for (size_t i = j; i < n; i++)
                s += a[i] * c[i];
            s = 2 * s / vv;
            for (size_t i = j; i < n; i++)
                c[i] -= s * a[i];
        }
        a[j] = alpha; /* R's diagonal */
    }
    for (size_t j = p; j-- > 0;) {
        double s = b[j];
        for (size_t k = j + 1; k < p; k++)
            s -= A[k * n + j] * x[k];
        x[j] = s / A[j * n + j];
    }
    return true;
}

bool tw_lsq_solve(const double *X, const double *y, size_t n, size_t p, tw_lsq_fit *fit)
{
    if (!X || !y || !fit || p == 0 || p > TW_LSQ_MAX_P || n < p) return false;
    double *A = malloc(n * p * sizeof *A), *b = malloc(n * sizeof *b), scale[TW_LSQ_MAX_P], x[TW_LSQ_MAX_P];
    bool ok = A && b;
    for (size_t j = 0; ok && j < p; j++) {
        double s = 0;
        for (size_t i = 0; i < n; i++)
            s += X[i * p + j] * X[i * p + j];
        scale[j] = sqrt(s);
        if (!(scale[j] > 0) || !isfinite(scale[j])) ok = false;
        for (size_t i = 0; ok && i < n; i++)
            A[j * n + i] = X[i * p + j] / scale[j];
    }
    if (ok) {
        memcpy(b, y, n * sizeof *b);
        ok = qr_solve(A, b, n, p, x);
    }
    if (ok) {
        double my = 0, rss = 0, tss = 0;
        for (size_t i = 0; i < n; i++)
            my += y[i] / (double)n;
        for (size_t j = 0; j < p; j++)
            fit->beta[j] = x[j] / scale[j];
        for (size_t i = 0; i < n; i++) {
            double f = 0;
            for (size_t j = 0; j < p; j++)
                f += X[i * p + j] * fit->beta[j];
            rss += (y[i] - f) * (y[i] - f);
            tss += (y[i] - my) * (y[i] - my);
        }
        fit->rms = sqrt(rss / (double)n);
        fit->r2 = tss > 0 ? 1 - rss / tss : NAN;
    }
    free(A);
    free(b);
    return ok;
}
