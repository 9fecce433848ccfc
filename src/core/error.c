#include "core/error.h"

#include <stdarg.h>
#include <stdio.h>

static _Thread_local char last_error[1024];

static const char *const status_text[] = {
    [TW_OK] = "success",
    [TW_EINVAL] = "invalid argument",
    [TW_ENOMEM] = "out of memory",
    [TW_EIO] = "input/output error",
    [TW_EPARSE] = "malformed input",
    [TW_ENOTFOUND] = "not found",
    [TW_EUNAVAIL] = "unavailable",
    [TW_EUNSUPPORTED] = "not supported",
    [TW_EEMPTY] = "no data",
    [TW_EORDER] = "timestamps go backwards",
    [TW_ENUMERIC] = "numerical failure",
    [TW_EINTERRUPTED] = "interrupted",
};

const char *tw_strerror(tw_status status)
{
    if ((unsigned)status >= sizeof status_text / sizeof status_text[0] || !status_text[status]) return "unknown error";
    return status_text[status];
}

const char *tw_last_error(void) { return last_error; }

const char *tw_version(void) { return TW_VERSION_STRING; }

tw_status tw_fail(tw_status status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    return status;
}

void tw_clear_error(void) { last_error[0] = '\0'; }
