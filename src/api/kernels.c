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

tw_status tw_ktrace_window(tw_ktrace *k, size_t dev, double t0, double t1, tw_klaunch **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    pthread_mutex_lock(&k->mu);
    size_t m = 0;
    for (size_t i = 0; i < k->n; i++)
        m += k->l[i].dev == dev && k->l[i].t1 > t0 && k->l[i].t0 < t1;
    tw_klaunch *p = m ? malloc(m * sizeof *p) : NULL;
    if (m && !p) {
        pthread_mutex_unlock(&k->mu);
        return tw_fail(TW_ENOMEM, "out of memory");
    }
    for (size_t i = 0, j = 0; i < k->n && p; i++)
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
        if (k->l[i].t1 >= t) k->l[j++] = k->l[i];
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
        if (!p) return;
        k->l = p;
        k->cap = cap;
    }
    k->l[k->n++] = (tw_klaunch){name, d, 1e-9 * (double)twi_clock_rel_ns(&k->clock, r->start_ns),
                                1e-9 * (double)twi_clock_rel_ns(&k->clock, r->end_ns)};
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
    free(k);
}

/* ---------------------------------------------------------------- a region's names */

static double overlap(double a0, double a1, double b0, double b1)
{
    double lo = fmax(a0, b0), hi = fmin(a1, b1);
    return hi > lo ? hi - lo : 0.0;
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

/* The slot of name in m, added (value -1) when new; NULL when out of memory. */
static int64_t *slot(tw_strmap *m, const char *name)
{
    const char *key;
    bool added;
    int64_t *x = tw_strmap_get(m, name, &key, &added);
    if (x && added) *x = -1;
    return x;
}

/* The estimate's name of that name; NULL when it has none. */
static const tw_est_name *est_name(const tw_estimate *e, tw_strmap *by_est, const char *name)
{
    int64_t *k = slot(by_est, name);
    return k && *k >= 0 && (size_t)*k < e->nnames ? &e->names[*k] : NULL;
}

/* The estimate's launches summed per name, the part inside [t0, t1]. The
 * estimate splits a group's energy over its launches by their activity: an
 * arbitrary split between its names, so a grouped name's energy is NaN, but
 * the sum (*kernels_j) counts it. */
static tw_status sum_names(const tw_estimate *e, const tw_klaunch *l, size_t n, double t0, double t1, double gain,
                           tw_kname **out, size_t *nout, double *kernels_j)
{
    tw_strmap by_est = {0}, by_out = {0};
    tw_kname *v = calloc(n ? n : 1, sizeof *v);
    tw_status st = v ? TW_OK : tw_fail(TW_ENOMEM, "out of memory");
    for (size_t i = 0; i < e->nnames && st == TW_OK; i++) {
        int64_t *x = slot(&by_est, e->names[i].name);
        if (!x)
            st = tw_fail(TW_ENOMEM, "out of memory");
        else
            *x = (int64_t)i;
    }
    size_t m = 0;
    *kernels_j = 0;
    for (size_t i = 0; i < n && st == TW_OK; i++) {
        double in = overlap(l[i].t0, l[i].t1, t0, t1), len = l[i].t1 - l[i].t0;
        if (!(in > 0) && !(len == 0 && l[i].t0 >= t0 && l[i].t0 <= t1)) continue;
        int64_t *x = slot(&by_out, l[i].name);
        if (!x) {
            st = tw_fail(TW_ENOMEM, "out of memory");
            break;
        }
        if (*x < 0) {
            *x = (int64_t)m;
            v[m] = (tw_kname){.name = l[i].name, .dev = l[i].dev, .status = "unobserved", .sd_j = NAN};
            const tw_est_name *en = est_name(e, &by_est, l[i].name);
            if (en) v[m].status = tw_est_status_name(en->status);
            if (en && en->group >= 0 && (size_t)en->group < e->ngroups)
                v[m].group = tw_session_intern(e->groups[en->group].label);
            m++;
        }
        tw_kname *o = &v[*x];
        o->launches++;
        o->time_s += in;
        double share = len > 0 ? in / len : 1.0;
        double ej = tw_estimate_event_energy_j(e, i);
        double part = gain * share * ej; /* NaN: unobserved */
        if (isfinite(part)) *kernels_j += part;
        o->energy_j += o->group ? NAN : part;
    }
    /* each name's sd: its whole estimate's, in proportion to the part inside */
    for (size_t j = 0; j < m && st == TW_OK; j++) {
        const tw_est_name *en = est_name(e, &by_est, v[j].name);
        if (en && en->energy_j > 0)
            v[j].sd_j = v[j].energy_j / (gain * en->energy_j) * gain * en->energy_sd_j;
        else if (en)
            v[j].sd_j = gain * en->energy_sd_j;
    }
    tw_strmap_free(&by_est);
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

tw_status tw_kernels_estimate(const tw_klaunch *l, size_t n, const tw_obs *obs, size_t nobs, const char *reading,
                              double fit_t0, double t0, double t1, double total_j, double power_limit_w, tw_kname **out,
                              size_t *nout, double *kernels_j, double *model_j)
{
    *out = NULL;
    *nout = 0;
    *kernels_j = 0;
    *model_j = NAN;
    if (n == 0) return TW_OK;
    tw_events *ev = NULL;
    tw_estimate *e = NULL;
    tw_status st = launches_as_events(l, n, &ev);
    tw_est_reading rd = {.name = reading, .obs = obs, .n = nobs, .reference = false};
    tw_est_config cfg;
    tw_est_config_init(&cfg);
    cfg.fit_t0_s = fit_t0;
    cfg.fit_t1_s = t1;
    cfg.power_limit_w = power_limit_w;
    if (st == TW_OK) st = tw_estimate_run(&rd, 1, ev, &cfg, &e);
    if (st == TW_EEMPTY) {
        /* no readings over the region (a session closed before they came):
         * the names with their launches and time, their energies unobserved */
        tw_clear_error();
        tw_estimate none;
        memset(&none, 0, sizeof none);
        st = sum_names(&none, l, n, t0, t1, 1.0, out, nout, kernels_j);
        *kernels_j = NAN;
    } else if (st == TW_OK) {
        st = sum_names(e, l, n, t0, t1, 1.0, out, nout, kernels_j);
        if (st == TW_OK) {
            /* the model's own energy over the region (baseline + the launches'
             * parts inside) held to the region's total (the counter's, where
             * it anchors): names and baseline alike, so that they add up to it.
             * Scaling the names alone by the readings' gain left names plus
             * baseline 4-6 % over the total on PyTorch steps (results/h100/api). */
            double own = tw_estimate_baseline_j(e, t0, t1) + *kernels_j;
            double s = isfinite(total_j) && own > 0 ? total_j / own : 1.0;
            scale_names(*out, *nout, s);
            *kernels_j *= s;
            *model_j = s * own;
        }
    }
    if (st == TW_OK) qsort(*out, *nout, sizeof **out, by_energy);
    tw_estimate_free(e);
    tw_events_free(ev);
    return st;
}
