/* The sensor backend interface: one const vtable per backend, listed in
 * backends.c. A backend is a source of rows of readings on one timeline. */
#ifndef TW_SENSOR_BACKEND_H
#define TW_SENSOR_BACKEND_H

#include "truewatt.h"

#define TW_BACKEND_ABI 1

typedef struct tw_backend {
    unsigned abi; /* TW_BACKEND_ABI */
    const char *name;
    const char *description;
    /* true when usable here; else writes why into why[why_len] */
    bool (*available)(char *why, size_t why_len);
    /* opens a source; on failure returns a status and sets tw_last_error */
    tw_status (*open)(const tw_sensor_config *cfg, void **state);
    size_t (*nreadings)(const void *state);
    const tw_reading_info *(*reading)(const void *state, size_t i);
    tw_status (*next)(void *state, tw_row *row, bool *eof);
    tw_status (*rewind)(void *state); /* NULL when the source cannot rewind */
    void (*close)(void *state);
    /* optional: what open() found worth telling (unsupported readings), or NULL */
    const char *(*notes)(const void *state);
    /* optional: the devices this backend sees (NULL: none to choose from) */
    tw_status (*devices)(const tw_sensor_config *cfg, tw_device_info *out, size_t cap, size_t *n);
    /* optional: rows next() can give without reading the device again (NULL: 0) */
    size_t (*pending)(const void *state);
} tw_backend;

extern const tw_backend tw_backend_sim;
extern const tw_backend tw_backend_replay;
extern const tw_backend tw_backend_nvml;

#endif
