/* Simulator scenarios (src/sensor/scenario.c) for both profiles: load, then
 * the true power, energy and events of what loaded. */
#include <math.h>

#include "fuzz_common.h"
#include "truewatt.h"

static void use(const tw_scenario *s)
{
    double d = tw_scenario_duration_s(s);
    if (!(d >= 0) || !isfinite(d)) fuzz_fail("a scenario's duration is not finite");
    (void)tw_scenario_true_power_w(s, d / 2);
    (void)tw_scenario_true_energy_j(s, 0, d);
    tw_events *ev = NULL;
    if (tw_scenario_events(s, &ev) == TW_OK) tw_events_free(ev);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_file(data, size);
    for (int p = TW_SIM_K20; p <= TW_SIM_H100; p++) {
        tw_scenario *s = NULL;
        if (tw_scenario_load(path, (tw_sim_profile)p, &s) != TW_OK) continue;
        use(s);
        tw_scenario_free(s);
    }
    return 0;
}
