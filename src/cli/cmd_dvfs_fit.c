/* truewatt dvfs fit: not written yet (placeholder while issue 7 is in progress). */
#include <stdio.h>

#include "cli/dvfs_cmds.h"

int tw_cmd_dvfs_fit(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "truewatt dvfs fit: not implemented yet\n");
    return 1;
}
