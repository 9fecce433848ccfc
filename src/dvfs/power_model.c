/* The DVFS power model (power_model.h): its regressors and the least-squares fit. */
#include "dvfs/power_model.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"

const char *tw_dvfs_power_kind_name(tw_dvfs_power_kind k)
{
    return k == TW_DVFS_POWER_COUNTERS ? "counters" : "scaled";
}

double tw_dvfs_voltage_norm(double f) { return 2 * (f - 0.5) * (f - 0.5) + 0.5; }

/* The regressors at one pair, into x; returns how many. With one memory
 * clock, fm' is 1 everywhere: the pure fm' term is the constant's twin and
 * is left out (the fit would be singular), and fm' * dram stays as dram. */
static size_t regressors(const tw_dvfs_power_model *m, const tw_dvfs_kernel_ref *k, double core_mhz, double mem_mhz,
                         double *x)
{
    double fc = core_mhz / m->core_ref_mhz, fm = mem_mhz / m->mem_ref_mhz;
    double v = tw_dvfs_voltage_norm(fc), core = v * v * fc; /* dynamic power ~ C V^2 f */
    size_t n = 0;
    x[n++] = 1;
    if (m->mem_varies) x[n++] = fm;
    if (m->kind == TW_DVFS_POWER_COUNTERS) x[n++] = fm * k->dram_gbs;
    x[n++] = core;
    if (m->kind == TW_DVFS_POWER_COUNTERS) x[n++] = core * k->ipc;
    return n;
}

/* The scaled model fits power relative to the reference pair's, so that
 * kernels of high and low power weigh alike in the shape they share. */
static double target(const tw_dvfs_power_model *m, const tw_dvfs_power_sample *s)
{
    return m->kind == TW_DVFS_POWER_SCALED ? s->power_w / s->ref->power_w : s->power_w;
}

static tw_status check_samples(const tw_dvfs_power_sample *s, size_t n, bool *mem_varies, bool *core_varies)
{
    *mem_varies = *core_varies = false;
    for (size_t i = 0; i < n; i++) {
        const tw_dvfs_kernel_ref *k = s[i].ref;
        if (!(isfinite(s[i].power_w) && s[i].power_w > 0 && s[i].core_mhz > 0 && s[i].mem_mhz > 0))
            return tw_fail(TW_EINVAL, "power model: sample %zu has no positive power and clocks", i);
        if (!(isfinite(k->power_w) && k->power_w > 0 && isfinite(k->ipc) && k->ipc >= 0 && isfinite(k->dram_gbs) &&
              k->dram_gbs >= 0))
            return tw_fail(TW_EINVAL, "power model: sample %zu has a reference profile that is not finite", i);
        if (s[i].mem_mhz != s[0].mem_mhz) *mem_varies = true;
        if (s[i].core_mhz != s[0].core_mhz) *core_varies = true;
    }
    return TW_OK;
}

tw_status tw_dvfs_power_fit(tw_dvfs_power_kind kind, double core_ref_mhz, double mem_ref_mhz,
                            const tw_dvfs_power_sample *s, size_t n, tw_dvfs_power_model *m)
{
    memset(m, 0, sizeof *m);
    m->kind = kind;
    m->core_ref_mhz = core_ref_mhz;
    m->mem_ref_mhz = mem_ref_mhz;
    if (!(core_ref_mhz > 0 && mem_ref_mhz > 0)) return tw_fail(TW_EINVAL, "power model: no reference clock pair");
    bool core_varies;
    tw_status st = check_samples(s, n, &m->mem_varies, &core_varies);
    if (st != TW_OK) return st;
    if (!core_varies) return tw_fail(TW_EINVAL, "power model: one core clock cannot show how power scales with it");
    double x[TW_LSQ_MAX_P];
    m->nterms = regressors(m, s[0].ref, s[0].core_mhz, s[0].mem_mhz, x);
    if (n < m->nterms) return tw_fail(TW_EINVAL, "power model: %zu samples for %zu terms", n, m->nterms);
    double *X = malloc(n * m->nterms * sizeof *X), *y = malloc(n * sizeof *y);
    if (!X || !y) st = tw_fail(TW_ENOMEM, "out of memory fitting the power model");
    for (size_t i = 0; st == TW_OK && i < n; i++) {
        regressors(m, s[i].ref, s[i].core_mhz, s[i].mem_mhz, X + i * m->nterms);
        y[i] = target(m, &s[i]);
    }
    tw_lsq_fit fit;
    if (st == TW_OK && !tw_lsq_solve(X, y, n, m->nterms, &fit))
        st = tw_fail(TW_EINVAL,
                     "power model: the %s terms are not independent in these samples (one kernel? "
                     "counters alike in every kernel?)",
                     tw_dvfs_power_kind_name(kind));
    if (st == TW_OK) memcpy(m->beta, fit.beta, m->nterms * sizeof *m->beta);
    free(X);
    free(y);
    return st;
}

static double linear(const tw_dvfs_power_model *m, const tw_dvfs_kernel_ref *k, double core_mhz, double mem_mhz)
{
    double x[TW_LSQ_MAX_P], sum = 0;
    size_t n = regressors(m, k, core_mhz, mem_mhz, x);
    for (size_t i = 0; i < n; i++)
        sum += m->beta[i] * x[i];
    return sum;
}

double tw_dvfs_power_predict(const tw_dvfs_power_model *m, const tw_dvfs_kernel_ref *k, double core_mhz, double mem_mhz)
{
    double p = linear(m, k, core_mhz, mem_mhz);
    if (m->kind == TW_DVFS_POWER_SCALED) p *= k->power_w / linear(m, k, m->core_ref_mhz, m->mem_ref_mhz);
    return p;
}
