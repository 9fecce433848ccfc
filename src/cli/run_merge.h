/* The merged report of several run files: the ranks of an MPI job (or any
 * runs on the same GPUs), each GPU counted once. `truewatt report RUN RUN...`
 * and rank 0 of `mpirun ... truewatt run` print it (docs/mpi.md).
 *
 * A GPU is a host and a UUID. Its energy comes from the run file of the
 * lowest rank that sampled it (its owner); the kernels of every rank that ran
 * on it, moved onto the owner's timeline (same host: same CLOCK_MONOTONIC),
 * are fitted together, each name per rank ("rank 1: gemm"), so that each rank
 * gets its own kernels' energy and the GPU's energy is counted once. */
#ifndef TW_CLI_RUN_MERGE_H
#define TW_CLI_RUN_MERGE_H

#include <stddef.h>
#include <stdio.h>

#include "cli/run_pipeline.h"

/* Prints the merged report of the n run files on `out` (text, or JSON with
 * o->json); o->perfetto is not supported here. Returns 0, or an exit code
 * after a message on stderr. */
int run_merge_report(const char *const *paths, size_t n, const run_report_opts *o, FILE *out);

#endif
