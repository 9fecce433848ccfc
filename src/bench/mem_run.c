/* Energy per access of the memory levels: the schedule and its analysis;
 * see mem_run.h. */
#include "bench/mem_run.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/launches.h"
#include "core/error.h"
#include "core/lsq.h"
#include "isa/isa.h"

#define TARGET_S 0.25
#define REPS 3
#define GAP_S 0.15
#define GRANULE 32u
#define MAX_UNROLL 8u
#define MAX_REPS 16
#define SEED 0x9e3779b97f4a7c15ull

static const unsigned default_threads[] = {1, 4, 32, 128, 512, 1024};

/* ---------------------------------------------------------------- the simulator's synthetic truth */

/* Invented to be plausible (the paper's A100 lower bounds, H100-like
 * latencies and bandwidths), so that the method can be checked against
 * known input: eps falls with the threads that share a sector and a
 * level's fixed cost, to a plateau (the paper's Figs. 6-7). */
static const double sim_eps_min_pj[TW_MEM_LEVELS] = {82.1, 107, 368, 2090};
static const double sim_latency_s[TW_MEM_LEVELS] = {30e-9, 40e-9, 260e-9, 600e-9};
static const double sim_sectors_per_s[TW_MEM_LEVELS] = {1.0e12, 1.0e12, 1.7e11, 1.0e11};
#define SIM_RESIDENT_W 4.0

#define SIM_STORE_FACTOR 1.3 /* a store costs more than a load [Delestrac et al.'s ref. 31] */
#define SIM_DIV_J 190e-12    /* per division and thread, about the H100's div.u32 */

static double sim_eps_j(tw_chase_op op, tw_mem_level l, unsigned threads)
{
    double e = sim_eps_min_pj[l] * 1e-12 * (1.0 + 56.0 / (threads > 4 ? threads : 4));
    if (op == TW_CHASE_STORE) e *= SIM_STORE_FACTOR;
    if (op == TW_CHASE_LOAD_DIV) e += SIM_DIV_J * tw_mem_divs_per_sector(threads);
    return e;
}

double tw_mem_divs_per_sector(unsigned threads)
{
    unsigned per = GRANULE / 8; /* 64-bit words per sector (the levels with divisions are global) */
    return threads < per ? (double)threads : (double)per;
}

/* ---------------------------------------------------------------- the plan */

typedef enum { K_CHASE = 0, K_RESIDENT = 1 } kind;

typedef struct config {
    tw_chase_config c;
    tw_chase_layout l;
    unsigned blocks;
    char *ptx;
    char label[64];
} config;

typedef struct launch {
    size_t cfg;
    kind k;
    int rep;
    uint64_t iterations;
    double accesses; /* sector accesses of the measurement loop */
    size_t event;
} launch;

struct tw_mem_plan {
    tw_mem_run_options o;
    config *cfgs;
    size_t ncfgs;
    launch *launches;
    size_t nlaunches, cap;
    bool sim; /* the simulator: its synthetic eps is known */
};

void tw_mem_run_options_init(tw_mem_run_options *o) { memset(o, 0, sizeof *o); }

static void defaults(tw_mem_run_options *o)
{
    if (!o->levels) o->levels = (1u << TW_MEM_LEVELS) - 1;
    if (!o->ops) o->ops = (1u << TW_CHASE_OPS) - 1;
    if (!o->threads || !o->nthreads) {
        o->threads = default_threads;
        o->nthreads = sizeof default_threads / sizeof default_threads[0];
    }
    if (!(o->target_s > 0)) o->target_s = TARGET_S;
    if (o->reps <= 0) o->reps = REPS;
    if (o->reps > MAX_REPS) o->reps = MAX_REPS;
    if (!o->blocks_per_sm) o->blocks_per_sm = 2;
}

void tw_mem_plan_free(tw_mem_plan *p)
{
    if (!p) return;
    for (size_t i = 0; i < p->ncfgs; i++)
        free(p->cfgs[i].ptx);
    free(p->cfgs);
    free(p->launches);
    free(p);
}

static size_t pow2_floor(double v)
{
    size_t p = 1;
    while ((double)(p * 2) <= v)
        p *= 2;
    return p;
}

/* Each block's array for level l: chosen from the GPU's sizes, a power of two. */
static size_t sub_bytes_for(const tw_exec *x, tw_mem_level l, unsigned blocks_per_sm)
{
    double sms = (x->sm_count > 0 ? x->sm_count : 1) * (double)blocks_per_sm;
    double l2 = x->l2_bytes > 0 ? x->l2_bytes : 4.0 * 1048576;
    double smem = x->smem_per_sm_bytes > 0 ? x->smem_per_sm_bytes : 65536;
    switch (l) {
    case TW_MEM_SHARED:
        return 32768;
    case TW_MEM_L1:
        return pow2_floor(fmin(65536.0, smem / 4 / blocks_per_sm));
    case TW_MEM_L2:
        return pow2_floor(fmax(8192.0, l2 / 6 / sms)); /* inside one of the L2's two partitions */
    default:
        return pow2_floor(8 * l2 / sms) * 2; /* at least eight times the L2 over all blocks */
    }
}

/* Whether an operation is measured on a level: stores write through L1
 * (no L1 store level); the LOAD+DIV cross-check is the paper's, on L1, L2
 * and DRAM. */
static bool op_on_level(int op, int lv)
{
    if (op == TW_CHASE_STORE) return lv != TW_MEM_L1;
    if (op == TW_CHASE_LOAD_DIV) return lv != TW_MEM_SHARED;
    return true;
}

static size_t count_configs(const tw_mem_run_options *o)
{
    size_t n = 0;
    for (int op = 0; op < TW_CHASE_OPS; op++)
        for (int lv = 0; lv < TW_MEM_LEVELS; lv++)
            if ((o->ops & (1u << op)) && (o->levels & (1u << lv)) && op_on_level(op, lv)) n += o->nthreads;
    return n;
}

static tw_status build_config(tw_exec *x, const tw_mem_run_options *o, int op, int lv, unsigned threads, config *c)
{
    c->c = (tw_chase_config){(tw_mem_level)lv, threads, sub_bytes_for(x, (tw_mem_level)lv, o->blocks_per_sm),
                             GRANULE,          1,       (tw_chase_op)op};
    if (tw_chase_layout_of(&c->c, &c->l) != 0) return TW_EINVAL;
    c->c.unroll = c->l.ring < MAX_UNROLL ? (unsigned)c->l.ring : MAX_UNROLL;
    c->blocks = (unsigned)(x->sm_count > 0 ? x->sm_count : 1) * o->blocks_per_sm;
    if (!(c->ptx = tw_chase_ptx(&c->c, x->cc >= 70 ? x->cc : 70))) return TW_EINVAL;
    snprintf(c->label, sizeof c->label, "mem_%s_%s_%u", op == TW_CHASE_LOAD_DIV ? "div" : tw_chase_op_name(c->c.op),
             tw_mem_level_name(c->c.level), c->c.threads);
    return TW_OK;
}

static tw_status build_configs(tw_exec *x, tw_mem_plan *p)
{
    p->cfgs = calloc(count_configs(&p->o) + 1, sizeof *p->cfgs);
    if (!p->cfgs) return tw_fail(TW_ENOMEM, "out of memory (configurations)");
    for (int op = 0; op < TW_CHASE_OPS; op++)
        for (int lv = 0; lv < TW_MEM_LEVELS; lv++) {
            if (!(p->o.ops & (1u << op)) || !(p->o.levels & (1u << lv)) || !op_on_level(op, lv)) continue;
            for (size_t ti = 0; ti < p->o.nthreads; ti++) {
                tw_status st = build_config(x, &p->o, op, lv, p->o.threads[ti], &p->cfgs[p->ncfgs]);
                if (st != TW_OK) return st;
                p->ncfgs++;
            }
        }
    if (p->ncfgs == 0)
        return tw_fail(TW_EINVAL, "no memory level to calibrate (stores have no L1 level, "
                                  "load+div none in shared memory)");
    return TW_OK;
}

static tw_status add_launch(tw_mem_plan *p, const launch *l)
{
    if (p->nlaunches == p->cap) {
        size_t cap = p->cap ? 2 * p->cap : 256;
        launch *q = realloc(p->launches, cap * sizeof *q);
        if (!q) return tw_fail(TW_ENOMEM, "out of memory (launches)");
        p->launches = q;
        p->cap = cap;
    }
    p->launches[p->nlaunches++] = *l;
    return TW_OK;
}

/* The simulator's length and power of one launch. */
static void sim_shape(const config *c, kind k, uint64_t iters, double *s, double *w)
{
    if (k == K_RESIDENT) {
        *s = (double)iters * TW_ISA_RESIDENT_SLEEP_NS * 1e-9 + 5e-6;
        *w = SIM_RESIDENT_W;
        return;
    }
    tw_mem_level l = c->c.level;
    double per_step = c->l.sectors_per_pass / (double)c->l.ring; /* sectors the block reads per step */
    double rate = fmin(sim_sectors_per_s[l], c->blocks * per_step / sim_latency_s[l]);
    double passes = (double)iters + 1.0; /* the warm-up pass */
    double accesses = passes * c->blocks * c->l.sectors_per_pass;
    *s = accesses / rate + (double)c->l.ring * sim_latency_s[l] + 5e-6; /* + the ring's building */
    *w = SIM_RESIDENT_W + sim_eps_j(c->c.op, l, c->c.threads) * accesses / *s;
}

static tw_status launch_one(tw_exec *x, tw_mem_plan *p, size_t ci, kind k, int rep, uint64_t iters, bool record,
                            double *len_s)
{
    const config *c = &p->cfgs[ci];
    char label[96];
    snprintf(label, sizeof label, "%s%s", k == K_CHASE ? "" : "res_", c->label);
    tw_exec_kernel kk = {.label = label,
                         .ptx = c->ptx,
                         .entry = k == K_CHASE ? TW_CHASE_KERNEL : TW_ISA_RESIDENT,
                         .opt_level = -1,
                         .grid = c->blocks,
                         .block = c->c.threads,
                         .iterations = iters,
                         .seed = SEED,
                         .out_bytes = c->c.level == TW_MEM_SHARED ? 0 : (size_t)c->blocks * c->c.sub_bytes};
    sim_shape(c, k, iters, &kk.sim_s, &kk.sim_w);
    size_t ev = tw_events_count(x->events);
    tw_status st = tw_exec_kernel_run(x, &kk, 1);
    if (st != TW_OK) return st;
    const tw_event *e = tw_events_get(x->events, ev);
    *len_s = e->end_s - e->start_s;
    if (!record) return TW_OK;
    double acc = k == K_CHASE ? (double)iters * c->blocks * c->l.sectors_per_pass : 0.0;
    launch l = {ci, k, rep, iters, acc, ev};
    return add_launch(p, &l);
}

/* Iterations for about target_s beyond the run without the measurement
 * loop: the iterations grow eightfold until a launch lasts CAL_MIN_S (a
 * fast level's pass takes a microsecond, below a launch's own jitter), and
 * the per-iteration time comes from that launch. */
#define CAL_MIN_S 0.02
static tw_status calibrate(tw_exec *x, tw_mem_plan *p, size_t ci, double target_s, uint64_t *iters)
{
    double t0, tk = 0;
    uint64_t k = 1;
    tw_status st = launch_one(x, p, ci, K_CHASE, -1, 0, false, &t0);
    while (st == TW_OK && k < (1ull << 40)) {
        st = launch_one(x, p, ci, K_CHASE, -1, k, false, &tk);
        if (st != TW_OK || tk - t0 >= CAL_MIN_S) break;
        k *= 8;
    }
    if (st != TW_OK) return st;
    double per = (tk - t0) / (double)k;
    if (!(per > 0)) per = tk / (double)(k + 1);
    double n = (target_s - t0) / per;
    *iters = (uint64_t)fmin(fmax(n, 2.0), 1e15);
    return TW_OK;
}

static tw_status run_config(tw_exec *x, tw_mem_plan *p, size_t ci)
{
    uint64_t n;
    double len;
    tw_status st = calibrate(x, p, ci, p->o.target_s, &n);
    if (st == TW_OK) st = tw_exec_idle(x, GAP_S); /* the calibration's energy settles before the first launch */
    uint64_t nr = (uint64_t)(p->o.target_s / (TW_ISA_RESIDENT_SLEEP_NS * 1e-9));
    for (int r = 0; st == TW_OK && r < p->o.reps; r++) {
        const uint64_t chase[] = {0, n / 2, n}, res[] = {nr / 3, nr};
        for (int i = 0; st == TW_OK && i < 3; i++) {
            st = launch_one(x, p, ci, K_CHASE, r, chase[i], true, &len);
            if (st == TW_OK) st = tw_exec_idle(x, GAP_S);
        }
        for (int i = 0; st == TW_OK && i < 2; i++) {
            st = launch_one(x, p, ci, K_RESIDENT, r, res[i], true, &len);
            if (st == TW_OK) st = tw_exec_idle(x, GAP_S);
        }
    }
    return st;
}

tw_status tw_mem_run(tw_exec *x, const tw_mem_run_options *o, tw_mem_plan **out)
{
    if (!x || !o || !out) return tw_fail(TW_EINVAL, "tw_mem_run: NULL argument");
    *out = NULL;
    tw_mem_plan *p = calloc(1, sizeof *p);
    if (!p) return tw_fail(TW_ENOMEM, "out of memory (plan)");
    p->o = *o;
    defaults(&p->o);
    p->sim = isfinite(x->true_active_idle_w);
    tw_status st = build_configs(x, p);
    for (size_t i = 0; st == TW_OK && i < p->ncfgs; i++)
        st = run_config(x, p, i);
    if (st != TW_OK) {
        tw_mem_plan_free(p);
        return st;
    }
    *out = p;
    return TW_OK;
}

double tw_mem_planned_s(const tw_mem_run_options *o)
{
    tw_mem_run_options d = *o;
    defaults(&d);
    /* per repeat: chase 0, 1/2, 1 and resident 1/3, 1 of the target, five gaps */
    double per_rep = d.target_s * (1.5 + 4.0 / 3.0) + 5 * GAP_S;
    return (double)count_configs(&d) * (d.reps * per_rep + 0.5); /* + the calibration's launches */
}

/* ---------------------------------------------------------------- the counter runs */

const char *tw_mem_manifest_header(void)
{
    return "launch,op,level,threads,blocks,sub_bytes,iterations,accesses,bytes";
}

/* The bytes the measurement loop moves: every thread's word per step. */
static double loop_bytes(const config *c, uint64_t iters)
{
    return (double)iters * c->blocks * (double)c->c.threads * (double)c->l.ring * (double)c->l.word_bytes;
}

tw_status tw_mem_counter_run(tw_exec *x, const tw_mem_run_options *o, uint64_t iterations, FILE *manifest)
{
    if (!x || !o || !manifest) return tw_fail(TW_EINVAL, "tw_mem_counter_run: NULL argument");
    tw_mem_plan *p = calloc(1, sizeof *p);
    if (!p) return tw_fail(TW_ENOMEM, "out of memory (plan)");
    p->o = *o;
    defaults(&p->o);
    tw_status st = build_configs(x, p);
    fprintf(manifest, "%s\n", tw_mem_manifest_header());
    size_t index = 0;
    for (size_t ci = 0; st == TW_OK && ci < p->ncfgs; ci++) {
        const config *c = &p->cfgs[ci];
        const uint64_t iters[] = {0, iterations};
        for (int i = 0; st == TW_OK && i < 2; i++) {
            double len;
            st = launch_one(x, p, ci, K_CHASE, -1, iters[i], false, &len);
            if (st != TW_OK) break;
            fprintf(manifest, "%zu,%s,%s,%u,%u,%zu,%llu,%.17g,%.17g\n", index++, tw_chase_op_name(c->c.op),
                    tw_mem_level_name(c->c.level), c->c.threads, c->blocks, c->c.sub_bytes,
                    (unsigned long long)iters[i], (double)iters[i] * c->blocks * c->l.sectors_per_pass,
                    loop_bytes(c, iters[i]));
        }
    }
    if (st == TW_OK && fflush(manifest) != 0) st = tw_fail(TW_EIO, "cannot write the manifest");
    tw_mem_plan_free(p);
    return st;
}

/* ---------------------------------------------------------------- analysis */

static bool fit_repeat(const tw_mem_plan *p, const tw_launch_energy *le, size_t ci, int rep, tw_lsq_fit *f)
{
    double X[8 * 3], y[8];
    size_t n = 0;
    for (size_t i = 0; i < p->nlaunches && n < 8; i++) {
        const launch *l = &p->launches[i];
        if (l->cfg != ci || l->rep != rep || !isfinite(le[i].dyn_j)) continue;
        double row[3] = {l->accesses, le[i].t1 - le[i].t0, l->k == K_CHASE ? 1.0 : 0.0};
        memcpy(X + 3 * n, row, sizeof row);
        y[n++] = le[i].dyn_j;
    }
    return n >= 4 && tw_lsq_solve(X, y, n, 3, f);
}

static void row_of(const tw_mem_plan *p, const tw_launch_energy *le, size_t ci, bool sim, tw_mem_row *row)
{
    const config *c = &p->cfgs[ci];
    double eps[MAX_REPS] = {0}, b[MAX_REPS] = {0}, sd;
    int nr = 0;
    memset(row, 0, sizeof *row);
    row->r2 = INFINITY;
    for (int r = 0; r < p->o.reps; r++) {
        tw_lsq_fit f;
        if (!fit_repeat(p, le, ci, r, &f)) continue;
        eps[nr] = f.beta[0], b[nr] = f.beta[1];
        row->r2 = fmin(row->r2, f.r2);
        nr++;
    }
    row->op = c->c.op;
    row->level = c->c.level;
    row->threads = c->c.threads;
    row->div_j = row->div_sd_j = NAN;
    row->blocks = c->blocks;
    row->sub_bytes = c->c.sub_bytes;
    tw_mean_sd(eps, nr, &row->eps_j, &row->eps_sd_j);
    tw_mean_sd(b, nr, &row->resident_w, &sd);
    row->spread_pct = nr > 1 ? 100 * row->eps_sd_j / fabs(row->eps_j) : NAN;
    if (nr == 0) row->r2 = NAN;
    row->truth_j = sim ? sim_eps_j(c->c.op, c->c.level, c->c.threads) : NAN;
    double longest = 0;
    for (size_t i = 0; i < p->nlaunches; i++) {
        const launch *l = &p->launches[i];
        double len = le[i].t1 - le[i].t0;
        if (l->cfg != ci || l->k != K_CHASE || !(len > longest)) continue;
        longest = len;
        row->accesses = l->accesses;
        row->accesses_per_s = l->accesses / len;
        row->kernel_dyn_w = le[i].dyn_j / len;
    }
}

/* LOAD+DIV against LOAD (the paper's §VI-D): the difference per sector
 * access over the divisions per sector access is one division's energy. */
static void divisions(tw_mem_results *r)
{
    for (size_t i = 0; i < r->n; i++) {
        tw_mem_row *d = &r->rows[i];
        if (d->op != TW_CHASE_LOAD_DIV) continue;
        for (size_t k = 0; k < r->n; k++) {
            const tw_mem_row *l = &r->rows[k];
            if (l->op != TW_CHASE_LOAD || l->level != d->level || l->threads != d->threads) continue;
            double per = tw_mem_divs_per_sector(d->threads);
            d->div_j = (d->eps_j - l->eps_j) / per;
            d->div_sd_j = hypot(d->eps_sd_j, l->eps_sd_j) / per;
        }
    }
}

void tw_mem_lower_bounds(tw_mem_results *r)
{
    for (int op = 0; op < TW_CHASE_OPS; op++)
        for (int lv = 0; lv < TW_MEM_LEVELS; lv++) {
            r->lower_j[op][lv] = NAN;
            r->lower_threads[op][lv] = 0;
        }
    for (size_t i = 0; i < r->n; i++) {
        const tw_mem_row *w = &r->rows[i];
        double *lo = &r->lower_j[w->op][w->level];
        if (w->check == TW_MEM_CHECK_FAIL || !(w->eps_j > 0)) continue;
        if (!isfinite(*lo) || w->eps_j < *lo) {
            *lo = w->eps_j;
            r->lower_threads[w->op][w->level] = w->threads;
        }
    }
}

static tw_status keep_launches(const tw_mem_plan *p, const tw_launch_energy *le, tw_mem_results *out)
{
    out->launches = calloc(p->nlaunches + 1, sizeof *out->launches);
    if (!out->launches) return tw_fail(TW_ENOMEM, "out of memory (launches)");
    for (size_t i = 0; i < p->nlaunches; i++) {
        const launch *l = &p->launches[i];
        const config *c = &p->cfgs[l->cfg];
        out->launches[i] = (tw_mem_launch_row){c->c.op,      c->c.level,
                                               c->c.threads, l->k == K_CHASE ? "chase" : "resident",
                                               l->rep,       (double)l->iterations,
                                               l->accesses,  le[i].t0,
                                               le[i].t1,     le[i].total_j,
                                               le[i].dyn_j};
    }
    out->nlaunches = p->nlaunches;
    return TW_OK;
}

tw_status tw_mem_analyse(const tw_mem_plan *p, tw_sensor *trace, const tw_events *events, const tw_profile *profile,
                         tw_mem_results *out)
{
    if (!p || !trace || !events || !profile || !out) return tw_fail(TW_EINVAL, "tw_mem_analyse: NULL argument");
    memset(out, 0, sizeof *out);
    const tw_reading_model *m = tw_launch_reading(profile, out->reading, sizeof out->reading);
    if (!m) return TW_EINVAL;
    size_t *idx = calloc(p->nlaunches + 1, sizeof *idx);
    tw_launch_energy *le = calloc(p->nlaunches + 1, sizeof *le);
    out->rows = calloc(p->ncfgs + 1, sizeof *out->rows);
    tw_status st = idx && le && out->rows ? TW_OK : tw_fail(TW_ENOMEM, "out of memory (results)");
    for (size_t i = 0; st == TW_OK && i < p->nlaunches; i++)
        idx[i] = p->launches[i].event;
    if (st == TW_OK) st = tw_launch_energies(trace, events, m, idx, p->nlaunches, le);
    if (st == TW_OK) st = keep_launches(p, le, out);
    if (st == TW_OK) out->clock_mhz = tw_launch_reading_mean(trace, "sm_clock_mhz", le, NULL, p->nlaunches, NAN);
    for (size_t ci = 0; st == TW_OK && ci < p->ncfgs; ci++)
        row_of(p, le, ci, p->sim, &out->rows[out->n++]);
    if (st == TW_OK) {
        divisions(out);
        tw_mem_lower_bounds(out);
    }
    free(idx);
    free(le);
    if (st != TW_OK) tw_mem_results_free(out);
    return st;
}

void tw_mem_results_free(tw_mem_results *r)
{
    if (!r) return;
    free(r->rows);
    free(r->launches);
    memset(r, 0, sizeof *r);
}
