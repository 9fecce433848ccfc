/* Growable series of observations and of update instants (correct/observe.h). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "core/error.h"
#include "correct/observe.h"

#define FIRST_CAP 256

void tw_obs_series_init(tw_obs_series *s)
{
    s->v = NULL;
    s->n = 0;
    s->cap = 0;
    s->period_s = NAN;
    s->window_s = NAN;
    s->tau_s = 0.0;
}

tw_status tw_obs_series_push(tw_obs_series *s, double t0_s, double t1_s, double power_w)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : FIRST_CAP;
        if (cap < s->cap || cap > SIZE_MAX / sizeof *s->v)
            return tw_fail(TW_ENOMEM, "observations: too many (%zu)", s->n);
        tw_obs *v = realloc(s->v, cap * sizeof *v);
        if (!v) return tw_fail(TW_ENOMEM, "out of memory (%zu observations)", cap);
        s->v = v;
        s->cap = cap;
    }
    s->v[s->n++] = (tw_obs){t0_s, t1_s, power_w};
    return TW_OK;
}

void tw_obs_series_free(tw_obs_series *s)
{
    if (!s) return;
    free(s->v);
    tw_obs_series_init(s);
}

void tw_update_series_free(tw_update_series *s)
{
    if (!s) return;
    free(s->v);
    s->v = NULL;
    s->n = 0;
    s->cap = 0;
}
