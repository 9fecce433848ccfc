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
 *   fields 185/186, module scope         NOT_SUPPORTED; with TW_FAKE_NVML_MODULE_W=x (a Grace
 *                                        Hopper module): the GPU scope's value + x W (the CPU's)
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
 *   TW_FAKE_NVML_SCENARIO=path[,...] kernels CSV (name,start_s,duration_s,power_w); else idle;
 *                                    several paths: one per device, in order (the last
 *                                    one for the devices after it)
 *   TW_FAKE_NVML_T0_MONO_NS=ns       simulated t = 0 on CLOCK_MONOTONIC
 *   TW_FAKE_NVML_DEVICES=N           devices (default 1, at most 16)
 *   TW_FAKE_NVML_UUIDS=list          their UUIDs, comma-separated (default GPU-fake-000N-...)
 *   TW_FAKE_NVML_UNSUPPORTED=list    of power_usage,185,186,mem,energy,samples,clocks,
 *                                    temperature,memory: NVML_ERROR_NOT_SUPPORTED
 *   TW_FAKE_NVML_INIT_ERROR=code     nvmlInit fails with that code
 *   TW_FAKE_NVML_LOST_AFTER_S=x      every device call: GPU_IS_LOST from simulated t >= x
 *   TW_FAKE_NVML_LOST_CODE=code      ... or this code instead (e.g. 999, NVML_ERROR_UNKNOWN)
 *   TW_FAKE_NVML_ENERGY_COST_US=n    the energy call sleeps n us (a real H100: ~4000)
 *   TW_FAKE_NVML_ENERGY_SPIN_US=n    ... busy-spins n us of the calling thread's CPU (the
 *                                    H100's ~4 ms of CPU a read, on real programs 4-12 ms)
 *   TW_FAKE_NVML_ENERGY_STALL=k:us   every k-th energy call stalls us more, the odd stalls
 *                                    before it takes its value, the even ones after (a reader
 *                                    preempted on a loaded host: its call's middle is then
 *                                    us/2 after or before the value's time)
 *   TW_FAKE_NVML_NAME=text           the device name (default "Fake H100")
 *   TW_FAKE_NVML_MIG=d:sms,...[;d:...]  GPU d in MIG mode with instances of these SM counts (an
 *                                    H100's 1g: 16, 2g: 32, 3g: 60, 4g: 64, 7g: 132), each
 *                                    sms / 16 slices (at least 1) and 10240 MiB a slice; UUID of
 *                                    instance k of GPU d: MIG-3a0000DD-00KK-4000-8000-000000000000
 *                                    (hex). The other GPUs: MIG mode disabled. Nothing changes it.
 *   TW_FAKE_NVML_ARCH=n              nvmlDeviceGetArchitecture's answer (default 9, Hopper;
 *                                    "none": NVML_ERROR_NOT_SUPPORTED)
 *   TW_FAKE_NVML_POWER_LIMIT_W=x     nvmlDeviceGetEnforcedPowerLimit's answer (default 700, an
 *                                    H100 SXM's; "none": NVML_ERROR_NOT_SUPPORTED)
 *   TW_FAKE_NVML_FIELD_TIMESTAMP=    call (default) or update: what a field's timestamp is
 *   TW_FAKE_NVML_ERROR_RATE=p        each reading (power, fields, samples, energy, clocks,
 *                                    temperature, memory) fails with NVML_ERROR_UNKNOWN with
 *                                    probability p (0..1): NVML errors at random (scripts/faults)
 *   TW_FAKE_NVML_ERROR_SEED=n        ... drawn from this seed (default 1)
 *   TW_FAKE_NVML_REPLAY=path         the power is not the simulator's but a real GPU's, replayed
 *                                    from a trace.csv that `truewatt run` recorded on it (its
 *                                    energy_j, energy_j_t_s columns; results/h100/.../raw/
 *                                    *.trace.csv.gz, decompressed): the energy over (0, t] is the
 *                                    recorded counter's rise over the trace's first t seconds,
 *                                    linear between its readings, the trace looped; overrides
 *                                    TW_FAKE_NVML_SCENARIO. Tests then check truewatt against the
 *                                    trace itself, not against the simulator that the fake would
 *                                    otherwise share with the code under test.
 *   TW_FAKE_NVML_BUFFER_GAIN=x       the sample buffer's values are x times the true means (an
 *                                    H100's buffer reads 0.1-0.8 % off its counter); default 1
 *   TW_FAKE_NVML_ENERGY_DELAY_MS=x   the energy counter's update at u + x ms publishes the energy
 *                                    up to u (an H100's: ~10-14 ms); default 0
 *   TW_FAKE_NVML_DEVICE_POWER_W=list per device, a constant true power in watts (comma-separated,
 *                                    one per device, e.g. "300,120"): device d's power and energy
 *                                    are that constant instead of the scenario's (the Slurm test
 *                                    tells GPUs apart by it; tests/e2e/slurm.sh)
 *   TW_FAKE_NVML_MINORS=list         per device, its minor number (N of /dev/nvidiaN) for
 *                                    nvmlDeviceGetMinorNumber (default: its index; the Slurm test
 *                                    numbers them apart from NVML's order)
 * The exporter's knobs (a block of their own, near the end of the file):
 *   TW_FAKE_NVML_LOST_DEVICE=n       TW_FAKE_NVML_LOST_AFTER_S applies to device n only
 *   TW_FAKE_NVML_PROCESSES=list      dev:pid:sm,... nvmlDeviceGetProcessUtilization answers a
 *                                    sample per listed process of the device every 100 ms
 *                                    update (smUtil sm %, the other fields 0); @FILE: the list
 *                                    is FILE's first line, read at every call (none: no process)
 *
 * Clocks, like an H100 (driver 580): supported memory clocks 2619 and 1593 MHz,
 * each with the 110 graphics clocks 1980, 1965, ..., 345 MHz; max 1980 / 2619.
 * Locks (nvmlDevice{Set,Reset}{Gpu,Memory}LockedClocks) are per device and
 * the current clocks follow them: the clock the device would run at (above)
 * is clamped into the locked range. Event reasons: gpu_idle when not under
 * load, plus the throttle below.
 *   TW_FAKE_NVML_MEM_CLOCKS=list     supported memory clocks, MHz, highest first
 *   TW_FAKE_NVML_GFX_CLOCKS=list     graphics clocks supported with each memory clock
 *   TW_FAKE_NVML_UNSUPPORTED=...     also supported_clocks, reasons, max_clocks,
 *                                    gpu_lock, mem_lock (Set* answer NOT_SUPPORTED)
 *   TW_FAKE_NVML_CLOCK_NO_PERMISSION=1  every Set* and Reset* answers NO_PERMISSION
 *   TW_FAKE_NVML_THROTTLE=bits,mhz,s from simulated t >= s: the SM clock at most
 *                                    mhz and the event reasons include bits (e.g. 0x4)
 *   TW_FAKE_NVML_CLOCK_STATE=path    the lock state, rewritten on every Set* and
 *                                    Reset* and read back at the first nvmlInit
 *                                    (locks outlive a process, as on a real card);
 *                                    one line per device:
 *     0 gpu=unlocked mem=unlocked gpu_locks=1 gpu_resets=1 mem_locks=0 mem_resets=0
 *                                    (gpu=MIN-MAX, mem=MIN-MAX while locked)
 * Thread-safe: one mutex around the state. */
#include <limits.h>
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
FAKE_API nvmlReturn_t nvmlInitWithFlags(unsigned int flags);
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
FAKE_API nvmlReturn_t nvmlDeviceGetArchitecture(nvmlDevice_t device, unsigned int *arch);
FAKE_API nvmlReturn_t nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t device, unsigned int *limit_mw);
FAKE_API nvmlReturn_t nvmlDeviceGetMaxClockInfo(nvmlDevice_t device, nvmlClockType_t type, unsigned int *clock_mhz);
FAKE_API nvmlReturn_t nvmlDeviceGetSupportedMemoryClocks(nvmlDevice_t device, unsigned int *count,
                                                         unsigned int *clocksMHz);
FAKE_API nvmlReturn_t nvmlDeviceGetSupportedGraphicsClocks(nvmlDevice_t device, unsigned int memoryClockMHz,
                                                           unsigned int *count, unsigned int *clocksMHz);
FAKE_API nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t device,
                                                             unsigned long long *clocksEventReasons);
FAKE_API nvmlReturn_t nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t device,
                                                                unsigned long long *clocksThrottleReasons);
FAKE_API nvmlReturn_t nvmlDeviceSetGpuLockedClocks(nvmlDevice_t device, unsigned int minGpuClockMHz,
                                                   unsigned int maxGpuClockMHz);
FAKE_API nvmlReturn_t nvmlDeviceResetGpuLockedClocks(nvmlDevice_t device);
FAKE_API nvmlReturn_t nvmlDeviceSetMemoryLockedClocks(nvmlDevice_t device, unsigned int minMemClockMHz,
                                                      unsigned int maxMemClockMHz);
FAKE_API nvmlReturn_t nvmlDeviceResetMemoryLockedClocks(nvmlDevice_t device);
FAKE_API nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t device, unsigned int *currentMode, unsigned int *pendingMode);
FAKE_API nvmlReturn_t nvmlDeviceGetMaxMigDeviceCount(nvmlDevice_t device, unsigned int *count);
FAKE_API nvmlReturn_t nvmlDeviceGetMigDeviceHandleByIndex(nvmlDevice_t device, unsigned int index,
                                                          nvmlDevice_t *migDevice);
FAKE_API nvmlReturn_t nvmlDeviceGetDeviceHandleFromMigDeviceHandle(nvmlDevice_t migDevice, nvmlDevice_t *device);
FAKE_API nvmlReturn_t nvmlDeviceGetAttributes_v2(nvmlDevice_t device, nvmlDeviceAttributes_t *attributes);

#define NS_PER_S 1000000000LL
#define MAX_DEVICES 16
#define UPDATE_NS (100 * 1000000LL)
#define SAMPLE_NS (20 * 1000000LL)
#define SAMPLE_CAP 128
#define AVG_WINDOW_S 1.0
#define INSTANT_WINDOW_S 0.025
#define MEM_POWER_MW 40000u
#define ENERGY_BASE_MJ 1000000.0
#define SM_LOAD_MHZ 1980u /* also the maximum */
#define SM_IDLE_MHZ 345u
#define MEM_MHZ 2619u /* also the maximum */
#define MEM_LOW_MHZ 1593u
#define GFX_STEP_MHZ 15u
#define H100_GFX_CLOCKS 110u /* SM_LOAD_MHZ down to SM_IDLE_MHZ in GFX_STEP_MHZ steps */
#define MAX_MEM_CLOCKS 16u
#define MAX_GFX_CLOCKS 1024u
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
    U_MEMORY = 1 << 8,
    U_SUPPORTED_CLOCKS = 1 << 9,
    U_REASONS = 1 << 10,
    U_MAX_CLOCKS = 1 << 11,
    U_GPU_LOCK = 1 << 12,
    U_MEM_LOCK = 1 << 13
};

static const struct {
    const char *name;
    unsigned bit;
} unsupported_names[] = {
    {"power_usage", U_POWER_USAGE},
    {"185", U_185},
    {"186", U_186},
    {"mem", U_MEM},
    {"energy", U_ENERGY},
    {"samples", U_SAMPLES},
    {"clocks", U_CLOCKS},
    {"temperature", U_TEMPERATURE},
    {"memory", U_MEMORY},
    {"supported_clocks", U_SUPPORTED_CLOCKS},
    {"reasons", U_REASONS},
    {"max_clocks", U_MAX_CLOCKS},
    {"gpu_lock", U_GPU_LOCK},
    {"mem_lock", U_MEM_LOCK},
};

struct nvmlDevice_st {
    unsigned index;
};

#define MAX_MIG 7       /* an H100's */
#define GPU_SMS 132     /* an H100 SXM's */
#define SM_PER_SLICE 16 /* a 1g instance */
#define MIB_PER_SLICE 10240ULL

/* MIG instance k of GPU d: index MIG_BASE + d * MAX_MIG + k (never a GPU's) */
#define MIG_BASE 1000u
static struct nvmlDevice_st mig_handles[MAX_DEVICES * MAX_MIG];

static struct nvmlDevice_st devices[MAX_DEVICES] = {{0}, {1}, {2},  {3},  {4},  {5},  {6},  {7},
                                                    {8}, {9}, {10}, {11}, {12}, {13}, {14}, {15}};

/* One device's clock locks (min = max = 0: unlocked) and how often each was set and reset. */
typedef struct clock_lock {
    unsigned gpu_min, gpu_max, mem_min, mem_max;
    unsigned gpu_locks, gpu_resets, mem_locks, mem_resets;
} clock_lock;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

static struct {
    unsigned refs;
    unsigned ndevices;
    unsigned unsupported;
    double lost_after_s; /* < 0: never */
    nvmlReturn_t lost_code;
    unsigned energy_cost_us;
    unsigned energy_spin_us;
    unsigned long stall_every, stall_us, energy_calls; /* TW_FAKE_NVML_ENERGY_STALL */
    double module_w;                                   /* < 0: no module scope (not a Grace Hopper) */
    char name[96];
    bool arch_none;
    unsigned arch;
    bool field_ts_update;         /* field timestamps: the update instant, else the call time */
    int64_t t0_ns;                /* simulated t = 0 (CLOCK_MONOTONIC) */
    int64_t rt_off_ns;            /* CLOCK_REALTIME - CLOCK_MONOTONIC at configuration */
    tw_scenario *sc[MAX_DEVICES]; /* each device's true power */
    double error_rate;            /* TW_FAKE_NVML_ERROR_RATE */
    uint64_t error_state;         /* its generator's state */
    /* clocks */
    unsigned mem_clocks[MAX_MEM_CLOCKS], nmem; /* supported, highest first */
    unsigned gfx_clocks[MAX_GFX_CLOCKS], ngfx; /* supported with each memory clock */
    bool no_permission;                        /* every Set* and Reset*: NO_PERMISSION */
    unsigned long long throttle_bits;          /* event reasons added while throttled */
    unsigned throttle_mhz;                     /* the SM clock at most this while throttled */
    double throttle_after_s;                   /* < 0: never throttled */
    char state_path[4096];                     /* "": the lock state is not written */
    clock_lock locks[MAX_DEVICES];
    unsigned mig_sms[MAX_DEVICES][MAX_MIG]; /* TW_FAKE_NVML_MIG: each instance's SMs */
    unsigned nmig[MAX_DEVICES];             /* 0: MIG mode disabled */
    double buffer_gain;                     /* TW_FAKE_NVML_BUFFER_GAIN */
    int64_t energy_delay_ns;                /* TW_FAKE_NVML_ENERGY_DELAY_MS */
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

/* ---------------------------------------------------------------- replay of a real trace
 * (TW_FAKE_NVML_REPLAY): the recorded energy counter's readings, times from the first one. */
static struct {
    double *t, *e; /* s since the first reading; J above the first reading */
    size_t n;
    double p_lo, p_hi; /* the lowest and highest power between two readings */
} R;

static void fake_complain(const char *what, const char *detail);

static void replay_free(void)
{
    free(R.t);
    free(R.e);
    memset(&R, 0, sizeof R);
}

/* The column of `name` in a CSV header line; -1 when absent. */
static int csv_column(const char *header, const char *name)
{
    size_t len = strlen(name);
    int col = 0;
    for (const char *p = header;; col++) {
        size_t w = strcspn(p, ",\r\n");
        if (w == len && strncmp(p, name, len) == 0) return col;
        if (p[w] != ',') return -1;
        p += w + 1;
    }
}

/* Field `col` of a CSV line as a number; NAN when empty or not a number. */
static double csv_number(const char *line, int col)
{
    const char *p = line;
    for (int i = 0; i < col; i++) {
        p = strchr(p, ',');
        if (!p) return NAN;
        p++;
    }
    char *end;
    double v = strtod(p, &end);
    return end == p || (*end != ',' && *end != '\r' && *end != '\n' && *end) ? NAN : v;
}

static bool replay_add(double t, double e)
{
    if (R.n && (t <= R.t[R.n - 1] || e < R.e[R.n - 1])) return false;
    double *nt = realloc(R.t, (R.n + 1) * sizeof *nt);
    if (nt) R.t = nt;
    double *ne = realloc(R.e, (R.n + 1) * sizeof *ne);
    if (ne) R.e = ne;
    if (!nt || !ne) return false;
    R.t[R.n] = t;
    R.e[R.n] = e;
    R.n++;
    return true;
}

/* Loads the trace; false with a message naming the file and line. */
static bool replay_load(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fake_complain("TW_FAKE_NVML_REPLAY: cannot open ", path);
        return false;
    }
    char line[8192], why[4200] = "";
    int ce = -1, ct = -1;
    unsigned lineno = 0;
    double t0 = NAN, e0 = NAN;
    while (!why[0] && fgets(line, sizeof line, f)) {
        lineno++;
        if (line[0] == '#' || line[0] == '\n') continue;
        if (ce < 0) {
            ce = csv_column(line, "energy_j");
            ct = csv_column(line, "energy_j_t_s");
            if (ce < 0 || ct < 0) snprintf(why, sizeof why, "%s:%u: no energy_j, energy_j_t_s columns", path, lineno);
            continue;
        }
        double e = csv_number(line, ce), t = csv_number(line, ct);
        if (isnan(e) || isnan(t)) continue; /* a row of other readings */
        if (isnan(t0)) t0 = t, e0 = e;
        if (!replay_add(t - t0, e - e0))
            snprintf(why, sizeof why, "%s:%u: the energy counter goes back (or its time does)", path, lineno);
    }
    fclose(f);
    if (!why[0] && R.n < 2) snprintf(why, sizeof why, "%s: fewer than two energy_j readings", path);
    if (why[0]) {
        fake_complain("TW_FAKE_NVML_REPLAY: ", why);
        replay_free();
        return false;
    }
    R.p_lo = INFINITY;
    R.p_hi = 0;
    for (size_t i = 1; i < R.n; i++) {
        double p = (R.e[i] - R.e[i - 1]) / (R.t[i] - R.t[i - 1]);
        R.p_lo = fmin(R.p_lo, p);
        R.p_hi = fmax(R.p_hi, p);
    }
    return true;
}

/* The replayed energy over (0, t], the trace looped (t < 0: before it, at its first power). */
static double replay_energy_j(double t)
{
    double period = R.t[R.n - 1], whole = R.e[R.n - 1];
    if (t < 0) return t * (R.e[1] / R.t[1]);
    double loops = floor(t / period);
    double r = t - loops * period;
    size_t lo = 0, hi = R.n - 1; /* R.t[lo] <= r <= R.t[hi] */
    while (hi - lo > 1) {
        size_t mid = (lo + hi) / 2;
        if (R.t[mid] <= r)
            lo = mid;
        else
            hi = mid;
    }
    double frac = (r - R.t[lo]) / (R.t[hi] - R.t[lo]);
    return loops * whole + R.e[lo] + frac * (R.e[hi] - R.e[lo]);
}

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

/* A per-device list of numbers ("300,120"): out[0..MAX_DEVICES) keeps its defaults past the list's
 * end. Unset or empty: true; malformed (or a negative number): false, said with `what`. */
static bool env_device_list(const char *name, double *out, const char *what)
{
    const char *v = getenv(name);
    if (!v || !*v) return true;
    const char *p = v;
    for (unsigned d = 0; d < MAX_DEVICES; d++) {
        char *end;
        double x = strtod(p, &end);
        if (end == p || !(x >= 0) || (*end != ',' && *end != '\0')) break;
        out[d] = x;
        if (!*end) return true;
        p = end + 1;
    }
    char msg[256];
    snprintf(msg, sizeof msg, "%s is %s, one per device, not ", name, what);
    fake_complain(msg, v);
    return false;
}

/* ---- TW_FAKE_NVML_DEVICE_POWER_W: a constant power per device (a separate block, added for the Slurm test) */

static double device_power_w[MAX_DEVICES]; /* NaN: the scenario's power */

/* Reads the list; mu held. */
static nvmlReturn_t configure_device_power(void)
{
    for (unsigned d = 0; d < MAX_DEVICES; d++)
        device_power_w[d] = NAN;
    return env_device_list("TW_FAKE_NVML_DEVICE_POWER_W", device_power_w, "a list of watts (\"300,120\")")
               ? NVML_SUCCESS
               : NVML_ERROR_INVALID_ARGUMENT;
}

/* Exact energy of device d over [t0, t1]: its constant power, else the scenario's. */
static double true_energy_j(unsigned d, double t0, double t1)
{
    if (d < MAX_DEVICES && !isnan(device_power_w[d])) return device_power_w[d] * (t1 - t0);
    if (R.n) return replay_energy_j(t1) - replay_energy_j(t0); /* TW_FAKE_NVML_REPLAY */
    return tw_scenario_true_energy_j(F.sc[d], t0, t1);
}

static double mean_w(unsigned d, double t0, double t1) { return true_energy_j(d, t0, t1) / (t1 - t0); }

/* ---- TW_FAKE_NVML_MINORS: each device's minor number (/dev/nvidiaN), for the Slurm plugin's gres.conf */

static double device_minor[MAX_DEVICES];

/* Reads the list (default: minor = index); mu held. */
static nvmlReturn_t configure_minors(void)
{
    for (unsigned d = 0; d < MAX_DEVICES; d++)
        device_minor[d] = d;
    return env_device_list("TW_FAKE_NVML_MINORS", device_minor, "a list of minor numbers (\"5,4\")")
               ? NVML_SUCCESS
               : NVML_ERROR_INVALID_ARGUMENT;
}

static bool lost_applies(nvmlDevice_t d); /* the exporter's knobs, below */
static nvmlReturn_t configure_exporter_knobs(void);

/* ---------------------------------------------------------------- the lock state file */

#define STATE_COUNTS "gpu_locks=%u gpu_resets=%u mem_locks=%u mem_resets=%u"

/* "MIN-MAX", or "unlocked" for max 0. */
static void range_text(char *buf, size_t cap, unsigned min, unsigned max)
{
    if (max)
        snprintf(buf, cap, "%u-%u", min, max);
    else
        snprintf(buf, cap, "unlocked");
}

static bool parse_range(const char *s, unsigned *min, unsigned *max)
{
    if (strcmp(s, "unlocked") == 0) {
        *min = *max = 0;
        return true;
    }
    int end = 0;
    return sscanf(s, "%u-%u%n", min, max, &end) == 2 && s[end] == '\0' && *min > 0 && *min <= *max;
}

/* One line of the state file into F.locks. */
static bool parse_state_line(const char *line)
{
    unsigned d;
    char gpu[32], mem[32];
    clock_lock l;
    int end = 0;
    if (sscanf(line, "%u gpu=%31s mem=%31s " STATE_COUNTS " %n", &d, gpu, mem, &l.gpu_locks, &l.gpu_resets,
               &l.mem_locks, &l.mem_resets, &end) != 7 ||
        line[end] != '\0' || d >= MAX_DEVICES || !parse_range(gpu, &l.gpu_min, &l.gpu_max) ||
        !parse_range(mem, &l.mem_min, &l.mem_max))
        return false;
    F.locks[d] = l;
    return true;
}

/* The locks left by an earlier process (none without the file); mu held. */
static nvmlReturn_t read_state(void)
{
    memset(F.locks, 0, sizeof F.locks);
    FILE *f = F.state_path[0] ? fopen(F.state_path, "r") : NULL;
    if (!f) return NVML_SUCCESS;
    char line[256];
    bool ok = true;
    while (ok && fgets(line, sizeof line, f))
        ok = line[0] == '\n' || parse_state_line(line);
    fclose(f);
    if (ok) return NVML_SUCCESS;
    line[strcspn(line, "\n")] = '\0';
    fake_complain("TW_FAKE_NVML_CLOCK_STATE: a line is not a lock state: ", line);
    return NVML_ERROR_INVALID_ARGUMENT;
}

/* Rewrites the state file (through a rename, so that a reader sees a whole one); mu held. */
static void write_state(void)
{
    if (!F.state_path[0]) return;
    char tmp[sizeof F.state_path + 8];
    snprintf(tmp, sizeof tmp, "%s.tmp", F.state_path);
    FILE *f = fopen(tmp, "w");
    if (!f) {
        fake_complain("cannot write ", tmp);
        return;
    }
    for (unsigned d = 0; d < F.ndevices; d++) {
        const clock_lock *l = &F.locks[d];
        char gpu[32], mem[32];
        range_text(gpu, sizeof gpu, l->gpu_min, l->gpu_max);
        range_text(mem, sizeof mem, l->mem_min, l->mem_max);
        fprintf(f, "%u gpu=%s mem=%s " STATE_COUNTS "\n", d, gpu, mem, l->gpu_locks, l->gpu_resets, l->mem_locks,
                l->mem_resets);
    }
    if (fclose(f) != 0 || rename(tmp, F.state_path) != 0) fake_complain("cannot write ", F.state_path);
}

/* ---------------------------------------------------------------- configuration */

static nvmlReturn_t configure_unsupported(void)
{
    F.unsupported = 0;
    const char *list = getenv("TW_FAKE_NVML_UNSUPPORTED");
    if (!list || !*list) return NVML_SUCCESS;
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
    return NVML_SUCCESS;
}

/* $name as a list of at most cap clocks into out[0..*n); *n unchanged while $name is unset. */
static nvmlReturn_t env_clocks(const char *name, unsigned *out, unsigned cap, unsigned *n)
{
    const char *v = getenv(name);
    if (!v || !*v) return NVML_SUCCESS;
    unsigned k = 0;
    char *end = NULL;
    for (const char *p = v; k < cap && *p >= '0' && *p <= '9'; p = end + 1) {
        unsigned long x = strtoul(p, &end, 10);
        if (x == 0 || x > UINT_MAX || (*end != ',' && *end != '\0')) break;
        out[k++] = (unsigned)x;
        if (!*end) {
            *n = k;
            return NVML_SUCCESS;
        }
    }
    fake_complain(name, " is not a list of clocks (MHz, comma-separated, highest first)");
    return NVML_ERROR_INVALID_ARGUMENT;
}

/* TW_FAKE_NVML_THROTTLE=bits,mhz,s */
static nvmlReturn_t configure_throttle(void)
{
    F.throttle_after_s = -1.0;
    const char *v = getenv("TW_FAKE_NVML_THROTTLE");
    if (!v || !*v) return NVML_SUCCESS;
    long long bits;
    int end = 0;
    if (sscanf(v, "%lli,%u,%lf%n", &bits, &F.throttle_mhz, &F.throttle_after_s, &end) != 3 || v[end] != '\0' ||
        bits < 0) {
        fake_complain("TW_FAKE_NVML_THROTTLE is bits,mhz,s, not ", v);
        return NVML_ERROR_INVALID_ARGUMENT;
    }
    F.throttle_bits = (unsigned long long)bits;
    return NVML_SUCCESS;
}

/* The supported clocks (an H100's unless the environment says otherwise), the throttle and the locks. */
static nvmlReturn_t configure_clocks(void)
{
    F.nmem = 2;
    F.mem_clocks[0] = MEM_MHZ;
    F.mem_clocks[1] = MEM_LOW_MHZ;
    F.ngfx = H100_GFX_CLOCKS;
    for (unsigned i = 0; i < H100_GFX_CLOCKS; i++)
        F.gfx_clocks[i] = SM_LOAD_MHZ - GFX_STEP_MHZ * i;
    F.no_permission = env_ulong("TW_FAKE_NVML_CLOCK_NO_PERMISSION", 0) != 0;
    const char *state = getenv("TW_FAKE_NVML_CLOCK_STATE");
    snprintf(F.state_path, sizeof F.state_path, "%s", state ? state : "");
    nvmlReturn_t r = env_clocks("TW_FAKE_NVML_MEM_CLOCKS", F.mem_clocks, MAX_MEM_CLOCKS, &F.nmem);
    if (r == NVML_SUCCESS) r = env_clocks("TW_FAKE_NVML_GFX_CLOCKS", F.gfx_clocks, MAX_GFX_CLOCKS, &F.ngfx);
    if (r == NVML_SUCCESS) r = configure_throttle();
    return r == NVML_SUCCESS ? read_state() : r;
}

/* ---------------------------------------------------------------- NVML errors at random
 * (TW_FAKE_NVML_ERROR_RATE, _SEED): xorshift64*, its state under mu. */
static bool configure_errors(void)
{
    const char *rate = getenv("TW_FAKE_NVML_ERROR_RATE");
    char *end = NULL;
    F.error_rate = rate && *rate ? strtod(rate, &end) : 0.0;
    if (rate && *rate && (*end || !(F.error_rate >= 0 && F.error_rate <= 1))) {
        fake_complain("TW_FAKE_NVML_ERROR_RATE is a probability (0 to 1), not ", rate);
        return false;
    }
    F.error_state = env_ulong("TW_FAKE_NVML_ERROR_SEED", 1) | 1u; /* never 0 */
    return true;
}

/* Whether this reading fails (mu held). */
static bool random_error(void)
{
    if (F.error_rate <= 0) return false;
    F.error_state ^= F.error_state >> 12;
    F.error_state ^= F.error_state << 25;
    F.error_state ^= F.error_state >> 27;
    uint64_t x = F.error_state * 0x2545F4914F6CDD1DULL;
    return (double)(x >> 11) * 0x1.0p-53 < F.error_rate;
}

static void configure_time(void)
{
    const char *t0 = getenv("TW_FAKE_NVML_T0_MONO_NS");
    F.t0_ns = t0 && *t0 ? (int64_t)strtoll(t0, NULL, 10) : clock_ns(CLOCK_MONOTONIC);
    int64_t a = clock_ns(CLOCK_MONOTONIC);
    int64_t r = clock_ns(CLOCK_REALTIME);
    int64_t b = clock_ns(CLOCK_MONOTONIC);
    F.rt_off_ns = r - (a + (b - a) / 2);
}

static void free_scenarios(void)
{
    for (unsigned d = 0; d < MAX_DEVICES; d++) {
        tw_scenario_free(F.sc[d]);
        F.sc[d] = NULL;
    }
}

/* TW_FAKE_NVML_SCENARIO: one path, or one per device (the last repeated). */
static nvmlReturn_t configure_scenarios(void)
{
    const char *list = getenv("TW_FAKE_NVML_SCENARIO");
    char path[4096] = "";
    for (unsigned d = 0; d < F.ndevices; d++) {
        if (list && *list) {
            size_t len = strcspn(list, ",");
            snprintf(path, sizeof path, "%.*s", (int)len, list);
            list += len + (list[len] == ',');
        }
        tw_status st = path[0] ? tw_scenario_load(path, TW_SIM_H100, &F.sc[d]) : tw_scenario_new(TW_SIM_H100, &F.sc[d]);
        if (st != TW_OK) {
            fake_complain("TW_FAKE_NVML_SCENARIO: ", tw_last_error());
            free_scenarios();
            return NVML_ERROR_UNKNOWN;
        }
    }
    return NVML_SUCCESS;
}

/* TW_FAKE_NVML_MIG=d:sms,...[;d:...] */
static nvmlReturn_t configure_mig(void)
{
    memset(F.nmig, 0, sizeof F.nmig);
    for (unsigned i = 0; i < MAX_DEVICES * MAX_MIG; i++)
        mig_handles[i].index = MIG_BASE + i;
    const char *v = getenv("TW_FAKE_NVML_MIG");
    while (v && *v) {
        unsigned d;
        int used = 0;
        if (sscanf(v, "%u:%n", &d, &used) != 1 || used == 0 || d >= MAX_DEVICES) break;
        v += used;
        while (F.nmig[d] < MAX_MIG && *v >= '0' && *v <= '9') {
            char *end;
            F.mig_sms[d][F.nmig[d]++] = (unsigned)strtoul(v, &end, 10);
            v = end + (*end == ',');
        }
        if (*v == ';')
            v++;
        else if (*v)
            break;
    }
    if (v && *v) {
        fake_complain("TW_FAKE_NVML_MIG is d:sms,...[;d:sms,...], not at: ", v);
        return NVML_ERROR_INVALID_ARGUMENT;
    }
    return NVML_SUCCESS;
}

/* Reads the environment; mu held. Returns an NVML code. */
static nvmlReturn_t configure(void)
{
    unsigned long n = env_ulong("TW_FAKE_NVML_DEVICES", 1);
    F.ndevices = n > MAX_DEVICES ? MAX_DEVICES : (unsigned)n;
    F.energy_cost_us = (unsigned)env_ulong("TW_FAKE_NVML_ENERGY_COST_US", 0);
    F.energy_spin_us = (unsigned)env_ulong("TW_FAKE_NVML_ENERGY_SPIN_US", 0);
    const char *stall = getenv("TW_FAKE_NVML_ENERGY_STALL");
    F.stall_every = F.stall_us = 0;
    if (stall && sscanf(stall, "%lu:%lu", &F.stall_every, &F.stall_us) != 2) F.stall_every = 0;
    const char *name = getenv("TW_FAKE_NVML_NAME");
    snprintf(F.name, sizeof F.name, "%s", name && *name ? name : "Fake H100");
    const char *arch = getenv("TW_FAKE_NVML_ARCH");
    F.arch_none = arch && strcmp(arch, "none") == 0;
    F.arch = (unsigned)env_ulong("TW_FAKE_NVML_ARCH", 9);
    const char *module = getenv("TW_FAKE_NVML_MODULE_W");
    F.module_w = module && *module ? strtod(module, NULL) : -1.0;
    const char *lost = getenv("TW_FAKE_NVML_LOST_AFTER_S");
    F.lost_after_s = lost && *lost ? strtod(lost, NULL) : -1.0;
    F.lost_code = (nvmlReturn_t)env_ulong("TW_FAKE_NVML_LOST_CODE", NVML_ERROR_GPU_IS_LOST);
    const char *gain = getenv("TW_FAKE_NVML_BUFFER_GAIN");
    F.buffer_gain = gain && *gain ? strtod(gain, NULL) : 1.0;
    const char *delay = getenv("TW_FAKE_NVML_ENERGY_DELAY_MS");
    F.energy_delay_ns = delay && *delay ? (int64_t)llround(1e6 * strtod(delay, NULL)) : 0;

    const char *fts = getenv("TW_FAKE_NVML_FIELD_TIMESTAMP");
    F.field_ts_update = fts && strcmp(fts, "update") == 0;
    if (fts && *fts && strcmp(fts, "update") != 0 && strcmp(fts, "call") != 0) {
        fake_complain("TW_FAKE_NVML_FIELD_TIMESTAMP is call or update, not ", fts);
        return NVML_ERROR_INVALID_ARGUMENT;
    }
    nvmlReturn_t r = configure_unsupported();
    if (r == NVML_SUCCESS) r = configure_clocks();
    if (r == NVML_SUCCESS) r = configure_mig();
    if (r == NVML_SUCCESS) r = configure_device_power();
    if (r == NVML_SUCCESS) r = configure_minors();
    if (r == NVML_SUCCESS) r = configure_exporter_knobs();
    if (r != NVML_SUCCESS) return r;
    configure_time();

    if (!configure_errors()) return NVML_ERROR_INVALID_ARGUMENT;
    const char *replay = getenv("TW_FAKE_NVML_REPLAY");
    if (replay && *replay && !replay_load(replay)) return NVML_ERROR_UNKNOWN;
    return configure_scenarios();
}

/* ---------------------------------------------------------------- calls */

/* A step of the host's wall clock (scripts/faults, tests/faults/clockstep.c): NVML stamps with
 * CLOCK_REALTIME as it is, so the offset follows a change of more than 10 ms, measured within
 * 0.1 ms (a thread preempted between the reads would see a step that is not there); drift and
 * jitter are left alone: the stamps of samples already handed out must not move. mu held. */
static void follow_clock_step(void)
{
    int64_t a = clock_ns(CLOCK_MONOTONIC), r = clock_ns(CLOCK_REALTIME), b = clock_ns(CLOCK_MONOTONIC);
    int64_t off = r - (a + (b - a) / 2);
    if (b - a < 100000 && llabs((long long)(off - F.rt_off_ns)) > 10000000) F.rt_off_ns = off;
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
        follow_clock_step();
        *now = clock_ns(CLOCK_MONOTONIC);
        if (F.lost_after_s >= 0 && sim_s(*now) >= F.lost_after_s && lost_applies(d)) r = F.lost_code;
    }
    if (r != NVML_SUCCESS) pthread_mutex_unlock(&mu);
    return r;
}

static nvmlReturn_t leave(nvmlReturn_t r)
{
    pthread_mutex_unlock(&mu);
    return r;
}

/* enter() for a query answered into *out: NOT_SUPPORTED while unsupported_bit is
 * in TW_FAKE_NVML_UNSUPPORTED, INVALID_ARGUMENT without out. */
static nvmlReturn_t enter_query(nvmlDevice_t d, int64_t *now, unsigned unsupported_bit, const void *out)
{
    nvmlReturn_t r = enter(d, now);
    if (r != NVML_SUCCESS) return r;
    if (F.unsupported & unsupported_bit) return leave(NVML_ERROR_NOT_SUPPORTED);
    if (!out) return leave(NVML_ERROR_INVALID_ARGUMENT);
    const unsigned readings = U_POWER_USAGE | U_ENERGY | U_CLOCKS | U_TEMPERATURE | U_MEMORY;
    if ((unsupported_bit & readings) && random_error()) return leave(NVML_ERROR_UNKNOWN);
    return NVML_SUCCESS;
}

/* Whether a lock may be changed (mu held). */
static nvmlReturn_t may_change(unsigned unsupported_bit)
{
    if (F.unsupported & unsupported_bit) return NVML_ERROR_NOT_SUPPORTED;
    if (F.no_permission) return NVML_ERROR_NO_PERMISSION;
    return NVML_SUCCESS;
}

/* The last update instant at or before `now`, as an index of 100 ms steps. */
static int64_t update_k(int64_t now) { return floor_div(now - F.t0_ns, UPDATE_NS); }

static double update_s(int64_t k) { return (double)k * ((double)UPDATE_NS / NS_PER_S); }

/* ---------------------------------------------------------------- clocks */

static bool under_load(unsigned d, int64_t now)
{
    double t = sim_s(now);
    if (R.n)
        return (replay_energy_j(t) - replay_energy_j(t - 0.001)) / 0.001 >
               0.5 * (R.p_lo + R.p_hi); /* a replay: above the middle of its range */
    return tw_scenario_true_power_w(F.sc[d], t) > tw_scenario_active_idle_w(F.sc[d]) + 0.5;
}

static bool throttled(int64_t now) { return F.throttle_after_s >= 0 && sim_s(now) >= F.throttle_after_s; }

/* mhz clamped into min..max (max 0: unlocked). */
static unsigned clamp_lock(unsigned mhz, unsigned min, unsigned max)
{
    if (!max) return mhz;
    return mhz < min ? min : mhz > max ? max : mhz;
}

static unsigned current_sm_mhz(unsigned d, int64_t now)
{
    const clock_lock *l = &F.locks[d];
    unsigned mhz = clamp_lock(under_load(d, now) ? SM_LOAD_MHZ : SM_IDLE_MHZ, l->gpu_min, l->gpu_max);
    return throttled(now) && mhz > F.throttle_mhz ? F.throttle_mhz : mhz;
}

/* Answers a clock of `type` and leaves: sm_mhz for graphics and SM, mem_mhz for memory. */
static nvmlReturn_t leave_clock(nvmlClockType_t type, unsigned sm_mhz, unsigned mem_mhz, unsigned *out)
{
    switch (type) {
    case NVML_CLOCK_GRAPHICS:
    case NVML_CLOCK_SM:
        *out = sm_mhz;
        return leave(NVML_SUCCESS);
    case NVML_CLOCK_MEM:
        *out = mem_mhz;
        return leave(NVML_SUCCESS);
    default:
        return leave(NVML_ERROR_NOT_SUPPORTED);
    }
}

/* A list of clocks the NVML way: *count is the capacity of out on the way in,
 * the list's length on the way out (INSUFFICIENT_SIZE when it does not fit). */
static nvmlReturn_t copy_clocks(const unsigned *list, unsigned n, unsigned *count, unsigned *out)
{
    unsigned cap = *count;
    *count = n;
    if (cap < n) return NVML_ERROR_INSUFFICIENT_SIZE;
    if (n && !out) return NVML_ERROR_INVALID_ARGUMENT;
    memcpy(out, list, n * sizeof *list);
    return NVML_SUCCESS;
}

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

/* What pynvml's nvmlInit calls (flags: none known to the fake). */
FAKE_API nvmlReturn_t nvmlInitWithFlags(unsigned int flags)
{
    (void)flags;
    return nvmlInit_v2();
}

FAKE_API nvmlReturn_t nvmlShutdown(void)
{
    pthread_mutex_lock(&mu);
    nvmlReturn_t r = NVML_SUCCESS;
    if (F.refs == 0)
        r = NVML_ERROR_UNINITIALIZED;
    else if (--F.refs == 0) {
        free_scenarios();
        replay_free();
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

/* The MIG instance a handle is (d, k), or false for any other handle. */
static bool mig_of(nvmlDevice_t h, unsigned *d, unsigned *k)
{
    if (!h || h < mig_handles || h >= mig_handles + MAX_DEVICES * MAX_MIG) return false;
    unsigned i = (unsigned)(h - mig_handles);
    *d = i / MAX_MIG;
    *k = i % MAX_MIG;
    return *d < F.ndevices && *k < F.nmig[*d];
}

FAKE_API nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char *uuid, unsigned int length)
{
    unsigned md, mk;
    pthread_mutex_lock(&mu);
    bool mig = F.refs && mig_of(device, &md, &mk);
    pthread_mutex_unlock(&mu);
    if (mig) {
        char text[NVML_DEVICE_UUID_BUFFER_SIZE];
        snprintf(text, sizeof text, "MIG-3a0000%02x-00%02x-4000-8000-000000000000", md, mk);
        return copy_text(text, uuid, length);
    }
    int64_t now;
    nvmlReturn_t r = enter(device, &now);
    if (r != NVML_SUCCESS) return r;
    char text[NVML_DEVICE_UUID_BUFFER_SIZE];
    snprintf(text, sizeof text, "GPU-fake-%04u-0000-0000-000000000000", device->index);
    /* TW_FAKE_NVML_UUIDS: the devices' UUIDs in order, comma-separated (those it lacks: as above) */
    const char *list = getenv("TW_FAKE_NVML_UUIDS");
    for (unsigned k = 0; list && *list; k++) {
        size_t len = strcspn(list, ",");
        if (k == device->index && len > 0 && len < sizeof text) {
            memcpy(text, list, len);
            text[len] = '\0';
            break;
        }
        list += len + (list[len] == ',');
    }
    return leave(copy_text(text, uuid, length));
}

FAKE_API nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char *name, unsigned int length)
{
    int64_t now;
    nvmlReturn_t r = enter(device, &now);
    if (r != NVML_SUCCESS) return r;
    return leave(copy_text(F.name, name, length));
}

FAKE_API nvmlReturn_t nvmlDeviceGetArchitecture(nvmlDevice_t device, unsigned int *arch)
{
    int64_t now;
    nvmlReturn_t r = enter(device, &now);
    if (r != NVML_SUCCESS) return r;
    if (!arch) return leave(NVML_ERROR_INVALID_ARGUMENT);
    if (F.arch_none) return leave(NVML_ERROR_NOT_SUPPORTED);
    *arch = F.arch;
    return leave(NVML_SUCCESS);
}

FAKE_API nvmlReturn_t nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t device, unsigned int *limit_mw)
{
    int64_t now;
    nvmlReturn_t r = enter(device, &now);
    if (r != NVML_SUCCESS) return r;
    if (!limit_mw) return leave(NVML_ERROR_INVALID_ARGUMENT);
    const char *v = getenv("TW_FAKE_NVML_POWER_LIMIT_W");
    if (v && strcmp(v, "none") == 0) return leave(NVML_ERROR_NOT_SUPPORTED);
    *limit_mw = (unsigned)(1000.0 * (v ? atof(v) : 700.0));
    return leave(NVML_SUCCESS);
}

/* Burns the calling thread's CPU for us microseconds (a costly driver call). */
static void spin_cpu_us(unsigned us)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
    do
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    while ((t.tv_sec - t0.tv_sec) * 1000000L + (t.tv_nsec - t0.tv_nsec) / 1000 < (long)us);
}

FAKE_API nvmlReturn_t nvmlSystemGetDriverVersion(char *version, unsigned int length)
{
    return copy_text("fake-580.0", version, length);
}

FAKE_API nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t device, unsigned int *power_mw)
{
    int64_t now;
    nvmlReturn_t r = enter_query(device, &now, U_POWER_USAGE, power_mw);
    if (r != NVML_SUCCESS) return r;
    double u = update_s(update_k(now));
    *power_mw = to_mw(mean_w(device->index, u - AVG_WINDOW_S, u));
    return leave(NVML_SUCCESS);
}

FAKE_API nvmlReturn_t nvmlDeviceGetFieldValues(nvmlDevice_t device, int valuesCount, nvmlFieldValue_t *values)
{
    int64_t now;
    nvmlReturn_t r = enter(device, &now);
    if (r != NVML_SUCCESS) return r;
    if (valuesCount < 0 || (valuesCount > 0 && !values)) return leave(NVML_ERROR_INVALID_ARGUMENT);
    if (random_error()) return leave(NVML_ERROR_UNKNOWN);
    int64_t k = update_k(now);
    double u = update_s(k);
    for (int i = 0; i < valuesCount; i++) {
        nvmlFieldValue_t *f = &values[i];
        bool avg = f->fieldId == NVML_FI_DEV_POWER_AVERAGE, inst = f->fieldId == NVML_FI_DEV_POWER_INSTANT;
        bool gpu = f->scopeId == NVML_POWER_SCOPE_GPU, mem = f->scopeId == NVML_POWER_SCOPE_MEMORY;
        bool module = f->scopeId == NVML_POWER_SCOPE_MODULE && F.module_w >= 0;
        double extra_w = module ? F.module_w : 0.0; /* the module: the GPU and the CPU */
        f->timestamp = F.field_ts_update ? realtime_us(k, UPDATE_NS) : (now + F.rt_off_ns) / 1000;
        f->latencyUsec = 0;
        f->valueType = NVML_VALUE_TYPE_UNSIGNED_INT;
        f->value.ullVal = 0;
        f->nvmlReturn = NVML_SUCCESS;
        if ((!avg && !inst) || (!gpu && !mem && !module) || (avg && (F.unsupported & U_185)) ||
            (inst && (F.unsupported & U_186)) || (mem && (F.unsupported & U_MEM)))
            f->nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
        else if (mem)
            f->value.uiVal = MEM_POWER_MW;
        else if (avg)
            f->value.uiVal = to_mw(mean_w(device->index, u - AVG_WINDOW_S, u) + extra_w);
        else
            f->value.uiVal = to_mw(mean_w(device->index, u - INSTANT_WINDOW_S, u) + extra_w);
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
    if (random_error()) return leave(NVML_ERROR_UNKNOWN);
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
        samples[n].sampleValue.uiVal = to_mw(F.buffer_gain * mean_w(device->index, t - dt, t));
        n++;
    }
    *sampleCount = n;
    return leave(n ? NVML_SUCCESS : NVML_ERROR_NOT_FOUND);
}

/* Sleeps us microseconds (none: returns at once). */
static void sleep_us(unsigned long us)
{
    if (!us) return;
    struct timespec ts = {(time_t)(us / 1000000u), (long)(us % 1000000u) * 1000L};
    nanosleep(&ts, NULL);
}

FAKE_API nvmlReturn_t nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t device, unsigned long long *energy_mj)
{
    int64_t now;
    nvmlReturn_t r = enter(device, &now);
    if (r != NVML_SUCCESS) return r;
    unsigned cost_us = F.energy_cost_us, spin_us = F.energy_spin_us;
    unsigned long call = ++F.energy_calls, stall = F.stall_every ? call / F.stall_every : 0;
    bool stalled = F.stall_every && call % F.stall_every == 0;
    unsigned long stall_us = F.stall_us;
    pthread_mutex_unlock(&mu);
    if (spin_us) spin_cpu_us(spin_us);
    sleep_us(cost_us + (stalled && stall % 2 ? stall_us : 0));
    r = enter_query(device, &now, U_ENERGY, energy_mj);
    if (r != NVML_SUCCESS) return r;
    double u = update_s(update_k(now - F.energy_delay_ns));
    *energy_mj = (unsigned long long)llround(ENERGY_BASE_MJ + 1000.0 * true_energy_j(device->index, 0.0, u));
    r = leave(NVML_SUCCESS);
    sleep_us(stalled && stall % 2 == 0 ? stall_us : 0);
    return r;
}

FAKE_API nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t device, nvmlClockType_t type, unsigned int *clock_mhz)
{
    int64_t now;
    nvmlReturn_t r = enter_query(device, &now, U_CLOCKS, clock_mhz);
    if (r != NVML_SUCCESS) return r;
    const clock_lock *l = &F.locks[device->index];
    return leave_clock(type, current_sm_mhz(device->index, now), clamp_lock(MEM_MHZ, l->mem_min, l->mem_max),
                       clock_mhz);
}

FAKE_API nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t device, nvmlTemperatureSensors_t sensorType,
                                               unsigned int *temp_c)
{
    int64_t now;
    nvmlReturn_t r = enter_query(device, &now, U_TEMPERATURE, temp_c);
    if (r != NVML_SUCCESS) return r;
    if (sensorType != NVML_TEMPERATURE_GPU) return leave(NVML_ERROR_INVALID_ARGUMENT);
    *temp_c = TEMPERATURE_C;
    return leave(NVML_SUCCESS);
}

FAKE_API nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t *memory)
{
    int64_t now;
    nvmlReturn_t r = enter_query(device, &now, U_MEMORY, memory);
    if (r != NVML_SUCCESS) return r;
    memory->total = MEM_TOTAL_B;
    memory->used = MEM_USED_B;
    memory->free = MEM_TOTAL_B - MEM_USED_B;
    return leave(NVML_SUCCESS);
}

FAKE_API nvmlReturn_t nvmlDeviceGetMaxClockInfo(nvmlDevice_t device, nvmlClockType_t type, unsigned int *clock_mhz)
{
    int64_t now;
    nvmlReturn_t r = enter_query(device, &now, U_MAX_CLOCKS, clock_mhz);
    if (r != NVML_SUCCESS) return r;
    return leave_clock(type, SM_LOAD_MHZ, MEM_MHZ, clock_mhz);
}

FAKE_API nvmlReturn_t nvmlDeviceGetSupportedMemoryClocks(nvmlDevice_t device, unsigned int *count,
                                                         unsigned int *clocksMHz)
{
    int64_t now;
    nvmlReturn_t r = enter_query(device, &now, U_SUPPORTED_CLOCKS, count);
    if (r != NVML_SUCCESS) return r;
    return leave(copy_clocks(F.mem_clocks, F.nmem, count, clocksMHz));
}

FAKE_API nvmlReturn_t nvmlDeviceGetSupportedGraphicsClocks(nvmlDevice_t device, unsigned int memoryClockMHz,
                                                           unsigned int *count, unsigned int *clocksMHz)
{
    int64_t now;
    nvmlReturn_t r = enter_query(device, &now, U_SUPPORTED_CLOCKS, count);
    if (r != NVML_SUCCESS) return r;
    bool known = false;
    for (unsigned i = 0; i < F.nmem; i++)
        known = known || F.mem_clocks[i] == memoryClockMHz;
    if (!known) return leave(NVML_ERROR_NOT_FOUND);
    return leave(copy_clocks(F.gfx_clocks, F.ngfx, count, clocksMHz));
}

FAKE_API nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t device,
                                                             unsigned long long *clocksEventReasons)
{
    int64_t now;
    nvmlReturn_t r = enter_query(device, &now, U_REASONS, clocksEventReasons);
    if (r != NVML_SUCCESS) return r;
    *clocksEventReasons = (under_load(device->index, now) ? 0 : NVML_CLOCKS_EVENT_REASON_GPU_IDLE) |
                          (throttled(now) ? F.throttle_bits : 0);
    return leave(NVML_SUCCESS);
}

/* The name before R535. */
FAKE_API nvmlReturn_t nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t device,
                                                                unsigned long long *clocksThrottleReasons)
{
    return nvmlDeviceGetCurrentClocksEventReasons(device, clocksThrottleReasons);
}

/* One lock or reset of the graphics (mem false) or memory clocks; reset ignores lo and hi. */
static nvmlReturn_t change_lock(nvmlDevice_t device, bool mem, bool reset, unsigned lo, unsigned hi)
{
    int64_t now;
    nvmlReturn_t r = enter(device, &now);
    if (r != NVML_SUCCESS) return r;
    if ((r = may_change(mem ? U_MEM_LOCK : U_GPU_LOCK)) != NVML_SUCCESS) return leave(r);
    if (!reset && (lo == 0 || lo > hi)) return leave(NVML_ERROR_INVALID_ARGUMENT);
    clock_lock *l = &F.locks[device->index];
    unsigned *min = mem ? &l->mem_min : &l->gpu_min, *max = mem ? &l->mem_max : &l->gpu_max;
    *min = reset ? 0 : lo;
    *max = reset ? 0 : hi;
    (*(mem ? (reset ? &l->mem_resets : &l->mem_locks) : (reset ? &l->gpu_resets : &l->gpu_locks)))++;
    write_state();
    return leave(NVML_SUCCESS);
}

FAKE_API nvmlReturn_t nvmlDeviceSetGpuLockedClocks(nvmlDevice_t device, unsigned int minGpuClockMHz,
                                                   unsigned int maxGpuClockMHz)
{
    return change_lock(device, false, false, minGpuClockMHz, maxGpuClockMHz);
}

FAKE_API nvmlReturn_t nvmlDeviceResetGpuLockedClocks(nvmlDevice_t device)
{
    return change_lock(device, false, true, 0, 0);
}

FAKE_API nvmlReturn_t nvmlDeviceSetMemoryLockedClocks(nvmlDevice_t device, unsigned int minMemClockMHz,
                                                      unsigned int maxMemClockMHz)
{
    return change_lock(device, true, false, minMemClockMHz, maxMemClockMHz);
}

FAKE_API nvmlReturn_t nvmlDeviceResetMemoryLockedClocks(nvmlDevice_t device)
{
    return change_lock(device, true, true, 0, 0);
}

/* ---------------------------------------------------------------- the exporter's knobs
 * (one device lost, per-process utilisation: see the header comment). Kept
 * apart from the rest: read at configure(), under mu. */

#define MAX_PROCS 64

static struct {
    bool lost_one;
    unsigned lost_index;
    struct {
        unsigned dev, pid, sm;
    } procs[MAX_PROCS];
    unsigned nprocs;
    char procs_file[4096]; /* TW_FAKE_NVML_PROCESSES=@FILE */
} X;

static bool lost_applies(nvmlDevice_t d) { return !X.lost_one || d->index == X.lost_index; }

/* dev:pid:sm,... into X.procs */
static nvmlReturn_t parse_processes(const char *v)
{
    X.nprocs = 0;
    while (v && *v && X.nprocs < MAX_PROCS) {
        unsigned dev, pid, sm;
        int used = 0;
        if (sscanf(v, "%u:%u:%u%n", &dev, &pid, &sm, &used) != 3 || (v[used] != ',' && v[used] != '\0')) {
            fake_complain("TW_FAKE_NVML_PROCESSES is dev:pid:sm,..., not ", v);
            return NVML_ERROR_INVALID_ARGUMENT;
        }
        X.procs[X.nprocs].dev = dev, X.procs[X.nprocs].pid = pid, X.procs[X.nprocs].sm = sm;
        X.nprocs++;
        v += used + (v[used] == ',');
    }
    return NVML_SUCCESS;
}

/* @FILE: the list is FILE's first line, read again at every call (a test names a pid known only later) */
static nvmlReturn_t reread_processes(void)
{
    if (!X.procs_file[0]) return NVML_SUCCESS;
    char line[4096] = "";
    FILE *f = fopen(X.procs_file, "r");
    if (f) {
        if (!fgets(line, sizeof line, f)) line[0] = '\0';
        fclose(f);
    }
    line[strcspn(line, "\r\n")] = '\0';
    return parse_processes(line);
}

/* TW_FAKE_NVML_PROCESSES=dev:pid:sm,... or @FILE */
static nvmlReturn_t configure_processes(void)
{
    const char *v = getenv("TW_FAKE_NVML_PROCESSES");
    X.procs_file[0] = '\0';
    if (v && v[0] == '@') {
        snprintf(X.procs_file, sizeof X.procs_file, "%s", v + 1);
        return reread_processes();
    }
    return parse_processes(v);
}

static nvmlReturn_t configure_exporter_knobs(void)
{
    const char *lost = getenv("TW_FAKE_NVML_LOST_DEVICE");
    X.lost_one = lost && *lost;
    X.lost_index = (unsigned)env_ulong("TW_FAKE_NVML_LOST_DEVICE", 0);
    return configure_processes();
}

FAKE_API nvmlReturn_t nvmlDeviceGetProcessUtilization(nvmlDevice_t device, nvmlProcessUtilizationSample_t *utilization,
                                                      unsigned int *processSamplesCount,
                                                      unsigned long long lastSeenTimeStamp);

/* A sample per listed process of the device, stamped with the last 100 ms
 * update; NOT_FOUND when that is not newer than lastSeenTimeStamp. */
FAKE_API nvmlReturn_t nvmlDeviceGetProcessUtilization(nvmlDevice_t device, nvmlProcessUtilizationSample_t *utilization,
                                                      unsigned int *processSamplesCount,
                                                      unsigned long long lastSeenTimeStamp)
{
    int64_t now;
    nvmlReturn_t r = enter(device, &now);
    if (r != NVML_SUCCESS) return r;
    if (!processSamplesCount) return leave(NVML_ERROR_INVALID_ARGUMENT);
    if ((r = reread_processes()) != NVML_SUCCESS) return leave(r);
    unsigned n = 0;
    for (unsigned i = 0; i < X.nprocs; i++)
        n += X.procs[i].dev == device->index;
    long long ts = realtime_us(update_k(now), UPDATE_NS);
    if (n == 0 || ts <= 0 || (unsigned long long)ts <= lastSeenTimeStamp) {
        *processSamplesCount = 0;
        return leave(NVML_ERROR_NOT_FOUND);
    }
    unsigned cap = *processSamplesCount;
    *processSamplesCount = n;
    if (!utilization || cap < n) return leave(NVML_ERROR_INSUFFICIENT_SIZE);
    unsigned k = 0;
    for (unsigned i = 0; i < X.nprocs; i++) {
        if (X.procs[i].dev != device->index) continue;
        utilization[k] =
            (nvmlProcessUtilizationSample_t){X.procs[i].pid, (unsigned long long)ts, X.procs[i].sm, 0, 0, 0};
        k++;
    }
    return leave(NVML_SUCCESS);
}

FAKE_API nvmlReturn_t nvmlDeviceGetMinorNumber(nvmlDevice_t device, unsigned int *minorNumber);
FAKE_API nvmlReturn_t nvmlDeviceGetMinorNumber(nvmlDevice_t device, unsigned int *minorNumber)
{
    int64_t now;
    nvmlReturn_t r = enter(device, &now);
    if (r != NVML_SUCCESS) return r;
    if (!minorNumber) return leave(NVML_ERROR_INVALID_ARGUMENT);
    *minorNumber = (unsigned)device_minor[device->index];
    return leave(NVML_SUCCESS);
}

/* ---------------------------------------------------------------- MIG (read only) */

FAKE_API nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t device, unsigned int *currentMode, unsigned int *pendingMode)
{
    int64_t now;
    nvmlReturn_t r = enter_query(device, &now, 0, currentMode);
    if (r != NVML_SUCCESS) return r;
    if (!pendingMode) return leave(NVML_ERROR_INVALID_ARGUMENT);
    *currentMode = *pendingMode = F.nmig[device->index] ? NVML_DEVICE_MIG_ENABLE : NVML_DEVICE_MIG_DISABLE;
    return leave(NVML_SUCCESS);
}

FAKE_API nvmlReturn_t nvmlDeviceGetMaxMigDeviceCount(nvmlDevice_t device, unsigned int *count)
{
    int64_t now;
    nvmlReturn_t r = enter_query(device, &now, 0, count);
    if (r != NVML_SUCCESS) return r;
    *count = MAX_MIG;
    return leave(NVML_SUCCESS);
}

FAKE_API nvmlReturn_t nvmlDeviceGetMigDeviceHandleByIndex(nvmlDevice_t device, unsigned int index,
                                                          nvmlDevice_t *migDevice)
{
    int64_t now;
    nvmlReturn_t r = enter_query(device, &now, 0, migDevice);
    if (r != NVML_SUCCESS) return r;
    if (!F.nmig[device->index]) return leave(NVML_ERROR_INVALID_ARGUMENT); /* MIG mode is off */
    if (index >= MAX_MIG) return leave(NVML_ERROR_INVALID_ARGUMENT);
    if (index >= F.nmig[device->index]) return leave(NVML_ERROR_NOT_FOUND);
    *migDevice = &mig_handles[device->index * MAX_MIG + index];
    return leave(NVML_SUCCESS);
}

FAKE_API nvmlReturn_t nvmlDeviceGetDeviceHandleFromMigDeviceHandle(nvmlDevice_t migDevice, nvmlDevice_t *device)
{
    unsigned d, k;
    pthread_mutex_lock(&mu);
    nvmlReturn_t r = !F.refs                                 ? NVML_ERROR_UNINITIALIZED
                     : !device || !mig_of(migDevice, &d, &k) ? NVML_ERROR_INVALID_ARGUMENT
                                                             : NVML_SUCCESS;
    if (r == NVML_SUCCESS) *device = &devices[d];
    pthread_mutex_unlock(&mu);
    return r;
}

FAKE_API nvmlReturn_t nvmlDeviceGetAttributes_v2(nvmlDevice_t device, nvmlDeviceAttributes_t *attributes)
{
    unsigned d, k;
    pthread_mutex_lock(&mu);
    nvmlReturn_t r = !F.refs ? NVML_ERROR_UNINITIALIZED : !attributes ? NVML_ERROR_INVALID_ARGUMENT : NVML_SUCCESS;
    if (r == NVML_SUCCESS) {
        memset(attributes, 0, sizeof *attributes);
        if (mig_of(device, &d, &k)) {
            unsigned sms = F.mig_sms[d][k], slices = sms / SM_PER_SLICE ? sms / SM_PER_SLICE : 1;
            attributes->multiprocessorCount = sms;
            attributes->gpuInstanceSliceCount = attributes->computeInstanceSliceCount = slices;
            attributes->memorySizeMB = slices * MIB_PER_SLICE;
        } else if (device >= devices && device < devices + F.ndevices) {
            attributes->multiprocessorCount = GPU_SMS;
            attributes->gpuInstanceSliceCount = attributes->computeInstanceSliceCount = MAX_MIG;
            attributes->memorySizeMB = MEM_TOTAL_B >> 20;
        } else {
            r = NVML_ERROR_INVALID_ARGUMENT;
        }
    }
    pthread_mutex_unlock(&mu);
    return r;
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
SAME_TYPE(nvmlDeviceGetArchitecture, nvmlDeviceGetArchitecture_fn);
SAME_TYPE(nvmlDeviceGetEnforcedPowerLimit, nvmlDeviceGetEnforcedPowerLimit_fn);
SAME_TYPE(nvmlDeviceGetMaxClockInfo, nvmlDeviceGetMaxClockInfo_fn);
SAME_TYPE(nvmlDeviceGetSupportedMemoryClocks, nvmlDeviceGetSupportedMemoryClocks_fn);
SAME_TYPE(nvmlDeviceGetSupportedGraphicsClocks, nvmlDeviceGetSupportedGraphicsClocks_fn);
SAME_TYPE(nvmlDeviceGetCurrentClocksEventReasons, nvmlDeviceGetCurrentClocksEventReasons_fn);
SAME_TYPE(nvmlDeviceGetCurrentClocksThrottleReasons, nvmlDeviceGetCurrentClocksEventReasons_fn);
SAME_TYPE(nvmlDeviceSetGpuLockedClocks, nvmlDeviceSetGpuLockedClocks_fn);
SAME_TYPE(nvmlDeviceResetGpuLockedClocks, nvmlDeviceResetGpuLockedClocks_fn);
SAME_TYPE(nvmlDeviceSetMemoryLockedClocks, nvmlDeviceSetMemoryLockedClocks_fn);
SAME_TYPE(nvmlDeviceResetMemoryLockedClocks, nvmlDeviceResetMemoryLockedClocks_fn);
SAME_TYPE(nvmlDeviceGetProcessUtilization, nvmlDeviceGetProcessUtilization_fn);
SAME_TYPE(nvmlDeviceGetMigMode, nvmlDeviceGetMigMode_fn);
SAME_TYPE(nvmlDeviceGetMaxMigDeviceCount, nvmlDeviceGetMaxMigDeviceCount_fn);
SAME_TYPE(nvmlDeviceGetMigDeviceHandleByIndex, nvmlDeviceGetMigDeviceHandleByIndex_fn);
SAME_TYPE(nvmlDeviceGetDeviceHandleFromMigDeviceHandle, nvmlDeviceGetDeviceHandleFromMigDeviceHandle_fn);
SAME_TYPE(nvmlDeviceGetAttributes_v2, nvmlDeviceGetAttributes_fn);
