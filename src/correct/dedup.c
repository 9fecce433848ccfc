#include "correct/dedup.h"

void tw_dedup_init(tw_dedup *d, double gap_s)
{
    d->gap_s = gap_s;
    d->have_prev = false;
    d->prev_t_s = 0.0;
    d->prev_w = 0.0;
}

size_t tw_dedup_run(tw_dedup *d, const double *t_s, const double *p_w, size_t n, double *t_out, double *p_out)
{
    size_t kept = 0;
    bool have = d->have_prev;
    double pt = d->prev_t_s, pw = d->prev_w;
    for (size_t i = 0; i < n; i++) {
        double t = t_s[i], w = p_w[i];
        bool repeat = have && w == pw && t - pt <= d->gap_s;
        if (!repeat) {
            t_out[kept] = t;
            p_out[kept] = w;
            kept++;
        }
        have = true;
        pt = t;
        pw = w;
    }
    d->have_prev = have;
    d->prev_t_s = pt;
    d->prev_w = pw;
    return kept;
}
