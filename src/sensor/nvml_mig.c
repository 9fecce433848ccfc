/* The MIG instances of a GPU: see nvml_mig.h. Only Get* calls: the MIG mode
 * and the instances are read, never changed. */
#include "sensor/nvml_mig.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "sensor/nvml_lib.h"
#include "timeline/devices.h"

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

#define MIG_PER_GPU 64 /* read per GPU (7 at most on an H100) */

/* The instances of every GPU of all[] (*mig malloc'ed; NULL when none named or none read). */
static size_t named_migs(const char *library, const char *list, const char *cuda_visible, const tw_device_info *all,
                         size_t nall, tw_mig_instance **mig)
{
    *mig = NULL;
    bool named = (list && strstr(list, "MIG-")) || (cuda_visible && strstr(cuda_visible, "MIG-"));
    if (!named || nall == 0) return 0;
    size_t cap = nall * MIG_PER_GPU, n = 0;
    if (!(*mig = calloc(cap, sizeof **mig))) return 0;
    for (size_t i = 0; i < nall; i++) {
        size_t k = 0;
        if (tw_nvml_mig_instances(library, all[i].index, *mig + n, cap - n, &k) != TW_OK) tw_clear_error();
        n += k;
    }
    return n;
}

tw_status tw_nvml_devices_resolve(const char *library, const char *list, const char *cuda_visible,
                                  const tw_device_info *all, size_t nall, size_t *pos, size_t cap, size_t *n,
                                  char *note, size_t note_len)
{
    tw_mig_instance *mig = NULL;
    size_t nmig = named_migs(library, list, cuda_visible, all, nall, &mig);
    tw_status st = tw_devices_resolve_mig(list, cuda_visible, all, nall, mig, nmig, pos, cap, n, note, note_len);
    free(mig);
    return st;
}
