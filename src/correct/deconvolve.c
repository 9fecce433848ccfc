/* Deconvolution of a boxcar-averaged reading into per-period means
 * (correct/observe.h): the cumulative energy F at each update instant from
 * W v_k = F(u_k) - F(u_k - W), F(u_k - W) interpolated on the F already known.
 *
 * The window start u_k - W only moves forward with k, so one pointer finds the
 * interval of earlier instants holding it: O(n) for the recursion, O(n log n)
 * for the median period.
 *
 * Noise: every v_k enters F(u_k) with weight W and is carried forward along
 * the chain u_k, u_k + W, u_k + 2W, ... (interpolation mixes neighbouring
 * chains but never damps their sum), so a reading noise sigma makes F wander
 * like a random walk, W sigma sqrt(t / W) after time t. Energy differences
 * over an interval inherit it, and a per-period mean gets it divided by the
 * period.
 *
 * `out` must be initialised (tw_obs_series_init); its observations are
 * replaced (its buffer reused), and it is left empty on failure. Fewer than
 * two updates give no observation (period and window NaN). Update instants
 * must increase strictly (TW_EORDER) and values be finite (TW_EINVAL). */
#include <math.h>
#include <stdlib.h>

#include "core/error.h"
#include "correct/observe.h"

static int by_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}

tw_status tw_deconvolve_boxcar(const tw_obs *in, size_t n, double window_s, tw_obs_series *out)
{
    if (!out) return tw_fail(TW_EINVAL, "deconvolution: no output series");
    out->n = 0;
    out->period_s = out->window_s = NAN;
    if (n && !in) return tw_fail(TW_EINVAL, "deconvolution: no input");
    if (!(window_s > 0) || !isfinite(window_s))
        return tw_fail(TW_EINVAL, "deconvolution: the window must be positive and finite (%g s)", window_s);
    for (size_t k = 0; k < n; k++) {
        if (!isfinite(in[k].t1_s) || !isfinite(in[k].power_w))
            return tw_fail(TW_EINVAL, "deconvolution: update %zu is not finite (t = %g s, value %g W)", k, in[k].t1_s,
                           in[k].power_w);
        if (k && !(in[k].t1_s > in[k - 1].t1_s))
            return tw_fail(TW_EORDER, "deconvolution: update %zu at %.9g s does not follow %.9g s", k, in[k].t1_s,
                           in[k - 1].t1_s);
    }
    if (n < 2) return TW_OK;

    double *F = malloc(n * sizeof *F);
    double *gap = malloc((n - 1) * sizeof *gap);
    if (!F || !gap) {
        free(F);
        free(gap);
        return tw_fail(TW_ENOMEM, "out of memory (deconvolution of %zu updates)", n);
    }
    const double W = window_s, u0 = in[0].t1_s, v0 = in[0].power_w;
    /* F's origin: F(u_0 - W) = 0, with the level v_0 before u_0. */
    F[0] = W * v0;
    size_t j = 0; /* the last instant at or before the current window start */
    tw_status st = TW_OK;
    for (size_t k = 1; k < n && st == TW_OK; k++) {
        double u = in[k].t1_s, v = in[k].power_w, s = u - W;
        if (s <= u0) {
            F[k] = W * v + v0 * (s - u0) + W * v0;
        } else {
            while (j + 1 < k && in[j + 1].t1_s <= s)
                j++;
            if (j + 1 < k) {
                double a = in[j].t1_s, b = in[j + 1].t1_s;
                F[k] = W * v + F[j] + (s - a) / (b - a) * (F[j + 1] - F[j]);
            } else {
                /* The window is shorter than this gap, so it starts after
                 * the last known F. Interpolating towards the unknown F(u_k)
                 * itself gives the level v over the whole gap. */
                F[k] = F[k - 1] + v * (u - in[k - 1].t1_s);
            }
        }
        double dt = u - in[k - 1].t1_s;
        gap[k - 1] = dt;
        st = tw_obs_series_push(out, in[k - 1].t1_s, u, (F[k] - F[k - 1]) / dt);
    }
    if (st == TW_OK) {
        qsort(gap, n - 1, sizeof *gap, by_double);
        size_t m = n - 1;
        out->period_s = m % 2 ? gap[m / 2] : 0.5 * (gap[m / 2 - 1] + gap[m / 2]);
        out->window_s = out->period_s;
    } else {
        out->n = 0;
    }
    free(F);
    free(gap);
    return st;
}
