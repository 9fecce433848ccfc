/* A fixed-bin histogram of power values: quantiles in bounded memory,
 * however many samples stream through. */
#ifndef TW_CORRECT_HIST_H
#define TW_CORRECT_HIST_H

#include <stdint.h>

#define TW_HIST_MIN_W (-2000.0)
#define TW_HIST_MAX_W (8000.0)
#define TW_HIST_BIN_W (0.05)

typedef struct tw_hist {
    uint32_t *bins;
    uint64_t count;
} tw_hist;

int tw_hist_init(tw_hist *h); /* 0 on success */
void tw_hist_free(tw_hist *h);
void tw_hist_add(tw_hist *h, double w);
/* q in [0,1]; NaN when empty. Resolution: one bin. */
double tw_hist_quantile(const tw_hist *h, double q);

#endif
