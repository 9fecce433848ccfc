/* Sign-constrained least squares on the normal equations: see nnls.h. */
#include "core/nnls.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"

bool tw_cholesky(double *A, size_t n)
{
    for (size_t j = 0; j < n; j++) {
        double d = A[j * n + j];
        for (size_t k = 0; k < j; k++)
            d -= A[j * n + k] * A[j * n + k];
        if (!(d > 0) || !isfinite(d)) return false;
        d = sqrt(d);
        A[j * n + j] = d;
        for (size_t i = j + 1; i < n; i++) {
            double v = A[i * n + j];
            for (size_t k = 0; k < j; k++)
                v -= A[i * n + k] * A[j * n + k];
            A[i * n + j] = v / d;
        }
    }
    return true;
}

static void forward(const double *L, size_t n, double *b)
{
    for (size_t i = 0; i < n; i++) {
        double v = b[i];
        for (size_t k = 0; k < i; k++)
            v -= L[i * n + k] * b[k];
        b[i] = v / L[i * n + i];
    }
}

void tw_cholesky_solve(const double *L, size_t n, double *b)
{
    forward(L, n, b);
    for (size_t i = n; i-- > 0;) {
        double v = b[i];
        for (size_t k = i + 1; k < n; k++)
            v -= L[k * n + i] * b[k];
        b[i] = v / L[i * n + i];
    }
}

void tw_cholesky_inverse_diag(const double *L, size_t n, double *d, double *work)
{
    /* (L L')^-1 = L'^-1 L^-1: its diagonal is the squared norm of each column of L^-1 */
    for (size_t i = 0; i < n; i++) {
        memset(work, 0, n * sizeof *work);
        work[i] = 1.0;
        forward(L, n, work);
        double s = 0;
        for (size_t k = i; k < n; k++)
            s += work[k] * work[k];
        d[i] = s;
    }
}

typedef struct nnls_ws {
    size_t p;
    const double *G, *c; /* scaled */
    bool *free_;         /* the passive set */
    size_t *idx;         /* its members */
    double *sub, *rhs;
} nnls_ws;

/* z = the unconstrained minimiser over the free set (others 0). False when
 * no ridge makes the block positive definite. */
static bool solve_free(nnls_ws *w, double *z)
{
    size_t m = 0;
    for (size_t j = 0; j < w->p; j++)
        if (w->free_[j]) w->idx[m++] = j;
    memset(z, 0, w->p * sizeof *z);
    if (m == 0) return true;
    for (double ridge = 0; ridge <= 1e-4; ridge = ridge > 0 ? ridge * 100 : 1e-10) {
        for (size_t a = 0; a < m; a++) {
            for (size_t b = 0; b <= a; b++)
                w->sub[a * m + b] = w->G[w->idx[a] * w->p + w->idx[b]];
            w->sub[a * m + a] += ridge;
            w->rhs[a] = w->c[w->idx[a]];
        }
        if (!tw_cholesky(w->sub, m)) continue;
        tw_cholesky_solve(w->sub, m, w->rhs);
        for (size_t a = 0; a < m; a++)
            z[w->idx[a]] = w->rhs[a];
        return true;
    }
    return false;
}

/* Lawson and Hanson with lower bounds (zero) only. */
static tw_status nnls_lower(const double *G, const double *c, size_t p, const bool *nonneg, double *x, bool *at_bound)
{
    memset(x, 0, p * sizeof *x);
    double *scale = malloc(p * sizeof *scale), *Gs = malloc(p * p * sizeof *Gs), *cs = malloc(p * sizeof *cs);
    double *u = calloc(p, sizeof *u), *z = malloc(p * sizeof *z), *sub = malloc(p * p * sizeof *sub);
    double *rhs = malloc(p * sizeof *rhs);
    bool *free_ = calloc(p, sizeof *free_), *live = calloc(p, sizeof *live);
    size_t *idx = malloc(p * sizeof *idx);
    tw_status st = TW_OK;
    if (!scale || !Gs || !cs || !u || !z || !sub || !rhs || !free_ || !live || !idx) {
        st = tw_fail(TW_ENOMEM, "out of memory (least squares of %zu unknowns)", p);
        goto out;
    }
    /* unit diagonal: coefficients of very different sizes (a baseline in
     * watts, a name seen for microseconds) condition alike */
    for (size_t j = 0; j < p; j++) {
        double d = G[j * p + j];
        live[j] = d > 0 && isfinite(d);
        scale[j] = live[j] ? 1.0 / sqrt(d) : 0.0;
        free_[j] = live[j];
    }
    double cmax = 0;
    for (size_t i = 0; i < p; i++) {
        cs[i] = c[i] * scale[i];
        cmax = fmax(cmax, fabs(cs[i]));
        for (size_t j = 0; j < p; j++)
            Gs[i * p + j] = G[i * p + j] * scale[i] * scale[j];
    }
    double tol = 1e-9 * (1.0 + cmax);
    nnls_ws w = {p, Gs, cs, free_, idx, sub, rhs};
    /* start: every variable free; those the free solution makes negative
     * leave together (a heuristic: the optimality check below brings back
     * any that should not have left), until the free solution is feasible */
    for (size_t round = 0; round <= p; round++) {
        if (!solve_free(&w, z)) {
            st = tw_fail(TW_ENUMERIC, "least squares: the system cannot be solved");
            goto out;
        }
        bool neg = false;
        for (size_t j = 0; j < p; j++)
            if (free_[j] && nonneg[j] && z[j] <= 0) free_[j] = false, neg = true;
        if (!neg) break;
    }
    memcpy(u, z, p * sizeof *u);
    size_t max_outer = 3 * p + 10;
    bool settled = false;
    for (size_t outer = 0; outer < max_outer && st == TW_OK; outer++) {
        /* inner loop: step towards the free-set solution, stopping at the
         * first constrained variable it would push below zero */
        for (size_t inner = 0; inner <= p; inner++) {
            if (!solve_free(&w, z)) {
                st = tw_fail(TW_ENUMERIC, "least squares: the system cannot be solved");
                break;
            }
            double alpha = 1.0;
            bool neg = false;
            for (size_t j = 0; j < p; j++)
                if (free_[j] && nonneg[j] && z[j] <= 0) {
                    neg = true;
                    double a = u[j] / (u[j] - z[j]);
                    if (a < alpha) alpha = a;
                }
            if (!neg) break;
            for (size_t j = 0; j < p; j++) {
                if (!free_[j]) continue;
                u[j] += alpha * (z[j] - u[j]);
                if (nonneg[j] && u[j] <= 1e-15) {
                    u[j] = 0;
                    free_[j] = false;
                }
            }
        }
        if (st != TW_OK) break;
        memcpy(u, z, p * sizeof *u);
        /* optimal when no constrained variable at zero would lower the objective */
        size_t best = p;
        double wmax = tol;
        for (size_t j = 0; j < p; j++) {
            if (free_[j] || !live[j] || !nonneg[j]) continue;
            double g = cs[j];
            for (size_t k = 0; k < p; k++)
                g -= Gs[j * p + k] * u[k];
            if (g > wmax) {
                wmax = g;
                best = j;
            }
        }
        if (best == p) {
            settled = true;
            break;
        }
        free_[best] = true;
        if (!solve_free(&w, z) || z[best] <= 0) { /* rounding: it cannot enter */
            free_[best] = false;
            settled = true;
            break;
        }
    }
    for (size_t j = 0; j < p; j++) {
        x[j] = u[j] * scale[j];
        if (at_bound) at_bound[j] = nonneg[j] && !free_[j];
    }
    if (st == TW_OK && !settled) st = tw_fail(TW_ENUMERIC, "least squares: the active set did not settle");
out:
    free(scale);
    free(Gs);
    free(cs);
    free(u);
    free(z);
    free(sub);
    free(rhs);
    free(free_);
    free(live);
    free(idx);
    return st;
}

/* The reduced problem without the held variables (held at their upper
 * bound: their part moves to the right side), solved by nnls_lower; x gets
 * every variable. */
static tw_status solve_unheld(const double *G, const double *c, size_t p, const bool *nonneg, const double *upper,
                              const bool *held, double *x, bool *at_bound, double *G2, double *c2, double *x2,
                              bool *nn2, bool *ab2, size_t *map)
{
    size_t m = 0;
    for (size_t j = 0; j < p; j++)
        if (!held[j]) map[m++] = j;
    for (size_t a = 0; a < m; a++) {
        size_t i = map[a];
        c2[a] = c[i];
        for (size_t k = 0; k < p; k++)
            if (held[k]) c2[a] -= G[i * p + k] * upper[k];
        nn2[a] = nonneg[i];
        for (size_t b = 0; b < m; b++)
            G2[a * m + b] = G[i * p + map[b]];
    }
    tw_status st = m ? nnls_lower(G2, c2, m, nn2, x2, ab2) : TW_OK;
    for (size_t j = 0; j < p; j++) {
        x[j] = held[j] ? upper[j] : 0;
        if (at_bound) at_bound[j] = false;
    }
    for (size_t a = 0; a < m; a++) {
        x[map[a]] = x2[a];
        if (at_bound) at_bound[map[a]] = ab2[a];
    }
    return st;
}

/* With upper bounds: the variable the solution pushes furthest above its
 * bound is held there and the rest solved again; a held one whose gradient
 * says the objective falls as it goes down is let go; until neither
 * happens (a bounded-variable active set, one change a step). */
tw_status tw_nnls_gram(const double *G, const double *c, size_t p, const bool *nonneg, const double *upper, double *x,
                       bool *at_bound, bool *at_upper)
{
    if (!G || !c || !nonneg || !x || p == 0) return tw_fail(TW_EINVAL, "tw_nnls_gram: bad argument");
    if (at_upper) memset(at_upper, 0, p * sizeof *at_upper);
    bool bounded = false;
    for (size_t j = 0; upper && j < p; j++)
        bounded |= isfinite(upper[j]);
    if (!bounded) return nnls_lower(G, c, p, nonneg, x, at_bound);
    bool *held = calloc(p, sizeof *held), *nn2 = malloc(p * sizeof *nn2), *ab2 = malloc(p * sizeof *ab2);
    double *G2 = malloc(p * p * sizeof *G2), *c2 = malloc(p * sizeof *c2), *x2 = malloc(p * sizeof *x2);
    size_t *map = malloc(p * sizeof *map);
    tw_status st = held && nn2 && ab2 && G2 && c2 && x2 && map
                       ? TW_OK
                       : tw_fail(TW_ENOMEM, "out of memory (least squares of %zu unknowns)", p);
    bool settled = false;
    for (size_t step = 0; st == TW_OK && step < 3 * p + 10; step++) {
        st = solve_unheld(G, c, p, nonneg, upper, held, x, at_bound, G2, c2, x2, nn2, ab2, map);
        if (st != TW_OK) break;
        size_t worst = p;
        double over = 1e-12;
        for (size_t j = 0; j < p; j++) {
            if (held[j] || !isfinite(upper[j])) continue;
            double v = (x[j] - upper[j]) / fmax(fabs(upper[j]), 1e-300);
            if (v > over) over = v, worst = j;
        }
        if (worst < p) {
            held[worst] = true;
            continue;
        }
        size_t loose = p;
        double most = 0;
        for (size_t k = 0; k < p; k++) {
            if (!held[k]) continue;
            double g = -c[k], mag = fabs(c[k]);
            for (size_t i = 0; i < p; i++) {
                g += G[k * p + i] * x[i];
                mag += fabs(G[k * p + i] * x[i]);
            }
            if (g > 1e-9 * mag && g > most) most = g, loose = k;
        }
        if (loose < p) {
            held[loose] = false;
            continue;
        }
        settled = true;
        break;
    }
    if (st == TW_OK && !settled) st = tw_fail(TW_ENUMERIC, "least squares: the bounds did not settle");
    if (at_upper && st == TW_OK) memcpy(at_upper, held, p * sizeof *held);
    free(held);
    free(nn2);
    free(ab2);
    free(G2);
    free(c2);
    free(x2);
    free(map);
    return st;
}
