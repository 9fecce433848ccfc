/* The parallel job a `truewatt run` belongs to: its rank and size, from the
 * variables MPI launchers, Slurm and torchrun set, and the host. With a rank,
 * each rank writes its own run file (NAME.rankR.sqlite) and rank 0 merges
 * them (docs/mpi.md). */
#ifndef TW_CLI_JOB_H
#define TW_CLI_JOB_H

#include <stdbool.h>
#include <stddef.h>

typedef struct run_job {
    int rank;             /* -1: not in a parallel job */
    int size;             /* the number of ranks; 0 when no variable says */
    int local_rank;       /* -1 when unknown */
    const char *rank_var; /* the variable the rank came from ("" without one) */
    char host[256];       /* gethostname */
} run_job;

/* Reads the environment: the first of OMPI_COMM_WORLD_RANK, PMIX_RANK,
 * PMI_RANK, SLURM_PROCID, RANK that is set (with the matching size:
 * SLURM_STEP_NUM_TASKS for Slurm), and the host. Only a job whose size is
 * above 1 gets a run file per rank (run_job_ranks). Returns false with a message on stderr when a variable is set but
 * is not a number (0 <= rank < size). */
bool run_job_detect(run_job *j);

/* Whether the job has several ranks: a run file per rank, rank 0 merges. */
static inline bool run_job_ranks(const run_job *j) { return j->rank >= 0 && j->size > 1; }

/* `path` for rank `rank`: "{rank}" replaced by the rank where it appears,
 * else ".rankR" put before the last extension ("a.sqlite" -> "a.rank3.sqlite",
 * "a" -> "a.rank3"). */
void run_job_path(const char *path, int rank, char *out, size_t cap);

#endif
