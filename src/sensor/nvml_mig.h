/* The MIG instances of a GPU, through NVML (internal). Read only. */
#ifndef TW_SENSOR_NVML_MIG_H
#define TW_SENSOR_NVML_MIG_H

#include <stddef.h>

#include "timeline/mig.h"

/* The instances of NVML GPU `index` (library: as tw_nvml_acquire takes it),
 * up to cap into out, *n of them: none when MIG is off, or the driver has no
 * MIG calls. */
tw_status tw_nvml_mig_instances(const char *library, unsigned index, tw_mig_instance *out, size_t cap, size_t *n);

#endif
