/* Pointer-chase microbenchmarks (chase.h). */
#include "mem/chase.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/sbuf.h"
#include "isa/isa.h"

const char *tw_mem_level_name(tw_mem_level l)
{
    static const char *const n[] = {"shared", "l1", "l2", "dram"};
    return l >= 0 && l < TW_MEM_LEVELS ? n[l] : "?";
}

int tw_chase_layout_of(const tw_chase_config *c, tw_chase_layout *out)
{
    if (!c || !out) {
        tw_fail(TW_EINVAL, "chase: NULL argument");
        return -1;
    }
    if (c->level < 0 || c->level >= TW_MEM_LEVELS) {
        tw_fail(TW_EINVAL, "chase: unknown memory level %d", (int)c->level);
        return -1;
    }
    if (c->threads < 1 || c->threads > 1024) {
        tw_fail(TW_EINVAL, "chase: %u threads per block (1..1024)", c->threads);
        return -1;
    }
    if (c->granularity < 8 || c->granularity % 8 || (c->granularity & (c->granularity - 1))) {
        tw_fail(TW_EINVAL, "chase: granularity %u bytes (a power of two, at least 8)", c->granularity);
        return -1;
    }
    size_t step = c->granularity / 8 > c->threads ? c->granularity / 8 : c->threads;
    size_t words = c->sub_bytes / 8;
    if (c->sub_bytes % 8 || words % step || words / step < 2) {
        tw_fail(TW_EINVAL, "chase: a %zu-byte array is not at least two steps of %zu words", c->sub_bytes, step);
        return -1;
    }
    if (c->level == TW_MEM_SHARED && c->sub_bytes > TW_CHASE_SHARED_MAX) {
        tw_fail(TW_EINVAL, "chase: %zu bytes of shared memory (at most %d)", c->sub_bytes, TW_CHASE_SHARED_MAX);
        return -1;
    }
    size_t ring = words / step;
    if (c->unroll < 1 || ring % c->unroll) {
        tw_fail(TW_EINVAL, "chase: unroll %u does not divide the ring of %zu loads", c->unroll, ring);
        return -1;
    }
    out->step_words = step;
    out->ring = ring;
    /* one step of the block reads `threads` words, or one granule when fewer threads share it */
    double bytes = 8.0 * c->threads, g = c->granularity;
    out->sectors_per_pass = (double)ring * (bytes > g ? bytes / g : 1.0);
    return 0;
}

static const char *load_of(tw_mem_level l)
{
    switch (l) {
    case TW_MEM_SHARED:
        return "ld.shared.u64";
    case TW_MEM_L1:
        return "ld.global.u64"; /* weak: cached in L1 (.ca would be a strong SM-scope load) */
    default:
        return "ld.global.cg.u64";
    }
}

/* %base = this block's sub-array; %p = this thread's first word. */
static void emit_base(tw_sbuf *b, const tw_chase_config *c)
{
    if (c->level == TW_MEM_SHARED) {
        tw_sbuf_printf(b, "    mov.u64 %%base, tw_chase_smem;\n");
    } else {
        tw_sbuf_printf(b, "    cvta.to.global.u64 %%base, %%out;\n");
        tw_sbuf_printf(b, "    cvt.u64.u32 %%w, %%ctaid.x;\n");
        tw_sbuf_printf(b, "    mad.lo.u64 %%base, %%w, %zu, %%base;\n", c->sub_bytes);
    }
    tw_sbuf_printf(b, "    cvt.u64.u32 %%w, %%tid.x;\n");
    tw_sbuf_printf(b, "    shl.b64 %%w, %%w, 3;\n");
    tw_sbuf_printf(b, "    add.u64 %%p, %%base, %%w;\n");
}

/* word i of the ring holds the address of word i+1; the last, of the first */
static void emit_ring(tw_sbuf *b, const tw_chase_config *c, const tw_chase_layout *l)
{
    const char *st = c->level == TW_MEM_SHARED ? "st.shared.u64" : "st.global.u64";
    size_t stride = l->step_words * 8;
    tw_sbuf_printf(b, "    mov.u64 %%q, %%p;\n");
    tw_sbuf_printf(b, "    mov.u64 %%i, 1;\n");
    tw_sbuf_printf(b, "$L_ring:\n    .pragma \"nounroll\";\n");
    tw_sbuf_printf(b, "    add.u64 %%n, %%q, %zu;\n", stride);
    tw_sbuf_printf(b, "    %s [%%q], %%n;\n", st);
    tw_sbuf_printf(b, "    mov.u64 %%q, %%n;\n");
    tw_sbuf_printf(b, "    add.u64 %%i, %%i, 1;\n");
    tw_sbuf_printf(b, "    setp.lt.u64 %%pr, %%i, %zu;\n", l->ring);
    tw_sbuf_printf(b, "    @%%pr bra $L_ring;\n");
    tw_sbuf_printf(b, "    %s [%%q], %%p;\n", st);
    if (c->level == TW_MEM_SHARED) tw_sbuf_printf(b, "    bar.sync 0;\n");
}

static void emit_loops(tw_sbuf *b, const tw_chase_config *c, const tw_chase_layout *l)
{
    const char *ld = load_of(c->level);
    tw_sbuf_printf(b, "    // warm-up: one pass brings the ring into the target level\n");
    tw_sbuf_printf(b, "    mov.u64 %%i, 0;\n");
    tw_sbuf_printf(b, "$L_warm:\n    .pragma \"nounroll\";\n");
    tw_sbuf_printf(b, "    %s %%p, [%%p];\n", ld);
    tw_sbuf_printf(b, "    add.u64 %%i, %%i, 1;\n");
    tw_sbuf_printf(b, "    setp.lt.u64 %%pr, %%i, %zu;\n", l->ring);
    tw_sbuf_printf(b, "    @%%pr bra $L_warm;\n");
    tw_sbuf_printf(b, "    // measurement: `iterations` passes, %u dependent loads per trip\n", c->unroll);
    tw_sbuf_printf(b, "    mul.lo.u64 %%trips, %%iters, %zu;\n", l->ring / c->unroll);
    tw_sbuf_printf(b, "    mov.u64 %%i, 0;\n");
    tw_sbuf_printf(b, "    setp.eq.u64 %%pr, %%trips, 0;\n");
    tw_sbuf_printf(b, "    @%%pr bra $L_done;\n");
    tw_sbuf_printf(b, "$L_loop:\n    .pragma \"nounroll\";\n");
    for (unsigned k = 0; k < c->unroll; k++)
        tw_sbuf_printf(b, "    %s %%p, [%%p];\n", ld);
    tw_sbuf_printf(b, "    add.u64 %%i, %%i, 1;\n");
    tw_sbuf_printf(b, "    setp.lt.u64 %%pr, %%i, %%trips;\n");
    tw_sbuf_printf(b, "    @%%pr bra $L_loop;\n");
    tw_sbuf_printf(b, "$L_done:\n");
}

char *tw_chase_ptx(const tw_chase_config *c, int sm)
{
    tw_clear_error();
    tw_chase_layout l;
    if (tw_chase_layout_of(c, &l) != 0) return NULL;
    if (sm < 70 || sm > 999) {
        tw_fail(TW_EINVAL, "chase: compute capability %d (sm_70 or newer)", sm);
        return NULL;
    }
    tw_sbuf b = {0};
    tw_sbuf_printf(
        &b, "// truewatt pointer chase: %s, %u threads per block, %zu bytes per block, %u-byte granules, unroll %u\n",
        tw_mem_level_name(c->level), c->threads, c->sub_bytes, c->granularity, c->unroll);
    tw_sbuf_printf(&b, "// (generated by src/mem/chase.c)\n");
    tw_sbuf_printf(&b, ".version 8.0\n.target sm_%d\n.address_size 64\n", sm);
    if (c->level == TW_MEM_SHARED) tw_sbuf_printf(&b, "\n.shared .align 8 .b8 tw_chase_smem[%zu];\n", c->sub_bytes);
    tw_sbuf_printf(
        &b, "\n.visible .entry %s(\n    .param .u64 out,\n    .param .u64 iterations,\n    .param .u64 seed\n)\n{\n",
        TW_CHASE_KERNEL);
    tw_sbuf_printf(&b, "    .reg .u64 %%out, %%iters, %%seed, %%base, %%w, %%p, %%q, %%n, %%i, %%trips;\n");
    tw_sbuf_printf(&b, "    .reg .pred %%pr;\n");
    tw_sbuf_printf(&b, "    ld.param.u64 %%out, [out];\n    ld.param.u64 %%iters, [iterations];\n");
    tw_sbuf_printf(&b, "    ld.param.u64 %%seed, [seed];\n");
    emit_base(&b, c);
    emit_ring(&b, c, &l);
    emit_loops(&b, c, &l);
    tw_sbuf_printf(&b, "    // keep the chase: store where it ended, only if the seed is 0 (never)\n");
    tw_sbuf_printf(&b, "    setp.ne.u64 %%pr, %%seed, 0;\n    @%%pr bra $L_end;\n");
    tw_sbuf_printf(&b, "    cvta.to.global.u64 %%out, %%out;\n    st.global.u64 [%%out], %%p;\n");
    tw_sbuf_printf(&b, "$L_end:\n    ret;\n}\n");
    tw_sbuf_printf(&b, "%s", tw_isa_resident_entry()); /* the baseline: every warp resident and asleep */
    if (b.oom) {
        free(b.p);
        tw_fail(TW_ENOMEM, "chase: out of memory");
        return NULL;
    }
    return b.p;
}
