/* The microbenchmark generator (isa.h): one table entry -> one PTX module.
 *
 * An entry's template (tw_isa_entry.ptx) is one or more PTX instructions,
 * each ending in ';'. The generator writes it TW_ISA_CHAIN times per round
 * and chain, filling these slots:
 *   <d>       the chain's new value           <a>  its latest value
 *   <p>       the value before <a>: "op <d>, <a>, <p>" is a Fibonacci-like
 *             chain in two registers, so that every value has two readers and
 *             ptxas can neither fuse two copies into one instruction (IADD3,
 *             LOP3, VIMNMX3 take three inputs) nor fold them algebraically
 *   <t>       a scratch register of the chain's type
 *   <b> <c>   loop-invariant operands derived from the seed
 *   <m>       <b> on even copies, 1/<b> on odd copies (floating point only):
 *             a multiply or divide chain stays near its start, never 0 or inf
 *   <D> <C>   an mma accumulator, 4 x f32 (new, latest); <A> <B> the A (4 x
 *             b32) and B (2 x b32) fragments, their element type read from
 *             the template (.f16, .bf16, .tf32, .e4m3, .e5m2); <At> is <A>
 *             with <t> as its first register; <c0> is <C>'s first register
 *   <s> <g>   the chain's own word in shared / global memory (atomics)
 *   <S> <G>   a word of shared / global memory per chain and copy (stores)
 *   <i>       the low 32 bits of the loop counter (a value that changes)
 *   <mask>    the active-thread mask (activemask) for .sync warp operations
 * A load that reads [<a>] makes a pointer chase: the chain's values are
 * addresses in a ring of TW_ISA_CHAINS words per thread, built by the kernel
 * before its loop (shared: 32-bit shared-window addresses; global: 64-bit).
 * An instruction written "~op ..." is glue: it only keeps the chain alive
 * (after an instruction whose repetition ptxas would fold: abs, not, and,
 * copysign, ...) and stays in the overhead kernel, with <t> read as <a>, so
 * that E_total - E_overhead leaves only the target instruction.
 *
 * Every kernel: (.u64 out, .u64 iterations, .u64 seed). The seed's two words
 * make every operand; after the loop all chain registers are xor-folded into
 * one 64-bit value, stored to out[global thread id] only when it equals
 * seed ^ TW_ISA_SENTINEL (a run-time compare ptxas cannot decide). The loop
 * carries `.pragma "nounroll"`, so the SASS has one copy of the round. */
#include "isa/isa.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/sbuf.h"

#define TW_ISA_SENTINEL "0x5A17C0DE0DDBA11"
#define SMEM_BYTES 32768   /* chase ring / atomics: TW_ISA_CHAINS words x 1024 threads; stores: 128 words x 32 lanes */
#define GMEM_BYTES 4194304 /* chase: 64 B x 65536 threads; atomics: 32 B x 65536; stores: 16 KiB x 256 warps */

/* ---------------------------------------------------------------- what an entry needs */

typedef enum kind { K_I32, K_I64, K_F32, K_F64, K_F16, K_F16X2, K_BF16X2 } kind;

typedef struct plan {
    const tw_isa_entry *e;
    tw_isa_mode mode;
    int sm;
    int chains;       /* 1 or TW_ISA_CHAINS */
    kind k;           /* the chain registers' kind */
    const char *decl; /* their PTX declaration type */
    int quad;         /* mma: 4 registers per value */
    int chase_shared; /* ld.shared [<a>]: values are shared addresses */
    int chase_global; /* ld.global [<a>]: values are global addresses */
    int use_shared;   /* the module declares shared memory */
    int use_global;   /* the module declares global memory */
    int carry;        /* addc/subc/madc: CC.CF is set before the loop */
    char id[96];      /* the name with '.' -> '_' */
    /* slots used by the template */
    int s_b, s_c, s_m, s_t, s_A, s_s, s_S, s_g, s_G, s_i, s_mask;
} plan;

static int has(const char *s, const char *needle) { return strstr(s, needle) != NULL; }

static int kind_of(const char *reg_type, kind *k, const char **decl)
{
    static const struct {
        const char *name;
        kind k;
        const char *decl;
    } map[] = {
        {"u32", K_I32, "b32"}, {"s32", K_I32, "b32"},     {"b32", K_I32, "b32"},       {"u64", K_I64, "b64"},
        {"s64", K_I64, "b64"}, {"b64", K_I64, "b64"},     {"f32", K_F32, "f32"},       {"f64", K_F64, "f64"},
        {"f16", K_F16, "b16"}, {"f16x2", K_F16X2, "b32"}, {"bf16x2", K_BF16X2, "b32"},
    };
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (strcmp(reg_type, map[i].name) == 0) {
            *k = map[i].k;
            *decl = map[i].decl;
            return 1;
        }
    return 0;
}

/* The PTX ISA version the module needs: 8.0, or what the target or the instruction requires. */
static int ptx_version(const plan *pl)
{
    int v = 80;
    int sm = pl->sm;
    if (sm >= 120)
        v = sm == 120 ? 87 : 88;
    else if (sm >= 110)
        v = 90;
    else if (sm >= 100)
        v = sm >= 103 ? 88 : 86;
    if ((has(pl->e->ptx, ".e4m3") || has(pl->e->ptx, ".e5m2")) && v < 84) v = 84; /* fp8 mma.sync */
    return v;
}

void tw_isa_kernel_name(const tw_isa_entry *e, char *out, size_t cap)
{
    if (!out || cap == 0) return;
    size_t n = (size_t)snprintf(out, cap, "tw_isa_%s", e && e->name ? e->name : "");
    if (n >= cap) n = cap - 1;
    for (size_t i = 7; i < n; i++)
        if (!((out[i] >= 'a' && out[i] <= 'z') || (out[i] >= 'A' && out[i] <= 'Z') || (out[i] >= '0' && out[i] <= '9')))
            out[i] = '_';
}

const char *tw_isa_operands(const tw_isa_entry *e, tw_isa_mode m)
{
    if (!e) return "";
    if (m == TW_ISA_THROUGHPUT && e->start == TW_ISA_START_ZERO) return "fixed at 0";
    if (m == TW_ISA_THROUGHPUT && e->start == TW_ISA_START_SATURATED) return "fixed (saturated)";
    return "from the seed";
}

int tw_isa_per_round(tw_isa_mode m) { return m == TW_ISA_THROUGHPUT ? TW_ISA_CHAIN * TW_ISA_CHAINS : TW_ISA_CHAIN; }

/* ---------------------------------------------------------------- operand values */

/* %wf0 = a float in [1, 2) from the 32-bit register `src` xor `salt`. */
static void emit_unit_float(tw_sbuf *b, const char *src, uint32_t salt)
{
    tw_sbuf_printf(b, "    xor.b32 %%w0, %s, 0x%08X;\n", src, salt);
    tw_sbuf_printf(b, "    shr.u32 %%w0, %%w0, 9;\n");
    tw_sbuf_printf(b, "    or.b32 %%w0, %%w0, 0x3F800000;\n");
    tw_sbuf_printf(b, "    mov.b32 %%wf0, %%w0;\n");
}

/* Converts %wf0 (and %wf1 for the second half of a pair) to kind k in dst. */
static void emit_from_float(tw_sbuf *b, kind k, const char *dst)
{
    switch (k) {
    case K_F32:
        tw_sbuf_printf(b, "    mov.f32 %s, %%wf0;\n", dst);
        break;
    case K_F64:
        tw_sbuf_printf(b, "    cvt.f64.f32 %s, %%wf0;\n", dst);
        break;
    case K_F16:
        tw_sbuf_printf(b, "    cvt.rn.f16.f32 %s, %%wf0;\n", dst);
        break;
    case K_F16X2:
        tw_sbuf_printf(b, "    cvt.rn.f16.f32 %%wh0, %%wf0;\n");
        tw_sbuf_printf(b, "    cvt.rn.f16.f32 %%wh1, %%wf1;\n");
        tw_sbuf_printf(b, "    mov.b32 %s, {%%wh0, %%wh1};\n", dst);
        break;
    case K_BF16X2:
        tw_sbuf_printf(b, "    cvt.rn.bf16x2.f32 %s, %%wf1, %%wf0;\n", dst);
        break;
    default:
        break;
    }
}

/* dst (kind k) = a value from the 32-bit register src xor salt: odd integers;
 * floats in [1, 2) (pairs: two different halves). */
static void emit_value(tw_sbuf *b, kind k, const char *dst, const char *src, uint32_t salt)
{
    switch (k) {
    case K_I32:
        tw_sbuf_printf(b, "    xor.b32 %%w0, %s, 0x%08X;\n", src, salt);
        tw_sbuf_printf(b, "    or.b32 %s, %%w0, 1;\n", dst);
        break;
    case K_I64:
        tw_sbuf_printf(b, "    xor.b32 %%w0, %s, 0x%08X;\n", src, salt);
        tw_sbuf_printf(b, "    mov.b64 %%wl0, {%%w0, %s};\n", src);
        tw_sbuf_printf(b, "    or.b64 %s, %%wl0, 1;\n", dst);
        break;
    case K_F16X2:
    case K_BF16X2:
        emit_unit_float(b, src, salt ^ 0x5BD1E995u);
        tw_sbuf_printf(b, "    mov.f32 %%wf1, %%wf0;\n");
        emit_unit_float(b, src, salt);
        emit_from_float(b, k, dst);
        break;
    default:
        emit_unit_float(b, src, salt);
        emit_from_float(b, k, dst);
        break;
    }
}

/* <b> and, with <m>, its reciprocal <m> uses on odd copies (both halves equal for pairs). */
static void emit_b(tw_sbuf *b, const plan *pl)
{
    if (pl->k == K_I32 || pl->k == K_I64) {
        emit_value(b, pl->k, "%vb", "%s1", 0x2545F491u);
        return;
    }
    emit_unit_float(b, "%s1", 0x2545F491u);
    tw_sbuf_printf(b, "    mov.f32 %%wf1, %%wf0;\n");
    if (pl->k == K_F64) {
        tw_sbuf_printf(b, "    cvt.f64.f32 %%vb, %%wf0;\n");
        if (pl->s_m) tw_sbuf_printf(b, "    rcp.rn.f64 %%vbi, %%vb;\n");
        return;
    }
    emit_from_float(b, pl->k, "%vb");
    if (pl->s_m) {
        tw_sbuf_printf(b, "    rcp.rn.f32 %%wf0, %%wf0;\n");
        tw_sbuf_printf(b, "    mov.f32 %%wf1, %%wf0;\n");
        emit_from_float(b, pl->k, "%vbi");
    }
}

/* The mma fragments: each b32 holds values near 1 of the element type. */
static void emit_fragments(tw_sbuf *b, const char *ptx)
{
    uint32_t mask = 0x03FF03FFu, ones = 0x3C003C00u; /* f16: 1.xxx */
    if (has(ptx, ".bf16")) {
        mask = 0x007F007Fu;
        ones = 0x3F803F80u;
    } else if (has(ptx, ".tf32")) {
        mask = 0x007FE000u;
        ones = 0x3F800000u;
    } else if (has(ptx, ".e4m3")) {
        mask = 0x07070707u;
        ones = 0x38383838u;
    } else if (has(ptx, ".e5m2")) {
        mask = 0x03030303u;
        ones = 0x3C3C3C3Cu;
    }
    for (int i = 0; i < 6; i++) {
        char dst[16];
        if (i < 4)
            snprintf(dst, sizeof dst, "%%ma%d", i);
        else
            snprintf(dst, sizeof dst, "%%mb%d", i - 4);
        tw_sbuf_printf(b, "    xor.b32 %%w0, %s, 0x%08X;\n", i % 2 ? "%s1" : "%s0", 0x9E3779B9u * (uint32_t)(i + 11));
        tw_sbuf_printf(b, "    and.b32 %%w0, %%w0, 0x%08X;\n", mask);
        tw_sbuf_printf(b, "    or.b32 %s, %%w0, 0x%08X;\n", dst, ones);
    }
}

/* ---------------------------------------------------------------- registers */

static int regs_per_value(const plan *pl) { return pl->quad ? 4 : 1; }

/* Name of chain c's register r (0, 1), component j (quad). */
static void xreg(const plan *pl, int c, int r, int j, char *out, size_t cap)
{
    int n = regs_per_value(pl);
    snprintf(out, cap, "%%x%d", ((c * 2 + r) * n) + j);
}

static void quad_text(const plan *pl, int c, int r, char *out, size_t cap)
{
    char r0[16], r1[16], r2[16], r3[16];
    xreg(pl, c, r, 0, r0, sizeof r0);
    xreg(pl, c, r, 1, r1, sizeof r1);
    xreg(pl, c, r, 2, r2, sizeof r2);
    xreg(pl, c, r, 3, r3, sizeof r3);
    snprintf(out, cap, "{%s, %s, %s, %s}", r0, r1, r2, r3);
}

/* ---------------------------------------------------------------- templates */

/* Writes one instruction of the template for chain c, copy k, filling its
 * slots. glue_in_overhead: <t> is read as <a> (the target is gone).
 * Returns 0, or -1 with the unknown slot's name in bad. */
static int expand(tw_sbuf *b, const plan *pl, const char *ins, size_t len, int c, int k, int overhead, char *bad,
                  size_t badcap)
{
    int cur = (k + 1) % 2, nxt = k % 2;
    tw_sbuf_printf(b, "    ");
    for (size_t i = 0; i < len;) {
        if (ins[i] != '<') {
            tw_sbuf_putn(b, ins + i, 1);
            i++;
            continue;
        }
        const char *end = memchr(ins + i, '>', len - i);
        if (!end) {
            snprintf(bad, badcap, "%.*s", (int)(len - i), ins + i);
            return -1;
        }
        size_t n = (size_t)(end - (ins + i)) - 1;
        const char *slot = ins + i + 1;
        char t[160];
        t[0] = '\0';
#define IS(name) (n == strlen(name) && strncmp(slot, name, n) == 0)
        if (IS("d") || IS("p"))
            xreg(pl, c, nxt, 0, t, sizeof t);
        else if (IS("a") || (IS("t") && overhead))
            xreg(pl, c, cur, 0, t, sizeof t);
        else if (IS("t"))
            snprintf(t, sizeof t, "%%t%d", c);
        else if (IS("b"))
            snprintf(t, sizeof t, "%%vb");
        else if (IS("c"))
            snprintf(t, sizeof t, "%%vc");
        else if (IS("m"))
            snprintf(t, sizeof t, "%s", k % 2 ? "%vbi" : "%vb");
        else if (IS("D"))
            quad_text(pl, c, nxt, t, sizeof t);
        else if (IS("C"))
            quad_text(pl, c, cur, t, sizeof t);
        else if (IS("A"))
            snprintf(t, sizeof t, "{%%ma0, %%ma1, %%ma2, %%ma3}");
        else if (IS("At"))
            snprintf(t, sizeof t, "{%%t%d, %%ma1, %%ma2, %%ma3}", c);
        else if (IS("c0"))
            xreg(pl, c, cur, 0, t, sizeof t);
        else if (IS("B"))
            snprintf(t, sizeof t, "{%%mb0, %%mb1}");
        else if (IS("s"))
            snprintf(t, sizeof t, "%%sa+%d", c * 4096);
        else if (IS("S"))
            snprintf(t, sizeof t, "%%ss+%d", (c * TW_ISA_CHAIN + k) * 128);
        else if (IS("g"))
            snprintf(t, sizeof t, "%%gq+%d", c * 4);
        else if (IS("G"))
            snprintf(t, sizeof t, "%%gs+%d", (c * TW_ISA_CHAIN + k) * 128);
        else if (IS("i"))
            snprintf(t, sizeof t, "%%ri");
        else if (IS("mask"))
            snprintf(t, sizeof t, "%%rmask");
        else {
            snprintf(bad, badcap, "<%.*s>", (int)n, slot);
            return -1;
        }
#undef IS
        tw_sbuf_printf(b, "%s", t);
        i += n + 2;
    }
    tw_sbuf_printf(b, ";\n");
    return 0;
}

/* One copy of the template (all its instructions) for chain c, copy k. In
 * the overhead kernel only the glue ('~') instructions are written. */
static int emit_copy(tw_sbuf *b, const plan *pl, int c, int k, int overhead, char *bad, size_t badcap)
{
    const char *s = pl->e->ptx;
    while (*s) {
        while (*s == ' ' || *s == '\t' || *s == '\n')
            s++;
        if (!*s) break;
        const char *semi = strchr(s, ';');
        size_t len = semi ? (size_t)(semi - s) : strlen(s);
        int glue = s[0] == '~';
        const char *ins = glue ? s + 1 : s;
        size_t ilen = glue ? len - 1 : len;
        while (ilen > 0 && (ins[ilen - 1] == ' ' || ins[ilen - 1] == '\t'))
            ilen--;
        if (ilen > 0 && (!overhead || glue) && expand(b, pl, ins, ilen, c, k, overhead, bad, badcap) != 0) return -1;
        s += len;
        if (*s == ';') s++;
    }
    return 0;
}

/* ---------------------------------------------------------------- one kernel */

static void emit_decls(tw_sbuf *b, const plan *pl)
{
    int nx = pl->chains * 2 * regs_per_value(pl);
    tw_sbuf_printf(b, "    .reg .pred %%pq<2>;\n");
    tw_sbuf_printf(b, "    .reg .b16 %%wh<2>;\n");
    tw_sbuf_printf(b, "    .reg .b32 %%w<4>;\n");
    tw_sbuf_printf(b, "    .reg .b64 %%wl<2>;\n");
    tw_sbuf_printf(b, "    .reg .f32 %%wf<2>;\n");
    tw_sbuf_printf(b, "    .reg .b64 %%out, %%iters, %%seed, %%ctr, %%gtid, %%acc, %%sent;\n");
    tw_sbuf_printf(b, "    .reg .b32 %%s0, %%s1, %%s2, %%ri, %%rmask, %%sa, %%ss;\n");
    tw_sbuf_printf(b, "    .reg .b64 %%ga, %%gq, %%gs;\n");
    tw_sbuf_printf(b, "    .reg .%s %%x<%d>;\n", pl->quad ? "f32" : pl->decl, nx);
    tw_sbuf_printf(b, "    .reg .%s %%t<%d>;\n", pl->decl, pl->chains);
    tw_sbuf_printf(b, "    .reg .%s %%vb, %%vc, %%vbi;\n", pl->decl);
    tw_sbuf_printf(b, "    .reg .b32 %%ma<4>, %%mb<2>;\n");
}

/* Memory set-up: base registers, the pointer-chase ring, zeroed atomic words. */
static void emit_memory(tw_sbuf *b, const plan *pl)
{
    if (pl->use_shared) {
        tw_sbuf_printf(b, "    mov.u32 %%w1, %%tid.x;\n");
        tw_sbuf_printf(b, "    shl.b32 %%w1, %%w1, 2;\n");
        tw_sbuf_printf(b, "    mov.u32 %%sa, %s_smem;\n", pl->id);
        tw_sbuf_printf(b, "    and.b32 %%w2, %%w1, 124;\n"); /* lane * 4 */
        tw_sbuf_printf(b, "    add.u32 %%ss, %%sa, %%w2;\n");
        tw_sbuf_printf(b, "    add.u32 %%sa, %%sa, %%w1;\n");
    }
    if (pl->use_global) {
        tw_sbuf_printf(b, "    mov.u64 %%wl1, %s_gmem;\n", pl->id);
        tw_sbuf_printf(b, "    and.b64 %%wl0, %%gtid, 65535;\n");
        tw_sbuf_printf(b, "    shl.b64 %%ga, %%wl0, 6;\n"); /* 64 B per thread: the chase ring */
        tw_sbuf_printf(b, "    add.s64 %%ga, %%ga, %%wl1;\n");
        tw_sbuf_printf(b, "    shl.b64 %%gq, %%wl0, 5;\n"); /* 32 B per thread: atomics */
        tw_sbuf_printf(b, "    add.s64 %%gq, %%gq, %%wl1;\n");
        tw_sbuf_printf(b, "    shr.u64 %%wl0, %%gtid, 5;\n"); /* warp id mod 256: 16 KiB each, a word per lane */
        tw_sbuf_printf(b, "    and.b64 %%wl0, %%wl0, 255;\n");
        tw_sbuf_printf(b, "    shl.b64 %%gs, %%wl0, 14;\n");
        tw_sbuf_printf(b, "    add.s64 %%gs, %%gs, %%wl1;\n");
        tw_sbuf_printf(b, "    and.b64 %%wl0, %%gtid, 31;\n");
        tw_sbuf_printf(b, "    shl.b64 %%wl0, %%wl0, 2;\n");
        tw_sbuf_printf(b, "    add.s64 %%gs, %%gs, %%wl0;\n");
    }
    if (pl->chase_shared)
        for (int c = 0; c < TW_ISA_CHAINS; c++) {
            tw_sbuf_printf(b, "    add.u32 %%w1, %%sa, %d;\n", ((c + 1) % TW_ISA_CHAINS) * 4096);
            tw_sbuf_printf(b, "    st.shared.u32 [%%sa+%d], %%w1;\n", c * 4096);
        }
    if (pl->chase_global)
        for (int c = 0; c < TW_ISA_CHAINS; c++) {
            tw_sbuf_printf(b, "    add.s64 %%wl0, %%ga, %d;\n", ((c + 1) % TW_ISA_CHAINS) * 8);
            tw_sbuf_printf(b, "    st.global.u64 [%%ga+%d], %%wl0;\n", c * 8);
        }
    if (pl->s_s)
        for (int c = 0; c < pl->chains; c++)
            tw_sbuf_printf(b, "    st.shared.u32 [%%sa+%d], 0;\n", c * 4096);
    if (pl->use_shared || pl->use_global) tw_sbuf_printf(b, "    bar.sync 0;\n");
}

/* Initial values of the chain registers. */
/* The fixed start of throughput mode (isa.h), as the chain register's bits. */
static const char *start_bits(const plan *pl)
{
    bool sat = pl->e->start == TW_ISA_START_SATURATED;
    switch (pl->k) {
    case K_I32:
    case K_I64:
        return sat ? NULL : "0";
    case K_F32:
        return sat ? "0f4C800000" : "0f00000000"; /* 2^26: ulp 8, so x + b (b < 2) rounds to x */
    case K_F64:
        return sat ? "0d4360000000000000" : "0d0000000000000000"; /* 2^55 */
    case K_F16:
        return sat ? "0x6C00" : "0"; /* 4096: ulp 4 */
    case K_F16X2:
        return sat ? "0x6C006C00" : "0";
    case K_BF16X2:
        return sat ? "0x44004400" : "0"; /* 512: ulp 4 */
    }
    return NULL;
}

static int fixed_start(const plan *pl) { return pl->mode == TW_ISA_THROUGHPUT && pl->e->start != TW_ISA_START_SEED; }

static void emit_chain_init(tw_sbuf *b, const plan *pl)
{
    char x[16];
    /* the fixed start is chosen at run time (the seed is never 0), so that
     * ptxas cannot fold the first copies of a chain whose start it knew */
    if (fixed_start(pl)) tw_sbuf_printf(b, "    setp.eq.u64 %%pq1, %%seed, 0;\n");
    for (int c = 0; c < pl->chains; c++)
        for (int r = 0; r < 2; r++) {
            if (pl->chase_shared) {
                xreg(pl, c, r, 0, x, sizeof x);
                tw_sbuf_printf(b, "    add.u32 %s, %%sa, %d;\n", x, c * 4096);
                continue;
            }
            if (pl->chase_global) {
                xreg(pl, c, r, 0, x, sizeof x);
                tw_sbuf_printf(b, "    add.s64 %s, %%ga, %d;\n", x, c * 8);
                continue;
            }
            for (int j = 0; j < regs_per_value(pl); j++) {
                xreg(pl, c, r, j, x, sizeof x);
                uint32_t salt = 0x9E3779B9u * (uint32_t)(1 + ((c * 2 + r) * 4 + j));
                emit_value(b, pl->quad ? K_F32 : pl->k, x, "%s2", salt);
                if (fixed_start(pl))
                    tw_sbuf_printf(b, "    selp.%s %s, %s, %s, %%pq1;\n", pl->decl, x, x, start_bits(pl));
            }
        }
}

/* xor-folds every chain register into %acc. */
static void emit_fold(tw_sbuf *b, const plan *pl)
{
    char x[16];
    /* the counter too: an overhead kernel's loop does nothing else, and ptxas deletes a loop whose counter is dead */
    tw_sbuf_printf(b, "    mov.u64 %%acc, %%ctr;\n");
    for (int c = 0; c < pl->chains; c++)
        for (int r = 0; r < 2; r++)
            for (int j = 0; j < regs_per_value(pl); j++) {
                xreg(pl, c, r, j, x, sizeof x);
                kind k = pl->quad ? K_F32 : pl->k;
                if (k == K_I64) {
                    tw_sbuf_printf(b, "    xor.b64 %%acc, %%acc, %s;\n", x);
                    continue;
                }
                if (k == K_F64)
                    tw_sbuf_printf(b, "    mov.b64 %%wl0, %s;\n", x);
                else if (k == K_F16) {
                    tw_sbuf_printf(b, "    mov.b16 %%wh0, %s;\n", x);
                    tw_sbuf_printf(b, "    cvt.u64.u16 %%wl0, %%wh0;\n");
                } else {
                    tw_sbuf_printf(b, "    mov.b32 %%w0, %s;\n", x);
                    tw_sbuf_printf(b, "    cvt.u64.u32 %%wl0, %%w0;\n");
                }
                tw_sbuf_printf(b, "    xor.b64 %%acc, %%acc, %%wl0;\n");
            }
}

static int emit_kernel(tw_sbuf *b, const plan *pl, const char *kname, int overhead, char *bad, size_t badcap)
{
    tw_sbuf_printf(b, "\n.visible .entry %s(\n", kname);
    tw_sbuf_printf(b, "    .param .u64 %s_out,\n    .param .u64 %s_iterations,\n    .param .u64 %s_seed\n)\n{\n", kname,
                   kname, kname);
    emit_decls(b, pl);
    tw_sbuf_printf(b, "\n    ld.param.u64 %%out, [%s_out];\n", kname);
    tw_sbuf_printf(b, "    ld.param.u64 %%iters, [%s_iterations];\n", kname);
    tw_sbuf_printf(b, "    ld.param.u64 %%seed, [%s_seed];\n", kname);
    tw_sbuf_printf(b, "    cvta.to.global.u64 %%out, %%out;\n");
    tw_sbuf_printf(b, "    mov.u32 %%w1, %%ctaid.x;\n");
    tw_sbuf_printf(b, "    mov.u32 %%w2, %%ntid.x;\n");
    tw_sbuf_printf(b, "    mov.u32 %%w3, %%tid.x;\n");
    tw_sbuf_printf(b, "    cvt.u64.u32 %%gtid, %%w3;\n");
    tw_sbuf_printf(b, "    mad.wide.u32 %%gtid, %%w1, %%w2, %%gtid;\n");
    tw_sbuf_printf(b, "    // operands from the seed: never compile-time constants; the chains' start values\n");
    tw_sbuf_printf(b, "    // also differ per thread (%%s2), so that ptxas cannot treat them as warp-uniform\n");
    tw_sbuf_printf(b, "    mov.b64 {%%s0, %%s1}, %%seed;\n");
    tw_sbuf_printf(b, "    mul.lo.u32 %%w0, %%w3, 0x9E3779B1;\n");
    tw_sbuf_printf(b, "    xor.b32 %%s2, %%s0, %%w0;\n");
    emit_memory(b, pl);
    emit_chain_init(b, pl);
    if (pl->s_b || pl->s_m) emit_b(b, pl);
    if (pl->s_c) emit_value(b, pl->k, "%vc", "%s1", 0x1B873593u);
    if (pl->s_A) emit_fragments(b, pl->e->ptx);
    if (pl->s_mask) tw_sbuf_printf(b, "    activemask.b32 %%rmask;\n");
    if (pl->carry) tw_sbuf_printf(b, "    add.cc.u32 %%w0, %%s0, 0; // CC.CF = 0 for the carry chain\n");
    tw_sbuf_printf(b, "    mov.u64 %%ctr, 0;\n");
    tw_sbuf_printf(b, "    setp.eq.u64 %%pq0, %%iters, 0;\n");
    tw_sbuf_printf(b, "    @%%pq0 bra $L_done;\n");
    tw_sbuf_printf(b, "$L_loop:\n");
    tw_sbuf_printf(b, "    .pragma \"nounroll\";\n");
    if (pl->s_i) tw_sbuf_printf(b, "    cvt.u32.u64 %%ri, %%ctr;\n");
    if (!overhead) tw_sbuf_printf(b, "    // %d dependent copies per chain, %d chain(s)\n", TW_ISA_CHAIN, pl->chains);
    for (int k = 0; k < TW_ISA_CHAIN; k++)
        for (int c = 0; c < pl->chains; c++)
            if (emit_copy(b, pl, c, k, overhead, bad, badcap) != 0) return -1;
    tw_sbuf_printf(b, "    add.u64 %%ctr, %%ctr, 1;\n");
    tw_sbuf_printf(b, "    setp.lt.u64 %%pq0, %%ctr, %%iters;\n");
    tw_sbuf_printf(b, "    @%%pq0 bra $L_loop;\n");
    tw_sbuf_printf(b, "$L_done:\n");
    emit_fold(b, pl);
    tw_sbuf_printf(b, "    xor.b64 %%sent, %%seed, %s;\n", TW_ISA_SENTINEL);
    tw_sbuf_printf(b, "    setp.ne.u64 %%pq1, %%acc, %%sent;\n");
    tw_sbuf_printf(b, "    @%%pq1 bra $L_end;\n");
    tw_sbuf_printf(b, "    shl.b64 %%wl0, %%gtid, 3;\n");
    tw_sbuf_printf(b, "    add.s64 %%wl0, %%out, %%wl0;\n");
    tw_sbuf_printf(b, "    st.global.u64 [%%wl0], %%acc;\n");
    tw_sbuf_printf(b, "$L_end:\n");
    tw_sbuf_printf(b, "    ret;\n}\n");
    return 0;
}

/* Throughput mode's baseline: the same grid, every warp resident and asleep
 * (nanosleep), so that the SMs are as awake as the measured kernel keeps
 * them while nothing is issued; its power per second is the regression's
 * time term, free of any instruction's activity (the overhead kernel issues
 * its loop at full rate and so was a baseline too high for slow pipes). */
#define TW_STR_(x) #x
#define TW_STR(x) TW_STR_(x)
static const char resident_ptx[] =
    "\n.visible .entry " TW_ISA_RESIDENT "(\n"
    "    .param .u64 " TW_ISA_RESIDENT "_out,\n"
    "    .param .u64 " TW_ISA_RESIDENT "_iterations,\n"
    "    .param .u64 " TW_ISA_RESIDENT "_seed\n"
    ")\n{\n"
    "    .reg .u64 %iters, %ctr;\n"
    "    .reg .pred %pq0;\n"
    "    ld.param.u64 %iters, [" TW_ISA_RESIDENT "_iterations];\n"
    "    mov.u64 %ctr, 0;\n"
    "    setp.eq.u64 %pq0, %iters, 0;\n"
    "    @%pq0 bra $L_done;\n"
    "$L_loop:\n"
    "    .pragma \"nounroll\";\n"
    "    nanosleep.u32 " TW_STR(TW_ISA_RESIDENT_SLEEP_NS) ";\n"
                                                          "    add.u64 %ctr, %ctr, 1;\n"
                                                          "    setp.lt.u64 %pq0, %ctr, %iters;\n"
                                                          "    @%pq0 bra $L_loop;\n"
                                                          "$L_done:\n"
                                                          "    ret;\n"
                                                          "}\n";

const char *tw_isa_resident_entry(void) { return resident_ptx; }

/* ---------------------------------------------------------------- the module */

static int make_plan(const tw_isa_entry *e, tw_isa_mode m, int sm, plan *pl)
{
    memset(pl, 0, sizeof *pl);
    pl->e = e;
    pl->mode = m;
    pl->sm = sm;
    pl->chains = m == TW_ISA_THROUGHPUT ? TW_ISA_CHAINS : 1;
    if (!kind_of(e->reg_type, &pl->k, &pl->decl)) return 0;
    const char *t = e->ptx;
    pl->quad = has(t, "<D>");
    pl->chase_shared = has(t, "ld.shared") && has(t, "[<a>]");
    pl->chase_global = has(t, "ld.global") && has(t, "[<a>]");
    pl->use_shared = has(t, ".shared");
    pl->use_global = has(t, ".global");
    pl->carry = has(t, "addc") || has(t, "subc") || has(t, "madc");
    pl->s_b = has(t, "<b>");
    pl->s_c = has(t, "<c>");
    pl->s_m = has(t, "<m>");
    pl->s_t = has(t, "<t>");
    pl->s_A = has(t, "<A") || has(t, "<B>");
    pl->s_s = has(t, "<s>");
    pl->s_S = has(t, "<S>");
    pl->s_g = has(t, "<g>");
    pl->s_G = has(t, "<G>");
    pl->s_i = has(t, "<i>");
    pl->s_mask = has(t, "<mask>");
    tw_isa_kernel_name(e, pl->id, sizeof pl->id);
    return 1;
}

char *tw_isa_ptx(const tw_isa_entry *e, tw_isa_mode m, int sm)
{
    tw_clear_error();
    if (!e || !e->name || !e->ptx || !e->reg_type) {
        tw_fail(TW_EINVAL, "tw_isa_ptx: no entry");
        return NULL;
    }
    if (m != TW_ISA_PAPER && m != TW_ISA_THROUGHPUT) {
        tw_fail(TW_EINVAL, "tw_isa_ptx: %s: unknown mode %d", e->name, (int)m);
        return NULL;
    }
    if (sm < 10 || sm > 999) {
        tw_fail(TW_EINVAL, "tw_isa_ptx: %s: compute capability %d is not major*10+minor", e->name, sm);
        return NULL;
    }
    if (sm < e->min_sm) {
        tw_fail(TW_EUNSUPPORTED, "tw_isa_ptx: %s needs sm_%d or newer, not sm_%d", e->name, e->min_sm, sm);
        return NULL;
    }
    plan pl;
    if (!make_plan(e, m, sm, &pl)) {
        tw_fail(TW_EINVAL, "tw_isa_ptx: %s: unknown register type '%s'", e->name, e->reg_type);
        return NULL;
    }
    if (fixed_start(&pl) && (pl.quad || pl.chase_shared || pl.chase_global || !start_bits(&pl))) {
        tw_fail(TW_EINVAL, "tw_isa_ptx: %s: a %s start does not fit its chain (%s%s)", e->name,
                e->start == TW_ISA_START_SATURATED ? "saturated" : "zero", e->reg_type,
                pl.quad                              ? ", mma fragments"
                : pl.chase_shared || pl.chase_global ? ", addresses"
                                                     : "");
        return NULL;
    }
    if (pl.s_m && (pl.k == K_I32 || pl.k == K_I64)) {
        tw_fail(TW_EINVAL, "tw_isa_ptx: %s: <m> (a reciprocal) needs a floating-point chain, not %s", e->name,
                e->reg_type);
        return NULL;
    }

    tw_sbuf b = {0};
    int v = ptx_version(&pl);
    tw_sbuf_printf(&b, "// truewatt instruction microbenchmark: %s, %s mode (generated by src/isa/isa_gen.c)\n",
                   e->name, m == TW_ISA_PAPER ? "paper" : "throughput");
    tw_sbuf_printf(&b, ".version %d.%d\n.target sm_%d\n.address_size 64\n", v / 10, v % 10, sm);
    if (pl.use_shared) tw_sbuf_printf(&b, "\n.shared .align 16 .b8 %s_smem[%d];\n", pl.id, SMEM_BYTES);
    if (pl.use_global) tw_sbuf_printf(&b, "\n.global .align 128 .b8 %s_gmem[%d];\n", pl.id, GMEM_BYTES);

    char bad[128] = "";
    int rc = emit_kernel(&b, &pl, pl.id, 0, bad, sizeof bad);
    /* the overhead kernel in both modes: paper mode subtracts it, throughput mode's regression has it as the
     * point of zero target instructions */
    if (rc == 0) rc = emit_kernel(&b, &pl, "tw_isa_overhead", 1, bad, sizeof bad);
    if (rc == 0 && m == TW_ISA_THROUGHPUT) tw_sbuf_printf(&b, "%s", resident_ptx);
    if (rc != 0) {
        free(b.p);
        tw_fail(TW_EINVAL, "tw_isa_ptx: %s: unknown slot %s in its template", e->name, bad);
        return NULL;
    }
    if (b.oom) {
        free(b.p);
        tw_fail(TW_ENOMEM, "tw_isa_ptx: out of memory");
        return NULL;
    }
    return b.p;
}
