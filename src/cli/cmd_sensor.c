/* truewatt sensor: what the GPU's power readings are (sub-commands identify, show). */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

static const cli_command subcommands[] = {
    {"identify", tw_cmd_sensor_identify, "measure this GPU's readings and write its sensor profile"},
    {"show", tw_cmd_sensor_show, "print a sensor profile (readings, models, the best one)"},
};

#define NSUB (sizeof subcommands / sizeof subcommands[0])

static void usage(FILE *f)
{
    fprintf(f, "usage: truewatt sensor SUBCOMMAND [ARGS]\n\n"
               "What each power reading of a GPU really measures: its update period, averaging window,\n"
               "delay or time constant, and how much of the time it sees.\n\n"
               "subcommands:\n");
    for (size_t i = 0; i < NSUB; i++)
        fprintf(f, "  %-10s %s\n", subcommands[i].name, subcommands[i].summary);
    fprintf(f, "\n'truewatt sensor SUBCOMMAND --help' describes a subcommand.\n");
}

int cmd_sensor(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return CLI_EXIT_USAGE;
    }
    const char *sub = argv[1];
    if (!strcmp(sub, "--help") || !strcmp(sub, "-h") || !strcmp(sub, "help")) {
        usage(stdout);
        return 0;
    }
    for (size_t i = 0; i < NSUB; i++)
        if (!strcmp(sub, subcommands[i].name)) return subcommands[i].run(argc - 1, argv + 1);
    fprintf(stderr, "truewatt sensor: unknown subcommand '%s'\n\n", sub);
    usage(stderr);
    return CLI_EXIT_USAGE;
}
