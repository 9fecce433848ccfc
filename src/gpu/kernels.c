/* truewatt's calibration kernels, as PTX text (gpu.h describes them). ISA 8.0
 * and .target sm_70, so the driver JITs them on any GPU since Volta; written
 * by hand so that no nvcc is needed to build truewatt. tests/unit/test_gpu.c
 * assembles them with ptxas and checks the SASS (FFMA chains, 128-bit loads). */
#include "gpu/gpu.h"

/* One round: one dependent FMA on each of the 8 independent chains
 * (the loop runs 4 rounds: TW_GPU_SPIN_FMA_PER_ITER = 32 FMAs per iteration). */
#define FMA_ROUND                                                                                                      \
    "    fma.rn.f32 %f1, %f1, %f9, %f10;\n"                                                                            \
    "    fma.rn.f32 %f2, %f2, %f9, %f10;\n"                                                                            \
    "    fma.rn.f32 %f3, %f3, %f9, %f10;\n"                                                                            \
    "    fma.rn.f32 %f4, %f4, %f9, %f10;\n"                                                                            \
    "    fma.rn.f32 %f5, %f5, %f9, %f10;\n"                                                                            \
    "    fma.rn.f32 %f6, %f6, %f9, %f10;\n"                                                                            \
    "    fma.rn.f32 %f7, %f7, %f9, %f10;\n"                                                                            \
    "    fma.rn.f32 %f8, %f8, %f9, %f10;\n"

static const char calibration_ptx[] =
    ".version 8.0\n"
    ".target sm_70\n"
    ".address_size 64\n"
    "\n"
    "// tw_spin_fma(out, iterations): 8 independent fp32 FMA chains per thread,\n"
    "// 4 FMAs each per iteration; the sum is stored to ((float *)out)[thread].\n"
    ".visible .entry tw_spin_fma(\n"
    "    .param .u64 tw_spin_fma_out,\n"
    "    .param .u64 tw_spin_fma_iterations\n"
    ")\n"
    "{\n"
    "    .reg .pred %p<2>;\n"
    "    .reg .f32 %f<12>;\n"
    "    .reg .b32 %r<5>;\n"
    "    .reg .b64 %rd<10>;\n"
    "\n"
    "    ld.param.u64 %rd1, [tw_spin_fma_out];\n"
    "    ld.param.u64 %rd2, [tw_spin_fma_iterations];\n"
    "    cvta.to.global.u64 %rd1, %rd1;\n"
    "    mov.u32 %r1, %ctaid.x;\n"
    "    mov.u32 %r2, %ntid.x;\n"
    "    mov.u32 %r3, %tid.x;\n"
    "    cvt.u64.u32 %rd3, %r3;\n"
    "    mad.wide.u32 %rd3, %r1, %r2, %rd3;\n"
    "    // seeds depend on the thread, so nothing folds to a constant\n"
    "    cvt.rn.f32.u32 %f0, %r3;\n"
    "    mul.f32 %f0, %f0, 0f3A800000;\n" /* tid / 1024 */
    "    add.f32 %f1, %f0, 0f3F800000;\n"
    "    add.f32 %f2, %f0, 0f40000000;\n"
    "    add.f32 %f3, %f0, 0f40400000;\n"
    "    add.f32 %f4, %f0, 0f40800000;\n"
    "    add.f32 %f5, %f0, 0f40A00000;\n"
    "    add.f32 %f6, %f0, 0f40C00000;\n"
    "    add.f32 %f7, %f0, 0f40E00000;\n"
    "    add.f32 %f8, %f0, 0f41000000;\n"
    "    mov.f32 %f9, 0f3F7FF972;\n"  /* a = 0.9999, x = a x + b stays bounded */
    "    mov.f32 %f10, 0f38D1B717;\n" /* b = 0.0001 */
    "    mov.u64 %rd4, 0;\n"
    "    setp.eq.u64 %p1, %rd2, 0;\n"
    "    @%p1 bra $L_spin_done;\n"
    "$L_spin_loop:\n" FMA_ROUND FMA_ROUND FMA_ROUND FMA_ROUND "    add.u64 %rd4, %rd4, 1;\n"
    "    setp.lt.u64 %p1, %rd4, %rd2;\n"
    "    @%p1 bra $L_spin_loop;\n"
    "$L_spin_done:\n"
    "    add.f32 %f1, %f1, %f2;\n"
    "    add.f32 %f3, %f3, %f4;\n"
    "    add.f32 %f5, %f5, %f6;\n"
    "    add.f32 %f7, %f7, %f8;\n"
    "    add.f32 %f1, %f1, %f3;\n"
    "    add.f32 %f5, %f5, %f7;\n"
    "    add.f32 %f1, %f1, %f5;\n"
    "    shl.b64 %rd5, %rd3, 2;\n"
    "    add.s64 %rd6, %rd1, %rd5;\n"
    "    st.global.f32 [%rd6], %f1;\n"
    "    ret;\n"
    "}\n"
    "\n"
    "// tw_stream_copy(dst, src, n_words, reps): dst[i] = src[i] for n_words\n"
    "// 16-byte words, 128-bit loads and stores, grid-stride, reps passes.\n"
    ".visible .entry tw_stream_copy(\n"
    "    .param .u64 tw_stream_copy_dst,\n"
    "    .param .u64 tw_stream_copy_src,\n"
    "    .param .u64 tw_stream_copy_n_words,\n"
    "    .param .u64 tw_stream_copy_reps\n"
    ")\n"
    "{\n"
    "    .reg .pred %p<2>;\n"
    "    .reg .b32 %r<9>;\n"
    "    .reg .b64 %rd<14>;\n"
    "\n"
    "    ld.param.u64 %rd1, [tw_stream_copy_dst];\n"
    "    ld.param.u64 %rd2, [tw_stream_copy_src];\n"
    "    ld.param.u64 %rd3, [tw_stream_copy_n_words];\n"
    "    ld.param.u64 %rd4, [tw_stream_copy_reps];\n"
    "    cvta.to.global.u64 %rd1, %rd1;\n"
    "    cvta.to.global.u64 %rd2, %rd2;\n"
    "    mov.u32 %r1, %ctaid.x;\n"
    "    mov.u32 %r2, %ntid.x;\n"
    "    mov.u32 %r3, %tid.x;\n"
    "    mov.u32 %r4, %nctaid.x;\n"
    "    cvt.u64.u32 %rd5, %r3;\n"
    "    mad.wide.u32 %rd5, %r1, %r2, %rd5;\n" /* first word of this thread */
    "    mul.wide.u32 %rd6, %r4, %r2;\n"       /* stride: threads in the grid */
    "    mov.u64 %rd7, 0;\n"                   /* pass */
    "    setp.eq.u64 %p1, %rd4, 0;\n"
    "    @%p1 bra $L_copy_done;\n"
    "$L_copy_pass:\n"
    "    mov.u64 %rd8, %rd5;\n"
    "    setp.ge.u64 %p1, %rd8, %rd3;\n"
    "    @%p1 bra $L_copy_next;\n"
    "$L_copy_word:\n"
    "    shl.b64 %rd9, %rd8, 4;\n"
    "    add.s64 %rd10, %rd2, %rd9;\n"
    "    add.s64 %rd11, %rd1, %rd9;\n"
    "    ld.global.v4.u32 {%r5, %r6, %r7, %r8}, [%rd10];\n"
    "    st.global.v4.u32 [%rd11], {%r5, %r6, %r7, %r8};\n"
    "    add.s64 %rd8, %rd8, %rd6;\n"
    "    setp.lt.u64 %p1, %rd8, %rd3;\n"
    "    @%p1 bra $L_copy_word;\n"
    "$L_copy_next:\n"
    "    add.u64 %rd7, %rd7, 1;\n"
    "    setp.lt.u64 %p1, %rd7, %rd4;\n"
    "    @%p1 bra $L_copy_pass;\n"
    "$L_copy_done:\n"
    "    ret;\n"
    "}\n";

const char *tw_gpu_calibration_ptx(void) { return calibration_ptx; }
