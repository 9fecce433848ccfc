/* tw_measure (truewatt.h): see measure's comment there. */
#include <math.h>
#include <string.h>

#include "core/error.h"
#include "truewatt.h"

void tw_measure_options_init(tw_measure_options *o)
{
    if (!o) return;
    memset(o, 0, sizeof *o);
    o->size = sizeof *o;
    o->precision = 0.02;
    o->budget_s = 30.0;
}

tw_status tw_measure(tw_session *s, tw_measure_fn fn, void *arg, const tw_measure_options *o, tw_measure_result *out)
{
    (void)s, (void)fn, (void)arg, (void)o, (void)out;
    return tw_fail(TW_EUNSUPPORTED, "tw_measure: not implemented yet");
}
