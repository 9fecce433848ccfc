/*
 * event_csv.h - the parts of the CUPTI injection library that need no GPU:
 * one activity record to one CSV line of the events file, device UUIDs as
 * NVML writes them, and the conversion of CUPTI timestamps to the trace
 * timeline (NVTX range pairing: nvtx_ranges.h). No CUPTI call and no CUPTI header here,
 * so all of it is unit-tested on machines without CUDA (test_inject_csv).
 *
 * inject.c copies the fields it needs out of CUPTI's records into a
 * twi_record; the numeric memcpy kinds below mirror CUPTI's
 * CUpti_ActivityMemcpyKind (inject.c checks that with static asserts).
 */
#ifndef TW_INJECT_EVENT_CSV_H
#define TW_INJECT_EVENT_CSV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "inject/demangle.h"

/* The events file's header line (with its '\n'). */
#define TWI_CSV_HEADER                                                                                                 \
    "name,start_s,end_s,device,stream,kind,grid_x,grid_y,grid_z,block_x,block_y,block_z,correlation_id,device_uuid,"   \
    "mangled,domain,tid,depth\n"

/* TWI_PM_*: PM sampling's records (pm_sampling.h): their text in the name column. */
typedef enum twi_kind {
    TWI_KERNEL = 0,
    TWI_MEMCPY = 1,
    TWI_MEMSET = 2,
    TWI_NVTX = 3,
    TWI_PM_METRICS = 4,
    TWI_PM_SAMPLE = 5,
    TWI_PM_OFF = 6,
    TWI_PM_END = 7,
    TWI_PM_WINDOW = 8
} twi_kind;

/* CUPTI's CUpti_ActivityMemcpyKind values. */
enum {
    TWI_MEMCPY_UNKNOWN = 0,
    TWI_MEMCPY_HTOD = 1,
    TWI_MEMCPY_DTOH = 2,
    TWI_MEMCPY_HTOA = 3,
    TWI_MEMCPY_ATOH = 4,
    TWI_MEMCPY_ATOA = 5,
    TWI_MEMCPY_ATOD = 6,
    TWI_MEMCPY_DTOA = 7,
    TWI_MEMCPY_DTOD = 8,
    TWI_MEMCPY_HTOH = 9,
    TWI_MEMCPY_PTOP = 10
};

/* One span of GPU (or NVTX) activity, on CUPTI's clock (or CLOCK_MONOTONIC: mono). */
typedef struct twi_record {
    twi_kind kind;
    const char *name;        /* kernel (mangled or not) or NVTX range name; unused for memcpy/memset */
    uint64_t start_ns;       /* CUPTI timestamps, or CLOCK_MONOTONIC ns when mono */
    uint64_t end_ns;         /* CUPTI timestamps, or CLOCK_MONOTONIC ns when mono */
    bool mono;               /* the times are CLOCK_MONOTONIC (NVTX ranges, timed here) */
    int32_t device;          /* CUDA device ordinal in the process; -1 when none (NVTX) */
    const char *device_uuid; /* NVML's form of the device's UUID; NULL or "" when unknown */
    int64_t stream;          /* -1 when none (NVTX) */
    int32_t grid[3];         /* kernels only */
    int32_t block[3];        /* kernels only */
    int64_t correlation_id;  /* -1 when none (NVTX) */
    uint32_t copy_kind;      /* memcpy: TWI_MEMCPY_* */
    uint64_t bytes;          /* memcpy, memset */
    const char *domain;      /* NVTX: the domain's name ("" = default) */
    int64_t tid;             /* NVTX: the thread; 0 when none */
    int32_t depth;           /* NVTX push/pop: nesting depth, 1 = outermost; 0 when none */
} twi_record;

/* "HtoD", "DtoH", ...; "unknown" for values out of range. */
const char *twi_memcpy_kind_name(uint32_t copy_kind);
/* "kernel", "memcpy", "memset", "nvtx", "pm_metrics", "pm_sample", "pm_off", "pm_end", "pm_window". */
const char *twi_kind_name(twi_kind kind);

/* ---------------------------------------------------------------- clock */

/* Maps CUPTI timestamps to the trace timeline: seconds since t0 on
 * CLOCK_MONOTONIC. One reference pair read at (nearly) the same instant on
 * both clocks fixes the offset. */
typedef struct twi_clock {
    uint64_t cupti_ref_ns; /* CUPTI clock at the reference instant */
    uint64_t mono_ref_ns;  /* CLOCK_MONOTONIC at the same instant */
    uint64_t t0_mono_ns;   /* the timeline's origin on CLOCK_MONOTONIC */
} twi_clock;

/* A clock reader for the calibration: stores ns, returns false on failure. */
typedef bool (*twi_clock_read_fn)(void *ctx, uint64_t *ns);

/* Reads monotonic, CUPTI, monotonic `rounds` times and keeps the round with
 * the smallest monotonic gap; the reference is the CUPTI reading against the
 * midpoint of the two monotonic ones. Sets *gap_ns to that round's gap.
 * Returns false when no round could be read. c->t0_mono_ns is left as is. */
bool twi_clock_calibrate(twi_clock *c, twi_clock_read_fn read_cupti, twi_clock_read_fn read_mono, void *ctx, int rounds,
                         uint64_t *gap_ns);
/* Nanoseconds of the CUPTI timestamp since t0 (negative before t0). */
int64_t twi_clock_rel_ns(const twi_clock *c, uint64_t cupti_ns);
/* Signed difference of two calibrations' offsets (b minus a), in ns: how far
 * the CUPTI clock drifted against CLOCK_MONOTONIC between them. */
int64_t twi_clock_drift_ns(const twi_clock *a, const twi_clock *b);

/* Parses a whole decimal unsigned 64-bit number (blanks around allowed).
 * Returns false for anything else (empty, sign, junk, overflow). */
bool twi_parse_u64(const char *s, uint64_t *out);

/* ---------------------------------------------------------------- text buffer */

/* A growable byte buffer that holds whole CSV lines. */
typedef struct twi_buf {
    char *p;
    size_t len;
    size_t cap;
    bool oom;          /* an append failed for lack of memory (the line was dropped) */
    uint64_t bad_span; /* records skipped because they end before they start (or CUPTI timed one end only) */
} twi_buf;

void twi_buf_free(twi_buf *b);

/* Appends `n` written as seconds with 9 decimals ("-0.000000001", "12.500000000"),
 * independent of the locale. Returns false when out of memory. */
bool twi_buf_put_seconds(twi_buf *b, int64_t ns);
/* Appends one CSV field: line breaks and other control characters become
 * spaces; quoted (with '"' doubled) when it holds ',' or '"', starts with '#',
 * has blanks at either end or is empty. */
bool twi_buf_put_field(twi_buf *b, const char *s);

/* Appends the record's line (with '\n'). Kernel names are demangled through
 * `dm` (may be NULL: names as given); when that changes the name, the name
 * as given goes to the column mangled. Records with both timestamps 0
 * (CUPTI could not time them) are skipped: returns true, appends nothing.
 * So are records with one timestamp 0 or that end before they start on the
 * timeline, counted in b->bad_span: the events file refuses such a line, so
 * writing it would make the whole file unreadable.
 * On failure (out of memory) the buffer is left as it was and false returned. */
bool twi_append_line(twi_buf *b, const twi_record *r, const twi_clock *c, twi_demangler *dm);

/* ---------------------------------------------------------------- devices */

/* Writes a CUDA device UUID (16 bytes) as NVML does: "GPU-" (or "MIG-" for
 * a MIG instance) and 32 lowercase hex digits grouped 8-4-4-4-12 into
 * out[TWI_UUID_LEN]. */
#define TWI_UUID_LEN 41
void twi_format_uuid(const unsigned char bytes[16], bool mig, char out[TWI_UUID_LEN]);

#endif
