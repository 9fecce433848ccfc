/* The MIG instances of a GPU: see nvml_mig.h. Only Get* calls: the MIG mode
 * and the instances are read, never changed. */
#include "sensor/nvml_mig.h"

#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "sensor/nvml_lib.h"

/* One instance's UUID and size; false when it cannot be read. */
static bool describe(const tw_nvml_api *a, nvmlDevice_t mig, tw_mig_instance *m)
{
    if (NVML_CALL(a, nvmlDeviceGetUUID, mig, m->uuid, sizeof m->uuid) != NVML_SUCCESS) return false;
    nvmlDeviceAttributes_t at;
    memset(&at, 0, sizeof at);
    if (a->nvmlDeviceGetAttributes && a->nvmlDeviceGetAttributes(mig, &at) == NVML_SUCCESS) {
        m->multiprocessors = at.multiprocessorCount;
        m->slices = at.gpuInstanceSliceCount;
        m->memory_mib = at.memorySizeMB;
    }
    return true;
}

static bool mig_enabled(const tw_nvml_api *a, nvmlDevice_t gpu)
{
    unsigned current = NVML_DEVICE_MIG_DISABLE, pending = NVML_DEVICE_MIG_DISABLE;
    return a->nvmlDeviceGetMigMode && a->nvmlDeviceGetMaxMigDeviceCount && a->nvmlDeviceGetMigDeviceHandleByIndex &&
           a->nvmlDeviceGetMigMode(gpu, &current, &pending) == NVML_SUCCESS && current == NVML_DEVICE_MIG_ENABLE;
}

tw_status tw_nvml_mig_instances(const char *library, unsigned index, tw_mig_instance *out, size_t cap, size_t *n)
{
    *n = 0;
    const tw_nvml_api *a = NULL;
    tw_status st = tw_nvml_acquire(library, true, &a);
    if (st != TW_OK) return st;
    nvmlDevice_t gpu;
    char parent[96] = "";
    unsigned max = 0;
    if (NVML_CALL(a, nvmlDeviceGetHandleByIndex, index, &gpu) != NVML_SUCCESS ||
        NVML_CALL(a, nvmlDeviceGetUUID, gpu, parent, sizeof parent) != NVML_SUCCESS) {
        tw_nvml_release();
        return TW_EUNAVAIL;
    }
    if (mig_enabled(a, gpu) && a->nvmlDeviceGetMaxMigDeviceCount(gpu, &max) == NVML_SUCCESS) {
        for (unsigned i = 0; i < max && *n < cap; i++) {
            nvmlDevice_t mig;
            if (a->nvmlDeviceGetMigDeviceHandleByIndex(gpu, i, &mig) != NVML_SUCCESS) continue; /* unused */
            tw_mig_instance *m = &out[*n];
            memset(m, 0, sizeof *m);
            if (!describe(a, mig, m)) continue;
            snprintf(m->parent_uuid, sizeof m->parent_uuid, "%s", parent);
            m->parent_index = index;
            m->position = (unsigned)*n;
            (*n)++;
        }
    }
    tw_clear_error();
    tw_nvml_release();
    return TW_OK;
}
