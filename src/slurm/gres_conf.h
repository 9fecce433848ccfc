/* gres_conf - the node's GPUs as Slurm numbers them, from gres.conf.
 *
 * Slurm's SLURM_STEP_GPUS and SLURM_JOB_GPUS hold the position of each GPU
 * among the node's GPU devices as slurmd lists them: gres.conf's Name=gpu
 * lines for this node in order, each File= expanded in order ("/dev/nvidia[0-3]").
 * Checked on Debian's Slurm 22.05: gres.conf listing /dev/nvidia7 then
 * /dev/nvidia3 gives the first job SLURM_JOB_GPUS=0 (nvidia7), the next 1.
 * The GPU behind position k is the device file's number N (/dev/nvidiaN, the
 * driver's minor number), which need not be NVML's index (NVML orders by PCI
 * bus; the minor numbers follow the driver's probe order, and gres.conf
 * lists files in whatever order its author chose). With AutoDetect=nvml and
 * no File= lines, slurmd lists the GPUs in NVML's order: position k is NVML
 * index k. */
#ifndef TW_SLURM_GRES_CONF_H
#define TW_SLURM_GRES_CONF_H

#include <stdbool.h>
#include <stddef.h>

#define GRES_MAX_GPUS 64

typedef struct gres_gpus {
    size_t n;
    unsigned devnum[GRES_MAX_GPUS]; /* in Slurm's order: N of each GPU's File=/dev/nvidiaN */
    bool autodetect;                /* AutoDetect=nvml for this node and no File=: NVML's order */
} gres_gpus;

/* The GPUs of node `node` in gres.conf's text (path: for messages). Returns
 * 0, or -1 with "PATH line L: problem" in err. */
int gres_conf_parse(const char *text, const char *path, const char *node, gres_gpus *out, char *err, size_t err_len);
/* The same from the file. */
int gres_conf_read(const char *path, const char *node, gres_gpus *out, char *err, size_t err_len);

/* Calls fn for each name of a Slurm host or file list ("tw[1-3,7],gpu01",
 * "/dev/nvidia[0-3]"), in order; zero-padded ranges keep their width.
 * Returns 0, or -1 when the list is malformed (or fn returns nonzero). */
int gres_expand(const char *list, int (*fn)(void *user, const char *name), void *user);

/* The k-th name (from 0) of such a list into out; -1 when it has fewer or is malformed. */
int gres_nth_name(const char *list, size_t k, char *out, size_t cap);

#endif
