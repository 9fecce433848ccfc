/* The frame of the library's experiments (tw_experiment_options,
 * truewatt.h): the executor on a GPU or the simulator with progress through
 * the options' note, the schedule run with the trace kept on a failure, the
 * simulator's run kept as files like a GPU's, and the frame of the
 * microbenchmarks (isa, mem): the sensor profile given, looked up or
 * identified first in the same run. */
#ifndef TW_BENCH_EXPERIMENT_H
#define TW_BENCH_EXPERIMENT_H

#include <stdbool.h>
#include <stddef.h>

#include "bench/exec.h"
#include "correct/profile.h"
#include "truewatt.h"

/* The symbols carry the library's prefix; the call sites keep the short names. */
#define xp_start tw_xp_start
#define xp_run tw_xp_run
#define xp_keep_sim_run tw_xp_keep_sim_run
#define xp_events_path tw_xp_events_path
#define xp_bench_run tw_xp_bench_run
#define xp_read_options tw_xp_read_options

/* The caller's experiment options into *e and, when o is not NULL, a
 * command's own into o (which holds its defaults), each read as its size
 * says; TW_EINVAL naming `what` for a NULL or unsized one. */
tw_status xp_read_options(tw_experiment_options *e, const tw_experiment_options *e_in, void *o, size_t o_size,
                          const void *o_in, const char *what);

/* The executor: a note says where the trace goes and how long the plan
 * takes. TW_EUNAVAIL ("cannot measure: ...") without the nvml backend. */
tw_status xp_start(const tw_experiment_options *e, const char *trace, const char *events, double planned_s,
                   tw_exec **out);
/* Runs plan(x, ctx), then finishes the executor: TW_EINTERRUPTED on a
 * cancel, "the experiment failed: ..." on a failure, the trace so far kept. */
tw_status xp_run(tw_exec *x, tw_status (*plan)(tw_exec *x, void *ctx), void *ctx);
/* On the simulator, writes the run's trace and events where a GPU run would
 * have left them (a GPU's sampler writes them as it goes). */
tw_status xp_keep_sim_run(tw_exec *x, const char *trace, const char *events, const char *provenance);
/* TRACE.csv -> TRACE.events.csv (any other name: NAME.events.csv). */
void xp_events_path(const char *trace, char *out, size_t cap);

typedef struct xp_bench {
    const char *profile_path;                 /* NULL: looked up, else identified */
    const char *out_dir;                      /* trace.csv and events.csv go here (made when missing) */
    double planned_s;                         /* the work's own length, for progress */
    tw_status (*work)(tw_exec *x, void *ctx); /* the schedule, after the context */
    void *ctx;
    bool no_profile; /* timing only: no profile is picked or identified (p stays empty) */
} xp_bench;

/* Runs a microbenchmark; on success *x holds the finished experiment (free
 * it with tw_exec_free) and *p the profile to measure with; on failure *x is NULL. */
tw_status xp_bench_run(const tw_experiment_options *e, const xp_bench *b, tw_exec **x, tw_profile *p);

#endif
