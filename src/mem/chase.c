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

const char *tw_chase_op_name(tw_chase_op op)
{
    static const char *const n[] = {"load", "store", "load+div"};
    return op >= 0 && op < TW_CHASE_OPS ? n[op] : "?";
}

int tw_chase_op_parse(const char *s)
{
    for (int op = 0; op < TW_CHASE_OPS; op++)
        if (s && strcmp(s, tw_chase_op_name((tw_chase_op)op)) == 0) return op;
    return -1;
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
    if (c->op < 0 || c->op >= TW_CHASE_OPS) {
        tw_fail(TW_EINVAL, "chase: unknown operation %d", (int)c->op);
        return -1;
    }
    if (c->op == TW_CHASE_STORE && c->level == TW_MEM_L1) {
        tw_fail(TW_EINVAL, "chase: stores to global memory write through L1 to L2: there is no L1 store level");
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
    size_t wb = tw_chase_word_bytes(c->level);
    size_t step = c->granularity / wb > c->threads ? c->granularity / wb : c->threads;
    size_t words = c->sub_bytes / wb;
    if (c->sub_bytes % wb || words % step || words / step < 2) {
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
    out->word_bytes = wb;
    out->step_words = step;
    out->ring = ring;
    /* one step of the block reads `threads` words, or one granule when fewer threads share it */
    double bytes = (double)wb * c->threads, g = c->granularity;
    out->sectors_per_pass = (double)ring * (bytes > g ? bytes / g : 1.0);
    return 0;
}

static const char *load_of(tw_mem_level l)
{
    switch (l) {
    case TW_MEM_SHARED:
        return "ld.shared.u32"; /* into %r32, widened: see tw_chase_word_bytes */
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
    tw_sbuf_printf(b, "    shl.b64 %%w, %%w, %d;\n", c->level == TW_MEM_SHARED ? 2 : 3);
    tw_sbuf_printf(b, "    add.u64 %%p, %%base, %%w;\n");
}

/* word i of the ring holds the address of word i+1; the last, of the first */
static void emit_ring(tw_sbuf *b, const tw_chase_config *c, const tw_chase_layout *l)
{
    bool sh = c->level == TW_MEM_SHARED;
    const char *st = sh ? "st.shared.u32" : "st.global.u64";
    size_t stride = l->step_words * l->word_bytes;
    tw_sbuf_printf(b, "    mov.u64 %%q, %%p;\n");
    tw_sbuf_printf(b, "    mov.u64 %%i, 1;\n");
    tw_sbuf_printf(b, "$L_ring:\n    .pragma \"nounroll\";\n");
    tw_sbuf_printf(b, "    add.u64 %%n, %%q, %zu;\n", stride);
    if (sh) tw_sbuf_printf(b, "    cvt.u32.u64 %%r32, %%n;\n");
    tw_sbuf_printf(b, "    %s [%%q], %s;\n", st, sh ? "%r32" : "%n");
    tw_sbuf_printf(b, "    mov.u64 %%q, %%n;\n");
    tw_sbuf_printf(b, "    add.u64 %%i, %%i, 1;\n");
    tw_sbuf_printf(b, "    setp.lt.u64 %%pr, %%i, %zu;\n", l->ring);
    tw_sbuf_printf(b, "    @%%pr bra $L_ring;\n");
    if (sh) tw_sbuf_printf(b, "    cvt.u32.u64 %%r32, %%p;\n");
    tw_sbuf_printf(b, "    %s [%%q], %s;\n", st, sh ? "%r32" : "%p");
    if (sh) tw_sbuf_printf(b, "    bar.sync 0;\n");
}

static const char *store_of(tw_mem_level l)
{
    return l == TW_MEM_SHARED ? "st.shared.u32" : "st.global.cg.u64"; /* .cg: L2, as the loads */
}

/* One dependent load: shared memory's through a 32-bit register. */
static void emit_load(tw_sbuf *b, const tw_chase_config *c)
{
    if (c->level == TW_MEM_SHARED)
        tw_sbuf_printf(b, "    ld.shared.u32 %%r32, [%%p];\n    cvt.u64.u32 %%p, %%r32;\n");
    else
        tw_sbuf_printf(b, "    %s %%p, [%%p];\n", load_of(c->level));
}

/* The division after a load: the instruction table's div.u32 recurrence
 * (each value divided by the one before, two registers), started from the
 * seed so that ptxas cannot fold it. */
static void emit_div(tw_sbuf *b, unsigned k)
{
    if (k % 2 == 0)
        tw_sbuf_printf(b, "    div.u32 %%dx, %%dx, %%dy;\n");
    else
        tw_sbuf_printf(b, "    div.u32 %%dy, %%dy, %%dx;\n");
}

/* Stores: %q walks this thread's words; the warm-up pass one store per
 * trip, the measurement `unroll` stores at immediate offsets per trip, %q
 * wrapping to %p after a pass. */
static void emit_store_loops(tw_sbuf *b, const tw_chase_config *c, const tw_chase_layout *l)
{
    const char *st = store_of(c->level);
    size_t stride = l->step_words * l->word_bytes;
    const char *v = c->level == TW_MEM_SHARED ? "%r32" : "%p";
    if (c->level == TW_MEM_SHARED) tw_sbuf_printf(b, "    cvt.u32.u64 %%r32, %%p;\n");
    tw_sbuf_printf(b, "    // warm-up: one pass of stores brings the words into the target level\n");
    tw_sbuf_printf(b, "    mov.u64 %%q, %%p;\n    mov.u64 %%i, 0;\n");
    tw_sbuf_printf(b, "$L_warm:\n    .pragma \"nounroll\";\n");
    tw_sbuf_printf(b, "    %s [%%q], %s;\n", st, v);
    tw_sbuf_printf(b, "    add.u64 %%q, %%q, %zu;\n", stride);
    tw_sbuf_printf(b, "    add.u64 %%i, %%i, 1;\n");
    tw_sbuf_printf(b, "    setp.lt.u64 %%pr, %%i, %zu;\n", l->ring);
    tw_sbuf_printf(b, "    @%%pr bra $L_warm;\n");
    tw_sbuf_printf(b, "    // measurement: `iterations` passes, %u stores per trip\n", c->unroll);
    tw_sbuf_printf(b, "    add.u64 %%n, %%p, %zu;\n", stride * l->ring); /* one past the pass */
    tw_sbuf_printf(b, "    mov.u64 %%q, %%p;\n");
    tw_sbuf_printf(b, "    mul.lo.u64 %%trips, %%iters, %zu;\n", l->ring / c->unroll);
    tw_sbuf_printf(b, "    mov.u64 %%i, 0;\n");
    tw_sbuf_printf(b, "    setp.eq.u64 %%pr, %%trips, 0;\n");
    tw_sbuf_printf(b, "    @%%pr bra $L_done;\n");
    tw_sbuf_printf(b, "$L_loop:\n    .pragma \"nounroll\";\n");
    for (unsigned k = 0; k < c->unroll; k++)
        tw_sbuf_printf(b, "    %s [%%q+%zu], %s;\n", st, k * stride, v);
    tw_sbuf_printf(b, "    add.u64 %%q, %%q, %zu;\n", c->unroll * stride);
    tw_sbuf_printf(b, "    setp.ge.u64 %%pw, %%q, %%n;\n");
    tw_sbuf_printf(b, "    selp.u64 %%q, %%p, %%q, %%pw;\n");
    tw_sbuf_printf(b, "    add.u64 %%i, %%i, 1;\n");
    tw_sbuf_printf(b, "    setp.lt.u64 %%pr, %%i, %%trips;\n");
    tw_sbuf_printf(b, "    @%%pr bra $L_loop;\n");
    tw_sbuf_printf(b, "$L_done:\n");
}

static void emit_loops(tw_sbuf *b, const tw_chase_config *c, const tw_chase_layout *l)
{
    tw_sbuf_printf(b, "    // warm-up: one pass brings the ring into the target level\n");
    tw_sbuf_printf(b, "    mov.u64 %%i, 0;\n");
    tw_sbuf_printf(b, "$L_warm:\n    .pragma \"nounroll\";\n");
    emit_load(b, c);
    tw_sbuf_printf(b, "    add.u64 %%i, %%i, 1;\n");
    tw_sbuf_printf(b, "    setp.lt.u64 %%pr, %%i, %zu;\n", l->ring);
    tw_sbuf_printf(b, "    @%%pr bra $L_warm;\n");
    tw_sbuf_printf(b, "    // measurement: `iterations` passes, %u dependent loads per trip\n", c->unroll);
    tw_sbuf_printf(b, "    mul.lo.u64 %%trips, %%iters, %zu;\n", l->ring / c->unroll);
    tw_sbuf_printf(b, "    mov.u64 %%i, 0;\n");
    tw_sbuf_printf(b, "    setp.eq.u64 %%pr, %%trips, 0;\n");
    tw_sbuf_printf(b, "    @%%pr bra $L_done;\n");
    tw_sbuf_printf(b, "$L_loop:\n    .pragma \"nounroll\";\n");
    for (unsigned k = 0; k < c->unroll; k++) {
        emit_load(b, c);
        if (c->op == TW_CHASE_LOAD_DIV) emit_div(b, k);
    }
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
        &b,
        "// truewatt pointer chase: %s %s, %u threads per block, %zu bytes per block, %u-byte granules, unroll %u\n",
        tw_chase_op_name(c->op), tw_mem_level_name(c->level), c->threads, c->sub_bytes, c->granularity, c->unroll);
    tw_sbuf_printf(&b, "// (generated by src/mem/chase.c)\n");
    tw_sbuf_printf(&b, ".version 8.0\n.target sm_%d\n.address_size 64\n", sm);
    if (c->level == TW_MEM_SHARED) tw_sbuf_printf(&b, "\n.shared .align 8 .b8 tw_chase_smem[%zu];\n", c->sub_bytes);
    tw_sbuf_printf(
        &b, "\n.visible .entry %s(\n    .param .u64 out,\n    .param .u64 iterations,\n    .param .u64 seed\n)\n{\n",
        TW_CHASE_KERNEL);
    tw_sbuf_printf(&b, "    .reg .u64 %%out, %%iters, %%seed, %%base, %%w, %%p, %%q, %%n, %%i, %%trips;\n");
    tw_sbuf_printf(&b, "    .reg .u32 %%dx, %%dy, %%r32;\n");
    tw_sbuf_printf(&b, "    .reg .pred %%pr, %%pw;\n");
    tw_sbuf_printf(&b, "    ld.param.u64 %%out, [out];\n    ld.param.u64 %%iters, [iterations];\n");
    tw_sbuf_printf(&b, "    ld.param.u64 %%seed, [seed];\n");
    tw_sbuf_printf(&b, "    cvt.u32.u64 %%dx, %%seed;\n    shr.u64 %%w, %%seed, 32;\n    cvt.u32.u64 %%dy, %%w;\n");
    emit_base(&b, c);
    if (c->op == TW_CHASE_STORE) {
        emit_store_loops(&b, c, &l);
    } else {
        emit_ring(&b, c, &l);
        emit_loops(&b, c, &l);
    }
    tw_sbuf_printf(&b,
                   "    // keep the chase (and the divisions): store where it ended, only if the seed is 0 (never)\n");
    tw_sbuf_printf(&b, "    setp.ne.u64 %%pr, %%seed, 0;\n    @%%pr bra $L_end;\n");
    tw_sbuf_printf(&b, "    cvt.u64.u32 %%w, %%dx;\n    add.u64 %%p, %%p, %%w;\n");
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
