// Build: nvcc -O3 -arch=sm_90 -lineinfo -o build-gpu/dvfs-kernels apps/dvfs/kernels.cu
// Run:   build-gpu/dvfs-kernels [--list] [--only NAME[,NAME...]] [--reps N] [--warmup N]
//
// The kernels of the DVFS model's evaluation on the local GPU (issue 7): plain
// CUDA C modelled on the CUDA-samples set that Wang & Chu measured (no tensor
// cores, no TMA, no libraries), each sized so that one launch takes well over
// 0.2 ms on an H100. For each kernel the program
//   1. allocates and fills its data (deterministic: a hash of the index);
//   2. launches it once and checks that result against a CPU reference
//      (stderr: "check PASS"/"check FAIL"; a failed kernel gets no CSV line
//      and the program exits 1 at the end);
//   3. launches it WARMUP-1 more times, then REPS timed times, one cudaEvent
//      pair around each launch;
//   4. prints one CSV line to stdout:
//      kernel,launches,grid_x,grid_y,grid_z,block_x,block_y,block_z,time_ms_mean,time_ms_sd,time_ms_min
// Every launch of a benchmark kernel (the checked one, the warm-up and the
// timed ones) has the same arguments and does the same work: outputs never
// alias inputs. The REPS timed launches of each kernel sit inside an NVTX
// push/pop range named "tw_measure" (apps/README.md), so
//   ncu --nvtx --nvtx-include "tw_measure/" ...
// profiles exactly the timed launches, and nothing else (the fill kernels
// run outside it). Kernels are extern "C", so ncu's "Kernel Name" is the
// benchmark name whatever --print-kernel-base says.
#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>  // header-only NVTX v3: nothing to link

#define CHECK(call)                                                                   \
    do {                                                                              \
        cudaError_t err_ = (call);                                                    \
        if (err_ != cudaSuccess) {                                                    \
            fprintf(stderr, "dvfs-kernels: CUDA error at %s:%d: %s (%s)\n", __FILE__, \
                    __LINE__, cudaGetErrorString(err_), #call);                       \
            exit(1);                                                                  \
        }                                                                             \
    } while (0)

// after every kernel launch: a bad configuration shows here, a fault at the next sync
#define CHECK_LAUNCH() CHECK(cudaGetLastError())

static int g_sms = 0;  // streaming multiprocessors of device 0

// Problem sizes: SZ(measured, small). -DDVFS_SMALL builds tiny problems, for a quick check of
// the harness and the CPU references (e.g. under an emulator); never for measurements.
#ifdef DVFS_SMALL
#define SZ(big, small) (small)
#else
#define SZ(big, small) (big)
#endif

// ---------------------------------------------------------------- data
// A 32-bit integer hash (lowbias32): the same on host and device, so that
// references built from recomputed inputs are exact.
static __host__ __device__ inline unsigned hash32(unsigned x) {
    x ^= x >> 16;
    x *= 0x7feb352dU;
    x ^= x >> 15;
    x *= 0x846ca68bU;
    x ^= x >> 16;
    return x;
}

static __host__ __device__ inline unsigned word_at(size_t i, unsigned seed) {
    return hash32((unsigned)i + seed * 0x9E3779B9U);
}

// uniform in [0, 1) with 24 bits: exact in float on both sides
static __host__ __device__ inline float unit_at(size_t i, unsigned seed) {
    return (float)(word_at(i, seed) >> 8) * (1.0f / 16777216.0f);
}

extern "C" __global__ void fillUniform(float *p, size_t n, unsigned seed, float lo, float span) {
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        p[i] = lo + span * unit_at(i, seed);
}

extern "C" __global__ void fillUniformDouble(double *p, size_t n, unsigned seed, double lo,
                                             double span) {
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        p[i] = lo + span * (double)unit_at(i, seed);
}

// integer-valued floats (word & mask, or word >> shift): exact, so sums of them are too
extern "C" __global__ void fillIntFloat(float *p, size_t n, unsigned seed, unsigned mask,
                                        unsigned shift) {
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        p[i] = (float)((word_at(i, seed) >> shift) & mask);
}

extern "C" __global__ void fillWords(unsigned *p, size_t n, unsigned seed) {
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        p[i] = word_at(i, seed);
}

// a full-period LCG modulo n (a power of two): a = 1 mod 4, c odd (Hull-Dobell)
#define CHAIN_A 1664525U
#define CHAIN_C 1013904223U
static __host__ __device__ inline unsigned chain_next(unsigned i, unsigned mask) {
    return (CHAIN_A * i + CHAIN_C) & mask;
}

extern "C" __global__ void fillChain(unsigned *next, unsigned n) {
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        next[i] = chain_next((unsigned)i, n - 1);
}

static dim3 fill_grid() { return dim3((unsigned)g_sms * 16); }

static void fill_uniform(float *p, size_t n, unsigned seed, float lo, float hi) {
    fillUniform<<<fill_grid(), 256>>>(p, n, seed, lo, hi - lo);
    CHECK_LAUNCH();
}

template <typename T>
static T *dmalloc(size_t n) {
    T *p = nullptr;
    CHECK(cudaMalloc((void **)&p, n * sizeof(T)));
    return p;
}

template <typename T>
static void dfree(T *&p) {
    if (p) CHECK(cudaFree(p));
    p = nullptr;
}

// n elements of d from element off, into h (resized)
template <typename T>
static void d2h(std::vector<T> &h, const T *d, size_t off, size_t n) {
    h.resize(n);
    CHECK(cudaMemcpy(h.data(), d + off, n * sizeof(T), cudaMemcpyDeviceToHost));
}

// ---------------------------------------------------------------- the benchmark kernels

// vectorAdd: C = A + B; DRAM streaming, 12 bytes per FP32 add.
extern "C" __global__ void vectorAdd(const float *__restrict__ A, const float *__restrict__ B,
                                     float *__restrict__ C, int n) {
    int i = blockDim.x * blockIdx.x + threadIdx.x;
    if (i < n) C[i] = A[i] + B[i];
}

// BlackScholes (samples): European call and put; 20 bytes and ~50 FP32/SFU ops per option.
__device__ inline float cndGPU(float d) {
    const float A1 = 0.31938153f, A2 = -0.356563782f, A3 = 1.781477937f, A4 = -1.821255978f,
                A5 = 1.330274429f, RSQRT2PI = 0.39894228040143267793994605993438f;
    float K = 1.0f / (1.0f + 0.2316419f * fabsf(d));
    float cnd = RSQRT2PI * expf(-0.5f * d * d) * (K * (A1 + K * (A2 + K * (A3 + K * (A4 + K * A5)))));
    if (d > 0) cnd = 1.0f - cnd;
    return cnd;
}

extern "C" __global__ void BlackScholes(float *__restrict__ call, float *__restrict__ put,
                                        const float *__restrict__ S, const float *__restrict__ X,
                                        const float *__restrict__ T, float R, float V, int n) {
    int i = blockDim.x * blockIdx.x + threadIdx.x;
    if (i >= n) return;
    float s = S[i], x = X[i], t = T[i];
    float sqrtT = sqrtf(t);
    float d1 = (logf(s / x) + (R + 0.5f * V * V) * t) / (V * sqrtT);
    float d2 = d1 - V * sqrtT;
    float cndd1 = cndGPU(d1), cndd2 = cndGPU(d2);
    float expRT = expf(-R * t);
    call[i] = s * cndd1 - x * expRT * cndd2;
    put[i] = x * expRT * (1.0f - cndd2) - s * (1.0f - cndd1);
}

// matrixMulShared (samples matrixMul): 32x32 shared-memory tiles, one C element per thread.
#define MM_TILE 32
extern "C" __global__ void matrixMulShared(float *__restrict__ C, const float *__restrict__ A,
                                           const float *__restrict__ B, int n) {
    __shared__ float As[MM_TILE][MM_TILE];
    __shared__ float Bs[MM_TILE][MM_TILE];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * MM_TILE + ty;
    int col = blockIdx.x * MM_TILE + tx;
    float sum = 0.0f;
    for (int t = 0; t < n; t += MM_TILE) {
        As[ty][tx] = A[(size_t)row * n + t + tx];
        Bs[ty][tx] = B[(size_t)(t + ty) * n + col];
        __syncthreads();
#pragma unroll
        for (int k = 0; k < MM_TILE; ++k) sum += As[ty][k] * Bs[k][tx];
        __syncthreads();
    }
    C[(size_t)row * n + col] = sum;
}

// matrixMulGlobal: the naive product straight from global memory (L1/L2 traffic).
extern "C" __global__ void matrixMulGlobal(float *__restrict__ C, const float *__restrict__ A,
                                           const float *__restrict__ B, int n) {
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    float sum = 0.0f;
    for (int k = 0; k < n; ++k) sum += A[(size_t)row * n + k] * B[(size_t)k * n + col];
    C[(size_t)row * n + col] = sum;
}

// transpose (samples transposeCoalesced): 32x32 tiles through shared memory, padded
// against bank conflicts; in is height x width (row-major), out is width x height.
#define TR_TILE 32
#define TR_ROWS 8
extern "C" __global__ void transpose(float *__restrict__ out, const float *__restrict__ in,
                                     int width, int height) {
    __shared__ float tile[TR_TILE][TR_TILE + 1];
    int x = blockIdx.x * TR_TILE + threadIdx.x;
    int y = blockIdx.y * TR_TILE + threadIdx.y;
    for (int j = 0; j < TR_TILE; j += TR_ROWS)
        tile[threadIdx.y + j][threadIdx.x] = in[(size_t)(y + j) * width + x];
    __syncthreads();
    x = blockIdx.y * TR_TILE + threadIdx.x;  // the tile's place in out
    y = blockIdx.x * TR_TILE + threadIdx.y;
    for (int j = 0; j < TR_TILE; j += TR_ROWS)
        out[(size_t)(y + j) * height + x] = tile[threadIdx.x][threadIdx.y + j];
}

// transposeNaive (samples): coalesced reads, writes strided by height (one sector per element).
extern "C" __global__ void transposeNaive(float *__restrict__ out, const float *__restrict__ in,
                                          int width, int height) {
    int x = blockIdx.x * TR_TILE + threadIdx.x;
    int y = blockIdx.y * TR_TILE + threadIdx.y;
    for (int j = 0; j < TR_TILE; j += TR_ROWS)
        out[(size_t)x * height + (y + j)] = in[(size_t)(y + j) * width + x];
}

// reduction (samples reduce3): each block of RED_THREADS sums 2*RED_THREADS inputs,
// the first add on load, then a tree in shared memory with sequential addressing.
#define RED_THREADS 256
extern "C" __global__ void reduction(float *__restrict__ out, const float *__restrict__ in,
                                     size_t n) {
    __shared__ float sdata[RED_THREADS];
    unsigned tid = threadIdx.x;
    size_t i = (size_t)blockIdx.x * (RED_THREADS * 2) + tid;
    float sum = (i < n) ? in[i] : 0.0f;
    if (i + RED_THREADS < n) sum += in[i + RED_THREADS];
    sdata[tid] = sum;
    __syncthreads();
    for (unsigned s = RED_THREADS / 2; s > 0; s >>= 1) {
        if (tid < s) sdata[tid] = sum = sum + sdata[tid + s];
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = sum;
}

// histogram (samples histogram256, one sub-histogram per block): the four bytes of each
// word counted with shared-memory atomics, merged into hist with global atomics.
#define HIST_BINS 256
extern "C" __global__ void histogram(unsigned *__restrict__ hist, const unsigned *__restrict__ data,
                                     size_t nwords) {
    __shared__ unsigned s_hist[HIST_BINS];
    for (unsigned b = threadIdx.x; b < HIST_BINS; b += blockDim.x) s_hist[b] = 0;
    __syncthreads();
    for (size_t pos = (size_t)blockIdx.x * blockDim.x + threadIdx.x; pos < nwords;
         pos += (size_t)gridDim.x * blockDim.x) {
        unsigned d = data[pos];
        atomicAdd(&s_hist[d & 0xFFU], 1U);
        atomicAdd(&s_hist[(d >> 8) & 0xFFU], 1U);
        atomicAdd(&s_hist[(d >> 16) & 0xFFU], 1U);
        atomicAdd(&s_hist[d >> 24], 1U);
    }
    __syncthreads();
    for (unsigned b = threadIdx.x; b < HIST_BINS; b += blockDim.x) atomicAdd(&hist[b], s_hist[b]);
}

// scalarProd (samples): one dot product of elementN floats per block, tree in shared memory.
#define SP_THREADS 256
extern "C" __global__ void scalarProd(float *__restrict__ C, const float *__restrict__ A,
                                      const float *__restrict__ B, int elementN) {
    __shared__ float acc[SP_THREADS];
    const size_t base = (size_t)blockIdx.x * elementN;
    float sum = 0.0f;
    for (int i = threadIdx.x; i < elementN; i += SP_THREADS) sum += A[base + i] * B[base + i];
    acc[threadIdx.x] = sum;
    for (unsigned stride = SP_THREADS / 2; stride > 0; stride >>= 1) {
        __syncthreads();
        if (threadIdx.x < stride) acc[threadIdx.x] += acc[threadIdx.x + stride];
    }
    if (threadIdx.x == 0) C[blockIdx.x] = acc[0];
}

// convolutionSeparable, the row pass (samples convolutionRowsKernel): a 17-tap filter from
// constant memory over rows staged in shared memory with a halo; zero outside the image.
#define KERNEL_RADIUS 8
#define KERNEL_LENGTH (2 * KERNEL_RADIUS + 1)
#define ROWS_BLOCKDIM_X 16
#define ROWS_BLOCKDIM_Y 4
#define ROWS_RESULT_STEPS 8
#define ROWS_HALO_STEPS 1
#define ROWS_SPAN ((ROWS_RESULT_STEPS + 2 * ROWS_HALO_STEPS) * ROWS_BLOCKDIM_X)
__constant__ float c_Kernel[KERNEL_LENGTH];

extern "C" __global__ void convolutionSeparable(float *__restrict__ dst, const float *__restrict__ src,
                                                int imageW, int imageH) {
    __shared__ float s_Data[ROWS_BLOCKDIM_Y][ROWS_SPAN];
    (void)imageH;  // the grid covers the imageH rows exactly
    const int baseX = ((int)blockIdx.x * ROWS_RESULT_STEPS - ROWS_HALO_STEPS) * ROWS_BLOCKDIM_X +
                      (int)threadIdx.x;
    const int baseY = blockIdx.y * ROWS_BLOCKDIM_Y + threadIdx.y;
    const size_t row = (size_t)baseY * imageW;
#pragma unroll
    for (int i = 0; i < ROWS_RESULT_STEPS + 2 * ROWS_HALO_STEPS; i++) {
        const int x = baseX + i * ROWS_BLOCKDIM_X;
        s_Data[threadIdx.y][threadIdx.x + i * ROWS_BLOCKDIM_X] =
            (x >= 0 && x < imageW) ? src[row + x] : 0.0f;
    }
    __syncthreads();
#pragma unroll
    for (int i = ROWS_HALO_STEPS; i < ROWS_HALO_STEPS + ROWS_RESULT_STEPS; i++) {
        float sum = 0.0f;
#pragma unroll
        for (int j = -KERNEL_RADIUS; j <= KERNEL_RADIUS; j++)
            sum += c_Kernel[KERNEL_RADIUS - j] *
                   s_Data[threadIdx.y][threadIdx.x + i * ROWS_BLOCKDIM_X + j];
        dst[row + baseX + i * ROWS_BLOCKDIM_X] = sum;
    }
}

// sortingNetworks (samples bitonicSortShared, keys only, ascending): each block sorts
// SORT_SIZE keys in shared memory with SORT_SIZE/2 threads; out of place.
#define SORT_SIZE 1024
__device__ inline void cmpSwap(unsigned &a, unsigned &b, unsigned dir) {
    if ((a > b) == (dir != 0)) {
        unsigned t = a;
        a = b;
        b = t;
    }
}

extern "C" __global__ void sortingNetworks(unsigned *__restrict__ dst, const unsigned *__restrict__ src) {
    __shared__ unsigned s_key[SORT_SIZE];
    const size_t base = (size_t)blockIdx.x * SORT_SIZE;
    s_key[threadIdx.x] = src[base + threadIdx.x];
    s_key[threadIdx.x + SORT_SIZE / 2] = src[base + threadIdx.x + SORT_SIZE / 2];
    for (unsigned size = 2; size < SORT_SIZE; size <<= 1) {
        unsigned ddd = 1U ^ ((threadIdx.x & (size / 2)) != 0);  // bitonic halves, alternately
        for (unsigned stride = size / 2; stride > 0; stride >>= 1) {
            __syncthreads();
            unsigned pos = 2 * threadIdx.x - (threadIdx.x & (stride - 1));
            cmpSwap(s_key[pos], s_key[pos + stride], ddd);
        }
    }
    for (unsigned stride = SORT_SIZE / 2; stride > 0; stride >>= 1) {  // the last merge, ascending
        __syncthreads();
        unsigned pos = 2 * threadIdx.x - (threadIdx.x & (stride - 1));
        cmpSwap(s_key[pos], s_key[pos + stride], 1U);
    }
    __syncthreads();
    dst[base + threadIdx.x] = s_key[threadIdx.x];
    dst[base + threadIdx.x + SORT_SIZE / 2] = s_key[threadIdx.x + SORT_SIZE / 2];
}

// quasirandomGenerator (samples, Niederreiter-like): per output 31 table lookups XORed
// by the bits of the index; integer-issue bound, one float written per output.
#define QRNG_DIMENSIONS 3
#define QRNG_RESOLUTION 31
__constant__ unsigned c_Table[QRNG_DIMENSIONS][QRNG_RESOLUTION];

static __host__ __device__ inline float qrng_value(unsigned pos, unsigned seed,
                                                   const unsigned *table /* [QRNG_RESOLUTION] */) {
    unsigned result = 0, data = seed + pos;
    for (int bit = 0; bit < QRNG_RESOLUTION; bit++, data >>= 1)
        if (data & 1) result ^= table[bit];
    return (float)(result + 1) * (1.0f / 2147483648.0f);
}

extern "C" __global__ void quasirandomGenerator(float *__restrict__ out, unsigned seed, unsigned n) {
    const unsigned dim = blockIdx.y;
    const unsigned pos = blockIdx.x * blockDim.x + threadIdx.x;
    if (pos >= n) return;
    unsigned result = 0, data = seed + pos;
#pragma unroll
    for (int bit = 0; bit < QRNG_RESOLUTION; bit++, data >>= 1)
        if (data & 1) result ^= c_Table[dim][bit];
    out[(size_t)dim * n + pos] = (float)(result + 1) * (1.0f / 2147483648.0f);
}

// dependentLoad: the latency-bound, low-occupancy kernel (the role of the authors' nn):
// few warps per SM, each thread follows a chain of dependent loads through 256 MB.
extern "C" __global__ void dependentLoad(unsigned *__restrict__ out, const unsigned *__restrict__ next,
                                         unsigned mask, unsigned seed, int steps) {
    const unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned j = word_at(t, seed) & mask;
    for (int s = 0; s < steps; s++) j = next[j];
    out[t] = j;
}

// fp64Horner: FP64-pipe bound; per element, rounds * FP64_COEFS dependent DFMAs
// (Horner steps with coefficients from constant memory), 16 bytes of DRAM traffic.
#define FP64_COEFS 16
__constant__ double c_Coef[FP64_COEFS];

extern "C" __global__ void fp64Horner(double *__restrict__ y, const double *__restrict__ x, int n,
                                      int rounds) {
    int i = blockDim.x * blockIdx.x + threadIdx.x;
    if (i >= n) return;
    const double xi = x[i];
    double acc = 1.0;
    for (int r = 0; r < rounds; r++) {
#pragma unroll
        for (int k = 0; k < FP64_COEFS; k++) acc = fma(acc, xi, c_Coef[k]);
    }
    y[i] = acc;
}

// ---------------------------------------------------------------- the harness

// A benchmark: setup() allocates and fills (grid and block set there), launch() is one
// launch of the measured kernel, the same every time, check() judges the first launch.
class Bench {
public:
    dim3 grid, block;
    virtual ~Bench() {}
    virtual void setup() = 0;
    virtual void launch() = 0;
    virtual bool check(std::string &detail) = 0;
};

static std::string fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));
static std::string fmt(const char *f, ...) {
    char buf[512];
    va_list ap;
    va_start(ap, f);
    vsnprintf(buf, sizeof buf, f, ap);
    va_end(ap);
    return buf;
}

// ---- vectorAdd
class VectorAdd : public Bench {
    static constexpr int N = SZ(1 << 27, 1 << 12);  // 3 x 512 MiB
    float *A = nullptr, *B = nullptr, *C = nullptr;

public:
    ~VectorAdd() { dfree(A), dfree(B), dfree(C); }
    void setup() override {
        A = dmalloc<float>(N), B = dmalloc<float>(N), C = dmalloc<float>(N);
        fill_uniform(A, N, 11, -1.0f, 1.0f);
        fill_uniform(B, N, 12, -1.0f, 1.0f);
        block = dim3(256);
        grid = dim3((N + 255) / 256);
    }
    void launch() override { vectorAdd<<<grid, block>>>(A, B, C, N); }
    bool check(std::string &detail) override {
        const size_t K = std::min(1 << 20, N / 2), offs[2] = {0, (size_t)N - K};
        std::vector<float> a, b, c;
        for (size_t off : offs) {
            d2h(a, A, off, K), d2h(b, B, off, K), d2h(c, C, off, K);
            for (size_t i = 0; i < K; i++)
                if (!(c[i] == a[i] + b[i])) {
                    detail = fmt("C[%zu] = %.9g, expected %.9g", off + i, c[i], a[i] + b[i]);
                    return false;
                }
        }
        detail = fmt("%zu elements exact", 2 * K);
        return true;
    }
};

// ---- BlackScholes
static double cnd_ref(double d) {
    const double A1 = 0.31938153, A2 = -0.356563782, A3 = 1.781477937, A4 = -1.821255978,
                 A5 = 1.330274429, RSQRT2PI = 0.39894228040143267793994605993438;
    double K = 1.0 / (1.0 + 0.2316419 * fabs(d));
    double cnd = RSQRT2PI * exp(-0.5 * d * d) * (K * (A1 + K * (A2 + K * (A3 + K * (A4 + K * A5)))));
    return d > 0 ? 1.0 - cnd : cnd;
}

class BlackScholesBench : public Bench {
    static constexpr int N = SZ(1 << 26, 1 << 12);  // options: 5 x 256 MiB
    const float R = 0.02f, V = 0.30f;
    float *S = nullptr, *X = nullptr, *T = nullptr, *call = nullptr, *put = nullptr;

public:
    ~BlackScholesBench() { dfree(S), dfree(X), dfree(T), dfree(call), dfree(put); }
    void setup() override {
        S = dmalloc<float>(N), X = dmalloc<float>(N), T = dmalloc<float>(N);
        call = dmalloc<float>(N), put = dmalloc<float>(N);
        fill_uniform(S, N, 21, 5.0f, 30.0f);
        fill_uniform(X, N, 22, 1.0f, 100.0f);
        fill_uniform(T, N, 23, 0.25f, 10.0f);
        block = dim3(128);
        grid = dim3((N + 127) / 128);
    }
    void launch() override { BlackScholes<<<grid, block>>>(call, put, S, X, T, R, V, N); }
    bool check(std::string &detail) override {
        const size_t K = std::min(1 << 16, N / 2), offs[2] = {0, (size_t)N - K};
        std::vector<float> s, x, t, c, p;
        double sum_err = 0, sum_ref = 0, max_err = 0;
        for (size_t off : offs) {
            d2h(s, S, off, K), d2h(x, X, off, K), d2h(t, T, off, K);
            d2h(c, call, off, K), d2h(p, put, off, K);
            for (size_t i = 0; i < K; i++) {
                double sq = sqrt((double)t[i]), r = R, v = V;
                double d1 = (log((double)s[i] / x[i]) + (r + 0.5 * v * v) * t[i]) / (v * sq);
                double d2 = d1 - v * sq, e = exp(-r * t[i]);
                double rc = s[i] * cnd_ref(d1) - x[i] * e * cnd_ref(d2);
                double rp = x[i] * e * (1.0 - cnd_ref(d2)) - s[i] * (1.0 - cnd_ref(d1));
                double ec = fabs(c[i] - rc), ep = fabs(p[i] - rp);
                sum_err += ec + ep, sum_ref += fabs(rc) + fabs(rp);
                max_err = std::max(max_err, std::max(ec, ep));
                if (!(ec == ec) || !(ep == ep)) max_err = NAN;  // a NaN result
            }
        }
        double l1 = sum_err / sum_ref;
        detail = fmt("relative L1 error %.3g, max abs error %.3g over %zu options", l1, max_err, 2 * K);
        return l1 < 1e-5 && max_err < 1e-3;
    }
};

// ---- matrixMulShared and matrixMulGlobal: C = A B, checked at sampled elements
class MatMul : public Bench {
    const bool shared_;
    const int n_;
    float *A = nullptr, *B = nullptr, *C = nullptr;

public:
    MatMul(bool shared, int n) : shared_(shared), n_(n) {}
    ~MatMul() { dfree(A), dfree(B), dfree(C); }
    void setup() override {
        size_t e = (size_t)n_ * n_;
        A = dmalloc<float>(e), B = dmalloc<float>(e), C = dmalloc<float>(e);
        fill_uniform(A, e, 31, -1.0f, 1.0f);
        fill_uniform(B, e, 32, -1.0f, 1.0f);
        if (shared_) {
            block = dim3(MM_TILE, MM_TILE);
            grid = dim3(n_ / MM_TILE, n_ / MM_TILE);
        } else {
            block = dim3(32, 8);
            grid = dim3(n_ / 32, n_ / 8);
        }
    }
    void launch() override {
        if (shared_)
            matrixMulShared<<<grid, block>>>(C, A, B, n_);
        else
            matrixMulGlobal<<<grid, block>>>(C, A, B, n_);
    }
    bool check(std::string &detail) override {
        size_t e = (size_t)n_ * n_;
        std::vector<float> a, b, c;
        d2h(a, A, 0, e), d2h(b, B, 0, e), d2h(c, C, 0, e);
        const int checks = 68;
        double worst = 0;
        for (int k = 0; k < checks; k++) {
            int r, col;
            if (k < 4) {  // the corners
                r = (k & 1) ? n_ - 1 : 0;
                col = (k & 2) ? n_ - 1 : 0;
            } else {
                r = (int)(hash32(2 * k) % (unsigned)n_);
                col = (int)(hash32(2 * k + 1) % (unsigned)n_);
            }
            double ref = 0, mag = 0;
            for (int i = 0; i < n_; i++) {
                double p = (double)a[(size_t)r * n_ + i] * b[(size_t)i * n_ + col];
                ref += p, mag += fabs(p);
            }
            double got = c[(size_t)r * n_ + col], err = fabs(got - ref);
            if (!(err <= 1e-4 * mag + 1e-5)) {
                detail = fmt("C[%d][%d] = %.7g, expected %.7g", r, col, got, ref);
                return false;
            }
            worst = std::max(worst, err / (mag + 1e-30));
        }
        detail = fmt("%d elements, worst error %.3g of sum |a*b|", checks, worst);
        return true;
    }
};

// ---- transpose and transposeNaive: height x width in, width x height out
class Transpose : public Bench {
    const bool tiled_;
    static constexpr int W = SZ(8192, 64), H = SZ(16384, 96);  // 512 MiB each way
    float *in = nullptr, *out = nullptr;

public:
    explicit Transpose(bool tiled) : tiled_(tiled) {}
    ~Transpose() { dfree(in), dfree(out); }
    void setup() override {
        size_t e = (size_t)W * H;
        in = dmalloc<float>(e), out = dmalloc<float>(e);
        fillIntFloat<<<fill_grid(), 256>>>(in, e, 41, 0xFFFFFFU, 8);  // 24-bit integers: exact
        CHECK_LAUNCH();
        block = dim3(TR_TILE, TR_ROWS);
        grid = dim3(W / TR_TILE, H / TR_TILE);
    }
    void launch() override {
        if (tiled_)
            transpose<<<grid, block>>>(out, in, W, H);
        else
            transposeNaive<<<grid, block>>>(out, in, W, H);
    }
    bool check(std::string &detail) override {
        const size_t e = (size_t)W * H, stride = 61;  // every 61st element, and the last
        std::vector<float> o;
        d2h(o, out, 0, e);
        size_t n = 0;
        for (size_t k = 0; k <= e / stride; k++) {
            size_t i = k < e / stride ? k * stride : e - 1;
            size_t r = i / W, c = i % W;  // in[r][c] = in[i], out[c][r] = out[c * H + r]
            float want = (float)((word_at(i, 41) >> 8) & 0xFFFFFFU);
            n++;
            if (!(o[c * H + r] == want)) {
                detail = fmt("out[%zu][%zu] = %.9g, expected in[%zu][%zu] = %.9g", c, r,
                             o[c * H + r], r, c, want);
                return false;
            }
        }
        detail = fmt("%zu sampled elements exact", n);
        return true;
    }
};

// ---- reduction: partial sums of 512 small integers per block, exact
class Reduction : public Bench {
    static constexpr size_t N = SZ((size_t)1 << 28, 1 << 13);  // 1 GiB of floats
    static constexpr size_t P = N / (2 * RED_THREADS);
    float *in = nullptr, *out = nullptr;

public:
    ~Reduction() { dfree(in), dfree(out); }
    void setup() override {
        in = dmalloc<float>(N), out = dmalloc<float>(P);
        fillIntFloat<<<fill_grid(), 256>>>(in, N, 51, 7U, 0);
        CHECK_LAUNCH();
        block = dim3(RED_THREADS);
        grid = dim3((unsigned)P);
    }
    void launch() override { reduction<<<grid, block>>>(out, in, N); }
    bool check(std::string &detail) override {
        std::vector<float> o;
        d2h(o, out, 0, P);
        size_t n = 0;
        for (size_t j = 0; j < P; j++) {
            if (!(j < 2048 || j >= P - 2048 || j % 101 == 0)) continue;
            unsigned want = 0;
            for (size_t i = j * 2 * RED_THREADS; i < (j + 1) * 2 * RED_THREADS; i++)
                want += word_at(i, 51) & 7U;
            n++;
            if (!(o[j] == (float)want)) {
                detail = fmt("block %zu sum %.9g, expected %u", j, o[j], want);
                return false;
            }
        }
        detail = fmt("%zu block sums exact", n);
        return true;
    }
};

// ---- histogram: the first launch on zeroed bins counts every byte of the data once
class Histogram : public Bench {
    static constexpr size_t NW = SZ((size_t)1 << 27, 1 << 12);  // 512 MiB of words, 4 bytes each counted
    unsigned *data = nullptr, *hist = nullptr;

public:
    ~Histogram() { dfree(data), dfree(hist); }
    void setup() override {
        data = dmalloc<unsigned>(NW), hist = dmalloc<unsigned>(HIST_BINS);
        fillWords<<<fill_grid(), 256>>>(data, NW, 61);
        CHECK_LAUNCH();
        CHECK(cudaMemset(hist, 0, HIST_BINS * sizeof(unsigned)));
        block = dim3(256);
        grid = dim3((unsigned)g_sms * 8);
    }
    void launch() override { histogram<<<grid, block>>>(hist, data, NW); }
    bool check(std::string &detail) override {
        std::vector<unsigned> h, want(HIST_BINS, 0);
        d2h(h, hist, 0, HIST_BINS);
        for (size_t i = 0; i < NW; i++) {
            unsigned d = word_at(i, 61);
            want[d & 0xFF]++, want[(d >> 8) & 0xFF]++, want[(d >> 16) & 0xFF]++, want[d >> 24]++;
        }
        for (int b = 0; b < HIST_BINS; b++)
            if (h[b] != want[b]) {
                detail = fmt("bin %d = %u, expected %u", b, h[b], want[b]);
                return false;
            }
        detail = fmt("%d bins exact over %zu bytes", HIST_BINS, 4 * NW);
        return true;
    }
};

// ---- scalarProd: VN dot products of EN elements
class ScalarProd : public Bench {
    static constexpr int VN = SZ(8192, 8), EN = SZ(16384, 512);  // 2 x 512 MiB
    float *A = nullptr, *B = nullptr, *C = nullptr;

public:
    ~ScalarProd() { dfree(A), dfree(B), dfree(C); }
    void setup() override {
        size_t e = (size_t)VN * EN;
        A = dmalloc<float>(e), B = dmalloc<float>(e), C = dmalloc<float>(VN);
        fill_uniform(A, e, 71, 0.0f, 1.0f);
        fill_uniform(B, e, 72, 0.0f, 1.0f);
        block = dim3(SP_THREADS);
        grid = dim3(VN);
    }
    void launch() override { scalarProd<<<grid, block>>>(C, A, B, EN); }
    bool check(std::string &detail) override {
        std::vector<float> a, b, c;
        d2h(c, C, 0, VN);
        const int checks = 20;
        for (int k = 0; k < checks; k++) {
            int v = k == 0 ? 0 : k == 1 ? VN - 1 : (int)(hash32(k) % VN);
            d2h(a, A, (size_t)v * EN, EN), d2h(b, B, (size_t)v * EN, EN);
            double ref = 0;
            for (int i = 0; i < EN; i++) ref += (double)a[i] * b[i];  // all terms >= 0
            if (!(fabs(c[v] - ref) <= 1e-5 * ref + 1e-6)) {
                detail = fmt("C[%d] = %.9g, expected %.9g", v, c[v], ref);
                return false;
            }
        }
        detail = fmt("%d dot products within 1e-5", checks);
        return true;
    }
};

// ---- convolutionSeparable (rows)
class Convolution : public Bench {
    static constexpr int W = SZ(16384, 256), H = SZ(8192, 8);  // 512 MiB each way
    float *src = nullptr, *dst = nullptr;
    float k_[KERNEL_LENGTH];

public:
    ~Convolution() { dfree(src), dfree(dst); }
    void setup() override {
        size_t e = (size_t)W * H;
        src = dmalloc<float>(e), dst = dmalloc<float>(e);
        fill_uniform(src, e, 81, 0.0f, 1.0f);
        double sum = 0;  // a Gaussian, sigma 4, normalised
        for (int i = 0; i < KERNEL_LENGTH; i++)
            sum += exp(-(double)(i - KERNEL_RADIUS) * (i - KERNEL_RADIUS) / 32.0);
        for (int i = 0; i < KERNEL_LENGTH; i++)
            k_[i] = (float)(exp(-(double)(i - KERNEL_RADIUS) * (i - KERNEL_RADIUS) / 32.0) / sum);
        CHECK(cudaMemcpyToSymbol(c_Kernel, k_, sizeof k_));
        block = dim3(ROWS_BLOCKDIM_X, ROWS_BLOCKDIM_Y);
        grid = dim3(W / (ROWS_RESULT_STEPS * ROWS_BLOCKDIM_X), H / ROWS_BLOCKDIM_Y);
    }
    void launch() override { convolutionSeparable<<<grid, block>>>(dst, src, W, H); }
    bool check(std::string &detail) override {
        const int rows[5] = {0, 1, H / 2 + 3, H - 2, H - 1};
        std::vector<float> s, d;
        double worst = 0;
        for (int y : rows) {
            d2h(s, src, (size_t)y * W, W), d2h(d, dst, (size_t)y * W, W);
            for (int x = 0; x < W; x++) {
                double ref = 0;
                for (int j = -KERNEL_RADIUS; j <= KERNEL_RADIUS; j++)
                    if (x + j >= 0 && x + j < W) ref += (double)k_[KERNEL_RADIUS - j] * s[x + j];
                double err = fabs(d[x] - ref);
                if (!(err <= 1e-5)) {
                    detail = fmt("dst[%d][%d] = %.9g, expected %.9g", y, x, d[x], ref);
                    return false;
                }
                worst = std::max(worst, err);
            }
        }
        detail = fmt("5 rows, worst abs error %.3g", worst);
        return true;
    }
};

// ---- sortingNetworks: chunks of SORT_SIZE keys, each sorted
class Sorting : public Bench {
    static constexpr size_t N = SZ((size_t)1 << 27, 1 << 13);  // 2 x 512 MiB of keys
    unsigned *src = nullptr, *dst = nullptr;

public:
    ~Sorting() { dfree(src), dfree(dst); }
    void setup() override {
        src = dmalloc<unsigned>(N), dst = dmalloc<unsigned>(N);
        fillWords<<<fill_grid(), 256>>>(src, N, 91);
        CHECK_LAUNCH();
        block = dim3(SORT_SIZE / 2);
        grid = dim3((unsigned)(N / SORT_SIZE));
    }
    void launch() override { sortingNetworks<<<grid, block>>>(dst, src); }
    bool check(std::string &detail) override {
        const size_t chunks = N / SORT_SIZE;
        const int checks = 64;
        std::vector<unsigned> s, d;
        for (int k = 0; k < checks; k++) {
            size_t c = k == 0 ? 0 : k == 1 ? chunks - 1 : hash32(k) % chunks;
            d2h(s, src, c * SORT_SIZE, SORT_SIZE), d2h(d, dst, c * SORT_SIZE, SORT_SIZE);
            std::sort(s.begin(), s.end());
            if (s != d) {
                size_t i = 0;
                while (s[i] == d[i]) i++;
                detail = fmt("chunk %zu: key %zu is %u, expected %u", c, i, d[i], s[i]);
                return false;
            }
        }
        detail = fmt("%d chunks of %d keys sorted", checks, SORT_SIZE);
        return true;
    }
};

// ---- quasirandomGenerator
class Quasirandom : public Bench {
    static constexpr unsigned N = SZ(1U << 26, 1U << 13);  // per dimension: 3 x 256 MiB written
    const unsigned seed_ = 0;
    float *out = nullptr;
    unsigned table_[QRNG_DIMENSIONS][QRNG_RESOLUTION];

public:
    ~Quasirandom() { dfree(out); }
    void setup() override {
        out = dmalloc<float>((size_t)QRNG_DIMENSIONS * N);
        for (int d = 0; d < QRNG_DIMENSIONS; d++)
            for (int b = 0; b < QRNG_RESOLUTION; b++)
                table_[d][b] = word_at((size_t)d * QRNG_RESOLUTION + b, 101) >> 1;  // 31 bits
        CHECK(cudaMemcpyToSymbol(c_Table, table_, sizeof table_));
        block = dim3(256);
        grid = dim3(N / 256, QRNG_DIMENSIONS);
    }
    void launch() override { quasirandomGenerator<<<grid, block>>>(out, seed_, N); }
    bool check(std::string &detail) override {
        const size_t K = std::min(4096U, N / 4);
        const size_t offs[3] = {0, N / 2 + 5, N - K};
        std::vector<float> o;
        for (int d = 0; d < QRNG_DIMENSIONS; d++)
            for (size_t off : offs) {
                d2h(o, out, (size_t)d * N + off, K);
                for (size_t i = 0; i < K; i++) {
                    float want = qrng_value((unsigned)(off + i), seed_, table_[d]);
                    if (!(o[i] == want)) {
                        detail = fmt("dim %d, pos %zu: %.9g, expected %.9g", d, off + i, o[i], want);
                        return false;
                    }
                }
            }
        detail = fmt("%zu values exact", (size_t)QRNG_DIMENSIONS * 3 * K);
        return true;
    }
};

// ---- dependentLoad: 2 warps per SM
class DependentLoad : public Bench {
    static constexpr unsigned N = SZ(1U << 26, 1U << 12);  // 256 MiB chain
    static constexpr int STEPS = SZ(1024, 64);
    static constexpr unsigned SEED = 111;
    unsigned *next = nullptr, *out = nullptr;
    unsigned threads_ = 0;

public:
    ~DependentLoad() { dfree(next), dfree(out); }
    void setup() override {
        block = dim3(64);
        grid = dim3((unsigned)g_sms);
        threads_ = grid.x * block.x;
        next = dmalloc<unsigned>(N), out = dmalloc<unsigned>(threads_);
        fillChain<<<fill_grid(), 256>>>(next, N);
        CHECK_LAUNCH();
    }
    void launch() override { dependentLoad<<<grid, block>>>(out, next, N - 1, SEED, STEPS); }
    bool check(std::string &detail) override {
        std::vector<unsigned> o;
        d2h(o, out, 0, threads_);
        for (unsigned t = 0; t < threads_; t++) {
            unsigned j = word_at(t, SEED) & (N - 1);
            for (int s = 0; s < STEPS; s++) j = chain_next(j, N - 1);
            if (o[t] != j) {
                detail = fmt("thread %u ended at %u, expected %u", t, o[t], j);
                return false;
            }
        }
        detail = fmt("%u chains of %d loads exact", threads_, STEPS);
        return true;
    }
};

// ---- fp64Horner
class Fp64Horner : public Bench {
    static constexpr int N = SZ(1 << 22, 1 << 10), ROUNDS = SZ(128, 4);  // 2048 DFMAs per element
    double *x = nullptr, *y = nullptr;
    double coef_[FP64_COEFS];

public:
    ~Fp64Horner() { dfree(x), dfree(y); }
    void setup() override {
        x = dmalloc<double>(N), y = dmalloc<double>(N);
        fillUniformDouble<<<fill_grid(), 256>>>(x, N, 121, -0.9, 1.8);
        CHECK_LAUNCH();
        for (int k = 0; k < FP64_COEFS; k++) coef_[k] = 2.0 * unit_at(k, 122) - 1.0;
        CHECK(cudaMemcpyToSymbol(c_Coef, coef_, sizeof coef_));
        block = dim3(256);
        grid = dim3((N + 255) / 256);
    }
    void launch() override { fp64Horner<<<grid, block>>>(y, x, N, ROUNDS); }
    bool check(std::string &detail) override {
        const size_t K = std::min(2048, N / 2), offs[2] = {0, (size_t)N - K};
        std::vector<double> xs, ys;
        double worst = 0;
        for (size_t off : offs) {
            d2h(xs, x, off, K), d2h(ys, y, off, K);
            for (size_t i = 0; i < K; i++) {
                double acc = 1.0;
                for (int r = 0; r < ROUNDS; r++)
                    for (int k = 0; k < FP64_COEFS; k++) acc = std::fma(acc, xs[i], coef_[k]);
                double err = fabs(ys[i] - acc) / (1.0 + fabs(acc));
                if (!(err <= 1e-12)) {
                    detail = fmt("y[%zu] = %.17g, expected %.17g", off + i, ys[i], acc);
                    return false;
                }
                worst = std::max(worst, err);
            }
        }
        detail = fmt("%zu elements, worst relative error %.3g", 2 * K, worst);
        return true;
    }
};

// ---------------------------------------------------------------- the list
struct Entry {
    const char *name;  // = the kernel's name
    const char *what;
    Bench *(*make)();
};

static Bench *make_vectorAdd() { return new VectorAdd(); }
static Bench *make_BlackScholes() { return new BlackScholesBench(); }
static Bench *make_matrixMulShared() { return new MatMul(true, SZ(2048, 64)); }
static Bench *make_matrixMulGlobal() { return new MatMul(false, SZ(1024, 64)); }
static Bench *make_transpose() { return new Transpose(true); }
static Bench *make_transposeNaive() { return new Transpose(false); }
static Bench *make_reduction() { return new Reduction(); }
static Bench *make_histogram() { return new Histogram(); }
static Bench *make_scalarProd() { return new ScalarProd(); }
static Bench *make_convolutionSeparable() { return new Convolution(); }
static Bench *make_sortingNetworks() { return new Sorting(); }
static Bench *make_quasirandomGenerator() { return new Quasirandom(); }
static Bench *make_dependentLoad() { return new DependentLoad(); }
static Bench *make_fp64Horner() { return new Fp64Horner(); }

static const Entry entries[] = {
    {"vectorAdd", "C = A + B, 2^27 floats: DRAM streaming", make_vectorAdd},
    {"BlackScholes", "2^26 options, 20 B and ~50 FP32/SFU ops each: DRAM-bound", make_BlackScholes},
    {"matrixMulShared", "SGEMM 2048^3, 32x32 shared tiles: FP32 + shared memory", make_matrixMulShared},
    {"matrixMulGlobal", "naive SGEMM 1024^3 from global memory: L1/L2-bound", make_matrixMulGlobal},
    {"transpose", "16384x8192 floats, 32x32 shared tiles: DRAM-bound", make_transpose},
    {"transposeNaive", "16384x8192 floats, strided writes: DRAM/L2-bound", make_transposeNaive},
    {"reduction", "2^28 floats to block sums, shared tree: DRAM-bound", make_reduction},
    {"histogram", "256 bins over 2^29 bytes, shared atomics", make_histogram},
    {"scalarProd", "8192 dot products of 16384 floats: DRAM-bound", make_scalarProd},
    {"convolutionSeparable", "17-tap row filter, 16384x8192 floats: DRAM-bound", make_convolutionSeparable},
    {"sortingNetworks", "bitonic sort of 2^17 chunks of 1024 keys in shared memory", make_sortingNetworks},
    {"quasirandomGenerator", "3 x 2^26 values, 31 table XORs each: integer issue", make_quasirandomGenerator},
    {"dependentLoad", "2 warps/SM, 1024 dependent loads over 256 MiB: latency", make_dependentLoad},
    {"fp64Horner", "2^22 elements x 2048 dependent DFMAs: FP64 pipe", make_fp64Horner},
};
static constexpr int NENTRIES = (int)(sizeof entries / sizeof entries[0]);

static void usage(FILE *f) {
    fprintf(f,
            "usage: dvfs-kernels [--list] [--only NAME[,NAME...]] [--reps N] [--warmup N]\n"
            "  --list      the kernels, one per line (no GPU needed)\n"
            "  --only      these kernels only, in the list's order\n"
            "  --reps N    timed launches per kernel (default 20)\n"
            "  --warmup N  launches before them, the first one checked (default 2, at least 1)\n"
            "stdout: kernel,launches,grid_x,grid_y,grid_z,block_x,block_y,block_z,"
            "time_ms_mean,time_ms_sd,time_ms_min\n"
            "The timed launches of each kernel are inside the NVTX range \"tw_measure\".\n");
}

static int parse_count(const char *s, const char *what, int min) {
    char *end;
    long v = strtol(s, &end, 10);
    if (*s == '\0' || *end != '\0' || v < min || v > 1000000) {
        fprintf(stderr, "dvfs-kernels: %s must be an integer from %d to 1000000, got '%s'\n", what,
                min, s);
        exit(2);
    }
    return (int)v;
}

// The timed part of one kernel: one event before the first launch and one after each.
static void time_launches(Bench &b, int reps, double *mean, double *sd, double *min) {
    std::vector<cudaEvent_t> ev(reps + 1);
    for (int i = 0; i <= reps; i++) CHECK(cudaEventCreate(&ev[i]));
    CHECK(cudaDeviceSynchronize());
    nvtxRangePushA("tw_measure");
    CHECK(cudaEventRecord(ev[0]));
    for (int i = 0; i < reps; i++) {
        b.launch();
        CHECK_LAUNCH();
        CHECK(cudaEventRecord(ev[i + 1]));
    }
    CHECK(cudaDeviceSynchronize());
    nvtxRangePop();
    double sum = 0, sum2 = 0, lo = INFINITY;
    std::vector<double> t(reps);
    for (int i = 0; i < reps; i++) {
        float ms = 0;
        CHECK(cudaEventElapsedTime(&ms, ev[i], ev[i + 1]));
        t[i] = ms, sum += ms, lo = std::min(lo, (double)ms);
    }
    *mean = sum / reps;
    for (int i = 0; i < reps; i++) sum2 += (t[i] - *mean) * (t[i] - *mean);
    *sd = reps > 1 ? sqrt(sum2 / (reps - 1)) : 0.0;
    *min = lo;
    for (int i = 0; i <= reps; i++) CHECK(cudaEventDestroy(ev[i]));
}

int main(int argc, char **argv) {
    int reps = 20, warmup = 2;
    bool list = false;
    std::vector<bool> chosen(NENTRIES, true);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        bool has_value = i + 1 < argc;
        if (!strcmp(a, "--list")) {
            list = true;
        } else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(a, "--reps") && has_value) {
            reps = parse_count(argv[++i], "--reps", 1);
        } else if (!strcmp(a, "--warmup") && has_value) {
            warmup = parse_count(argv[++i], "--warmup", 1);
        } else if (!strcmp(a, "--only") && has_value) {
            std::string names = argv[++i];
            std::fill(chosen.begin(), chosen.end(), false);
            size_t start = 0;
            while (start <= names.size()) {
                size_t comma = names.find(',', start);
                if (comma == std::string::npos) comma = names.size();
                std::string name = names.substr(start, comma - start);
                int k = 0;
                while (k < NENTRIES && name != entries[k].name) k++;
                if (k == NENTRIES) {
                    fprintf(stderr, "dvfs-kernels: --only: no kernel named '%s' (see --list)\n",
                            name.c_str());
                    return 2;
                }
                chosen[k] = true;
                start = comma + 1;
            }
        } else {
            fprintf(stderr, "dvfs-kernels: unknown option or missing value: '%s'\n", a);
            usage(stderr);
            return 2;
        }
    }
    if (list) {
        for (int k = 0; k < NENTRIES; k++)
            if (chosen[k]) printf("%-22s %s\n", entries[k].name, entries[k].what);
        return 0;
    }

    CHECK(cudaSetDevice(0));
    CHECK(cudaDeviceGetAttribute(&g_sms, cudaDevAttrMultiProcessorCount, 0));
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, 0));
    fprintf(stderr, "dvfs-kernels: %s, %d SMs, compute capability %d.%d; reps %d, warm-up %d\n",
            prop.name, g_sms, prop.major, prop.minor, reps, warmup);

    printf("kernel,launches,grid_x,grid_y,grid_z,block_x,block_y,block_z,time_ms_mean,time_ms_sd,"
           "time_ms_min\n");
    fflush(stdout);
    int failed = 0;
    for (int k = 0; k < NENTRIES; k++) {
        if (!chosen[k]) continue;
        Bench *b = entries[k].make();
        b->setup();
        CHECK(cudaDeviceSynchronize());
        b->launch();  // the first warm-up launch, whose result is checked
        CHECK_LAUNCH();
        CHECK(cudaDeviceSynchronize());
        std::string detail;
        bool ok = b->check(detail);
        fprintf(stderr, "dvfs-kernels: %-22s check %s (%s)\n", entries[k].name, ok ? "PASS" : "FAIL",
                detail.c_str());
        if (!ok) {
            failed++;
            delete b;
            continue;
        }
        for (int w = 1; w < warmup; w++) {
            b->launch();
            CHECK_LAUNCH();
        }
        double mean, sd, min;
        time_launches(*b, reps, &mean, &sd, &min);
        printf("%s,%d,%u,%u,%u,%u,%u,%u,%.6f,%.6f,%.6f\n", entries[k].name, reps, b->grid.x, b->grid.y,
               b->grid.z, b->block.x, b->block.y, b->block.z, mean, sd, min);
        fflush(stdout);
        delete b;
        CHECK(cudaDeviceSynchronize());
    }
    if (failed) {
        fprintf(stderr, "dvfs-kernels: %d kernel(s) FAILED their check\n", failed);
        return 1;
    }
    return 0;
}
