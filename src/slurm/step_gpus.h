/* step_gpus - which GPUs a Slurm job step was given, from its environment.
 *
 * Slurm's gres/gpu plugin tells a step its GPUs three ways: SLURM_STEP_GPUS
 * (steps started by srun) and SLURM_JOB_GPUS (the batch step) hold each GPU's
 * position among the node's GPUs in gres.conf (gres_conf.h), which stays the
 * node's own even where task/cgroup renumbers CUDA_VISIBLE_DEVICES to 0..n-1 for
 * each task; CUDA_VISIBLE_DEVICES may instead hold UUIDs (a site's prolog or
 * the user may set them), which name a GPU whatever the numbering. So: UUIDs
 * from CUDA_VISIBLE_DEVICES first, then SLURM_STEP_GPUS, then SLURM_JOB_GPUS,
 * and a numeric CUDA_VISIBLE_DEVICES only when neither is set. Slurm's numbers
 * become NVML indices through gres.conf (step_gpus_map); a numeric
 * CUDA_VISIBLE_DEVICES is taken as NVML indices (docs/slurm.md). */
#ifndef TW_SLURM_STEP_GPUS_H
#define TW_SLURM_STEP_GPUS_H

#include <stddef.h>

#include "slurm/gres_conf.h"

#define STEP_GPUS_MAX 64
#define STEP_GPU_ID_LEN 96

typedef struct step_gpus {
    size_t n;
    char id[STEP_GPUS_MAX][STEP_GPU_ID_LEN]; /* NVML index ("3") or UUID ("GPU-...") */
    const char *source;                      /* the variable they came from; "" when none */
    char how[512];                           /* how Slurm's numbers were mapped (step_gpus_map); "" when not */
} step_gpus;

/* The step's GPUs from the values of SLURM_STEP_GPUS, SLURM_JOB_GPUS and
 * CUDA_VISIBLE_DEVICES (each NULL when unset). No GPU is not an error (n = 0).
 * Returns 0, or -1 with the problem in err (the variable and its value). */
int step_gpus_parse(const char *step_gpus_env, const char *job_gpus_env, const char *cuda_visible, step_gpus *out,
                    char *err, size_t err_len);

/* Slurm's numbers (when the GPUs came from SLURM_STEP_GPUS or SLURM_JOB_GPUS)
 * to NVML indices: number k is the node's k-th GPU in gres.conf
 * (gres->devnum[k], its /dev/nvidiaN), the NVML GPU whose minor number is N
 * (minor[i]: NVML index i's; nminor of them); with gres->autodetect, NVML
 * index k. Other sources are left as they are. Returns 0 (g->how says what
 * was done), or -1 naming the number without a GPU in err. */
int step_gpus_map(step_gpus *g, const gres_gpus *gres, const unsigned *minor, size_t nminor, char *err, size_t err_len);

#endif
