/* Microbenchmark numbers to model parameters (see hwparams.h). */
#include "dvfs/hwparams.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/error.h"

int tw_dvfs_fp32_lanes(int cc)
{
    if (cc == 60 || (cc >= 70 && cc < 80) || cc == 80) return 64;
    return 128;
}

static bool positive(double x) { return isfinite(x) && x > 0; }

static double per_step(const tw_dvfs_chain *c) { return c->steps > 0 ? c->cycles / c->steps : NAN; }

/* The model's T = D * n * W (per SM): D = cycles / (n * W). */
static double per_warp_inst(const tw_dvfs_pipe *p)
{
    double work = p->insts_per_warp * p->warps_per_sm;
    return work > 0 ? p->cycles / work : NAN;
}

/* SM cycles per sector per SM: the elapsed cycles times the SMs over the sectors. */
static double per_sector(const tw_dvfs_stream *s, double sm_mhz, int n_sm)
{
    double cycles = s->elapsed_ns * 1e-3 * sm_mhz;
    return s->sectors > 0 ? cycles * n_sm / s->sectors : NAN;
}

static double gbs(const tw_dvfs_stream *s) { return s->elapsed_ns > 0 ? 32.0 * s->sectors / s->elapsed_ns : NAN; }

tw_status tw_dvfs_measured_from(const tw_dvfs_ubench *u, tw_dvfs_measured *m)
{
    memset(m, 0, sizeof *m);
    if (!positive(u->sm_mhz)) return tw_fail(TW_EINVAL, "dvfs params: no SM clock measured");
    if (u->n_sm <= 0) return tw_fail(TW_EINVAL, "dvfs params: no SM count");
    m->l_dm = per_step(&u->dram);
    m->l_l2 = per_step(&u->l2);
    m->l_sh = per_step(&u->shared);
    m->l_inst = per_step(&u->fma);
    /* T_comp = D_INST * n_inst * W * 32 / C_SM */
    m->d_inst = per_warp_inst(&u->fp32) * tw_dvfs_fp32_lanes(u->cc) / 32.0;
    m->d_dp = per_warp_inst(&u->fp64);
    m->d_sh = per_warp_inst(&u->lds);
    m->d_l2 = per_sector(&u->l2_read, u->sm_mhz, u->n_sm);
    m->d_dm = per_sector(&u->dram_copy, u->sm_mhz, u->n_sm);
    m->bw_l2_gbs = gbs(&u->l2_read);
    m->bw_dram_gbs = gbs(&u->dram_copy);
    const struct {
        const char *name;
        double v;
    } all[] = {{"DRAM latency", m->l_dm},       {"L2 latency", m->l_l2},         {"shared-memory latency", m->l_sh},
               {"FMA latency", m->l_inst},      {"FP32 issue delay", m->d_inst}, {"FP64 issue delay", m->d_dp},
               {"shared issue delay", m->d_sh}, {"L2 departure delay", m->d_l2}, {"DRAM departure delay", m->d_dm}};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (!positive(all[i].v)) return tw_fail(TW_EINVAL, "dvfs params: %s not measured (%g)", all[i].name, all[i].v);
    return TW_OK;
}

tw_status tw_dvfs_params_from(const tw_dvfs_ubench *u, const tw_dvfs_measured *m, double mem_mhz, tw_dvfs_params *p)
{
    if (!positive(mem_mhz)) return tw_fail(TW_EINVAL, "dvfs params: memory clock %g MHz is not one", mem_mhz);
    if (m->l_dm <= m->l_l2)
        return tw_fail(TW_EINVAL, "dvfs params: DRAM latency %.1f cycles is not above the L2's %.1f", m->l_dm, m->l_l2);
    memset(p, 0, sizeof *p);
    snprintf(p->name, sizeof p->name, "measured");
    double fc = u->sm_mhz, fm = mem_mhz;
    snprintf(p->source, sizeof p->source,
             "truewatt dvfs params on %s at SM %.0f MHz (measured), memory %.0f MHz; b_L = L_L2 and a_D = 0 assumed "
             "(one clock pair)",
             u->gpu, fc, fm);
    p->b_l = m->l_l2;
    p->a_l = (m->l_dm - m->l_l2) * fm / fc;
    p->a_d = 0;
    p->b_d = m->d_dm * fm / fc;
    p->l_l2 = m->l_l2;
    p->d_l2 = m->d_l2;
    p->l_inst = m->l_inst;
    p->d_inst = m->d_inst;
    p->l_sh = m->l_sh;
    p->d_sh = m->d_sh;
    p->d_dp = m->d_dp;
    p->d_tex = 1;
    p->tex_units = 4;
    p->w_max = u->threads_per_sm > 0 ? u->threads_per_sm / 32.0 : 64;
    p->n_sm = u->n_sm;
    p->c_sm = tw_dvfs_fp32_lanes(u->cc);
    p->occ_threshold = 0.30;
    return TW_OK;
}
