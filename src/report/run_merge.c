/* The merged report of several run files: see run_merge.h. */
#include "report/run_merge.h"
#include "report/run_pipeline.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "correct/profile_pick.h"
#include "report/run_mig.h"
#include "core/error.h"
#include "core/json.h"
#include "report/table.h"
#include "estimate/counters.h"
#include "timeline/devices.h"

#define TEXT_ROWS 40 /* longest kernel table in the text report; JSON has every row */

/* One run file: one rank. */
typedef struct merge_file {
    const char *path;
    tw_run *run;
    int rank; /* -1: the run file records none */
    char label[32];
    char *host;
    int64_t t0_ns, world_size, exit_status;
    double spawn_s, exit_s, tail_s;
    bool unfinished;
    char **argv;
    tw_run_device *rdev;
    size_t ndev;
    tw_events *events;
    tw_mig_instance *mig; /* its MIG instances: their kernels go to their GPU as "MIG n: name" */
    size_t nmig;
} merge_file;

/* One GPU of the job: a host and a UUID, counted once. */
typedef struct merge_gpu {
    const char *host, *uuid;
    size_t owner;     /* the file whose samples give its energy (lowest rank that sampled it) */
    size_t owner_dev; /* its device in that file */
    run_device dev;   /* the estimate over the owner's samples */
    tw_events *events;
    double fit_t1_s;
    char sampled_by[256], ranks[256]; /* labels: the files that sampled it; those whose kernels ran on it */
} merge_gpu;

struct run_merged {
    const volatile int *cancel;
    const tw_report_options *opts; /* the caller's (--no-activity-counters) */
    const char *const *patterns;   /* the groups asked for (the caller's) */
    size_t npatterns;
    merge_file *f;
    size_t nf;
    merge_gpu *g;
    size_t ng;
    char *warn;
    size_t warn_len;
};
typedef run_merged merge;

static void warn_line(merge *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void warn_line(merge *m, const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    size_t n = strlen(line);
    char *w = realloc(m->warn, m->warn_len + n + 2);
    if (!w) return;
    memcpy(w + m->warn_len, line, n);
    w[m->warn_len + n] = '\n';
    w[m->warn_len + n + 1] = '\0';
    m->warn = w;
    m->warn_len += n + 1;
}

void run_merged_free(merge *m)
{
    if (!m) return;
    for (size_t i = 0; i < m->nf; i++) {
        merge_file *f = &m->f[i];
        tw_run_close(f->run);
        free(f->host);
        tw_run_free_strv(f->argv);
        free(f->rdev);
        tw_events_free(f->events);
        free(f->mig);
    }
    for (size_t k = 0; k < m->ng; k++) {
        tw_estimate_free(m->g[k].dev.est);
        tw_events_free(m->g[k].events);
    }
    free(m->f);
    free(m->g);
    free(m->warn);
    free(m);
}

/* ---------------------------------------------------------------- loading */

static tw_status load_file(merge_file *f, merge *m)
{
    tw_status st = tw_run_open(f->path, &f->run);
    if (st == TW_OK) st = tw_run_get_command(f->run, &f->argv);
    if (st != TW_OK) return st;
    if (!f->argv[0]) return tw_fail(TW_EEMPTY, "%s: no command recorded (not a run of truewatt run?)", f->path);
    int64_t v;
    f->rank = tw_run_get_int(f->run, "rank", &v) == TW_OK ? (int)v : -1;
    f->world_size = tw_run_get_int(f->run, "world_size", &v) == TW_OK ? v : 0;
    f->exit_status = tw_run_get_int(f->run, "exit_status", &v) == TW_OK ? v : -1;
    f->t0_ns = tw_run_get_int(f->run, "t0_mono_ns", &v) == TW_OK ? v : 0;
    if (tw_run_get_text(f->run, "host", &f->host) != TW_OK) {
        free(f->host);
        f->host = strdup(""); /* recorded before hosts were: all such files are taken as one host */
    }
    tw_clear_error();
    if (!f->host) return tw_fail(TW_ENOMEM, "out of memory");
    f->spawn_s = tw_run_get_real(f->run, "spawn_s");
    f->exit_s = tw_run_get_real(f->run, "exit_s");
    f->tail_s = tw_run_get_real(f->run, "tail_s");
    if (isnan(f->exit_s)) { /* truewatt did not finish it: up to its last commit */
        f->exit_s = tw_run_last_poll_s(f->run);
        f->tail_s = 0;
        f->unfinished = true;
        if (isnan(f->exit_s) || isnan(f->spawn_s))
            return tw_fail(TW_EEMPTY, "%s: the run ended before its command started: nothing to report", f->path);
        warn_line(m, "warning: %s: truewatt did not finish this run (killed?): reported up to its last commit",
                  f->path);
    }
    st = tw_run_devices(f->run, &f->rdev, &f->ndev);
    if (st == TW_OK && f->ndev == 0) st = tw_fail(TW_EEMPTY, "%s: no device recorded", f->path);
    if (st == TW_OK) st = tw_run_load_events(f->run, &f->events);
    if (st == TW_OK) st = run_mig_apply(f->run, &f->events, &f->mig, &f->nmig);
    return st;
}

static int by_rank(const void *a, const void *b)
{
    const merge_file *x = a, *y = b;
    /* files with a rank first, in rank order; the others in the order given (stable by path position) */
    if ((x->rank < 0) != (y->rank < 0)) return x->rank < 0 ? 1 : -1;
    if (x->rank != y->rank) return x->rank < y->rank ? -1 : 1;
    return x->path < y->path ? -1 : x->path > y->path;
}

/* Two files of one rank: two runs mixed up (or one file given twice). */
static tw_status check_ranks(const merge *m)
{
    for (size_t i = 0; i < m->nf; i++)
        for (size_t k = i + 1; k < m->nf; k++)
            if (strcmp(m->f[i].path, m->f[k].path) == 0) return tw_fail(TW_EINVAL, "%s is given twice", m->f[i].path);
    for (size_t i = 1; i < m->nf; i++)
        if (m->f[i].rank >= 0 && m->f[i].rank == m->f[i - 1].rank)
            return tw_fail(TW_EINVAL, "%s and %s are both rank %d: give one run file per rank, of one job",
                           m->f[i - 1].path, m->f[i].path, m->f[i].rank);
    return TW_OK;
}

/* The files, in rank order. */
static tw_status load_files(const char *const *paths, size_t n, merge *m)
{
    m->f = calloc(n, sizeof *m->f);
    if (!m->f) return tw_fail(TW_ENOMEM, "out of memory");
    m->nf = n;
    for (size_t i = 0; i < n; i++)
        m->f[i].path = paths[i];
    for (size_t i = 0; i < n; i++) {
        tw_status st = load_file(&m->f[i], m);
        if (st != TW_OK) return st;
    }
    qsort(m->f, n, sizeof *m->f, by_rank);
    for (size_t i = 0; i < n; i++) {
        merge_file *f = &m->f[i];
        if (f->rank >= 0)
            snprintf(f->label, sizeof f->label, "rank %d", f->rank);
        else
            snprintf(f->label, sizeof f->label, "run %zu", i);
    }
    tw_status st = check_ranks(m);
    int64_t size = m->f[0].world_size;
    if (st == TW_OK && size > 0 && (int64_t)n != size)
        warn_line(m, "warning: %zu run files for a job of %lld ranks: the ranks missing are not in this report", n,
                  (long long)size);
    return st;
}

/* The GPU with this host and UUID, or m->ng. */
static size_t find_gpu(const merge *m, const char *host, const char *uuid)
{
    for (size_t k = 0; k < m->ng; k++)
        if (strcmp(m->g[k].host, host) == 0 && strcasecmp(m->g[k].uuid, uuid) == 0) return k;
    return m->ng;
}

static void append_label(char *buf, size_t cap, const char *label)
{
    size_t used = strlen(buf);
    if (strstr(buf, label)) return;
    snprintf(buf + used, cap - used, "%s%s", used ? ", " : "", label);
}

/* The GPUs: each (host, UUID) once, its owner the first file (lowest rank) that sampled it. */
static tw_status find_gpus(merge *m)
{
    size_t cap = 0;
    for (size_t i = 0; i < m->nf; i++)
        cap += m->f[i].ndev;
    m->g = calloc(cap, sizeof *m->g);
    if (!m->g) return tw_fail(TW_ENOMEM, "out of memory");
    for (size_t i = 0; i < m->nf; i++) {
        merge_file *f = &m->f[i];
        for (size_t d = 0; d < f->ndev; d++) {
            if (!f->rdev[d].uuid[0])
                return tw_fail(TW_EINVAL, "%s: GPU %d has no UUID: runs cannot be merged without one", f->path,
                               f->rdev[d].index);
            size_t k = find_gpu(m, f->host, f->rdev[d].uuid);
            if (k == m->ng) {
                merge_gpu *g = &m->g[m->ng++];
                g->host = f->host;
                g->uuid = f->rdev[d].uuid;
                g->owner = i;
                g->owner_dev = d;
            }
            append_label(m->g[k].sampled_by, sizeof m->g[k].sampled_by, f->label);
        }
    }
    return TW_OK;
}

/* ---------------------------------------------------------------- the timelines */

static bool host_event(const tw_event *e)
{
    return (e->kind && strcmp(e->kind, "nvtx") == 0) || (!(e->device_uuid && *e->device_uuid) && e->device < 0);
}

static bool sampled(const merge_file *f, const char *uuid)
{
    for (size_t d = 0; d < f->ndev; d++)
        if (strcasecmp(f->rdev[d].uuid, uuid) == 0) return true;
    return false;
}

/* The devices of f's host that any file sampled, as the split takes them. */
static size_t host_devices(const merge *m, const merge_file *f, tw_device_info *info, size_t *gpu_of)
{
    size_t n = 0;
    for (size_t k = 0; k < m->ng; k++) {
        if (strcmp(m->g[k].host, f->host) != 0) continue;
        const tw_run_device *r = &m->f[m->g[k].owner].rdev[m->g[k].owner_dev];
        memset(&info[n], 0, sizeof info[n]);
        info[n].index = (unsigned)r->index;
        snprintf(info[n].uuid, sizeof info[n].uuid, "%s", r->uuid);
        gpu_of[n++] = k;
    }
    return n;
}

/* f's events of GPU k onto its owner's timeline, each name "LABEL: name";
 * f's host activity (NVTX) only on the GPUs f sampled itself. */
static tw_status add_events(merge *m, const merge_file *f, size_t k, const tw_events *slot)
{
    merge_gpu *g = &m->g[k];
    double shift = 1e-9 * (double)(f->t0_ns - m->f[g->owner].t0_ns);
    bool own = sampled(f, g->uuid), any = false;
    for (size_t i = 0; i < tw_events_count(slot); i++) {
        tw_event e = *tw_events_get(slot, i);
        bool host = host_event(&e);
        if (host && !own) continue;
        char name[1024];
        snprintf(name, sizeof name, "%s: %s", f->label, e.name ? e.name : "");
        e.name = name;
        e.start_s += shift;
        e.end_s += shift;
        tw_status st = tw_events_add(g->events, &e);
        if (st != TW_OK) return st;
        any = any || !host;
    }
    if (any) append_label(g->ranks, sizeof g->ranks, f->label);
    double end = f->exit_s + shift;
    if ((any || own) && end > g->fit_t1_s) g->fit_t1_s = end;
    return TW_OK;
}

/* Every file's events to the GPUs they ran on; those of GPUs no file sampled are warned about. */
static tw_status split_timelines(merge *m)
{
    for (size_t k = 0; k < m->ng; k++) {
        tw_status st = tw_events_new(&m->g[k].events);
        if (st != TW_OK) return st;
        m->g[k].fit_t1_s = -INFINITY;
    }
    tw_device_info *info = calloc(m->ng, sizeof *info);
    size_t *gpu_of = calloc(m->ng, sizeof *gpu_of);
    tw_events **slot = calloc(m->ng, sizeof *slot);
    tw_status st = info && gpu_of && slot ? TW_OK : tw_fail(TW_ENOMEM, "out of memory");
    for (size_t i = 0; st == TW_OK && i < m->nf; i++) {
        merge_file *f = &m->f[i];
        size_t n = host_devices(m, f, info, gpu_of);
        tw_unmeasured_summary unm;
        memset(&unm, 0, sizeof unm);
        st = tw_timeline_split(f->events, info, n, slot, &unm);
        for (size_t s = 0; s < n && st == TW_OK; s++)
            st = add_events(m, f, gpu_of[s], slot[s]);
        for (size_t s = 0; s < n; s++) {
            tw_events_free(slot[s]);
            slot[s] = NULL;
        }
        if (unm.n) {
            char text[2048] = "";
            tw_unmeasured_describe(&unm, text, sizeof text);
            text[strcspn(text, "\n")] = '\0';
            warn_line(m, "%s (%s, %s)", text, f->label, f->path);
        }
        tw_unmeasured_summary_free(&unm);
    }
    for (size_t k = 0; st == TW_OK && k < m->ng; k++)
        tw_events_sort(m->g[k].events);
    free(info);
    free(gpu_of);
    free(slot);
    return st;
}

/* ---------------------------------------------------------------- the estimate */

static tw_status pick_profiles(merge *m, const char *profile)
{
    tw_run **runs = calloc(m->ng ? m->ng : 1, sizeof *runs);
    const tw_run_device **rdev = calloc(m->ng ? m->ng : 1, sizeof *rdev);
    run_device **dev = calloc(m->ng ? m->ng : 1, sizeof *dev);
    tw_status st = runs && rdev && dev ? TW_OK : tw_fail(TW_ENOMEM, "out of memory");
    for (size_t k = 0; st == TW_OK && k < m->ng; k++) {
        merge_gpu *g = &m->g[k];
        const tw_run_device *r = &m->f[g->owner].rdev[g->owner_dev];
        run_device *x = &g->dev;
        x->index = r->index;
        snprintf(x->prefix, sizeof x->prefix, "%s", r->prefix);
        snprintf(x->name, sizeof x->name, "%s", r->name);
        snprintf(x->driver, sizeof x->driver, "%s", r->driver);
        x->uuid = g->uuid;
        x->events = g->events;
        runs[k] = m->f[g->owner].run;
        rdev[k] = r;
        dev[k] = x;
    }
    if (st == TW_OK) st = run_pick_profiles(runs, rdev, dev, m->ng, profile);
    free(runs);
    free(rdev);
    free(dev);
    return st;
}

/* Each GPU's estimate over its owner's samples: from the first activity to
 * the last end of a rank on it, idle before the owner's command and after the
 * last rank's end (when the owner sampled that long). */
/* The first start among g's kernels, copies and memsets (NaN: none). */
static double first_activity(const merge_gpu *g)
{
    double t = NAN;
    for (size_t i = 0; i < tw_events_count(g->events); i++) {
        const tw_event *e = tw_events_get(g->events, i);
        if (!host_event(e) && !(e->start_s >= t)) t = e->start_s;
    }
    return t;
}

/* The fit span within what the sampling rank sampled (from its t0 to its
 * last sample): another rank's activity outside it is not measured, and said. */
static void fit_span(merge *m, const merge_gpu *g, tw_est_config *c)
{
    const merge_file *f = &m->f[g->owner];
    double last = f->exit_s + f->tail_s, first = first_activity(g);
    c->fit_t1_s = fmin(g->fit_t1_s, last);
    if (g->fit_t1_s > last)
        warn_line(m, "warning: GPU %s: ranks ran on it %.3f s after %s stopped sampling it: that part is not measured",
                  g->uuid, g->fit_t1_s - last, f->label);
    if (first < 0) {
        c->fit_t0_s = 0;
        warn_line(m, "warning: GPU %s: ranks ran on it %.3f s before %s started sampling it: that part is not measured",
                  g->uuid, -first, f->label);
    }
}

static bool cancelled(const merge *m) { return m->cancel && *m->cancel; }

/* The GPU's activity counters: the owner's where it recorded samples of this
 * GPU, else those of the first other rank on its host that did (PM sampling
 * runs once per GPU: in the process whose context set it up first), moved
 * onto the owner's timeline as its kernels are; otherwise what the owner
 * recorded of them, or why there are none. */
static tw_status merged_counters(merge *m, merge_gpu *g, tw_est_counter_set *cs, char *why, size_t cap)
{
    run_device *x = &g->dev;
    size_t from = g->owner;
    tw_status st = run_device_pm(m->f[from].run, x);
    for (size_t i = 0; st == TW_OK && i < m->nf && !(x->pm.on && x->pm.samples); i++) {
        if (i == g->owner || !m->f[i].host || strcmp(m->f[i].host, g->host) != 0) continue;
        tw_run_pm pm;
        bool asked;
        st = run_pm_of(m->f[i].run, g->uuid, &pm, &asked);
        if (st != TW_OK || !asked || !pm.on || !pm.samples) continue;
        x->pm_asked = true;
        x->pm = pm;
        tw_run_pm_text(&x->pm, x->pm_line, sizeof x->pm_line);
        from = i;
    }
    if (st != TW_OK) return st;
    double shift = 1e-9 * (double)(m->f[from].t0_ns - m->f[g->owner].t0_ns);
    return run_device_counters(m->f[from].run, x, shift, m->opts, cs, why, cap);
}

static tw_status analyse(merge *m)
{
    for (size_t k = 0; k < m->ng && !cancelled(m); k++) {
        merge_gpu *g = &m->g[k];
        const merge_file *f = &m->f[g->owner];
        run_device *x = &g->dev;
        tw_est_config c;
        tw_est_config_init(&c);
        c.cancel = m->cancel;
        c.linger_s = m->opts->no_linger ? -1 : 0;
        c.patterns = m->patterns;
        c.npatterns = m->npatterns;
        x->patterns = m->patterns;
        x->npatterns = m->npatterns;
        double last = f->exit_s + f->tail_s;
        fit_span(m, g, &c);
        c.power_limit_w = f->rdev[g->owner_dev].power_limit_w;
        c.idle_before_t0_s = 0.1 * f->spawn_s;
        c.idle_before_t1_s = f->spawn_s;
        if (c.fit_t1_s + 0.2 < last - 0.1) {
            c.idle_after_t0_s = c.fit_t1_s + 0.2;
            c.idle_after_t1_s = last - 0.1;
        }
        const tw_profile *prof = x->profile == RUN_PROFILE_MODEL ? &x->prof : NULL;
        tw_feed feed = tw_feed_of_events(g->events);
        tw_est_counter_set cs;
        char why[160];
        tw_status st = merged_counters(m, g, &cs, why, sizeof why);
        if (st != TW_OK) return st;
        if (cs.c.n || cs.c.nw) c.counters = &cs.c;
        tw_status est = tw_estimate_trace(f->path, x->prefix, prof, &feed, &c, &x->est, &x->info);
        tw_est_counter_set_free(&cs);
        if (est != TW_OK) {
            snprintf(x->est_error, sizeof x->est_error, "%s", tw_last_error());
            continue;
        }
        if (!x->est->counters.used && !x->est->counters.why[0])
            snprintf(x->est->counters.why, sizeof x->est->counters.why, "%s", why);
        if (tw_methods_run(f->path, x->prefix, x->est->fit_t0_s, x->est->fit_t1_s, m->cancel, &x->methods) != TW_OK)
            snprintf(x->methods.rc_note, sizeof x->methods.rc_note, "the naive methods failed: %s", tw_last_error());
    }
    return cancelled(m) ? tw_fail(TW_EINTERRUPTED, "interrupted") : TW_OK;
}

/* ---------------------------------------------------------------- per rank */

/* "rank 3: gemm" -> the file of rank 3 and "gemm". */
static const merge_file *name_file(const merge *m, const char *name, const char **rest)
{
    for (size_t i = 0; i < m->nf; i++) {
        size_t n = strlen(m->f[i].label);
        if (strncmp(name, m->f[i].label, n) == 0 && name[n] == ':' && name[n + 1] == ' ') {
            *rest = name + n + 2;
            return &m->f[i];
        }
    }
    *rest = name;
    return NULL;
}

typedef struct rank_sum {
    double kernels_j, copies_j, sd2;
    uint64_t launches;
    size_t unresolved; /* names below resolution, grouped or unobserved: not in the sum */
} rank_sum;

static void rank_sums(const merge *m, rank_sum *sum)
{
    memset(sum, 0, m->nf * sizeof *sum);
    for (size_t k = 0; k < m->ng; k++) {
        const tw_estimate *e = m->g[k].dev.est;
        for (size_t i = 0; e && i < e->nnames; i++) {
            const tw_est_name *x = &e->names[i];
            const char *rest;
            const merge_file *f = name_file(m, x->name, &rest);
            if (!f) continue;
            rank_sum *s = &sum[f - m->f];
            s->launches += x->launches;
            if (x->status != TW_EST_OK) {
                s->unresolved++;
                continue;
            }
            *(strcmp(x->kind, "kernel") == 0 ? &s->kernels_j : &s->copies_j) += x->energy_j;
            s->sd2 += x->energy_sd_j * x->energy_sd_j;
        }
    }
}

/* Each GPU once. */
static run_total sum_gpus(const merge *m)
{
    const run_device **p = calloc(m->ng ? m->ng : 1, sizeof *p);
    run_total t = {.without = m->ng};
    if (!p) return t; /* out of memory: no GPU in the total, and it says so */
    for (size_t k = 0; k < m->ng; k++)
        p[k] = &m->g[k].dev;
    t = run_total_of(p, m->ng);
    free(p);
    return t;
}

static size_t count_hosts(const merge *m)
{
    size_t n = 0;
    for (size_t i = 0; i < m->nf; i++) {
        bool seen = false;
        for (size_t k = 0; k < i; k++)
            seen = seen || strcmp(m->f[k].host, m->f[i].host) == 0;
        n += !seen;
    }
    return n;
}

/* ---------------------------------------------------------------- text */

static void text_gpus(const merge *m, FILE *out)
{
    static const char *const head[] = {"host",  "gpu",      "uuid",      "name",      "sampled_by", "ranks",
                                       "fit_s", "energy_j", "counter_j", "kernels_j", "baseline_j", "check_%"};
    table *t = table_new(12, head);
    if (!t) return;
    for (size_t k = 0; k < m->ng; k++) {
        const merge_gpu *g = &m->g[k];
        const tw_estimate *e = g->dev.est;
        table_cell(t, "%s", g->host[0] ? g->host : "-");
        table_cell(t, "%d", g->dev.index);
        table_cell(t, "%s", g->uuid);
        table_cell(t, "%.40s", g->dev.name);
        table_cell(t, "%s", g->sampled_by);
        table_cell(t, "%s", g->ranks[0] ? g->ranks : "-");
        if (!e) {
            for (int c = 0; c < 6; c++)
                table_cell(t, "-");
            continue;
        }
        table_cell(t, "%.3f", e->fit_t1_s - e->fit_t0_s);
        table_cell(t, "%.3f", e->model_j);
        table_cell(t, "%.3f", g->dev.methods.counter_j);
        table_cell(t, "%.3f", e->kernels_j + e->copies_j);
        table_cell(t, "%.3f", e->baseline_j);
        table_cell(t, "%+.2f", e->conservation_pct);
    }
    run_total s = sum_gpus(m);
    table_cell(t, "total");
    table_cell(t, "%zu GPU%s", s.with, s.with == 1 ? "" : "s");
    for (int c = 0; c < 5; c++)
        table_cell(t, "%s", "");
    table_cell(t, "%.3f", s.model_j);
    table_cell(t, "%.3f", s.counter_j);
    table_cell(t, "%.3f", s.kernels_j + s.copies_j);
    table_cell(t, "%.3f", s.baseline_j);
    table_cell(t, "%s", "");
    fprintf(out, "\nGPUs, each counted once (its energy from the run file of the first rank that sampled it) [J]\n");
    table_print(t, out);
    table_free(t);
    if (s.without)
        fprintf(out, "%zu GPU%s without an estimate: not in the total (see below)\n", s.without,
                s.without == 1 ? "" : "s");
    for (size_t k = 0; k < m->ng; k++) {
        if (!m->g[k].dev.est) fprintf(out, "GPU %s: no energy report: %s\n", m->g[k].uuid, m->g[k].dev.est_error);
        if (m->g[k].dev.est && !isnan(m->g[k].dev.methods.module_j)) fprintf(out, "GPU %s: ", m->g[k].uuid);
        run_scope_text(&m->g[k].dev, out);
        if (m->g[k].dev.pm_asked) fprintf(out, "GPU %s: activity counters: %s\n", m->g[k].uuid, m->g[k].dev.pm_line);
        if (run_pm_note(&m->g[k].dev))
            fprintf(out, "GPU %s: activity counters: note: %s\n", m->g[k].uuid, run_pm_note(&m->g[k].dev));
        if (m->g[k].dev.est && (m->g[k].dev.est->counters.used || m->g[k].dev.est->counters.why[0])) {
            fprintf(out, "GPU %s: ", m->g[k].uuid);
            run_counters_text(&m->g[k].dev, out);
        }
    }
}

static void text_ranks(const merge *m, FILE *out)
{
    rank_sum *sum = calloc(m->nf, sizeof *sum);
    static const char *const head[] = {"rank",     "host",      "run_file", "exit",
                                       "launches", "kernels_j", "copies_j", "+-sd_j"};
    table *t = sum ? table_new(8, head) : NULL;
    if (!t) {
        free(sum);
        return;
    }
    rank_sums(m, sum);
    for (size_t i = 0; i < m->nf; i++) {
        const merge_file *f = &m->f[i];
        table_cell(t, "%s", f->label);
        table_cell(t, "%s", f->host[0] ? f->host : "-");
        table_cell(t, "%s", f->path);
        table_cell(t, "%lld", (long long)f->exit_status);
        table_cell(t, "%llu", (unsigned long long)sum[i].launches);
        table_cell(t, "%.3f", sum[i].kernels_j);
        table_cell(t, "%.3f", sum[i].copies_j);
        table_cell(t, "%.3f", sqrt(sum[i].sd2));
    }
    fprintf(out, "\nranks: the energy their kernels and copies drew above their GPU's baseline (resolved names; the "
                 "baseline is the GPU's, shared by its ranks) [J]\n");
    table_print(t, out);
    table_free(t);
    free(sum);
}

static void text_names(const merge *m, FILE *out)
{
    static const char *const head[] = {"rank",   "gpu",      "name",   "kind",   "launches",
                                       "time_s", "energy_j", "+-sd_j", "power_w"};
    table *t = table_new(9, head);
    if (!t) return;
    size_t shown = 0, rest = 0, below = 0, at_bound = 0;
    for (size_t k = 0; k < m->ng; k++) {
        const tw_estimate *e = m->g[k].dev.est;
        for (size_t i = 0; e && i < e->nnames; i++) {
            const tw_est_name *x = &e->names[i];
            if (shown == TEXT_ROWS) {
                rest++;
                continue;
            }
            shown++;
            const char *name;
            const merge_file *f = name_file(m, x->name, &name);
            table_cell(t, "%s", f ? f->label : "-");
            table_cell(t, "%d", m->g[k].dev.index);
            table_cell(t, "%.60s", name);
            table_cell(t, "%s", x->kind);
            table_cell(t, "%llu", (unsigned long long)x->launches);
            table_cell(t, "%.6f", x->time_s);
            if (x->status == TW_EST_OK) {
                table_cell(t, "%.3f", x->energy_j);
                table_cell(t, "%.3f", x->energy_sd_j);
                table_cell(t, "%.1f", x->power_w);
            } else if (x->status == TW_EST_BELOW_RESOLUTION) {
                below++;
                table_cell(t, "< %.3f", x->upper_j);
                table_cell(t, "-");
                table_cell(t, "-");
            } else if (x->status == TW_EST_AT_POWER_BOUND) {
                at_bound++;
                table_cell(t, "<= %.3f", x->upper_j);
                table_cell(t, "bound");
                table_cell(t, "<= %.1f", x->power_w);
            } else {
                table_cell(t, "%s", tw_est_status_name(x->status));
                table_cell(t, "-");
                table_cell(t, "-");
            }
        }
    }
    fprintf(out, "\nkernels and copies per rank, on the GPU they ran on\n");
    table_print(t, out);
    table_free(t);
    if (rest) fprintf(out, "... and %zu more (all in --json)\n", rest);
    run_status_notes(below, at_bound, NAN, out); /* each GPU's own bound: in its estimate's lines */
}

void run_merged_text(const merge *m, FILE *out)
{
    fprintf(out, "\ntruewatt report: %zu run file%s (%s .. %s) on %zu host%s, %zu GPU%s\n", m->nf,
            m->nf == 1 ? "" : "s", m->f[0].label, m->f[m->nf - 1].label, count_hosts(m), count_hosts(m) == 1 ? "" : "s",
            m->ng, m->ng == 1 ? "" : "s");
    fprintf(out, "  command (%s): %s", m->f[0].label, m->f[0].argv[0]);
    for (size_t i = 1; m->f[0].argv[i]; i++)
        fprintf(out, " %s", m->f[0].argv[i]);
    fprintf(out, "\n");
    if (m->warn) fputs(m->warn, out);
    text_gpus(m, out);
    text_ranks(m, out);
    text_names(m, out);
    fprintf(out, "\nenergy_j: the model over the fit span (baseline + activities); counter_j: the energy counter over "
                 "it; check_%%: the model against the reference reading (docs/methods.md)\n");
}

/* ---------------------------------------------------------------- JSON */

static void json_strv(json *j, const char *key, char *const *v)
{
    json_key(j, key);
    json_begin_array(j);
    for (size_t i = 0; v && v[i]; i++)
        json_string(j, v[i]);
    json_end_array(j);
}

static void json_labels(json *j, const char *key, const char *list)
{
    json_key(j, key);
    json_begin_array(j);
    char buf[256];
    snprintf(buf, sizeof buf, "%s", list);
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save))
        json_string(j, t + (*t == ' '));
    json_end_array(j);
}

static void json_rank(json *j, const merge_file *f)
{
    json_key(j, "rank");
    if (f && f->rank >= 0)
        json_number(j, f->rank);
    else
        json_string(j, NULL);
}

static void json_runs(json *j, const merge *m)
{
    rank_sum *sum = calloc(m->nf, sizeof *sum);
    if (sum) rank_sums(m, sum);
    json_key(j, "runs");
    json_begin_array(j);
    for (size_t i = 0; i < m->nf; i++) {
        const merge_file *f = &m->f[i];
        json_begin_object(j);
        json_rank(j, f);
        json_kv_string(j, "label", f->label);
        json_kv_string(j, "host", f->host);
        json_kv_string(j, "path", f->path);
        json_strv(j, "command", f->argv);
        json_key(j, "exit_status");
        json_number(j, (double)f->exit_status);
        json_kv_bool(j, "finished", !f->unfinished);
        json_key(j, "gpus");
        json_begin_array(j);
        for (size_t d = 0; d < f->ndev; d++)
            json_string(j, f->rdev[d].uuid);
        json_end_array(j);
        if (sum) {
            json_kv_uint(j, "launches", sum[i].launches);
            json_kv_number(j, "kernels_j", sum[i].kernels_j);
            json_kv_number(j, "copies_j", sum[i].copies_j);
            json_kv_number(j, "energy_sd_j", sqrt(sum[i].sd2));
            json_kv_uint(j, "names_unresolved", sum[i].unresolved);
        }
        json_end_object(j);
    }
    json_end_array(j);
    free(sum);
}

static void json_names(json *j, const merge *m, const tw_estimate *e)
{
    json_key(j, "names");
    json_begin_array(j);
    for (size_t i = 0; e && i < e->nnames; i++) {
        const tw_est_name *x = &e->names[i];
        const char *name;
        const merge_file *f = name_file(m, x->name, &name);
        json_begin_object(j);
        json_rank(j, f);
        json_kv_string(j, "run", f ? f->label : NULL);
        run_name_json(j, x, name);
        json_end_object(j);
    }
    json_end_array(j);
}

static void json_gpu(json *j, const merge *m, const merge_gpu *g)
{
    const run_device *x = &g->dev;
    const tw_estimate *e = x->est;
    json_begin_object(j);
    json_kv_string(j, "host", g->host);
    json_kv_string(j, "uuid", g->uuid);
    json_key(j, "index");
    json_number(j, x->index);
    json_kv_string(j, "name", x->name);
    json_kv_string(j, "driver", x->driver);
    json_kv_string(j, "energy_from", m->f[g->owner].path);
    json_kv_uint(j, "t0_mono_ns", (uint64_t)m->f[g->owner].t0_ns); /* the times below are since this */
    json_labels(j, "sampled_by", g->sampled_by);
    json_labels(j, "ranks", g->ranks);
    json_kv_string(j, "error", e ? NULL : x->est_error);
    if (e) {
        json_kv_time(j, "fit_start_s", e->fit_t0_s);
        json_kv_time(j, "fit_end_s", e->fit_t1_s);
        json_kv_number(j, "energy_j", e->model_j);
        json_kv_number(j, "counter_j", x->methods.counter_j);
        run_scope_json(j, x);
        run_split_json(j, e->kernels_j, e->copies_j, e->baseline_j);
        json_kv_number(j, "reference_j", e->reference_j);
        json_kv_number(j, "conservation_pct", e->conservation_pct);
        json_kv_number(j, "idle_before_w", e->idle_before_w);
        json_kv_number(j, "idle_after_w", e->idle_after_w);
        run_counters_json(j, x);
    }
    run_pm_json(j, x);
    json_names(j, m, e);
    json_end_object(j);
}

void run_merged_json(const merge *m, FILE *out)
{
    json j;
    json_init(&j, out);
    json_begin_object(&j);
    json_kv_bool(&j, "merged", true);
    json_kv_uint(&j, "hosts", count_hosts(m));
    run_json_lines(&j, "warnings", m->warn);
    json_runs(&j, m);
    json_key(&j, "gpus");
    json_begin_array(&j);
    for (size_t k = 0; k < m->ng; k++)
        json_gpu(&j, m, &m->g[k]);
    json_end_array(&j);
    run_total t = sum_gpus(m);
    run_total_json(&j, &t);
    json_end_object(&j);
    json_finish(&j);
}

/* ---------------------------------------------------------------- entry */

tw_status run_merge_load(const char *const *paths, size_t n, const tw_report_options *o, tw_report *r)
{
    merge *m = calloc(1, sizeof *m);
    if (!m) return tw_fail(TW_ENOMEM, "out of memory");
    r->merged = m;
    m->cancel = o->cancel;
    m->opts = o;
    m->patterns = o->groups;
    m->npatterns = o->ngroups;
    if (o->nrange_groups)
        return tw_fail(TW_EUNSUPPORTED, "groups by NVTX range take one run file: give them to each rank's report");
    tw_status st = load_files(paths, n, m);
    if (st == TW_OK) st = find_gpus(m);
    if (st == TW_OK) st = split_timelines(m);
    if (st == TW_OK) st = pick_profiles(m, o->profile);
    if (st == TW_OK) st = analyse(m);
    if (st != TW_OK) return st;
    r->dev = calloc(m->ng ? m->ng : 1, sizeof *r->dev);
    if (!r->dev) return tw_fail(TW_ENOMEM, "out of memory");
    for (size_t k = 0; k < m->ng; k++)
        r->dev[k] = &m->g[k].dev;
    r->ndev = m->ng;
    r->notice = "";
    return TW_OK;
}
