/* `truewatt breakdown` as library calls (tw_breakdown_*, truewatt.h): where
 * an application's energy goes (Delestrac et al. 2024, Sec. VII, Figs. 9-10).
 * The caller runs the application measured (`truewatt run --json`) and under
 * Nsight Compute; this reads the run's report and timeline, sums and scales
 * ncu's sector counts to the span, prices them by the memory-energy profile
 * of `truewatt mem calibrate` (breakdown.h) and writes the result. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/breakdown.h"
#include "core/error.h"
#include "core/json.h"
#include "core/json_read.h"
#include "core/note.h"
#include "core/outfile.h"
#include "mem/ncu_csv.h"
#include "report/table.h"

/* The sector counts ncu gave, scaled to the span. */
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

/* The launches ncu profiles, from the run's timeline (kernels in start order, as launched on one
 * stream): those before the count range (or the span), and those in it; the span's kernels and time. */
typedef struct bd_window {
    unsigned long skip, count, span_n;
    double span_s;
} bd_window;

struct tw_breakdown_job {
    tw_breakdown_options o;
    tw_bd_eps eps;
    char profile_gpu[128];
    bd_measured m;
    bd_window w;
    bool have_run;
};

/* A note or warning through the options' callback, when set. */
#define note(b, ...) tw_notef((b)->o.note, (b)->o.note_ctx, __VA_ARGS__)

/* The sums of an ncu CSV. */
static tw_status read_counts(const tw_breakdown_job *b, const char *log, bd_counted *k)
{
    size_t nm;
    const char *const *m = tw_breakdown_metrics(&nm);
    tw_ncu_report rep;
    tw_status st = tw_ncu_read_path(log, m, nm, &rep);
    if (st != TW_OK) return st;
    size_t missing = 0;
    for (size_t i = 0; i < nm; i++) {
        size_t miss;
        k->counts[i] = tw_ncu_sum(&rep, i, &miss);
        missing += miss;
    }
    k->launches = (unsigned long)rep.n;
    tw_ncu_report_free(&rep);
    if (k->launches == 0) return tw_fail(TW_EEMPTY, "ncu profiled no kernel (%s)", log);
    if (missing) note(b, "warning: %zu metric values missing in %s", missing, log);
    return TW_OK;
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

static tw_status launch_window(const char *events_path, const tw_breakdown_options *a, bd_window *w)
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

static tw_status read_run(const char *path, const tw_breakdown_options *a, bd_measured *m)
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
static tw_status scale_counts(const tw_breakdown_options *a, const bd_window *w, bd_counted *k)
{
    k->scale = 1;
    k->span_launches = w->span_n;
    if (!a->count_range && k->launches == w->span_n) return TW_OK; /* the span itself, all of it */
    double profiled_s = k->counts[TW_BD_TIME_NS] * 1e-9;
    if (!(profiled_s > 0) || !(w->span_s > 0))
        return tw_fail(TW_EEMPTY, "cannot scale the counts: no kernel time (%g s profiled, %g s in the span)",
                       profiled_s, w->span_s);
    k->scale = w->span_s / profiled_s;
    for (int i = 0; i < TW_BD_METRICS; i++)
        k->counts[i] *= k->scale;
    return TW_OK;
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

static void print_text(FILE *out, const tw_breakdown *b, const bd_measured *m, const char *label, const bd_counted *k)
{
    fprintf(out, "energy breakdown of %s on %s: %.4g J over %.4g s (%s)\n", label, m->gpu, b->total_j, m->time_s,
            m->source);
    fprintf(out, "counts: ncu profiled %lu of the span's %lu kernel launches", k->launches, k->span_launches);
    if (k->scale != 1)
        fprintf(out, "; scaled by %.4g (the span's kernel time %.4g s over the profiled %.4g s)\n", k->scale,
                m->kernel_s, k->counts[TW_BD_TIME_NS] / k->scale * 1e-9);
    else
        fprintf(out, "\n");
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
    table_print(t, out);
    table_free(t);
    fprintf(out, "memory (lower bound) %.4g J = %.1f %% of the dynamic energy\n", b->memory_j, 100 * b->memory_j / dyn);
    fprintf(out, "check: static + memory + rest = %.6g J vs measured %.6g J: %+.3f %% (%s)\n", b->sum_j, b->total_j,
            b->sum_diff_pct,
            b->memory_fits ? "within 1 %" : "the memory lower bound exceeds the dynamic energy: rest shown as 0");
    if (isfinite(m->check_pct))
        fprintf(out, "the run's own check: kernels + idle vs the energy counter %+.2f %%\n", m->check_pct);
    if (b->note[0]) fprintf(out, "note: %s\n", b->note);
}

static tw_status write_csv(const tw_breakdown_options *a, const tw_breakdown *b, const bd_measured *m,
                           const bd_counted *k, const char *label, const char *prov)
{
    char path[4096];
    FILE *f = out_open(a->out, "breakdown.csv", path, sizeof path);
    if (!f) return TW_EIO;
    fprintf(f, "# %s; gpu %s; energy %s; idle %.2f W\n", prov, m->gpu, m->source, m->idle_w);
    fprintf(f, "label,time_s,total_j,static_j,shared_j,l1_j,l2_j,dram_j,rest_j,memory_j,sum_j,sum_diff_pct,"
               "shared_sectors,l1_sectors,l2_sectors,dram_sectors,memory_fits,profiled_launches,span_launches,"
               "count_scale\n");
    fprintf(f, "\"%s\",%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.4f,%.6g,%.6g,%.6g,%.6g,%d,%lu,%lu,%.6g\n",
            label, m->time_s, b->total_j, b->static_j, b->level_j[0], b->level_j[1], b->level_j[2], b->level_j[3],
            b->rest_j, b->memory_j, b->sum_j, b->sum_diff_pct, b->sectors[0], b->sectors[1], b->sectors[2],
            b->sectors[3], b->memory_fits ? 1 : 0, k->launches, k->span_launches, k->scale);
    return out_close(f, path);
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

/* One stacked bar (the paper's Figs. 9-10); scripts stack several runs' breakdown.dat side by side.
 * A file that cannot be written is a note: the plot is an extra. */
static void plot(const tw_breakdown_job *bj, const tw_breakdown_options *a, const tw_breakdown *b, const char *label)
{
    char path[4096];
    FILE *f = out_open(a->out, "breakdown.dat", path, sizeof path);
    if (!f) {
        note(bj, "%s", tw_last_error());
        return;
    }
    double v[6];
    part_values(b, v);
    fprintf(f, "label static shared l1 l2 dram rest\n\"%s\"", label); /* J; rest at 0 when negative */
    for (int i = 0; i < 6; i++)
        fprintf(f, " %.6g", fmax(v[i], 0.0));
    fprintf(f, "\n");
    if (out_close(f, path) != TW_OK) {
        note(bj, "%s", tw_last_error());
        return;
    }
    FILE *g = out_open(a->out, "breakdown.gp", path, sizeof path);
    if (!g) {
        note(bj, "%s", tw_last_error());
        return;
    }
    fprintf(g, "set terminal pngcairo size 700,600\nset output 'breakdown.png'\nset style data histograms\n"
               "set style histogram rowstacked\nset style fill solid 0.8 border -1\nset boxwidth 0.6\n"
               "set ylabel 'energy (J)'\nset key outside right\nset title 'energy breakdown' noenhanced\n"
               "plot for [i=2:7] 'breakdown.dat' using i:xtic(1) title columnhead(i) noenhanced\n");
    if (out_close(g, path) != TW_OK) {
        note(bj, "%s", tw_last_error());
        return;
    }
    out_draw_plot(bj->o.note, bj->o.note_ctx, a->out, "breakdown.gp", "breakdown.png");
}

void tw_breakdown_options_init(tw_breakdown_options *o)
{
    if (!o) return;
    memset(o, 0, sizeof *o);
    o->size = sizeof *o;
    o->label = "";
    o->provenance = "";
    o->out = ".";
}

void tw_breakdown_metrics_arg(char *buf, size_t cap)
{
    size_t nm;
    const char *const *m = tw_breakdown_metrics(&nm);
    tw_ncu_metrics_arg(m, nm, buf, cap);
}

tw_status tw_breakdown_open(const tw_breakdown_options *o, tw_breakdown_job **out)
{
    if (!out) return tw_fail(TW_EINVAL, "tw_breakdown_open: no output");
    *out = NULL;
    if (!o || o->size < sizeof *o || !o->profile || !o->out || !o->label || !o->provenance)
        return tw_fail(TW_EINVAL,
                       "tw_breakdown_open: options not initialised (tw_breakdown_options_init) or no profile");
    tw_breakdown_job *b = calloc(1, sizeof *b);
    if (!b) return tw_fail(TW_ENOMEM, "out of memory");
    b->o = *o;
    tw_status st = tw_bd_eps_load(o->profile, &b->eps, b->profile_gpu, sizeof b->profile_gpu);
    if (st != TW_OK) {
        free(b);
        return st;
    }
    *out = b;
    return TW_OK;
}

tw_status tw_breakdown_read_run(tw_breakdown_job *b, const char *run_json, const char *events)
{
    if (!b || !run_json || !events) return tw_fail(TW_EINVAL, "tw_breakdown_read_run: bad argument");
    b->have_run = false;
    memset(&b->m, 0, sizeof b->m);
    tw_status st = read_run(run_json, &b->o, &b->m);
    if (st == TW_OK) st = launch_window(events, &b->o, &b->w);
    if (st != TW_OK) return st;
    b->m.kernel_s = b->w.span_s;
    b->have_run = true;
    return TW_OK;
}

void tw_breakdown_launches(const tw_breakdown_job *b, unsigned long *skip, unsigned long *count)
{
    *skip = b && b->have_run ? b->w.skip : 0;
    *count = !b || !b->have_run ? 0 : b->o.sample && b->o.sample < b->w.count ? (unsigned long)b->o.sample : b->w.count;
}

/* breakdown.json beside the CSV: the same record as --json prints. */
static tw_status write_json(const tw_breakdown_options *a, const tw_breakdown *bd, const bd_measured *m,
                            const bd_counted *k)
{
    char path[4096];
    FILE *f = out_open(a->out, "breakdown.json", path, sizeof path);
    if (!f) return TW_EIO;
    print_json(f, bd, m, k, a->label, a->provenance);
    return out_close(f, path);
}

tw_status tw_breakdown_report(tw_breakdown_job *b, const char *ncu_csv, FILE *out)
{
    if (!b || !ncu_csv || !out) return tw_fail(TW_EINVAL, "tw_breakdown_report: bad argument");
    if (!b->have_run) return tw_fail(TW_EINVAL, "tw_breakdown_report: the measured run is not read yet");
    const tw_breakdown_options *a = &b->o;
    bd_counted k = {0};
    tw_status st = read_counts(b, ncu_csv, &k);
    if (st != TW_OK) return st;
    unsigned long skip, count;
    tw_breakdown_launches(b, &skip, &count);
    if (k.launches != count) note(b, "warning: %s has %lu launches, this run's window %lu", ncu_csv, k.launches, count);
    if ((st = scale_counts(a, &b->w, &k)) != TW_OK) return st;
    const bd_measured *m = &b->m;
    tw_bd_input in = {0};
    memcpy(in.counts, k.counts, sizeof in.counts);
    if (b->profile_gpu[0] && strcmp(b->profile_gpu, m->gpu))
        note(b, "warning: the memory-energy profile is of %s, the run's GPU is %s", b->profile_gpu, m->gpu);
    in.total_j = m->total_j;
    in.dynamic_j = m->dynamic_j;
    in.time_s = m->time_s;
    tw_breakdown bd;
    if (tw_breakdown_compute(&in, &b->eps, &bd) != 0) return TW_EINVAL;
    if (a->json)
        print_json(out, &bd, m, &k, a->label, a->provenance);
    else
        print_text(out, &bd, m, a->label, &k);
    st = write_csv(a, &bd, m, &k, a->label, a->provenance);
    if (st == TW_OK) st = write_json(a, &bd, m, &k);
    if (st == TW_OK) plot(b, a, &bd, a->label);
    return st;
}

void tw_breakdown_free(tw_breakdown_job *b) { free(b); }
