/* truewatt measure-kernel: the energy per launch of one kernel, even one far
 * shorter than the sensor's update period. The plan is phase-shifted
 * repetition (after Yang et al. 2024): blocks of back-to-back launches whose
 * starts are spread over the phases of the best reading's update period, so
 * the sensor's windows see the kernel at every phase. The estimate is the
 * estimator's (estimate/estimator.h) over those launches and the steady
 * reference's, each name one unknown: per launch its energy over its
 * launches, with its standard error likewise. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bench/plans.h"
#include "bench/repeat.h"
#include "cli/cli.h"
#include "cli/experiment.h"
#include "correct/profile_pick.h"
#include "core/error.h"
#include "core/json.h"
#include "correct/identify.h"
#include "correct/observe.h"
#include "estimate/estimator.h"

#define CMD "measure-kernel"
#define REF_S 4.0 /* the steady-state reference block */

typedef struct mk_args {
    cli_exp_args exp;
    double dur_s, block_s, gap_s;
    uint64_t blocks, phases;
    const char *profile, *trace_out;
    bool reference, json;
} mk_args;

#define POSITIVE .min = 0, .max = INFINITY, .min_excl = true

/* The options, declared once (cli/opts.h). */
static int parse_args(int argc, char **argv, mk_args *a)
{
    double ms;
    bool no_reference;
    const cli_opt opt[] = {
        {.name = "duration-ms",
         .type = CLI_OPT_DOUBLE,
         .arg = "D",
         .def = "1",
         .help = "launch length",
         .out = &ms,
         POSITIVE},
        {.name = "blocks",
         .type = CLI_OPT_U64,
         .arg = "B",
         .def = "8",
         .help = "blocks",
         .out = &a->blocks,
         .min = 2,
         .max = 1000},
        {.name = "phases",
         .type = CLI_OPT_U64,
         .arg = "S",
         .def = "4",
         .help = "phases the blocks cycle through",
         .out = &a->phases,
         .min = 1,
         .max = 100},
        {.name = "block-s",
         .type = CLI_OPT_DOUBLE,
         .arg = "T",
         .def = "0.2",
         .help = "length of a block",
         .out = &a->block_s,
         POSITIVE},
        {.name = "gap-s",
         .type = CLI_OPT_DOUBLE,
         .arg = "G",
         .def = "0.3",
         .help = "shortest gap between blocks",
         .out = &a->gap_s,
         POSITIVE},
        {.name = "profile",
         .type = CLI_OPT_STRING,
         .arg = "FILE",
         .help = "the sensor profile (default: looked up, see 'truewatt sensor')",
         .out = &a->profile},
        {.name = "no-reference",
         .type = CLI_OPT_FLAG,
         .help = "skip the 4 s steady-state reference",
         .out = &no_reference},
        {.name = "trace-out",
         .type = CLI_OPT_STRING,
         .arg = "CSV",
         .def = "truewatt-measure.csv",
         .help = "the trace (the events beside it, .events.csv)",
         .out = &a->trace_out},
        {.name = "json", .type = CLI_OPT_FLAG, .help = "machine-readable result on stdout", .out = &a->json},
    };
    const cli_opts o = {
        .cmd = CMD,
        .synopsis = "[--duration-ms D] [--blocks B] [--phases S] [--block-s T]\n"
                    "                               [--gap-s G] [--profile FILE] [--no-reference]\n"
                    "                               [--backend nvml|sim] [--sim h100|k20] [--seed N] [--device N]\n"
                    "                               [--trace-out CSV] [--json]",
        .about = "Energy per launch of truewatt's FMA spin kernel run for D ms, however short, by\n"
                 "phase-shifted repetition: B blocks of back-to-back launches (each about T s), the gap\n"
                 "after block b being G + (b mod S) x period / S, the period being the update period of\n"
                 "the reading the sensor profile ranks best, so the blocks start at evenly spread phases.\n"
                 "The energy is the estimator's (baseline + each name's power while it runs, fitted to\n"
                 "every window of the reading, and of the energy counter when the profile has one): per\n"
                 "launch the kernel's energy over its launches, with its standard error. A steady-state\n"
                 "reference (the same launches back to back for 4 s) is measured beside it.\n"
                 "Without a profile for this GPU and driver, the identification runs first (~1 min).",
        .opt = opt,
        .n = CLI_OPTS_N(opt)};
    int rc = cli_exp_parse(o, &a->exp, argc, argv);
    if (rc) return rc;
    a->dur_s = ms * 1e-3;
    a->reference = !no_reference;
    if (a->block_s < a->dur_s) return cli_usage(CMD, "--block-s must hold at least one launch");
    return 0;
}

typedef struct plan_ctx {
    const mk_args *a;
    bool identify;   /* no profile: identification first */
    double period_s; /* the best reading's update period */
    char label[48], ref_label[48];
} plan_ctx;

static tw_status plan(tw_exec *x, void *p)
{
    plan_ctx *c = p;
    const mk_args *a = c->a;
    tw_status st = c->identify ? tw_plan_identify(x) : TW_OK;
    if (st == TW_OK && !c->identify) st = tw_exec_idle(x, 1.0);
    if (st == TW_OK && !c->identify) st = tw_exec_context(x);
    if (st == TW_OK) st = tw_exec_idle(x, 2.0);
    size_t per_ref = (size_t)ceil(REF_S / a->dur_s - 1e-9);
    if (st == TW_OK && a->reference) st = tw_exec_block(x, c->ref_label, a->dur_s, per_ref);
    if (st == TW_OK && a->reference) st = tw_exec_idle(x, 1.5);
    size_t per_block = (size_t)ceil(a->block_s / a->dur_s - 1e-9);
    if (st == TW_OK) st = tw_plan_repeat(x, c->label, a->dur_s, per_block, a->blocks, a->phases, c->period_s, a->gap_s);
    return st == TW_OK ? tw_exec_idle(x, 1.0) : st;
}

typedef struct outcome {
    tw_repeat_result r;
    const tw_reading_model *m;
} outcome;

/* The reading's windows, and the energy counter's as the reference when the
 * profile models it as a counter and the trace has it. */
static int analyse(const plan_ctx *c, tw_exec *x, const tw_profile *p, outcome *o)
{
    memset(o, 0, sizeof *o);
    o->m = tw_profile_best(p, tw_identify_board_reading, NULL);
    size_t idx, cidx;
    if (!o->m || tw_sensor_find(x->trace, o->m->name, &idx) != TW_OK) {
        fprintf(stderr, "truewatt %s: the trace has no reading the profile can use\n", CMD);
        return CLI_EXIT_FAIL;
    }
    tw_obs_series obs[2];
    tw_obs_series_init(&obs[0]);
    tw_obs_series_init(&obs[1]);
    tw_est_reading rd[2];
    size_t nrd = 0;
    bool is_counter = o->m->response == TW_RESP_COUNTER;
    tw_status st = tw_observe(x->trace, idx, o->m, true, &obs[0]);
    if (st == TW_OK) rd[nrd++] = (tw_est_reading){o->m->name, obs[0].v, obs[0].n, is_counter};
    const tw_reading_model *cm = is_counter ? NULL : tw_profile_find(p, "energy_j");
    if (st == TW_OK && cm && cm->response == TW_RESP_COUNTER && tw_sensor_find(x->trace, "energy_j", &cidx) == TW_OK) {
        st = tw_observe(x->trace, cidx, cm, true, &obs[1]);
        if (st == TW_OK) rd[nrd++] = (tw_est_reading){"energy_j", obs[1].v, obs[1].n, true};
    }
    tw_clear_error();
    if (st == TW_OK) {
        tw_est_config cfg;
        tw_est_config_init(&cfg);
        st = tw_repeat_estimate(rd, nrd, x->events, &cfg, c->label, c->a->reference ? c->ref_label : NULL, &o->r);
    }
    tw_obs_series_free(&obs[0]);
    tw_obs_series_free(&obs[1]);
    return st == TW_OK ? 0 : cli_fail(CMD, st);
}

static void print_text(const mk_args *a, const outcome *o, const char *how)
{
    printf("kernel:          tw_spin_fma, %.3f ms per launch (measured mean %.4f ms)\n", a->dur_s * 1e3,
           o->r.rep.mean_launch_s * 1e3);
    printf("reading:         %s (%s, update every %.1f ms, coverage %.0f %%)\n", o->m->name,
           tw_response_name(o->m->response), o->m->period_s * 1e3, o->m->coverage * 100);
    printf("profile:         %s\n", how);
    printf("estimator:       %s; baseline %.2f W\n", o->r.readings, o->r.baseline_w);
    printf("repetition:      %u blocks, %u launches\n", o->r.rep.blocks, o->r.rep.launches);
    if (o->r.rep.status == TW_EST_BELOW_RESOLUTION)
        printf("energy/launch:   < %.6g J (below resolution: %.6g J +- %.2g J, dynamic, above the baseline)\n",
               o->r.rep.upper_j, o->r.rep.per_launch_j, o->r.rep.per_launch_sd_j);
    else if (o->r.rep.status == TW_EST_AT_POWER_BOUND)
        printf("energy/launch:   <= %.6g J (at the power bound: the most the model can give it, dynamic)\n",
               o->r.rep.upper_j);
    else
        printf("energy/launch:   %.6g J +- %.2g J (dynamic, above the baseline)\n", o->r.rep.per_launch_j,
               o->r.rep.per_launch_sd_j);
    printf("                 %.6g J with its share of the baseline (%.2f W x %.4f ms)\n",
           o->r.rep.per_launch_j + o->r.baseline_w * o->r.rep.mean_launch_s, o->r.baseline_w,
           o->r.rep.mean_launch_s * 1e3);
    printf("dynamic power:   %.2f W\n", o->r.rep.power_w);
    if (o->r.ref.found)
        printf("steady state:    %.2f W dynamic over %.1f s back to back -> %.6g J per launch (%+.2f %%)\n",
               o->r.ref.power_w, o->r.ref.mean_launch_s * o->r.ref.launches, o->r.ref.power_w * o->r.rep.mean_launch_s,
               100.0 * (o->r.rep.per_launch_j / (o->r.ref.power_w * o->r.rep.mean_launch_s) - 1.0));
}

static void print_json(const mk_args *a, const outcome *o, const char *how)
{
    json j;
    json_init(&j, stdout);
    json_begin_object(&j);
    json_kv_string(&j, "kernel", "tw_spin_fma");
    json_kv_number(&j, "requested_s", a->dur_s);
    json_kv_number(&j, "mean_launch_s", o->r.rep.mean_launch_s);
    json_kv_string(&j, "reading", o->m->name);
    json_kv_string(&j, "response", tw_response_name(o->m->response));
    json_kv_string(&j, "profile", how);
    json_kv_string(&j, "estimator_readings", o->r.readings);
    json_kv_uint(&j, "blocks", o->r.rep.blocks);
    json_kv_uint(&j, "launches", o->r.rep.launches);
    json_kv_number(&j, "baseline_w", o->r.baseline_w);
    json_kv_number(&j, "energy_per_launch_j", o->r.rep.per_launch_j);
    json_kv_number(&j, "energy_per_launch_se_j", o->r.rep.per_launch_sd_j);
    json_kv_string(&j, "status", tw_est_status_name(o->r.rep.status));
    json_kv_number(&j, "upper_per_launch_j",
                   o->r.rep.status == TW_EST_BELOW_RESOLUTION || o->r.rep.status == TW_EST_AT_POWER_BOUND
                       ? o->r.rep.upper_j
                       : NAN); /* no new internal symbol in the CLI (issue 17) */
    json_kv_number(&j, "dynamic_power_w", o->r.rep.power_w);
    json_kv_number(&j, "steady_state_power_w", o->r.ref.found ? o->r.ref.power_w : NAN);
    json_end_object(&j);
    json_finish(&j);
}

int cmd_measure_kernel(int argc, char **argv)
{
    mk_args a = {0};
    cli_exp_args_init(&a.exp);
    int rc = parse_args(argc, argv, &a);
    if (rc) return rc < 0 ? 0 : rc;
    char prov[1024], events[4096];
    cli_exp_provenance(prov, sizeof prov, argc, argv);
    cli_exp_events_path(a.trace_out, events, sizeof events);
    a.exp.trace_path = a.trace_out;
    a.exp.events_path = events;

    plan_ctx c = {.a = &a, .period_s = 0.1};
    snprintf(c.label, sizeof c.label, "measure_%gms", a.dur_s * 1e3);
    snprintf(c.ref_label, sizeof c.ref_label, "reference_%gms", a.dur_s * 1e3);
    tw_profile p;
    tw_profile_init(&p);
    char how[4352];
    tw_status st = TW_OK;
    /* a profile that was named must load before anything starts */
    if (a.profile && (st = tw_profile_pick(a.profile, NULL, NULL, &p, how, sizeof how)) != TW_OK)
        return cli_fail(CMD, st);
    tw_exec *x = NULL;
    double per = a.blocks * (a.block_s + a.gap_s + 0.05) + (a.reference ? REF_S + 1.5 : 0) + 4.0;
    if ((rc = cli_exp_start(CMD, &a.exp, per, prov, &x))) return rc;
    if (!a.profile) st = tw_profile_pick(NULL, x->gpu, x->driver, &p, how, sizeof how);
    if (st == TW_ENOTFOUND) {
        cli_note("truewatt %s: %s: identifying the sensor first (~%.0f s)", CMD, how, tw_plan_identify_s());
        c.identify = true;
        x->planned_s += tw_plan_identify_s();
    } else if (st != TW_OK) {
        tw_exec_free(x);
        return cli_fail(CMD, st);
    }
    const tw_reading_model *best = c.identify ? NULL : tw_profile_best(&p, tw_identify_board_reading, NULL);
    if (best && best->period_s > 0) c.period_s = best->period_s;
    rc = cli_exp_run(CMD, x, plan, &c);
    if (rc == 0) rc = cli_exp_keep_sim_run(CMD, x, a.trace_out, events, prov);
    if (rc == 0 && c.identify) {
        tw_identify_options o;
        tw_identify_options_init(&o);
        double end = 0;
        for (size_t i = 0; i < tw_events_count(x->events); i++) {
            const tw_event *e = tw_events_get(x->events, i);
            if (!strncmp(e->name, "id_", 3)) end = fmax(end, e->end_s);
        }
        o.t_end_s = end + 2.5;
        if ((st = tw_identify(x->trace, x->events, &o, &p, NULL)) != TW_OK) rc = cli_fail(CMD, st);
        snprintf(how, sizeof how, "identified in this run (save one with 'truewatt sensor identify')");
    }
    outcome out;
    if (rc == 0) rc = analyse(&c, x, &p, &out);
    if (rc == 0) {
        if (a.json)
            print_json(&a, &out, how);
        else
            print_text(&a, &out, how);
    }
    tw_exec_free(x);
    return rc;
}
