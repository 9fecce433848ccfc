/* Integrals of a piecewise-linear sampled signal over time windows. */
#ifndef TW_CORRECT_INTEGRATE_H
#define TW_CORRECT_INTEGRATE_H

/* Integral over [a, b] of the line from (t0, y0) to (t1, y1), zero outside [t0, t1].
 * The trapezoid rule with linear interpolation at the window edges. */
static inline double tw_seg_integral(double t0, double y0, double t1, double y1, double a, double b)
{
    double lo = a > t0 ? a : t0;
    double hi = b < t1 ? b : t1;
    if (!(hi > lo) || !(t1 > t0)) return 0.0;
    double slope = (y1 - y0) / (t1 - t0);
    double ylo = y0 + slope * (lo - t0);
    double yhi = y0 + slope * (hi - t0);
    return 0.5 * (ylo + yhi) * (hi - lo);
}

#endif
