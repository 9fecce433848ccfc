/* truewatt sensor identify: a placeholder until the real one lands here. */
#include <stdio.h>

#include "cli/cli.h"

int tw_cmd_sensor_identify(int argc, char **argv)
{
    fprintf(stderr, "truewatt sensor identify: not built yet\n");
    return CLI_EXIT_USAGE;
}
