/* The loaded libnvidia-ml (nvml_lib.h): one per process, reference-counted
 * under a mutex, so sensors and the clock reader for several devices can be
 * open at once in different threads. */
#include "sensor/nvml_lib.h"

#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/dl.h"
#include "core/error.h"

#define DEFAULT_SONAME "libnvidia-ml.so.1"

#define SYMBOL(member, required, newest, older)                                                                        \
    {                                                                                                                  \
        {newest, older}, offsetof(tw_nvml_api, member), required                                                       \
    }

static const tw_dl_symbol api_symbols[] = {
    SYMBOL(nvmlInit, 1, "nvmlInit_v2", "nvmlInit"),
    SYMBOL(nvmlShutdown, 1, "nvmlShutdown", NULL),
    SYMBOL(nvmlErrorString, 1, "nvmlErrorString", NULL),
    SYMBOL(nvmlDeviceGetCount, 1, "nvmlDeviceGetCount_v2", "nvmlDeviceGetCount"),
    SYMBOL(nvmlDeviceGetHandleByIndex, 1, "nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex"),
    SYMBOL(nvmlDeviceGetUUID, 1, "nvmlDeviceGetUUID", NULL),
    SYMBOL(nvmlDeviceGetName, 1, "nvmlDeviceGetName", NULL),
    SYMBOL(nvmlDeviceGetPowerUsage, 0, "nvmlDeviceGetPowerUsage", NULL),
    SYMBOL(nvmlDeviceGetFieldValues, 0, "nvmlDeviceGetFieldValues", NULL),
    SYMBOL(nvmlDeviceGetSamples, 0, "nvmlDeviceGetSamples", NULL),
    SYMBOL(nvmlDeviceGetTotalEnergyConsumption, 0, "nvmlDeviceGetTotalEnergyConsumption", NULL),
    SYMBOL(nvmlDeviceGetClockInfo, 0, "nvmlDeviceGetClockInfo", NULL),
    SYMBOL(nvmlDeviceGetTemperature, 0, "nvmlDeviceGetTemperature", NULL),
    SYMBOL(nvmlSystemGetDriverVersion, 0, "nvmlSystemGetDriverVersion", NULL),
    SYMBOL(nvmlDeviceGetMemoryInfo, 0, "nvmlDeviceGetMemoryInfo", NULL),
    SYMBOL(nvmlDeviceGetArchitecture, 0, "nvmlDeviceGetArchitecture", NULL),
    SYMBOL(nvmlDeviceGetEnforcedPowerLimit, 0, "nvmlDeviceGetEnforcedPowerLimit", NULL),
    SYMBOL(nvmlDeviceGetProcessUtilization, 0, "nvmlDeviceGetProcessUtilization", NULL),
    SYMBOL(nvmlDeviceGetMinorNumber, 0, "nvmlDeviceGetMinorNumber", NULL),
    SYMBOL(nvmlDeviceGetMaxClockInfo, 0, "nvmlDeviceGetMaxClockInfo", NULL),
    SYMBOL(nvmlDeviceGetSupportedMemoryClocks, 0, "nvmlDeviceGetSupportedMemoryClocks", NULL),
    SYMBOL(nvmlDeviceGetSupportedGraphicsClocks, 0, "nvmlDeviceGetSupportedGraphicsClocks", NULL),
    SYMBOL(nvmlDeviceGetCurrentClocksEventReasons, 0, "nvmlDeviceGetCurrentClocksEventReasons",
           "nvmlDeviceGetCurrentClocksThrottleReasons"),
    SYMBOL(nvmlDeviceSetGpuLockedClocks, 0, "nvmlDeviceSetGpuLockedClocks", NULL),
    SYMBOL(nvmlDeviceResetGpuLockedClocks, 0, "nvmlDeviceResetGpuLockedClocks", NULL),
    SYMBOL(nvmlDeviceSetMemoryLockedClocks, 0, "nvmlDeviceSetMemoryLockedClocks", NULL),
    SYMBOL(nvmlDeviceResetMemoryLockedClocks, 0, "nvmlDeviceResetMemoryLockedClocks", NULL),
    SYMBOL(nvmlDeviceGetMigMode, 0, "nvmlDeviceGetMigMode", NULL),
    SYMBOL(nvmlDeviceGetMaxMigDeviceCount, 0, "nvmlDeviceGetMaxMigDeviceCount", NULL),
    SYMBOL(nvmlDeviceGetMigDeviceHandleByIndex, 0, "nvmlDeviceGetMigDeviceHandleByIndex", NULL),
    SYMBOL(nvmlDeviceGetDeviceHandleFromMigDeviceHandle, 0, "nvmlDeviceGetDeviceHandleFromMigDeviceHandle", NULL),
    SYMBOL(nvmlDeviceGetAttributes, 0, "nvmlDeviceGetAttributes_v2", "nvmlDeviceGetAttributes"),
};

/* The loaded library: one per process, shared by every user. */
typedef struct nvml_lib {
    void *dl;
    unsigned refs;
    char path[PATH_MAX]; /* the name it was loaded by */
    tw_nvml_api api;
} nvml_lib;

static pthread_mutex_t lib_mu = PTHREAD_MUTEX_INITIALIZER;
static nvml_lib lib;

const char *tw_nvml_text(const tw_nvml_api *a, nvmlReturn_t r)
{
    const char *s = a && a->nvmlErrorString ? a->nvmlErrorString(r) : NULL;
    return s && *s ? s : "unknown NVML error";
}

tw_status tw_nvml_status_of(nvmlReturn_t r)
{
    switch (r) {
    case NVML_ERROR_NOT_SUPPORTED:
        return TW_EUNSUPPORTED;
    case NVML_ERROR_NOT_FOUND:
        return TW_ENOTFOUND;
    case NVML_ERROR_INVALID_ARGUMENT:
        return TW_EINVAL;
    default:
        return TW_EUNAVAIL;
    }
}

nvmlReturn_t tw_nvml_check(const tw_nvml_api *a, nvmlReturn_t r, const char *fn, nvmlReturn_t also_ok)
{
    if (r != NVML_SUCCESS && r != also_ok)
        (void)tw_fail(tw_nvml_status_of(r), "%s: %s (%d)", fn, tw_nvml_text(a, r), (int)r);
    return r;
}

/* Loads the library and calls nvmlInit; lib_mu held, lib.refs == 0. */
static tw_status lib_load(const char *req, const char *from)
{
    void *dl = NULL;
    const char *name = req;
    if (req) {
        dl = dlopen(req, RTLD_NOW | RTLD_LOCAL);
        if (!dl) return tw_fail(TW_EUNAVAIL, "%s (library from %s)", tw_dl_error(), from);
    } else {
        static const char *const sonames[] = {DEFAULT_SONAME, "libnvidia-ml.so"};
        char first[512] = "";
        for (size_t i = 0; i < sizeof sonames / sizeof sonames[0] && !dl; i++) {
            dl = dlopen(sonames[i], RTLD_NOW | RTLD_LOCAL);
            if (dl)
                name = sonames[i];
            else if (i == 0)
                snprintf(first, sizeof first, "%s", tw_dl_error());
            else
                (void)dlerror();
        }
        if (!dl) return tw_fail(TW_EUNAVAIL, "%s (no NVIDIA driver here? set TW_NVML_LIBRARY)", first);
    }

    tw_nvml_api api;
    memset(&api, 0, sizeof api);
    const tw_dl_symbol *missing = tw_dl_resolve(dl, api_symbols, sizeof api_symbols / sizeof api_symbols[0], &api);
    if (missing) {
        dlclose(dl);
        return tw_fail(TW_EUNAVAIL, "%s has no %s%s%s (not a libnvidia-ml?)", name, missing->names[0],
                       missing->names[1] ? " nor " : "", missing->names[1] ? missing->names[1] : "");
    }

    if (NVML_CALL(&api, nvmlInit) != NVML_SUCCESS) {
        /* The message is in tw_last_error already; keep it past dlclose. */
        char msg[512];
        snprintf(msg, sizeof msg, "%s", tw_last_error());
        dlclose(dl);
        return tw_fail(TW_EUNAVAIL, "%s", msg);
    }
    lib.dl = dl;
    lib.api = api;
    lib.refs = 1;
    snprintf(lib.path, sizeof lib.path, "%s", name);
    return TW_OK;
}

tw_status tw_nvml_acquire(const char *library, bool any_loaded, const tw_nvml_api **out)
{
    const char *req = library && *library ? library : NULL;
    const char *from = "the sensor configuration";
    if (!req) {
        const char *env = getenv("TW_NVML_LIBRARY");
        if (env && *env) {
            req = env;
            from = "TW_NVML_LIBRARY";
        }
    }
    tw_status st = TW_OK;
    pthread_mutex_lock(&lib_mu);
    if (lib.refs > 0) {
        if (req && !any_loaded && strcmp(req, lib.path) != 0)
            st = tw_fail(TW_EINVAL, "libnvidia-ml is already loaded from '%s' by an open sensor; cannot also load '%s'",
                         lib.path, req);
        else
            lib.refs++;
    } else {
        st = lib_load(req, from);
    }
    if (st == TW_OK) *out = &lib.api;
    pthread_mutex_unlock(&lib_mu);
    return st;
}

void tw_nvml_release(void)
{
    pthread_mutex_lock(&lib_mu);
    if (lib.refs > 0 && --lib.refs == 0) {
        (void)NVML_CALL(&lib.api, nvmlShutdown);
        dlclose(lib.dl);
        memset(&lib, 0, sizeof lib);
    }
    pthread_mutex_unlock(&lib_mu);
}

const char *tw_nvml_path(void) { return lib.path; }

/* ---------------------------------------------------------------- devices */

/* "0 GPU-... (NVIDIA H100 80GB HBM3), 1 ..." into buf. */
static void list_devices(const tw_nvml_api *a, unsigned count, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (unsigned i = 0; i < count && used < len; i++) {
        nvmlDevice_t d;
        char uuid[NVML_DEVICE_UUID_V2_BUFFER_SIZE] = "?", name[NVML_DEVICE_NAME_V2_BUFFER_SIZE] = "?";
        if (NVML_CALL(a, nvmlDeviceGetHandleByIndex, i, &d) == NVML_SUCCESS) {
            (void)NVML_CALL(a, nvmlDeviceGetUUID, d, uuid, sizeof uuid);
            (void)NVML_CALL(a, nvmlDeviceGetName, d, name, sizeof name);
        }
        used += (size_t)snprintf(buf + used, len - used, "%s%u %s (%s)", i ? ", " : "", i, uuid, name);
    }
    if (count == 0) snprintf(buf, len, "none");
}

static bool all_digits(const char *p)
{
    if (!*p) return false;
    for (; *p; p++)
        if (*p < '0' || *p > '9') return false;
    return true;
}

tw_status tw_nvml_pick_device(const tw_nvml_api *a, const char *spec, nvmlDevice_t *dev, unsigned *index, char *uuid,
                              char *name)
{
    unsigned count = 0, at = 0;
    nvmlDevice_t d = NULL;
    if (NVML_CALL(a, nvmlDeviceGetCount, &count) != NVML_SUCCESS) return TW_EUNAVAIL;
    char names[1024];
    if (all_digits(spec)) {
        unsigned long idx = strtoul(spec, NULL, 10);
        if (strlen(spec) > 9 || idx >= count) {
            list_devices(a, count, names, sizeof names);
            return tw_fail(TW_ENOTFOUND, "nvml: no device %s (%u device%s: %s)", spec, count, count == 1 ? "" : "s",
                           names);
        }
        at = (unsigned)idx;
        if (NVML_CALL(a, nvmlDeviceGetHandleByIndex, at, &d) != NVML_SUCCESS) return TW_EUNAVAIL;
    } else {
        bool found = false;
        for (unsigned i = 0; i < count && !found; i++) {
            char u[NVML_DEVICE_UUID_V2_BUFFER_SIZE];
            if (NVML_CALL(a, nvmlDeviceGetHandleByIndex, i, &d) != NVML_SUCCESS) continue;
            if (NVML_CALL(a, nvmlDeviceGetUUID, d, u, sizeof u) != NVML_SUCCESS) continue;
            if (strcmp(u, spec) == 0) {
                at = i;
                found = true;
            }
        }
        if (!found) {
            list_devices(a, count, names, sizeof names);
            return tw_fail(TW_ENOTFOUND, "nvml: no device with UUID '%s' (%u device%s: %s)", spec, count,
                           count == 1 ? "" : "s", names);
        }
    }
    if (uuid && NVML_CALL(a, nvmlDeviceGetUUID, d, uuid, NVML_DEVICE_UUID_V2_BUFFER_SIZE) != NVML_SUCCESS)
        return TW_EUNAVAIL;
    if (name && NVML_CALL(a, nvmlDeviceGetName, d, name, NVML_DEVICE_NAME_V2_BUFFER_SIZE) != NVML_SUCCESS)
        return TW_EUNAVAIL;
    *dev = d;
    if (index) *index = at;
    return TW_OK;
}
