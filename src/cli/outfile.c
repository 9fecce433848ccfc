/* Result files and sub-command dispatch shared by the commands (cli.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"

int cli_make_dir(const char *cmd, const char *dir)
{
    if (mkdir(dir, 0777) == 0 || errno == EEXIST) return 0;
    fprintf(stderr, "truewatt %s: cannot create %s: %s\n", cmd, dir, strerror(errno));
    return CLI_EXIT_FAIL;
}

static void sub_usage(FILE *f, const char *cmd, const char *about, const cli_command *subs, size_t n)
{
    fprintf(f, "usage: truewatt %s SUBCOMMAND [ARGS]\n\n%s\n\nsubcommands:\n", cmd, about);
    for (size_t i = 0; i < n; i++)
        fprintf(f, "  %-10s %s\n", subs[i].name, subs[i].summary);
    fprintf(f, "\n'truewatt %s SUBCOMMAND --help' describes a subcommand.\n", cmd);
}

int cli_dispatch(const char *cmd, const char *about, const cli_command *subs, size_t n, int argc, char **argv)
{
    if (argc < 2) {
        sub_usage(stderr, cmd, about, subs, n);
        return CLI_EXIT_USAGE;
    }
    const char *sub = argv[1];
    if (!strcmp(sub, "--help") || !strcmp(sub, "-h") || !strcmp(sub, "help")) {
        sub_usage(stdout, cmd, about, subs, n);
        return 0;
    }
    /* the sub-command sees "CMD SUB" as its argv[0], so what it records (provenance) names both */
    static char full[128];
    for (size_t i = 0; i < n; i++)
        if (!strcmp(sub, subs[i].name)) {
            snprintf(full, sizeof full, "%s %s", cmd, sub);
            argv[1] = full;
            return subs[i].run(argc - 1, argv + 1);
        }
    fprintf(stderr, "truewatt %s: unknown subcommand '%s'\n\n", cmd, sub);
    sub_usage(stderr, cmd, about, subs, n);
    return CLI_EXIT_USAGE;
}
