/* The DVFS model's microbenchmarks on the local GPU (see ubench.h). */
#include "dvfs/ubench.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/note.h"
#include "gpu/gpu.h"
#include "core/sort.h"

/* CUDA C for NVRTC. Every timed kernel reads clock64 (SM cycles) around its
 * work; the throughput and bandwidth kernels also read %globaltimer so the SM
 * clock of the run is measured, and %smid so one block per SM can be checked.
 * Chains link byte offsets so no address arithmetic sits in the chain (shared)
 * or only the pointer add (global). The chase order is a full-period LCG over
 * the lines of each 2 MiB page, page after page: every line once, no two
 * neighbours adjacent, TLB misses once per page. */
static const char source[] =
    "typedef unsigned long long u64;\n"
    "__device__ __forceinline__ u64 gtime() { u64 t; asm volatile(\"mov.u64 %0, %%globaltimer;\" : \"=l\"(t)); "
    "return t; }\n"
    "__device__ __forceinline__ unsigned smid() { unsigned s; asm volatile(\"mov.u32 %0, %%smid;\" : \"=r\"(s)); "
    "return s; }\n"
    "#define BEGIN __syncthreads(); u64 c0_ = clock64(), g0_ = gtime();\n"
    "#define END(st) __syncthreads(); if (threadIdx.x == 0) { u64 *s_ = (st) + 5 * blockIdx.x; s_[0] = c0_; "
    "s_[1] = clock64(); s_[2] = g0_; s_[3] = gtime(); s_[4] = smid(); }\n"
    "extern \"C\" __global__ void chase_init(unsigned *next, unsigned lines, unsigned page_log2, unsigned "
    "line_bytes) {\n"
    "  unsigned m = 1u << page_log2, pages = lines >> page_log2;\n"
    "  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < lines; i += gridDim.x * blockDim.x) {\n"
    "    unsigned p = i >> page_log2, x = i & (m - 1), y = (3125u * x + 12345u) & (m - 1);\n"
    "    unsigned q = y == 0 ? (p + 1) % pages : p;\n"
    "    next[(size_t)i * (line_bytes / 4)] = (q * m + y) * line_bytes;\n"
    "  }\n"
    "}\n"
    "extern \"C\" __global__ void chase_global(const char *base, unsigned start, unsigned warm, unsigned hops, u64 "
    "*out) {\n"
    "  unsigned j = start;\n"
    "  for (unsigned i = 0; i < warm; i++) j = __ldcg((const unsigned *)(base + j));\n"
    "  u64 c0 = clock64();\n"
    "  for (unsigned i = 0; i < hops; i++) j = __ldcg((const unsigned *)(base + j));\n"
    "  u64 c1 = clock64();\n"
    "  out[0] = c1 - c0; out[1] = j;\n"
    "}\n"
    "extern \"C\" __global__ void chase_shared(unsigned hops, u64 *out) {\n"
    "  __shared__ unsigned s[4096];\n"
    "  for (unsigned i = threadIdx.x; i < 4096; i += blockDim.x) s[i] = ((3125u * i + 12345u) & 4095u) * 4u;\n"
    "  __syncthreads();\n"
    "  if (threadIdx.x) return;\n"
    "  const volatile char *b = (const volatile char *)s;\n"
    "  unsigned j = 0;\n"
    "  for (int i = 0; i < 256; i++) j = *(const volatile unsigned *)(b + j);\n"
    "  u64 c0 = clock64();\n"
    "#pragma unroll 8\n"
    "  for (unsigned i = 0; i < hops; i++) j = *(const volatile unsigned *)(b + j);\n"
    "  u64 c1 = clock64();\n"
    "  out[0] = c1 - c0; out[1] = j;\n"
    "}\n"
    "extern \"C\" __global__ void fma_chain(float a, float b, unsigned n, u64 *out, float *sink) {\n"
    "  float x = a;\n"
    "  u64 c0 = clock64();\n"
    "  for (unsigned i = 0; i < n; i++) {\n"
    "#pragma unroll\n"
    "    for (int k = 0; k < 64; k++) x = fmaf(x, b, a);\n"
    "  }\n"
    "  u64 c1 = clock64();\n"
    "  out[0] = c1 - c0; sink[0] = x;\n"
    "}\n"
    "#define CHAINS8(T, OP) T x0 = a + t, x1 = a - t, x2 = b + t, x3 = b - t, x4 = a * t, x5 = b * t, x6 = a + "
    "2 * t, x7 = b + 2 * t;\n"
    "extern \"C\" __global__ void fp32_tput(float a, float b, unsigned n, u64 *st, float *sink) {\n"
    "  float t = threadIdx.x * 1e-7f;\n"
    "  CHAINS8(float, 0)\n"
    "  BEGIN\n"
    "  for (unsigned i = 0; i < n; i++) {\n"
    "#pragma unroll\n"
    "    for (int k = 0; k < 8; k++) { x0 = fmaf(x0, b, a); x1 = fmaf(x1, b, a); x2 = fmaf(x2, b, a); x3 = "
    "fmaf(x3, b, a); x4 = fmaf(x4, b, a); x5 = fmaf(x5, b, a); x6 = fmaf(x6, b, a); x7 = fmaf(x7, b, a); }\n"
    "  }\n"
    "  END(st)\n"
    "  sink[blockIdx.x * blockDim.x + threadIdx.x] = x0 + x1 + x2 + x3 + x4 + x5 + x6 + x7;\n"
    "}\n"
    "extern \"C\" __global__ void fp64_tput(double a, double b, unsigned n, u64 *st, double *sink) {\n"
    "  double t = threadIdx.x * 1e-7;\n"
    "  CHAINS8(double, 0)\n"
    "  BEGIN\n"
    "  for (unsigned i = 0; i < n; i++) {\n"
    "#pragma unroll\n"
    "    for (int k = 0; k < 4; k++) { x0 = fma(x0, b, a); x1 = fma(x1, b, a); x2 = fma(x2, b, a); x3 = "
    "fma(x3, b, a); x4 = fma(x4, b, a); x5 = fma(x5, b, a); x6 = fma(x6, b, a); x7 = fma(x7, b, a); }\n"
    "  }\n"
    "  END(st)\n"
    "  sink[blockIdx.x * blockDim.x + threadIdx.x] = x0 + x1 + x2 + x3 + x4 + x5 + x6 + x7;\n"
    "}\n"
    "extern \"C\" __global__ void lds_tput(unsigned n, u64 *st, unsigned *sink) {\n"
    "  __shared__ unsigned s[4096];\n"
    "  for (unsigned i = threadIdx.x; i < 4096; i += blockDim.x) s[i] = i;\n"
    "  const volatile unsigned *v = s;\n"
    "  unsigned base = threadIdx.x & 255u, acc = 0;\n"
    "  BEGIN\n"
    "  for (unsigned i = 0; i < n; i++) {\n"
    "#pragma unroll\n"
    "    for (int k = 0; k < 16; k++) acc += v[base + 256 * k];\n"
    "  }\n"
    "  END(st)\n"
    "  sink[blockIdx.x * blockDim.x + threadIdx.x] = acc;\n"
    "}\n"
    "extern \"C\" __global__ void l2_read(const uint4 *buf, u64 n_vec, unsigned reps, u64 *st, unsigned *sink) {\n"
    "  unsigned acc = 0;\n"
    "  BEGIN\n"
    "  for (unsigned r = 0; r < reps; r++)\n"
    "    for (u64 i = blockIdx.x * blockDim.x + threadIdx.x; i < n_vec; i += (u64)gridDim.x * blockDim.x) {\n"
    "      uint4 v = __ldcg(buf + i); acc ^= v.x ^ v.y ^ v.z ^ v.w; }\n"
    "  END(st)\n"
    "  if (acc == 0x9e3779b9u) sink[0] = acc;\n"
    "}\n"
    "extern \"C\" __global__ void dram_copy(uint4 *dst, const uint4 *src, u64 n_vec, unsigned reps, u64 *st) {\n"
    "  BEGIN\n"
    "  for (unsigned r = 0; r < reps; r++)\n"
    "    for (u64 i = blockIdx.x * blockDim.x + threadIdx.x; i < n_vec; i += (u64)gridDim.x * blockDim.x)\n"
    "      dst[i] = src[i];\n"
    "  END(st)\n"
    "}\n";

enum { STAMP_WORDS = 5, LINE_BYTES = 128, PAGE_LOG2 = 14 /* 2 MiB of 128-B lines */ };

typedef struct bench {
    tw_gpu *g;
    tw_gpu_module *mod;
    tw_gpu_ptr stamps, out, sink;
    size_t max_blocks;
    void (*note)(void *ctx, const char *line);
    void *note_ctx;
} bench;

/* A progress line through the caller's note, when set. */
#define say(b, ...) tw_notef((b)->note, (b)->note_ctx, __VA_ARGS__)

static double median(double *v, size_t n)
{
    tw_sort_doubles(v, n);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static tw_status kernel(bench *b, const char *name, tw_gpu_fn *fn) { return tw_gpu_kernel(b->mod, name, fn); }

/* One one-block launch of a chain kernel (its thread 0 chases): cycles from out[0]. */
static tw_status run_chain(bench *b, const tw_gpu_fn *fn, unsigned threads, void **args, double *cycles)
{
    tw_status st = tw_gpu_launch(fn, 1, threads, args);
    if (st == TW_OK) st = tw_gpu_sync(b->g);
    uint64_t o[2];
    if (st == TW_OK) st = tw_gpu_download(b->g, o, b->out, sizeof o);
    if (st == TW_OK) *cycles = (double)o[0];
    return st;
}

/* The per-block stamps of the last launch: median block cycles, the SM clock
 * (cycles over nanoseconds, all blocks), the span first start .. last end,
 * and whether every block ran on an SM of its own. */
typedef struct stamps_summary {
    double cycles, mhz, span_ns;
    bool one_per_sm;
} stamps_summary;

static tw_status read_stamps(bench *b, size_t blocks, stamps_summary *s)
{
    uint64_t *st = malloc(blocks * STAMP_WORDS * sizeof *st);
    double *cyc = malloc(blocks * sizeof *cyc);
    unsigned char *seen = calloc(4096, 1);
    if (!st || !cyc || !seen) {
        free(st), free(cyc), free(seen);
        return tw_fail(TW_ENOMEM, "dvfs microbenchmarks: out of memory");
    }
    tw_status rc = tw_gpu_download(b->g, st, b->stamps, blocks * STAMP_WORDS * sizeof *st);
    if (rc == TW_OK) {
        double sum_c = 0, sum_ns = 0;
        uint64_t first = UINT64_MAX, last = 0;
        s->one_per_sm = true;
        for (size_t i = 0; i < blocks; i++) {
            const uint64_t *x = st + STAMP_WORDS * i;
            cyc[i] = (double)(x[1] - x[0]);
            sum_c += cyc[i];
            sum_ns += (double)(x[3] - x[2]);
            if (x[2] < first) first = x[2];
            if (x[3] > last) last = x[3];
            unsigned sm = (unsigned)x[4] & 4095u;
            if (seen[sm]) s->one_per_sm = false;
            seen[sm] = 1;
        }
        s->cycles = median(cyc, blocks);
        s->mhz = sum_ns > 0 ? 1e3 * sum_c / sum_ns : NAN;
        s->span_ns = (double)(last - first);
    }
    free(st), free(cyc), free(seen);
    return rc;
}

/* A chase over `bytes` of device memory: warm-up hops, then `hops` timed.
 * With `fresh`, each repeat starts 4 pages (8 MiB) further on, so no repeat
 * finds the lines of the one before in the L2; else all start at 0. */
static tw_status chase_global(bench *b, size_t bytes, unsigned warm, unsigned hops, bool fresh, int repeats,
                              tw_dvfs_chain *out)
{
    tw_gpu_fn init, chase;
    tw_gpu_ptr buf = 0;
    tw_status st = kernel(b, "chase_init", &init);
    if (st == TW_OK) st = kernel(b, "chase_global", &chase);
    if (st == TW_OK) st = tw_gpu_alloc(b->g, bytes, &buf);
    if (st != TW_OK) return st;
    unsigned lines = (unsigned)(bytes / LINE_BYTES), page_log2 = PAGE_LOG2, line_bytes = LINE_BYTES;
    while ((1u << page_log2) > lines)
        page_log2--;
    void *iargs[] = {&buf, &lines, &page_log2, &line_bytes};
    st = tw_gpu_launch(&init, 1024, 256, iargs);
    double c[16];
    int n = repeats < 16 ? repeats : 16;
    for (int r = 0; r < n && st == TW_OK; r++) {
        unsigned start = fresh ? (unsigned)r * 4u * (1u << page_log2) * LINE_BYTES : 0;
        void *args[] = {&buf, &start, &warm, &hops, &b->out};
        st = run_chain(b, &chase, 1, args, &c[r]);
    }
    tw_gpu_free(b->g, buf);
    if (st == TW_OK) *out = (tw_dvfs_chain){.steps = hops, .cycles = median(c, (size_t)n)};
    return st;
}

static tw_status chase_shared(bench *b, unsigned hops, int repeats, tw_dvfs_chain *out)
{
    tw_gpu_fn fn;
    tw_status st = kernel(b, "chase_shared", &fn);
    double c[16];
    int n = repeats < 16 ? repeats : 16;
    for (int r = 0; r < n && st == TW_OK; r++) {
        void *args[] = {&hops, &b->out};
        st = run_chain(b, &fn, 32, args, &c[r]); /* 32 threads fill the shared array */
    }
    if (st == TW_OK) *out = (tw_dvfs_chain){.steps = hops, .cycles = median(c, (size_t)n)};
    return st;
}

static tw_status fma_chain(bench *b, unsigned n_iter, int repeats, tw_dvfs_chain *out)
{
    tw_gpu_fn fn;
    tw_status st = kernel(b, "fma_chain", &fn);
    float a = 0.999f, x = 0.5f;
    double c[16];
    int n = repeats < 16 ? repeats : 16;
    for (int r = 0; r < n && st == TW_OK; r++) {
        void *args[] = {&a, &x, &n_iter, &b->out, &b->sink};
        st = run_chain(b, &fn, 1, args, &c[r]);
    }
    if (st == TW_OK) *out = (tw_dvfs_chain){.steps = 64.0 * n_iter, .cycles = median(c, (size_t)n)};
    return st;
}

/* A throughput kernel on one 1024-thread block per SM (32 warps each). */
static tw_status pipe(bench *b, const char *name, void **args, double insts_per_warp, int repeats, tw_dvfs_pipe *out,
                      double *mhz)
{
    tw_gpu_fn fn;
    tw_status st = kernel(b, name, &fn);
    unsigned blocks = (unsigned)tw_gpu_sm_count(b->g);
    double c[16], f[16];
    int n = repeats < 16 ? repeats : 16;
    for (int r = 0; r < n && st == TW_OK; r++) {
        st = tw_gpu_launch(&fn, blocks, 1024, args);
        if (st == TW_OK) st = tw_gpu_sync(b->g);
        stamps_summary s;
        if (st == TW_OK) st = read_stamps(b, blocks, &s);
        if (st == TW_OK && !s.one_per_sm)
            st = tw_fail(TW_EINVAL, "dvfs microbenchmark %s: two blocks shared an SM (one per SM expected)", name);
        if (st == TW_OK) c[r] = s.cycles, f[r] = s.mhz;
    }
    if (st != TW_OK) return st;
    *out = (tw_dvfs_pipe){.warps_per_sm = 32, .insts_per_warp = insts_per_warp, .cycles = median(c, (size_t)n)};
    *mhz = median(f, (size_t)n);
    return TW_OK;
}

/* A bandwidth kernel at full occupancy (512-thread blocks filling every SM). */
static tw_status stream(bench *b, const char *name, void **args, double sectors, double footprint, int repeats,
                        tw_dvfs_stream *out)
{
    tw_gpu_fn fn;
    tw_status st = kernel(b, name, &fn);
    int per_sm = tw_gpu_threads_per_sm(b->g) / 512;
    unsigned blocks = (unsigned)(tw_gpu_sm_count(b->g) * (per_sm > 0 ? per_sm : 1));
    if (blocks > b->max_blocks) blocks = (unsigned)b->max_blocks;
    double ns[16];
    int n = repeats < 16 ? repeats : 16;
    for (int r = 0; r < n && st == TW_OK; r++) {
        st = tw_gpu_launch(&fn, blocks, 512, args);
        if (st == TW_OK) st = tw_gpu_sync(b->g);
        stamps_summary s;
        if (st == TW_OK) st = read_stamps(b, blocks, &s);
        if (st == TW_OK) ns[r] = s.span_ns;
    }
    if (st == TW_OK)
        *out = (tw_dvfs_stream){.sectors = sectors, .elapsed_ns = median(ns, (size_t)n), .bytes_footprint = footprint};
    return st;
}

static tw_status run_all(bench *b, int repeats, tw_dvfs_ubench *u)
{
    size_t l2 = tw_gpu_l2_bytes(b->g) > 0 ? (size_t)tw_gpu_l2_bytes(b->g) : 50u << 20;
    /* the near L2 partition holds about a third of the L2 on an H100 (mem sizes: ~23 of 50 MiB) */
    size_t l2_chase = ((l2 / 6) >> 20 << 20) ? (l2 / 6) >> 20 << 20 : 1u << 20;
    size_t dram_chase = 1u << 30;
    tw_status st;
    say(b, "DRAM latency: one thread chasing over %zu MiB", dram_chase >> 20);
    if ((st = chase_global(b, dram_chase, 512, 16384, true, repeats, &u->dram)) != TW_OK) return st;
    say(b, "L2 latency: one thread chasing over %zu MiB after a full warm-up pass", l2_chase >> 20);
    unsigned l2_lines = (unsigned)(l2_chase / LINE_BYTES);
    if ((st = chase_global(b, l2_chase, l2_lines, 32768, false, repeats, &u->l2)) != TW_OK) return st;
    u->dram_chase_bytes = (double)dram_chase, u->l2_chase_bytes = (double)l2_chase;
    say(b, "shared-memory latency, dependent FMA latency");
    if ((st = chase_shared(b, 65536, repeats, &u->shared)) != TW_OK) return st;
    if ((st = fma_chain(b, 4096, repeats, &u->fma)) != TW_OK) return st;

    say(b, "FP32 FMA, FP64 FMA and shared-load throughput (one 1024-thread block per SM)");
    unsigned n = 8000;
    float a = 0.999f, x = 1e-3f;
    double ad = 0.999, xd = 1e-3, mhz[3];
    void *f32[] = {&a, &x, &n, &b->stamps, &b->sink};
    void *f64[] = {&ad, &xd, &n, &b->stamps, &b->sink};
    void *lds[] = {&n, &b->stamps, &b->sink};
    if ((st = pipe(b, "fp32_tput", f32, 64.0 * n, repeats, &u->fp32, &mhz[0])) != TW_OK ||
        (st = pipe(b, "fp64_tput", f64, 32.0 * n, repeats, &u->fp64, &mhz[1])) != TW_OK ||
        (st = pipe(b, "lds_tput", lds, 16.0 * n, repeats, &u->lds, &mhz[2])) != TW_OK)
        return st;
    u->sm_mhz = median(mhz, 3);

    say(b, "L2-resident read and DRAM copy bandwidth (full occupancy)");
    size_t l2_buf = l2_chase, dram_buf = 256u << 20;
    tw_gpu_ptr p = 0, q = 0;
    if ((st = tw_gpu_alloc(b->g, dram_buf, &p)) != TW_OK) return st;
    if ((st = tw_gpu_alloc(b->g, dram_buf, &q)) != TW_OK) {
        tw_gpu_free(b->g, p);
        return st;
    }
    uint64_t nv_l2 = l2_buf / 16, nv_dram = dram_buf / 16;
    unsigned reps_l2 = 64, reps_dram = 8;
    void *l2args[] = {&p, &nv_l2, &reps_l2, &b->stamps, &b->sink};
    void *cpargs[] = {&q, &p, &nv_dram, &reps_dram, &b->stamps};
    st = stream(b, "l2_read", l2args, (double)reps_l2 * (double)l2_buf / 32, (double)l2_buf, repeats, &u->l2_read);
    if (st == TW_OK)
        st = stream(b, "dram_copy", cpargs, 2.0 * reps_dram * (double)dram_buf / 32, 2.0 * (double)dram_buf, repeats,
                    &u->dram_copy);
    tw_gpu_free(b->g, p);
    tw_gpu_free(b->g, q);
    return st;
}

static tw_status load_module(bench *b)
{
    char *ptx = NULL, *log = NULL;
    tw_status st = tw_nvrtc_compile(NULL, source, "dvfs_ubench.cu", tw_gpu_cc(b->g), &ptx, &log);
    if (st == TW_OK) st = tw_gpu_load_ptx(b->g, ptx, &b->mod);
    free(ptx);
    free(log);
    return st;
}

tw_status tw_dvfs_ubench_run(tw_gpu *g, int repeats, void (*note)(void *ctx, const char *line), void *note_ctx,
                             tw_dvfs_ubench *out)
{
    if (!g || !out || repeats < 1) return tw_fail(TW_EINVAL, "tw_dvfs_ubench_run: bad argument");
    memset(out, 0, sizeof *out);
    snprintf(out->gpu, sizeof out->gpu, "%s", tw_gpu_name(g));
    out->cc = tw_gpu_cc(g);
    out->n_sm = tw_gpu_sm_count(g);
    out->threads_per_sm = tw_gpu_threads_per_sm(g);
    out->repeats = repeats;
    bench b = {.g = g, .note = note, .note_ctx = note_ctx};
    b.max_blocks = (size_t)out->n_sm * 4;
    size_t threads = b.max_blocks * 1024;
    tw_status st = load_module(&b);
    if (st == TW_OK) st = tw_gpu_alloc(g, b.max_blocks * STAMP_WORDS * sizeof(uint64_t), &b.stamps);
    if (st == TW_OK) st = tw_gpu_alloc(g, 64, &b.out);
    if (st == TW_OK) st = tw_gpu_alloc(g, threads * sizeof(double), &b.sink);
    if (st == TW_OK) st = run_all(&b, repeats, out);
    tw_gpu_free(g, b.stamps);
    tw_gpu_free(g, b.out);
    tw_gpu_free(g, b.sink);
    tw_gpu_module_unload(b.mod);
    return st;
}
