/* step_gpus - which GPUs a Slurm job step was given, from its environment.
 *
 * Slurm's gres/gpu plugin tells a step its GPUs three ways: SLURM_STEP_GPUS
 * (steps started by srun) and SLURM_JOB_GPUS (the batch step) hold the
 * numbers of the GPUs' device files (/dev/nvidiaN), which stay the node's own
 * numbers even where task/cgroup renumbers CUDA_VISIBLE_DEVICES to 0..n-1 for
 * each task; CUDA_VISIBLE_DEVICES may instead hold UUIDs (a site's prolog or
 * the user may set them), which name a GPU whatever the numbering. So: UUIDs
 * from CUDA_VISIBLE_DEVICES first, then SLURM_STEP_GPUS, then SLURM_JOB_GPUS,
 * and a numeric CUDA_VISIBLE_DEVICES only when neither is set. The numbers are
 * taken as NVML indices: a node whose /dev/nvidiaN numbers differ from NVML's
 * order must list UUIDs (docs/slurm.md). */
#ifndef TW_SLURM_STEP_GPUS_H
#define TW_SLURM_STEP_GPUS_H

#include <stddef.h>

#define STEP_GPUS_MAX 64
#define STEP_GPU_ID_LEN 96

typedef struct step_gpus {
    size_t n;
    char id[STEP_GPUS_MAX][STEP_GPU_ID_LEN]; /* NVML index ("3") or UUID ("GPU-...") */
    const char *source;                      /* the variable they came from; "" when none */
} step_gpus;

/* The step's GPUs from the values of SLURM_STEP_GPUS, SLURM_JOB_GPUS and
 * CUDA_VISIBLE_DEVICES (each NULL when unset). No GPU is not an error (n = 0).
 * Returns 0, or -1 with the problem in err (the variable and its value). */
int step_gpus_parse(const char *step_gpus_env, const char *job_gpus_env, const char *cuda_visible, step_gpus *out,
                    char *err, size_t err_len);

#endif
