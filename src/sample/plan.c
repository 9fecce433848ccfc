#include "sample/plan.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "correct/identify.h"

#define BUFFER_NAME "power_buffer_w"
#define DUP_REL 0.05      /* two readings whose models agree this closely repeat each other */
#define DUP_DELAY_S 0.005 /* ... and whose delays agree within this (or DUP_REL of the window) */
#define DUP_RC_REL 0.10   /* ... rc time constants agree within this */
#define NVML_ARCH_NONE 0xffffffffu

/* ---------------------------------------------------------------- generation */

/* Names of data-centre and workstation GPUs whose NVML may not answer the
 * architecture (old drivers): a whole word of the name gives the generation. */
static const struct {
    const char *word;
    unsigned arch;
} name_arch[] = {
    {"GB300", TW_ARCH_BLACKWELL}, {"GB200", TW_ARCH_BLACKWELL}, {"B300", TW_ARCH_BLACKWELL},
    {"B200", TW_ARCH_BLACKWELL},  {"B100", TW_ARCH_BLACKWELL},  {"GH200", TW_ARCH_HOPPER},
    {"H200", TW_ARCH_HOPPER},     {"H100", TW_ARCH_HOPPER},     {"H800", TW_ARCH_HOPPER},
    {"H20", TW_ARCH_HOPPER},      {"L40S", TW_ARCH_ADA},        {"L40", TW_ARCH_ADA},
    {"L4", TW_ARCH_ADA},          {"A100", TW_ARCH_AMPERE},     {"A800", TW_ARCH_AMPERE},
    {"A40", TW_ARCH_AMPERE},      {"A30", TW_ARCH_AMPERE},      {"A16", TW_ARCH_AMPERE},
    {"A10", TW_ARCH_AMPERE},      {"A2", TW_ARCH_AMPERE},       {"V100", TW_ARCH_VOLTA},
    {"T4", TW_ARCH_TURING},       {"P100", TW_ARCH_PASCAL},     {"P40", TW_ARCH_PASCAL},
    {"P4", TW_ARCH_PASCAL},       {"K80", TW_ARCH_KEPLER},      {"K40", TW_ARCH_KEPLER},
    {"K20", TW_ARCH_KEPLER},
};

/* Whether `word` occurs in `s` as a whole word (case-insensitive). */
static bool has_word(const char *s, const char *word)
{
    size_t n = strlen(word);
    for (const char *p = s; *p; p++) {
        if (p != s && isalnum((unsigned char)p[-1])) continue;
        if (strncasecmp(p, word, n) == 0 && !isalnum((unsigned char)p[n])) return true;
    }
    return false;
}

unsigned tw_plan_arch(const char *gpu_name, unsigned nvml_arch)
{
    if (nvml_arch != TW_ARCH_UNKNOWN && nvml_arch != NVML_ARCH_NONE) return nvml_arch;
    if (!gpu_name) return TW_ARCH_UNKNOWN;
    for (size_t i = 0; i < sizeof name_arch / sizeof name_arch[0]; i++)
        if (has_word(gpu_name, name_arch[i].word)) return name_arch[i].arch;
    return TW_ARCH_UNKNOWN;
}

const char *tw_plan_arch_name(unsigned arch)
{
    static const char *const names[] = {"unknown", "unknown", "Kepler", "Maxwell", "Pascal",   "Volta",
                                        "Turing",  "Ampere",  "Ada",    "Hopper",  "Blackwell"};
    if (arch < sizeof names / sizeof names[0]) return names[arch];
    return "a newer generation";
}

/* ---------------------------------------------------------------- helpers */

static double clamp(double x, double lo, double hi) { return x < lo ? lo : x > hi ? hi : x; }

static bool close_rel(double a, double b, double rel)
{
    if (isnan(a) && isnan(b)) return true;
    if (!isfinite(a) || !isfinite(b)) return false;
    return fabs(a - b) <= rel * fmax(fabs(a), fabs(b));
}

__attribute__((format(printf, 3, 4))) static void append(char *buf, size_t cap, const char *fmt, ...)
{
    size_t used = strlen(buf);
    if (used + 1 >= cap) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + used, cap - used, fmt, ap);
    va_end(ap);
}

static void plan_init(tw_sample_plan *pl)
{
    memset(pl, 0, sizeof *pl);
    pl->fast_period_s = TW_PLAN_DEFAULT_FAST_S;
    pl->buffer_poll_s = TW_PLAN_DEFAULT_DRAIN_S;
    pl->slow_period_s = TW_PLAN_COUNTER_PERIOD_S;
    pl->slow_max_period_s = TW_PLAN_COUNTER_MAX_PERIOD_S;
    pl->slow_cpu_budget = TW_PLAN_COUNTER_CPU_BUDGET;
}

static tw_plan_reading *add(tw_sample_plan *pl, const char *name, bool read, double period_s)
{
    tw_plan_reading *r = &pl->r[pl->n++];
    snprintf(r->name, sizeof r->name, "%s", name);
    r->read = read;
    r->period_s = read ? period_s : NAN;
    if (!read) append(pl->skip, sizeof pl->skip, "%s%s", pl->skip[0] ? "," : "", name);
    return r;
}

/* Whether b repeats a: the same kind of reading (board or memory), the same
 * model, and it saw the same calibration step. */
static bool duplicate(const tw_reading_model *a, const tw_reading_model *b)
{
    if (a->response != b->response || a->response == TW_RESP_COUNTER) return false;
    if (tw_identify_board_reading(a->name, NULL) != tw_identify_board_reading(b->name, NULL)) return false;
    if (!close_rel(a->period_s, b->period_s, DUP_REL) || !close_rel(a->step_w, b->step_w, DUP_REL)) return false;
    double tol = fmax(DUP_DELAY_S, isfinite(a->window_s) ? DUP_REL * a->window_s : 0);
    if (!(fabs(a->delay_s - b->delay_s) <= tol)) return false;
    if (a->response == TW_RESP_RC) return close_rel(a->capacitance_s, b->capacitance_s, DUP_RC_REL);
    return close_rel(a->window_s, b->window_s, DUP_REL);
}

/* Periods in whole milliseconds (rounded down: never slower than asked), for
 * plans that read well. */
static double whole_ms(double s) { return fmax(TW_PLAN_MIN_PERIOD_S, floor(s * 1e3 + 1e-6) * 1e-3); }

/* The drain period that keeps the driver's buffer from wrapping: a quarter of
 * the time it holds, at the fastest rate the profile saw samples come. */
static double drain_period(const tw_reading_model *m)
{
    double dt = isfinite(m->period_p10_s) && m->period_p10_s > 0 ? m->period_p10_s : m->period_s;
    if (!(dt > 0)) return TW_PLAN_DEFAULT_DRAIN_S;
    return whole_ms(
        clamp(TW_PLAN_BUFFER_SAMPLES * dt / TW_PLAN_BUFFER_SAFETY, TW_PLAN_MIN_PERIOD_S, TW_PLAN_BUFFER_MAX_DRAIN_S));
}

/* Polled twice per update, so that none is missed (a 100 ms update: every
 * 50 ms, to the nearest ms: the profile's 99.9933 ms gives 50 ms). */
static double poll_period(const tw_reading_model *m)
{
    if (!(m->period_s > 0)) return TW_PLAN_DEFAULT_FAST_S;
    double ms = fmax(1.0, round(m->period_s / 2 * 1e3));
    return clamp(ms * 1e-3, TW_PLAN_MIN_PERIOD_S, TW_PLAN_MAX_POLL_S);
}

static void plan_reading(tw_sample_plan *pl, const tw_profile *p, size_t i, double *fast)
{
    const tw_reading_model *m = &p->r[i];
    if (pl->n >= TW_PROFILE_MAX_READINGS) return;
    if (m->response == TW_RESP_UNKNOWN) {
        snprintf(add(pl, m->name, false, 0)->why, sizeof pl->r[0].why, "the profile could not model it");
        return;
    }
    if (m->response == TW_RESP_COUNTER) {
        pl->slow_period_s = fmax(TW_PLAN_COUNTER_PERIOD_S, isfinite(m->period_s) ? m->period_s : 0);
        pl->slow_max_period_s = fmax(pl->slow_period_s, TW_PLAN_COUNTER_MAX_PERIOD_S);
        snprintf(add(pl, m->name, true, pl->slow_period_s)->why, sizeof pl->r[0].why,
                 "the total: its own thread, every %g s (up to %g s while a read costs more than %g %% of a core)",
                 pl->slow_period_s, pl->slow_max_period_s, 100 * pl->slow_cpu_budget);
        return;
    }
    for (size_t k = 0; k < i; k++) {
        const tw_plan_reading *e = tw_sample_plan_find(pl, p->r[k].name);
        if (e && e->read && duplicate(&p->r[k], m)) {
            snprintf(add(pl, m->name, false, 0)->why, sizeof pl->r[0].why, "repeats %s", p->r[k].name);
            return;
        }
    }
    if (strcmp(m->name, BUFFER_NAME) == 0) {
        pl->buffer_poll_s = drain_period(m);
        *fast = fmin(*fast, pl->buffer_poll_s);
        snprintf(add(pl, m->name, true, pl->buffer_poll_s)->why, sizeof pl->r[0].why,
                 "time resolution: a sample every %.0f ms, drained every %.2f s", 1e3 * m->period_s, pl->buffer_poll_s);
        return;
    }
    double period = poll_period(m);
    *fast = fmin(*fast, period);
    snprintf(add(pl, m->name, true, period)->why, sizeof pl->r[0].why, "polled twice per %.0f ms update",
             1e3 * m->period_s);
}

/* ---------------------------------------------------------------- plans */

void tw_sample_plan_from_profile(const tw_profile *p, const char *source, tw_sample_plan *out)
{
    plan_init(out);
    out->from_profile = true;
    double fast = INFINITY;
    for (size_t i = 0; i < p->n; i++)
        plan_reading(out, p, i, &fast);
    /* readings the profile does not list (clocks, a reading it missed) ride
     * along on their thread's period; with nothing polled, the buffer's drain sets it */
    out->fast_period_s = isfinite(fast) ? fast : TW_PLAN_DEFAULT_FAST_S;
    snprintf(out->summary, sizeof out->summary, "from the sensor profile %s:", source ? source : "given");
    const char *sep = " ";
    for (size_t i = 0; i < out->n; i++) {
        const tw_plan_reading *r = &out->r[i];
        if (r->read) append(out->summary, sizeof out->summary, "%s%s every %g s", sep, r->name, r->period_s);
        sep = ", ";
    }
    for (size_t i = 0; i < out->n; i++) {
        const tw_plan_reading *r = &out->r[i];
        if (!r->read) append(out->summary, sizeof out->summary, "; %s not read (%s)", r->name, r->why);
    }
}

void tw_sample_plan_default(unsigned arch, tw_sample_plan *out)
{
    plan_init(out);
    out->arch = arch;
    if (arch >= TW_ARCH_AMPERE) {
        /* Ampere and later keep a sample buffer and an energy counter that
         * costs milliseconds of CPU a read (the H100's, the H200's) */
        snprintf(out->summary, sizeof out->summary,
                 "the default for %s: the sample buffer drained every %g s, the energy counter every %g s (up to "
                 "%g s), the other power readings every %g s",
                 tw_plan_arch_name(arch), out->buffer_poll_s, out->slow_period_s, out->slow_max_period_s,
                 out->fast_period_s);
        return;
    }
    /* before Ampere, or unknown: power usage is the reading to trust, polled fast */
    out->fast_period_s = TW_PLAN_LEGACY_FAST_S;
    out->buffer_poll_s = TW_PLAN_LEGACY_SLOW_S;
    out->slow_period_s = TW_PLAN_LEGACY_SLOW_S;
    out->slow_cpu_budget = TW_PLAN_LEGACY_SLOW_BUDGET;
    snprintf(out->summary, sizeof out->summary,
             "the default for %s%s: power readings every %g s, slow readings (energy counter, clocks) every %g s "
             "(up to %g s)",
             arch == TW_ARCH_UNKNOWN ? "a GPU of unknown generation" : tw_plan_arch_name(arch),
             arch == TW_ARCH_UNKNOWN ? "" : " (before Ampere)", out->fast_period_s, out->slow_period_s,
             out->slow_max_period_s);
}

void tw_sample_plan_override(tw_sample_plan *pl, double fast_period_s, double slow_period_s)
{
    if (fast_period_s > 0) {
        pl->fast_period_s = fast_period_s;
        append(pl->summary, sizeof pl->summary, "; fast readings every %g s (--fast-period)", fast_period_s);
    }
    if (slow_period_s > 0) {
        pl->slow_period_s = pl->slow_max_period_s = slow_period_s;
        pl->slow_cpu_budget = 0;
        append(pl->summary, sizeof pl->summary, "; slow readings every %g s (--slow-period)", slow_period_s);
    }
}

const tw_plan_reading *tw_sample_plan_find(const tw_sample_plan *pl, const char *name)
{
    for (size_t i = 0; i < pl->n; i++)
        if (strcmp(pl->r[i].name, name) == 0) return &pl->r[i];
    return NULL;
}
