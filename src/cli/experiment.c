/* The options every experiment command takes; see experiment.h. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "cli/experiment.h"
#include "cli/interrupt.h"

void cli_exp_args_init(cli_exp_args *a, const char *cmd)
{
    memset(a, 0, sizeof *a);
    tw_experiment_options_init(&a->o);
    a->cmd = cmd;
}

/* --sim P: the simulator with profile P */
static int take_sim(const char *cmd, const char *value, void *out)
{
    cli_exp_args *a = out;
    if (tw_sim_profile_parse(value, &a->o.sim) != TW_OK)
        return cli_usage(cmd, "--sim needs one of k20|h100, got '%s'", value);
    a->o.backend = "sim";
    return 0;
}

void cli_exp_note(void *ctx, const char *text) { cli_note("truewatt %s: %s", (const char *)ctx, text); }

int cli_exp_parse(cli_opts o, cli_exp_args *a, int argc, char **argv)
{
    const cli_opt t[] = {
        {.name = "backend",
         .type = CLI_OPT_ENUM,
         .choices = "nvml|sim",
         .def = "nvml",
         .help = "nvml: a GPU; sim: the simulator (exact truth)",
         .out = &a->o.backend},
        {.name = "sim",
         .type = CLI_OPT_CALL,
         .arg = "k20|h100",
         .help = "the simulator with this sensor profile (h100 when only --backend sim)",
         .out = a,
         .call = take_sim},
        {.name = "seed", .type = CLI_OPT_U64, .arg = "N", .def = "1", .help = "simulator seed", .out = &a->o.seed},
        {.name = "device",
         .type = CLI_OPT_INT,
         .arg = "N",
         .def = "0",
         .help = "GPU index",
         .out = &a->o.device,
         .min = 0,
         .max = 64},
    };
    o.more = t;
    o.n_more = CLI_OPTS_N(t);
    int first;
    int rc = cli_opts_parse(&o, argc, argv, &first);
    if (rc) return rc;
    cli_exp_provenance(a->provenance, sizeof a->provenance, argc, argv);
    a->o.provenance = a->provenance;
    a->o.note = cli_exp_note;
    a->o.note_ctx = (void *)a->cmd;
    cli_interrupt_install();
    a->o.cancel = &cli_interrupted;
    return 0;
}

void cli_exp_provenance(char *buf, size_t len, int argc, char **argv)
{
    size_t used = (size_t)snprintf(buf, len, "command: truewatt");
    for (int i = 0; i < argc && used < len; i++)
        used += (size_t)snprintf(buf + used, len - used, " %s", argv[i]);
    char date[32] = "";
    time_t now = time(NULL);
    struct tm tm;
    if (gmtime_r(&now, &tm)) strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", &tm);
    if (used < len) snprintf(buf + used, len - used, "; date: %s; truewatt %s", date, tw_version());
}
