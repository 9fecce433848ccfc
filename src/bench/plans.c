/* The experiments' schedules; see plans.h. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/plans.h"
#include "bench/repeat.h"
#include "core/error.h"
#include "core/rng.h"

const double tw_val_lin_t_s[TW_VAL_NLIN] = {0.1, 0.5, 2.0};
const double tw_val_gap_s[TW_VAL_NGAP] = {0.05, 0.3, 1.0};
const double tw_val_short_s[TW_VAL_NSHORT] = {0.001, 0.003, 0.010, 0.030, 0.100};

#define PLAN_SEED 0x7477u   /* the schedules are pseudo-random but fixed */
#define SETTLE_S 3.0        /* after a load: the 1 s boxcar and a K20 RC (C = 0.84 s) settle */
#define SENSOR_PERIOD_S 0.1 /* the update period the repetition shifts against (H100, A100) */

void tw_plan_len_label(double s, char *out, size_t cap)
{
    if (s >= 0.1 - 1e-9)
        snprintf(out, cap, "%gs", s);
    else
        snprintf(out, cap, "%gms", round(s * 1e4) / 10);
}

#define TRY(call)                                                                                                      \
    do {                                                                                                               \
        tw_status st_ = (call);                                                                                        \
        if (st_ != TW_OK) return st_;                                                                                  \
    } while (0)

/* ---------------------------------------------------------------- identification */

static tw_status square_wave(tw_exec *x, const char *label, double half_s, int cycles)
{
    for (int i = 0; i < cycles; i++) {
        TRY(tw_exec_block(x, label, half_s, 1));
        TRY(tw_exec_idle(x, half_s));
    }
    return TW_OK;
}

/* Isolated kernels of 1 ms to 1 s in a shuffled order at pseudo-random gaps. */
static tw_status isolated_kernels(tw_exec *x)
{
    static const double len_s[] = {0.001, 0.003, 0.010, 0.030, 0.100, 0.300, 1.0};
    static const int count[] = {16, 16, 16, 12, 8, 4, 2};
    enum { NLEN = sizeof len_s / sizeof len_s[0], MAXK = 16 * 7 };
    double order[MAXK];
    int n = 0;
    for (int i = 0; i < NLEN; i++)
        for (int j = 0; j < count[i]; j++)
            order[n++] = len_s[i];
    tw_rng rng;
    tw_rng_seed(&rng, PLAN_SEED, 1);
    for (int i = n - 1; i > 0; i--) {
        int j = (int)(tw_rng_uniform(&rng) * (i + 1));
        if (j > i) j = i;
        double t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    for (int i = 0; i < n; i++) {
        char label[32], len[16];
        tw_plan_len_label(order[i], len, sizeof len);
        snprintf(label, sizeof label, "id_k%s", len);
        TRY(tw_exec_block(x, label, order[i], 1));
        TRY(tw_exec_idle(x, order[i] >= 0.3 ? tw_rng_range(&rng, 0.6, 1.0) : tw_rng_range(&rng, 0.15, 0.45)));
    }
    return TW_OK;
}

tw_status tw_plan_identify(tw_exec *x)
{
    TRY(tw_exec_idle(x, TW_PLAN_PRECONTEXT_S));
    TRY(tw_exec_context(x));
    TRY(tw_exec_idle(x, TW_PLAN_ACTIVE_IDLE_S));
    TRY(tw_exec_block(x, "id_step_4s", 4.0, 1));
    TRY(tw_exec_idle(x, SETTLE_S));
    TRY(tw_exec_block(x, "id_step_2s", 2.0, 1));
    TRY(tw_exec_idle(x, SETTLE_S));
    TRY(square_wave(x, "id_sq_50ms", 0.05, 20));
    TRY(tw_exec_idle(x, 1.5));
    TRY(square_wave(x, "id_sq_200ms", 0.2, 6));
    TRY(tw_exec_idle(x, 1.5));
    TRY(isolated_kernels(x));
    return tw_exec_idle(x, SETTLE_S);
}

/* ---------------------------------------------------------------- validation */

tw_status tw_plan_repeat(tw_exec *x, const char *label, double kernel_s, size_t per_block, size_t blocks, size_t phases,
                         double period_s, double base_gap_s)
{
    if (phases == 0) return tw_fail(TW_EINVAL, "repetition: phases must be >= 1");
    for (size_t b = 0; b < blocks; b++) {
        TRY(tw_exec_block(x, label, kernel_s, per_block));
        TRY(tw_exec_idle(x, tw_repeat_gap_s(b, phases, period_s, base_gap_s)));
    }
    return TW_OK;
}

static tw_status linearity(tw_exec *x)
{
    for (int rep = 0; rep < TW_VAL_LIN_REPS; rep++) {
        for (int i = 0; i < TW_VAL_NLIN; i++) {
            char len[16], a[48], b[48];
            tw_plan_len_label(tw_val_lin_t_s[i], len, sizeof len);
            snprintf(a, sizeof a, "lin_%s_T", len);
            snprintf(b, sizeof b, "lin_%s_2T", len);
            TRY(tw_exec_block(x, a, tw_val_lin_t_s[i], 1));
            TRY(tw_exec_idle(x, SETTLE_S));
            TRY(tw_exec_block(x, b, 2 * tw_val_lin_t_s[i], 1));
            TRY(tw_exec_idle(x, SETTLE_S));
        }
    }
    return TW_OK;
}

static tw_status back_to_back(tw_exec *x)
{
    for (int rep = 0; rep < TW_VAL_REPS; rep++) {
        for (int i = 0; i < TW_VAL_NGAP; i++) {
            char len[16], a[48], b[48];
            tw_plan_len_label(tw_val_gap_s[i], len, sizeof len);
            snprintf(a, sizeof a, "b2b_%s_first", len);
            snprintf(b, sizeof b, "b2b_%s_second", len);
            TRY(tw_exec_block(x, a, TW_VAL_B2B_KERNEL_S, 1));
            TRY(tw_exec_idle(x, tw_val_gap_s[i]));
            TRY(tw_exec_block(x, b, TW_VAL_B2B_KERNEL_S, 1));
            TRY(tw_exec_idle(x, SETTLE_S));
        }
    }
    return TW_OK;
}

static size_t launches_for(double total_s, double kernel_s) { return (size_t)ceil(total_s / kernel_s - 1e-9); }

static tw_status short_kernels(tw_exec *x)
{
    tw_rng rng;
    tw_rng_seed(&rng, PLAN_SEED, 2);
    for (int i = 0; i < TW_VAL_NSHORT; i++) {
        double d = tw_val_short_s[i];
        char len[16], ref[48], iso[48], rep[48];
        tw_plan_len_label(d, len, sizeof len);
        snprintf(ref, sizeof ref, "short_%s_ref", len);
        snprintf(iso, sizeof iso, "short_%s_iso", len);
        snprintf(rep, sizeof rep, "short_%s_rep", len);
        TRY(tw_exec_block(x, ref, d, launches_for(4.0, d)));
        TRY(tw_exec_idle(x, 1.5));
        for (int k = 0; k < TW_VAL_ISO; k++) {
            TRY(tw_exec_block(x, iso, d, 1));
            TRY(tw_exec_idle(x, tw_rng_range(&rng, 0.05, 0.15)));
        }
        TRY(tw_exec_idle(x, 1.0));
        TRY(tw_plan_repeat(x, rep, d, launches_for(0.2, d), 8, 4, SENSOR_PERIOD_S, 0.3));
        TRY(tw_exec_idle(x, 1.5));
    }
    return TW_OK;
}

static tw_status loads(tw_exec *x)
{
    TRY(tw_exec_block(x, "load_steady", TW_VAL_LOAD_S, 1));
    TRY(tw_exec_idle(x, SETTLE_S));
    /* 10 s of 30 ms on, 70 ms off: what a 25 %-coverage reading sees depends on phase */
    for (int i = 0; i < (int)(TW_VAL_LOAD_S / 0.1); i++) {
        TRY(tw_exec_block(x, "load_square", 0.03, 1));
        TRY(tw_exec_idle(x, 0.07));
    }
    return tw_exec_idle(x, SETTLE_S);
}

tw_status tw_plan_validate(tw_exec *x)
{
    TRY(linearity(x));
    TRY(back_to_back(x));
    TRY(short_kernels(x));
    return loads(x);
}

/* ---------------------------------------------------------------- planned length */

/* An executor that only keeps time, to know a schedule's length. */
static tw_status timer_context(tw_exec *x)
{
    x->context_s = x->now_s;
    return TW_OK;
}
static tw_status timer_idle(tw_exec *x, double s)
{
    x->now_s += s;
    return TW_OK;
}
static tw_status timer_block(tw_exec *x, const char *label, double kernel_s, size_t count)
{
    (void)label;
    x->now_s += kernel_s * (double)count;
    return TW_OK;
}
static tw_status timer_finish(tw_exec *x)
{
    (void)x;
    return TW_OK;
}
static void timer_destroy(tw_exec *x) { (void)x; }

static tw_status timer_kernel(tw_exec *x, const tw_exec_kernel *k, size_t count)
{
    x->now_s += k->sim_s * (double)count;
    return TW_OK;
}

static const tw_exec_ops timer_ops = {.name = "timer",
                                      .context = timer_context,
                                      .idle = timer_idle,
                                      .block = timer_block,
                                      .kernel = timer_kernel,
                                      .finish = timer_finish,
                                      .destroy = timer_destroy};

static double planned_s(tw_status (*plan)(tw_exec *), bool with_context)
{
    tw_exec x;
    memset(&x, 0, sizeof x);
    x.ops = &timer_ops;
    x.context_s = with_context ? 0.0 : NAN;
    return plan(&x) == TW_OK ? x.now_s : NAN;
}

double tw_plan_identify_s(void) { return planned_s(tw_plan_identify, false); }
double tw_plan_validate_s(void) { return planned_s(tw_plan_validate, true); }
