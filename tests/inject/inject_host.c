/*
 * inject_host.c - plays the CUDA driver and the GPU for the injection library:
 * loads libtruewatt-inject.so, calls InitializeInjection as libcuda would, and
 * feeds activity records through the fake CUPTI (built from fake_cupti.c),
 * which it loads itself first from $INJECT_HOST_CUPTI or $TW_CUPTI_LIBRARY. inject_e2e.sh checks the events file it
 * leaves.
 *
 * usage: inject_host LIBTRUEWATT_INJECT.so MODE
 *   MODE bare:  InitializeInjection only (whatever CUPTI is found)
 *        exit:  records, 350 ms pause, more records, normal exit
 *        kill:  the same, but SIGKILL instead of the exit (no exit handlers)
 * Prints "phase1_lines N": lines in the events file during the pause, i.e.
 * what the flush thread wrote while the program ran.
 */
#include <cupti.h>

#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MS 1000000ull

static uint64_t (*now)(void);
static int (*push)(const void *record, size_t size);

static void *must_sym(void *h, const char *name)
{
    void *p = dlsym(h, name);
    if (!p) {
        fprintf(stderr, "inject_host: %s: %s\n", name, dlerror());
        exit(2);
    }
    return p;
}

static void kernel(const char *name, uint64_t start, uint64_t end, uint32_t corr)
{
    CUpti_ActivityKernel10 k;
    memset(&k, 0, sizeof k);
    k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    k.name = name;
    k.start = start;
    k.end = end;
    k.deviceId = 0;
    k.streamId = 7;
    k.gridX = 2112, k.gridY = 1, k.gridZ = 1;
    k.blockX = 256, k.blockY = 1, k.blockZ = 1;
    k.correlationId = corr;
    push(&k, sizeof k);
}

static void marker(uint32_t id, CUpti_ActivityFlag flags, const char *name, uint64_t ts)
{
    CUpti_ActivityMarker2 m;
    memset(&m, 0, sizeof m);
    m.kind = CUPTI_ACTIVITY_KIND_MARKER;
    m.flags = flags;
    m.timestamp = ts;
    m.id = id;
    m.name = name;
    push(&m, sizeof m);
}

static int count_lines(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    int n = 0, c;
    while ((c = getc(f)) != EOF)
        n += c == '\n';
    fclose(f);
    return n;
}

static void pause_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: inject_host LIBTRUEWATT_INJECT.so bare|exit|kill\n");
        return 2;
    }
    const char *mode = argv[2];
    /* the timeline starts 1 s before now */
    struct timespec mono;
    clock_gettime(CLOCK_MONOTONIC, &mono);
    char t0[32];
    snprintf(t0, sizeof t0, "%llu", (unsigned long long)mono.tv_sec * 1000000000ull - 1000000000ull + mono.tv_nsec);
    setenv("TW_T0_MONO_NS", t0, 1);

    void *inj = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!inj) {
        fprintf(stderr, "inject_host: %s\n", dlerror());
        return 2;
    }
    int (*init)(void) = (int (*)(void))must_sym(inj, "InitializeInjection");
    if (strcmp(mode, "bare") == 0) {
        int rc = init();
        printf("init %d\n", rc);
        return rc == 1 ? 0 : 1;
    }

    /* the program's own libcupti, loaded before CUDA starts (as PyTorch does) */
    const char *fake_path = getenv("INJECT_HOST_CUPTI");
    if (!fake_path) fake_path = getenv("TW_CUPTI_LIBRARY");
    void *fake = fake_path ? dlopen(fake_path, RTLD_NOW | RTLD_LOCAL) : NULL;
    if (!fake) {
        fprintf(stderr, "inject_host: INJECT_HOST_CUPTI or TW_CUPTI_LIBRARY must name the fake CUPTI\n");
        return 2;
    }
    now = (uint64_t(*)(void))must_sym(fake, "fake_cupti_now");
    push = (int (*)(const void *, size_t))must_sym(fake, "fake_cupti_push");
    unsigned (*enabled)(void) = (unsigned (*)(void))must_sym(fake, "fake_cupti_enabled");
    uint32_t (*period)(void) = (uint32_t(*)(void))must_sym(fake, "fake_cupti_flush_period");

    if (init() != 1 || init() != 1) {
        fprintf(stderr, "inject_host: InitializeInjection did not return 1\n");
        return 1;
    }
    unsigned want = 1u << CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL | 1u << CUPTI_ACTIVITY_KIND_MEMCPY |
                    1u << CUPTI_ACTIVITY_KIND_MEMSET | 1u << CUPTI_ACTIVITY_KIND_MARKER;
    printf("enabled %s\n", enabled() == want ? "ok" : "WRONG");
    printf("flush_period %u\n", (unsigned)period());
    const char *nvtx = getenv("NVTX_INJECTION64_PATH");
    printf("nvtx_path %s\n", nvtx ? nvtx : "(unset)");

    uint64_t t = now();
    kernel("_Z4spinPfi", t + 1 * MS, t + 11 * MS, 1);
    kernel("plain, \"quoted\" name", t + 12 * MS, t + 13 * MS, 2);
    CUpti_ActivityMemcpy6 c;
    memset(&c, 0, sizeof c);
    c.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
    c.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
    c.bytes = 1048576;
    c.start = t + 14 * MS, c.end = t + 15 * MS;
    c.deviceId = 0, c.streamId = 7, c.correlationId = 3;
    push(&c, sizeof c);
    CUpti_ActivityMemset4 s;
    memset(&s, 0, sizeof s);
    s.kind = CUPTI_ACTIVITY_KIND_MEMSET;
    s.bytes = 4096;
    s.start = t + 16 * MS, s.end = t + 17 * MS;
    s.deviceId = 0, s.streamId = 7, s.correlationId = 4;
    push(&s, sizeof s);
    marker(5, CUPTI_ACTIVITY_FLAG_MARKER_START, "phase \"one\"", t);
    marker(6, CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS, "a mark", t + 5 * MS);
    marker(5, CUPTI_ACTIVITY_FLAG_MARKER_END, NULL, t + 20 * MS);
    marker(99, CUPTI_ACTIVITY_FLAG_MARKER_END, NULL, t + 21 * MS); /* began before tracing */
    kernel("_Z8untimedv", 0, 0, 5);                                /* CUPTI could not time it */

    pause_ms(350);
    printf("phase1_lines %d\n", count_lines(getenv("TW_EVENTS_PATH")));
    fflush(stdout);

    kernel("_Z5afterv", t + 400 * MS, t + 401 * MS, 6);
    marker(7, CUPTI_ACTIVITY_FLAG_MARKER_START, "open at exit", t + 400 * MS);
    if (strcmp(mode, "kill") == 0) raise(SIGKILL);
    return 0;
}
