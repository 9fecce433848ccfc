/* Simulator scenarios: kernels on a timeline and the true power signal they
 * imply under a profile (K20: Burtscher et al. 2014 §4.2; H100:
 * sensors-h100.md). The signal is kept as piecewise-constant segments with
 * a running energy sum, so power and energy queries are exact. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/error.h"
#include "sensor/scenario_internal.h"

/* Levels and timing of each profile's idle behaviour. */
typedef struct profile_params {
    double idle_w;         /* no work (K20), no CUDA context (H100) */
    double active_idle_w;  /* right after a kernel (K20), context alive (H100) */
    double hold_s;         /* K20 tail: active idle held this long after a kernel */
    double step_s;         /* K20 tail: then one step down every step_s */
    int nsteps;            /* K20 tail: steps from active idle down to idle (0: no tail) */
    double context_lead_s; /* H100: the context exists this long before the first kernel */
} profile_params;

static const profile_params k20_params = {25.0, 52.5, 3.5, 1.0, 4, 0.0};
static const profile_params h100_params = {75.0, 120.0, 0.0, 0.0, 0, 1.0};

/* Simulated time after the last kernel's tail, so the trace ends at idle. */
#define TW_SCENARIO_SETTLE_S 1.0
/* A drifting level is a staircase of at most this many steps, each at the
 * drift's value in its middle, so its energy is exact. */
#define TW_SCENARIO_DRIFT_STEPS 4000
#define TW_SCENARIO_DRIFT_MIN_STEP_S 0.05

typedef struct kernel {
    char *name;
    double start_s;
    double duration_s;
    double power_w;
} kernel;

struct tw_scenario {
    tw_sim_profile profile;
    const profile_params *pp;
    kernel *k; /* sorted by start; never overlapping */
    size_t nk, capk;
    double duration_s;    /* set_duration's value; NaN = default */
    double context_s;     /* set_context's value; NaN = the profile's lead before the first kernel */
    double drift_w_per_s; /* H100: active idle rises this much a second after the context starts */
    double max_end_s;     /* the latest kernel end (H100 kernels may overlap) */
    /* The signal, built when first asked for after a change (adding a kernel
     * marks it stale): rebuilding it per added kernel made K kernels cost K^2.
     * Readers of a stale scenario rebuild it, so a scenario shared between
     * threads must be read once (e.g. by opening the sensor) before it is. */
    bool stale;
    tw_segment *seg;
    double *cum_j;  /* energy from t = 0 to seg[i].t0_s */
    double *bnd;    /* scratch: the instants where the H100 signal can change */
    size_t *active; /* scratch: the kernels running at one of them */
    size_t nseg, capseg;
};

/* ---------------------------------------------------------------- profiles */

const char *tw_sim_profile_name(tw_sim_profile p)
{
    switch (p) {
    case TW_SIM_K20:
        return "k20";
    case TW_SIM_H100:
        return "h100";
    }
    return "unknown";
}

tw_status tw_sim_profile_parse(const char *name, tw_sim_profile *out)
{
    tw_clear_error();
    if (!name || !out) return tw_fail(TW_EINVAL, "tw_sim_profile_parse: NULL argument");
    if (strcasecmp(name, "k20") == 0) {
        *out = TW_SIM_K20;
        return TW_OK;
    }
    if (strcasecmp(name, "h100") == 0) {
        *out = TW_SIM_H100;
        return TW_OK;
    }
    return tw_fail(TW_EINVAL, "unknown sim profile '%s' (profiles: k20, h100)", name);
}

static const profile_params *params_of(tw_sim_profile p)
{
    switch (p) {
    case TW_SIM_K20:
        return &k20_params;
    case TW_SIM_H100:
        return &h100_params;
    }
    return NULL;
}

/* ---------------------------------------------------------------- segments */

static double last_kernel_end(const tw_scenario *s) { return s->max_end_s; }

static double default_duration(const tw_scenario *s)
{
    if (s->nk == 0) return TW_SCENARIO_SETTLE_S;
    const profile_params *pp = s->pp;
    double tail_s = pp->nsteps > 0 ? pp->hold_s + pp->nsteps * pp->step_s : 0.0;
    return last_kernel_end(s) + tail_s + TW_SCENARIO_SETTLE_S;
}

/* Upper bound on the segments build_segments() makes for nk kernels. */
static size_t max_segments(const tw_scenario *s, size_t nk)
{
    size_t per_kernel = 2 + (size_t)s->pp->nsteps; /* kernel, active idle, tail steps */
    return 3 + nk * per_kernel + (s->drift_w_per_s != 0 ? TW_SCENARIO_DRIFT_STEPS + 2 : 0);
}

/* Grows the segment arrays before anything changes, so a failed allocation
 * leaves the scenario as it was; geometrically, so that adding K kernels
 * one by one moves O(K) bytes. */
static tw_status reserve_segments(tw_scenario *s, size_t nk)
{
    size_t need = max_segments(s, nk);
    if (need <= s->capseg) return TW_OK;
    if (need < 2 * s->capseg) need = 2 * s->capseg;
    tw_segment *seg = realloc(s->seg, need * sizeof *seg);
    if (!seg) return tw_fail(TW_ENOMEM, "out of memory (scenario segments)");
    s->seg = seg;
    double *cum = realloc(s->cum_j, need * sizeof *cum);
    if (!cum) return tw_fail(TW_ENOMEM, "out of memory (scenario segments)");
    s->cum_j = cum;
    double *bnd = realloc(s->bnd, need * sizeof *bnd);
    if (!bnd) return tw_fail(TW_ENOMEM, "out of memory (scenario segments)");
    s->bnd = bnd;
    size_t *act = realloc(s->active, need * sizeof *act);
    if (!act) return tw_fail(TW_ENOMEM, "out of memory (scenario segments)");
    s->active = act;
    s->capseg = need;
    return TW_OK;
}

/* Appends a segment; one starting where the previous one starts replaces it
 * (the previous one would be empty, e.g. a kernel right at t = 0). */
static void push_segment(tw_scenario *s, double t0_s, double power_w, bool tail_step)
{
    if (s->nseg > 0 && s->seg[s->nseg - 1].t0_s >= t0_s) s->nseg--;
    s->seg[s->nseg++] = (tw_segment){t0_s, power_w, tail_step};
}

/* K20 after a kernel ending at end_s: active idle, then equal steps down to
 * idle, cut short where the next kernel starts (at limit_s). */
static void push_k20_tail(tw_scenario *s, double end_s, double limit_s)
{
    const profile_params *pp = s->pp;
    push_segment(s, end_s, pp->active_idle_w, false);
    double step_w = (pp->active_idle_w - pp->idle_w) / pp->nsteps;
    for (int j = 1; j <= pp->nsteps; j++) {
        double t = end_s + pp->hold_s + (j - 1) * pp->step_s;
        if (t >= limit_s) break;
        double level = j == pp->nsteps ? pp->idle_w : pp->active_idle_w - j * step_w;
        push_segment(s, t, level, true);
    }
}

static void build_k20(tw_scenario *s)
{
    push_segment(s, 0.0, s->pp->idle_w, false);
    if (!isnan(s->context_s) && (s->nk == 0 || s->context_s < s->k[0].start_s))
        push_segment(s, fmax(0.0, s->context_s), s->pp->active_idle_w, false);
    for (size_t i = 0; i < s->nk; i++) {
        const kernel *k = &s->k[i];
        if (i > 0) push_k20_tail(s, s->k[i - 1].start_s + s->k[i - 1].duration_s, k->start_s);
        push_segment(s, k->start_s, k->power_w, false);
    }
    if (s->nk > 0) push_k20_tail(s, last_kernel_end(s), INFINITY);
}

static int by_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* H100: idle until the context, then active idle (rising by the drift) until
 * the end; kernels add their power above active idle, kernels that run
 * together each theirs: the simulated GPU runs them side by side at their
 * own rate, without stretching them (the estimator's model: a launch's
 * power is spread over its span by its duration alone over its span, 1
 * here). */
static void build_h100(tw_scenario *s)
{
    const profile_params *pp = s->pp;
    double ctx = !isnan(s->context_s) ? fmax(0.0, s->context_s)
                 : s->nk              ? fmax(0.0, s->k[0].start_s - pp->context_lead_s)
                                      : NAN;
    if (isnan(ctx)) {
        push_segment(s, 0.0, pp->idle_w, false);
        return;
    }
    /* the context lives until the program ends, i.e. the end of the scenario;
     * a duration cut inside the kernels does not cut the kernels short */
    double end = s->nk ? fmax(tw_scenario_duration_s(s), last_kernel_end(s)) : fmax(tw_scenario_duration_s(s), ctx);
    size_t nb = 0;
    s->bnd[nb++] = 0.0;
    s->bnd[nb++] = ctx;
    s->bnd[nb++] = end;
    for (size_t i = 0; i < s->nk; i++) {
        s->bnd[nb++] = s->k[i].start_s;
        s->bnd[nb++] = s->k[i].start_s + s->k[i].duration_s;
    }
    double step = 0;
    if (s->drift_w_per_s != 0 && end > ctx) {
        step = fmax(TW_SCENARIO_DRIFT_MIN_STEP_S, (end - ctx) / TW_SCENARIO_DRIFT_STEPS);
        for (double t = ctx + step; t < end && nb < max_segments(s, s->nk); t += step)
            s->bnd[nb++] = t;
    }
    qsort(s->bnd, nb, sizeof *s->bnd, by_double);
    size_t next = 0, nact = 0; /* kernels are sorted by start */
    for (size_t b = 0; b < nb; b++) {
        double t0 = s->bnd[b];
        if (b + 1 < nb && s->bnd[b + 1] == t0) continue;
        double t1 = b + 1 < nb ? s->bnd[b + 1] : t0 + 1.0, mid = 0.5 * (t0 + t1);
        double level = pp->idle_w;
        if (mid >= ctx && mid < end) {
            /* the drift's value in the middle of its step */
            double since = mid - ctx;
            if (step > 0) since = (floor(since / step) + 0.5) * step;
            level = pp->active_idle_w + s->drift_w_per_s * since;
        }
        /* the kernels running at mid: started (in start order), not ended;
         * the active ones are kept in front of `next`, ended ones dropped */
        while (next < s->nk && s->k[next].start_s <= mid)
            s->active[nact++] = next++;
        double dyn = 0;
        size_t keep = 0;
        for (size_t a = 0; a < nact; a++) {
            const kernel *k = &s->k[s->active[a]];
            if (k->start_s + k->duration_s <= mid) continue;
            s->active[keep++] = s->active[a];
            dyn += k->power_w - pp->active_idle_w;
        }
        nact = keep;
        level += dyn;
        push_segment(s, t0, level, false);
    }
}

/* Rebuilds the signal; the arrays must have been reserved for s->nk kernels. */
static void build_segments(tw_scenario *s)
{
    s->stale = false;
    s->nseg = 0;
    if (s->profile == TW_SIM_K20)
        build_k20(s);
    else
        build_h100(s);
    s->cum_j[0] = 0.0;
    for (size_t i = 1; i < s->nseg; i++)
        s->cum_j[i] = s->cum_j[i - 1] + s->seg[i - 1].power_w * (s->seg[i].t0_s - s->seg[i - 1].t0_s);
}

/* The signal of a scenario that changed since it was built, rebuilt: its
 * arrays were reserved when it changed. The scenario is logically const
 * (the same signal either way) and always heap-allocated by tw_scenario_new,
 * so writing through the cast is defined. */
static const tw_scenario *built(const tw_scenario *s)
{
    if (s->stale) build_segments((tw_scenario *)s);
    return s;
}

size_t tw_scenario_nsegments(const tw_scenario *s) { return built(s)->nseg; }

const tw_segment *tw_scenario_segments(const tw_scenario *s) { return built(s)->seg; }

size_t tw_scenario_segment_at(const tw_scenario *s, double t_s)
{
    built(s);
    /* Largest i with seg[i].t0_s <= t_s; the comparison fails for NaN. */
    size_t lo = 0, hi = s->nseg;
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->seg[mid].t0_s <= t_s)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/* Energy from t = 0 to t_s (negative for t_s < 0). */
static double energy_to(const tw_scenario *s, double t_s)
{
    size_t i = tw_scenario_segment_at(s, t_s);
    return s->cum_j[i] + s->seg[i].power_w * (t_s - s->seg[i].t0_s);
}

/* ---------------------------------------------------------------- scenario */

tw_status tw_scenario_new(tw_sim_profile profile, tw_scenario **out)
{
    tw_clear_error();
    if (!out) return tw_fail(TW_EINVAL, "tw_scenario_new: NULL argument");
    *out = NULL;
    const profile_params *pp = params_of(profile);
    if (!pp) return tw_fail(TW_EINVAL, "unknown sim profile %d", (int)profile);
    tw_scenario *s = calloc(1, sizeof *s);
    if (!s) return tw_fail(TW_ENOMEM, "out of memory (scenario)");
    s->profile = profile;
    s->pp = pp;
    s->duration_s = NAN;
    s->context_s = NAN;
    s->max_end_s = -INFINITY;
    if (reserve_segments(s, 0) != TW_OK) {
        tw_scenario_free(s);
        return TW_ENOMEM;
    }
    build_segments(s);
    *out = s;
    return TW_OK;
}

void tw_scenario_free(tw_scenario *s)
{
    if (!s) return;
    for (size_t i = 0; i < s->nk; i++)
        free(s->k[i].name);
    free(s->k);
    free(s->seg);
    free(s->cum_j);
    free(s->bnd);
    free(s->active);
    free(s);
}

static tw_status check_kernel(const char *name, double start_s, double duration_s, double power_w)
{
    if (!name || !*name) return tw_fail(TW_EINVAL, "kernel name must not be empty");
    if (!isfinite(start_s) || start_s < 0)
        return tw_fail(TW_EINVAL, "kernel '%s': start_s must be finite and >= 0 (got %g)", name, start_s);
    if (!isfinite(duration_s) || duration_s <= 0)
        return tw_fail(TW_EINVAL, "kernel '%s': duration_s must be finite and > 0 (got %g)", name, duration_s);
    if (!isfinite(power_w) || power_w <= 0)
        return tw_fail(TW_EINVAL, "kernel '%s': power_w must be finite and > 0 (got %g)", name, power_w);
    if (!isfinite(start_s + duration_s)) return tw_fail(TW_EINVAL, "kernel '%s': end time overflows", name);
    return TW_OK;
}

static bool kernels_overlap(const kernel *a, double start_s, double end_s)
{
    return start_s < a->start_s + a->duration_s && a->start_s < end_s;
}

/* Validates and inserts a kernel in start order; the signal is rebuilt when
 * next read. */
static tw_status add_kernel(tw_scenario *s, const char *name, double start_s, double duration_s, double power_w)
{
    tw_status st = check_kernel(name, start_s, duration_s, power_w);
    if (st != TW_OK) return st;

    /* Kernels mostly come in time order: search from the end. */
    size_t pos = s->nk;
    while (pos > 0 && s->k[pos - 1].start_s > start_s)
        pos--;
    double end_s = start_s + duration_s;
    /* K20 kernels never overlap (one stream); H100 kernels may (build_h100) */
    bool k20 = s->profile == TW_SIM_K20;
    if (k20 && pos > 0 && kernels_overlap(&s->k[pos - 1], start_s, end_s))
        return tw_fail(TW_EINVAL, "kernel '%s' overlaps kernel '%s'", name, s->k[pos - 1].name);
    if (k20 && pos < s->nk && kernels_overlap(&s->k[pos], start_s, end_s))
        return tw_fail(TW_EINVAL, "kernel '%s' overlaps kernel '%s'", name, s->k[pos].name);

    if (s->nk == s->capk) {
        size_t cap = s->capk ? 2 * s->capk : 16;
        kernel *k = realloc(s->k, cap * sizeof *k);
        if (!k) return tw_fail(TW_ENOMEM, "out of memory (scenario kernels)");
        s->k = k;
        s->capk = cap;
    }
    if (reserve_segments(s, s->nk + 1) != TW_OK) return TW_ENOMEM;
    char *copy = strdup(name);
    if (!copy) return tw_fail(TW_ENOMEM, "out of memory (kernel name)");

    memmove(&s->k[pos + 1], &s->k[pos], (s->nk - pos) * sizeof *s->k);
    s->k[pos] = (kernel){copy, start_s, duration_s, power_w};
    s->nk++;
    s->max_end_s = fmax(s->max_end_s, end_s);
    s->stale = true;
    return TW_OK;
}

tw_status tw_scenario_add_kernel(tw_scenario *s, const char *name, double start_s, double duration_s, double power_w)
{
    tw_clear_error();
    if (!s) return tw_fail(TW_EINVAL, "tw_scenario_add_kernel: NULL scenario");
    return add_kernel(s, name, start_s, duration_s, power_w);
}

tw_status tw_scenario_set_context(tw_scenario *s, double t_s)
{
    tw_clear_error();
    if (!s) return tw_fail(TW_EINVAL, "tw_scenario_set_context: NULL scenario");
    if (!isfinite(t_s) || t_s < 0) return tw_fail(TW_EINVAL, "context time must be finite and >= 0 (got %g)", t_s);
    s->context_s = t_s;
    s->stale = true;
    return TW_OK;
}

tw_status tw_scenario_set_drift(tw_scenario *s, double w_per_s)
{
    tw_clear_error();
    if (!s) return tw_fail(TW_EINVAL, "tw_scenario_set_drift: NULL scenario");
    if (s->profile != TW_SIM_H100) return tw_fail(TW_EINVAL, "a drift needs the h100 profile");
    if (!isfinite(w_per_s) || fabs(w_per_s) > 100)
        return tw_fail(TW_EINVAL, "drift must be finite and within +-100 W/s (got %g)", w_per_s);
    double old = s->drift_w_per_s;
    s->drift_w_per_s = w_per_s;
    if (reserve_segments(s, s->nk) != TW_OK) {
        s->drift_w_per_s = old;
        return TW_ENOMEM;
    }
    s->stale = true;
    return TW_OK;
}

tw_status tw_scenario_set_duration(tw_scenario *s, double duration_s)
{
    tw_clear_error();
    if (!s) return tw_fail(TW_EINVAL, "tw_scenario_set_duration: NULL scenario");
    if (!isfinite(duration_s) || duration_s <= 0)
        return tw_fail(TW_EINVAL, "scenario duration must be finite and > 0 (got %g)", duration_s);
    s->duration_s = duration_s;
    s->stale = true; /* H100: the context ends with the scenario */
    return TW_OK;
}

double tw_scenario_duration_s(const tw_scenario *s)
{
    if (!s) return NAN;
    return isnan(s->duration_s) ? default_duration(s) : s->duration_s;
}

tw_sim_profile tw_scenario_profile(const tw_scenario *s) { return s ? s->profile : TW_SIM_K20; }

double tw_scenario_idle_w(const tw_scenario *s) { return s ? s->pp->idle_w : NAN; }

double tw_scenario_active_idle_w(const tw_scenario *s) { return s ? s->pp->active_idle_w : NAN; }

double tw_scenario_true_power_w(const tw_scenario *s, double t_s)
{
    if (!s || isnan(t_s)) return NAN;
    return s->seg[tw_scenario_segment_at(s, t_s)].power_w;
}

double tw_scenario_true_energy_j(const tw_scenario *s, double t0_s, double t1_s)
{
    if (!s || isnan(t0_s) || isnan(t1_s)) return NAN;
    return energy_to(s, t1_s) - energy_to(s, t0_s);
}

tw_status tw_scenario_events(const tw_scenario *s, tw_events **out)
{
    tw_clear_error();
    if (!s || !out) return tw_fail(TW_EINVAL, "tw_scenario_events: NULL argument");
    *out = NULL;
    tw_events *ev = NULL;
    tw_status st = tw_events_new(&ev);
    if (st != TW_OK) return st;
    for (size_t i = 0; i < s->nk; i++) {
        const kernel *k = &s->k[i];
        double end_s = k->start_s + k->duration_s;
        tw_event e = {.name = k->name,
                      .start_s = k->start_s,
                      .end_s = end_s,
                      .device = 0,
                      .stream = 0,
                      .true_energy_j = tw_scenario_true_energy_j(s, k->start_s, end_s),
                      .kind = "kernel"};
        st = tw_events_add(ev, &e);
        if (st != TW_OK) {
            tw_events_free(ev);
            return st;
        }
    }
    *out = ev;
    return TW_OK;
}

/* ---------------------------------------------------------------- CSV loading */

#define KCSV_MAX_FIELDS 64

enum { COL_NAME, COL_START, COL_DURATION, COL_POWER, NCOLS };
static const char *const col_names[NCOLS] = {"name", "start_s", "duration_s", "power_w"};

/* State of one load, for error messages that name the place. */
typedef struct csv_ctx {
    const char *path;
    unsigned long line;
    size_t col[NCOLS]; /* field index of each required column */
    size_t nheader;    /* fields in the header */
} csv_ctx;

static char *trim(char *p)
{
    while (isspace((unsigned char)*p))
        p++;
    char *end = p + strlen(p);
    while (end > p && isspace((unsigned char)end[-1]))
        *--end = '\0';
    return p;
}

/* Splits a line in place at commas; a field may be double-quoted ("" is a
 * quote inside). Returns false on an unterminated quote. *n counts all
 * fields, even beyond max (only the first max are stored). */
static bool split_fields(char *line, char **field, size_t max, size_t *n)
{
    size_t count = 0;
    char *p = line;
    for (;;) {
        while (*p == ' ' || *p == '\t')
            p++;
        char *start = p;
        bool quoted = *p == '"';
        if (quoted) {
            char *w = start;
            p++;
            for (;;) {
                if (*p == '\0') return false;
                if (*p == '"' && p[1] == '"') {
                    *w++ = '"';
                    p += 2;
                } else if (*p == '"') {
                    p++;
                    break;
                } else {
                    *w++ = *p++;
                }
            }
            while (*p && *p != ',')
                p++; /* anything after the closing quote is dropped */
            *w = '\0';
        } else {
            while (*p && *p != ',')
                p++;
        }
        bool last = *p == '\0';
        *p = '\0';
        if (count < max) field[count] = quoted ? start : trim(start);
        count++;
        if (last) break;
        p++;
    }
    *n = count;
    return true;
}

static void strip_eol(char *line)
{
    size_t len = strlen(line);
    while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
        line[--len] = '\0';
}

static bool skippable(const char *line)
{
    while (isspace((unsigned char)*line))
        line++;
    return *line == '\0' || *line == '#';
}

static tw_status parse_header(csv_ctx *c, char **field, size_t n)
{
    if (n > KCSV_MAX_FIELDS)
        return tw_fail(TW_EPARSE, "%s:%lu: too many columns (%zu, at most %d)", c->path, c->line, n, KCSV_MAX_FIELDS);
    c->nheader = n;
    for (int j = 0; j < NCOLS; j++) {
        c->col[j] = SIZE_MAX;
        for (size_t i = 0; i < n; i++) {
            if (strcmp(field[i], col_names[j]) != 0) continue;
            if (c->col[j] != SIZE_MAX)
                return tw_fail(TW_EPARSE, "%s:%lu: column '%s' appears twice", c->path, c->line, col_names[j]);
            c->col[j] = i;
        }
        if (c->col[j] == SIZE_MAX)
            return tw_fail(TW_EPARSE, "%s:%lu: missing column '%s' (header must have name,start_s,duration_s,power_w)",
                           c->path, c->line, col_names[j]);
    }
    return TW_OK;
}

static tw_status parse_number(const csv_ctx *c, const char *text, int col, double *out)
{
    if (!*text) return tw_fail(TW_EPARSE, "%s:%lu: empty %s", c->path, c->line, col_names[col]);
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (end == text || *end != '\0' || errno == ERANGE || !isfinite(v))
        return tw_fail(TW_EPARSE, "%s:%lu: %s is not a finite number: '%s'", c->path, c->line, col_names[col], text);
    *out = v;
    return TW_OK;
}

static tw_status parse_kernel_line(tw_scenario *s, const csv_ctx *c, char **field, size_t n)
{
    if (n != c->nheader)
        return tw_fail(TW_EPARSE, "%s:%lu: expected %zu fields, found %zu", c->path, c->line, c->nheader, n);
    double v[NCOLS];
    for (int j = COL_START; j < NCOLS; j++) {
        tw_status st = parse_number(c, field[c->col[j]], j, &v[j]);
        if (st != TW_OK) return st;
    }
    tw_status st = add_kernel(s, field[c->col[COL_NAME]], v[COL_START], v[COL_DURATION], v[COL_POWER]);
    if (st == TW_OK || st == TW_ENOMEM) return st;
    /* A bad value in a file is malformed input; say where. The detail is
     * copied first because tw_fail writes over it. */
    char why[512];
    snprintf(why, sizeof why, "%s", tw_last_error());
    return tw_fail(TW_EPARSE, "%s:%lu: %s", c->path, c->line, why);
}

/* Reads every line of f into s. */
static tw_status read_kernels(tw_scenario *s, FILE *f, csv_ctx *c)
{
    char *line = NULL;
    size_t cap = 0;
    bool have_header = false;
    tw_status st = TW_OK;
    char *field[KCSV_MAX_FIELDS];
    size_t n;
    while (st == TW_OK && getline(&line, &cap, f) >= 0) {
        c->line++;
        char *text = line;
        if (c->line == 1 && strncmp(text, "\xEF\xBB\xBF", 3) == 0) text += 3; /* UTF-8 BOM */
        strip_eol(text);
        if (skippable(text)) continue;
        if (!split_fields(text, field, KCSV_MAX_FIELDS, &n)) {
            st = tw_fail(TW_EPARSE, "%s:%lu: unterminated quote", c->path, c->line);
        } else if (!have_header) {
            st = parse_header(c, field, n);
            have_header = true;
        } else {
            st = parse_kernel_line(s, c, field, n);
        }
    }
    bool read_error = ferror(f) != 0;
    free(line);
    if (st != TW_OK) return st;
    if (read_error) return tw_fail(TW_EIO, "%s: read error", c->path);
    if (!have_header)
        return tw_fail(TW_EEMPTY, "%s: empty file (expected a header name,start_s,duration_s,power_w)", c->path);
    if (s->nk == 0) return tw_fail(TW_EEMPTY, "%s: no kernels", c->path);
    return TW_OK;
}

tw_status tw_scenario_load(const char *path, tw_sim_profile profile, tw_scenario **out)
{
    tw_clear_error();
    if (!path || !out) return tw_fail(TW_EINVAL, "tw_scenario_load: NULL argument");
    *out = NULL;
    tw_scenario *s;
    tw_status st = tw_scenario_new(profile, &s);
    if (st != TW_OK) return st;
    FILE *f = fopen(path, "r");
    if (!f) {
        int e = errno;
        tw_scenario_free(s);
        return tw_fail(TW_EIO, "%s: cannot open: %s", path, strerror(e));
    }
    csv_ctx c = {.path = path};
    st = read_kernels(s, f, &c);
    fclose(f);
    if (st != TW_OK) {
        tw_scenario_free(s);
        return st;
    }
    *out = s;
    return TW_OK;
}
