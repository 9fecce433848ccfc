/* Benchmark: how truewatt's paths grow with the number of launches, on a
 * synthetic run with exact truth (driven by scripts/bench-scale).
 *
 *   bench_scale N [DIR [STAGE,...]]   (with stages named, only those, and the files stay)
 *
 * N launches of 500 names (each name its own power, 250..600 W, and mean
 * duration, 4..60 us), with 20..120 us gaps (one launch per ~100 us) on four streams (and
 * 2..5 ms idle after every 1000th, a host sync), under
 * one NVTX range spanning the run (a long event), on the simulated H100.
 * Each stage runs in a process of its own, so its peak RSS is its own:
 *
 *   record   the run file as `truewatt run` records it: the simulated
 *            sensor's samples through tw_run_poll (the sampler's path), the
 *            launches as the injection library's events CSV imported by
 *            tw_run_import_events (truewatt's tail of it); its bytes per launch.
 *            The simulated GPU (the scenario the simulator draws, which holds
 *            every launch, and its sensor) runs first in a process of its own,
 *            as the GPU and the program are not truewatt's: it writes the
 *            events file and the sensor's rows, and the stage's own peak RSS
 *            is the record path's alone (sim_peak_rss_mb: the simulator's).
 *   report   the launches read back from the run file + the estimator over
 *            its samples (truewatt report RUN); the worst per-name error against
 *            the truth, which is generated again (the same seeded sequence)
 *   linger   the report again with the lingering-power term the H100's profile
 *            gives (linger_s 0.25 s; the simulator's own profile has none): its cost
 *   perfetto the Perfetto file of the run (counters, corrected power, slices)
 *   export   truewatt export RUN --csv: the trace and events CSVs
 *   analyze  tw_analyze_stream over power_buffer_w of the run file, its events replayed from
 *            the file, each event's energies consumed as they come (the core tw_analyze and
 *            truewatt analyze collect)
 *   names    (only when named) the report's every figure at full precision into
 *            DIR/tw-scale-N.sqlite.names.txt: the files of two builds compare byte
 *            for byte, whether a change kept the report's values
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
#include "inject/event_csv.h"
#include "report/perfetto.h"
#include "runfile/runfile.h"
#include "truewatt.h"

#define BENCH_NAME "bench_scale"
#include "bench_common.h"

#define NAMES 500
#define STREAMS 4
#define ACTIVE_IDLE_W 120.0 /* the simulated H100's level while a context lives */
#define H100_LINGER_S 0.25  /* data/profiles/nvidia-h100-80gb-hbm3_580.159.04.json's linger_s */
#define UUID "GPU-5ca1e000-0000-4000-8000-000000000000"

/* A seeded generator, so every run (and every stage) sees the same timeline. */
static tw_rng rng;
static double uniform(void) { return tw_rng_uniform(&rng); }

static char name_text[NAMES][48], name_mangled[NAMES][48];
static double name_power_w[NAMES], name_mean_s[NAMES];

static void make_names(void)
{
    tw_rng_seed(&rng, 16, 0);
    for (int k = 0; k < NAMES; k++) {
        snprintf(name_text[k], sizeof name_text[k], "void kernel_%03d<float, %d>(float*, int)", k, k % 7);
        snprintf(name_mangled[k], sizeof name_mangled[k], "_Z10kernel_%03dIfLi%dEEvPfi", k, k % 7);
        name_power_w[k] = 250.0 + 350.0 * uniform(); /* 130..480 W above active idle */
        name_mean_s[k] = 4e-6 + 56e-6 * uniform();
    }
}

/* The launches, one at a time: call make_names() first, then gen_next N times. */
typedef struct gen {
    double t; /* the next launch's start */
    size_t i;
} gen;

typedef struct launch_gen {
    int k; /* name */
    double start_s, dur_s;
    int stream;
} launch_gen;

static launch_gen gen_next(gen *g)
{
    launch_gen l;
    l.k = (int)(uniform() * NAMES);
    l.dur_s = name_mean_s[l.k] * (0.5 + uniform());
    l.start_s = g->t;
    l.stream = (int)(g->i % STREAMS);
    g->t += l.dur_s + 20e-6 + 100e-6 * uniform();
    if (g->i % 1000 == 999) g->t += 2e-3 + 3e-3 * uniform(); /* a host sync now and then: the GPU idles */
    g->i++;
    return l;
}

#define T_FIRST_S 1.5 /* idle, then the context, before the first launch */

typedef struct paths {
    char run[512], events[512], perfetto[512], corrected[512], csv_dir[512], rows[512];
} paths;

/* ---------------------------------------------------------------- stage record */

static int64_t ns_of(double t_s) { return (int64_t)llround(t_s * 1e9); }

static void put_seconds(FILE *f, int64_t ns)
{
    fprintf(f, "%lld.%09lld", (long long)(ns / 1000000000), (long long)(ns % 1000000000));
}

/* One line of the injection library's events file (TWI_CSV_HEADER's columns). */
static void put_kernel(FILE *f, const launch_gen *l, size_t i)
{
    int64_t a = ns_of(l->start_s), b = ns_of(l->start_s + l->dur_s);
    fprintf(f, "\"%s\",", name_text[l->k]);
    put_seconds(f, a);
    fputc(',', f);
    put_seconds(f, b);
    fprintf(f, ",0,%d,kernel,132,1,1,256,1,1,%zu," UUID ",%s,,,\n", l->stream, i + 1, name_mangled[l->k]);
}

/* The simulated sensor's rows, as the sampler would read them, in a
 * binary file: the readings (count, then each one's name and quantity),
 * then each row (time, values, own timestamps, valid flags). */
#define ROW_NAME 64
static int write_rows(tw_sensor *s, const char *path)
{
    FILE *f = fopen(path, "wb");
    if (!f) return 1;
    size_t nr = tw_sensor_nreadings(s);
    fwrite(&nr, sizeof nr, 1, f);
    for (size_t i = 0; i < nr; i++) {
        const tw_reading_info *info = tw_sensor_reading(s, i);
        char name[ROW_NAME] = {0};
        snprintf(name, sizeof name, "%s", info->name);
        int q = (int)info->quantity;
        fwrite(name, sizeof name, 1, f);
        fwrite(&q, sizeof q, 1, f);
    }
    for (;;) {
        tw_row row;
        bool eof;
        if (check(tw_sensor_next(s, &row, &eof), "sim row")) return 1;
        if (eof) break;
        fwrite(&row.t_s, sizeof row.t_s, 1, f);
        fwrite(row.value, sizeof *row.value, nr, f);
        fwrite(row.t_value_s, sizeof *row.t_value_s, nr, f);
        fwrite(row.valid, sizeof *row.valid, nr, f);
    }
    return fclose(f) != 0;
}

/* write_rows's rows into the run file, as the sampler polls them. */
static int record_samples(tw_run *run, const char *path)
{
    FILE *f = fopen(path, "rb");
    size_t nr = 0;
    if (!f || fread(&nr, sizeof nr, 1, f) != 1 || nr == 0 || nr > 64) return 1;
    int64_t *ids = calloc(nr, sizeof *ids);
    double *v = calloc(2 * nr, sizeof *v);
    uint8_t *valid = calloc(nr, 1);
    if (!ids || !v || !valid) return 1;
    for (size_t i = 0; i < nr; i++) {
        char name[ROW_NAME];
        int q;
        if (fread(name, sizeof name, 1, f) != 1 || fread(&q, sizeof q, 1, f) != 1) return 1;
        name[ROW_NAME - 1] = 0;
        if (check(tw_run_add_reading(run, 0, name, (tw_quantity)q, 0, &ids[i]), "reading")) return 1;
    }
    for (double t; fread(&t, sizeof t, 1, f) == 1;) {
        if (fread(v, sizeof *v, 2 * nr, f) != 2 * nr || fread(valid, 1, nr, f) != nr) return 1;
        if (check(tw_run_poll(run, 0, t, nr, ids, v, v + nr, valid), "poll")) return 1;
    }
    fclose(f);
    free(ids);
    free(v);
    free(valid);
    return 0;
}

/* The simulated GPU: the scenario of the launches (names, powers) and the
 * injection library's events file of them; the sensor's rows (write_rows).
 * In a process of its own (the scenario holds every launch). */
static int simulate(size_t n, const paths *p)
{
    make_names();
    tw_scenario *sc = NULL;
    if (check(tw_scenario_new(TW_SIM_H100, &sc), "scenario")) return 1;
    FILE *f = fopen(p->events, "w");
    if (!f) return 1;
    fputs(TWI_CSV_HEADER, f);
    gen g = {T_FIRST_S, 0};
    for (size_t i = 0; i < n; i++) {
        launch_gen l = gen_next(&g);
        if (check(tw_scenario_add_kernel(sc, name_text[l.k], l.start_s, l.dur_s, name_power_w[l.k]), "kernel"))
            return 1;
        put_kernel(f, &l, i);
    }
    fprintf(f, "epoch,");
    put_seconds(f, ns_of(T_FIRST_S));
    fputc(',', f);
    put_seconds(f, ns_of(g.t));
    fprintf(f, ",,,nvtx,,,,,,,,,,,12345,1\n");
    if (fclose(f) != 0 || check(tw_scenario_set_duration(sc, g.t + 1.5), "duration")) return 1;
    tw_sensor_config cfg = {.scenario = sc, .seed = 1};
    tw_sensor *s = NULL;
    if (check(tw_sensor_open("sim", &cfg, &s), "sim") || write_rows(s, p->rows)) return 1;
    tw_sensor_close(s);
    tw_scenario_free(sc);
    return 0;
}

static int stage_record(size_t n, const paths *p)
{
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) _exit(simulate(n, p));
    int st;
    struct rusage ru; /* the simulator's: this process's only child */
    if (pid < 0 || waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) ||
        getrusage(RUSAGE_CHILDREN, &ru) != 0)
        return 1;
    double t0 = now_s();
    tw_run *run = NULL;
    tw_run_device dev = {.index = 0, .uuid = UUID, .name = "simulated H100", .power_limit_w = 700};
    tw_run_tail tail;
    tw_run_tail_init(&tail);
    if (check(tw_run_create(p->run, &run), "run file") || check(tw_run_put_device(run, &dev), "device") ||
        check(tw_run_set_int(run, "t0_mono_ns", 0), "meta") || record_samples(run, p->rows))
        return 1;
    double run_s = tw_run_last_poll_s(run); /* the simulated run's length: its last row */
    if (check(tw_run_import_events(run, p->events, &tail), "import events") || check(tw_run_close(run), "close"))
        return 1;
    struct stat a;
    double bytes = stat(p->run, &a) == 0 ? (double)a.st_size : NAN;
    printf(" run_s=%.3f record_s=%.3f run_bytes_per_launch=%.1f imported=%lu sim_peak_rss_mb=%.1f", run_s, now_s() - t0,
           bytes / (double)n, tail.events, (double)ru.ru_maxrss / 1024.0);
    remove(p->events);
    remove(p->rows);
    return 0;
}

/* ---------------------------------------------------------------- stage report (+ perfetto) */

/* Each name's true energy above active idle, generated again (the run file
 * holds no truth): the same seeded sequence as stage_record's. */
static void truth_of(size_t n, double truth[NAMES])
{
    make_names();
    gen g = {T_FIRST_S, 0};
    for (size_t i = 0; i < n; i++) {
        launch_gen l = gen_next(&g);
        truth[l.k] += (name_power_w[l.k] - ACTIVE_IDLE_W) * l.dur_s;
    }
}

/* The worst per-name error of the estimate against the truth, over the names
 * the estimator measured (*measured of them; the rest it reports below
 * resolution, grouped or unobserved), and the rms of their errors over their
 * standard errors (*z_rms: about 1 when the standard errors are honest; the
 * worst error is large by selection: a name resolved at 2 sd has 50 %), and
 * the worst name's own standard error in percent of its energy (*worst_sd_pct:
 * whether the worst error is a name barely resolved, as the selection makes it). */
static double max_error_pct(size_t n, const tw_estimate *est, size_t *measured, double *z_rms, double *worst_sd_pct)
{
    static double truth[NAMES];
    truth_of(n, truth);
    double worst = 0, zz = 0;
    *measured = 0;
    *worst_sd_pct = NAN;
    for (size_t j = 0; j < est->nnames; j++) {
        const tw_est_name *x = &est->names[j];
        int k = -1;
        if (x->status != TW_EST_OK || !isfinite(x->energy_j) || sscanf(x->name, "void kernel_%d<", &k) != 1 || k < 0 ||
            k >= NAMES)
            continue;
        ++*measured;
        double err = 100.0 * fabs(x->energy_j / truth[k] - 1.0);
        if (err > worst) {
            worst = err;
            *worst_sd_pct = 100.0 * x->energy_sd_j / x->energy_j;
        }
        double z = (x->energy_j - truth[k]) / x->energy_sd_j;
        zz += z * z;
    }
    *z_rms = *measured ? sqrt(zz / (double)*measured) : NAN;
    return worst;
}

/* Every figure of the estimate at full precision, into path: two builds'
 * files compare byte for byte (the names stage: whether a change kept the
 * report's values). */
static int write_names(const tw_estimate *est, const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f) return 1;
    fprintf(f, "baseline_j=%.17g model_j=%.17g reference_j=%.17g shift_s=%.17g shift_sd_s=%.17g\n", est->baseline_j,
            est->model_j, est->reference_j, est->shift_s, est->shift_sd_s);
    for (size_t r = 0; r < est->nreadings; r++)
        fprintf(f, "reading %s used=%zu gain=%.17g noise_w=%.17g rms_w=%.17g lag1=%.17g\n", est->readings[r].name,
                est->readings[r].used, est->readings[r].gain, est->readings[r].noise_w, est->readings[r].rms_w,
                est->readings[r].lag1);
    for (size_t j = 0; j < est->nnames; j++) {
        const tw_est_name *x = &est->names[j];
        fprintf(f,
                "name %s launches=%llu active_s=%.17g power_w=%.17g power_sd_w=%.17g energy_j=%.17g sd=%.17g "
                "upper_j=%.17g group=%d status=%d\n",
                x->name, (unsigned long long)x->launches, x->active_s, x->power_w, x->power_sd_w, x->energy_j,
                x->energy_sd_j, x->upper_j, x->group, (int)x->status);
    }
    for (size_t g = 0; g < est->ngroups; g++)
        fprintf(f, "group %s energy_j=%.17g sd=%.17g\n", est->groups[g].label, est->groups[g].energy_j,
                est->groups[g].energy_sd_j);
    for (size_t r = 0; r < est->nranges; r++)
        fprintf(f, "range %s energy_j=%.17g sd=%.17g above_j=%.17g\n", est->ranges[r].name, est->ranges[r].energy_j,
                est->ranges[r].energy_sd_j, est->ranges[r].above_j);
    double sum = 0; /* the per-launch energies, summed in order */
    for (size_t i = 0; i < est->nevents; i++) {
        double j = tw_estimate_event_energy_j(est, i);
        if (isfinite(j)) sum += j;
    }
    fprintf(f, "events=%zu event_energy_sum_j=%.17g\n", est->nevents, sum);
    return fclose(f) != 0;
}

static int stage_report(size_t n, const paths *p, bool perfetto, bool names, double linger_s)
{
    tw_run *run = NULL;
    tw_run_feed *rf = NULL;
    tw_feed feed;
    double t0 = now_s();
    /* as `truewatt report` does: the launches replayed from the run file, never all held */
    if (check(tw_run_open(p->run, &run), "open run") || check(tw_run_feed_open(run, &rf, &feed), "open feed")) return 1;
    double t1 = now_s();
    tw_est_config c;
    tw_est_config_init(&c);
    /* as `truewatt report` does: the devices table's enforced power limit bounds each name's power */
    c.power_limit_w = 700;
    c.linger_s = linger_s; /* the linger stage: the H100 profile's lingering-power term (0: none) */
    tw_estimate *est = NULL;
    if (check(tw_estimate_trace(p->run, "", NULL, &feed, &c, &est, NULL), "estimate")) return 1;
    double t2 = now_s();
    if (names) {
        char path[600];
        snprintf(path, sizeof path, "%s.names.txt", p->run);
        if (write_names(est, path)) return 1;
        printf(" names=%s", path);
    } else if (!perfetto) {
        size_t measured;
        double z_rms = NAN, worst_sd = NAN, err = max_error_pct(n, est, &measured, &z_rms, &worst_sd);
        printf(" load_s=%.3f estimate_s=%.3f max_error_pct=%.3f worst_name_sd_pct=%.1f error_over_sd_rms=%.2f "
               "names_measured=%zu",
               t1 - t0, t2 - t1, err, worst_sd, z_rms, measured);
    } else {
        perfetto_device dev = {0, "", "simulated H100", est, &feed};
        if (check(perfetto_write(p->perfetto, p->run, &dev, 1, &feed, est, NULL), "perfetto")) return 1;
        double t3 = now_s();
        struct stat stt;
        double bytes = stat(p->perfetto, &stt) == 0 ? (double)stt.st_size : NAN;
        printf(" perfetto_s=%.3f perfetto_bytes_per_launch=%.1f (after load+estimate: %.3f s)", t3 - t2,
               bytes / (double)n, t2 - t0);
    }
    tw_estimate_free(est);
    tw_run_feed_free(rf);
    tw_run_close(run);
    return 0;
}

/* ---------------------------------------------------------------- stage export */

static int stage_export(size_t n, const paths *p)
{
    char trace[600], events[600];
    snprintf(trace, sizeof trace, "%s.trace.csv", p->csv_dir);
    snprintf(events, sizeof events, "%s.events.csv", p->csv_dir);
    tw_run *run = NULL;
    if (check(tw_run_open(p->run, &run), "open run") || check(tw_run_export_trace(run, trace), "export trace") ||
        check(tw_run_export_events(run, events), "export events"))
        return 1;
    tw_run_close(run);
    struct stat a, b;
    double bytes = stat(trace, &a) == 0 && stat(events, &b) == 0 ? (double)(a.st_size + b.st_size) : NAN;
    printf(" csv_bytes_per_launch=%.1f", bytes / (double)n);
    remove(trace);
    remove(events);
    return 0;
}

/* ---------------------------------------------------------------- stage analyze */

/* Each event's corrected energy as it finishes (tw_analyze_stream): summed,
 * so that the stage consumes what it is handed and holds none of it. */
typedef struct analyze_sum {
    size_t events;
    double corrected_j;
} analyze_sum;

static tw_status sum_event(void *ctx, size_t index, const tw_event *e, const tw_event_energy *r)
{
    (void)index;
    (void)e;
    analyze_sum *s = ctx;
    s->events++;
    if (isfinite(r->energy_j[TW_METHOD_CORRECTED])) s->corrected_j += r->energy_j[TW_METHOD_CORRECTED];
    return TW_OK;
}

static int stage_analyze(const paths *p)
{
    tw_run *run = NULL;
    tw_event_feed *feed = NULL;
    tw_sensor *src = NULL;
    tw_analysis *an = NULL;
    size_t reading;
    tw_sensor_config cfg = {.path = p->run};
    tw_analysis_options opt;
    tw_analysis_options_init(&opt);
    opt.corrected_path = p->corrected;
    analyze_sum sum = {0, 0};
    if (check(tw_run_open(p->run, &run), "open run") || check(tw_event_feed_of_run(run, &feed), "event feed") ||
        check(tw_sensor_open("replay", &cfg, &src), "replay") ||
        check(tw_sensor_find(src, "power_buffer_w", &reading), "find") ||
        check(tw_analyze_stream(src, reading, feed, &opt, sum_event, &sum, &an), "analyze"))
        return 1;
    printf(" rows=%llu events=%zu corrected_j=%.6f", (unsigned long long)tw_analysis_samples_read(an), sum.events,
           sum.corrected_j);
    tw_analysis_free(an);
    tw_sensor_close(src);
    tw_event_feed_free(feed);
    tw_run_close(run);
    return 0;
}

/* ---------------------------------------------------------------- driver */

/* CPU seconds (user + system) of the children waited for so far. */
static double children_cpu_s(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_CHILDREN, &ru) != 0) return NAN;
    return (double)ru.ru_utime.tv_sec + 1e-6 * (double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_sec +
           1e-6 * (double)ru.ru_stime.tv_usec;
}

static int run_stage(const char *stage, size_t n, const paths *p)
{
    fflush(stdout);
    double t0 = now_s(), cpu0 = children_cpu_s();
    pid_t pid = fork();
    if (pid == 0) {
        printf("stage=%-8s launches=%zu", stage, n);
        int rc = strcmp(stage, "record") == 0     ? stage_record(n, p)
                 : strcmp(stage, "report") == 0   ? stage_report(n, p, false, false, 0)
                 : strcmp(stage, "linger") == 0   ? stage_report(n, p, false, false, H100_LINGER_S)
                 : strcmp(stage, "names") == 0    ? stage_report(n, p, false, true, 0)
                 : strcmp(stage, "perfetto") == 0 ? stage_report(n, p, true, false, 0)
                 : strcmp(stage, "export") == 0   ? stage_export(n, p)
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
    /* the stage's own CPU time: on a shared machine its wall time is others' too */
    printf(" seconds=%.3f cpu_s=%.3f\n", now_s() - t0, children_cpu_s() - cpu0);
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
    snprintf(p.run, sizeof p.run, "%s/tw-scale-%zu.sqlite", dir, n);
    snprintf(p.events, sizeof p.events, "%s/tw-scale-%zu.inject-events.csv", dir, n);
    snprintf(p.perfetto, sizeof p.perfetto, "%s/tw-scale-%zu.perfetto-trace", dir, n);
    snprintf(p.corrected, sizeof p.corrected, "%s/tw-scale-%zu.corrected.csv", dir, n);
    snprintf(p.csv_dir, sizeof p.csv_dir, "%s/tw-scale-%zu.export", dir, n);
    snprintf(p.rows, sizeof p.rows, "%s/tw-scale-%zu.sensor-rows", dir, n);
    static const char *const stages[] = {"record", "report", "linger", "perfetto", "export", "analyze"};
    int rc = 0;
    for (size_t i = 0; i < sizeof stages / sizeof *stages && !rc; i++)
        if (!only || strstr(only, stages[i])) rc = run_stage(stages[i], n, &p);
    if (!rc && only && strstr(only, "names")) rc = run_stage("names", n, &p); /* asked for by name only */
    if (!only) {
        char wal[600];
        remove(p.run);
        snprintf(wal, sizeof wal, "%s-wal", p.run);
        remove(wal);
        snprintf(wal, sizeof wal, "%s-shm", p.run);
        remove(wal);
        remove(p.perfetto);
        remove(p.corrected);
    }
    return rc;
}
