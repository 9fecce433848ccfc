/* Internal error reporting: a thread-local detail string behind tw_last_error(). */
#ifndef TW_CORE_ERROR_H
#define TW_CORE_ERROR_H

#include "truewatt.h"

/* Records a printf-style detail for tw_last_error() and returns `status`,
 * so callers can write: return tw_fail(TW_EPARSE, "%s:%llu: ...", path, line); */
tw_status tw_fail(tw_status status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Clears the detail (called at the start of public entry points that may fail). */
void tw_clear_error(void);

#endif
