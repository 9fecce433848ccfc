/* GPU power under core and memory clock scaling (internal), after Mei et al.
 * (TPDS 2022; shared/docs/dvfs-model.md section 5): a static part, a memory
 * part linear in the memory clock and a core part in V(fc)^2 * fc with the
 * normalised voltage curve V(f) = 2 (f - 0.5)^2 + 0.5. Clocks are normalised
 * by a reference pair (f* in the paper; here the default, highest pair).
 * The coefficients are one GPU's, fitted by least squares over many kernels;
 * what is kernel-specific comes from the kernel's profile at the reference
 * pair, so that the model predicts pairs where the kernel was not measured. */
#ifndef TW_DVFS_POWER_MODEL_H
#define TW_DVFS_POWER_MODEL_H

#include <stdbool.h>
#include <stddef.h>

#include "core/lsq.h"
#include "truewatt.h"

typedef enum tw_dvfs_power_kind {
    /* P = P_ref * g(fc, fm) / g(fc*, fm*), g = p0 + pm fm' + pc V(fc')^2 fc': the GPU's shape, scaled by the
     * kernel's power measured at the reference pair (one power reading per kernel) */
    TW_DVFS_POWER_SCALED = 0,
    /* P = p0 + fm' (b0 + b1 dram_gbs) + V(fc')^2 fc' (c0 + c1 ipc): no power reading of the kernel, only its
     * counters at the reference pair */
    TW_DVFS_POWER_COUNTERS,
} tw_dvfs_power_kind;

const char *tw_dvfs_power_kind_name(tw_dvfs_power_kind k); /* "scaled", "counters" */

/* What the model knows of one kernel: its profile at the reference pair. */
typedef struct tw_dvfs_kernel_ref {
    double ipc;      /* warp instructions per core cycle, whole GPU */
    double dram_gbs; /* DRAM read + write traffic, GB/s */
    double power_w;  /* measured (only the scaled model reads it) */
} tw_dvfs_kernel_ref;

/* One measured point for the fit. */
typedef struct tw_dvfs_power_sample {
    const tw_dvfs_kernel_ref *ref;
    double core_mhz, mem_mhz, power_w;
} tw_dvfs_power_sample;

typedef struct tw_dvfs_power_model {
    tw_dvfs_power_kind kind;
    double core_ref_mhz, mem_ref_mhz; /* the reference pair that normalises the clocks */
    bool mem_varies;                  /* false: one memory clock, whose terms fold into the others */
    size_t nterms;
    double beta[TW_LSQ_MAX_P];
} tw_dvfs_power_model;

/* Mei et al.'s normalised voltage at the normalised clock f. */
double tw_dvfs_voltage_norm(double f);

/* Fits the model to n samples. TW_EINVAL when the samples cannot determine it
 * (fewer than the terms, a single core clock, a reference power or counter
 * that is not positive and finite). */
tw_status tw_dvfs_power_fit(tw_dvfs_power_kind kind, double core_ref_mhz, double mem_ref_mhz,
                            const tw_dvfs_power_sample *s, size_t n, tw_dvfs_power_model *m);

/* The predicted power (W) of kernel k at the pair. */
double tw_dvfs_power_predict(const tw_dvfs_power_model *m, const tw_dvfs_kernel_ref *k, double core_mhz,
                             double mem_mhz);

#endif
