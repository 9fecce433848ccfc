/* The parallel job of a `truewatt run`: see job.h. */
#include "cli/job.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The launchers' variables, most specific first (a job of several ranks only
 * where the size is known and above 1: a lone rank, a batch script, keep one
 * run file of the usual name): Open MPI, PMIx (Open MPI 5,
 * Slurm's pmix), PMI (MPICH, Intel MPI), Slurm's task id (srun without MPI's
 * own), torchrun. */
static const struct {
    const char *rank, *size, *local;
} vars[] = {
    {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK"},
    {"PMIX_RANK", "PMIX_SIZE", "PMIX_LOCAL_RANK"},
    {"PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID"},
    /* the step's tasks, not the allocation's SLURM_NTASKS: a batch script runs once in an allocation of many */
    {"SLURM_PROCID", "SLURM_STEP_NUM_TASKS", "SLURM_LOCALID"},
    {"RANK", "WORLD_SIZE", "LOCAL_RANK"},
};

/* $name as an integer >= 0; -1 when unset or empty, -2 when not a number. */
static long env_int(const char *name)
{
    const char *v = getenv(name);
    if (!v || !*v) return -1;
    char *end;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (*end || errno || x < 0 || x > 1000000000L) return -2;
    return x;
}

bool run_job_detect(run_job *j)
{
    memset(j, 0, sizeof *j);
    j->rank = j->local_rank = -1;
    j->rank_var = "";
    if (gethostname(j->host, sizeof j->host) != 0) snprintf(j->host, sizeof j->host, "unknown");
    j->host[sizeof j->host - 1] = '\0';
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        long rank = env_int(vars[i].rank);
        if (rank == -1) continue;
        long size = env_int(vars[i].size), local = env_int(vars[i].local);
        if (size == -1 && strcmp(vars[i].rank, "RANK") == 0)
            continue; /* a RANK of something else: torchrun sets both */
        if (rank == -2 || size == -2 || (size >= 0 && rank >= size)) {
            fprintf(stderr, "truewatt run: %s='%s' with %s='%s' is not a rank of the job (0 <= rank < size)\n",
                    vars[i].rank, getenv(vars[i].rank), vars[i].size,
                    getenv(vars[i].size) ? getenv(vars[i].size) : "(unset)");
            return false;
        }
        j->rank = (int)rank;
        j->size = size > 0 ? (int)size : 0;
        j->local_rank = local >= 0 ? (int)local : -1;
        j->rank_var = vars[i].rank;
        return true;
    }
    return true;
}

void run_job_path(const char *path, int rank, char *out, size_t cap)
{
    const char *mark = strstr(path, "{rank}");
    if (mark) {
        snprintf(out, cap, "%.*s%d%s", (int)(mark - path), path, rank, mark + strlen("{rank}"));
        return;
    }
    const char *slash = strrchr(path, '/');
    const char *dot = strrchr(slash ? slash + 1 : path, '.');
    if (!dot || dot == (slash ? slash + 1 : path)) /* no extension, or a hidden file's dot */
        snprintf(out, cap, "%s.rank%d", path, rank);
    else
        snprintf(out, cap, "%.*s.rank%d%s", (int)(dot - path), path, rank, dot);
}
