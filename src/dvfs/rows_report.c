/* `truewatt dvfs rows` as a library call (tw_dvfs_rows_report): the kernels
 * of apps/dvfs/kernels.cu, their measured times joined with Nsight
 * Compute's counters, as rows of Wang & Chu's model (src/dvfs/rows.h) that
 * dvfs eval, fit and predict read like the authors'. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "dvfs/report.h"
#include "dvfs/rows.h"

static tw_status write_rows(const tw_dvfs_options *a, const tw_dvfs_rows *rows, FILE *out)
{
    FILE *f = a->out ? fopen(a->out, "w") : out;
    if (!f) return tw_fail(TW_EIO, "cannot write %s: %s", a->out, strerror(errno));
    tw_status st = tw_dvfs_rows_write(f, rows);
    if (a->out && fclose(f) != 0 && st == TW_OK) return tw_fail(TW_EIO, "cannot write %s: %s", a->out, strerror(errno));
    return st;
}

static tw_status build_rows(const tw_dvfs_options *a, tw_dvfs_rows *rows)
{
    tw_dvfs_times t;
    tw_status st = tw_dvfs_times_load(a->data, &t);
    if (st != TW_OK) return st;
    tw_ncu_report r;
    if ((st = tw_dvfs_ncu_load(a->ncu, &r)) != TW_OK) {
        tw_dvfs_times_free(&t);
        return st;
    }
    st = tw_dvfs_rows_build(&t, &r, a->core_mhz, a->mem_mhz, rows);
    tw_ncu_report_free(&r);
    tw_dvfs_times_free(&t);
    return st;
}

tw_status tw_dvfs_rows_report(const tw_dvfs_options *a, FILE *out)
{
    if (!a || !out || a->size < sizeof *a || !a->data || !a->ncu)
        return tw_fail(TW_EINVAL, "dvfs rows: initialised options with the times and ncu files, and a stream");
    tw_dvfs_rows rows;
    tw_status st = build_rows(a, &rows);
    if (st != TW_OK) return st;
    size_t profiled = 0;
    for (size_t i = 0; i < rows.n; i++)
        profiled += rows.r[i].profiled;
    st = write_rows(a, &rows, out);
    if (st == TW_OK) {
        tw_dvfs_note(a, "%zu kernel(s) at %g/%g MHz, %zu ncu launch(es) averaged%s%s", rows.n, a->core_mhz, a->mem_mhz,
                     profiled, a->out ? ", written to " : "", a->out ? a->out : "");
        if (rows.ignored)
            tw_dvfs_note(a, "%zu ncu launch(es) of kernels the times do not name were left out (e.g. %s)", rows.ignored,
                         rows.ignored_example);
    }
    tw_dvfs_rows_free(&rows);
    return st;
}
