/* A GPU's clocks through NVML: the API is public (truewatt.h, "GPU
 * clocks"); these helpers of its implementation and tests are not. */
#ifndef TW_SENSOR_NVML_CLOCKS_H
#define TW_SENSOR_NVML_CLOCKS_H

#include <stdbool.h>
#include <stddef.h>

#include "truewatt.h"

/* The entry of memory clock mem_mhz, or NULL. */
const tw_clock_mem *tw_clock_table_find(const tw_clock_table *t, unsigned mem_mhz);

/* Whether mhz is in list[0..n). */
bool tw_clock_in(const unsigned *list, size_t n, unsigned mhz);
/* The supported clocks nearest to mhz: the highest one below it and the lowest
 * one above it (0 when there is none on that side). */
void tw_clock_nearest(const unsigned *list, size_t n, unsigned mhz, unsigned *below, unsigned *above);

/* Whether the last failed call of this handle was refused for permission. */
bool tw_clocks_denied(const tw_clocks *c);

#endif
