/* The memory levels' sizes from access latency; see mem_sizes.h. */
#include "bench/mem_sizes.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "mem/chase.h"

#define MIN_BYTES 16384.0
#define THREADS 32u
#define TARGET_S 0.03
#define STEP_FACTOR 1.25
#define SQRT2 1.4142135623730951
#define SEED 0x9e3779b97f4a7c15ull

/* The simulator's hierarchy (H100-like): where an array fits, its latency. */
static double sim_latency_s(const tw_exec *x, double bytes, bool skip_l1)
{
    double l1 = x->smem_per_sm_bytes > 0 ? x->smem_per_sm_bytes : 65536;
    double l2 = x->l2_bytes > 0 ? x->l2_bytes : 4.0 * 1048576;
    if (!skip_l1 && bytes <= l1) return 40e-9;
    return bytes <= l2 ? 260e-9 : 600e-9;
}

/* One launch's time (s): `iters` passes over an array of `bytes`. */
static tw_status timed(tw_exec *x, const tw_chase_config *c, const tw_chase_layout *l, const char *ptx, uint64_t iters,
                       double *s)
{
    tw_exec_kernel k = {.label = c->level == TW_MEM_L1 ? "mem_size_l1" : "mem_size_l2",
                        .ptx = ptx,
                        .entry = TW_CHASE_KERNEL,
                        .opt_level = -1,
                        .grid = 1,
                        .block = c->threads,
                        .iterations = iters,
                        .seed = SEED,
                        .out_bytes = c->sub_bytes};
    double lat = sim_latency_s(x, (double)c->sub_bytes, c->level != TW_MEM_L1);
    k.sim_s = (double)(iters + 1) * (double)l->ring * lat + (double)l->ring * 5e-9 + 5e-6;
    k.sim_w = 1.0;
    size_t ev = tw_events_count(x->events);
    tw_status st = tw_exec_kernel_run(x, &k, 1);
    if (st != TW_OK) return st;
    const tw_event *e = tw_events_get(x->events, ev);
    *s = e->end_s - e->start_s;
    return TW_OK;
}

/* Nanoseconds per dependent access over an array of `bytes` with the level's load. */
static tw_status latency(tw_exec *x, tw_mem_level level, size_t bytes, double target_s, double *ns)
{
    tw_chase_config c = {level, THREADS, bytes, 32, 1, TW_CHASE_LOAD};
    tw_chase_layout l;
    if (tw_chase_layout_of(&c, &l) != 0) return TW_EINVAL;
    c.unroll = l.ring < 8 ? (unsigned)l.ring : 8;
    char *ptx = tw_chase_ptx(&c, x->cc >= 70 ? x->cc : 70);
    if (!ptx) return TW_EINVAL;
    double t0 = 0, tk = 0;
    uint64_t k = 1;
    tw_status st = timed(x, &c, &l, ptx, 0, &t0);
    while (st == TW_OK && k < (1ull << 40)) {
        st = timed(x, &c, &l, ptx, k, &tk);
        if (st != TW_OK || tk - t0 >= target_s) break;
        k *= 4;
    }
    free(ptx);
    if (st != TW_OK) return st;
    *ns = (tk - t0) / ((double)k * (double)l.ring) * 1e9;
    return TW_OK;
}

/* The largest size whose latency stays within STEP_FACTOR of the smallest's; 0 when all do or none. */
static double size_of(const double *bytes, const double *ns, size_t n)
{
    size_t last = 0;
    for (size_t i = 1; i < n && ns[i] <= STEP_FACTOR * ns[0]; i++)
        last = i;
    return last + 1 < n ? bytes[last] : 0.0;
}

tw_status tw_mem_sizes_run(tw_exec *x, const tw_mem_sizes_options *o, tw_mem_sizes *out)
{
    if (!x || !o || !out) return tw_fail(TW_EINVAL, "tw_mem_sizes_run: NULL argument");
    memset(out, 0, sizeof *out);
    double max = o->max_bytes > 0 ? o->max_bytes : (x->l2_bytes > 0 ? 4 * x->l2_bytes : 128.0 * 1048576);
    double target = o->target_s > 0 ? o->target_s : TARGET_S;
    tw_status st = TW_OK;
    /* steps of sqrt(2), each a multiple of 2 KiB (eight steps of the warp's 256 bytes: the unroll divides the ring) */
    for (double g = MIN_BYTES; st == TW_OK && g <= max * 1.0001 && out->n < TW_MEM_SIZES_MAX; g *= SQRT2) {
        size_t b = (size_t)(g / 2048 + 0.5) * 2048;
        out->bytes[out->n] = (double)b;
        st = latency(x, TW_MEM_L1, b, target, &out->l1_ns[out->n]);
        if (st == TW_OK) st = latency(x, TW_MEM_L2, b, target, &out->l2_ns[out->n]);
        if (st == TW_OK) st = tw_exec_idle(x, 0.01);
        out->n++;
    }
    if (st != TW_OK) return st;
    out->l1_bytes = size_of(out->bytes, out->l1_ns, out->n);
    out->l2_bytes = size_of(out->bytes, out->l2_ns, out->n);
    return TW_OK;
}
