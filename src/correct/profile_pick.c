/* Which sensor profile a command uses; see profile_pick.h. */
#include <stdio.h>
#include <stdlib.h>

#include "correct/profile_pick.h"

#include <string.h>
#include <sys/stat.h>
#include "core/error.h"

/* tw_profile_dir (the folder searched): src/api/data_dirs.c */

tw_status tw_profile_pick(const char *given, const char *gpu, const char *driver, tw_profile *out, char *how,
                          size_t how_cap)
{
    tw_status st;
    if (given) {
        /* a file that was named and is missing is an error, not "no profile" */
        if ((st = tw_profile_load(given, out)) != TW_OK) return st == TW_ENOTFOUND ? TW_EIO : st;
        snprintf(how, how_cap, "sensor profile %s (given)", given);
        return TW_OK;
    }
    char path[4096];
    bool exact = false;
    st = tw_profile_lookup(tw_profile_dir(), gpu ? gpu : "", driver ? driver : "", out, path, sizeof path, &exact);
    if (st == TW_ENOTFOUND) {
        snprintf(how, how_cap, "no sensor profile for %s (driver %s) in %s", gpu && *gpu ? gpu : "this GPU",
                 driver && *driver ? driver : "unknown", tw_profile_dir());
        return st;
    }
    if (st != TW_OK) return st;
    snprintf(how, how_cap, "sensor profile %s%s", path,
             exact ? "" : " (identified under another driver: run 'truewatt sensor identify' for this one)");
    return TW_OK;
}

/* The first GPU a trace's provenance comment names ("...; gpu 0: NAME, driver VER; ..."). */
bool tw_trace_gpu(const char *path, int *index, char *gpu, size_t gpu_len, char *driver, size_t driver_len)
{
    struct stat sb;
    if (stat(path, &sb) != 0 || !S_ISREG(sb.st_mode)) return false; /* a pipe is read once, by the analysis */
    FILE *f = fopen(path, "r");
    if (!f) return false;
    char line[4096];
    bool found = false;
    for (int k = 0; k < 16 && !found && fgets(line, sizeof line, f) && line[0] == '#'; k++) {
        for (const char *p = strstr(line, "gpu "); p && !found; p = strstr(p + 4, "gpu ")) {
            unsigned idx;
            int used = 0;
            if (sscanf(p, "gpu %u: %n", &idx, &used) != 1 || used == 0) continue;
            const char *name = p + used, *d = strstr(name, ", driver ");
            if (!d || d == name) continue;
            const char *v = d + strlen(", driver ");
            snprintf(gpu, gpu_len, "%.*s", (int)(d - name), name);
            snprintf(driver, driver_len, "%.*s", (int)strcspn(v, ";\r\n"), v);
            *index = (int)idx;
            found = true;
        }
    }
    fclose(f);
    return found;
}
