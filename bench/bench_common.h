/* What the benchmark programs share: a monotonic clock, a status check that
 * names the program (BENCH_NAME, defined before this is included) and the
 * process's peak memory. */
#ifndef TW_BENCH_COMMON_H
#define TW_BENCH_COMMON_H

#include <stdio.h>
#include <sys/resource.h>
#include <time.h>

#include "truewatt.h"

#ifndef BENCH_NAME
#error "define BENCH_NAME (the program's name, for its messages) before including bench_common.h"
#endif

static inline double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* 0 when st is TW_OK; else says what failed, and 1. */
static inline int check(tw_status st, const char *what)
{
    if (st == TW_OK) return 0;
    fprintf(stderr, BENCH_NAME ": %s: %s\n", what, tw_last_error());
    return 1;
}

/* Every row of the sensor `s` into the trace writer `w`; nonzero (said) on an error. */
static inline int copy_rows(tw_sensor *s, tw_trace_writer *w)
{
    for (;;) {
        tw_row row;
        bool eof;
        if (check(tw_sensor_next(s, &row, &eof), "sim row")) return 1;
        if (eof) return 0;
        if (check(tw_trace_writer_write(w, &row), "write")) return 1;
    }
}

static inline double peak_rss_mib(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_maxrss / 1024.0;
}

#endif
