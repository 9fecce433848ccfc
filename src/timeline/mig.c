/* MIG instances: see mig.h. */
#include "timeline/mig.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

const tw_mig_instance *tw_mig_instance_of(const char *uuid, const tw_mig_instance *mig, size_t n)
{
    if (!uuid || strncasecmp(uuid, "MIG-", 4) != 0) return NULL;
    for (size_t i = 0; i < n; i++)
        if (strcasecmp(mig[i].uuid, uuid) == 0) return &mig[i];
    return NULL;
}

tw_status tw_mig_remap(const tw_events *in, const tw_mig_instance *mig, size_t n, tw_events **out)
{
    tw_status st = tw_events_new(out);
    for (size_t i = 0; st == TW_OK && i < tw_events_count(in); i++) {
        tw_event e = *tw_events_get(in, i);
        const tw_mig_instance *m = tw_mig_instance_of(e.device_uuid, mig, n);
        char name[1024];
        if (m) {
            tw_mig_label(m, e.name, name, sizeof name);
            e.name = name;
            e.device_uuid = m->parent_uuid;
        }
        st = tw_events_add(*out, &e);
    }
    if (st != TW_OK) {
        tw_events_free(*out);
        *out = NULL;
    }
    return st;
}

void tw_mig_label(const tw_mig_instance *m, const char *name, char *out, size_t cap)
{
    snprintf(out, cap, "MIG %u: %s", m->position, name ? name : "");
}

bool tw_mig_name_split(const char *name, unsigned *position, const char **rest)
{
    unsigned k;
    int used = 0;
    if (!name || sscanf(name, "MIG %u: %n", &k, &used) != 1 || used == 0) return false;
    *position = k;
    *rest = name + used;
    return true;
}
