/* Energy per instruction (internal, issue 5): runs the microbenchmarks of
 * isa/isa.h on a GPU or the simulator and measures them.
 *
 * Paper mode (Arafa et al. 2020, §III): each kernel on one thread for about
 * target_s, at JIT optimisation levels 0 and 4 (their -O0 / -O3), and the
 * overhead kernel with the same iterations; E = (E_kernel - E_overhead) / N
 * with N the instructions executed, by truewatt's corrected method (the
 * profile's best reading) and, beside it, SMA (the 1 s average polled over
 * the kernel), PAPI-style (one instantaneous reading at the kernel's end)
 * and MTSM (the instant field polled during the kernel), each times the
 * kernel's time; cycles per instruction from the time difference and the SM
 * clock (the kernel's time over N: the loop counter runs beside the chain),
 * so that the energy's scaling with latency shows.
 * Throughput mode: every SM with 2048 threads, independent chains; the
 * kernel, the overhead kernel and a resident kernel (every warp asleep:
 * the SMs awake, nothing issued) at two lengths each; dynamic energy (above
 * active idle) regressed on instructions executed, loop iterations, time
 * and launches; pJ per thread operation and per warp instruction, with the
 * spread over repeats (each repeat fitted alone). */
#ifndef TW_BENCH_ISA_RUN_H
#define TW_BENCH_ISA_RUN_H

#include <stddef.h>

#include "bench/exec.h"
#include "correct/profile.h"
#include "isa/isa.h"

typedef struct tw_isa_run_options {
    tw_isa_mode mode;
    const char *const *only; /* entry names; NULL/0 = all the GPU supports */
    size_t nonly;
    double target_s;    /* one kernel's length (paper: 0 = 0.5 s; throughput: the longest, 0 = 0.25 s) */
    int reps;           /* 0 = 2 (paper) or 3 (throughput) */
    bool seed_operands; /* throughput: every chain from the seed, none at a fixed point (data's effect) */
} tw_isa_run_options;

void tw_isa_run_options_init(tw_isa_run_options *o);

typedef struct tw_isa_row {
    const tw_isa_entry *e;        /* as measured (valid until the plan is freed) */
    int opt_level;                /* paper: 0 or 4; throughput: 4 */
    double e_inst_j;              /* paper: J per instruction (corrected); throughput: J per thread op */
    double e_inst_sd_j;           /* spread over repeats */
    double sma_j, papi_j, mtsm_j; /* paper: the other methods' J per instruction */
    double cycles_per_inst;       /* paper: latency from the time difference */
    double pj_warp_inst;          /* throughput: pJ per warp instruction (32 thread ops) */
    double resident_w;            /* throughput: power above active idle of the SMs awake, nothing issued */
    double loop_j;                /* throughput: J per thread iteration of the loop (counter, branch, glue) */
    double launch_j;              /* throughput: J per launch whatever its length */
    double fit_r2;                /* throughput: the worst repeat's r^2 */
    double spread_pct;            /* throughput: 100 sd / mean of the repeats' fits */
    double ops_per_sm_clk;        /* throughput: thread operations per SM per cycle (the pipe's rate) */
    double kernel_dyn_w;          /* throughput: the kernel's power above active idle */
    double kernel_s;              /* one kernel's length (throughput: the longest) */
    double instructions;          /* per kernel */
    double truth_j;               /* simulator: the synthetic per-instruction energy it was given; NaN on a GPU */
} tw_isa_row;

/* One launch as measured: what the rows are fitted from. */
typedef struct tw_isa_launch_row {
    const tw_isa_entry *e;
    const char *kind; /* "kernel", "overhead" or "resident" */
    int opt_level, rep;
    double iterations, ops, loops; /* loops: thread iterations of the loop */
    double start_s, end_s, total_j, dyn_j;
} tw_isa_launch_row;

typedef struct tw_isa_results {
    tw_isa_row *rows;
    size_t n;
    tw_isa_launch_row *launches; /* every recorded launch, in order */
    size_t nlaunches;
    char reading[64]; /* the reading that measured them */
    double clock_mhz; /* the SM clock during the kernels */
} tw_isa_results;

/* The schedule: run it on the executor (after its context exists). `plan`
 * keeps what the analysis needs; free it with tw_isa_plan_free. */
typedef struct tw_isa_plan tw_isa_plan;
tw_status tw_isa_run(tw_exec *x, const tw_isa_run_options *o, tw_isa_plan **plan);
/* Its planned length in seconds (for progress), without running it. */
double tw_isa_planned_s(const tw_isa_run_options *o, int sm_count, int cc);

/* After tw_exec_finish: the measurements, with the profile's best reading. */
tw_status tw_isa_analyse(const tw_isa_plan *plan, tw_sensor *trace, const tw_events *events, const tw_profile *profile,
                         tw_isa_results *out);
void tw_isa_results_free(tw_isa_results *r);
void tw_isa_plan_free(tw_isa_plan *p);

/* The Volta MTSM value (uJ) of Arafa et al.'s Table I for every row of r
 * (-O0 for JIT level 0, -O3 for level 4; NaN where the paper has none) from
 * its transcription (data/arafa2020_table1.csv: category,...,instruction
 * row,..., volta_mtsm_nonopt_uj, volta_mtsm_opt_uj). out[r->n] is set to NaN
 * first. TW_EIO when the file cannot be read; TW_EPARSE names the line of a
 * header without those columns, a short row or a value that is not a number. */
tw_status tw_isa_paper_values(const char *csv_path, const tw_isa_results *r, double *out);

#endif
