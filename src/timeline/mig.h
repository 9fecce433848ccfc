/* MIG instances (internal): a GPU in MIG mode is split into instances, each
 * with its own UUID ("MIG-..."), SMs and memory. NVML reads power per GPU,
 * never per instance, so truewatt samples the parent GPU, charges an
 * instance's kernels to it under the instance's label ("MIG 0: gemm"), and
 * any split of the GPU's energy between instances is an estimate
 * (docs/mpi.md#mig). Read only: nothing here changes a MIG setting. */
#ifndef TW_TIMELINE_MIG_H
#define TW_TIMELINE_MIG_H

#include <stdbool.h>
#include <stddef.h>

#include "truewatt.h"

typedef struct tw_mig_instance {
    char uuid[96];        /* "MIG-..." as NVML writes it */
    char parent_uuid[96]; /* its GPU's "GPU-..." */
    unsigned parent_index;
    unsigned position;        /* its label's number on its GPU: "MIG 0", "MIG 1", ... in NVML's order */
    unsigned multiprocessors; /* SMs */
    unsigned slices;          /* GPU instance slices (of 7 on an A100 or H100) */
    unsigned long long memory_mib;
} tw_mig_instance;

/* A copy of `in` where each event on an instance of mig[] has its GPU's UUID
 * and its name prefixed with the instance's label ("MIG 1: gemm"); other
 * events as they are. *out: a new set (tw_events_free). */
tw_status tw_mig_remap(const tw_events *in, const tw_mig_instance *mig, size_t n, tw_events **out);

/* The instance of mig[0..n) whose UUID is `uuid` (a "MIG-..."), else NULL. */
const tw_mig_instance *tw_mig_instance_of(const char *uuid, const tw_mig_instance *mig, size_t n);

/* The name of an event on instance m: "MIG 1: gemm". */
void tw_mig_label(const tw_mig_instance *m, const char *name, char *out, size_t cap);

/* "MIG 1: gemm" -> true, *position 1, *rest "gemm"; else false. */
bool tw_mig_name_split(const char *name, unsigned *position, const char **rest);

#endif
