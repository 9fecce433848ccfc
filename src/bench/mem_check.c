/* The counter checks of the memory calibration (mem_check.h). */
#include "bench/mem_check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"

enum {
    M_SHARED_LD,
    M_SHARED_ST,
    M_L1_LD,
    M_L1_LD_HIT,
    M_L2_RD,
    M_L2_RD_HIT,
    M_L2_WR,
    M_L2_WR_HIT,
    M_DRAM_RD,
    M_DRAM_WR,
    M_COUNT
};

static const char *const metrics[M_COUNT] = {
    "sm__sass_data_bytes_mem_shared_op_ld.sum",
    "sm__sass_data_bytes_mem_shared_op_st.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum",
    "lts__t_sectors_srcunit_tex_op_read.sum",
    "lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum",
    "lts__t_sectors_srcunit_tex_op_write.sum",
    "lts__t_sectors_srcunit_tex_op_write_lookup_hit.sum",
    "dram__sectors_read.sum",
    "dram__sectors_write.sum",
};

const char *const *tw_mem_check_metrics(size_t *n)
{
    *n = M_COUNT;
    return metrics;
}

/* One manifest line. */
typedef struct entry {
    tw_chase_op op;
    tw_mem_level level;
    unsigned threads, blocks;
    unsigned long long iterations;
    double accesses, bytes;
} entry;

static int level_parse(const char *s)
{
    for (int lv = 0; lv < TW_MEM_LEVELS; lv++)
        if (!strcmp(s, tw_mem_level_name((tw_mem_level)lv))) return lv;
    return -1;
}

static tw_status parse_entry(const char *path, size_t lineno, char *line, entry *e)
{
    char op[16], lv[16];
    unsigned long long index, sub;
    if (sscanf(line, "%llu,%15[^,],%15[^,],%u,%u,%llu,%llu,%lg,%lg", &index, op, lv, &e->threads, &e->blocks, &sub,
               &e->iterations, &e->accesses, &e->bytes) != 9)
        return tw_fail(TW_EPARSE, "%s:%zu: not a manifest line (%s)", path, lineno, tw_mem_manifest_header());
    int o = tw_chase_op_parse(op), l = level_parse(lv);
    if (o < 0 || l < 0) return tw_fail(TW_EPARSE, "%s:%zu: unknown operation '%s' or level '%s'", path, lineno, op, lv);
    e->op = (tw_chase_op)o;
    e->level = (tw_mem_level)l;
    return TW_OK;
}

static tw_status read_manifest(const char *path, entry **out, size_t *n)
{
    FILE *f = fopen(path, "r");
    if (!f) return tw_fail(TW_EIO, "cannot open the manifest %s", path);
    char *line = NULL;
    size_t cap = 0, lineno = 0, have = 0, room = 0;
    entry *v = NULL;
    tw_status st = TW_OK;
    while (st == TW_OK && getline(&line, &cap, f) > 0) {
        if (++lineno == 1) {
            if (strncmp(line, tw_mem_manifest_header(), strlen(tw_mem_manifest_header())))
                st =
                    tw_fail(TW_EPARSE, "%s: not a truewatt mem manifest (header '%s')", path, tw_mem_manifest_header());
            continue;
        }
        if (have == room) {
            room = room ? 2 * room : 64;
            entry *w = realloc(v, room * sizeof *w);
            if (!w) {
                st = tw_fail(TW_ENOMEM, "out of memory (manifest)");
                break;
            }
            v = w;
        }
        st = parse_entry(path, lineno, line, &v[have]);
        if (st == TW_OK) have++;
    }
    free(line);
    fclose(f);
    if (st == TW_OK && (have == 0 || have % 2))
        st = tw_fail(TW_EPARSE, "%s: %zu launches, expected pairs (iterations 0 and N)", path, have);
    if (st != TW_OK) {
        free(v);
        return st;
    }
    *out = v;
    *n = have;
    return TW_OK;
}

static double delta(const tw_ncu_launch *a, const tw_ncu_launch *b, int m) { return b->values[m] - a->values[m]; }

/* The target level's counter and share, by operation and level. */
static void judge(const entry *e, const tw_ncu_launch *z, const tw_ncu_launch *k, tw_mem_check_row *row)
{
    bool st = e->op == TW_CHASE_STORE;
    row->hit = NAN;
    row->unit = "sectors";
    row->expected = e->accesses;
    switch (e->level) {
    case TW_MEM_SHARED:
        row->counter = metrics[st ? M_SHARED_ST : M_SHARED_LD];
        row->counted = delta(z, k, st ? M_SHARED_ST : M_SHARED_LD);
        row->expected = e->bytes;
        row->unit = "bytes";
        break;
    case TW_MEM_L1:
        row->counter = metrics[M_L1_LD];
        row->counted = delta(z, k, M_L1_LD);
        row->hit = delta(z, k, M_L1_LD_HIT) / row->counted;
        break;
    case TW_MEM_L2:
        row->counter = metrics[st ? M_L2_WR : M_L2_RD];
        row->counted = delta(z, k, st ? M_L2_WR : M_L2_RD);
        row->hit = delta(z, k, st ? M_L2_WR_HIT : M_L2_RD_HIT) / row->counted;
        break;
    default: /* DRAM: the share of the L2's sectors that went to DRAM */
        row->counter = metrics[st ? M_DRAM_WR : M_DRAM_RD];
        row->counted = delta(z, k, st ? M_DRAM_WR : M_DRAM_RD);
        row->hit = row->counted / delta(z, k, st ? M_L2_WR : M_L2_RD);
        break;
    }
    double off = row->counted / row->expected - 1;
    row->pass = true;
    row->why[0] = '\0';
    if (!isfinite(off) || fabs(off) > TW_MEM_CHECK_COUNT_TOL) {
        row->pass = false;
        snprintf(row->why, sizeof row->why, "counted %.4g %s, Eq. 7 gives %.4g (%+.1f %%)", row->counted, row->unit,
                 row->expected, 100 * off);
    } else if (e->level != TW_MEM_SHARED && !(row->hit >= TW_MEM_CHECK_HIT_MIN)) {
        row->pass = false;
        snprintf(row->why, sizeof row->why, "the %s served %.1f %% of the accesses (at least %.0f %% wanted)",
                 tw_mem_level_name(e->level), 100 * row->hit, 100 * TW_MEM_CHECK_HIT_MIN);
    }
}

/* ncu's launch must be the manifest's: same block and grid. */
static tw_status same_launch(const entry *e, const tw_ncu_launch *l, size_t i)
{
    if (l->block[0] == e->threads && l->grid[0] == e->blocks) return TW_OK;
    return tw_fail(TW_EPARSE,
                   "ncu's launch %zu (%s, block %u, grid %u) is not the manifest's (%s %s, block %u, grid %u): "
                   "the two runs differ",
                   i, l->name, l->block[0], l->grid[0], tw_chase_op_name(e->op), tw_mem_level_name(e->level),
                   e->threads, e->blocks);
}

tw_status tw_mem_check_evaluate(const char *manifest_path, const tw_ncu_report *rep, tw_mem_check_row **rows, size_t *n)
{
    if (!manifest_path || !rep || !rows || !n) return tw_fail(TW_EINVAL, "tw_mem_check_evaluate: NULL argument");
    if (rep->nmetrics != M_COUNT) return tw_fail(TW_EINVAL, "tw_mem_check_evaluate: the report has other metrics");
    entry *e = NULL;
    size_t ne = 0;
    tw_status st = read_manifest(manifest_path, &e, &ne);
    if (st != TW_OK) return st;
    if (rep->n != ne) {
        free(e);
        return tw_fail(TW_EPARSE, "ncu profiled %zu chase launches, the manifest lists %zu%s%s", rep->n, ne,
                       rep->message[0] ? ": " : "", rep->message);
    }
    tw_mem_check_row *r = calloc(ne / 2 + 1, sizeof *r);
    if (!r) st = tw_fail(TW_ENOMEM, "out of memory (checks)");
    for (size_t i = 0; st == TW_OK && i < ne; i += 2) {
        st = same_launch(&e[i], &rep->launches[i], i);
        if (st == TW_OK) st = same_launch(&e[i + 1], &rep->launches[i + 1], i + 1);
        if (st != TW_OK) break;
        tw_mem_check_row *w = &r[i / 2];
        w->op = e[i].op;
        w->level = e[i].level;
        w->threads = e[i].threads;
        w->blocks = e[i].blocks;
        judge(&e[i + 1], &rep->launches[i], &rep->launches[i + 1], w);
    }
    free(e);
    if (st != TW_OK) {
        free(r);
        return st;
    }
    *rows = r;
    *n = ne / 2;
    return TW_OK;
}

void tw_mem_check_apply(const tw_mem_check_row *checks, size_t n, tw_mem_results *r)
{
    for (size_t i = 0; i < r->n; i++) {
        tw_mem_row *w = &r->rows[i];
        w->check = TW_MEM_UNCHECKED;
        for (size_t k = 0; k < n; k++)
            if (checks[k].op == w->op && checks[k].level == w->level && checks[k].threads == w->threads)
                w->check = checks[k].pass ? TW_MEM_CHECK_PASS : TW_MEM_CHECK_FAIL;
    }
    tw_mem_lower_bounds(r);
}
