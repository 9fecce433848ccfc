/* The energy breakdown of an application (breakdown.h). */
#include "bench/breakdown.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "core/json_read.h"

#define SECTOR_BYTES 32.0

static const char *const metrics[TW_BD_METRICS] = {
    "sm__sass_data_bytes_mem_shared.sum",
    "sm__sass_data_bytes_mem_shared_op_ld.sum",
    "sm__sass_data_bytes_mem_shared_op_st.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum",
    "lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum",
    "lts__t_sectors_srcunit_tex_op_write.sum",
    "lts__t_sectors_srcunit_tex.sum",
    "lts__t_sectors.sum",
    "dram__sectors_read.sum",
    "dram__sectors_write.sum",
    "gpu__time_duration.sum",
};

const char *const *tw_breakdown_metrics(size_t *n)
{
    *n = TW_BD_METRICS;
    return metrics;
}

static void read_levels(const tw_json *arr, double *out)
{
    for (size_t i = 0; i < tw_json_len(arr); i++) {
        const tw_json *l = tw_json_at(arr, i);
        const char *name = tw_json_string(tw_json_get(l, "level"));
        for (int lv = 0; name && lv < TW_MEM_LEVELS; lv++)
            if (!strcmp(name, tw_mem_level_name((tw_mem_level)lv)))
                out[lv] = tw_json_number(tw_json_get(l, "energy_per_sector_j"));
    }
}

tw_status tw_bd_eps_load(const char *path, tw_bd_eps *out, char *gpu, size_t gpucap)
{
    for (int lv = 0; lv < TW_MEM_LEVELS; lv++)
        out->load[lv] = out->store[lv] = NAN;
    tw_json *doc = NULL;
    tw_status st = tw_json_load(path, &doc);
    if (st != TW_OK) return st;
    const tw_json *levels = tw_json_get(doc, "levels");
    if (tw_json_type_of(levels) != TW_JSON_ARRAY) {
        tw_json_free(doc);
        return tw_fail(TW_EPARSE, "%s: no \"levels\" array: not a memory-energy profile (truewatt mem calibrate)",
                       path);
    }
    read_levels(levels, out->load);
    read_levels(tw_json_get(doc, "stores"), out->store);
    if (gpu && gpucap) {
        const char *g = tw_json_string(tw_json_get(doc, "gpu"));
        snprintf(gpu, gpucap, "%s", g ? g : "");
    }
    tw_json_free(doc);
    return TW_OK;
}

/* A store's energy at a level: its own calibration, else the load's (the paper's lower-bound choice). */
static double store_eps(const tw_bd_eps *e, int lv) { return isfinite(e->store[lv]) ? e->store[lv] : e->load[lv]; }

/* A count that is zero needs no energy per access. */
static int term(double count, double eps, const char *what, double *acc)
{
    if (!(count > 0)) return 0;
    if (!isfinite(eps)) {
        tw_fail(TW_ENOTFOUND, "the memory-energy profile has no energy per access for %s", what);
        return -1;
    }
    *acc += count * eps;
    return 0;
}

int tw_breakdown_compute(const tw_bd_input *in, const tw_bd_eps *e, tw_breakdown *out)
{
    memset(out, 0, sizeof *out);
    const double *c = in->counts;
    double sh_other = fmax(0.0, c[TW_BD_SHARED_ALL] - c[TW_BD_SHARED_LD] - c[TW_BD_SHARED_ST]);
    double wb = c[TW_BD_DRAM_WR], wb_eps = store_eps(e, TW_MEM_DRAM) - store_eps(e, TW_MEM_L2);
    double *lj = out->level_j;
    if (term((c[TW_BD_SHARED_LD] + sh_other) / SECTOR_BYTES, e->load[TW_MEM_SHARED], "shared-memory loads",
             &lj[TW_MEM_SHARED]) ||
        term(c[TW_BD_SHARED_ST] / SECTOR_BYTES, store_eps(e, TW_MEM_SHARED), "shared-memory stores",
             &lj[TW_MEM_SHARED]) ||
        term(c[TW_BD_L1_LD_HIT], e->load[TW_MEM_L1], "L1 loads", &lj[TW_MEM_L1]) ||
        term(c[TW_BD_L2_RD_HIT], e->load[TW_MEM_L2], "L2 loads", &lj[TW_MEM_L2]) ||
        term(c[TW_BD_L2_WR], store_eps(e, TW_MEM_L2), "L2 stores", &lj[TW_MEM_L2]) ||
        term(c[TW_BD_DRAM_RD], e->load[TW_MEM_DRAM], "DRAM loads", &lj[TW_MEM_DRAM]) ||
        term(wb, fmax(wb_eps, 0.0), "DRAM stores", &lj[TW_MEM_DRAM]))
        return -1;
    out->sectors[TW_MEM_SHARED] = c[TW_BD_SHARED_ALL] / SECTOR_BYTES;
    out->sectors[TW_MEM_L1] = c[TW_BD_L1_LD_HIT];
    out->sectors[TW_MEM_L2] = c[TW_BD_L2_RD_HIT] + c[TW_BD_L2_WR];
    out->sectors[TW_MEM_DRAM] = c[TW_BD_DRAM_RD] + wb;
    for (int lv = 0; lv < TW_MEM_LEVELS; lv++)
        out->memory_j += lj[lv];
    out->total_j = in->total_j;
    out->static_j = in->total_j - in->dynamic_j;
    out->rest_j = in->dynamic_j - out->memory_j;
    out->memory_fits = out->rest_j >= 0;
    /* the stacked bar shows the rest at zero when the lower bound overshoots: its sum then exceeds the total */
    out->sum_j = out->static_j + out->memory_j + fmax(out->rest_j, 0.0);
    out->sum_diff_pct = 100 * (out->sum_j / out->total_j - 1);
    double unassigned = c[TW_BD_L2_ALL] - c[TW_BD_L2_ALL_TEX];
    if (unassigned > 0 && c[TW_BD_L2_ALL] > 0)
        snprintf(out->note, sizeof out->note,
                 "%.1f %% of the L2's sectors came from units other than the SMs' L1TEX (copies, the profiler) "
                 "and are not assigned",
                 100 * unassigned / c[TW_BD_L2_ALL]);
    if (!(in->time_s > 0) || !(in->total_j > 0)) {
        tw_fail(TW_EEMPTY, "no measured energy for the span (no kernels, or the run had no energy)");
        return -1;
    }
    return 0;
}
