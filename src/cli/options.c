/* getopt's outcomes every command handles alike (cli.h). */
#include <getopt.h>

#include "cli/cli.h"
#include "cli/experiment.h"
#include "cli/opts.h"

int cli_opt_other(const char *cmd, int c, const char *arg, char **argv, cli_exp_args *exp)
{
    if (c != ':' && exp) {
        int r = cli_exp_option(cmd, c, arg, exp);
        if (r >= 0) return r;
    }
    return cli_opt_unknown(cmd, c, argv);
}

int cli_opt_rest(const char *cmd, int argc, char **argv, int first)
{
    return first < argc ? cli_usage(cmd, "unexpected argument '%s'", argv[first]) : 0;
}
