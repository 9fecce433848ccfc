/* Nsight Compute CSV (src/mem/ncu_csv.c), as the memory checks ask for it
 * and as the DVFS rows read it (src/dvfs/rows.c). */
#include "dvfs/rows.h"
#include "fuzz_common.h"
#include "mem/ncu_csv.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const metrics[] = {"dram__sectors_read.sum", "gpu__time_duration.sum", "sm__cycles_elapsed.avg"};
    FILE *f = fuzz_fopen(data, size);
    tw_ncu_report r;
    if (tw_ncu_read(f, metrics, 3, &r) == TW_OK) {
        for (size_t m = 0; m < 3; m++)
            (void)tw_ncu_sum(&r, m, NULL);
        tw_ncu_report_free(&r);
    }
    rewind(f);
    if (tw_dvfs_ncu_read(f, "fuzz.csv", &r) == TW_OK) tw_ncu_report_free(&r);
    fclose(f);
    return 0;
}
