/* The estimator: baseline + sum of names' power x activity, fitted to every
 * reading's windows (estimator.h). */
#include "estimate/estimator.h"

#include <fnmatch.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/nnls.h"
#include "estimate/prior_scale.h"
#include "estimate/spill.h"

#define DEFAULT_TAIL_S 1.0
#define DEFAULT_SMOOTH 10.0
#define DEFAULT_GROUP_COS 0.9995
#define DEFAULT_MAX_NAMES 2000
#define MIN_KNOT_S 5.0
#define KNOT_SPANS 40
#define EDGE_EPS_S 1e-9
#define SIGMAS 2.0 /* below resolution: energy under this many standard errors */
#define POOLED_NAME "(other names)"
#define MIN_PRIOR_W 300.0
#define MIN_SPARE_WINDOWS 10 /* windows beyond the unknowns, below which the noise cannot be estimated */
#define MAX_DOF_FACTOR 100.0
/* sd of the prior on each baseline knot around the GPU's active-idle level:
 * far below what a second of any reading pins it to, so it decides only the
 * direction the data leave free (baseline up, every name down, on a GPU that
 * never idles) */
#define BASELINE_PRIOR_SD_W 20.0
#define MIN_TOTAL_SD_J 0.001
/* the energy counter's update period (H100: 100 ms, sensors-h100.md) */
#define COUNTER_UPDATE_S 0.1
/* activity leaving the GPU idle less than this share of its span: the baseline rests on the prior (said) */
#define MIN_IDLE_SHARE 0.02
#define PRIOR_BOUND 0.5 /* a power whose sd is over this share of the prior's is the prior's, not the data's */
/* Lingering power (docs/methods.md): on an H100 a GEMM's reading decays
 * for ~0.2 s after it ends, above the quiet level and beyond the sensor's
 * 13 ms lag (13-20 % of its energy; an FMA loop's ~0), and the solo
 * reference counts that energy as the kernel's. Without a term for it the
 * fit gave it to the next kernels (mixed pattern, results/h100/attrib-s28:
 * gemm_20ms -7 %, fma_5ms +13 %, l2_1ms +13 %). Its time constant is the
 * sensor profile's (linger_s, scripts/attrib-linger-scan); a GPU whose
 * profile has none gets no term: where the data hold no linger, the term
 * takes up whatever the sensor model misses (+4.5 % on a simulated H100
 * read through a boxcar profile whose sensor is an rc). The prior keeps it
 * near zero where the data cannot tell it from the name's own power (a
 * periodic sequence). */
#define DEFAULT_LINGER_PRIOR_W 10.0
#define MAX_LINGER 16 /* names (by time) given a linger term: the rest have none */
/* launches below which a name has no linger term: the linger is told from
 * the name's own power by the varied gaps after its launches, which a few
 * launches do not give (their linger would be the prior's alone) */
#define MIN_LINGER_LAUNCHES 20
#define LINGER_SPAN 10.0 /* time constants after which a launch's linger is dropped (e^-10) */
#define LINGER_NONE UINT32_MAX
#define SHIFT_MAX_S 10e-3
#define MIN_SHIFT_WINDOWS 50
#define MAX_SHIFT_UNKNOWNS 400
#define MAX_SHIFT_WINDOWS 16384
#define SHIFT_BLOCKS 16
#define SHIFT_GRID_S 0.25e-3 /* the search's finest step: the offset found is off by up to half of it */

/* A coefficient held where it is while the others are fitted: a prior of
 * this many times its data's weight (its error a thousandth of the data's). */
#define HELD_WEIGHT 1e6

static void event_energies_free(tw_est_evj *x); /* the events' energies: after the estimate's basics */

void tw_est_config_init(tw_est_config *c)
{
    memset(c, 0, sizeof *c);
    c->size = sizeof *c;
    c->fit_t0_s = c->fit_t1_s = NAN;
    c->power_limit_w = NAN;
    c->active_idle_w = NAN;
    c->idle_before_t0_s = c->idle_before_t1_s = c->idle_after_t0_s = c->idle_after_t1_s = NAN;
}

void tw_est_config_from(tw_est_config *c, const tw_est_config *given)
{
    tw_est_config_init(c);
    if (given) memcpy(c, given, given->size && given->size < sizeof *c ? given->size : sizeof *c);
    c->size = sizeof *c;
}

const char *tw_est_status_name(tw_est_status s)
{
    switch (s) {
    case TW_EST_OK:
        return "ok";
    case TW_EST_BELOW_RESOLUTION:
        return "below_resolution";
    case TW_EST_GROUPED:
        return "grouped";
    case TW_EST_UNOBSERVED:
        return "unobserved";
    case TW_EST_AT_POWER_BOUND:
        return "at_power_bound";
    }
    return "?";
}

const char *tw_est_method_name(tw_est_method m) { return m == TW_EST_BY_COUNTERS ? "counters" : "readings"; }

bool tw_est_status_one_sided(tw_est_status s) { return s == TW_EST_BELOW_RESOLUTION || s == TW_EST_AT_POWER_BOUND; }

void tw_estimate_free(tw_estimate *e)
{
    if (!e) return;
    for (size_t g = 0; g < e->ngroups; g++)
        free(e->groups[g].members);
    free(e->groups);
    free(e->names);
    free(e->ranges);
    event_energies_free(e->energies_j);
    free(e->knot_w);
    free(e->pm_w0);
    free(e->pm_w1);
    free(e);
}

static double baseline_at(const tw_estimate *e, double t)
{
    if (e->nknots == 1) return e->knot_w[0];
    double u = (t - e->fit_t0_s) / e->knot_s;
    if (!(u > 0)) return e->knot_w[0];
    size_t k = (size_t)floor(u);
    if (k + 1 >= e->nknots) return e->knot_w[e->nknots - 1];
    u -= (double)k;
    return e->knot_w[k] * (1 - u) + e->knot_w[k + 1] * u;
}

/* Edge r of PM sampling's window k (of nw, in order): r < TW_EST_PM_LEAD
 * the (r+1)-th TW_EST_PM_EDGE_S before its recorded start, else the
 * (r - TW_EST_PM_LEAD + 1)-th after its end, each kept to its side of the
 * middle of the gap to the neighbouring window (windows close together share
 * the gap: spans that overlapped would fit only their sum); false where none
 * is left. */
static bool pm_edge_span(const double *w0, const double *w1, size_t nw, size_t k, size_t r, double *a, double *b)
{
    if (r < TW_EST_PM_LEAD) {
        *b = w0[k] - (double)r * TW_EST_PM_EDGE_S;
        *a = *b - TW_EST_PM_EDGE_S;
        if (k > 0) *a = fmax(*a, 0.5 * (w1[k - 1] + w0[k]));
    } else {
        *a = w1[k] + (double)(r - TW_EST_PM_LEAD) * TW_EST_PM_EDGE_S;
        *b = *a + TW_EST_PM_EDGE_S;
        if (k + 1 < nw) *b = fmin(*b, 0.5 * (w1[k] + w0[k + 1]));
    }
    return *b > *a;
}

/* The first of the nw windows (in order, not overlapping) whose trailing
 * edges end after t: a binary search, so that what is asked of a span costs
 * the windows near it, not all of a long run's (a report asks it of every
 * launch). */
static size_t pm_first_window(const double *w1, size_t nw, double t)
{
    size_t lo = 0, hi = nw;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (w1[mid] + TW_EST_PM_TRAIL * TW_EST_PM_EDGE_S <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The energy PM sampling's power at its windows' edges adds over [a, b]. */
static double pm_edges_j(const tw_estimate *e, double a, double b)
{
    double sum = 0;
    for (size_t k = pm_first_window(e->pm_w1, e->pm_nw, a);
         k < e->pm_nw && e->pm_w0[k] - TW_EST_PM_LEAD * TW_EST_PM_EDGE_S < b; k++)
        for (size_t r = 0; r < TW_EST_PM_EDGES; r++) {
            double lo, hi;
            if (pm_edge_span(e->pm_w0, e->pm_w1, e->pm_nw, k, r, &lo, &hi) && hi > a && lo < b)
                sum += e->counters.pm_edge_w[r] * (fmin(b, hi) - fmax(a, lo));
        }
    return sum;
}

double tw_estimate_baseline_j(const tw_estimate *e, double a, double b)
{
    if (!e || !e->knot_w || !(b > a)) return b == a ? 0.0 : NAN;
    /* exact for a piecewise-linear function: the trapezoid between the knots inside [a, b] */
    double sum = 0, t = a, v = baseline_at(e, a);
    for (size_t k = 0; k < e->nknots; k++) {
        double tk = e->fit_t0_s + (double)k * e->knot_s;
        if (tk <= a || tk >= b) continue;
        double vk = e->knot_w[k];
        sum += 0.5 * (v + vk) * (tk - t);
        t = tk;
        v = vk;
    }
    sum += 0.5 * (v + baseline_at(e, b)) * (b - t);
    /* PM sampling's own power while it was on, and at the edges */
    for (size_t k = pm_first_window(e->pm_w1, e->pm_nw, a); k < e->pm_nw && e->pm_w0[k] < b; k++)
        if (e->pm_w1[k] > a) sum += e->counters.pm_w * (fmin(b, e->pm_w1[k]) - fmax(a, e->pm_w0[k]));
    return sum + pm_edges_j(e, a, b);
}

/* Each event's energy, spilled in order of event (tw_estimate_event_energy_j). */
struct tw_est_evj {
    tw_spill sp;        /* one double per event */
    tw_spill_reader rd; /* and the chunk of them last read */
};

static void event_energies_free(tw_est_evj *x)
{
    if (!x) return;
    tw_spill_reader_close(&x->rd);
    tw_spill_close(&x->sp);
    free(x);
}

static tw_status event_energies_new(tw_est_evj **out)
{
    tw_est_evj *x = calloc(1, sizeof *x);
    if (!x) return tw_fail(TW_ENOMEM, "out of memory");
    tw_status st = tw_spill_open(&x->sp, sizeof(double));
    if (st == TW_OK) st = tw_spill_reader_open(&x->rd, &x->sp);
    if (st != TW_OK) {
        event_energies_free(x);
        return st;
    }
    *out = x;
    return TW_OK;
}

double tw_estimate_event_energy_j(const tw_estimate *e, size_t i)
{
    if (!e || !e->energies_j || i >= e->nevents) return NAN;
    tw_spill_reader *r = &e->energies_j->rd;
    r->pos = i;
    tw_status st = TW_OK;
    const double *j = tw_spill_peek(r, &st);
    return j ? *j : NAN; /* a read error (said in tw_last_error): unknown */
}

tw_status tw_estimate_set_event_energies(tw_estimate *e, const double *j, size_t n)
{
    if (!e || (n && !j)) return tw_fail(TW_EINVAL, "tw_estimate_set_event_energies: NULL argument");
    event_energies_free(e->energies_j);
    e->energies_j = NULL;
    e->nevents = 0;
    tw_est_evj *x = NULL;
    tw_status st = event_energies_new(&x);
    for (size_t i = 0; st == TW_OK && i < n; i++)
        st = tw_spill_append(&x->sp, &j[i]);
    if (st == TW_OK) st = tw_spill_flush(&x->sp);
    if (st != TW_OK) {
        event_energies_free(x);
        return st;
    }
    e->energies_j = x;
    e->nevents = n;
    return TW_OK;
}

static void warn(tw_estimate *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void warn(tw_estimate *e, const char *fmt, ...)
{
    size_t len = strlen(e->warnings);
    if (len + 2 >= sizeof e->warnings) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->warnings + len, sizeof e->warnings - len - 1, fmt, ap);
    va_end(ap);
    len = strlen(e->warnings);
    e->warnings[len] = '\n';
    e->warnings[len + 1] = '\0';
}

/* ---------------------------------------------------------------- activities */

typedef enum act_class { ACT_NONE, ACT_KERNEL, ACT_COPY, ACT_RANGE } act_class;

static act_class classify(const tw_event *e)
{
    const char *k = e->kind;
    if (!k || !*k || strcmp(k, "kernel") == 0) return ACT_KERNEL;
    if (strcmp(k, "memcpy") == 0 || strcmp(k, "memset") == 0) return ACT_COPY;
    if (strcmp(k, "nvtx") == 0) return ACT_RANGE;
    return ACT_NONE;
}

/* classify, for events that mostly share their kind's text (one address per text in a set) */
typedef struct kind_memo {
    const char *kind;
    act_class cls;
    bool set;
} kind_memo;

static act_class classify_memo(kind_memo *m, const tw_event *e)
{
    if (!m->set || m->kind != e->kind) *m = (kind_memo){e->kind, classify(e), true};
    return m->cls;
}

/* Whether the counters' features see a name's activity: a kernel's (on
 * the SMs), and a copy's or memset's within the device's memory (its DRAM
 * and L2 traffic: on the H200 the PyTorch step's 8 MiB device-to-device
 * copy, always beside a fill and an add, made with them a group whose power
 * the readings alone set, 394 W in one run and 554 W in the other,
 * results/h200/attrib-s42-torch). Copies to or from the host or another
 * device move most of their power over links no feature counts: they keep
 * the readings' own power. */
static bool seen_by_counters(const tw_est_name *n)
{
    if (!n->kind || !*n->kind || strcmp(n->kind, "kernel") == 0 || strcmp(n->kind, "memset") == 0) return true;
    return strcmp(n->kind, "memcpy") == 0 && strncmp(n->name, "memcpy DtoD ", 12) == 0;
}

/* One launch: its span, the name (column) it counts for, and its time
 * alone (rates(): its work rate is made from it as it is read, rate_of). */
typedef struct launch {
    double t0, t1;
    double alone; /* 0 until rates() */
    uint32_t name;
    uint32_t ev;
} launch;

/* A stretch of constant activity of one launch running in it, at the launch's rate. */
typedef struct piece {
    double t0, t1;
    double share; /* the launch's work rate over its span: 1 alone */
    double tot;   /* the rates of every launch running beside it that the counters see (seen_by_counters), of
                     either class: its share of the counters' power is share / tot */
    uint32_t name;
    uint32_t ev;
} piece;

/* The launches by class, the kernels (they share the SMs) and the copies and
 * memsets (the copy engines), each class in order of start in a spill
 * (spill.h), never in memory; their pieces are made from them once
 * (make_pieces) into a spill of their own, which every pass over the
 * windows reads (piece_src), so that the estimator's memory grows with the
 * names and the launches running at once, not with all of them (issue 16). */
typedef struct launches {
    tw_spill cls[2]; /* kernels, copies */
    size_t n;
    double longest[2]; /* per class: the longest launch (a sweep can start this far before a time) */
    double *alone_sum; /* per column: the time of its launches that ran alone all of their span (rates()) */
    size_t *alone_cnt; /* and their number */
    tw_spill pieces;   /* both classes' pieces in order of start, then of event (make_pieces) */
    tw_spill lpieces;  /* the pieces of the names with a linger term, in the same order (linger_columns) */
    const bool *seen;  /* per column: its activity is in the counters' features (kernels, and copies within the
                          device's memory: seen_by_counters); set before make_pieces */
} launches;

static void launches_free(launches *ls)
{
    tw_spill_close(&ls->cls[0]);
    tw_spill_close(&ls->cls[1]);
    tw_spill_close(&ls->pieces);
    tw_spill_close(&ls->lpieces);
    free(ls->alone_sum);
    free(ls->alone_cnt);
}

/* Names interned by (name, kind) in an open-addressing table. */
typedef struct names_tab {
    size_t *slot; /* name index + 1; 0 empty */
    size_t cap;
    tw_est_name *v;
    size_t n, vcap;
} names_tab;

static uint64_t hash_str(uint64_t h, const char *s)
{
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static const char *kind_of(const tw_event *e) { return e->kind && *e->kind ? e->kind : "kernel"; }

static tw_status names_grow(names_tab *t)
{
    size_t cap = t->cap ? 2 * t->cap : 1024;
    size_t *slot = calloc(cap, sizeof *slot);
    if (!slot) return tw_fail(TW_ENOMEM, "out of memory (names)");
    for (size_t i = 0; i < t->n; i++) {
        uint64_t h = hash_str(hash_str(1469598103934665603ull, t->v[i].name), t->v[i].kind);
        size_t k = h & (cap - 1);
        while (slot[k])
            k = (k + 1) & (cap - 1);
        slot[k] = i + 1;
    }
    free(t->slot);
    t->slot = slot;
    t->cap = cap;
    return TW_OK;
}

static tw_status names_intern(names_tab *t, const tw_event *e, uint32_t *id)
{
    if (2 * (t->n + 1) > t->cap && names_grow(t) != TW_OK) return TW_ENOMEM;
    const char *kind = kind_of(e);
    uint64_t h = hash_str(hash_str(1469598103934665603ull, e->name), kind);
    size_t k = h & (t->cap - 1);
    while (t->slot[k]) {
        tw_est_name *x = &t->v[t->slot[k] - 1];
        if (strcmp(x->name, e->name) == 0 && strcmp(x->kind, kind) == 0) {
            *id = (uint32_t)(t->slot[k] - 1);
            return TW_OK;
        }
        k = (k + 1) & (t->cap - 1);
    }
    if (t->n == t->vcap) {
        size_t cap = t->vcap ? 2 * t->vcap : 256;
        tw_est_name *v = realloc(t->v, cap * sizeof *v);
        if (!v) return tw_fail(TW_ENOMEM, "out of memory (names)");
        t->v = v;
        t->vcap = cap;
    }
    tw_est_name *x = &t->v[t->n];
    memset(x, 0, sizeof *x);
    x->name = e->name;
    x->kind = kind;
    x->group = -1;
    t->slot[k] = ++t->n;
    *id = (uint32_t)(t->n - 1);
    return TW_OK;
}

/* ---------------------------------------------------------------- the sweep */

/* Room in *v (of *cap elements of `size`) for one more after n: doubled
 * from `first`; false when out of memory. */
static bool room_for_one(void **v, size_t *cap, size_t n, size_t size, size_t first)
{
    if (n < *cap) return true;
    size_t c = *cap ? 2 * *cap : first;
    void *q = realloc(*v, c * size);
    if (!q) return false;
    *v = q;
    *cap = c;
    return true;
}

/* fmin and fmax, inline: the library's are calls, once or more per launch
 * and per piece on every pass. The same values (x86-64's: the second
 * operand of two equal ones, the other of a NaN). */
static inline double min2(double a, double b) { return isless(a, b) ? a : isnan(b) ? a : b; }
static inline double max2(double a, double b) { return isgreater(a, b) ? a : isnan(b) ? a : b; }

/* A running launch and its place in its class's spill. */
typedef struct held_launch {
    launch l;
    size_t pos;
} held_launch;

/* The sweep over one class's launches (each class against itself only) in
 * order of start, the running ones in a min-heap on their end: the
 * stretches of constant activity one after another, in memory that grows
 * with the launches running at once, not with all of them. */
typedef struct sweeper {
    const tw_spill *sp; /* the class's launches */
    tw_spill_reader rd; /* rd.pos: the next to start */
    double longest;     /* its longest launch */
    held_launch *heap;  /* running launches, by end */
    size_t nh, cap;
    double t; /* the time reached: the next stretch starts here */
    /* called with each launch as it ends (NULL: none) */
    tw_status (*ended)(void *ctx, const held_launch *h);
    void *ended_ctx;
} sweeper;

static tw_status sweeper_init(sweeper *s, const launches *ls, bool copies)
{
    memset(s, 0, sizeof *s);
    s->sp = &ls->cls[copies];
    s->longest = ls->longest[copies];
    s->t = -INFINITY;
    return tw_spill_reader_open(&s->rd, s->sp);
}

static void sweeper_free(sweeper *s)
{
    free(s->heap);
    tw_spill_reader_close(&s->rd);
}

/* The next launch to start (NULL: none left, or *st on a read error). */
static const launch *next_launch(sweeper *s, tw_status *st) { return tw_spill_peek(&s->rd, st); }

static double next_start(sweeper *s, tw_status *st)
{
    const launch *l = next_launch(s, st);
    return l ? l->t0 : INFINITY;
}

static double end_of(const sweeper *s, size_t k) { return s->heap[k].l.t1; }

static tw_status heap_push(sweeper *s, const launch *l, size_t pos)
{
    if (!room_for_one((void **)&s->heap, &s->cap, s->nh, sizeof *s->heap, 64))
        return tw_fail(TW_ENOMEM, "out of memory (running launches)");
    size_t k = s->nh++;
    s->heap[k] = (held_launch){*l, pos};
    while (k > 0 && end_of(s, (k - 1) / 2) > end_of(s, k)) {
        size_t up = (k - 1) / 2;
        held_launch v = s->heap[k];
        s->heap[k] = s->heap[up];
        s->heap[up] = v;
        k = up;
    }
    return TW_OK;
}

static void heap_pop(sweeper *s)
{
    s->heap[0] = s->heap[--s->nh];
    for (size_t k = 0;;) {
        size_t l = 2 * k + 1, m = k;
        if (l < s->nh && end_of(s, l) < end_of(s, m)) m = l;
        if (l + 1 < s->nh && end_of(s, l + 1) < end_of(s, m)) m = l + 1;
        if (m == k) break;
        held_launch v = s->heap[k];
        s->heap[k] = s->heap[m];
        s->heap[m] = v;
        k = m;
    }
}

/* The next stretch [*t0, *t1] of constant activity, the launches running in
 * it in s->heap[0 .. s->nh); *done at the end. Ends come before starts at
 * equal times. */
static tw_status sweep_next(sweeper *s, double *t0, double *t1, bool *done)
{
    tw_status st = TW_OK;
    for (;;) {
        double ts = next_start(s, &st), te = s->nh ? end_of(s, 0) : INFINITY, t = min2(ts, te);
        if (st != TW_OK) return st;
        if (isinf(t)) {
            *done = true;
            return TW_OK;
        }
        if (t > s->t && s->nh > 0) {
            *t0 = s->t;
            *t1 = s->t = t;
            *done = false;
            return TW_OK;
        }
        s->t = t;
        while (s->nh && end_of(s, 0) <= t) {
            if (s->ended && (st = s->ended(s->ended_ctx, &s->heap[0])) != TW_OK) return st;
            heap_pop(s);
        }
        for (const launch *l; (l = next_launch(s, &st)) && l->t0 <= t; s->rd.pos++)
            if ((st = heap_push(s, l, s->rd.pos)) != TW_OK) return st;
        if (st != TW_OK) return st;
    }
}

/* Launches that ran alone for all of their span, at least this many of a
 * name, give its duration alone. */
#define MIN_ALONE 3

/* The launches of one class as they end in rates()'s sweep, written back
 * with their time alone in order of place (a min-heap on it holds those
 * that ended before one started earlier), and counted into their name's
 * time alone in that order. */
#define ALONE_CHUNK 2048
typedef struct alone_out {
    launches *ls;
    tw_spill *sp;
    held_launch *done; /* min-heap on pos */
    size_t nd, cap;
    size_t next; /* the next place to write */
    launch chunk[ALONE_CHUNK];
    size_t nchunk; /* places [next - nchunk, next) */
} alone_out;

static tw_status alone_flush(alone_out *o)
{
    tw_status st = tw_spill_write(o->sp, o->next - o->nchunk, o->chunk, o->nchunk);
    o->nchunk = 0;
    return st;
}

static tw_status alone_ended(void *ctx, const held_launch *h)
{
    alone_out *o = ctx;
    if (!room_for_one((void **)&o->done, &o->cap, o->nd, sizeof *o->done, 64))
        return tw_fail(TW_ENOMEM, "out of memory (running launches)");
    size_t k = o->nd++;
    o->done[k] = *h;
    while (k > 0 && o->done[(k - 1) / 2].pos > o->done[k].pos) {
        held_launch v = o->done[k];
        o->done[k] = o->done[(k - 1) / 2];
        o->done[(k - 1) / 2] = v;
        k = (k - 1) / 2;
    }
    while (o->nd && o->done[0].pos == o->next) {
        const launch *l = &o->done[0].l;
        double D = l->t1 - l->t0;
        if (l->alone >= D * (1 - 1e-9)) {
            o->ls->alone_sum[l->name] += D;
            o->ls->alone_cnt[l->name]++;
        }
        o->chunk[o->nchunk++] = *l;
        o->next++;
        o->done[0] = o->done[--o->nd];
        for (size_t j = 0;;) {
            size_t a = 2 * j + 1, m = j;
            if (a < o->nd && o->done[a].pos < o->done[m].pos) m = a;
            if (a + 1 < o->nd && o->done[a + 1].pos < o->done[m].pos) m = a + 1;
            if (m == j) break;
            held_launch v = o->done[j];
            o->done[j] = o->done[m];
            o->done[m] = v;
            j = m;
        }
        if (o->nchunk == ALONE_CHUNK) {
            tw_status st = alone_flush(o);
            if (st != TW_OK) return st;
        }
    }
    return TW_OK;
}

/* Each launch's time alone (into its record's alone) and each name's
 * duration alone (alone_sum / alone_cnt), for rate_of.
 *
 * A launch does a fixed amount of work. Run alone it takes d_alone, its
 * name's mean duration over the launches that ran alone. Run beside others
 * it may take longer (on the H100, in two streams, an FMA kernel went from
 * 1.03 to 1.60 ms while overlapped, a DRAM stream kernel beside it from
 * 0.85 to 0.89 ms): its work, and the power that goes with it, is spread
 * over its span D, at the rate min(1, d_alone / D). Launches that overlap
 * add, each at its own rate. Against sharing the overlapped time equally
 * this halved the H100's errors in two streams and fitted the sample buffer
 * better (residual 13.9 -> 10.3 W rms; docs/methods.md).
 * A name with fewer than MIN_ALONE launches alone has no d_alone: its
 * launches count their time alone plus half of the rest. */
static tw_status rates(launches *ls, size_t nnames)
{
    ls->alone_sum = calloc(nnames ? nnames : 1, sizeof *ls->alone_sum);
    ls->alone_cnt = calloc(nnames ? nnames : 1, sizeof *ls->alone_cnt);
    alone_out *o = malloc(sizeof *o);
    tw_status st = ls->alone_sum && ls->alone_cnt && o ? TW_OK : tw_fail(TW_ENOMEM, "out of memory");
    for (int cls = 0; cls < 2 && st == TW_OK; cls++) {
        sweeper s;
        *o = (alone_out){.ls = ls, .sp = &ls->cls[cls]};
        st = sweeper_init(&s, ls, cls == 1);
        s.ended = alone_ended;
        s.ended_ctx = o;
        for (bool done = false; st == TW_OK;) {
            double a, b;
            st = sweep_next(&s, &a, &b, &done);
            if (st != TW_OK || done) break;
            if (s.nh == 1) s.heap[0].l.alone += b - a;
        }
        if (st == TW_OK) st = alone_flush(o);
        free(o->done);
        sweeper_free(&s);
    }
    free(o);
    return st;
}

/* A launch's work rate over its span (see rates()). */
static double rate_of(const launches *ls, const launch *l)
{
    double D = l->t1 - l->t0, alone = l->alone;
    if (alone >= D * (1 - 1e-9)) return 1;
    size_t cnt = ls->alone_cnt[l->name];
    return cnt >= MIN_ALONE ? fmin(1.0, ls->alone_sum[l->name] / (double)cnt / D) : (alone + 0.5 * (D - alone)) / D;
}

/* The sweep of both classes that makes the pieces (make_pieces), in order
 * of start: each class's stretches cut where the other class's begin and
 * end, so that a piece's tot counts every launch the counters' features see
 * running beside it, kernels and copies alike (a copy's DRAM traffic and a
 * kernel's beside it are in the same samples). */
typedef struct piece_sweep {
    const launches *ls;
    sweeper s[2]; /* kernels, copies */
    double a[2], b[2];
    double tot[2];         /* the rates of the class's seen launches running in its stretch */
    bool done[2], live[2]; /* live: a[k] .. b[k] holds a stretch not yet handed out to its end */
    double t, cut;         /* the cut being handed out: [t, cut) */
    double tot_all;        /* the seen launches' rates in it, both classes */
    int k;                 /* the class being handed out (2: none) */
    size_t at;             /* its next running launch */
} piece_sweep;

static double class_tot(const piece_sweep *p, int k)
{
    const launches *ls = p->ls;
    double tot = 0;
    for (size_t i = 0; i < p->s[k].nh; i++) {
        const launch *l = &p->s[k].heap[i].l;
        if (ls->seen[l->name]) tot += rate_of(ls, l);
    }
    return tot;
}

/* The next cut [p->t, p->cut) where the running launches of either class do
 * not change; false at the end. */
static tw_status next_cut(piece_sweep *p, bool *any)
{
    *any = false;
    for (int k = 0; k < 2; k++) {
        if (p->live[k] && p->b[k] <= p->t) p->live[k] = false;
        if (p->live[k] || p->done[k]) continue;
        tw_status st = sweep_next(&p->s[k], &p->a[k], &p->b[k], &p->done[k]);
        if (st != TW_OK) return st;
        if (!p->done[k]) {
            p->live[k] = true;
            p->tot[k] = class_tot(p, k);
        }
    }
    double start = INFINITY;
    for (int k = 0; k < 2; k++)
        if (p->live[k]) start = fmin(start, fmax(p->a[k], p->t));
    if (isinf(start)) return TW_OK;
    double cut = INFINITY;
    p->tot_all = 0;
    for (int k = 0; k < 2; k++) {
        if (!p->live[k]) continue;
        double from = fmax(p->a[k], p->t);
        if (from <= start) {
            cut = fmin(cut, p->b[k]);
            p->tot_all += p->tot[k];
        } else {
            cut = fmin(cut, from);
        }
    }
    p->t = start;
    p->cut = cut;
    p->k = 0;
    p->at = 0;
    *any = true;
    return TW_OK;
}

/* The next piece into *q; *got false at the end. */
static tw_status sweep_piece(piece_sweep *p, piece *q, bool *got)
{
    for (;;) {
        for (; p->k < 2; p->k++, p->at = 0) {
            int k = p->k;
            if (!p->live[k] || fmax(p->a[k], p->t) > p->t || p->at >= p->s[k].nh) continue;
            const launch *l = &p->s[k].heap[p->at++].l;
            *q = (piece){p->t, p->cut, rate_of(p->ls, l), p->tot_all, l->name, l->ev};
            *got = true;
            return TW_OK;
        }
        if (p->k == 2) p->t = p->cut;
        tw_status st = next_cut(p, got);
        if (st != TW_OK || !*got) return st;
    }
}

/* Every piece into ls->pieces, once (after rates(): a piece's share is its
 * launch's rate): a pass over them is then a read of the spill, not a
 * sweep with its heaps (a third of a pass's time). */
static tw_status make_pieces(launches *ls)
{
    piece_sweep p;
    memset(&p, 0, sizeof p);
    p.ls = ls;
    p.t = p.cut = -INFINITY;
    p.k = 2;
    tw_status st = sweeper_init(&p.s[0], ls, false);
    if (st == TW_OK) st = sweeper_init(&p.s[1], ls, true);
    if (st == TW_OK) st = tw_spill_open(&ls->pieces, sizeof(piece));
    for (bool got = true; st == TW_OK;) {
        piece q;
        if ((st = sweep_piece(&p, &q, &got)) != TW_OK || !got) break;
        st = tw_spill_append(&ls->pieces, &q);
    }
    if (st == TW_OK) st = tw_spill_flush(&ls->pieces);
    sweeper_free(&p.s[0]);
    sweeper_free(&p.s[1]);
    return st;
}

/* The pieces in order, read from their spill on each pass. */
typedef struct piece_src {
    const tw_spill *sp; /* the launches' pieces, or the lingering names' (lpieces) */
    tw_spill_reader rd;
    double longest; /* the longest launch of either class: no piece is longer */
} piece_src;

static tw_status piece_src_on(piece_src *p, const launches *ls, const tw_spill *sp)
{
    p->sp = sp;
    p->longest = fmax(ls->longest[0], ls->longest[1]);
    return tw_spill_reader_open(&p->rd, sp);
}

static tw_status piece_src_open(piece_src *p, const launches *ls) { return piece_src_on(p, ls, &ls->pieces); }

static void piece_src_close(piece_src *p) { tw_spill_reader_close(&p->rd); }

/* The next piece into *q; *got false at the end. */
static tw_status piece_next(piece_src *p, piece *q, bool *got)
{
    tw_status st = TW_OK;
    const piece *x = tw_spill_peek(&p->rd, &st);
    *got = x != NULL;
    if (x) {
        *q = *x;
        p->rd.pos++;
    }
    return st;
}

/* Every piece that can reach time t or later from here on: from the first
 * that starts at or after t less the longest launch (pieces_for's windows
 * jump ahead). */
static tw_status piece_src_seek(piece_src *p, double t)
{
    size_t lo = p->rd.pos, hi = p->sp->n;
    double from = t - p->longest;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        piece q;
        tw_status st = tw_spill_read(p->sp, mid, &q, 1);
        if (st != TW_OK) return st;
        if (q.t0 < from)
            lo = mid + 1;
        else
            hi = mid;
    }
    p->rd.pos = lo;
    return TW_OK;
}

/* True when the next piece is so far behind t that those up to t - longest cannot reach t. */
static bool behind(piece_src *p, double t, tw_status *st)
{
    const piece *x = tw_spill_peek(&p->rd, st);
    return x && x->t0 < t - p->longest;
}

/* The pieces a window can overlap, for windows that come in order of
 * start: the ones that end before a window's start are dropped, as no later
 * window reaches them. */
/* The lingering power of each linger column at time t (linger_at): S[l] =
 * sum over its pieces ended by t of their activity x e^-(t - end)/tau, read
 * from a reader of its own as the windows' starts advance; pend: pieces
 * begun by t that run past it. */
typedef struct linger_trk {
    piece_src src;
    bool open;
    double t;
    double *S;
    piece *pend;
    size_t np, pcap;
} linger_trk;

typedef struct piece_win {
    piece_src src;
    piece *buf;
    size_t n, cap;
    bool end;
    linger_trk lg;
} piece_win;

static tw_status piece_win_open(piece_win *w, const launches *ls)
{
    memset(w, 0, sizeof *w);
    return piece_src_open(&w->src, ls);
}

static void piece_win_close(piece_win *w)
{
    piece_src_close(&w->src);
    free(w->buf);
    if (w->lg.open) piece_src_close(&w->lg.src);
    free(w->lg.S);
    free(w->lg.pend);
}

/* Into w->buf: every piece that ends after a and starts before b (and some that start after b). */
static tw_status pieces_for(piece_win *w, double a, double b)
{
    size_t k = 0;
    for (size_t i = 0; i < w->n; i++)
        if (w->buf[i].t1 > a) w->buf[k++] = w->buf[i];
    w->n = k;
    tw_status st = TW_OK;
    if (w->n == 0 && !w->end && behind(&w->src, a, &st)) st = piece_src_seek(&w->src, a); /* a gap in the windows */
    while (st == TW_OK && !w->end && (w->n == 0 || w->buf[w->n - 1].t0 < b)) {
        piece q;
        bool got;
        if ((st = piece_next(&w->src, &q, &got)) != TW_OK) break;
        if (!got) {
            w->end = true;
            break;
        }
        if (q.t1 <= a) continue;
        if (!room_for_one((void **)&w->buf, &w->cap, w->n, sizeof *w->buf, 256))
            return tw_fail(TW_ENOMEM, "out of memory (activity pieces)");
        w->buf[w->n++] = q;
    }
    return st;
}

/* The share of the activities' span (from the first start to the last end,
 * inside [t0, t1]) that no launch covers: the gaps in which the baseline is
 * seen under the activity. first and last: the activities' span. */
static tw_status idle_share(const launches *ls, double first, double last, double t0, double t1, double *share)
{
    *share = 1.0;
    t0 = fmax(t0, first);
    t1 = fmin(t1, last);
    if (!(t1 > t0)) return TW_OK;
    tw_spill_reader r[2];
    tw_status st = tw_spill_reader_open(&r[0], &ls->cls[0]);
    if (st == TW_OK && (st = tw_spill_reader_open(&r[1], &ls->cls[1])) != TW_OK) tw_spill_reader_close(&r[0]);
    if (st != TW_OK) return st;
    double busy = 0, end = t0;
    for (;;) { /* both classes, merged by start */
        const launch *k = tw_spill_peek(&r[0], &st), *m = st == TW_OK ? tw_spill_peek(&r[1], &st) : NULL;
        if (st != TW_OK || (!k && !m)) break;
        bool kernel = !m || (k && k->t0 <= m->t0);
        const launch *l = kernel ? k : m;
        double a = max2(l->t0, end), b = min2(l->t1, t1);
        if (b > a) busy += b - a;
        end = max2(end, min2(l->t1, t1));
        r[kernel ? 0 : 1].pos++;
    }
    tw_spill_reader_close(&r[0]);
    tw_spill_reader_close(&r[1]);
    *share = fmax(0.0, 1.0 - busy / (t1 - t0));
    return st;
}

static int launch_by_start(const void *a, const void *b)
{
    const launch *x = a, *y = b;
    if (x->t0 != y->t0) return x->t0 < y->t0 ? -1 : 1;
    return x->ev < y->ev ? -1 : x->ev > y->ev;
}

/* The launches as collect() spilled them (each name's class by its kind,
 * in the feed's order) back in the feed's order (their event numbers
 * increase with it) into raw, the class spills emptied. */
static tw_status unclass(launches *ls, tw_spill *raw)
{
    tw_spill_reader r[2] = {{0}, {0}};
    tw_status st = tw_spill_open(raw, sizeof(launch));
    if (st == TW_OK) st = tw_spill_reader_open(&r[0], &ls->cls[0]);
    if (st == TW_OK) st = tw_spill_reader_open(&r[1], &ls->cls[1]);
    while (st == TW_OK) {
        const launch *k = tw_spill_peek(&r[0], &st), *m = st == TW_OK ? tw_spill_peek(&r[1], &st) : NULL;
        if (st != TW_OK || (!k && !m)) break;
        int from = !k || (m && m->ev < k->ev);
        st = tw_spill_append(raw, from ? m : k);
        r[from].pos++;
    }
    tw_spill_reader_close(&r[0]);
    tw_spill_reader_close(&r[1]);
    tw_spill_close(&ls->cls[0]);
    tw_spill_close(&ls->cls[1]);
    return st;
}

/* The launches collected into their classes' spills by column (col: each
 * name's; copy: per column, a copy or memset), each in order of start.
 * collect() spilled them by name and its kind in the feed's order: where
 * the feed came by start and no name was pooled (a column per name) they
 * are so already (a pass of reading and writing them all saved); else
 * they are put back in the feed's order (unclass) and classed again by
 * column (sorted here where the feed was not). */
static tw_status by_class(launches *ls, bool sorted, size_t nnames, size_t ncols, const uint32_t *col, const bool *copy)
{
    tw_status st = tw_spill_flush(&ls->cls[0]);
    if (st == TW_OK) st = tw_spill_flush(&ls->cls[1]);
    ls->n = ls->cls[0].n + ls->cls[1].n;
    if (st != TW_OK || (sorted && nnames == ncols)) return st;
    tw_spill raw_spill = {.fd = -1}, *raw = &raw_spill;
    st = unclass(ls, raw);
    if (st == TW_OK) st = tw_spill_open(&ls->cls[0], sizeof(launch));
    if (st == TW_OK) st = tw_spill_open(&ls->cls[1], sizeof(launch));
    if (st == TW_OK) st = tw_spill_flush(raw);
    if (st != TW_OK) {
        tw_spill_close(raw);
        return st;
    }
    launch *all = NULL; /* an unsorted feed (an event set in memory, out of order): sorted in memory */
    if (!sorted) {
        if (!(all = malloc((raw->n ? raw->n : 1) * sizeof *all))) return tw_fail(TW_ENOMEM, "out of memory");
        if ((st = tw_spill_read(raw, 0, all, raw->n)) == TW_OK) qsort(all, raw->n, sizeof *all, launch_by_start);
    }
    tw_spill_reader r = {0};
    if (st == TW_OK) st = tw_spill_reader_open(&r, raw);
    ls->n = raw->n;
    ls->longest[0] = ls->longest[1] = 0;
    for (size_t i = 0; st == TW_OK && i < raw->n; i++) {
        launch l;
        if (all) {
            l = all[i];
        } else {
            const launch *q = tw_spill_peek(&r, &st);
            if (!q) break;
            l = *q;
            r.pos++;
        }
        l.name = col[l.name];
        int k = copy[l.name];
        ls->longest[k] = fmax(ls->longest[k], l.t1 - l.t0);
        st = tw_spill_append(&ls->cls[k], &l);
    }
    tw_spill_reader_close(&r);
    tw_spill_close(raw);
    free(all);
    if (st == TW_OK) st = tw_spill_flush(&ls->cls[0]);
    if (st == TW_OK) st = tw_spill_flush(&ls->cls[1]);
    return st;
}
/* ---------------------------------------------------------------- the design */

/* What every pass over the windows needs. */
typedef struct design {
    size_t K, N, p; /* knots, name columns, K + N + M */
    double T0, T1, dk;
    double shift;       /* the activities' clock against the readings': windows are moved back by it */
    const launches *ls; /* its pieces made again on every pass (piece_win) */
    /* a sparse row */
    double *x;     /* dense scratch, p */
    size_t *touch; /* nonzero entries */
    size_t nt;
    bool *mark;
    /* the activity counters (M = 0: none) */
    size_t M;              /* their feature columns, after the names': K + N + m */
    size_t ns;             /* samples */
    const double *s0, *s1; /* their spans */
    /* each sample's values (stride nv; feature m is value fidx[m]) and the share of it some kernel covers:
     * a feature's level while kernels run is their quotient (sample_level), made as it is read, not kept */
    const double *v;
    size_t nv;
    const size_t *fidx;
    const double *busy;
    const bool *ccol;   /* per name column: its power from the counters */
    const double *gbar; /* per name column x M: its mean level where samples cover it (NULL: not yet) */
    /* lingering power: NL columns after the features' (K + N + M + l) */
    size_t NL;
    const uint32_t *lcol; /* per name column: its linger column l, or LINGER_NONE */
    double ltau;          /* the linger's time constant (s) */
    /* PM sampling's own power: R (0, or 1 + TW_EST_PM_EDGES) columns after the lingers' (K + N + M + NL),
     * the GPU's extra power while sampling is enabled, over the nw windows w0 .. w1 (activities'
     * clock), then at each of their edges (pm_edge_span) */
    size_t R, nw;
    const double *w0, *w1;
} design;

static void row_add(design *d, size_t j, double v)
{
    if (v == 0) return;
    if (!d->mark[j]) {
        d->mark[j] = true;
        d->touch[d->nt++] = j;
        d->x[j] = 0;
    }
    d->x[j] += v;
}

static void row_clear(design *d)
{
    for (size_t i = 0; i < d->nt; i++)
        d->mark[d->touch[i]] = false;
    d->nt = 0;
}

/* Feature m's level in sample k while kernels run: the sample's mean over
 * the share of it its kernels cover, at most its peak (a kernel cannot keep
 * more than every SM or the whole DRAM busy). */
static double sample_level(const design *d, size_t k, size_t m)
{
    double busy = d->busy[k], v = d->v[k * d->nv + d->fidx[m]];
    return busy > 0 ? fmin(1.0, fmax(0.0, v / fmin(1.0, busy))) : 0;
}

/* The first sample that ends after a. */
static size_t first_sample_after(const design *d, double a)
{
    size_t lo = 0, hi = d->ns;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (d->s1[mid] <= a)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The counters' features integrated over [a, b] of a piece of column col,
 * each instant weighted as window o weighs it (NULL: plainly), into acc[m];
 * the time no sample covers counts the column's own mean level (d->gbar,
 * once known). Returns the weight the samples cover. */
static double counter_integral(const design *d, const tw_obs *o, double tau_s, double a, double b, uint32_t col,
                               double *acc)
{
    for (size_t m = 0; m < d->M; m++)
        acc[m] = 0;
    if (!(b > a)) return 0;
    double covered = 0;
    for (size_t k = first_sample_after(d, a); k < d->ns && d->s0[k] < b; k++) {
        double x = fmax(a, d->s0[k]), y = fmin(b, d->s1[k]);
        if (!(y > x)) continue;
        double w = o ? tw_obs_weight(o, tau_s, x, y) : y - x;
        covered += w;
        for (size_t m = 0; m < d->M; m++)
            acc[m] += w * sample_level(d, k, m);
    }
    double total = o ? tw_obs_weight(o, tau_s, a, b) : b - a;
    if (d->gbar && total > covered)
        for (size_t m = 0; m < d->M; m++)
            acc[m] += (total - covered) * d->gbar[(size_t)col * d->M + m];
    return covered;
}

/* The linger tracker of pw advanced to time t (windows' starts, in order;
 * a t behind it keeps it where it is), over the lingering names' pieces
 * alone (a pass reads them twice: the windows' own pieces and these). A jump of more than LINGER_SPAN time
 * constants starts it over from the pieces that can still linger at t, so a
 * pass over a sample of windows (the clock-offset search) does not read every
 * piece in between. */
static tw_status linger_at(piece_win *pw, const design *d, double t)
{
    linger_trk *g = &pw->lg;
    tw_status st = TW_OK;
    if (!g->S) {
        if (!(g->S = calloc(d->NL, sizeof *g->S))) return tw_fail(TW_ENOMEM, "out of memory");
        if ((st = piece_src_on(&g->src, d->ls, &d->ls->lpieces)) != TW_OK) return st;
        g->open = true;
        g->t = -INFINITY;
    }
    if (!(t > g->t)) return TW_OK;
    double tau = d->ltau;
    if (t - g->t > LINGER_SPAN * tau) {
        memset(g->S, 0, d->NL * sizeof *g->S);
        g->np = 0;
        if ((st = piece_src_seek(&g->src, t - LINGER_SPAN * tau)) != TW_OK) return st;
    } else {
        double f = exp(-(t - g->t) / tau);
        for (size_t l = 0; l < d->NL; l++)
            g->S[l] *= f;
    }
    size_t k = 0;
    for (size_t i = 0; i < g->np; i++) {
        const piece *q = &g->pend[i];
        if (q->t1 <= t)
            g->S[d->lcol[q->name]] += q->share * (q->t1 - q->t0) * exp(-(t - q->t1) / tau);
        else
            g->pend[k++] = *q;
    }
    g->np = k;
    for (const piece *x; (x = tw_spill_peek(&g->src.rd, &st)) != NULL && x->t0 <= t;) {
        piece q = *x;
        g->src.rd.pos++;
        if (!(q.t1 > q.t0)) continue; /* (lpieces: lingering names' pieces only) */
        if (q.t1 <= t) {
            g->S[d->lcol[q.name]] += q.share * (q.t1 - q.t0) * exp(-(t - q.t1) / tau);
            continue;
        }
        if (!room_for_one((void **)&g->pend, &g->pcap, g->np, sizeof *g->pend, 16))
            return tw_fail(TW_ENOMEM, "out of memory");
        g->pend[g->np++] = q;
    }
    g->t = t;
    return st;
}

/* Each linger column's mean over window o (its pieces, those the window
 * overlaps already in pw->buf): a launch's activity A ended at e lingers at
 * A e^-(t - e)/tau / tau, so over (t0, t1] the pieces ended by t0 give
 * S(t0) (1 - e^-len/tau) and one ended at e inside it A (1 - e^-(t1 - e)/tau).
 * Taken evenly over the window (an rc window weighs its end more; the linger
 * changes little over its ~20 ms). */
static tw_status linger_row(design *d, const tw_obs *o, piece_win *pw)
{
    tw_status st = linger_at(pw, d, o->t0_s);
    if (st != TW_OK) return st;
    size_t base = d->K + d->N + d->M;
    double len = o->t1_s - o->t0_s, tau = d->ltau, whole = 1.0 - exp(-len / tau);
    for (size_t l = 0; l < d->NL; l++)
        if (pw->lg.S[l] > 0) row_add(d, base + l, pw->lg.S[l] * whole / len);
    for (size_t i = 0; i < pw->n; i++) {
        const piece *q = &pw->buf[i];
        if (d->lcol[q->name] == LINGER_NONE || !(q->t1 > o->t0_s) || q->t1 > o->t1_s) continue;
        double A = q->share * (q->t1 - q->t0);
        row_add(d, base + d->lcol[q->name], A * (1.0 - exp(-(o->t1_s - q->t1) / tau)) / len);
    }
    return TW_OK;
}

/* PM sampling's columns: the share of window o (weighted as it weighs its
 * instants) that sampling was enabled in, as recorded, and that each of
 * the windows' edges covers. */
static void pm_row(design *d, const tw_obs *o, double tau_s, double norm)
{
    const double lead = TW_EST_PM_LEAD * TW_EST_PM_EDGE_S;
    size_t lo = pm_first_window(d->w1, d->nw, o->t0_s), col = d->K + d->N + d->M + d->NL;
    double len = o->t1_s - o->t0_s, w = 0, we[TW_EST_PM_EDGES] = {0};
    for (size_t k = lo; k < d->nw && d->w0[k] - lead < o->t1_s; k++) {
        double a = max2(d->w0[k], o->t0_s), b = min2(d->w1[k], o->t1_s);
        if (b > a) w += tw_obs_weight_in(o, tau_s, norm, a, b);
        for (size_t r = 0; r < TW_EST_PM_EDGES; r++) {
            double ea, eb;
            if (!pm_edge_span(d->w0, d->w1, d->nw, k, r, &ea, &eb)) continue;
            a = max2(ea, o->t0_s);
            b = min2(eb, o->t1_s);
            if (b > a) we[r] += tw_obs_weight_in(o, tau_s, norm, a, b);
        }
    }
    row_add(d, col, w / len);
    for (size_t r = 0; r < TW_EST_PM_EDGES; r++)
        row_add(d, col + 1 + r, we[r] / len);
}

/* The row of window o: the baseline's hat functions' means over it and each
 * name's activity in it (weighted as the window weighs its instants).
 * Windows come in order of start, through one piece_win per pass. */
static tw_status make_row(design *d, const tw_obs *ow, double tau_s, piece_win *pw)
{
    tw_obs shifted = *ow;
    shifted.t0_s -= d->shift;
    shifted.t1_s -= d->shift;
    const tw_obs *o = &shifted;
    row_clear(d);
    double len = o->t1_s - o->t0_s;
    /* baseline: linear between knots, so its mean over a part of a knot
     * span is its value at that part's middle */
    double a = fmax(o->t0_s, d->T0), b = fmin(o->t1_s, d->T1);
    size_t k0 = d->K > 1 ? (size_t)fmax(0.0, floor((a - d->T0) / d->dk)) : 0;
    for (size_t k = k0; k + 1 < d->K || (d->K == 1 && k == 0); k++) {
        double lo = d->K > 1 ? d->T0 + (double)k * d->dk : a, hi = d->K > 1 ? lo + d->dk : b;
        double s = fmax(a, lo), e = fmin(b, hi);
        if (e > s) {
            double w = (e - s) / len;
            if (d->K == 1) {
                row_add(d, 0, w);
            } else {
                double u = (0.5 * (s + e) - lo) / d->dk;
                row_add(d, k, w * (1 - u));
                row_add(d, k + 1, w * u);
            }
        }
        if (hi >= b || d->K == 1) break;
    }
    tw_status st = pieces_for(pw, o->t0_s, o->t1_s);
    double norm = tw_obs_norm(o, tau_s); /* once for the window's pieces */
    for (size_t i = 0; st == TW_OK && i < pw->n; i++) {
        const piece *q = &pw->buf[i];
        if (!(q->t0 < o->t1_s)) continue;
        double lo = max2(q->t0, o->t0_s), hi = min2(q->t1, o->t1_s), w = tw_obs_weight_in(o, tau_s, norm, lo, hi);
        if (w > 0) row_add(d, d->K + q->name, q->share * w / len);
        if (w > 0 && d->M && d->ccol[q->name] && q->tot > 0) { /* its share of the counters' power */
            double acc[TW_EST_MAX_FEATURES];
            counter_integral(d, o, tau_s, lo, hi, q->name, acc);
            for (size_t m = 0; m < d->M; m++)
                row_add(d, d->K + d->N + m, q->share / q->tot * acc[m] / len);
        }
    }
    if (st == TW_OK && d->NL) st = linger_row(d, o, pw);
    if (st == TW_OK && d->R) pm_row(d, o, tau_s, norm);
    return st;
}

/* A window's place in its reading's (an index of them, for windows out of
 * order: half the memory of a size_t, which a run of hours holds one of
 * per window of its finest reading twice). */
typedef uint32_t win_idx;

/* The windows of one reading inside the fit span, in order of start. */
typedef struct rd {
    const tw_est_reading *r;
    win_idx *idx; /* windows used (NULL: the windows lo .. lo + n - 1, already in order; see pick_windows) */
    size_t lo, n;
    double gain;
    double *G, *c;    /* its normal equations, weights = window length */
    double *a;        /* sum over its windows of length x row: the design of its total energy */
    double ysum;      /* its total energy (sum of length x power) */
    double edge_sd_j; /* where its first and last windows' edges lie, in J (total_constraint) */
    double yy, sumw;
    double s2; /* noise density squared */
    bool skip; /* left out of the combined equations (the shift search) */
    double rms, lag1;
} rd;

/* A reading's rows as accumulate made them (each window's entries in the
 * order make_row touched them), kept in a spill for residuals: the last
 * pass's residuals are then a read of them, not the pieces' pass again with
 * each window's weights (the two exponentials of every piece in an rc
 * window) made anew. Valid while the shift (and the counters' levels) they
 * were made at hold. */
typedef struct row_entry {
    double x;
    uint32_t col;  /* UINT32_MAX: none (a window that touches no column) */
    uint32_t last; /* the window's last entry */
} row_entry;

/* At most this many entries per piece are kept (16 bytes each, a piece 40):
 * a run of many names per window would otherwise keep more on disk than its
 * pieces, and read more than a pass over them. */
#define KEEP_ROWS_PER_PIECE 2

typedef struct kept_rows {
    tw_spill sp;
    bool open, valid;
    double shift;
    const double *gbar;
} kept_rows;

static void kept_rows_close(kept_rows *k)
{
    if (k->open) tw_spill_close(&k->sp);
    k->open = k->valid = false;
}

/* The design's current row (make_row's) onto the kept rows. */
static tw_status keep_row(kept_rows *k, const design *d)
{
    tw_status st = TW_OK;
    if (d->nt == 0) return tw_spill_append(&k->sp, &(row_entry){0.0, UINT32_MAX, 1});
    for (size_t a = 0; a < d->nt && st == TW_OK; a++)
        st = tw_spill_append(&k->sp, &(row_entry){d->x[d->touch[a]], (uint32_t)d->touch[a], a + 1 == d->nt});
    return st;
}

static int idx_by_t0_ctx_cmp(const tw_obs *o, size_t a, size_t b)
{
    if (o[a].t0_s != o[b].t0_s) return o[a].t0_s < o[b].t0_s ? -1 : 1;
    return a < b ? -1 : a > b;
}

/* insertion sort: windows come nearly in order */
static void sort_by_t0(const tw_obs *o, win_idx *idx, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        win_idx v = idx[i];
        size_t j = i;
        while (j > 0 && idx_by_t0_ctx_cmp(o, idx[j - 1], v) > 0) {
            idx[j] = idx[j - 1];
            j--;
        }
        idx[j] = v;
    }
}

static bool usable(const tw_obs *o)
{
    return isfinite(o->t0_s) && isfinite(o->t1_s) && isfinite(o->power_w) && o->t1_s > o->t0_s;
}

/* The usable windows of obs[0 .. n) inside [T0, T1] in order of start (ties
 * by index). A reading's windows usually come so already, one after another:
 * then no index is held (*idx = NULL, the windows *lo .. *lo + *count - 1),
 * so that the memory for them does not grow with the run's length; else an
 * index of them, sorted. */
static tw_status pick_windows(const tw_obs *obs, size_t n, double T0, double T1, win_idx **idx, size_t *lo,
                              size_t *count)
{
    size_t first = 0, last = 0, k = 0;
    bool ordered = true;
    for (size_t i = 0; i < n; i++) {
        const tw_obs *o = &obs[i];
        if (!usable(o) || o->t0_s < T0 - EDGE_EPS_S || o->t1_s > T1 + EDGE_EPS_S) continue;
        if (k == 0)
            first = i;
        else if (o->t0_s < obs[last].t0_s)
            ordered = false;
        last = i;
        k++;
    }
    *idx = NULL;
    *lo = first;
    *count = k;
    if (k == 0 || (ordered && last - first + 1 == k)) return TW_OK;
    if (last >= UINT32_MAX) return tw_fail(TW_EINVAL, "%zu windows of one reading: too many", n);
    if (!(*idx = malloc(k * sizeof **idx))) return tw_fail(TW_ENOMEM, "out of memory");
    k = 0;
    for (size_t i = first; i <= last; i++) {
        const tw_obs *o = &obs[i];
        if (usable(o) && o->t0_s >= T0 - EDGE_EPS_S && o->t1_s <= T1 + EDGE_EPS_S) (*idx)[k++] = (win_idx)i;
    }
    sort_by_t0(obs, *idx, k);
    return TW_OK;
}

/* Window i of a pick_windows list. */
static inline size_t window_at(const win_idx *idx, size_t lo, size_t i) { return idx ? idx[i] : lo + i; }

/* The reading with the most windows (the first of equals): the finest in time. */
static size_t finest_reading(const tw_est_reading *rs, size_t nrs)
{
    size_t best = 0;
    for (size_t r = 1; r < nrs; r++)
        if (rs[r].n > rs[best].n) best = r;
    return best;
}

/* Energy of a reading's windows over [a, b], each window's by its overlap;
 * NaN when the windows do not reach both ends. */
static double reading_energy(const tw_est_reading *r, double a, double b)
{
    double e = 0, first = INFINITY, last = -INFINITY;
    for (size_t i = 0; i < r->n; i++) {
        const tw_obs *o = &r->obs[i];
        if (!usable(o)) continue;
        first = fmin(first, o->t0_s);
        last = fmax(last, o->t1_s);
        double lo = fmax(a, o->t0_s), hi = fmin(b, o->t1_s);
        if (hi > lo) e += o->power_w * (hi - lo);
    }
    return first <= a + EDGE_EPS_S && last >= b - EDGE_EPS_S ? e : NAN;
}

/* A row's columns in order: few, and mostly in order already (knots, then
 * names as their pieces come), by insertion; many (a counter's long window
 * touches most names), the marked columns read in order, without a sort. */
static void touched_in_order(design *d)
{
    size_t *v = d->touch, n = d->nt;
    if (n > 64) {
        size_t k = 0;
        for (size_t j = 0; j < d->p; j++)
            if (d->mark[j]) v[k++] = j;
        return;
    }
    for (size_t i = 1; i < n; i++) {
        size_t x = v[i], j = i;
        for (; j > 0 && v[j - 1] > x; j--)
            v[j] = v[j - 1];
        v[j] = x;
    }
}

/* Windows' rows held to be added into the upper triangle of the normal
 * equations (mirrored once accumulate is done) together, a tile of G's rows
 * at a time: G of 500 names is 2 MB, more than a core's own cache, and
 * added into row by row most of accumulate's time went to waiting on its
 * scattered adds; a tile stays in the cache while every row of the block
 * is added into it. Each element of G still gets its windows' terms one by
 * one in their order, so the sums are the same to the bit. */
#define BLOCK_ROWS 32
#define TILE_BYTES (256 * 1024) /* of G's rows, per tile */
typedef struct row_block {
    size_t n;                     /* rows held */
    size_t start[BLOCK_ROWS + 1]; /* row r's entries: [start[r], start[r + 1]) */
    double w[BLOCK_ROWS];         /* each row's window weight */
    bool dense_block;             /* its rows are dense vectors (rows that touch most columns) */
    uint32_t *col;                /* the entries' columns, each row's in increasing order */
    double *val;                  /* their values */
    double *xd;                   /* a dense row's vector (row r's at r * p), whose products vectorise */
} row_block;

static tw_status block_init(row_block *b, size_t p)
{
    memset(b, 0, sizeof *b);
    b->col = malloc(BLOCK_ROWS * p * sizeof *b->col);
    b->val = malloc(BLOCK_ROWS * p * sizeof *b->val);
    b->xd = malloc(BLOCK_ROWS * p * sizeof *b->xd);
    return b->col && b->val && b->xd ? TW_OK : tw_fail(TW_ENOMEM, "out of memory (normal equations)");
}

static void block_free(row_block *b)
{
    free(b->col);
    free(b->val);
    free(b->xd);
}

/* A block of dense rows into the rows [i0, i1) of R->G: each element's
 * terms added in the rows' order as row by row (a column a row does not
 * touch adds a zero), but eight columns of a G row at a time held in
 * registers across the block's rows, whose products vectorise. */
static void block_tile_dense(const row_block *b, rd *R, size_t p, size_t i0, size_t i1)
{
    for (size_t i = i0; i < i1; i++) {
        double *row = R->G + i * p, xa[BLOCK_ROWS];
        bool any = false;
        for (size_t r = 0; r < b->n; r++) {
            xa[r] = b->xd[r * p + i] * b->w[r];
            any |= xa[r] != 0;
        }
        if (!any) continue; /* a column no row of the block touches (most knots'): its G row gets only zeros */
        size_t j = i;
        for (; j + 8 <= p; j += 8) {
            double acc[8];
            for (int k = 0; k < 8; k++)
                acc[k] = row[j + k];
            for (size_t r = 0; r < b->n; r++) {
                const double *x = b->xd + r * p + j;
                for (int k = 0; k < 8; k++)
                    acc[k] += xa[r] * x[k];
            }
            for (int k = 0; k < 8; k++)
                row[j + k] = acc[k];
        }
        for (; j < p; j++)
            for (size_t r = 0; r < b->n; r++)
                row[j] += xa[r] * b->xd[r * p + j];
    }
}

/* xa x val[k] added into row[col[k]], k < n: the products four at a time
 * (they vectorise: the row is neither the columns nor the values), the
 * adds one by one. */
static void scatter_add(double *restrict row, const uint32_t *restrict col, const double *restrict val, size_t n,
                        double xa)
{
    size_t k = 0;
    for (; k + 4 <= n; k += 4) {
        double v[4];
        for (int q = 0; q < 4; q++)
            v[q] = xa * val[k + q];
        for (int q = 0; q < 4; q++)
            row[col[k + q]] += v[q];
    }
    for (; k < n; k++)
        row[col[k]] += xa * val[k];
}

/* A block of sparse rows into the rows [i0, i1) of R->G; cur[r]: row r's
 * first entry at or after column i0, moved past those before i1. */
static void block_tile(const row_block *b, rd *R, size_t p, size_t i1, size_t *cur)
{
    for (size_t r = 0; r < b->n; r++) {
        size_t a = cur[r], end = b->start[r + 1];
        const uint32_t *col = b->col;
        const double *val = b->val, w = b->w[r];
        for (; a < end && col[a] < i1; a++)
            scatter_add(R->G + (size_t)col[a] * p, col + a, val + a, end - a, val[a] * w);
        cur[r] = a;
    }
}

static void block_flush(row_block *b, rd *R, size_t p)
{
    size_t tile = TILE_BYTES / (p * sizeof *R->G), cur[BLOCK_ROWS];
    if (tile == 0) tile = 1;
    memcpy(cur, b->start, b->n * sizeof *cur);
    for (size_t i0 = 0; i0 < p; i0 += tile) {
        size_t i1 = i0 + tile < p ? i0 + tile : p;
        if (b->dense_block)
            block_tile_dense(b, R, p, i0, i1);
        else
            block_tile(b, R, p, i1, cur);
    }
    b->n = 0;
    b->start[0] = 0;
}

/* The design's current row (weight w, value y) into the block (flushed
 * when full), and at once into R->c and R->a. */
static void block_add(row_block *b, design *d, rd *R, double w, double y)
{
    size_t p = d->p;
    bool dense = 2 * d->nt > p;
    if (b->n > 0 && dense != b->dense_block) block_flush(b, R, p); /* a block's rows all of one kind */
    size_t r = b->n, at = b->start[r];
    b->dense_block = dense;
    touched_in_order(d);
    for (size_t k = 0; k < d->nt; k++) {
        size_t ja = d->touch[k];
        double x = d->x[ja], xa = x * w;
        b->col[at + k] = (uint32_t)ja;
        b->val[at + k] = x;
        R->c[ja] += xa * y;
        R->a[ja] += xa;
    }
    b->w[r] = w;
    if (dense) {
        double *xd = b->xd + r * p;
        memset(xd, 0, p * sizeof *xd);
        for (size_t k = 0; k < d->nt; k++)
            xd[d->touch[k]] = d->x[d->touch[k]];
    }
    b->start[r + 1] = at + d->nt;
    if (++b->n == BLOCK_ROWS) block_flush(b, R, p);
}

static tw_status accumulate(design *d, rd *R, const volatile int *cancel, kept_rows *keep)
{
    size_t p = d->p;
    if (!R->G) R->G = malloc(p * p * sizeof *R->G);
    if (!R->c) R->c = malloc(p * sizeof *R->c);
    if (!R->a) R->a = malloc(p * sizeof *R->a);
    if (!R->G || !R->c || !R->a) return tw_fail(TW_ENOMEM, "out of memory (normal equations of %zu unknowns)", p);
    memset(R->G, 0, p * p * sizeof *R->G);
    memset(R->c, 0, p * sizeof *R->c);
    memset(R->a, 0, p * sizeof *R->a);
    R->yy = R->sumw = R->ysum = 0;
    double first_j = NAN, last_j = NAN;
    row_block blk;
    piece_win pw = {0};
    tw_status st = block_init(&blk, p);
    if (st == TW_OK) st = piece_win_open(&pw, d->ls);
    if (keep) {
        kept_rows_close(keep);
        if (st == TW_OK && (st = tw_spill_open(&keep->sp, sizeof(row_entry))) == TW_OK) keep->open = true;
    }
    for (size_t i = 0; i < R->n && st == TW_OK; i++) {
        if (cancel && *cancel && (i & 4095) == 0) st = tw_fail(TW_EINTERRUPTED, "interrupted");
        const tw_obs *o = &R->r->obs[window_at(R->idx, R->lo, i)];
        if (st == TW_OK) st = make_row(d, o, R->r->tau_s, &pw);
        if (st == TW_OK && keep && keep->open) st = keep_row(keep, d); /* before block_add puts the row in order */
        if (keep && keep->open && keep->sp.n > KEEP_ROWS_PER_PIECE * (d->ls->pieces.n + 1024))
            kept_rows_close(keep); /* more entries than the pieces are worth: residuals make the rows again */
        if (st != TW_OK) break;
        double w = o->t1_s - o->t0_s, y = o->power_w / R->gain;
        block_add(&blk, d, R, w, y);
        R->yy += w * y * y;
        R->sumw += w;
        R->ysum += w * y;
        if (isnan(first_j)) first_j = fmin(w, COUNTER_UPDATE_S) * y;
        last_j = fmin(w, COUNTER_UPDATE_S) * y;
    }
    if (st == TW_OK) block_flush(&blk, R, p);
    if (keep && keep->open && st == TW_OK && (st = tw_spill_flush(&keep->sp)) == TW_OK)
        *keep = (kept_rows){keep->sp, true, true, d->shift, d->gbar};
    /* an edge lies within the counter's update period of where it is placed
     * (or its window, if shorter): uniform, sd period / sqrt 12, times the power there */
    R->edge_sd_j = R->n ? hypot(first_j, last_j) / sqrt(12.0) : 0;
    piece_win_close(&pw);
    block_free(&blk);
    for (size_t i = 0; i < p; i++)
        for (size_t j = 0; j < i; j++)
            R->G[i * p + j] = R->G[j * p + i];
    return st;
}

/* Residual statistics of one reading at the solution beta (columns of the
 * full design): rms, noise density and neighbour correlation. */
/* Window i's fit at beta from the kept rows (the reader at its first entry). */
static tw_status kept_fit(tw_spill_reader *in, const double *beta, double *fit)
{
    tw_status st = TW_OK;
    *fit = 0;
    for (const row_entry *e; (e = tw_spill_peek(in, &st)) != NULL; in->pos++) {
        if (e->col != UINT32_MAX) *fit += e->x * beta[e->col];
        if (e->last) {
            in->pos++;
            return TW_OK;
        }
    }
    return st != TW_OK ? st : tw_fail(TW_EIO, "temporary file: the rows end early");
}

static tw_status residuals(design *d, rd *R, const double *beta, const kept_rows *kept)
{
    bool from_kept = kept && kept->valid && kept->shift == d->shift && kept->gbar == d->gbar;
    piece_win pw;
    tw_spill_reader kr = {0};
    tw_status st = from_kept ? tw_spill_reader_open(&kr, &kept->sp) : piece_win_open(&pw, d->ls);
    double ss = 0, sw = 0, prev = NAN, num = 0, den = 0;
    for (size_t i = 0; st == TW_OK && i < R->n; i++) {
        const tw_obs *o = &R->r->obs[window_at(R->idx, R->lo, i)];
        double fit = 0;
        if (from_kept) {
            if ((st = kept_fit(&kr, beta, &fit)) != TW_OK) break;
        } else {
            if ((st = make_row(d, o, R->r->tau_s, &pw)) != TW_OK) break;
            for (size_t a = 0; a < d->nt; a++)
                fit += d->x[d->touch[a]] * beta[d->touch[a]];
        }
        double r = o->power_w / R->gain - fit, w = o->t1_s - o->t0_s;
        ss += r * r;
        sw += w * r * r;
        if (!isnan(prev)) num += r * prev;
        den += r * r;
        prev = r;
    }
    if (from_kept)
        tw_spill_reader_close(&kr);
    else
        piece_win_close(&pw);
    R->rms = R->n ? sqrt(ss / (double)R->n) : NAN;
    R->s2 = R->n ? sw / (double)R->n : NAN;
    R->lag1 = den > 0 ? num / den : 0;
    return st;
}

/* ---------------------------------------------------------------- groups */

static size_t uf_find(size_t *parent, size_t i)
{
    while (parent[i] != i)
        i = parent[i] = parent[parent[i]];
    return i;
}

static void uf_union(size_t *parent, size_t a, size_t b)
{
    a = uf_find(parent, a);
    b = uf_find(parent, b);
    if (a != b) parent[a < b ? b : a] = a < b ? a : b;
}

/* ---------------------------------------------------------------- the fit */

typedef struct fit_state {
    design d;
    rd *R;
    size_t nr;
    size_t U;        /* units: groups of names */
    double prior_w;  /* sd of the prior on every unit's power (mean 0); 0: none */
    double upper_w;  /* bound on every unit's power (the GPU's power limit less its quiet level); INFINITY: none */
    double base_w;   /* the prior's level for every baseline knot (NaN: no prior) */
    bool *at_upper;  /* per unit: held at upper_w */
    size_t *unit;    /* name -> unit */
    double *Gu, *cu; /* reduced normal equations, (K + U)^2 */
    double *beta_u;  /* solution */
    bool *bound;
    double *var_u; /* variance of each coefficient */
    /* the activity counters: units U0 .. U0 + M - 1 are their features' */
    size_t U0, M;
    double *prior_u; /* per unit: sd of the prior on it (0: none); NULL: prior_w for every unit */
    double *mean_u;  /* per unit: the prior's mean (NULL: 0 for every unit) */
    bool *held_u;    /* per unit: held at mean_u (a prior HELD_WEIGHT times its data's weight; NULL: none) */
    bool *signed_u;  /* per unit: may be negative (a name's own term beside its counters) */
    bool *apart_u;   /* per name unit (U0): its own term apart from the counters' model (APART_Z); NULL: none */
    double *cov_f;   /* (U - U0) x (K + U): each feature's and linger's covariance with every coefficient
                        (variances()) */
    /* lingering power: units UL0 .. U - 1, after the features' */
    size_t UL0;
    size_t *lunit;   /* per name unit (U0): its linger unit, or SIZE_MAX */
    size_t UR;       /* PM sampling's own power: its unit (between the features' and the lingers'), or SIZE_MAX;
                        its edges' the TW_EST_PM_EDGES after it */
    double linger_w; /* sd of the prior on each linger term */
    bool prior_own;  /* prior_u made by linger_priors (the names' entries follow prior_w) */
    double inflate;  /* the error's inflation variances() was last given */
} fit_state;

/* The energy counter's total over its windows as one more equation, of
 * the counter's own precision: kernels + baseline = counter within its
 * resolution (issue 15). Its windows alone weigh as little as any reading's
 * (a few tens of 0.5 s windows against a thousand of the buffer), so a
 * model whose shape misfits the buffer (bursts of 35 ms that ramp, which a
 * constant power per name cannot follow) missed the counter's total by
 * 2-4 % (results/h100x2/mpi-before-s25). The total's error is where its
 * first and last updates lie, each within the update period (or its
 * window, if shorter) of where it is placed (edge_sd_j): held harder (a
 * hundredth of that), a short run on the fake NVML, whose counter's updates
 * the polls place less well, moved a 0.3 s kernel's energy by 2-4 %
 * (test_session_kernels run_file). */
static void total_constraint(fit_state *f)
{
    size_t K = f->d.K, p = f->d.p, q = K + f->U;
    for (size_t r = 0; r < f->nr; r++) {
        const rd *R = &f->R[r];
        if (!R->r->reference || R->skip || R->n == 0 || !R->a || !(R->edge_sd_j > 0)) continue;
        double sd = fmax(R->edge_sd_j, MIN_TOTAL_SD_J), w = 1.0 / (sd * sd);
        for (size_t i = 0; i < p; i++) {
            if (R->a[i] == 0) continue;
            size_t ui = i < K ? i : K + f->unit[i - K];
            f->cu[ui] += w * R->a[i] * R->ysum;
            for (size_t j = 0; j < p; j++) {
                if (R->a[j] == 0) continue;
                size_t uj = j < K ? j : K + f->unit[j - K];
                f->Gu[ui * q + uj] += w * R->a[i] * R->a[j];
            }
        }
    }
}

/* Combined and reduced normal equations with weights 1 / s2 per reading
 * and the curvature penalty on the knots. */
static tw_status reduce(fit_state *f, double smooth)
{
    size_t K = f->d.K, p = f->d.p, q = K + f->U;
    free(f->Gu);
    free(f->cu);
    f->Gu = calloc(q * q, sizeof *f->Gu);
    f->cu = calloc(q, sizeof *f->cu);
    if (!f->Gu || !f->cu) return tw_fail(TW_ENOMEM, "out of memory (normal equations)");
    double wsum = 0;
    for (size_t r = 0; r < f->nr; r++) {
        const rd *R = &f->R[r];
        if (!(R->s2 > 0) || R->n == 0 || R->skip) continue;
        double w = 1.0 / R->s2;
        wsum += w * R->sumw;
        for (size_t i = 0; i < p; i++) {
            size_t ui = i < K ? i : K + f->unit[i - K];
            f->cu[ui] += w * R->c[i];
            for (size_t j = 0; j < p; j++) {
                double g = R->G[i * p + j];
                if (g == 0) continue;
                size_t uj = j < K ? j : K + f->unit[j - K];
                f->Gu[ui * q + uj] += w * g;
            }
        }
    }
    total_constraint(f);
    /* a weak prior on each unit's power, N(0, prior_w^2): no effect on a
     * name the windows determine, but one they barely see stays within what
     * a GPU can draw instead of wandering to absurd values */
    for (size_t u = 0; u < f->U; u++) {
        double sd = f->prior_u ? f->prior_u[u] : f->prior_w;
        if (f->held_u && f->held_u[u]) { /* whatever the data's scale (exact data weigh without bound) */
            double w = HELD_WEIGHT * fmax(f->Gu[(K + u) * q + K + u], 1.0);
            f->Gu[(K + u) * q + K + u] += w;
            f->cu[K + u] += w * (f->mean_u ? f->mean_u[u] : 0);
            continue;
        }
        if (!(sd > 0)) continue;
        f->Gu[(K + u) * q + K + u] += 1.0 / (sd * sd);
        if (f->mean_u) f->cu[K + u] += f->mean_u[u] / (sd * sd);
    }
    if (isfinite(f->base_w)) /* each knot N(active idle, BASELINE_PRIOR_SD_W^2) */
        for (size_t k = 0; k < K; k++) {
            f->Gu[k * q + k] += 1.0 / (BASELINE_PRIOR_SD_W * BASELINE_PRIOR_SD_W);
            f->cu[k] += f->base_w / (BASELINE_PRIOR_SD_W * BASELINE_PRIOR_SD_W);
        }
    if (K >= 3) { /* lambda sum (b[k-1] - 2 b[k] + b[k+1])^2 */
        double lambda = smooth * wsum / (double)(K - 1);
        for (size_t k = 1; k + 1 < K; k++) {
            size_t ix[3] = {k - 1, k, k + 1};
            double co[3] = {1, -2, 1};
            for (int a = 0; a < 3; a++)
                for (int b = 0; b < 3; b++)
                    f->Gu[ix[a] * q + ix[b]] += lambda * co[a] * co[b];
        }
    }
    return TW_OK;
}

static tw_status solve(fit_state *f)
{
    size_t K = f->d.K, q = K + f->U;
    bool *nonneg = calloc(q, sizeof *nonneg);
    free(f->beta_u);
    free(f->bound);
    free(f->at_upper);
    f->beta_u = calloc(q, sizeof *f->beta_u);
    f->bound = calloc(q, sizeof *f->bound);
    f->at_upper = calloc(q, sizeof *f->at_upper);
    double *upper = malloc(q * sizeof *upper);
    if (!nonneg || !f->beta_u || !f->bound || !f->at_upper || !upper) {
        free(nonneg);
        free(upper);
        return tw_fail(TW_ENOMEM, "out of memory");
    }
    for (size_t j = 0; j < q; j++) {
        bool extra = j >= K + f->U0; /* a feature's coefficient or a linger term */
        nonneg[j] = j >= K && !(f->signed_u && f->signed_u[j - K]);
        upper[j] = j >= K && !extra ? f->upper_w : INFINITY;
    }
    tw_status st = tw_nnls_gram(f->Gu, f->cu, q, nonneg, upper, f->beta_u, f->bound, f->at_upper);
    for (size_t j = 0; j < q; j++) /* a unit held at either bound: its variance as a held one's */
        f->bound[j] = f->bound[j] || f->at_upper[j];
    free(nonneg);
    free(upper);
    return st;
}

/* The solution in the full design's columns (each name gets its unit's power). */
static void expand(const fit_state *f, double *beta)
{
    size_t K = f->d.K;
    for (size_t k = 0; k < K; k++)
        beta[k] = f->beta_u[k];
    for (size_t j = 0; j < f->d.N + f->d.M + f->d.NL + f->d.R; j++)
        beta[K + j] = f->beta_u[K + f->unit[j]];
}

/* The variance of a unit held at zero or at the power bound with that
 * constraint freed and the free coefficients refitted with it: inflate over
 * the Schur complement G_jj - g' G_FF^-1 g (g: its column in the free block
 * F). Its 1 / G_jj alone, the variance were every other coefficient known
 * exactly, is too small where it trades energy with a neighbour, and the
 * one-sided bound made of it narrower than the data allow. L: F's factor,
 * scaled to a unit diagonal (idx: F's coefficients); v, x: m doubles each.
 * The prior on each power keeps the complement at least 1 / prior_w^2. */
static double freed_variance(const fit_state *f, size_t j, const size_t *idx, size_t m, const double *L, double *v,
                             double *x, double inflate)
{
    size_t q = f->d.K + f->U;
    double gjj = f->Gu[j * q + j];
    for (size_t a = 0; a < m; a++)
        x[a] = v[a] = f->Gu[idx[a] * q + j] / sqrt(f->Gu[idx[a] * q + idx[a]] * gjj);
    tw_cholesky_solve(L, m, x);
    double explained = 0; /* g' G_FF^-1 g over G_jj */
    for (size_t a = 0; a < m; a++)
        explained += v[a] * x[a];
    double least = f->prior_w > 0 ? 1.0 / (f->prior_w * f->prior_w * gjj) : 1e-12;
    return inflate / (gjj * fmax(1.0 - explained, least));
}

/* Each counter feature's and linger term's covariance with every
 * coefficient (f->cov_f): its column of the free block's inverse, from that
 * block's factor L (scaled to a unit diagonal; idx: its coefficients); one
 * held at zero has its variance alone. A name's energy by the counters sums
 * several coefficients, whose errors correlate (its own term against the
 * features it trades with), as does its own power with its linger. */
static tw_status extra_covariances(fit_state *f, const size_t *idx, size_t m, const double *L, double inflate)
{
    size_t q = f->d.K + f->U, ne = f->U - f->U0;
    free(f->cov_f);
    f->cov_f = calloc(ne * q, sizeof *f->cov_f);
    double *x = malloc((m ? m : 1) * sizeof *x);
    if (!f->cov_f || !x) {
        free(x);
        return tw_fail(TW_ENOMEM, "out of memory");
    }
    for (size_t fm = 0; fm < ne; fm++) {
        size_t j = f->d.K + f->U0 + fm, a = 0;
        while (a < m && idx[a] != j)
            a++;
        if (a == m) {
            f->cov_f[fm * q + j] = f->var_u[j];
            continue;
        }
        memset(x, 0, m * sizeof *x);
        x[a] = 1;
        tw_cholesky_solve(L, m, x);
        for (size_t b = 0; b < m; b++)
            f->cov_f[fm * q + idx[b]] = inflate * x[b] / sqrt(f->Gu[idx[a] * q + idx[a]] * f->Gu[idx[b] * q + idx[b]]);
    }
    free(x);
    return TW_OK;
}

/* The Cholesky factor (lower, in L) of the normal matrix's block over the
 * coefficients idx[0..m-1], scaled to a unit diagonal as the solver does,
 * with the smallest ridge (0, then 1e-10 up to 1e-4) that lets it factor;
 * false where none does. */
static bool scaled_factor(const fit_state *f, const size_t *idx, size_t m, double *L)
{
    size_t q = f->d.K + f->U;
    for (double ridge = 0; ridge <= 1e-4; ridge = ridge > 0 ? ridge * 100 : 1e-10) {
        for (size_t a = 0; a < m; a++)
            for (size_t b = 0; b <= a; b++)
                L[a * m + b] =
                    f->Gu[idx[a] * q + idx[b]] / sqrt(f->Gu[idx[a] * q + idx[a]] * f->Gu[idx[b] * q + idx[b]]) +
                    (a == b ? ridge : 0);
        if (tw_cholesky(L, m)) return true;
    }
    return false;
}

/* Variance of each coefficient: the free block's inverse (unit weights are
 * 1 / noise density^2, so no further scale); a coefficient held at zero or
 * at the power bound gets its variance with the constraint freed
 * (freed_variance), its own 1 / G_jj where the block has no factor. */
static tw_status variances(fit_state *f, double inflate)
{
    size_t q = f->d.K + f->U, m = 0;
    size_t *idx = calloc(q ? q : 1, sizeof *idx); /* zeroed: the factor reads only the m set below */
    double *sub = malloc(q * q * sizeof *sub), *dg = malloc(q * sizeof *dg), *work = malloc(q * sizeof *work);
    free(f->var_u);
    f->var_u = malloc(q * sizeof *f->var_u);
    f->inflate = inflate;
    tw_status st = TW_OK;
    if (!idx || !sub || !dg || !work || !f->var_u) {
        st = tw_fail(TW_ENOMEM, "out of memory");
        goto out;
    }
    for (size_t j = 0; j < q; j++) {
        double g = f->Gu[j * q + j];
        f->var_u[j] = g > 0 ? inflate / g : INFINITY;
        if (!f->bound[j] && g > 0) idx[m++] = j;
    }
    if (scaled_factor(f, idx, m, sub)) {
        tw_cholesky_inverse_diag(sub, m, dg, work);
        for (size_t a = 0; a < m; a++)
            f->var_u[idx[a]] = inflate * dg[a] / f->Gu[idx[a] * q + idx[a]];
        for (size_t j = 0; j < q; j++)
            if (f->bound[j] && f->Gu[j * q + j] > 0) f->var_u[j] = freed_variance(f, j, idx, m, sub, dg, work, inflate);
        if (f->U > f->U0) st = extra_covariances(f, idx, m, sub, inflate);
    }
out:
    free(idx);
    free(sub);
    free(dg);
    free(work);
    return st;
}

/* ---------------------------------------------------------------- entry */

/* An NVTX range as the replay gave it (its texts are the feed's). */
typedef struct seen_range {
    const char *name, *domain;
    double t0, t1;
    int64_t tid;
    int32_t depth;
    size_t ev;
} seen_range;

typedef struct ctx {
    tw_estimate *e;
    names_tab names;
    uint8_t *cls; /* per name: its class while collecting (0 kernels, 1 copies and memsets) */
    size_t ncls;  /* the names cls holds */
    size_t nl;
    bool sorted;              /* the feed came in order of start */
    double first_t0, last_t1; /* the launches' span */
    double last_start;        /* the last launch's start so far (collect) */
    launches ls;              /* by name and its kind's class (collect), then by column's (by_class) */
    seen_range *rng;          /* the ranges, copied from the events */
    size_t nrng, rcap;
    size_t nev;    /* events replayed (their indices: 0 .. nev) */
    bool *copy;    /* per column: a copy or memset (copy engines) */
    bool *seen;    /* per column: its activity in the counters' features (seen_by_counters) */
    win_idx *fine; /* index_finest (pick_windows: NULL for fine_lo .. fine_lo + nfine - 1) */
    size_t fine_lo, nfine;
    double fine_longest;
    fit_state f;
    double *beta;      /* full design */
    double shift_curv; /* the finest reading's chi-square's curvature in the shift (1/s^2); 0: not searched */
    double shift_sd;   /* the shift's standard error (s); 0: not known */
    bool shift_searched;
    double *dbeta_u; /* per unit (K + U): d power / d shift (W/s) */
    /* the activity counters (counters_prepare) */
    const tw_est_counters *cn;        /* NULL: none used */
    size_t ncs, cs0;                  /* their samples inside the fit span: cs0 .. cs0 + ncs - 1 */
    size_t fidx[TW_EST_MAX_FEATURES]; /* the features used: their indices in cn */
    double *cbusy;                    /* ncs: the share of each sample some launch the counters see covers */
    bool *ccol;                       /* per name column: its power from the counters */
    double *gbar;                     /* per name column x M: its mean level where the samples cover it */
    double *cint;                     /* per name column x M: its share of each feature's integral at the solution */
    double *peff;                     /* per name column: its power at the solution, counters' part included */
    kept_rows *rows;                  /* per reading: its rows as accumulate made them (residuals) */
    uint32_t *lcol;                   /* per name column: its linger column (d.lcol) */
    bool *pinned;                     /* per name column: in a group the user asked for (a pattern) */
} ctx;

static void ctx_free(ctx *c)
{
    free(c->names.slot);
    free(c->names.v);
    free(c->cls);
    launches_free(&c->ls);
    free(c->rng);
    free(c->copy);
    free(c->seen);
    free(c->pinned);
    free(c->fine);
    for (size_t r = 0; r < c->f.nr; r++) {
        free(c->f.R[r].idx);
        free(c->f.R[r].G);
        free(c->f.R[r].c);
        free(c->f.R[r].a);
    }
    for (size_t r = 0; c->rows && r < c->f.nr; r++)
        kept_rows_close(&c->rows[r]);
    free(c->rows);
    free(c->f.R);
    free(c->f.unit);
    free(c->f.Gu);
    free(c->f.cu);
    free(c->f.beta_u);
    free(c->f.bound);
    free(c->f.at_upper);
    free(c->f.var_u);
    free(c->f.prior_u);
    free(c->f.mean_u);
    free(c->f.held_u);
    free(c->f.signed_u);
    free(c->f.apart_u);
    free(c->f.cov_f);
    free(c->f.lunit);
    free(c->lcol);
    free(c->cbusy);
    free(c->ccol);
    free(c->gbar);
    free(c->cint);
    free(c->peff);
    free(c->dbeta_u);
    free(c->f.d.x);
    free(c->f.d.touch);
    free(c->f.d.mark);
    free(c->beta);
}

/* ---------------------------------------------------------------- passes */

/* The caller may let the readings' windows' pages go (tw_est_config's windows_idle). */
static void windows_idle(const tw_est_config *cfg)
{
    if (cfg->windows_idle) cfg->windows_idle(cfg->windows_ctx);
}

static tw_status fit_once(fit_state *f, double smooth, double *beta)
{
    tw_status st = reduce(f, smooth);
    if (st == TW_OK) st = solve(f);
    if (st == TW_OK) expand(f, beta);
    return st;
}

/* Offers y to a max-heap h of at most k values: it keeps the k smallest
 * offered, the largest of them at h[0]. */
static void heap_offer(double *h, size_t *n, size_t k, double y)
{
    size_t i;
    if (*n < k) {
        for (i = (*n)++; i > 0 && h[(i - 1) / 2] < y; i = (i - 1) / 2)
            h[i] = h[(i - 1) / 2];
    } else if (y < h[0]) {
        for (i = 0;;) {
            size_t c = 2 * i + 1;
            if (c >= k) break;
            if (c + 1 < k && h[c + 1] > h[c]) c++;
            if (!(h[c] > y)) break;
            h[i] = h[c];
            i = c;
        }
    } else
        return;
    h[i] = y;
}

/* The prior's scale: how far above its quiet level the finest reading went
 * (its 99.5th percentile window over its 5th; a percentile, as a lag's
 * correction makes single windows overshoot), at least MIN_PRIOR_W. Not a
 * cap: a kernel shorter than a window draws more than the window shows. */
/* The finest reading's quiet level (5th percentile of its windows) and
 * its top (99.5th), in the reference's units. False without windows.
 * The values at those ranks of the sorted windows, found with two heaps of
 * the few lowest and highest (not a sorted copy of every window, whose
 * memory would grow with the run's length). */
static bool reading_levels(const rd *R, double *low, double *high)
{
    if (R->n == 0) return false;
    size_t klo = R->n / 20 + 1, khi = R->n / 200 + 1, nlo = 0, nhi = 0;
    double *lo = malloc(klo * sizeof *lo), *hi = malloc(khi * sizeof *hi);
    if (!lo || !hi) {
        free(lo);
        free(hi);
        return false;
    }
    for (size_t i = 0; i < R->n; i++) {
        double v = R->r->obs[window_at(R->idx, R->lo, i)].power_w / R->gain;
        heap_offer(lo, &nlo, klo, v);
        heap_offer(hi, &nhi, khi, -v); /* the khi largest, as the smallest of -v */
    }
    *low = lo[0];   /* sorted[n / 20] */
    *high = -hi[0]; /* sorted[n - 1 - n / 200] */
    free(lo);
    free(hi);
    return true;
}

static double prior_scale(const rd *R)
{
    double low, high;
    if (!reading_levels(R, &low, &high)) return 0;
    return fmax(MIN_PRIOR_W, high - low);
}

/* No name draws more above the baseline than the GPU's power limit less the
 * reading's quiet level (the baseline cannot be lower): a bound that only a
 * misfit reaches (on real programs, unbounded fits gave GEMM kernels of an
 * H100 (700 W) 800-1000 W above its 120 W baseline). The limit holds a ~1 s
 * average, and bursts of bf16 products do read 850-910 W in the sample
 * buffer for tens of milliseconds (results/h100x2/mpi-before-s25, rank 1),
 * but a bound at the reading's own top instead let misfits through on JAX
 * (an 8-byte memcpy at 767 W, GEMMs at 805 W above the baseline,
 * results/h100/realapps of this session's batch): such names are held at
 * the limit and reported unresolved, and the counter's total (total_constraint)
 * keeps the GPU's energy right. INFINITY without a limit. */
static double upper_bound_w(const rd *R, double limit_w, double active_idle_w)
{
    double low, high;
    if (!(limit_w > 0) || !isfinite(limit_w) || !reading_levels(R, &low, &high)) return INFINITY;
    /* a GPU busy from start to end has no quiet windows: its 5th percentile is
     * the loaded level (594 W for GEMMs back to back on an H100, a bound of
     * 106 W), so the profile's active idle, where known, is the quiet level's floor */
    if (active_idle_w > 0 && isfinite(active_idle_w)) low = fmin(low, active_idle_w);
    return fmax(limit_w - low, 1.0);
}

/* Weighted residual sum of squares of one reading at beta (full design),
 * from its normal equations: y'Wy - 2 beta'c + beta'G beta. */
static double rss_of(const design *d, const rd *R, const double *beta)
{
    size_t p = d->p;
    double s = R->yy;
    for (size_t i = 0; i < p; i++) {
        if (beta[i] == 0) continue;
        s -= 2 * beta[i] * R->c[i];
        double g = 0;
        for (size_t j = 0; j < p; j++)
            g += R->G[i * p + j] * beta[j];
        s += beta[i] * g;
    }
    return s;
}

/* The offset between the activities' clock (CUPTI's) and the readings'
 * (the driver's, through the profile's delays) that fits the finest reading
 * best: a 1 ms grid over +-SHIFT_MAX_S, then a 0.25 ms one around the best.
 * A shift of the kernels against the power moves energy between neighbours
 * (a short kernel after a long one takes its tail), so it is fitted, not
 * assumed. Leaves d->shift at the best; the other readings are not re-read. */
/* The residuals' variance underestimates the noise's by (N - p) / N when
 * the fit spends p free unknowns on N windows: with nearly as many names as
 * windows (500 names of microsecond kernels over 10 s) the residuals are
 * small because the names absorbed the noise, and standard errors taken
 * from them were 2.3 times too small. Returns N / (N - p), with a warning
 * when the windows barely outnumber the unknowns. */
static double dof_factor(const fit_state *f, tw_estimate *e)
{
    size_t N = 0, p = f->d.K;
    for (size_t r = 0; r < f->nr; r++)
        if (!f->R[r].skip) N += f->R[r].n;
    for (size_t u = 0; u < f->U; u++)
        if (!f->bound[f->d.K + u]) p++;
    if (N <= p + MIN_SPARE_WINDOWS) {
        warn(e,
             "%zu windows for %zu unknowns: the readings' noise cannot be told from the fit, so every standard "
             "error is at least %.0f times its residuals' (record longer, or group names)",
             N, p, sqrt(MAX_DOF_FACTOR));
        return MAX_DOF_FACTOR;
    }
    return fmin(MAX_DOF_FACTOR, (double)N / (double)(N - p));
}

/* The windows the clock-offset search fits: the finest reading's, at most
 * MAX_SHIFT_WINDOWS of them in SHIFT_BLOCKS runs spread over the fit span,
 * so that the search's ~30 passes cost what a few thousand windows' launches
 * do, not the run's. Own normal equations; the reading's stay as they are. */
static tw_status shift_sample(const rd *F, rd *S)
{
    *S = *F;
    S->G = S->c = S->a = NULL;
    S->n = F->n <= MAX_SHIFT_WINDOWS ? F->n : MAX_SHIFT_WINDOWS / SHIFT_BLOCKS * SHIFT_BLOCKS;
    S->idx = NULL;
    if (S->n == F->n && !F->idx) return TW_OK; /* the same run of windows */
    if (!(S->idx = malloc((S->n ? S->n : 1) * sizeof *S->idx))) return tw_fail(TW_ENOMEM, "out of memory");
    if (S->n == F->n) {
        memcpy(S->idx, F->idx, F->n * sizeof *S->idx);
        return TW_OK;
    }
    size_t per = S->n / SHIFT_BLOCKS;
    for (size_t b = 0; b < SHIFT_BLOCKS; b++) {
        size_t from = (F->n - per) * b / (SHIFT_BLOCKS - 1);
        for (size_t i = 0; i < per; i++)
            S->idx[b * per + i] = (win_idx)window_at(F->idx, F->lo, from + i);
    }
    return TW_OK;
}

/* The curvature a of the least-squares parabola a (x - x0)^2 + b (x - x0) + c
 * through n points (0 when it opens downwards or the points cannot say). */
static double parabola_curvature(const double *x, const double *y, size_t n, double x0)
{
    if (n < 3 || !isfinite(y[0])) return 0;
    double S[5] = {0}, T[3] = {0}; /* sums of u^k and y u^k */
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(y[i])) return 0;
        double u = x[i] - x0, uk = 1;
        for (int k = 0; k < 5; k++) {
            S[k] += uk;
            if (k < 3) T[k] += y[i] * uk;
            uk *= u;
        }
    }
    /* normal equations for (c, b, a) in the basis 1, u, u^2 */
    double M[3][4] = {{S[0], S[1], S[2], T[0]}, {S[1], S[2], S[3], T[1]}, {S[2], S[3], S[4], T[2]}};
    for (int i = 0; i < 3; i++) {
        int piv = i;
        for (int r = i + 1; r < 3; r++)
            if (fabs(M[r][i]) > fabs(M[piv][i])) piv = r;
        if (fabs(M[piv][i]) < 1e-300) return 0;
        for (int k = 0; k < 4; k++) {
            double t = M[i][k];
            M[i][k] = M[piv][k];
            M[piv][k] = t;
        }
        for (int r = 0; r < 3; r++) {
            if (r == i) continue;
            double f = M[r][i] / M[i][i];
            for (int k = i; k < 4; k++)
                M[r][k] -= f * M[i][k];
        }
    }
    double a = M[2][3] / M[2][2];
    return a > 0 && isfinite(a) ? a : 0;
}

static tw_status find_shift(ctx *c, size_t fine, double smooth)
{
    design *d = &c->f.d;
    rd *F = &c->f.R[fine], whole = *F, S;
    tw_status st = shift_sample(&whole, &S);
    if (st != TW_OK) return st;
    *F = S; /* the search fits the sample in the reading's place */
    for (size_t r = 0; r < c->f.nr; r++)
        c->f.R[r].skip = r != fine;
    double best = 0, best_rss = INFINITY;
    double fx[8], fy[8]; /* the fine grid's points, for the curvature */
    size_t nf = 0;
    for (int stage = 0; stage < 2 && st == TW_OK; stage++) {
        double step = stage == 0 ? 1e-3 : SHIFT_GRID_S, from = stage == 0 ? -SHIFT_MAX_S : best - 3 * SHIFT_GRID_S;
        int n = stage == 0 ? (int)lround(2 * SHIFT_MAX_S / step) : 6;
        if (stage == 1) {
            fx[nf] = best;
            fy[nf++] = best_rss;
        }
        for (int k = 0; k <= n && st == TW_OK; k++) {
            double sh = from + k * step;
            if (stage == 1 && fabs(sh - best) < 1e-9) continue;
            d->shift = sh;
            st = accumulate(d, F, NULL, NULL);
            if (st == TW_OK) st = fit_once(&c->f, smooth, c->beta);
            double rss = st == TW_OK ? rss_of(d, F, c->beta) : INFINITY;
            if (stage == 1 && nf < 8) {
                fx[nf] = sh;
                fy[nf++] = rss;
            }
            if (rss < best_rss) {
                best_rss = rss;
                best = sh;
            }
        }
    }
    /* the chi-square of the sample: the whole reading's curves as much more as it has windows */
    c->shift_curv = st == TW_OK && F->s2 > 0 && F->n > 0
                        ? parabola_curvature(fx, fy, nf, best) / F->s2 * ((double)whole.n / (double)F->n)
                        : 0;
    for (size_t r = 0; r < c->f.nr; r++)
        c->f.R[r].skip = false;
    free(F->idx);
    free(F->G);
    free(F->c);
    free(F->a);
    *F = whole;
    d->shift = best;
    return st;
}

/* ---------------------------------------------------------------- timing */

/* How each unit's power moves with the clock offset: refits at the offset
 * plus and minus its standard error, then the fit at the offset again. */
static tw_status sensitivity(ctx *c, size_t nrs, double smooth, const volatile int *cancel)
{
    design *d = &c->f.d;
    size_t q = d->K + c->f.U;
    double s0 = d->shift, h = c->shift_sd;
    double *side = malloc(2 * q * sizeof *side);
    free(c->dbeta_u);
    c->dbeta_u = calloc(q, sizeof *c->dbeta_u);
    tw_status st = side && c->dbeta_u ? TW_OK : tw_fail(TW_ENOMEM, "out of memory");
    for (int k = 0; k < 3 && st == TW_OK; k++) {
        d->shift = k == 0 ? s0 + h : k == 1 ? s0 - h : s0;
        for (size_t r = 0; r < nrs && st == TW_OK; r++)
            st = accumulate(d, &c->f.R[r], cancel, NULL);
        if (st == TW_OK) st = fit_once(&c->f, smooth, c->beta);
        if (st == TW_OK && k < 2) memcpy(side + (size_t)k * q, c->f.beta_u, q * sizeof *side);
    }
    d->shift = s0;
    for (size_t j = 0; st == TW_OK && j < q; j++)
        c->dbeta_u[j] = (side[j] - side[q + j]) / (2 * h);
    free(side);
    return st;
}

/* The clock offset's standard error from the curvature of the finest
 * reading's chi-square (inflated as the powers' errors are) and each unit's
 * sensitivity to it. Names in a fixed order (a training step) are told
 * apart only by where each falls in the sensor's windows, so their split
 * moves with the offset: that share of their error is added to each. */
static tw_status timing(ctx *c, size_t nrs, double smooth, double inflate, const volatile int *cancel)
{
    if (!c->shift_searched) return TW_OK;
    double var = c->shift_curv > 0 ? inflate / c->shift_curv : SHIFT_MAX_S * SHIFT_MAX_S;
    c->shift_sd = fmin(SHIFT_MAX_S, sqrt(var + SHIFT_GRID_S * SHIFT_GRID_S / 12));
    return sensitivity(c, nrs, smooth, cancel);
}

static tw_status add_range(ctx *c, const tw_event *e, size_t i)
{
    if (!room_for_one((void **)&c->rng, &c->rcap, c->nrng, sizeof *c->rng, 64))
        return tw_fail(TW_ENOMEM, "out of memory (ranges)");
    c->rng[c->nrng++] = (seen_range){e->name, e->domain, e->start_s, e->end_s, e->tid, e->depth, i};
    return TW_OK;
}

/* Names by the addresses of their texts: a feed hands each text out at one
 * address, so most launches find their name without hashing it (a miss asks
 * names_intern). */
#define NAME_CACHE 4096
typedef struct name_hit {
    const char *name, *kind;
    uint32_t id;
} name_hit;

static tw_status name_of(names_tab *t, name_hit *cache, const tw_event *e, uint32_t *id)
{
    uintptr_t h = ((uintptr_t)e->name >> 3) * 0x9e3779b97f4a7c15ull ^ (uintptr_t)e->kind;
    name_hit *hit = &cache[(h >> 20) & (NAME_CACHE - 1)];
    if (hit->name == e->name && hit->kind == e->kind) {
        *id = hit->id;
        return TW_OK;
    }
    tw_status st = names_intern(t, e, id);
    if (st == TW_OK) *hit = (name_hit){e->name, e->kind, *id};
    return st;
}

/* The class of each name interned since the last call (its kind's: a
 * copy or memset, else a kernel), into c->cls. */
static tw_status note_classes(ctx *c)
{
    uint8_t *v = realloc(c->cls, c->names.vcap ? c->names.vcap : 1);
    if (!v) return tw_fail(TW_ENOMEM, "out of memory (names)");
    c->cls = v;
    for (; c->ncls < c->names.n; c->ncls++)
        c->cls[c->ncls] = strcmp(c->names.v[c->ncls].kind, "kernel") != 0;
    return TW_OK;
}

/* What collect keeps while the feed replays. */
typedef struct collecting {
    ctx *c;
    kind_memo memo;
    name_hit *cache;
} collecting;

static tw_status collect_one(void *arg, const tw_event *e)
{
    collecting *g = arg;
    ctx *c = g->c;
    size_t i = c->nev++;
    act_class k = classify_memo(&g->memo, e);
    if (k == ACT_RANGE) return add_range(c, e, i);
    if (k != ACT_KERNEL && k != ACT_COPY) return TW_OK;
    if (e->end_s >= e->start_s) { /* the span of the activities, instants included (the process split's) */
        c->e->activity_t0_s = min2(c->e->activity_t0_s, e->start_s);
        c->e->activity_t1_s = max2(c->e->activity_t1_s, e->end_s);
    }
    if (!(e->end_s > e->start_s)) return TW_OK; /* an instant draws nothing */
    uint32_t id = 0;
    tw_status st = name_of(&c->names, g->cache, e, &id);
    if (st != TW_OK) return st;
    c->names.v[id].launches++;
    c->names.v[id].time_s += e->end_s - e->start_s;
    if (c->nl && e->start_s < c->last_start) c->sorted = false;
    c->last_start = e->start_s;
    c->first_t0 = min2(c->first_t0, e->start_s);
    c->last_t1 = max2(c->last_t1, e->end_s);
    c->nl++;
    if (id >= c->ncls && (st = note_classes(c)) != TW_OK) return st;
    int k2 = c->cls[id];
    c->ls.longest[k2] = max2(c->ls.longest[k2], e->end_s - e->start_s);
    return tw_spill_append(&c->ls.cls[k2], &(launch){e->start_s, e->end_s, 0.0, id, (uint32_t)i});
}

/* The launches (kernels, copies, memsets of some duration) in order of
 * start, each name's count and time, and the ranges: one replay of the
 * feed, the launches spilled by their names' classes (c->ls, 32 bytes each), in memory that grows
 * with the names and ranges. */
static tw_status collect(ctx *c, const tw_feed *feed)
{
    collecting g = {.c = c};
    c->e->activity_t0_s = INFINITY;
    c->e->activity_t1_s = -INFINITY;
    c->sorted = true;
    c->first_t0 = INFINITY;
    c->last_t1 = -INFINITY;
    tw_status st = tw_spill_open(&c->ls.cls[0], sizeof(launch));
    if (st == TW_OK) st = tw_spill_open(&c->ls.cls[1], sizeof(launch));
    if (st != TW_OK) return st;
    if (!(g.cache = calloc(NAME_CACHE, sizeof *g.cache))) return tw_fail(TW_ENOMEM, "out of memory");
    st = tw_feed_replay_fields(feed, TW_FEED_SPAN, collect_one, &g); /* of an activity, its name and span */
    free(g.cache);
    if (!(c->e->activity_t1_s >= c->e->activity_t0_s)) c->e->activity_t0_s = c->e->activity_t1_s = NAN;
    return st;
}

static int by_time_desc(const void *a, const void *b)
{
    const tw_est_name *x = *(const tw_est_name *const *)a, *y = *(const tw_est_name *const *)b;
    if (x->time_s != y->time_s) return x->time_s > y->time_s ? -1 : 1;
    return strcmp(x->name, y->name);
}

/* Past max_names (by time), names are pooled into one column; returns the
 * column of every name into col[], the number of columns into *N. */
static tw_status columns(ctx *c, size_t max_names, uint32_t *col, size_t *N)
{
    size_t n = c->names.n;
    if (n <= max_names) {
        for (size_t i = 0; i < n; i++)
            col[i] = (uint32_t)i;
        *N = n;
        return TW_OK;
    }
    tw_est_name **order = malloc(n * sizeof *order);
    if (!order) return tw_fail(TW_ENOMEM, "out of memory");
    for (size_t i = 0; i < n; i++)
        order[i] = &c->names.v[i];
    qsort(order, n, sizeof *order, by_time_desc);
    for (size_t i = 0; i < n; i++)
        col[order[i] - c->names.v] = (uint32_t)(i < max_names - 1 ? i : max_names - 1);
    free(order);
    *N = max_names;
    c->e->pooled = n - (max_names - 1);
    return TW_OK;
}

static tw_status fit_span(ctx *c, const tw_est_reading *rs, size_t nrs, const tw_est_config *cfg)
{
    tw_estimate *e = c->e;
    double first = c->first_t0, last = c->last_t1, dfirst = INFINITY, dlast = -INFINITY;
    for (size_t r = 0; r < nrs; r++)
        for (size_t i = 0; i < rs[r].n; i++)
            if (usable(&rs[r].obs[i])) {
                dfirst = fmin(dfirst, rs[r].obs[i].t0_s);
                dlast = fmax(dlast, rs[r].obs[i].t1_s);
            }
    if (!(dlast > dfirst)) return tw_fail(TW_EEMPTY, "no reading has an observation window");
    double tail = cfg->tail_s > 0 ? cfg->tail_s : DEFAULT_TAIL_S;
    double t0 = !isnan(cfg->fit_t0_s) ? cfg->fit_t0_s : c->nl ? first : dfirst;
    double t1 = c->nl ? last + tail : dlast;
    if (!isnan(cfg->fit_t1_s)) t1 = c->nl ? fmin(t1, cfg->fit_t1_s) : cfg->fit_t1_s;
    if (c->nl && t1 < last) t1 = last;
    t0 = fmax(t0, dfirst);
    t1 = fmin(t1, dlast);
    /* out to the edges of the finest reading's windows that hold the ends,
     * so that the first and last activity are seen by whole windows */
    size_t fine = finest_reading(rs, nrs);
    double nt0 = t0, nt1 = t1;
    for (size_t i = 0; i < rs[fine].n; i++) {
        const tw_obs *o = &rs[fine].obs[i];
        if (!usable(o)) continue;
        if (o->t0_s < t0 && o->t1_s > t0) nt0 = fmin(nt0, o->t0_s);
        if (o->t0_s < t1 && o->t1_s > t1) nt1 = fmax(nt1, o->t1_s);
    }
    t0 = nt0;
    t1 = nt1;
    /* inside the reference's windows where they reach past the activity, so
     * that its energy over the span is its own, not interpolated */
    for (size_t r = 0; r < nrs; r++) {
        if (!rs[r].reference) continue;
        double rf = INFINITY, rl = -INFINITY;
        for (size_t i = 0; i < rs[r].n; i++)
            if (usable(&rs[r].obs[i])) {
                rf = fmin(rf, rs[r].obs[i].t0_s);
                rl = fmax(rl, rs[r].obs[i].t1_s);
            }
        if (!(rl > rf)) continue; /* no window of its own: nothing to keep inside */
        if (rf > t0 && (!c->nl || rf <= first)) t0 = rf;
        if (rl < t1 && (!c->nl || rl >= last)) t1 = rl;
    }
    if (!(t1 > t0) && c->nl)
        return tw_fail(TW_EEMPTY, "the readings (%.3f .. %.3f s) do not cover the activities (%.3f .. %.3f s)", dfirst,
                       dlast, first, last);
    if (!(t1 > t0)) return tw_fail(TW_EEMPTY, "the readings cover no time");
    if (c->nl && (first < t0 - 1e-6 || last > t1 + 1e-6))
        warn(e, "activity from %.3f to %.3f s, readings only from %.3f to %.3f s: activity outside is unobserved",
             first, last, t0, t1);
    e->fit_t0_s = t0;
    e->fit_t1_s = t1;
    double span = t1 - t0;
    double dk = cfg->knot_s > 0 ? cfg->knot_s : fmax(MIN_KNOT_S, span / KNOT_SPANS);
    size_t spans = (size_t)ceil(span / dk - 1e-9);
    if (spans < 1) spans = 1;
    c->f.d.K = spans + 1;
    c->f.d.dk = span / (double)spans;
    c->f.d.T0 = t0;
    c->f.d.T1 = t1;
    e->nknots = c->f.d.K;
    e->knot_s = c->f.d.dk;
    return TW_OK;
}

/* Each reading's windows inside the fit span, and its gain against the reference. */
static tw_status select_windows(ctx *c, const tw_est_reading *rs, size_t nrs)
{
    tw_estimate *e = c->e;
    c->f.R = calloc(nrs, sizeof *c->f.R);
    c->rows = calloc(nrs, sizeof *c->rows);
    if (!c->f.R || !c->rows) return tw_fail(TW_ENOMEM, "out of memory");
    c->f.nr = nrs;
    const tw_est_reading *ref = NULL;
    for (size_t r = 0; r < nrs; r++)
        if (rs[r].reference && !ref) ref = &rs[r];
    double T0 = c->f.d.T0, T1 = c->f.d.T1;
    /* the reference's own windows whole inside the fit span: a counter's
     * energy is exact between its updates, not pro rata inside them */
    double ref_j = NAN, ra = INFINITY, rb = -INFINITY;
    if (ref) {
        double sum = 0;
        for (size_t i = 0; i < ref->n; i++) {
            const tw_obs *o = &ref->obs[i];
            if (!usable(o) || o->t0_s < T0 - EDGE_EPS_S || o->t1_s > T1 + EDGE_EPS_S) continue;
            sum += o->power_w * (o->t1_s - o->t0_s);
            ra = fmin(ra, o->t0_s);
            rb = fmax(rb, o->t1_s);
        }
        if (rb > ra) ref_j = sum;
    }
    e->reference_t0_s = rb > ra ? ra : NAN;
    e->reference_t1_s = rb > ra ? rb : NAN;
    for (size_t r = 0; r < nrs; r++) {
        rd *R = &c->f.R[r];
        R->r = &rs[r];
        R->gain = 1.0;
        tw_status st = pick_windows(rs[r].obs, rs[r].n, T0, T1, &R->idx, &R->lo, &R->n);
        if (st != TW_OK) return st;
        if (ref && &rs[r] != ref && ref_j > 0) {
            double own = reading_energy(&rs[r], ra, rb);
            double g = own / ref_j;
            if (g >= 0.8 && g <= 1.25)
                R->gain = g;
            else if (isfinite(g))
                warn(e, "%s integrates to %.1f %% of %s over the fit span: not scaled to it", rs[r].name, 100 * g,
                     ref->name);
        }
    }
    e->reference_j = ref_j;
    if (ref && !isnan(ref_j)) snprintf(e->reference, sizeof e->reference, "%s", ref->name ? ref->name : "?");
    return TW_OK;
}

static tw_status groups(ctx *c, const tw_est_config *cfg, const uint32_t *col)
{
    fit_state *f = &c->f;
    size_t N = f->d.N, K = f->d.K, p = f->d.p, M = f->d.M;
    size_t *parent = malloc((N ? N : 1) * sizeof *parent);
    double *G = calloc(p * p, sizeof *G);
    size_t NL = f->d.NL, R = f->d.R;
    f->unit = malloc((N + M + NL + R ? N + M + NL + R : 1) * sizeof *f->unit);
    if (!parent || !G || !f->unit) {
        free(parent);
        free(G);
        return tw_fail(TW_ENOMEM, "out of memory");
    }
    for (size_t r = 0; r < f->nr; r++)
        for (size_t i = 0; i < p * p; i++)
            G[i] += f->R[r].G[i] / f->R[r].s2;
    for (size_t j = 0; j < N; j++)
        parent[j] = j;
    double thr = cfg->group_cos > 0 ? cfg->group_cos : DEFAULT_GROUP_COS;
    for (size_t a = 0; a < N; a++) {
        double ga = G[(K + a) * p + K + a];
        if (!(ga > 0)) continue;
        for (size_t b = a + 1; b < N; b++) {
            /* names the counters give their power are told apart by them */
            if (c->ccol && c->ccol[a] && c->ccol[b]) continue;
            double gb = G[(K + b) * p + K + b];
            if (gb > 0 && G[(K + a) * p + K + b] / sqrt(ga * gb) >= thr) uf_union(parent, a, b);
        }
    }
    /* names matching one pattern: one group (a pooled column stays pooled) */
    free(c->pinned);
    if (!(c->pinned = calloc(N ? N : 1, sizeof *c->pinned))) {
        free(parent);
        free(G);
        return tw_fail(TW_ENOMEM, "out of memory");
    }
    for (size_t k = 0; k < cfg->npatterns; k++) {
        size_t root = N;
        for (size_t i = 0; i < c->names.n; i++) {
            if (fnmatch(cfg->patterns[k], c->names.v[i].name, 0) != 0) continue;
            c->pinned[col[i]] = true;
            if (root == N)
                root = col[i];
            else
                uf_union(parent, root, col[i]);
        }
    }
    f->U = 0;
    size_t *uid = malloc((N ? N : 1) * sizeof *uid);
    if (!uid) {
        free(parent);
        free(G);
        return tw_fail(TW_ENOMEM, "out of memory");
    }
    for (size_t j = 0; j < N; j++)
        uid[j] = (size_t)-1;
    for (size_t j = 0; j < N; j++) {
        size_t r = uf_find(parent, j);
        if (uid[r] == (size_t)-1) uid[r] = f->U++;
        f->unit[j] = uid[r];
    }
    f->U0 = f->U; /* the counters' features: a unit each, after the names' */
    for (size_t m = 0; m < M; m++)
        f->unit[N + m] = f->U++;
    f->UR = SIZE_MAX; /* PM sampling's own power: a unit of its own */
    if (R) f->unit[N + M + NL] = f->UR = f->U++;
    for (size_t r = 1; r < R; r++) /* its edges' (pm_row): a unit each, after it */
        f->unit[N + M + NL + r] = f->U++;
    /* the linger terms: one per unit of names that have them (names told
     * apart by nothing have lingers told apart by nothing) */
    f->UL0 = f->U;
    free(f->lunit);
    f->lunit = malloc((f->U0 ? f->U0 : 1) * sizeof *f->lunit);
    if (!f->lunit) {
        free(uid);
        free(parent);
        free(G);
        return tw_fail(TW_ENOMEM, "out of memory");
    }
    for (size_t u = 0; u < f->U0; u++)
        f->lunit[u] = SIZE_MAX;
    for (size_t j = 0; j < N; j++) {
        if (!f->d.lcol || f->d.lcol[j] == LINGER_NONE) continue;
        size_t u = f->unit[j];
        if (f->lunit[u] == SIZE_MAX) f->lunit[u] = f->U++;
        f->unit[N + M + f->d.lcol[j]] = f->lunit[u];
    }
    free(uid);
    free(parent);
    free(G);
    return TW_OK;
}

/* ---------------------------------------------------------------- lingering power */

/* The pieces of the names with a linger term (lcol), into ls->lpieces, in
 * the pieces' order: every pass's tracker reads these alone (linger_at), a
 * few names' share of the launches. */
static tw_status linger_pieces(launches *ls, const uint32_t *lcol)
{
    piece_src src = {0};
    tw_status st = tw_spill_open(&ls->lpieces, sizeof(piece));
    if (st == TW_OK) st = piece_src_open(&src, ls);
    while (st == TW_OK) {
        piece q;
        bool got = false;
        if ((st = piece_next(&src, &q, &got)) != TW_OK || !got) break;
        if (lcol[q.name] != LINGER_NONE) st = tw_spill_append(&ls->lpieces, &q);
    }
    piece_src_close(&src);
    return st == TW_OK ? tw_spill_flush(&ls->lpieces) : st;
}

/* The name columns given a linger term (c->lcol, d->NL): the MAX_LINGER
 * with the most time of those with MIN_LINGER_LAUNCHES, not pooled. Names
 * the counters serve get one too: the power that lingers after a launch
 * ends is no activity the counters see. Left out, it went to the baseline
 * or to the lingers of the names beside it: the mixed pattern's 20 ms GEMM
 * -12 %, its 5 ms FMA loop, left to the readings, +38 %
 * (results/h100/attrib-fine-six). cfg->linger_s <= 0: none. */
static tw_status linger_columns(ctx *c, const tw_est_config *cfg, const uint32_t *col)
{
    design *d = &c->f.d;
    d->NL = 0;
    d->lcol = NULL;
    if (!(cfg->linger_s > 0) || d->N == 0) return TW_OK;
    d->ltau = cfg->linger_s;
    c->f.linger_w = cfg->linger_prior_w > 0 ? cfg->linger_prior_w : DEFAULT_LINGER_PRIOR_W;
    double *t = calloc(d->N, sizeof *t);
    uint64_t *n = calloc(d->N, sizeof *n);
    if (!t || !n || !(c->lcol = malloc(d->N * sizeof *c->lcol))) {
        free(t);
        free(n);
        return tw_fail(TW_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < c->names.n; i++) {
        t[col[i]] += c->names.v[i].time_s;
        n[col[i]] += c->names.v[i].launches;
    }
    for (size_t j = 0; j < d->N; j++)
        c->lcol[j] = LINGER_NONE;
    for (size_t k = 0; k < MAX_LINGER; k++) { /* the longest first (a few passes over the columns) */
        size_t best = SIZE_MAX;
        for (size_t j = 0; j < d->N; j++) {
            bool pooled = c->e->pooled && j == d->N - 1;
            if (c->lcol[j] != LINGER_NONE || pooled || n[j] < MIN_LINGER_LAUNCHES || !(t[j] > 0)) continue;
            if (best == SIZE_MAX || t[j] > t[best]) best = j;
        }
        if (best == SIZE_MAX) break;
        c->lcol[best] = (uint32_t)d->NL++;
    }
    free(t);
    free(n);
    d->lcol = c->lcol;
    return linger_pieces(&c->ls, c->lcol);
}

/* The linger terms' prior, N(0, linger_w^2), into prior_u (made here where
 * no other prior made it, with prior_w for every other unit, as a NULL
 * prior_u would mean), and their sign free: held at zero or above, a term
 * the data barely see would only ever take energy (+4.5 % on a simulated
 * spin kernel with no linger at all). Called before each fit, after the
 * counters' priors. */
static tw_status linger_priors(fit_state *f)
{
    if (f->U == f->UL0) return TW_OK;
    if (!f->prior_u) {
        if (!(f->prior_u = malloc(f->U * sizeof *f->prior_u))) return tw_fail(TW_ENOMEM, "out of memory");
        f->prior_own = true;
    }
    if (!f->signed_u && !(f->signed_u = calloc(f->U, sizeof *f->signed_u))) return tw_fail(TW_ENOMEM, "out of memory");
    if (!f->held_u && !(f->held_u = calloc(f->U, sizeof *f->held_u))) return tw_fail(TW_ENOMEM, "out of memory");
    for (size_t u = 0; f->prior_own && u < f->UL0; u++)
        f->prior_u[u] = f->prior_w;
    for (size_t u = f->UL0; u < f->U; u++) {
        f->prior_u[u] = f->linger_w;
        f->signed_u[u] = true;
    }
    return TW_OK;
}

/* A name whose own power the fit holds at zero or at the power bound has
 * no linger: its linger is held at zero (true when one was newly held, for
 * a fit again). Free beside a power held at the bound, the linger took
 * what the bound denied, below zero, and the baseline the rest (two H100s,
 * bf16 products in 35 ms bursts, results/h100x2/mpi-before-s25: the GPUs'
 * totals +4.5 and -6.2 % off their counters, against +0.1 and -0.2 %
 * without the term). After each fit, with linger_priors' held_u. */
static bool linger_hold(fit_state *f)
{
    bool changed = false;
    size_t K = f->d.K;
    for (size_t u = 0; f->lunit && f->held_u && u < f->U0; u++) {
        size_t lu = f->lunit[u];
        if (lu == SIZE_MAX || !f->bound[K + u] || f->held_u[lu]) continue;
        f->held_u[lu] = true;
        if (f->mean_u) f->mean_u[lu] = 0;
        changed = true;
    }
    return changed;
}

/* Name unit u's linger unit where its linger counts in its power, else
 * SIZE_MAX: a name held at zero or at the power bound is reported as held
 * (its linger held at zero too, linger_hold, but for a unit the last refit
 * bound). The one rule for unit_power, linger_fold and the lingers' energy. */
static size_t counted_linger(const fit_state *f, size_t u)
{
    size_t lu = f->lunit ? f->lunit[u] : SIZE_MAX;
    return lu != SIZE_MAX && !f->bound[f->d.K + u] ? lu : SIZE_MAX;
}

/* The energy name unit u's linger adds to it over its activity act, of
 * either sign; NaN where none counts (counted_linger). */
static double linger_energy(const fit_state *f, size_t u, double act)
{
    size_t lu = counted_linger(f, u);
    return lu != SIZE_MAX ? f->beta_u[f->d.K + lu] * act : NAN;
}

/* Each name column's power with its linger folded in (c->beta), as
 * unit_power folds its unit's: the energy it lingers with after its launches
 * is theirs, and their energies (launches, ranges, kinds) are its power x
 * their activity, never under zero. A name held at zero or at the power
 * bound keeps the power it is held at. A name the counters serve has its
 * own term there, of either sign: the sum with its features' part is what
 * is kept from going under zero (column_powers). After the last pass. */
static void linger_fold(ctx *c)
{
    const design *d = &c->f.d;
    for (size_t j = 0; j < d->N && d->NL; j++) {
        size_t lu = counted_linger(&c->f, c->f.unit[j]);
        if (lu == SIZE_MAX) continue;
        double folded = c->beta[d->K + j] + c->f.beta_u[d->K + lu];
        c->beta[d->K + j] = d->M && c->ccol[j] ? folded : fmax(0.0, folded);
    }
}

/* ---------------------------------------------------------------- activity counters */

/* A kernel name whose time the samples cover less than this share of is
 * left to the readings alone (a gap, samples that began late or ended early):
 * its gaps would otherwise be filled with the level of a minority of its time. */
#define MIN_COUNTER_COVERAGE 0.5
/* With sampling in windows, a name whose launches fall in fewer samples
 * than this too: a few samples (one name caught at a window's edge, JAX in
 * results/h100/attrib-s31w at 1 ms) are no level to fill the other nine
 * tenths of its time with. Samples its launches fall in, not their covered
 * time: 10 ms (this rule's first form) left the PyTorch step's names of
 * 50 ms out at 0.1 ms, each with 60-80 samples (results/h100/pm-fine-1-5),
 * and 10 samples' worth of time (its second) the real programs' short
 * kernels, whose launches fall in hundreds of samples but fill a few: on
 * the H100's PyTorch program 31 names resolved against 65 so, JAX 5 against
 * 16 (results/h100/samples-offline) */
#define MIN_WINDOWED_SAMPLES 10
/* Under this share of PM sampling's windows in samples, a warning (the H100's windows of 0.3 s kept
 * 50-67 % with nothing lost, results/h100/pm-windows; 13 % at 20 us with the per-SM pipe metrics) */
#define MIN_WINDOW_SAMPLED 0.4
/* A feature whose largest level while kernels run is under this share of
 * its peak explains nothing: left out, so that no column is empty. */
#define MIN_FEATURE_LEVEL 1e-4
/* The prior on a name's own term is never tighter than this (W): below it the
 * counters' model would be claimed exact. */
#define MIN_OWN_SD_W 1.0

/* The samples that overlap [T0, T1]: c->cs0, c->ncs; false (and why) when
 * they are not in order or not spans. */
static bool counter_span(ctx *c, const tw_est_counters *cn, double T0, double T1, char *why, size_t cap)
{
    size_t first = cn->n, n = 0;
    for (size_t k = 0; k < cn->n; k++) {
        if (!(cn->t1_s[k] > cn->t0_s[k]) || (k && cn->t0_s[k] < cn->t1_s[k - 1] - 1e-9)) {
            snprintf(why, cap, "sample %zu is not a span after the one before it (%.6f .. %.6f s)", k, cn->t0_s[k],
                     cn->t1_s[k]);
            return false;
        }
        if (cn->t1_s[k] <= T0 || cn->t0_s[k] >= T1) continue;
        if (first == cn->n) first = k;
        n++;
    }
    c->cs0 = first;
    c->ncs = n;
    if (!n) snprintf(why, cap, "no sample inside the fit span");
    return n > 0;
}

/* Adds [a, b] to the share of each sample it covers (c->cbusy), from
 * sample *k on (spans come in order). */
static void busy_span(ctx *c, double a, double b, size_t *k)
{
    const double *t0 = c->cn->t0_s + c->cs0, *t1 = c->cn->t1_s + c->cs0;
    while (*k < c->ncs && t1[*k] <= a)
        (*k)++;
    for (size_t j = *k; j < c->ncs && t0[j] < b; j++) {
        double x = fmax(a, t0[j]), y = fmin(b, t1[j]);
        if (y > x) c->cbusy[j] += (y - x) / (t1[j] - t0[j]);
    }
}

/* The share of each sample that some launch the counters see covers
 * (c->cbusy): the counters count activity only while such launches run, so
 * a sample's level over their time is its mean over this share. The union
 * of the seen pieces' spans (they come in order of start). */
static tw_status counter_busy(ctx *c)
{
    piece_src src;
    tw_status st = piece_src_open(&src, &c->ls);
    size_t k = 0;
    double ua = 0, ub = -INFINITY;
    while (st == TW_OK) {
        piece q;
        bool got = false;
        if ((st = piece_next(&src, &q, &got)) != TW_OK || !got) break;
        if (!c->ls.seen[q.name] || !(q.t1 > q.t0)) continue;
        if (q.t0 > ub) {
            if (ub > ua) busy_span(c, ua, ub, &k);
            ua = q.t0;
            ub = q.t1;
        } else {
            ub = fmax(ub, q.t1);
        }
    }
    if (st == TW_OK && ub > ua) busy_span(c, ua, ub, &k);
    piece_src_close(&src);
    return st;
}

/* The features the counters' model uses: those whose level some kernel's time shows. */
static void counter_levels(ctx *c)
{
    const tw_est_counters *cn = c->cn;
    size_t M = 0;
    for (size_t m = 0; m < cn->nf && m < TW_EST_MAX_FEATURES; m++) {
        double most = 0;
        for (size_t k = 0; k < c->ncs; k++)
            if (c->cbusy[k] > 0) most = fmax(most, cn->v[(c->cs0 + k) * cn->nf + m] / c->cbusy[k]);
        if (most >= MIN_FEATURE_LEVEL) c->fidx[M++] = m;
    }
    c->f.d.M = M;
}

/* The share of the fit span the samples were taken in: 1 without windows;
 * with them, the windows' share times the share of them in samples, since
 * samples cover each name's time about as often as they were taken (at
 * 0.1 ms with the per-SM pipe metrics the H100's windows of 0.3 s held 38 %
 * in samples, results/h100/pm-fine: asking for half the windows' share left
 * every name to the readings). */
static double sampled_fit_share(const ctx *c, const design *d)
{
    const tw_est_counter_fit *cf = &c->e->counters;
    return d->R ? cf->window_share * fmin(1.0, cf->window_sampled) : 1.0;
}

/* Which name columns the counters give their power (c->ccol: kernels and
 * copies within the device's memory (seen_by_counters) whose time the
 * samples cover at least MIN_COUNTER_COVERAGE of, in windows in at least
 * MIN_WINDOWED_SAMPLES samples; the
 * pooled column is left to the readings) and each one's mean level over
 * its covered time (c->gbar), its share of each stretch by its rate. */
static tw_status counter_columns(ctx *c, size_t pooled_col, double *covered_share)
{
    design *d = &c->f.d;
    size_t N = d->N, M = d->M;
    double *cov = calloc(N ? N : 1, sizeof *cov), *all = calloc(N ? N : 1, sizeof *all);
    size_t *nsamp = calloc(N ? N : 1, sizeof *nsamp), *last = malloc((N ? N : 1) * sizeof *last);
    tw_status st = cov && all && nsamp && last ? TW_OK : tw_fail(TW_ENOMEM, "out of memory");
    for (size_t j = 0; st == TW_OK && j < N; j++)
        last[j] = SIZE_MAX;
    piece_src src;
    if (st == TW_OK) st = piece_src_open(&src, &c->ls);
    double acc[TW_EST_MAX_FEATURES];
    while (st == TW_OK) {
        piece q;
        bool got = false;
        if ((st = piece_next(&src, &q, &got)) != TW_OK || !got) break;
        double a = fmax(q.t0, d->T0), b = fmin(q.t1, d->T1);
        if (!c->ls.seen[q.name] || !(b > a) || !(q.tot > 0)) continue;
        double w = q.share / q.tot;
        cov[q.name] += w * counter_integral(d, NULL, 0, a, b, q.name, acc);
        all[q.name] += w * (b - a);
        for (size_t k = first_sample_after(d, a); k < d->ns && d->s0[k] < b; k++) /* the samples it is in */
            if ((last[q.name] == SIZE_MAX || k > last[q.name]) && fmin(b, d->s1[k]) > fmax(a, d->s0[k])) {
                last[q.name] = k;
                nsamp[q.name]++;
            }
        for (size_t m = 0; m < M; m++)
            c->gbar[(size_t)q.name * M + m] += w * acc[m];
    }
    piece_src_close(&src); /* safe after a failed open: it starts from zero */
    double cs = 0, ts = 0;
    double want = MIN_COUNTER_COVERAGE * sampled_fit_share(c, d);
    for (size_t j = 0; st == TW_OK && j < N; j++) {
        c->ccol[j] = c->ls.seen[j] && j != pooled_col && all[j] > 0 && (!d->R || nsamp[j] >= MIN_WINDOWED_SAMPLES) &&
                     cov[j] >= want * all[j];
        for (size_t m = 0; m < M; m++)
            c->gbar[j * M + m] = cov[j] > 0 ? c->gbar[j * M + m] / cov[j] : 0;
        if (c->ls.seen[j]) {
            cs += cov[j];
            ts += all[j];
        }
    }
    *covered_share = ts > 0 ? cs / ts : 0;
    free(cov);
    free(all);
    free(nsamp);
    free(last);
    return st;
}

/* The samples' time in [t0, t1] over `on` s of windows there. */
static double sampled_share(const tw_est_counters *cn, double t0, double t1, double on)
{
    double got = 0;
    for (size_t i = 0; i < cn->n; i++)
        got += fmax(0, fmin(cn->t1_s[i], t1) - fmax(cn->t0_s[i], t0));
    return on > 0 ? got / on : 0;
}

/* PM sampling in windows: the design's columns of its own power (d->R)
 * where some window overlaps the fit span, whether the counters' model is
 * used or not (the GPU drew that power either way): one over the windows as
 * recorded, one for each of their edges (pm_edge_span). Run files recorded
 * before 2026-11-28 put a window's start halfway through the enable call, yet
 * on the H100 and the H200 the power rose 0.15-0.2 s before it in every kept
 * run, and fell some 30 ms after its recorded end (results/h100/pm-lead-offline,
 * pm-edges-offline); fitted from every window, the edges take that power where
 * the data put it, whatever lead a GPU or driver has, instead of the baseline
 * and the names beside it (the injection now records the calls' outer ends:
 * the edges come out near zero, results/h200/attrib-s42b). Their number,
 * time and share of the fit span in e->counters. */
static void pm_windows(ctx *c, const tw_est_config *cfg)
{
    design *d = &c->f.d;
    tw_est_counter_fit *cf = &c->e->counters;
    const tw_est_counters *cn = cfg->counters;
    d->R = d->nw = 0;
    if (!cn || !cn->nw || !cn->w0_s || !cn->w1_s || !(d->T1 > d->T0)) return;
    double on = 0;
    size_t n = 0;
    for (size_t k = 0; k < cn->nw; k++) {
        double a = fmax(cn->w0_s[k], d->T0), b = fmin(cn->w1_s[k], d->T1);
        if (!(cn->w1_s[k] > cn->w0_s[k]) || (k && cn->w0_s[k] < cn->w1_s[k - 1])) {
            warn(c->e,
                 "PM sampling window %zu (%.6f .. %.6f s) is no span after the one before it: no term for "
                 "PM sampling's own power",
                 k, cn->w0_s[k], cn->w1_s[k]);
            return;
        }
        if (b > a) {
            on += b - a;
            n++;
        }
    }
    if (!n) return;
    d->R = 1 + TW_EST_PM_EDGES;
    d->nw = cn->nw;
    d->w0 = cn->w0_s;
    d->w1 = cn->w1_s;
    cf->windows = n;
    cf->window_s = on;
    cf->window_share = on / (d->T1 - d->T0);
    cf->window_sampled = sampled_share(cn, d->T0, d->T1, on);
    if (cf->window_sampled < MIN_WINDOW_SAMPLED)
        warn(c->e,
             "the activity counters' samples cover %.0f %% of PM sampling's windows: samples were lost, "
             "or the windows are short beside enabling, disabling and decoding at their ends (~0.5 s on "
             "an H100): longer windows, a longer --activity-counters interval, or fewer metrics",
             100 * cf->window_sampled);
}

/* The calibrated model of exactly the features used (cf->feature), if the
 * configuration has one fitted at the clock the samples' features were
 * scaled to (none, or its clock_mhz: tw_est_counters.clock_mhz): its
 * coefficients in cf->cal_w, cf->cal_sd_w, in the features' order, its
 * source in cf->calibrated and its clock in cf->cal_clock_mhz; else
 * cf->calibrated "". */
static void calibrated_model(const tw_est_config *cfg, tw_est_counter_fit *cf)
{
    const char *names[TW_EST_MAX_FEATURES];
    size_t order[TW_EST_MAX_FEATURES];
    cf->calibrated[0] = '\0';
    cf->cal_clock_mhz = NAN;
    for (size_t m = 0; m < cf->nf; m++)
        names[m] = cf->feature[m];
    const tw_activity_model *a =
        tw_profile_activity_for(cfg->activity_models, cfg->n_activity_models, names, cf->nf, order);
    /* a model fitted on features scaled by the clock prices unscaled ones wrongly, and the other way */
    double scaled = cfg->counters ? cfg->counters->clock_mhz : 0, fitted = a && a->clock_mhz > 0 ? a->clock_mhz : 0;
    if (!a || scaled != fitted) return;
    for (size_t m = 0; m < cf->nf; m++) {
        cf->cal_w[m] = a->power_w[order[m]];
        cf->cal_sd_w[m] = a->sd_w[order[m]];
    }
    snprintf(cf->calibrated, sizeof cf->calibrated, "%s", a->source[0] ? a->source : "calibrated");
    if (fitted > 0) cf->cal_clock_mhz = fitted;
}

/* Sets up the counters' model (design columns, the columns it serves) where
 * the configuration gives counters that cover kernels inside the fit span;
 * else says why not in e->counters.why and leaves d->M at 0. */
static tw_status counters_prepare(ctx *c, const tw_est_config *cfg, size_t pooled_col)
{
    tw_est_counter_fit *cf = &c->e->counters;
    design *d = &c->f.d;
    const tw_est_counters *cn = cfg->counters;
    d->M = 0;
    if (!cn || cn->n == 0 || cn->nf == 0 || !cn->t0_s || !cn->t1_s || !cn->v) return TW_OK;
    if (!counter_span(c, cn, d->T0, d->T1, cf->why, sizeof cf->why)) return TW_OK;
    c->cn = cn;
    size_t M0 = cn->nf < TW_EST_MAX_FEATURES ? cn->nf : TW_EST_MAX_FEATURES;
    c->cbusy = calloc(c->ncs, sizeof *c->cbusy);
    c->ccol = calloc(d->N ? d->N : 1, sizeof *c->ccol);
    c->gbar = calloc((d->N ? d->N : 1) * M0, sizeof *c->gbar);
    if (!c->cbusy || !c->ccol || !c->gbar) return tw_fail(TW_ENOMEM, "out of memory (activity counters)");
    tw_status st = counter_busy(c);
    if (st != TW_OK) return st;
    counter_levels(c);
    if (d->M == 0) {
        snprintf(cf->why, sizeof cf->why, "no feature shows any activity while kernels run");
        return TW_OK;
    }
    d->ns = c->ncs;
    d->s0 = cn->t0_s + c->cs0;
    d->s1 = cn->t1_s + c->cs0;
    d->v = cn->v + c->cs0 * cn->nf;
    d->nv = cn->nf;
    d->fidx = c->fidx;
    d->busy = c->cbusy;
    d->ccol = c->ccol;
    d->gbar = NULL; /* the columns' levels are being measured: no gap is filled yet */
    double share = 0;
    if ((st = counter_columns(c, pooled_col, &share)) != TW_OK) return st;
    d->gbar = c->gbar;
    size_t names = 0;
    for (size_t j = 0; j < d->N; j++)
        names += c->ccol[j];
    cf->coverage = share;
    cf->samples = c->ncs;
    if (names == 0) {
        snprintf(cf->why, sizeof cf->why, "the samples cover no kernel name for %.0f %% of its time%s",
                 100 * MIN_COUNTER_COVERAGE * sampled_fit_share(c, d),
                 d->R ? " (half the share of the fit span the samples were taken in)" : "");
        d->M = 0;
        return TW_OK;
    }
    cf->used = true;
    cf->names = names;
    cf->nf = d->M;
    for (size_t m = 0; m < d->M; m++)
        snprintf(cf->feature[m], sizeof cf->feature[m], "%s", cn->feature ? cn->feature[c->fidx[m]] : "?");
    c->f.M = d->M;
    calibrated_model(cfg, cf);
    return TW_OK;
}

/* A calibrated model's coefficients (cf->calibrated not ""): each feature's
 * prior N(cal_w, cal_sd_w^2); true where set. */
static bool calibrated_priors(fit_state *f, const tw_est_counter_fit *cf)
{
    if (!cf->calibrated[0]) return false;
    for (size_t m = 0; m < f->M; m++) {
        f->mean_u[f->U0 + m] = cf->cal_w[m];
        f->prior_u[f->U0 + m] = cf->cal_sd_w[m];
    }
    return true;
}

/* The priors of the counters' model: each feature's coefficient and each
 * name's own term N(0, prior_w^2) to begin with (counter_model_priors narrows the
 * latter); a unit of names the counters all serve is its own term, which
 * may be negative (a name that draws less than its counters say). */
static tw_status counter_priors(fit_state *f, const bool *ccol, const tw_est_counter_fit *cf)
{
    free(f->prior_u);
    free(f->signed_u);
    free(f->mean_u);
    free(f->held_u);
    f->prior_u = malloc(f->U * sizeof *f->prior_u);
    f->signed_u = malloc(f->U * sizeof *f->signed_u);
    f->mean_u = calloc(f->U, sizeof *f->mean_u);
    f->held_u = calloc(f->U, sizeof *f->held_u);
    if (!f->prior_u || !f->signed_u || !f->mean_u || !f->held_u) return tw_fail(TW_ENOMEM, "out of memory");
    f->prior_own = false;
    for (size_t u = 0; u < f->U; u++) {
        f->prior_u[u] = f->prior_w;
        f->signed_u[u] = u < f->U0;
    }
    for (size_t j = 0; j < f->d.N; j++)
        if (!ccol[j]) f->signed_u[f->unit[j]] = false;
    for (size_t u = 0; u < f->U0; u++) /* first the counters' model alone: the features' coefficients */
        f->held_u[u] = f->signed_u[u];
    calibrated_priors(f, cf);
    return TW_OK;
}

/* A name's own term further from 0 than this many of sqrt(s^2 + v) (its
 * own error and the names' scatter) is apart from the counters' model:
 * left out of the scatter that sets s (tw_prior_scale_robust_sd). One such
 * name would otherwise set s for every name: on the H100's realapps PyTorch
 * run a GEMM of 16 ms at +524 +- 29 W beside 28 names about within their
 * errors of 0 made s 111 W (under which most names came out below
 * resolution); without it s is 0. It keeps the prior s too: given the
 * readings' broad prior instead (a trial, not kept), that GEMM drew ~1,000 W
 * above the baseline for its 30 us launches, was clipped at the power bound
 * and took 0.4 % of the GPU's energy with it: the model's misfit on one
 * name, not the readings resolving it. */
#define APART_Z 5.0

/* The priors of the counters' model from its own fit, no strength chosen
 * by hand but the floor MIN_OWN_SD_W (docs/methods.md):
 * - the features' coefficients: N(0, t^2), t from the coefficients
 *   themselves (tw_prior_scale_sd), fitted with the own terms held at 0. Features
 *   that rise together (SM activity, instruction issue and the tensor pipes
 *   in a GEMM) trade their coefficients otherwise, from run to run, and the
 *   names' split with them: on the PyTorch step run twice
 *   (results/h100/activity) the tensor pipes took 92 W in one run and 362 W
 *   in the other under the broad prior alone, 4 of the top 10 names within
 *   5 % of each other; with t, 8 of 10;
 * - each name's own term: N(0, s^2), s from the names
 *   (tw_prior_scale_robust_sd over each own term fitted under the broad
 *   prior with the features held where the model alone put them: the own
 *   terms and the features trade otherwise, as each name's features are
 *   nearly its own column times its mean level), a name far apart from the
 *   others left out (APART_Z). Where the counters explain the names, s is
 *   small and each name follows its counters; where names differ from them
 *   by more than the readings' noise, s grows and the names the readings
 *   resolve keep their own power. */
static tw_status counter_model_priors(fit_state *f, double smooth, double *beta, tw_est_counter_fit *cf)
{
    size_t K = f->d.K, M = f->M, n = 0;
    double *b = calloc(f->U0 + M + 1, sizeof *b), *v = calloc(f->U0 + M + 1, sizeof *v);
    tw_status st = b && v ? TW_OK : tw_fail(TW_ENOMEM, "out of memory");
    for (size_t m = 0; m < M; m++)
        f->held_u[f->U0 + m] = false;
    if (calibrated_priors(f, cf)) { /* each its own: cal_sd_w; no scale to learn */
        cf->coef_prior_sd_w = NAN;
    } else {
        if (st == TW_OK) st = variances(f, 1.0);
        for (size_t m = 0; st == TW_OK && m < M; m++, n++) {
            b[n] = f->beta_u[K + f->U0 + m];
            v[n] = f->var_u[K + f->U0 + m];
        }
        /* no scatter to learn a scale from (each coefficient within its error of 0: features that rise
         * and fall together, as one name's do): the names' broad prior, not one that forbids them all.
         * A 1 W prior there left an H100's one GEMM 64 J of its ~5,600 J and a residual of 283 W rms,
         * which then weighed the readings down so that the prior won (results/h100x2/mpi-counters-fixed) */
        double t = st == TW_OK ? tw_prior_scale_sd(b, v, n) : 0;
        if (!(t >= MIN_OWN_SD_W)) t = f->prior_w;
        cf->coef_prior_sd_w = t;
        for (size_t m = 0; m < M; m++)
            f->prior_u[f->U0 + m] = t;
    }
    if (st == TW_OK) st = fit_once(f, smooth, beta);
    for (size_t m = 0; m < M; m++) { /* the features held there, each own term under the broad prior */
        f->mean_u[f->U0 + m] = f->beta_u[K + f->U0 + m];
        f->held_u[f->U0 + m] = true;
    }
    for (size_t u = 0; u < f->U0; u++) {
        f->held_u[u] = false;
        if (f->signed_u[u]) f->prior_u[u] = f->prior_w;
    }
    if (st == TW_OK) st = fit_once(f, smooth, beta);
    if (st == TW_OK) st = variances(f, 1.0);
    for (size_t m = 0; m < M; m++) { /* the features free again, under t (or the calibrated prior) */
        f->mean_u[f->U0 + m] = cf->calibrated[0] ? cf->cal_w[m] : 0;
        f->held_u[f->U0 + m] = false;
    }
    n = 0;
    size_t *un = malloc((f->U0 ? f->U0 : 1) * sizeof *un);
    bool *apart = malloc(f->U0 ? f->U0 : 1);
    if (st == TW_OK && (!un || !apart)) st = tw_fail(TW_ENOMEM, "out of memory");
    for (size_t u = 0; st == TW_OK && u < f->U0; u++) {
        double vu = f->var_u[K + u];
        if (!f->signed_u[u] || f->bound[K + u] || !isfinite(vu) || !(vu > 0)) continue;
        un[n] = u;
        b[n] = f->beta_u[K + u];
        v[n++] = vu;
    }
    double s = st == TW_OK ? tw_prior_scale_robust_sd(b, v, n, APART_Z, apart) : 0;
    if (st == TW_OK && s < 0) st = tw_fail(TW_ENOMEM, "out of memory");
    s = fmax(MIN_OWN_SD_W, s);
    cf->own_sd_w = s;
    for (size_t u = 0; u < f->U0; u++)
        if (f->signed_u[u]) f->prior_u[u] = s;
    free(f->apart_u);
    f->apart_u = calloc(f->U0 ? f->U0 : 1, sizeof *f->apart_u);
    if (st == TW_OK && !f->apart_u) st = tw_fail(TW_ENOMEM, "out of memory");
    cf->names_apart = 0;
    for (size_t i = 0; st == TW_OK && i < n; i++)
        if (apart[i]) {
            f->apart_u[un[i]] = true;
            cf->names_apart++;
        }
    free(un);
    free(apart);
    free(b);
    free(v);
    return st;
}

/* Mean of the reading with the most windows (gain applied) over the part
 * of [a, b] its windows cover; NaN when they cover under half of it. */
/* The finest reading's usable windows in order of start, and the longest:
 * a span's windows are found by a search, not a scan (a run's many NVTX
 * ranges each ask for theirs). */
static tw_status index_finest(ctx *c, const tw_est_reading *rs, size_t nrs)
{
    const tw_est_reading *r = &rs[finest_reading(rs, nrs)];
    c->fine_longest = 0;
    for (size_t i = 0; i < r->n; i++)
        if (usable(&r->obs[i])) c->fine_longest = fmax(c->fine_longest, r->obs[i].t1_s - r->obs[i].t0_s);
    return pick_windows(r->obs, r->n, -INFINITY, INFINITY, &c->fine, &c->fine_lo, &c->nfine);
}

static double finest_mean_w(const ctx *c, const tw_est_reading *rs, size_t nrs, double a, double b)
{
    if (!(b > a)) return NAN;
    size_t best = finest_reading(rs, nrs), lo_i = 0, hi_i = c->nfine;
    const tw_obs *obs = rs[best].obs;
    while (lo_i < hi_i) { /* the first window that can reach a */
        size_t mid = lo_i + (hi_i - lo_i) / 2;
        if (obs[window_at(c->fine, c->fine_lo, mid)].t0_s < a - c->fine_longest)
            lo_i = mid + 1;
        else
            hi_i = mid;
    }
    double g = c->f.R ? c->f.R[best].gain : 1.0, e = 0, covered = 0;
    for (size_t i = lo_i; i < c->nfine && obs[window_at(c->fine, c->fine_lo, i)].t0_s < b; i++) {
        const tw_obs *o = &obs[window_at(c->fine, c->fine_lo, i)];
        double lo = fmax(a, o->t0_s), hi = fmin(b, o->t1_s);
        if (hi > lo) {
            e += o->power_w * (hi - lo);
            covered += hi - lo;
        }
    }
    return covered >= 0.5 * (b - a) ? e / covered / g : NAN;
}

static double finest_energy(const ctx *c, const tw_est_reading *rs, size_t nrs, double a, double b)
{
    double m = finest_mean_w(c, rs, nrs, a, b);
    return m * (b - a);
}

/* An instant at which piece_pass gives the activities' energy so far. */
typedef struct instant {
    double t;
    size_t i;
} instant;

static int instant_cmp(const void *a, const void *b)
{
    const instant *x = a, *y = b;
    return x->t < y->t ? -1 : x->t > y->t ? 1 : (x->i > y->i) - (x->i < y->i);
}

/* A piece still running at the time reached: its end and power. */
typedef struct running {
    double t1, w;
} running;

/* What results() needs of the pieces, in one pass over them at the
 * solution: each column's activity inside the fit span (act) and the activities' energy above the baseline
 * from the start to each of the instants q (sorted) into E[q[].i], so that a
 * span's is a difference of two. */
/* A piece's energy by the counters' model at the solution (0 for a name it
 * does not serve), its share of each feature's integral inside the fit
 * span [lo, hi] added to its column's c->cint. */
static double piece_counter_j(const ctx *c, const piece *p, double lo, double hi)
{
    const design *d = &c->f.d;
    if (!d->M || !c->ccol[p->name] || !(p->tot > 0)) return 0;
    double acc[TW_EST_MAX_FEATURES], share = p->share / p->tot, j = 0;
    counter_integral(d, NULL, 0, p->t0, p->t1, p->name, acc);
    for (size_t m = 0; m < d->M; m++)
        j += c->beta[d->K + d->N + m] * share * acc[m];
    if (!(hi > lo)) return j;
    if (lo > p->t0 || hi < p->t1) counter_integral(d, NULL, 0, lo, hi, p->name, acc);
    for (size_t m = 0; m < d->M; m++)
        c->cint[(size_t)p->name * d->M + m] += share * acc[m];
    return j;
}

static tw_status piece_pass(const ctx *c, double *act, const instant *q, size_t nq, double *E)
{
    const design *d = &c->f.d;
    piece_src src;
    tw_status st = piece_src_open(&src, &c->ls);
    running *run = NULL;
    size_t nrun = 0, cap = 0, qi = 0;
    double seen = 0; /* every piece so far, whole */
    while (st == TW_OK) {
        piece p;
        bool got = false;
        if ((st = piece_next(&src, &p, &got)) != TW_OK) break;
        double t = got ? p.t0 : INFINITY;
        for (; qi < nq && q[qi].t <= t; qi++) { /* every piece seen starts before q: less what runs past it */
            double sum = seen;
            for (size_t k = 0; k < nrun; k++)
                sum -= run[k].w * fmax(0.0, run[k].t1 - q[qi].t);
            E[q[qi].i] = sum;
        }
        if (!got) break;
        double lo = fmax(p.t0, d->T0), hi = fmin(p.t1, d->T1);
        if (hi > lo) act[p.name] += p.share * (hi - lo);
        double j = c->beta[d->K + p.name] * p.share * (p.t1 - p.t0) + piece_counter_j(c, &p, lo, hi);
        double w = p.t1 > p.t0 ? j / (p.t1 - p.t0) : 0; /* its power, taken as even over it for the instants */
        seen += j;
        size_t k = 0; /* those that ended: whole in every later instant */
        for (size_t m = 0; m < nrun; m++)
            if (run[m].t1 > p.t0) run[k++] = run[m];
        nrun = k;
        if (!room_for_one((void **)&run, &cap, nrun, sizeof *run, 64)) {
            st = tw_fail(TW_ENOMEM, "out of memory");
            break;
        }
        run[nrun++] = (running){p.t1, w};
    }
    free(run);
    piece_src_close(&src);
    return st;
}

/* A launch's energy at the solution: its name's power at its rate over its
 * span (the sum of its pieces'). */
static double launch_energy_j(const ctx *c, const launch *l)
{
    double P = c->peff ? c->peff[l->name] : c->beta[c->f.d.K + l->name];
    return P * rate_of(&c->ls, l) * (l->t1 - l->t0);
}

/* Every event's energy into *ev in order of event, NaN for those that are
 * not launches. Where the feed came in order of start, the classes' spills
 * merged by start then event give the launches in order of event; else
 * (an event set out of order, held in memory anyway) they are placed in an
 * array first. */
static tw_status spill_event_energies(const ctx *c, tw_est_evj *ev)
{
    double *all = NULL;
    if (!c->sorted) {
        if (!(all = malloc((c->nev ? c->nev : 1) * sizeof *all))) return tw_fail(TW_ENOMEM, "out of memory");
        for (size_t i = 0; i < c->nev; i++)
            all[i] = NAN;
    }
    tw_spill_reader r[2] = {{0}, {0}};
    tw_status st = tw_spill_reader_open(&r[0], &c->ls.cls[0]);
    if (st == TW_OK) st = tw_spill_reader_open(&r[1], &c->ls.cls[1]);
    const double nan = NAN;
    size_t next = 0; /* the next event to write */
    while (st == TW_OK) {
        const launch *k = tw_spill_peek(&r[0], &st), *m = st == TW_OK ? tw_spill_peek(&r[1], &st) : NULL;
        if (st != TW_OK || (!k && !m)) break;
        bool kernel = !m || (k && (k->t0 < m->t0 || (k->t0 == m->t0 && k->ev < m->ev)));
        const launch *l = kernel ? k : m;
        double j = launch_energy_j(c, l);
        r[kernel ? 0 : 1].pos++;
        if (all) {
            all[l->ev] = j;
            continue;
        }
        for (; st == TW_OK && next < l->ev; next++)
            st = tw_spill_append(&ev->sp, &nan);
        if (st == TW_OK) st = tw_spill_append(&ev->sp, &j);
        next++;
    }
    for (; st == TW_OK && next < c->nev; next++)
        st = tw_spill_append(&ev->sp, all ? &all[next] : &nan);
    if (st == TW_OK) st = tw_spill_flush(&ev->sp);
    tw_spill_reader_close(&r[0]);
    tw_spill_reader_close(&r[1]);
    free(all);
    return st;
}

/* Each name column's energy by the counters' model at the solution: its own
 * term over its activity plus its share of each feature's integral. */
static double column_energy_j(const ctx *c, size_t j, double act)
{
    const design *d = &c->f.d;
    double E = c->beta[d->K + j] * act;
    for (size_t m = 0; d->M && c->ccol[j] && m < d->M; m++)
        E += c->beta[d->K + d->N + m] * c->cint[j * d->M + m];
    return E;
}

/* Each column's power at the solution (c->peff), for its launches' energies:
 * the counters' names' energy over their activity (never below zero). */
static tw_status column_powers(ctx *c, const double *act)
{
    const design *d = &c->f.d;
    if (!(c->peff = malloc((d->N ? d->N : 1) * sizeof *c->peff))) return tw_fail(TW_ENOMEM, "out of memory");
    for (size_t j = 0; j < d->N; j++)
        c->peff[j] = !c->ccol[j]  ? c->beta[d->K + j]
                     : act[j] > 0 ? fmax(0.0, column_energy_j(c, j, act[j])) / act[j]
                                  : 0;
    return TW_OK;
}

/* The pass over the pieces: act and the activities' energy above the
 * baseline over the reference's span (*ref_above, when it has one) and over
 * each range (above[k]); the launches' energies into e->energies_j. */
static tw_status pieces_at_solution(ctx *c, double *act, double *ref_above, double *above)
{
    tw_estimate *e = c->e;
    size_t nq = 2 * c->nrng + 2;
    instant *q = malloc(nq * sizeof *q);
    double *E = malloc(nq * sizeof *E);
    tw_status st = q && E ? TW_OK : tw_fail(TW_ENOMEM, "out of memory");
    if (st == TW_OK && c->f.d.M) {
        c->cint = calloc(c->f.d.N * c->f.d.M, sizeof *c->cint);
        if (!c->cint) st = tw_fail(TW_ENOMEM, "out of memory");
    }
    if (st == TW_OK) {
        for (size_t k = 0; k < c->nrng; k++) {
            q[2 * k] = (instant){c->rng[k].t0, 2 * k};
            q[2 * k + 1] = (instant){c->rng[k].t1, 2 * k + 1};
        }
        bool ref = !isnan(e->reference_t0_s);
        q[nq - 2] = (instant){ref ? e->reference_t0_s : 0, nq - 2};
        q[nq - 1] = (instant){ref ? e->reference_t1_s : 0, nq - 1};
        qsort(q, nq, sizeof *q, instant_cmp);
        st = piece_pass(c, act, q, nq, E);
    }
    if (st == TW_OK) {
        *ref_above = E[nq - 1] - E[nq - 2];
        for (size_t k = 0; k < c->nrng; k++)
            above[k] = E[2 * k + 1] - E[2 * k];
    }
    if (st == TW_OK && c->f.d.M) st = column_powers(c, act);
    if (st == TW_OK) st = event_energies_new(&e->energies_j);
    if (st == TW_OK) st = spill_event_energies(c, e->energies_j);
    if (st == TW_OK) e->nevents = c->nev;
    free(q);
    free(E);
    return st;
}

/* What a unit's figures mean, from the constraint its fit holds it at, and
 * its one-sided upper bound (NaN where two-sided), for an activity `act`:
 * - at the power bound: the data asked for more than the GPU can draw above
 *   its baseline; the bound x its activity is the most the model can give,
 *   reported as such (its true energy likely more; its sd, the data's with
 *   the bound freed, is no interval around it);
 * - at zero: below resolution, bounded by 2 sd with zero freed (not by the
 *   estimate's shortfall: a dip of the noise below zero would otherwise buy a
 *   bound tighter than the data's resolution);
 * - free: below resolution where under 2 sd of its energy (or its sd is the
 *   prior's, not the data's), bounded by estimate + 2 sd; else ok.
 * Neither bound exceeds the power bound x its time.
 * One-sided 2 sd: ~97.7 % where the error is normal. */
static tw_est_status unit_status(const fit_state *f, size_t ku, double P, double sd, double act, double *upper_j)
{
    double E = P * act, Esd = sd * act;
    *upper_j = NAN;
    if (!(act > 0) || !isfinite(sd)) return TW_EST_UNOBSERVED;
    if (f->at_upper && f->at_upper[ku]) {
        *upper_j = E;
        return TW_EST_AT_POWER_BOUND;
    }
    /* the model gives no name more than the power bound over its time: a 2 sd bound above that
     * (a short name's, 1500 W on an H100 whose bound is 573 W) says nothing and reads absurd */
    double most = f->upper_w * act;
    if (f->bound[ku]) {
        *upper_j = fmin(SIGMAS * Esd, most);
        return TW_EST_BELOW_RESOLUTION;
    }
    if (Esd > 0 && (E < SIGMAS * Esd || sd > PRIOR_BOUND * f->prior_w)) {
        *upper_j = fmin(E + SIGMAS * Esd, most);
        return TW_EST_BELOW_RESOLUTION;
    }
    return TW_EST_OK;
}

/* A unit's figures at the solution. */
typedef struct unit_fig {
    double P, Psd, E, Esd, upper;
    double counter_w, own_w; /* counters: the counters' part of P and its own term (else NaN) */
    double adjust_j;         /* E as reported less the model's (a counters' energy under zero or at the bound) */
    tw_est_status status;
    bool counters; /* some member's power is the counters' */
    bool over;     /* the counters' model puts it above the power bound x its activity (kept) */
} unit_fig;

/* The variance of a unit's energy by the counters' model: its own term
 * (its linger in it: unit_power's power, whose sd is own_sd) x its activity
 * plus each feature's coefficient x its share of that feature (ci), with
 * their covariances. */
static double counter_energy_var(const fit_state *f, size_t u, double act, const double *ci, double own_sd)
{
    size_t K = f->d.K, q = K + f->U, ku = K + u, lu = counted_linger(f, u);
    double v = act * act * own_sd * own_sd;
    const double *cl = lu != SIZE_MAX && f->cov_f ? f->cov_f + (lu - f->U0) * q : NULL;
    for (size_t m = 0; f->cov_f && m < f->M; m++) {
        const double *cm = f->cov_f + m * q;
        v += 2 * act * ci[m] * (cm[ku] + (cl ? cm[K + lu] : 0));
        for (size_t n = 0; n < f->M; n++)
            v += ci[m] * ci[n] * cm[K + f->U0 + n];
    }
    return fmax(v, 0.0);
}

/* The status of a unit by the counters' model (its energy *E, sd Esd, over
 * an activity act): as unit_status's, its own term free of sign; an energy
 * under zero is reported as zero, below resolution; its own term held at the
 * power bound by the fit, at the bound. An energy over the power bound x its
 * activity by the counters' part is kept, and *over set: the bound is the
 * power limit less the quiet level, but the limit holds over the limiter's
 * averaging time, and bursts of tens of ms draw more (an H100's 20 ms buffer
 * read 923 W under a 700 W limit, results/h100x2/mpi-counters); clipping such
 * a name lost its energy from the GPU's total (-18 % against its counter). */
static tw_est_status counter_status(const fit_state *f, size_t ku, double *E, double Esd, double act, double *upper_j,
                                    bool *over)
{
    *upper_j = NAN;
    *over = false;
    if (!(act > 0) || !isfinite(Esd)) return TW_EST_UNOBSERVED;
    double most = f->upper_w * act;
    if (f->at_upper && f->at_upper[ku]) {
        *E = *upper_j = fmin(*E, most);
        return TW_EST_AT_POWER_BOUND;
    }
    *over = *E > most;
    if (*E < SIGMAS * Esd) {
        *E = fmax(*E, 0.0);
        *upper_j = *over ? *E + SIGMAS * Esd : fmin(*E + SIGMAS * Esd, most);
        return TW_EST_BELOW_RESOLUTION;
    }
    return TW_EST_OK;
}

/* A name unit's power and its sd with its linger term's folded in (the
 * sum's variance with their covariance). */
static void unit_power(const fit_state *f, size_t u, double *P, double *sd)
{
    size_t K = f->d.K, q = K + f->U, ku = K + u;
    *P = f->beta_u[ku];
    double v = f->var_u[ku];
    size_t lu = counted_linger(f, u);
    if (lu != SIZE_MAX) {
        *P += f->beta_u[K + lu];
        v += f->var_u[K + lu] + (f->cov_f ? 2 * f->cov_f[(lu - f->U0) * q + ku] : 0);
    }
    *sd = sqrt(fmax(v, 0.0));
}

/* Every name unit's figures (units from U0 on, the counters' features and
 * the linger terms, are left zero); NULL when out of memory. */
static unit_fig *unit_figures(const ctx *c, const double *uact)
{
    const fit_state *f = &c->f;
    size_t K = f->d.K, M = f->d.M, N = f->d.N;
    unit_fig *fig = calloc(f->U ? f->U : 1, sizeof *fig);
    double *uci = calloc((f->U ? f->U : 1) * (M ? M : 1), sizeof *uci);
    if (!fig || !uci) {
        free(fig);
        free(uci);
        return NULL;
    }
    for (size_t j = 0; M && j < N; j++)
        if (c->ccol[j]) {
            fig[f->unit[j]].counters = true;
            for (size_t m = 0; m < M; m++)
                uci[f->unit[j] * M + m] += c->cint[j * M + m];
        }
    for (size_t u = 0; u < f->U0; u++) {
        unit_fig *x = &fig[u];
        double a = uact[u];
        if (!x->counters) {
            unit_power(f, u, &x->P, &x->Psd);
            /* as reported less the model's: a linger that leaves the power under zero, or one of a
             * name held at a constraint (reported as held) */
            x->adjust_j = x->P < 0 ? -x->P * a : 0;
            if (f->lunit && f->lunit[u] != SIZE_MAX && counted_linger(f, u) == SIZE_MAX)
                x->adjust_j = -f->beta_u[K + f->lunit[u]] * a;
            x->P = fmax(x->P, 0.0);
            x->E = x->P * a;
            x->Esd = x->Psd * a;
            x->status = unit_status(f, K + u, x->P, x->Psd, a, &x->upper);
            x->counter_w = x->own_w = NAN;
            continue;
        }
        double cj = 0;
        for (size_t m = 0; m < M; m++)
            cj += f->beta_u[K + f->U0 + m] * uci[u * M + m];
        double own_sd;
        unit_power(f, u, &x->own_w, &own_sd);
        x->counter_w = a > 0 ? cj / a : NAN;
        x->E = x->own_w * a + cj;
        double modelled = x->E;
        x->Esd = sqrt(counter_energy_var(f, u, a, uci + u * M, own_sd));
        x->status = counter_status(f, K + u, &x->E, x->Esd, a, &x->upper, &x->over);
        x->adjust_j = x->E - modelled;
        x->P = a > 0 ? x->E / a : NAN;
        x->Psd = a > 0 ? x->Esd / a : NAN;
    }
    free(uci);
    return fig;
}

/* ---------------------------------------------------------------- names the data cannot split */

/* At most this many unresolved units (those with the most activity) are
 * looked at for trading: the covariance costs a solve of the normal
 * equations each; the rest are short names whose bounds are small anyway. */
#define MAX_TRADE_UNITS 256

/* The covariance of the powers of the n units u[] (W^2, C[a * n + b]) with
 * every constraint freed and the priors kept, inflated as variances() makes
 * each one's variance, the clock offset's share included; NaN for a unit
 * no window sees. */
static tw_status unit_covariance(const ctx *c, const size_t *u, size_t n, double *C)
{
    const fit_state *f = &c->f;
    size_t K = f->d.K, q = K + f->U, m = 0;
    size_t *idx = malloc(q * sizeof *idx), *pos = malloc(q * sizeof *pos);
    double *L = malloc(q * q * sizeof *L), *x = malloc(q * sizeof *x);
    tw_status st = idx && pos && L && x ? TW_OK : tw_fail(TW_ENOMEM, "out of memory");
    for (size_t j = 0; st == TW_OK && j < q; j++) {
        pos[j] = SIZE_MAX;
        if (f->Gu[j * q + j] > 0) {
            pos[j] = m;
            idx[m++] = j;
        }
    }
    bool ok = st == TW_OK && scaled_factor(f, idx, m, L);
    double s2 = c->shift_sd * c->shift_sd;
    for (size_t a = 0; st == TW_OK && a < n; a++) {
        size_t ja = K + u[a];
        for (size_t b = 0; b < n; b++)
            C[a * n + b] = NAN;
        if (!ok || pos[ja] == SIZE_MAX) continue;
        memset(x, 0, m * sizeof *x);
        x[pos[ja]] = 1;
        tw_cholesky_solve(L, m, x);
        for (size_t b = 0; b < n; b++) {
            size_t jb = K + u[b];
            if (pos[jb] == SIZE_MAX) continue;
            C[a * n + b] = f->inflate * x[pos[jb]] / sqrt(f->Gu[ja * q + ja] * f->Gu[jb * q + jb]);
            if (c->dbeta_u && s2 > 0) C[a * n + b] += c->dbeta_u[ja] * c->dbeta_u[jb] * s2;
        }
    }
    free(idx);
    free(pos);
    free(L);
    free(x);
    return st;
}

/* Whether name unit u is one the data leave unresolved and that may join
 * others: a kernel unit the readings alone give its power (not the
 * counters'), in no group the user asked for and not the pooled names, with
 * a power whose error (constraints freed) is over PRIOR_BOUND of the
 * prior's: the prior's figure, not the data's. One held at the power bound
 * with a small error is resolved: the data ask for more than the bound
 * (bursts above the power limit) and it stays at the bound. */
static bool tradable(const ctx *c, const unit_fig *fig, const double *uact, const bool *fixed, size_t u)
{
    const fit_state *f = &c->f;
    if (u >= f->U0 || fixed[u] || fig[u].counters || !(uact[u] > 0)) return false;
    return !(fig[u].Psd <= PRIOR_BOUND * f->prior_w);
}

/* The units cand[0..n-1] by activity, most first (ties: the lower unit first). */
static tw_status sort_by_activity(size_t *cand, size_t n, const double *uact)
{
    instant *v = malloc((n ? n : 1) * sizeof *v);
    if (!v) return tw_fail(TW_ENOMEM, "out of memory");
    for (size_t i = 0; i < n; i++)
        v[i] = (instant){-uact[cand[i]], cand[i]};
    qsort(v, n, sizeof *v, instant_cmp);
    for (size_t i = 0; i < n; i++)
        cand[i] = v[i].i;
    free(v);
    return TW_OK;
}

/* A set of names whose summed energy E (variance v, activity act) the data
 * resolve: a power error within PRIOR_BOUND of the prior's and E at least
 * SIGMAS errors (a set whose energy is the prior's, or under its error,
 * joins another). */
static bool set_resolved(const fit_state *f, double E, double v, double act)
{
    if (!(v >= 0) || !(act > 0)) return true; /* nothing to join for */
    double sd = sqrt(v);
    return sd / act <= PRIOR_BOUND * f->prior_w && E >= SIGMAS * sd;
}

/* Set B joins set A in the sets' covariance V (n x n): A's row and column
 * become the sums; B's are left (no longer read). */
static void join_sets(double *V, size_t n, size_t A, size_t B)
{
    double vab = V[A * n + B];
    for (size_t k = 0; k < n; k++) {
        if (k == A || k == B) continue;
        V[A * n + k] += V[B * n + k];
        V[k * n + A] = V[A * n + k];
    }
    V[A * n + A] += V[B * n + B] + 2 * vab;
}

/* Names the data cannot split (issue 15: "report the group's energy, not an
 * arbitrary split"). Names interleaved below every reading's resolution (a
 * PyTorch step's 10-100 us kernels in 20 ms windows) are not parallel
 * columns, so the cosine test of groups() keeps them apart, and the fit
 * splits their energy arbitrarily: one at the power bound, its neighbour
 * at zero, swapped in the next run. Their sum is what the data fix. Each
 * unresolved unit (tradable) starts a set; the unresolved set (set_resolved)
 * with the most activity joins the set whose energy it trades the most with
 * (the most negative correlation of their energies), until every set is
 * resolved or trades with none. sup[u] is the unit that represents u (itself
 * where u is joined to none); for each representative of two or more,
 * traded[r] is set and Eout[r], Esd[r] are the members' summed energy and
 * its error (the members' covariances included). */
static tw_status trade_groups(const ctx *c, const unit_fig *fig, const double *uact, size_t *sup, bool *traded,
                              double *Eout, double *Esd)
{
    const fit_state *f = &c->f;
    size_t U = f->U, N = f->d.N, n = 0;
    for (size_t u = 0; u < U; u++) {
        sup[u] = u;
        traded[u] = false;
    }
    bool *fixed = calloc(U ? U : 1, sizeof *fixed);
    size_t *cand = malloc((U ? U : 1) * sizeof *cand);
    if (!fixed || !cand) {
        free(fixed);
        free(cand);
        return tw_fail(TW_ENOMEM, "out of memory");
    }
    for (size_t j = 0; j < N; j++) /* copies, groups asked for, the pooled names: as they are */
        if (c->copy[j] || (c->pinned && c->pinned[j]) || (c->e->pooled && j == N - 1)) fixed[f->unit[j]] = true;
    for (size_t u = 0; u < f->U0; u++)
        if (tradable(c, fig, uact, fixed, u)) cand[n++] = u;
    tw_status st = TW_OK;
    double *V = NULL, *E = NULL, *act = NULL;
    size_t *parent = NULL;
    bool *live = NULL, *final = NULL;
    if (n < 2) goto out;
    if ((st = sort_by_activity(cand, n, uact)) != TW_OK) goto out;
    if (n > MAX_TRADE_UNITS) n = MAX_TRADE_UNITS;
    V = malloc(n * n * sizeof *V);
    E = malloc(n * sizeof *E);
    act = malloc(n * sizeof *act);
    parent = malloc(n * sizeof *parent);
    live = calloc(n, sizeof *live);
    final = calloc(n, sizeof *final);
    if (!V || !E || !act || !parent || !live || !final) {
        st = tw_fail(TW_ENOMEM, "out of memory");
        goto out;
    }
    if ((st = unit_covariance(c, cand, n, V)) != TW_OK) goto out;
    for (size_t a = 0; a < n; a++) { /* the energies' covariance (NaN: none, no trade) */
        parent[a] = a;
        for (size_t b = 0; b < n; b++) {
            V[a * n + b] *= uact[cand[a]] * uact[cand[b]];
            if (!isfinite(V[a * n + b])) V[a * n + b] = a == b ? NAN : 0;
        }
    }
    /* each set: its energy, its activity, its members' covariance with every other set's (V, by rows) */
    for (size_t a = 0; a < n; a++) {
        E[a] = fig[cand[a]].E;
        act[a] = uact[cand[a]];
        live[a] = true;
    }
    for (;;) {
        size_t A = SIZE_MAX; /* the unresolved set with the most activity still to join */
        for (size_t a = 0; a < n; a++)
            if (live[a] && !final[a] && !set_resolved(f, E[a], V[a * n + a], act[a]) &&
                (A == SIZE_MAX || act[a] > act[A]))
                A = a;
        if (A == SIZE_MAX) break;
        size_t B = SIZE_MAX; /* the set it trades the most energy with */
        double best = 0;
        for (size_t b = 0; b < n; b++) {
            if (!live[b] || b == A || !(V[A * n + A] > 0) || !(V[b * n + b] > 0)) continue;
            double rho = V[A * n + b] / sqrt(V[A * n + A] * V[b * n + b]);
            if (rho < best) {
                best = rho;
                B = b;
            }
        }
        if (B == SIZE_MAX) { /* trades with none: as it is */
            final[A] = true;
            continue;
        }
        join_sets(V, n, A, B);
        E[A] += E[B];
        act[A] += act[B];
        live[B] = false;
        parent[B] = A;
        final[A] = false;
    }
    for (size_t a = 0; a < n; a++) {
        size_t r = a;
        while (parent[r] != r)
            r = parent[r];
        if (r == a) continue;
        sup[cand[a]] = cand[r];
        traded[cand[r]] = true;
    }
    for (size_t a = 0; a < n; a++)
        if (traded[cand[a]]) {
            Eout[cand[a]] = E[a];
            Esd[cand[a]] = sqrt(fmax(V[a * n + a], 0.0));
        }
out:
    free(fixed);
    free(cand);
    free(V);
    free(E);
    free(act);
    free(parent);
    free(live);
    free(final);
    return st;
}

/* Appends unit u's first member's name to the list buf (", " between): a
 * warning's examples. */
static void list_unit(const tw_estimate *e, const fit_state *f, const uint32_t *col, size_t u, char *buf, size_t cap)
{
    for (size_t i = 0; i < e->nnames; i++)
        if (f->unit[col[i]] == u) {
            size_t used = strlen(buf);
            snprintf(buf + used, cap - used, "%s%.60s", used ? ", " : "", e->names[i].name);
            return;
        }
}

/* A set of names the data cannot split (trade_groups): its summed energy E
 * and error Esd over its activity act; ok, or below resolution as a name
 * is (unit_status), its bound held under the power bound x its activity. */
static void traded_figures(const fit_state *f, double E, double Esd, double act, tw_est_group *g)
{
    g->traded = true;
    g->active_s = act;
    g->energy_j = fmax(E, 0.0);
    g->energy_sd_j = Esd;
    g->power_w = act > 0 ? g->energy_j / act : NAN;
    g->power_sd_w = act > 0 ? Esd / act : NAN;
    g->upper_j = NAN;
    g->status = TW_EST_OK;
    if (!(act > 0) || !isfinite(Esd)) {
        g->status = TW_EST_UNOBSERVED;
        return;
    }
    if (g->energy_j < SIGMAS * Esd) {
        g->status = TW_EST_BELOW_RESOLUTION;
        g->upper_j = fmin(g->energy_j + SIGMAS * Esd, f->upper_w * act);
    }
}

static tw_status results(ctx *c, const tw_est_reading *rs, size_t nrs, const uint32_t *col)
{
    tw_estimate *e = c->e;
    fit_state *f = &c->f;
    design *d = &f->d;
    size_t K = d->K;
    /* activity inside the fit span, per column and per unit */
    double *act = calloc(d->N ? d->N : 1, sizeof *act);
    double *uact = calloc(f->U ? f->U : 1, sizeof *uact);
    double *above = malloc((c->nrng ? c->nrng : 1) * sizeof *above), ref_above = 0;
    size_t *members = NULL, *gid = NULL, *sup = NULL; /* freed at out, as the above */
    bool *traded = NULL;
    double *supE = NULL, *supEsd = NULL, *supact = NULL;
    unit_fig *fig = NULL;
    tw_status st =
        act && uact && above ? pieces_at_solution(c, act, &ref_above, above) : tw_fail(TW_ENOMEM, "out of memory");
    if (st != TW_OK) goto out;
    for (size_t j = 0; j < d->N; j++)
        uact[f->unit[j]] += act[j];
    size_t nU = f->U ? f->U : 1;
    double kern = 0, copy = 0;
    fig = unit_figures(c, uact);
    sup = malloc(nU * sizeof *sup);
    traded = calloc(nU, sizeof *traded);
    supE = calloc(nU, sizeof *supE);
    supEsd = calloc(nU, sizeof *supEsd);
    supact = calloc(nU, sizeof *supact);
    if (!fig || !sup || !traded || !supE || !supEsd || !supact) goto no_memory;
    /* names the data cannot split: one group each set of them (sup: the unit that stands for each) */
    if ((st = trade_groups(c, fig, uact, sup, traded, supE, supEsd)) != TW_OK) goto out;
    for (size_t u = 0; u < f->U; u++)
        supact[sup[u]] += uact[u];
    /* per name (pooled names share their column's figures) */
    if (!(members = calloc(nU, sizeof *members))) goto no_memory;
    for (size_t i = 0; i < c->names.n; i++)
        members[sup[f->unit[col[i]]]]++;
    e->nnames = c->names.n;
    e->names = malloc((e->nnames ? e->nnames : 1) * sizeof *e->names);
    if (!e->names) goto no_memory;
    if (e->nnames) memcpy(e->names, c->names.v, e->nnames * sizeof *e->names);
    /* groups: units of several columns, and sets of units the data cannot split */
    gid = malloc(nU * sizeof *gid);
    e->groups = calloc(nU, sizeof *e->groups);
    if (!gid || !e->groups) goto no_memory;
    for (size_t u = 0; u < f->U; u++)
        gid[u] = sup[u] == u && members[u] > 1 ? e->ngroups++ : (size_t)-1;
    for (size_t u = 0; u < f->U0; u++) { /* the energy the lingers add, as folded */
        double lj = linger_energy(f, u, uact[u]);
        if (isfinite(lj)) e->linger_j += lj;
    }
    bool oom = false;
    for (size_t u = 0; !oom && u < f->U; u++) {
        if (gid[u] == (size_t)-1) continue;
        tw_est_group *g = &e->groups[gid[u]];
        if (traded[u])
            traded_figures(f, supE[u], supEsd[u], supact[u], g);
        else {
            g->power_w = fig[u].P;
            g->power_sd_w = fig[u].Psd;
            g->energy_j = fig[u].E;
            g->energy_sd_j = fig[u].Esd;
            g->active_s = uact[u];
            g->status = fig[u].status;
            g->upper_j = fig[u].upper;
        }
        oom = !(g->members = malloc(members[u] * sizeof *g->members));
    }
    if (oom) goto no_memory;
    for (size_t i = 0; i < e->nnames; i++) {
        tw_est_name *x = &e->names[i];
        size_t j = col[i], u = f->unit[j], su = sup[u];
        x->active_s = act[j];
        x->method = fig[u].counters ? TW_EST_BY_COUNTERS : TW_EST_BY_READINGS;
        x->counter_w = fig[u].counter_w;
        x->own_w = fig[u].own_w;
        x->linger_j = u < f->U0 && gid[su] == (size_t)-1 ? linger_energy(f, u, uact[u]) : NAN;
        if (gid[su] != (size_t)-1) {
            tw_est_group *g = &e->groups[gid[su]];
            g->members[g->nmembers++] = i;
            g->launches += x->launches;
            g->time_s += x->time_s;
            x->group = (int)gid[su];
            x->status = TW_EST_GROUPED;
            x->power_w = x->power_sd_w = x->energy_j = x->energy_sd_j = x->upper_j = NAN;
            continue;
        }
        x->power_w = fig[u].P;
        x->power_sd_w = fig[u].Psd;
        x->energy_j = fig[u].E;
        x->energy_sd_j = fig[u].Esd;
        x->status = fig[u].status;
        x->upper_j = fig[u].upper;
        if (x->status == TW_EST_UNOBSERVED) x->energy_j = x->energy_sd_j = NAN;
    }
    /* names at the power bound: the model does not fit them (they asked for
     * more than the GPU can draw); said, with the first few */
    char held[256] = "";
    for (size_t u = 0; u < f->U; u++) {
        bool at_bound = (f->at_upper && f->at_upper[K + u]) || fig[u].status == TW_EST_AT_POWER_BOUND;
        if (!at_bound || !(uact[u] > 0) || traded[sup[u]]) continue; /* a set's sum is what it reports */
        if (++e->at_limit <= 3) list_unit(e, f, col, u, held, sizeof held);
    }
    if (e->at_limit)
        warn(e,
             "%zu name(s) reached the bound of %.0f W above the baseline (the GPU's power limit, %.0f W, less its "
             "quiet level): their energies are not resolved by the model (%s%s)",
             e->at_limit, f->upper_w, e->power_limit_w, held, e->at_limit > 3 ? ", ..." : "");
    /* names the counters' model puts above that bound: kept (bursts above the limit,
     * counter_status), said */
    size_t over = 0;
    double adjust = 0; /* the reported energies less the model's: in the check against the reference */
    char above_bound[256] = "";
    for (size_t u = 0; u < f->U0; u++) {
        adjust += fig[u].adjust_j;
        if (fig[u].over && ++over <= 3) list_unit(e, f, col, u, above_bound, sizeof above_bound);
    }
    if (over)
        warn(e,
             "%zu name(s) drew more than %.0f W above the baseline by the activity counters' model, the GPU's power "
             "limit (%.0f W) less its quiet level (bursts shorter than the power limiter's averaging time can draw "
             "more than the limit): kept as the model gives them (%s%s)",
             over, f->upper_w, e->power_limit_w, above_bound, over > 3 ? ", ..." : "");
    /* names the readings put apart from the counters' model: kept on it (APART_Z), said */
    char apart[256] = "";
    size_t napart = 0;
    for (size_t u = 0; f->apart_u && u < f->U0; u++)
        if (f->apart_u[u] && ++napart <= 3) list_unit(e, f, col, u, apart, sizeof apart);
    if (napart)
        warn(e,
             "%zu name(s) differ from the activity counters' model by more than %.0f of their standard errors "
             "against the readings: kept on the model, and left out of the scatter that sets the other names' "
             "own terms (%s%s)",
             napart, APART_Z, apart, napart > 3 ? ", ..." : "");
    /* the energies by kind: every unit's energy to the kind of its members */
    for (size_t u = 0; u < f->U0; u++) {
        double E = isfinite(fig[u].E) ? fig[u].E : 0; /* as the names report it (an energy under zero: 0) */
        /* the kind of the unit: its first member's */
        for (size_t i = 0; i < e->nnames; i++)
            if (f->unit[col[i]] == u) {
                if (strcmp(e->names[i].kind, "kernel") == 0)
                    kern += E;
                else
                    copy += E;
                break;
            }
    }
    for (size_t g = 0; g < e->ngroups; g++) {
        tw_est_group *gr = &e->groups[g];
        const tw_est_name *first = &e->names[gr->members[0]];
        if (e->pooled && f->unit[col[gr->members[0]]] == f->unit[d->N - 1] && col[gr->members[0]] == d->N - 1)
            snprintf(gr->label, sizeof gr->label, POOLED_NAME " (%zu names)", gr->nmembers);
        else
            snprintf(gr->label, sizeof gr->label, "group %zu%s: %.100s (+%zu)", g + 1,
                     gr->traded ? ", not split by the data" : "", first->name, gr->nmembers - 1);
    }
    e->kernels_j = kern;
    e->copies_j = copy;
    /* baseline */
    double bj = 0, bmin = INFINITY, bmax = -INFINITY;
    for (size_t k = 0; k < K; k++) {
        bmin = fmin(bmin, f->beta_u[k]);
        bmax = fmax(bmax, f->beta_u[k]);
    }
    if (K == 1)
        bj = f->beta_u[0] * (d->T1 - d->T0);
    else
        for (size_t k = 0; k + 1 < K; k++)
            bj += 0.5 * (f->beta_u[k] + f->beta_u[k + 1]) * d->dk;
    if (f->UR != SIZE_MAX) { /* PM sampling's own power: the GPU's, not a kernel's */
        e->counters.pm_w = f->beta_u[K + f->UR];
        e->counters.pm_sd_w = sqrt(f->var_u[K + f->UR]);
        e->counters.pm_j = e->counters.pm_w * e->counters.window_s;
        for (size_t r = 0; r < TW_EST_PM_EDGES; r++)
            e->counters.pm_edge_w[r] = f->beta_u[K + f->UR + 1 + r];
        if (!(e->pm_w0 = malloc(d->nw * sizeof *e->pm_w0)) || !(e->pm_w1 = malloc(d->nw * sizeof *e->pm_w1)))
            goto no_memory;
        memcpy(e->pm_w0, d->w0, d->nw * sizeof *e->pm_w0);
        memcpy(e->pm_w1, d->w1, d->nw * sizeof *e->pm_w1);
        e->pm_nw = d->nw;
        e->counters.pm_edge_j = pm_edges_j(e, d->T0, d->T1);
        bj += e->counters.pm_j + e->counters.pm_edge_j;
    }
    e->baseline_j = bj;
    if (!(e->knot_w = malloc(K * sizeof *e->knot_w))) goto no_memory;
    memcpy(e->knot_w, f->beta_u, K * sizeof *e->knot_w);
    e->baseline_min_w = bmin;
    e->baseline_max_w = bmax;
    e->baseline_mean_w = bj / (d->T1 - d->T0);
    e->model_j = bj + kern + copy;
    if (isnan(e->reference_j)) {
        size_t best = finest_reading(rs, nrs);
        e->reference_j = finest_energy(c, rs, nrs, d->T0, d->T1);
        snprintf(e->reference, sizeof e->reference, "%s", rs[best].name ? rs[best].name : "?");
    }
    /* against the reference over its own span (the fit span without any
     * parts of its windows), else over the fit span */
    double model_ref = e->model_j;
    if (!isnan(e->reference_t0_s)) {
        double a = e->reference_t0_s, b = e->reference_t1_s;
        model_ref = tw_estimate_baseline_j(e, a, b) + ref_above + adjust;
    }
    e->model_ref_j = model_ref;
    e->conservation_pct = 100.0 * (model_ref / e->reference_j - 1.0);
    e->ranges = calloc(c->nrng ? c->nrng : 1, sizeof *e->ranges);
    if (!e->ranges) goto no_memory;
    /* ranges: measured energy over the span, and the activities' part */
    for (size_t k = 0; k < c->nrng; k++) {
        const seen_range *ev = &c->rng[k];
        tw_est_range *r = &e->ranges[e->nranges++];
        r->name = ev->name;
        r->domain = ev->domain;
        r->tid = ev->tid;
        r->depth = ev->depth;
        r->start_s = ev->t0;
        r->end_s = ev->t1;
        r->event = ev->ev;
        r->energy_j = finest_energy(c, rs, nrs, ev->t0, ev->t1);
        r->energy_sd_j = NAN; /* the finest reading's own scatter over a span is not known here */
        r->above_j = above[k];
        r->baseline_j = r->energy_j - above[k];
    }
    goto out;
no_memory:
    st = tw_fail(TW_ENOMEM, "out of memory");
out:
    free(act);
    free(uact);
    free(above);
    free(members);
    free(gid);
    free(fig);
    free(sup);
    free(traded);
    free(supE);
    free(supEsd);
    free(supact);
    return st;
}

typedef struct ranked {
    tw_est_name x;
    size_t old;
} ranked;

static int name_by_energy(const void *a, const void *b)
{
    const tw_est_name *x = &((const ranked *)a)->x, *y = &((const ranked *)b)->x;
    double ex = isnan(x->energy_j) ? -1 : x->energy_j, ey = isnan(y->energy_j) ? -1 : y->energy_j;
    if (ex != ey) return ex > ey ? -1 : 1;
    if (x->time_s != y->time_s) return x->time_s > y->time_s ? -1 : 1;
    return strcmp(x->name, y->name);
}

/* Names by energy, largest first; groups' member indices follow. */
static tw_status sort_names(tw_estimate *e)
{
    size_t n = e->nnames;
    ranked *r = malloc((n ? n : 1) * sizeof *r);
    size_t *newpos = malloc((n ? n : 1) * sizeof *newpos);
    if (!r || !newpos) {
        free(r);
        free(newpos);
        return tw_fail(TW_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < n; i++)
        r[i] = (ranked){e->names[i], i};
    qsort(r, n, sizeof *r, name_by_energy);
    for (size_t k = 0; k < n; k++) {
        e->names[k] = r[k].x;
        newpos[r[k].old] = k;
    }
    for (size_t g = 0; g < e->ngroups; g++)
        for (size_t m = 0; m < e->groups[g].nmembers; m++)
            e->groups[g].members[m] = newpos[e->groups[g].members[m]];
    free(r);
    free(newpos);
    return TW_OK;
}

tw_status tw_estimate_run(const tw_est_reading *readings, size_t nreadings, const tw_events *events,
                          const tw_est_config *cfg, tw_estimate **out)
{
    if (!events) {
        tw_clear_error();
        return tw_fail(TW_EINVAL, "tw_estimate_run: bad argument");
    }
    tw_feed f = tw_feed_of_events(events);
    return tw_estimate_feed(readings, nreadings, &f, cfg, out);
}

tw_status tw_estimate_feed(const tw_est_reading *readings, size_t nreadings, const tw_feed *feed,
                           const tw_est_config *cfg_in, tw_estimate **out)
{
    tw_clear_error();
    if (!out || !readings || nreadings == 0 || !feed) return tw_fail(TW_EINVAL, "tw_estimate_run: bad argument");
    *out = NULL;
    tw_est_config cfg;
    tw_est_config_from(&cfg, cfg_in);
    if (nreadings > sizeof((tw_estimate *)0)->readings / sizeof(tw_est_reading_stats))
        return tw_fail(TW_EINVAL, "tw_estimate_run: at most 8 readings");
    ctx c;
    memset(&c, 0, sizeof c);
    c.ls.cls[0].fd = c.ls.cls[1].fd = c.ls.pieces.fd = c.ls.lpieces.fd = -1; /* no spill yet */
    c.e = calloc(1, sizeof *c.e);
    if (!c.e) return tw_fail(TW_ENOMEM, "out of memory");
    tw_estimate *e = c.e;
    e->idle_before_w = e->idle_after_w = NAN;
    e->reference_t0_s = e->reference_t1_s = NAN;
    uint32_t *col = NULL;
    tw_status st = collect(&c, feed);
    if (st == TW_OK && !(col = malloc((c.names.n ? c.names.n : 1) * sizeof *col)))
        st = tw_fail(TW_ENOMEM, "out of memory");
    size_t N = 0;
    if (st == TW_OK) st = columns(&c, cfg.max_names ? cfg.max_names : DEFAULT_MAX_NAMES, col, &N);
    if (st == TW_OK &&
        (!(c.copy = calloc(N ? N : 1, sizeof *c.copy)) || !(c.seen = malloc((N ? N : 1) * sizeof *c.seen))))
        st = tw_fail(TW_ENOMEM, "out of memory");
    for (size_t j = 0; st == TW_OK && j < N; j++)
        c.seen[j] = true;
    for (size_t i = 0; st == TW_OK && i < c.names.n; i++) {
        if (strcmp(c.names.v[i].kind, "kernel") != 0) c.copy[col[i]] = true;
        if (!seen_by_counters(&c.names.v[i])) c.seen[col[i]] = false;
    }
    c.ls.seen = c.seen;
    if (st == TW_OK) {
        st = by_class(&c.ls, c.sorted, c.names.n, N, col, c.copy);
        if (st == TW_OK) st = rates(&c.ls, N);
        if (st == TW_OK) st = make_pieces(&c.ls);
    }
    if (st == TW_OK) st = fit_span(&c, readings, nreadings, &cfg);
    design *d = &c.f.d;
    if (st == TW_OK) {
        d->N = N;
        d->ls = &c.ls;
        pm_windows(&c, &cfg);
        st = counters_prepare(&c, &cfg, e->pooled ? N - 1 : (size_t)-1);
    }
    if (st == TW_OK) st = linger_columns(&c, &cfg, col);
    if (st == TW_OK) {
        d->p = d->K + N + d->M + d->NL + d->R;
        d->x = malloc(d->p * sizeof *d->x);
        d->touch = malloc(d->p * sizeof *d->touch);
        d->mark = calloc(d->p, sizeof *d->mark);
        c.beta = calloc(d->p, sizeof *c.beta);
        if (!d->x || !d->touch || !d->mark || !c.beta) st = tw_fail(TW_ENOMEM, "out of memory");
    }
    if (st == TW_OK) st = select_windows(&c, readings, nreadings);
    size_t used = 0;
    for (size_t r = 0; st == TW_OK && r < nreadings; r++) {
        st = accumulate(d, &c.f.R[r], cfg.cancel, &c.rows[r]);
        c.f.R[r].s2 = 1.0; /* first pass: every reading a second's weight alike */
        used += c.f.R[r].n;
    }
    if (st == TW_OK && used == 0) st = tw_fail(TW_EEMPTY, "no observation window lies inside the fit span");
    if (st == TW_OK) st = groups(&c, &cfg, col);
    double smooth = cfg.smooth > 0 ? cfg.smooth : DEFAULT_SMOOTH;
    /* pass A weighs every reading's second alike and gives each its noise;
     * then the prior's scale, the clock offset, and two passes with both */
    size_t fine = 0;
    for (size_t r = 1; st == TW_OK && r < nreadings; r++)
        if (c.f.R[r].n > c.f.R[fine].n) fine = r;
    c.f.upper_w = st == TW_OK ? upper_bound_w(&c.f.R[fine], cfg.power_limit_w, cfg.active_idle_w) : INFINITY;
    c.f.base_w = cfg.active_idle_w > 0 && isfinite(cfg.active_idle_w) ? cfg.active_idle_w : NAN;
    for (int pass = 0; pass < 3 && st == TW_OK; pass++) {
        if (pass == 2 && d->M) st = counter_model_priors(&c.f, smooth, c.beta, &e->counters);
        if (st == TW_OK) st = linger_priors(&c.f);
        if (st != TW_OK) break;
        if (pass == 1) {
            c.f.prior_w = prior_scale(&c.f.R[fine]);
            if (d->M) st = counter_priors(&c.f, c.ccol, &e->counters);
            if (st == TW_OK) st = linger_priors(&c.f);
            if (st != TW_OK) break;
            if (c.nl && c.f.R[fine].n >= MIN_SHIFT_WINDOWS && d->p <= MAX_SHIFT_UNKNOWNS) {
                st = find_shift(&c, fine, smooth);
                c.shift_searched = st == TW_OK;
                for (size_t r = 0; st == TW_OK && d->shift != 0 && r < nreadings; r++)
                    st = accumulate(d, &c.f.R[r], cfg.cancel, &c.rows[r]);
            } else if (c.nl) {
                warn(e, "the activities' clock was not matched to the readings' (%s): taken as it is",
                     d->p > MAX_SHIFT_UNKNOWNS ? "too many names" : "too few windows");
            }
            if (st != TW_OK) break;
        }
        windows_idle(&cfg); /* the fit reads none of them */
        st = fit_once(&c.f, smooth, c.beta);
        if (st == TW_OK && linger_hold(&c.f)) st = fit_once(&c.f, smooth, c.beta);
        if (st != TW_OK) break;
        for (size_t r = 0; r < nreadings; r++) {
            rd *R = &c.f.R[r];
            if (R->n == 0) continue;
            /* the noise from the normal equations, without a pass over the
             * windows; the last pass's residuals also give rms and lag1 */
            if (pass < 2)
                R->s2 = rss_of(d, R, c.beta) / (double)R->n;
            else if ((st = residuals(d, R, c.beta, &c.rows[r])) != TW_OK)
                break;
            if (!(R->s2 > 0)) R->s2 = 1e-12;
        }
    }
    windows_idle(&cfg); /* the passes over them done */
    e->shift_s = d->shift;
    e->prior_w = c.f.prior_w;
    e->linger_s = d->NL ? d->ltau : NAN;
    e->lingering = d->NL;
    e->power_limit_w = cfg.power_limit_w > 0 ? cfg.power_limit_w : NAN;
    e->power_bound_w = isfinite(c.f.upper_w) ? c.f.upper_w : NAN;
    e->active_idle_w = c.f.base_w;
    if (st == TW_OK) st = idle_share(&c.ls, c.first_t0, c.last_t1, e->fit_t0_s, e->fit_t1_s, &e->idle_share);
    if (e->idle_share < MIN_IDLE_SHARE && c.nl && isfinite(c.f.base_w))
        warn(e,
             "the GPU idled %.1f %% of the fit span: the baseline cannot be measured under the activity and is "
             "the profile's active-idle level (%.1f W), each name's power above it",
             100.0 * e->idle_share, c.f.base_w);
    else if (e->idle_share < MIN_IDLE_SHARE && c.nl)
        warn(e,
             "the GPU idled %.1f %% of the fit span and no profile gives its active-idle level: the baseline and "
             "the names' powers cannot be told apart",
             100.0 * e->idle_share);
    if (st == TW_OK) {
        /* neighbouring windows' residuals correlate (a sensor's lag): fewer
         * independent windows than counted, so a wider error */
        double wsum = 0, infl = 0;
        for (size_t r = 0; r < nreadings; r++) {
            rd *R = &c.f.R[r];
            if (R->n < 3) continue;
            double rho = fmin(0.9, fmax(0.0, R->lag1));
            double w = R->sumw / R->s2;
            infl += w * (1 + rho) / (1 - rho);
            wsum += w;
        }
        double inflate = (wsum > 0 ? infl / wsum : 1.0) * dof_factor(&c.f, e);
        st = timing(&c, nreadings, smooth, inflate, cfg.cancel);
        if (st == TW_OK) st = variances(&c.f, inflate);
        /* the offset's uncertainty moves each power too: its share of the error */
        for (size_t u = 0; st == TW_OK && c.dbeta_u && u < c.f.U; u++) {
            double g = c.dbeta_u[d->K + u] * c.shift_sd;
            c.f.var_u[d->K + u] += g * g;
        }
    }
    if (st == TW_OK) st = index_finest(&c, readings, nreadings);
    if (st == TW_OK) linger_fold(&c);
    e->shift_sd_s = c.shift_sd > 0 ? c.shift_sd : NAN;
    if (st == TW_OK) st = results(&c, readings, nreadings, col);
    for (size_t m = 0; st == TW_OK && m < d->M; m++) {
        size_t k = d->K + c.f.U0 + m;
        e->counters.coef_w[m] = c.f.beta_u[k];
        e->counters.coef_sd_w[m] = sqrt(c.f.var_u[k]);
    }
    if (st == TW_OK) {
        e->nreadings = nreadings;
        for (size_t r = 0; r < nreadings; r++) {
            tw_est_reading_stats *s = &e->readings[r];
            snprintf(s->name, sizeof s->name, "%s", readings[r].name ? readings[r].name : "?");
            s->used = c.f.R[r].n;
            s->gain = c.f.R[r].gain;
            s->noise_w = sqrt(c.f.R[r].s2);
            s->rms_w = c.f.R[r].rms;
            s->lag1 = c.f.R[r].lag1;
        }
        e->idle_before_w = finest_mean_w(&c, readings, nreadings, cfg.idle_before_t0_s, cfg.idle_before_t1_s);
        e->idle_after_w = finest_mean_w(&c, readings, nreadings, cfg.idle_after_t0_s, cfg.idle_after_t1_s);
        st = sort_names(e);
        if (e->pooled)
            warn(e,
                 "%zu names with the least time were pooled into one unknown (%s): their energy is in the "
                 "total only",
                 e->pooled, POOLED_NAME);
    }
    free(col);
    ctx_free(&c);
    if (st != TW_OK) {
        tw_estimate_free(e);
        return st;
    }
    *out = e;
    return TW_OK;
}
