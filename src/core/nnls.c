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

/* Where a variable is: free, held at its lower bound (0), or held at its upper bound. */
enum { FREE = 0, AT_LO = 1, AT_HI = 2 };

typedef struct nnls_ws {
    size_t p;
    const double *G, *c; /* scaled */
    const double *ub;    /* scaled upper bounds (INFINITY: none) */
    unsigned char *state;
    size_t *idx; /* the free set's members */
    double *sub, *rhs;
} nnls_ws;

/* z = the minimiser over the free set, the others at their bounds (0 or
 * their upper bound, which moves to the right side). False when no ridge
 * makes the free block positive definite. */
static bool solve_free(nnls_ws *w, double *z)
{
    size_t m = 0;
    for (size_t j = 0; j < w->p; j++) {
        z[j] = w->state[j] == AT_HI ? w->ub[j] : 0.0;
        if (w->state[j] == FREE) w->idx[m++] = j;
    }
    if (m == 0) return true;
    for (double ridge = 0; ridge <= 1e-4; ridge = ridge > 0 ? ridge * 100 : 1e-10) {
        for (size_t a = 0; a < m; a++) {
            size_t i = w->idx[a];
            for (size_t b = 0; b <= a; b++)
                w->sub[a * m + b] = w->G[i * w->p + w->idx[b]];
            w->sub[a * m + a] += ridge;
            w->rhs[a] = w->c[i];
            for (size_t k = 0; k < w->p; k++)
                if (w->state[k] == AT_HI) w->rhs[a] -= w->G[i * w->p + k] * w->ub[k];
        }
        if (!tw_cholesky(w->sub, m)) continue;
        tw_cholesky_solve(w->sub, m, w->rhs);
        for (size_t a = 0; a < m; a++)
            z[w->idx[a]] = w->rhs[a];
        return true;
    }
    return false;
}

/* The step from u towards z, as far as the first free variable that would
 * cross a bound (1: all the way); *hit is that variable (p: none). */
static double step_to_bounds(const nnls_ws *w, const bool *nonneg, const double *u, const double *z, size_t *hit)
{
    double alpha = 1.0;
    *hit = w->p;
    for (size_t j = 0; j < w->p; j++) {
        if (w->state[j] != FREE) continue;
        double a = 2.0;
        if (nonneg[j] && z[j] <= 0) a = u[j] / (u[j] - z[j]);
        if (z[j] >= w->ub[j]) a = (w->ub[j] - u[j]) / (z[j] - u[j]);
        if (a < alpha || (a <= alpha && *hit == w->p && a <= 1.0)) alpha = fmax(0.0, a), *hit = j;
    }
    return alpha;
}

/* Stark and Parker's bounded-variable least squares (Lawson and Hanson's
 * active set with lower and upper bounds in one loop): one factorisation
 * a change of the active set, however many variables end at either bound. */
static tw_status bvls(const double *G, const double *c, size_t p, const bool *nonneg, const double *upper, double *x,
                      bool *at_bound, bool *at_upper)
{
    memset(x, 0, p * sizeof *x);
    double *scale = malloc(p * sizeof *scale), *Gs = malloc(p * p * sizeof *Gs), *cs = malloc(p * sizeof *cs);
    double *u = calloc(p, sizeof *u), *z = malloc(p * sizeof *z), *sub = malloc(p * p * sizeof *sub);
    double *rhs = malloc(p * sizeof *rhs), *ub = malloc(p * sizeof *ub);
    unsigned char *state = calloc(p, 1);
    bool *live = calloc(p, sizeof *live);
    size_t *idx = malloc(p * sizeof *idx);
    tw_status st = TW_OK;
    if (!scale || !Gs || !cs || !u || !z || !sub || !rhs || !ub || !state || !live || !idx) {
        st = tw_fail(TW_ENOMEM, "out of memory (least squares of %zu unknowns)", p);
        goto out;
    }
    /* unit diagonal: coefficients of very different sizes (a baseline in
     * watts, a name seen for microseconds) condition alike */
    for (size_t j = 0; j < p; j++) {
        double d = G[j * p + j];
        live[j] = d > 0 && isfinite(d);
        scale[j] = live[j] ? 1.0 / sqrt(d) : 0.0;
        state[j] = live[j] ? FREE : AT_LO;
        double hi = upper && isfinite(upper[j]) ? upper[j] : INFINITY;
        if (nonneg[j] && hi < 0) hi = 0;
        ub[j] = live[j] && isfinite(hi) ? hi / scale[j] : INFINITY;
    }
    double cmax = 0;
    for (size_t i = 0; i < p; i++) {
        cs[i] = c[i] * scale[i];
        cmax = fmax(cmax, fabs(cs[i]));
        for (size_t j = 0; j < p; j++)
            Gs[i * p + j] = G[i * p + j] * scale[i] * scale[j];
    }
    double tol = 1e-9 * (1.0 + cmax);
    nnls_ws w = {p, Gs, cs, ub, state, idx, sub, rhs};
    /* start: every variable free; those the free solution puts beyond a
     * bound go there together (a heuristic: the optimality check below
     * brings back any that should not have gone), until it is feasible */
    for (size_t round = 0; round <= p; round++) {
        if (!solve_free(&w, z)) {
            st = tw_fail(TW_ENUMERIC, "least squares: the system cannot be solved");
            goto out;
        }
        bool out_ = false;
        for (size_t j = 0; j < p; j++) {
            if (state[j] != FREE) continue;
            if (nonneg[j] && z[j] <= 0)
                state[j] = AT_LO, out_ = true;
            else if (z[j] >= ub[j])
                state[j] = AT_HI, out_ = true;
        }
        if (!out_) break;
    }
    if (!solve_free(&w, u)) {
        st = tw_fail(TW_ENUMERIC, "least squares: the system cannot be solved");
        goto out;
    }
    size_t max_outer = 3 * p + 10;
    bool settled = false;
    for (size_t outer = 0; outer < max_outer && st == TW_OK; outer++) {
        /* inner loop: step towards the free-set solution, stopping at the
         * first free variable it would push across a bound, which stays there */
        for (size_t inner = 0; inner <= p; inner++) {
            if (!solve_free(&w, z)) {
                st = tw_fail(TW_ENUMERIC, "least squares: the system cannot be solved");
                break;
            }
            size_t hit;
            double alpha = step_to_bounds(&w, nonneg, u, z, &hit);
            if (hit == p) break;
            for (size_t j = 0; j < p; j++) {
                if (state[j] != FREE) continue;
                u[j] += alpha * (z[j] - u[j]);
                if (j == hit || (nonneg[j] && u[j] <= 1e-15) || u[j] >= ub[j] * (1 - 1e-15)) {
                    bool hi = j == hit ? z[j] >= ub[j] : u[j] >= ub[j] * (1 - 1e-15);
                    state[j] = hi ? AT_HI : AT_LO;
                    u[j] = hi ? ub[j] : 0.0;
                }
            }
        }
        if (st != TW_OK) break;
        memcpy(u, z, p * sizeof *u);
        /* optimal when no variable at a bound would lower the objective by
         * moving off it: the largest such gradient frees its variable */
        size_t best = p;
        double gmax = tol;
        for (size_t j = 0; j < p; j++) {
            if (state[j] == FREE || !live[j]) continue;
            double g = cs[j];
            for (size_t k = 0; k < p; k++)
                g -= Gs[j * p + k] * u[k];
            double want = state[j] == AT_LO ? (nonneg[j] ? g : fabs(g)) : -g;
            if (want > gmax) gmax = want, best = j;
        }
        if (best == p) {
            settled = true;
            break;
        }
        unsigned char was = state[best];
        state[best] = FREE;
        if (!solve_free(&w, z) || (was == AT_LO ? z[best] <= 0 : z[best] >= ub[best])) {
            state[best] = was; /* rounding: it cannot move off */
            settled = true;
            break;
        }
    }
    for (size_t j = 0; j < p; j++) {
        x[j] = state[j] == AT_HI ? fmax(upper[j], nonneg[j] ? 0.0 : -INFINITY) : u[j] * scale[j]; /* exact */
        if (at_bound) at_bound[j] = nonneg[j] && state[j] == AT_LO;
        if (at_upper) at_upper[j] = state[j] == AT_HI;
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
    free(ub);
    free(state);
    free(live);
    free(idx);
    return st;
}

tw_status tw_nnls_gram(const double *G, const double *c, size_t p, const bool *nonneg, const double *upper, double *x,
                       bool *at_bound, bool *at_upper)
{
    if (!G || !c || !nonneg || !x || p == 0) return tw_fail(TW_EINVAL, "tw_nnls_gram: bad argument");
    return bvls(G, c, p, nonneg, upper, x, at_bound, at_upper);
}
