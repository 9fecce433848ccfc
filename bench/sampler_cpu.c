/* Benchmark: the sampler's CPU per GPU on the fake libnvidia-ml, for one and
 * two GPUs, with the default plan of a Hopper GPU without a profile, with a
 * profile's plan (when given) and with the fast readings every 1 ms (the
 * sampler before the plans: 3.8 % of a core for one H100, 7.2 % for two).
 *
 *   sampler_cpu [SECONDS [PROFILE.json]]      (default 10 s each)
 *
 * The fake is $TW_NVML_LIBRARY, else fake-nvml/libnvidia-ml.so.1 beside this
 * program (built with the tests). Each energy counter read burns
 * $TW_FAKE_NVML_ENERGY_SPIN_US of CPU (default 4000, an H100's). The fake's
 * calls are cheaper than a driver's, except the counter: the numbers are a
 * lower bound of what a GPU costs; `truewatt run` prints the real ones. */
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "truewatt.h"

static void sleep_s(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    nanosleep(&ts, NULL);
}

static const char *fake_library(void)
{
    static char path[PATH_MAX + 64];
    const char *env = getenv("TW_NVML_LIBRARY");
    if (env && *env) return env;
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) return NULL;
    self[n] = '\0';
    snprintf(path, sizeof path, "%s/fake-nvml/libnvidia-ml.so.1", dirname(self));
    return access(path, R_OK) == 0 ? path : NULL;
}

/* One run; prints a row. */
static int run(const char *label, unsigned ndev, double seconds, const char *lib, const char *profile, double fast)
{
    char n[8];
    snprintf(n, sizeof n, "%u", ndev);
    setenv("TW_FAKE_NVML_DEVICES", n, 1);
    char trace[64];
    snprintf(trace, sizeof trace, "/tmp/tw-bench-sampler-%d.csv", (int)getpid());
    tw_sensor_config base = {.library = lib};
    tw_sampler_config cfg = {
        .backend = "nvml", .base = &base, .trace_path = trace, .profile_path = profile, .fast_period_s = fast};
    tw_sampler *s = NULL;
    if (tw_sampler_start(&cfg, &s) != TW_OK) {
        fprintf(stderr, "sampler_cpu: %s\n", tw_last_error());
        return 1;
    }
    sleep_s(seconds);
    tw_status st = tw_sampler_stop(s);
    double wall = tw_sampler_wall_s(s);
    printf("%-28s %4u  %8.2f  ", label, ndev, 100 * tw_sampler_cpu_s(s) / wall / ndev);
    for (size_t d = 0; d < tw_sampler_device_count(s); d++)
        printf("GPU %d %.2f %%  ", tw_sampler_device_get(s, d)->index, 100 * tw_sampler_device_get(s, d)->cpu_s / wall);
    printf("writer %.2f %%\n", 100 * tw_sampler_writer_cpu_s(s) / wall);
    tw_sampler_free(s);
    remove(trace);
    return st == TW_OK ? 0 : 1;
}

int main(int argc, char **argv)
{
    double seconds = argc > 1 ? atof(argv[1]) : 10.0;
    const char *profile = argc > 2 ? argv[2] : NULL;
    const char *lib = fake_library();
    if (!lib || seconds <= 0) {
        fprintf(stderr, "usage: sampler_cpu [SECONDS [PROFILE.json]] (needs the fake libnvidia-ml: build the tests, "
                        "or set TW_NVML_LIBRARY)\n");
        return 2;
    }
    if (!getenv("TW_FAKE_NVML_ENERGY_SPIN_US")) setenv("TW_FAKE_NVML_ENERGY_SPIN_US", "4000", 1);
    printf("fake: %s, counter read %s us of CPU, %g s a run\n", lib, getenv("TW_FAKE_NVML_ENERGY_SPIN_US"), seconds);
    printf("%-28s %4s  %8s  %s\n", "plan", "GPUs", "%/GPU", "per device and writer (% of one core)");
    int rc = 0;
    for (unsigned ndev = 1; ndev <= 2; ndev++) {
        rc |= run("default (Hopper, no profile)", ndev, seconds, lib, NULL, 0);
        if (profile) rc |= run("profile", ndev, seconds, lib, profile, 0);
        rc |= run("fast readings every 1 ms", ndev, seconds, lib, NULL, 0.001);
    }
    return rc;
}
