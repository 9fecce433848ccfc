/* Phase-shifted repetition; see repeat.h. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "attrib/repeat.h"
#include "core/error.h"

typedef struct block {
    double t0, t1; /* first launch start, last launch end */
    double a, b;   /* the time the block owns */
    unsigned launches;
    double kernel_s;
} block;

static int cmp_block(const void *x, const void *y)
{
    const block *p = x, *q = y;
    return (p->t0 > q->t0) - (p->t0 < q->t0);
}

/* The launches of `name`, merged into blocks, in time order. */
static size_t find_blocks(const tw_events *ev, const char *name, block **out)
{
    size_t n = tw_events_count(ev), m = 0;
    block *b = malloc((n ? n : 1) * sizeof *b);
    if (!b) return 0;
    for (size_t i = 0; i < n; i++) {
        const tw_event *e = tw_events_get(ev, i);
        if (strcmp(e->name, name) != 0 || (e->kind && strcmp(e->kind, "kernel") != 0)) continue;
        b[m++] = (block){e->start_s, e->end_s, 0, 0, 1, e->end_s - e->start_s};
    }
    qsort(b, m, sizeof *b, cmp_block);
    size_t k = 0;
    for (size_t i = 0; i < m; i++) {
        if (k > 0 && b[i].t0 - b[k - 1].t1 < TW_REPEAT_BLOCK_GAP_S) {
            b[k - 1].t1 = fmax(b[k - 1].t1, b[i].t1);
            b[k - 1].launches++;
            b[k - 1].kernel_s += b[i].kernel_s;
        } else {
            b[k++] = b[i];
        }
    }
    *out = b;
    return k;
}

static void own_time(block *b, size_t n, double edge_s)
{
    for (size_t i = 0; i < n; i++) {
        double before = i > 0 ? 0.5 * (b[i].t0 - b[i - 1].t1) : edge_s;
        double after = i + 1 < n ? 0.5 * (b[i + 1].t0 - b[i].t1) : edge_s;
        b[i].a = b[i].t0 - fmin(before, edge_s);
        b[i].b = b[i].t1 + fmin(after, edge_s);
    }
}

/* Overlap-weighted mean power of the windows over [a, b] and the share of
 * [a, b] they cover (windows may overlap, so the share may exceed 1). */
static double mean_power(const tw_obs *obs, size_t n, double a, double b, double *covered)
{
    double wsum = 0, psum = 0;
    for (size_t k = 0; k < n; k++) {
        double lo = fmax(a, obs[k].t0_s), hi = fmin(b, obs[k].t1_s);
        if (hi <= lo || !isfinite(obs[k].power_w)) continue;
        wsum += hi - lo;
        psum += obs[k].power_w * (hi - lo);
    }
    *covered = wsum / (b - a);
    return wsum > 0 ? psum / wsum : NAN;
}

tw_status tw_repeat_estimate(const tw_obs *obs, size_t n, const tw_events *events, const char *name, double idle_w,
                             double edge_s, tw_repeat_result *out)
{
    if (!obs || !events || !name || !out) return tw_fail(TW_EINVAL, "tw_repeat_estimate: NULL argument");
    if (!isfinite(idle_w)) return tw_fail(TW_EINVAL, "repetition: the idle level is unknown");
    memset(out, 0, sizeof *out);
    block *b = NULL;
    size_t nb = find_blocks(events, name, &b);
    if (nb == 0) {
        free(b);
        return tw_fail(TW_ENOTFOUND, "repetition: no launches of '%s'", name);
    }
    own_time(b, nb, edge_s);
    double sum = 0, sumsq = 0, kernel_s = 0, dyn_total = 0;
    unsigned used = 0, launches = 0;
    for (size_t i = 0; i < nb; i++) {
        double covered;
        double p = mean_power(obs, n, b[i].a, b[i].b, &covered);
        if (!isfinite(p) || covered < 0.2) continue; /* a block the reading never saw */
        double dyn = (p - idle_w) * (b[i].b - b[i].a);
        double per = dyn / b[i].launches;
        sum += per;
        sumsq += per * per;
        kernel_s += b[i].kernel_s;
        dyn_total += dyn;
        launches += b[i].launches;
        used++;
    }
    free(b);
    if (used == 0) return tw_fail(TW_ENUMERIC, "repetition: the reading saw none of the %zu blocks of '%s'", nb, name);
    out->blocks = used;
    out->launches = launches;
    out->per_launch_j = sum / used;
    double var = used > 1 ? (sumsq - used * out->per_launch_j * out->per_launch_j) / (used - 1) : NAN;
    out->per_launch_se_j = used > 1 ? sqrt(fmax(0.0, var) / used) : NAN;
    out->mean_launch_s = kernel_s / launches;
    out->power_w = dyn_total / kernel_s;
    return TW_OK;
}
