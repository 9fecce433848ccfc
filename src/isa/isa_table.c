/* The instruction table (isa.h): one entry per PTX instruction, covering every
 * row of Arafa et al. 2020's Table I and, beyond it, fp64 fma, half2,
 * tensor-core mma, shared/global loads and stores, shuffles and atomics.
 *
 * `ptx` is a template in the slot language of isa_gen.c. `sass` is a POSIX
 * ERE matched against each SASS instruction of the loop (opcode and
 * operands, predicate guard removed) as nvdisasm prints it; it names what
 * ptxas makes of the instruction on sm_90 and the other architectures the
 * test covers (75 .. 120), tight enough that nothing of the loop's own
 * machinery (the 64-bit counter's IADD3 with a carry out and an immediate,
 * ISETP.GE/LT, BRA) matches. tests/unit/test_isa.c proves every count. */
#include "isa/isa.h"

#include <string.h>

/* SASS patterns used by several entries */
#define SASS_IADD "^(IADD3|IMAD\\.IADD|IADD) R[0-9]+, (PT, PT, )?-?R[0-9]+(\\.reuse)?, (0x1, )?-?R[0-9]+"
#define SASS_IMAD "^IMAD R[0-9]+, R[0-9]+(\\.reuse)?, U?R"
#define SASS_HADD "^(HADD2|HFMA2(\\.MMA)?) R[0-9]+, -?R"
#define SASS_HMUL "^(HMUL2|HFMA2(\\.MMA)?) R[0-9]+, -?R"
#define SASS_LOP3 "^LOP3\\.LUT R[0-9]+, R"

#define FIB                                                                                                            \
    "Fibonacci-like chain x[n+1] = op(x[n], x[n-1]): every value has two readers, so ptxas can neither fuse two "      \
    "copies into one three-input instruction nor fold them"
#define F16_PACK                                                                                                       \
    "Throughput mode: ptxas packs each pair of the independent scalar chains into one HADD2/HMUL2 (64 per round, "     \
    "each doing two PTX instructions; the test expects that)"
#define GLUE_INT                                                                                                       \
    "each copy is followed by an add with the previous value (kept in the overhead kernel): a chain of the bare op "   \
    "is idempotent or an involution and ptxas folds it"

static const tw_isa_entry table[] = {
    /* ---- (1) integer arithmetic */
    {"add.s32", "int", "add / sub / min / max", "add.s32 <d>, <a>, <p>;", "s32", 70, SASS_IADD, 1, 0,
     FIB "; ptxas splits the adds between IADD3 (ALU pipe) and IMAD.IADD (FMA pipe); with a loop-invariant operand it "
         "folds two adds into one IADD3",
     TW_ISA_START_ZERO},
    {"sub.s32", "int", "add / sub / min / max", "sub.s32 <d>, <p>, <a>;", "s32", 70, SASS_IADD, 1, 0,
     "x[n+1] = x[n-1] - x[n]: the other order (x[n] - x[n-1]) has period 6 and ptxas folds it away", TW_ISA_START_ZERO},
    {"min.s32", "int", "add / sub / min / max", "min.s32 <d>, <a>, <p>;", "s32", 70, "^V?IMNMX(\\.S32)? R", 1, 0,
     FIB "; with a loop-invariant operand sm_90 fuses pairs into VIMNMX3; the values settle, the instruction stays",
     TW_ISA_START_SEED},
    {"max.s32", "int", "add / sub / min / max", "max.s32 <d>, <a>, <p>;", "s32", 70, "^V?IMNMX(\\.S32)? R", 1, 0, FIB,
     TW_ISA_START_SEED},
    {"mul.lo.s32", "int", "mul / mad", "mul.lo.s32 <d>, <a>, <p>;", "s32", 70, SASS_IMAD, 1, 0,
     FIB "; the seeds are odd, so the products stay odd and never collapse to 0", TW_ISA_START_ZERO},
    {"mad.lo.s32", "int", "mul / mad", "mad.lo.s32 <d>, <a>, <p>, <b>;", "s32", 70, SASS_IMAD, 1, 0, FIB,
     TW_ISA_START_SEED},
    {"div.s32", "int", "{s} div", "div.s32 <d>, <a>, <p>;", "s32", 70, "^MUFU\\.RCP R", 0, 1,
     "a ~25-instruction sequence (I2F.RP, MUFU.RCP, F2I, IMAD.HI, corrections); its length does not depend on the "
     "values (the chain soon divides by 0, which is defined and takes the same path)",
     TW_ISA_START_SEED},
    {"rem.s32", "int", "{s} rem", "rem.s32 <d>, <a>, <p>;", "s32", 70, "^MUFU\\.RCP R", 0, 1,
     "the division sequence plus the remainder's IMAD", TW_ISA_START_SEED},
    {"div.u32", "int", "{u} div", "div.u32 <d>, <a>, <p>;", "u32", 70, "^MUFU\\.RCP R", 0, 1,
     "a ~15-instruction sequence around MUFU.RCP", TW_ISA_START_SEED},
    {"rem.u32", "int", "{u} rem", "rem.u32 <d>, <a>, <p>;", "u32", 70, "^MUFU\\.RCP R", 0, 1,
     "the unsigned division sequence plus the remainder's IMAD", TW_ISA_START_SEED},
    {"abs.s32", "int", "abs", "abs.s32 <t>, <a>; ~add.s32 <d>, <t>, <p>;", "s32", 70, "^IABS R", 1, 0,
     "abs is idempotent: a bare chain folds to one IABS; " GLUE_INT, TW_ISA_START_ZERO},
    {"mul.hi.u32", "int", NULL, "mul.hi.u32 <d>, <a>, <p>;", "u32", 70, "^IMAD\\.HI\\.U32 R", 1, 0, FIB,
     TW_ISA_START_ZERO},

    /* ---- (2) logic and shift */
    {"and.b32", "logic", "and / or / not / xor", "and.b32 <t>, <a>, <b>; ~add.s32 <d>, <t>, <p>;", "b32", 70, SASS_LOP3,
     1, 0,
     "a chain of bit operations is one boolean function of its inputs, which ptxas merges into one LOP3 per "
     "round; " GLUE_INT,
     TW_ISA_START_ZERO},
    {"or.b32", "logic", "and / or / not / xor", "or.b32 <t>, <a>, <b>; ~add.s32 <d>, <t>, <p>;", "b32", 70, SASS_LOP3,
     1, 0, GLUE_INT, TW_ISA_START_SEED},
    {"xor.b32", "logic", "and / or / not / xor", "xor.b32 <t>, <a>, <b>; ~add.s32 <d>, <t>, <p>;", "b32", 70, SASS_LOP3,
     1, 0, "x ^ b ^ b = x: a bare chain folds away; " GLUE_INT, TW_ISA_START_SEED},
    {"not.b32", "logic", "and / or / not / xor", "not.b32 <t>, <a>; ~add.s32 <d>, <t>, <p>;", "b32", 70, SASS_LOP3, 1,
     0, "~~x = x: a bare chain folds away; " GLUE_INT, TW_ISA_START_SEED},
    {"cnot.b32", "logic", "cnot", "cnot.b32 <t>, <a>; ~add.s32 <d>, <t>, <p>;", "b32", 70,
     "^ISETP\\.(EQ|NE)\\.U32\\.AND P", 1, 0,
     "cnot is ISETP + SEL (no single instruction); cnot(cnot(x)) = (x != 0) folds; " GLUE_INT, TW_ISA_START_SEED},
    {"shl.b32", "logic", "shl / shr", "shl.b32 <d>, <a>, <p>;", "b32", 70, "^SHF\\.L\\.U32 R", 1, 0,
     FIB "; shift amounts over 31 clamp, so the values soon become 0 (as in the paper); the SHF still executes",
     TW_ISA_START_ZERO},
    {"shr.u32", "logic", "shl / shr", "shr.u32 <d>, <a>, <p>;", "u32", 70, "^SHF\\.R\\.U32\\.HI R", 1, 0, FIB,
     TW_ISA_START_ZERO},
    {"shr.s32", "logic", "shl / shr", "shr.s32 <d>, <a>, <p>;", "s32", 70, "^SHF\\.R\\.S32\\.HI R", 1, 0, FIB,
     TW_ISA_START_ZERO},

    /* ---- (3) fp32 */
    {"add.f32", "fp32", "add / sub / min / max", "add.f32 <d>, <a>, <b>;", "f32", 70, "^FADD R", 1, 0,
     "x + b with b in [1, 2): grows linearly and stays finite; fp adds are not reassociated, so nothing folds",
     TW_ISA_START_SATURATED},
    {"sub.f32", "fp32", "add / sub / min / max", "sub.f32 <d>, <a>, <b>;", "f32", 70, "^FADD R", 1, 0,
     "FADD with a negated operand", TW_ISA_START_SATURATED},
    {"min.f32", "fp32", "add / sub / min / max", "min.f32 <d>, <a>, <p>;", "f32", 70, "^FMNMX R", 1, 0, FIB,
     TW_ISA_START_SEED},
    {"max.f32", "fp32", "add / sub / min / max", "max.f32 <d>, <a>, <p>;", "f32", 70, "^FMNMX R", 1, 0, FIB,
     TW_ISA_START_SEED},
    {"mul.f32", "fp32", "mul / mad / fma", "mul.f32 <d>, <a>, <m>;", "f32", 70, "^FMUL R", 1, 0,
     "multiplies alternately by b and 1/b: the value stays near its start (never 0, denormal or inf)",
     TW_ISA_START_SEED},
    {"mad.rn.f32", "fp32", "mul / mad / fma", "mad.rn.f32 <d>, <a>, <m>, <c>;", "f32", 70, "^FFMA R", 1, 0,
     "mad.rn.f32 is fma.rn.f32; x * (b or 1/b) + c grows linearly", TW_ISA_START_SATURATED},
    {"fma.rn.f32", "fp32", "mul / mad / fma", "fma.rn.f32 <d>, <a>, <m>, <c>;", "f32", 70, "^FFMA R", 1, 0,
     "x * (b or 1/b) + c grows linearly", TW_ISA_START_SATURATED},
    {"div.rn.f32", "fp32", "div", "div.rn.f32 <d>, <a>, <m>;", "f32", 70, "^MUFU\\.RCP R", 0, 1,
     "MUFU.RCP, FCHK and ~8 FFMAs inline, a CALL to the slow path for special cases (outside the loop); divides "
     "alternately by b and 1/b so the values stay normal and the fast path is taken",
     TW_ISA_START_SEED},

    /* ---- (4) fp64 */
    {"add.f64", "fp64", "add / sub / min / max", "add.f64 <d>, <a>, <b>;", "f64", 70, "^DADD R", 1, 0,
     "x + b, b in [1, 2)", TW_ISA_START_SATURATED},
    {"sub.f64", "fp64", "add / sub / min / max", "sub.f64 <d>, <a>, <b>;", "f64", 70, "^DADD R", 1, 0,
     "DADD with a negated operand", TW_ISA_START_SATURATED},
    {"min.f64", "fp64", "add / sub / min / max", "min.f64 <d>, <a>, <p>;", "f64", 70, "^(DMNMX|DSETP\\.MIN\\.AND) ", 1,
     0, FIB "; no DMNMX before sm_100: DSETP.MIN + two selects", TW_ISA_START_SEED},
    {"max.f64", "fp64", "add / sub / min / max", "max.f64 <d>, <a>, <p>;", "f64", 70, "^(DMNMX|DSETP\\.MAX\\.AND) ", 1,
     0, FIB "; no DMNMX before sm_100: DSETP.MAX + two selects", TW_ISA_START_SEED},
    {"mul.f64", "fp64", NULL, "mul.f64 <d>, <a>, <m>;", "f64", 70, "^DMUL R", 1, 0, "multiplies by b and 1/b in turn",
     TW_ISA_START_SEED},
    {"fma.rn.f64", "fp64", NULL, "fma.rn.f64 <d>, <a>, <m>, <c>;", "f64", 70, "^DFMA R", 1, 0,
     "x * (b or 1/b) + c grows linearly", TW_ISA_START_SATURATED},
    {"div.rn.f64", "fp64", "div", "div.rn.f64 <d>, <a>, <m>;", "f64", 70, "^MUFU\\.RCP64H R", 0, 1,
     "MUFU.RCP64H, ~8 DFMAs, a range check and a CALL to the slow path (outside the loop); b and 1/b in turn keep the "
     "fast path",
     TW_ISA_START_SEED},

    /* ---- (5) fp16 */
    {"add.f16", "fp16", "add / sub / mul", "add.f16 <d>, <a>, <b>;", "f16", 70, SASS_HADD, 1, 0,
     "one half of HADD2 (or HFMA2.MMA, x * 1 + b, when ptxas balances pipes); grows until x + b rounds to x "
     "(4096), never inf. " F16_PACK,
     TW_ISA_START_SATURATED},
    {"sub.f16", "fp16", "add / sub / mul", "sub.f16 <d>, <a>, <b>;", "f16", 70, SASS_HADD, 1, 0,
     "HADD2 with a negated operand. " F16_PACK, TW_ISA_START_SATURATED},
    {"mul.f16", "fp16", "add / sub / mul", "mul.f16 <d>, <a>, <m>;", "f16", 70, SASS_HMUL, 1, 0,
     "multiplies by b and 1/b in turn. " F16_PACK, TW_ISA_START_SEED},
    {"add.f16x2", "fp16", NULL, "add.f16x2 <d>, <a>, <b>;", "f16x2", 70, SASS_HADD, 1, 0,
     "two halves per instruction; ptxas issues half of the adds as HFMA2.MMA (x * 1 + b) to balance the pipes",
     TW_ISA_START_SATURATED},
    {"sub.f16x2", "fp16", NULL, "sub.f16x2 <d>, <a>, <b>;", "f16x2", 70, SASS_HADD, 1, 0, "as add.f16x2, b negated",
     TW_ISA_START_SATURATED},
    {"mul.f16x2", "fp16", NULL, "mul.f16x2 <d>, <a>, <m>;", "f16x2", 70, SASS_HMUL, 1, 0,
     "multiplies by b and 1/b in turn", TW_ISA_START_SEED},
    {"fma.rn.f16x2", "fp16", NULL, "fma.rn.f16x2 <d>, <a>, <m>, <c>;", "f16x2", 70, "^HFMA2(\\.MMA)? R[0-9]+, -?R", 1,
     0, "x * (b or 1/b) + c; grows until it rounds to itself", TW_ISA_START_SATURATED},
    {"fma.rn.bf16x2", "fp16", NULL, "fma.rn.bf16x2 <d>, <a>, <m>, <c>;", "bf16x2", 80,
     "^HFMA2(\\.MMA)?\\.BF16(_V2)? R[0-9]+, -?R", 1, 0, "bf16 pairs (sm_80)", TW_ISA_START_SATURATED},

    /* ---- (6) multi-precision */
    {"add.cc.u32", "multi-precision", "add.cc / addc / sub.cc", "add.cc.u32 <d>, <a>, <p>;", "u32", 70, SASS_IADD, 1, 0,
     "no instruction reads the carry out, so ptxas drops it: the same IADD3/IMAD.IADD as add (addc.cc.u32 chains "
     "the carry)",
     TW_ISA_START_ZERO},
    {"addc.cc.u32", "multi-precision", "add.cc / addc / sub.cc", "addc.cc.u32 <d>, <a>, <p>;", "u32", 70,
     "^IADD3\\.X R[0-9]+, P[0-9]+, ", 1, 0,
     "carry in and out: each copy depends on the previous one through its value and CC.CF (one CC register: "
     "throughput mode's chains are serial through it)",
     TW_ISA_START_ZERO},
    {"sub.cc.u32", "multi-precision", "add.cc / addc / sub.cc", "sub.cc.u32 <d>, <p>, <a>;", "u32", 70, SASS_IADD, 1, 0,
     "the borrow is unread and dropped: IADD3 with a negated operand", TW_ISA_START_ZERO},
    {"subc.cc.u32", "multi-precision", "subc", "subc.cc.u32 <d>, <p>, <a>;", "u32", 70, "^IADD3\\.X R[0-9]+, P[0-9]+, ",
     1, 0, "borrow in and out, chained through CC.CF", TW_ISA_START_ZERO},
    {"mad.lo.cc.u32", "multi-precision", "mad.cc / madc", "mad.lo.cc.u32 <d>, <a>, <p>, <b>;", "u32", 70, SASS_IMAD, 1,
     0, "the carry out is unread and dropped: IMAD", TW_ISA_START_SEED},
    {"madc.lo.cc.u32", "multi-precision", "mad.cc / madc", "madc.lo.cc.u32 <d>, <a>, <p>, <b>;", "u32", 70,
     "^(IMAD R[0-9]+, R|IADD3\\.X R[0-9]+, P[0-9]+, )", 2, 0,
     "two SASS per madc: IMAD (the product) and IADD3.X (adds c and the carry, sets the carry)", TW_ISA_START_SEED},

    /* ---- (7) special functions */
    {"rcp.rn.f32", "special", "rcp", "rcp.rn.f32 <d>, <a>;", "f32", 70, "^MUFU\\.RCP R", 0, 1,
     "MUFU.RCP refined by FFMAs, a CALL to the slow path (outside the loop); 1/x twice returns near x",
     TW_ISA_START_SEED},
    {"sqrt.rn.f32", "special", "sqrt", "sqrt.rn.f32 <d>, <a>;", "f32", 70, "^MUFU\\.RSQ R", 0, 1,
     "MUFU.RSQ refined by FMUL/FFMA, a CALL to the slow path; the values settle at 1.0 (fast path)", TW_ISA_START_SEED},
    {"sqrt.approx.f32", "special", "approx.sqrt", "sqrt.approx.f32 <d>, <a>;", "f32", 70, "^MUFU\\.SQRT R", 1, 0,
     "MUFU.SQRT with FSETP + 2 FMUL for denormal inputs", TW_ISA_START_SEED},
    {"rsqrt.approx.f32", "special", "rsqrt", "rsqrt.approx.f32 <d>, <a>;", "f32", 70, "^MUFU\\.RSQ R", 1, 0,
     "MUFU.RSQ with FSETP + 2 FMUL for denormal inputs", TW_ISA_START_SEED},
    {"sin.approx.f32", "special", "sin / cos", "sin.approx.f32 <d>, <a>;", "f32", 70, "^MUFU\\.SIN R", 1, 0,
     "FMUL.RZ (x / 2 pi) + MUFU.SIN", TW_ISA_START_SEED},
    {"cos.approx.f32", "special", "sin / cos", "cos.approx.f32 <d>, <a>;", "f32", 70, "^MUFU\\.COS R", 1, 0,
     "FMUL.RZ (x / 2 pi) + MUFU.COS", TW_ISA_START_SEED},
    {"lg2.approx.f32", "special", "lg2", "lg2.approx.f32 <t>, <a>; ~add.f32 <d>, <t>, <b>;", "f32", 70, "^MUFU\\.LG2 R",
     1, 0,
     "lg2(x) + b (the FADD kept in the overhead kernel): a bare lg2 chain turns negative and then NaN; this one "
     "settles "
     "at a fixed point > 1. MUFU.LG2 comes with FSETP, FMUL, FADD for denormal inputs",
     TW_ISA_START_SEED},
    {"ex2.approx.f32", "special", "ex2", "neg.f32 <t>, <a>; ex2.approx.f32 <d>, <t>;", "f32", 70, "^MUFU\\.EX2 R", 1, 0,
     "2^-x (the negation is an operand modifier): a bare 2^x chain overflows to inf; this one settles at 0.64. "
     "MUFU.EX2 comes with FSETP, FMUL, FSEL for denormal results",
     TW_ISA_START_SEED},
    {"copysign.f32", "special", "copysign", "copysign.f32 <t>, <b>, <a>; ~add.f32 <d>, <t>, <c>;", "f32", 70, SASS_LOP3,
     1, 0,
     "copysign is one LOP3 (bit select); a chain of it is a bit function that ptxas merges, so each copy is followed "
     "by an FADD of c (kept in the overhead kernel)",
     TW_ISA_START_SEED},

    /* ---- (8) integer intrinsics */
    {"mul24.lo.u32", "bit", "mul24() / mad24()", "mul24.lo.u32 <d>, <a>, <p>;", "u32", 70, SASS_IMAD, 1, 0,
     "no 24-bit multiplier since Volta: ptxas masks the operand to 24 bits (PRMT/LOP3) and uses a 32-bit IMAD",
     TW_ISA_START_ZERO},
    {"mad24.lo.u32", "bit", "mul24() / mad24()", "mad24.lo.u32 <d>, <a>, <p>, <b>;", "u32", 70, SASS_IMAD, 1, 0,
     "24-bit masking + IMAD", TW_ISA_START_SEED},
    {"sad.u32", "bit", "sad()", "sad.u32 <d>, <a>, <p>, <b>;", "u32", 70, "^(VABSDIFF(\\.U32)?|VIMNMX\\.U32) R", 0, 1,
     "one VABSDIFF.U32 (|a - b| + c) up to sm_90; sm_100 and sm_120 have none: max - min (two VIMNMX.U32) + IADD3",
     TW_ISA_START_SEED},
    {"popc.b32", "bit", "popc()", "popc.b32 <d>, <a>;", "b32", 70, "^POPC R", 1, 0,
     "popc(popc(x)) settles at 1; ptxas does not fold it", TW_ISA_START_SEED},
    {"clz.b32", "bit", "clz()", "clz.b32 <d>, <a>;", "b32", 70, "^FLO\\.U32 R", 1, 0,
     "FLO.U32 (find leading one) + IADD3 (31 - position)", TW_ISA_START_SEED},
    {"bfind.u32", "bit", "bfind()", "bfind.u32 <d>, <a>;", "u32", 70, "^FLO\\.U32 R", 1, 0,
     "one FLO.U32; the values settle at 0 / 0xffffffff, ptxas does not fold them", TW_ISA_START_SEED},

    /* ---- beyond the paper: tensor cores (warp-wide: launch whole warps, also in paper mode) */
    {"mma.m16n8k16.f32.f16", "tensor", NULL, "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 <D>, <A>, <B>, <C>;",
     "f32", 80, "^HMMA\\.16816\\.F32 R", 1, 0,
     "the accumulator chain: D of one mma is C of the next; warp-wide, so paper mode must launch one full warp",
     TW_ISA_START_SEED},
    {"mma.m16n8k16.f32.bf16", "tensor", NULL, "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 <D>, <A>, <B>, <C>;",
     "f32", 80, "^HMMA\\.16816\\.F32\\.BF16 R", 1, 0, "the accumulator chain; warp-wide", TW_ISA_START_SEED},
    {"mma.m16n8k8.f32.tf32", "tensor", NULL, "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 <D>, <A>, <B>, <C>;",
     "f32", 80, "^HMMA\\.1688\\.F32\\.TF32 R", 1, 0, "the accumulator chain; warp-wide", TW_ISA_START_SEED},
    {"mma.m16n8k32.f32.e4m3", "tensor", NULL,
     "and.b32 <t>, <c0>, 0x07070707; or.b32 <t>, <t>, 0x38383838; "
     "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 <D>, <At>, <B>, <C>;",
     "f32", 89, "^(QMMA\\.16832\\.F32\\.E4M3\\.E4M3|HMMA\\.16816\\.F32) R", 0, 1,
     "fp8 (sm_89+, PTX ISA 8.4). sm_89 and sm_120 have QMMA; sm_90 emulates mma.sync on fp8 (F2FP unpack to f16, "
     "two HMMA.16816 with a zero accumulator, FADDs), so with loop-invariant fragments ptxas hoists the products "
     "out of the loop and leaves only FADDs: the A fragment's first register is made from the accumulator's bits "
     "(one LOP3 per mma: four e4m3 values in [1, 2)); warp-wide",
     TW_ISA_START_SEED},

    /* ---- beyond the paper: memory */
    {"ld.shared.u32", "memory", NULL, "ld.shared.u32 <d>, [<a>];", "u32", 70, "^LDS(\\.U)?(\\.32)? R", 1, 0,
     "pointer chase around a ring of shared words the kernel writes before its loop: each address is the previous "
     "load's value",
     TW_ISA_START_SEED},
    {"st.shared.u32", "memory", NULL, "st.shared.u32 [<S>], <i>;", "u32", 70, "^STS \\[", 1, 0,
     "stores the loop counter to a different word per copy and chain (128 bytes apart: no store is dead or merged)",
     TW_ISA_START_SEED},
    {"ld.global.u64", "memory", NULL, "ld.global.u64 <d>, [<a>];", "u64", 70, "^LDG\\.E\\.64(\\.[A-Z]+)* R", 1, 0,
     "pointer chase around a 64-byte ring per thread in a module global (L1 hits once warm)", TW_ISA_START_SEED},
    {"st.global.u32", "memory", NULL, "st.global.u32 [<G>], <i>;", "u32", 70, "^STG\\.E(\\.[A-Z0-9]+)* ", 1, 0,
     "stores the loop counter to a different word per copy and chain of a module global", TW_ISA_START_SEED},

    /* ---- beyond the paper: warp and atomics */
    {"shfl.sync.bfly.b32", "warp", NULL, "shfl.sync.bfly.b32 <d>, <a>, <a>, 31, <mask>;", "b32", 70, "^SHFL\\.BFLY ", 1,
     0,
     "the member mask is activemask; with one thread (paper mode) the partner lane is inactive and the value "
     "undefined, which the chain does not mind",
     TW_ISA_START_SEED},
    {"atom.shared.add.u32", "atomic", NULL, "atom.shared.add.u32 <d>, [<s>], <a>;", "u32", 70, "^ATOMS\\.ADD ", 1, 0,
     "adds the chain's value to its own word per thread and returns the old value, which feeds the next atomic",
     TW_ISA_START_SEED},
    {"atom.global.add.u32", "atomic", NULL, "atom.global.add.u32 <d>, [<g>], <a>;", "u32", 70, "^ATOMG\\.E\\.ADD", 1, 0,
     "the returned old value feeds the next atomic (so ptxas cannot turn it into a RED)", TW_ISA_START_SEED},
};

size_t tw_isa_count(void) { return sizeof table / sizeof table[0]; }

const tw_isa_entry *tw_isa_get(size_t i) { return i < tw_isa_count() ? &table[i] : NULL; }

const tw_isa_entry *tw_isa_find(const char *name)
{
    if (!name) return NULL;
    for (size_t i = 0; i < tw_isa_count(); i++)
        if (strcmp(table[i].name, name) == 0) return &table[i];
    return NULL;
}
