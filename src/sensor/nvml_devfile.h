/* A GPU's device file (internal): the minor number N of /dev/nvidiaN, which
 * Slurm's gres.conf names GPUs by (File=/dev/nvidiaN), and which need not
 * follow NVML's (PCI bus) order. Read only. */
#ifndef TW_SENSOR_NVML_DEVFILE_H
#define TW_SENSOR_NVML_DEVFILE_H

#include "truewatt.h"

/* The minor number of NVML GPU `index` (library: as tw_nvml_acquire takes
 * it). A driver without the call: TW_EUNSUPPORTED. */
tw_status tw_nvml_minor_number(const char *library, unsigned index, unsigned *minor);

#endif
