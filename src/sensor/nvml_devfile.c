/* A GPU's device file number from NVML; see nvml_devfile.h. */
#include "core/error.h"
#include "sensor/nvml_devfile.h"
#include "sensor/nvml_lib.h"

tw_status tw_nvml_minor_number(const char *library, unsigned index, unsigned *minor)
{
    const tw_nvml_api *a = NULL;
    tw_status st = tw_nvml_acquire(library, true, &a);
    if (st != TW_OK) return st;
    nvmlDevice_t dev;
    if (!a->nvmlDeviceGetMinorNumber)
        st = tw_fail(TW_EUNSUPPORTED, "nvmlDeviceGetMinorNumber is not in %s", tw_nvml_path());
    else if (NVML_CALL(a, nvmlDeviceGetHandleByIndex, index, &dev) != NVML_SUCCESS)
        st = tw_fail(TW_EUNAVAIL, "%s", tw_last_error());
    else if (NVML_CALL(a, nvmlDeviceGetMinorNumber, dev, minor) != NVML_SUCCESS)
        st = tw_fail(TW_EUNAVAIL, "%s", tw_last_error());
    tw_nvml_release();
    return st;
}
