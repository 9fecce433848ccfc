/* The sampling plan of one GPU (internal): which readings the sampler reads
 * and how often, chosen from the GPU's sensor profile, else from the safest
 * default for its generation.
 *
 * What the estimator uses sets the plan: the driver's sample buffer for time
 * resolution (drained often enough that it never wraps), the energy counter
 * for the total (needed only every ~0.5-1 s, and costly: ~4-12 ms of CPU a
 * read on an H100, so it has its own thread and a CPU budget), and a power
 * reading for display. A reading the profile shows to repeat another one
 * (field 185 == power usage on an H100) or could not model is not read. The
 * target is at most 2 % of one core per GPU for all the sampler's threads. */
#ifndef TW_SAMPLE_PLAN_H
#define TW_SAMPLE_PLAN_H

#include <stdbool.h>
#include <stddef.h>

#include "correct/profile.h"

/* NVML's architecture numbers (nvmlDeviceArchitecture_t). */
#define TW_ARCH_UNKNOWN 0u
#define TW_ARCH_KEPLER 2u
#define TW_ARCH_MAXWELL 3u
#define TW_ARCH_PASCAL 4u
#define TW_ARCH_VOLTA 5u
#define TW_ARCH_TURING 6u
#define TW_ARCH_AMPERE 7u
#define TW_ARCH_ADA 8u
#define TW_ARCH_HOPPER 9u
#define TW_ARCH_BLACKWELL 10u

/* The plan's numbers (documented in docs/usage.md). */
#define TW_PLAN_COUNTER_PERIOD_S 0.5     /* the estimator needs the counter this often ... */
#define TW_PLAN_COUNTER_MAX_PERIOD_S 1.0 /* ... and at least this often */
#define TW_PLAN_COUNTER_CPU_BUDGET 0.01  /* the counter thread's share of one core, stretching to the above */
#define TW_PLAN_BUFFER_SAMPLES 120.0     /* samples the driver keeps (H100, driver 580: ~2.4 s) */
#define TW_PLAN_BUFFER_SAFETY 4.0        /* drain when a quarter of the buffer has filled */
#define TW_PLAN_BUFFER_MAX_DRAIN_S 0.5   /* and at least this often, so that rows reach the trace soon */
#define TW_PLAN_MIN_PERIOD_S 0.001       /* no reading is polled faster */
#define TW_PLAN_MAX_POLL_S 0.5           /* nor slower */
#define TW_PLAN_LEGACY_FAST_S 0.005      /* pre-Ampere without a profile: power usage polled this often */
#define TW_PLAN_LEGACY_SLOW_S 0.1        /* ... the slow readings this often, stretched ... */
#define TW_PLAN_LEGACY_SLOW_BUDGET 0.005 /* ... while they cost more than this share of a core */
#define TW_PLAN_DEFAULT_FAST_S 0.05      /* Ampere+ without a profile: power readings (display) */
#define TW_PLAN_DEFAULT_DRAIN_S 0.25     /* ... the buffer (safe for samples >= 8.3 ms apart) */

typedef struct tw_plan_reading {
    char name[TW_PROFILE_NAME_LEN];
    bool read;
    double period_s; /* how often it is read (drained, for the buffer); NaN when not read */
    char why[128];   /* its role, or why it is not read */
} tw_plan_reading;

typedef struct tw_sample_plan {
    double fast_period_s;     /* the fast thread's period: polled power readings */
    double buffer_poll_s;     /* the sample buffer's drain period (at the fast thread's next tick) */
    double slow_period_s;     /* the slow thread's period: energy counter, clocks, ... */
    double slow_max_period_s; /* stretched up to this while reads cost more than slow_cpu_budget */
    double slow_cpu_budget;   /* 0: a fixed period */
    char skip[256];           /* readings not read, comma-separated (the backend leaves them out) */
    size_t n;                 /* the readings the plan decided on (those the profile knows) */
    tw_plan_reading r[TW_PROFILE_MAX_READINGS];
    unsigned arch;     /* the generation it was made for (TW_ARCH_*), when no profile */
    bool from_profile; /* made from a profile, else a default */
    char summary[512]; /* one line: where it came from and what it reads how often */
} tw_sample_plan;

/* The generation of a GPU: NVML's architecture when known (not 0, not
 * 0xffffffff), else guessed from its name ("NVIDIA H200" -> Hopper);
 * TW_ARCH_UNKNOWN when neither tells. */
unsigned tw_plan_arch(const char *gpu_name, unsigned nvml_arch);
const char *tw_plan_arch_name(unsigned arch); /* "Hopper", ..., "unknown" */

/* The plan from a profile (its readings' models). `source` names it for the summary. */
void tw_sample_plan_from_profile(const tw_profile *p, const char *source, tw_sample_plan *out);
/* The plan without a profile: Ampere and later (sample buffer + energy
 * counter, as on the H100/H200), else power usage polled fast. */
void tw_sample_plan_default(unsigned arch, tw_sample_plan *out);
/* The user's periods (> 0) replace the plan's: the fast one sets the fast
 * thread's period, the slow one a fixed slow period (no stretching). */
void tw_sample_plan_override(tw_sample_plan *pl, double fast_period_s, double slow_period_s);
/* The plan's entry for a reading, NULL when the plan says nothing of it
 * (then it is read at its thread's period). */
const tw_plan_reading *tw_sample_plan_find(const tw_sample_plan *pl, const char *name);

#endif
