/* An LD_PRELOAD shim that steps the host's wall clock in one process, as
 * NTP, a VM's resume or an administrator's `date -s` would: from
 * $TW_CLOCKSTEP_AFTER_S seconds after it was loaded (CLOCK_MONOTONIC), every
 * CLOCK_REALTIME read (clock_gettime of CLOCK_REALTIME and its COARSE
 * variant, gettimeofday, time) is $TW_CLOCKSTEP_S seconds off (negative: back).
 * CLOCK_MONOTONIC is left alone. scripts/faults runs `truewatt run` under it
 * (Debian's faketime steps a clock only from a wall-clock date, and moves
 * CLOCK_MONOTONIC too unless told not to; this is simpler and exact). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/time.h>
#include <time.h>

typedef int (*clock_gettime_fn)(clockid_t, struct timespec *);
typedef int (*gettimeofday_fn)(struct timeval *, void *);

static clock_gettime_fn real_clock_gettime;
static gettimeofday_fn real_gettimeofday;
static int64_t step_at_ns = -1; /* CLOCK_MONOTONIC instant of the step; < 0: none */
static int64_t step_ns;

static int64_t mono_now(void)
{
    struct timespec ts;
    real_clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

__attribute__((constructor)) static void clockstep_init(void)
{
    real_clock_gettime = (clock_gettime_fn)dlsym(RTLD_NEXT, "clock_gettime");
    real_gettimeofday = (gettimeofday_fn)dlsym(RTLD_NEXT, "gettimeofday");
    const char *after = getenv("TW_CLOCKSTEP_AFTER_S"), *step = getenv("TW_CLOCKSTEP_S");
    if (!real_clock_gettime || !after || !step) return;
    step_ns = (int64_t)(strtod(step, NULL) * 1e9);
    step_at_ns = mono_now() + (int64_t)(strtod(after, NULL) * 1e9);
}

/* The step to add now (0 before it). */
static int64_t offset_now(void) { return step_at_ns >= 0 && mono_now() >= step_at_ns ? step_ns : 0; }

static void shift(struct timespec *ts, int64_t ns)
{
    int64_t t = (int64_t)ts->tv_sec * 1000000000LL + ts->tv_nsec + ns;
    ts->tv_sec = (time_t)(t / 1000000000LL);
    ts->tv_nsec = (long)(t % 1000000000LL);
    if (ts->tv_nsec < 0) {
        ts->tv_nsec += 1000000000L;
        ts->tv_sec--;
    }
}

int clock_gettime(clockid_t id, struct timespec *ts)
{
    if (!real_clock_gettime) real_clock_gettime = (clock_gettime_fn)dlsym(RTLD_NEXT, "clock_gettime");
    int r = real_clock_gettime(id, ts);
    if (r == 0 && (id == CLOCK_REALTIME || id == CLOCK_REALTIME_COARSE)) shift(ts, offset_now());
    return r;
}

int gettimeofday(struct timeval *tv, void *tz)
{
    if (!real_gettimeofday) real_gettimeofday = (gettimeofday_fn)dlsym(RTLD_NEXT, "gettimeofday");
    int r = real_gettimeofday(tv, tz);
    if (r == 0) {
        struct timespec ts = {tv->tv_sec, tv->tv_usec * 1000L};
        shift(&ts, offset_now());
        tv->tv_sec = ts.tv_sec;
        tv->tv_usec = ts.tv_nsec / 1000;
    }
    return r;
}

time_t time(time_t *out)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    if (out) *out = ts.tv_sec;
    return ts.tv_sec;
}
