/* Result files and sub-command dispatch shared by the commands (cli.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "report/plot.h"

int cli_make_dir(const char *cmd, const char *dir)
{
    if (mkdir(dir, 0777) == 0 || errno == EEXIST) return 0;
    fprintf(stderr, "truewatt %s: cannot create %s: %s\n", cmd, dir, strerror(errno));
    return CLI_EXIT_FAIL;
}

FILE *cli_open_out(const char *cmd, const char *dir, const char *name, char *path, size_t cap)
{
    snprintf(path, cap, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (!f) fprintf(stderr, "truewatt %s: cannot write %s: %s\n", cmd, path, strerror(errno));
    return f;
}

int cli_close_out(const char *cmd, FILE *f, const char *path)
{
    bool bad = ferror(f) != 0;
    if (fclose(f) != 0 || bad) {
        fprintf(stderr, "truewatt %s: cannot write %s\n", cmd, path);
        return CLI_EXIT_FAIL;
    }
    return 0;
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

void cli_draw_plot(const char *cmd, const char *dir, const char *script, const char *png)
{
    char why[256];
    if (!plot_find_gnuplot()) {
        cli_note("truewatt %s: no gnuplot: the plot's data and script are in %s (%s)", cmd, dir, script);
        return;
    }
    if (plot_run(dir, script, why, sizeof why) == 0)
        cli_note("truewatt %s: plot %s/%s", cmd, dir, png);
    else
        cli_note("truewatt %s: no plot: %s", cmd, why);
}
