/* A session's run file (recorder.h). */
#define _GNU_SOURCE /* syscall */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "api/recorder.h"
#include "core/error.h"
#include "correct/profile_pick.h"
#include "inject/demangle.h"
#include "inject/nvtx_ranges.h"
#include "report/run_pipeline.h"
#include "runfile/runfile.h"

struct tw_recorder {
    tw_run *run;
    char *events;       /* the events file's path */
    int fd;             /* it, for appending */
    pthread_mutex_t mu; /* buf, fd, the import */
    twi_buf buf;        /* lines not yet written */
    twi_clock mono;     /* the regions' clock: CLOCK_MONOTONIC itself */
    twi_demangler *dm;  /* the kernel tracer's thread only */
    tw_run_tail tail;   /* the import's progress */
    uint64_t last_sync_ns;
    tw_status err; /* the first failure, kept */
    char errmsg[512];
    size_t ndev;
    tw_run_device *rd;
};

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void keep_error(tw_recorder *r, tw_status st)
{
    if (st == TW_OK || r->err != TW_OK) return;
    r->err = st;
    snprintf(r->errmsg, sizeof r->errmsg, "%s", tw_last_error());
}

/* Under r->mu: the buffered lines to the events file. */
static void write_lines(tw_recorder *r)
{
    size_t off = 0;
    while (off < r->buf.len) {
        ssize_t n = write(r->fd, r->buf.p + off, r->buf.len - off);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            keep_error(r, tw_fail(TW_EIO, "%s: write failed: %s", r->events, n < 0 ? strerror(errno) : "no progress"));
            break;
        }
        off += (size_t)n;
    }
    r->buf.len = 0;
}

static tw_status open_events(tw_recorder *r, const char *path)
{
    size_t len = strlen(path) + sizeof ".events.csv";
    r->events = malloc(len);
    if (!r->events) return tw_fail(TW_ENOMEM, "out of memory");
    snprintf(r->events, len, "%s.events.csv", path);
    r->fd = open(r->events, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (r->fd < 0) return tw_fail(TW_EIO, "%s: cannot create: %s", r->events, strerror(errno));
    const char *h = TWI_CSV_HEADER;
    if (write(r->fd, h, strlen(h)) != (ssize_t)strlen(h))
        return tw_fail(TW_EIO, "%s: cannot write: %s", r->events, strerror(errno));
    return TW_OK;
}

/* What the report needs to know of the GPUs; again at the close with the sampler's. */
static tw_status put_devices(tw_recorder *r, const tw_sampler *smp)
{
    tw_status st = TW_OK;
    for (size_t d = 0; d < r->ndev && st == TW_OK; d++) {
        tw_run_device *x = &r->rd[d];
        const tw_sampler_device *p = smp ? tw_sampler_device_get(smp, d) : NULL;
        if (p) {
            x->fast_period_s = p->fast_period_s;
            x->buffer_poll_s = p->buffer_poll_s;
            x->slow_period_s = p->slow_period_s;
            x->slow_max_period_s = p->slow_max_period_s;
            x->sampler_cpu_s = p->cpu_s;
            snprintf(x->plan, sizeof x->plan, "%s", p->plan ? p->plan : "");
        }
        st = tw_run_put_device(r->run, x);
    }
    return st;
}

/* The measured command: this program's own command line (/proc/self/cmdline;
 * its name alone elsewhere). */
static tw_status record_command(tw_run *run)
{
    char buf[4096];
    size_t len = 0;
    FILE *f = fopen("/proc/self/cmdline", "rb");
    if (f) {
        len = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
    }
    buf[len] = '\0';
    char *argv[64];
    size_t n = 0;
    for (size_t at = 0; at < len && n < 63; at += strlen(buf + at) + 1)
        argv[n++] = buf + at;
    if (n == 0) argv[n++] = "(a program with a truewatt session)";
    argv[n] = NULL;
    return tw_run_set_command(run, argv);
}

static tw_status record_start(tw_recorder *r, const tw_recorder_config *c)
{
    char prov[512];
    snprintf(prov, sizeof prov, "recorded by a truewatt session (tw_session_open with run_path); truewatt %s",
             tw_version());
    tw_status st = tw_run_set_text(r->run, "backend", c->backend);
    if (st == TW_OK) st = tw_run_set_int(r->run, "t0_mono_ns", (int64_t)c->t0_mono_ns);
    if (st == TW_OK) st = tw_run_set_text(r->run, "provenance", prov);
    if (st == TW_OK) st = record_command(r->run);
    /* the "command" is the program from the session's open (t = 0) to its
     * close: a program killed before the close is reported up to the last
     * commit, as a killed `truewatt run` */
    if (st == TW_OK) st = tw_run_set_real(r->run, "spawn_s", 0.0);
    if (st == TW_OK) st = tw_run_set_text(r->run, "warnings", "");
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    if (st == TW_OK) st = tw_run_set_text(r->run, "host", host);
    tw_profile given;
    tw_profile_init(&given);
    char how[1200] = "";
    if (st == TW_OK && c->profile_path) st = tw_profile_pick(c->profile_path, NULL, NULL, &given, how, sizeof how);
    for (size_t d = 0; d < c->ndev && st == TW_OK; d++) {
        tw_run_device *x = &r->rd[d];
        const tw_device_info *i = &c->dev[d];
        x->index = (int)i->index;
        snprintf(x->uuid, sizeof x->uuid, "%s", i->uuid);
        snprintf(x->name, sizeof x->name, "%s", i->name);
        snprintf(x->driver, sizeof x->driver, "%s", i->driver);
        x->arch = i->arch;
        x->power_limit_w = i->power_limit_w;
        snprintf(x->prefix, sizeof x->prefix, "%s", c->prefix[d]);
        x->fast_period_s = x->buffer_poll_s = x->slow_period_s = x->slow_max_period_s = x->sampler_cpu_s = NAN;
        st = tw_run_put_device(r->run, x);
        if (st == TW_OK)
            st = tw_run_record_profile(r->run, x->index, x->name, x->driver, c->profile_path,
                                       c->profile_path ? &given : NULL, how);
    }
    return st == TW_OK ? tw_run_commit(r->run) : st;
}

static void recorder_free(tw_recorder *r)
{
    if (r->fd >= 0) close(r->fd);
    tw_run_close(r->run);
    twi_buf_free(&r->buf);
    twi_demangler_free(r->dm);
    pthread_mutex_destroy(&r->mu);
    free(r->events);
    free(r->rd);
    free(r);
}

tw_status tw_recorder_open(const tw_recorder_config *c, tw_recorder **out)
{
    *out = NULL;
    tw_recorder *r = calloc(1, sizeof *r);
    if (!r) return tw_fail(TW_ENOMEM, "out of memory");
    r->fd = -1;
    pthread_mutex_init(&r->mu, NULL);
    tw_run_tail_init(&r->tail);
    r->ndev = c->ndev;
    r->rd = calloc(c->ndev ? c->ndev : 1, sizeof *r->rd);
    r->dm = twi_demangler_new(0);
    r->mono.t0_mono_ns = c->t0_mono_ns;
    tw_status st = r->rd && r->dm ? TW_OK : tw_fail(TW_ENOMEM, "out of memory");
    if (st == TW_OK) st = tw_run_create(c->path, &r->run);
    if (st == TW_OK) st = open_events(r, c->path);
    if (st == TW_OK) st = record_start(r, c);
    if (st != TW_OK) {
        recorder_free(r);
        return st;
    }
    r->last_sync_ns = mono_ns();
    *out = r;
    return TW_OK;
}

tw_run *tw_recorder_run(tw_recorder *r) { return r ? r->run : NULL; }

void tw_recorder_region(tw_recorder *r, const char *name, double t0, double t1)
{
    twi_record rec;
    uint64_t a = r->mono.t0_mono_ns + (uint64_t)llround(fmax(t0, 0) * 1e9);
    uint64_t b = r->mono.t0_mono_ns + (uint64_t)llround(fmax(t1, 0) * 1e9);
    twi_nvtx_record(&rec, name, "", (int64_t)syscall(SYS_gettid), 0, a, b);
    pthread_mutex_lock(&r->mu);
    if (!twi_append_line(&r->buf, &rec, &r->mono, NULL))
        keep_error(r, tw_fail(TW_ENOMEM, "out of memory: region '%s' not recorded", name));
    pthread_mutex_unlock(&r->mu);
}

void tw_recorder_activity(tw_recorder *r, const twi_record *rec, const twi_clock *c)
{
    pthread_mutex_lock(&r->mu);
    if (!twi_append_line(&r->buf, rec, c, r->dm)) keep_error(r, tw_fail(TW_ENOMEM, "out of memory: an event lost"));
    pthread_mutex_unlock(&r->mu);
}

void tw_recorder_sync(tw_recorder *r, bool forced)
{
    uint64_t now = mono_ns();
    if (!forced && (double)(now - r->last_sync_ns) < 1e9 * TW_RUN_COMMIT_S) return;
    r->last_sync_ns = now;
    pthread_mutex_lock(&r->mu);
    write_lines(r);
    keep_error(r, tw_run_import_events(r->run, r->events, &r->tail));
    if (r->tail.skipped) /* said when the session closes, as its other errors are */
        keep_error(r,
                   tw_fail(TW_EPARSE, "%lu line(s) of the timeline could not be read and are left out (the first: %s)",
                           r->tail.skipped, r->tail.first_skipped));
    pthread_mutex_unlock(&r->mu);
    keep_error(r, tw_run_commit(r->run)); /* the sampler's samples too */
}

tw_status tw_recorder_close(tw_recorder *r, const tw_sampler *smp)
{
    if (!r) return TW_OK;
    tw_recorder_sync(r, true);
    tw_status st = put_devices(r, smp);
    for (size_t i = 0; smp && st == TW_OK && i < tw_sampler_reading_count(smp); i++)
        st = tw_run_set_reading_stats(r->run, tw_sampler_reading(smp, i)->name, tw_sampler_reading(smp, i));
    if (st == TW_OK && smp) st = tw_run_set_real(r->run, "sampler_cpu_s", tw_sampler_cpu_s(smp));
    if (st == TW_OK && smp) st = tw_run_set_real(r->run, "sampler_wall_s", tw_sampler_wall_s(smp));
    if (st == TW_OK && smp) st = tw_run_set_text(r->run, "sampler_notes", tw_sampler_notes(smp));
    if (st == TW_OK) st = tw_run_set_text(r->run, "events_note", "");
    const tw_sampler_device *p0 = smp && r->ndev ? tw_sampler_device_get(smp, 0) : NULL;
    if (st == TW_OK && p0) st = tw_run_set_real(r->run, "fast_period_s", p0->fast_period_s);
    if (st == TW_OK && p0) st = tw_run_set_real(r->run, "slow_period_s", p0->slow_period_s);
    double end_s = 1e-9 * (double)(mono_ns() - r->mono.t0_mono_ns);
    if (st == TW_OK) st = tw_run_set_int(r->run, "exit_status", 0);
    if (st == TW_OK) st = tw_run_set_int(r->run, "signal", 0);
    if (st == TW_OK) st = tw_run_set_real(r->run, "command_wall_s", end_s);
    if (st == TW_OK) st = tw_run_set_real(r->run, "exit_s", end_s);
    if (st == TW_OK) st = tw_run_set_real(r->run, "tail_s", 0.0);
    if (st == TW_OK) st = tw_run_commit(r->run);
    keep_error(r, st);
    st = r->err;
    char msg[512];
    snprintf(msg, sizeof msg, "%s", r->errmsg);
    recorder_free(r);
    return st == TW_OK ? TW_OK : tw_fail(st, "%s", msg);
}
