/* truewatt sensor: what the GPU's power readings are (sub-commands identify, show). */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

static const cli_command subcommands[] = {
    {"identify", tw_cmd_sensor_identify, "measure this GPU's readings and write its sensor profile"},
    {"show", tw_cmd_sensor_show, "print a sensor profile (readings, models, the best one)"},
};

int cmd_sensor(int argc, char **argv)
{
    return cli_dispatch("sensor",
                        "What each power reading of a GPU really measures: its update period, averaging window,\n"
                        "delay or time constant, and how much of the time it sees.",
                        subcommands, sizeof subcommands / sizeof subcommands[0], argc, argv);
}
