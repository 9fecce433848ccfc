/*
 * bench_inject.c - what the injection library (libtruewatt-inject.so) costs
 * the measured program per launch and per NVTX range, without a GPU: the fake
 * CUPTI (tests/inject/fake_cupti.c) plays CUPTI.
 *
 *   bench_inject LIBTRUEWATT_INJECT.so FAKE_CUPTI.so [LAUNCHES [RANGES]]
 *
 * Launches: CUPTI records kernels itself and hands its buffers to the
 * library's buffer-completed callback, on CUPTI's thread (or the thread that
 * flushes): what the library costs the program per launch is the time in that
 * callback per record (the fake times it: CPU time, and wall time, which
 * also counts waiting for a lock or for the CPU), whichever thread it runs on. The
 * records are given to the fake in batches of 10,000 (the fake's own cost,
 * CUPTI's stand-in, is not counted) and delivered by the library's own drain
 * thread (TW_INJECT_FLUSH_MS, default 100) and by a flush of the program's
 * every batch. 500 kernel names, mangled, as a real program has.
 * The background work (the library's drain thread and its exit flush:
 * formatting, demangling, writing the events file; the fake's delivery
 * included) is the process's CPU time less the program's thread's, per record:
 * the work runs in a child process, whose CPU time the parent reads at its end.
 *
 * NVTX: nvtxRangePushA + nvtxRangePop pairs on the program's thread (NVTX v3,
 * NVTX_INJECTION64_PATH naming the library), CPU and wall time per pair, in
 * bursts of 100 ranges 1 ms apart (at most 100,000 ranges a second: a
 * training step has a few ranges a millisecond at most; BENCH_INJECT_PAUSE_US
 * sets the pause, 0 = back to back, which outruns the drain: threads then
 * move to fresh rings).
 *
 * Prints: launches=N inject_us_per_launch=X (CPU) inject_wall_us_per_launch=X'
 *         nvtx_ranges=M nvtx_us_per_range=Z (CPU) nvtx_wall_us_per_range=Z'
 *         background_us_per_launch=Y events_lines=L
 * (events_lines: the lines in the events file at the end: every record
 * written, none lost).
 */
#define _GNU_SOURCE
#include <cupti.h>
#include <nvtx3/nvToolsExt.h>

#include <dlfcn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NAMES 500
#define BATCH 10000

static double clock_s(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void *must(void *h, const char *name)
{
    void *p = h ? dlsym(h, name) : NULL;
    if (!p) {
        fprintf(stderr, "bench_inject: %s: %s\n", name, dlerror());
        exit(2);
    }
    return p;
}

static long count_lines(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    long n = 0;
    int c;
    while ((c = getc(f)) != EOF)
        n += c == '\n';
    fclose(f);
    return n;
}

/* The measured program: launches, then NVTX ranges; prints its own figures,
 * then exits (the library's exit flush writes the rest). */
static int program(const char *lib, const char *fake_path, long launches, long ranges)
{
    void *fake = dlopen(fake_path, RTLD_NOW | RTLD_LOCAL);
    void *inj = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    if (!fake || !inj) {
        fprintf(stderr, "bench_inject: %s\n", dlerror());
        return 2;
    }
    uint64_t (*now)(void) = (uint64_t(*)(void))must(fake, "fake_cupti_now");
    int (*push)(const void *, size_t) = (int (*)(const void *, size_t))must(fake, "fake_cupti_push");
    uint64_t (*complete_ns)(uint64_t *, uint64_t *) =
        (uint64_t(*)(uint64_t *, uint64_t *))must(fake, "fake_cupti_complete_ns");
    CUptiResult (*flush)(uint32_t) = (CUptiResult(*)(uint32_t))must(fake, "cuptiActivityFlushAll");
    int (*init)(void) = (int (*)(void))must(inj, "InitializeInjection");
    if (init() != 1) {
        fprintf(stderr, "bench_inject: InitializeInjection failed\n");
        return 1;
    }
    static char names[NAMES][64];
    for (int k = 0; k < NAMES; k++)
        snprintf(names[k], sizeof names[k], "_Z9kernel%03dILi%dEEvPfi", k, k % 7); /* void kernelK<N>(float*, int) */

    /* ---- launches */
    uint64_t t = now();
    for (long i = 0; i < launches; i += BATCH) {
        for (long j = i; j < i + BATCH && j < launches; j++) {
            CUpti_ActivityKernel10 k;
            memset(&k, 0, sizeof k);
            k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
            k.name = names[(j * 7919) % NAMES];
            k.start = t + 1000 * (uint64_t)j;
            k.end = k.start + 600;
            k.streamId = (uint32_t)(j % 4);
            k.correlationId = (uint32_t)j;
            k.gridX = k.gridY = k.gridZ = k.blockX = k.blockY = k.blockZ = 1;
            push(&k, sizeof k);
        }
        flush(0);
    }
    uint64_t records = 0, cpu_ns = 0, ns = complete_ns(&records, &cpu_ns);

    /* ---- NVTX ranges */
    nvtxRangePushA("warm-up"); /* NVTX loads the library at its first call */
    nvtxRangePop();
    double nvtx_s = 0, nvtx_cpu = 0;
    const char *pause = getenv("BENCH_INJECT_PAUSE_US");
    long pause_us = pause ? atol(pause) : 1000;
    for (long i = 0; i < ranges; i += 100) {
        double w0 = clock_s(CLOCK_MONOTONIC), c0 = clock_s(CLOCK_THREAD_CPUTIME_ID);
        for (long j = i; j < i + 100 && j < ranges; j++) {
            nvtxRangePushA(names[j % NAMES] + 3);
            nvtxRangePop();
        }
        nvtx_s += clock_s(CLOCK_MONOTONIC) - w0;
        nvtx_cpu += clock_s(CLOCK_THREAD_CPUTIME_ID) - c0;
        struct timespec ts = {pause_us / 1000000, (pause_us % 1000000) * 1000};
        if (pause_us > 0) nanosleep(&ts, NULL);
    }

    double per = records ? 1e-3 / (double)records : 0.0, per_range = ranges ? 1e6 / (double)ranges : 0.0;
    printf("launches=%ld inject_us_per_launch=%.3f inject_wall_us_per_launch=%.3f nvtx_ranges=%ld "
           "nvtx_us_per_range=%.3f nvtx_wall_us_per_range=%.3f",
           launches, per * (double)cpu_ns, per * (double)ns, ranges, per_range * nvtx_cpu, per_range * nvtx_s);
    printf(" main_thread_cpu_s=%.6f\n", clock_s(CLOCK_THREAD_CPUTIME_ID));
    fflush(stdout);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: bench_inject LIBTRUEWATT_INJECT.so FAKE_CUPTI.so [LAUNCHES [RANGES]]\n");
        return 2;
    }
    long launches = argc > 3 ? atol(argv[3]) : 1000000, ranges = argc > 4 ? atol(argv[4]) : 1000000;
    char dir[] = "/tmp/tw-bench-inject.XXXXXX", events[64], out[64];
    if (!mkdtemp(dir)) return 2;
    snprintf(events, sizeof events, "%s/events.csv", dir);
    snprintf(out, sizeof out, "%s/out.txt", dir);
    setenv("TW_EVENTS_PATH", events, 1);
    setenv("TW_CUPTI_LIBRARY", argv[2], 1);
    setenv("NVTX_INJECTION64_PATH", argv[1], 1);
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        if (!freopen(out, "w", stdout)) _exit(2);
        exit(program(argv[1], argv[2], launches, ranges));
    }
    int st;
    if (pid < 0 || waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st)) {
        fprintf(stderr, "bench_inject: the program failed\n");
        return 1;
    }
    struct rusage ru;
    getrusage(RUSAGE_CHILDREN, &ru);
    double cpu = (double)ru.ru_utime.tv_sec + 1e-6 * (double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_sec +
                 1e-6 * (double)ru.ru_stime.tv_usec;
    char line[512] = "";
    FILE *f = fopen(out, "r");
    if (!f || !fgets(line, sizeof line, f)) return 1;
    fclose(f);
    line[strcspn(line, "\n")] = '\0';
    const char *m = strstr(line, " main_thread_cpu_s=");
    double main_cpu = m ? atof(m + 19) : 0;
    if (m) line[m - line] = '\0';
    long lines = count_lines(events) - 1; /* the header */
    printf("%s background_us_per_launch=%.3f events_lines=%ld (launches + ranges + 1 warm-up: %ld)\n", line,
           launches ? 1e6 * (cpu - main_cpu) / (double)launches : 0.0, lines, launches + ranges + 1);
    remove(events);
    remove(out);
    rmdir(dir);
    return lines == launches + ranges + 1 ? 0 : 1;
}
