/* The loaded libnvidia-ml, shared by everything in truewatt that talks to
 * NVML (the "nvml" sensor backend, the clock reader and locker): loaded with
 * dlopen once per process and reference-counted under a mutex (nvmlInit /
 * nvmlShutdown are reference-counted by NVML too), its functions resolved
 * into one table with the required ones checked. Internal to the library. */
#ifndef TW_SENSOR_NVML_LIB_H
#define TW_SENSOR_NVML_LIB_H

#include <stdbool.h>
#include <stddef.h>

#include "sensor/nvml_api.h"
#include "truewatt.h"

/* Member names are the NVML names; versioned entry points resolve to the
 * newest one present (nvmlInit_v2, else nvmlInit). Every member after
 * nvmlDeviceGetName is optional: NULL when this driver lacks it. */
typedef struct tw_nvml_api {
    nvmlInit_fn nvmlInit;
    nvmlShutdown_fn nvmlShutdown;
    nvmlErrorString_fn nvmlErrorString;
    nvmlDeviceGetCount_fn nvmlDeviceGetCount;
    nvmlDeviceGetHandleByIndex_fn nvmlDeviceGetHandleByIndex;
    nvmlDeviceGetUUID_fn nvmlDeviceGetUUID;
    nvmlDeviceGetName_fn nvmlDeviceGetName;
    /* optional: the sensor leaves a reading whose function is missing out, with a note */
    nvmlDeviceGetPowerUsage_fn nvmlDeviceGetPowerUsage;
    nvmlDeviceGetFieldValues_fn nvmlDeviceGetFieldValues;
    nvmlDeviceGetSamples_fn nvmlDeviceGetSamples;
    nvmlDeviceGetTotalEnergyConsumption_fn nvmlDeviceGetTotalEnergyConsumption;
    nvmlDeviceGetClockInfo_fn nvmlDeviceGetClockInfo;
    nvmlDeviceGetTemperature_fn nvmlDeviceGetTemperature;
    nvmlDeviceGetMemoryInfo_fn nvmlDeviceGetMemoryInfo;
    nvmlDeviceGetArchitecture_fn nvmlDeviceGetArchitecture;
    nvmlDeviceGetEnforcedPowerLimit_fn nvmlDeviceGetEnforcedPowerLimit;
    nvmlSystemGetDriverVersion_fn nvmlSystemGetDriverVersion;
    nvmlDeviceGetProcessUtilization_fn nvmlDeviceGetProcessUtilization; /* the exporter's per-process estimate */
    nvmlDeviceGetMinorNumber_fn nvmlDeviceGetMinorNumber;               /* the Slurm plugin's device files */
    /* optional: clocks (nvml_clocks.c says "not supported by this driver" when one is missing) */
    nvmlDeviceGetMaxClockInfo_fn nvmlDeviceGetMaxClockInfo;
    nvmlDeviceGetSupportedMemoryClocks_fn nvmlDeviceGetSupportedMemoryClocks;
    nvmlDeviceGetSupportedGraphicsClocks_fn nvmlDeviceGetSupportedGraphicsClocks;
    nvmlDeviceGetCurrentClocksEventReasons_fn nvmlDeviceGetCurrentClocksEventReasons;
    nvmlDeviceSetGpuLockedClocks_fn nvmlDeviceSetGpuLockedClocks;
    nvmlDeviceResetGpuLockedClocks_fn nvmlDeviceResetGpuLockedClocks;
    nvmlDeviceSetMemoryLockedClocks_fn nvmlDeviceSetMemoryLockedClocks;
    nvmlDeviceResetMemoryLockedClocks_fn nvmlDeviceResetMemoryLockedClocks;
    nvmlDeviceGetMigMode_fn nvmlDeviceGetMigMode;
    nvmlDeviceGetMaxMigDeviceCount_fn nvmlDeviceGetMaxMigDeviceCount;
    nvmlDeviceGetMigDeviceHandleByIndex_fn nvmlDeviceGetMigDeviceHandleByIndex;
    nvmlDeviceGetDeviceHandleFromMigDeviceHandle_fn nvmlDeviceGetDeviceHandleFromMigDeviceHandle;
    nvmlDeviceGetAttributes_fn nvmlDeviceGetAttributes;
} tw_nvml_api;

/* Takes a reference on the library, loading it and calling nvmlInit first
 * when no reference is held: `library` when not NULL or empty, else
 * $TW_NVML_LIBRARY, else libnvidia-ml.so.1 / libnvidia-ml.so. While loaded,
 * another explicit path is refused (TW_EINVAL), unless any_loaded. */
tw_status tw_nvml_acquire(const char *library, bool any_loaded, const tw_nvml_api **out);
/* Drops a reference; the last one calls nvmlShutdown and unloads the library. */
void tw_nvml_release(void);
/* The name the library was loaded by (valid while a reference is held). */
const char *tw_nvml_path(void);

/* NVML's message for a code ("unknown NVML error" when it has none). */
const char *tw_nvml_text(const tw_nvml_api *a, nvmlReturn_t r);
/* The status a failed NVML call maps to. */
tw_status tw_nvml_status_of(nvmlReturn_t r);
/* Records a failed call as "function: NVML's message (code)" in
 * tw_last_error (nothing for NVML_SUCCESS or also_ok); returns r. */
nvmlReturn_t tw_nvml_check(const tw_nvml_api *a, nvmlReturn_t r, const char *fn, nvmlReturn_t also_ok);

/* Every NVML call goes through these: the status is returned and, on
 * failure, recorded with the function's name and NVML's own message. */
#define NVML_CALL(a, fn, ...) tw_nvml_check((a), (a)->fn(__VA_ARGS__), #fn, NVML_SUCCESS)
/* The same where one more code is an expected answer (NOT_FOUND: no new samples). */
#define NVML_CALL_OR(a, ok, fn, ...) tw_nvml_check((a), (a)->fn(__VA_ARGS__), #fn, (ok))

/* The device `spec` names: an index ("0") or a UUID ("GPU-..."); its index,
 * UUID and name (buffers of NVML_DEVICE_UUID_V2_BUFFER_SIZE and
 * NVML_DEVICE_NAME_V2_BUFFER_SIZE) when those are not NULL. TW_ENOTFOUND
 * lists the devices there are. */
tw_status tw_nvml_pick_device(const tw_nvml_api *a, const char *spec, nvmlDevice_t *dev, unsigned *index, char *uuid,
                              char *name);

#endif
