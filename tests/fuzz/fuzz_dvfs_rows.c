/* DVFS measurement rows (src/dvfs/data.c: the Performance CSV and the rows
 * `truewatt dvfs rows` writes) and Power CSVs (src/dvfs/power.c). Every row
 * that loads has positive clocks and time. */
#include <math.h>

#include "dvfs/data.h"
#include "dvfs/power.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    FILE *f = fuzz_fopen(data, size);
    tw_dvfs_data d;
    if (tw_dvfs_read(f, "fuzz.csv", &d) == TW_OK) {
        for (size_t i = 0; i < d.n; i++)
            if (!(d.rows[i].core_mhz > 0 && d.rows[i].mem_mhz > 0 && d.rows[i].time_ms > 0))
                fuzz_fail("a DVFS row with a clock or time <= 0 loaded");
        tw_dvfs_data_free(&d);
    }
    fclose(f);
    tw_dvfs_power_data p;
    if (tw_dvfs_power_load(fuzz_file(data, size), &p) == TW_OK) tw_dvfs_power_free(&p);
    return 0;
}
