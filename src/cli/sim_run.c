#include "cli/sim_run.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli/cli.h"
#include "cli/interrupt.h"

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

tw_status sim_run_to_file(const tw_scenario *sc, uint64_t seed, const char *path, sim_run_result *out)
{
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
        if (cli_interrupted) {
            st = TW_EINTERRUPTED;
            break;
        }
        st = tw_sensor_next(s, &row, &eof);
        if (st != TW_OK || eof) break;
        st = tw_trace_writer_write(w, &row);
        out->rows++;
        out->duration_s = row.t_s;
        if (row.t_s >= next_note) {
            cli_note("sim: %.0f%% (%.0f of %.0f s simulated)", 100 * row.t_s / total, row.t_s, total);
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
