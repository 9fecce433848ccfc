/* What the session gives the rest of src/api (internal). */
#ifndef TW_API_SESSION_INTERNAL_H
#define TW_API_SESSION_INTERNAL_H

#include <stddef.h>

#include "correct/observe.h"
#include "truewatt.h"

/* Now on the session's timeline (seconds since the open). */
double tw_session_now_s(const tw_session *s);
/* GPU d's baseline power so far (NaN: not known yet). */
double tw_session_baseline_w(tw_session *s, size_t d);

/* Whether the session's GPUs are the simulator's (no readings: exact truth). */
bool tw_session_is_sim(const tw_session *s);
/* Waits until every GPU's readings reach t (TW_EUNAVAIL after timeout_s). */
tw_status tw_session_wait_covered(tw_session *s, double t, double timeout_s);
/* GPU d's readings over [t0, t1] as the estimator's observations: the
 * energy line's tiles, each the mean (corrected) power of its interval;
 * *m: the reading's model, name its name. */
tw_status tw_session_observations(tw_session *s, size_t d, double t0, double t1, tw_obs_series *out,
                                  tw_reading_model *m);

/* text stored once for the process (names a region points to outlive its
 * session); NULL when out of memory. */
const char *tw_session_intern(const char *text);

#endif
