#include "correct/rc.h"

void tw_rc_init(tw_rc *rc, double c_s, int half)
{
    if (half < 1) half = 1;
    if (half > TW_RC_MAX_HALF) half = TW_RC_MAX_HALF;
    rc->c_s = c_s;
    rc->half = half;
    rc->seen = 0;
    rc->emitted = 0;
}

/* Least-squares slope of the ring entries with sequence numbers lo..hi. */
static double ls_slope(const tw_rc *rc, size_t lo, size_t hi)
{
    size_t m = hi - lo + 1;
    if (m < 2) return 0.0;
    double t0 = rc->t[lo % TW_RC_RING];
    double st = 0, sp = 0;
    for (size_t j = lo; j <= hi; j++) {
        st += rc->t[j % TW_RC_RING] - t0;
        sp += rc->p[j % TW_RC_RING];
    }
    double mt = st / (double)m, mp = sp / (double)m, num = 0, den = 0;
    for (size_t j = lo; j <= hi; j++) {
        double dt = rc->t[j % TW_RC_RING] - t0 - mt;
        num += dt * (rc->p[j % TW_RC_RING] - mp);
        den += dt * dt;
    }
    return den > 0 ? num / den : 0.0;
}

/* Slope at sample i from its neighbours lo..hi (both inside the ring). */
static double slope_at(const tw_rc *rc, size_t lo, size_t hi)
{
    if (hi == lo) return 0.0;
    if (rc->half == 1 || hi - lo == 1) {
        double dt = rc->t[hi % TW_RC_RING] - rc->t[lo % TW_RC_RING];
        return dt > 0 ? (rc->p[hi % TW_RC_RING] - rc->p[lo % TW_RC_RING]) / dt : 0.0;
    }
    return ls_slope(rc, lo, hi);
}

static void emit(tw_rc *rc, size_t i, size_t lo, size_t hi, double *t_out, double *raw_out, double *corr_out, size_t k)
{
    double p = rc->p[i % TW_RC_RING];
    t_out[k] = rc->t[i % TW_RC_RING];
    if (raw_out) raw_out[k] = p;
    corr_out[k] = p + rc->c_s * slope_at(rc, lo, hi);
}

/* The paper's formula once the ring holds two samples: the hot path when k == 1. */
static size_t run_symmetric(tw_rc *rc, const double *t_s, const double *p_w, size_t n, double *t_out, double *raw_out,
                            double *corr_out)
{
    size_t s = rc->seen;
    double tp = rc->t[(s - 2) % TW_RC_RING], pp = rc->p[(s - 2) % TW_RC_RING];
    double tc = rc->t[(s - 1) % TW_RC_RING], pc = rc->p[(s - 1) % TW_RC_RING];
    const double c = rc->c_s;
    for (size_t i = 0; i < n; i++) {
        double tn = t_s[i], pn = p_w[i], dt = tn - tp;
        t_out[i] = tc;
        if (raw_out) raw_out[i] = pc;
        corr_out[i] = pc + (dt > 0 ? c * (pn - pp) / dt : 0.0);
        tp = tc;
        pp = pc;
        tc = tn;
        pc = pn;
    }
    s += n;
    rc->seen = s;
    rc->emitted = s - 1;
    rc->t[(s - 2) % TW_RC_RING] = tp;
    rc->p[(s - 2) % TW_RC_RING] = pp;
    rc->t[(s - 1) % TW_RC_RING] = tc;
    rc->p[(s - 1) % TW_RC_RING] = pc;
    return n;
}

size_t tw_rc_run(tw_rc *rc, const double *t_s, const double *p_w, size_t n, double *t_out, double *raw_out,
                 double *corr_out)
{
    size_t out = 0, i = 0;
    size_t k = (size_t)rc->half;
    for (; i < n; i++) {
        if (k == 1 && rc->seen >= 2) break;
        size_t s = rc->seen++;
        rc->t[s % TW_RC_RING] = t_s[i];
        rc->p[s % TW_RC_RING] = p_w[i];
        /* sample j = s - k now has all k right neighbours */
        if (s < k) continue;
        size_t j = s - k;
        size_t lo = j >= k ? j - k : 0;
        emit(rc, j, lo, s, t_out, raw_out, corr_out, out++);
        rc->emitted = j + 1;
    }
    if (i < n)
        out += run_symmetric(rc, t_s + i, p_w + i, n - i, t_out + out, raw_out ? raw_out + out : NULL, corr_out + out);
    return out;
}

size_t tw_rc_finish(tw_rc *rc, double *t_out, double *raw_out, double *corr_out)
{
    size_t out = 0, k = (size_t)rc->half;
    if (rc->seen == 0) return 0;
    size_t last = rc->seen - 1;
    for (size_t j = rc->emitted; j <= last; j++) {
        size_t lo = j >= k ? j - k : 0;
        emit(rc, j, lo, last, t_out, raw_out, corr_out, out++);
    }
    rc->emitted = rc->seen;
    return out;
}
