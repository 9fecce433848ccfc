/* gpu_smoke: the GPU driver layer on a real GPU (run by hand, not a ctest test).
 *   gpu_smoke [device] [target_ms]
 * Opens the device, JIT-loads the calibration PTX, calibrates tw_spin_fma to
 * about target_ms (default 100), runs it and tw_stream_copy, and prints the
 * event-timed durations, and checks that a broken PTX is refused with its JIT log. Exit status 0 when all of it worked.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/gpu.h"

#define CHECK(call)                                                                                                    \
    do {                                                                                                               \
        tw_status st_ = (call);                                                                                        \
        if (st_ != TW_OK) {                                                                                            \
            fprintf(stderr, "gpu_smoke: %s: %s: %s\n", #call, tw_strerror(st_), tw_last_error());                      \
            return 1;                                                                                                  \
        }                                                                                                              \
    } while (0)

int main(int argc, char **argv)
{
    int device = argc > 1 ? atoi(argv[1]) : 0;
    double target = argc > 2 ? atof(argv[2]) : 100.0;
    tw_gpu *g = NULL;
    CHECK(tw_gpu_open(NULL, device, &g));
    printf("device %d: %s, %d SMs, cc %d.%d, clock %d MHz\n", device, tw_gpu_name(g), tw_gpu_sm_count(g),
           tw_gpu_cc(g) / 10, tw_gpu_cc(g) % 10, tw_gpu_clock_khz(g) / 1000);

    tw_gpu_module *m = NULL;
    tw_gpu_fn spin, copy;
    CHECK(tw_gpu_load_ptx(g, tw_gpu_calibration_ptx(), &m));
    CHECK(tw_gpu_kernel(m, "tw_spin_fma", &spin));
    CHECK(tw_gpu_kernel(m, "tw_stream_copy", &copy));

    /* a PTX the JIT refuses: TW_EPARSE with the JIT's log */
    tw_gpu_module *bad = NULL;
    tw_status st = tw_gpu_load_ptx(
        g, ".version 8.0\n.target sm_70\n.address_size 64\n.visible .entry b()\n{\n    bogus;\n}\n", &bad);
    printf("broken PTX: %s: %s\n", tw_strerror(st), tw_last_error());
    if (st != TW_EPARSE) return 1;

    /* the spin kernel: 4 blocks of 256 threads per SM, iterations scaled to the target */
    unsigned block = 256, grid = (unsigned)tw_gpu_sm_count(g) * 4;
    tw_gpu_ptr out = 0;
    CHECK(tw_gpu_alloc(g, (size_t)grid * block * sizeof(float), &out));
    uint64_t iters = 1000;
    double ms = 0;
    void *spin_args[] = {&out, &iters};
    CHECK(tw_gpu_time_ms(&spin, grid, block, spin_args, &ms)); /* warm-up */
    for (int i = 0; i < 8 && ms < target * 0.9; i++) {
        CHECK(tw_gpu_time_ms(&spin, grid, block, spin_args, &ms));
        if (ms < target * 0.9) iters = (uint64_t)((double)iters * (ms > 0.01 ? target / ms : 100.0));
    }
    CHECK(tw_gpu_time_ms(&spin, grid, block, spin_args, &ms));
    double flops = 2.0 * TW_GPU_SPIN_FMA_PER_ITER * (double)iters * grid * block;
    printf("tw_spin_fma: grid %u x %u, %llu iterations: %.3f ms, %.1f TFLOP/s fp32\n", grid, block,
           (unsigned long long)iters, ms, flops / (ms * 1e-3) / 1e12);

    /* NVRTC: the same FMA loop written in CUDA C, compiled at run time, loaded, timed */
    static const char cuda_spin[] = "extern \"C\" __global__ void tw_spin_cuda(float *out, unsigned long long iters)\n"
                                    "{\n"
                                    "    float a = threadIdx.x * 1e-7f, b = a + 1e-7f, c = a + 2e-7f, d = a + 3e-7f;\n"
                                    "    for (unsigned long long i = 0; i < iters; i++) {\n"
                                    "        a = fmaf(a, 0.9999999f, 1e-7f); b = fmaf(b, 0.9999999f, 1e-7f);\n"
                                    "        c = fmaf(c, 0.9999999f, 1e-7f); d = fmaf(d, 0.9999999f, 1e-7f);\n"
                                    "    }\n"
                                    "    out[blockIdx.x * blockDim.x + threadIdx.x] = a + b + c + d;\n"
                                    "}\n";
    int nv_major = 0, nv_minor = 0;
    char *cptx = NULL, *clog = NULL;
    if (tw_nvrtc_version(NULL, &nv_major, &nv_minor) != TW_OK) {
        printf("nvrtc: unavailable: %s\n", tw_last_error());
    } else {
        CHECK(tw_nvrtc_compile(NULL, cuda_spin, "tw_spin_cuda.cu", tw_gpu_cc(g), &cptx, &clog));
        tw_gpu_module *cm = NULL;
        tw_gpu_fn cspin;
        CHECK(tw_gpu_load_ptx(g, cptx, &cm));
        CHECK(tw_gpu_kernel(cm, "tw_spin_cuda", &cspin));
        uint64_t citers = 100000;
        void *cargs[] = {&out, &citers};
        CHECK(tw_gpu_time_ms(&cspin, grid, block, cargs, &ms));
        CHECK(tw_gpu_time_ms(&cspin, grid, block, cargs, &ms));
        printf("nvrtc %d.%d: tw_spin_cuda compiled at run time (%zu bytes of PTX), %llu iterations: %.3f ms\n",
               nv_major, nv_minor, strlen(cptx), (unsigned long long)citers, ms);
        tw_gpu_module_unload(cm);
        free(cptx);
        free(clog);
    }

    /* the copy kernel: 1 GiB each way, 4 passes */
    uint64_t words = (1ull << 30) / 16, reps = 4;
    tw_gpu_ptr src = 0, dst = 0;
    CHECK(tw_gpu_alloc(g, words * 16, &src));
    CHECK(tw_gpu_alloc(g, words * 16, &dst));
    CHECK(tw_gpu_memset32(g, src, 0x3f800000u, words * 4));
    void *copy_args[] = {&dst, &src, &words, &reps};
    CHECK(tw_gpu_time_ms(&copy, grid, block, copy_args, &ms));
    CHECK(tw_gpu_time_ms(&copy, grid, block, copy_args, &ms));
    printf("tw_stream_copy: %llu x 16 B x %llu passes: %.3f ms, %.0f GB/s (read + write)\n", (unsigned long long)words,
           (unsigned long long)reps, ms, 2.0 * 16 * (double)words * reps / (ms * 1e-3) / 1e9);

    CHECK(tw_gpu_sync(g));
    tw_gpu_free(g, dst);
    tw_gpu_free(g, src);
    tw_gpu_free(g, out);
    tw_gpu_module_unload(m);
    tw_gpu_close(g);
    return 0;
}
