/* Benchmark: `truewatt analyze`'s path end to end - a simulated K20 trace
 * file read back through the replay backend and analysed (level estimation,
 * final integration, corrected series written) - and its peak memory
 * against trace length.
 *
 *   bench_analyze [SECONDS ...]     (default: 200 800; ~2.4 k rows per second)
 *
 * Each length runs in its own process; the same peak for every length shows
 * that memory does not grow with the trace. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "truewatt.h"

#define BENCH_NAME "bench_analyze"
#include "bench_common.h"

/* A kernel of 1 s every 3 s, at alternating power levels, for `seconds`. */
static int make_trace(double seconds, const char *path, tw_scenario **sc)
{
    if (check(tw_scenario_new(TW_SIM_K20, sc), "scenario")) return 1;
    for (int i = 0; 3.0 * i + 2.0 < seconds; i++) {
        char name[32];
        snprintf(name, sizeof name, "k%d", i);
        if (check(tw_scenario_add_kernel(*sc, name, 1.0 + 3.0 * i, 1.0, i % 2 ? 120.0 : 150.0), "kernel")) return 1;
    }
    tw_scenario_set_duration(*sc, seconds);
    tw_sensor_config cfg = {.scenario = *sc, .seed = 1};
    tw_sensor *s = NULL;
    tw_trace_writer *w = NULL;
    static const char *const names[] = {"power_w", "true_power_w"};
    if (check(tw_sensor_open("sim", &cfg, &s), "sim") ||
        check(tw_trace_writer_open(path, 2, names, false, &w), "writer"))
        return 1;
    if (copy_rows(s, w)) return 1;
    tw_sensor_close(s);
    return check(tw_trace_writer_close(w), "close");
}

static int run(double seconds)
{
    char trace[64], corrected[64];
    snprintf(trace, sizeof trace, "/tmp/tw-bench-%d.csv", (int)getpid());
    snprintf(corrected, sizeof corrected, "/tmp/tw-bench-%d.corrected.csv", (int)getpid());
    tw_scenario *sc = NULL;
    tw_events *ev = NULL;
    tw_sensor *src = NULL;
    tw_analysis *an = NULL;
    size_t reading;
    if (make_trace(seconds, trace, &sc) || check(tw_scenario_events(sc, &ev), "events")) return 1;
    tw_sensor_config cfg = {.path = trace};
    tw_analysis_options opt;
    tw_analysis_options_init(&opt);
    opt.corrected_path = corrected;
    double t0 = now_s();
    if (check(tw_sensor_open("replay", &cfg, &src), "replay") ||
        check(tw_sensor_find(src, "power_w", &reading), "find") ||
        check(tw_analyze(src, reading, ev, &opt, &an), "analyze"))
        return 1;
    double dt = now_s() - t0;
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    unsigned long long rows = tw_analysis_samples_read(an);
    printf("%.0f s trace, %llu rows, %zu events: analysed in %.3f s (2 passes: levels, final) = %.2f M rows/s per "
           "pass, peak RSS %ld KiB\n",
           seconds, rows, tw_events_count(ev), dt, 2.0 * (double)rows / dt / 1e6, ru.ru_maxrss);
    tw_analysis_free(an);
    tw_sensor_close(src);
    tw_events_free(ev);
    tw_scenario_free(sc);
    remove(trace);
    remove(corrected);
    return 0;
}

int main(int argc, char **argv)
{
    double defaults[] = {200, 800};
    int count = argc > 1 ? argc - 1 : 2;
    printf("bench_analyze: simulated K20 trace -> CSV -> replay -> tw_analyze (one core)\n");
    for (int i = 0; i < count; i++) {
        double seconds = argc > 1 ? atof(argv[i + 1]) : defaults[i];
        fflush(stdout);
        pid_t pid = fork();
        if (pid == 0) exit(run(seconds));
        int st;
        if (pid < 0 || waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st)) return 1;
    }
    return 0;
}
