/* Benchmark: correction plus integration throughput on one core, and peak
 * memory against trace length.
 *
 *   bench_correct [N ...]      (default: 10000000 40000000)
 *
 * For each N, a child process streams N raw samples in 64 Ki chunks, first
 * K20-like (38 repeats 0.283 ms apart, then a new RC-lagged measurement),
 * then with every sample distinct (the worst case for the correction), through
 * dedup -> RC correction -> integration over event windows, and prints the
 * rate (CPU time of that work only) and its peak resident memory. The same
 * peak for every N shows memory does not grow with the trace. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "correct/dedup.h"
#include "correct/integrate.h"
#include "correct/rc.h"

#define CHUNK 65536
#define REPEATS 38
#define REPEAT_DT_S 0.000283
#define GAP_DT_S 0.0047
#define C_S 0.84
#define EVENT_PERIOD_S 2.0 /* an event of 1 s every 2 s */

typedef struct gen {
    double t, p_meas;
    int rep, repeats;
} gen;

/* K20-like raw samples: a square wave seen through the RC lag, repeated. */
static void generate(gen *g, double *t, double *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (g->rep == 0) {
            double truth = fmod(g->t, EVENT_PERIOD_S) < 1.0 ? 150.0 : 52.5;
            g->p_meas = truth + (g->p_meas - truth) * exp(-0.015 / C_S);
            g->p_meas = round(g->p_meas * 100.0) / 100.0;
            g->t += GAP_DT_S;
        } else {
            g->t += REPEAT_DT_S;
        }
        g->rep = (g->rep + 1) % g->repeats;
        t[i] = g->t;
        p[i] = g->p_meas;
    }
}

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Integral of the corrected samples over the event windows [2k, 2k+1). */
static double integrate_windows(const double *t, const double *c, size_t n, double *prev_t, double *prev_c)
{
    double e = 0;
    for (size_t i = 0; i < n; i++) {
        double w0 = floor(*prev_t / EVENT_PERIOD_S) * EVENT_PERIOD_S;
        e += tw_seg_integral(*prev_t, *prev_c, t[i], c[i], w0, w0 + 1.0);
        *prev_t = t[i];
        *prev_c = c[i];
    }
    return e;
}

static int run(size_t n, int repeats)
{
    double *t = malloc(CHUNK * sizeof *t), *p = malloc(CHUNK * sizeof *p);
    double *dt = malloc(CHUNK * sizeof *dt), *dp = malloc(CHUNK * sizeof *dp);
    double *ot = malloc(CHUNK * sizeof *ot), *oc = malloc(CHUNK * sizeof *oc);
    if (!t || !p || !dt || !dp || !ot || !oc) return 1;
    gen g = {0, 52.5, 0, repeats};
    tw_dedup d;
    tw_rc rc;
    tw_dedup_init(&d, 0.004);
    tw_rc_init(&rc, C_S, 1);
    double cpu = 0, energy = 0, prev_t = 0, prev_c = 52.5;
    size_t kept_total = 0;
    for (size_t done = 0; done < n;) {
        size_t m = n - done < CHUNK ? n - done : CHUNK;
        generate(&g, t, p, m);
        double c0 = cpu_now();
        size_t kept = tw_dedup_run(&d, t, p, m, dt, dp);
        size_t k = tw_rc_run(&rc, dt, dp, kept, ot, NULL, oc);
        energy += integrate_windows(ot, oc, k, &prev_t, &prev_c);
        cpu += cpu_now() - c0;
        kept_total += kept;
        done += m;
    }
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("%-22s N=%zu raw samples (%zu distinct, %.1f s of trace): %.1f M samples/s on one core "
           "(%.3f s CPU), peak RSS %ld KiB, energy in windows %.1f J\n",
           repeats > 1 ? "K20-like (38 repeats):" : "all distinct:", n, kept_total, g.t, (double)n / cpu / 1e6, cpu,
           ru.ru_maxrss, energy);
    free(t), free(p), free(dt), free(dp), free(ot), free(oc);
    return 0;
}

int main(int argc, char **argv)
{
    size_t defaults[] = {10000000, 40000000};
    size_t count = argc > 1 ? (size_t)(argc - 1) : 2;
    printf("bench_correct: dedup + RC correction (symmetric slope) + window integration\n");
    for (size_t i = 0; i < count; i++) {
        size_t n = argc > 1 ? strtoull(argv[i + 1], NULL, 10) : defaults[i];
        for (int repeats = REPEATS; repeats >= 1; repeats = repeats == 1 ? 0 : 1) {
            fflush(stdout);
            pid_t pid = fork();
            if (pid == 0) exit(run(n, repeats));
            int st;
            if (pid < 0 || waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st)) {
                fprintf(stderr, "bench_correct: run with N=%zu failed\n", n);
                return 1;
            }
        }
    }
    return 0;
}
