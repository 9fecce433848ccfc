/* Instruction microbenchmarks (internal), generated from data (issue 5).
 *
 * Every entry of the table (isa_table.c) names one PTX instruction with its
 * operand types and how a dependent chain of it is formed; the generator
 * (isa_gen.c) turns an entry into a kernel for each mode:
 *   - paper mode (Arafa et al. 2020, §III): launched as one block of one
 *     thread (one warp, 32 threads, for the warp-wide mma.sync entries of
 *     group "tensor": mma.sync needs every lane of the warp); a loop of
 *     `iterations` rounds, each a dependent chain of
 *     TW_ISA_CHAIN copies of the instruction; plus an overhead kernel that is
 *     the same loop without them; E = (E_total - E_overhead) / N.
 *   - throughput mode: launched on every SM with enough warps; per thread
 *     TW_ISA_CHAINS independent chains of TW_ISA_CHAIN copies per round, so
 *     the pipes stay busy and the energy is the instruction's own.
 * Operand values come from kernel parameters (never immediates), so ptxas
 * cannot fold the chain away, and the result is stored only when it takes
 * an impossible value, so it is kept without memory traffic. Kernel
 * parameters: (.u64 out, .u64 iterations, .u64 seed) - out holds one 64-bit
 * word per launched thread. */
#ifndef TW_ISA_ISA_H
#define TW_ISA_ISA_H

#include <stdbool.h>
#include <stddef.h>

#include "truewatt.h"

#define TW_ISA_CHAIN 16 /* dependent copies per round and chain */
#define TW_ISA_CHAINS 8 /* independent chains per thread (throughput mode) */
/* Throughput mode's resident kernel: every warp asleep, TW_ISA_RESIDENT_SLEEP_NS per iteration */
#define TW_ISA_RESIDENT "tw_isa_resident"
#define TW_ISA_RESIDENT_SLEEP_NS 20000

typedef enum tw_isa_mode { TW_ISA_PAPER = 0, TW_ISA_THROUGHPUT = 1 } tw_isa_mode;

/* Where throughput mode starts the chains. Fixed operand values (data
 * changes power): a chain that starts at a fixed point of its instruction
 * keeps the same operands for the whole kernel; one that does not wanders
 * through values - a Fibonacci-like integer chain through full-width
 * pseudo-random words, the most switching there is. */
typedef enum tw_isa_start {
    TW_ISA_START_SEED = 0,  /* values from the seed; they evolve as the entry's note says */
    TW_ISA_START_ZERO,      /* 0, a fixed point of the chain: every operand stays 0 */
    TW_ISA_START_SATURATED, /* floating point so large that x + b rounds to x: the chain stands still */
} tw_isa_start;

typedef struct tw_isa_entry {
    const char *name;      /* short id, unique: "add.s32", "fma.rn.f32", "div.rn.f64", ... */
    const char *group;     /* Table I's grouping: "int", "logic", "fp32", "fp64", "fp16", "multi-precision",
                              "special", "bit", beyond the paper: "tensor", "memory", "warp", "atomic" */
    const char *paper_row; /* the row of Arafa et al.'s Table I it reproduces, NULL when beyond the paper */
    const char *ptx;       /* the instruction as PTX with operand slots (see isa_gen.c) */
    const char *reg_type;  /* PTX register type of the chain: "u32", "s32", "f32", "f64", "b32", "f16x2", ... */
    int min_sm;            /* lowest compute capability (x10) that has it: 70, 80, 89, 90 */
    const char *sass;      /* regular expression (POSIX ERE) matching the SASS instruction(s) it becomes */
    int sass_per_ptx;      /* SASS instructions per PTX instruction (0: a sequence, see sass_min) */
    int sass_min;          /* for sequences: at least this many matching SASS lines per PTX instruction */
    const char *note;      /* why it is built as it is (operand choice, SASS sequence); may be NULL */
    tw_isa_start start;    /* throughput mode's start values (paper mode: always from the seed) */
} tw_isa_entry;

size_t tw_isa_count(void);
const tw_isa_entry *tw_isa_get(size_t i);
/* By name; NULL when there is none. */
const tw_isa_entry *tw_isa_find(const char *name);

/* The PTX module for entry e in mode m, for compute capability sm (x10),
 * with its kernel named tw_isa_<id> (id: the name with '.' -> '_') and the
 * overhead kernel tw_isa_overhead (the same loop without the target
 * instructions) in the same module, in both modes; in throughput mode also
 * TW_ISA_RESIDENT (the same parameters, every thread asleep: the baseline).
 * Returns a malloc'd NUL-terminated string, NULL with tw_last_error() set. */
char *tw_isa_ptx(const tw_isa_entry *e, tw_isa_mode m, int sm);
/* The kernel's name for entry e (into out). */
void tw_isa_kernel_name(const tw_isa_entry *e, char *out, size_t cap);

/* The resident kernel's entry (PTX, no module header; sm_70+, PTX ISA 6.3+),
 * for any module that needs the same baseline. */
const char *tw_isa_resident_entry(void);

/* In words, what the operands of entry e do in mode m ("fixed at 0", ...). */
const char *tw_isa_operands(const tw_isa_entry *e, tw_isa_mode m);

/* Target instructions per thread per round in mode m: TW_ISA_CHAIN (paper)
 * or TW_ISA_CHAIN * TW_ISA_CHAINS (throughput). */
int tw_isa_per_round(tw_isa_mode m);

#endif
