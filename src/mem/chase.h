/* Pointer-chase microbenchmarks for the memory levels (internal, issue 6;
 * Delestrac et al. 2024, §IV-B): one PTX module per configuration.
 *
 * Each block owns a sub-array of sub_bytes (shared memory: a static
 * .shared array; global levels: its slice of the executor's `out` buffer,
 * block b at out + b * sub_bytes). Thread t of a block chases the 64-bit
 * words t, t + step, t + 2 step, ... (step = max(granularity / 8, threads)
 * words), so the block's threads read consecutive words together and
 * every pass touches each of the sub-array's sectors once; each word holds
 * the address of the thread's next word, the last the first (a ring of
 * `ring` = sub_words / step words per thread, built by the kernel itself).
 *
 * Kernel tw_chase(.u64 out, .u64 iterations, .u64 seed): build the ring,
 * one warm-up pass (the target level now holds the data), then `iterations`
 * passes of the measurement loop, unrolled `unroll` loads per trip, with the
 * level's cache operator (L1: ld.global, kept in L1; L2 and DRAM:
 * ld.global.cg, L2 only; shared: ld.shared). iterations = 0 is the run
 * without the measurement loop; the difference isolates it. The final
 * pointer is stored behind a test that is never true (the seed is never 0).
 * Stores (op STORE) walk the same words in the same order without a ring
 * (stores to global memory write through L1, so there is no L1 store
 * level). The module also holds TW_ISA_RESIDENT (isa.h): the same grid asleep, the
 * calibration's time baseline. */
#ifndef TW_MEM_CHASE_H
#define TW_MEM_CHASE_H

#include <stddef.h>

typedef enum tw_mem_level { TW_MEM_SHARED = 0, TW_MEM_L1, TW_MEM_L2, TW_MEM_DRAM, TW_MEM_LEVELS } tw_mem_level;

const char *tw_mem_level_name(tw_mem_level l); /* "shared", "l1", "l2", "dram" */

/* What the measurement loop does per access: a dependent load (the chase),
 * a store (addresses from the loop itself: a store returns nothing to
 * chase; immediate offsets, so that one trip is `unroll` stores and three
 * integer instructions), or a load followed by an unsigned division (the
 * LOAD+DIV cross-check of the paper's §VI-D: the division recurrence of the
 * instruction table's div.u32, independent of the chase). */
typedef enum tw_chase_op { TW_CHASE_LOAD = 0, TW_CHASE_STORE, TW_CHASE_LOAD_DIV, TW_CHASE_OPS } tw_chase_op;

const char *tw_chase_op_name(tw_chase_op op); /* "load", "store", "load+div" */
int tw_chase_op_parse(const char *s);         /* -1 when unknown */

typedef struct tw_chase_config {
    tw_mem_level level;
    unsigned threads;     /* per block, 1..1024 */
    size_t sub_bytes;     /* each block's array (shared: at most 48 KiB) */
    unsigned granularity; /* bytes of one access (a sector: 32) */
    unsigned unroll;      /* accesses per trip of the measurement loop */
    tw_chase_op op;       /* TW_CHASE_LOAD when zero-initialised */
} tw_chase_config;

/* The derived layout; 0 when the configuration is valid, else -1 with tw_last_error() set. */
typedef struct tw_chase_layout {
    size_t word_bytes;       /* tw_chase_word_bytes(level) */
    size_t step_words;       /* between a thread's consecutive words */
    size_t ring;             /* words per thread (loads per pass) */
    double sectors_per_pass; /* per block: distinct granules read in one pass */
} tw_chase_layout;
/* A word of the ring: 8 bytes (a global address), in shared memory 4 (a
 * shared-window address: ptxas narrows a 64-bit shared chase to 32-bit loads
 * anyway, which Nsight Compute showed as 9/16 of the bytes Eq. 7 expected). */
static inline size_t tw_chase_word_bytes(tw_mem_level l) { return l == TW_MEM_SHARED ? 4 : 8; }

int tw_chase_layout_of(const tw_chase_config *c, tw_chase_layout *out);

/* The module (malloc'd), NULL with tw_last_error() set. sm: compute capability x10. */
char *tw_chase_ptx(const tw_chase_config *c, int sm);

#define TW_CHASE_KERNEL "tw_chase"
#define TW_CHASE_SHARED_MAX 49152

#endif
