/* DVFS hardware parameter sets (src/dvfs/model.c, JSON): what loads must
 * write out and load back. */
#include <stdio.h>
#include <stdlib.h>

#include "dvfs/model.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tw_dvfs_params p;
    if (tw_dvfs_params_load(fuzz_file(data, size), &p) != TW_OK) return 0;
    FILE *f = fopen(fuzz_out_path(), "w");
    if (!f) fuzz_fail("cannot write the round-trip file");
    tw_status st = tw_dvfs_params_write(f, &p);
    if (fclose(f) != 0 || st != TW_OK) fuzz_fail("cannot write a parameter set that loaded");
    tw_dvfs_params q;
    if (tw_dvfs_params_load(fuzz_out_path(), &q) != TW_OK) {
        fprintf(stderr, "%s\n", tw_last_error());
        fuzz_fail("a written parameter set does not load back");
    }
    return 0;
}
