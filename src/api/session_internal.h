/* What the session gives the rest of src/api (internal). */
#ifndef TW_API_SESSION_INTERNAL_H
#define TW_API_SESSION_INTERNAL_H

#include <stddef.h>

#include "truewatt.h"

/* Now on the session's timeline (seconds since the open). */
double tw_session_now_s(const tw_session *s);
/* GPU d's baseline power so far (NaN: not known yet). */
double tw_session_baseline_w(tw_session *s, size_t d);

#endif
