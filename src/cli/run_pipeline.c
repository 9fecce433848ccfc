/* The report of a run file, for `truewatt run` and `truewatt report`: see
 * run_pipeline.h. */
#define _GNU_SOURCE /* open_memstream */
#include "cli/run_pipeline.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/interrupt.h"
#include "cli/profile_pick.h"
#include "cli/run_mig.h"
#include "core/error.h"
#include "correct/identify.h"
#include "report/perfetto.h"
#include "timeline/devices.h"

/* ---------------------------------------------------------------- the sensor profile */

void run_pick_profile(const char *given, const tw_profile *given_prof, const char *given_how, const char *gpu,
                      const char *driver, run_device *x)
{
    tw_profile_init(&x->prof);
    if (given) {
        x->prof = *given_prof;
        snprintf(x->profile_how, sizeof x->profile_how, "%s", given_how);
    } else {
        tw_status st = cli_profile_pick(NULL, gpu, driver, &x->prof, x->profile_how, sizeof x->profile_how);
        if (st == TW_ENOTFOUND) {
            snprintf(x->profile_how, sizeof x->profile_how, "no sensor profile for GPU %s (driver %s) in %s",
                     gpu[0] ? gpu : "(unnamed)", driver[0] ? driver : "unknown", cli_profile_dir());
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

char *run_profile_json(const run_device *x)
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

typedef struct loaded {
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
    tw_events *events;
    tw_events **dev_events;
    tw_unmeasured_summary unmeasured;
    char *warn;           /* warnings + what the split of the timeline found */
    tw_mig_instance *mig; /* MIG instances: their kernels are charged to their GPU */
    size_t nmig;
} loaded;

static void loaded_free(loaded *L)
{
    for (size_t d = 0; d < L->ndev; d++) {
        if (L->dev) tw_estimate_free(L->dev[d].est);
        if (L->dev_events) tw_events_free(L->dev_events[d]);
    }
    tw_unmeasured_summary_free(&L->unmeasured);
    tw_events_free(L->events);
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
    free(L->dev_events);
    free(L->warn);
    free(L->mig);
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
    L->dev_events = calloc(L->ndev, sizeof *L->dev_events);
    if (!L->dev || !L->devinfo || !L->dev_events) return tw_fail(TW_ENOMEM, "out of memory");
    for (size_t d = 0; d < L->ndev; d++) {
        const tw_run_device *r = &L->rdev[d];
        run_device *x = &L->dev[d];
        x->index = r->index;
        snprintf(x->prefix, sizeof x->prefix, "%s", r->prefix);
        snprintf(x->name, sizeof x->name, "%s", r->name);
        snprintf(x->driver, sizeof x->driver, "%s", r->driver);
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

/* The activities, each GPU's matched by UUID; events of GPUs not sampled
 * are counted and warned about, never charged to another GPU. */
static tw_status load_timeline(tw_run *run, loaded *L, const char *cmd)
{
    tw_status st = tw_run_load_events(run, &L->events);
    if (st == TW_OK) st = run_mig_apply(run, &L->events, &L->mig, &L->nmig);
    for (size_t d = 0; d < L->ndev; d++) {
        L->dev[d].mig = L->mig;
        L->dev[d].nmig = L->nmig;
    }
    if (st == TW_OK) st = tw_timeline_split(L->events, L->devinfo, L->ndev, L->dev_events, &L->unmeasured);
    if (st != TW_OK) return st;
    char split[2048] = "";
    tw_unmeasured_describe(&L->unmeasured, split, sizeof split);
    if (L->unmeasured.n) fprintf(stderr, "truewatt %s: %s", cmd, split);
    size_t n = strlen(L->warnings) + strlen(split) + 1;
    if (!(L->warn = malloc(n))) return tw_fail(TW_ENOMEM, "out of memory");
    snprintf(L->warn, n, "%s%s", L->warnings, split);
    return TW_OK;
}

/* ---------------------------------------------------------------- the estimate */

/* The estimator over each device's readings: from the first activity to
 * the command's end (its CUDA context ends with it), idle measured before
 * the command started and after it ended. */
static void analyse(const char *path, loaded *L)
{
    for (size_t d = 0; d < L->ndev && !cli_interrupted; d++) {
        run_device *x = &L->dev[d];
        tw_est_config c;
        tw_est_config_init(&c);
        c.cancel = &cli_interrupted;
        c.fit_t1_s = L->exit_s;
        c.power_limit_w = L->devinfo[d].power_limit_w;
        c.idle_before_t0_s = 0.1 * L->spawn_s;
        c.idle_before_t1_s = L->spawn_s;
        c.idle_after_t0_s = L->exit_s + 0.2;
        c.idle_after_t1_s = L->exit_s + L->tail_s - 0.1;
        const tw_profile *prof = x->profile == RUN_PROFILE_MODEL ? &x->prof : NULL;
        if (tw_estimate_trace(path, x->prefix, prof, L->dev_events[d], &c, &x->est, &x->info) != TW_OK) {
            snprintf(x->est_error, sizeof x->est_error, "%s", tw_last_error());
            continue;
        }
        if (tw_methods_run(path, x->prefix, x->est->fit_t0_s, x->est->fit_t1_s, &cli_interrupted, &x->methods) != TW_OK)
            snprintf(x->methods.rc_note, sizeof x->methods.rc_note, "the naive methods failed: %s", tw_last_error());
    }
}

/* Several GPUs: the events with `device` set to the NVML index of the GPU
 * they were matched to (Perfetto places slices by it), NVTX ranges once;
 * unmeasured events are left out. NULL when out of memory. */
static tw_events *placed_events(const loaded *L)
{
    tw_events *out = NULL;
    if (tw_events_new(&out) != TW_OK) return NULL;
    for (size_t d = 0; d < L->ndev; d++) {
        for (size_t i = 0; i < tw_events_count(L->dev_events[d]); i++) {
            tw_event e = *tw_events_get(L->dev_events[d], i);
            bool host = (e.kind && strcmp(e.kind, "nvtx") == 0) || (!(e.device_uuid && *e.device_uuid) && e.device < 0);
            if (host && d > 0) continue; /* every GPU has them: once is enough */
            if (!host) e.device = (int32_t)L->devinfo[d].index;
            if (tw_events_add(out, &e) != TW_OK) {
                tw_events_free(out);
                return NULL;
            }
        }
    }
    tw_events_sort(out);
    return out;
}

/* Appends a warning line to L->warn when it fails. */
static bool write_perfetto(const char *run_path, const char *path, loaded *L)
{
    perfetto_device *pd = calloc(L->ndev, sizeof *pd);
    const double *energy = NULL;
    for (size_t d = 0; pd && d < L->ndev; d++) {
        pd[d] = (perfetto_device){L->dev[d].index, L->dev[d].prefix, L->dev[d].name, L->dev[d].est, L->dev_events[d]};
        if (L->ndev == 1 && L->dev[d].est) energy = L->dev[d].est->event_energy_j;
    }
    /* one device: its own events, to which the energies belong; several: each under its GPU */
    tw_events *placed = L->ndev > 1 ? placed_events(L) : NULL;
    const tw_events *ev = L->ndev == 1 ? L->dev_events[0] : placed;
    tw_status st = ev && pd ? perfetto_write(path, run_path, pd, L->ndev, ev, energy, L->provenance)
                            : tw_fail(TW_ENOMEM, "out of memory");
    tw_events_free(placed);
    free(pd);
    if (st == TW_OK) return true;
    char line[1024];
    snprintf(line, sizeof line, "warning: no Perfetto file: %s\n", tw_last_error());
    size_t n = strlen(L->warn) + strlen(line) + 1;
    char *w = realloc(L->warn, n);
    if (w) {
        strcat(w, line);
        L->warn = w;
    }
    return false;
}

/* ---------------------------------------------------------------- the report */

/* The report as JSON text (malloc'ed), NULL when out of memory. */
static char *json_text(const run_record *r)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f) return NULL;
    run_report_json(r, f);
    if (fclose(f) != 0) {
        free(text);
        return NULL;
    }
    return text;
}

int run_pick_profiles(tw_run *const *runs, const tw_run_device *const *rdev, run_device *const *dev, size_t n,
                      const run_report_opts *o)
{
    tw_profile given;
    char given_how[1200] = "";
    tw_profile_init(&given);
    if (o->profile) {
        tw_status st = cli_profile_pick(o->profile, NULL, NULL, &given, given_how, sizeof given_how);
        if (st != TW_OK) return cli_fail(o->cmd, st);
    }
    for (size_t d = 0; d < n; d++) {
        if (o->profile)
            run_pick_profile(o->profile, &given, given_how, dev[d]->name, dev[d]->driver, dev[d]);
        else
            run_recorded_profile(runs[d], rdev[d], dev[d]);
    }
    return 0;
}

static int pick_profiles(tw_run *run, const run_report_opts *o, loaded *L)
{
    tw_run **runs = calloc(L->ndev, sizeof *runs);
    const tw_run_device **rdev = calloc(L->ndev, sizeof *rdev);
    run_device **dev = calloc(L->ndev, sizeof *dev);
    int rc = runs && rdev && dev ? 0 : cli_fail(o->cmd, tw_fail(TW_ENOMEM, "out of memory"));
    for (size_t d = 0; !rc && d < L->ndev; d++) {
        runs[d] = run;
        rdev[d] = &L->rdev[d];
        dev[d] = &L->dev[d];
    }
    if (!rc) rc = run_pick_profiles(runs, rdev, dev, L->ndev, o);
    free(runs);
    free(rdev);
    free(dev);
    return rc;
}

int run_report_file(tw_run *run, const run_report_opts *o, FILE *out)
{
    loaded L;
    memset(&L, 0, sizeof L);
    const char *path = tw_run_path(run);
    tw_status st = tw_run_commit(run); /* the estimator reads the samples through its own connection */
    if (st == TW_OK) st = load_facts(run, &L);
    if (st == TW_OK) st = load_devices(run, &L);
    if (st == TW_OK) st = load_timeline(run, &L, o->cmd);
    int rc = st != TW_OK ? cli_fail(o->cmd, st) : pick_profiles(run, o, &L);
    if (rc) {
        loaded_free(&L);
        return rc;
    }
    analyse(path, &L);
    if (cli_interrupted) {
        fprintf(stderr, "truewatt %s: interrupted; no report, the run is in %s\n", o->cmd, path);
        loaded_free(&L);
        return CLI_EXIT_INTERRUPTED;
    }
    bool perfetto = o->perfetto && write_perfetto(path, o->perfetto, &L);
    run_record r = {L.argv,
                    (int)L.exit_status,
                    (int)L.signal,
                    L.child_s,
                    L.backend,
                    (unsigned long long)L.t0,
                    L.fast_s,
                    L.slow_s,
                    path,
                    perfetto ? o->perfetto : NULL,
                    tw_events_count(L.events),
                    L.events_note[0] ? L.events_note : NULL,
                    &L.sampler,
                    L.dev,
                    L.ndev,
                    L.spawn_s,
                    L.exit_s,
                    L.warn,
                    L.provenance};
    char *report = json_text(&r);
    if (!report) {
        loaded_free(&L);
        return cli_fail(o->cmd, tw_fail(TW_ENOMEM, "out of memory"));
    }
    if (o->json)
        fputs(report, out);
    else
        run_report_text(&r, out);
    fflush(out);
    if (o->on_devices) o->on_devices(o->user, L.dev, L.ndev);
    st = tw_run_add_report(run, o->options, report);
    if (st != TW_OK)
        fprintf(stderr, "truewatt %s: warning: the report is not kept in %s: %s\n", o->cmd, path, tw_last_error());
    free(report);
    loaded_free(&L);
    return 0;
}
