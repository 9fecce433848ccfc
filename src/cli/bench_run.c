/* The frame of a microbenchmark command; see bench_run.h. */
#include "cli/bench_run.h"

#include <stdio.h>

#include "bench/experiment.h"
#include "cli/cli.h"

int cli_bench_run(const cli_bench *b, int argc, char **argv, tw_exec **x, tw_profile *p, char *prov, size_t provcap)
{
    (void)argc;
    (void)argv;
    snprintf(prov, provcap, "%s", b->exp->provenance);
    xp_bench xb = {b->profile_path, b->out_dir, b->planned_s, b->work, b->ctx, b->no_profile};
    tw_status st = xp_bench_run(&b->exp->o, &xb, x, p);
    return st == TW_OK ? 0 : cli_fail(b->cmd, st);
}
