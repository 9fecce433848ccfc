/* truewatt backends: which sensor backends exist and why any is unavailable. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "core/json.h"

static void help(void)
{
    printf("usage: truewatt backends [--json]\n\n"
           "Lists the sensor backends, whether each can be used here, and why not.\n");
}

int cmd_backends(int argc, char **argv)
{
    static const struct option opts[] = {{"json", no_argument, 0, 'j'}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    bool as_json = false;
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        if (c == 'h') {
            help();
            return 0;
        }
        if (c == 'j')
            as_json = true;
        else
            return cli_opt_other("backends", c, optarg, argv, NULL);
    }
    if (optind < argc) return cli_opt_rest("backends", argc, argv, optind);
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
