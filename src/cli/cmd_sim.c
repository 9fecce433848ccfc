/* truewatt sim: run the simulated sensor over a scenario and write the trace
 * and the kernels (with their exact energy) as files analyze can read. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/interrupt.h"
#include "cli/sim_run.h"
#include "core/json.h"
#include "report/table.h"

static void help(void)
{
    printf("usage: truewatt sim -o TRACE [--profile k20|h100] (--scenario FILE | --kernel NAME:START:DUR:POWER ...)\n"
           "                    [--duration S] [--seed N] [--events-out FILE] [--json]\n\n"
           "Simulates a GPU power sensor over a true power signal with exact ground truth.\n\n"
           "  -o, --output TRACE   the trace to write (CSV: t_s, the readings, true_power_w)\n"
           "  --profile P          k20: RC sensor C = 0.84 s, ~15 ms updates, repeats, stalls (default)\n"
           "                       h100: 1 s boxcar average, 25 ms window every 100 ms,\n"
           "                       energy counter, ~20 ms sample buffer\n"
           "  --scenario FILE      kernels as CSV name,start_s,duration_s,power_w\n"
           "  --kernel N:S:D:P     one kernel: name, start s, duration s, power W (repeatable)\n"
           "  --duration S         simulated length (default: after the last kernel's tail)\n"
           "  --seed N             noise and jitter seed (default 1)\n"
           "  --events-out FILE    the kernels as events with true_energy_j\n"
           "                       (default: TRACE with .events.csv)\n"
           "  --json               machine-readable summary on stdout\n");
}

enum { OPT_PROFILE = 1000, OPT_SCENARIO, OPT_KERNEL, OPT_DURATION, OPT_SEED, OPT_EVENTS, OPT_JSON };

typedef struct sim_args {
    const char *out, *events_out, *scenario_path;
    tw_sim_profile profile;
    double duration_s;
    uint64_t seed;
    bool json;
    char **kernels;
    size_t n_kernels;
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

static int parse_args(int argc, char **argv, sim_args *a)
{
    static const struct option opts[] = {{"output", required_argument, 0, 'o'},
                                         {"profile", required_argument, 0, OPT_PROFILE},
                                         {"scenario", required_argument, 0, OPT_SCENARIO},
                                         {"kernel", required_argument, 0, OPT_KERNEL},
                                         {"duration", required_argument, 0, OPT_DURATION},
                                         {"seed", required_argument, 0, OPT_SEED},
                                         {"events-out", required_argument, 0, OPT_EVENTS},
                                         {"json", no_argument, 0, OPT_JSON},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":ho:", opts, NULL)) != -1) {
        switch (c) {
        case 'h':
            help();
            return -1;
        case 'o':
            a->out = optarg;
            break;
        case OPT_PROFILE:
            if (tw_sim_profile_parse(optarg, &a->profile) != TW_OK)
                return cli_usage("sim", "unknown profile '%s' (profiles: k20, h100)", optarg);
            break;
        case OPT_SCENARIO:
            a->scenario_path = optarg;
            break;
        case OPT_KERNEL:
            a->kernels[a->n_kernels++] = optarg;
            break;
        case OPT_DURATION:
            if (!cli_parse_double(optarg, &a->duration_s) || a->duration_s <= 0)
                return cli_usage("sim", "--duration needs a positive number of seconds, got '%s'", optarg);
            break;
        case OPT_SEED:
            if (!cli_parse_u64(optarg, &a->seed))
                return cli_usage("sim", "--seed needs an integer >= 0, got '%s'", optarg);
            break;
        case OPT_EVENTS:
            a->events_out = optarg;
            break;
        case OPT_JSON:
            a->json = true;
            break;
        default:
            return cli_opt_other("sim", c, optarg, argv, NULL);
        }
    }
    if (optind < argc) return cli_opt_rest("sim", argc, argv, optind);
    if (!a->out) return cli_usage("sim", "where to? give -o TRACE");
    if (!a->scenario_path && !a->n_kernels) return cli_usage("sim", "give --scenario FILE or at least one --kernel");
    if (a->scenario_path && a->n_kernels) return cli_usage("sim", "--scenario and --kernel exclude each other");
    return 0;
}

static int build_scenario(const sim_args *a, tw_scenario **out)
{
    tw_status st =
        a->scenario_path ? tw_scenario_load(a->scenario_path, a->profile, out) : tw_scenario_new(a->profile, out);
    if (st != TW_OK) return cli_fail("sim", st);
    for (size_t i = 0; i < a->n_kernels; i++) {
        int rc = parse_kernel(*out, a->kernels[i]);
        if (rc) return rc;
    }
    if (a->duration_s > 0 && (st = tw_scenario_set_duration(*out, a->duration_s)) != TW_OK) return cli_fail("sim", st);
    return 0;
}

static void print_summary(const sim_args *a, const sim_run_result *r, const tw_events *ev)
{
    if (a->json) {
        json j;
        json_init(&j, stdout);
        json_begin_object(&j);
        json_kv_string(&j, "trace", a->out);
        json_kv_string(&j, "events", a->events_out);
        json_kv_string(&j, "profile", tw_sim_profile_name(a->profile));
        json_kv_uint(&j, "seed", a->seed);
        json_kv_uint(&j, "rows", r->rows);
        json_kv_number(&j, "duration_s", r->duration_s);
        json_key(&j, "kernels");
        json_begin_array(&j);
        for (size_t i = 0; i < tw_events_count(ev); i++) {
            const tw_event *e = tw_events_get(ev, i);
            json_begin_object(&j);
            json_kv_string(&j, "name", e->name);
            json_kv_time(&j, "start_s", e->start_s);
            json_kv_time(&j, "end_s", e->end_s);
            json_kv_number(&j, "true_energy_j", e->true_energy_j);
            json_end_object(&j);
        }
        json_end_array(&j);
        json_end_object(&j);
        json_finish(&j);
        return;
    }
    printf("wrote %llu rows (%.3f s simulated, profile %s, seed %llu) to %s\n", (unsigned long long)r->rows,
           r->duration_s, tw_sim_profile_name(a->profile), (unsigned long long)a->seed, a->out);
    printf("wrote %zu kernels with their true energy to %s\n\n", tw_events_count(ev), a->events_out);
    static const char *const head[] = {"kernel", "start_s", "end_s", "true_energy_j"};
    table *t = table_new(4, head);
    if (!t) return;
    for (size_t i = 0; i < tw_events_count(ev); i++) {
        const tw_event *e = tw_events_get(ev, i);
        table_cell(t, "%s", e->name);
        table_cell(t, "%.4f", e->start_s);
        table_cell(t, "%.4f", e->end_s);
        table_cell(t, "%.4f", e->true_energy_j);
    }
    table_print(t, stdout);
    table_free(t);
}

static char *default_events_path(const char *trace)
{
    size_t len = strlen(trace);
    if (len > 4 && !strcmp(trace + len - 4, ".csv")) len -= 4;
    size_t n = len + sizeof ".events.csv";
    char *p = malloc(n);
    if (p) snprintf(p, n, "%.*s.events.csv", (int)len, trace);
    return p;
}

int cmd_sim(int argc, char **argv)
{
    sim_args a = {.profile = TW_SIM_K20, .seed = 1};
    a.kernels = calloc((size_t)argc + 1, sizeof *a.kernels);
    if (!a.kernels) return cli_fail("sim", TW_ENOMEM);
    int rc = parse_args(argc, argv, &a);
    tw_scenario *sc = NULL;
    tw_events *ev = NULL;
    char *events_path = NULL;
    if (rc == 0) rc = build_scenario(&a, &sc);
    if (rc == 0 && !a.events_out) {
        a.events_out = events_path = default_events_path(a.out);
        if (!events_path) rc = cli_fail("sim", TW_ENOMEM);
    }
    if (rc == 0) {
        sim_run_result r;
        cli_interrupt_install();
        tw_status st = sim_run_to_file(sc, a.seed, a.out, &r), run_st = st;
        if (st == TW_OK || st == TW_EINTERRUPTED) st = tw_scenario_events(sc, &ev);
        if (st == TW_OK) st = tw_events_save(ev, a.events_out);
        if (st == TW_OK && run_st == TW_EINTERRUPTED) {
            fprintf(stderr, "truewatt sim: interrupted at %.3f s of %.3f s; the trace so far is in %s\n", r.duration_s,
                    tw_scenario_duration_s(sc), a.out);
            rc = CLI_EXIT_INTERRUPTED;
        } else if (st == TW_OK) {
            print_summary(&a, &r, ev);
        } else {
            rc = cli_fail("sim", st);
        }
    }
    tw_events_free(ev);
    tw_scenario_free(sc);
    free(events_path);
    free(a.kernels);
    return rc < 0 ? 0 : rc;
}
