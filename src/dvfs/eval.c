/* The model against measured rows (eval.h). */
#include "dvfs/eval.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"

/* The authors' evaluation set is fixed by name, not by any property of the rows. */
static const char *const paper_kernels[] = {
    "BlackScholes",
    "SobolQRNG",
    "backpropForward",
    "conjugateGradient",
    "convolutionSeparable",
    "convolutionTexture",
    "fastWalshTransform",
    "histogram",
    "hotspot",
    "matrixMulGlobal",
    "matrixMulShared",
    "mergeSort",
    "nn",
    "quasirandomGenerator",
    "reduction",
    "scalarProd",
    "scanUniformUpdate",
    "sortingNetworks",
    "transpose",
    "vectorAdd",
};

#define MIN_CLOCK_MHZ 500

bool tw_dvfs_in_paper_set(const tw_dvfs_row *r)
{
    if (r->core_mhz < MIN_CLOCK_MHZ || r->mem_mhz < MIN_CLOCK_MHZ) return false;
    for (size_t i = 0; i < sizeof paper_kernels / sizeof paper_kernels[0]; i++)
        if (!strcmp(r->app, paper_kernels[i])) return true;
    return false;
}

static tw_dvfs_group *kernel_group(tw_dvfs_eval *e, const char *app)
{
    for (size_t i = 0; i < e->nkernels; i++)
        if (!strcmp(e->kernels[i].name, app)) return &e->kernels[i];
    tw_dvfs_group *g = &e->kernels[e->nkernels++]; /* room for one per point */
    snprintf(g->name, sizeof g->name, "%s", app);
    return g;
}

/* Sums into mape, then divides: groups hold means once this returns. */
static void summarise(tw_dvfs_eval *e)
{
    double sum = 0;
    for (int r = 0; r < TW_DVFS_REGIMES; r++)
        snprintf(e->regimes[r].name, sizeof e->regimes[r].name, "%s", tw_dvfs_regime_name((tw_dvfs_regime)r));
    for (size_t i = 0; i < e->n; i++) {
        const tw_dvfs_point *pt = &e->points[i];
        tw_dvfs_group *k = kernel_group(e, pt->row->app), *g = &e->regimes[pt->pred.regime];
        sum += pt->ape;
        k->mape += pt->ape;
        k->n++;
        g->mape += pt->ape;
        g->n++;
    }
    e->mape = sum / (double)e->n;
    for (size_t i = 0; i < e->nkernels; i++)
        e->kernels[i].mape /= (double)e->kernels[i].n;
    for (int r = 0; r < TW_DVFS_REGIMES; r++)
        e->regimes[r].mape = e->regimes[r].n ? e->regimes[r].mape / (double)e->regimes[r].n : NAN;
}

/* The largest APEs by insertion into a short sorted list (ties: the earlier row first). */
static void find_worst(tw_dvfs_eval *e)
{
    e->nworst = 0;
    for (size_t i = 0; i < e->n; i++) {
        size_t k = e->nworst < TW_DVFS_WORST ? e->nworst++ : TW_DVFS_WORST;
        while (k > 0 && e->points[e->worst[k - 1]].ape < e->points[i].ape) {
            if (k < TW_DVFS_WORST) e->worst[k] = e->worst[k - 1];
            k--;
        }
        if (k < TW_DVFS_WORST) e->worst[k] = i;
    }
}

static tw_status predict_all(const tw_dvfs_params *p, const tw_dvfs_data *d, bool paper_compat, bool all_kernels,
                             tw_dvfs_eval *e)
{
    for (size_t i = 0; i < d->n; i++) {
        const tw_dvfs_row *r = &d->rows[i];
        if (!all_kernels && !tw_dvfs_in_paper_set(r)) {
            e->skipped++;
            continue;
        }
        tw_dvfs_point *pt = &e->points[e->n];
        tw_status st = tw_dvfs_predict(p, r, paper_compat, &pt->pred);
        if (st != TW_OK) return st;
        pt->row = r;
        pt->ape = fabs(pt->pred.cycles - pt->pred.real_cycles) / pt->pred.real_cycles;
        e->n++;
    }
    return e->n ? TW_OK : tw_fail(TW_EEMPTY, "no rows of the authors' 20 kernels at clocks >= 500 MHz");
}

tw_status tw_dvfs_evaluate(const tw_dvfs_params *p, const tw_dvfs_data *d, bool paper_compat, bool all_kernels,
                           tw_dvfs_eval *out)
{
    memset(out, 0, sizeof *out);
    out->points = calloc(d->n ? d->n : 1, sizeof *out->points);
    out->kernels = calloc(d->n ? d->n : 1, sizeof *out->kernels);
    if (!out->points || !out->kernels) {
        tw_dvfs_eval_free(out);
        return tw_fail(TW_ENOMEM, "out of memory evaluating the DVFS model");
    }
    tw_status st = predict_all(p, d, paper_compat, all_kernels, out);
    if (st != TW_OK) {
        tw_dvfs_eval_free(out);
        return st;
    }
    summarise(out);
    find_worst(out);
    return TW_OK;
}

void tw_dvfs_eval_free(tw_dvfs_eval *e)
{
    free(e->points);
    free(e->kernels);
    memset(e, 0, sizeof *e);
}
