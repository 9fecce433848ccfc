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
    memset(s, 0, sizeof *s);
}

tw_status tw_est_counters_build(const char *metrics, double interval_s, const double *t0_s, const double *t1_s,
                                const float *raw, size_t n, tw_est_counter_set *out)
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
    int active = metric(names, nm, "sm__cycles_active.avg", false);
    int elapsed = metric(names, nm, "gpc__cycles_elapsed.max", false);
    int tensor = metric(names, nm, "sm__pipe_tensor", true);
    int issue = metric(names, nm, "sm__inst_executed.avg.per_cycle_active", false);
    int dram = metric(names, nm, "dram__throughput.avg.pct_of_peak_sustained_elapsed", false);
    int l2 = metric(names, nm, "lts__t_sectors.sum", false);
    if (active < 0 || elapsed < 0)
        return tw_fail(TW_ENOTFOUND, "the activity counters lack sm__cycles_active.avg or gpc__cycles_elapsed.max");
    const char *fname[5] = {"sm", "tensor", "issue", "dram", "l2"};
    bool have[5] = {true, tensor >= 0, issue >= 0, dram >= 0, l2 >= 0};
    size_t nf = 0;
    for (int k = 0; k < 5; k++)
        if (have[k]) {
            snprintf(out->name[nf], sizeof out->name[nf], "%s", fname[k]);
            out->names[nf] = out->name[nf];
            nf++;
        }
    out->t0_s = malloc((n ? n : 1) * sizeof *out->t0_s);
    out->t1_s = malloc((n ? n : 1) * sizeof *out->t1_s);
    out->v = malloc((n ? n : 1) * nf * sizeof *out->v);
    if (!out->t0_s || !out->t1_s || !out->v) {
        tw_est_counter_set_free(out);
        return tw_fail(TW_ENOMEM, "out of memory (activity counters)");
    }
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        const float *r = raw + i * nm;
        if (interval_s > 0 && t1_s[i] - t0_s[i] > MAX_SAMPLE_INTERVALS * interval_s) {
            out->dropped++;
            continue;
        }
        /* consecutive samples may overlap by a few hundred ns where the sampling's clock was re-read
         * (the H100's: 170 ns): the later one starts where the earlier ended; one that overlaps by half
         * its span or more is no next sample */
        double a = t0_s[i];
        if (k && a < out->t1_s[k - 1]) {
            if (out->t1_s[k - 1] - a >= 0.5 * (t1_s[i] - t0_s[i])) {
                out->dropped++;
                continue;
            }
            a = out->t1_s[k - 1];
        }
        double sm = clip01(r[active] / fmax(1.0, (double)r[elapsed]));
        double *v = out->v + k * nf;
        size_t f = 0;
        v[f++] = sm;
        if (have[1]) v[f++] = clip01(r[tensor] / 100.0);
        if (have[2]) v[f++] = clip01(r[issue] * sm / 4.0);
        if (have[3]) v[f++] = clip01(r[dram] / 100.0);
        if (have[4]) v[f++] = clip01(r[l2] / fmax(1.0, (double)r[elapsed]) / L2_SECTORS_PER_CYCLE);
        out->t0_s[k] = a;
        out->t1_s[k] = t1_s[i];
        k++;
    }
    out->c = (tw_est_counters){k, out->t0_s, out->t1_s, nf, out->names, out->v};
    return TW_OK;
}
