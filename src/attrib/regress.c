/* Energy per kernel name by least squares over observation windows
 * (attrib/regress.h).
 *
 * The design matrix is never stored: one sweep over the windows (in order of
 * their end, with the kernels sorted by start, as in correct/estimate.c)
 * gives each window's fractions f_n, and X^T X and X^T y are accumulated
 * from the nonzero ones. The normal equations are scaled to a unit diagonal
 * (so a name that covers little of every window is not mistaken for a
 * singular one) and solved by Cholesky; a pivot below 1e-12 of the unit
 * diagonal means the name's time is (nearly) a combination of the names
 * before it, which is reported with those names. A second sweep gives the
 * residuals exactly (RSS, R^2), rather than from the cancelling
 * y^T y - b^T X^T y. */
#include "attrib/regress.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"

#define DEFAULT_MAX_NAMES 64
#define MAX_NAMES_LIMIT 4096
#define DEFAULT_MARGIN_S 1.0
#define PIVOT_MIN 1e-12
#define OTHER_NAME "(other kernels)"

void tw_regress_options_init(tw_regress_options *o)
{
    o->idle_w = NAN;
    o->max_names = DEFAULT_MAX_NAMES;
    o->margin_s = DEFAULT_MARGIN_S;
}

void tw_regress_free(tw_regress *r)
{
    if (!r) return;
    free(r->names);
    free(r);
}

/* ---------------------------------------------------------------- kernels and names */

typedef struct ev_ref {
    double start, end;
    size_t col; /* regressor of its name */
    const char *name;
    size_t idx; /* in tw_events_get order: tie-break */
} ev_ref;

typedef struct group {
    const char *name;
    uint64_t launches;
    double time_s;
    size_t col;
} group;

static bool is_kernel(const tw_event *e)
{
    return e && (!e->kind || !*e->kind || strcmp(e->kind, "kernel") == 0) && e->end_s > e->start_s;
}

static int by_name(const void *x, const void *y)
{
    const ev_ref *a = x, *b = y;
    int c = strcmp(a->name, b->name);
    if (c) return c;
    return a->idx < b->idx ? -1 : a->idx > b->idx;
}

static int by_start(const void *x, const void *y)
{
    const ev_ref *a = x, *b = y;
    if (a->start != b->start) return a->start < b->start ? -1 : 1;
    return a->idx < b->idx ? -1 : a->idx > b->idx;
}

static int by_time_desc(const void *x, const void *y)
{
    const group *a = x, *b = y;
    if (a->time_s != b->time_s) return a->time_s > b->time_s ? -1 : 1;
    return strcmp(a->name, b->name);
}

static int by_energy_desc(const void *x, const void *y)
{
    const tw_regress_name *a = x, *b = y;
    bool na = isnan(a->energy_j), nb = isnan(b->energy_j);
    if (na != nb) return na ? 1 : -1;
    if (!na && a->energy_j != b->energy_j) return a->energy_j > b->energy_j ? -1 : 1;
    return strcmp(a->name, b->name);
}

/* ---------------------------------------------------------------- the sweep */

typedef struct win {
    tw_obs o; /* the observation, for its weights */
    double t0, t1, p;
    double lo; /* the earliest start of this window and every later one */
} win;

static int by_end(const void *x, const void *y)
{
    const win *a = x, *b = y;
    if (a->t1 != b->t1) return a->t1 < b->t1 ? -1 : 1;
    return a->t0 < b->t0 ? -1 : a->t0 > b->t0;
}

typedef struct sweep {
    const ev_ref *ev;
    size_t nev, next;
    size_t *active;
    size_t nactive;
    double *f;  /* per regressor: fraction of the current window */
    size_t *nz; /* the regressors with f > 0 */
    size_t nnz;
} sweep;

/* Moves to window `w` and fills f[] / nz[] with its fractions. */
static void sweep_to(sweep *s, const win *w)
{
    for (size_t i = 0; i < s->nnz; i++)
        s->f[s->nz[i]] = 0;
    s->nnz = 0;
    while (s->next < s->nev && s->ev[s->next].start < w->t1)
        s->active[s->nactive++] = s->next++;
    double dt = w->t1 - w->t0;
    size_t keep = 0;
    for (size_t i = 0; i < s->nactive; i++) {
        const ev_ref *e = &s->ev[s->active[i]];
        if (!(e->end > w->lo)) continue;
        s->active[keep++] = s->active[i];
        double lo = e->start > w->t0 ? e->start : w->t0;
        double hi = e->end < w->t1 ? e->end : w->t1;
        if (!(hi > lo)) continue;
        if (s->f[e->col] == 0) s->nz[s->nnz++] = e->col;
        s->f[e->col] += tw_obs_weight(&w->o, lo, hi) / dt;
    }
    s->nactive = keep;
}

/* ---------------------------------------------------------------- the fit */

typedef struct fit {
    /* inputs */
    const win *w;
    size_t nw;
    bool intercept;
    double idle_given;
    size_t ncol; /* regressors for names */
    size_t np;   /* unknowns: intercept + ncol */
    /* normal equations (np x np, lower triangle filled), right-hand side */
    double *A, *b;
    double *windows; /* per regressor: windows with f > 0 */
    double sum_p;
} fit;

static size_t param(const fit *F, size_t col) { return col + (F->intercept ? 1 : 0); }

static void accumulate(fit *F, sweep *s)
{
    size_t np = F->np;
    for (size_t k = 0; k < F->nw; k++) {
        const win *w = &F->w[k];
        sweep_to(s, w);
        double y = F->intercept ? w->p : w->p - F->idle_given;
        F->sum_p += w->p;
        if (F->intercept) {
            F->A[0] += 1;
            F->b[0] += y;
        }
        for (size_t i = 0; i < s->nnz; i++) {
            size_t ci = s->nz[i], a = param(F, ci);
            double fi = s->f[ci];
            F->windows[ci] += 1;
            F->b[a] += fi * y;
            if (F->intercept) F->A[a * np] += fi;
            for (size_t j = 0; j < s->nnz; j++) {
                size_t bb = param(F, s->nz[j]);
                if (bb <= a) F->A[a * np + bb] += fi * s->f[s->nz[j]];
            }
        }
    }
}

/* ---------------------------------------------------------------- entry point */

typedef struct work {
    ev_ref *ev;
    group *gr;
    win *w;
    sweep s;
    double *A, *b, *windows, *d, *L, *x, *beta, *inv_diag;
    size_t *use; /* parameters kept in the solve, in order */
} work;

static void work_free(work *k)
{
    free(k->ev);
    free(k->gr);
    free(k->w);
    free(k->s.active);
    free(k->s.f);
    free(k->s.nz);
    free(k->A);
    free(k->b);
    free(k->windows);
    free(k->d);
    free(k->L);
    free(k->x);
    free(k->beta);
    free(k->inv_diag);
    free(k->use);
}

static void warn(tw_regress *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Appends one line to the warnings when it fits whole. */
static void warn(tw_regress *r, const char *fmt, ...)
{
    char line[sizeof r->warnings];
    va_list ap;
    va_start(ap, fmt);
    int len = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    size_t used = strlen(r->warnings);
    if (len < 0 || used + (size_t)len + 2 > sizeof r->warnings) return;
    memcpy(r->warnings + used, line, (size_t)len);
    r->warnings[used + (size_t)len] = '\n';
    r->warnings[used + (size_t)len + 1] = '\0';
}

static bool unknown(const tw_regress_name *x) { return isnan(x->power_w); }
static bool uncertain(const tw_regress_name *x) { return !isnan(x->power_w) && x->power_se_w > 0.5 * fabs(x->power_w); }

/* One warning line: `head` and the names `pick` selects, as many as fit. */
static void warn_names(tw_regress *r, const char *head, bool (*pick)(const tw_regress_name *))
{
    char line[200];
    size_t len = (size_t)snprintf(line, sizeof line, "%s", head), shown = 0, more = 0;
    for (size_t i = 0; i < r->nnames; i++) {
        const tw_regress_name *x = &r->names[i];
        if (!pick(x)) continue;
        if (len + strlen(x->name) + 4 + 24 < sizeof line)
            len += (size_t)snprintf(line + len, sizeof line - len, "%s'%s'", shown++ ? ", " : " ", x->name);
        else
            more++;
    }
    if (!shown && !more) return;
    if (more) snprintf(line + len, sizeof line - len, " and %zu more", more);
    warn(r, "%s", line);
}

/* The name of parameter `q` for messages. */
static const char *param_name(const fit *F, const group *gr, size_t ngr, size_t q)
{
    if (F->intercept && q == 0) return "the idle level";
    size_t col = q - (F->intercept ? 1 : 0);
    for (size_t g = 0; g < ngr; g++)
        if (gr[g].col == col) return gr[g].name;
    return OTHER_NAME;
}

tw_status tw_regress_names(const tw_obs *obs, size_t n, const tw_events *events, const tw_regress_options *opt,
                           tw_regress **out)
{
    if (!out) return tw_fail(TW_EINVAL, "regression: no output");
    *out = NULL;
    if (n && !obs) return tw_fail(TW_EINVAL, "regression: no observations");
    tw_regress_options defaults;
    tw_regress_options_init(&defaults);
    if (!opt) opt = &defaults;
    size_t max_names = opt->max_names ? opt->max_names : DEFAULT_MAX_NAMES;
    double margin = opt->margin_s == 0 ? DEFAULT_MARGIN_S : opt->margin_s;
    if (max_names > MAX_NAMES_LIMIT)
        return tw_fail(TW_EINVAL, "regression: at most %d names (asked for %zu)", MAX_NAMES_LIMIT, max_names);
    if (!(margin >= 0) || !isfinite(margin))
        return tw_fail(TW_EINVAL, "regression: the margin must be >= 0 (%g s)", opt->margin_s);
    if (isinf(opt->idle_w)) return tw_fail(TW_EINVAL, "regression: the idle level is infinite");

    work k = {0};
    tw_regress *r = NULL;
    tw_status st = TW_OK;
    size_t m = tw_events_count(events), nev = 0, ngr = 0;

    /* kernels, grouped by name */
    k.ev = malloc((m ? m : 1) * sizeof *k.ev);
    k.gr = malloc((m ? m : 1) * sizeof *k.gr);
    if (!k.ev || !k.gr) {
        st = tw_fail(TW_ENOMEM, "out of memory (%zu events)", m);
        goto done;
    }
    double first = INFINITY, last = -INFINITY;
    for (size_t i = 0; i < m; i++) {
        const tw_event *e = tw_events_get(events, i);
        if (!is_kernel(e)) continue;
        k.ev[nev++] = (ev_ref){e->start_s, e->end_s, 0, e->name, i};
        if (e->start_s < first) first = e->start_s;
        if (e->end_s > last) last = e->end_s;
    }
    if (nev == 0) {
        st = tw_fail(TW_EEMPTY, "regression: no kernel events (of %zu events)", m);
        goto done;
    }
    qsort(k.ev, nev, sizeof *k.ev, by_name);
    for (size_t i = 0; i < nev; i++) {
        if (i == 0 || strcmp(k.ev[i].name, k.ev[i - 1].name) != 0) k.gr[ngr++] = (group){k.ev[i].name, 0, 0, 0};
        group *g = &k.gr[ngr - 1];
        g->launches++;
        g->time_s += k.ev[i].end - k.ev[i].start;
        k.ev[i].col = ngr - 1; /* group index for now */
    }
    size_t *rank = malloc(ngr * sizeof *rank);
    if (!rank) {
        st = tw_fail(TW_ENOMEM, "out of memory (%zu names)", ngr);
        goto done;
    }
    /* rank the names by time; the columns follow that order, the pool last */
    for (size_t g = 0; g < ngr; g++)
        k.gr[g].col = g;
    qsort(k.gr, ngr, sizeof *k.gr, by_time_desc);
    for (size_t g = 0; g < ngr; g++) {
        rank[k.gr[g].col] = g;
        k.gr[g].col = g < max_names ? g : max_names;
    }
    for (size_t i = 0; i < nev; i++)
        k.ev[i].col = k.gr[rank[k.ev[i].col]].col;
    free(rank);
    bool pooled = ngr > max_names;
    size_t ncol = pooled ? max_names + 1 : ngr;
    qsort(k.ev, nev, sizeof *k.ev, by_start);

    /* the windows within the kernels' span + margin */
    double lo = first - margin, hi = last + margin;
    k.w = malloc((n ? n : 1) * sizeof *k.w);
    if (!k.w) {
        st = tw_fail(TW_ENOMEM, "out of memory (%zu observations)", n);
        goto done;
    }
    size_t nw = 0;
    bool sorted = true;
    for (size_t i = 0; i < n; i++) {
        const tw_obs *o = &obs[i];
        if (!isfinite(o->t0_s) || !isfinite(o->t1_s) || !isfinite(o->power_w) || !(o->t1_s > o->t0_s)) continue;
        if (o->t0_s < lo || o->t1_s > hi) continue;
        if (nw && o->t1_s < k.w[nw - 1].t1) sorted = false;
        k.w[nw++] = (win){*o, o->t0_s, o->t1_s, o->power_w, 0};
    }
    if (!sorted) qsort(k.w, nw, sizeof *k.w, by_end);
    double wlo = INFINITY;
    for (size_t i = nw; i-- > 0;) {
        if (k.w[i].t0 < wlo) wlo = k.w[i].t0;
        k.w[i].lo = wlo;
    }

    fit F = {k.w, nw, isnan(opt->idle_w), opt->idle_w, ncol, 0, NULL, NULL, NULL, 0};
    size_t np = F.np = ncol + (F.intercept ? 1 : 0);
    k.A = F.A = calloc(np * np, sizeof *k.A);
    k.b = F.b = calloc(np, sizeof *k.b);
    k.windows = F.windows = calloc(ncol, sizeof *k.windows);
    k.s.active = malloc(nev * sizeof *k.s.active);
    k.s.f = calloc(ncol, sizeof *k.s.f);
    k.s.nz = malloc(ncol * sizeof *k.s.nz);
    k.d = malloc(np * sizeof *k.d);
    k.L = calloc(np * np, sizeof *k.L);
    k.x = malloc(np * sizeof *k.x);
    k.beta = malloc(np * sizeof *k.beta);
    k.inv_diag = malloc(np * sizeof *k.inv_diag);
    k.use = malloc(np * sizeof *k.use);
    if (!k.A || !k.b || !k.windows || !k.s.active || !k.s.f || !k.s.nz || !k.d || !k.L || !k.x || !k.beta ||
        !k.inv_diag || !k.use) {
        st = tw_fail(TW_ENOMEM, "out of memory (regression of %zu names)", ncol);
        goto done;
    }
    k.s.ev = k.ev;
    k.s.nev = nev;
    accumulate(&F, &k.s);

    if (nw < np + 2) {
        st = tw_fail(TW_EINVAL, "regression: %zu usable observations for %zu unknowns (at least %zu needed)", nw, np,
                     np + 2);
        goto done;
    }
    /* regressors no window saw drop out (their power is unknown) */
    size_t nuse = 0;
    for (size_t q = 0; q < np; q++)
        if (k.A[q * np + q] > 0) k.use[nuse++] = q;
    size_t nnames_used = nuse - (F.intercept && nuse && k.use[0] == 0 ? 1 : 0);
    if (nnames_used == 0) {
        st = tw_fail(TW_EINVAL, "regression: none of the %zu usable observations overlaps a kernel", nw);
        goto done;
    }

    /* scaled Cholesky of the kept block: S = D^-1 A D^-1 = L L^T */
    const size_t p = nuse;
    for (size_t i = 0; i < p; i++)
        k.d[i] = sqrt(k.A[k.use[i] * np + k.use[i]]);
    for (size_t i = 0; i < p; i++) {
        for (size_t j = 0; j <= i; j++) {
            double s = k.A[k.use[i] * np + k.use[j]] / (k.d[i] * k.d[j]);
            for (size_t t = 0; t < j; t++)
                s -= k.L[i * p + t] * k.L[j * p + t];
            if (j < i) {
                k.L[i * p + j] = s / k.L[j * p + j];
            } else if (s < PIVOT_MIN) {
                /* column i is a combination of the earlier ones: c = S_prev^-1 S_prev,i,
                   from L_prev^T c = L[i][0..i) */
                double *c = k.x, cmax = 0;
                for (size_t t = i; t-- > 0;) {
                    double v = k.L[i * p + t];
                    for (size_t u = t + 1; u < i; u++)
                        v -= k.L[u * p + t] * c[u];
                    c[t] = v / k.L[t * p + t];
                    if (fabs(c[t]) > cmax) cmax = fabs(c[t]);
                }
                char names[400];
                size_t len = 0;
                names[0] = '\0';
                for (size_t t = 0; t < i; t++) {
                    if (!(fabs(c[t]) > 1e-6 * cmax)) continue;
                    const char *nm = param_name(&F, k.gr, ngr, k.use[t]);
                    const char *q = F.intercept && k.use[t] == 0 ? "" : "'";
                    if (len < sizeof names)
                        len += (size_t)snprintf(names + len, sizeof names - len, "%s%s%s%s", len ? ", " : "", q, nm, q);
                }
                st = tw_fail(TW_ENUMERIC,
                             "regression: the time of kernel '%s' does not vary independently of %s (they always run "
                             "together): their powers cannot be told apart",
                             param_name(&F, k.gr, ngr, k.use[i]), len ? names : "the others");
                goto done;
            } else {
                k.L[i * p + i] = sqrt(s);
            }
        }
    }
    /* solve L L^T x = D^-1 b, beta = D^-1 x */
    for (size_t i = 0; i < p; i++) {
        double s = k.b[k.use[i]] / k.d[i];
        for (size_t t = 0; t < i; t++)
            s -= k.L[i * p + t] * k.x[t];
        k.x[i] = s / k.L[i * p + i];
    }
    for (size_t i = p; i-- > 0;) {
        double s = k.x[i];
        for (size_t t = i + 1; t < p; t++)
            s -= k.L[t * p + i] * k.x[t];
        k.x[i] = s / k.L[i * p + i];
    }
    for (size_t q = 0; q < np; q++)
        k.beta[q] = NAN;
    for (size_t i = 0; i < p; i++)
        k.beta[k.use[i]] = k.x[i] / k.d[i];
    /* diag of A^-1 = diag(S^-1) / d^2, S^-1 = L^-T L^-1: column by column of L^-1 */
    for (size_t j = 0; j < p; j++) {
        double *z = k.x, sq = 0; /* z = L^-1 e_j, zero above j */
        for (size_t i = j; i < p; i++) {
            double s = i == j ? 1.0 : 0.0;
            for (size_t t = j; t < i; t++)
                s -= k.L[i * p + t] * z[t];
            z[i] = s / k.L[i * p + i];
            sq += z[i] * z[i];
        }
        k.inv_diag[j] = sq / (k.d[j] * k.d[j]);
    }

    /* residuals */
    double mean_p = F.sum_p / (double)nw, rss = 0, sst = 0;
    double icpt = F.intercept ? k.beta[0] : opt->idle_w;
    k.s.next = k.s.nactive = 0;
    for (size_t i = 0; i < nw; i++) {
        sweep_to(&k.s, &k.w[i]);
        double fitted = icpt;
        for (size_t j = 0; j < k.s.nnz; j++) {
            double bj = k.beta[param(&F, k.s.nz[j])];
            if (!isnan(bj)) fitted += bj * k.s.f[k.s.nz[j]];
        }
        double res = k.w[i].p - fitted, dev = k.w[i].p - mean_p;
        rss += res * res;
        sst += dev * dev;
    }
    double sigma2 = rss / (double)(nw - p);

    r = calloc(1, sizeof *r);
    if (r) r->names = calloc(ncol, sizeof *r->names);
    if (!r || !r->names) {
        st = tw_fail(TW_ENOMEM, "out of memory (regression result)");
        goto done;
    }
    r->idle_w = icpt;
    r->idle_se_w = F.intercept ? sqrt(sigma2 * k.inv_diag[0]) : 0.0;
    r->rms_w = sqrt(rss / (double)nw);
    r->r2 = sst > 0 ? 1 - rss / sst : NAN;
    r->nobs = nw;
    r->nnames = ncol;
    for (size_t c = 0; c < ncol; c++)
        r->names[c].name = OTHER_NAME;
    for (size_t g = 0; g < ngr; g++) {
        tw_regress_name *x = &r->names[k.gr[g].col];
        if (k.gr[g].col < max_names) x->name = k.gr[g].name;
        x->launches += k.gr[g].launches;
        x->time_s += k.gr[g].time_s;
    }
    for (size_t c = 0; c < ncol; c++) {
        tw_regress_name *x = &r->names[c];
        size_t q = param(&F, c);
        double se = NAN;
        for (size_t i = 0; i < p; i++)
            if (k.use[i] == q) se = sqrt(sigma2 * k.inv_diag[i]);
        x->mean_s = x->time_s / (double)x->launches;
        x->power_w = k.beta[q];
        x->power_se_w = se;
        x->per_launch_j = x->power_w * x->mean_s;
        x->per_launch_se_j = se * x->mean_s;
        x->energy_j = x->power_w * x->time_s;
        x->windows = k.windows[c];
    }
    qsort(r->names, ncol, sizeof *r->names, by_energy_desc);
    warn_names(r, "power unknown (no usable window saw them):", unknown);
    warn_names(r, "power poorly determined (standard error above half of it):", uncertain);
    if (pooled) {
        warn(r, "%zu names beyond the first %zu (by time) pooled as %s", ngr - max_names, max_names, OTHER_NAME);
    }
    *out = r;
    r = NULL;
done:
    tw_regress_free(r);
    work_free(&k);
    return st;
}
