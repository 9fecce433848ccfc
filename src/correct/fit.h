/* Fitting the sensor's RC constant C from a step response (Burtscher §5):
 * readings after a step follow P(t) = A + B exp(-(t - t0)/C). For a given C
 * the model is linear in A and B; C is found by a search on the residual. */
#ifndef TW_CORRECT_FIT_H
#define TW_CORRECT_FIT_H

#include <stddef.h>

typedef struct tw_step_fit {
    double c_s;     /* fitted constant */
    double final_w; /* A: the level approached */
    double start_w; /* A + B: the level at t0 */
    double rms_w;   /* residual RMS */
} tw_step_fit;

/* Fits samples (t_s[i], p_w[i]), i < n, taken from t0_s on. Returns 0 on
 * success, -1 when there are too few samples or no step to fit. */
int tw_fit_step(const double *t_s, const double *p_w, size_t n, double t0_s, tw_step_fit *out);

#endif
