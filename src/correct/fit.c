#include "correct/fit.h"

#include <math.h>

#define C_MIN_S 1e-3
#define C_MAX_S 100.0
#define GRID 60

/* Linear least squares of p on exp(-(t-t0)/c); returns the SSE, fills A, B. */
static double sse_for(const double *t, const double *p, size_t n, double t0, double c, double *a, double *b)
{
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (size_t i = 0; i < n; i++) {
        double x = exp(-(t[i] - t0) / c);
        sx += x;
        sy += p[i];
        sxx += x * x;
        sxy += x * p[i];
    }
    double nn = (double)n, den = nn * sxx - sx * sx;
    if (!(fabs(den) > 1e-300)) {
        *b = 0;
        *a = sy / nn;
    } else {
        *b = (nn * sxy - sx * sy) / den;
        *a = (sy - *b * sx) / nn;
    }
    double sse = 0;
    for (size_t i = 0; i < n; i++) {
        double r = p[i] - (*a + *b * exp(-(t[i] - t0) / c));
        sse += r * r;
    }
    return sse;
}

static double sse_log(const double *t, const double *p, size_t n, double t0, double logc)
{
    double a, b;
    return sse_for(t, p, n, t0, exp(logc), &a, &b);
}

int tw_fit_step(const double *t_s, const double *p_w, size_t n, double t0_s, tw_step_fit *out)
{
    if (n < 8) return -1;
    /* coarse grid on log C, then golden-section refinement around the best cell */
    double lo = log(C_MIN_S), hi = log(C_MAX_S), step = (hi - lo) / (GRID - 1);
    size_t best = 0;
    double best_sse = INFINITY;
    for (size_t g = 0; g < GRID; g++) {
        double s = sse_log(t_s, p_w, n, t0_s, lo + step * (double)g);
        if (s < best_sse) {
            best_sse = s;
            best = g;
        }
    }
    double a = lo + step * (double)(best ? best - 1 : 0);
    double b = lo + step * (double)(best + 1 < GRID ? best + 1 : best);
    const double phi = 0.6180339887498949;
    double x1 = b - phi * (b - a), x2 = a + phi * (b - a);
    double f1 = sse_log(t_s, p_w, n, t0_s, x1), f2 = sse_log(t_s, p_w, n, t0_s, x2);
    for (int it = 0; it < 100 && b - a > 1e-9; it++) {
        if (f1 < f2) {
            b = x2;
            x2 = x1;
            f2 = f1;
            x1 = b - phi * (b - a);
            f1 = sse_log(t_s, p_w, n, t0_s, x1);
        } else {
            a = x1;
            x1 = x2;
            f1 = f2;
            x2 = a + phi * (b - a);
            f2 = sse_log(t_s, p_w, n, t0_s, x2);
        }
    }
    double c = exp(0.5 * (a + b)), fa, fb;
    double sse = sse_for(t_s, p_w, n, t0_s, c, &fa, &fb);
    if (!isfinite(sse) || fabs(fb) < 1e-9) return -1;
    out->c_s = c;
    out->final_w = fa;
    out->start_w = fa + fb;
    out->rms_w = sqrt(sse / (double)n);
    return 0;
}
