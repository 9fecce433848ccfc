/* truewatt sim: run the simulated sensor over a scenario and write the trace
 * and the kernels (with their exact energy) as files analyze can read. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/interrupt.h"
#include "cli/opts.h"
#include "cli/experiment.h"

typedef struct sim_args {
    const char *out, *events_out, *scenario_path, *profile_name;
    tw_sim_profile profile;
    double duration_s;
    uint64_t seed;
    bool json;
    cli_opt_list kernels;
} sim_args;

static int parse_kernel(tw_scenario *s, const char *spec)
{
    char name[128];
    double start, dur, power;
    const char *p = strchr(spec, ':');
    if (!p || (size_t)(p - spec) >= sizeof name || p == spec)
        return cli_usage("sim", "--kernel wants NAME:START:DURATION:POWER, got '%s'", spec);
    memcpy(name, spec, (size_t)(p - spec));
    name[p - spec] = '\0';
    char rest[256];
    snprintf(rest, sizeof rest, "%s", p + 1);
    char *f1 = strtok(rest, ":"), *f2 = strtok(NULL, ":"), *f3 = strtok(NULL, ":"), *f4 = strtok(NULL, ":");
    if (!f3 || f4 || !cli_parse_double(f1, &start) || !cli_parse_double(f2, &dur) || !cli_parse_double(f3, &power))
        return cli_usage("sim", "--kernel wants NAME:START:DURATION:POWER with numbers, got '%s'", spec);
    tw_status st = tw_scenario_add_kernel(s, name, start, dur, power);
    return st == TW_OK ? 0 : cli_fail("sim", st);
}

/* The options, declared once: parsing, defaults, usage and messages come from here (cli/opts.h). */
static int parse_args(int argc, char **argv, sim_args *a)
{
    const cli_opt opt[] = {
        {.name = "output",
         .short_name = 'o',
         .type = CLI_OPT_STRING,
         .arg = "TRACE",
         .help = "the trace to write (CSV: t_s, the readings, true_power_w)",
         .out = &a->out},
        {.name = "profile",
         .type = CLI_OPT_STRING,
         .arg = "P",
         .def = "k20",
         .help = "k20: RC sensor C = 0.84 s, ~15 ms updates, repeats, stalls\nh100: 1 s boxcar average, 25 ms window "
                 "every 100 ms,\nenergy counter, ~20 ms sample buffer",
         .out = &a->profile_name},
        {.name = "scenario",
         .type = CLI_OPT_STRING,
         .arg = "FILE",
         .help = "kernels as CSV name,start_s,duration_s,power_w",
         .out = &a->scenario_path},
        {.name = "kernel",
         .type = CLI_OPT_LIST,
         .arg = "N:S:D:P",
         .help = "one kernel: name, start s, duration s, power W",
         .out = &a->kernels},
        {.name = "duration",
         .type = CLI_OPT_DOUBLE,
         .arg = "S",
         .help = "simulated length (default: after the last kernel's tail)",
         .out = &a->duration_s,
         .min = 0,
         .max = INFINITY,
         .min_excl = true},
        {.name = "seed", .type = CLI_OPT_U64, .arg = "N", .def = "1", .help = "noise and jitter seed", .out = &a->seed},
        {.name = "events-out",
         .type = CLI_OPT_STRING,
         .arg = "FILE",
         .help = "the kernels as events with true_energy_j\n(default: TRACE with .events.csv)",
         .out = &a->events_out},
        {.name = "json", .type = CLI_OPT_FLAG, .help = "machine-readable summary on stdout", .out = &a->json},
    };
    const cli_opts opts = {.cmd = "sim",
                           .synopsis = "-o TRACE [--profile k20|h100] (--scenario FILE | --kernel NAME:START:DUR:POWER "
                                       "...)\n"
                                       "                    [--duration S] [--seed N] [--events-out FILE] [--json]",
                           .about = "Simulates a GPU power sensor over a true power signal with exact ground truth.",
                           .opt = opt,
                           .n = CLI_OPTS_N(opt)};
    int first = 0;
    int rc = cli_opts_parse(&opts, argc, argv, &first);
    if (rc) return rc;
    if (tw_sim_profile_parse(a->profile_name, &a->profile) != TW_OK)
        return cli_usage("sim", "unknown profile '%s' (profiles: k20, h100)", a->profile_name);
    if (!a->out) return cli_usage("sim", "where to? give -o TRACE");
    if (!a->scenario_path && !a->kernels.n) return cli_usage("sim", "give --scenario FILE or at least one --kernel");
    if (a->scenario_path && a->kernels.n) return cli_usage("sim", "--scenario and --kernel exclude each other");
    return 0;
}

static int build_scenario(const sim_args *a, tw_scenario **out)
{
    tw_status st =
        a->scenario_path ? tw_scenario_load(a->scenario_path, a->profile, out) : tw_scenario_new(a->profile, out);
    if (st != TW_OK) return cli_fail("sim", st);
    for (size_t i = 0; i < a->kernels.n; i++) {
        int rc = parse_kernel(*out, a->kernels.v[i]);
        if (rc) return rc;
    }
    if (a->duration_s > 0 && (st = tw_scenario_set_duration(*out, a->duration_s)) != TW_OK) return cli_fail("sim", st);
    return 0;
}

int cmd_sim(int argc, char **argv)
{
    sim_args a = {.profile = TW_SIM_K20};
    int rc = parse_args(argc, argv, &a);
    tw_scenario *sc = NULL;
    if (rc == 0) rc = build_scenario(&a, &sc);
    if (rc == 0) {
        tw_sim_run_options o;
        tw_sim_run_options_init(&o);
        o.seed = a.seed;
        o.trace = a.out;
        o.events = a.events_out;
        o.json = a.json;
        cli_interrupt_install();
        o.cancel = &cli_interrupted;
        o.note = cli_exp_note;
        o.note_ctx = (void *)"sim";
        tw_status st = tw_sim_run(sc, &o, stdout);
        if (st != TW_OK) rc = cli_fail("sim", st);
    }
    tw_scenario_free(sc);
    cli_opt_list_free(&a.kernels);
    return rc < 0 ? 0 : rc;
}
