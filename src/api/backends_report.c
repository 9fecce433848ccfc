/* `truewatt backends` as a library call (tw_backends_report, truewatt.h):
 * the sensor backends, whether each can be used here and why not. */
#include <stdio.h>

#include "core/error.h"
#include "core/json.h"

tw_status tw_backends_report(bool as_json, FILE *out)
{
    if (!out) return tw_fail(TW_EINVAL, "tw_backends_report: no stream");
    json j;
    if (as_json) {
        json_init(&j, out);
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
            fprintf(out, "%-8s %-11s %s\n", name, ok ? "available" : "unavailable",
                    ok ? tw_backend_description(i) : why);
        }
    }
    if (as_json) {
        json_end_array(&j);
        json_end_object(&j);
        json_finish(&j);
    }
    return ferror(out) ? tw_fail(TW_EIO, "cannot write the list of backends") : TW_OK;
}
