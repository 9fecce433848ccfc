/*
 * pm_device.h - CUPTI's PM sampling on one device: the call sequence that
 * apps/pmprobe/pmprobe.c measured on the H100 (results/h100/pm-probe*), in
 * one place for the injection library (pm_sampling.h: its thread, devices
 * and records) and the probe (its diagnostics and report):
 *   twi_pm_load                libcupti's PM sampling entry points (looked up, never linked)
 *   twi_pm_init_profiler       cuptiProfilerInitialize, once per process
 *   twi_pm_device_prepare      chip name, support, counter availability
 *   twi_pm_device_choose       the wanted metrics, greedily into one pass
 *   twi_pm_device_enable       enable, config (time trigger, else SYSCLK), counter data image
 *   twi_pm_device_start        start
 *   twi_pm_device_decode       hardware buffer -> image -> each sample's values, image reset
 *   twi_pm_device_stop         decode (0.25 s at most), stop, decode what is left
 *   twi_pm_device_pause        stop, disable (the GPU's extra power ends only there)
 *   twi_pm_device_reset        after an overflow: stop, disable, nothing decoded
 *   twi_pm_device_resume       enable and start again
 *   twi_pm_device_free         disable, free
 * Each step that fails returns false with CUPTI's message in `why`. No step
 * prints, allocates per sample or takes a lock; the caller serialises calls
 * on one device. The device's context must be current where the caller's
 * CUPTI wants it (the injection library pushes it on its thread).
 *
 * C11 with CUDA 13's cupti_profiler_host.h: its build needs src/inject/cshim
 * first on the include path.
 */
#ifndef TW_INJECT_PM_DEVICE_H
#define TW_INJECT_PM_DEVICE_H

#include <cupti.h> /* types and constants only: nothing is linked */
#include <cupti_pmsampling.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_target.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TWI_PM_MAX_METRICS 16

/* What the metric choice says of each candidate (the probe prints it). */
typedef void (*twi_pm_verdict_fn)(void *ctx, const char *metric, const char *verdict);
/* One sample: its span on CUPTI's clock and its values in the order of d->metric. */
typedef void (*twi_pm_sample_fn)(void *ctx, uint64_t start_ns, uint64_t end_ns, const double *v, size_t n);

typedef struct twi_pm_options {
    uint64_t interval_ns;      /* the sampling interval (ns with the time trigger) */
    size_t hwbuf_bytes;        /* the device's hardware buffer */
    uint32_t image_samples;    /* the counter data image's capacity (one decode's samples at most) */
    const char *const *wanted; /* candidate metrics, most important first */
    size_t n_wanted;
    bool try_alone;            /* test a candidate alone before with the others (for the verdicts) */
    twi_pm_verdict_fn verdict; /* NULL: none */
    void *ctx;
} twi_pm_options;

typedef struct twi_pm_device {
    int index;    /* the CUDA device ordinal (CUPTI's deviceIndex) */
    CUdevice dev; /* its handle */
    const char *chip;
    CUpti_Profiler_DeviceSupported_Params support; /* what cuptiProfilerDeviceSupported said */
    uint8_t *avail;                                /* counter availability image */
    size_t avail_size;
    CUpti_Profiler_Host_Object *host; /* holds the chosen metrics: evaluation needs it */
    uint8_t *config;
    size_t config_size;
    const char *metric[TWI_PM_MAX_METRICS]; /* chosen, in the order of the values */
    size_t n_metric;
    char refused[1024]; /* "x,y": the candidates left out */
    CUpti_PmSampling_Object *obj;
    const char *trigger;    /* "GPU_TIME_INTERVAL (ns)" or the SYSCLK fallback */
    uint8_t *image, *blank; /* the counter data image; its initialised state, to reset it */
    size_t image_size;
    bool started, stopped;
    uint64_t interval_ns; /* the sampling interval (twi_pm_options') */
    uint64_t last_end_ns; /* the end of the latest sample decoded (CUPTI's clock) */
    /* counts */
    uint64_t samples, decodes, decode_errors, eval_errors, overflows, full_stops;
    size_t incomplete_max;   /* most samples populated but not complete at a decode */
    double decode_s, eval_s; /* wall time in cuptiPmSamplingDecodeData, and in sample info + evaluation */
    int last_error;          /* CUPTI's result of the last failed decode */
    /* why the first sample not evaluated was not: "no sample info", "evaluation failed", "no span"
     * or "METRIC = VALUE (sm__cycles_active.avg = X)", for the end's line */
    char unusable[200];
    uint64_t no_span, not_finite; /* samples left out for each reason (eval_errors counts them all) */
    bool verbose;                 /* each of the first samples left out on stderr, with its neighbours' times */
} twi_pm_device;

/* The entry points from `handle` (dlopen's; NULL: the process's global
 * symbols, a program linked with libcupti). False with the first one missing
 * (a CUPTI before 12.6 has no PM sampling). */
bool twi_pm_load(void *handle, char *why, size_t cap);
/* CUPTI's text for a result. */
const char *twi_pm_result_text(CUptiResult r);
/* cuptiGetTimestamp (0 on failure). */
uint64_t twi_pm_now(void);
bool twi_pm_init_profiler(char *why, size_t cap);

/* d->index and d->dev set by the caller (the rest zero). */
bool twi_pm_device_prepare(twi_pm_device *d, char *why, size_t cap);
bool twi_pm_device_choose(twi_pm_device *d, const twi_pm_options *o, char *why, size_t cap);
bool twi_pm_device_enable(twi_pm_device *d, const twi_pm_options *o, char *why, size_t cap);
bool twi_pm_device_start(twi_pm_device *d, char *why, size_t cap);
/* One decode: each completed sample to fn. Returns the decode stop reason
 * (CUPTI_PM_SAMPLING_DECODE_STOP_REASON_*), or -1 when decoding failed
 * (d->last_error; an out-of-memory result counts as an overflow). */
int twi_pm_device_decode(twi_pm_device *d, twi_pm_sample_fn fn, void *ctx);
/* What the buffer holds, until its latest sample is recent (for at most
 * 0.25 s), stop, then the rest until CUPTI has no more. */
void twi_pm_device_stop(twi_pm_device *d, twi_pm_sample_fn fn, void *ctx);
/* Stops (twi_pm_device_stop) and disables sampling, keeping the chosen
 * metrics and configuration. On the H100 the GPU draws 30-40 W more while
 * sampling is enabled, stopped or not; disabled, it does not
 * (results/h100/pm-cycle): sampling in windows pauses this way. */
void twi_pm_device_pause(twi_pm_device *d, twi_pm_sample_fn fn, void *ctx);
/* After an overflow: stopped and disabled without decoding (a decode
 * answers CUPTI_ERROR_OUT_OF_MEMORY until then), like a paused device. */
void twi_pm_device_reset(twi_pm_device *d);
/* Enables and starts a paused device again (~150 ms on the H100). */
bool twi_pm_device_resume(twi_pm_device *d, const twi_pm_options *o, char *why, size_t cap);
/* Disables sampling and frees what the device holds (any state). */
void twi_pm_device_free(twi_pm_device *d);

/* A host object for the device's chip (for metric lists); NULL on failure. */
CUpti_Profiler_Host_Object *twi_pm_host_new(const twi_pm_device *d);
void twi_pm_host_free(CUpti_Profiler_Host_Object *h);

#endif
