/* The counter checks from the command line (mem_checks.h). */
#include "cli/mem_checks.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/spawn.h"
#include "report/table.h"

/* The names of a mask's bits (all when the mask is 0), comma-separated. */
static void mask_text(unsigned mask, int n, const char *(*name)(int), char *buf, size_t cap)
{
    size_t len = 0;
    buf[0] = '\0';
    for (int i = 0; i < n; i++)
        if (!mask || (mask & (1u << i)))
            len += (size_t)snprintf(buf + len, len < cap ? cap - len : 0, "%s%s", len ? "," : "", name(i));
}

static const char *level_name(int i) { return tw_mem_level_name((tw_mem_level)i); }
static const char *op_name(int i) { return tw_chase_op_name((tw_chase_op)i); }

void mem_levels_text(unsigned mask, char *buf, size_t cap) { mask_text(mask, TW_MEM_LEVELS, level_name, buf, cap); }
void mem_ops_text(unsigned mask, char *buf, size_t cap) { mask_text(mask, TW_CHASE_OPS, op_name, buf, cap); }

static void threads_text(const tw_mem_run_options *o, char *buf, size_t cap)
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

int mem_checks_run(const char *cmd, const mem_check_request *q, tw_mem_check_row **rows, size_t *n)
{
    char ncu[4096], self[4096], metrics[2048], levels[64], ops[64], threads[256], iters[32], blocks[16], seed[32],
        device[16], log[4200], manifest[4200], out[4200];
    if (cli_find_ncu(cmd, q->ncu, ncu, sizeof ncu) != 0) return CLI_EXIT_FAIL;
    if (cli_self_exe(cmd, self, sizeof self) != 0 || cli_make_dir(cmd, q->dir) != 0) return CLI_EXIT_FAIL;
    size_t nm;
    const char *const *m = tw_mem_check_metrics(&nm);
    tw_ncu_metrics_arg(m, nm, metrics, sizeof metrics);
    mem_levels_text(q->run->levels, levels, sizeof levels);
    mem_ops_text(q->run->ops, ops, sizeof ops);
    threads_text(q->run, threads, sizeof threads);
    snprintf(iters, sizeof iters, "%" PRIu64, q->iterations);
    snprintf(blocks, sizeof blocks, "%u", q->run->blocks_per_sm ? q->run->blocks_per_sm : 2);
    snprintf(seed, sizeof seed, "%" PRIu64, q->exp->o.seed);
    snprintf(device, sizeof device, "%d", q->exp->o.device);
    snprintf(log, sizeof log, "%s/ncu.csv", q->dir);
    snprintf(manifest, sizeof manifest, "%s/manifest.csv", q->dir);
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
                     "--levels",
                     levels,
                     "--ops",
                     ops,
                     "--blocks-per-sm",
                     blocks,
                     "--out",
                     out,
                     "--backend",
                     (char *)q->exp->o.backend};
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
        argv[a++] = fixed[i];
    if (threads[0]) argv[a++] = "--threads", argv[a++] = threads;
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
    tw_ncu_report rep;
    tw_status st = tw_ncu_read_path(log, m, nm, &rep);
    if (st == TW_OK) st = tw_mem_check_evaluate(manifest, &rep, rows, n);
    tw_ncu_report_free(&rep);
    return st == TW_OK ? 0 : cli_fail(cmd, st);
}

void mem_checks_print(const tw_mem_check_row *rows, size_t n)
{
    static const char *const h[] = {"op",      "level", "threads",  "counter", "Eq7",
                                    "counted", "off_%", "target_%", "check"};
    table *t = table_new(9, h);
    if (!t) return;
    size_t failed = 0;
    for (size_t i = 0; i < n; i++) {
        const tw_mem_check_row *w = &rows[i];
        table_cell(t, "%s", tw_chase_op_name(w->op));
        table_cell(t, "%s", tw_mem_level_name(w->level));
        table_cell(t, "%u", w->threads);
        table_cell(t, "%s", w->counter);
        table_cell(t, "%.4g", w->expected);
        table_cell(t, "%.4g", w->counted);
        table_cell(t, "%+.2f", 100 * (w->counted / w->expected - 1));
        if (isfinite(w->hit))
            table_cell(t, "%.2f", 100 * w->hit);
        else
            table_cell(t, "-");
        table_cell(t, "%s", w->pass ? "pass" : "FAIL");
        failed += !w->pass;
    }
    printf("counter checks (Nsight Compute; the measurement loop = launch(N) - launch(0)): %zu of %zu pass\n",
           n - failed, n);
    table_print(t, stdout);
    table_free(t);
    for (size_t i = 0; i < n; i++)
        if (!rows[i].pass)
            printf("  left out: %s %s, %u threads: %s\n", tw_chase_op_name(rows[i].op),
                   tw_mem_level_name(rows[i].level), rows[i].threads, rows[i].why);
}

int mem_checks_write(const char *cmd, const char *dir, const tw_mem_check_row *rows, size_t n, const char *prov)
{
    char path[4096];
    FILE *f = cli_open_out(cmd, dir, "checks.csv", path, sizeof path);
    if (!f) return CLI_EXIT_FAIL;
    fprintf(f, "# %s; counters by Nsight Compute; tolerance %.0f %% on Eq. 7, target share >= %.0f %%\n", prov,
            100 * TW_MEM_CHECK_COUNT_TOL, 100 * TW_MEM_CHECK_HIT_MIN);
    fprintf(f, "op,level,threads,blocks,counter,unit,expected,counted,target_share,pass,why\n");
    for (size_t i = 0; i < n; i++) {
        const tw_mem_check_row *w = &rows[i];
        fprintf(f, "%s,%s,%u,%u,%s,%s,%.17g,%.17g,", tw_chase_op_name(w->op), tw_mem_level_name(w->level), w->threads,
                w->blocks, w->counter, w->unit, w->expected, w->counted);
        isfinite(w->hit) ? fprintf(f, "%.6g", w->hit) : 0;
        fprintf(f, ",%d,\"%s\"\n", w->pass ? 1 : 0, w->why);
    }
    return cli_close_out(cmd, f, path);
}
