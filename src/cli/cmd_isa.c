/* truewatt isa: energy per instruction from PTX microbenchmarks (Arafa et
 * al. 2020), in their paper mode beside their Table I and in a throughput
 * mode that measures the instruction's own energy: the options, then the
 * library's tw_isa_experiment. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/experiment.h"

#define CMD "isa"
#define MAX_ONLY 128

typedef struct isa_args {
    cli_exp_args exp;
    tw_isa_options isa;
    char *only_buf;
    const char *only[MAX_ONLY];
} isa_args;

static int split_only(isa_args *a, const char *list)
{
    free(a->only_buf);
    if (!(a->only_buf = strdup(list))) return cli_fail(CMD, TW_ENOMEM);
    a->isa.nonly = 0;
    for (char *save = NULL, *t = strtok_r(a->only_buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (!tw_isa_instruction_known(t))
            return cli_usage(CMD, "--only: no instruction named '%s' (see the table in docs)", t);
        if (a->isa.nonly == MAX_ONLY) return cli_usage(CMD, "--only: at most %d names", MAX_ONLY);
        a->only[a->isa.nonly++] = t;
    }
    a->isa.only = a->only;
    return 0;
}

/* The options, declared once (cli/opts.h). */
static int parse_args(int argc, char **argv, isa_args *a)
{
    const char *mode, *operands, *only = NULL;
    const cli_opt opt[] = {
        {.name = "mode",
         .type = CLI_OPT_ENUM,
         .choices = "paper|throughput",
         .def = "paper",
         .help = "the method (above)",
         .out = &mode},
        {.name = "only",
         .type = CLI_OPT_STRING,
         .arg = "LIST",
         .help = "only these instructions (names as in the table: add.s32,fma.rn.f32,...)",
         .out = &only},
        {.name = "operands",
         .type = CLI_OPT_ENUM,
         .choices = "fixed|seed",
         .def = "fixed",
         .help = "throughput mode: fixed (chains that have a fixed point start\n"
                 "there - integers at 0, fp adds and fmas saturated - so operands stay\n"
                 "the same) or seed (every chain from the seed: data's share of the energy)",
         .out = &operands},
        {.name = "profile",
         .type = CLI_OPT_STRING,
         .arg = "FILE",
         .help = "the sensor profile (default: looked up, see 'truewatt sensor')",
         .out = &a->isa.profile},
        {.name = "out",
         .type = CLI_OPT_STRING,
         .arg = "DIR",
         .def = "truewatt-isa",
         .help = "isa.csv, isa.json, isa.png, launches.csv (every launch as measured),\nthe trace and events",
         .out = &a->isa.out_dir},
        {.name = "json", .type = CLI_OPT_FLAG, .help = "the rows as JSON on stdout", .out = &a->isa.json},
    };
    const cli_opts o = {
        .cmd = CMD,
        .synopsis = "[--mode paper|throughput] [--only NAME,...] [--operands fixed|seed]\n"
                    "                    [--profile FILE] [--out DIR]\n"
                    "                    [--backend nvml|sim] [--sim h100] [--seed N] [--device N] [--json]",
        .about = "Energy per PTX instruction from generated microbenchmarks (every row of Arafa et al.\n"
                 "2020's Table I, and fp64 fma, half2, tensor-core mma, loads, stores, shuffles, atomics).\n"
                 "  paper       their method: one thread, a dependent chain, the overhead loop subtracted,\n"
                 "              JIT levels 0 and 4 (their -O0/-O3); truewatt's corrected energy beside SMA,\n"
                 "              PAPI-style and MTSM; cycles per instruction beside, and their Volta column\n"
                 "              (data/arafa2020_table1.csv). Energies in uJ per instruction: mostly board\n"
                 "              power x latency.\n"
                 "  throughput  every SM busy, independent chains; dynamic energy regressed on instructions\n"
                 "              with time as a second regressor: pJ per thread operation and per warp\n"
                 "              instruction, with the spread over repeats.\n"
                 "Without a profile for this GPU and driver, the sensor is identified first (~1 min).\n"
                 "Nothing on the card is changed. On the simulator (--backend sim): a synthetic cost model.",
        .opt = opt,
        .n = CLI_OPTS_N(opt)};
    int rc = cli_exp_parse(o, &a->exp, argc, argv);
    if (rc) return rc;
    a->isa.throughput = !strcmp(mode, "throughput");
    a->isa.seed_operands = !strcmp(operands, "seed");
    return only ? split_only(a, only) : 0;
}

int cmd_isa(int argc, char **argv)
{
    isa_args a;
    memset(&a, 0, sizeof a);
    cli_exp_args_init(&a.exp, CMD);
    tw_isa_options_init(&a.isa);
    int rc = parse_args(argc, argv, &a);
    if (rc) {
        free(a.only_buf);
        return rc < 0 ? 0 : rc;
    }
    char paper_csv[4096];
    snprintf(paper_csv, sizeof paper_csv, "%s/arafa2020_table1.csv", tw_data_dir());
    a.isa.paper_table = paper_csv;
    tw_status st = tw_isa_experiment(&a.exp.o, &a.isa, stdout);
    free(a.only_buf);
    return st == TW_OK ? 0 : cli_fail(CMD, st);
}
