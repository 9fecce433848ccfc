/* The report of a run file, for `truewatt run` and `truewatt report`: see
 * run_pipeline.h. */
#define _GNU_SOURCE /* open_memstream */
#include "report/run_pipeline.h"

#include <fnmatch.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "correct/profile_pick.h"
#include "report/run_mig.h"
#include "core/error.h"
#include "correct/identify.h"
#include "report/perfetto.h"
#include "timeline/devices.h"
#include "core/strmap.h"
#include "runfile/runfile_mig.h"
#include "runfile/runfile_pm.h"
#include "estimate/counters.h"

/* ---------------------------------------------------------------- the sensor profile */

void run_pick_profile(const char *given, const tw_profile *given_prof, const char *given_how, const char *gpu,
                      const char *driver, run_device *x)
{
    tw_profile_init(&x->prof);
    if (given) {
        x->prof = *given_prof;
        snprintf(x->profile_how, sizeof x->profile_how, "%s", given_how);
    } else {
        tw_status st = tw_profile_pick(NULL, gpu, driver, &x->prof, x->profile_how, sizeof x->profile_how);
        if (st == TW_ENOTFOUND) {
            snprintf(x->profile_how, sizeof x->profile_how, "no sensor profile for GPU %s (driver %s) in %s",
                     gpu[0] ? gpu : "(unnamed)", driver[0] ? driver : "unknown", tw_profile_dir());
            x->profile = RUN_PROFILE_NONE;
            return;
        }
        if (st != TW_OK) {
            snprintf(x->profile_how, sizeof x->profile_how, "cannot read the sensor profile: %s", tw_last_error());
            x->profile = RUN_PROFILE_ERROR;
            return;
        }
    }
    const tw_reading_model *m = tw_profile_best(&x->prof, tw_identify_board_reading, NULL);
    if (!m) {
        x->profile = RUN_PROFILE_NO_READING;
        return;
    }
    x->model = *m;
    x->profile = RUN_PROFILE_MODEL;
}

/* The profile of x as JSON for the run file (malloc'ed), NULL when none. */
static char *profile_json(const run_device *x)
{
    if (x->profile != RUN_PROFILE_MODEL && x->profile != RUN_PROFILE_NO_READING) return NULL;
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f) return NULL;
    tw_status st = tw_profile_write_json(&x->prof, f);
    if (fclose(f) != 0 || st != TW_OK) {
        free(text);
        return NULL;
    }
    return text;
}

void run_recorded_profile(tw_run *run, const tw_run_device *rd, run_device *x)
{
    tw_profile_init(&x->prof);
    x->profile = (run_profile)rd->profile_status;
    snprintf(x->profile_how, sizeof x->profile_how, "%s", rd->profile_how);
    char *text = NULL;
    if (tw_run_get_profile(run, rd->index, &text) != TW_OK || !text) {
        if (x->profile == RUN_PROFILE_MODEL || x->profile == RUN_PROFILE_NO_READING) x->profile = RUN_PROFILE_ERROR;
        free(text);
        return;
    }
    char origin[160];
    snprintf(origin, sizeof origin, "%s: sensor_profiles, device %d", tw_run_path(run), rd->index);
    if (tw_profile_parse(text, origin, &x->prof) != TW_OK) {
        snprintf(x->profile_how, sizeof x->profile_how, "cannot read the sensor profile: %s", tw_last_error());
        x->profile = RUN_PROFILE_ERROR;
    } else if (x->profile == RUN_PROFILE_MODEL) {
        const tw_reading_model *m = tw_profile_best(&x->prof, tw_identify_board_reading, NULL);
        if (m)
            x->model = *m;
        else
            x->profile = RUN_PROFILE_NO_READING;
    }
    free(text);
}

/* ---------------------------------------------------------------- what the run recorded */

struct run_loaded {
    const char *path; /* the run file's */
    char *perfetto;   /* the Perfetto file written, or NULL */
    const volatile int *cancel;
    char **argv;
    char *backend, *warnings, *provenance, *events_note, *notes;
    int64_t exit_status, signal, t0;
    double child_s, spawn_s, exit_s, tail_s, fast_s, slow_s;
    tw_run_device *rdev;
    size_t ndev;
    tw_run_reading *readings;
    size_t nreadings;
    run_sampler sampler;
    run_device *dev;
    tw_device_info *devinfo;
    tw_run_feed *rf;     /* the run's events, replayed from the file by start: never all held */
    tw_feed all;         /* rf's */
    size_t nevents;      /* activities and NVTX ranges */
    tw_device_feed **df; /* per device: its events of all (tw_timeline_split's, MIG labels) */
    tw_feed *dfeed;      /* df's */
    group_feed **gf;     /* per device: dfeed renamed for the groups by NVTX range (NULL: none asked) */
    tw_feed *feeds;      /* per device: the events its estimate was made from (energies by their index) */
    tw_unmeasured_summary unmeasured;
    bool counted;         /* unmeasured counted by the first replay of device 0's events */
    char *warn;           /* warnings + what the split of the timeline found */
    char *notice;         /* what the split found, alone ("" when all was measured) */
    tw_mig_instance *mig; /* MIG instances: their kernels are charged to their GPU */
    size_t nmig;
    char **patterns; /* the estimator's group patterns */
    size_t npatterns;
};
typedef run_loaded loaded;

void run_loaded_free(loaded *L)
{
    if (!L) return;
    for (size_t d = 0; d < L->ndev; d++) {
        if (L->dev) tw_estimate_free(L->dev[d].est);
        if (L->gf) group_feed_free(L->gf[d]);
        if (L->df) tw_device_feed_free(L->df[d]);
    }
    for (size_t i = 0; i < L->npatterns; i++)
        free(L->patterns[i]);
    free(L->patterns);
    free(L->gf);
    free(L->df);
    free(L->dfeed);
    tw_run_feed_free(L->rf);
    free(L->perfetto);
    tw_unmeasured_summary_free(&L->unmeasured);
    tw_run_free_strv(L->argv);
    free(L->backend);
    free(L->warnings);
    free(L->provenance);
    free(L->events_note);
    free(L->notes);
    free(L->rdev);
    free(L->readings);
    free(L->dev);
    free(L->devinfo);
    free(L->feeds);
    free(L->warn);
    free(L->notice);
    free(L->mig);
    free(L);
}

/* A text fact ("" when the run did not record it). */
static char *text_of(tw_run *run, const char *key)
{
    char *v = NULL;
    if (tw_run_get_text(run, key, &v) == TW_ENOTFOUND) tw_clear_error();
    return v;
}

/* A run that truewatt did not finish (killed, crashed, a full disk): its
 * command is taken to end at the last sample committed, without the idle
 * level after it, and the warnings say so. */
static tw_status unfinished(tw_run *run, loaded *L)
{
    double last = tw_run_last_poll_s(run);
    if (isnan(last) || isnan(L->spawn_s))
        return tw_fail(TW_EEMPTY, "%s: the run ended before its command started: nothing to report", tw_run_path(run));
    L->exit_s = last;
    L->tail_s = 0;
    L->child_s = last - L->spawn_s;
    char line[512];
    snprintf(line, sizeof line,
             "warning: truewatt did not finish this run (killed?): reported up to its last commit, %.3f s after the "
             "command started; no idle level after it\n",
             L->child_s);
    size_t n = strlen(L->warnings) + strlen(line) + 1;
    char *w = realloc(L->warnings, n);
    if (!w) return tw_fail(TW_ENOMEM, "out of memory");
    strcat(w, line);
    L->warnings = w;
    return TW_OK;
}

static tw_status load_facts(tw_run *run, loaded *L)
{
    tw_status st = tw_run_get_command(run, &L->argv);
    if (st != TW_OK) return st;
    if (!L->argv[0])
        return tw_fail(TW_EEMPTY, "%s: no command recorded (not a run of truewatt run?)", tw_run_path(run));
    L->backend = text_of(run, "backend");
    L->warnings = text_of(run, "warnings");
    L->provenance = text_of(run, "provenance");
    L->events_note = text_of(run, "events_note");
    L->notes = text_of(run, "sampler_notes");
    if (!L->backend || !L->warnings || !L->provenance || !L->events_note || !L->notes)
        return tw_fail(TW_ENOMEM, "out of memory");
    if (tw_run_get_int(run, "t0_mono_ns", &L->t0) != TW_OK) L->t0 = 0;
    /* a run that truewatt did not finish (killed): no exit status */
    if (tw_run_get_int(run, "exit_status", &L->exit_status) != TW_OK) L->exit_status = -1;
    if (tw_run_get_int(run, "signal", &L->signal) != TW_OK) L->signal = 0;
    tw_clear_error();
    L->child_s = tw_run_get_real(run, "command_wall_s");
    L->spawn_s = tw_run_get_real(run, "spawn_s");
    L->exit_s = tw_run_get_real(run, "exit_s");
    L->tail_s = tw_run_get_real(run, "tail_s");
    L->fast_s = tw_run_get_real(run, "fast_period_s");
    L->slow_s = tw_run_get_real(run, "slow_period_s");
    if (isnan(L->exit_s) && (st = unfinished(run, L)) != TW_OK) return st;
    L->sampler.cpu_s = tw_run_get_real(run, "sampler_cpu_s");
    L->sampler.wall_s = tw_run_get_real(run, "sampler_wall_s");
    L->sampler.writer_cpu_s = tw_run_get_real(run, "writer_cpu_s");
    L->sampler.notes = L->notes;
    return TW_OK;
}

static tw_status load_devices(tw_run *run, loaded *L)
{
    tw_status st = tw_run_devices(run, &L->rdev, &L->ndev);
    if (st == TW_OK) st = tw_run_readings(run, &L->readings, &L->nreadings);
    if (st != TW_OK) return st;
    if (L->ndev == 0) return tw_fail(TW_EEMPTY, "%s: no device recorded", tw_run_path(run));
    L->dev = calloc(L->ndev, sizeof *L->dev);
    L->devinfo = calloc(L->ndev, sizeof *L->devinfo);
    L->df = calloc(L->ndev, sizeof *L->df);
    L->dfeed = calloc(L->ndev, sizeof *L->dfeed);
    L->gf = calloc(L->ndev, sizeof *L->gf);
    L->feeds = calloc(L->ndev, sizeof *L->feeds);
    if (!L->dev || !L->devinfo || !L->df || !L->dfeed || !L->gf || !L->feeds)
        return tw_fail(TW_ENOMEM, "out of memory");
    for (size_t d = 0; d < L->ndev; d++) {
        const tw_run_device *r = &L->rdev[d];
        run_device *x = &L->dev[d];
        x->index = r->index;
        snprintf(x->prefix, sizeof x->prefix, "%s", r->prefix);
        snprintf(x->name, sizeof x->name, "%s", r->name);
        snprintf(x->driver, sizeof x->driver, "%s", r->driver);
        x->uuid = r->uuid;
        tw_device_info *i = &L->devinfo[d];
        i->index = (unsigned)r->index;
        snprintf(i->uuid, sizeof i->uuid, "%s", r->uuid);
        snprintf(i->name, sizeof i->name, "%s", r->name);
        snprintf(i->driver, sizeof i->driver, "%s", r->driver);
        i->arch = r->arch;
        i->power_limit_w = r->power_limit_w;
    }
    L->sampler.readings = L->readings;
    L->sampler.nreadings = L->nreadings;
    L->sampler.devices = L->rdev;
    L->sampler.ndev = L->ndev;
    return TW_OK;
}

tw_status run_pm_of(tw_run *run, const char *uuid, tw_run_pm *out, bool *asked)
{
    double want = tw_run_get_real(run, TW_RUN_PM_ASKED_KEY);
    tw_clear_error();
    tw_run_pm *pm = NULL;
    size_t n = 0;
    *asked = false;
    tw_status st = tw_run_pms(run, &pm, &n);
    if (st != TW_OK || (isnan(want) && n == 0)) return st;
    const tw_run_pm *p = tw_run_pm_for(pm, n, uuid);
    *asked = true;
    if (p) {
        *out = *p;
    } else {
        memset(out, 0, sizeof *out);
        out->device = -1;
        out->busy_s = NAN;
        snprintf(out->reason, sizeof out->reason,
                 "the program made no CUDA context on this GPU, or its injection library sent nothing");
    }
    free(pm);
    return TW_OK;
}

tw_status run_device_pm(tw_run *run, run_device *x)
{
    tw_status st = run_pm_of(run, x->uuid, &x->pm, &x->pm_asked);
    if (st == TW_OK && x->pm_asked) tw_run_pm_text(&x->pm, x->pm_line, sizeof x->pm_line);
    return st;
}

static tw_status load_activity_counters(tw_run *run, loaded *L)
{
    tw_status st = TW_OK;
    for (size_t d = 0; st == TW_OK && d < L->ndev; d++)
        st = run_device_pm(run, &L->dev[d]);
    return st;
}

/* The activities, each GPU's matched by UUID; events of GPUs not sampled
 * are counted and warned about, never charged to another GPU. Each GPU's
 * events are a feed replayed from the run file by start (the estimator
 * replays its GPU's once, the Perfetto writer again): the report holds no
 * launch but the estimator's 32 bytes of each. */
static tw_status load_timeline(tw_run *run, loaded *L)
{
    tw_status st = tw_run_feed_open(run, &L->rf, &L->all);
    if (st == TW_OK) st = tw_run_migs(run, &L->mig, &L->nmig);
    L->nevents = L->all.hint;
    for (size_t d = 0; d < L->ndev; d++) {
        L->dev[d].mig = L->mig;
        L->dev[d].nmig = L->nmig;
    }
    for (size_t d = 0; st == TW_OK && d < L->ndev; d++)
        st = tw_device_feed_open(&L->all, L->devinfo, L->ndev, d, L->mig, L->nmig, &L->df[d], &L->dfeed[d]);
    if (st == TW_OK) tw_device_feed_count(L->df[0], &L->unmeasured, &L->counted);
    return st;
}

/* The warnings with what the split found (after the estimates: the first
 * replay of device 0's events counts the events of GPUs not sampled; a
 * replay of its own when none ran to its end). */
static tw_status split_warnings(loaded *L)
{
    tw_status st = TW_OK;
    if (!L->counted) st = tw_timeline_unmeasured(&L->all, L->devinfo, L->ndev, L->mig, L->nmig, &L->unmeasured);
    if (st != TW_OK) return st;
    char split[2048] = "";
    tw_unmeasured_describe(&L->unmeasured, split, sizeof split);
    size_t n = strlen(L->warnings) + strlen(split) + 1;
    if (!(L->notice = strdup(L->unmeasured.n ? split : ""))) return tw_fail(TW_ENOMEM, "out of memory");
    if (!(L->warn = malloc(n))) return tw_fail(TW_ENOMEM, "out of memory");
    snprintf(L->warn, n, "%s%s", L->warnings, split);
    return TW_OK;
}

/* ---------------------------------------------------------------- the estimate */

/* The estimator over each device's readings: from the first activity to
 * the command's end (its CUDA context ends with it), idle measured before
 * the command started and after it ended. */
static bool cancelled(const volatile int *cancel) { return cancel && *cancel; }

typedef struct shifted_set {
    tw_est_counter_set *set;
    double shift_s;
} shifted_set;

static tw_status add_sample(void *arg, double t0_s, double t1_s, const float *values)
{
    const shifted_set *s = arg;
    return tw_est_counters_add(s->set, t0_s + s->shift_s, t1_s + s->shift_s, values);
}

static tw_status add_window(void *arg, double t0_s, double t1_s)
{
    const shifted_set *s = arg;
    return tw_est_counters_window(s->set, t0_s + s->shift_s, t1_s + s->shift_s);
}

/* The features scaled by each sample's clock where the calibrated model the
 * estimator will take as their prior (the one of exactly these features)
 * was fitted so (estimate/counters.h). */
static void counters_clock(const run_device *x, tw_est_counter_set *set)
{
    if (x->profile != RUN_PROFILE_MODEL) return;
    size_t order[TW_EST_MAX_FEATURES];
    const tw_activity_model *m =
        tw_profile_activity_for(x->prof.activity, x->prof.n_activity, set->c.feature, set->c.nf, order);
    if (m && m->clock_mhz > 0) tw_est_counters_clock(set, m->clock_mhz);
}

tw_status run_device_counters(tw_run *run, const run_device *x, double shift_s, const tw_report_options *o,
                              tw_est_counter_set *set, char *why, size_t cap)
{
    memset(set, 0, sizeof *set);
    why[0] = '\0';
    if (!x->pm_asked || !x->pm.on || x->pm.samples == 0) return TW_OK;
    shifted_set s = {set, shift_s};
    tw_status st = TW_OK;
    if (o->no_activity_counters) {
        snprintf(why, cap, "left out (--no-activity-counters)");
    } else if ((st = tw_est_counters_begin(x->pm.metrics, (double)x->pm.interval_ns * 1e-9, set)) == TW_ENOTFOUND) {
        snprintf(why, cap, "%s", tw_last_error()); /* metrics that give no feature: said, the estimate goes on */
        tw_clear_error();
        memset(set, 0, sizeof *set);
        st = TW_OK;
    } else if (st == TW_OK) {
        counters_clock(x, set);
        st = tw_run_pm_each(run, x->pm.device, set->nmetrics, add_sample, &s);
    }
    /* the windows it was enabled in whether its samples are used or not: the GPU drew more in them */
    if (st == TW_OK) st = tw_run_pm_windows(run, x->pm.device, add_window, &s);
    if (st != TW_OK) tw_est_counter_set_free(set);
    return st;
}

static tw_status analyse(tw_run *run, const char *path, loaded *L, const tw_report_options *o)
{
    tw_status st = run_est_groups(o, &L->patterns, &L->npatterns);
    for (size_t d = 0; st == TW_OK && d < L->ndev; d++)
        st = run_group_feed(&L->dfeed[d], o, &L->gf[d], &L->feeds[d]);
    if (st != TW_OK) return st;
    for (size_t d = 0; d < L->ndev && !cancelled(L->cancel); d++) {
        run_device *x = &L->dev[d];
        tw_est_config c;
        tw_est_config_init(&c);
        c.cancel = L->cancel;
        c.linger_s = o->no_linger ? -1 : 0;
        c.patterns = (const char *const *)L->patterns;
        c.npatterns = L->npatterns;
        x->patterns = c.patterns;
        x->npatterns = c.npatterns;
        c.fit_t1_s = L->exit_s;
        c.power_limit_w = L->devinfo[d].power_limit_w;
        c.idle_before_t0_s = 0.1 * L->spawn_s;
        c.idle_before_t1_s = L->spawn_s;
        c.idle_after_t0_s = L->exit_s + 0.2;
        c.idle_after_t1_s = L->exit_s + L->tail_s - 0.1;
        const tw_profile *prof = x->profile == RUN_PROFILE_MODEL ? &x->prof : NULL;
        tw_est_counter_set cs;
        char why[160];
        st = run_device_counters(run, x, 0, o, &cs, why, sizeof why);
        if (st != TW_OK) return st;
        if (cs.c.n || cs.c.nw) c.counters = &cs.c;
        tw_status est = tw_estimate_trace(path, x->prefix, prof, &L->feeds[d], &c, &x->est, &x->info);
        tw_est_counter_set_free(&cs);
        if (est != TW_OK) {
            snprintf(x->est_error, sizeof x->est_error, "%s", tw_last_error());
            continue;
        }
        if (!x->est->counters.used && !x->est->counters.why[0])
            snprintf(x->est->counters.why, sizeof x->est->counters.why, "%s", why);
        if (tw_methods_run(path, x->prefix, x->est->fit_t0_s, x->est->fit_t1_s, L->cancel, &x->methods) != TW_OK)
            snprintf(x->methods.rc_note, sizeof x->methods.rc_note, "the naive methods failed: %s", tw_last_error());
    }
    return cancelled(L->cancel) ? tw_fail(TW_EINTERRUPTED, "interrupted") : TW_OK;
}

/* Several GPUs: each GPU's events in turn (every track's in order of start),
 * with `device` set to the NVML index of the GPU they were matched to
 * (Perfetto places slices by it), NVTX ranges once; unmeasured events are
 * left out. */
typedef struct placing {
    const loaded *L;
    size_t d;
    tw_feed_fn fn;
    void *ctx;
} placing;

static tw_status place_one(void *arg, const tw_event *in)
{
    placing *p = arg;
    tw_event e = *in;
    bool host = (e.kind && strcmp(e.kind, "nvtx") == 0) || (!(e.device_uuid && *e.device_uuid) && e.device < 0);
    if (host && p->d > 0) return TW_OK; /* every GPU has them: once is enough */
    if (!host) e.device = (int32_t)p->L->devinfo[p->d].index;
    return p->fn(p->ctx, &e);
}

static tw_status placed_replay(const tw_feed *f, unsigned fields, tw_feed_fn fn, void *ctx)
{
    placing p = {f->src, 0, fn, ctx};
    tw_status st = TW_OK;
    for (; st == TW_OK && p.d < p.L->ndev; p.d++)
        st = tw_feed_replay_fields(&p.L->dfeed[p.d], fields | TW_FEED_DEVICE, place_one, &p);
    return st;
}

/* Appends a warning line to L->warn when it fails. */
tw_status run_loaded_perfetto(loaded *L, const char *path)
{
    const char *run_path = L->path;
    perfetto_device *pd = calloc(L->ndev, sizeof *pd);
    const tw_estimate *energy = NULL;
    for (size_t d = 0; pd && d < L->ndev; d++) {
        pd[d] = (perfetto_device){L->dev[d].index, L->dev[d].prefix, L->dev[d].name, L->dev[d].est, &L->feeds[d]};
        if (L->ndev == 1 && L->dev[d].est) energy = L->dev[d].est;
    }
    /* one device: its own events (not renamed for groups), to which the energies belong; several: each under
     * its GPU */
    tw_feed placed = {placed_replay, L, L->nevents};
    const tw_feed *ev = L->ndev == 1 ? &L->dfeed[0] : &placed;
    tw_status st = pd ? perfetto_write(path, run_path, pd, L->ndev, ev, energy, L->provenance)
                      : tw_fail(TW_ENOMEM, "out of memory");
    free(pd);
    if (st == TW_OK) {
        free(L->perfetto);
        L->perfetto = strdup(path);
        return L->perfetto ? TW_OK : tw_fail(TW_ENOMEM, "out of memory");
    }
    char line[1024];
    snprintf(line, sizeof line, "warning: no Perfetto file: %s\n", tw_last_error());
    size_t n = strlen(L->warn) + strlen(line) + 1;
    char *w = realloc(L->warn, n);
    if (w) {
        strcat(w, line);
        L->warn = w;
    }
    return st;
}

/* ---------------------------------------------------------------- groups */

tw_status run_est_groups(const tw_report_options *o, char ***patterns, size_t *n)
{
    size_t total = o->ngroups + o->nrange_groups;
    *patterns = NULL;
    *n = 0;
    if (total == 0) return TW_OK;
    char **p = calloc(total, sizeof *p);
    if (!p) return tw_fail(TW_ENOMEM, "out of memory");
    *patterns = p;
    for (size_t i = 0; i < o->ngroups; i++, (*n)++)
        if (!(p[i] = strdup(o->groups[i]))) return tw_fail(TW_ENOMEM, "out of memory");
    for (size_t k = 0; k < o->nrange_groups; k++, (*n)++) {
        /* "range NAME: *", the range's name with fnmatch's special characters escaped */
        const char *name = o->range_groups[k];
        size_t len = strlen(name);
        char *q = malloc(2 * len + sizeof "range : *");
        if (!q) return tw_fail(TW_ENOMEM, "out of memory");
        char *w = q + sprintf(q, "range ");
        for (const char *c = name; *c; c++) {
            if (strchr("*?[]\\", *c)) *w++ = '\\';
            *w++ = *c;
        }
        strcpy(w, ": *");
        p[o->ngroups + k] = q;
    }
    return TW_OK;
}

static bool is_range(const tw_event *e) { return e->kind && strcmp(e->kind, "nvtx") == 0; }

/* The spans of the ranges of one name, merged where they overlap, by start. */
typedef struct spans {
    double *t; /* start, end, start, end, ... */
    size_t n, cap;
} spans;

static int by_start(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The events renamed for the groups by NVTX range, as a feed over a feed. */
struct group_feed {
    const tw_feed *in;
    char **range; /* the range names asked for (copies: the options may go before the last replay) */
    size_t nrange;
    spans *sp;       /* per range group asked for */
    tw_strmap names; /* "range NAME: name", each once: the addresses stay, replay after replay */
    tw_feed_fn fn;
    void *ctx;
};

void group_feed_free(group_feed *g)
{
    if (!g) return;
    for (size_t k = 0; k < g->nrange; k++) {
        free(g->range[k]);
        if (g->sp) free(g->sp[k].t);
    }
    free(g->range);
    free(g->sp);
    tw_strmap_free(&g->names);
    free(g);
}

static tw_status span_add(spans *s, const tw_event *r)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 16;
        double *t = realloc(s->t, 2 * cap * sizeof *t);
        if (!t) return tw_fail(TW_ENOMEM, "out of memory");
        s->t = t;
        s->cap = cap;
    }
    s->t[2 * s->n] = r->start_s;
    s->t[2 * s->n + 1] = r->end_s;
    s->n++;
    return TW_OK;
}

/* Each range asked for to its name's spans (one replay). */
static tw_status span_one(void *arg, const tw_event *r)
{
    group_feed *g = arg;
    tw_status st = TW_OK;
    for (size_t k = 0; st == TW_OK && is_range(r) && r->name && k < g->nrange; k++)
        if (strcmp(r->name, g->range[k]) == 0) st = span_add(&g->sp[k], r);
    return st;
}

static void spans_merge(spans *s)
{
    qsort(s->t, s->n, 2 * sizeof *s->t, by_start);
    size_t k = 0; /* merge overlaps: the ends then rise with the starts */
    for (size_t i = 0; i < s->n; i++) {
        if (k && s->t[2 * i] <= s->t[2 * k - 1]) {
            s->t[2 * k - 1] = fmax(s->t[2 * k - 1], s->t[2 * i + 1]);
            continue;
        }
        s->t[2 * k] = s->t[2 * i];
        s->t[2 * k + 1] = s->t[2 * i + 1];
        k++;
    }
    s->n = k;
}

/* Whether t lies in one of the spans (a binary search: near-linear over all events). */
static bool spans_hold(const spans *s, double t)
{
    size_t lo = 0, hi = s->n; /* the first span starting after t */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->t[2 * mid] <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo > 0 && t <= s->t[2 * (lo - 1) + 1];
}

static tw_status group_one(void *arg, const tw_event *in)
{
    group_feed *g = arg;
    tw_event e = *in;
    for (size_t k = 0; !is_range(&e) && k < g->nrange; k++) {
        if (!spans_hold(&g->sp[k], e.start_s)) continue;
        char name[1280];
        snprintf(name, sizeof name, "range %s: %s", g->range[k], e.name ? e.name : "");
        bool added; /* the first range name asked for that holds its start */
        if (!tw_strmap_get(&g->names, name, &e.name, &added)) return tw_fail(TW_ENOMEM, "out of memory");
        break;
    }
    return g->fn(g->ctx, &e);
}

static tw_status group_replay(const tw_feed *f, unsigned fields, tw_feed_fn fn, void *ctx)
{
    group_feed *g = f->src;
    g->fn = fn;
    g->ctx = ctx;
    return tw_feed_replay_fields(g->in, fields, group_one, g);
}

tw_status run_group_feed(const tw_feed *in, const tw_report_options *o, group_feed **gf, tw_feed *out)
{
    *gf = NULL;
    *out = *in;
    if (o->nrange_groups == 0) return TW_OK;
    group_feed *g = calloc(1, sizeof *g);
    if (!g) return tw_fail(TW_ENOMEM, "out of memory");
    *g = (group_feed){.in = in};
    *gf = g;
    if (!(g->sp = calloc(o->nrange_groups, sizeof *g->sp)) || !(g->range = calloc(o->nrange_groups, sizeof *g->range)))
        return tw_fail(TW_ENOMEM, "out of memory");
    for (; g->nrange < o->nrange_groups; g->nrange++)
        if (!(g->range[g->nrange] = strdup(o->range_groups[g->nrange]))) return tw_fail(TW_ENOMEM, "out of memory");
    tw_status st = tw_feed_replay_fields(in, TW_FEED_SPAN, span_one, g);
    for (size_t k = 0; st == TW_OK && k < g->nrange; k++)
        spans_merge(&g->sp[k]);
    *out = (tw_feed){group_replay, g, in->hint};
    return st;
}

/* ---------------------------------------------------------------- the report */

static run_record record_of(const loaded *L)
{
    return (run_record){L->argv,        (int)L->exit_status,
                        (int)L->signal, L->child_s,
                        L->backend,     (unsigned long long)L->t0,
                        L->fast_s,      L->slow_s,
                        L->path,        L->perfetto,
                        L->nevents,     L->events_note[0] ? L->events_note : NULL,
                        &L->sampler,    L->dev,
                        L->ndev,        L->spawn_s,
                        L->exit_s,      L->warn,
                        L->provenance};
}

void run_loaded_json(const loaded *L, FILE *f)
{
    run_record r = record_of(L);
    run_report_json(&r, f);
}

void run_loaded_text(const loaded *L, FILE *f)
{
    run_record r = record_of(L);
    run_report_text(&r, f);
}

tw_status run_pick_profiles(tw_run *const *runs, const tw_run_device *const *rdev, run_device *const *dev, size_t n,
                            const char *profile)
{
    tw_profile given;
    char given_how[1200] = "";
    tw_profile_init(&given);
    if (profile) {
        tw_status st = tw_profile_pick(profile, NULL, NULL, &given, given_how, sizeof given_how);
        if (st != TW_OK) return st;
    }
    for (size_t d = 0; d < n; d++) {
        if (profile)
            run_pick_profile(profile, &given, given_how, dev[d]->name, dev[d]->driver, dev[d]);
        else
            run_recorded_profile(runs[d], rdev[d], dev[d]);
    }
    return TW_OK;
}

tw_status tw_run_record_profile(tw_run *run, int index, const char *gpu, const char *driver, const char *given,
                                const tw_profile *given_prof, const char *given_how)
{
    run_device x;
    memset(&x, 0, sizeof x);
    x.index = index;
    run_pick_profile(given, given_prof, given_how, gpu, driver, &x);
    char *text = profile_json(&x);
    tw_status st = tw_run_set_profile(run, index, (int)x.profile, x.profile_how, text);
    free(text);
    return st;
}

static tw_status pick_profiles(tw_run *run, const char *profile, loaded *L)
{
    tw_run **runs = calloc(L->ndev, sizeof *runs);
    const tw_run_device **rdev = calloc(L->ndev, sizeof *rdev);
    run_device **dev = calloc(L->ndev, sizeof *dev);
    tw_status st = runs && rdev && dev ? TW_OK : tw_fail(TW_ENOMEM, "out of memory");
    for (size_t d = 0; st == TW_OK && d < L->ndev; d++) {
        runs[d] = run;
        rdev[d] = &L->rdev[d];
        dev[d] = &L->dev[d];
    }
    if (st == TW_OK) st = run_pick_profiles(runs, rdev, dev, L->ndev, profile);
    free(runs);
    free(rdev);
    free(dev);
    return st;
}

tw_status run_report_load(tw_run *run, const tw_report_options *o, tw_report *r)
{
    loaded *L = calloc(1, sizeof *L);
    if (!L) return tw_fail(TW_ENOMEM, "out of memory");
    r->one = L;
    L->path = tw_run_path(run);
    L->cancel = o->cancel;
    tw_status st = tw_run_commit(run); /* the estimator reads the samples through its own connection */
    if (st == TW_OK) st = load_facts(run, L);
    if (st == TW_OK) st = load_devices(run, L);
    if (st == TW_OK) st = load_activity_counters(run, L);
    if (st == TW_OK) st = load_timeline(run, L);
    if (st == TW_OK) st = pick_profiles(run, o->profile, L);
    if (st == TW_OK) st = analyse(run, L->path, L, o);
    if (st == TW_OK) st = split_warnings(L);
    if (st != TW_OK) return st;
    r->dev = calloc(L->ndev, sizeof *r->dev);
    if (!r->dev) return tw_fail(TW_ENOMEM, "out of memory");
    for (size_t d = 0; d < L->ndev; d++)
        r->dev[d] = &L->dev[d];
    r->ndev = L->ndev;
    r->notice = L->notice;
    return TW_OK;
}
