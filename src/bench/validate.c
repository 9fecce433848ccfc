/* The validation's analysis; see validate.h. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/launches.h"
#include "bench/plans.h"
#include "bench/validate.h"
#include "core/error.h"
#include "correct/identify.h"
#include "correct/observe.h"
#include "estimate/estimator.h"

#define MAX_METHODS 24
#define BLOCK_GAP_S 0.01 /* launches closer than this belong to one block */
#define LIN_TOL_PCT 1.0  /* 2.00 +- 0.02 */
#define B2B_TOL_PCT 2.0  /* 1.00 +- 0.02 */

/* ---------------------------------------------------------------- methods */

typedef enum { M_NAIVE, M_RAW_COUNTER, M_RAW_TILES, M_MODEL } method_kind;

typedef struct method {
    method_kind kind;
    char name[80];                 /* "model_" + a reading name */
    const tw_reading_model *model; /* M_MODEL */
    tw_update_series u;            /* the reading's updates (naive, raw) */
    tw_obs_series obs;             /* M_MODEL: its observations */
    tw_estimate *est;              /* M_MODEL: the estimator on them, each compared event its own name */
    bool best;
} method;

typedef struct ctx {
    tw_sensor *src;
    const tw_events *events;
    const tw_profile *profile;
    method m[MAX_METHODS];
    size_t nm;
    tw_events *own;     /* the events, those compared one by one renamed to be their own names */
    tw_estimate *names; /* the estimator on the best reading with the events' own names */
    tw_val_result *out;
} ctx;

static tw_status add_record(tw_val_result *r, const tw_val_record *rec)
{
    if (r->n == r->cap) {
        size_t cap = r->cap ? 2 * r->cap : 64;
        tw_val_record *p = realloc(r->rec, cap * sizeof *p);
        if (!p) return tw_fail(TW_ENOMEM, "out of memory (validation records)");
        r->rec = p;
        r->cap = cap;
    }
    r->rec[r->n++] = *rec;
    return TW_OK;
}

void tw_val_result_free(tw_val_result *r)
{
    if (!r) return;
    free(r->rec);
    memset(r, 0, sizeof *r);
}

static tw_status record(ctx *c, const char *exp, const char *cs, const method *m, const char *method_name,
                        const char *qty, double value, double sigma, double ref, double tol, unsigned n)
{
    tw_val_record rec;
    memset(&rec, 0, sizeof rec);
    snprintf(rec.experiment, sizeof rec.experiment, "%s", exp);
    snprintf(rec.case_name, sizeof rec.case_name, "%s", cs);
    snprintf(rec.method, sizeof rec.method, "%s", m ? m->name : method_name);
    snprintf(rec.quantity, sizeof rec.quantity, "%s", qty);
    rec.value = value;
    rec.sigma = sigma;
    rec.reference = ref;
    rec.error_pct = isfinite(ref) && ref != 0 ? 100.0 * (value / ref - 1.0) : NAN;
    rec.tolerance_pct = tol;
    rec.pass = isnan(tol) ? -1 : (isfinite(rec.error_pct) && fabs(rec.error_pct) <= tol);
    rec.n = n;
    return add_record(c->out, &rec);
}

static bool reading_index(tw_sensor *s, const char *name, size_t *i) { return tw_sensor_find(s, name, i) == TW_OK; }

static tw_status add_update_method(ctx *c, method_kind kind, const char *prefix, const char *reading)
{
    size_t i;
    if (c->nm >= MAX_METHODS || !reading_index(c->src, reading, &i)) return TW_OK;
    method *m = &c->m[c->nm];
    memset(m, 0, sizeof *m);
    m->kind = kind;
    snprintf(m->name, sizeof m->name, "%s%s", prefix, reading);
    tw_status st = tw_updates_read(c->src, i, &m->u);
    if (st == TW_OK) c->nm++;
    return st;
}

static tw_status add_model_method(ctx *c, const tw_reading_model *rm, bool best)
{
    size_t i;
    if (c->nm >= MAX_METHODS || !reading_index(c->src, rm->name, &i)) return TW_OK;
    method *m = &c->m[c->nm];
    memset(m, 0, sizeof *m);
    m->kind = M_MODEL;
    m->model = rm;
    m->best = best;
    snprintf(m->name, sizeof m->name, "model_%s", rm->name);
    tw_obs_series_init(&m->obs);
    tw_status st = tw_observe(c->src, i, rm, true, &m->obs);
    if (st != TW_OK) {
        tw_obs_series_free(&m->obs);
        return st;
    }
    c->nm++;
    /* a reading the estimator cannot fit (no window over the kernels) has no rows */
    tw_est_reading rd = {rm->name, m->obs.v, m->obs.n, rm->response == TW_RESP_COUNTER, m->obs.tau_s};
    st = tw_estimate_run(&rd, 1, c->own, NULL, &m->est);
    if (st == TW_OK && best) st = tw_estimate_run(&rd, 1, c->events, NULL, &c->names);
    if (st == TW_EEMPTY) {
        tw_clear_error();
        st = TW_OK;
    }
    return st;
}

static tw_status build_methods(ctx *c)
{
    static const char *const naive[] = {"power_usage_w", "power_instant_w"};
    tw_status st = TW_OK;
    for (size_t i = 0; i < 2 && st == TW_OK; i++)
        st = add_update_method(c, M_NAIVE, "naive_", naive[i]);
    if (st == TW_OK) st = add_update_method(c, M_RAW_COUNTER, "raw_", "energy_j");
    if (st == TW_OK) st = add_update_method(c, M_RAW_TILES, "raw_", "power_buffer_w");
    const tw_reading_model *best = tw_profile_best(c->profile, tw_identify_board_reading, NULL);
    if (best) snprintf(c->out->best, sizeof c->out->best, "%s", best->name);
    for (size_t i = 0; i < c->profile->n && st == TW_OK; i++) {
        const tw_reading_model *rm = &c->profile->r[i];
        if (rm->response == TW_RESP_UNKNOWN || !tw_identify_board_reading(rm->name, NULL)) continue;
        st = add_model_method(c, rm, rm == best);
    }
    return st;
}

static void free_methods(ctx *c)
{
    for (size_t i = 0; i < c->nm; i++) {
        tw_update_series_free(&c->m[i].u);
        tw_obs_series_free(&c->m[i].obs);
        tw_estimate_free(c->m[i].est);
    }
    tw_estimate_free(c->names);
    tw_events_free(c->own);
}

/* The events compared one by one (pairs, isolated short launches): each is
 * its own name, so it gets its own energy; the rest keep theirs. */
static bool compared_alone(const tw_event *e, void *unused)
{
    (void)unused;
    size_t len = strlen(e->name);
    return !strncmp(e->name, "lin_", 4) || !strncmp(e->name, "b2b_", 4) ||
           (len > 4 && !strcmp(e->name + len - 4, "_iso"));
}

static const method *best_method(const ctx *c)
{
    for (size_t i = 0; i < c->nm; i++)
        if (c->m[i].best) return &c->m[i];
    return NULL;
}

/* ---------------------------------------------------------------- integrals of updates */

/* ---------------------------------------------------------------- event sets */

typedef struct span {
    double t0, t1;
    unsigned launches;
    double kernel_s; /* summed durations */
    size_t event;    /* the (first) event's index */
} span;

/* Events named `name`, in time order; blocks of back-to-back launches merged
 * when `merge`. Returns the count (0 when none or out of memory). */
static size_t spans_of(const tw_events *ev, const char *name, bool merge, span **out)
{
    size_t n = tw_events_count(ev), m = 0;
    span *s = malloc((n ? n : 1) * sizeof *s);
    if (!s) return 0;
    for (size_t i = 0; i < n; i++) {
        const tw_event *e = tw_events_get(ev, i);
        if (strcmp(e->name, name) != 0) continue;
        double d = e->end_s - e->start_s;
        if (merge && m > 0 && e->start_s - s[m - 1].t1 < BLOCK_GAP_S) {
            s[m - 1].t1 = e->end_s;
            s[m - 1].launches++;
            s[m - 1].kernel_s += d;
            continue;
        }
        s[m++] = (span){e->start_s, e->end_s, 1, d, i};
    }
    *out = s;
    return m;
}

/* The best reading's baseline energy over [t0, t1] (NaN without an estimate). */
static double best_baseline_j(const ctx *c, double t0, double t1)
{
    const method *b = best_method(c);
    return b && b->est ? tw_estimate_baseline_j(b->est, t0, t1) : NAN;
}

/* Whether some window of the method's reading overlaps [t0, t1]: a reading
 * that covers a quarter of the time misses most short launches, which then
 * have no estimate from the data (NaN here, not the 0 or the bound the
 * estimator gives them). Windows are in order of their end. */
static bool seen(const method *m, double t0, double t1)
{
    const tw_obs *o = m->obs.v;
    size_t lo = 0, hi = m->obs.n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (o[mid].t1_s <= t0)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t i = lo; i < m->obs.n && i < lo + 64; i++)
        if (o[i].t0_s < t1 && o[i].t1_s > t0) return true;
    return false;
}

/* Energy of each span by method m: total (idle + dynamic) into total[], and
 * for models the dynamic part into dyn[] (NaN otherwise). */
static tw_status span_energies(const ctx *c, const method *m, const span *s, size_t n, double *total, double *dyn)
{
    for (size_t i = 0; i < n; i++)
        total[i] = dyn[i] = NAN;
    if (n == 0) return TW_OK;
    if (m->kind != M_MODEL) {
        for (size_t i = 0; i < n; i++) {
            if (m->kind == M_NAIVE)
                total[i] = tw_updates_hold_integral(&m->u, s[i].t0, s[i].t1);
            else if (m->kind == M_RAW_COUNTER)
                total[i] = tw_updates_counter_at(&m->u, s[i].t1) - tw_updates_counter_at(&m->u, s[i].t0);
            else
                total[i] = tw_updates_tiles_integral(&m->u, s[i].t0, s[i].t1);
        }
        return TW_OK;
    }
    if (!m->est) return TW_OK;
    for (size_t i = 0; i < n; i++) { /* its energy above the baseline, and the baseline's under it */
        if (s[i].event >= m->est->nevents || !seen(m, s[i].t0, s[i].t1)) continue;
        dyn[i] = tw_estimate_event_energy_j(m->est, s[i].event);
        total[i] = dyn[i] + tw_estimate_baseline_j(m->est, s[i].t0, s[i].t1);
    }
    return TW_OK;
}

/* Dynamic energy of spans for any method: a model's own; for the others the
 * total minus the best model's baseline over the span. */
static tw_status span_dynamic(const ctx *c, const method *m, const span *s, size_t n, double *dyn)
{
    double *total = malloc((n ? n : 1) * sizeof *total);
    if (!total) return tw_fail(TW_ENOMEM, "out of memory (validation)");
    tw_status st = span_energies(c, m, s, n, total, dyn);
    if (st == TW_OK && m->kind != M_MODEL)
        for (size_t i = 0; i < n; i++)
            dyn[i] = total[i] - best_baseline_j(c, s[i].t0, s[i].t1);
    free(total);
    return st;
}

static void mean_sd(const double *v, size_t n, double *mean, double *sd, unsigned *count)
{
    double s = 0, ss = 0;
    unsigned k = 0;
    for (size_t i = 0; i < n; i++)
        if (isfinite(v[i])) {
            s += v[i];
            k++;
        }
    *mean = k ? s / k : NAN;
    for (size_t i = 0; i < n; i++)
        if (isfinite(v[i])) ss += (v[i] - *mean) * (v[i] - *mean);
    *sd = k > 1 ? sqrt(ss / (k - 1)) : NAN;
    *count = k;
}

/* ---------------------------------------------------------------- (i), (ii): ratios of pairs */

static tw_status pair_ratios(ctx *c, const char *exp, const char *cs, const char *first, const char *second,
                             double expect, double tol_pct)
{
    span *a = NULL, *b = NULL;
    size_t na = spans_of(c->events, first, false, &a), nb = spans_of(c->events, second, false, &b);
    size_t n = na < nb ? na : nb;
    tw_status st = TW_OK;
    double *ea = malloc((n ? n : 1) * sizeof *ea), *eb = malloc((n ? n : 1) * sizeof *eb);
    double *d = malloc((n ? n : 1) * sizeof *d), *r = malloc((n ? n : 1) * sizeof *r);
    if (!ea || !eb || !d || !r) st = tw_fail(TW_ENOMEM, "out of memory (validation)");
    for (size_t k = 0; st == TW_OK && n > 0 && k < c->nm; k++) {
        const method *m = &c->m[k];
        if ((st = span_energies(c, m, a, n, ea, d)) != TW_OK) break;
        if ((st = span_energies(c, m, b, n, eb, d)) != TW_OK) break;
        for (size_t i = 0; i < n; i++)
            r[i] = eb[i] / ea[i];
        double mean, sd;
        unsigned cnt;
        mean_sd(r, n, &mean, &sd, &cnt);
        if (cnt == 0) continue;
        st = record(c, exp, cs, m, NULL, "ratio", mean, cnt > 1 ? sd / sqrt(cnt) : NAN, expect, m->best ? tol_pct : NAN,
                    cnt);
    }
    free(ea);
    free(eb);
    free(d);
    free(r);
    free(a);
    free(b);
    return st;
}

/* One experiment of pairs per value v: events "<prefix>_<v>_<first>" and
 * "..._<second>", the case named "<case_key>=<v>". */
typedef struct pair_plan {
    const char *experiment, *prefix, *first, *second, *case_key;
    const double *values;
    int n;
    double expect, tol_pct;
} pair_plan;

static tw_status pairs(ctx *c, const pair_plan *p)
{
    tw_status st = TW_OK;
    for (int i = 0; i < p->n && st == TW_OK; i++) {
        char len[16], a[48], b[48], cs[32];
        tw_plan_len_label(p->values[i], len, sizeof len);
        snprintf(a, sizeof a, "%s_%s_%s", p->prefix, len, p->first);
        snprintf(b, sizeof b, "%s_%s_%s", p->prefix, len, p->second);
        snprintf(cs, sizeof cs, "%s=%s", p->case_key, len);
        st = pair_ratios(c, p->experiment, cs, a, b, p->expect, p->tol_pct);
    }
    return st;
}

static tw_status linearity(ctx *c)
{
    pair_plan p = {"linearity", "lin", "T", "2T", "T", tw_val_lin_t_s, TW_VAL_NLIN, 2.0, LIN_TOL_PCT};
    return pairs(c, &p);
}

static tw_status back_to_back(ctx *c)
{
    pair_plan p = {"back_to_back", "b2b", "first", "second", "gap", tw_val_gap_s, TW_VAL_NGAP, 1.0, B2B_TOL_PCT};
    return pairs(c, &p);
}

/* ---------------------------------------------------------------- (iii) short kernels */

static double short_tolerance_pct(double d_s) { return d_s < 0.002 ? 10.0 : d_s < 0.02 ? 5.0 : NAN; }

/* A name of the best reading's estimate with its own figures (not grouped
 * with another, and seen), else NULL. */
static const tw_est_name *best_name(const ctx *c, const char *name)
{
    for (size_t i = 0; c->names && i < c->names->nnames; i++) {
        const tw_est_name *x = &c->names->names[i];
        if (strcmp(x->name, name) != 0) continue;
        bool own = x->status != TW_EST_GROUPED && x->status != TW_EST_UNOBSERVED;
        return own && x->launches > 0 ? x : NULL;
    }
    return NULL;
}

/* The reference: the estimator's power of the >= 4 s back-to-back block's
 * name on the best reading, above the baseline. */
static double reference_power_w(ctx *c, const char *ref_name)
{
    const tw_est_name *x = best_name(c, ref_name);
    return x ? x->power_w : NAN;
}

/* Per-launch dynamic energy of isolated launches by every method. */
static tw_status iso_methods(ctx *c, const char *cs, const char *name, double p_ref, double tol)
{
    span *s = NULL;
    size_t n = spans_of(c->events, name, false, &s);
    double *dyn = malloc((n ? n : 1) * sizeof *dyn);
    tw_status st = dyn ? TW_OK : tw_fail(TW_ENOMEM, "out of memory (validation)");
    double dur = 0;
    for (size_t i = 0; i < n; i++)
        dur += s[i].kernel_s / (double)(n ? n : 1);
    double ref = p_ref * dur;
    for (size_t k = 0; st == TW_OK && n > 0 && k < c->nm; k++) {
        const method *m = &c->m[k];
        if ((st = span_dynamic(c, m, s, n, dyn)) != TW_OK) break;
        double mean, sd;
        unsigned cnt;
        mean_sd(dyn, n, &mean, &sd, &cnt);
        if (cnt) st = record(c, "short_kernels", cs, m, NULL, "J_per_launch", mean, sd / sqrt(cnt), ref, NAN, cnt);
    }
    free(dyn);
    free(s);
    /* the estimator with all of them one name: their common power over the
     * best reading's windows (what a regression on kernel time gives) */
    const tw_est_name *x = st == TW_OK ? best_name(c, name) : NULL;
    if (x)
        st = record(c, "short_kernels", cs, NULL, "regression", "J_per_launch", x->energy_j / (double)x->launches,
                    x->energy_sd_j / (double)x->launches, p_ref * x->time_s / (double)x->launches, tol,
                    (unsigned)x->launches);
    return st;
}

/* Phase-shifted repetition: the blocks' launches one name of the estimator
 * on the best reading; per launch its energy over its launches. */
static tw_status repetition(ctx *c, const char *cs, const char *name, double p_ref, double tol)
{
    const tw_est_name *x = best_name(c, name);
    if (!x) return TW_OK;
    return record(c, "short_kernels", cs, NULL, "repetition", "J_per_launch", x->energy_j / (double)x->launches,
                  x->energy_sd_j / (double)x->launches, p_ref * x->time_s / (double)x->launches, tol,
                  (unsigned)x->launches);
}

static tw_status short_kernels(ctx *c)
{
    tw_status st = TW_OK;
    for (int i = 0; i < TW_VAL_NSHORT && st == TW_OK; i++) {
        double d = tw_val_short_s[i];
        char len[16], ref[48], iso[48], rep[48];
        tw_plan_len_label(d, len, sizeof len);
        snprintf(ref, sizeof ref, "short_%s_ref", len);
        snprintf(iso, sizeof iso, "short_%s_iso", len);
        snprintf(rep, sizeof rep, "short_%s_rep", len);
        double p_ref = reference_power_w(c, ref);
        if (!isfinite(p_ref)) continue;
        st = record(c, "short_kernels", len, NULL, "reference_power", "W", p_ref, NAN, NAN, NAN, 1);
        if (st == TW_OK) st = iso_methods(c, len, iso, p_ref, short_tolerance_pct(d));
        if (st == TW_OK) st = repetition(c, len, rep, p_ref, short_tolerance_pct(d));
    }
    return st;
}

/* ---------------------------------------------------------------- (iv) loads */

static tw_status load(ctx *c, const char *name)
{
    span *s = NULL;
    size_t n = spans_of(c->events, name, false, &s);
    tw_status st = TW_OK;
    if (n == 0) {
        free(s);
        return TW_OK;
    }
    double t0 = s[0].t0, t1 = s[n - 1].t1;
    double *total = malloc(n * sizeof *total), *dyn = malloc(n * sizeof *dyn);
    double e[MAX_METHODS], ref = NAN;
    if (!total || !dyn) st = tw_fail(TW_ENOMEM, "out of memory (validation)");
    for (size_t k = 0; st == TW_OK && k < c->nm; k++) {
        const method *m = &c->m[k];
        e[k] = NAN;
        if (m->kind == M_MODEL) {
            /* the baseline over the whole span plus each kernel's energy above it */
            if ((st = span_energies(c, m, s, n, total, dyn)) != TW_OK) break;
            double sum = m->est ? tw_estimate_baseline_j(m->est, t0, t1) : NAN;
            for (size_t i = 0; i < n; i++)
                sum += isfinite(dyn[i]) ? dyn[i] : 0.0;
            e[k] = sum;
        } else {
            span whole = {t0, t1, 1, 0, 0};
            if ((st = span_energies(c, m, &whole, 1, &e[k], dyn)) != TW_OK) break;
        }
        if (m->kind == M_RAW_COUNTER) ref = e[k];
    }
    for (size_t k = 0; st == TW_OK && k < c->nm; k++)
        if (isfinite(e[k])) st = record(c, "loads", name, &c->m[k], NULL, "J", e[k], NAN, ref, NAN, (unsigned)n);
    free(total);
    free(dyn);
    free(s);
    return st;
}

/* ---------------------------------------------------------------- driver */

tw_status tw_validate_analyse(tw_sensor *src, const tw_events *events, const tw_profile *profile, tw_val_result *out)
{
    if (!src || !events || !profile || !out) return tw_fail(TW_EINVAL, "tw_validate_analyse: NULL argument");
    memset(out, 0, sizeof *out);
    ctx c;
    memset(&c, 0, sizeof c);
    c.src = src;
    c.events = events;
    c.profile = profile;
    c.out = out;
    tw_status st = tw_events_own_names(events, compared_alone, NULL, &c.own);
    if (st == TW_OK) st = build_methods(&c);
    if (st == TW_OK && !best_method(&c))
        st = tw_fail(TW_EINVAL, "the sensor profile names no usable reading of this trace");
    if (st == TW_OK) st = linearity(&c);
    if (st == TW_OK) st = back_to_back(&c);
    if (st == TW_OK) st = short_kernels(&c);
    if (st == TW_OK) st = load(&c, "load_steady");
    if (st == TW_OK) st = load(&c, "load_square");
    const method *b = best_method(&c);
    out->baseline_w = b && b->est ? b->est->baseline_mean_w : NAN;
    free_methods(&c);
    if (st == TW_OK && out->n == 0) st = tw_fail(TW_EEMPTY, "no validation experiment found in the events");
    if (st != TW_OK) tw_val_result_free(out);
    return st;
}
