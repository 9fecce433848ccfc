/* The merged report of several run files: the ranks of an MPI job (or any
 * runs on the same GPUs), each GPU counted once. `truewatt report RUN RUN...`
 * and rank 0 of `mpirun ... truewatt run` print it (docs/mpi.md).
 *
 * A GPU is a host and a UUID. Its energy comes from the run file of the
 * lowest rank that sampled it (its owner); the kernels of every rank that ran
 * on it, moved onto the owner's timeline (same host: same CLOCK_MONOTONIC),
 * are fitted together, each name per rank ("rank 1: gemm"), so that each rank
 * gets its own kernels' energy and the GPU's energy is counted once. */
#ifndef TW_REPORT_RUN_MERGE_H
#define TW_REPORT_RUN_MERGE_H

#include <stddef.h>

#include "report/run_report.h"

#define run_merge_load tw_rep_run_merge_load

/* The merged report of the n run files into r (tw_report_merge). */
tw_status run_merge_load(const char *const *paths, size_t n, const tw_report_options *o, tw_report *r);

#endif
