/* `truewatt backends` as a library call (tw_backends_report, truewatt.h):
 * the sensor backends, whether each can be used here and why not. */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "core/json.h"

/* How many sensor profiles (*.json) the folder holds; -1 when it cannot be read. */
static long count_profiles(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return -1;
    long n = 0;
    for (struct dirent *e; (e = readdir(d));) {
        size_t len = strlen(e->d_name);
        n += len > 5 && strcmp(e->d_name + len - 5, ".json") == 0;
    }
    closedir(d);
    return n;
}

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
    /* where the nvml backend's GPUs find their sensor profiles (an installed tree's own) */
    const char *dir = tw_profile_dir();
    long n = count_profiles(dir);
    if (as_json) {
        json_end_array(&j);
        json_kv_string(&j, "profile_dir", dir);
        json_kv_number(&j, "profiles", n >= 0 ? (double)n : NAN); /* null: cannot be read */
        json_end_object(&j);
        json_finish(&j);
    } else if (n >= 0) {
        fprintf(out, "\nsensor profiles: %s (%ld)\n", dir, n);
    } else {
        fprintf(out, "\nsensor profiles: %s (cannot be read)\n", dir);
    }
    return ferror(out) ? tw_fail(TW_EIO, "cannot write the list of backends") : TW_OK;
}
