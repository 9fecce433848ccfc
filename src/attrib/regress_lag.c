/* Per-name regression with distributed lags; see regress.h. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attrib/regress.h"
#include "core/error.h"

#define LAG_SEP '\x1f' /* cannot occur in a name read from a CSV line */
#define MAX_LAGS 4

int tw_regress_lags_for(double period_s, double delay_s, double capacitance_s)
{
    if (!(period_s > 0)) return 1;
    double tail = fabs(isfinite(delay_s) ? delay_s : 0.0) + 3.0 * (isfinite(capacitance_s) ? capacitance_s : 0.0);
    int lags = (int)ceil((tail + 0.5 * period_s) / period_s);
    return lags < 1 ? 1 : lags > MAX_LAGS ? MAX_LAGS : lags;
}

static bool is_kernel(const tw_event *e) { return !e->kind || !strcmp(e->kind, "kernel"); }

static tw_status add_shifted(tw_events *aug, const tw_event *e, int j, double step_s)
{
    char name[512];
    snprintf(name, sizeof name, "%s%c%d", e->name, LAG_SEP, j);
    tw_event c = *e;
    c.name = name;
    c.start_s += j * step_s;
    c.end_s += j * step_s;
    return tw_events_add(aug, &c);
}

/* The original events' copy of `name` (the result borrows names from them). */
static const char *original_name(const tw_events *events, const char *name, size_t len)
{
    for (size_t i = 0; i < tw_events_count(events); i++) {
        const char *n = tw_events_get(events, i)->name;
        if (strlen(n) == len && !strncmp(n, name, len)) return n;
    }
    return NULL;
}

static int by_energy_desc(const void *x, const void *y)
{
    const tw_regress_name *a = x, *b = y;
    double ea = isnan(a->energy_j) ? -INFINITY : a->energy_j, eb = isnan(b->energy_j) ? -INFINITY : b->energy_j;
    return (ea < eb) - (ea > eb);
}

/* Keeps the warning lines that do not name a single lag term: those are
 * poorly determined one by one by design (neighbouring lags trade off);
 * what matters, the folded sum, is checked again below. */
static void drop_lag_warnings(tw_regress *r)
{
    char kept[sizeof r->warnings];
    size_t used = 0;
    for (const char *line = r->warnings; *line;) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) + 1 : strlen(line);
        if (!memchr(line, LAG_SEP, len) && used + len < sizeof kept) {
            memcpy(kept + used, line, len);
            used += len;
        }
        line += len;
    }
    kept[used] = '\0';
    memcpy(r->warnings, kept, used + 1);
}

static void warn_uncertain(tw_regress *r)
{
    for (size_t k = 0; k < r->nnames; k++) {
        const tw_regress_name *x = &r->names[k];
        if (!(x->power_se_w > 0.5 * fabs(x->power_w))) continue;
        size_t used = strlen(r->warnings);
        int n = snprintf(r->warnings + used, sizeof r->warnings - used,
                         "'%s': energy per launch uncertain (%.3g +- %.2g J)\n", x->name, x->per_launch_j,
                         x->per_launch_se_j);
        if (n < 0 || (size_t)n >= sizeof r->warnings - used) {
            r->warnings[used] = '\0';
            return;
        }
    }
}

/* Folds "name<SEP>j" entries into their name: powers add, variances add. */
static tw_status fold(const tw_events *events, tw_regress *r)
{
    tw_regress_name *out = calloc(r->nnames ? r->nnames : 1, sizeof *out);
    double *var = calloc(r->nnames ? r->nnames : 1, sizeof *var);
    if (!out || !var) {
        free(out);
        free(var);
        return tw_fail(TW_ENOMEM, "out of memory (lagged regression)");
    }
    size_t m = 0;
    for (size_t i = 0; i < r->nnames; i++) {
        const tw_regress_name *x = &r->names[i];
        const char *sep = strchr(x->name, LAG_SEP);
        size_t len = sep ? (size_t)(sep - x->name) : strlen(x->name);
        const char *base = original_name(events, x->name, len);
        if (!base) base = x->name; /* the pool's literal name */
        size_t k = 0;
        while (k < m && out[k].name != base)
            k++;
        if (k == m) {
            out[m] = (tw_regress_name){.name = base};
            m++;
        }
        tw_regress_name *o = &out[k];
        o->power_w = (o->power_w == 0 && var[k] == 0 ? 0 : o->power_w) + x->power_w;
        var[k] += x->power_se_w * x->power_se_w;
        if (!sep) { /* the unshifted entry carries the launches */
            o->launches = x->launches;
            o->time_s = x->time_s;
            o->mean_s = x->mean_s;
            o->windows = x->windows;
        }
    }
    for (size_t k = 0; k < m; k++) {
        tw_regress_name *o = &out[k];
        o->power_se_w = sqrt(var[k]);
        o->per_launch_j = o->power_w * o->mean_s;
        o->per_launch_se_j = o->power_se_w * o->mean_s;
        o->energy_j = o->power_w * o->time_s;
    }
    qsort(out, m, sizeof *out, by_energy_desc);
    free(var);
    free(r->names);
    r->names = out;
    r->nnames = m;
    return TW_OK;
}

tw_status tw_regress_names_lagged(const tw_obs *obs, size_t n, const tw_events *events, const tw_regress_options *opt,
                                  int lags, double step_s, tw_regress **out)
{
    if (lags <= 0) return tw_regress_names(obs, n, events, opt, out);
    if (!events || !out) return tw_fail(TW_EINVAL, "lagged regression: NULL argument");
    if (lags > MAX_LAGS || !(step_s > 0))
        return tw_fail(TW_EINVAL, "lagged regression: 1..%d lags of a positive step (got %d, %g s)", MAX_LAGS, lags,
                       step_s);
    tw_regress_options o;
    if (opt)
        o = *opt;
    else
        tw_regress_options_init(&o);
    o.max_names = (o.max_names ? o.max_names : 64) * (size_t)(lags + 1);
    tw_events *aug = NULL;
    tw_status st = tw_events_new(&aug);
    for (size_t i = 0; st == TW_OK && i < tw_events_count(events); i++) {
        const tw_event *e = tw_events_get(events, i);
        if (!is_kernel(e)) continue;
        st = tw_events_add(aug, e);
        for (int j = 1; st == TW_OK && j <= lags; j++)
            st = add_shifted(aug, e, j, step_s);
    }
    if (st == TW_OK) st = tw_regress_names(obs, n, aug, &o, out);
    if (st == TW_OK) st = fold(events, *out);
    if (st == TW_OK) {
        drop_lag_warnings(*out);
        warn_uncertain(*out);
    }
    if (st != TW_OK && *out) {
        tw_regress_free(*out);
        *out = NULL;
    }
    tw_events_free(aug);
    return st;
}
