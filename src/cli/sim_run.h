/* Streams the simulated sensor into a trace file (the sampler path without
 * threads: one row read, one row written, memory bounded). */
#ifndef TW_CLI_SIM_RUN_H
#define TW_CLI_SIM_RUN_H

#include <stdint.h>

#include "truewatt.h"

typedef struct sim_run_result {
    uint64_t rows;
    double duration_s;
} sim_run_result;

/* Stops early with TW_EINTERRUPTED on Ctrl-C; the rows so far stay in the file. */
tw_status sim_run_to_file(const tw_scenario *sc, uint64_t seed, const char *path, sim_run_result *out);

#endif
