/* The cost of a region: begin + end pairs on one session, timed, printed
 * (issue 17's target: at most 2 us a pair). Four ways: the result dropped
 * (out NULL), kept and freed, and both from several threads at once (each
 * thread's open regions are its own; an ended region goes onto a lock-free
 * inbox: the threads share no lock).
 *
 *   build/bench_region [backend] [pairs] [threads]
 *
 * backend: nvml (a GPU, or the fake via TW_NVML_LIBRARY) or sim; default:
 * nvml when available, else sim. Prints one line per way, ns per pair. */
#define BENCH_NAME "bench_region"
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "bench_common.h"

typedef struct job {
    tw_session *s;
    long pairs;
    bool keep;
    int failed;
    char name[32];
} job;

static void *pairs_of(void *arg)
{
    job *j = arg;
    for (long i = 0; i < j->pairs; i++) {
        tw_region *r = NULL;
        if (tw_region_begin(j->s, j->name) != TW_OK || tw_region_end(j->s, j->name, j->keep ? &r : NULL) != TW_OK) {
            j->failed = 1;
            return NULL;
        }
        tw_region_free(r);
    }
    return NULL;
}

/* ns per pair over `threads` threads each doing `pairs` pairs (wall time). */
static double run_way(tw_session *s, long pairs, int threads, bool keep)
{
    pthread_t th[64];
    job j[64];
    double t0 = now_s();
    for (int i = 0; i < threads; i++) {
        j[i] = (job){s, pairs, keep, 0, ""};
        snprintf(j[i].name, sizeof j[i].name, "region%d", i);
        if (pthread_create(&th[i], NULL, pairs_of, &j[i]) != 0) return -1;
    }
    int failed = 0;
    for (int i = 0; i < threads; i++) {
        pthread_join(th[i], NULL);
        failed |= j[i].failed;
    }
    double dt = now_s() - t0;
    if (failed) {
        fprintf(stderr, BENCH_NAME ": a begin or end failed: %s\n", tw_last_error());
        return -1;
    }
    return 1e9 * dt / (double)pairs; /* per pair of one thread: what each caller waits */
}

int main(int argc, char **argv)
{
    tw_session_config c;
    tw_session_config_init(&c);
    c.backend = argc > 1 && strcmp(argv[1], "default") != 0 ? argv[1] : NULL;
    long pairs = argc > 2 ? atol(argv[2]) : 1000000;
    int threads = argc > 3 ? atoi(argv[3]) : 4;
    if (pairs < 1 || threads < 1 || threads > 64) {
        fprintf(stderr, "usage: bench_region [nvml|sim|default] [pairs >= 1] [threads 1..64]\n");
        return 2;
    }
    tw_session *s = NULL;
    if (check(tw_session_open(&c, &s), "tw_session_open")) return 1;
    tw_device_info info;
    tw_session_device(s, 0, &info);
    printf("bench_region: backend %s, %zu GPU(s) (%s), %ld pairs per way\n", tw_session_backend(s),
           tw_session_device_count(s), info.name, pairs);
    double a = run_way(s, pairs, 1, false);
    double b = run_way(s, pairs, 1, true);
    double m = run_way(s, pairs / threads > 0 ? pairs / threads : 1, threads, false);
    double mk = run_way(s, pairs / threads > 0 ? pairs / threads : 1, threads, true);
    tw_session_close(s);
    if (a < 0 || b < 0 || m < 0 || mk < 0) return 1;
    printf("begin+end, result dropped:          %8.0f ns per pair\n", a);
    printf("begin+end, result kept and freed:   %8.0f ns per pair\n", b);
    printf("begin+end, %2d threads at once:      %8.0f ns per pair per thread\n", threads, m);
    printf("  the same, results kept and freed:   %8.0f ns per pair per thread\n", mk);
    printf("target: at most 2000 ns per pair (issue 17)\n");
    return 0;
}
