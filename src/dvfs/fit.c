/* Least-squares fit of the DVFS model's hardware parameters (fit.h). */
#include "dvfs/fit.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"

/* The fitted parameters, in the order of the parameter files. */
static const struct {
    const char *key;
    size_t offset;
} fitted[TW_DVFS_FIT_PARAMS] = {
    {"a_L", offsetof(tw_dvfs_params, a_l)},       {"b_L", offsetof(tw_dvfs_params, b_l)},
    {"a_D", offsetof(tw_dvfs_params, a_d)},       {"b_D", offsetof(tw_dvfs_params, b_d)},
    {"L_L2", offsetof(tw_dvfs_params, l_l2)},     {"D_L2", offsetof(tw_dvfs_params, d_l2)},
    {"L_INST", offsetof(tw_dvfs_params, l_inst)}, {"D_INST", offsetof(tw_dvfs_params, d_inst)},
    {"L_sh", offsetof(tw_dvfs_params, l_sh)},     {"D_sh", offsetof(tw_dvfs_params, d_sh)},
    {"D_DP", offsetof(tw_dvfs_params, d_dp)},
};

enum { A_L = 0, A_D = 2 }; /* the memory-clock coefficients, indices into fitted[] */

#define STARTS 12             /* the starting set, then deterministic perturbations of it */
#define START_SPREAD log(2.5) /* perturbed starts lie within start / 2.5 .. start * 2.5 */
#define BOX log(1000.0)       /* the search box, in log units either side of the start */
#define MAX_ITER 200          /* accepted LM steps per start */
#define STEP_FIT 1e-6         /* finite-difference step in log units, for the fit's Jacobian */
/* A larger step for the identifiability check: the exact proportionality of
 * two columns (e.g. a_D and b_D with one memory clock) then stands well
 * above the rounding of cycle counts near 1e6. */
#define STEP_ID 1e-3
#define NO_EFFECT 1e-6 /* column norm, relative to the largest, below which a parameter moves nothing */
#define COLLINEAR 1e-3 /* share of a column left after removing the fitted ones' directions */
#define LAMBDA_MAX 1e10

static double get(const tw_dvfs_params *p, int k) { return *(const double *)((const char *)p + fitted[k].offset); }
static void set(tw_dvfs_params *p, int k, double v) { *(double *)((char *)p + fitted[k].offset) = v; }

const char *tw_dvfs_hold_name(tw_dvfs_hold h)
{
    static const char *const names[] = {"fitted", "one memory clock", "no effect on these rows", "collinear",
                                        "start is 0"};
    return h < TW_DVFS_HOLDS ? names[h] : "?";
}

/* ---------------------------------------------------------------- residuals */

/* Relative time errors (predicted - measured) / measured; false when a
 * prediction is not finite (the caller decides whether that is an error). */
static bool residuals(const tw_dvfs_params *p, const tw_dvfs_row *const *rows, size_t n, double *r)
{
    for (size_t i = 0; i < n; i++) {
        tw_dvfs_prediction pred;
        if (tw_dvfs_predict(p, rows[i], false, &pred) != TW_OK) return false;
        r[i] = (pred.cycles - pred.real_cycles) / pred.real_cycles;
        if (!isfinite(r[i])) return false;
    }
    return true;
}

static double sum_squares(const double *r, size_t n)
{
    double s = 0;
    for (size_t i = 0; i < n; i++)
        s += r[i] * r[i];
    return s;
}

tw_status tw_dvfs_rows_mape(const tw_dvfs_params *p, const tw_dvfs_row *const *rows, size_t n, double *mape)
{
    if (!n) return tw_fail(TW_EEMPTY, "no rows to evaluate");
    double sum = 0;
    for (size_t i = 0; i < n; i++) {
        tw_dvfs_prediction pred;
        tw_status st = tw_dvfs_predict(p, rows[i], false, &pred);
        if (st != TW_OK) return st;
        sum += fabs(pred.cycles - pred.real_cycles) / pred.real_cycles;
    }
    *mape = sum / (double)n;
    return TW_OK;
}

/* ---------------------------------------------------------------- the problem in log parameters */

/* What the optimiser sees: the free parameters' logs, the box around the start, the rows. */
typedef struct problem {
    const tw_dvfs_row *const *rows;
    size_t n;
    tw_dvfs_params base; /* held parameters and structure */
    int idx[TW_DVFS_FIT_PARAMS];
    size_t m;                                              /* free parameters */
    double lo[TW_DVFS_FIT_PARAMS], hi[TW_DVFS_FIT_PARAMS]; /* box, log units */
    double *r, *r_try, *jac;                               /* n, n, n * m (column j at jac + j * n) */
} problem;

static void to_params(const problem *pb, const double *x, tw_dvfs_params *p)
{
    *p = pb->base;
    for (size_t j = 0; j < pb->m; j++)
        set(p, pb->idx[j], exp(x[j]));
}

/* The sum of squares at x (+inf when a prediction is not finite); the residuals into r. */
static double cost_at(const problem *pb, const double *x, double *r)
{
    tw_dvfs_params p;
    to_params(pb, x, &p);
    return residuals(&p, pb->rows, pb->n, r) ? sum_squares(r, pb->n) : INFINITY;
}

static double clamp(double v, double lo, double hi) { return v < lo ? lo : v > hi ? hi : v; }

/* Forward differences (backward at the upper edge of the box); false when a step has no finite prediction. */
static bool jacobian(const problem *pb, const double *x, const double *r, double step, double *jac)
{
    double xs[TW_DVFS_FIT_PARAMS];
    memcpy(xs, x, pb->m * sizeof *xs);
    for (size_t j = 0; j < pb->m; j++) {
        double h = x[j] + step > pb->hi[j] ? -step : step;
        xs[j] = x[j] + h;
        double *col = jac + j * pb->n;
        bool ok = isfinite(cost_at(pb, xs, col));
        xs[j] = x[j];
        if (!ok) return false;
        for (size_t i = 0; i < pb->n; i++)
            col[i] = (col[i] - r[i]) / h;
    }
    return true;
}

/* Solves the symmetric positive definite m x m system a x = b by Cholesky (a is overwritten). */
static bool solve_spd(double *a, double *b, size_t m)
{
    for (size_t j = 0; j < m; j++) {
        double d = a[j * m + j];
        for (size_t k = 0; k < j; k++)
            d -= a[j * m + k] * a[j * m + k];
        if (!(d > 0)) return false;
        a[j * m + j] = sqrt(d);
        for (size_t i = j + 1; i < m; i++) {
            double s = a[i * m + j];
            for (size_t k = 0; k < j; k++)
                s -= a[i * m + k] * a[j * m + k];
            a[i * m + j] = s / a[j * m + j];
        }
    }
    for (size_t i = 0; i < m; i++) { /* L y = b */
        for (size_t k = 0; k < i; k++)
            b[i] -= a[i * m + k] * b[k];
        b[i] /= a[i * m + i];
    }
    for (size_t i = m; i-- > 0;) { /* L^T x = y */
        for (size_t k = i + 1; k < m; k++)
            b[i] -= a[k * m + i] * b[k];
        b[i] /= a[i * m + i];
    }
    return true;
}

/* J^T J and J^T r. */
static void normal_equations(const problem *pb, const double *r, double *jtj, double *jtr)
{
    size_t m = pb->m, n = pb->n;
    for (size_t a = 0; a < m; a++) {
        const double *ca = pb->jac + a * n;
        double g = 0;
        for (size_t i = 0; i < n; i++)
            g += ca[i] * r[i];
        jtr[a] = g;
        for (size_t b = 0; b <= a; b++) {
            const double *cb = pb->jac + b * n;
            double s = 0;
            for (size_t i = 0; i < n; i++)
                s += ca[i] * cb[i];
            jtj[a * m + b] = jtj[b * m + a] = s;
        }
    }
}

/* The parameters a step may move: not those at an edge of the box that the
 * gradient pushes further out (clamping them would only shorten the step in
 * the others' directions). Returns their count, indices into act. */
static size_t active_set(const problem *pb, const double *x, const double *jtr, size_t *act)
{
    size_t na = 0;
    for (size_t j = 0; j < pb->m; j++) {
        bool out_low = x[j] <= pb->lo[j] && jtr[j] > 0, out_high = x[j] >= pb->hi[j] && jtr[j] < 0;
        if (!out_low && !out_high) act[na++] = j;
    }
    return na;
}

/* One Levenberg-Marquardt step from x: tries damped steps, raising lambda,
 * until one lowers the cost. Returns the new cost (x, r updated) or the old
 * one when no step helps before lambda runs out. */
static double lm_step(problem *pb, double *x, double cost, double *lambda)
{
    size_t m = pb->m, act[TW_DVFS_FIT_PARAMS];
    double jtj[TW_DVFS_FIT_PARAMS * TW_DVFS_FIT_PARAMS], jtr[TW_DVFS_FIT_PARAMS];
    normal_equations(pb, pb->r, jtj, jtr);
    size_t na = active_set(pb, x, jtr, act);
    while (na && *lambda <= LAMBDA_MAX) {
        double a[TW_DVFS_FIT_PARAMS * TW_DVFS_FIT_PARAMS], d[TW_DVFS_FIT_PARAMS], xt[TW_DVFS_FIT_PARAMS];
        for (size_t u = 0; u < na; u++) {
            for (size_t v = 0; v < na; v++)
                a[u * na + v] = jtj[act[u] * m + act[v]];
            /* Marquardt's scaling: damping in each parameter's own units; a floor for a flat direction */
            a[u * na + u] += *lambda * fmax(jtj[act[u] * m + act[u]], 1e-12);
            d[u] = -jtr[act[u]];
        }
        if (solve_spd(a, d, na)) {
            memcpy(xt, x, m * sizeof *xt);
            for (size_t u = 0; u < na; u++)
                xt[act[u]] = clamp(x[act[u]] + d[u], pb->lo[act[u]], pb->hi[act[u]]);
            double c = cost_at(pb, xt, pb->r_try);
            if (c < cost) {
                memcpy(x, xt, m * sizeof *x);
                double *swap = pb->r;
                pb->r = pb->r_try;
                pb->r_try = swap;
                *lambda = fmax(*lambda / 10, 1e-12);
                return c;
            }
        }
        *lambda *= 10;
    }
    return cost;
}

/* Levenberg-Marquardt from x (updated in place) to a local minimum; returns
 * the cost there (+inf when the start has no finite prediction). */
static double minimise(problem *pb, double *x, unsigned *iterations)
{
    double cost = cost_at(pb, x, pb->r), lambda = 1e-3;
    for (unsigned it = 0; it < MAX_ITER && isfinite(cost) && cost > 0; it++) {
        if (!jacobian(pb, x, pb->r, STEP_FIT, pb->jac)) break;
        double next = lm_step(pb, x, cost, &lambda);
        if (!(next < cost)) break; /* no damped step lowers the cost: a minimum, to the step's precision */
        (*iterations)++;
        bool converged = cost - next <= 1e-10 * cost;
        cost = next;
        if (converged) break;
    }
    return cost;
}

/* ---------------------------------------------------------------- what the rows can identify */

static size_t distinct_mem_clocks(const tw_dvfs_row *const *rows, size_t n)
{
    size_t count = 0;
    for (size_t i = 0; i < n; i++) {
        size_t k = 0;
        while (k < i && rows[k]->mem_mhz != rows[i]->mem_mhz)
            k++;
        if (k == i) count++;
    }
    return count;
}

static double dot(const double *a, const double *b, size_t n)
{
    double s = 0;
    for (size_t i = 0; i < n; i++)
        s += a[i] * b[i];
    return s;
}

/* The kept parameter whose column points most nearly along column c (by |cosine|). */
static int most_alike(const problem *pb, const double *cols, const double *c, const bool *kept)
{
    int best = -1;
    double best_cos = -1, nc = sqrt(dot(c, c, pb->n));
    for (int k = 0; k < TW_DVFS_FIT_PARAMS; k++) {
        if (!kept[k]) continue;
        const double *ck = cols + (size_t)k * pb->n;
        double cos = fabs(dot(c, ck, pb->n)) / (nc * sqrt(dot(ck, ck, pb->n)));
        if (cos > best_cos) best_cos = cos, best = k;
    }
    return best;
}

/* Removes the unit vector q's direction from v, twice (once loses orthogonality to rounding). */
static void project_out(const double *q, double *v, size_t n)
{
    for (int pass = 0; pass < 2; pass++) {
        double c = dot(q, v, n);
        for (size_t i = 0; i < n; i++)
            v[i] -= c * q[i];
    }
}

/* Gram-Schmidt with pivoting over the Jacobian's columns (cols, n * 11; all
 * in relative error per log unit, so comparable): the parameter with the
 * largest effect not yet explained by those chosen is fitted next; one whose
 * column has less than COLLINEAR of its own left is held as collinear, and
 * one that moves nothing at all (below NO_EFFECT of the largest) as without
 * effect. So of two parameters that move the rows alike, the weaker is held
 * (on rows with no latency-bound point, the smaller of the constants L_INST
 * and L_sh). work holds n * 11: the columns' remainders, then unit vectors. */
static void hold_unidentified(problem *pb, const double *cols, double *work, tw_dvfs_fit *out)
{
    size_t n = pb->n;
    double norm[TW_DVFS_FIT_PARAMS], left[TW_DVFS_FIT_PARAMS], largest = 0;
    bool open[TW_DVFS_FIT_PARAMS] = {0}, kept[TW_DVFS_FIT_PARAMS] = {0};
    memcpy(work, cols, TW_DVFS_FIT_PARAMS * n * sizeof *work);
    for (int k = 0; k < TW_DVFS_FIT_PARAMS; k++) {
        norm[k] = sqrt(dot(cols + (size_t)k * n, cols + (size_t)k * n, n));
        if (out->param[k].hold == TW_DVFS_FITTED) largest = fmax(largest, norm[k]);
    }
    for (int k = 0; k < TW_DVFS_FIT_PARAMS; k++) {
        if (out->param[k].hold != TW_DVFS_FITTED) continue;
        if (norm[k] > NO_EFFECT * largest)
            open[k] = true;
        else
            out->param[k].hold = TW_DVFS_HELD_NO_EFFECT;
    }
    for (;;) {
        int pick = -1;
        for (int k = 0; k < TW_DVFS_FIT_PARAMS; k++) {
            if (!open[k]) continue;
            left[k] = sqrt(dot(work + (size_t)k * n, work + (size_t)k * n, n));
            if (left[k] < COLLINEAR * norm[k]) {
                open[k] = false;
                out->param[k].hold = TW_DVFS_HELD_COLLINEAR;
            } else if (pick < 0 || left[k] > left[pick]) {
                pick = k;
            }
        }
        if (pick < 0) break;
        double *q = work + (size_t)pick * n;
        for (size_t i = 0; i < n; i++)
            q[i] /= left[pick];
        open[pick] = false;
        kept[pick] = true;
        for (int k = 0; k < TW_DVFS_FIT_PARAMS; k++)
            if (open[k]) project_out(q, work + (size_t)k * n, n);
    }
    for (int k = 0; k < TW_DVFS_FIT_PARAMS; k++)
        if (out->param[k].hold == TW_DVFS_HELD_COLLINEAR)
            out->param[k].like = most_alike(pb, cols, cols + (size_t)k * n, kept);
}

/* Decides the held parameters at the start: the memory-clock coefficients
 * when the rows have one memory clock (a_D/fm^2 and b_D/fm are then one
 * number, and a_L/fm one fixed time that nothing in the rows tells apart
 * from the memory clock's), a parameter that starts at 0 (the loader allows
 * it for a_L and a_D), then by the Jacobian of all eleven at the start. */
static tw_status identify(problem *pb, tw_dvfs_fit *out)
{
    if (out->mem_clocks < 2) {
        out->param[A_L].hold = TW_DVFS_HELD_ONE_MEM_CLOCK;
        out->param[A_D].hold = TW_DVFS_HELD_ONE_MEM_CLOCK;
    }
    for (int k = 0; k < TW_DVFS_FIT_PARAMS; k++) /* its log is -inf: its column below comes out 0 */
        if (out->param[k].hold == TW_DVFS_FITTED && !(out->param[k].start > 0))
            out->param[k].hold = TW_DVFS_HELD_ZERO_START;
    size_t n = pb->n;
    double *cols = calloc(2 * TW_DVFS_FIT_PARAMS * n, sizeof *cols);
    if (!cols) return tw_fail(TW_ENOMEM, "out of memory fitting the DVFS model");
    /* all eleven free for the check, so that columns are comparable */
    pb->m = TW_DVFS_FIT_PARAMS;
    for (int k = 0; k < TW_DVFS_FIT_PARAMS; k++) {
        pb->idx[k] = k;
        pb->lo[k] = -INFINITY;
        pb->hi[k] = INFINITY;
    }
    double x[TW_DVFS_FIT_PARAMS];
    for (int k = 0; k < TW_DVFS_FIT_PARAMS; k++)
        x[k] = log(get(&pb->base, k));
    bool ok = isfinite(cost_at(pb, x, pb->r)) && jacobian(pb, x, pb->r, STEP_ID, cols);
    if (ok) hold_unidentified(pb, cols, cols + TW_DVFS_FIT_PARAMS * n, out);
    free(cols);
    return ok ? TW_OK : tw_fail(TW_EINVAL, "the starting parameters give no finite prediction for some row");
}

/* ---------------------------------------------------------------- the fit */

/* xorshift64: a fixed sequence, so that the perturbed starts are the same on every run. */
static double uniform_pm1(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return (double)(*s >> 11) / (double)(UINT64_C(1) << 53) * 2 - 1;
}

/* The best of STARTS local minimisations into best[] (log units); returns its cost. */
static double multistart(problem *pb, const double *x0, double *best, unsigned *iterations)
{
    uint64_t seed = UINT64_C(0x9e3779b97f4a7c15);
    double best_cost = INFINITY;
    for (int s = 0; s < STARTS; s++) {
        double x[TW_DVFS_FIT_PARAMS];
        for (size_t j = 0; j < pb->m; j++)
            x[j] = s == 0 ? x0[j] : x0[j] + START_SPREAD * uniform_pm1(&seed);
        double c = minimise(pb, x, iterations);
        if (c < best_cost) {
            best_cost = c;
            memcpy(best, x, pb->m * sizeof *x);
        }
    }
    return best_cost;
}

static tw_status fit_free(problem *pb, tw_dvfs_fit *out)
{
    double x0[TW_DVFS_FIT_PARAMS], x[TW_DVFS_FIT_PARAMS];
    pb->m = 0;
    for (int k = 0; k < TW_DVFS_FIT_PARAMS; k++) {
        if (out->param[k].hold != TW_DVFS_FITTED) continue;
        x0[pb->m] = log(out->param[k].start);
        pb->lo[pb->m] = x0[pb->m] - BOX;
        pb->hi[pb->m] = x0[pb->m] + BOX;
        pb->idx[pb->m++] = k;
    }
    out->free = pb->m;
    memcpy(x, x0, pb->m * sizeof *x); /* what multistart replaces with its best */
    if (pb->n < pb->m) return tw_fail(TW_EINVAL, "%zu rows cannot determine %zu parameters", pb->n, pb->m);
    out->cost = pb->m ? multistart(pb, x0, x, &out->iterations) : cost_at(pb, x0, pb->r);
    if (!isfinite(out->cost)) return tw_fail(TW_EINVAL, "the fit found no parameters with finite predictions");
    to_params(pb, x, &out->params);
    for (size_t j = 0; j < pb->m; j++) {
        tw_dvfs_fit_param *fp = &out->param[pb->idx[j]];
        fp->value = exp(x[j]);
        fp->at_bound = x[j] <= pb->lo[j] + 1e-9 || x[j] >= pb->hi[j] - 1e-9;
    }
    return TW_OK;
}

static void init_fit(const tw_dvfs_params *start, const tw_dvfs_row *const *rows, size_t n, tw_dvfs_fit *out)
{
    memset(out, 0, sizeof *out);
    out->params = *start;
    out->n = n;
    out->mem_clocks = distinct_mem_clocks(rows, n);
    for (int k = 0; k < TW_DVFS_FIT_PARAMS; k++)
        out->param[k] = (tw_dvfs_fit_param){
            .key = fitted[k].key, .start = get(start, k), .value = get(start, k), .hold = TW_DVFS_FITTED, .like = -1};
}

tw_status tw_dvfs_fit_rows(const tw_dvfs_params *start, const tw_dvfs_row *const *rows, size_t n, tw_dvfs_fit *out)
{
    init_fit(start, rows, n, out);
    if (!n) return tw_fail(TW_EEMPTY, "no rows to fit to");
    tw_status st = tw_dvfs_rows_mape(start, rows, n, &out->start_mape);
    if (st != TW_OK) return st;
    problem pb = {.rows = rows, .n = n, .base = *start};
    double *buf = calloc((2 + TW_DVFS_FIT_PARAMS) * n, sizeof *buf);
    if (!buf) return tw_fail(TW_ENOMEM, "out of memory fitting the DVFS model");
    pb.r = buf;
    pb.r_try = buf + n;
    pb.jac = buf + 2 * n;
    st = identify(&pb, out);
    if (st == TW_OK) st = fit_free(&pb, out);
    if (st == TW_OK) st = tw_dvfs_rows_mape(&out->params, rows, n, &out->mape);
    free(buf);
    return st;
}
