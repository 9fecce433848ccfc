/*
 * pm_options.h - what `truewatt run` hands the injection library's PM
 * sampling (pm_sampling.h) through the environment, parsed one way for both:
 * the injection library applies it, `truewatt run` refuses a bad value
 * before CMD starts (src/cli/cmd_run.c).
 */
#ifndef TW_INJECT_PM_OPTIONS_H
#define TW_INJECT_PM_OPTIONS_H

#include <stdbool.h>
#include <stdint.h>

#include "inject/twi_prefix.h"

/* Parses TW_PM_INTERVAL_MS ("1", "0.5"): an interval of 0.01 ms to 1000 ms
 * into *ns. False for anything else. */
bool twi_pm_parse_interval(const char *s, uint64_t *ns);
/* Parses TW_PM_WINDOWS ("ON,EVERY" in seconds, e.g. "1,10": ON of every
 * EVERY, 0.1 <= ON < EVERY <= 3600; "ON,EVERY,busy": a window falls due
 * only once the GPU has run something since the last one) into ns and
 * *busy. False for anything else. */
bool twi_pm_parse_windows(const char *s, uint64_t *window_ns, uint64_t *period_ns, bool *busy);

#endif
