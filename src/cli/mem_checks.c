/* The counter checks from the command line (mem_checks.h). */
#include "cli/mem_checks.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/spawn.h"

static void threads_text(const tw_mem_options *o, char *buf, size_t cap)
{
    size_t len = 0;
    buf[0] = '\0';
    for (size_t i = 0; o->threads && i < o->nthreads; i++)
        len += (size_t)snprintf(buf + len, len < cap ? cap - len : 0, "%s%u", i ? "," : "", o->threads[i]);
}

/* ncu's own complaint (an ==ERROR== line of its log), if any. */
static void print_ncu_error(const char *cmd, const char *log)
{
    FILE *f = fopen(log, "r");
    char line[1024];
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "==ERROR==", 9)) {
            fprintf(stderr, "truewatt %s: ncu said: %s", cmd, line);
            break;
        }
    if (f) fclose(f);
}

int mem_checks_run(const char *cmd, const mem_check_request *q, char *manifest, char *log, size_t cap)
{
    char ncu[4096], self[4096], metrics[2048], threads[256], iters[32], blocks[16], seed[32], device[16], out[4200];
    if (cli_find_ncu(cmd, q->ncu, ncu, sizeof ncu) != 0) return CLI_EXIT_FAIL;
    if (cli_self_exe(cmd, self, sizeof self) != 0 || cli_make_dir(cmd, q->dir) != 0) return CLI_EXIT_FAIL;
    tw_mem_check_metrics_arg(metrics, sizeof metrics);
    threads_text(q->mem, threads, sizeof threads);
    snprintf(iters, sizeof iters, "%" PRIu64, q->iterations);
    snprintf(blocks, sizeof blocks, "%u", q->mem->blocks_per_sm ? q->mem->blocks_per_sm : 2);
    snprintf(seed, sizeof seed, "%" PRIu64, q->exp->o.seed);
    snprintf(device, sizeof device, "%d", q->exp->o.device);
    snprintf(log, cap, "%s/ncu.csv", q->dir);
    snprintf(manifest, cap, "%s/manifest.csv", q->dir);
    snprintf(out, sizeof out, "%s/counters", q->dir);
    bool sim = !strcmp(q->exp->o.backend, "sim");
    char *argv[48];
    int a = 0;
    char *fixed[] = {ncu,
                     "--csv",
                     "--clock-control",
                     "none",
                     "--metrics",
                     metrics,
                     "--kernel-name",
                     "tw_chase",
                     "--log-file",
                     log,
                     self,
                     "mem",
                     "counters",
                     "--manifest",
                     manifest,
                     "--iterations",
                     iters,
                     "--blocks-per-sm",
                     blocks,
                     "--out",
                     out,
                     "--backend",
                     (char *)q->exp->o.backend};
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
        argv[a++] = fixed[i];
    if (threads[0]) argv[a++] = "--threads", argv[a++] = threads;
    if (q->mem->levels) argv[a++] = "--levels", argv[a++] = (char *)q->mem->levels;
    if (q->mem->ops) argv[a++] = "--ops", argv[a++] = (char *)q->mem->ops;
    if (sim) {
        argv[a++] = "--sim";
        argv[a++] = (char *)tw_sim_profile_name(q->exp->o.sim);
        argv[a++] = "--seed";
        argv[a++] = seed;
    } else {
        argv[a++] = "--device";
        argv[a++] = device;
    }
    argv[a] = NULL;
    fprintf(stderr,
            "truewatt %s: counter checks: %s profiles the chases (iterations 0 and %s), apart from the "
            "energy runs; %s\n",
            cmd, ncu, iters, log);
    remove(log);
    int rc = cli_spawn_wait(cmd, argv, NULL);
    if (rc != 0) {
        print_ncu_error(cmd, log);
        fprintf(stderr, "truewatt %s: the counter run under ncu failed (exit %d); its log: %s\n", cmd, rc, log);
        return CLI_EXIT_FAIL;
    }
    return 0;
}
