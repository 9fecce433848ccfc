/* getopt's outcomes every command handles alike (cli.h). */
#include <getopt.h>

#include "cli/cli.h"
#include "cli/experiment.h"

int cli_opt_other(const char *cmd, int c, const char *arg, char **argv, cli_exp_args *exp)
{
    if (c == ':') return cli_usage(cmd, "option '%s' needs a value", argv[optind - 1]);
    if (exp) {
        int r = cli_exp_option(cmd, c, arg, exp);
        if (r >= 0) return r;
    }
    return cli_usage(cmd, "unknown option '%s'", argv[optind - 1]);
}

int cli_opt_rest(const char *cmd, int argc, char **argv, int first)
{
    return first < argc ? cli_usage(cmd, "unexpected argument '%s'", argv[first]) : 0;
}
