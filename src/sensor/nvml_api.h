/* Our own declarations of the NVML subset truewatt uses. No nvml.h exists on
 * the build or GPU machines, so the types, constants and signatures are
 * declared here to match the real ABI (nvml.h of the R5xx drivers): the
 * backend (nvml.c) calls them through dlopen'ed pointers, the test fake
 * (tests/fakes/fake_nvml.c) defines them. Enums of nvml.h are int-sized on
 * every Linux ABI NVML ships for, so they are declared as int here. */
#ifndef TW_SENSOR_NVML_API_H
#define TW_SENSOR_NVML_API_H

#include <stddef.h>

/* ---------------------------------------------------------------- return codes (nvmlReturn_t) */

typedef int nvmlReturn_t;

#define NVML_SUCCESS 0
#define NVML_ERROR_UNINITIALIZED 1
#define NVML_ERROR_INVALID_ARGUMENT 2
#define NVML_ERROR_NOT_SUPPORTED 3
#define NVML_ERROR_NO_PERMISSION 4
#define NVML_ERROR_ALREADY_INITIALIZED 5
#define NVML_ERROR_NOT_FOUND 6
#define NVML_ERROR_INSUFFICIENT_SIZE 7
#define NVML_ERROR_INSUFFICIENT_POWER 8
#define NVML_ERROR_DRIVER_NOT_LOADED 9
#define NVML_ERROR_TIMEOUT 10
#define NVML_ERROR_IRQ_ISSUE 11
#define NVML_ERROR_LIBRARY_NOT_FOUND 12
#define NVML_ERROR_FUNCTION_NOT_FOUND 13
#define NVML_ERROR_CORRUPTED_INFOROM 14
#define NVML_ERROR_GPU_IS_LOST 15
#define NVML_ERROR_RESET_REQUIRED 16
#define NVML_ERROR_OPERATING_SYSTEM 17
#define NVML_ERROR_LIB_RM_VERSION_MISMATCH 18
#define NVML_ERROR_IN_USE 19
#define NVML_ERROR_MEMORY 20
#define NVML_ERROR_NO_DATA 21
#define NVML_ERROR_UNKNOWN 999

/* ---------------------------------------------------------------- handles and buffer sizes */

typedef struct nvmlDevice_st *nvmlDevice_t;

#define NVML_DEVICE_UUID_BUFFER_SIZE 80
#define NVML_DEVICE_UUID_V2_BUFFER_SIZE 96
#define NVML_DEVICE_NAME_BUFFER_SIZE 64
#define NVML_DEVICE_NAME_V2_BUFFER_SIZE 96

/* ---------------------------------------------------------------- enums (int-sized) */

typedef int nvmlValueType_t;
#define NVML_VALUE_TYPE_DOUBLE 0
#define NVML_VALUE_TYPE_UNSIGNED_INT 1
#define NVML_VALUE_TYPE_UNSIGNED_LONG 2
#define NVML_VALUE_TYPE_UNSIGNED_LONG_LONG 3
#define NVML_VALUE_TYPE_SIGNED_LONG_LONG 4
#define NVML_VALUE_TYPE_SIGNED_INT 5
#define NVML_VALUE_TYPE_UNSIGNED_SHORT 6

typedef int nvmlSamplingType_t;
#define NVML_TOTAL_POWER_SAMPLES 0

typedef int nvmlClockType_t;
#define NVML_CLOCK_GRAPHICS 0
#define NVML_CLOCK_SM 1
#define NVML_CLOCK_MEM 2
#define NVML_CLOCK_VIDEO 3

typedef int nvmlTemperatureSensors_t;
#define NVML_TEMPERATURE_GPU 0

/* nvmlDeviceGetCurrentClocksEventReasons bits (nvmlClocksEventReason*, formerly
 * nvmlClocksThrottleReason*): why the clocks are below the maximum. */
#define NVML_CLOCKS_EVENT_REASON_GPU_IDLE 0x1ULL
#define NVML_CLOCKS_EVENT_REASON_APPLICATIONS_CLOCKS_SETTING 0x2ULL
#define NVML_CLOCKS_EVENT_REASON_SW_POWER_CAP 0x4ULL
#define NVML_CLOCKS_EVENT_REASON_HW_SLOWDOWN 0x8ULL
#define NVML_CLOCKS_EVENT_REASON_SYNC_BOOST 0x10ULL
#define NVML_CLOCKS_EVENT_REASON_SW_THERMAL 0x20ULL
#define NVML_CLOCKS_EVENT_REASON_HW_THERMAL 0x40ULL
#define NVML_CLOCKS_EVENT_REASON_HW_POWER_BRAKE 0x80ULL
#define NVML_CLOCKS_EVENT_REASON_DISPLAY_CLOCK 0x100ULL

/* Field ids (nvmlDeviceGetFieldValues) and the power scopes that go in scopeId.
 * MODULE is 1 and MEMORY is 2 (nvmlPowerScopeType_t). */
#define NVML_FI_DEV_POWER_AVERAGE 185
#define NVML_FI_DEV_POWER_INSTANT 186
#define NVML_POWER_SCOPE_GPU 0u
#define NVML_POWER_SCOPE_MODULE 1u
#define NVML_POWER_SCOPE_MEMORY 2u

/* ---------------------------------------------------------------- structs */

typedef union nvmlValue_st {
    double dVal;
    int siVal;
    unsigned int uiVal;
    unsigned long ulVal;
    unsigned long long ullVal;
    long long sllVal;
    unsigned short usVal;
} nvmlValue_t;

typedef struct nvmlFieldValue_st {
    unsigned int fieldId;      /* in: NVML_FI_* */
    unsigned int scopeId;      /* in: NVML_POWER_SCOPE_* for the power fields (was "unused": 0) */
    long long timestamp;       /* out: CPU time of the value, microseconds since 1970 (CLOCK_REALTIME) */
    long long latencyUsec;     /* out: how long the value took to update in NVML */
    nvmlValueType_t valueType; /* out: which member of value holds it */
    nvmlReturn_t nvmlReturn;   /* out: this field's own status; value is undefined unless NVML_SUCCESS */
    nvmlValue_t value;         /* out */
} nvmlFieldValue_t;

typedef struct nvmlSample_st {
    unsigned long long timeStamp; /* CPU time, microseconds since 1970 (CLOCK_REALTIME) */
    nvmlValue_t sampleValue;      /* power samples: uiVal in mW */
} nvmlSample_t;

/* nvmlMemory_t v1 (nvmlDeviceGetMemoryInfo), bytes */
typedef struct nvmlMemory_st {
    unsigned long long total;
    unsigned long long free;
    unsigned long long used;
} nvmlMemory_t;

/* nvmlProcessUtilizationSample_t (nvmlDeviceGetProcessUtilization): one
 * process's utilisation over one of the driver's sampling periods, % */
typedef struct nvmlProcessUtilizationSample_st {
    unsigned int pid;
    unsigned long long timeStamp; /* CPU time, microseconds since 1970 (CLOCK_REALTIME) */
    unsigned int smUtil;
    unsigned int memUtil;
    unsigned int encUtil;
    unsigned int decUtil;
} nvmlProcessUtilizationSample_t;

/* nvmlDeviceAttributes_t (nvmlDeviceGetAttributes_v2): of a GPU or of a MIG instance */
typedef struct nvmlDeviceAttributes_st {
    unsigned int multiprocessorCount; /* SMs */
    unsigned int sharedCopyEngineCount;
    unsigned int sharedDecoderCount;
    unsigned int sharedEncoderCount;
    unsigned int sharedJpegCount;
    unsigned int sharedOfaCount;
    unsigned int gpuInstanceSliceCount; /* of the GPU's 7 (A100, H100) */
    unsigned int computeInstanceSliceCount;
    unsigned long long memorySizeMB;
} nvmlDeviceAttributes_t;

#define NVML_DEVICE_MIG_DISABLE 0u
#define NVML_DEVICE_MIG_ENABLE 1u

/* The layout checks: these are the sizes and offsets of nvml.h on LP64. */
_Static_assert(sizeof(nvmlProcessUtilizationSample_t) == 32, "nvmlProcessUtilizationSample_t is 32 bytes");
_Static_assert(offsetof(nvmlProcessUtilizationSample_t, smUtil) == 16, "nvmlProcessUtilizationSample_t.smUtil at 16");
_Static_assert(sizeof(nvmlValue_t) == 8, "nvmlValue_t is 8 bytes");
_Static_assert(sizeof(nvmlFieldValue_t) == 40, "nvmlFieldValue_t is 40 bytes");
_Static_assert(offsetof(nvmlFieldValue_t, timestamp) == 8, "nvmlFieldValue_t.timestamp at 8");
_Static_assert(offsetof(nvmlFieldValue_t, valueType) == 24, "nvmlFieldValue_t.valueType at 24");
_Static_assert(offsetof(nvmlFieldValue_t, value) == 32, "nvmlFieldValue_t.value at 32");
_Static_assert(sizeof(nvmlSample_t) == 16, "nvmlSample_t is 16 bytes");
_Static_assert(sizeof(nvmlMemory_t) == 24, "nvmlMemory_t v1 is 24 bytes");
_Static_assert(sizeof(nvmlDeviceAttributes_t) == 40, "nvmlDeviceAttributes_t is 40 bytes");
_Static_assert(offsetof(nvmlDeviceAttributes_t, memorySizeMB) == 32, "nvmlDeviceAttributes_t.memorySizeMB at 32");

/* ---------------------------------------------------------------- functions (pointer types) */

typedef nvmlReturn_t (*nvmlInit_fn)(void); /* nvmlInit_v2, else nvmlInit */
typedef nvmlReturn_t (*nvmlShutdown_fn)(void);
typedef const char *(*nvmlErrorString_fn)(nvmlReturn_t result);
typedef nvmlReturn_t (*nvmlDeviceGetCount_fn)(unsigned int *deviceCount);                        /* _v2, else plain */
typedef nvmlReturn_t (*nvmlDeviceGetHandleByIndex_fn)(unsigned int index, nvmlDevice_t *device); /* _v2, else plain */
typedef nvmlReturn_t (*nvmlDeviceGetUUID_fn)(nvmlDevice_t device, char *uuid, unsigned int length);
typedef nvmlReturn_t (*nvmlDeviceGetName_fn)(nvmlDevice_t device, char *name, unsigned int length);
typedef nvmlReturn_t (*nvmlSystemGetDriverVersion_fn)(char *version, unsigned int length);
typedef nvmlReturn_t (*nvmlDeviceGetPowerUsage_fn)(nvmlDevice_t device, unsigned int *power_mw);
typedef nvmlReturn_t (*nvmlDeviceGetFieldValues_fn)(nvmlDevice_t device, int valuesCount, nvmlFieldValue_t *values);
typedef nvmlReturn_t (*nvmlDeviceGetSamples_fn)(nvmlDevice_t device, nvmlSamplingType_t type,
                                                unsigned long long lastSeenTimeStamp, nvmlValueType_t *sampleValType,
                                                unsigned int *sampleCount, nvmlSample_t *samples);
typedef nvmlReturn_t (*nvmlDeviceGetTotalEnergyConsumption_fn)(nvmlDevice_t device, unsigned long long *energy_mj);
typedef nvmlReturn_t (*nvmlDeviceGetClockInfo_fn)(nvmlDevice_t device, nvmlClockType_t type, unsigned int *clock_mhz);
typedef nvmlReturn_t (*nvmlDeviceGetTemperature_fn)(nvmlDevice_t device, nvmlTemperatureSensors_t sensorType,
                                                    unsigned int *temp_c);
typedef nvmlReturn_t (*nvmlDeviceGetMemoryInfo_fn)(nvmlDevice_t device, nvmlMemory_t *memory);
/* nvmlDeviceArchitecture_t: 2 Kepler ... 7 Ampere, 8 Ada, 9 Hopper, 10 Blackwell (R470+) */
typedef nvmlReturn_t (*nvmlDeviceGetArchitecture_fn)(nvmlDevice_t device, unsigned int *arch);
/* Utilisation samples of each process since lastSeenTimeStamp (us); with
 * utilization NULL, *processSamplesCount says how many there may be;
 * NVML_ERROR_NOT_FOUND: none since then. */
typedef nvmlReturn_t (*nvmlDeviceGetProcessUtilization_fn)(nvmlDevice_t device,
                                                           nvmlProcessUtilizationSample_t *utilization,
                                                           unsigned int *processSamplesCount,
                                                           unsigned long long lastSeenTimeStamp);
/* read only: the power limit the GPU enforces, in mW */
/* the number N of the GPU's device file /dev/nvidiaN (what Slurm's gres.conf names) */
typedef nvmlReturn_t (*nvmlDeviceGetMinorNumber_fn)(nvmlDevice_t device, unsigned int *minorNumber);
typedef nvmlReturn_t (*nvmlDeviceGetEnforcedPowerLimit_fn)(nvmlDevice_t device, unsigned int *limit_mw);

/* Clocks: reading them, and locking them (root only: NVML_ERROR_NO_PERMISSION
 * otherwise; graphics locks are Volta+, memory locks Ampere+). The event
 * reasons function was nvmlDeviceGetCurrentClocksThrottleReasons before R535,
 * with the same signature. */
typedef nvmlReturn_t (*nvmlDeviceGetMaxClockInfo_fn)(nvmlDevice_t device, nvmlClockType_t type,
                                                     unsigned int *clock_mhz);
typedef nvmlReturn_t (*nvmlDeviceGetSupportedMemoryClocks_fn)(nvmlDevice_t device, unsigned int *count,
                                                              unsigned int *clocksMHz);
typedef nvmlReturn_t (*nvmlDeviceGetSupportedGraphicsClocks_fn)(nvmlDevice_t device, unsigned int memoryClockMHz,
                                                                unsigned int *count, unsigned int *clocksMHz);
typedef nvmlReturn_t (*nvmlDeviceGetCurrentClocksEventReasons_fn)(nvmlDevice_t device,
                                                                  unsigned long long *clocksEventReasons);
typedef nvmlReturn_t (*nvmlDeviceSetGpuLockedClocks_fn)(nvmlDevice_t device, unsigned int minGpuClockMHz,
                                                        unsigned int maxGpuClockMHz);
typedef nvmlReturn_t (*nvmlDeviceResetGpuLockedClocks_fn)(nvmlDevice_t device);
typedef nvmlReturn_t (*nvmlDeviceSetMemoryLockedClocks_fn)(nvmlDevice_t device, unsigned int minMemClockMHz,
                                                           unsigned int maxMemClockMHz);
typedef nvmlReturn_t (*nvmlDeviceResetMemoryLockedClocks_fn)(nvmlDevice_t device);

/* MIG, read only (never a mode or an instance changed): the mode, the
 * instances' handles (NOT_FOUND for an unused index below the maximum), an
 * instance's parent GPU, and a device's attributes (SMs, slices, memory). */
typedef nvmlReturn_t (*nvmlDeviceGetMigMode_fn)(nvmlDevice_t device, unsigned int *currentMode,
                                                unsigned int *pendingMode);
typedef nvmlReturn_t (*nvmlDeviceGetMaxMigDeviceCount_fn)(nvmlDevice_t device, unsigned int *count);
typedef nvmlReturn_t (*nvmlDeviceGetMigDeviceHandleByIndex_fn)(nvmlDevice_t device, unsigned int index,
                                                               nvmlDevice_t *migDevice);
typedef nvmlReturn_t (*nvmlDeviceGetDeviceHandleFromMigDeviceHandle_fn)(nvmlDevice_t migDevice, nvmlDevice_t *device);
typedef nvmlReturn_t (*nvmlDeviceGetAttributes_fn)(nvmlDevice_t device, nvmlDeviceAttributes_t *attributes);

#endif
