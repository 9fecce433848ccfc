/* truewatt demo: the experiments of Burtscher et al. 2014 on the simulated
 * K20, through the real path: simulator -> trace file -> analysis; the
 * options, then the library's tw_demo. */
#include <stdio.h>

#include "cli/cli.h"
#include "cli/experiment.h"
#include "cli/interrupt.h"
#include "cli/opts.h"

typedef tw_demo_options demo_args;

/* The options, declared once (cli/opts.h). */
static int parse_args(int argc, char **argv, demo_args *a)
{
    const cli_opt opt[] = {
        {.name = "out",
         .type = CLI_OPT_STRING,
         .arg = "DIR",
         .def = "truewatt-demo",
         .help = "where traces, corrected series, demo.csv and plots go",
         .out = &a->out_dir},
        {.name = "seed", .type = CLI_OPT_U64, .arg = "N", .def = "1", .help = "simulator seed", .out = &a->seed},
        {.name = "no-plot",
         .type = CLI_OPT_FLAG,
         .help = "do not run gnuplot (the script and data are still written)",
         .out = &a->no_plot},
        {.name = "json", .type = CLI_OPT_FLAG, .help = "machine-readable results on stdout", .out = &a->json},
    };
    const cli_opts o = {.cmd = "demo",
                        .synopsis = "[--out DIR] [--seed N] [--no-plot] [--json]",
                        .about = "Reproduces the experiments of Burtscher et al. 2014 on the simulated K20 sensor:\n"
                                 "one long kernel (Fig. 1), the same kernel twice as long, two kernels 1 s apart\n"
                                 "(Fig. 2, 8), the short kernels of Fig. 3 and fixed-interval integration (Fig. 6).\n"
                                 "Each run goes simulator -> trace file -> analysis. C is first fitted from Fig. 1's\n"
                                 "step response, then used for every run. Prints one table (truth, each naive method,\n"
                                 "corrected, error in %) and draws raw against corrected power with gnuplot.",
                        .opt = opt,
                        .n = CLI_OPTS_N(opt)};
    int first;
    return cli_opts_parse(&o, argc, argv, &first);
}

int cmd_demo(int argc, char **argv)
{
    demo_args a;
    tw_demo_options_init(&a);
    int rc = parse_args(argc, argv, &a);
    if (rc) return rc < 0 ? 0 : rc;
    cli_interrupt_install();
    a.cancel = &cli_interrupted;
    if (!a.json) {
        a.note = cli_exp_note;
        a.note_ctx = (void *)"demo";
    }
    tw_status st = tw_demo(&a, stdout);
    return st == TW_OK ? 0 : cli_fail("demo", st);
}
