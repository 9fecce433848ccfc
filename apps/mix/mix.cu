// Build: nvcc -O3 -arch=sm_90 -lineinfo -o build-gpu/mix apps/mix/mix.cu
// Run:   build-gpu/mix --list                       the kernels and patterns (no GPU needed)
//        build-gpu/mix --plan PATTERN [--seed N]    the planned launches as CSV (no GPU needed)
//        build-gpu/mix --save-calib FILE            calibrate every kernel, write FILE, exit
//        build-gpu/mix PATTERN [--only NAME [--fill-wait] | --without NAME] [--seed N] [--seconds S] [--quiet S]
//                          [--calib FILE]
//        build-gpu/mix --steady NAME [--seconds S] [--quiet S] [--calib FILE]
//
// The workload of the per-kernel energy validation (issue 15, docs/attrib.md): five kernel
// types of clearly different power, each in several duration classes, launched in four
// patterns whose energy truewatt must attribute per kernel name.
//
//   gemm_*    tensor cores: a WMMA fp16 GEMM (fp32 accumulate), 32x32 of C per warp
//   fma_*     fp32 FMA chains in registers
//   stream_*  a DRAM triad a = b + 2c over 3 x 512 MiB (a window per launch, moving on)
//   l2_*      8 MiB read over and over through the L2 (ld.global.cg)
//   wait_*    one warp spinning on %globaltimer: nearly idle
//
// Each kernel name is its own __global__ function (gemm_50us ... gemm_20ms): the estimator works
// per name, and one name must always do the same work. A name's duration is set by its work
// parameter (steps, iterations, elements, ns), calibrated with cudaEvents so that one launch
// lasts the name's class (50 us .. 20 ms). The calibration launches the *_calib functions (same
// code, another name), so they never count as launches of a measured name; --save-calib and
// --calib let every run of a study use the same work parameters.
//
// A pattern run: fill the data, load every kernel (cudaFuncGetAttributes; no launch), a quiet
// stretch (--quiet S, default 1.5 s: nothing runs, for the baseline), the pattern (--seconds S,
// default 6), another quiet stretch, then each name's last result against a CPU reference
// (stderr "check PASS"/"check FAIL"; a failure exits 1). The launches follow a plan made from
// the seed alone: each launch has a planned time, and the host waits for it on CLOCK_MONOTONIC
// before launching. A burst's launches are planned back to back from the classes' nominal
// durations (+5 % + 10 us), so each launch finds the GPU (nearly) free in the full pattern too.
// --only NAME performs only NAME's launches, at the same planned times: the "solo" reference.
// --fill-wait (with --only) launches the nearly idle wait_calib in place of every other launch, for
// the replaced launch's nominal duration: the GPU stays as busy as in the full pattern (its clocks
// too: left idle between NAME's launches, the H100 ran short compute kernels up to 66 % slower),
// and the fills' own energy is small and known (a steady wait run measures it).
// --without NAME performs every launch but NAME's, at the same planned times: with the full pattern's
// energy, NAME's marginal energy in it (the leave-one-out reference: what NAME adds to the pattern,
// at the clocks the others keep; scripts/gpu-attrib with TW_ATTRIB_LOO=1).
// --steady NAME launches NAME back to back for --seconds (>= 4 s for the reference). The pattern
// or the steady loop is the NVTX range "tw_measure" (apps/README.md).
//
// stdout, at the end (times on truewatt's timeline: seconds since $TW_T0_MONO_NS on
// CLOCK_MONOTONIC, or since the program's start when it is unset; clock= says which):
//   mix.window pattern=P only=NAME|- [without=NAME] seed=N clock=tw|self quiet_before_start_s=.. quiet_before_end_s=..
//              start_s=.. end_s=.. quiet_after_start_s=.. quiet_after_end_s=..
//              [fill=wait_calib fill_launches=N fill_time_s=T]   (with --fill-wait: the fills' count
//              and summed duration, from cudaEvents)
//   mix.kernel name=NAME launches=N mean_duration_s=.. work=W target_s=.. gpu_lag_mean_s=.. gpu_lag_max_s=..
//      (one per name run; the lag: how much later than planned its launches started on the GPU,
//      from cudaEvents: in the full pattern a launch may wait for the one before; 0 for --steady)
// Bad arguments exit 2, a CUDA error or a failed check exits 1.
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <mma.h>
#include <nvtx3/nvToolsExt.h>  // header-only NVTX v3: nothing to link

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <map>
#include <string>
#include <vector>

#define CHECK(call)                                                                                              \
    do {                                                                                                         \
        cudaError_t err_ = (call);                                                                               \
        if (err_ != cudaSuccess) {                                                                               \
            fprintf(stderr, "mix: CUDA error at %s:%d: %s (%s)\n", __FILE__, __LINE__, cudaGetErrorString(err_), \
                    #call);                                                                                      \
            exit(1);                                                                                             \
        }                                                                                                        \
    } while (0)
#define CHECK_LAUNCH() CHECK(cudaGetLastError())

__attribute__((noreturn)) static void die_usage(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "mix: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, " (mix --help)\n");
    va_end(ap);
    exit(2);
}

// ---------------------------------------------------------------- data
// lowbias32: the same on host and device, so the CPU references rebuild any input exactly
static __host__ __device__ inline unsigned hash32(unsigned x) {
    x ^= x >> 16;
    x *= 0x7feb352dU;
    x ^= x >> 15;
    x *= 0x846ca68bU;
    x ^= x >> 16;
    return x;
}
// small integers as floats: sums of them are exact in fp32 (below 2^24)
static __host__ __device__ inline float int_at(size_t i, unsigned seed, unsigned mod) {
    return (float)(hash32((unsigned)i * 2654435761U + seed) % mod);
}
static __host__ __device__ inline float pm1_at(size_t i, unsigned seed) {  // -1, 0 or 1
    return int_at(i, seed, 3) - 1.0f;
}

extern "C" __global__ void mix_fill_f32(float *p, size_t n, unsigned seed, unsigned mod, float add) {
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        p[i] = int_at(i, seed, mod) + add;
}
extern "C" __global__ void mix_fill_const(float *p, size_t n, float v) {
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) p[i] = v;
}
extern "C" __global__ void mix_fill_h(__half *p, size_t n, unsigned seed) {
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        p[i] = __float2half(pm1_at(i, seed));
}

// Every kernel takes the same argument block, so one launcher runs any of them.
struct Args {
    void *a, *b, *c;
    unsigned long long work;    // the duration parameter
    unsigned long long offset;  // stream_*: where this launch's window starts (float4 index)
};

// ---------------------------------------------------------------- kernel bodies
// gemm: C (GEMM_M x N, fp32) = sum over `work` k-steps of 16 of A[:, k] B[k, :], k cycling over
// GEMM_K. Each warp owns a 32x32 block of C (2x2 fragments): 4 loads and 4 mma per k-step.
// Grid: SMs x 2 blocks of 4 warps; warp w -> rows 32 (w % 8), columns 32 (w / 8), N = 32 * SMs.
#define GEMM_M 256
#define GEMM_K 512
#define GEMM_WARPS_PER_BLOCK 4
__device__ __forceinline__ void gemm_body(const Args &p) {
    using namespace nvcuda;
    const __half *A = (const __half *)p.a, *B = (const __half *)p.b;  // A row-major M x K, B row-major K x N
    float *C = (float *)p.c;
    const int N = 32 * (gridDim.x / 2);
    const int w = blockIdx.x * GEMM_WARPS_PER_BLOCK + threadIdx.x / 32;
    const int row = 32 * (w % (GEMM_M / 32)), col = 32 * (w / (GEMM_M / 32));
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[2][2];
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++) wmma::fill_fragment(acc[i][j], 0.0f);
    wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> fa[2];
    wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::row_major> fb[2];
    int k = 0;
    for (unsigned long long s = 0; s < p.work; s++) {
        for (int i = 0; i < 2; i++) wmma::load_matrix_sync(fa[i], A + (size_t)(row + 16 * i) * GEMM_K + k, GEMM_K);
        for (int j = 0; j < 2; j++) wmma::load_matrix_sync(fb[j], B + (size_t)k * N + col + 16 * j, N);
        for (int i = 0; i < 2; i++)
            for (int j = 0; j < 2; j++) wmma::mma_sync(acc[i][j], fa[i], fb[j], acc[i][j]);
        k = (k + 16) % GEMM_K;
    }
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++)
            wmma::store_matrix_sync(C + (size_t)(row + 16 * i) * N + col + 16 * j, acc[i][j], N, wmma::mem_row_major);
}

// fma: FMA_CHAINS independent chains per thread, x = x * 0.9999 + 0.0001, `work` rounds.
#define FMA_CHAINS 8
#define FMA_A 0.9999f
#define FMA_B 0.0001f
__host__ __device__ inline float fma_start(unsigned t, int c) { return (float)(t * FMA_CHAINS + c) * 1e-7f; }
__device__ __forceinline__ void fma_body(const Args &p) {
    const unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
    float x[FMA_CHAINS];
#pragma unroll
    for (int c = 0; c < FMA_CHAINS; c++) x[c] = fma_start(t, c);
    for (unsigned long long r = 0; r < p.work; r++) {
#pragma unroll
        for (int c = 0; c < FMA_CHAINS; c++) x[c] = __fmaf_rn(x[c], FMA_A, FMA_B);
    }
    float *out = (float *)p.c;
#pragma unroll
    for (int c = 0; c < FMA_CHAINS; c++) out[(size_t)t * FMA_CHAINS + c] = x[c];
}

// stream: a[i] = b[i] + 2 c[i] over float4s i = offset .. offset + work - 1 (mod STREAM_N4).
#define STREAM_N4 (1ULL << 25)  // float4s per array: 512 MiB each, 1.5 GiB in all
__device__ __forceinline__ void stream_body(const Args &p) {
    float4 *a = (float4 *)p.c;
    const float4 *b = (const float4 *)p.a, *c = (const float4 *)p.b;
    const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long k = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; k < p.work; k += stride) {
        const unsigned long long i = (p.offset + k) & (STREAM_N4 - 1);
        float4 x = __ldcs(b + i), y = __ldcs(c + i);
        __stcs(a + i, make_float4(x.x + 2.0f * y.x, x.y + 2.0f * y.y, x.z + 2.0f * y.z, x.w + 2.0f * y.w));
    }
}

// l2: each thread sums `work` float4s of an 8 MiB buffer, i = (t + r T) mod L2_N4, through the L2.
#define L2_N4 (1U << 19)  // 8 MiB
__device__ __forceinline__ void l2_body(const Args &p) {
    const float4 *buf = (const float4 *)p.a;
    const unsigned T = gridDim.x * blockDim.x, t = blockIdx.x * blockDim.x + threadIdx.x;
    float4 s = make_float4(0, 0, 0, 0);
    unsigned i = t & (L2_N4 - 1);
#pragma unroll 8
    for (unsigned long long r = 0; r < p.work; r++) {
        float4 v = __ldcg(buf + i);
        s.x += v.x, s.y += v.y, s.z += v.z, s.w += v.w;
        i = (i + T) & (L2_N4 - 1);
    }
    ((float *)p.c)[t] = (s.x + s.y) + (s.z + s.w);
}

// wait: one warp; lane 0 spins on %globaltimer (ns) until `work` ns have passed.
__device__ __forceinline__ unsigned long long globaltimer() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}
__device__ __forceinline__ void wait_body(const Args &p) {
    if (threadIdx.x != 0) return;
    const unsigned long long t0 = globaltimer();
    unsigned long long t = t0;
    while (t - t0 < p.work) {
        __nanosleep(500);
        t = globaltimer();
    }
    *(unsigned long long *)p.c = t - t0;
}

// ---------------------------------------------------------------- the named kernels
enum Type { GEMM, FMA, STREAM, L2, WAIT, NTYPES };
static const char *const TYPE_NAMES[NTYPES] = {"gemm", "fma", "stream", "l2", "wait"};

// the duration classes: tag, microseconds (0: the calibration instance)
#define MIX_CLASSES(X) \
    X(calib, 0)        \
    X(50us, 50)        \
    X(100us, 100) X(200us, 200) X(500us, 500) X(1ms, 1000) X(2ms, 2000) X(5ms, 5000) X(10ms, 10000) X(20ms, 20000)

#define DEF_KERNELS(tag, us)                                                                                     \
    extern "C" __global__ void __launch_bounds__(32 * GEMM_WARPS_PER_BLOCK) gemm_##tag(Args p) { gemm_body(p); } \
    extern "C" __global__ void __launch_bounds__(256) fma_##tag(Args p) { fma_body(p); }                         \
    extern "C" __global__ void __launch_bounds__(512) stream_##tag(Args p) { stream_body(p); }                   \
    extern "C" __global__ void __launch_bounds__(512) l2_##tag(Args p) { l2_body(p); }                           \
    extern "C" __global__ void __launch_bounds__(32) wait_##tag(Args p) { wait_body(p); }
MIX_CLASSES(DEF_KERNELS)

typedef void (*KernelFn)(Args);
struct KDef {
    std::string name;
    Type type;
    double target_s;  // 0 for the calibration instance
    KernelFn fn;
};

static std::vector<KDef> registry() {
    std::vector<KDef> r;
#define REG(tag, us)                                                \
    r.push_back({"gemm_" #tag, GEMM, us * 1e-6, gemm_##tag});       \
    r.push_back({"fma_" #tag, FMA, us * 1e-6, fma_##tag});          \
    r.push_back({"stream_" #tag, STREAM, us * 1e-6, stream_##tag}); \
    r.push_back({"l2_" #tag, L2, us * 1e-6, l2_##tag});             \
    r.push_back({"wait_" #tag, WAIT, us * 1e-6, wait_##tag});
    MIX_CLASSES(REG)
#undef REG
    return r;
}
static const std::vector<KDef> &kdefs() {
    static const std::vector<KDef> r = registry();
    return r;
}
static int kdef_index(const std::string &name) {
    for (size_t i = 0; i < kdefs().size(); i++)
        if (kdefs()[i].name == name) return (int)i;
    return -1;
}
static int calib_index(Type t) { return kdef_index(std::string(TYPE_NAMES[t]) + "_calib"); }

// ---------------------------------------------------------------- patterns (no GPU needed)
struct Launch {
    double t_s;  // planned host launch time, from the pattern's start
    int stream;  // 0 or 1
    int k;       // index into kdefs()
};

struct Rng {  // splitmix64: the same sequence on every platform, unlike <random>'s distributions
    uint64_t s;
    uint64_t next() {
        uint64_t z = (s += 0x9E3779B97F4A7C15ULL);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
        return z ^ (z >> 31);
    }
    double uniform(double lo, double hi) {
        return lo + (hi - lo) * (double)(next() >> 11) * (1.0 / 9007199254740992.0);
    }
    int integer(int lo, int hi) { return lo + (int)(next() % (uint64_t)(hi - lo + 1)); }  // [lo, hi]
};

// nominal time a launch of k occupies in the plan: its class, 5 % slack and 10 us for the launch
static double slot_s(int k) { return kdefs()[k].target_s * 1.05 + 10e-6; }

static std::vector<int> names_of(std::initializer_list<const char *> l) {
    std::vector<int> v;
    for (const char *n : l) v.push_back(kdef_index(n));
    return v;
}

struct Pattern {
    const char *name;
    const char *what;
};
static const Pattern PATTERNS[] = {
    {"bursts", "random bursts of 1-20 launches of 5 kernels, random 5-40 ms gaps"},
    {"mixed", "bursts of 2-12 launches of 6 names from 50 us to 20 ms, random 5-40 ms gaps"},
    {"mixed-even", "bursts of 2-30 ms of the same 6 names, each drawn for an equal share of busy time, 5-40 ms gaps"},
    {"streams", "two streams, each random bursts of 1-10 launches of its 2 kernels, random 5-40 ms gaps"},
    {"steps", "a fixed sequence of 10 launches (a 'training step') repeated, gaps of 5-11 ms"},
};

// bursts of [bmin, bmax] launches drawn from `names` on `stream`, separated by 5-40 ms gaps
static void plan_bursts(std::vector<Launch> &plan, Rng &rng, const std::vector<int> &names, int bmin, int bmax,
                        int stream, double seconds) {
    double t = rng.uniform(0.005, 0.040);
    while (t < seconds) {
        int n = rng.integer(bmin, bmax);
        for (int i = 0; i < n; i++) {
            int k = names[rng.integer(0, (int)names.size() - 1)];
            plan.push_back({t, stream, k});
            t += slot_s(k);
        }
        t += rng.uniform(0.005, 0.040);
    }
}

// bursts of a random 2-30 ms span filled with launches from `names`, each drawn with a probability
// inversely proportional to its slot, so that every name gets the same busy time on average: a short
// name's energy above the baseline is then as large as a long one's, and its solo reference as sharp
// (in "mixed", drawn per launch, 414 launches of fma_100us added 7-12 J to ~2,500 J of baseline)
static void plan_even(std::vector<Launch> &plan, Rng &rng, const std::vector<int> &names, double seconds) {
    double total = 0;
    for (int k : names) total += 1.0 / slot_s(k);
    double t = rng.uniform(0.005, 0.040);
    while (t < seconds) {
        const double end = t + rng.uniform(0.002, 0.030);
        while (t < end) {
            double u = rng.uniform(0, total);
            int k = names.back();
            for (int c : names)
                if ((u -= 1.0 / slot_s(c)) < 0) {
                    k = c;
                    break;
                }
            plan.push_back({t, 0, k});
            t += slot_s(k);
        }
        t += rng.uniform(0.005, 0.040);
    }
}

static bool make_plan(const std::string &pattern, uint64_t seed, double seconds, std::vector<Launch> &plan) {
    Rng rng{seed * 0x2545F4914F6CDD1DULL + 1};
    plan.clear();
    if (pattern == "bursts") {
        plan_bursts(plan, rng, names_of({"gemm_2ms", "fma_1ms", "stream_1ms", "l2_500us", "wait_1ms"}), 1, 20, 0,
                    seconds);
    } else if (pattern == "mixed") {
        plan_bursts(plan, rng, names_of({"gemm_50us", "fma_100us", "stream_200us", "l2_1ms", "fma_5ms", "gemm_20ms"}),
                    2, 12, 0, seconds);
    } else if (pattern == "mixed-even") {
        plan_even(plan, rng, names_of({"gemm_50us", "fma_100us", "stream_200us", "l2_1ms", "fma_5ms", "gemm_20ms"}),
                  seconds);
    } else if (pattern == "streams") {
        Rng rng1{rng.next()};
        plan_bursts(plan, rng, names_of({"gemm_2ms", "l2_500us"}), 1, 10, 0, seconds);
        plan_bursts(plan, rng1, names_of({"stream_1ms", "fma_1ms"}), 1, 10, 1, seconds);
        std::stable_sort(plan.begin(), plan.end(), [](const Launch &x, const Launch &y) { return x.t_s < y.t_s; });
    } else if (pattern == "steps") {
        const std::vector<int> step = names_of({"gemm_2ms", "l2_500us", "gemm_2ms", "stream_1ms", "fma_1ms", "gemm_2ms",
                                                "l2_500us", "stream_1ms", "wait_1ms", "fma_1ms"});
        double t = 0.005;
        while (t < seconds) {
            for (int k : step) {
                plan.push_back({t, 0, k});
                t += slot_s(k);
            }
            t += rng.uniform(0.005, 0.011);  // the host's part of a step; its jitter moves the phase
        }
    } else {
        return false;
    }
    return true;
}

static std::vector<int> plan_names(const std::vector<Launch> &plan) {
    std::vector<int> v;
    for (const Launch &l : plan)
        if (std::find(v.begin(), v.end(), l.k) == v.end()) v.push_back(l.k);
    return v;
}

// ---------------------------------------------------------------- time
static int64_t mono_ns() {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}
// sleeps to 300 us before t, then spins: launches land within a few us of their plan
static void wait_until_ns(int64_t t) {
    int64_t now = mono_ns();
    if (t - now > 400000) {
        int64_t wake = t - 300000;
        struct timespec ts = {(time_t)(wake / 1000000000LL), (long)(wake % 1000000000LL)};
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {
        }
    }
    while (mono_ns() < t) {
    }
}
static int64_t g_t0_ns;  // the timeline's origin
static const char *g_clock = "self";
static double tl(int64_t ns) { return (double)(ns - g_t0_ns) * 1e-9; }

// ---------------------------------------------------------------- the GPU side
static int g_sms = 0;
struct Buffers {
    __half *ga = nullptr, *gb = nullptr;                // gemm inputs
    float *sa = nullptr, *sb = nullptr, *sc = nullptr;  // stream: a = b + 2c
    float *l2 = nullptr;                                // the L2 buffer
    std::map<int, void *> out;                          // each name's own output
};
static Buffers g_buf;

static int gemm_n() { return 32 * g_sms; }
static dim3 grid_of(Type t) {
    switch (t) {
        case GEMM:
            return dim3(2 * g_sms);
        case FMA:
            return dim3(g_sms);
        case STREAM:
        case L2:
            return dim3(2 * g_sms);
        default:
            return dim3(1);
    }
}
static dim3 block_of(Type t) {
    switch (t) {
        case GEMM:
            return dim3(32 * GEMM_WARPS_PER_BLOCK);
        case FMA:
            return dim3(256);
        case STREAM:
        case L2:
            return dim3(512);
        default:
            return dim3(32);
    }
}
static size_t threads_of(Type t) { return (size_t)grid_of(t).x * block_of(t).x; }
static size_t out_bytes(Type t) {
    switch (t) {
        case GEMM:
            return (size_t)GEMM_M * gemm_n() * sizeof(float);
        case FMA:
            return threads_of(FMA) * FMA_CHAINS * sizeof(float);
        case STREAM:
            return 0;  // writes the shared array a
        case L2:
            return threads_of(L2) * sizeof(float);
        default:
            return sizeof(unsigned long long);
    }
}

// every type's data, whatever the names: the calibration may run any type
static void setup_buffers() {
    const dim3 fg(g_sms * 8), fb(256);
    CHECK(cudaMalloc(&g_buf.ga, (size_t)GEMM_M * GEMM_K * sizeof(__half)));
    CHECK(cudaMalloc(&g_buf.gb, (size_t)GEMM_K * gemm_n() * sizeof(__half)));
    mix_fill_h<<<fg, fb>>>(g_buf.ga, (size_t)GEMM_M * GEMM_K, 11);
    CHECK_LAUNCH();
    mix_fill_h<<<fg, fb>>>(g_buf.gb, (size_t)GEMM_K * gemm_n(), 12);
    CHECK_LAUNCH();
    const size_t sn = STREAM_N4 * 4;
    CHECK(cudaMalloc(&g_buf.sa, sn * sizeof(float)));
    CHECK(cudaMalloc(&g_buf.sb, sn * sizeof(float)));
    CHECK(cudaMalloc(&g_buf.sc, sn * sizeof(float)));
    mix_fill_const<<<fg, fb>>>(g_buf.sa, sn, -1.0f);  // never a result: b + 2c >= 0
    CHECK_LAUNCH();
    mix_fill_f32<<<fg, fb>>>(g_buf.sb, sn, 21, 1000, 0.0f);
    CHECK_LAUNCH();
    mix_fill_f32<<<fg, fb>>>(g_buf.sc, sn, 22, 1000, 0.0f);
    CHECK_LAUNCH();
    CHECK(cudaMalloc(&g_buf.l2, (size_t)L2_N4 * 4 * sizeof(float)));
    mix_fill_f32<<<fg, fb>>>(g_buf.l2, (size_t)L2_N4 * 4, 31, 4, 0.0f);
    CHECK_LAUNCH();
    for (size_t k = 0; k < kdefs().size(); k++) {
        size_t n = out_bytes(kdefs()[k].type);
        if (n == 0) continue;
        void *p;
        CHECK(cudaMalloc(&p, n));
        CHECK(cudaMemset(p, 0, n));
        g_buf.out[(int)k] = p;
    }
    CHECK(cudaDeviceSynchronize());
}

static Args args_of(int k, unsigned long long work, unsigned long long offset) {
    Args a{};
    a.work = work;
    a.offset = offset;
    switch (kdefs()[k].type) {
        case GEMM:
            a.a = g_buf.ga, a.b = g_buf.gb, a.c = g_buf.out[k];
            break;
        case FMA:
            a.c = g_buf.out[k];
            break;
        case STREAM:
            a.a = g_buf.sb, a.b = g_buf.sc, a.c = g_buf.sa;
            break;
        case L2:
            a.a = g_buf.l2, a.c = g_buf.out[k];
            break;
        default:
            a.c = g_buf.out[k];
            break;
    }
    return a;
}

static unsigned long long g_stream_offset = 0;  // stream_*: each launch moves on past the last window
static void launch(int k, unsigned long long work, cudaStream_t s) {
    const Type t = kdefs()[k].type;
    unsigned long long off = 0;
    if (t == STREAM) {
        off = g_stream_offset;
        g_stream_offset = (g_stream_offset + work) & (STREAM_N4 - 1);
    }
    kdefs()[k].fn<<<grid_of(t), block_of(t), 0, s>>>(args_of(k, work, off));
    CHECK_LAUNCH();
}

// seconds of one launch of k with `work` (median of n)
static double time_launch(int k, unsigned long long work, int n) {
    cudaEvent_t e0, e1;
    CHECK(cudaEventCreate(&e0));
    CHECK(cudaEventCreate(&e1));
    std::vector<double> v;
    for (int i = 0; i < n; i++) {
        CHECK(cudaEventRecord(e0));
        launch(k, work, 0);
        CHECK(cudaEventRecord(e1));
        CHECK(cudaEventSynchronize(e1));
        float ms;
        CHECK(cudaEventElapsedTime(&ms, e0, e1));
        v.push_back(ms * 1e-3);
    }
    CHECK(cudaEventDestroy(e0));
    CHECK(cudaEventDestroy(e1));
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

// ---------------------------------------------------------------- calibration
// A type's time is close to a + b work: b from two works of 2 ms and more, a from the smaller;
// then each class's work is checked by timing and corrected once. Only the *_calib functions run.
static std::map<int, unsigned long long> g_work;  // kdefs() index -> work
static std::map<int, double> g_calib_s;           // the time of a launch with that work, s (median)

static void calibrate(const std::vector<int> &names) {
    for (int t = 0; t < NTYPES; t++) {
        std::vector<int> mine;
        for (int k : names)
            if (kdefs()[k].type == t && !g_work.count(k)) mine.push_back(k);
        if (mine.empty()) continue;
        const int c = calib_index((Type)t);
        if (t == WAIT) {  // time itself: work is ns, less the launch's own time
            double a = time_launch(c, 1000, 5) - 1e-6;
            for (int k : mine) {
                g_work[k] = (unsigned long long)std::max(1000.0, (kdefs()[k].target_s - std::max(0.0, a)) * 1e9);
                g_calib_s[k] = time_launch(c, g_work[k], 3);
            }
        } else {
            unsigned long long w = 16;
            time_launch(c, w, 2);  // the first launches are slow
            double t1;
            while ((t1 = time_launch(c, w, 3)) < 2e-3) w *= 2;
            double t2 = time_launch(c, 2 * w, 3);
            double b = (t2 - t1) / (double)w, a = t1 - b * (double)w;
            if (!(b > 0)) {
                fprintf(stderr, "mix: calibration of %s failed: %g s at work %llu, %g s at %llu\n", TYPE_NAMES[t], t1,
                        w, t2, 2 * w);
                exit(1);
            }
            for (int k : mine) {
                double target = kdefs()[k].target_s;
                unsigned long long wk = (unsigned long long)std::max(1.0, std::round((target - std::max(0.0, a)) / b));
                double m = time_launch(c, wk, 5);
                for (int pass = 0; pass < 2 && std::fabs(m / target - 1) >= 0.02; pass++) {
                    wk = (unsigned long long)std::max(1.0, std::round((double)wk * target / m));
                    m = time_launch(c, wk, 5);
                }
                g_work[k] = wk;
                g_calib_s[k] = m;
            }
        }
    }
    for (int k : names)
        if (g_calib_s.count(k))
            fprintf(stderr, "mix: calibrated %-14s work %-12llu %9.1f us a launch (class %.0f us)\n",
                    kdefs()[k].name.c_str(), g_work[k], g_calib_s[k] * 1e6, kdefs()[k].target_s * 1e6);
}

static void save_calib(const char *path) {
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "mix: cannot write %s: %s\n", path, strerror(errno));
        exit(1);
    }
    fprintf(f, "# mix calibration: name work (one launch lasts the name's class on this GPU)\n");
    for (auto &kv : g_work) fprintf(f, "%s %llu\n", kdefs()[kv.first].name.c_str(), kv.second);
    if (fclose(f) != 0) {
        fprintf(stderr, "mix: cannot write %s: %s\n", path, strerror(errno));
        exit(1);
    }
}

static void load_calib(const char *path) {
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "mix: cannot read %s: %s\n", path, strerror(errno));
        exit(1);
    }
    char line[256], name[128];
    unsigned long long w;
    for (int no = 1; fgets(line, sizeof line, f); no++) {
        if (line[0] == '#' || line[0] == '\n') continue;
        int k;
        if (sscanf(line, "%127s %llu", name, &w) != 2 || (k = kdef_index(name)) < 0 || w == 0) {
            fprintf(stderr, "mix: %s:%d: expected 'NAME WORK' with a known name and WORK >= 1: %s", path, no, line);
            exit(1);
        }
        g_work[k] = w;
    }
    fclose(f);
}

// ---------------------------------------------------------------- checks (CPU references)
static std::string fmt(const char *f, ...) {
    char b[512];
    va_list ap;
    va_start(ap, f);
    vsnprintf(b, sizeof b, f, ap);
    va_end(ap);
    return b;
}

template <typename T>
static std::vector<T> d2h(const void *d, size_t n) {
    std::vector<T> h(n);
    CHECK(cudaMemcpy(h.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost));
    return h;
}

static bool check_gemm(int k, unsigned long long work, std::string &why) {
    const int N = gemm_n();
    std::vector<float> C = d2h<float>(g_buf.out[k], (size_t)GEMM_M * N);
    const unsigned long long ksteps = GEMM_K / 16, full = work / ksteps, part = (work % ksteps) * 16;
    for (int s = 0; s < 64; s++) {
        int i = s == 0 ? 0 : s == 1 ? GEMM_M - 1 : (int)(hash32(s) % GEMM_M);
        int j = s == 0 ? 0 : s == 1 ? N - 1 : (int)(hash32(s + 1000) % N);
        double whole = 0, head = 0;
        for (int kk = 0; kk < GEMM_K; kk++) {
            double prod = (double)pm1_at((size_t)i * GEMM_K + kk, 11) * pm1_at((size_t)kk * N + j, 12);
            whole += prod;
            if ((unsigned long long)kk < part) head += prod;
        }
        double want = (double)full * whole + head;
        float got = C[(size_t)i * N + j];
        // exact while the running sums stay below 2^24 (|C| grows like work/32 |row.col|); a
        // longer class may round in its last bits, never more than this
        if (std::fabs(got - want) > std::fabs(want) * 1e-6) {
            why = fmt("C[%d][%d] = %.9g, expected %.9g", i, j, got, want);
            return false;
        }
    }
    why = fmt("64 elements of C right (%llu k-steps)", work);
    return true;
}

static bool check_fma(int k, unsigned long long work, std::string &why) {
    const size_t T = threads_of(FMA);
    std::vector<float> o = d2h<float>(g_buf.out[k], T * FMA_CHAINS);
    const unsigned ts[2] = {0, (unsigned)T - 1};
    for (unsigned t : ts) {
        const int c = (int)(t % FMA_CHAINS);
        float x = fma_start(t, c);
        for (unsigned long long r = 0; r < work; r++) x = std::fmaf(x, FMA_A, FMA_B);
        float got = o[(size_t)t * FMA_CHAINS + c];
        if (got != x) {
            why = fmt("thread %u chain %d = %.9g, expected %.9g", t, c, got, x);
            return false;
        }
    }
    why = fmt("2 chains of %llu FMAs exact", work);
    return true;
}

// three chunks of a (one copy each: a few memcpy rows in the timeline, not thousands)
static bool check_stream(std::string &why) {
    const size_t n = STREAM_N4 * 4, chunk = 1 << 16;
    const size_t offs[3] = {0, n / 2 + 12345, n - chunk};
    size_t written = 0;
    for (size_t off : offs) {
        std::vector<float> a = d2h<float>(g_buf.sa + off, chunk);
        for (size_t j = 0; j < chunk; j++) {
            const size_t i = off + j;
            if (a[j] == -1.0f) continue;  // not written (yet)
            float want = int_at(i, 21, 1000) + 2.0f * int_at(i, 22, 1000);
            if (a[j] != want) {
                why = fmt("a[%zu] = %.9g, expected %.9g", i, a[j], want);
                return false;
            }
            written++;
        }
    }
    if (written == 0) {
        why = fmt("none of the %zu elements of a read back was written", 3 * chunk);
        return false;
    }
    why = fmt("%zu of %zu elements read back written, all exact", written, 3 * chunk);
    return true;
}

static bool check_l2(int k, unsigned long long work, std::string &why) {
    const unsigned T = (unsigned)threads_of(L2);
    std::vector<float> o = d2h<float>(g_buf.out[k], T);
    std::vector<float> buf = d2h<float>(g_buf.l2, (size_t)L2_N4 * 4);
    const unsigned ts[3] = {0, T / 2 + 3, T - 1};
    for (unsigned t : ts) {
        double s = 0;
        unsigned i = t & (L2_N4 - 1);
        for (unsigned long long r = 0; r < work; r++) {
            for (int c = 0; c < 4; c++) s += buf[(size_t)i * 4 + c];
            i = (i + T) & (L2_N4 - 1);
        }
        if (o[t] != (float)s) {
            why = fmt("thread %u summed %.9g, expected %.9g", t, o[t], s);
            return false;
        }
    }
    why = fmt("3 threads' sums of %llu loads exact", work);
    return true;
}

static bool check_wait(int k, unsigned long long work, std::string &why) {
    unsigned long long got = d2h<unsigned long long>(g_buf.out[k], 1)[0];
    if (got < work || got > work + 10000000ULL) {
        why = fmt("waited %llu ns, expected at least %llu (and not 10 ms more)", got, work);
        return false;
    }
    why = fmt("waited %llu ns for %llu", got, work);
    return true;
}

static bool check_name(int k) {
    const unsigned long long w = g_work[k];
    std::string why;
    bool ok;
    switch (kdefs()[k].type) {
        case GEMM:
            ok = check_gemm(k, w, why);
            break;
        case FMA:
            ok = check_fma(k, w, why);
            break;
        case STREAM:
            ok = check_stream(why);
            break;
        case L2:
            ok = check_l2(k, w, why);
            break;
        default:
            ok = check_wait(k, w, why);
            break;
    }
    fprintf(stderr, "mix: %s check %s (%s)\n", kdefs()[k].name.c_str(), ok ? "PASS" : "FAIL", why.c_str());
    return ok;
}

// ---------------------------------------------------------------- running
struct Timed {  // a launch's cudaEvent pair
    int k;
    cudaEvent_t e0, e1;
    int64_t planned_ns;  // CLOCK_MONOTONIC
};
struct Stats {  // per name: launches, their summed duration, how late they started on the GPU
    long n = 0;
    double sum_s = 0, lag_sum_s = 0, lag_max_s = 0;
};

static void quiet(double seconds, int64_t *start, int64_t *end) {
    CHECK(cudaDeviceSynchronize());
    *start = mono_ns();
    wait_until_ns(*start + (int64_t)(seconds * 1e9));
    *end = mono_ns();
}

static void report(const char *pattern, const char *only, const char *without, uint64_t seed, int64_t qb0,
                   int64_t qb1, int64_t s, int64_t e, int64_t qa0, int64_t qa1, const std::vector<int> &names,
                   const std::map<int, Stats> &stats, const Stats *fill = nullptr) {
    printf(
        "mix.window pattern=%s only=%s%s%s seed=%llu clock=%s quiet_before_start_s=%.9f quiet_before_end_s=%.9f "
        "start_s=%.9f end_s=%.9f quiet_after_start_s=%.9f quiet_after_end_s=%.9f",
        pattern, only, without ? " without=" : "", without ? without : "", (unsigned long long)seed, g_clock, tl(qb0),
        tl(qb1), tl(s), tl(e), tl(qa0), tl(qa1));
    if (fill) printf(" fill=wait_calib fill_launches=%ld fill_time_s=%.9f", fill->n, fill->sum_s);
    printf("\n");
    for (int k : names) {
        auto it = stats.find(k);
        const Stats st = it == stats.end() ? Stats() : it->second;
        const double d = st.n ? (double)st.n : 1;
        printf(
            "mix.kernel name=%s launches=%ld mean_duration_s=%.9f work=%llu target_s=%g gpu_lag_mean_s=%.9f "
            "gpu_lag_max_s=%.9f\n",
            kdefs()[k].name.c_str(), st.n, st.sum_s / d, g_work[k], kdefs()[k].target_s, st.lag_sum_s / d,
            st.lag_max_s);
    }
    fflush(stdout);
}

// only >= 0: NAME's launches alone (fill: the wait kernel for the others'); without >= 0: all but NAME's
static int run_pattern(const std::string &pattern, const std::vector<Launch> &plan, int only, bool fill, int without,
                       uint64_t seed, double quiet_s) {
    const int wait_fill = calib_index(WAIT);
    std::vector<int> names = plan_names(plan);
    cudaStream_t st[2];
    CHECK(cudaStreamCreateWithFlags(&st[0], cudaStreamNonBlocking));
    CHECK(cudaStreamCreateWithFlags(&st[1], cudaStreamNonBlocking));
    std::vector<Timed> timed;
    for (const Launch &l : plan)
        if ((only < 0 || l.k == only || fill) && l.k != without) {
            Timed t{l.k == only || only < 0 ? l.k : wait_fill, nullptr, nullptr, 0};
            CHECK(cudaEventCreate(&t.e0));
            CHECK(cudaEventCreate(&t.e1));
            timed.push_back(t);
        }
    int64_t qb0, qb1, qa0, qa1;
    quiet(quiet_s, &qb0, &qb1);
    nvtxRangePushA("tw_measure");  // the pattern, as apps/README.md's contract has it
    // an event on the idle GPU at a known host time: each launch's start on the GPU against its plan
    cudaEvent_t origin;
    CHECK(cudaEventCreate(&origin));
    const int64_t t_origin = mono_ns();
    CHECK(cudaEventRecord(origin, st[0]));
    const int64_t start = mono_ns() + 1000000;  // the plan's origin: 1 ms ahead
    size_t n = 0;
    for (const Launch &l : plan) {
        const bool filled = only >= 0 && l.k != only && fill;
        if ((only >= 0 && l.k != only && !fill) || l.k == without)
            continue;  // skipped; the next kept launch still waits for its own time
        timed[n].planned_ns = start + (int64_t)(l.t_s * 1e9);
        wait_until_ns(timed[n].planned_ns);
        CHECK(cudaEventRecord(timed[n].e0, st[l.stream]));
        if (filled)  // the wait kernel's work is in ns: the replaced launch's nominal duration
            launch(wait_fill, (unsigned long long)(kdefs()[l.k].target_s * 1e9), st[l.stream]);
        else
            launch(l.k, g_work[l.k], st[l.stream]);
        CHECK(cudaEventRecord(timed[n].e1, st[l.stream]));
        n++;
    }
    CHECK(cudaDeviceSynchronize());
    const int64_t end = mono_ns();
    nvtxRangePop();
    quiet(quiet_s, &qa0, &qa1);
    std::map<int, Stats> stats;  // the fills under wait_fill's index
    for (Timed &t : timed) {
        float ms, at_ms;
        CHECK(cudaEventElapsedTime(&ms, t.e0, t.e1));
        CHECK(cudaEventElapsedTime(&at_ms, origin, t.e0));
        Stats &s = stats[t.k];
        const double lag = at_ms * 1e-3 - (double)(t.planned_ns - t_origin) * 1e-9;
        s.n++;
        s.sum_s += ms * 1e-3;
        s.lag_sum_s += lag;
        s.lag_max_s = std::max(s.lag_max_s, lag);
        CHECK(cudaEventDestroy(t.e0));
        CHECK(cudaEventDestroy(t.e1));
    }
    CHECK(cudaEventDestroy(origin));
    bool ok = true;
    for (int k : names)
        if ((only < 0 || k == only) && k != without) ok = check_name(k) && ok;
    std::vector<int> shown;
    for (int k : names)
        if ((only < 0 || k == only) && k != without) shown.push_back(k);
    const Stats fills = stats.count(wait_fill) ? stats[wait_fill] : Stats();
    report(pattern.c_str(), only < 0 ? "-" : kdefs()[only].name.c_str(),
           without < 0 ? nullptr : kdefs()[without].name.c_str(), seed, qb0, qb1, start, end, qa0, qa1, shown,
           stats, fill ? &fills : nullptr);
    return ok ? 0 : 1;
}

// back to back for `seconds`, at most ~20 ms of work queued (so the end is on time)
static int run_steady(int k, double seconds, double quiet_s) {
    const int depth = std::max(2, (int)std::ceil(0.02 / std::max(kdefs()[k].target_s, 1e-6)));
    std::vector<Timed> ring(depth);
    for (Timed &t : ring) {
        t.k = k;
        CHECK(cudaEventCreate(&t.e0));
        CHECK(cudaEventCreate(&t.e1));
    }
    int64_t qb0, qb1, qa0, qa1;
    quiet(quiet_s, &qb0, &qb1);
    nvtxRangePushA("tw_measure");
    const int64_t start = mono_ns(), stop = start + (int64_t)(seconds * 1e9);
    long n = 0;
    double sum = 0;
    auto collect = [&](Timed &t) {
        float ms;
        CHECK(cudaEventSynchronize(t.e1));
        CHECK(cudaEventElapsedTime(&ms, t.e0, t.e1));
        sum += ms * 1e-3;
    };
    for (; mono_ns() < stop; n++) {
        Timed &t = ring[n % depth];
        if (n >= depth) collect(t);
        CHECK(cudaEventRecord(t.e0, 0));
        launch(k, g_work[k], 0);
        CHECK(cudaEventRecord(t.e1, 0));
    }
    for (long i = std::max(0L, n - depth); i < n; i++) collect(ring[i % depth]);
    CHECK(cudaDeviceSynchronize());
    const int64_t end = mono_ns();
    nvtxRangePop();
    quiet(quiet_s, &qa0, &qa1);
    bool ok = check_name(k);
    std::map<int, Stats> stats;
    stats[k].n = n;
    stats[k].sum_s = sum;
    report("steady", kdefs()[k].name.c_str(), nullptr, 0, qb0, qb1, start, end, qa0, qa1, {k}, stats);
    return ok ? 0 : 1;
}

// ---------------------------------------------------------------- main
static void usage(FILE *f) {
    fprintf(f,
            "usage: mix --list | --plan PATTERN [--seed N] [--seconds S] | --save-calib FILE\n"
            "       mix PATTERN [--only NAME [--fill-wait] | --without NAME] [--seed N] [--seconds S] [--quiet S]\n"
            "           [--calib FILE]\n"
            "       mix --steady NAME [--seconds S] [--quiet S] [--calib FILE]\n"
            "patterns: bursts, mixed, mixed-even, streams, steps (apps/README.md, docs/attrib.md)\n"
            "  --only NAME    perform only NAME's launches, at their planned times (the solo reference)\n"
            "  --fill-wait    with --only: the nearly idle wait kernel in place of the others' launches,\n"
            "                 for their nominal durations (the GPU kept as busy as in the full pattern)\n"
            "  --without NAME every launch but NAME's, at their planned times (the leave-one-out reference)\n"
            "  --seed N       the pattern's random seed (default 1)\n"
            "  --seconds S    the pattern's length, or the steady run's (default 6; 4 for --steady)\n"
            "  --quiet S      the quiet stretches before and after (default 1.5)\n"
            "  --calib FILE   work parameters from --save-calib (default: calibrate now)\n");
}

static double parse_num(const char *v, const char *opt, double lo, double hi) {
    char *e;
    errno = 0;
    double x = strtod(v ? v : "", &e);
    if (!v || e == v || *e || errno || !(x >= lo && x <= hi))
        die_usage("%s needs a number from %g to %g, got '%s'", opt, lo, hi, v ? v : "");
    return x;
}

// NAME's kernel index where NAME is one of the pattern's names (-1 for an empty NAME); else exits 2
static int pattern_name(const std::string &name, const std::string &pattern, const std::vector<int> &names) {
    if (name.empty()) return -1;
    const int k = kdef_index(name);
    if (k < 0 || std::find(names.begin(), names.end(), k) == names.end()) {
        std::string list_;
        for (int j : names) list_ += " " + kdefs()[j].name;
        die_usage("'%s' is not a kernel of pattern %s (its names:%s)", name.c_str(), pattern.c_str(), list_.c_str());
    }
    return k;
}

int main(int argc, char **argv) {
    std::string pattern, only_name, without_name, steady_name, calib_in, calib_out, plan_pattern;
    uint64_t seed = 1;
    double seconds = -1, quiet_s = 1.5;
    bool list = false, fill = false;
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : nullptr;
        auto need = [&]() -> const char * {
            if (!v) die_usage("%s needs a value", a.c_str());
            i++;
            return v;
        };
        if (a == "--help" || a == "-h") {
            usage(stdout);
            return 0;
        } else if (a == "--list")
            list = true;
        else if (a == "--plan")
            plan_pattern = need();
        else if (a == "--only")
            only_name = need();
        else if (a == "--without")
            without_name = need();
        else if (a == "--fill-wait")
            fill = true;
        else if (a == "--steady")
            steady_name = need();
        else if (a == "--seed")
            seed = (uint64_t)parse_num(need(), "--seed", 0, 1e15);
        else if (a == "--seconds")
            seconds = parse_num(need(), "--seconds", 0.01, 3600);
        else if (a == "--quiet")
            quiet_s = parse_num(need(), "--quiet", 0, 60);
        else if (a == "--calib")
            calib_in = need();
        else if (a == "--save-calib")
            calib_out = need();
        else if (!a.empty() && a[0] != '-' && pattern.empty())
            pattern = a;
        else
            die_usage("unknown argument '%s'", a.c_str());
    }
    if (list) {
        printf("patterns:\n");
        for (const Pattern &p : PATTERNS) {
            std::vector<Launch> plan;
            make_plan(p.name, seed, 6, plan);
            printf("  %-10s %s\n             names:", p.name, p.what);
            for (int k : plan_names(plan)) printf(" %s", kdefs()[k].name.c_str());
            printf("\n");
        }
        printf("kernels (--steady NAME): {gemm,fma,stream,l2,wait}_{50us,100us,200us,500us,1ms,2ms,5ms,10ms,20ms}\n");
        return 0;
    }
    if (!plan_pattern.empty()) {  // the plan, without a GPU: what --only keeps the same
        std::vector<Launch> plan;
        if (!make_plan(plan_pattern, seed, seconds > 0 ? seconds : 6, plan))
            die_usage("unknown pattern '%s'", plan_pattern.c_str());
        printf("t_s,stream,name\n");
        for (const Launch &l : plan) printf("%.6f,%d,%s\n", l.t_s, l.stream, kdefs()[l.k].name.c_str());
        return 0;
    }
    const int modes = !pattern.empty() + !steady_name.empty() + !calib_out.empty();
    if (modes != 1) die_usage("give one of PATTERN, --steady NAME, --save-calib FILE");
    if (!only_name.empty() && pattern.empty()) die_usage("--only goes with a PATTERN");
    if (fill && only_name.empty()) die_usage("--fill-wait goes with --only NAME");
    if (!without_name.empty() && (pattern.empty() || !only_name.empty()))
        die_usage("--without goes with a PATTERN, not with --only");

    std::vector<Launch> plan;
    std::vector<int> names;
    int only = -1, without = -1, steady = -1;
    if (!pattern.empty()) {
        if (!make_plan(pattern, seed, seconds > 0 ? seconds : 6, plan))
            die_usage("unknown pattern '%s'", pattern.c_str());
        names = plan_names(plan);
        only = pattern_name(only_name, pattern, names);
        without = pattern_name(without_name, pattern, names);
    } else if (!steady_name.empty()) {
        steady = kdef_index(steady_name);
        if (steady < 0 || kdefs()[steady].target_s == 0)
            die_usage("unknown kernel '%s' (mix --list)", steady_name.c_str());
        names = {steady};
    } else {
        for (size_t k = 0; k < kdefs().size(); k++)
            if (kdefs()[k].target_s > 0) names.push_back((int)k);
    }

    const char *t0 = getenv("TW_T0_MONO_NS");
    char *end = nullptr;
    if (t0 && *t0 && (g_t0_ns = strtoll(t0, &end, 10), *end == 0)) {
        g_clock = "tw";
    } else {
        if (t0 && *t0) fprintf(stderr, "mix: TW_T0_MONO_NS='%s' is not a number of ns; times are from the start\n", t0);
        g_t0_ns = mono_ns();
    }

    int dev = 0;
    CHECK(cudaGetDevice(&dev));
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, dev));
    g_sms = prop.multiProcessorCount;
    fprintf(stderr, "mix: device %d: %s, %d SMs\n", dev, prop.name, g_sms);
    setup_buffers();
    for (size_t k = 0; k < kdefs().size(); k++) {  // loads every module now, not at a planned launch
        cudaFuncAttributes fa;
        CHECK(cudaFuncGetAttributes(&fa, (const void *)kdefs()[k].fn));
    }
    if (!calib_in.empty()) load_calib(calib_in.c_str());
    calibrate(names);  // the names the file did not give
    if (!calib_out.empty()) {
        save_calib(calib_out.c_str());
        return 0;
    }
    if (steady >= 0) return run_steady(steady, seconds > 0 ? seconds : 4, quiet_s);
    return run_pattern(pattern, plan, only, fill, without, seed, quiet_s);
}
