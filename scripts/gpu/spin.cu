// spin.cu - kernels of known length for validating truewatt on a GPU.
//
// Build (CUDA 12/13; sm_90 = H100):
//   nvcc -O2 -arch=sm_90 -o spin scripts/gpu/spin.cu
//
// Modes:
//   spin                 calibrate, then kernels of 1000, 300, 100, 30, 10 ms,
//                        each 3 times, 0.5 s idle before every kernel, an NVTX
//                        range around each group; prints a CSV of its own
//                        kernel timings (cudaEvent) on stdout
//   spin --bench N       N rounds of fixed work (no calibration): 2000 short
//                        kernels, 200 longer ones, 10 copies of 1 MiB each;
//                        prints "wall_s=X" (from the first launch to the end
//                        of the work): run with and without the injection
//                        library to measure its overhead
// Options:
//   --durations 1000,300,...  the kernel lengths in ms
//   --reps R             kernels per length (3)
//   --idle S             idle seconds before every kernel (0.5)
//   --lead-idle S        idle seconds before the first group (1.0)
//   --blocks-per-sm B    blocks of 256 threads per SM (default: as many as
//                        are resident at once, so one full wave on every SM)
//
// The CSV's t_launch_s / t_done_s are CLOCK_MONOTONIC seconds since
// $TW_T0_MONO_NS (0 when unset), the timeline of truewatt's trace and events,
// read just before the launch and just after the kernel's completion event.
// The kernel is a C++ function, so its name in the events file also shows
// that demangling works: "spin_fma(float*, unsigned long long)".
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <vector>

#define CHECK(call)                                                                                                    \
    do {                                                                                                               \
        cudaError_t err_ = (call);                                                                                     \
        if (err_ != cudaSuccess) {                                                                                     \
            fprintf(stderr, "spin: %s failed: %s (%s:%d)\n", #call, cudaGetErrorString(err_), __FILE__, __LINE__);    \
            exit(1);                                                                                                   \
        }                                                                                                              \
    } while (0)

static const int THREADS = 256;

// Eight independent FMA chains per thread keep the FP32 pipes busy; the
// result is stored only when it has an impossible value, so the compiler
// keeps the work and memory traffic stays nil.
__global__ void spin_fma(float *out, unsigned long long iters)
{
    float a0 = threadIdx.x * 1e-7f, a1 = a0 + 1e-7f, a2 = a0 + 2e-7f, a3 = a0 + 3e-7f;
    float a4 = a0 + 4e-7f, a5 = a0 + 5e-7f, a6 = a0 + 6e-7f, a7 = a0 + 7e-7f;
    const float m = 0.9999999f, c = 1e-7f;
    for (unsigned long long i = 0; i < iters; i++) {
#pragma unroll
        for (int k = 0; k < 16; k++) {
            a0 = fmaf(a0, m, c);
            a1 = fmaf(a1, m, c);
            a2 = fmaf(a2, m, c);
            a3 = fmaf(a3, m, c);
            a4 = fmaf(a4, m, c);
            a5 = fmaf(a5, m, c);
            a6 = fmaf(a6, m, c);
            a7 = fmaf(a7, m, c);
        }
    }
    float s = a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7;
    if (s == -12345.0f) out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

static double mono_s(void)
{
    static int init = 0;
    static unsigned long long t0 = 0;
    if (!init) {
        const char *e = getenv("TW_T0_MONO_NS");
        if (e && *e) t0 = strtoull(e, NULL, 10);
        init = 1;
    }
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    unsigned long long ns = (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
    return ((double)(long long)(ns - t0)) / 1e9;
}

static void sleep_s(double s)
{
    if (s <= 0) return;
    struct timespec ts;
    ts.tv_sec = (time_t)s;
    ts.tv_nsec = (long)((s - (double)ts.tv_sec) * 1e9);
    while (nanosleep(&ts, &ts) != 0) {
    }
}

struct Launcher {
    float *out;
    int grid;
    cudaEvent_t start, stop;
    // one kernel of `iters`, waited for; returns its cudaEvent time in ms
    float run(unsigned long long iters, double *t_launch, double *t_done)
    {
        if (t_launch) *t_launch = mono_s();
        CHECK(cudaEventRecord(start));
        spin_fma<<<grid, THREADS>>>(out, iters);
        CHECK(cudaGetLastError());
        CHECK(cudaEventRecord(stop));
        CHECK(cudaEventSynchronize(stop));
        if (t_done) *t_done = mono_s();
        float ms = 0;
        CHECK(cudaEventElapsedTime(&ms, start, stop));
        return ms;
    }
};

static std::vector<int> parse_list(const char *s)
{
    std::vector<int> v;
    while (*s) {
        char *end;
        long x = strtol(s, &end, 10);
        if (end == s || x <= 0) {
            fprintf(stderr, "spin: bad list '%s'\n", s);
            exit(2);
        }
        v.push_back((int)x);
        s = *end == ',' ? end + 1 : end;
    }
    return v;
}

int main(int argc, char **argv)
{
    std::vector<int> durations = {1000, 300, 100, 30, 10};
    int reps = 3, bench = 0, blocks_per_sm = 0;
    double idle = 0.5, lead_idle = 1.0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--bench") && v) bench = atoi(argv[++i]);
        else if (!strcmp(a, "--durations") && v) durations = parse_list(argv[++i]);
        else if (!strcmp(a, "--reps") && v) reps = atoi(argv[++i]);
        else if (!strcmp(a, "--idle") && v) idle = atof(argv[++i]);
        else if (!strcmp(a, "--lead-idle") && v) lead_idle = atof(argv[++i]);
        else if (!strcmp(a, "--blocks-per-sm") && v) blocks_per_sm = atoi(argv[++i]);
        else {
            fprintf(stderr,
                    "usage: spin [--durations MS,...] [--reps R] [--idle S] [--lead-idle S] [--blocks-per-sm B]\n"
                    "       spin --bench N\n");
            return 2;
        }
    }

    // the context first: NVTX ranges after this reach CUPTI (its activity
    // kinds are enabled while cuInit runs)
    CHECK(cudaFree(0));
    int dev = 0;
    CHECK(cudaGetDevice(&dev));
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, dev));
    int resident = 0;
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, spin_fma, THREADS, 0));
    if (blocks_per_sm <= 0) blocks_per_sm = resident > 0 ? resident : 8;

    Launcher L;
    L.grid = prop.multiProcessorCount * blocks_per_sm;
    CHECK(cudaMalloc(&L.out, (size_t)L.grid * THREADS * sizeof(float)));
    CHECK(cudaEventCreate(&L.start));
    CHECK(cudaEventCreate(&L.stop));
    fprintf(stderr, "spin: %s, %d SMs, grid %d x %d threads (%d blocks/SM, %d resident)\n", prop.name,
            prop.multiProcessorCount, L.grid, THREADS, blocks_per_sm, resident);

    if (bench > 0) {
        // fixed work, no calibration, so runs with and without tracing
        // compare: N rounds of 2000 short kernels (launch-bound: the
        // per-record cost of tracing shows), 200 longer ones and 10 copies
        const unsigned long long short_iters = 16, long_iters = 512;
        const size_t copy_bytes = 1 << 20;
        void *host = NULL, *devbuf = NULL;
        CHECK(cudaMallocHost(&host, copy_bytes));
        CHECK(cudaMalloc(&devbuf, copy_bytes));
        memset(host, 1, copy_bytes);
        L.run(long_iters, NULL, NULL); // warm-up, not timed
        double t0 = mono_s();
        long kernels = 0;
        for (int round = 0; round < bench; round++) {
            nvtxRangePushA("bench round");
            for (int k = 0; k < 2000; k++, kernels++) spin_fma<<<L.grid, THREADS>>>(L.out, short_iters);
            for (int k = 0; k < 200; k++, kernels++) {
                spin_fma<<<L.grid, THREADS>>>(L.out, long_iters);
                if (k % 20 == 19) CHECK(cudaMemcpyAsync(devbuf, host, copy_bytes, cudaMemcpyHostToDevice, 0));
            }
            CHECK(cudaGetLastError());
            CHECK(cudaDeviceSynchronize());
            nvtxRangePop();
        }
        double wall = mono_s() - t0;
        fprintf(stderr, "spin: bench %d rounds, %ld kernels, %.3f us per kernel\n", bench, kernels,
                wall / (double)kernels * 1e6);
        printf("wall_s=%.6f\n", wall);
        CHECK(cudaFreeHost(host));
        CHECK(cudaFree(devbuf));
        return 0;
    }

    // calibration: clocks up first, then iterations per ms from a ~200 ms kernel
    nvtxRangePushA("calibrate");
    unsigned long long iters = 1024;
    float ms = L.run(iters, NULL, NULL);
    for (int k = 0; k < 20 && ms < 20.0f; k++) {
        iters *= 4;
        ms = L.run(iters, NULL, NULL);
    }
    double per_ms = (double)iters / ms;
    for (int k = 0; k < 2; k++) {
        unsigned long long probe = (unsigned long long)(per_ms * 200.0);
        ms = L.run(probe, NULL, NULL);
        per_ms = (double)probe / ms;
    }
    nvtxRangePop();
    fprintf(stderr, "spin: %.1f iterations per ms\n", per_ms);

    printf("name,group,rep,target_ms,iterations,measured_ms,t_launch_s,t_done_s\n");
    fflush(stdout);
    sleep_s(lead_idle);
    for (size_t g = 0; g < durations.size(); g++) {
        char range[64];
        snprintf(range, sizeof range, "spin %d ms x%d", durations[g], reps);
        nvtxRangePushA(range);
        unsigned long long n = (unsigned long long)(per_ms * durations[g] + 0.5);
        if (n == 0) n = 1;
        for (int r = 0; r < reps; r++) {
            sleep_s(idle);
            double t_launch, t_done;
            float got = L.run(n, &t_launch, &t_done);
            printf("spin_fma,%s,%d,%d,%llu,%.4f,%.6f,%.6f\n", range, r, durations[g], n, got, t_launch, t_done);
            fflush(stdout);
        }
        nvtxRangePop();
    }
    sleep_s(idle);
    CHECK(cudaFree(L.out));
    CHECK(cudaEventDestroy(L.start));
    CHECK(cudaEventDestroy(L.stop));
    return 0;
}
