/* PM sampling's options from the environment: see pm_options.h. */
#include "inject/pm_options.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

bool twi_pm_parse_interval(const char *s, uint64_t *ns)
{
    if (!s || !*s) return false;
    char *end;
    errno = 0;
    double ms = strtod(s, &end);
    while (*end == ' ')
        end++;
    if (errno || *end || !(ms >= 0.01 && ms <= 1000.0)) return false;
    *ns = (uint64_t)(ms * 1e6 + 0.5);
    return true;
}

bool twi_pm_parse_windows(const char *s, uint64_t *window_ns, uint64_t *period_ns, bool *busy)
{
    if (!s || !*s) return false;
    char *end;
    errno = 0;
    double on = strtod(s, &end);
    if (errno || *end != ',') return false;
    double every = strtod(end + 1, &end);
    *busy = strncmp(end, ",busy", 5) == 0;
    if (*busy) end += 5;
    while (*end == ' ')
        end++;
    if (errno || *end || !(on >= 0.1) || !(every > on) || !(every <= 3600)) return false;
    *window_ns = (uint64_t)(on * 1e9 + 0.5);
    *period_ns = (uint64_t)(every * 1e9 + 0.5);
    return true;
}
