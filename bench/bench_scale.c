/* Benchmark: how truewatt's paths grow with the number of launches, on a
 * synthetic timeline with exact truth (driven by scripts/bench-scale).
 *
 *   bench_scale N [DIR [STAGE,...]]   (with stages named, only those, and the files stay)
 *
 * N launches of 500 names (each name its own power, 250..600 W, and mean
 * duration, 4..60 us), with 20..120 us gaps (one launch per ~100 us) on four streams (and
 * 2..5 ms idle after every 1000th, a host sync), under
 * one NVTX range spanning the run (a long event), on the simulated H100.
 * Each stage runs in a process of its own, so its peak RSS is its own:
 *
 *   sim      the scenario (tw_scenario_add_kernel per launch), the simulated
 *            sensor's trace CSV and the events CSV (their bytes per launch:
 *            today's record of a run)
 *   report   tw_events_load + the estimator over the trace (truewatt run's
 *            report); the worst per-name error against the truth
 *   perfetto the Perfetto file of the run (counters, corrected power, slices)
 *   analyze  tw_analyze over power_buffer_w (truewatt analyze's path)
 *
 * One line per stage: stage=S launches=N seconds=X peak_rss_mb=Y [more]. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/rng.h"
#include "estimate/trace.h"
#include "report/perfetto.c" /* CLI-only code (src/report is not in the library) */
#include "truewatt.h"

#define BENCH_NAME "bench_scale"
#include "bench_common.h"

#define NAMES 500
#define STREAMS 4
#define ACTIVE_IDLE_W 120.0 /* the simulated H100's level while a context lives */

/* A seeded generator, so every run sees the same timeline. */
static tw_rng rng;
static double uniform(void) { return tw_rng_uniform(&rng); }

static char name_text[NAMES][48];
static double name_power_w[NAMES], name_mean_s[NAMES];

static void make_names(void)
{
    tw_rng_seed(&rng, 16, 0);
    for (int k = 0; k < NAMES; k++) {
        snprintf(name_text[k], sizeof name_text[k], "void kernel_%03d<float, %d>(float*, int)", k, k % 7);
        name_power_w[k] = 250.0 + 350.0 * uniform(); /* 130..480 W above active idle */
        name_mean_s[k] = 4e-6 + 56e-6 * uniform();
    }
}

typedef struct paths {
    char trace[512], events[512], perfetto[512], corrected[512];
} paths;

/* ---------------------------------------------------------------- stage sim */

static int stage_sim(size_t n, const paths *p)
{
    make_names();
    tw_scenario *sc = NULL;
    tw_events *ev = NULL;
    if (check(tw_scenario_new(TW_SIM_H100, &sc), "scenario") || check(tw_events_new(&ev), "events")) return 1;
    double t = 1.5; /* idle, then the context, before the first launch */
    for (size_t i = 0; i < n; i++) {
        int k = (int)(uniform() * NAMES);
        double dur = name_mean_s[k] * (0.5 + uniform());
        if (check(tw_scenario_add_kernel(sc, name_text[k], t, dur, name_power_w[k]), "kernel")) return 1;
        tw_event e = {.name = name_text[k],
                      .start_s = t,
                      .end_s = t + dur,
                      .device = 0,
                      .stream = (int64_t)(i % STREAMS),
                      .true_energy_j = name_power_w[k] * dur,
                      .kind = "kernel"};
        if (check(tw_events_add(ev, &e), "event")) return 1;
        t += dur + 20e-6 + 100e-6 * uniform();
        if (i % 1000 == 999) t += 2e-3 + 3e-3 * uniform(); /* a host sync now and then: the GPU idles */
    }
    tw_event range = {
        .name = "epoch", .start_s = 1.5, .end_s = t, .device = -1, .stream = -1, .true_energy_j = NAN, .kind = "nvtx"};
    if (check(tw_events_add(ev, &range), "range")) return 1;
    tw_events_sort(ev);
    if (check(tw_scenario_set_duration(sc, t + 1.5), "duration")) return 1;
    tw_sensor_config cfg = {.scenario = sc, .seed = 1};
    tw_sensor *s = NULL;
    tw_trace_writer *w = NULL;
    if (check(tw_sensor_open("sim", &cfg, &s), "sim")) return 1;
    size_t nr = tw_sensor_nreadings(s);
    const char **cols = calloc(nr, sizeof *cols);
    for (size_t i = 0; cols && i < nr; i++)
        cols[i] = tw_sensor_reading(s, i)->name;
    if (!cols || check(tw_trace_writer_open(p->trace, nr, cols, true, &w), "writer")) return 1;
    if (copy_rows(s, w)) return 1;
    tw_sensor_close(s);
    free(cols);
    if (check(tw_trace_writer_close(w), "close") || check(tw_events_save(ev, p->events), "save events")) return 1;
    struct stat a, b;
    double bytes = stat(p->trace, &a) == 0 && stat(p->events, &b) == 0 ? (double)(a.st_size + b.st_size) : NAN;
    printf(" run_s=%.3f csv_bytes_per_launch=%.1f", t + 1.5, bytes / (double)n);
    tw_events_free(ev);
    tw_scenario_free(sc);
    return 0;
}

/* ---------------------------------------------------------------- stage report (+ perfetto) */

/* The worst per-name error of the estimate against the truth (each name's
 * energy above active idle, from the events' true energies), over the names
 * the estimator measured (*measured of them; the rest it reports below
 * resolution, grouped or unobserved), and the rms of their errors over their
 * standard errors (*z_rms: about 1 when the standard errors are honest; the
 * worst error is large by selection: a name resolved at 2 sd has 50 %). */
static double max_error_pct(const tw_events *ev, const tw_estimate *est, size_t *measured, double *z_rms)
{
    /* each name's truth, by the name's text (the estimate's names are the events') */
    double truth[NAMES] = {0};
    for (size_t i = 0; i < tw_events_count(ev); i++) {
        const tw_event *e = tw_events_get(ev, i);
        int k = -1;
        if (e->kind && strcmp(e->kind, "kernel") == 0 && sscanf(e->name, "void kernel_%d<", &k) == 1 && k >= 0 &&
            k < NAMES)
            truth[k] += e->true_energy_j - ACTIVE_IDLE_W * (e->end_s - e->start_s);
    }
    double worst = 0, zz = 0;
    *measured = 0;
    for (size_t j = 0; j < est->nnames; j++) {
        const tw_est_name *x = &est->names[j];
        int k = -1;
        if (x->status != TW_EST_OK || !isfinite(x->energy_j) || sscanf(x->name, "void kernel_%d<", &k) != 1 || k < 0 ||
            k >= NAMES)
            continue;
        ++*measured;
        double err = 100.0 * fabs(x->energy_j / truth[k] - 1.0);
        if (err > worst) worst = err;
        double z = (x->energy_j - truth[k]) / x->energy_sd_j;
        zz += z * z;
    }
    *z_rms = *measured ? sqrt(zz / (double)*measured) : NAN;
    return worst;
}

static int stage_report(size_t n, const paths *p, bool perfetto)
{
    tw_events *ev = NULL;
    double t0 = now_s();
    if (check(tw_events_load(p->events, &ev), "load events")) return 1;
    double t1 = now_s();
    tw_est_config c;
    tw_est_config_init(&c);
    tw_estimate *est = NULL;
    if (check(tw_estimate_trace(p->trace, "", NULL, ev, &c, &est, NULL), "estimate")) return 1;
    double t2 = now_s();
    if (!perfetto) {
        size_t measured;
        double z_rms = NAN, err = max_error_pct(ev, est, &measured, &z_rms);
        printf(" load_s=%.3f estimate_s=%.3f max_error_pct=%.3f error_over_sd_rms=%.2f names_measured=%zu", t1 - t0,
               t2 - t1, err, z_rms, measured);
    } else {
        perfetto_device dev = {0, "", "simulated H100", est, ev};
        if (check(perfetto_write(p->perfetto, p->trace, &dev, 1, ev, est->event_energy_j, NULL), "perfetto")) return 1;
        double t3 = now_s();
        struct stat stt;
        double bytes = stat(p->perfetto, &stt) == 0 ? (double)stt.st_size : NAN;
        printf(" perfetto_s=%.3f perfetto_bytes_per_launch=%.1f (after load+estimate: %.3f s)", t3 - t2,
               bytes / (double)n, t2 - t0);
    }
    tw_estimate_free(est);
    tw_events_free(ev);
    return 0;
}

/* ---------------------------------------------------------------- stage analyze */

static int stage_analyze(const paths *p)
{
    tw_events *ev = NULL;
    tw_sensor *src = NULL;
    tw_analysis *an = NULL;
    size_t reading;
    tw_sensor_config cfg = {.path = p->trace};
    tw_analysis_options opt;
    tw_analysis_options_init(&opt);
    opt.corrected_path = p->corrected;
    if (check(tw_events_load(p->events, &ev), "load events") || check(tw_sensor_open("replay", &cfg, &src), "replay") ||
        check(tw_sensor_find(src, "power_buffer_w", &reading), "find") ||
        check(tw_analyze(src, reading, ev, &opt, &an), "analyze"))
        return 1;
    printf(" rows=%llu", (unsigned long long)tw_analysis_samples_read(an));
    tw_analysis_free(an);
    tw_sensor_close(src);
    tw_events_free(ev);
    return 0;
}

/* ---------------------------------------------------------------- driver */

static int run_stage(const char *stage, size_t n, const paths *p)
{
    fflush(stdout);
    double t0 = now_s();
    pid_t pid = fork();
    if (pid == 0) {
        printf("stage=%-8s launches=%zu", stage, n);
        int rc = strcmp(stage, "sim") == 0        ? stage_sim(n, p)
                 : strcmp(stage, "report") == 0   ? stage_report(n, p, false)
                 : strcmp(stage, "perfetto") == 0 ? stage_report(n, p, true)
                                                  : stage_analyze(p);
        printf(" own_peak_rss_mb=%.1f", peak_rss_mib());
        fflush(stdout);
        _exit(rc);
    }
    int st;
    if (pid < 0 || waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st)) {
        printf("\nbench_scale: stage %s failed\n", stage);
        return 1;
    }
    printf(" seconds=%.3f\n", now_s() - t0);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench_scale N [DIR [STAGE,...]]\n");
        return 2;
    }
    size_t n = (size_t)strtoull(argv[1], NULL, 10);
    const char *dir = argc > 2 ? argv[2] : "/tmp";
    const char *only = argc > 3 ? argv[3] : NULL; /* some stages: the files stay in DIR */
    paths p;
    snprintf(p.trace, sizeof p.trace, "%s/tw-scale-%zu.trace.csv", dir, n);
    snprintf(p.events, sizeof p.events, "%s/tw-scale-%zu.events.csv", dir, n);
    snprintf(p.perfetto, sizeof p.perfetto, "%s/tw-scale-%zu.perfetto-trace", dir, n);
    snprintf(p.corrected, sizeof p.corrected, "%s/tw-scale-%zu.corrected.csv", dir, n);
    static const char *const stages[] = {"sim", "report", "perfetto", "analyze"};
    int rc = 0;
    for (size_t i = 0; i < sizeof stages / sizeof *stages && !rc; i++)
        if (!only || strstr(only, stages[i])) rc = run_stage(stages[i], n, &p);
    if (!only) {
        remove(p.trace);
        remove(p.events);
        remove(p.perfetto);
        remove(p.corrected);
    }
    return rc;
}
