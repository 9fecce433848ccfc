/* The frame of the library's experiments; see experiment.h. */
#include "bench/experiment.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/sized.h"
#include "bench/plans.h"
#include "core/error.h"
#include "core/note.h"
#include "core/outfile.h"
#include "correct/identify.h"
#include "correct/profile_pick.h"

void tw_experiment_options_init(tw_experiment_options *o)
{
    memset(o, 0, sizeof *o);
    o->size = sizeof *o;
    o->backend = "nvml";
    o->sim = TW_SIM_H100;
    o->seed = 1;
}

tw_status xp_read_options(tw_experiment_options *e, const tw_experiment_options *e_in, void *o, size_t o_size,
                          const void *o_in, const char *what)
{
    tw_experiment_options_init(e);
    char which[160];
    snprintf(which, sizeof which, "%s: experiment options", what);
    if (!e_in || (o && !o_in)) return tw_fail(TW_EINVAL, "%s: NULL options", what);
    tw_status st = tw_sized_read(e, sizeof *e, e_in, which);
    snprintf(which, sizeof which, "%s: options", what);
    return st == TW_OK && o ? tw_sized_read(o, o_size, o_in, which) : st;
}

typedef struct progress_state {
    const tw_experiment_options *e;
    double last_note_s;
} progress_state;

/* A line every ~10 s of schedule, so a long run shows it is alive. */
static void progress(void *ctx, double done_s, double total_s)
{
    progress_state *p = ctx;
    if (done_s - p->last_note_s < 10.0) return;
    p->last_note_s = done_s;
    if (total_s > 0)
        tw_notef(p->e->note, p->e->note_ctx, "%.0f of %.0f s (%.0f %%)", done_s, total_s,
                 fmin(100.0, 100.0 * done_s / total_s));
    else
        tw_notef(p->e->note, p->e->note_ctx, "%.0f s", done_s);
}

/* The executor's progress state lives as long as the executor: one experiment at a time per thread. */
static _Thread_local progress_state g_progress;

tw_status xp_start(const tw_experiment_options *e, const char *trace, const char *events, double planned_s,
                   tw_exec **out)
{
    *out = NULL;
    tw_status st;
    const char *backend = e->backend ? e->backend : "nvml";
    if (!strcmp(backend, "sim")) {
        st = tw_exec_sim_new(e->sim, e->seed, out);
    } else if (!strcmp(backend, "nvml")) {
        char why[512] = "";
        if (!tw_backend_available("nvml", why, sizeof why))
            return tw_fail(TW_EUNAVAIL, "cannot measure: the nvml backend is unavailable: %s", why);
        tw_exec_gpu_config cfg = {
            .device = e->device, .trace_path = trace, .events_path = events, .provenance = e->provenance};
        st = tw_exec_gpu_new(&cfg, out);
    } else {
        return tw_fail(TW_EINVAL, "the backend must be nvml or sim, not '%s'", backend);
    }
    if (st != TW_OK) return st;
    tw_exec *x = *out;
    x->cancel = e->cancel;
    x->planned_s = planned_s;
    x->progress = progress;
    g_progress = (progress_state){.e = e};
    x->progress_ctx = &g_progress;
    bool on_gpu = strcmp(backend, "sim") != 0;
    tw_notef(e->note, e->note_ctx, "%s on %s (%s): about %.0f s%s%s", x->backend, x->gpu[0] ? x->gpu : "GPU",
             x->driver[0] ? x->driver : "driver unknown", planned_s, on_gpu && trace ? "; trace: " : "",
             on_gpu && trace ? trace : "");
    return TW_OK;
}

tw_status xp_run(tw_exec *x, tw_status (*plan)(tw_exec *x, void *ctx), void *ctx)
{
    tw_status st = plan(x, ctx);
    char why[1024];
    snprintf(why, sizeof why, "%s", st != TW_OK ? tw_last_error() : "");
    tw_status fin = tw_exec_finish(x);
    if (st == TW_EINTERRUPTED || (x->cancel && *x->cancel))
        return tw_fail(TW_EINTERRUPTED, "interrupted; the trace so far is kept");
    if (st != TW_OK)
        return tw_fail(st, "the experiment failed: %s%s", why, fin == TW_OK ? " (the trace so far is kept)" : "");
    return fin;
}

/* The executor's readings (the simulator's, rewound) as a trace file that
 * replays and analyses read back. */
static tw_status save_trace(tw_exec *x, const char *path, const char *provenance)
{
    tw_sensor *s = x->trace;
    size_t n = tw_sensor_nreadings(s);
    const char **names = malloc((n ? n : 1) * sizeof *names);
    if (!names) return TW_ENOMEM;
    for (size_t i = 0; i < n; i++)
        names[i] = tw_sensor_reading(s, i)->name;
    tw_trace_writer *w = NULL;
    tw_status st = tw_trace_writer_open(path, n, names, true, &w);
    free(names);
    if (st == TW_OK && provenance) st = tw_trace_writer_comment(w, provenance);
    if (st == TW_OK) st = tw_sensor_rewind(s);
    while (st == TW_OK) {
        tw_row row;
        bool eof = false;
        if ((st = tw_sensor_next(s, &row, &eof)) != TW_OK || eof) break;
        st = tw_trace_writer_write(w, &row);
    }
    if (w) {
        tw_status cst = tw_trace_writer_close(w);
        if (st == TW_OK) st = cst;
    }
    return st;
}

tw_status xp_keep_sim_run(tw_exec *x, const char *trace, const char *events, const char *provenance)
{
    if (strcmp(x->backend, "sim") != 0 || !trace) return TW_OK;
    tw_status st = tw_events_save(x->events, events);
    return st == TW_OK ? save_trace(x, trace, provenance) : st;
}

void xp_events_path(const char *trace, char *out, size_t cap)
{
    size_t n = strlen(trace);
    bool csv = n >= 4 && !strcmp(trace + n - 4, ".csv");
    snprintf(out, cap, "%.*s.events.csv", (int)(csv ? n - 4 : n), trace);
}

/* ---------------------------------------------------------------- microbenchmarks */

typedef struct frame {
    const xp_bench *b;
    bool identify;
    double id_end_s;
} frame;

static tw_status schedule(tw_exec *x, void *ctx)
{
    frame *f = ctx;
    tw_status st = f->identify ? tw_plan_identify(x) : tw_exec_idle(x, 1.0);
    if (st == TW_OK && !f->identify) st = tw_exec_context(x);
    f->id_end_s = x->now_s;
    if (st == TW_OK) st = tw_exec_idle(x, 2.0);
    if (st == TW_OK) st = f->b->work(x, f->b->ctx);
    return st == TW_OK ? tw_exec_idle(x, 1.0) : st;
}

tw_status xp_bench_run(const tw_experiment_options *e, const xp_bench *b, tw_exec **xo, tw_profile *p)
{
    *xo = NULL;
    char how[4352] = "", trace[4096], events[4096];
    tw_status st = TW_OK;
    if (b->profile_path && (st = tw_profile_pick(b->profile_path, NULL, NULL, p, how, sizeof how)) != TW_OK) return st;
    if ((st = out_make_dir(b->out_dir)) != TW_OK) return st;
    snprintf(trace, sizeof trace, "%s/trace.csv", b->out_dir);
    snprintf(events, sizeof events, "%s/events.csv", b->out_dir);
    tw_exec *x = NULL;
    if ((st = xp_start(e, trace, events, b->planned_s + 4, &x)) != TW_OK) return st;
    frame f = {.b = b};
    if (!b->profile_path && !b->no_profile) st = tw_profile_pick(NULL, x->gpu, x->driver, p, how, sizeof how);
    if (st == TW_ENOTFOUND) {
        tw_notef(e->note, e->note_ctx, "%s: identifying the sensor first (~%.0f s)", how, tw_plan_identify_s());
        f.identify = true;
        x->planned_s += tw_plan_identify_s();
        st = TW_OK;
    }
    if (st == TW_OK) st = xp_run(x, schedule, &f);
    if (st == TW_OK) st = xp_keep_sim_run(x, trace, events, e->provenance);
    if (st == TW_OK && f.identify) {
        tw_identify_options o;
        tw_identify_options_init(&o);
        o.t_end_s = f.id_end_s;
        st = tw_identify(x->trace, x->events, &o, p, NULL);
    }
    if (st != TW_OK) {
        tw_exec_free(x);
        return st;
    }
    *xo = x;
    return TW_OK;
}
