/* A session's kernels (kernels.h): the tracer over CUPTI (when the library
 * was built with cupti.h: TW_HAVE_CUPTI), the launch store, and the per
 * name energies of a region. */
#include <math.h>
#include <stdio.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/kernels.h"
#include "api/session_internal.h"
#include "core/error.h"
#include "core/strmap.h"
#include "estimate/estimator.h"
#include "inject/demangle.h"

#ifdef TW_HAVE_CUPTI
#include "inject/cupti_activity.h"
#endif

struct tw_ktrace {
    tw_ktrace_config c;
    char (*uuid)[96];
    pthread_mutex_t mu; /* the store and flushed_s */
    tw_klaunch *l;      /* in arrival order */
    double *pmax;       /* pmax[i]: the latest end among l[0..i] (nondecreasing: a window's search) */
    size_t n, cap;
    double flushed_s;
    uint64_t foreign;
    twi_clock clock;
    twi_demangler *dm; /* the tracer's thread only */
    pthread_t thread;
    bool running;
    pthread_mutex_t stop_mu;
    pthread_cond_t stop_cv;
    bool stop;
};

/* ---------------------------------------------------------------- the store */

double tw_ktrace_flushed_s(tw_ktrace *k)
{
    pthread_mutex_lock(&k->mu);
    double t = k->flushed_s;
    pthread_mutex_unlock(&k->mu);
    return t;
}

uint64_t tw_ktrace_foreign(tw_ktrace *k)
{
    pthread_mutex_lock(&k->mu);
    uint64_t n = k->foreign;
    pthread_mutex_unlock(&k->mu);
    return n;
}

/* The first launch that may end after t (every one before it ended by t):
 * a bisection of pmax, so that a window near the store's end (a region just
 * completed, the fit's history) scans only the launches that came since. */
static size_t first_ending_after(const tw_ktrace *k, double t)
{
    size_t lo = 0, hi = k->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (k->pmax[mid] > t)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

tw_status tw_ktrace_window(tw_ktrace *k, size_t dev, double t0, double t1, tw_klaunch **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    pthread_mutex_lock(&k->mu);
    size_t m = 0, from = first_ending_after(k, t0);
    for (size_t i = from; i < k->n; i++)
        m += k->l[i].dev == dev && k->l[i].t1 > t0 && k->l[i].t0 < t1;
    tw_klaunch *p = m ? malloc(m * sizeof *p) : NULL;
    if (m && !p) {
        pthread_mutex_unlock(&k->mu);
        return tw_fail(TW_ENOMEM, "out of memory");
    }
    for (size_t i = from, j = 0; i < k->n && p; i++)
        if (k->l[i].dev == dev && k->l[i].t1 > t0 && k->l[i].t0 < t1) p[j++] = k->l[i];
    pthread_mutex_unlock(&k->mu);
    *out = p;
    *n = m;
    return TW_OK;
}

void tw_ktrace_trim(tw_ktrace *k, double t)
{
    pthread_mutex_lock(&k->mu);
    size_t j = 0;
    for (size_t i = 0; i < k->n; i++)
        if (k->l[i].t1 >= t) {
            k->l[j] = k->l[i];
            k->pmax[j] = j ? fmax(k->pmax[j - 1], k->l[j].t1) : k->l[j].t1;
            j++;
        }
    k->n = j;
    pthread_mutex_unlock(&k->mu);
}

/* ---------------------------------------------------------------- the tracer */

#ifdef TW_HAVE_CUPTI
static size_t device_of(const tw_ktrace *k, const char *uuid)
{
    for (size_t d = 0; d < k->c.ndev; d++)
        if (uuid && strcmp(uuid, k->uuid[d]) == 0) return d;
    /* CUPTI could not tell the GPU: the session's only one */
    return (!uuid || !*uuid) && k->c.ndev == 1 ? 0 : SIZE_MAX;
}

/* A kernel record, on the tracer's thread with k->mu held. */
static void store(tw_ktrace *k, const twi_record *r)
{
    if (r->kind != TWI_KERNEL || (r->start_ns == 0 && r->end_ns == 0) || r->end_ns < r->start_ns) return;
    size_t d = device_of(k, r->device_uuid);
    if (d == SIZE_MAX) {
        k->foreign++;
        return;
    }
    const char *name = tw_session_intern(k->dm ? twi_demangle(k->dm, r->name ? r->name : "") : r->name);
    if (!name) return; /* out of memory: the launch is lost */
    if (k->n == k->cap) {
        size_t cap = k->cap ? 2 * k->cap : 1024;
        tw_klaunch *p = realloc(k->l, cap * sizeof *p);
        if (p) k->l = p;
        double *q = p ? realloc(k->pmax, cap * sizeof *q) : NULL;
        if (!q) return;
        k->pmax = q;
        k->cap = cap;
    }
    tw_klaunch x = {name, d, 1e-9 * (double)twi_clock_rel_ns(&k->clock, r->start_ns),
                    1e-9 * (double)twi_clock_rel_ns(&k->clock, r->end_ns)};
    k->pmax[k->n] = k->n ? fmax(k->pmax[k->n - 1], x.t1) : x.t1;
    k->l[k->n++] = x;
}

static void reader_begin(void *arg) { pthread_mutex_lock(&((tw_ktrace *)arg)->mu); }
static void reader_end(void *arg) { pthread_mutex_unlock(&((tw_ktrace *)arg)->mu); }
static void reader_record(void *arg, const twi_record *r)
{
    tw_ktrace *k = arg;
    store(k, r);
    if (k->c.record) k->c.record(k->c.arg, r, &k->clock);
}

static double mono_s_since(uint64_t t0_ns)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    uint64_t ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
    return 1e-9 * (double)(int64_t)(ns - t0_ns);
}

/* A flush: every buffer CUPTI has completed, read into the store; t is when
 * it began (a kernel that ended before t is in one of them). */
static void flush_once(tw_ktrace *k, bool forced)
{
    double t = mono_s_since(k->c.t0_mono_ns);
    twi_cupti_learn_devices();
    twi_cupti_flush(forced);
    twi_cupti_reader rd = {reader_begin, reader_record, reader_end, k};
    twi_cupti_drain(&rd);
    pthread_mutex_lock(&k->mu);
    k->flushed_s = forced ? INFINITY : t;
    pthread_mutex_unlock(&k->mu);
    if (k->c.notify) k->c.notify(k->c.arg);
}

static void *tracer(void *arg)
{
    tw_ktrace *k = arg;
    pthread_mutex_lock(&k->stop_mu);
    while (!k->stop) {
        struct timespec until;
        clock_gettime(CLOCK_MONOTONIC, &until);
        until.tv_nsec += (long)(TW_KTRACE_FLUSH_S * 1e9);
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        while (!k->stop && pthread_cond_timedwait(&k->stop_cv, &k->stop_mu, &until) == 0) {
        }
        if (k->stop) break;
        pthread_mutex_unlock(&k->stop_mu);
        flush_once(k, false);
        pthread_mutex_lock(&k->stop_mu);
    }
    pthread_mutex_unlock(&k->stop_mu);
    return NULL;
}

static tw_status start_thread(tw_ktrace *k)
{
    pthread_condattr_t ca;
    if (pthread_condattr_init(&ca) != 0) return tw_fail(TW_ENOMEM, "cannot create a condition variable");
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    int rc = pthread_cond_init(&k->stop_cv, &ca);
    pthread_condattr_destroy(&ca);
    if (rc != 0) return tw_fail(TW_ENOMEM, "cannot create a condition variable");
    if (pthread_create(&k->thread, NULL, tracer, k) != 0) {
        pthread_cond_destroy(&k->stop_cv);
        return tw_fail(TW_ENOMEM, "cannot start the kernel tracer's thread");
    }
    k->running = true;
    return TW_OK;
}
#endif

tw_status tw_ktrace_start(const tw_ktrace_config *c, tw_ktrace **out)
{
    *out = NULL;
#ifndef TW_HAVE_CUPTI
    (void)c;
    return tw_fail(TW_EUNSUPPORTED, "trace_kernels: this libtruewatt was built without cupti.h (CUDA's headers): "
                                    "no in-process kernel tracing");
#else
    /* CUPTI takes one set of buffer callbacks per process: the injection
     * library's (truewatt run sets TW_EVENTS_PATH for it) would lose its records */
    const char *events = getenv("TW_EVENTS_PATH");
    if (events && *events)
        return tw_fail(TW_EUNAVAIL, "trace_kernels: this program runs under `truewatt run`, whose injection library "
                                    "traces its kernels already (TW_EVENTS_PATH is set): its report has them");
    tw_ktrace *k = calloc(1, sizeof *k);
    if (!k) return tw_fail(TW_ENOMEM, "out of memory");
    k->c = *c;
    k->uuid = calloc(c->ndev ? c->ndev : 1, sizeof *k->uuid);
    k->dm = twi_demangler_new(0);
    k->flushed_s = -INFINITY;
    k->clock.t0_mono_ns = c->t0_mono_ns;
    pthread_mutex_init(&k->mu, NULL);
    pthread_mutex_init(&k->stop_mu, NULL);
    if (!k->uuid || !k->dm) {
        tw_ktrace_free(k);
        return tw_fail(TW_ENOMEM, "out of memory");
    }
    for (size_t d = 0; d < c->ndev; d++)
        snprintf(k->uuid[d], sizeof k->uuid[d], "%s", c->uuids[d]);
    const char *clk = getenv("TW_CUPTI_CLOCK");
    twi_cupti_client cl = {.prefix = "truewatt: ", .monotonic = clk && strcmp(clk, "monotonic") == 0};
    if (!twi_cupti_start(&cl, &k->clock)) {
        tw_status st = tw_fail(TW_EUNAVAIL, "trace_kernels: %s", twi_cupti_error());
        tw_ktrace_free(k);
        return st;
    }
    tw_status st = start_thread(k);
    if (st != TW_OK) {
        twi_cupti_stop();
        tw_ktrace_free(k);
        return st;
    }
    *out = k;
    return TW_OK;
#endif
}

void tw_ktrace_stop(tw_ktrace *k)
{
#ifdef TW_HAVE_CUPTI
    if (!k || !k->running) return;
    pthread_mutex_lock(&k->stop_mu);
    k->stop = true;
    pthread_cond_signal(&k->stop_cv);
    pthread_mutex_unlock(&k->stop_mu);
    pthread_join(k->thread, NULL);
    pthread_cond_destroy(&k->stop_cv);
    k->running = false;
    flush_once(k, true); /* what the last flush left, records still incomplete too */
    twi_cupti_stop();
    twi_cupti_reader rd = {reader_begin, reader_record, reader_end, k};
    twi_cupti_drain(&rd);
#else
    (void)k;
#endif
}

void tw_ktrace_free(tw_ktrace *k)
{
    if (!k) return;
    tw_ktrace_stop(k);
    twi_demangler_free(k->dm);
    pthread_mutex_destroy(&k->mu);
    pthread_mutex_destroy(&k->stop_mu);
    free(k->uuid);
    free(k->l);
    free(k->pmax);
    free(k);
}

/* ---------------------------------------------------------------- the session's fit */

/* A fit that ends at most this long before a region's end serves it (kernels.h) */
#define KFIT_REUSE_S 2.0

/* One GPU's last fit: the estimate over its history, the events its names
 * borrow, and each name's index in it (value index + 1; 0: absent). */
typedef struct kfit_dev {
    double power_limit_w;
    double t0, t1; /* the fit's span; t1 -INFINITY: none yet */
    tw_events *ev;
    tw_estimate *e;
    tw_strmap by_name;
} kfit_dev;

struct tw_kfit {
    atomic_int refs;
    pthread_mutex_t mu; /* the fits and the source: one fit at a time, never under the session's lock */
    tw_kfit_source src; /* NULL once the session closed */
    void *arg;
    const char *reading;
    size_t ndev;
    kfit_dev *d;
    pthread_mutex_t wmu; /* waiting and need_t1 (taken under the session's lock: never with mu) */
    size_t waiting;      /* regions completed whose names were not read yet */
    double need_t1;      /* the latest end among them */
};

static void kfit_dev_clear(kfit_dev *d)
{
    tw_estimate_free(d->e);
    tw_events_free(d->ev);
    tw_strmap_free(&d->by_name);
    d->e = NULL;
    d->ev = NULL;
    d->t0 = NAN;
    d->t1 = -INFINITY;
}

tw_status tw_kfit_new(size_t ndev, const double *power_limit_w, const char *reading, tw_kfit_source src, void *arg,
                      tw_kfit **out)
{
    *out = NULL;
    tw_kfit *f = calloc(1, sizeof *f);
    if (f) f->d = calloc(ndev ? ndev : 1, sizeof *f->d);
    if (!f || !f->d) {
        free(f);
        return tw_fail(TW_ENOMEM, "out of memory");
    }
    atomic_init(&f->refs, 1);
    pthread_mutex_init(&f->mu, NULL);
    pthread_mutex_init(&f->wmu, NULL);
    f->src = src;
    f->arg = arg;
    f->reading = reading;
    f->ndev = ndev;
    f->need_t1 = -INFINITY;
    for (size_t i = 0; i < ndev; i++) {
        f->d[i].power_limit_w = power_limit_w[i];
        kfit_dev_clear(&f->d[i]);
    }
    *out = f;
    return TW_OK;
}

tw_kfit *tw_kfit_ref(tw_kfit *f)
{
    if (f) atomic_fetch_add(&f->refs, 1);
    return f;
}

void tw_kfit_unref(tw_kfit *f)
{
    if (!f || atomic_fetch_sub(&f->refs, 1) != 1) return;
    for (size_t i = 0; i < f->ndev; i++)
        kfit_dev_clear(&f->d[i]);
    free(f->d);
    pthread_mutex_destroy(&f->mu);
    pthread_mutex_destroy(&f->wmu);
    free(f);
}

void tw_kfit_expect(tw_kfit *f, double t1)
{
    pthread_mutex_lock(&f->wmu);
    f->waiting++;
    f->need_t1 = fmax(f->need_t1, t1);
    pthread_mutex_unlock(&f->wmu);
}

void tw_kfit_done(tw_kfit *f)
{
    pthread_mutex_lock(&f->wmu);
    if (f->waiting) f->waiting--;
    pthread_mutex_unlock(&f->wmu);
}

static tw_status launches_as_events(const tw_klaunch *l, size_t n, tw_events **out)
{
    tw_status st = tw_events_new(out);
    for (size_t i = 0; i < n && st == TW_OK; i++) {
        tw_event e = {.name = l[i].name,
                      .start_s = l[i].t0,
                      .end_s = l[i].t1,
                      .device = 0,
                      .stream = -1,
                      .true_energy_j = NAN,
                      .kind = "kernel"};
        st = tw_events_add(*out, &e);
    }
    return st;
}

/* Under f->mu: device d's fit over the source's history now (back to
 * `from` where it holds it). TW_EEMPTY when no readings are there yet (the
 * old fit, if any, is kept). */
static tw_status refit(tw_kfit *f, size_t d, double from)
{
    kfit_dev *x = &f->d[d];
    tw_klaunch *l = NULL;
    size_t nl = 0;
    tw_obs_series o;
    tw_obs_series_init(&o);
    double t0 = NAN, t1 = NAN;
    tw_events *ev = NULL;
    tw_estimate *e = NULL;
    tw_strmap by_name = {0};
    tw_status st = f->src(f->arg, d, from, &l, &nl, &o, &t0, &t1);
    if (st == TW_OK && o.n == 0) st = TW_EEMPTY;
    if (st == TW_OK) st = launches_as_events(l, nl, &ev);
    if (st == TW_OK) {
        tw_est_reading rd = {.name = f->reading, .obs = o.v, .n = o.n, .reference = false};
        tw_est_config cfg;
        tw_est_config_init(&cfg);
        cfg.fit_t0_s = t0;
        cfg.fit_t1_s = t1;
        cfg.power_limit_w = x->power_limit_w;
        st = tw_estimate_run(&rd, 1, ev, &cfg, &e);
    }
    for (size_t i = 0; st == TW_OK && i < e->nnames; i++) {
        const char *key;
        bool added;
        int64_t *v = tw_strmap_get(&by_name, e->names[i].name, &key, &added);
        if (!v)
            st = tw_fail(TW_ENOMEM, "out of memory");
        else
            *v = (int64_t)i + 1;
    }
    free(l);
    tw_obs_series_free(&o);
    if (st != TW_OK) {
        tw_estimate_free(e);
        tw_events_free(ev);
        tw_strmap_free(&by_name);
        return st;
    }
    kfit_dev_clear(x);
    x->ev = ev;
    x->e = e;
    x->by_name = by_name;
    x->t0 = t0;
    x->t1 = t1;
    return TW_OK;
}

static const tw_est_name *fitted(kfit_dev *x, const char *name);

/* Whether the fit has a power for every name of the launches. */
static bool knows_names(kfit_dev *x, const tw_klaunch *l, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!fitted(x, l[i].name)) return false;
    return true;
}

/* Under f->mu: a fit of device d for a region [t0, t1] with launches l: the
 * last one where it ends at most KFIT_REUSE_S before t1 and knows every
 * name (its powers serve the region's launches, its baseline held at its
 * end value past it), else a new one that reaches t1 (and back to t0, where
 * the source still holds it), when the source can give one; else the last
 * fit (maybe none: x->e NULL). Reading every region as it ends costs at
 * most one fit per KFIT_REUSE_S, not one per region. */
static tw_status fit_reaching(tw_kfit *f, size_t d, double t0, double t1, const tw_klaunch *l, size_t n)
{
    kfit_dev *x = &f->d[d];
    if (!f->src || (x->e && x->t1 >= t1 - KFIT_REUSE_S && knows_names(x, l, n))) return TW_OK;
    tw_status st = refit(f, d, t0);
    if (st == TW_EEMPTY) {
        tw_clear_error();
        st = TW_OK;
    }
    return st;
}

void tw_kfit_detach(tw_kfit *f)
{
    if (!f) return;
    pthread_mutex_lock(&f->wmu);
    bool waiting = f->waiting > 0;
    double need = f->need_t1;
    pthread_mutex_unlock(&f->wmu);
    pthread_mutex_lock(&f->mu);
    /* regions completed and not read yet: a last fit of the history that reaches them */
    for (size_t d = 0; waiting && d < f->ndev; d++)
        if (fit_reaching(f, d, INFINITY, need, NULL, 0) != TW_OK)
            tw_clear_error(); /* their names: from the last fit, or unobserved */
    f->src = NULL;
    pthread_mutex_unlock(&f->mu);
}

/* ---------------------------------------------------------------- a region's names */

static int by_start(const void *a, const void *b)
{
    const double *x = a, *y = b;
    return (x[0] > y[0]) - (x[0] < y[0]);
}

/* Each launch's activity inside [t0, t1] as the estimator counts it
 * (estimator.h: 1 while it runs alone; n overlapping launches share the
 * time, 1/n each), into act[i]: a sweep over the launches' clipped ends. */
static tw_status activities(const tw_klaunch *l, size_t n, double t0, double t1, double *act)
{
    /* (time, +1 start / -1 end, launch) */
    double(*ev)[3] = malloc(2 * (n ? n : 1) * sizeof *ev);
    size_t *on = malloc((n ? n : 1) * sizeof *on), *pos = malloc((n ? n : 1) * sizeof *pos);
    if (!ev || !on || !pos) {
        free(ev);
        free(on);
        free(pos);
        return tw_fail(TW_ENOMEM, "out of memory");
    }
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        act[i] = 0;
        double a = fmax(l[i].t0, t0), b = fmin(l[i].t1, t1);
        if (!(b > a)) continue;
        ev[m][0] = a, ev[m][1] = 1, ev[m][2] = (double)i, m++;
        ev[m][0] = b, ev[m][1] = -1, ev[m][2] = (double)i, m++;
    }
    qsort(ev, m, sizeof *ev, by_start);
    size_t non = 0;
    double prev = m ? ev[0][0] : 0;
    for (size_t k = 0; k < m; k++) {
        double dt = ev[k][0] - prev;
        for (size_t j = 0; j < non && dt > 0; j++)
            act[on[j]] += dt / (double)non;
        prev = ev[k][0];
        size_t i = (size_t)ev[k][2];
        if (ev[k][1] > 0) {
            pos[i] = non;
            on[non++] = i;
        } else { /* out of the running set: the last one takes its place */
            size_t p = pos[i];
            on[p] = on[--non];
            pos[on[p]] = p;
        }
    }
    free(ev);
    free(on);
    free(pos);
    return TW_OK;
}

/* The fit's entry of a name; NULL when the fit has none. */
static const tw_est_name *fitted(kfit_dev *x, const char *name)
{
    if (!x->e) return NULL;
    const char *key;
    bool added;
    int64_t *v = tw_strmap_get(&x->by_name, name, &key, &added); /* one absent is added, 0 */
    return v && *v > 0 && (size_t)*v <= x->e->nnames ? &x->e->names[*v - 1] : NULL;
}

/* The slot of name in m, added (value -1) when new; NULL when out of memory. */
static int64_t *slot(tw_strmap *m, const char *name)
{
    const char *key;
    bool added;
    int64_t *x = tw_strmap_get(m, name, &key, &added);
    if (x && added) *x = -1;
    return x;
}

/* A new name's entry: its status and group from the fit. */
static tw_kname new_name(const kfit_dev *x, const tw_klaunch *l, const tw_est_name *en)
{
    tw_kname k = {.name = l->name, .dev = l->dev, .status = "unobserved", .sd_j = NAN};
    if (!en) return k;
    k.status = tw_est_status_name(en->status);
    if (en->group >= 0 && (size_t)en->group < x->e->ngroups) k.group = tw_session_intern(x->e->groups[en->group].label);
    return k;
}

/* The power above the baseline while a launch of en runs alone, with its
 * sd: the name's own, else (grouped) its group's, which the name's energy
 * does not show (NaN) but the sum counts. */
static double launch_power(const kfit_dev *x, const tw_est_name *en, double *sd)
{
    *sd = NAN;
    if (!en || en->status == TW_EST_UNOBSERVED) return NAN;
    if (en->status == TW_EST_GROUPED && en->group >= 0 && (size_t)en->group < x->e->ngroups) {
        *sd = x->e->groups[en->group].power_sd_w;
        return x->e->groups[en->group].power_w;
    }
    *sd = en->power_sd_w;
    return en->power_w;
}

/* The region's launches summed per name: activity x the fit's power. */
static tw_status sum_names(kfit_dev *x, const tw_klaunch *l, size_t n, double t0, double t1, tw_kname **out,
                           size_t *nout, double *kernels_j)
{
    tw_strmap by_out = {0};
    tw_kname *v = calloc(n ? n : 1, sizeof *v);
    double *act = malloc((n ? n : 1) * sizeof *act);
    tw_status st = v && act ? activities(l, n, t0, t1, act) : tw_fail(TW_ENOMEM, "out of memory");
    size_t m = 0;
    *kernels_j = 0;
    for (size_t i = 0; i < n && st == TW_OK; i++) {
        double in = fmax(0.0, fmin(l[i].t1, t1) - fmax(l[i].t0, t0)), len = l[i].t1 - l[i].t0;
        if (!(in > 0) && !(len == 0 && l[i].t0 >= t0 && l[i].t0 <= t1)) continue;
        int64_t *k = slot(&by_out, l[i].name);
        if (!k) {
            st = tw_fail(TW_ENOMEM, "out of memory");
            break;
        }
        const tw_est_name *en = fitted(x, l[i].name);
        if (*k < 0) {
            *k = (int64_t)m;
            v[m++] = new_name(x, &l[i], en);
            v[*k].sd_j = 0;
        }
        tw_kname *o = &v[*k];
        o->launches++;
        o->time_s += in;
        double sd, p = launch_power(x, en, &sd);
        double part = p * act[i]; /* NaN: unobserved */
        if (isfinite(part)) *kernels_j += part;
        o->energy_j += o->group ? NAN : part;
        o->sd_j += o->group ? NAN : sd * act[i]; /* the power's error is common to the name's launches */
    }
    free(act);
    tw_strmap_free(&by_out);
    if (st != TW_OK) {
        free(v);
        return st;
    }
    *out = v;
    *nout = m;
    return TW_OK;
}

static void scale_names(tw_kname *v, size_t n, double s)
{
    for (size_t j = 0; j < n; j++) {
        v[j].energy_j *= s;
        v[j].sd_j *= s;
    }
}

static int by_energy(const void *a, const void *b)
{
    const tw_kname *x = a, *y = b;
    double ex = isfinite(x->energy_j) ? x->energy_j : -1, ey = isfinite(y->energy_j) ? y->energy_j : -1;
    if (ex != ey) return ex > ey ? -1 : 1;
    return strcmp(x->name, y->name);
}

tw_status tw_kfit_region(tw_kfit *f, size_t dev, const tw_klaunch *l, size_t n, double t0, double t1, double total_j,
                         tw_kname **out, size_t *nout, double *kernels_j, double *model_j)
{
    *out = NULL;
    *nout = 0;
    *kernels_j = 0;
    *model_j = NAN;
    if (n == 0) return TW_OK;
    pthread_mutex_lock(&f->mu);
    tw_status st = fit_reaching(f, dev, t0, t1, l, n);
    kfit_dev *x = &f->d[dev];
    if (st == TW_OK) st = sum_names(x, l, n, t0, t1, out, nout, kernels_j);
    if (st == TW_OK && !x->e) {
        /* no readings (a session closed before they came): the names with
         * their launches and time, their energies unobserved */
        *kernels_j = NAN;
    } else if (st == TW_OK) {
        /* the model's own energy over the region (baseline + the launches'
         * parts inside) held to the region's total (the counter's, where
         * it anchors): names and baseline alike, so that they add up to it.
         * Scaling the names alone by the readings' gain left names plus
         * baseline 4-6 % over the total on PyTorch steps (results/h100/api). */
        double own = tw_estimate_baseline_j(x->e, t0, t1) + *kernels_j;
        double s = isfinite(total_j) && own > 0 ? total_j / own : 1.0;
        scale_names(*out, *nout, s);
        *kernels_j *= s;
        *model_j = s * own;
    }
    pthread_mutex_unlock(&f->mu);
    if (st == TW_OK) qsort(*out, *nout, sizeof **out, by_energy);
    return st;
}
