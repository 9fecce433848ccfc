/* `truewatt dvfs params` as a library call (tw_dvfs_params_report): Wang &
 * Chu's hardware parameters of the local GPU by microbenchmarks
 * (src/dvfs/ubench.c), at the clocks it runs at now: nothing is set. Writes
 * a parameter file that eval, fit and predict read. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "core/error.h"
#include "core/json.h"
#include "dvfs/hwparams.h"
#include "dvfs/model.h"
#include "dvfs/report.h"
#include "dvfs/ubench.h"
#include "gpu/gpu.h"

/* The microbenchmarks' progress lines, as notes. */
static void progress(void *ctx, const char *line)
{
    const tw_dvfs_options *o = ctx;
    tw_dvfs_note(o, "%s", line);
}

/* NVML's current clocks of the device, for the memory clock (and the SM clock beside the measured one). */
static tw_status nvml_clocks(const tw_dvfs_options *a, tw_clock_now *now)
{
    *now = (tw_clock_now){.size = sizeof *now};
    char dev[16];
    snprintf(dev, sizeof dev, "%d", a->gpu_index);
    tw_clocks *c = NULL;
    tw_status st = tw_clocks_open(NULL, dev, &c);
    if (st == TW_OK) st = tw_clocks_current(c, now);
    tw_clocks_close(c);
    if (st == TW_OK && now->have_mem) return TW_OK;
    if (a->mem_mhz > 0) return TW_OK;
    char why[1024];
    snprintf(why, sizeof why, "%s", st == TW_OK ? "NVML does not report it" : tw_last_error());
    return tw_fail(st == TW_OK ? TW_EUNSUPPORTED : st, "the memory clock: %s; give it with --mem-mhz", why);
}

typedef struct row_def {
    const char *key, *what;
    double value;
} row_def;

static void print_text(FILE *out, const tw_dvfs_ubench *u, const tw_dvfs_measured *m, const tw_dvfs_params *p,
                       const tw_clock_now *now, double fm)
{
    fprintf(out, "Wang & Chu hardware parameters of %s (cc %d.%d, %d SMs), measured\n", u->gpu, u->cc / 10, u->cc % 10,
            u->n_sm);
    fprintf(out, "SM clock %.0f MHz (measured in the kernels), memory clock %.0f MHz\n", u->sm_mhz, fm);
    if (now->have_sm) fprintf(out, "  (NVML's SM clock at the start: %u MHz)\n", now->sm_mhz);
    fprintf(out, "\n%-8s %10s  %s\n", "param", "cycles", "measured as");
    const row_def rows[] = {
        {"L_DM", "DRAM latency: a chase over 1 GiB, one thread", m->l_dm},
        {"L_L2", "L2 hit latency: a chase over the near partition", m->l_l2},
        {"L_sh", "shared-memory latency: a chase", m->l_sh},
        {"L_INST", "dependent FP32 FMA latency", m->l_inst},
        {"D_INST", "FP32 issue delay: cycles*C_SM/32 per warp FMA per warp", m->d_inst},
        {"D_DP", "FP64 FMA cycles per warp instruction per warp", m->d_dp},
        {"D_sh", "shared 32-bit load cycles per warp instruction per warp", m->d_sh},
        {"D_L2", "L2 departure delay: SM cycles per sector per SM", m->d_l2},
        {"D_DM", "DRAM departure delay: SM cycles per sector per SM", m->d_dm},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        fprintf(out, "%-8s %10.3f  %s\n", rows[i].key, rows[i].value, rows[i].what);
    fprintf(out, "\nbandwidth: L2-resident read %.0f GB/s, DRAM copy %.0f GB/s (reads + writes)\n", m->bw_l2_gbs,
            m->bw_dram_gbs);
    fprintf(out, "model form (one clock pair: b_L = L_L2 and a_D = 0 assumed):\n");
    fprintf(out, "  a_L %.3f  b_L %.3f  a_D %.3f  b_D %.4f  W_max %.0f  N_SM %.0f  C_SM %.0f  threshold %.2f\n", p->a_l,
            p->b_l, p->a_d, p->b_d, p->w_max, p->n_sm, p->c_sm, p->occ_threshold);
}

static void json_chain(json *j, const char *key, const tw_dvfs_chain *c)
{
    json_key(j, key);
    json_begin_object(j);
    json_kv_number(j, "steps", c->steps);
    json_kv_number(j, "cycles", c->cycles);
    json_end_object(j);
}

static void json_pipe(json *j, const char *key, const tw_dvfs_pipe *p)
{
    json_key(j, key);
    json_begin_object(j);
    json_kv_number(j, "warps_per_sm", p->warps_per_sm);
    json_kv_number(j, "insts_per_warp", p->insts_per_warp);
    json_kv_number(j, "cycles", p->cycles);
    json_end_object(j);
}

static void json_stream(json *j, const char *key, const tw_dvfs_stream *s)
{
    json_key(j, key);
    json_begin_object(j);
    json_kv_number(j, "sectors", s->sectors);
    json_kv_number(j, "elapsed_ns", s->elapsed_ns);
    json_kv_number(j, "footprint_bytes", s->bytes_footprint);
    json_end_object(j);
}

static void write_ubench(FILE *f, const tw_dvfs_ubench *u, const tw_dvfs_measured *m, double fm,
                         const tw_clock_now *now)
{
    json j;
    json_init(&j, f);
    json_begin_object(&j);
    json_kv_string(&j, "gpu", u->gpu);
    json_kv_uint(&j, "cc", (uint64_t)u->cc);
    json_kv_uint(&j, "sm_count", (uint64_t)u->n_sm);
    json_kv_uint(&j, "threads_per_sm", (uint64_t)u->threads_per_sm);
    json_kv_uint(&j, "repeats", (uint64_t)u->repeats);
    json_kv_number(&j, "sm_mhz_measured", u->sm_mhz);
    if (now->have_sm) json_kv_number(&j, "sm_mhz_nvml", now->sm_mhz);
    json_kv_number(&j, "mem_mhz", fm);
    json_chain(&j, "dram_chase", &u->dram);
    json_kv_number(&j, "dram_chase_bytes", u->dram_chase_bytes);
    json_chain(&j, "l2_chase", &u->l2);
    json_kv_number(&j, "l2_chase_bytes", u->l2_chase_bytes);
    json_chain(&j, "shared_chase", &u->shared);
    json_chain(&j, "fma_chain", &u->fma);
    json_pipe(&j, "fp32_fma", &u->fp32);
    json_pipe(&j, "fp64_fma", &u->fp64);
    json_pipe(&j, "shared_load", &u->lds);
    json_stream(&j, "l2_read", &u->l2_read);
    json_stream(&j, "dram_copy", &u->dram_copy);
    json_key(&j, "measured_cycles");
    json_begin_object(&j);
    json_kv_number(&j, "L_DM", m->l_dm);
    json_kv_number(&j, "L_L2", m->l_l2);
    json_kv_number(&j, "L_sh", m->l_sh);
    json_kv_number(&j, "L_INST", m->l_inst);
    json_kv_number(&j, "D_INST", m->d_inst);
    json_kv_number(&j, "D_DP", m->d_dp);
    json_kv_number(&j, "D_sh", m->d_sh);
    json_kv_number(&j, "D_L2", m->d_l2);
    json_kv_number(&j, "D_DM", m->d_dm);
    json_end_object(&j);
    json_kv_number(&j, "l2_read_gbs", m->bw_l2_gbs);
    json_kv_number(&j, "dram_copy_gbs", m->bw_dram_gbs);
    json_end_object(&j);
    json_finish(&j);
}

static tw_status write_files(const tw_dvfs_options *a, const tw_dvfs_ubench *u, const tw_dvfs_measured *m,
                             const tw_dvfs_params *p, double fm, const tw_clock_now *now)
{
    char path[4096];
    if (mkdir(a->out, 0777) != 0 && errno != EEXIST)
        return tw_fail(TW_EIO, "cannot create %s: %s", a->out, strerror(errno));
    snprintf(path, sizeof path, "%s/params.json", a->out);
    FILE *f = fopen(path, "w");
    if (!f) return tw_fail(TW_EIO, "cannot write %s: %s", path, strerror(errno));
    tw_status st = tw_dvfs_params_write(f, p);
    tw_status closed = tw_dvfs_close_out(f, path);
    if (st != TW_OK || closed != TW_OK) return st != TW_OK ? st : closed;
    snprintf(path, sizeof path, "%s/ubench.json", a->out);
    if (!(f = fopen(path, "w"))) return tw_fail(TW_EIO, "cannot write %s: %s", path, strerror(errno));
    write_ubench(f, u, m, fm, now);
    if ((st = tw_dvfs_close_out(f, path)) != TW_OK) return st;
    tw_dvfs_note(a, "wrote %s/params.json and %s/ubench.json", a->out, a->out);
    return TW_OK;
}

tw_status tw_dvfs_params_report(const tw_dvfs_options *a, FILE *out)
{
    if (!a || !out || a->size < sizeof *a || !a->out || a->repeats < 1)
        return tw_fail(TW_EINVAL, "dvfs params: initialised options with an output folder, and a stream");
    tw_clock_now now = {.size = sizeof now};
    tw_status st = nvml_clocks(a, &now);
    if (st != TW_OK) return st;
    double fm = a->mem_mhz > 0 ? a->mem_mhz : now.mem_mhz;
    tw_gpu *g = NULL;
    if ((st = tw_gpu_open(NULL, a->gpu_index, &g)) != TW_OK) return st;
    tw_dvfs_ubench u;
    st = tw_dvfs_ubench_run(g, a->repeats, progress, (void *)a, &u);
    tw_gpu_close(g);
    if (st != TW_OK) return st;
    tw_dvfs_measured m;
    tw_dvfs_params p;
    if ((st = tw_dvfs_measured_from(&u, &m)) != TW_OK || (st = tw_dvfs_params_from(&u, &m, fm, &p)) != TW_OK) return st;
    if (a->json)
        write_ubench(out, &u, &m, fm, &now);
    else
        print_text(out, &u, &m, &p, &now, fm);
    return write_files(a, &u, &m, &p, fm, &now);
}
