/* A GPU's clocks through NVML (internal to the library and the CLI): the
 * supported (memory, graphics) clock pairs, the current and maximum clocks,
 * the clock event reasons, and locking / unlocking the graphics and memory
 * clocks.
 *
 * Reading is harmless. Locking changes the card's settings for every user of
 * the machine until reset or reboot and needs root (NVML_ERROR_NO_PERMISSION
 * otherwise); only `truewatt dvfs lock --allow-clock-changes` calls it, and
 * the tests call it only against the fake libnvidia-ml.
 *
 * For a caller that only needs the clocks (e.g. `dvfs predict`):
 *
 *     tw_clocks *c;
 *     if (tw_clocks_open(NULL, "0", &c) != TW_OK) ... tw_last_error() says why
 *     tw_clock_table t;                       // every supported pair
 *     if (tw_clocks_supported(c, &t) == TW_OK) {
 *         for (size_t m = 0; m < t.nmem; m++)
 *             for (size_t g = 0; g < t.mem[m].n; g++)
 *                 use(t.mem[m].mem_mhz, t.mem[m].gfx_mhz[g]);
 *         tw_clock_table_free(&t);
 *     }
 *     tw_clock_now now;                       // current SM / memory clocks and reasons
 *     tw_clocks_current(c, &now);
 *     tw_clocks_close(c);
 */
#ifndef TW_SENSOR_NVML_CLOCKS_H
#define TW_SENSOR_NVML_CLOCKS_H

#include <stdbool.h>
#include <stddef.h>

#include "truewatt.h"

/* ---------------------------------------------------------------- clock tables (plain data) */

/* The graphics clocks NVML supports with one memory clock. */
typedef struct tw_clock_mem {
    unsigned mem_mhz;
    size_t n;          /* graphics clocks */
    unsigned *gfx_mhz; /* highest first, as NVML lists them */
} tw_clock_mem;

/* Every supported (memory, graphics) pair: nmem memory clocks, highest first. */
typedef struct tw_clock_table {
    size_t nmem;
    tw_clock_mem *mem;
} tw_clock_table;

void tw_clock_table_free(tw_clock_table *t);
/* The entry of memory clock mem_mhz, or NULL. */
const tw_clock_mem *tw_clock_table_find(const tw_clock_table *t, unsigned mem_mhz);

/* Whether mhz is in list[0..n). */
bool tw_clock_in(const unsigned *list, size_t n, unsigned mhz);
/* The supported clocks nearest to mhz: the highest one below it and the lowest
 * one above it (0 when there is none on that side). */
void tw_clock_nearest(const unsigned *list, size_t n, unsigned mhz, unsigned *below, unsigned *above);
/* A list of clocks in a few words: "110 clocks, 1980..345 MHz in 15 MHz steps"
 * when evenly spaced, else "3 clocks: 1980, 1500, 345 MHz". Returns what
 * snprintf returns. */
int tw_clock_list_format(const unsigned *list, size_t n, char *buf, size_t cap);

/* Checks a request against the table: graphics clocks core_min..core_max
 * (equal for one clock; 0, 0: no graphics lock) with memory clock mem_mhz (0: no memory lock; the
 * graphics clocks are then checked against cur_mem_mhz's list, or against
 * every list when cur_mem_mhz is not in the table). TW_EINVAL with a message
 * that names the nearest supported clocks. */
tw_status tw_clock_check_request(const tw_clock_table *t, unsigned core_min, unsigned core_max, unsigned mem_mhz,
                                 unsigned cur_mem_mhz);

/* ---------------------------------------------------------------- event reasons */

/* The reasons that hold the clocks below the requested ones for power or
 * heat (SW power cap, HW slowdown, SW / HW thermal, HW power brake): any of
 * them seen while clocks were locked means the locked point did not hold. */
#define TW_CLOCK_REASONS_LIMITING 0xECULL

/* The name of one reason bit ("gpu_idle", "sw_power_cap", ...), or NULL. */
const char *tw_clock_reason_name(unsigned long long bit);
/* "sw_power_cap,sw_thermal" ("none" for 0; an unknown bit as 0x...). */
int tw_clock_reasons_format(unsigned long long bits, char *buf, size_t cap);

/* ---------------------------------------------------------------- one device */

typedef struct tw_clocks tw_clocks;

/* Opens a device through NVML: `library` as for the nvml sensor (NULL: the
 * default search, $TW_NVML_LIBRARY first), `device` an index or UUID (NULL:
 * "0"). TW_EUNAVAIL without NVML, TW_ENOTFOUND without that device. */
tw_status tw_clocks_open(const char *library, const char *device, tw_clocks **out);
void tw_clocks_close(tw_clocks *c);

unsigned tw_clocks_index(const tw_clocks *c);
const char *tw_clocks_uuid(const tw_clocks *c);
const char *tw_clocks_name(const tw_clocks *c);

/* Every supported pair (free with tw_clock_table_free). TW_EUNSUPPORTED when
 * the device or driver does not list them. */
tw_status tw_clocks_supported(tw_clocks *c, tw_clock_table *t);

/* The clocks now. A part that cannot be read is marked absent; the call fails
 * only when none can. */
typedef struct tw_clock_now {
    unsigned sm_mhz, mem_mhz;   /* nvmlDeviceGetClockInfo(SM / MEM) */
    unsigned long long reasons; /* nvmlDeviceGetCurrentClocksEventReasons bits */
    bool have_sm, have_mem, have_reasons;
} tw_clock_now;
tw_status tw_clocks_current(tw_clocks *c, tw_clock_now *now);

/* The maximum SM and memory clocks (nvmlDeviceGetMaxClockInfo). */
tw_status tw_clocks_max(tw_clocks *c, unsigned *sm_mhz, unsigned *mem_mhz);

/* Whether this driver has the functions to lock (and reset) the graphics /
 * memory clocks; when not, the lock calls fail with TW_EUNSUPPORTED and
 * "... is not supported by this driver". */
bool tw_clocks_can_lock_gpu(const tw_clocks *c);
bool tw_clocks_can_lock_mem(const tw_clocks *c);

/* Locking (root only). Every failure is in tw_last_error with NVML's
 * message; NVML_ERROR_NO_PERMISSION says that it needs root. */
tw_status tw_clocks_lock_gpu(tw_clocks *c, unsigned min_mhz, unsigned max_mhz);
tw_status tw_clocks_reset_gpu(tw_clocks *c);
tw_status tw_clocks_lock_mem(tw_clocks *c, unsigned min_mhz, unsigned max_mhz);
tw_status tw_clocks_reset_mem(tw_clocks *c);

/* Whether the last failed call of this handle was refused for permission. */
bool tw_clocks_denied(const tw_clocks *c);

#endif
