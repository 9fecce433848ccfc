/* truewatt backends: which sensor backends exist and why any is unavailable. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/opts.h"
#include "core/json.h"

int cmd_backends(int argc, char **argv)
{
    bool as_json;
    const cli_opt opt[] = {
        {.name = "json", .type = CLI_OPT_FLAG, .help = "machine-readable list on stdout", .out = &as_json}};
    const cli_opts o = {.cmd = "backends",
                        .synopsis = "[--json]",
                        .about = "Lists the sensor backends, whether each can be used here, and why not.",
                        .opt = opt,
                        .n = CLI_OPTS_N(opt)};
    int first;
    int rc = cli_opts_parse(&o, argc, argv, &first);
    if (rc) return rc < 0 ? 0 : rc;
    json j;
    if (as_json) {
        json_init(&j, stdout);
        json_begin_object(&j);
        json_key(&j, "backends");
        json_begin_array(&j);
    }
    for (size_t i = 0; i < tw_backend_count(); i++) {
        char why[512] = "";
        const char *name = tw_backend_name(i);
        bool ok = tw_backend_available(name, why, sizeof why);
        if (as_json) {
            json_begin_object(&j);
            json_kv_string(&j, "name", name);
            json_kv_bool(&j, "available", ok);
            json_kv_string(&j, "description", tw_backend_description(i));
            json_kv_string(&j, "unavailable_reason", ok ? NULL : why);
            json_end_object(&j);
        } else {
            printf("%-8s %-11s %s\n", name, ok ? "available" : "unavailable", ok ? tw_backend_description(i) : why);
        }
    }
    if (as_json) {
        json_end_array(&j);
        json_end_object(&j);
        json_finish(&j);
    }
    return 0;
}
