/* pmprobe: can CUPTI's PM sampling give truewatt per-kernel activity counters on this GPU?
 * (issue 15, "Where it helps, activity counters"; a feasibility probe, not part of the library.)
 *
 * Power readings alone cannot separate dozens of kernel names (one reading every ~20 ms with ~22 W
 * of noise). Hardware counters sampled every few microseconds could: power modelled as
 * B + sum_m c_m * metric_m(t), fitted against the readings, integrated per kernel. This probe
 * answers the questions that plan depends on, on the real card:
 *   - which counters the chip offers to PM sampling, which of the wanted ones it accepts together
 *     in one pass, and why it refuses the others;
 *   - whether sampling at ~100 us (and finer) runs in-process, the achieved interval, overflow;
 *   - whether PM sampling and CUPTI activity tracing (the kernel timeline truewatt records) work in
 *     the same process, and whether their timestamps share a clock (best lag between them);
 *   - how far apart four kernels of very different kind (FMA loop, DRAM stream copy, a
 *     __nanosleep wait, a tensor-core mma.sync loop) are in each counter.
 *
 *   pmprobe --out DIR [--interval-ns N] [--hwbuf-mb M] [--rounds R] [--per-group L] [--gap-ms G]
 *           [--target-ms T] [--copy-mb C] [--no-activity] [--metrics a,b,c] [--idle-ms I] [--no-pm]
 *           [--cycle ON_MS,OFF_MS,N] [--cycle-disable]
 *
 * Writes DIR/samples.csv (start_ns,end_ns,<metric>...), DIR/kernels.csv, DIR/metrics.txt (the
 * chip's base metrics for PM sampling), DIR/summary.txt (everything printed on stdout). Every
 * failed driver/NVRTC/CUPTI call is printed with the step and the library's own message; the exit
 * status is 1 when any step failed, and what was learned before it is still written.
 *
 * C11 + CUDA driver API + NVRTC + CUPTI, linked on the GPU host by scripts/gpu-pm-probe (not part
 * of the CMake build). PM sampling's call sequence on the device is the injection library's own
 * (src/inject/pm_device.c, built with it): what the probe measures is what truewatt run
 * --activity-counters does; the probe adds the diagnostics (metric lists, refusals explained,
 * windows per kernel). The include path needs src/inject/cshim first (see the file there). */
#define _POSIX_C_SOURCE 200809L
#include <cuda.h>
#include <cupti.h>
#include <cupti_pmsampling.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_target.h>
#include <errno.h>
#include <math.h>
#include <stdatomic.h>
#include <nvrtc.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "inject/pm_device.h"

#define MAX_METRICS TWI_PM_MAX_METRICS
#define MAX_KINDS 4

/* ------------------------------------------------------------------ options */

typedef struct {
    const char *out;
    uint64_t interval_ns;                  /* PM sampling interval */
    size_t hwbuf_mb;                       /* the device-side record buffer */
    int rounds;                            /* rounds over the kernel kinds */
    int per_group;                         /* launches of one kind back to back */
    int gap_ms;                            /* idle host sleep after each group */
    double target_ms;                      /* each launch's duration, calibrated */
    size_t copy_mb;                        /* each of the copy's two buffers */
    bool activity;                         /* CUPTI activity tracing beside PM sampling */
    const char *metrics;                   /* comma-separated override of the candidates */
    int decode_ms;                         /* decode thread period */
    uint32_t max_samples;                  /* counter data image capacity per decode */
    int idle_ms;                           /* an idle stretch (context open, nothing running) before the workload */
    bool pm;                               /* PM sampling at all (--no-pm: the idle stretch's reference) */
    int cycle_on_ms, cycle_off_ms, cycles; /* --cycle ON,OFF,N: sampling stopped and started again */
    bool cycle_disable;                    /* --cycle-disable: disabled and enabled again instead */
} options;

static options opt = {NULL, 100000, 512, 3, 3, 20, 50.0, 1024, true, NULL, 20, 20000, 0, true, 0, 0, 0, false};

/* ------------------------------------------------------------------ output and errors */

static FILE *summary;         /* DIR/summary.txt: a copy of stdout */
static atomic_int n_failures; /* failed steps (the decode thread counts too) */

/* say: one line of the summary, on stdout and in summary.txt. */
static void say(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    if (summary) {
        va_start(ap, fmt);
        vfprintf(summary, fmt, ap);
        va_end(ap);
    }
    fflush(stdout);
}

static void failed(const char *step, const char *lib, const char *name, const char *text, int code)
{
    n_failures++;
    const char *sep = text && *text ? ": " : "";
    say("FAIL %s: %s %s%s%s (code %d)\n", step, lib, name, sep, sep[0] ? text : "", code);
    fprintf(stderr, "pmprobe: FAIL %s: %s %s%s%s (code %d)\n", step, lib, name, sep, sep[0] ? text : "", code);
}

static bool cu_ok(CUresult r, const char *step)
{
    if (r == CUDA_SUCCESS) return true;
    const char *name = "?", *text = "?";
    cuGetErrorName(r, &name);
    cuGetErrorString(r, &text);
    failed(step, "CUDA", name, text, (int)r);
    return false;
}

static const char *cupti_text(CUptiResult r)
{
    const char *text = "?";
    if (cuptiGetResultString(r, &text) != CUPTI_SUCCESS || !text) text = "?";
    return text;
}

static bool cupti_ok(CUptiResult r, const char *step)
{
    if (r == CUPTI_SUCCESS) return true;
    failed(step, "CUPTI", cupti_text(r), "", (int)r);
    return false;
}

/* cupti_note: a failed call that only served the diagnostics (metric lists), has a fallback, or comes
 * after the measurement: printed, not counted as a failed step. */
static bool cupti_note(CUptiResult r, const char *step)
{
    if (r == CUPTI_SUCCESS) return true;
    say("note: %s failed: %s (code %d)\n", step, cupti_text(r), (int)r);
    return false;
}

static bool nvrtc_ok(nvrtcResult r, const char *step)
{
    if (r == NVRTC_SUCCESS) return true;
    failed(step, "NVRTC", nvrtcGetErrorString(r), "", (int)r);
    return false;
}

static void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p) {
        fprintf(stderr, "pmprobe: out of memory (%zu x %zu bytes)\n", n, size);
        exit(1);
    }
    return p;
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

/* ------------------------------------------------------------------ the kernels (NVRTC) */

/* Four kernels of very different kind: an FMA loop (SM pipes busy, no memory), a stream copy
 * through DRAM, a __nanosleep wait (warps resident, nearly nothing issued) and a tensor-core loop
 * (mma.sync m16n8k16 f16 -> f32: the HMMA pipe, as in the GEMMs of a training step; Hopper's
 * wgmma would need sm_90a). Their one parameter scales the duration; main calibrates it to
 * --target-ms. */
static const char *kernel_source =
    "extern \"C\" __global__ void fma_loop(float *out, int iters)\n"
    "{\n"
    "    float a = threadIdx.x * 1e-3f, b = blockIdx.x * 1e-3f, c = a + 1.f, d = b + 2.f;\n"
    "    float e = a - 1.f, f = b - 2.f, g = a + 3.f, h = b + 4.f;\n"
    "    const float m = 0.99999f, k = 1e-6f;\n"
    "#pragma unroll 4\n"
    "    for (int i = 0; i < iters; i++) {\n"
    "        a = fmaf(a, m, k); b = fmaf(b, m, k); c = fmaf(c, m, k); d = fmaf(d, m, k);\n"
    "        e = fmaf(e, m, k); f = fmaf(f, m, k); g = fmaf(g, m, k); h = fmaf(h, m, k);\n"
    "    }\n"
    "    float s = a + b + c + d + e + f + g + h;\n"
    "    if (s == 1234.5678f) out[blockIdx.x * blockDim.x + threadIdx.x] = s; /* keeps the loop */\n"
    "}\n"
    "extern \"C\" __global__ void dram_copy(const float4 *src, float4 *dst, unsigned long long n, int passes)\n"
    "{\n"
    "    unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;\n"
    "    for (int p = 0; p < passes; p++)\n"
    "        for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;\n"
    "             i += stride) {\n"
    "            float4 v = src[i];\n"
    "            v.x += (float)p;\n"
    "            dst[i] = v;\n"
    "        }\n"
    "}\n"
    "extern \"C\" __global__ void idle_sleep(int iters, unsigned ns)\n"
    "{\n"
    "    for (int i = 0; i < iters; i++) __nanosleep(ns);\n"
    "}\n"
    "extern \"C\" __global__ void hmma_loop(float *out, int iters)\n"
    "{\n"
    "    const unsigned a = 0x3c003c00u, b = 0x2c002c00u; /* f16 pairs: 1.0 and 1/16 */\n"
    "    float d[16] = {0};\n"
    "    for (int i = 0; i < iters; i++) {\n"
    "#pragma unroll\n"
    "        for (int j = 0; j < 4; j++) /* four independent accumulators: throughput, not latency */\n"
    "            asm volatile(\"mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, \"\n"
    "                         \"{%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\"\n"
    "                         : \"+f\"(d[4 * j]), \"+f\"(d[4 * j + 1]), \"+f\"(d[4 * j + 2]), \"+f\"(d[4 * j + 3])\n"
    "                         : \"r\"(a), \"r\"(a), \"r\"(a), \"r\"(a), \"r\"(b), \"r\"(b));\n"
    "    }\n"
    "    float s = 0.f;\n"
    "    for (int j = 0; j < 16; j++) s += d[j];\n"
    "    if (s == 1234.5678f) out[blockIdx.x * blockDim.x + threadIdx.x] = s; /* keeps the loop */\n"
    "}\n";

enum { K_FMA, K_DRAM, K_IDLE, K_HMMA };
static const char *kind_names[MAX_KINDS] = {"fma_loop", "dram_copy", "idle_sleep", "hmma_loop"};

typedef struct {
    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    CUfunction fn[MAX_KINDS];
    int sms;
    int cc_major, cc_minor;
    CUdeviceptr out, src, dst;
    unsigned long long n4; /* float4 elements in each copy buffer */
    int param[MAX_KINDS];  /* calibrated: fma iters, copy passes, sleep iters, mma iters */
    double ms[MAX_KINDS];  /* the calibrated duration */
} gpu;

/* compile_module: the kernels as a cubin for this GPU's architecture (no driver JIT). */
static bool compile_module(gpu *g)
{
    nvrtcProgram prog;
    if (!nvrtc_ok(nvrtcCreateProgram(&prog, kernel_source, "pmprobe_kernels.cu", 0, NULL, NULL), "nvrtcCreateProgram"))
        return false;
    char arch[32];
    snprintf(arch, sizeof arch, "--gpu-architecture=sm_%d%d", g->cc_major, g->cc_minor);
    const char *opts[] = {arch};
    nvrtcResult rc = nvrtcCompileProgram(prog, 1, opts);
    size_t log_size = 0;
    if (nvrtcGetProgramLogSize(prog, &log_size) == NVRTC_SUCCESS && log_size > 1) {
        char *log = xcalloc(log_size, 1);
        if (nvrtcGetProgramLog(prog, log) == NVRTC_SUCCESS) say("nvrtc log:\n%s\n", log);
        free(log);
    }
    bool ok = nvrtc_ok(rc, "nvrtcCompileProgram");
    size_t size = 0;
    char *cubin = NULL;
    if (ok) ok = nvrtc_ok(nvrtcGetCUBINSize(prog, &size), "nvrtcGetCUBINSize");
    if (ok) {
        cubin = xcalloc(size, 1);
        ok = nvrtc_ok(nvrtcGetCUBIN(prog, cubin), "nvrtcGetCUBIN");
    }
    nvrtcDestroyProgram(&prog);
    if (ok) ok = cu_ok(cuModuleLoadData(&g->mod, cubin), "cuModuleLoadData (the NVRTC cubin)");
    free(cubin);
    for (int k = 0; ok && k < MAX_KINDS; k++)
        ok = cu_ok(cuModuleGetFunction(&g->fn[k], g->mod, kind_names[k]), "cuModuleGetFunction");
    return ok;
}

/* launch: one launch of kind k with parameter p on the default stream. */
static bool launch(gpu *g, int k, int p)
{
    unsigned ns = 10000;
    int passes = p;
    void *fma_args[] = {&g->out, &p};
    void *copy_args[] = {&g->src, &g->dst, &g->n4, &passes};
    void *idle_args[] = {&p, &ns};
    void **args = k == K_DRAM ? copy_args : k == K_IDLE ? idle_args : fma_args; /* hmma's are fma's */
    unsigned blocks = k == K_IDLE ? (unsigned)g->sms : k == K_HMMA ? (unsigned)g->sms * 4 : (unsigned)g->sms * 8;
    unsigned threads = k == K_IDLE ? 32 : 256;
    return cu_ok(cuLaunchKernel(g->fn[k], blocks, 1, 1, threads, 1, 1, 0, NULL, args, NULL), "cuLaunchKernel");
}

/* time_ms: the duration of one launch (events), -1 on failure. */
static double time_ms(gpu *g, int k, int p)
{
    CUevent a, b;
    float ms = -1.f;
    if (!cu_ok(cuEventCreate(&a, CU_EVENT_DEFAULT), "cuEventCreate")) return -1;
    if (!cu_ok(cuEventCreate(&b, CU_EVENT_DEFAULT), "cuEventCreate")) return -1;
    bool ok = cu_ok(cuEventRecord(a, NULL), "cuEventRecord") && launch(g, k, p) &&
              cu_ok(cuEventRecord(b, NULL), "cuEventRecord") && cu_ok(cuEventSynchronize(b), "cuEventSynchronize") &&
              cu_ok(cuEventElapsedTime(&ms, a, b), "cuEventElapsedTime");
    cuEventDestroy(a);
    cuEventDestroy(b);
    return ok ? ms : -1;
}

/* calibrate: each kind's parameter for --target-ms per launch (scaled up until a launch takes
 * 5 ms, then in proportion, then checked). Runs before sampling starts. */
static bool calibrate(gpu *g)
{
    const int start[MAX_KINDS] = {1000, 1, 20, 100};
    for (int k = 0; k < MAX_KINDS; k++) {
        int p = start[k];
        double t = time_ms(g, k, p); /* the first launch also loads the module */
        t = time_ms(g, k, p);
        while (t >= 0 && t < 5.0 && p < (1 << 28)) {
            p *= 4;
            t = time_ms(g, k, p);
        }
        if (t <= 0) return false;
        double scaled = p * opt.target_ms / t;
        p = scaled < 1 ? 1 : scaled > 2e9 ? 2000000000 : (int)scaled;
        g->param[k] = p;
        g->ms[k] = time_ms(g, k, p);
        if (g->ms[k] < 0) return false;
        say("calibrated %-10s param=%d  %.2f ms a launch\n", kind_names[k], p, g->ms[k]);
    }
    return true;
}

static bool activity_start(void);
static double now_s(void);

/* gpu_open: the driver, device 0, activity tracing (when wanted: after cuInit and before the
 * context, where truewatt's injection library enables it), the primary context, the module and
 * the buffers. */
static bool gpu_open(gpu *g, bool *activity_ok)
{
    if (!cu_ok(cuInit(0), "cuInit") || !cu_ok(cuDeviceGet(&g->dev, 0), "cuDeviceGet(0)")) return false;
    char name[256] = "";
    cuDeviceGetName(name, sizeof name, g->dev);
    if (!cu_ok(cuDeviceGetAttribute(&g->sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, g->dev), "SM count") ||
        !cu_ok(cuDeviceGetAttribute(&g->cc_major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, g->dev), "cc") ||
        !cu_ok(cuDeviceGetAttribute(&g->cc_minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, g->dev), "cc"))
        return false;
    int drv = 0;
    cuDriverGetVersion(&drv);
    say("device 0: %s, sm_%d%d, %d SMs, driver CUDA %d.%d\n", name, g->cc_major, g->cc_minor, g->sms, drv / 1000,
        (drv % 1000) / 10);
    if (opt.activity) {
        *activity_ok = activity_start();
        say("activity tracing (CONCURRENT_KERNEL), enabled before PM sampling: %s\n", *activity_ok ? "yes" : "FAILED");
    }
    /* CUDA 13's cuCtxCreate takes creation parameters (NULL: the defaults); the primary context
     * is what a PyTorch process would use, so the probe uses it too */
    if (!cu_ok(cuDevicePrimaryCtxRetain(&g->ctx, g->dev), "cuDevicePrimaryCtxRetain") ||
        !cu_ok(cuCtxSetCurrent(g->ctx), "cuCtxSetCurrent"))
        return false;
    size_t bytes = opt.copy_mb << 20;
    g->n4 = bytes / 16;
    return compile_module(g) && cu_ok(cuMemAlloc(&g->out, (size_t)g->sms * 8 * 256 * 4), "cuMemAlloc out") &&
           cu_ok(cuMemAlloc(&g->src, bytes), "cuMemAlloc copy source") &&
           cu_ok(cuMemAlloc(&g->dst, bytes), "cuMemAlloc copy destination") &&
           cu_ok(cuMemsetD32(g->src, 0x3f800000u, bytes / 4), "cuMemsetD32") &&
           cu_ok(cuCtxSynchronize(), "cuCtxSynchronize");
}

/* ------------------------------------------------------------------ CUPTI activity (kernel timeline) */

typedef struct {
    char name[32];
    uint64_t start, end;
    uint32_t correlation;
} kernel_rec;

static struct {
    pthread_mutex_t lock;
    kernel_rec *v;
    size_t n, cap;
    size_t dropped;
} acts = {PTHREAD_MUTEX_INITIALIZER, NULL, 0, 0, 0};

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
    *size = 1u << 20;
    *buffer = aligned_alloc(8, *size);
    *max_records = 0;
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size, size_t valid)
{
    (void)size;
    CUpti_Activity *rec = NULL;
    pthread_mutex_lock(&acts.lock);
    while (buffer && cuptiActivityGetNextRecord(buffer, valid, &rec) == CUPTI_SUCCESS) {
        if (rec->kind != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL && rec->kind != CUPTI_ACTIVITY_KIND_KERNEL) continue;
        const CUpti_ActivityKernel10 *k = (const CUpti_ActivityKernel10 *)rec;
        if (acts.n == acts.cap) {
            acts.cap = acts.cap ? 2 * acts.cap : 256;
            acts.v = realloc(acts.v, acts.cap * sizeof *acts.v);
            if (!acts.v) abort();
        }
        kernel_rec *r = &acts.v[acts.n++];
        snprintf(r->name, sizeof r->name, "%s", k->name ? k->name : "?");
        r->start = k->start;
        r->end = k->end;
        r->correlation = k->correlationId;
    }
    size_t dropped = 0;
    if (cuptiActivityGetNumDroppedRecords(ctx, stream, &dropped) == CUPTI_SUCCESS) acts.dropped += dropped;
    pthread_mutex_unlock(&acts.lock);
    free(buffer);
}

static bool activity_start(void)
{
    return cupti_ok(cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed),
                    "cuptiActivityRegisterCallbacks") &&
           cupti_ok(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL),
                    "cuptiActivityEnable(CONCURRENT_KERNEL)");
}

/* ------------------------------------------------------------------ PM sampling: metrics */

/* The wanted counters, most important first (a metric that does not fit in one pass with those
 * before it is dropped): SM activity, the pipes that separate kinds of work, memory traffic, and
 * the clocks (power also follows frequency). Names as CUPTI's host API spells them; not every one
 * exists on every chip, which is what the probe finds out. */
static const char *default_candidates[] = {
    "sm__cycles_active.avg",
    "gpc__cycles_elapsed.max",
    "sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_elapsed", /* Hopper's wgmma */
    "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_elapsed",
    "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed",
    "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_elapsed",
    "sm__inst_executed.avg.per_cycle_active",
    "dram__throughput.avg.pct_of_peak_sustained_elapsed",
    "dram__bytes_read.sum",
    "dram__bytes_write.sum",
    "lts__t_sectors.sum",
    "dramc__read_throughput.avg.pct_of_peak_sustained_elapsed",
    "sm__inst_executed_pipe_tensor.sum",
    "sm__inst_executed_pipe_fma.sum",
    "gpc__cycles_elapsed.avg.per_second",
    "sys__cycles_elapsed.avg.per_second",
    "sm__warps_active.avg.pct_of_peak_sustained_active",
    "sm__throughput.avg.pct_of_peak_sustained_elapsed",
};

typedef struct {
    twi_pm_device d;                       /* the device's PM sampling (src/inject/pm_device.h) */
    char **base[CUPTI_METRIC_TYPE__COUNT]; /* the chip's base metric names by type (copies) */
    size_t n_base[CUPTI_METRIC_TYPE__COUNT];
} pm_setup;

static CUpti_Profiler_Host_Object *host_new(pm_setup *pm, const char *step)
{
    CUpti_Profiler_Host_Object *h = twi_pm_host_new(&pm->d);
    if (!h) failed(step, "CUPTI", "host object refused", "", 0);
    return h;
}

static void host_free(CUpti_Profiler_Host_Object *h) { twi_pm_host_free(h); }

/* list_base_metrics: every base metric the host API offers PM sampling on this chip, by type,
 * into DIR/metrics.txt (what the power model may choose from). */
static void list_base_metrics(pm_setup *pm, const char *path)
{
    CUpti_Profiler_Host_Object *h = host_new(pm, "cuptiProfilerHostInitialize (metric list)");
    if (!h) return;
    FILE *f = fopen(path, "w");
    const char *type_name[] = {"counter", "ratio", "throughput"};
    for (int t = 0; t < CUPTI_METRIC_TYPE__COUNT; t++) {
        CUpti_Profiler_Host_GetBaseMetrics_Params p = {.structSize =
                                                           CUpti_Profiler_Host_GetBaseMetrics_Params_STRUCT_SIZE};
        p.pHostObject = h;
        p.metricType = (CUpti_MetricType)t;
        if (!cupti_note(cuptiProfilerHostGetBaseMetrics(&p), "cuptiProfilerHostGetBaseMetrics")) continue;
        say("base metrics (%s): %zu\n", type_name[t], p.numMetrics);
        pm->base[t] = xcalloc(p.numMetrics, sizeof *pm->base[t]);
        for (size_t i = 0; i < p.numMetrics; i++)
            if ((pm->base[t][i] = strdup(p.ppMetricNames[i]))) pm->n_base[t]++;
        for (size_t i = 0; f && i < p.numMetrics; i++) {
            CUpti_Profiler_Host_GetMetricProperties_Params q = {
                .structSize = CUpti_Profiler_Host_GetMetricProperties_Params_STRUCT_SIZE};
            q.pHostObject = h;
            q.pMetricName = p.ppMetricNames[i];
            bool known = cuptiProfilerHostGetMetricProperties(&q) == CUPTI_SUCCESS;
            fprintf(f, "%s\t%s\t%s\t%s\t%s\n", type_name[t], p.ppMetricNames[i], known && q.pHwUnit ? q.pHwUnit : "",
                    known && q.pDimUnit ? q.pDimUnit : "", known && q.pDescription ? q.pDescription : "");
        }
    }
    if (f) fclose(f);
    host_free(h);
}

/* base_type: the type of base metric `base` on this chip, -1 when the chip has none of that name. */
static int base_type(const pm_setup *pm, const char *base)
{
    for (int t = 0; t < CUPTI_METRIC_TYPE__COUNT; t++)
        for (size_t i = 0; i < pm->n_base[t]; i++)
            if (strcmp(pm->base[t][i], base) == 0) return t;
    return -1;
}

/* submetrics: the rollups/submetrics the host API lists for base metric `base` of type t, printed
 * (up to 24), so that a refused name can be corrected from the output. Returns how many. */
static size_t submetrics(pm_setup *pm, const char *base, int t)
{
    CUpti_Profiler_Host_Object *h = host_new(pm, "cuptiProfilerHostInitialize (submetrics)");
    if (!h) return 0;
    CUpti_Profiler_Host_GetSubMetrics_Params p = {.structSize = CUpti_Profiler_Host_GetSubMetrics_Params_STRUCT_SIZE};
    p.pHostObject = h;
    p.metricType = (CUpti_MetricType)t;
    p.pMetricName = base;
    size_t n = 0;
    if (cupti_note(cuptiProfilerHostGetSubMetrics(&p), "cuptiProfilerHostGetSubMetrics")) {
        n = p.numOfSubmetrics;
        say("    %s has %zu submetrics:", base, n);
        for (size_t i = 0; i < n && i < 24; i++)
            say(" %s", p.ppSubMetrics[i]);
        say("%s\n", n > 24 ? " ..." : "");
    }
    host_free(h);
    return n;
}

/* explain_refusal: whether the chip has the refused name's base metric, and its submetrics. */
static void explain_refusal(pm_setup *pm, const char *name)
{
    char base[256];
    snprintf(base, sizeof base, "%s", name);
    char *dot = strchr(base, '.');
    if (dot) *dot = 0;
    int t = base_type(pm, base);
    if (t < 0) {
        say("    (the chip lists no base metric %s for PM sampling)\n", base);
        return;
    }
    submetrics(pm, base, t);
}

/* Where none of the candidates is accepted (names differ between chips and CUPTI versions): the
 * base metrics of these prefixes that the chip lists, each with a rollup that fits its type. */
static size_t fallback_candidates(pm_setup *pm, const char **out, size_t max)
{
    static const char *prefixes[] = {"sm__cycles_active", "gpc__cycles_elapsed", "dram__bytes_read", "dram__throughput",
                                     "sm__throughput",    "sm__inst_executed",   "lts__t_sectors"};
    static char names[sizeof prefixes / sizeof *prefixes][300];
    size_t n = 0;
    for (size_t i = 0; i < sizeof prefixes / sizeof *prefixes && n < max; i++) {
        int t = base_type(pm, prefixes[i]);
        if (t < 0) continue;
        const char *suffix = t == CUPTI_METRIC_TYPE_COUNTER      ? ".sum"
                             : t == CUPTI_METRIC_TYPE_THROUGHPUT ? ".avg.pct_of_peak_sustained_elapsed"
                                                                 : "";
        snprintf(names[n], sizeof names[n], "%s%s", prefixes[i], suffix);
        out[n] = names[n];
        n++;
    }
    return n;
}

/* on_verdict: the metric choice's word on each candidate (an answer, not a failed step); a name
 * refused alone is explained (does the chip have its base metric, which submetrics). */
static void on_verdict(void *ctx, const char *metric, const char *verdict)
{
    say("metric %-72s %s\n", metric, verdict);
    if (strncmp(verdict, "REFUSED: ", 9) == 0 && strncmp(verdict, "REFUSED: needs", 14) != 0)
        explain_refusal(ctx, metric);
}

/* choose_and_configure: each candidate alone, then greedily together in one pass (else the
 * fallback names); the config image kept in pm->d. */
static bool choose_and_configure(pm_setup *pm, const char **cand, size_t n_cand)
{
    twi_pm_options o = {.wanted = cand, .n_wanted = n_cand, .try_alone = true, .verdict = on_verdict, .ctx = pm};
    char why[700];
    bool ok = twi_pm_device_choose(&pm->d, &o, why, sizeof why);
    if (!ok && pm->d.n_metric == 0) {
        const char *fb[16];
        size_t n_fb = fallback_candidates(pm, fb, 16);
        say("none accepted: trying %zu fallback names built from the chip's base metrics\n", n_fb);
        pm->d.refused[0] = '\0';
        o.wanted = fb;
        o.n_wanted = n_fb;
        ok = n_fb && twi_pm_device_choose(&pm->d, &o, why, sizeof why);
    }
    if (!ok) {
        failed("choosing metrics", "CUPTI", why, "", 0);
        return false;
    }
    say("config image: %zu bytes, %zu metrics, 1 pass(es)\n", pm->d.config_size, pm->d.n_metric);
    return true;
}

/* split_metrics: --metrics a,b,c into a NULL-free array (the string is kept, cut in place). */
static size_t split_metrics(char *s, const char **out, size_t max)
{
    size_t n = 0;
    for (char *tok = strtok(s, ","); tok && n < max; tok = strtok(NULL, ","))
        out[n++] = tok;
    return n;
}

/* ------------------------------------------------------------------ PM sampling: setup */

static bool pm_prepare(gpu *g, pm_setup *pm, const char *outdir)
{
    char why[700];
    if (!twi_pm_load(NULL, why, sizeof why)) { /* NULL: the libcupti this probe is linked with */
        failed("PM sampling's entry points", "CUPTI", why, "", 0);
        return false;
    }
    if (!twi_pm_init_profiler(why, sizeof why)) {
        failed("cuptiProfilerInitialize", "CUPTI", why, "", 0);
        return false;
    }
    pm->d.index = 0;
    pm->d.dev = g->dev;
    bool ok = twi_pm_device_prepare(&pm->d, why, sizeof why);
    if (pm->d.chip) say("chip: %s\n", pm->d.chip);
    const CUpti_Profiler_DeviceSupported_Params *ds = &pm->d.support;
    if (ds->structSize) {
        const char *lv[] = {"unknown", "unsupported", "disabled", "supported"};
#define LV(x) ((unsigned)(x) < 4 ? lv[(x)] : "?")
        say("PM sampling support: overall %s (architecture %s, sli %s, vGPU %s, confidential compute %s, cmp %s, "
            "wsl %s)\n",
            LV(ds->isSupported), LV(ds->architecture), LV(ds->sli), LV(ds->vGpu), LV(ds->confidentialCompute),
            LV(ds->cmp), LV(ds->wsl));
#undef LV
    }
    if (!ok) {
        failed("PM sampling on device 0", "CUPTI", why, "", 0);
        return false;
    }
    say("counter availability image: %zu bytes\n", pm->d.avail_size);

    char path[4096];
    snprintf(path, sizeof path, "%s/metrics.txt", outdir);
    list_base_metrics(pm, path);

    const char *cand[MAX_METRICS * 2];
    size_t n_cand;
    if (opt.metrics) {
        n_cand = split_metrics(strdup(opt.metrics), cand, MAX_METRICS * 2);
    } else {
        n_cand = sizeof default_candidates / sizeof *default_candidates;
        memcpy(cand, default_candidates, sizeof default_candidates);
    }
    double t0 = now_s();
    ok = choose_and_configure(pm, cand, n_cand);
    say("choosing the metrics took %.2f s\n", now_s() - t0);
    return ok;
}

/* pm_enable: the sampling object, its configuration (interval, buffer) and the counter data image. */
static bool pm_enable(pm_setup *pm)
{
    twi_pm_options o = {
        .interval_ns = opt.interval_ns, .hwbuf_bytes = opt.hwbuf_mb << 20, .image_samples = opt.max_samples};
    char why[700];
    if (!twi_pm_device_enable(&pm->d, &o, why, sizeof why)) {
        failed("PM sampling: enable, config, counter data image", "CUPTI", why, "", 0);
        return false;
    }
    say("PM sampling: interval %llu, trigger %s, hardware buffer %zu MiB, append KEEP_OLDEST\n",
        (unsigned long long)opt.interval_ns, pm->d.trigger, opt.hwbuf_mb);
    say("counter data image: %zu bytes for %u samples\n", pm->d.image_size, opt.max_samples);
    return true;
}

/* ------------------------------------------------------------------ PM sampling: decoding */

typedef struct {
    uint64_t start, end;
    double v[MAX_METRICS];
} sample;

static struct {
    sample *v;
    size_t n, cap;
    bool stop; /* main asks the decode thread to end (under lock) */
    pthread_mutex_t lock;
} smp = {.lock = PTHREAD_MUTEX_INITIALIZER};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void add_sample(const sample *s)
{
    if (smp.n == smp.cap) {
        smp.cap = smp.cap ? 2 * smp.cap : 4096;
        smp.v = realloc(smp.v, smp.cap * sizeof *smp.v);
        if (!smp.v) abort();
    }
    smp.v[smp.n++] = *s;
}

static void on_sample(void *ctx, uint64_t start, uint64_t end, const double *v, size_t n)
{
    (void)ctx;
    sample s = {.start = start, .end = end};
    memcpy(s.v, v, n * sizeof *v);
    add_sample(&s);
}

/* decode_once: what the hardware buffer holds, each completed sample evaluated to metric values
 * (src/inject/pm_device.c). Returns the decode stop reason, or -1 when decoding failed (the
 * first five failures printed). */
static int decode_once(pm_setup *pm)
{
    uint64_t errors = pm->d.decode_errors;
    int why = twi_pm_device_decode(&pm->d, on_sample, NULL);
    if (why < 0 && errors < 5)
        failed("cuptiPmSamplingDecodeData", "CUPTI", twi_pm_result_text((CUptiResult)pm->d.last_error), "",
               pm->d.last_error);
    return why;
}

static pthread_mutex_t pm_lock = PTHREAD_MUTEX_INITIALIZER; /* the decode thread against --cycle */

/* The decode thread: the hardware buffer is drained every --decode-ms while kernels run, as
 * truewatt's recorder would have to (a buffer that fills up loses samples). */
static void *decode_thread(void *arg)
{
    pm_setup *pm = arg;
    for (;;) {
        pthread_mutex_lock(&smp.lock);
        bool stop = smp.stop;
        pthread_mutex_unlock(&smp.lock);
        if (stop) break;
        sleep_ms(opt.decode_ms);
        /* a full image leaves records in the buffer: decode again at once (not while --cycle
         * stops or starts the sampling) */
        pthread_mutex_lock(&pm_lock);
        if (pm->d.started && !pm->d.stopped)
            while (decode_once(pm) == CUPTI_PM_SAMPLING_DECODE_STOP_REASON_COUNTER_DATA_FULL) {
            }
        pthread_mutex_unlock(&pm_lock);
    }
    return NULL;
}

/* ------------------------------------------------------------------ the workload */

typedef struct {
    int kind;
    int round;
    uint64_t host_start, host_end; /* cuptiGetTimestamp around the group (launch .. synchronized) */
} group;

static uint64_t cupti_now(void)
{
    uint64_t t = 0;
    cuptiGetTimestamp(&t);
    return t;
}

/* run_workload: rounds x kinds groups; each group per_group launches back to back, then a
 * synchronize and a --gap-ms idle sleep. 100 ms idle before and after (the baseline). */
static bool run_workload(gpu *g, group *groups, size_t *n_groups)
{
    *n_groups = 0;
    sleep_ms(100);
    for (int r = 0; r < opt.rounds; r++)
        for (int k = 0; k < MAX_KINDS; k++) {
            group *gr = &groups[(*n_groups)++];
            gr->kind = k;
            gr->round = r;
            gr->host_start = cupti_now();
            for (int l = 0; l < opt.per_group; l++)
                if (!launch(g, k, g->param[k])) return false;
            if (!cu_ok(cuCtxSynchronize(), "cuCtxSynchronize (workload)")) return false;
            gr->host_end = cupti_now();
            sleep_ms(opt.gap_ms);
        }
    sleep_ms(100);
    return true;
}

/* ------------------------------------------------------------------ analysis */

static int cmp_kernel(const void *a, const void *b)
{
    const kernel_rec *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static int cmp_sample(const void *a, const void *b)
{
    const sample *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

/* window_stats: the samples wholly inside [t0, t1) (sample times shifted by -lag), their count,
 * the mean of each metric and the mean interval between their starts. */
typedef struct {
    size_t n;
    double mean[MAX_METRICS];
    double interval_us;
} win_stats;

static size_t first_at_or_after(uint64_t t)
{
    size_t lo = 0, hi = smp.n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (smp.v[mid].start < t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static win_stats window_stats(uint64_t t0, uint64_t t1, int64_t lag, size_t n_metric)
{
    win_stats w = {0};
    uint64_t a = (uint64_t)((int64_t)t0 + lag), b = (uint64_t)((int64_t)t1 + lag);
    size_t i = first_at_or_after(a);
    uint64_t first = 0, last = 0;
    for (; i < smp.n && smp.v[i].start < b; i++) {
        if (smp.v[i].end > b) continue;
        if (w.n == 0) first = smp.v[i].start;
        last = smp.v[i].start;
        for (size_t m = 0; m < n_metric; m++)
            w.mean[m] += smp.v[i].v[m];
        w.n++;
    }
    for (size_t m = 0; w.n && m < n_metric; m++)
        w.mean[m] /= (double)w.n;
    w.interval_us = w.n > 1 ? (double)(last - first) / (double)(w.n - 1) / 1e3 : 0;
    return w;
}

/* contrast: with PM times = kernel times + lag, the mean of metric m over samples whose midpoint
 * lies in a kernel window minus its mean elsewhere; the lag that maximizes it says whether the two
 * timestamp sources share a clock. One merge pass (both sorted by start). */
static double contrast(const kernel_rec *k, size_t nk, int64_t lag, size_t m)
{
    double in = 0, out = 0;
    size_t n_in = 0, n_out = 0, j = 0;
    for (size_t i = 0; i < smp.n; i++) {
        int64_t mid = (int64_t)(smp.v[i].start / 2 + smp.v[i].end / 2) - lag;
        while (j < nk && (int64_t)k[j].end <= mid)
            j++;
        bool inside = j < nk && (int64_t)k[j].start <= mid;
        if (inside)
            in += smp.v[i].v[m], n_in++;
        else
            out += smp.v[i].v[m], n_out++;
    }
    if (!n_in || !n_out) return -INFINITY;
    return in / (double)n_in - out / (double)n_out;
}

static int64_t best_lag(const kernel_rec *k, size_t nk, size_t m, int64_t center, double *best_c)
{
    int64_t best = center;
    *best_c = -INFINITY;
    for (int64_t l = center - 100000000; l <= center + 100000000; l += 500000) { /* +-100 ms, 0.5 ms steps */
        double c = contrast(k, nk, l, m);
        if (c > *best_c) *best_c = c, best = l;
    }
    int64_t coarse = best;
    for (int64_t l = coarse - 500000; l <= coarse + 500000; l += 5000) { /* then 5 us steps */
        double c = contrast(k, nk, l, m);
        if (c > *best_c) *best_c = c, best = l;
    }
    return best;
}

/* OUTDIR/NAME opened for writing; NULL (the failure said) when it cannot be. */
static FILE *open_out(const char *outdir, const char *name)
{
    char path[4096], step[64];
    snprintf(path, sizeof path, "%s/%s", outdir, name);
    FILE *f = fopen(path, "w");
    if (!f) {
        snprintf(step, sizeof step, "writing %s", name);
        failed(step, "libc", path, strerror(errno), errno);
    }
    return f;
}

static void write_samples(const pm_setup *pm, const char *outdir)
{
    FILE *f = open_out(outdir, "samples.csv");
    if (!f) return;
    fprintf(f, "start_ns,end_ns");
    for (size_t m = 0; m < pm->d.n_metric; m++)
        fprintf(f, ",%s", pm->d.metric[m]);
    fprintf(f, "\n");
    for (size_t i = 0; i < smp.n; i++) {
        fprintf(f, "%llu,%llu", (unsigned long long)smp.v[i].start, (unsigned long long)smp.v[i].end);
        for (size_t m = 0; m < pm->d.n_metric; m++)
            fprintf(f, ",%.9g", smp.v[i].v[m]);
        fprintf(f, "\n");
    }
    fclose(f);
}

/* timeline: the measured launches: the activity records after sampling started, or (without
 * them) the host's group windows. Returns the count; *source says which. */
static size_t timeline(const group *groups, size_t n_groups, uint64_t t_begin, kernel_rec **out, const char **source)
{
    size_t n = 0;
    kernel_rec *v = xcalloc(acts.n + n_groups, sizeof *v);
    for (size_t i = 0; i < acts.n; i++)
        if (acts.v[i].start >= t_begin) v[n++] = acts.v[i];
    *source = "CUPTI activity (CONCURRENT_KERNEL)";
    if (n == 0) {
        *source = "host timestamps around each group (no activity records)";
        for (size_t i = 0; i < n_groups; i++) {
            snprintf(v[n].name, sizeof v[n].name, "%s", kind_names[groups[i].kind]);
            v[n].start = groups[i].host_start;
            v[n].end = groups[i].host_end;
            n++;
        }
    }
    if (n) qsort(v, n, sizeof *v, cmp_kernel);
    *out = v;
    return n;
}

static void write_kernels(const kernel_rec *k, size_t nk, const char *outdir)
{
    FILE *f = open_out(outdir, "kernels.csv");
    if (!f) return;
    fprintf(f, "name,start_ns,end_ns,correlation_id\n");
    for (size_t i = 0; i < nk; i++)
        fprintf(f, "%s,%llu,%llu,%u\n", k[i].name, (unsigned long long)k[i].start, (unsigned long long)k[i].end,
                k[i].correlation);
    fclose(f);
}

static int kind_of(const char *name)
{
    for (int k = 0; k < MAX_KINDS; k++)
        if (strcmp(name, kind_names[k]) == 0) return k;
    return -1;
}

/* report_windows: per launch and per kind (and the idle gaps between groups), the samples inside,
 * the metrics' means and the achieved interval, with PM times = kernel times + lag. */
static void report_windows(const pm_setup *pm, const gpu *g, const kernel_rec *k, size_t nk, int64_t lag)
{
    size_t nm = pm->d.n_metric;
    say("\nwindows with PM time = kernel time %+.3f ms (metric columns in the order listed below)\n", lag / 1e6);
    for (size_t m = 0; m < nm; m++)
        say("  m%zu = %s\n", m, pm->d.metric[m]);
    say("%-12s %9s %8s %6s %8s", "window", "t_ms", "dur_ms", "n", "int_us");
    for (size_t m = 0; m < nm; m++)
        say(" %12s%zu", "m", m);
    say("\n");
    /* per kind: sample-weighted sums; the last row collects the idle gaps (> 2 ms) between launches */
    double sum[MAX_KINDS + 1][MAX_METRICS] = {{0}};
    size_t cnt[MAX_KINDS + 1] = {0}, wins[MAX_KINDS + 1] = {0}, launches[MAX_KINDS] = {0};
    double dur_ms[MAX_KINDS] = {0}; /* launches' durations while sampling */
    double lo[MAX_KINDS + 1][MAX_METRICS], hi[MAX_KINDS + 1][MAX_METRICS];
    for (int r = 0; r <= MAX_KINDS; r++)
        for (size_t m = 0; m < nm; m++)
            lo[r][m] = INFINITY, hi[r][m] = -INFINITY;
    uint64_t t0 = nk ? k[0].start : 0;
    for (size_t i = 0; i < nk; i++) {
        for (int pass = 0; pass < 2; pass++) {
            uint64_t a = k[i].start, b = k[i].end;
            const char *label = k[i].name;
            if (pass == 1) { /* the gap after this launch, when there is one */
                if (i + 1 >= nk || k[i + 1].start < k[i].end + 2000000) continue;
                a = k[i].end + 500000; /* 0.5 ms margins: the counters' own edges */
                b = k[i + 1].start - 500000;
                label = "(idle gap)";
            }
            win_stats w = window_stats(a, b, lag, nm);
            say("%-12.12s %9.3f %8.3f %6zu %8.2f", label, (a - t0) / 1e6, (b - a) / 1e6, w.n, w.interval_us);
            for (size_t m = 0; m < nm; m++)
                say(" %13.6g", w.mean[m]);
            say("\n");
            int row = pass == 1 ? MAX_KINDS : kind_of(k[i].name);
            if (row >= 0 && row < MAX_KINDS) launches[row]++, dur_ms[row] += (double)(b - a) / 1e6;
            if (row < 0 || w.n == 0) continue;
            wins[row]++;
            cnt[row] += w.n;
            for (size_t m = 0; m < nm; m++) {
                sum[row][m] += w.mean[m] * (double)w.n;
                if (w.mean[m] < lo[row][m]) lo[row][m] = w.mean[m];
                if (w.mean[m] > hi[row][m]) hi[row][m] = w.mean[m];
            }
        }
    }
    say("\nper kind (sample-weighted mean; [min..max] of the windows' means)\n");
    for (int r = 0; r <= MAX_KINDS; r++) {
        say("%-12s windows=%zu samples=%zu", r == MAX_KINDS ? "(idle gap)" : kind_names[r], wins[r], cnt[r]);
        if (r < MAX_KINDS && launches[r])
            say("  duration %.3f ms while sampling, %.3f ms at calibration (no sampling)",
                dur_ms[r] / (double)launches[r], g->ms[r]);
        say("\n");
        for (size_t m = 0; cnt[r] && m < nm; m++)
            say("    %-72s %13.6g  [%.6g .. %.6g]\n", pm->d.metric[m], sum[r][m] / (double)cnt[r], lo[r][m], hi[r][m]);
    }
}

/* report_samples: the achieved interval over all samples (median, extremes, holes). */
static void report_samples(const pm_setup *pm)
{
    const twi_pm_device *pd = &pm->d;
    say("\nsamples: %zu decoded in %zu decode calls (errors %zu, evaluation errors %zu, counter-data-full stops %zu, "
        "most populated-but-incomplete at a decode %zu), hardware buffer overflow: %s\n",
        smp.n, (size_t)pd->decodes, (size_t)pd->decode_errors, (size_t)pd->eval_errors, (size_t)pd->full_stops,
        pd->incomplete_max, pd->overflows ? "YES" : "no");
    say("host cost: %.1f ms in cuptiPmSamplingDecodeData, %.1f ms in sample info + evaluation (%.2f us a sample)\n",
        pd->decode_s * 1e3, pd->eval_s * 1e3, smp.n ? pd->eval_s * 1e6 / (double)smp.n : 0.0);
    if (smp.n < 2) return;
    size_t nd = smp.n - 1;
    uint64_t *d = xcalloc(nd, sizeof *d);
    size_t holes = 0, overlaps = 0;
    double width = 0;
    for (size_t i = 0; i < nd; i++) {
        d[i] = smp.v[i + 1].start > smp.v[i].start ? smp.v[i + 1].start - smp.v[i].start : 0;
        if (smp.v[i + 1].start < smp.v[i].end) overlaps++;
        width += (double)(smp.v[i].end - smp.v[i].start);
    }
    qsort(d, nd, sizeof *d, cmp_u64);
    uint64_t med = d[nd / 2];
    for (size_t i = 0; i < nd; i++)
        if (d[i] > 2 * med) holes++;
    say("achieved interval (start to start): median %.3f us, min %.3f us, max %.3f us; sample width mean %.3f us; "
        "gaps > 2x median: %zu; overlapping samples: %zu; span %.3f s\n",
        med / 1e3, d[0] / 1e3, d[nd - 1] / 1e3, width / (double)nd / 1e3, holes, overlaps,
        (smp.v[smp.n - 1].end - smp.v[0].start) / 1e9);
    double span = (double)(smp.v[smp.n - 1].end - smp.v[0].start) / 1e9;
    if (span > 0)
        say("host cost over the sampled span: %.2f %% of one core (decode + evaluation, all in this process)\n",
            100.0 * (pd->decode_s + pd->eval_s) / span);
    free(d);
}

/* idle_stretch: --idle-ms of nothing on the GPU (its context open; PM sampling running unless
 * --no-pm), its wall-clock span in the summary, so that the GPU's power over it (power.csv,
 * nvidia-smi's wall-clock timestamps) says what PM sampling alone costs the GPU. */
static void idle_stretch(void)
{
    if (opt.idle_ms <= 0) return;
    struct timespec a, b, d = {opt.idle_ms / 1000, (long)(opt.idle_ms % 1000) * 1000000L};
    clock_gettime(CLOCK_REALTIME, &a);
    while (nanosleep(&d, &d) != 0 && errno == EINTR) {
    }
    clock_gettime(CLOCK_REALTIME, &b);
    say("idle stretch: wall %.3f .. %.3f s (CLOCK_REALTIME), PM sampling %s\n", a.tv_sec + a.tv_nsec / 1e9,
        b.tv_sec + b.tv_nsec / 1e9, opt.pm ? "on" : "off");
}

static double wall_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* cycle_stretch: --cycle ON,OFF,N on an idle GPU: N times, PM sampling stopped (with
 * --cycle-disable: stopped and its object disabled) for OFF ms, then started (enabled) again for
 * ON ms, each switch's wall-clock time in the summary ("cycle: off at .. on at .."), so that the
 * GPU's power (power.csv) says whether its rise follows sampling or stays once it was on. */
static bool cycle_stretch(pm_setup *pm)
{
    char why[700];
    for (int i = 0; i < opt.cycles; i++) {
        pthread_mutex_lock(&pm_lock);
        double t_off = wall_s();
        twi_pm_device_stop(&pm->d, on_sample, NULL);
        if (opt.cycle_disable) {
            CUpti_PmSampling_Disable_Params dp = {.structSize = CUpti_PmSampling_Disable_Params_STRUCT_SIZE};
            dp.pPmSamplingObject = pm->d.obj;
            cupti_ok(cuptiPmSamplingDisable(&dp), "cuptiPmSamplingDisable");
            pm->d.obj = NULL;
            free(pm->d.image);
            free(pm->d.blank);
            pm->d.image = pm->d.blank = NULL;
        }
        double t_off_done = wall_s();
        pthread_mutex_unlock(&pm_lock);
        sleep_ms(opt.cycle_off_ms);
        pthread_mutex_lock(&pm_lock);
        double t_on = wall_s();
        bool ok = !opt.cycle_disable || pm_enable(pm);
        pm->d.started = pm->d.stopped = false;
        ok = ok && twi_pm_device_start(&pm->d, why, sizeof why);
        double t_on_done = wall_s();
        pthread_mutex_unlock(&pm_lock);
        say("cycle %d: off at %.3f (took %.1f ms), on at %.3f (took %.1f ms)%s\n", i, t_off, (t_off_done - t_off) * 1e3,
            t_on, (t_on_done - t_on) * 1e3, ok ? "" : " FAILED");
        if (!ok) {
            failed("PM sampling started again", "CUPTI", why, "", 0);
            return false;
        }
        sleep_ms(opt.cycle_on_ms);
    }
    return true;
}

/* ------------------------------------------------------------------ main */

static int usage(void)
{
    fprintf(stderr, "usage: pmprobe --out DIR [--interval-ns N] [--hwbuf-mb M] [--rounds R] [--per-group L] "
                    "[--gap-ms G] [--target-ms T] [--copy-mb C] [--decode-ms D] [--max-samples S] [--no-activity] "
                    "[--metrics a,b,c] [--idle-ms I] [--no-pm] [--cycle ON,OFF,N] [--cycle-disable]\n");
    return 2;
}

/* parse_u: a positive integer option value, or a message naming the option and exit 2. */
static unsigned long long parse_u(const char *opt_name, const char *s)
{
    char *end = NULL;
    errno = 0;
    unsigned long long v = strtoull(s ? s : "", &end, 10);
    if (!s || !*s || *end || errno || v == 0) {
        fprintf(stderr, "pmprobe: %s needs a positive integer, not '%s'\n", opt_name, s ? s : "");
        exit(2);
    }
    return v;
}

static void parse_args(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--no-activity") == 0) {
            opt.activity = false;
            continue;
        }
        if (strcmp(a, "--no-pm") == 0) {
            opt.pm = false;
            continue;
        }
        if (strcmp(a, "--cycle-disable") == 0) {
            opt.cycle_disable = true;
            continue;
        }
        if (!v) exit(usage());
        i++;
        if (strcmp(a, "--out") == 0)
            opt.out = v;
        else if (strcmp(a, "--interval-ns") == 0)
            opt.interval_ns = parse_u(a, v);
        else if (strcmp(a, "--hwbuf-mb") == 0)
            opt.hwbuf_mb = parse_u(a, v);
        else if (strcmp(a, "--rounds") == 0)
            opt.rounds = (int)parse_u(a, v);
        else if (strcmp(a, "--per-group") == 0)
            opt.per_group = (int)parse_u(a, v);
        else if (strcmp(a, "--gap-ms") == 0)
            opt.gap_ms = (int)parse_u(a, v);
        else if (strcmp(a, "--target-ms") == 0)
            opt.target_ms = (double)parse_u(a, v);
        else if (strcmp(a, "--copy-mb") == 0)
            opt.copy_mb = parse_u(a, v);
        else if (strcmp(a, "--decode-ms") == 0)
            opt.decode_ms = (int)parse_u(a, v);
        else if (strcmp(a, "--max-samples") == 0)
            opt.max_samples = (uint32_t)parse_u(a, v);
        else if (strcmp(a, "--metrics") == 0)
            opt.metrics = v;
        else if (strcmp(a, "--idle-ms") == 0)
            opt.idle_ms = (int)parse_u(a, v);
        else if (strcmp(a, "--cycle") == 0) {
            if (sscanf(v, "%d,%d,%d", &opt.cycle_on_ms, &opt.cycle_off_ms, &opt.cycles) != 3 || opt.cycle_on_ms <= 0 ||
                opt.cycle_off_ms <= 0 || opt.cycles <= 0) {
                fprintf(stderr, "pmprobe: --cycle needs ON_MS,OFF_MS,N (positive integers), not '%s'\n", v);
                exit(2);
            }
        } else {
            fprintf(stderr, "pmprobe: unknown option '%s'\n", a);
            exit(usage());
        }
    }
    if (!opt.out) exit(usage());
    if (opt.rounds > 100 || opt.per_group > 100) {
        fprintf(stderr, "pmprobe: --rounds and --per-group are at most 100\n");
        exit(2);
    }
}

int main(int argc, char **argv)
{
    parse_args(argc, argv);
    char path[4096];
    snprintf(path, sizeof path, "%s/summary.txt", opt.out);
    summary = fopen(path, "w");
    if (!summary) {
        fprintf(stderr, "pmprobe: cannot write %s: %s\n", path, strerror(errno));
        return 2;
    }
    say("pmprobe: interval %llu ns, hardware buffer %zu MiB, %d rounds x %d kinds x %d launches of ~%.0f ms, "
        "%d ms gaps, copy buffers 2 x %zu MiB, activity tracing %s, decode every %d ms (image of %u samples)\n",
        (unsigned long long)opt.interval_ns, opt.hwbuf_mb, opt.rounds, MAX_KINDS, opt.per_group, opt.target_ms,
        opt.gap_ms, opt.copy_mb, opt.activity ? "on" : "off", opt.decode_ms, opt.max_samples);
    uint32_t cupti_version = 0;
    if (cuptiGetVersion(&cupti_version) == CUPTI_SUCCESS) say("CUPTI API version %u\n", cupti_version);

    gpu g = {0};
    pm_setup pm = {0};
    bool activity_ok = false, sampling = false, thread_started = false;
    group groups[100 * MAX_KINDS];
    size_t n_groups = 0;
    pthread_t thread;
    uint64_t t_begin = 0;

    if (!gpu_open(&g, &activity_ok) || !calibrate(&g)) goto done;
    if (opt.pm && (!pm_prepare(&g, &pm, opt.out) || !pm_enable(&pm))) goto done;

    t_begin = cupti_now();
    char why[700];
    if (opt.pm && !twi_pm_device_start(&pm.d, why, sizeof why)) {
        failed("cuptiPmSamplingStart", "CUPTI", why, "", 0);
        goto done;
    }
    sampling = opt.pm;
    if (opt.pm && pthread_create(&thread, NULL, decode_thread, &pm) != 0) {
        failed("pthread_create (decode thread)", "libc", "", strerror(errno), errno);
        goto done;
    }
    thread_started = opt.pm;
    idle_stretch();
    if (opt.pm && opt.cycles && !cycle_stretch(&pm)) goto done;
    run_workload(&g, groups, &n_groups);

done:
    if (thread_started) {
        pthread_mutex_lock(&smp.lock);
        smp.stop = true;
        pthread_mutex_unlock(&smp.lock);
        pthread_join(thread, NULL);
    }
    /* the records up to now (the workload's last 100 ms were idle), stop, then what is left */
    if (sampling) twi_pm_device_stop(&pm.d, on_sample, NULL);
    if (opt.activity && activity_ok) cupti_ok(cuptiActivityFlushAll(1), "cuptiActivityFlushAll");

    if (smp.n) qsort(smp.v, smp.n, sizeof *smp.v, cmp_sample);
    write_samples(&pm, opt.out);
    report_samples(&pm);
    kernel_rec *k = NULL;
    const char *source = "";
    size_t nk = timeline(groups, n_groups, t_begin, &k, &source);
    write_kernels(k, nk, opt.out);
    say("\nkernel timeline: %zu launches from %s (planned %zu; activity records in all %zu, dropped %zu)\n", nk, source,
        n_groups * (size_t)opt.per_group, acts.n, acts.dropped);
    if (opt.activity)
        say("coexistence: activity tracing %s, PM sampling %s, kernel records while sampling: %zu\n",
            activity_ok ? "on"
            : g.ctx     ? "FAILED"
                        : "not reached",
            smp.n ? "gave samples" : "gave NO samples", nk);
    if (smp.n && nk && pm.d.n_metric) {
        say("clocks: first sample starts %.3f ms after sampling was started (cuptiGetTimestamp), first kernel "
            "%.3f ms after\n",
            ((double)smp.v[0].start - (double)t_begin) / 1e6, ((double)k[0].start - (double)t_begin) / 1e6);
        int64_t d0 = (int64_t)smp.v[0].start - (int64_t)t_begin;
        int64_t center = d0 > -50000000 && d0 < 50000000 ? 0 : d0; /* another clock: search around its offset */
        double c0 = contrast(k, nk, 0, 0), cb;
        int64_t lag = best_lag(k, nk, 0, center, &cb);
        say("alignment on %s: contrast (in kernels - outside) %.6g at lag 0, best %.6g at lag %+.3f ms\n",
            pm.d.metric[0], c0, cb, lag / 1e6);
        report_windows(&pm, &g, k, nk, 0);
        if (lag > 1000000 || lag < -1000000) report_windows(&pm, &g, k, nk, lag);
    }
    free(k);

    twi_pm_device_free(&pm.d);
    say("\nresult: %s (%d failed step(s))\n", n_failures ? "FAIL" : "OK", n_failures);
    fclose(summary);
    return n_failures ? 1 : 0;
}
