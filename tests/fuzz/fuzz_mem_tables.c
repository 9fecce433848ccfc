/* The memory calibration's tables (src/bench/mem_check.c): its launch
 * manifest, paired with an Nsight Compute CSV of the same launches. The
 * input is the manifest, a line "--", then the ncu CSV. */
#include <stdlib.h>
#include <string.h>

#include "bench/mem_check.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *sep = NULL;
    for (size_t i = 0; i + 4 <= size && !sep; i++)
        if (memcmp(data + i, "\n--\n", 4) == 0) sep = data + i;
    size_t man_len = sep ? (size_t)(sep - data) + 1 : size;
    const uint8_t *ncu = sep ? sep + 4 : data + size;
    size_t ncu_len = (size_t)(data + size - ncu);

    size_t nm = 0;
    const char *const *metrics = tw_mem_check_metrics(&nm);
    FILE *f = fuzz_fopen(ncu, ncu_len);
    tw_ncu_report rep;
    tw_status st = tw_ncu_read(f, metrics, nm, &rep);
    fclose(f);
    if (st != TW_OK) return 0;
    tw_mem_check_row *rows = NULL;
    size_t n = 0;
    if (tw_mem_check_evaluate(fuzz_file(data, man_len), &rep, &rows, &n) == TW_OK) free(rows);
    tw_ncu_report_free(&rep);
    return 0;
}
