/* Burtscher §5 step 2: drop consecutive equal readings that are at most
 * gap_s apart, since they repeat the sensor's last measurement. */
#ifndef TW_CORRECT_DEDUP_H
#define TW_CORRECT_DEDUP_H

#include <stdbool.h>
#include <stddef.h>

typedef struct tw_dedup {
    double gap_s;
    bool have_prev;
    double prev_t_s; /* previous raw sample, kept or not: a run of repeats is one reading */
    double prev_w;
} tw_dedup;

void tw_dedup_init(tw_dedup *d, double gap_s);
/* Filters n samples; keeps the first of each run. t_out/p_out may alias t/p.
 * Returns the number kept. */
size_t tw_dedup_run(tw_dedup *d, const double *t_s, const double *p_w, size_t n, double *t_out, double *p_out);

#endif
