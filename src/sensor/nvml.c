/* The NVML backend: placeholder until the real one lands (it says why it is
 * unavailable, as every backend must). */
#include <stdio.h>

#include "core/error.h"
#include "sensor/backend.h"

static bool nvml_available(char *why, size_t why_len)
{
    snprintf(why, why_len, "not built yet");
    return false;
}

static tw_status nvml_open(const tw_sensor_config *cfg, void **state)
{
    return tw_fail(TW_EUNAVAIL, "nvml backend not built yet");
}

const tw_backend tw_backend_nvml = {
    .abi = TW_BACKEND_ABI,
    .name = "nvml",
    .description = "NVIDIA GPUs through libnvidia-ml (dlopen)",
    .available = nvml_available,
    .open = nvml_open,
};
