/* JSON files read into structures: sensor profiles (src/correct/profile.c)
 * and the memory-energy profile (src/bench/breakdown.c), by their loaders. */
#include "bench/breakdown.h"
#include "correct/profile.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_file(data, size);
    tw_profile p;
    if (tw_profile_load(path, &p) == TW_OK) {
        for (size_t i = 0; i < p.n; i++)
            if (tw_profile_find(&p, p.r[i].name) == NULL) fuzz_fail("a loaded reading that find() misses");
        (void)tw_profile_best(&p, NULL, NULL);
    }
    tw_bd_eps eps;
    char gpu[128];
    (void)tw_bd_eps_load(path, &eps, gpu, sizeof gpu);
    return 0;
}
