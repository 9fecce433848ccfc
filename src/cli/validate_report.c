#include <stdio.h>

#include "cli/validate_report.h"

int validate_report(tw_sensor *trace, const tw_events *events, const char *outdir, const tw_exec *x)
{
    (void)trace;
    (void)x;
    printf("recorded %zu events into %s\n", tw_events_count(events), outdir);
    return 0;
}
