/* The executor on a real GPU: the sampler records every NVML reading from
 * the start (the pre-context phase), the driver layer creates the context
 * and runs the FMA spin kernel, calibrated to the requested lengths, with
 * CUDA events around every launch so each kernel's span is known to
 * microseconds on the trace's timeline. Nothing on the card is changed:
 * clocks and limits are left as they are. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench/exec.h"
#include "core/error.h"
#include "gpu/gpu.h"

#define SPIN_BLOCK 256u
#define SPIN_BLOCKS_PER_SM 4u /* one resident wave on every SM */
#define CAL_SHORT_ITERS 2000ull
#define CAL_ROUNDS 3
/* The energy counter is polled this often (each read costs ~4 ms of CPU on an
 * H100: one core is spent during an experiment, so that its ~100 ms updates
 * are located to a few ms). */
#define EXPERIMENT_SLOW_PERIOD_S 0.005
/* ... and the power readings every 1 ms, whatever `run`'s sampling plan says:
 * identification times each reading's updates. */
#define EXPERIMENT_FAST_PERIOD_S 0.001

typedef struct gpu_exec {
    tw_exec x; /* first: the executor is cast back and forth */
    tw_exec_gpu_config cfg;
    char *trace_path, *events_path;
    uint64_t t0_ns;
    tw_sampler *sampler;
    tw_gpu *gpu;
    tw_gpu_module *mod;
    tw_gpu_fn spin;
    tw_gpu_ptr out;
    unsigned grid;
    double ms_per_iter, ms_fixed; /* spin duration = fixed + per_iter * iterations */
    double *offsets_ms;
    size_t offsets_cap;
    /* caller kernels: modules loaded once per (PTX text, JIT level), one output buffer */
    struct loaded {
        char *ptx;
        int opt_level;
        tw_gpu_module *mod;
    } * loaded;
    size_t nloaded;
    tw_gpu_ptr user_out;
    size_t user_out_bytes;
} gpu_exec;

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static double now_s(const gpu_exec *g) { return (double)(mono_ns() - g->t0_ns) * 1e-9; }

static void sleep_until(const gpu_exec *g, double t_s)
{
    uint64_t target = g->t0_ns + (uint64_t)(t_s * 1e9);
    struct timespec ts = {(time_t)(target / 1000000000ull), (long)(target % 1000000000ull)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) != 0) {
        /* interrupted by a signal: the caller's cancel flag decides */
        if (g->x.cancel && *g->x.cancel) return;
    }
}

static tw_status ensure_offsets(gpu_exec *g, size_t count)
{
    if (count + 1 <= g->offsets_cap) return TW_OK;
    double *p = realloc(g->offsets_ms, (count + 1) * sizeof *p);
    if (!p) return tw_fail(TW_ENOMEM, "out of memory (%zu kernel timings)", count);
    g->offsets_ms = p;
    g->offsets_cap = count + 1;
    return TW_OK;
}

/* Runs `count` spin kernels of `iters` back to back and records them as
 * events named `label`; x->now_s moves to the end of the last one. */
static tw_status run_spin(gpu_exec *g, const char *label, uint64_t iters, size_t count)
{
    tw_status st = ensure_offsets(g, count);
    if (st != TW_OK) return st;
    void *args[] = {&g->out, &iters};
    double t_before = now_s(g);
    st = tw_gpu_run_block(&g->spin, g->grid, SPIN_BLOCK, args, count, g->offsets_ms);
    if (st != TW_OK) return st;
    for (size_t i = 0; i < count && st == TW_OK; i++)
        st = tw_exec_add_event(&g->x, label, NULL, t_before + g->offsets_ms[i] * 1e-3,
                               t_before + g->offsets_ms[i + 1] * 1e-3);
    g->x.now_s = fmax(now_s(g), t_before + g->offsets_ms[count] * 1e-3);
    return st;
}

/* Kernel time is linear in iterations: two lengths give the slope and the
 * fixed part (launch and ramp), each the fastest of a few tries. */
static tw_status calibrate(gpu_exec *g)
{
    uint64_t iters[2] = {CAL_SHORT_ITERS, CAL_SHORT_ITERS * 20};
    double best[2] = {INFINITY, INFINITY};
    for (int round = 0; round < CAL_ROUNDS; round++) {
        for (int k = 0; k < 2; k++) {
            size_t before = tw_events_count(g->x.events);
            tw_status st = run_spin(g, "calibrate", iters[k], 1);
            if (st != TW_OK) return st;
            const tw_event *e = tw_events_get(g->x.events, before);
            best[k] = fmin(best[k], (e->end_s - e->start_s) * 1e3);
        }
    }
    g->ms_per_iter = (best[1] - best[0]) / (double)(iters[1] - iters[0]);
    g->ms_fixed = fmax(0.0, best[0] - g->ms_per_iter * (double)iters[0]);
    if (!(g->ms_per_iter > 0))
        return tw_fail(TW_ENUMERIC, "spin calibration failed: %.3f ms for %llu iterations, %.3f ms for %llu", best[0],
                       (unsigned long long)iters[0], best[1], (unsigned long long)iters[1]);
    return TW_OK;
}

static tw_status gpu_context(tw_exec *x)
{
    gpu_exec *g = (gpu_exec *)x;
    double t_open = now_s(g);
    tw_status st = tw_gpu_open(g->cfg.cuda_library, g->cfg.device, &g->gpu);
    if (st != TW_OK) return st;
    x->context_s = now_s(g);
    if ((st = tw_exec_add_event(x, "context", "marker", t_open, x->context_s)) != TW_OK) return st;
    if ((st = tw_gpu_load_ptx(g->gpu, tw_gpu_calibration_ptx(), &g->mod)) != TW_OK) return st;
    if ((st = tw_gpu_kernel(g->mod, "tw_spin_fma", &g->spin)) != TW_OK) return st;
    x->sm_count = tw_gpu_sm_count(g->gpu);
    x->l2_bytes = tw_gpu_l2_bytes(g->gpu);
    x->smem_per_sm_bytes = tw_gpu_smem_per_sm_bytes(g->gpu);
    x->cc = tw_gpu_cc(g->gpu);
    g->grid = (unsigned)x->sm_count * SPIN_BLOCKS_PER_SM;
    if ((st = tw_gpu_alloc(g->gpu, (size_t)g->grid * SPIN_BLOCK * sizeof(float), &g->out)) != TW_OK) return st;
    return calibrate(g);
}

static tw_status gpu_idle(tw_exec *x, double s)
{
    gpu_exec *g = (gpu_exec *)x;
    x->now_s += s;
    sleep_until(g, x->now_s);
    return TW_OK;
}

static tw_status gpu_block(tw_exec *x, const char *label, double kernel_s, size_t count)
{
    gpu_exec *g = (gpu_exec *)x;
    double iters = (kernel_s * 1e3 - g->ms_fixed) / g->ms_per_iter;
    return run_spin(g, label, (uint64_t)fmax(1.0, round(iters)), count);
}

/* The module of k, loaded on first use. */
static tw_status module_for(gpu_exec *g, const tw_exec_kernel *k, tw_gpu_module **out)
{
    for (size_t i = 0; i < g->nloaded; i++)
        if (g->loaded[i].opt_level == k->opt_level && !strcmp(g->loaded[i].ptx, k->ptx)) {
            *out = g->loaded[i].mod;
            return TW_OK;
        }
    struct loaded *p = realloc(g->loaded, (g->nloaded + 1) * sizeof *p);
    if (!p) return tw_fail(TW_ENOMEM, "out of memory (modules)");
    g->loaded = p;
    tw_status st = tw_gpu_load_ptx_opt(g->gpu, k->ptx, k->opt_level, out);
    if (st != TW_OK) return st;
    char *copy = strdup(k->ptx);
    if (!copy) {
        tw_gpu_module_unload(*out);
        return tw_fail(TW_ENOMEM, "out of memory (modules)");
    }
    g->loaded[g->nloaded++] = (struct loaded){copy, k->opt_level, *out};
    return TW_OK;
}

static tw_status ensure_user_out(gpu_exec *g, size_t bytes)
{
    if (bytes <= g->user_out_bytes) return TW_OK;
    tw_gpu_free(g->gpu, g->user_out);
    g->user_out = 0;
    g->user_out_bytes = 0;
    tw_status st = tw_gpu_alloc(g->gpu, bytes, &g->user_out);
    if (st == TW_OK) g->user_out_bytes = bytes;
    return st;
}

static tw_status gpu_kernel(tw_exec *x, const tw_exec_kernel *k, size_t count)
{
    gpu_exec *g = (gpu_exec *)x;
    tw_gpu_module *mod = NULL;
    tw_gpu_fn fn;
    tw_status st = module_for(g, k, &mod);
    if (st == TW_OK) st = tw_gpu_kernel(mod, k->entry, &fn);
    size_t per_thread = (size_t)k->grid * k->block * 8;
    if (st == TW_OK) st = ensure_user_out(g, k->out_bytes > per_thread ? k->out_bytes : per_thread);
    if (st == TW_OK) st = ensure_offsets(g, count);
    if (st != TW_OK) return st;
    uint64_t iters = k->iterations, seed = k->seed;
    void *args[] = {&g->user_out, &iters, &seed};
    double t_before = now_s(g);
    if ((st = tw_gpu_run_block(&fn, k->grid, k->block, args, count, g->offsets_ms)) != TW_OK) return st;
    for (size_t i = 0; i < count && st == TW_OK; i++)
        st = tw_exec_add_event(x, k->label, NULL, t_before + g->offsets_ms[i] * 1e-3,
                               t_before + g->offsets_ms[i + 1] * 1e-3);
    x->now_s = fmax(now_s(g), t_before + g->offsets_ms[count] * 1e-3);
    return st;
}

static tw_status gpu_finish(tw_exec *x)
{
    gpu_exec *g = (gpu_exec *)x;
    tw_status st = TW_OK;
    if (g->sampler) {
        st = tw_sampler_stop(g->sampler);
        tw_sampler_free(g->sampler);
        g->sampler = NULL;
    }
    if (st != TW_OK) return st;
    if ((st = tw_events_save(x->events, g->events_path)) != TW_OK) return st;
    tw_sensor_config cfg = {.path = g->trace_path};
    return tw_sensor_open("replay", &cfg, &x->trace);
}

static void gpu_destroy(tw_exec *x)
{
    gpu_exec *g = (gpu_exec *)x;
    if (g->sampler) {
        (void)tw_sampler_stop(g->sampler);
        tw_sampler_free(g->sampler);
    }
    for (size_t i = 0; i < g->nloaded; i++) {
        tw_gpu_module_unload(g->loaded[i].mod);
        free(g->loaded[i].ptx);
    }
    free(g->loaded);
    if (g->gpu) {
        tw_gpu_free(g->gpu, g->user_out);
        tw_gpu_free(g->gpu, g->out);
        tw_gpu_module_unload(g->mod);
        tw_gpu_close(g->gpu);
    }
    free(g->offsets_ms);
    free(g->trace_path);
    free(g->events_path);
    free(g);
}

static const tw_exec_ops gpu_ops = {
    .name = "gpu",
    .context = gpu_context,
    .idle = gpu_idle,
    .block = gpu_block,
    .kernel = gpu_kernel,
    .finish = gpu_finish,
    .destroy = gpu_destroy,
};

/* The device's name and driver as NVML reports them. */
static void describe_device(gpu_exec *g)
{
    tw_device_info info[16];
    size_t n = 0;
    tw_sensor_config cfg = {.library = g->cfg.nvml_library};
    if (tw_backend_devices("nvml", &cfg, info, 16, &n) != TW_OK) return;
    for (size_t i = 0; i < n && i < 16; i++) {
        if ((int)info[i].index != g->cfg.device) continue;
        snprintf(g->x.gpu, sizeof g->x.gpu, "%s", info[i].name);
        snprintf(g->x.driver, sizeof g->x.driver, "%s", info[i].driver);
    }
}

static tw_status start_sampler(gpu_exec *g)
{
    /* the trace names its GPU and driver, so `analyze` finds their profile */
    char prov[2048];
    snprintf(prov, sizeof prov, "%s%sgpu %d: %s, driver %s", g->cfg.provenance ? g->cfg.provenance : "",
             g->cfg.provenance ? "; " : "", g->cfg.device, g->x.gpu[0] ? g->x.gpu : "unknown",
             g->x.driver[0] ? g->x.driver : "unknown");
    char dev[16];
    snprintf(dev, sizeof dev, "%d", g->cfg.device);
    const char *devices[] = {dev};
    tw_sensor_config base = {.library = g->cfg.nvml_library};
    tw_sampler_config sc = {.backend = "nvml",
                            .devices = devices,
                            .n_devices = 1,
                            .base = &base,
                            .trace_path = g->trace_path,
                            .fast_period_s = EXPERIMENT_FAST_PERIOD_S,
                            .slow_period_s = EXPERIMENT_SLOW_PERIOD_S,
                            .t0_mono_ns = g->t0_ns,
                            .provenance = prov};
    return tw_sampler_start(&sc, &g->sampler);
}

tw_status tw_exec_gpu_new(const tw_exec_gpu_config *cfg, tw_exec **out)
{
    if (!cfg || !out || !cfg->trace_path || !cfg->events_path)
        return tw_fail(TW_EINVAL, "tw_exec_gpu_new: NULL argument or path");
    *out = NULL;
    gpu_exec *g = calloc(1, sizeof *g);
    if (!g) return tw_fail(TW_ENOMEM, "out of memory (GPU executor)");
    g->cfg = *cfg;
    g->trace_path = strdup(cfg->trace_path);
    g->events_path = strdup(cfg->events_path);
    g->x.ops = &gpu_ops;
    g->x.context_s = NAN;
    g->x.true_idle_w = g->x.true_active_idle_w = g->x.true_step_w = NAN;
    snprintf(g->x.backend, sizeof g->x.backend, "nvml");
    tw_status st = g->trace_path && g->events_path ? tw_events_new(&g->x.events)
                                                   : tw_fail(TW_ENOMEM, "out of memory (GPU executor)");
    if (st == TW_OK) {
        describe_device(g);
        g->t0_ns = mono_ns();
        st = start_sampler(g);
    }
    if (st != TW_OK) {
        tw_events_free(g->x.events);
        g->x.events = NULL;
        gpu_destroy(&g->x);
        return st;
    }
    *out = &g->x;
    return TW_OK;
}
