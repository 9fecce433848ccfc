/* The trace CSV reader (src/trace/reader.c, csv.c): open, read every row,
 * rewind, read again. Every value handed out as valid must be finite. */
#include <math.h>

#include "fuzz_common.h"
#include "truewatt.h"

static void read_all(tw_trace_reader *r)
{
    tw_row row;
    bool eof = false;
    while (tw_trace_reader_next(r, &row, &eof) == TW_OK && !eof) {
        if (!isfinite(row.t_s)) fuzz_fail("a row's time is not finite");
        for (size_t i = 0; i < row.n; i++)
            if (row.valid[i] && !isfinite(row.value[i])) fuzz_fail("a valid value is not finite");
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tw_trace_reader *r = NULL;
    if (tw_trace_reader_open(fuzz_file(data, size), &r) != TW_OK) return 0;
    for (size_t i = 0; i < tw_trace_reader_nreadings(r); i++) {
        size_t idx;
        if (tw_trace_reader_find(r, tw_trace_reader_reading(r, i)->name, &idx) != TW_OK) fuzz_fail("find");
    }
    read_all(r);
    if (tw_trace_reader_rewind(r) == TW_OK) read_all(r);
    tw_trace_reader_close(r);
    return 0;
}
