#include "correct/hist.h"

#include <math.h>
#include <stdlib.h>

#define NBINS ((size_t)((TW_HIST_MAX_W - TW_HIST_MIN_W) / TW_HIST_BIN_W))

int tw_hist_init(tw_hist *h)
{
    h->bins = calloc(NBINS, sizeof *h->bins);
    h->count = 0;
    return h->bins ? 0 : -1;
}

void tw_hist_free(tw_hist *h)
{
    free(h->bins);
    h->bins = NULL;
}

void tw_hist_add(tw_hist *h, double w)
{
    if (!isfinite(w)) return;
    double x = (w - TW_HIST_MIN_W) / TW_HIST_BIN_W;
    size_t i = x <= 0 ? 0 : x >= (double)(NBINS - 1) ? NBINS - 1 : (size_t)x;
    h->bins[i]++;
    h->count++;
}

double tw_hist_quantile(const tw_hist *h, double q)
{
    if (!h->count) return NAN;
    uint64_t target = (uint64_t)(q * (double)(h->count - 1));
    uint64_t cum = 0;
    for (size_t i = 0; i < NBINS; i++) {
        cum += h->bins[i];
        if (cum > target) return TW_HIST_MIN_W + ((double)i + 0.5) * TW_HIST_BIN_W;
    }
    return TW_HIST_MAX_W;
}
