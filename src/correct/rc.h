/* Burtscher §5 step 3: undo the sensor's RC lag,
 *   P_true(t_i) = P(t_i) + C * dP/dt(t_i),
 * with the slope from neighbours: the paper's symmetric two-point formula
 * (half width 1), or a least-squares slope over 2k+1 points (half width k),
 * which damps the quantisation wobbles of §6.1. Output lags input by k samples. */
#ifndef TW_CORRECT_RC_H
#define TW_CORRECT_RC_H

#include <stddef.h>

#define TW_RC_MAX_HALF 16
#define TW_RC_RING (2 * TW_RC_MAX_HALF + 1)

typedef struct tw_rc {
    double c_s;
    int half;       /* k */
    size_t seen;    /* samples pushed so far */
    size_t emitted; /* samples emitted so far */
    double t[TW_RC_RING];
    double p[TW_RC_RING];
} tw_rc;

/* half is clamped to 1..TW_RC_MAX_HALF. */
void tw_rc_init(tw_rc *rc, double c_s, int half);
/* Pushes n samples; writes up to n corrected samples (time, raw, corrected).
 * raw_out may be NULL. Returns how many were written. */
size_t tw_rc_run(tw_rc *rc, const double *t_s, const double *p_w, size_t n, double *t_out, double *raw_out,
                 double *corr_out);
/* Emits the last k samples (slope from the neighbours that exist); returns count. */
size_t tw_rc_finish(tw_rc *rc, double *t_out, double *raw_out, double *corr_out);

#endif
