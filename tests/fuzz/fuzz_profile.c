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
        for (size_t i = 0; i < p.n_activity; i++) { /* each model is found by its own features */
            const tw_activity_model *a = &p.activity[i];
            const char *names[TW_PROFILE_MAX_FEATURES];
            size_t order[TW_PROFILE_MAX_FEATURES];
            for (size_t k = 0; k < a->nf; k++)
                names[k] = a->feature[a->nf - 1 - k];
            if (!tw_profile_activity_for(p.activity, p.n_activity, names, a->nf, order))
                fuzz_fail("a loaded activity model that activity_for() misses");
            for (size_t k = 0; k < a->nf; k++)
                if (!(a->sd_w[k] > 0) || !(a->power_w[k] >= 0)) fuzz_fail("an activity model's number out of range");
        }
    }
    tw_bd_eps eps;
    char gpu[128];
    (void)tw_bd_eps_load(path, &eps, gpu, sizeof gpu);
    return 0;
}
