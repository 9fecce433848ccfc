/* Kernel timing CSVs for DVFS rows (src/dvfs/rows.c). */
#include "dvfs/rows.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    FILE *f = fuzz_fopen(data, size);
    tw_dvfs_times t;
    if (tw_dvfs_times_read(f, "fuzz.csv", &t) == TW_OK) tw_dvfs_times_free(&t);
    fclose(f);
    return 0;
}
