/* truewatt validate: the issue-4 validation on a GPU (or the simulator):
 * identification, then linearity, back-to-back kernels, short kernels and
 * 10 s loads, each measured by every method; writes the trace, the events,
 * the identified profile, validation.csv/.md and plots into one folder:
 * the options, then the library's tw_validation_run. */
#include <stdio.h>

#include "cli/cli.h"
#include "cli/experiment.h"

typedef struct validate_args {
    cli_exp_args exp;
    const char *out, *from;
} validate_args;

/* The options, declared once (cli/opts.h). */
static int parse_args(int argc, char **argv, validate_args *a)
{
    const cli_opt opt[] = {
        {.name = "out",
         .type = CLI_OPT_STRING,
         .arg = "DIR",
         .def = "truewatt-validation",
         .help = "where everything goes",
         .out = &a->out},
        {.name = "from",
         .type = CLI_OPT_STRING,
         .arg = "DIR",
         .help = "analyse DIR/trace.csv and DIR/events.csv recorded earlier",
         .out = &a->from},
    };
    const cli_opts o = {.cmd = "validate",
                        .synopsis = "[--out DIR] [--backend nvml|sim] [--sim k20|h100] [--seed N]\n"
                                    "                         [--device N] [--from DIR]",
                        .about = "Runs the sensor identification (about a minute) and the validation experiments\n"
                                 "(about four minutes) on one GPU, then measures every experiment by every method:\n"
                                 "  (i)   linearity: one kernel for T and 2T (T = 0.1, 0.5, 2 s), energy ratio\n"
                                 "  (ii)  back to back: two 0.5 s kernels 50 ms, 300 ms, 1 s apart, second / first\n"
                                 "  (iii) kernels of 1, 3, 10, 30, 100 ms: energy per launch against the reference\n"
                                 "        (the same kernel's dynamic power over >= 4 s, times its duration)\n"
                                 "  (iv)  energy counter, sample buffer and corrected instant power over 10 s loads\n"
                                 "  (v)   the identified sensor profile\n"
                                 "Nothing on the card is changed (clocks, limits, modes stay as they are).",
                        .opt = opt,
                        .n = CLI_OPTS_N(opt)};
    return cli_exp_parse(o, &a->exp, argc, argv);
}

int cmd_validate(int argc, char **argv)
{
    validate_args a = {.out = "truewatt-validation"};
    cli_exp_args_init(&a.exp, "validate");
    int rc = parse_args(argc, argv, &a);
    if (rc) return rc < 0 ? 0 : rc;
    tw_status st = tw_validation_run(&a.exp.o, a.out, a.from, stdout);
    return st == TW_OK ? 0 : cli_fail("validate", st);
}
