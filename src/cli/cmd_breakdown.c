/* truewatt breakdown -- CMD: where an application's energy goes (Delestrac
 * et al. 2024, §VII, Figs. 9-10). Nsight Compute counts the sectors each
 * memory level served (one run of CMD), `truewatt run` measures the energy
 * (another run of CMD), and the memory-energy profile of `truewatt mem
 * calibrate` prices the accesses (bench/breakdown.h). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/breakdown.h"
#include "cli/cli.h"
#include "cli/experiment.h"
#include "cli/spawn.h"
#include "core/error.h"
#include "core/json.h"
#include "core/json_read.h"
#include "mem/ncu_csv.h"
#include "report/table.h"
#include "runfile/runfile.h"

#define CMD "breakdown"

typedef struct bd_args {
    const char *profile, *range, *count_range, *ncu, *out, *label, *device, *counts_from;
    bool json;
    uint64_t sample; /* ncu profiles the first `sample` launches of the span; 0 = all */
    char **cmd;      /* CMD and its arguments, NULL-terminated (argv's tail) */
} bd_args;

/* What ncu profiled: the counts, and how many launches over what kernel time. */
typedef struct bd_counted {
    double counts[TW_BD_METRICS];
    unsigned long launches;
    double scale; /* the span's kernel time / the profiled kernels' time (1 when all were profiled) */
    unsigned long span_launches;
} bd_counted;

/* What `truewatt run` measured for the span. */
typedef struct bd_measured {
    double total_j, dynamic_j, time_s, idle_w;
    double kernel_s;  /* the kernels' summed time in the span (the run's timeline) */
    double check_pct; /* the run's kernels + idle against the energy counter; NaN when none */
    char gpu[128], source[160];
} bd_measured;

/* The options, declared once (cli/opts.h). */
static int parse_args(int argc, char **argv, bd_args *a)
{
    const cli_opt opt[] = {
        {.name = "mem-profile",
         .type = CLI_OPT_STRING,
         .arg = "FILE",
         .help = "mem-profile.json of `truewatt mem calibrate` on this GPU (required)",
         .out = &a->profile},
        {.name = "range",
         .type = CLI_OPT_STRING,
         .arg = "NAME",
         .help = "only the NVTX range NAME (its energy and its kernels, from the run's\ntimeline); default: "
                 "all of CMD's kernels (static = idle power x their time)",
         .out = &a->range},
        {.name = "sample",
         .type = CLI_OPT_U64,
         .arg = "N",
         .help = "ncu profiles only the first N kernel launches of the span (it takes\ntens of ms per launch); "
                 "their counts are scaled by the span's kernel\ntime over theirs, as timed by the run: for spans "
                 "of repeated, alike\nlaunches (default: all)",
         .out = &a->sample,
         .min = 1,
         .max = 100000000},
        {.name = "count-range",
         .type = CLI_OPT_STRING,
         .arg = "NAME",
         .help = "ncu profiles the NVTX range NAME instead of --range's: a part of\nCMD that does what the "
                 "measured span does, scaled by kernel time as --sample",
         .out = &a->count_range},
        {.name = "ncu", .type = CLI_OPT_STRING, .arg = "PATH", .def = "ncu", .help = "Nsight Compute", .out = &a->ncu},
        {.name = "counts-from",
         .type = CLI_OPT_STRING,
         .arg = "NCU.csv",
         .help = "the counts of an earlier breakdown of the same CMD (its ncu.csv):\nno ncu run, only the energy "
                 "is measured again",
         .out = &a->counts_from},
        {.name = "out",
         .type = CLI_OPT_STRING,
         .arg = "DIR",
         .def = "truewatt-breakdown",
         .help = "breakdown.csv (canonical), breakdown.json, breakdown.dat/.gp/.png,\nncu.csv, run.json and the "
                 "run's trace, events and Perfetto file",
         .out = &a->out},
        {.name = "label",
         .type = CLI_OPT_STRING,
         .arg = "TEXT",
         .help = "the row's name in the CSV and the plot (default: CMD's arguments)",
         .out = &a->label},
        {.name = "device",
         .type = CLI_OPT_STRING,
         .arg = "N",
         .help = "the GPU (NVML index) to measure",
         .out = &a->device},
        {.name = "json", .type = CLI_OPT_FLAG, .help = "the breakdown as JSON on stdout", .out = &a->json},
    };
    const cli_opts o = {
        .cmd = CMD,
        .synopsis = "--mem-profile FILE [--range NAME] [--count-range NAME] [--sample N]\n"
                    "                          [--ncu PATH] [--out DIR] [--label TEXT] [--device N] [--json] -- CMD "
                    "[ARGS...]",
        .about = "Where CMD's GPU energy goes (Delestrac et al. 2024, §VII): static energy, each memory level's\n"
                 "accesses times its energy per access (lower bounds from `truewatt mem calibrate`), and the rest\n"
                 "of the dynamic energy. CMD runs twice and must launch the same kernels in the same order: first\n"
                 "under `truewatt run`, which measures the energy and the kernels' timeline, then under Nsight\n"
                 "Compute (ncu --csv --clock-control none --cache-control none), which counts the sectors each\n"
                 "level served in the span's launches, picked by index from the timeline.",
        .opt = opt,
        .n = CLI_OPTS_N(opt),
        .min_args = 1,
        .max_args = CLI_OPTS_ANY,
        .missing = "name the command to measure after --",
        .stop_at_arg = true};
    int first;
    int rc = cli_opts_parse(&o, argc, argv, &first);
    if (rc) return rc;
    if (!a->profile) return cli_usage(CMD, "--mem-profile FILE is required (truewatt mem calibrate writes it)");
    a->cmd = argv + first;
    return 0;
}

/* ---------------------------------------------------------------- the two runs */

/* head[0..nh) then CMD, NULL-terminated (malloc'd; NULL when out of memory) */
static char **with_cmd(char *const *head, size_t nh, char **cmd)
{
    size_t nc = 0;
    while (cmd[nc])
        nc++;
    char **v = malloc((nh + nc + 1) * sizeof *v);
    if (!v) return NULL;
    memcpy(v, head, nh * sizeof *v);
    memcpy(v + nh, cmd, (nc + 1) * sizeof *v);
    return v;
}

/* Runs head + CMD to its end: its exit status, or -1 (message on stderr). */
static int spawn_with_cmd(char *const *head, size_t nh, char **cmd, const char *out_path)
{
    char **argv = with_cmd(head, nh, cmd);
    if (!argv) {
        fprintf(stderr, "truewatt %s: out of memory\n", CMD);
        return -1;
    }
    int rc = cli_spawn_wait(CMD, argv, out_path);
    free(argv);
    return rc;
}

static int read_counts(const char *log, bd_counted *k);

static int count_sectors(const bd_args *a, unsigned long skip, unsigned long count, bd_counted *k)
{
    char ncu[4096], metrics[2048], log[4200], skip_s[32], count_s[32];
    if (cli_find_ncu(CMD, a->ncu, ncu, sizeof ncu) != 0) return CLI_EXIT_FAIL;
    size_t nm;
    const char *const *m = tw_breakdown_metrics(&nm);
    tw_ncu_metrics_arg(m, nm, metrics, sizeof metrics);
    snprintf(log, sizeof log, "%s/ncu.csv", a->out);
    snprintf(skip_s, sizeof skip_s, "%lu", skip);
    snprintf(count_s, sizeof count_s, "%lu", count);
    /* the launches by index, not an NVTX filter: a range holds only its own thread's launches (PyTorch's
     * backward runs on another); no cache flush between replays: the counts of CMD as it runs */
    char *head[] = {ncu,
                    "--csv",
                    "--clock-control",
                    "none",
                    "--cache-control",
                    "none",
                    "--target-processes",
                    "all",
                    "--launch-skip",
                    skip_s,
                    "--launch-count",
                    count_s,
                    "--metrics",
                    metrics,
                    "--log-file",
                    log};
    fprintf(stderr, "truewatt %s: counting sectors: ncu runs %s (%s)\n", CMD, a->cmd[0], log);
    remove(log);
    int rc = spawn_with_cmd(head, sizeof head / sizeof head[0], a->cmd, NULL);
    if (rc != 0) {
        fprintf(stderr, "truewatt %s: the run under ncu failed (exit %d); its log: %s\n", CMD, rc, log);
        return CLI_EXIT_FAIL;
    }
    return read_counts(log, k);
}

/* The sums of an ncu CSV (this run's or --counts-from's). */
static int read_counts(const char *log, bd_counted *k)
{
    size_t nm;
    const char *const *m = tw_breakdown_metrics(&nm);
    tw_ncu_report rep;
    tw_status st = tw_ncu_read_path(log, m, nm, &rep);
    if (st != TW_OK) return cli_fail(CMD, st);
    size_t missing = 0;
    for (size_t i = 0; i < nm; i++) {
        size_t miss;
        k->counts[i] = tw_ncu_sum(&rep, i, &miss);
        missing += miss;
    }
    k->launches = (unsigned long)rep.n;
    tw_ncu_report_free(&rep);
    if (k->launches == 0) {
        fprintf(stderr, "truewatt %s: ncu profiled no kernel (%s)\n", CMD, log);
        return CLI_EXIT_FAIL;
    }
    if (missing) fprintf(stderr, "truewatt %s: warning: %zu metric values missing in %s\n", CMD, missing, log);
    return 0;
}

static int measure_energy(const bd_args *a, char *json_path, size_t cap)
{
    char self[4096], trace[4200], events[4200], perfetto[4200];
    if (cli_self_exe(CMD, self, sizeof self) != 0) return CLI_EXIT_FAIL;
    snprintf(json_path, cap, "%s/run.json", a->out);
    snprintf(trace, sizeof trace, "%s/run.sqlite", a->out);
    snprintf(events, sizeof events, "%s/run.events.csv", a->out);
    snprintf(perfetto, sizeof perfetto, "%s/run.perfetto-trace", a->out);
    /* the energy counter read every 20 ms, fixed: by default a costly slow reading is stretched up to 1 s,
     * which leaves a span of a fraction of a second inside one interval of the counter */
    char *head[16] = {self, "run", "--json", "-o", trace, "--perfetto", perfetto, "--slow-period", "0.02"};
    size_t n = 0;
    while (head[n])
        n++;
    if (a->device) head[n++] = "--device", head[n++] = (char *)a->device;
    head[n++] = "--";
    fprintf(stderr, "truewatt %s: measuring energy: truewatt run %s (%s)\n", CMD, a->cmd[0], json_path);
    int rc = spawn_with_cmd(head, n, a->cmd, json_path);
    if (rc != 0) {
        fprintf(stderr, "truewatt %s: the measured run failed (exit %d); its report: %s\n", CMD, rc, json_path);
        return CLI_EXIT_FAIL;
    }
    /* the launches, for the window that ncu counts */
    tw_run *run = NULL;
    tw_status st = tw_run_open(trace, &run);
    if (st == TW_OK) st = tw_run_export_events(run, events);
    tw_status cst = tw_run_close(run);
    if (st == TW_OK) st = cst;
    return st == TW_OK ? 0 : cli_fail(CMD, st);
}

/* ---------------------------------------------------------------- the run's report */

static const tw_json *pick_device(const tw_json *doc, const char *want)
{
    const tw_json *devs = tw_json_get(doc, "devices");
    for (size_t i = 0; i < tw_json_len(devs); i++) {
        const tw_json *d = tw_json_at(devs, i);
        if (!want || tw_json_number(tw_json_get(d, "index")) == atof(want)) return d;
    }
    return NULL;
}

static tw_status span_of_range(const tw_json *d, const char *range, bd_measured *m)
{
    const tw_json *r = tw_json_get(d, "nvtx_ranges");
    for (size_t i = 0; i < tw_json_len(r); i++) {
        const tw_json *x = tw_json_at(r, i);
        const char *name = tw_json_string(tw_json_get(x, "name"));
        if (!name || strcmp(name, range)) continue;
        m->total_j = tw_json_number(tw_json_get(x, "energy_j"));
        m->dynamic_j = tw_json_number(tw_json_get(x, "above_baseline_j"));
        m->time_s = tw_json_number(tw_json_get(x, "end_s")) - tw_json_number(tw_json_get(x, "start_s"));
        return TW_OK;
    }
    return tw_fail(TW_ENOTFOUND, "the measured run has no NVTX range '%s'", range);
}

static void span_of_kernels(const tw_json *d, bd_measured *m)
{
    /* the kernels' energy above the baseline: the estimate's total (groups
     * included, names below resolution at their estimate) */
    const tw_json *k = tw_json_get(d, "names");
    for (size_t i = 0; i < tw_json_len(k); i++) {
        const tw_json *x = tw_json_at(k, i);
        const char *kind = tw_json_string(tw_json_get(x, "kind"));
        if (kind && strcmp(kind, "kernel")) continue;
        m->time_s += tw_json_number(tw_json_get(x, "time_s"));
    }
    m->dynamic_j = tw_json_number(tw_json_get(tw_json_get(d, "estimate"), "kernels_j"));
    m->total_j = m->dynamic_j + m->idle_w * m->time_s;
}

/* The launches ncu profiles, from the run's timeline (kernels in start order, as launched on one
 * stream): those before the count range (or the span), and those in it; the span's kernels and time. */
typedef struct bd_window {
    unsigned long skip, count, span_n;
    double span_s;
} bd_window;

static bool in_range(const tw_event *e, double t0, double t1) { return e->start_s >= t0 && e->end_s <= t1; }

static tw_status nvtx_range(const tw_events *ev, const char *name, double *t0, double *t1)
{
    for (size_t i = 0; i < tw_events_count(ev); i++) {
        const tw_event *e = tw_events_get(ev, i);
        if (e->kind && !strcmp(e->kind, "nvtx") && e->name && !strcmp(e->name, name)) {
            *t0 = e->start_s;
            *t1 = e->end_s;
            return TW_OK;
        }
    }
    return tw_fail(TW_ENOTFOUND, "the run's timeline has no NVTX range '%s'", name);
}

static tw_status launch_window(const char *events_path, const bd_args *a, bd_window *w)
{
    tw_events *ev = NULL;
    tw_status st = tw_events_load(events_path, &ev);
    if (st != TW_OK) return st;
    tw_events_sort(ev);
    double s0 = -INFINITY, s1 = INFINITY, c0, c1;
    if (a->range) st = nvtx_range(ev, a->range, &s0, &s1);
    c0 = s0, c1 = s1;
    if (st == TW_OK && a->count_range) st = nvtx_range(ev, a->count_range, &c0, &c1);
    memset(w, 0, sizeof *w);
    for (size_t i = 0; st == TW_OK && i < tw_events_count(ev); i++) {
        const tw_event *e = tw_events_get(ev, i);
        if (!e->kind || strcmp(e->kind, "kernel")) continue;
        if (e->start_s < c0) w->skip++;
        if (in_range(e, c0, c1)) w->count++;
        if (in_range(e, s0, s1)) w->span_n++, w->span_s += e->end_s - e->start_s;
    }
    tw_events_free(ev);
    if (st == TW_OK && w->count == 0) st = tw_fail(TW_EEMPTY, "the run's timeline has no kernel in the span");
    return st;
}

static tw_status read_run(const char *path, const bd_args *a, bd_measured *m)
{
    tw_json *doc = NULL;
    tw_status st = tw_json_load(path, &doc);
    if (st != TW_OK) return st;
    const tw_json *d = pick_device(doc, a->device);
    const char *err = tw_json_string(tw_json_get(d, "error"));
    if (!d || err) {
        st = tw_fail(TW_EEMPTY, "%s: no energy report for the GPU%s%s", path, err ? ": " : "", err ? err : "");
        tw_json_free(doc);
        return st;
    }
    const tw_json *est = tw_json_get(d, "estimate");
    m->idle_w = tw_json_number(tw_json_get(est, "baseline_mean_w"));
    m->check_pct = tw_json_number(tw_json_get(est, "conservation_pct"));
    const char *g = tw_json_string(tw_json_get(d, "name"));
    snprintf(m->gpu, sizeof m->gpu, "%s", g ? g : "?");
    const char *reading = tw_json_string(tw_json_get(est, "readings_fitted"));
    snprintf(m->source, sizeof m->source, "%s (the estimator)", reading ? reading : "?");
    if (a->range)
        st = span_of_range(d, a->range, m);
    else
        span_of_kernels(d, m);
    tw_json_free(doc);
    return st;
}

/* The profiled launches stand for the span's by kernel time (when they are not all of them). */
static int scale_counts(const bd_args *a, const bd_window *w, bd_counted *k)
{
    k->scale = 1;
    k->span_launches = w->span_n;
    if (!a->count_range && k->launches == w->span_n) return 0; /* the span itself, all of it */
    double profiled_s = k->counts[TW_BD_TIME_NS] * 1e-9;
    if (!(profiled_s > 0) || !(w->span_s > 0)) {
        fprintf(stderr, "truewatt %s: cannot scale the counts: no kernel time (%g s profiled, %g s in the span)\n", CMD,
                profiled_s, w->span_s);
        return CLI_EXIT_FAIL;
    }
    k->scale = w->span_s / profiled_s;
    for (int i = 0; i < TW_BD_METRICS; i++)
        k->counts[i] *= k->scale;
    return 0;
}

/* ---------------------------------------------------------------- output */

static const char *const parts[] = {"static", "shared", "l1", "l2", "dram", "rest"};

static void part_values(const tw_breakdown *b, double v[6])
{
    v[0] = b->static_j;
    for (int lv = 0; lv < TW_MEM_LEVELS; lv++)
        v[1 + lv] = b->level_j[lv];
    v[5] = b->rest_j;
}

static void print_text(const tw_breakdown *b, const bd_measured *m, const char *label, const bd_counted *k)
{
    printf("energy breakdown of %s on %s: %.4g J over %.4g s (%s)\n", label, m->gpu, b->total_j, m->time_s, m->source);
    printf("counts: ncu profiled %lu of the span's %lu kernel launches", k->launches, k->span_launches);
    if (k->scale != 1)
        printf("; scaled by %.4g (the span's kernel time %.4g s over the profiled %.4g s)\n", k->scale, m->kernel_s,
               k->counts[TW_BD_TIME_NS] / k->scale * 1e-9);
    else
        printf("\n");
    static const char *const h[] = {"part", "energy_J", "of_total_%", "of_dynamic_%", "sectors"};
    table *t = table_new(5, h);
    if (!t) return;
    double v[6], dyn = b->total_j - b->static_j;
    part_values(b, v);
    for (int i = 0; i < 6; i++) {
        table_cell(t, "%s", parts[i]);
        table_cell(t, "%.4g", v[i]);
        table_cell(t, "%.1f", 100 * v[i] / b->total_j);
        if (i == 0)
            table_cell(t, "-");
        else
            table_cell(t, "%.1f", 100 * v[i] / dyn);
        if (i >= 1 && i <= 4)
            table_cell(t, "%.4g", b->sectors[i - 1]);
        else
            table_cell(t, "-");
    }
    table_print(t, stdout);
    table_free(t);
    printf("memory (lower bound) %.4g J = %.1f %% of the dynamic energy\n", b->memory_j, 100 * b->memory_j / dyn);
    printf("check: static + memory + rest = %.6g J vs measured %.6g J: %+.3f %% (%s)\n", b->sum_j, b->total_j,
           b->sum_diff_pct,
           b->memory_fits ? "within 1 %" : "the memory lower bound exceeds the dynamic energy: rest shown as 0");
    if (isfinite(m->check_pct))
        printf("the run's own check: kernels + idle vs the energy counter %+.2f %%\n", m->check_pct);
    if (b->note[0]) printf("note: %s\n", b->note);
}

static int write_csv(const bd_args *a, const tw_breakdown *b, const bd_measured *m, const bd_counted *k,
                     const char *label, const char *prov)
{
    char path[4096];
    FILE *f = cli_open_out(CMD, a->out, "breakdown.csv", path, sizeof path);
    if (!f) return CLI_EXIT_FAIL;
    fprintf(f, "# %s; gpu %s; energy %s; idle %.2f W\n", prov, m->gpu, m->source, m->idle_w);
    fprintf(f, "label,time_s,total_j,static_j,shared_j,l1_j,l2_j,dram_j,rest_j,memory_j,sum_j,sum_diff_pct,"
               "shared_sectors,l1_sectors,l2_sectors,dram_sectors,memory_fits,profiled_launches,span_launches,"
               "count_scale\n");
    fprintf(f, "\"%s\",%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.4f,%.6g,%.6g,%.6g,%.6g,%d,%lu,%lu,%.6g\n",
            label, m->time_s, b->total_j, b->static_j, b->level_j[0], b->level_j[1], b->level_j[2], b->level_j[3],
            b->rest_j, b->memory_j, b->sum_j, b->sum_diff_pct, b->sectors[0], b->sectors[1], b->sectors[2],
            b->sectors[3], b->memory_fits ? 1 : 0, k->launches, k->span_launches, k->scale);
    return cli_close_out(CMD, f, path);
}

static void print_json(FILE *f, const tw_breakdown *b, const bd_measured *m, const bd_counted *k, const char *label,
                       const char *prov)
{
    json j;
    json_init(&j, f);
    json_begin_object(&j);
    json_kv_string(&j, "provenance", prov);
    json_kv_string(&j, "label", label);
    json_kv_string(&j, "gpu", m->gpu);
    json_kv_string(&j, "energy_source", m->source);
    json_kv_number(&j, "time_s", m->time_s);
    json_kv_number(&j, "idle_w", m->idle_w);
    json_kv_number(&j, "total_j", b->total_j);
    double v[6];
    part_values(b, v);
    json_key(&j, "parts_j");
    json_begin_object(&j);
    for (int i = 0; i < 6; i++)
        json_kv_number(&j, parts[i], v[i]);
    json_end_object(&j);
    json_key(&j, "sectors");
    json_begin_object(&j);
    for (int lv = 0; lv < TW_MEM_LEVELS; lv++)
        json_kv_number(&j, tw_mem_level_name((tw_mem_level)lv), b->sectors[lv]);
    json_end_object(&j);
    json_kv_number(&j, "memory_j", b->memory_j);
    json_kv_number(&j, "sum_j", b->sum_j);
    json_kv_number(&j, "sum_diff_pct", b->sum_diff_pct);
    json_kv_bool(&j, "memory_fits", b->memory_fits);
    json_kv_number(&j, "run_check_pct", m->check_pct);
    json_kv_uint(&j, "profiled_launches", k->launches);
    json_kv_uint(&j, "span_launches", k->span_launches);
    json_kv_number(&j, "count_scale", k->scale);
    json_kv_string(&j, "note", b->note[0] ? b->note : NULL);
    json_end_object(&j);
    json_finish(&j);
}

/* One stacked bar (the paper's Figs. 9-10); scripts stack several runs' breakdown.dat side by side. */
static void plot(const bd_args *a, const tw_breakdown *b, const char *label)
{
    char path[4096];
    FILE *f = cli_open_out(CMD, a->out, "breakdown.dat", path, sizeof path);
    if (!f) return;
    double v[6];
    part_values(b, v);
    fprintf(f, "label static shared l1 l2 dram rest\n\"%s\"", label); /* J; rest at 0 when negative */
    for (int i = 0; i < 6; i++)
        fprintf(f, " %.6g", fmax(v[i], 0.0));
    fprintf(f, "\n");
    if (cli_close_out(CMD, f, path)) return;
    FILE *g = cli_open_out(CMD, a->out, "breakdown.gp", path, sizeof path);
    if (!g) return;
    fprintf(g, "set terminal pngcairo size 700,600\nset output 'breakdown.png'\nset style data histograms\n"
               "set style histogram rowstacked\nset style fill solid 0.8 border -1\nset boxwidth 0.6\n"
               "set ylabel 'energy (J)'\nset key outside right\nset title 'energy breakdown' noenhanced\n"
               "plot for [i=2:7] 'breakdown.dat' using i:xtic(1) title columnhead(i) noenhanced\n");
    if (cli_close_out(CMD, g, path)) return;
    cli_draw_plot(CMD, a->out, "breakdown.gp", "breakdown.png");
}

static void default_label(const bd_args *a, char *buf, size_t cap)
{
    size_t len = 0;
    buf[0] = '\0';
    for (char **c = a->cmd; *c; c++) {
        const char *base = c == a->cmd && strrchr(*c, '/') ? strrchr(*c, '/') + 1 : *c;
        len += (size_t)snprintf(buf + len, len < cap ? cap - len : 0, "%s%s", len ? " " : "", base);
    }
    for (char *p = buf; *p; p++)
        if (*p == '"') *p = '\'';
}

int cmd_breakdown(int argc, char **argv)
{
    bd_args a = {0};
    a.ncu = "ncu";
    a.out = "truewatt-breakdown";
    int rc = parse_args(argc, argv, &a);
    if (rc) return rc < 0 ? 0 : rc;
    tw_bd_eps eps;
    char prof_gpu[128], label[512], prov[1024], run_json[4200];
    tw_status st = tw_bd_eps_load(a.profile, &eps, prof_gpu, sizeof prof_gpu);
    if (st != TW_OK) return cli_fail(CMD, st);
    if (a.label)
        snprintf(label, sizeof label, "%s", a.label);
    else
        default_label(&a, label, sizeof label);
    cli_exp_provenance(prov, sizeof prov, argc, argv);
    if ((rc = cli_make_dir(CMD, a.out))) return rc;
    tw_bd_input in = {0};
    bd_counted k = {0};
    bd_window w;
    char events[4200];
    snprintf(events, sizeof events, "%s/run.events.csv", a.out);
    if ((rc = measure_energy(&a, run_json, sizeof run_json))) return rc;
    bd_measured m = {0};
    if ((st = read_run(run_json, &a, &m)) != TW_OK) return cli_fail(CMD, st);
    if ((st = launch_window(events, &a, &w)) != TW_OK) return cli_fail(CMD, st);
    m.kernel_s = w.span_s;
    unsigned long count = a.sample && a.sample < w.count ? (unsigned long)a.sample : w.count;
    if (a.counts_from) {
        fprintf(stderr, "truewatt %s: counts from %s (no ncu run)\n", CMD, a.counts_from);
        rc = read_counts(a.counts_from, &k);
        if (rc == 0 && k.launches != count)
            fprintf(stderr, "truewatt %s: warning: %s has %lu launches, this run's window %lu\n", CMD, a.counts_from,
                    k.launches, count);
    } else {
        rc = count_sectors(&a, w.skip, count, &k);
    }
    if (rc) return rc;
    if ((rc = scale_counts(&a, &w, &k))) return rc;
    memcpy(in.counts, k.counts, sizeof in.counts);
    if (prof_gpu[0] && strcmp(prof_gpu, m.gpu))
        fprintf(stderr, "truewatt %s: warning: the memory-energy profile is of %s, the run's GPU is %s\n", CMD,
                prof_gpu, m.gpu);
    in.total_j = m.total_j;
    in.dynamic_j = m.dynamic_j;
    in.time_s = m.time_s;
    tw_breakdown b;
    if (tw_breakdown_compute(&in, &eps, &b) != 0) return cli_fail(CMD, TW_EINVAL);
    if (a.json)
        print_json(stdout, &b, &m, &k, label, prov);
    else
        print_text(&b, &m, label, &k);
    rc = write_csv(&a, &b, &m, &k, label, prov);
    char path[4096];
    FILE *f = rc ? NULL : cli_open_out(CMD, a.out, "breakdown.json", path, sizeof path);
    if (f) {
        print_json(f, &b, &m, &k, label, prov);
        rc = cli_close_out(CMD, f, path);
    } else if (!rc) {
        rc = CLI_EXIT_FAIL;
    }
    if (rc == 0) plot(&a, &b, label);
    return rc;
}
