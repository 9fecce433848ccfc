/* `truewatt sim` as a library call (tw_sim_run, truewatt.h): the simulated
 * sensor streamed into a trace file (the sampler path without threads: one
 * row read, one row written, memory bounded), the kernels with their exact
 * energy, and a summary. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/sim_run.h"
#include "api/sized.h"
#include "core/error.h"
#include "core/json.h"
#include "core/note.h"
#include "report/table.h"

void tw_sim_run_options_init(tw_sim_run_options *o)
{
    memset(o, 0, sizeof *o);
    o->size = sizeof *o;
    o->seed = 1;
}

typedef struct sim_result {
    uint64_t rows;
    double duration_s;
} sim_result;

#define PROGRESS_MIN_S 120.0 /* shorter runs finish too fast to need progress */

static tw_status open_writer(tw_sensor *s, const tw_scenario *sc, uint64_t seed, const char *path, tw_trace_writer **w)
{
    size_t n = tw_sensor_nreadings(s);
    const char **names = malloc(n * sizeof *names);
    if (!names) return TW_ENOMEM;
    for (size_t i = 0; i < n; i++)
        names[i] = tw_sensor_reading(s, i)->name;
    bool own_ts = tw_scenario_profile(sc) == TW_SIM_H100;
    tw_status st = tw_trace_writer_open(path, n, names, own_ts, w);
    free(names);
    if (st != TW_OK) return st;
    char note[200];
    snprintf(note, sizeof note, "truewatt %s simulated sensor: profile %s, seed %llu, %.6g s", tw_version(),
             tw_sim_profile_name(tw_scenario_profile(sc)), (unsigned long long)seed, tw_scenario_duration_s(sc));
    return tw_trace_writer_comment(*w, note);
}

static tw_status run_to_file(const tw_scenario *sc, const tw_sim_run_options *o, const char *path, sim_result *out)
{
    uint64_t seed = o->seed;
    tw_sensor_config cfg = {.scenario = sc, .seed = seed};
    tw_sensor *s = NULL;
    tw_trace_writer *w = NULL;
    tw_status st = tw_sensor_open("sim", &cfg, &s);
    if (st == TW_OK) st = open_writer(s, sc, seed, path, &w);
    out->rows = 0;
    out->duration_s = 0;
    double total = tw_scenario_duration_s(sc), step = total / 10;
    double next_note = total >= PROGRESS_MIN_S ? step : INFINITY;
    while (st == TW_OK) {
        tw_row row;
        bool eof;
        if (o->cancel && *o->cancel) {
            st = TW_EINTERRUPTED;
            break;
        }
        st = tw_sensor_next(s, &row, &eof);
        if (st != TW_OK || eof) break;
        st = tw_trace_writer_write(w, &row);
        out->rows++;
        out->duration_s = row.t_s;
        if (row.t_s >= next_note) {
            tw_notef(o->note, o->note_ctx, "%.0f%% (%.0f of %.0f s simulated)", 100 * row.t_s / total, row.t_s, total);
            next_note += step;
        }
    }
    if (w) {
        tw_status cst = tw_trace_writer_close(w);
        if (st == TW_OK) st = cst;
    }
    tw_sensor_close(s);
    return st;
}

static void print_summary(FILE *out, const tw_scenario *sc, const tw_sim_run_options *a, const char *trace,
                          const char *events, const sim_result *r, const tw_events *ev)
{
    if (a->json) {
        json j;
        json_init(&j, out);
        json_begin_object(&j);
        json_kv_string(&j, "trace", trace);
        json_kv_string(&j, "events", events);
        json_kv_string(&j, "profile", tw_sim_profile_name(tw_scenario_profile(sc)));
        json_kv_uint(&j, "seed", a->seed);
        json_kv_uint(&j, "rows", r->rows);
        json_kv_number(&j, "duration_s", r->duration_s);
        json_key(&j, "kernels");
        json_begin_array(&j);
        for (size_t i = 0; i < tw_events_count(ev); i++) {
            const tw_event *e = tw_events_get(ev, i);
            json_begin_object(&j);
            json_kv_string(&j, "name", e->name);
            json_kv_time(&j, "start_s", e->start_s);
            json_kv_time(&j, "end_s", e->end_s);
            json_kv_number(&j, "true_energy_j", e->true_energy_j);
            json_end_object(&j);
        }
        json_end_array(&j);
        json_end_object(&j);
        json_finish(&j);
        return;
    }
    fprintf(out, "wrote %llu rows (%.3f s simulated, profile %s, seed %llu) to %s\n", (unsigned long long)r->rows,
            r->duration_s, tw_sim_profile_name(tw_scenario_profile(sc)), (unsigned long long)a->seed, trace);
    fprintf(out, "wrote %zu kernels with their true energy to %s\n\n", tw_events_count(ev), events);
    static const char *const head[] = {"kernel", "start_s", "end_s", "true_energy_j"};
    table *t = table_new(4, head);
    if (!t) return;
    for (size_t i = 0; i < tw_events_count(ev); i++) {
        const tw_event *e = tw_events_get(ev, i);
        table_cell(t, "%s", e->name);
        table_cell(t, "%.4f", e->start_s);
        table_cell(t, "%.4f", e->end_s);
        table_cell(t, "%.4f", e->true_energy_j);
    }
    table_print(t, out);
    table_free(t);
}

static char *default_events_path(const char *trace)
{
    size_t len = strlen(trace);
    if (len > 4 && !strcmp(trace + len - 4, ".csv")) len -= 4;
    size_t n = len + sizeof ".events.csv";
    char *p = malloc(n);
    if (p) snprintf(p, n, "%.*s.events.csv", (int)len, trace);
    return p;
}

tw_status tw_sim_run(const tw_scenario *sc, const tw_sim_run_options *o_in, FILE *out)
{
    if (!o_in) return tw_fail(TW_EINVAL, "tw_sim_run: NULL options");
    tw_sim_run_options o_full;
    tw_sim_run_options_init(&o_full);
    tw_status sized = tw_sized_read(&o_full, sizeof o_full, o_in, "tw_sim_run: options");
    if (sized != TW_OK) return sized;
    const tw_sim_run_options *o = &o_full;
    if (!sc || !o || !o->trace) return tw_fail(TW_EINVAL, "tw_sim_run: no scenario or no trace path");
    char *events_path = NULL;
    const char *events = o->events;
    if (!events && !(events = events_path = default_events_path(o->trace))) return TW_ENOMEM;
    sim_result r;
    tw_events *ev = NULL;
    tw_status st = run_to_file(sc, o, o->trace, &r), run_st = st;
    if (st == TW_OK || st == TW_EINTERRUPTED) st = tw_scenario_events(sc, &ev);
    if (st == TW_OK) st = tw_events_save(ev, events);
    if (st == TW_OK && run_st == TW_EINTERRUPTED)
        st = tw_fail(TW_EINTERRUPTED, "interrupted at %.3f s of %.3f s; the trace so far is in %s", r.duration_s,
                     tw_scenario_duration_s(sc), o->trace);
    else if (st == TW_OK && out)
        print_summary(out, sc, o, o->trace, events, &r, ev);
    tw_events_free(ev);
    free(events_path);
    return st;
}

tw_status tw_sim_trace(const tw_scenario *sc, uint64_t seed, const char *path, const volatile int *cancel)
{
    tw_sim_run_options o;
    tw_sim_run_options_init(&o);
    o.seed = seed;
    o.cancel = cancel;
    sim_result r;
    return run_to_file(sc, &o, path, &r);
}
