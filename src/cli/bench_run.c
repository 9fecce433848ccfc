/* The frame of a microbenchmark command; see bench_run.h. */
#include "cli/bench_run.h"

#include <stdio.h>

#include "bench/plans.h"
#include "cli/cli.h"
#include "correct/profile_pick.h"
#include "correct/identify.h"

typedef struct frame {
    const cli_bench *b;
    bool identify;
    double id_end_s;
} frame;

static tw_status schedule(tw_exec *x, void *ctx)
{
    frame *f = ctx;
    tw_status st = f->identify ? tw_plan_identify(x) : tw_exec_idle(x, 1.0);
    if (st == TW_OK && !f->identify) st = tw_exec_context(x);
    f->id_end_s = x->now_s;
    if (st == TW_OK) st = tw_exec_idle(x, 2.0);
    if (st == TW_OK) st = f->b->work(x, f->b->ctx);
    return st == TW_OK ? tw_exec_idle(x, 1.0) : st;
}

int cli_bench_run(const cli_bench *b, int argc, char **argv, tw_exec **xo, tw_profile *p, char *prov, size_t provcap)
{
    *xo = NULL;
    char how[4352] = "", trace[4096], events[4096];
    tw_status st = TW_OK;
    if (b->profile_path && (st = tw_profile_pick(b->profile_path, NULL, NULL, p, how, sizeof how)) != TW_OK)
        return cli_fail(b->cmd, st);
    int rc = cli_make_dir(b->cmd, b->out_dir);
    if (rc) return rc;
    snprintf(trace, sizeof trace, "%s/trace.csv", b->out_dir);
    snprintf(events, sizeof events, "%s/events.csv", b->out_dir);
    cli_exp_provenance(prov, provcap, argc, argv);
    b->exp->trace_path = trace;
    b->exp->events_path = events;
    tw_exec *x = NULL;
    if ((rc = cli_exp_start(b->cmd, b->exp, b->planned_s + 4, prov, &x))) return rc;
    frame f = {.b = b};
    if (!b->profile_path && !b->no_profile) st = tw_profile_pick(NULL, x->gpu, x->driver, p, how, sizeof how);
    if (st == TW_ENOTFOUND) {
        cli_note("truewatt %s: %s: identifying the sensor first (~%.0f s)", b->cmd, how, tw_plan_identify_s());
        f.identify = true;
        x->planned_s += tw_plan_identify_s();
    } else if (st != TW_OK) {
        rc = cli_fail(b->cmd, st);
    }
    if (rc == 0) rc = cli_exp_run(b->cmd, x, schedule, &f);
    if (rc == 0) rc = cli_exp_keep_sim_run(b->cmd, x, trace, events, prov);
    if (rc == 0 && f.identify) {
        tw_identify_options o;
        tw_identify_options_init(&o);
        o.t_end_s = f.id_end_s;
        if ((st = tw_identify(x->trace, x->events, &o, p, NULL)) != TW_OK) rc = cli_fail(b->cmd, st);
    }
    if (rc != 0) {
        tw_exec_free(x);
        return rc;
    }
    *xo = x;
    return 0;
}
