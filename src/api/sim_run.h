/* The simulated sensor into a trace file alone (the demo's experiments):
 * what tw_sim_run writes first. */
#ifndef TW_API_SIM_RUN_H
#define TW_API_SIM_RUN_H

#include <stdint.h>

#include "truewatt.h"

tw_status tw_sim_trace(const tw_scenario *sc, uint64_t seed, const char *path, const volatile int *cancel);

#endif
