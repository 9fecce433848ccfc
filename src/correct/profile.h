/* A sensor profile (internal): what `truewatt sensor identify` found about
 * each reading of one GPU under one driver, and the levels around it. It is
 * written as JSON (data/profiles/, or wherever the user says) and read back by
 * `sensor show`, `analyze` and `run` to pick and correct the best reading.
 *
 * Every reading is described by one model: the value published at update
 * instant u is the mean true power over the window (u - delay - window,
 * u - delay], except for rc (a first-order lag of time constant C, Burtscher
 * et al. 2014) and counter (cumulative energy; its differences are the mean
 * over the window that ends delay before each update). */
#ifndef TW_CORRECT_PROFILE_H
#define TW_CORRECT_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "truewatt.h"

typedef enum tw_response {
    TW_RESP_UNKNOWN = 0,
    TW_RESP_RC = 1,      /* first-order lag (a charging capacitor), time constant C: Kepler */
    TW_RESP_BOXCAR = 2,  /* mean over a window at least one update period long: nothing missed, smoothed */
    TW_RESP_WINDOW = 3,  /* mean over a window shorter than the update period, held: partial coverage */
    TW_RESP_COUNTER = 4, /* cumulative energy; its differences are window means */
} tw_response;

#define TW_RESP_COUNT 5

const char *tw_response_name(tw_response r); /* "unknown", "rc", "boxcar", "window", "counter" */
tw_status tw_response_parse(const char *s, tw_response *out);

#define TW_PROFILE_MAX_READINGS 16
#define TW_PROFILE_NAME_LEN 64

typedef struct tw_reading_model {
    char name[TW_PROFILE_NAME_LEN]; /* trace column: power_instant_w, energy_j, power_buffer_w, ... */
    tw_response response;
    double period_s;     /* median time between updates */
    double period_p10_s; /* spread of the time between updates */
    double period_p90_s;
    double window_s;      /* averaging window of one update; NaN for rc */
    double delay_s;       /* from the end of the window to the update */
    double capacitance_s; /* rc only; NaN otherwise */
    double coverage;      /* fraction of the time the reading sees: min(1, window / period); 1 for rc */
    double step_w;        /* the calibration kernel's power above active idle, as this reading saw it */
    double rms_w;         /* residual of the chosen model's fit */
    double rms_rc_w;      /* residual of the best rc fit, for comparison */
    double rms_boxcar_w;  /* residual of the best boxcar/window fit, for comparison */
    uint64_t updates;     /* updates the fit used */
} tw_reading_model;

/* A power model of the GPU's activity counters, calibrated once per GPU
 * (scripts/activity-model from scripts/gpu-activity-calib's kernels back to
 * back): the power above the quiet level at full activity of each feature
 * (src/estimate/counters.c's names: sm, tensor, issue, dram, l2) and its
 * standard error. The estimator takes it as the prior on the counters'
 * coefficients where the features a run's samples give are exactly these
 * (docs/methods.md, "A calibrated prior"). */
#define TW_PROFILE_MAX_FEATURES 8
#define TW_PROFILE_MAX_ACTIVITY 4
typedef struct tw_activity_model {
    size_t nf;
    char feature[TW_PROFILE_MAX_FEATURES][16];
    double power_w[TW_PROFILE_MAX_FEATURES]; /* >= 0 */
    double sd_w[TW_PROFILE_MAX_FEATURES];    /* > 0 */
    double residual_w;                       /* the calibration's residual, rms (NaN: not given) */
    /* the reference clock of its per-cycle features (optional "clock_mhz"; NaN: none): each
     * sample's sm, tensor, issue and l2 times its GPC clock over this (estimate/counters.h) */
    double clock_mhz;
    char source[160]; /* where it was calibrated (results folder, date) */
} tw_activity_model;

/* The model of exactly the features `names` (any order; NULL: none): their
 * coefficients' order is the caller's, in *order (indices into m's). */
const tw_activity_model *tw_profile_activity_for(const tw_activity_model *models, size_t n, const char *const *names,
                                                 size_t nf, size_t *order);

typedef struct tw_profile {
    char gpu[128];        /* device name as the driver gives it */
    char driver[64];      /* driver version */
    char backend[32];     /* where the readings came from: nvml, sim, replay */
    char created[32];     /* ISO 8601 UTC */
    char command[256];    /* the command that made it */
    double idle_w;        /* before a CUDA context exists; NaN when not measured */
    double active_idle_w; /* context alive, no kernel running */
    double step_w;        /* the calibration kernel's power above active idle */
    /* the time constant of the power that lingers after a kernel ends
     * (docs/methods.md, "Lingering power"; optional "linger_s" in the file):
     * NaN where none was measured, and the estimator then has no linger term */
    double linger_s;
    size_t n;
    tw_reading_model r[TW_PROFILE_MAX_READINGS];
    /* optional "activity_models" in the file: calibrated counters' models, one per feature set */
    size_t n_activity;
    tw_activity_model activity[TW_PROFILE_MAX_ACTIVITY];
} tw_profile;

/* Empty profile: strings "", levels NaN, no readings. */
void tw_profile_init(tw_profile *p);
/* A reading model with every number NaN (counts 0) and response unknown. */
void tw_reading_model_init(tw_reading_model *m, const char *name);
/* The model of reading `name`, NULL when the profile has none. */
const tw_reading_model *tw_profile_find(const tw_profile *p, const char *name);
/* Appends (or replaces, by name) a reading model; TW_EINVAL when full. */
tw_status tw_profile_set(tw_profile *p, const tw_reading_model *m);

/* Ranking for energy measurement: higher is better. Full coverage (to one
 * decimal) beats partial coverage; then the smaller expected noise of an
 * energy estimate wins: the fit's residual, times W / P for a deconvolved
 * boxcar, times sqrt(resolution) (resolution: the period, or the window of a
 * window reading when longer); then the shorter resolution. Unknown
 * responses rank lowest (-1). */
double tw_reading_model_score(const tw_reading_model *m);
/* Whether the reading's model explains it: the fit's residual is at most
 * TW_PROFILE_TRUST_REL of the kernel step it saw (true when either is unknown). */
#define TW_PROFILE_TRUST_REL 0.02
bool tw_reading_model_trusted(const tw_reading_model *m);
/* The best reading whose name satisfies `usable` (NULL: any), or NULL: a
 * trusted model (tw_reading_model_trusted) beats an untrusted one, since a
 * model that explains its reading poorly corrects it poorly; then the score
 * decides (ties: the first). An unknown response is never picked. */
const tw_reading_model *tw_profile_best(const tw_profile *p, bool (*usable)(const char *name, void *ctx), void *ctx);

/* JSON (schema "truewatt-sensor-profile", version 1): NaN written as null. */
tw_status tw_profile_write_json(const tw_profile *p, FILE *f);
/* The profile as `truewatt sensor show` prints it, titled by `path`
 * (profile_show.c; tw_profile_show loads and prints a file). */
tw_status tw_profile_print(FILE *out, const char *path, const tw_profile *p);
tw_status tw_profile_save(const tw_profile *p, const char *path);
/* Reads a profile written by tw_profile_save. Malformed JSON, a wrong schema,
 * an unknown response name or a missing required key: TW_EPARSE naming the
 * file and what is wrong. Unknown keys are ignored (forward compatible). */
tw_status tw_profile_load(const char *path, tw_profile *out);
/* The same from the text of such a file; `origin` names it in messages. */
tw_status tw_profile_parse(const char *text, const char *origin, tw_profile *out);

/* "NVIDIA H100 80GB HBM3" + "580.159.04" -> "nvidia-h100-80gb-hbm3_580.159.04.json"
 * (lower case, runs of anything but [a-z0-9.] become one '-'). */
void tw_profile_file_name(const char *gpu, const char *driver, char *out, size_t cap);
/* Looks in `dir` for the profile of gpu + driver; when there is none, for
 * one of the same GPU with another driver (then *exact = false). TW_ENOTFOUND
 * when neither exists. `path_out` receives the file used. */
tw_status tw_profile_lookup(const char *dir, const char *gpu, const char *driver, tw_profile *out, char *path_out,
                            size_t path_cap, bool *exact);

#endif
