/* Energy per instruction: the schedule and its analysis; see isa_run.h. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/isa_run.h"
#include "bench/launches.h"
#include "core/error.h"
#include "core/lsq.h"
#include "correct/observe.h"

#define PAPER_TARGET_S 0.5
#define THROUGHPUT_TARGET_S 0.25
#define PAPER_REPS 2
#define THROUGHPUT_REPS 3
#define PAPER_GAP_S 0.2
#define THROUGHPUT_GAP_S 0.15
#define CAL_ITERS_PAPER 2000ull
#define CAL_ITERS_THROUGHPUT 100ull
#define THREADS_PER_SM 2048u
#define BLOCK 256u
#define SIM_CLOCK_HZ 1.98e9
#define DEFAULT_CLOCK_MHZ 1980.0
#define SEED 0x9e3779b97f4a7c15ull

/* ---------------------------------------------------------------- the simulator's synthetic truth */

/* The simulator cannot run PTX: it is given a cost per instruction class -
 * a latency, a throughput and an energy per thread operation - invented to
 * be plausible, so that the methods can be checked against known input. */
typedef struct sim_cost {
    double latency_cyc;    /* dependent issue to issue */
    double ops_per_sm_cyc; /* thread operations per SM per cycle, many warps */
    double pj_per_op;
} sim_cost;

#define SIM_LOOP_CYC 12.0    /* the paper kernel's loop per round */
#define SIM_LOOP_T_CYC 40.0  /* the throughput kernel's loop per round (per thread, hidden by warps) */
#define SIM_LOOP_PJ 3.0      /* the loop's own instructions per thread and round */
#define SIM_ONE_THREAD_W 3.0 /* one thread keeps an SM clocked */
#define SIM_BUSY_W 60.0      /* every SM awake with resident warps, issuing nothing */

static sim_cost sim_cost_of(const tw_isa_entry *e)
{
    const char *n = e->name, *g = e->group;
    if (strstr(n, "div") || strstr(n, "rem")) return (sim_cost){strstr(n, "f64") ? 600 : 300, 2, 40};
    if (strstr(n, "sqrt.rn") || strstr(n, "rcp.rn")) return (sim_cost){60, 4, 20};
    if (!strcmp(g, "special")) return (sim_cost){18, 16, 6};
    if (!strcmp(g, "fp64")) return (sim_cost){8, 64, 8};
    if (!strcmp(g, "fp16")) return (sim_cost){6, 256, 1.2};
    if (!strcmp(g, "tensor")) return (sim_cost){32, 2048, 0.6};
    if (!strcmp(g, "memory") || !strcmp(g, "atomic")) return (sim_cost){30, 32, 12};
    if (!strcmp(g, "warp")) return (sim_cost){24, 32, 4};
    if (!strcmp(g, "fp32")) return (sim_cost){4, 128, 2.0};
    return (sim_cost){4, 64, 1.5}; /* int, logic, bit, multi-precision */
}

/* ---------------------------------------------------------------- the plan */

/* the measured kernel, the same loop without the instructions, and (throughput
 * mode) every warp resident and asleep */
typedef enum { K_ENTRY = 0, K_OVERHEAD = 1, K_RESIDENT = 2 } kind;

typedef struct launch {
    size_t entry; /* index into the plan's entries */
    int level;
    kind k;
    int rep;
    uint64_t iterations;
    double ops;   /* target instructions executed (thread operations) */
    double loops; /* rounds of the measured loop executed (thread iterations); 0 for the resident kernel */
    size_t event; /* its event's index */
} launch;

typedef struct plan_entry {
    tw_isa_entry entry; /* the table's, its start from the seed with seed_operands */
    const tw_isa_entry *e;
    char *ptx;
    char kernel[96];
    double truth_j; /* simulator: J per instruction it was given (paper: total, throughput: per op) */
} plan_entry;

struct tw_isa_plan {
    tw_isa_run_options o;
    plan_entry *entries;
    size_t nentries;
    launch *launches;
    size_t nlaunches, cap;
    unsigned grid, block;
    int sm_count;
};

void tw_isa_run_options_init(tw_isa_run_options *o)
{
    memset(o, 0, sizeof *o);
    o->mode = TW_ISA_PAPER;
}

static bool wanted(const tw_isa_run_options *o, const tw_isa_entry *e, int cc)
{
    if (e->min_sm > cc) return false;
    if (!o->only || o->nonly == 0) return true;
    for (size_t i = 0; i < o->nonly; i++)
        if (!strcmp(o->only[i], e->name)) return true;
    return false;
}

void tw_isa_plan_free(tw_isa_plan *p)
{
    if (!p) return;
    for (size_t i = 0; i < p->nentries; i++)
        free(p->entries[i].ptx);
    free(p->entries);
    free(p->launches);
    free(p);
}

static tw_status add_launch(tw_isa_plan *p, const launch *l)
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
static void sim_shape(const tw_isa_plan *p, const plan_entry *pe, kind k, uint64_t iters, double threads, double *s,
                      double *w, int sm_count)
{
    sim_cost c = sim_cost_of(pe->e);
    double n = (double)iters;
    if (p->o.mode == TW_ISA_PAPER) {
        double cyc = n * (SIM_LOOP_CYC + (k == K_ENTRY ? TW_ISA_CHAIN * c.latency_cyc : 0.0));
        *s = cyc / SIM_CLOCK_HZ + 5e-6;
        *w = SIM_ONE_THREAD_W;
        return;
    }
    if (k == K_RESIDENT) {
        *s = n * TW_ISA_RESIDENT_SLEEP_NS * 1e-9 + 5e-6;
        *w = SIM_BUSY_W;
        return;
    }
    double ops = k == K_ENTRY ? n * tw_isa_per_round(TW_ISA_THROUGHPUT) * threads : 0.0;
    double t = ops / (c.ops_per_sm_cyc * sm_count * SIM_CLOCK_HZ) + n * SIM_LOOP_T_CYC / SIM_CLOCK_HZ + 5e-6;
    *s = t;
    *w = SIM_BUSY_W + (c.pj_per_op * ops + SIM_LOOP_PJ * n * threads) * 1e-12 / t;
}

/* One launch; returns its measured (GPU) or simulated length. */
static tw_status launch_one(tw_exec *x, tw_isa_plan *p, size_t ei, int level, kind k, int rep, uint64_t iters,
                            bool record, double *len_s)
{
    const plan_entry *pe = &p->entries[ei];
    double threads = (double)p->grid * p->block;
    static const char *const prefix[] = {"isa_", "isa_ovh_", "isa_res_"};
    tw_exec_kernel kk = {.label = pe->kernel,
                         .ptx = pe->ptx,
                         .entry = k == K_ENTRY      ? pe->kernel
                                  : k == K_OVERHEAD ? "tw_isa_overhead"
                                                    : TW_ISA_RESIDENT,
                         .opt_level = level,
                         .grid = p->grid,
                         .block = p->block,
                         .iterations = iters,
                         .seed = SEED};
    char label[128];
    snprintf(label, sizeof label, "%s%s", prefix[k], pe->kernel);
    kk.label = label;
    sim_shape(p, pe, k, iters, threads, &kk.sim_s, &kk.sim_w, x->sm_count);
    size_t ev = tw_events_count(x->events);
    tw_status st = tw_exec_kernel_run(x, &kk, 1);
    if (st != TW_OK) return st;
    const tw_event *e = tw_events_get(x->events, ev);
    *len_s = e->end_s - e->start_s;
    if (!record) return TW_OK;
    double ops = k == K_ENTRY ? (double)iters * tw_isa_per_round(p->o.mode) * threads : 0.0;
    double loops = k == K_RESIDENT ? 0.0 : (double)iters * threads;
    launch l = {ei, level, k, rep, iters, ops, loops, ev};
    return add_launch(p, &l);
}

/* Iterations for about target_s: the length is linear in iterations; two
 * timed launches give the slope. */
static tw_status calibrate(tw_exec *x, tw_isa_plan *p, size_t ei, int level, kind k, double target_s, uint64_t *iters)
{
    double a, b;
    uint64_t cal = p->o.mode == TW_ISA_PAPER ? CAL_ITERS_PAPER : CAL_ITERS_THROUGHPUT;
    tw_status st = launch_one(x, p, ei, level, k, -1, cal, false, &a);
    if (st == TW_OK) st = launch_one(x, p, ei, level, k, -1, 8 * cal, false, &b);
    if (st != TW_OK) return st;
    double per = (b - a) / (7.0 * (double)cal);
    if (!(per > 0)) per = b / (8.0 * (double)cal);
    double n = target_s / per;
    *iters = (uint64_t)fmin(fmax(n, 3.0 * (double)cal), 4e12);
    return TW_OK;
}

static tw_status paper_entry(tw_exec *x, tw_isa_plan *p, size_t ei)
{
    static const int levels[] = {0, 4};
    double len;
    for (int li = 0; li < 2; li++) {
        uint64_t n;
        tw_status st = calibrate(x, p, ei, levels[li], K_ENTRY, p->o.target_s, &n);
        for (int r = 0; st == TW_OK && r < p->o.reps; r++) {
            st = launch_one(x, p, ei, levels[li], K_ENTRY, r, n, true, &len);
            if (st == TW_OK) st = tw_exec_idle(x, PAPER_GAP_S);
            if (st == TW_OK) st = launch_one(x, p, ei, levels[li], K_OVERHEAD, r, n, true, &len);
            if (st == TW_OK) st = tw_exec_idle(x, PAPER_GAP_S);
        }
        if (st != TW_OK) return st;
    }
    return TW_OK;
}

/* Per repeat: the kernel, the overhead kernel and the resident kernel, each
 * at two lengths, interleaved so that a slow drift (temperature) reaches all
 * three alike. */
static tw_status throughput_entry(tw_exec *x, tw_isa_plan *p, size_t ei)
{
    static const double frac[] = {1.0 / 3.0, 1.0};
    static const kind kinds[] = {K_ENTRY, K_OVERHEAD, K_RESIDENT};
    uint64_t n[3];
    double len;
    tw_status st = TW_OK;
    for (int k = 0; st == TW_OK && k < 3; k++)
        st = calibrate(x, p, ei, 4, kinds[k], p->o.target_s, &n[k]);
    for (int r = 0; st == TW_OK && r < p->o.reps; r++)
        for (int f = 0; st == TW_OK && f < 2; f++)
            for (int k = 0; st == TW_OK && k < 3; k++) {
                st = launch_one(x, p, ei, 4, kinds[k], r, (uint64_t)(frac[f] * (double)n[k]), true, &len);
                if (st == TW_OK) st = tw_exec_idle(x, THROUGHPUT_GAP_S);
            }
    return st;
}

static tw_status build_entries(tw_isa_plan *p, int cc)
{
    size_t n = tw_isa_count();
    p->entries = calloc(n ? n : 1, sizeof *p->entries);
    if (!p->entries) return tw_fail(TW_ENOMEM, "out of memory (entries)");
    for (size_t i = 0; i < n; i++) {
        const tw_isa_entry *e = tw_isa_get(i);
        if (!wanted(&p->o, e, cc)) continue;
        plan_entry *pe = &p->entries[p->nentries];
        pe->entry = *e;
        if (p->o.seed_operands) pe->entry.start = TW_ISA_START_SEED;
        pe->e = &pe->entry;
        tw_isa_kernel_name(e, pe->kernel, sizeof pe->kernel);
        if (!(pe->ptx = tw_isa_ptx(pe->e, p->o.mode, cc))) return TW_EPARSE;
        pe->truth_j = NAN;
        p->nentries++;
    }
    if (p->nentries == 0) return tw_fail(TW_ENOTFOUND, "no instruction to measure (--only names none this GPU has)");
    return TW_OK;
}

static void defaults(tw_isa_run_options *o)
{
    if (!(o->target_s > 0)) o->target_s = o->mode == TW_ISA_PAPER ? PAPER_TARGET_S : THROUGHPUT_TARGET_S;
    if (o->reps <= 0) o->reps = o->mode == TW_ISA_PAPER ? PAPER_REPS : THROUGHPUT_REPS;
}

tw_status tw_isa_run(tw_exec *x, const tw_isa_run_options *o, tw_isa_plan **out)
{
    if (!x || !o || !out) return tw_fail(TW_EINVAL, "tw_isa_run: NULL argument");
    *out = NULL;
    tw_isa_plan *p = calloc(1, sizeof *p);
    if (!p) return tw_fail(TW_ENOMEM, "out of memory (plan)");
    p->o = *o;
    defaults(&p->o);
    p->sm_count = x->sm_count;
    p->grid = p->o.mode == TW_ISA_PAPER ? 1u : (unsigned)x->sm_count * (THREADS_PER_SM / BLOCK);
    p->block = p->o.mode == TW_ISA_PAPER ? 1u : BLOCK;
    tw_status st = build_entries(p, x->cc);
    /* on the simulator, what it was given: the total energy of one dependent
     * instruction (board power x latency, the paper's measure) or the energy
     * of one thread operation */
    for (size_t i = 0; st == TW_OK && isfinite(x->true_active_idle_w) && i < p->nentries; i++) {
        sim_cost c = sim_cost_of(p->entries[i].e);
        p->entries[i].truth_j = p->o.mode == TW_ISA_PAPER
                                    ? (x->true_active_idle_w + SIM_ONE_THREAD_W) * c.latency_cyc / SIM_CLOCK_HZ
                                    : c.pj_per_op * 1e-12;
    }
    for (size_t i = 0; st == TW_OK && i < p->nentries; i++)
        st = p->o.mode == TW_ISA_PAPER ? paper_entry(x, p, i) : throughput_entry(x, p, i);
    if (st != TW_OK) {
        tw_isa_plan_free(p);
        return st;
    }
    *out = p;
    return TW_OK;
}

double tw_isa_planned_s(const tw_isa_run_options *o, int sm_count, int cc)
{
    (void)sm_count;
    tw_isa_run_options d = *o;
    defaults(&d);
    size_t n = 0;
    for (size_t i = 0; i < tw_isa_count(); i++)
        n += wanted(&d, tw_isa_get(i), cc);
    if (d.mode == TW_ISA_PAPER) return (double)n * 2 * d.reps * (d.target_s * 1.5 + 2 * PAPER_GAP_S);
    return (double)n * d.reps * 3 * (d.target_s * (4.0 / 3.0) + 2 * THROUGHPUT_GAP_S);
}

/* ---------------------------------------------------------------- analysis */

typedef struct per_launch {
    double t0, t1, total_j, dyn_j, sma_j, papi_j, mtsm_j;
} per_launch;

static tw_status reading_updates(tw_sensor *s, const char *name, tw_update_series *u)
{
    size_t i;
    if (tw_sensor_find(s, name, &i) != TW_OK) {
        tw_clear_error();
        return TW_OK; /* absent: the method is left out */
    }
    return tw_updates_read(s, i, u);
}

static double held_at(const tw_update_series *u, double t)
{
    size_t k = tw_updates_index_at(u, t);
    return k == SIZE_MAX ? NAN : u->v[k].value;
}

/* Energy of every recorded launch by the best reading's model and by the naive methods. */
static tw_status measure_launches(const tw_isa_plan *p, tw_sensor *trace, const tw_events *events,
                                  const tw_reading_model *m, per_launch *pl, double *clock_mhz)
{
    size_t *idx = calloc(p->nlaunches ? p->nlaunches : 1, sizeof *idx);
    tw_launch_energy *le = calloc(p->nlaunches ? p->nlaunches : 1, sizeof *le);
    bool *entry = calloc(p->nlaunches ? p->nlaunches : 1, sizeof *entry); /* the clock is the kernels' */
    tw_update_series usage = {0}, inst = {0};
    tw_status st = idx && le && entry ? TW_OK : tw_fail(TW_ENOMEM, "out of memory (launches)");
    for (size_t i = 0; st == TW_OK && i < p->nlaunches; i++)
        idx[i] = p->launches[i].event;
    if (st == TW_OK) st = tw_launch_energies(trace, events, m, idx, p->nlaunches, le);
    if (st == TW_OK) st = reading_updates(trace, "power_usage_w", &usage);
    if (st == TW_OK) st = reading_updates(trace, "power_instant_w", &inst);
    for (size_t i = 0; st == TW_OK && i < p->nlaunches; i++) {
        double a = le[i].t0, b = le[i].t1;
        pl[i] = (per_launch){a, b, le[i].total_j, le[i].dyn_j, NAN, NAN, NAN};
        pl[i].sma_j = usage.n ? tw_updates_hold_integral(&usage, a, b) : NAN;
        pl[i].mtsm_j = inst.n ? tw_updates_hold_integral(&inst, a, b) : NAN;
        pl[i].papi_j = inst.n ? held_at(&inst, b) * (b - a) : NAN;
        entry[i] = p->launches[i].k == K_ENTRY;
    }
    *clock_mhz =
        tw_launch_reading_mean(trace, "sm_clock_mhz", le, entry, st == TW_OK ? p->nlaunches : 0, DEFAULT_CLOCK_MHZ);
    tw_update_series_free(&usage);
    tw_update_series_free(&inst);
    free(idx);
    free(le);
    free(entry);
    return st;
}

#define MAX_REPS 16

/* Paper mode: per entry and level, (E_kernel - E_overhead) / N per repeat. */
static void paper_rows(const tw_isa_plan *p, const per_launch *pl, double clock_mhz, tw_isa_results *out)
{
    static const int levels[] = {0, 4};
    for (size_t ei = 0; ei < p->nentries; ei++) {
        for (int li = 0; li < 2; li++) {
            double e[MAX_REPS], sma[MAX_REPS], papi[MAX_REPS], mtsm[MAX_REPS], cyc[MAX_REPS], len = NAN, ninst = NAN;
            int nr = 0;
            for (int r = 0; r < p->o.reps && r < MAX_REPS; r++) {
                const launch *lk = NULL, *lo = NULL;
                size_t ik = 0, io = 0;
                for (size_t i = 0; i < p->nlaunches; i++) {
                    const launch *l = &p->launches[i];
                    if (l->entry != ei || l->level != levels[li] || l->rep != r) continue;
                    if (l->k == K_ENTRY) lk = l, ik = i;
                    if (l->k == K_OVERHEAD) lo = l, io = i;
                }
                if (!lk || !lo) continue;
                /* cycles from the kernel's own time: the loop counter runs beside
                 * the chain, so the difference with the overhead loop would
                 * understate the latency */
                double n = lk->ops, dt = pl[ik].t1 - pl[ik].t0;
                e[nr] = (pl[ik].total_j - pl[io].total_j) / n;
                sma[nr] = (pl[ik].sma_j - pl[io].sma_j) / n;
                papi[nr] = (pl[ik].papi_j - pl[io].papi_j) / n;
                mtsm[nr] = (pl[ik].mtsm_j - pl[io].mtsm_j) / n;
                cyc[nr] = dt * clock_mhz * 1e6 / n;
                len = pl[ik].t1 - pl[ik].t0;
                ninst = n;
                nr++;
            }
            if (nr == 0) continue;
            tw_isa_row *row = &out->rows[out->n++];
            memset(row, 0, sizeof *row);
            row->e = p->entries[ei].e;
            row->opt_level = levels[li];
            double sd;
            tw_mean_sd(e, nr, &row->e_inst_j, &row->e_inst_sd_j);
            tw_mean_sd(sma, nr, &row->sma_j, &sd);
            tw_mean_sd(papi, nr, &row->papi_j, &sd);
            tw_mean_sd(mtsm, nr, &row->mtsm_j, &sd);
            tw_mean_sd(cyc, nr, &row->cycles_per_inst, &sd);
            row->pj_warp_inst = row->resident_w = row->loop_j = row->launch_j = row->fit_r2 = NAN;
            row->spread_pct = row->ops_per_sm_clk = row->kernel_dyn_w = NAN;
            row->kernel_s = len;
            row->instructions = ninst;
            row->truth_j = p->entries[ei].truth_j;
        }
    }
}

/* One repeat's fit: E_dyn = a ops + c loops + b t + d over its launches of
 * the three kernels. The resident kernel fixes b (the SMs awake, nothing
 * issued), the overhead kernel c (the loop's own instructions), and the
 * kernel a; d takes what every launch costs regardless of its length (the
 * ramp at its start). */
static bool fit_repeat(const tw_isa_plan *p, const per_launch *pl, size_t ei, int rep, tw_lsq_fit *f)
{
    double X[4 * 3 * 4], y[3 * 4];
    size_t n = 0;
    for (size_t i = 0; i < p->nlaunches && n < sizeof y / sizeof y[0]; i++) {
        const launch *l = &p->launches[i];
        if (l->entry != ei || l->rep != rep || !isfinite(pl[i].dyn_j)) continue;
        double row[4] = {l->ops, l->loops, pl[i].t1 - pl[i].t0, 1.0};
        memcpy(X + 4 * n, row, sizeof row);
        y[n++] = pl[i].dyn_j;
    }
    return n >= 5 && tw_lsq_solve(X, y, n, 4, f);
}

static void throughput_rows(const tw_isa_plan *p, const per_launch *pl, double clock_mhz, tw_isa_results *out)
{
    for (size_t ei = 0; ei < p->nentries; ei++) {
        double a[MAX_REPS], b[MAX_REPS], c[MAX_REPS], d[MAX_REPS], r2 = INFINITY, sd;
        int nr = 0;
        for (int r = 0; r < p->o.reps && r < MAX_REPS; r++) {
            tw_lsq_fit f;
            if (!fit_repeat(p, pl, ei, r, &f)) continue;
            a[nr] = f.beta[0], c[nr] = f.beta[1], b[nr] = f.beta[2], d[nr] = f.beta[3];
            r2 = fmin(r2, f.r2);
            nr++;
        }
        if (nr == 0) continue;
        tw_isa_row *row = &out->rows[out->n++];
        memset(row, 0, sizeof *row);
        row->e = p->entries[ei].e;
        row->opt_level = 4;
        tw_mean_sd(a, nr, &row->e_inst_j, &row->e_inst_sd_j);
        tw_mean_sd(b, nr, &row->resident_w, &sd);
        tw_mean_sd(c, nr, &row->loop_j, &sd);
        tw_mean_sd(d, nr, &row->launch_j, &sd);
        row->fit_r2 = r2;
        row->pj_warp_inst = row->e_inst_j * 1e12 * 32;
        row->spread_pct = nr > 1 ? 100.0 * row->e_inst_sd_j / fabs(row->e_inst_j) : NAN;
        row->sma_j = row->papi_j = row->mtsm_j = row->cycles_per_inst = NAN;
        row->truth_j = p->entries[ei].truth_j;
        /* the longest launch of the kernel: its length, rate and power */
        for (size_t i = 0; i < p->nlaunches; i++) {
            const launch *l = &p->launches[i];
            double len = pl[i].t1 - pl[i].t0;
            if (l->entry != ei || l->k != K_ENTRY || !(len > row->kernel_s)) continue;
            row->kernel_s = len;
            row->instructions = l->ops;
            row->ops_per_sm_clk = l->ops / (len * clock_mhz * 1e6 * p->sm_count);
            row->kernel_dyn_w = pl[i].dyn_j / len;
        }
    }
}

static tw_status keep_launches(const tw_isa_plan *p, const per_launch *pl, tw_isa_results *out)
{
    static const char *const kinds[] = {"kernel", "overhead", "resident"};
    out->launches = calloc(p->nlaunches ? p->nlaunches : 1, sizeof *out->launches);
    if (!out->launches) return tw_fail(TW_ENOMEM, "out of memory (launches)");
    for (size_t i = 0; i < p->nlaunches; i++) {
        const launch *l = &p->launches[i];
        out->launches[i] = (tw_isa_launch_row){p->entries[l->entry].e,
                                               kinds[l->k],
                                               l->level,
                                               l->rep,
                                               (double)l->iterations,
                                               l->ops,
                                               l->loops,
                                               pl[i].t0,
                                               pl[i].t1,
                                               pl[i].total_j,
                                               pl[i].dyn_j};
    }
    out->nlaunches = p->nlaunches;
    return TW_OK;
}

tw_status tw_isa_analyse(const tw_isa_plan *p, tw_sensor *trace, const tw_events *events, const tw_profile *profile,
                         tw_isa_results *out)
{
    if (!p || !trace || !events || !profile || !out) return tw_fail(TW_EINVAL, "tw_isa_analyse: NULL argument");
    memset(out, 0, sizeof *out);
    const tw_reading_model *m = tw_launch_reading(profile, out->reading, sizeof out->reading);
    if (!m) return TW_EINVAL;
    per_launch *pl = calloc(p->nlaunches ? p->nlaunches : 1, sizeof *pl);
    out->rows = calloc(2 * p->nentries + 1, sizeof *out->rows);
    if (!pl || !out->rows) {
        free(pl);
        tw_isa_results_free(out);
        return tw_fail(TW_ENOMEM, "out of memory (results)");
    }
    tw_status st = measure_launches(p, trace, events, m, pl, &out->clock_mhz);
    if (st == TW_OK) st = keep_launches(p, pl, out);
    if (st == TW_OK) {
        if (p->o.mode == TW_ISA_PAPER)
            paper_rows(p, pl, out->clock_mhz, out);
        else
            throughput_rows(p, pl, out->clock_mhz, out);
    }
    free(pl);
    if (st != TW_OK) tw_isa_results_free(out);
    return st;
}

void tw_isa_results_free(tw_isa_results *r)
{
    if (!r) return;
    free(r->rows);
    free(r->launches);
    memset(r, 0, sizeof *r);
}
