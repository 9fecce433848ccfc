/* Running an experiment from the command line; see experiment.h. */
#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "cli/experiment.h"
#include "cli/interrupt.h"

void cli_exp_args_init(cli_exp_args *a)
{
    memset(a, 0, sizeof *a);
    a->backend = "nvml";
    a->profile = TW_SIM_H100;
    a->seed = 1;
}

/* --sim P: the simulator with profile P */
static int take_sim(const char *cmd, const char *value, void *out)
{
    cli_exp_args *a = out;
    if (tw_sim_profile_parse(value, &a->profile) != TW_OK)
        return cli_usage(cmd, "--sim needs one of k20|h100, got '%s'", value);
    a->backend = "sim";
    return 0;
}

int cli_exp_parse(cli_opts o, cli_exp_args *a, int argc, char **argv)
{
    const cli_opt t[] = {
        {.name = "backend",
         .type = CLI_OPT_ENUM,
         .choices = "nvml|sim",
         .def = "nvml",
         .help = "nvml: a GPU; sim: the simulator (exact truth)",
         .out = &a->backend},
        {.name = "sim",
         .type = CLI_OPT_CALL,
         .arg = "k20|h100",
         .help = "the simulator with this sensor profile (h100 when only --backend sim)",
         .out = a,
         .call = take_sim},
        {.name = "seed", .type = CLI_OPT_U64, .arg = "N", .def = "1", .help = "simulator seed", .out = &a->seed},
        {.name = "device",
         .type = CLI_OPT_INT,
         .arg = "N",
         .def = "0",
         .help = "GPU index",
         .out = &a->device,
         .min = 0,
         .max = 64},
    };
    o.more = t;
    o.n_more = CLI_OPTS_N(t);
    int first;
    return cli_opts_parse(&o, argc, argv, &first);
}

void cli_exp_provenance(char *buf, size_t len, int argc, char **argv)
{
    size_t used = (size_t)snprintf(buf, len, "command: truewatt");
    for (int i = 0; i < argc && used < len; i++)
        used += (size_t)snprintf(buf + used, len - used, " %s", argv[i]);
    char date[32] = "";
    time_t now = time(NULL);
    struct tm tm;
    if (gmtime_r(&now, &tm)) strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", &tm);
    if (used < len) snprintf(buf + used, len - used, "; date: %s; truewatt %s", date, tw_version());
}

typedef struct progress_state {
    double last_note_s;
} progress_state;

/* A line every ~10 s of schedule, so a long run shows it is alive. */
static void progress(void *ctx, double done_s, double total_s)
{
    progress_state *p = ctx;
    if (done_s - p->last_note_s < 10.0) return;
    p->last_note_s = done_s;
    if (total_s > 0)
        cli_note("  %.0f of %.0f s (%.0f %%)", done_s, total_s, fmin(100.0, 100.0 * done_s / total_s));
    else
        cli_note("  %.0f s", done_s);
}

static progress_state g_progress;

int cli_exp_start(const char *cmd, const cli_exp_args *a, double planned_s, const char *provenance, tw_exec **out)
{
    tw_status st;
    if (!strcmp(a->backend, "sim")) {
        st = tw_exec_sim_new(a->profile, a->seed, out);
    } else if (!strcmp(a->backend, "nvml")) {
        char why[512] = "";
        if (!tw_backend_available("nvml", why, sizeof why)) {
            fprintf(stderr, "truewatt %s: cannot measure: the nvml backend is unavailable: %s\n", cmd, why);
            return CLI_EXIT_FAIL;
        }
        tw_exec_gpu_config cfg = {
            .device = a->device, .trace_path = a->trace_path, .events_path = a->events_path, .provenance = provenance};
        st = tw_exec_gpu_new(&cfg, out);
    } else {
        return cli_usage(cmd, "--backend must be nvml or sim, not '%s'", a->backend);
    }
    if (st != TW_OK) return cli_fail(cmd, st);
    cli_interrupt_install();
    tw_exec *x = *out;
    x->cancel = &cli_interrupted;
    x->planned_s = planned_s;
    x->progress = progress;
    x->progress_ctx = &g_progress;
    g_progress.last_note_s = 0;
    bool on_gpu = strcmp(a->backend, "sim") != 0;
    cli_note("truewatt %s: %s on %s (%s): about %.0f s%s%s", cmd, x->backend, x->gpu[0] ? x->gpu : "GPU",
             x->driver[0] ? x->driver : "driver unknown", planned_s, on_gpu && a->trace_path ? "; trace: " : "",
             on_gpu && a->trace_path ? a->trace_path : "");
    return 0;
}

int cli_exp_run(const char *cmd, tw_exec *x, tw_status (*plan)(tw_exec *x, void *ctx), void *ctx)
{
    tw_status st = plan(x, ctx);
    char why[1024];
    snprintf(why, sizeof why, "%s", st != TW_OK ? tw_last_error() : "");
    tw_status fin = tw_exec_finish(x);
    if (st == TW_EINTERRUPTED || cli_interrupted) {
        fprintf(stderr, "truewatt %s: interrupted; the trace so far is kept\n", cmd);
        return CLI_EXIT_INTERRUPTED;
    }
    if (st != TW_OK) {
        fprintf(stderr, "truewatt %s: the experiment failed: %s%s\n", cmd, why,
                fin == TW_OK ? " (the trace so far is kept)" : "");
        return CLI_EXIT_FAIL;
    }
    if (fin != TW_OK) return cli_fail(cmd, fin);
    return 0;
}

tw_status cli_exp_save_trace(tw_exec *x, const char *path, const char *provenance)
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

void cli_exp_events_path(const char *trace, char *out, size_t cap)
{
    size_t n = strlen(trace);
    bool csv = n >= 4 && !strcmp(trace + n - 4, ".csv");
    snprintf(out, cap, "%.*s.events.csv", (int)(csv ? n - 4 : n), trace);
}

int cli_exp_keep_sim_run(const char *cmd, tw_exec *x, const char *trace, const char *events, const char *provenance)
{
    if (strcmp(x->backend, "sim") != 0 || !trace) return 0;
    tw_status st = tw_events_save(x->events, events);
    if (st == TW_OK) st = cli_exp_save_trace(x, trace, provenance);
    return st == TW_OK ? 0 : cli_fail(cmd, st);
}
