/* A fake libnvidia-ml.so.1 for the tests of the nvml backend, driven by the
 * simulator's exact true power (the H100 profile of a tw_scenario) on the
 * real clocks: simulated time is CLOCK_MONOTONIC seconds since
 * $TW_FAKE_NVML_T0_MONO_NS (else since the first nvmlInit), so a test can
 * compare what the backend read with the exact truth.
 *
 * What it answers at simulated time t, with u the last 100 ms update
 * instant (u = floor(t / 0.1) * 0.1):
 *   nvmlDeviceGetPowerUsage, field 185   mean power over (u - 1 s, u]
 *   field 186                            mean power over (u - 25 ms, u]
 *   fields 185/186, memory scope         40 W
 *   nvmlDeviceGetTotalEnergyConsumption  1e6 mJ + the energy over (0, u]
 *   nvmlDeviceGetSamples (power)         the last 128 samples of 20 ms, each
 *                                        the mean power of its interval
 *   clocks 1980 (SM) / 2619 (MEM) MHz under load (true power above active
 *   idle), else 345 / 2619; temperature 40 C; memory used 1024 MiB.
 * Field and sample timestamps are CLOCK_REALTIME microseconds: a sample's is
 * the end of its interval; a field's is the time of the call, as on a real
 * H100 (measured: within 10 us of the query), or the update instant u with
 * TW_FAKE_NVML_FIELD_TIMESTAMP=update.
 *
 * Environment, read at the first nvmlInit (again after the last nvmlShutdown):
 *   TW_FAKE_NVML_SCENARIO=path       kernels CSV (name,start_s,duration_s,power_w); else idle
 *   TW_FAKE_NVML_T0_MONO_NS=ns       simulated t = 0 on CLOCK_MONOTONIC
 *   TW_FAKE_NVML_DEVICES=N           devices (default 1, at most 16)
 *   TW_FAKE_NVML_UNSUPPORTED=list    of power_usage,185,186,mem,energy,samples,clocks,
 *                                    temperature,memory: NVML_ERROR_NOT_SUPPORTED
 *   TW_FAKE_NVML_INIT_ERROR=code     nvmlInit fails with that code
 *   TW_FAKE_NVML_LOST_AFTER_S=x      every device call: GPU_IS_LOST from simulated t >= x
 *   TW_FAKE_NVML_LOST_CODE=code      ... or this code instead (e.g. 999, NVML_ERROR_UNKNOWN)
 *   TW_FAKE_NVML_ENERGY_COST_US=n    the energy call sleeps n us (a real H100: ~4000)
 *   TW_FAKE_NVML_FIELD_TIMESTAMP=    call (default) or update: what a field's timestamp is
 * Thread-safe: one mutex around the state. */
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sensor/nvml_api.h"
#include "truewatt.h"

#define FAKE_API __attribute__((visibility("default")))

/* The exported API (prototypes for -Wmissing-prototypes; checked against
 * nvml_api.h's pointer types at the end of the file). */
FAKE_API const char *nvmlErrorString(nvmlReturn_t r);
FAKE_API nvmlReturn_t nvmlInit_v2(void);
FAKE_API nvmlReturn_t nvmlShutdown(void);
FAKE_API nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *count);
FAKE_API nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device);
FAKE_API nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char *uuid, unsigned int length);
FAKE_API nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char *name, unsigned int length);
FAKE_API nvmlReturn_t nvmlSystemGetDriverVersion(char *version, unsigned int length);
FAKE_API nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t device, unsigned int *power_mw);
FAKE_API nvmlReturn_t nvmlDeviceGetFieldValues(nvmlDevice_t device, int valuesCount, nvmlFieldValue_t *values);
FAKE_API nvmlReturn_t nvmlDeviceGetSamples(nvmlDevice_t device, nvmlSamplingType_t type,
                                           unsigned long long lastSeenTimeStamp, nvmlValueType_t *sampleValType,
                                           unsigned int *sampleCount, nvmlSample_t *samples);
FAKE_API nvmlReturn_t nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t device, unsigned long long *energy_mj);
FAKE_API nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t device, nvmlClockType_t type, unsigned int *clock_mhz);
FAKE_API nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t device, nvmlTemperatureSensors_t sensorType,
                                               unsigned int *temp_c);
FAKE_API nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t *memory);

#define NS_PER_S 1000000000LL
#define MAX_DEVICES 16
#define UPDATE_NS (100 * 1000000LL)
#define SAMPLE_NS (20 * 1000000LL)
#define SAMPLE_CAP 128
#define AVG_WINDOW_S 1.0
#define INSTANT_WINDOW_S 0.025
#define MEM_POWER_MW 40000u
#define ENERGY_BASE_MJ 1000000.0
#define SM_LOAD_MHZ 1980u
#define SM_IDLE_MHZ 345u
#define MEM_MHZ 2619u
#define TEMPERATURE_C 40u
#define MEM_TOTAL_B (80ULL << 30)
#define MEM_USED_B (1024ULL << 20)

enum {
    U_POWER_USAGE = 1 << 0,
    U_185 = 1 << 1,
    U_186 = 1 << 2,
    U_MEM = 1 << 3,
    U_ENERGY = 1 << 4,
    U_SAMPLES = 1 << 5,
    U_CLOCKS = 1 << 6,
    U_TEMPERATURE = 1 << 7,
    U_MEMORY = 1 << 8
};

static const struct {
    const char *name;
    unsigned bit;
} unsupported_names[] = {
    {"power_usage", U_POWER_USAGE}, {"185", U_185},         {"186", U_186},       {"mem", U_MEM},
    {"energy", U_ENERGY},           {"samples", U_SAMPLES}, {"clocks", U_CLOCKS}, {"temperature", U_TEMPERATURE},
    {"memory", U_MEMORY},
};

struct nvmlDevice_st {
    unsigned index;
};

static struct nvmlDevice_st devices[MAX_DEVICES] = {{0}, {1}, {2},  {3},  {4},  {5},  {6},  {7},
                                                    {8}, {9}, {10}, {11}, {12}, {13}, {14}, {15}};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

static struct {
    unsigned refs;
    unsigned ndevices;
    unsigned unsupported;
    double lost_after_s; /* < 0: never */
    nvmlReturn_t lost_code;
    unsigned energy_cost_us;
    bool field_ts_update; /* field timestamps: the update instant, else the call time */
    int64_t t0_ns;        /* simulated t = 0 (CLOCK_MONOTONIC) */
    int64_t rt_off_ns;    /* CLOCK_REALTIME - CLOCK_MONOTONIC at configuration */
    tw_scenario *sc;
} F;

/* ---------------------------------------------------------------- helpers */

static int64_t clock_ns(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (int64_t)ts.tv_sec * NS_PER_S + ts.tv_nsec;
}

static int64_t floor_div(int64_t a, int64_t b) { return a / b - (a % b != 0 && (a < 0) != (b < 0)); }

static double sim_s(int64_t mono) { return (double)(mono - F.t0_ns) / (double)NS_PER_S; }

/* CLOCK_REALTIME microseconds of simulated time k * step_ns. */
static long long realtime_us(int64_t k, int64_t step_ns) { return (F.t0_ns + k * step_ns + F.rt_off_ns) / 1000; }

static double mean_w(double t0, double t1) { return tw_scenario_true_energy_j(F.sc, t0, t1) / (t1 - t0); }

static unsigned to_mw(double w) { return w <= 0 ? 0u : (unsigned)lround(w * 1000.0); }

static unsigned long env_ulong(const char *name, unsigned long dflt)
{
    const char *v = getenv(name);
    if (!v || !*v) return dflt;
    char *end;
    unsigned long x = strtoul(v, &end, 10);
    return *end ? dflt : x;
}

static void fake_complain(const char *what, const char *detail)
{
    fprintf(stderr, "fake libnvidia-ml: %s%s\n", what, detail);
}

/* Reads the environment; mu held. Returns an NVML code. */
static nvmlReturn_t configure(void)
{
    unsigned long n = env_ulong("TW_FAKE_NVML_DEVICES", 1);
    F.ndevices = n > MAX_DEVICES ? MAX_DEVICES : (unsigned)n;
    F.energy_cost_us = (unsigned)env_ulong("TW_FAKE_NVML_ENERGY_COST_US", 0);
    const char *lost = getenv("TW_FAKE_NVML_LOST_AFTER_S");
    F.lost_after_s = lost && *lost ? strtod(lost, NULL) : -1.0;
    F.lost_code = (nvmlReturn_t)env_ulong("TW_FAKE_NVML_LOST_CODE", NVML_ERROR_GPU_IS_LOST);

    const char *fts = getenv("TW_FAKE_NVML_FIELD_TIMESTAMP");
    F.field_ts_update = fts && strcmp(fts, "update") == 0;
    if (fts && *fts && strcmp(fts, "update") != 0 && strcmp(fts, "call") != 0) {
        fake_complain("TW_FAKE_NVML_FIELD_TIMESTAMP is call or update, not ", fts);
        return NVML_ERROR_INVALID_ARGUMENT;
    }

    F.unsupported = 0;
    const char *list = getenv("TW_FAKE_NVML_UNSUPPORTED");
    if (list && *list) {
        char buf[256];
        snprintf(buf, sizeof buf, "%s", list);
        char *save = NULL;
        for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
            unsigned bit = 0;
            for (size_t i = 0; i < sizeof unsupported_names / sizeof unsupported_names[0]; i++)
                if (strcmp(tok, unsupported_names[i].name) == 0) bit = unsupported_names[i].bit;
            if (!bit) {
                fake_complain("unknown TW_FAKE_NVML_UNSUPPORTED item: ", tok);
                return NVML_ERROR_INVALID_ARGUMENT;
            }
            F.unsupported |= bit;
        }
    }

    const char *t0 = getenv("TW_FAKE_NVML_T0_MONO_NS");
    F.t0_ns = t0 && *t0 ? (int64_t)strtoll(t0, NULL, 10) : clock_ns(CLOCK_MONOTONIC);
    int64_t a = clock_ns(CLOCK_MONOTONIC);
    int64_t r = clock_ns(CLOCK_REALTIME);
    int64_t b = clock_ns(CLOCK_MONOTONIC);
    F.rt_off_ns = r - (a + (b - a) / 2);

    const char *path = getenv("TW_FAKE_NVML_SCENARIO");
    tw_status st = path && *path ? tw_scenario_load(path, TW_SIM_H100, &F.sc) : tw_scenario_new(TW_SIM_H100, &F.sc);
    if (st != TW_OK) {
        fake_complain("TW_FAKE_NVML_SCENARIO: ", tw_last_error());
        F.sc = NULL;
        return NVML_ERROR_UNKNOWN;
    }
    return NVML_SUCCESS;
}

/* Checks a device call; on NVML_SUCCESS mu is held and *now is the call time. */
static nvmlReturn_t enter(nvmlDevice_t d, int64_t *now)
{
    pthread_mutex_lock(&mu);
    nvmlReturn_t r = NVML_SUCCESS;
    if (F.refs == 0)
        r = NVML_ERROR_UNINITIALIZED;
    else if (!d || d < devices || d >= devices + F.ndevices)
        r = NVML_ERROR_INVALID_ARGUMENT;
    else {
        *now = clock_ns(CLOCK_MONOTONIC);
        if (F.lost_after_s >= 0 && sim_s(*now) >= F.lost_after_s) r = F.lost_code;
    }
    if (r != NVML_SUCCESS) pthread_mutex_unlock(&mu);
    return r;
}

static nvmlReturn_t leave(nvmlReturn_t r)
{
    pthread_mutex_unlock(&mu);
    return r;
}

/* The last update instant at or before `now`, as an index of 100 ms steps. */
static int64_t update_k(int64_t now) { return floor_div(now - F.t0_ns, UPDATE_NS); }

static double update_s(int64_t k) { return (double)k * ((double)UPDATE_NS / NS_PER_S); }

/* ---------------------------------------------------------------- the API */

FAKE_API const char *nvmlErrorString(nvmlReturn_t r)
{
    switch (r) {
    case NVML_SUCCESS:
        return "Success";
    case NVML_ERROR_UNINITIALIZED:
        return "Uninitialized";
    case NVML_ERROR_INVALID_ARGUMENT:
        return "Invalid Argument";
    case NVML_ERROR_NOT_SUPPORTED:
        return "Not Supported";
    case NVML_ERROR_NO_PERMISSION:
        return "Insufficient Permissions";
    case NVML_ERROR_NOT_FOUND:
        return "Not Found";
    case NVML_ERROR_INSUFFICIENT_SIZE:
        return "Insufficient Size";
    case NVML_ERROR_DRIVER_NOT_LOADED:
        return "Driver Not Loaded";
    case NVML_ERROR_GPU_IS_LOST:
        return "GPU is lost";
    case NVML_ERROR_LIB_RM_VERSION_MISMATCH:
        return "RM has detected an NVML/RM version mismatch.";
    default:
        return "Unknown Error";
    }
}

FAKE_API nvmlReturn_t nvmlInit_v2(void)
{
    pthread_mutex_lock(&mu);
    nvmlReturn_t r = NVML_SUCCESS;
    if (F.refs == 0) {
        unsigned long code = env_ulong("TW_FAKE_NVML_INIT_ERROR", 0);
        r = code ? (nvmlReturn_t)code : configure();
    }
    if (r == NVML_SUCCESS) F.refs++;
    pthread_mutex_unlock(&mu);
    return r;
}

FAKE_API nvmlReturn_t nvmlShutdown(void)
{
    pthread_mutex_lock(&mu);
    nvmlReturn_t r = NVML_SUCCESS;
    if (F.refs == 0)
        r = NVML_ERROR_UNINITIALIZED;
    else if (--F.refs == 0) {
        tw_scenario_free(F.sc);
        F.sc = NULL;
    }
    pthread_mutex_unlock(&mu);
    return r;
}

FAKE_API nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *count)
{
    pthread_mutex_lock(&mu);
    nvmlReturn_t r = NVML_SUCCESS;
    if (F.refs == 0)
        r = NVML_ERROR_UNINITIALIZED;
    else if (!count)
        r = NVML_ERROR_INVALID_ARGUMENT;
    else
        *count = F.ndevices;
    pthread_mutex_unlock(&mu);
    return r;
}

FAKE_API nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device)
{
    pthread_mutex_lock(&mu);
    nvmlReturn_t r = NVML_SUCCESS;
    if (F.refs == 0)
        r = NVML_ERROR_UNINITIALIZED;
    else if (!device || index >= F.ndevices)
        r = NVML_ERROR_INVALID_ARGUMENT;
    else
        *device = &devices[index];
    pthread_mutex_unlock(&mu);
    return r;
}

static nvmlReturn_t copy_text(const char *text, char *buf, unsigned int length)
{
    if (!buf) return NVML_ERROR_INVALID_ARGUMENT;
    if (strlen(text) + 1 > length) return NVML_ERROR_INSUFFICIENT_SIZE;
    memcpy(buf, text, strlen(text) + 1);
    return NVML_SUCCESS;
}

FAKE_API nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char *uuid, unsigned int length)
{
    int64_t now;
    nvmlReturn_t r = enter(device, &now);
    if (r != NVML_SUCCESS) return r;
    char text[NVML_DEVICE_UUID_BUFFER_SIZE];
    snprintf(text, sizeof text, "GPU-fake-%04u-0000-0000-000000000000", device->index);
    return leave(copy_text(text, uuid, length));
}

FAKE_API nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char *name, unsigned int length)
{
    int64_t now;
    nvmlReturn_t r = enter(device, &now);
    if (r != NVML_SUCCESS) return r;
    return leave(copy_text("Fake H100", name, length));
}

FAKE_API nvmlReturn_t nvmlSystemGetDriverVersion(char *version, unsigned int length)
{
    return copy_text("fake-580.0", version, length);
}

FAKE_API nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t device, unsigned int *power_mw)
{
    int64_t now;
    nvmlReturn_t r = enter(device, &now);
    if (r != NVML_SUCCESS) return r;
    if (F.unsupported & U_POWER_USAGE) return leave(NVML_ERROR_NOT_SUPPORTED);
    if (!power_mw) return leave(NVML_ERROR_INVALID_ARGUMENT);
    double u = update_s(update_k(now));
    *power_mw = to_mw(mean_w(u - AVG_WINDOW_S, u));
    return leave(NVML_SUCCESS);
}

FAKE_API nvmlReturn_t nvmlDeviceGetFieldValues(nvmlDevice_t device, int valuesCount, nvmlFieldValue_t *values)
{
    int64_t now;
    nvmlReturn_t r = enter(device, &now);
    if (r != NVML_SUCCESS) return r;
    if (valuesCount < 0 || (valuesCount > 0 && !values)) return leave(NVML_ERROR_INVALID_ARGUMENT);
    int64_t k = update_k(now);
    double u = update_s(k);
    for (int i = 0; i < valuesCount; i++) {
        nvmlFieldValue_t *f = &values[i];
        bool avg = f->fieldId == NVML_FI_DEV_POWER_AVERAGE, inst = f->fieldId == NVML_FI_DEV_POWER_INSTANT;
        bool gpu = f->scopeId == NVML_POWER_SCOPE_GPU, mem = f->scopeId == NVML_POWER_SCOPE_MEMORY;
        f->timestamp = F.field_ts_update ? realtime_us(k, UPDATE_NS) : (now + F.rt_off_ns) / 1000;
        f->latencyUsec = 0;
        f->valueType = NVML_VALUE_TYPE_UNSIGNED_INT;
        f->value.ullVal = 0;
        f->nvmlReturn = NVML_SUCCESS;
        if ((!avg && !inst) || (!gpu && !mem) || (avg && (F.unsupported & U_185)) ||
            (inst && (F.unsupported & U_186)) || (mem && (F.unsupported & U_MEM)))
            f->nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
        else if (mem)
            f->value.uiVal = MEM_POWER_MW;
        else if (avg)
            f->value.uiVal = to_mw(mean_w(u - AVG_WINDOW_S, u));
        else
            f->value.uiVal = to_mw(mean_w(u - INSTANT_WINDOW_S, u));
    }
    return leave(NVML_SUCCESS);
}

FAKE_API nvmlReturn_t nvmlDeviceGetSamples(nvmlDevice_t device, nvmlSamplingType_t type,
                                           unsigned long long lastSeenTimeStamp, nvmlValueType_t *sampleValType,
                                           unsigned int *sampleCount, nvmlSample_t *samples)
{
    int64_t now;
    nvmlReturn_t r = enter(device, &now);
    if (r != NVML_SUCCESS) return r;
    if (type != NVML_TOTAL_POWER_SAMPLES || (F.unsupported & U_SAMPLES)) return leave(NVML_ERROR_NOT_SUPPORTED);
    if (!sampleCount || !sampleValType) return leave(NVML_ERROR_INVALID_ARGUMENT);
    *sampleValType = NVML_VALUE_TYPE_UNSIGNED_INT;
    if (!samples) {
        *sampleCount = SAMPLE_CAP;
        return leave(NVML_SUCCESS);
    }
    /* Sample j covers ((j - 1) * 20 ms, j * 20 ms]; the buffer holds the last SAMPLE_CAP. */
    int64_t last = floor_div(now - F.t0_ns, SAMPLE_NS);
    unsigned n = 0;
    double dt = (double)SAMPLE_NS / NS_PER_S;
    for (int64_t j = last - SAMPLE_CAP + 1; j <= last && n < *sampleCount; j++) {
        long long ts = realtime_us(j, SAMPLE_NS);
        if (ts <= 0 || (unsigned long long)ts <= lastSeenTimeStamp) continue;
        double t = (double)j * dt;
        samples[n].timeStamp = (unsigned long long)ts;
        samples[n].sampleValue.ullVal = 0;
        samples[n].sampleValue.uiVal = to_mw(mean_w(t - dt, t));
        n++;
    }
    *sampleCount = n;
    return leave(n ? NVML_SUCCESS : NVML_ERROR_NOT_FOUND);
}

FAKE_API nvmlReturn_t nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t device, unsigned long long *energy_mj)
{
    int64_t now;
    nvmlReturn_t r = enter(device, &now);
    if (r != NVML_SUCCESS) return r;
    unsigned cost_us = F.energy_cost_us;
    pthread_mutex_unlock(&mu);
    if (cost_us) {
        struct timespec ts = {(time_t)(cost_us / 1000000u), (long)(cost_us % 1000000u) * 1000L};
        nanosleep(&ts, NULL);
    }
    r = enter(device, &now);
    if (r != NVML_SUCCESS) return r;
    if (F.unsupported & U_ENERGY) return leave(NVML_ERROR_NOT_SUPPORTED);
    if (!energy_mj) return leave(NVML_ERROR_INVALID_ARGUMENT);
    double u = update_s(update_k(now));
    *energy_mj = (unsigned long long)llround(ENERGY_BASE_MJ + 1000.0 * tw_scenario_true_energy_j(F.sc, 0.0, u));
    return leave(NVML_SUCCESS);
}

FAKE_API nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t device, nvmlClockType_t type, unsigned int *clock_mhz)
{
    int64_t now;
    nvmlReturn_t r = enter(device, &now);
    if (r != NVML_SUCCESS) return r;
    if (F.unsupported & U_CLOCKS) return leave(NVML_ERROR_NOT_SUPPORTED);
    if (!clock_mhz) return leave(NVML_ERROR_INVALID_ARGUMENT);
    bool load = tw_scenario_true_power_w(F.sc, sim_s(now)) > tw_scenario_active_idle_w(F.sc) + 0.5;
    switch (type) {
    case NVML_CLOCK_GRAPHICS:
    case NVML_CLOCK_SM:
        *clock_mhz = load ? SM_LOAD_MHZ : SM_IDLE_MHZ;
        return leave(NVML_SUCCESS);
    case NVML_CLOCK_MEM:
        *clock_mhz = MEM_MHZ;
        return leave(NVML_SUCCESS);
    default:
        return leave(NVML_ERROR_NOT_SUPPORTED);
    }
}

FAKE_API nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t device, nvmlTemperatureSensors_t sensorType,
                                               unsigned int *temp_c)
{
    int64_t now;
    nvmlReturn_t r = enter(device, &now);
    if (r != NVML_SUCCESS) return r;
    if (F.unsupported & U_TEMPERATURE) return leave(NVML_ERROR_NOT_SUPPORTED);
    if (!temp_c || sensorType != NVML_TEMPERATURE_GPU) return leave(NVML_ERROR_INVALID_ARGUMENT);
    *temp_c = TEMPERATURE_C;
    return leave(NVML_SUCCESS);
}

FAKE_API nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t *memory)
{
    int64_t now;
    nvmlReturn_t r = enter(device, &now);
    if (r != NVML_SUCCESS) return r;
    if (F.unsupported & U_MEMORY) return leave(NVML_ERROR_NOT_SUPPORTED);
    if (!memory) return leave(NVML_ERROR_INVALID_ARGUMENT);
    memory->total = MEM_TOTAL_B;
    memory->used = MEM_USED_B;
    memory->free = MEM_TOTAL_B - MEM_USED_B;
    return leave(NVML_SUCCESS);
}

/* The definitions above have exactly the types the backend calls through. */
#define SAME_TYPE(fn, type) _Static_assert(__builtin_types_compatible_p(__typeof__(&fn), type), #fn " is a " #type)
SAME_TYPE(nvmlInit_v2, nvmlInit_fn);
SAME_TYPE(nvmlShutdown, nvmlShutdown_fn);
SAME_TYPE(nvmlErrorString, nvmlErrorString_fn);
SAME_TYPE(nvmlDeviceGetCount_v2, nvmlDeviceGetCount_fn);
SAME_TYPE(nvmlDeviceGetHandleByIndex_v2, nvmlDeviceGetHandleByIndex_fn);
SAME_TYPE(nvmlDeviceGetUUID, nvmlDeviceGetUUID_fn);
SAME_TYPE(nvmlDeviceGetName, nvmlDeviceGetName_fn);
SAME_TYPE(nvmlSystemGetDriverVersion, nvmlSystemGetDriverVersion_fn);
SAME_TYPE(nvmlDeviceGetPowerUsage, nvmlDeviceGetPowerUsage_fn);
SAME_TYPE(nvmlDeviceGetFieldValues, nvmlDeviceGetFieldValues_fn);
SAME_TYPE(nvmlDeviceGetSamples, nvmlDeviceGetSamples_fn);
SAME_TYPE(nvmlDeviceGetTotalEnergyConsumption, nvmlDeviceGetTotalEnergyConsumption_fn);
SAME_TYPE(nvmlDeviceGetClockInfo, nvmlDeviceGetClockInfo_fn);
SAME_TYPE(nvmlDeviceGetTemperature, nvmlDeviceGetTemperature_fn);
SAME_TYPE(nvmlDeviceGetMemoryInfo, nvmlDeviceGetMemoryInfo_fn);
