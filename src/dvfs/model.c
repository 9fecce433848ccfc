/* Wang & Chu's DVFS performance model (model.h): dvfs-model.md §2.1-2.5,
 * with the §2.7 special cases behind paper_compat. */
#include "dvfs/model.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "core/json.h"
#include "core/json_read.h"

/* The authors' "/4": as if each warp kept four memory requests in flight. */
#define OUTSTANDING 4.0

const char *tw_dvfs_regime_name(tw_dvfs_regime r)
{
    static const char *const names[] = {"compute", "memory", "latency"};
    return r < TW_DVFS_REGIMES ? names[r] : "?";
}

/* Per-warp counts and the per-round cycle terms of §2.3 for one row. */
typedef struct terms {
    double n_g, n_sh, n_inst, n_tex, n_br, miss, warps; /* warps: W, resident per SM */
    double l_dm, l_mem, d_mem, t_mem, t_sm, t_tex;
} terms;

static void per_warp(const tw_dvfs_row *r, terms *t)
{
    double nw = r->warps;
    double n_gld = r->l2_read / nw, n_gst = r->l2_write / nw;
    double n_sld = r->shared_load / nw, n_sst = r->shared_store / nw;
    double l2 = r->l2_read + r->l2_write;
    t->n_g = n_gld + n_gst;
    t->n_sh = n_sld + n_sst;
    t->n_tex = fmax(0, r->tex_cache / nw);
    t->n_br = r->cf_executed / (32 * nw);
    /* no L2 traffic: nothing can miss */
    t->miss = l2 > 0 ? fmin(1, (r->dram_read + r->dram_write) / l2) : 0;
    /* the authors' heuristic subtracts transactions, not instructions, and only a quarter of the shared stores */
    t->n_inst = fmax(0, r->inst_per_warp - (n_gld + n_gst + n_sld + n_sst / 4));
}

static void cycle_terms(const tw_dvfs_params *p, const tw_dvfs_row *r, terms *t)
{
    double fc = r->core_mhz, fm = r->mem_mhz, hit = 1 - t->miss;
    double n_dp = r->inst_fp_64 / (32 * r->warps);
    t->warps = p->w_max * r->occupancy;
    t->l_dm = p->a_l * fc / fm + p->b_l;
    double d_dm = (p->a_d / fm + p->b_d) * fc / fm;
    t->l_mem = (t->l_dm + d_dm) * t->miss + p->l_l2 * hit;
    t->d_mem = d_dm * t->miss + p->d_l2 * hit;
    t->t_mem = t->n_g * t->d_mem * t->warps;
    double t_comp = p->d_inst * t->n_inst * t->warps * 32 / p->c_sm + p->l_inst;
    double t_sh = p->d_sh * t->n_sh * t->warps + p->l_sh;
    double t_dp = p->d_dp * n_dp * t->warps;
    t->t_sm = t_comp + t_sh + t_dp;
    t->t_tex = t->n_tex * t->warps * p->d_tex / p->tex_units;
}

/* Enough warps: the longer of the SM pipes and memory, plus one DRAM
 * latency (the first miss, never hidden). */
static double hidden(const terms *t, bool skip_cold_miss, tw_dvfs_regime *regime)
{
    *regime = t->t_sm > t->t_mem ? TW_DVFS_COMPUTE : TW_DVFS_MEMORY;
    double c = fmax(t->t_sm, t->t_mem);
    return skip_cold_miss ? c : c + t->l_dm;
}

/* Too few warps: a warp waits on its own requests, or the others fill the wait. */
static double latency_bound(const tw_dvfs_params *p, const terms *t)
{
    double o = p->l_inst * t->n_inst / t->n_g; /* compute between two memory requests */
    double wait = t->l_mem + o + t->d_mem * t->warps + (o + t->l_mem) * (t->n_g - 1) / OUTSTANDING;
    double no_wait = o * (t->warps - 1) + (o + t->l_mem) * t->n_g / OUTSTANDING;
    return fmax(wait, no_wait);
}

static bool is_app(const tw_dvfs_row *r, const char *name) { return !strcmp(r->app, name); }

/* §2.7: what the published code does for some kernels by name. */
static double paper_cycles(const tw_dvfs_params *p, const tw_dvfs_row *r, terms *t, tw_dvfs_regime *regime)
{
    bool v100 = !strcmp(p->name, "v100");
    if (is_app(r, "convolutionTexture")) t->t_mem += t->t_tex;
    if (is_app(r, "reduction") && !v100) t->t_sm += 0.5 * 32 * t->n_br * t->warps;
    double threshold = v100 ? 0.25 : p->occ_threshold;
    double c;
    if (r->occupancy > threshold) {
        bool nn_hidden = is_app(r, "nn") && fmax(t->t_sm, t->t_mem) >= 2800;
        c = hidden(t, nn_hidden, regime);
    } else {
        *regime = TW_DVFS_LATENCY;
        c = latency_bound(p, t);
    }
    if (v100 && (is_app(r, "matrixMulGlobal") || is_app(r, "conjugateGradient") || is_app(r, "histogram")))
        c += t->t_tex;
    /* the regime stays the one classified above, as in the authors' reports */
    if (v100 && is_app(r, "quasirandomGenerator")) {
        c = t->n_g * t->l_mem / OUTSTANDING + t->n_inst * p->l_inst + t->n_sh * p->l_sh;
    }
    return c;
}

tw_status tw_dvfs_predict(const tw_dvfs_params *p, const tw_dvfs_row *r, bool paper_compat, tw_dvfs_prediction *out)
{
    terms t;
    per_warp(r, &t);
    cycle_terms(p, r, &t);
    tw_dvfs_regime regime;
    double c;
    if (paper_compat) {
        c = paper_cycles(p, r, &t, &regime);
    } else if (r->occupancy > p->occ_threshold) {
        c = hidden(&t, false, &regime);
    } else {
        regime = TW_DVFS_LATENCY;
        c = latency_bound(p, &t);
    }
    if (!isfinite(c) || !(c > 0))
        return tw_fail(TW_EINVAL, "line %lu (%s at %.0f/%.0f MHz): no finite prediction (no global memory traffic?)",
                       r->line, r->app, r->core_mhz, r->mem_mhz);
    double rounds = r->warps / (p->w_max * p->n_sm * r->occupancy); /* fractional: no tail effect */
    *out = (tw_dvfs_prediction){
        .cycles = c,
        .real_cycles = r->time_ms * r->core_mhz * 1000 / rounds,
        .rounds = rounds,
        .time_ms = c * rounds / (r->core_mhz * 1000),
        .regime = regime,
        .n_g = t.n_g,
        .n_sh = t.n_sh,
        .n_inst = t.n_inst,
        .miss = t.miss,
        .l_dm = t.l_dm,
        .d_dm = (p->a_d / r->mem_mhz + p->b_d) * r->core_mhz / r->mem_mhz,
        .t_mem = t.t_mem,
        .t_sm = t.t_sm,
    };
    return TW_OK;
}

/* ---------------------------------------------------------------- parameter files */

static const struct {
    const char *key;
    size_t offset;
} param_keys[] = {
    {"a_L", offsetof(tw_dvfs_params, a_l)},
    {"b_L", offsetof(tw_dvfs_params, b_l)},
    {"a_D", offsetof(tw_dvfs_params, a_d)},
    {"b_D", offsetof(tw_dvfs_params, b_d)},
    {"L_L2", offsetof(tw_dvfs_params, l_l2)},
    {"D_L2", offsetof(tw_dvfs_params, d_l2)},
    {"L_INST", offsetof(tw_dvfs_params, l_inst)},
    {"D_INST", offsetof(tw_dvfs_params, d_inst)},
    {"L_sh", offsetof(tw_dvfs_params, l_sh)},
    {"D_sh", offsetof(tw_dvfs_params, d_sh)},
    {"D_DP", offsetof(tw_dvfs_params, d_dp)},
    {"D_TEX", offsetof(tw_dvfs_params, d_tex)},
    {"TEX_UNITS", offsetof(tw_dvfs_params, tex_units)},
    {"W_max", offsetof(tw_dvfs_params, w_max)},
    {"N_SM", offsetof(tw_dvfs_params, n_sm)},
    {"C_SM", offsetof(tw_dvfs_params, c_sm)},
    {"occ_threshold", offsetof(tw_dvfs_params, occ_threshold)},
};

static tw_status params_from_json(const tw_json *doc, const char *path, tw_dvfs_params *p)
{
    const char *name = tw_json_string(tw_json_get(doc, "name"));
    const char *source = tw_json_string(tw_json_get(doc, "source"));
    if (!name || !name[0] || strlen(name) >= sizeof p->name)
        return tw_fail(TW_EPARSE, "%s: \"name\" must be a string of 1 to %zu characters", path, sizeof p->name - 1);
    if (!source || !source[0]) return tw_fail(TW_EPARSE, "%s: \"source\" must say where the numbers come from", path);
    snprintf(p->name, sizeof p->name, "%s", name);
    snprintf(p->source, sizeof p->source, "%s", source);
    for (size_t k = 0; k < sizeof param_keys / sizeof param_keys[0]; k++) {
        double v = tw_json_number(tw_json_get(doc, param_keys[k].key));
        /* a_L and a_D may be 0: the memory-clock terms of a set measured at one clock pair (hwparams.h) */
        bool zero_ok = param_keys[k].offset == offsetof(tw_dvfs_params, a_l) ||
                       param_keys[k].offset == offsetof(tw_dvfs_params, a_d);
        if (!(isfinite(v) && (v > 0 || (zero_ok && v == 0))))
            return tw_fail(TW_EPARSE, "%s: \"%s\" must be a positive number%s", path, param_keys[k].key,
                           zero_ok ? " or 0" : "");
        *(double *)((char *)p + param_keys[k].offset) = v;
    }
    if (p->occ_threshold >= 1) return tw_fail(TW_EPARSE, "%s: \"occ_threshold\" must be below 1", path);
    return TW_OK;
}

tw_status tw_dvfs_params_load(const char *path, tw_dvfs_params *p)
{
    tw_json *doc = NULL;
    tw_status st = tw_json_load(path, &doc);
    if (st != TW_OK) return st;
    memset(p, 0, sizeof *p);
    if (tw_json_type_of(doc) != TW_JSON_OBJECT)
        st = tw_fail(TW_EPARSE, "%s: a parameter set is a JSON object", path);
    else
        st = params_from_json(doc, path, p);
    tw_json_free(doc);
    return st;
}

tw_status tw_dvfs_params_write(FILE *f, const tw_dvfs_params *p)
{
    json j;
    json_init(&j, f);
    json_begin_object(&j);
    json_kv_string(&j, "name", p->name);
    json_kv_string(&j, "source", p->source);
    for (size_t k = 0; k < sizeof param_keys / sizeof param_keys[0]; k++)
        json_kv_number(&j, param_keys[k].key, *(const double *)((const char *)p + param_keys[k].offset));
    json_end_object(&j);
    json_finish(&j);
    return ferror(f) ? tw_fail(TW_EIO, "cannot write the parameter set %s", p->name) : TW_OK;
}
