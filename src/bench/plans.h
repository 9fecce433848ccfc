/* The experiments' schedules (internal), written once against the executor
 * (exec.h) so the same schedule runs on a GPU and on the simulator.
 * Kernel names carry the experiment and its parameters, so the analysis
 * finds its kernels by name in the events. */
#ifndef TW_BENCH_PLANS_H
#define TW_BENCH_PLANS_H

#include <stddef.h>

#include "bench/exec.h"

/* Identification: idle before the context (TW_PLAN_PRECONTEXT_S), the context,
 * active idle, steps of 4 s and 2 s, square waves of 50 ms and 200 ms, and
 * isolated kernels of 1 ms to 1 s at pseudo-random gaps (varied phases
 * against the sensors' update periods). Kernels are named "id_...". About a
 * minute. Call on a fresh executor: it creates the context. */
tw_status tw_plan_identify(tw_exec *x);
double tw_plan_identify_s(void);

#define TW_PLAN_PRECONTEXT_S 3.0
#define TW_PLAN_ACTIVE_IDLE_S 3.0

/* Validation (needs the context): (i) linearity "lin_<T>_T" / "lin_<T>_2T"
 * for T = 0.1, 0.5, 2 s; (ii) back to back "b2b_<gap>_first" / "_second",
 * 0.5 s kernels 50 ms, 300 ms and 1 s apart; (iii) short kernels of 1, 3,
 * 10, 30, 100 ms: "short_<d>_ref" (back to back for >= 4 s, the reference),
 * "short_<d>_iso" (isolated launches at pseudo-random gaps, for the
 * regression and naive methods) and "short_<d>_rep" (phase-shifted
 * repetition); (iv) 10 s loads "load_steady" and "load_square". */
tw_status tw_plan_validate(tw_exec *x);
double tw_plan_validate_s(void);

/* Phase-shifted repetition (after Yang et al. 2024): `blocks` blocks of
 * `per_block` back-to-back launches, the gap after block b being
 * base_gap_s + (b mod phases) * period_s / phases, so the blocks start at
 * evenly spread phases of a sensor's update period. */
tw_status tw_plan_repeat(tw_exec *x, const char *label, double kernel_s, size_t per_block, size_t blocks, size_t phases,
                         double period_s, double base_gap_s);

/* The validation's parameters, shared with its analysis. */
#define TW_VAL_NLIN 3
extern const double tw_val_lin_t_s[TW_VAL_NLIN];
#define TW_VAL_NGAP 3
extern const double tw_val_gap_s[TW_VAL_NGAP];
#define TW_VAL_NSHORT 5
extern const double tw_val_short_s[TW_VAL_NSHORT];
#define TW_VAL_LIN_REPS 5 /* linearity pairs (edge phases scatter a 0.1 s kernel's energy by ~1 %) */
#define TW_VAL_REPS 3     /* back-to-back pairs */
#define TW_VAL_ISO 60     /* isolated launches per short-kernel length */
#define TW_VAL_B2B_KERNEL_S 0.5
#define TW_VAL_LOAD_S 10.0

/* "0.1s", "50ms", "1ms": the label part for a length. */
void tw_plan_len_label(double s, char *out, size_t cap);

#endif
