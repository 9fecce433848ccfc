/*
 * nvtx_ranges.h - NVTX ranges as the injection library records them, with
 * no NVTX or CUPTI header: the pairing of push/pop per thread and domain, and
 * of start/end by range id. inject.c feeds them from its NVTX callbacks
 * (InitializeInjectionNvtx2); unit-tested in test_inject_csv.
 *
 * Times are CLOCK_MONOTONIC ns; a closed range comes out as a twi_record of
 * kind TWI_NVTX with mono set (see event_csv.h).
 */
#ifndef TW_INJECT_NVTX_RANGES_H
#define TW_INJECT_NVTX_RANGES_H

#include <stddef.h>
#include <stdint.h>

#include "inject/event_csv.h"

/* ---------------------------------------------------------------- push/pop: one stack per thread */

/* The push/pop ranges open in one thread, innermost last. NVTX nests them
 * per domain: a pop in domain D closes the innermost open range of D, and a
 * range's depth counts the open ranges of its own domain (1 = outermost).
 * Slots are reused, so a steady push/pop loop allocates nothing. One thread
 * uses its stack: no locking. */
/* An NVTX range's record (kind TWI_NVTX, CLOCK_MONOTONIC times, no device,
 * stream or correlation id); name and domain are borrowed. */
void twi_nvtx_record(twi_record *out, const char *name, const char *domain, int64_t tid, int32_t depth,
                     uint64_t start_ns, uint64_t end_ns);

typedef struct twi_stack twi_stack;

twi_stack *twi_stack_new(int64_t tid);
/* Opens a range of `domain` (a key: the NVTX domain handle, NULL for the
 * default domain; `domain_name` is what is written, "" for the default) at
 * t_ns. Returns its depth (1 = outermost), or -1 when out of memory or
 * nested too deep (the range is then not recorded, and its pop is ignored
 * as if it had none, see twi_stack_pop). */
int twi_stack_push(twi_stack *s, const void *domain, const char *domain_name, const char *name, uint64_t t_ns);
/* Closes the innermost open range of `domain` at t_ns into *out. Returns its
 * depth (>= 1); 0 when the domain has no open range (a pop without a push,
 * or one whose push was refused). out->name and out->domain stay valid
 * until the next call on this stack. */
int twi_stack_pop(twi_stack *s, const void *domain, uint64_t t_ns, twi_record *out);
/* Ranges still open. */
size_t twi_stack_open(const twi_stack *s);
/* The thread id written from now on (a forked child's copy of its parent's stack). */
void twi_stack_set_tid(twi_stack *s, int64_t tid);
/* The stack's thread id (kept, so the hot path asks the kernel once per thread). */
int64_t twi_stack_tid(const twi_stack *s);
void twi_stack_free(twi_stack *s);

/* ---------------------------------------------------------------- start/end: by range id, across threads */

/* Start/end ranges may end in another thread than they started and do not
 * nest: no depth. Not thread-safe: callers serialize. */
typedef struct twi_ranges twi_ranges;

twi_ranges *twi_ranges_new(void);
/* Opens range `id` (its thread `tid`). Returns 0, or -1 when out of memory
 * or too many ranges are open (it is then not recorded). */
int twi_ranges_start(twi_ranges *rg, uint64_t id, const char *domain_name, const char *name, int64_t tid,
                     uint64_t t_ns);
/* Closes range `id` into *out and returns 1; 0 when no such range is open.
 * out->name and out->domain stay valid until the next call. */
int twi_ranges_end(twi_ranges *rg, uint64_t id, uint64_t t_ns, twi_record *out);
/* Ranges started and not ended so far. */
size_t twi_ranges_pending(const twi_ranges *rg);
void twi_ranges_free(twi_ranges *rg);

#endif
