/* Process reports (internal; the writer's API is in truewatt.h): how a
 * process measured by `truewatt run` tells a running exporter its energy.
 *
 * One small text file per run in a folder both know ($TW_PROCESS_DIR, else
 * /tmp/truewatt-processes), named after the writer (truewatt run's pid and
 * start time, unique on the host), always replaced whole (written aside,
 * then renamed): "running" as soon as the program started, "done" with each
 * GPU's energy once the run's estimator split it. A file, not a socket, so
 * that nothing is lost while no exporter runs or one restarts (it reads the
 * folder again), many processes never wait on one another, and a crashed
 * writer is seen (its pid no longer has its start time). The exporter only
 * reads and publishes; the energy split is the estimator's (tw_procfile_split).
 * docs/exporter.md#per-process-energy. */
#ifndef TW_EXPORTER_PROCFILE_H
#define TW_EXPORTER_PROCFILE_H

#include <stdbool.h>
#include <stddef.h>

#include "estimate/estimator.h"
#include "truewatt.h"

#define PROCFILE_MAGIC "truewatt-process 1"
#define PROCFILE_EXT ".twproc"
#define PROCFILE_MAX_GPUS 16     /* GPUs of one run's report (a run sampling more reports none) */
#define PROCFILE_MAX_BYTES 16384 /* a larger file is not a report (16 GPUs take < 3 KB) */

/* One GPU's share of a measured process. */
typedef struct procfile_gpu {
    char uuid[96];
    double energy_j; /* its kernels' and copies' energy above the baseline, plus the baseline while they ran */
    double active_j; /* the part above the baseline alone; NaN when the run's estimate failed */
} procfile_gpu;

/* A report as read back. */
typedef struct procfile {
    unsigned writer_pid;
    unsigned long long writer_start; /* its start time, clock ticks since boot (/proc/PID/stat field 22) */
    unsigned pid;                    /* the measured process, as NVML sees it */
    char command[128];
    char job[64]; /* "" when none */
    bool done;
    size_t ngpus;
    procfile_gpu gpu[PROCFILE_MAX_GPUS];
} procfile;

/* The folder: dir, else $TW_PROCESS_DIR, else TW_PROC_DIR_DEFAULT. */
const char *tw_procfile_dir(const char *dir);

/* A process's energy on one GPU from the run's estimate of it and the events it was made from
 * (NULL: the estimate alone): its kernels and copies above the baseline (active_j), plus the time
 * they ran (their activity integral, overlaps shared) times the GPU's power that no activity
 * explains while they ran, from the energy counter (energy_j). So a process that keeps the GPU
 * busy is charged the counter's energy over its busy time even where the model falls short of
 * the counter; the GPU's power while no kernel of it runs is no process's, and several processes
 * on one GPU are each charged only their own busy time. docs/exporter.md#per-process-energy. */
void tw_procfile_split(const tw_estimate *e, const tw_events *events, double *energy_j, double *active_j);

/* The run's estimate of GPU uuid into report r (tw_procfile_split); r NULL: nothing. */
tw_status tw_procfile_set_estimate(tw_proc_report *r, const char *uuid, const tw_estimate *e, const tw_events *events);

/* Parses the text of a report; false with the problem (and its line) in err. */
bool tw_procfile_parse(const char *text, procfile *out, char *err, size_t err_len);

/* Whether the writer still runs: its pid with the start time it wrote (a
 * reused pid has another). */
bool tw_procfile_writer_alive(const procfile *p);

/* The start time of pid (clock ticks since boot), 0 when it is gone. */
unsigned long long tw_procfile_start_ticks(unsigned pid);

#endif
