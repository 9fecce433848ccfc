/* The activity counters as features: see counters.h. */
#include "estimate/counters.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"

/* A sample longer than this many intervals spans a stall of the sampling
 * (the H100's runs hold one of 0.84 s among 1 ms samples): its mean says
 * nothing about the kernels inside it, which are left to the readings. */
#define MAX_SAMPLE_INTERVALS 4.0
#define MAX_METRICS 64
/* L2 sectors an elapsed cycle that count as the L2's full activity: about
 * the most it moves (118 in an L2-resident loop on the H100); a scale, which
 * the feature's coefficient absorbs, but for where a level is capped at 1 */
#define L2_SECTORS_PER_CYCLE 128.0
/* A sample's clock over the reference is held within this factor of 1 either
 * way: a span the sampling's clock misread (a few hundred ns of overlap, a
 * late timestamp) must not scale its features past what a GPU's DVFS range
 * spans (the H100's 345-1,980 MHz: a factor 5.7) */
#define MAX_CLOCK_RATIO 6.0

/* The index of the metric named `name` (or starting with it, when prefix) in names[0 .. n), or -1. */
static int metric(char *const *names, size_t n, const char *name, bool prefix)
{
    for (size_t i = 0; i < n; i++)
        if (prefix ? strncmp(names[i], name, strlen(name)) == 0 : strcmp(names[i], name) == 0) return (int)i;
    return -1;
}

static double clip01(double x) { return isfinite(x) ? fmin(1.0, fmax(0.0, x)) : 0.0; }

void tw_est_counter_set_free(tw_est_counter_set *s)
{
    if (!s) return;
    free(s->t0_s);
    free(s->t1_s);
    free(s->v);
    free(s->w0_s);
    free(s->w1_s);
    memset(s, 0, sizeof *s);
}

tw_status tw_est_counters_begin(const char *metrics, double interval_s, tw_est_counter_set *out)
{
    memset(out, 0, sizeof *out);
    char list[2048];
    snprintf(list, sizeof list, "%s", metrics ? metrics : "");
    char *names[MAX_METRICS];
    size_t nm = 0;
    for (char *p = list; *p && nm < MAX_METRICS;) {
        names[nm++] = p;
        char *comma = strchr(p, ',');
        if (!comma) break;
        *comma = '\0';
        p = comma + 1;
    }
    int *at = out->at; /* sm's two metrics, then each feature's */
    at[0] = metric(names, nm, "sm__cycles_active.avg", false);
    at[1] = metric(names, nm, "gpc__cycles_elapsed.max", false);
    at[2] = metric(names, nm, "sm__pipe_tensor", true);
    at[3] = metric(names, nm, "sm__inst_executed.avg.per_cycle_active", false);
    at[4] = metric(names, nm, "dram__throughput.avg.pct_of_peak_sustained_elapsed", false);
    at[5] = metric(names, nm, "lts__t_sectors.sum", false);
    if (at[0] < 0 || at[1] < 0)
        return tw_fail(TW_ENOTFOUND, "the activity counters lack sm__cycles_active.avg or gpc__cycles_elapsed.max");
    static const char *const fname[5] = {"sm", "tensor", "issue", "dram", "l2"};
    size_t nf = 0;
    for (int k = 0; k < 5; k++)
        if (k == 0 || at[k + 1] >= 0) {
            snprintf(out->name[nf], sizeof out->name[nf], "%s", fname[k]);
            out->names[nf] = out->name[nf];
            nf++;
        }
    out->nmetrics = nm;
    out->interval_s = interval_s;
    out->c = (tw_est_counters){0, NULL, NULL, nf, out->names, NULL, 0, NULL, NULL, 0};
    return TW_OK;
}

void tw_est_counters_clock(tw_est_counter_set *s, double ref_mhz) { s->c.clock_mhz = ref_mhz > 0 ? ref_mhz : 0; }

/* The sample's GPC clock over the reference (1 without one): elapsed cycles over its span. */
static double clock_ratio(const tw_est_counter_set *s, double elapsed, double span_s)
{
    if (!(s->c.clock_mhz > 0) || !(span_s > 0)) return 1.0;
    double r = elapsed / span_s * 1e-6 / s->c.clock_mhz;
    return isfinite(r) ? fmin(MAX_CLOCK_RATIO, fmax(1.0 / MAX_CLOCK_RATIO, r)) : 1.0;
}

/* Room for one more sample. */
static bool room(tw_est_counter_set *s)
{
    if (s->c.n < s->cap) return true;
    size_t cap = s->cap ? 2 * s->cap : 4096, nf = s->c.nf;
    double *a = realloc(s->t0_s, cap * sizeof *a);
    if (a) s->t0_s = a;
    double *b = a ? realloc(s->t1_s, cap * sizeof *b) : NULL;
    if (b) s->t1_s = b;
    double *v = b ? realloc(s->v, cap * nf * sizeof *v) : NULL;
    if (!v) return false;
    s->v = v;
    s->cap = cap;
    return true;
}

tw_status tw_est_counters_add(tw_est_counter_set *s, double t0_s, double t1_s, const float *r)
{
    if (s->interval_s > 0 && t1_s - t0_s > MAX_SAMPLE_INTERVALS * s->interval_s) {
        s->dropped++;
        return TW_OK;
    }
    /* consecutive samples may overlap by a few hundred ns where the sampling's clock was re-read
     * (the H100's: 170 ns): the later one starts where the earlier ended; one that overlaps by half
     * its span or more is no next sample */
    size_t k = s->c.n;
    const int *at = s->at;
    double elapsed = fmax(1.0, (double)r[at[1]]), clk = clock_ratio(s, elapsed, t1_s - t0_s);
    if (k && t0_s < s->t1_s[k - 1]) {
        if (s->t1_s[k - 1] - t0_s >= 0.5 * (t1_s - t0_s)) {
            s->dropped++;
            return TW_OK;
        }
        t0_s = s->t1_s[k - 1];
    }
    if (!room(s)) return tw_fail(TW_ENOMEM, "out of memory (activity counters)");
    double sm = clip01(r[at[0]] / elapsed);
    double *v = s->v + k * s->c.nf;
    size_t f = 0;
    v[f++] = sm * clk;
    if (at[2] >= 0) v[f++] = clip01(r[at[2]] / 100.0) * clk;
    if (at[3] >= 0) v[f++] = clip01(r[at[3]] * sm / 4.0) * clk;
    if (at[4] >= 0) v[f++] = clip01(r[at[4]] / 100.0); /* bandwidth's share per second: no clock */
    if (at[5] >= 0) v[f++] = clip01(r[at[5]] / elapsed / L2_SECTORS_PER_CYCLE) * clk;
    if (clk != 1.0) s->clocked++;
    s->t0_s[k] = t0_s;
    s->t1_s[k] = t1_s;
    s->c.n = k + 1;
    s->c.t0_s = s->t0_s;
    s->c.t1_s = s->t1_s;
    s->c.v = s->v;
    return TW_OK;
}

tw_status tw_est_counters_window(tw_est_counter_set *s, double t0_s, double t1_s)
{
    size_t k = s->c.nw;
    if (!(t1_s > t0_s) || (k && t0_s < s->w1_s[k - 1]))
        return tw_fail(TW_EINVAL, "a PM sampling window (%.6f .. %.6f s) is no span after the one before it", t0_s,
                       t1_s);
    if (k == s->wcap) {
        size_t cap = s->wcap ? 2 * s->wcap : 64;
        double *a = realloc(s->w0_s, cap * sizeof *a);
        if (a) s->w0_s = a;
        double *b = a ? realloc(s->w1_s, cap * sizeof *b) : NULL;
        if (!b) return tw_fail(TW_ENOMEM, "out of memory (activity counters)");
        s->w1_s = b;
        s->wcap = cap;
    }
    s->w0_s[k] = t0_s;
    s->w1_s[k] = t1_s;
    s->c.nw = k + 1;
    s->c.w0_s = s->w0_s;
    s->c.w1_s = s->w1_s;
    return TW_OK;
}
