/* The events file (src/trace/events.c) and the timeline split by device
 * (src/timeline/devices.c): load, split over two GPUs (one with a UUID),
 * save, load again: the saved file must read back with as many events. */
#include <math.h>
#include <string.h>

#include "fuzz_common.h"
#include "timeline/devices.h"
#include "truewatt.h"

static void split(tw_events *ev)
{
    tw_device_info dev[2];
    memset(dev, 0, sizeof dev);
    dev[1].index = 1;
    strcpy(dev[1].uuid, "GPU-00000000-0000-0000-0000-000000000001");
    tw_events *per[2] = {NULL, NULL};
    tw_unmeasured_summary unm;
    if (tw_timeline_split(ev, dev, 2, per, &unm) != TW_OK) return;
    char buf[512];
    tw_unmeasured_describe(&unm, buf, sizeof buf);
    tw_unmeasured_summary_free(&unm);
    tw_events_free(per[0]);
    tw_events_free(per[1]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tw_events *ev = NULL;
    if (tw_events_load(fuzz_file(data, size), &ev) != TW_OK) return 0;
    size_t n = tw_events_count(ev);
    for (size_t i = 0; i < n; i++) {
        const tw_event *e = tw_events_get(ev, i);
        if (!e->name || !isfinite(e->start_s) || !isfinite(e->end_s)) fuzz_fail("an event without name or times");
    }
    split(ev);
    tw_events_sort(ev);
    if (tw_events_save(ev, fuzz_out_path()) == TW_OK) {
        tw_events *back = NULL;
        if (tw_events_load(fuzz_out_path(), &back) != TW_OK) fuzz_fail("a saved events file does not load");
        if (tw_events_count(back) != n) fuzz_fail("a saved events file loads with another count");
        tw_events_free(back);
    }
    tw_events_free(ev);
    return 0;
}
