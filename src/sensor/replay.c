/* The replay backend: a recorded trace file played through the live-sensor
 * path, so analysis code cannot tell a recording from a sensor. */
#include <stdio.h>

#include "core/error.h"
#include "sensor/backend.h"
#include "truewatt.h"

static bool replay_available(char *why, size_t why_len)
{
    if (why && why_len > 0) why[0] = '\0';
    return true; /* needs nothing but a file, checked at open */
}

static tw_status replay_open(const tw_sensor_config *cfg, void **state)
{
    if (!state) return tw_fail(TW_EINVAL, "replay: state is NULL");
    *state = NULL;
    if (!cfg || !cfg->path || !cfg->path[0])
        return tw_fail(TW_EINVAL, "replay: no trace file given (set tw_sensor_config.path)");
    tw_trace_reader *r = NULL;
    tw_status st = tw_trace_reader_open(cfg->path, &r);
    if (st != TW_OK) return st;
    *state = r;
    return TW_OK;
}

static size_t replay_nreadings(const void *state) { return tw_trace_reader_nreadings(state); }

static const tw_reading_info *replay_reading(const void *state, size_t i) { return tw_trace_reader_reading(state, i); }

static tw_status replay_next(void *state, tw_row *row, bool *eof) { return tw_trace_reader_next(state, row, eof); }

static tw_status replay_rewind(void *state) { return tw_trace_reader_rewind(state); }

static void replay_close(void *state) { tw_trace_reader_close(state); }

static const char *replay_notes(const void *state) { return tw_trace_reader_notes(state); }

const tw_backend tw_backend_replay = {
    .abi = TW_BACKEND_ABI,
    .name = "replay",
    .description = "replays a recorded trace file through the live-sensor path",
    .available = replay_available,
    .open = replay_open,
    .nreadings = replay_nreadings,
    .reading = replay_reading,
    .next = replay_next,
    .rewind = replay_rewind,
    .close = replay_close,
    .notes = replay_notes,
};
