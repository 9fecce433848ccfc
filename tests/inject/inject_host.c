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
 *        gpu:   under truewatt run (LIBTRUEWATT_INJECT.so "-": $CUDA_INJECTION64_PATH):
 *               kernels of 0.3 s on CUDA device 0, whose UUID is $INJECT_HOST_UUID
 *               (32 hex digits; its device record first), from 0.5 s on the trace timeline;
 *               with $INJECT_HOST_MIG_UUID (32 hex digits), device 0 is that MIG instance
 *        stream SECONDS [PIDFILE]: as gpu, but a kernel "tick" of 10 ms every 20 ms
 *               for SECONDS, each given to the fake CUPTI as it ends (a program
 *               that runs until it is killed: tests/e2e/run_kill.sh); its pid
 *               in PIDFILE first
 *        burst IDLE SECONDS: the device record, IDLE s with no kernel, then the
 *               ticks of stream for SECONDS (a program's short stretch of GPU work)
 * In exit and kill modes, the device record of CUDA device 0 (UUID
 * $INJECT_HOST_UUID, default 11223344-5566-7788-99aa-bbccddeeff00) comes after
 * the kernels, in the same buffer, as it may from CUPTI; CUDA devices 1 and 2 have
 * none: their UUIDs come from the program's libcuda when $INJECT_HOST_CUDA names
 * one to load (fake_cuda.c), else nowhere.
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
#include <unistd.h>

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

/* The device record of CUDA device `id`: UUID from 32 hex digits. */
static void device_record(uint32_t id, const char *hex)
{
    CUpti_ActivityDevice5 d;
    memset(&d, 0, sizeof d);
    d.kind = CUPTI_ACTIVITY_KIND_DEVICE;
    d.id = id;
    for (int i = 0; i < 16; i++) {
        unsigned b = 0;
        sscanf(hex + 2 * i, "%2x", &b);
        d.uuid.bytes[i] = (char)b;
    }
    d.gpuInstanceId = d.computeInstanceId = UINT32_MAX;
    /* $INJECT_HOST_MIG_UUID (32 hex digits): the device is that MIG instance of its GPU */
    const char *mig = getenv("INJECT_HOST_MIG_UUID");
    if (mig && strlen(mig) == 32) {
        d.isMigEnabled = 1;
        d.gpuInstanceId = d.computeInstanceId = 1;
        for (int i = 0; i < 16; i++) {
            unsigned b = 0;
            sscanf(mig + 2 * i, "%2x", &b);
            d.migUuid.bytes[i] = (char)b;
        }
    }
    push(&d, sizeof d);
}

static void pause_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

/* A kernel "tick" of 10 ms every 20 ms for `seconds`, each given to the fake CUPTI as it ends. */
static void ticks(double seconds)
{
    for (uint32_t i = 0; i < (uint32_t)(seconds * 50); i++) {
        pause_ms(10);
        uint64_t end = now();
        kernel("tick", end - 10 * MS, end, 100 + i);
        pause_ms(10);
    }
}

static const char *uuid_hex(void)
{
    const char *u = getenv("INJECT_HOST_UUID");
    return u && strlen(u) == 32 ? u : "112233445566778899aabbccddeeff00";
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

int main(int argc, char **argv)
{
    if (argc < 3 || argc > 5 || (argc > 3 && strcmp(argv[2], "stream") != 0 && strcmp(argv[2], "burst") != 0)) {
        fprintf(stderr, "usage: inject_host LIBTRUEWATT_INJECT.so bare|exit|kill|gpu|stream SECONDS [PIDFILE]|burst "
                        "IDLE SECONDS\n");
        return 2;
    }
    const char *mode = argv[2];
    /* the timeline starts 1 s before now */
    struct timespec mono;
    clock_gettime(CLOCK_MONOTONIC, &mono);
    char t0[32];
    snprintf(t0, sizeof t0, "%llu", (unsigned long long)mono.tv_sec * 1000000000ull - 1000000000ull + mono.tv_nsec);
    setenv("TW_T0_MONO_NS", t0, 1);

    const char *lib = strcmp(argv[1], "-") == 0 ? getenv("CUDA_INJECTION64_PATH") : argv[1];
    void *inj = lib ? dlopen(lib, RTLD_NOW | RTLD_LOCAL) : NULL;
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

    /* the program's libcuda, when asked for */
    const char *cuda_path = getenv("INJECT_HOST_CUDA");
    if (cuda_path && !dlopen(cuda_path, RTLD_NOW | RTLD_LOCAL)) {
        fprintf(stderr, "inject_host: %s\n", dlerror());
        return 2;
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
    if (strcmp(mode, "gpu") == 0) { /* the trace timeline's origin is truewatt's */
        struct timespec m;
        clock_gettime(CLOCK_MONOTONIC, &m);
        uint64_t since_t0 =
            (uint64_t)m.tv_sec * 1000000000ull + (uint64_t)m.tv_nsec - strtoull(getenv("TW_T0_MONO_NS"), NULL, 10);
        uint64_t at = now() - since_t0 + 500 * MS; /* 0.5 s on the timeline, in CUPTI's clock */
        if (since_t0 < 400 * MS) pause_ms((long)((500 * MS - since_t0) / MS));
        device_record(0, uuid_hex()); /* as CUPTI: at CUDA's initialisation */
        for (uint32_t i = 0; i < 3; i++) {
            kernel("_Z4spinPfi", at + i * 400 * MS, at + i * 400 * MS + 300 * MS, 10 + i);
            pause_ms(400);
        }
        return 0;
    }
    if (strcmp(mode, "burst") == 0) {
        device_record(0, uuid_hex());
        pause_ms((long)((argc > 3 ? atof(argv[3]) : 1.0) * 1000));
        double seconds = argc > 4 ? atof(argv[4]) : 1.0;
        ticks(seconds);
        return 0;
    }
    if (strcmp(mode, "stream") == 0) {
        if (argc > 4) {
            FILE *f = fopen(argv[4], "w");
            if (!f || fprintf(f, "%ld\n", (long)getpid()) < 0 || fclose(f) != 0) return 2;
        }
        device_record(0, uuid_hex());
        double seconds = argc > 3 ? atof(argv[3]) : 1.0;
        ticks(seconds);
        return 0;
    }
    unsigned want = 1u << CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL | 1u << CUPTI_ACTIVITY_KIND_MEMCPY |
                    1u << CUPTI_ACTIVITY_KIND_MEMSET | 1u << CUPTI_ACTIVITY_KIND_DEVICE;
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
    kernel("_Z8untimedv", 0, 0, 5);     /* CUPTI could not time it */
    for (uint32_t d = 1; d <= 2; d++) { /* on CUDA devices without a device record */
        CUpti_ActivityKernel10 k1;
        memset(&k1, 0, sizeof k1);
        k1.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
        k1.name = d == 1 ? "on_device_1" : "on_device_2";
        k1.start = t + 18 * MS, k1.end = t + 19 * MS;
        k1.deviceId = d, k1.streamId = 8, k1.correlationId = 6 + d;
        push(&k1, sizeof k1);
    }
    device_record(0, uuid_hex()); /* after the kernels that need it */

    pause_ms(350);
    printf("phase1_lines %d\n", count_lines(getenv("TW_EVENTS_PATH")));
    fflush(stdout);

    kernel("_Z5afterv", t + 400 * MS, t + 401 * MS, 6);
    if (strcmp(mode, "kill") == 0) raise(SIGKILL);
    return 0;
}
