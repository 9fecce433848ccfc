/*
 * cupti_activity.h - CUPTI's activity API in this process: the one place that
 * loads libcupti, subscribes to its activity buffers and turns its records
 * (kernels, memory copies, memsets, with their GPU's UUID) into twi_records.
 * Used by the injection library (inject.c: the records become lines of the
 * events file) and by a session that traces kernels in-process
 * (src/api/kernels.c: per kernel name energies of its regions).
 *
 * libcupti is not linked: it is dlopened at run time and every entry point is
 * looked up and checked; cupti.h gives types and constants only. libcuda is
 * not linked either: the copy the program has loaded is asked, through dlsym,
 * for a device's UUID when CUPTI's device record did not give it.
 *
 * CUPTI has one set of buffer callbacks per process: one client at a time
 * (twi_cupti_start fails while another is started; twi_cupti_stop ends it and
 * a later start re-enables the kinds). Completed buffers are queued without a
 * lock on CUPTI's thread; the client reads them (twi_cupti_drain) where it
 * likes: its own thread, or on_buffer (called on CUPTI's thread after each
 * queued buffer).
 */
#ifndef TW_INJECT_CUPTI_ACTIVITY_H
#define TW_INJECT_CUPTI_ACTIVITY_H

#include <stdbool.h>
#include <stdint.h>

#include "inject/event_csv.h"

typedef struct twi_cupti_client {
    const char *prefix;        /* of the messages printed on stderr ("truewatt-inject: ") */
    bool print;                /* print messages on stderr (else only twi_cupti_error keeps the last) */
    bool verbose;              /* also what was tried and set up */
    bool monotonic;            /* CUPTI's timestamps from CLOCK_MONOTONIC (a timestamp callback) */
    void (*on_buffer)(void *); /* NULL, or called on CUPTI's thread after a buffer was queued */
    void *ctx;
} twi_cupti_client;

/* Loads libcupti (once per process), registers the buffer callbacks (once),
 * calibrates *clock against CLOCK_MONOTONIC (its t0_mono_ns kept) and enables
 * the kernel, memcpy, memset and device records. False when tracing cannot
 * start (why: twi_cupti_error). */
bool twi_cupti_start(const twi_cupti_client *c, twi_clock *clock);
/* Disables the activity kinds, hands over what CUPTI holds (forced flush)
 * and drains nothing: the client drains once more after it. */
void twi_cupti_stop(void);
/* cuptiActivityFlushAll: every buffer whose records are complete (forced:
 * every buffer) comes back through the completion callback; an error is
 * reported once. */
void twi_cupti_flush(bool forced);

/* How a client reads the queued buffers: begin and end around each buffer
 * (a lock, a write), record for each kernel, memcpy and memset (its name and
 * UUID valid during the call only). */
typedef struct twi_cupti_reader {
    void (*begin)(void *ctx);
    void (*record)(void *ctx, const twi_record *r);
    void (*end)(void *ctx);
    void *ctx;
} twi_cupti_reader;

/* The queued buffers, oldest first, read and freed. */
void twi_cupti_drain(const twi_cupti_reader *rd);
/* Whether buffers are queued (true once a client started; false: a buffer
 * is read on CUPTI's thread through on_buffer when given). Set by a client
 * without a reading thread of its own. */
void twi_cupti_queue(bool queue);
/* In a forked child: the queued buffers are the parent's to read. */
void twi_cupti_after_fork(void);
/* The UUIDs of the CUDA devices no device record has named, from libcuda
 * (outside CUPTI's callbacks). */
void twi_cupti_learn_devices(void);
/* A fresh calibration of CUPTI's clock (for the drift at the end). */
bool twi_cupti_calibrate(twi_clock *c, uint64_t *gap_ns);
/* Records read, dropped by CUPTI, and the CUPTI version loaded. */
void twi_cupti_stats(uint64_t *records, uint64_t *dropped, uint32_t *version);
/* The last message (why a start failed); "" when none. */
const char *twi_cupti_error(void);
/* Whether two paths name the same file (false when either does not resolve). */
bool twi_same_file(const char *a, const char *b);
/* The libcupti file loaded ("" before). */
const char *twi_cupti_path(void);
/* libcupti's dlopen handle (NULL before it is loaded): for PM sampling's entry points. */
void *twi_cupti_handle(void);

#endif
