#include "cli/cli.h"
#include "cli/interrupt.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

int cli_fail(const char *cmd, tw_status st)
{
    const char *detail = tw_last_error();
    fprintf(stderr, "truewatt %s: %s\n", cmd, detail && *detail ? detail : tw_strerror(st));
    return st == TW_EINTERRUPTED ? CLI_EXIT_INTERRUPTED : CLI_EXIT_FAIL;
}

int cli_usage(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "truewatt %s: ", cmd);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n(see 'truewatt %s --help')\n", cmd);
    va_end(ap);
    return CLI_EXIT_USAGE;
}

bool cli_parse_double(const char *s, double *out)
{
    if (!s || !*s) return false;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (*end || errno || !isfinite(v)) return false;
    *out = v;
    return true;
}

bool cli_parse_u64(const char *s, uint64_t *out)
{
    if (!s || !*s || *s == '-') return false;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (*end || errno) return false;
    *out = v;
    return true;
}

void cli_note(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}
