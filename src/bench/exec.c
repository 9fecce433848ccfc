/* The executor interface's shared part: checks, progress, events. */
#include <math.h>
#include <stdlib.h>

#include "bench/exec.h"
#include "core/error.h"

static tw_status check(tw_exec *x)
{
    if (!x) return tw_fail(TW_EINVAL, "experiment: NULL executor");
    if (x->cancel && *x->cancel) return tw_fail(TW_EINTERRUPTED, "experiment interrupted");
    return TW_OK;
}

static void progress(tw_exec *x)
{
    if (x->progress) x->progress(x->progress_ctx, x->now_s, x->planned_s);
}

tw_status tw_exec_context(tw_exec *x)
{
    tw_status st = check(x);
    if (st != TW_OK) return st;
    if (!isnan(x->context_s)) return tw_fail(TW_EINVAL, "experiment: the context exists already");
    st = x->ops->context(x);
    progress(x);
    return st;
}

tw_status tw_exec_idle(tw_exec *x, double s)
{
    tw_status st = check(x);
    if (st != TW_OK) return st;
    if (!(s >= 0)) return tw_fail(TW_EINVAL, "experiment: idle time must be >= 0 (got %g)", s);
    st = x->ops->idle(x, s);
    progress(x);
    return st;
}

tw_status tw_exec_block(tw_exec *x, const char *label, double kernel_s, size_t count)
{
    tw_status st = check(x);
    if (st != TW_OK) return st;
    if (!(kernel_s > 0) || count == 0) return tw_fail(TW_EINVAL, "experiment: a block needs kernels > 0 s");
    if (isnan(x->context_s)) return tw_fail(TW_EINVAL, "experiment: kernels need the context first");
    st = x->ops->block(x, label, kernel_s, count);
    progress(x);
    return st;
}

tw_status tw_exec_kernel_run(tw_exec *x, const tw_exec_kernel *k, size_t count)
{
    tw_status st = check(x);
    if (st != TW_OK) return st;
    if (!k || !k->ptx || !k->entry || !k->label || count == 0 || k->grid == 0 || k->block == 0)
        return tw_fail(TW_EINVAL, "experiment: a kernel needs PTX, an entry, a label, a grid and a block");
    if (isnan(x->context_s)) return tw_fail(TW_EINVAL, "experiment: kernels need the context first");
    if (!x->ops->kernel) return tw_fail(TW_EUNSUPPORTED, "experiment: the %s executor runs no PTX", x->ops->name);
    st = x->ops->kernel(x, k, count);
    progress(x);
    return st;
}

tw_status tw_exec_finish(tw_exec *x)
{
    if (!x) return tw_fail(TW_EINVAL, "experiment: NULL executor");
    return x->ops->finish(x);
}

void tw_exec_free(tw_exec *x)
{
    if (!x) return;
    if (x->trace) tw_sensor_close(x->trace);
    tw_events_free(x->events);
    x->ops->destroy(x);
}

tw_status tw_exec_add_event(tw_exec *x, const char *name, const char *kind, double t0_s, double t1_s)
{
    tw_event e = {.name = name,
                  .start_s = t0_s,
                  .end_s = t1_s,
                  .device = 0,
                  .stream = -1,
                  .true_energy_j = NAN,
                  .kind = kind ? kind : "kernel"};
    return tw_events_add(x->events, &e);
}
