/* Recording a command into a run file (tw_recording_*, truewatt.h): what
 * `truewatt run` does around the command it starts: the run file created
 * with what is known, the GPUs sampled into it, the injection library's
 * events imported as they come and committed, and the end recorded. The
 * caller starts, waits for and signals the command. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "api/sized.h"
#include "core/error.h"
#include "core/note.h"
#include "correct/profile.h"
#include "correct/profile_pick.h"
#include "exporter/procfile.h"
#include "inject/pm_options.h"
#include "report/run_pipeline.h"
#include "report/run_report.h"
#include "runfile/runfile.h"
#include "runfile/runfile_mig.h"
#include "runfile/runfile_pm.h"
#include "sensor/nvml_mig.h"

#define MAX_MIG 64     /* MIG instances of one GPU (7 at most on an H100) */
#define MAX_DEVICES 64 /* GPUs a backend lists */

struct tw_recording {
    tw_recording_options o; /* its pointers borrowed from the caller's options, valid until close */
    char path[PATH_MAX];
    char *profile_path;
    tw_profile given;     /* the profile every GPU uses (profile_path), loaded first */
    char given_how[1200]; /* tw_profile_pick's line for it */
    tw_run *run;
    tw_sampler *sampler;
    bool stopped;
    tw_run_tail tail;      /* how far the events file is imported */
    char events_note[600]; /* why the timeline is incomplete, or "" */
    bool import_failed;    /* the import stopped (events_note says why) */
    bool skipped_said;     /* lines left out: the first said */
    char *warnings;        /* the caller's, and what the recording added */
};

void tw_recording_options_init(tw_recording_options *o)
{
    memset(o, 0, sizeof *o);
    o->size = sizeof *o;
    o->rank = -1;
    o->world_size = -1;
    o->local_rank = -1;
}

/* Whether the run file's folder can take it (a read-only folder or file system). */
static tw_status folder_writable(const char *run)
{
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", run);
    char *slash = strrchr(dir, '/');
    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else if (slash == dir)
        dir[1] = '\0';
    else
        *slash = '\0';
    if (access(dir, W_OK) == 0) return TW_OK;
    return tw_fail(TW_EIO, "cannot write the run file %s: its folder %s: %s", run, dir, strerror(errno));
}

tw_status tw_recording_new(const char *path, const char *profile, tw_recording **out)
{
    *out = NULL;
    if (!path || !*path) return tw_fail(TW_EINVAL, "tw_recording_new: no run file");
    tw_recording *r = calloc(1, sizeof *r);
    if (!r) return TW_ENOMEM;
    snprintf(r->path, sizeof r->path, "%s", path);
    tw_profile_init(&r->given);
    tw_status st = TW_OK;
    if (profile && !(r->profile_path = strdup(profile))) st = TW_ENOMEM;
    /* a bad profile fails now, not after the command ran */
    if (st == TW_OK && profile) st = tw_profile_pick(profile, NULL, NULL, &r->given, r->given_how, sizeof r->given_how);
    if (st == TW_OK) st = folder_writable(path);
    if (st != TW_OK) {
        free(r->profile_path);
        free(r);
        return st;
    }
    *out = r;
    return TW_OK;
}

/* What the estimator needs to know of the devices, and the profile each
 * uses (the given one, else the one for its GPU and driver). */
static tw_status record_devices(tw_recording *r)
{
    const tw_recording_options *o = &r->o;
    tw_status st = TW_OK;
    for (size_t d = 0; d < o->ndevices && st == TW_OK; d++) {
        const tw_device_info *in = &o->devices[d];
        tw_run_device rd;
        memset(&rd, 0, sizeof rd);
        rd.index = (int)in->index;
        snprintf(rd.uuid, sizeof rd.uuid, "%s", in->uuid);
        snprintf(rd.name, sizeof rd.name, "%s", in->name);
        snprintf(rd.driver, sizeof rd.driver, "%s", in->driver);
        rd.arch = in->arch;
        rd.power_limit_w = in->power_limit_w;
        if (o->ndevices > 1) snprintf(rd.prefix, sizeof rd.prefix, "gpu%u_", in->index);
        const tw_sampler_device *p = r->sampler ? tw_sampler_device_get(r->sampler, d) : NULL;
        rd.fast_period_s = p ? p->fast_period_s : NAN;
        rd.buffer_poll_s = p ? p->buffer_poll_s : NAN;
        rd.slow_period_s = p ? p->slow_period_s : NAN;
        rd.slow_max_period_s = p ? p->slow_max_period_s : NAN;
        rd.sampler_cpu_s = p && r->stopped ? p->cpu_s : NAN;
        snprintf(rd.plan, sizeof rd.plan, "%s", p && p->plan ? p->plan : "");
        st = tw_run_put_device(r->run, &rd);
        if (st != TW_OK || r->sampler) continue; /* the profile once, before the sampler */
        st = tw_run_record_profile(r->run, rd.index, rd.name, rd.driver, r->profile_path, &r->given, r->given_how);
    }
    return st;
}

/* The host, and the rank in a parallel job: the merged report's keys. */
static tw_status record_job(tw_recording *r)
{
    const tw_recording_options *o = &r->o;
    tw_status st = tw_run_set_text(r->run, "host", o->host ? o->host : "");
    if (st != TW_OK || o->rank < 0) return st;
    st = tw_run_set_int(r->run, "rank", o->rank);
    if (st == TW_OK && o->world_size > 0) st = tw_run_set_int(r->run, "world_size", o->world_size);
    if (st == TW_OK && o->local_rank >= 0) st = tw_run_set_int(r->run, "local_rank", o->local_rank);
    if (st == TW_OK) st = tw_run_set_text(r->run, "rank_variable", o->rank_variable ? o->rank_variable : "");
    return st;
}

/* The MIG instances of the sampled GPUs (read, never changed): their kernels
 * carry the instance's UUID, and the report charges them to its GPU. */
static tw_status record_mig(tw_recording *r)
{
    if (strcmp(r->o.backend, "nvml") != 0) return TW_OK;
    tw_status st = TW_OK;
    for (size_t d = 0; d < r->o.ndevices && st == TW_OK; d++) {
        tw_mig_instance mig[MAX_MIG];
        size_t n = 0;
        if (tw_nvml_mig_instances(NULL, r->o.devices[d].index, mig, MAX_MIG, &n) != TW_OK) {
            tw_clear_error(); /* a GPU whose instances cannot be read: as one without */
            continue;
        }
        for (size_t i = 0; i < n && st == TW_OK; i++)
            st = tw_run_put_mig(r->run, &mig[i]);
    }
    return st;
}

/* The facts known before the command starts. */
static tw_status record_start(tw_recording *r)
{
    const tw_recording_options *o = &r->o;
    tw_status st = tw_run_set_text(r->run, "backend", o->backend);
    /* activity counters asked for: the report says why a GPU has none (runfile_pm.h) */
    if (st == TW_OK && o->activity_counters_ms > 0)
        st = tw_run_set_real(r->run, TW_RUN_PM_ASKED_KEY, o->activity_counters_ms);
    if (st == TW_OK) st = tw_run_set_int(r->run, "t0_mono_ns", (int64_t)o->t0_mono_ns);
    if (st == TW_OK) st = tw_run_set_text(r->run, "provenance", o->provenance ? o->provenance : "");
    if (st == TW_OK && o->command) st = tw_run_set_command(r->run, o->command);
    if (st == TW_OK && o->environment) st = tw_run_set_environment(r->run, o->environment);
    if (st == TW_OK) st = record_job(r);
    if (st == TW_OK) st = record_mig(r);
    if (st == TW_OK) st = record_devices(r);
    return st;
}

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

tw_status tw_recording_start(tw_recording *r, const tw_recording_options *o)
{
    if (!r || !o) return tw_fail(TW_EINVAL, "tw_recording_start: NULL argument");
    if (r->run) return tw_fail(TW_EINVAL, "tw_recording_start: already started");
    tw_recording_options_init(&r->o);
    tw_status sized = tw_sized_read(&r->o, sizeof r->o, o, "tw_recording_start: options");
    if (sized != TW_OK) return sized;
    o = &r->o;
    if (!o->devices || !o->ndevices) return tw_fail(TW_EINVAL, "tw_recording_start: no GPUs");
    if (!r->o.backend) r->o.backend = "nvml";
    if (!r->o.t0_mono_ns) r->o.t0_mono_ns = mono_ns();
    if (!(r->warnings = strdup(o->warnings ? o->warnings : ""))) return TW_ENOMEM;
    if (o->events_path && remove(o->events_path) != 0 && errno != ENOENT)
        return tw_fail(TW_EIO, "%s: cannot remove the old events file: %s", o->events_path, strerror(errno));
    tw_run_tail_init(&r->tail);
    tw_status st = tw_run_create(r->path, &r->run);
    if (st == TW_OK) st = record_start(r);
    if (st != TW_OK) return st;
    const char *ids[MAX_DEVICES];
    char idtext[MAX_DEVICES][16];
    size_t n = o->ndevices < MAX_DEVICES ? o->ndevices : MAX_DEVICES;
    for (size_t d = 0; d < n; d++) {
        snprintf(idtext[d], sizeof idtext[d], "%u", o->devices[d].index);
        ids[d] = idtext[d];
    }
    tw_sampler_config sc = {.backend = r->o.backend,
                            .devices = ids,
                            .n_devices = n,
                            .fast_period_s = o->fast_period_s,
                            .slow_period_s = o->slow_period_s,
                            .t0_mono_ns = r->o.t0_mono_ns,
                            .provenance = o->provenance,
                            .profile_path = r->profile_path,
                            .profile_dir = tw_profile_dir(),
                            .run = r->run};
    if ((st = tw_sampler_start(&sc, &r->sampler)) != TW_OK) return st;
    const tw_sampler_device *plan0 = tw_sampler_device_get(r->sampler, 0); /* its plan's periods */
    st = tw_run_set_real(r->run, "fast_period_s", plan0->fast_period_s);
    if (st == TW_OK) st = tw_run_set_real(r->run, "slow_period_s", plan0->slow_period_s);
    if (st == TW_OK) st = record_devices(r);
    return st == TW_OK ? tw_run_commit(r->run) : st;
}

const tw_sampler *tw_recording_sampler(const tw_recording *r) { return r ? r->sampler : NULL; }

tw_run *tw_recording_run(tw_recording *r) { return r ? r->run : NULL; }

tw_status tw_recording_command_started(tw_recording *r, double spawn_s)
{
    return tw_run_set_real(r->run, "spawn_s", spawn_s);
}

/* The events note for lines of the timeline left out (the first said at once). */
static void note_skipped(tw_recording *r)
{
    if (!r->tail.skipped) return;
    if (!r->skipped_said)
        tw_notef(r->o.note, r->o.note_ctx, "warning: a line of the timeline could not be read and is left out: %s",
                 r->tail.first_skipped);
    r->skipped_said = true;
    snprintf(r->events_note, sizeof r->events_note,
             "%lu line(s) of the timeline could not be read and are left out (the first: %s)", r->tail.skipped,
             r->tail.first_skipped);
}

/* Imports what the injection library wrote since the last call; false
 * after an error (said once in the events note; the import stops there)
 * or when lines were left out (the events file is then kept). */
static bool import_events(tw_recording *r)
{
    if (r->import_failed || !r->o.events_path) return !r->import_failed && !r->tail.skipped;
    if (tw_run_import_events(r->run, r->o.events_path, &r->tail) == TW_OK) {
        note_skipped(r);
        return !r->tail.skipped;
    }
    r->import_failed = true;
    snprintf(r->events_note, sizeof r->events_note, "the timeline could not be read: %s", tw_last_error());
    tw_notef(r->o.note, r->o.note_ctx, "%s", r->events_note);
    return false;
}

tw_status tw_recording_sync(tw_recording *r)
{
    import_events(r);
    return tw_run_commit(r->run); /* a failure is kept and said at the end */
}

/* The sampler's lines that say a GPU stopped answering (lost, every read
 * failing), said at once: the report has them among its notes, at the end
 * of a long text. */
static void say_stopped_devices(const tw_recording *r)
{
    const char *notes = tw_sampler_notes(r->sampler);
    for (const char *p = notes; p && *p;) {
        size_t len = strcspn(p, "\n");
        char line[1024];
        snprintf(line, sizeof line, "%.*s", (int)len, p);
        if (strstr(line, " stopped at t = ")) tw_notef(r->o.note, r->o.note_ctx, "warning: %s", line);
        p += len + (p[len] == '\n');
    }
}

/* The facts of the run the report needs, once the command ended. */
static tw_status record_end(tw_recording *r, const tw_recording_end *e)
{
    tw_status st = record_devices(r);
    for (size_t i = 0; st == TW_OK && i < tw_sampler_reading_count(r->sampler); i++)
        st = tw_run_set_reading_stats(r->run, tw_sampler_reading(r->sampler, i)->name,
                                      tw_sampler_reading(r->sampler, i));
    const char *note = r->events_note[0] ? r->events_note : NULL;
    if (!note && r->o.no_events) note = r->o.no_events;
    if (!note && (!r->o.events_path || access(r->o.events_path, F_OK) != 0)) note = "no events were written";
    if (st == TW_OK) st = tw_run_set_int(r->run, "exit_status", e->exit_status);
    if (st == TW_OK) st = tw_run_set_int(r->run, "signal", e->signal);
    if (st == TW_OK) st = tw_run_set_real(r->run, "command_wall_s", e->command_wall_s);
    if (st == TW_OK) st = tw_run_set_real(r->run, "exit_s", e->exit_s);
    if (st == TW_OK) st = tw_run_set_real(r->run, "tail_s", e->tail_s);
    if (st == TW_OK) st = tw_run_set_real(r->run, "sampler_cpu_s", tw_sampler_cpu_s(r->sampler));
    if (st == TW_OK) st = tw_run_set_real(r->run, "sampler_wall_s", tw_sampler_wall_s(r->sampler));
    if (st == TW_OK) st = tw_run_set_real(r->run, "writer_cpu_s", tw_sampler_writer_cpu_s(r->sampler));
    if (st == TW_OK) st = tw_run_set_text(r->run, "sampler_notes", tw_sampler_notes(r->sampler));
    if (st == TW_OK) st = tw_run_set_text(r->run, "warnings", r->warnings);
    if (st == TW_OK) st = tw_run_set_text(r->run, "events_note", note ? note : "");
    if (st == TW_OK) st = tw_run_commit(r->run);
    return st;
}

tw_status tw_recording_finish(tw_recording *r, const tw_recording_end *e_in)
{
    if (!r || !e_in) return tw_fail(TW_EINVAL, "tw_recording_finish: NULL argument");
    tw_recording_end full = {.size = sizeof full, .tail_s = NAN, .command_wall_s = NAN, .exit_s = NAN};
    tw_status sized = tw_sized_read(&full, sizeof full, e_in, "tw_recording_finish: end");
    if (sized != TW_OK) return sized;
    const tw_recording_end *e = &full;
    tw_status st = tw_sampler_stop(r->sampler), sampler_st = st;
    char why[1024] = "";
    if (st != TW_OK) snprintf(why, sizeof why, "%s", tw_last_error());
    r->stopped = true;
    say_stopped_devices(r);
    bool all = import_events(r);
    st = record_end(r, e);
    if (st == TW_OK && all && r->o.events_path) remove(r->o.events_path); /* all of it is in the run file now */
    if (st == TW_OK && sampler_st != TW_OK) return tw_fail(sampler_st, "%s", why);
    return st;
}

tw_status tw_recording_abandon(tw_recording *r, const char *warning)
{
    tw_status st = r->sampler && !r->stopped ? tw_sampler_stop(r->sampler) : TW_OK;
    r->stopped = true;
    if (warning) { /* the command still runs: what it did so far, and why the run has no end */
        import_events(r);
        size_t len = strlen(r->warnings) + strlen(warning) + 2;
        char *w = malloc(len);
        if (!w) return TW_ENOMEM;
        snprintf(w, len, "%s%s\n", r->warnings, warning);
        free(r->warnings);
        r->warnings = w;
        if (st == TW_OK) st = tw_run_set_text(r->run, "warnings", r->warnings);
        if (st == TW_OK) st = tw_run_set_text(r->run, "sampler_notes", tw_sampler_notes(r->sampler));
    }
    return st == TW_OK ? tw_run_commit(r->run) : st;
}

tw_status tw_recording_close(tw_recording *r, bool discard)
{
    if (!r) return TW_OK;
    if (r->sampler && !r->stopped) tw_sampler_stop(r->sampler);
    tw_sampler_free(r->sampler);
    bool made = r->run != NULL;
    tw_status st = tw_run_close(r->run);
    if (made && discard) remove(r->path); /* nothing was measured into it */
    free(r->warnings);
    free(r->profile_path);
    free(r);
    return discard ? TW_OK : st;
}

tw_status tw_proc_report_set_energies(tw_proc_report *p, const tw_report *r)
{
    if (!p || !r) return TW_OK;
    size_t n = tw_report_device_count(r);
    for (size_t k = 0; k < n; k++) {
        tw_report_device dev = {.size = sizeof dev};
        const tw_estimate *est = tw_report_device_estimate(r, k);
        if (tw_report_device_get(r, k, &dev) != TW_OK || !est || est->nnames == 0 || !dev.uuid) {
            tw_clear_error(); /* no kernel or copy recorded: the injection may have failed, 0 J would be a claim */
            continue;
        }
        if (tw_procfile_set_estimate(p, dev.uuid, est, tw_report_device_events(r, k)) != TW_OK)
            tw_clear_error(); /* that GPU without an estimate: the others still count */
    }
    return TW_OK;
}

/* ---------------------------------------------------------------- the GPUs */

/* A backend without a device list (sim): the list's indices as they are, or device 0. */
static tw_status devices_as_listed(const char *list, tw_device_info *out, size_t cap, size_t *n)
{
    char copy[1024];
    snprintf(copy, sizeof copy, "%s", list ? list : "");
    size_t k = 0;
    for (char *save = NULL, *t = strtok_r(copy, ",", &save); t && k < cap; t = strtok_r(NULL, ",", &save)) {
        memset(&out[k], 0, sizeof out[k]);
        out[k].index = (unsigned)strtoul(t, NULL, 10);
        out[k++].power_limit_w = NAN;
    }
    if (k == 0 && cap > 0) {
        memset(&out[0], 0, sizeof out[0]);
        out[0].power_limit_w = NAN;
        k = 1;
    }
    *n = k;
    return TW_OK;
}

tw_status tw_devices_choose(const char *backend, const char *list, const char *cuda_visible, tw_device_info *out,
                            size_t cap, size_t *n, char *note, size_t note_len)
{
    *n = 0;
    if (note_len) note[0] = '\0';
    tw_device_info all[MAX_DEVICES];
    size_t nall = 0;
    if (tw_backend_devices(backend ? backend : "nvml", NULL, all, MAX_DEVICES, &nall) != TW_OK || nall == 0) {
        tw_clear_error();
        return devices_as_listed(list, out, cap, n);
    }
    if (nall > MAX_DEVICES) nall = MAX_DEVICES;
    size_t pos[MAX_DEVICES], k = 0;
    tw_status st = tw_nvml_devices_resolve(NULL, list, cuda_visible, all, nall, pos, MAX_DEVICES, &k, note, note_len);
    if (st != TW_OK) return st;
    for (size_t i = 0; i < k && i < cap; i++)
        out[i] = all[pos[i]];
    *n = k < cap ? k : cap;
    return TW_OK;
}

tw_status tw_activity_windows_check(const char *spec)
{
    uint64_t on_ns, every_ns;
    bool busy;
    if (!twi_pm_parse_windows(spec, &on_ns, &every_ns, &busy))
        return tw_fail(TW_EINVAL,
                       "'%s': ON,EVERY in seconds, 0.1 <= ON < EVERY <= 3600 (e.g. 1,10), or ON,EVERY,busy for "
                       "windows only where the GPU works",
                       spec ? spec : "(null)");
    return TW_OK;
}
