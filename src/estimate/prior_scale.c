/* The scale of a prior from the coefficients it is for: prior_scale.h. */
#include "estimate/prior_scale.h"

#include <math.h>
#include <stdlib.h>

static bool usable(double b, double v) { return isfinite(b) && isfinite(v) && v > 0; }

/* sum_j b_j^2 / (s2 + v_j) over the usable entries. */
static double moment_sum(const double *b, const double *v, size_t n, double s2)
{
    double q = 0;
    for (size_t j = 0; j < n; j++)
        if (usable(b[j], v[j])) q += b[j] * b[j] / (s2 + v[j]);
    return q;
}

/* Paule and Mandel's estimator: each term of the sum falls as s grows, so
 * the root is unique and a bisection finds it. It replaced a fixed-point
 * iteration on the likelihood's equation (weights 1 / (s^2 + v_j)^2), which
 * went round a cycle on the own terms of the H100's realapps PyTorch run
 * (results/h100/realapps-s41b: 45, 310, 0 W, ...; tests/unit/test_prior_scale.c
 * holds them) and returned its 50th step; the likelihood itself is so flat where one of 22 own terms
 * stands out at 3.3 of its errors that its peak lay at 122 W on the H200's
 * (realapps-s42), where this gives 0. */
double tw_prior_scale_sd(const double *b, const double *v, size_t n)
{
    double hi = 0;
    size_t m = 0;
    for (size_t j = 0; j < n; j++)
        if (usable(b[j], v[j])) {
            hi = fmax(hi, b[j] * b[j]);
            m++;
        }
    if (!(moment_sum(b, v, n, 0) > (double)m)) return 0;
    /* the sum exceeds m at lo and is at most m at hi: each term is under 1 at s^2 = max b_j^2 */
    double lo = 0;
    for (int it = 0; it < 200 && hi - lo > 1e-12 * hi; it++) {
        double mid = 0.5 * (lo + hi);
        if (moment_sum(b, v, n, mid) > (double)m)
            lo = mid;
        else
            hi = mid;
    }
    return sqrt(0.5 * (lo + hi));
}

/* tw_prior_scale_sd over the entries not apart[]. */
static double scale_of_rest(const double *b, const double *v, size_t n, const bool *apart, double *bb, double *vv)
{
    size_t m = 0;
    for (size_t j = 0; j < n; j++)
        if (!apart[j]) {
            bb[m] = b[j];
            vv[m++] = v[j];
        }
    return tw_prior_scale_sd(bb, vv, m);
}

double tw_prior_scale_robust_sd(const double *b, const double *v, size_t n, double z, bool *apart)
{
    double *bb = calloc(n ? n : 1, sizeof *bb), *vv = calloc(n ? n : 1, sizeof *vv);
    if (!bb || !vv) {
        free(bb);
        free(vv);
        return -1;
    }
    for (size_t j = 0; j < n; j++) /* against no scatter at all */
        apart[j] = usable(b[j], v[j]) && fabs(b[j]) > z * sqrt(v[j]);
    double s = scale_of_rest(b, v, n, apart, bb, vv);
    for (size_t j = 0; j < n; j++) /* against the others' scatter */
        apart[j] = usable(b[j], v[j]) && fabs(b[j]) > z * sqrt(s * s + v[j]);
    s = scale_of_rest(b, v, n, apart, bb, vv);
    free(bb);
    free(vv);
    return s;
}
