/* The validation's analysis: from a trace and its events (recorded now or
 * earlier), the identified profile and every experiment measured by every
 * method, written as validation.csv (canonical), validation.md and plots. */
#ifndef TW_CLI_VALIDATE_REPORT_H
#define TW_CLI_VALIDATE_REPORT_H

#include "bench/exec.h"
#include "truewatt.h"

/* `x` (may be NULL) gives the GPU's name and driver and, on the simulator,
 * the true levels. Returns a CLI exit code. */
int validate_report(tw_sensor *trace, const tw_events *events, const char *outdir, const tw_exec *x);

#endif
