/* The MIG instances of a GPU, through NVML (internal). Read only. */
#ifndef TW_SENSOR_NVML_MIG_H
#define TW_SENSOR_NVML_MIG_H

#include <stddef.h>

#include "timeline/mig.h"

/* The instances of NVML GPU `index` (library: as tw_nvml_acquire takes it),
 * up to cap into out, *n of them: none when MIG is off, or the driver has no
 * MIG calls. */
tw_status tw_nvml_mig_instances(const char *library, unsigned index, tw_mig_instance *out, size_t cap, size_t *n);

/* tw_devices_resolve_mig (timeline/devices.h) with the MIG instances of the GPUs all[0..nall)
 * read from NVML when list or cuda_visible names one ("MIG-..."; either may be NULL): a MIG
 * instance's UUID stands for its GPU, with a note. `truewatt run` and API sessions alike. */
tw_status tw_nvml_devices_resolve(const char *library, const char *list, const char *cuda_visible,
                                  const tw_device_info *all, size_t nall, size_t *pos, size_t cap, size_t *n,
                                  char *note, size_t note_len);

#endif
