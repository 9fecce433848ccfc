/* The backend table and the tw_sensor handle that fronts every backend. */
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "sensor/backend.h"

static const tw_backend *const backends[] = {
    &tw_backend_sim,
    &tw_backend_replay,
    &tw_backend_nvml,
};

#define NBACKENDS (sizeof backends / sizeof backends[0])

struct tw_sensor {
    const tw_backend *ops;
    void *state;
};

size_t tw_backend_count(void) { return NBACKENDS; }

const char *tw_backend_name(size_t i) { return i < NBACKENDS ? backends[i]->name : NULL; }

const char *tw_backend_description(size_t i) { return i < NBACKENDS ? backends[i]->description : NULL; }

static const tw_backend *find_backend(const char *name)
{
    for (size_t i = 0; i < NBACKENDS; i++)
        if (name && strcmp(backends[i]->name, name) == 0) return backends[i];
    return NULL;
}

static void list_backends(char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < NBACKENDS && used < len; i++)
        used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? ", " : "", backends[i]->name);
}

bool tw_backend_available(const char *name, char *why, size_t why_len)
{
    const tw_backend *b = find_backend(name);
    if (!b) {
        if (why && why_len) snprintf(why, why_len, "no backend named '%s'", name ? name : "(null)");
        return false;
    }
    char dummy[1];
    return b->available(why && why_len ? why : dummy, why && why_len ? why_len : sizeof dummy);
}

tw_status tw_backend_devices(const char *name, const tw_sensor_config *cfg, tw_device_info *out, size_t cap, size_t *n)
{
    tw_clear_error();
    const tw_backend *b = find_backend(name);
    if (!b) return tw_fail(TW_ENOTFOUND, "no sensor backend '%s'", name ? name : "(null)");
    if (!b->devices) return tw_fail(TW_EUNSUPPORTED, "backend '%s' has no devices to choose from", b->name);
    tw_sensor_config none = {0};
    return b->devices(cfg ? cfg : &none, out, cap, n);
}

tw_status tw_sensor_open(const char *backend, const tw_sensor_config *cfg, tw_sensor **out)
{
    tw_clear_error();
    if (!out || !cfg) return tw_fail(TW_EINVAL, "tw_sensor_open: NULL argument");
    *out = NULL;
    const tw_backend *b = find_backend(backend);
    if (!b) {
        char names[256];
        list_backends(names, sizeof names);
        return tw_fail(TW_ENOTFOUND, "no sensor backend '%s' (backends: %s)", backend ? backend : "(null)", names);
    }
    if (b->abi != TW_BACKEND_ABI)
        return tw_fail(TW_EUNSUPPORTED, "backend '%s' has ABI %u, expected %u", b->name, b->abi, TW_BACKEND_ABI);
    /* no available() pre-check: it cannot see cfg (e.g. cfg->library), and
     * each backend's open() says exactly why it cannot open */
    tw_sensor *s = calloc(1, sizeof *s);
    if (!s) return tw_fail(TW_ENOMEM, "out of memory");
    s->ops = b;
    tw_status st = b->open(cfg, &s->state);
    if (st != TW_OK) {
        free(s);
        return st;
    }
    *out = s;
    return TW_OK;
}

const char *tw_sensor_backend(const tw_sensor *s) { return s ? s->ops->name : NULL; }

size_t tw_sensor_nreadings(const tw_sensor *s) { return s ? s->ops->nreadings(s->state) : 0; }

const tw_reading_info *tw_sensor_reading(const tw_sensor *s, size_t i)
{
    if (!s || i >= s->ops->nreadings(s->state)) return NULL;
    return s->ops->reading(s->state, i);
}

tw_status tw_sensor_find(const tw_sensor *s, const char *name, size_t *idx)
{
    if (!s || !name || !idx) return tw_fail(TW_EINVAL, "tw_sensor_find: NULL argument");
    size_t n = s->ops->nreadings(s->state);
    char names[512];
    size_t used = 0;
    names[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        const tw_reading_info *r = s->ops->reading(s->state, i);
        if (strcmp(r->name, name) == 0) {
            *idx = i;
            return TW_OK;
        }
        if (used < sizeof names)
            used += (size_t)snprintf(names + used, sizeof names - used, "%s%s", i ? ", " : "", r->name);
    }
    return tw_fail(TW_ENOTFOUND, "no reading '%s' (readings: %s)", name, names);
}

tw_status tw_sensor_next(tw_sensor *s, tw_row *row, bool *eof)
{
    if (!s || !row || !eof) return tw_fail(TW_EINVAL, "tw_sensor_next: NULL argument");
    return s->ops->next(s->state, row, eof);
}

size_t tw_sensor_pending(const tw_sensor *s) { return s && s->ops->pending ? s->ops->pending(s->state) : 0; }

tw_status tw_sensor_rewind(tw_sensor *s)
{
    if (!s) return tw_fail(TW_EINVAL, "tw_sensor_rewind: NULL sensor");
    if (!s->ops->rewind) return tw_fail(TW_EUNSUPPORTED, "backend '%s' cannot rewind", s->ops->name);
    return s->ops->rewind(s->state);
}

const char *tw_sensor_notes(const tw_sensor *s)
{
    if (!s || !s->ops->notes) return "";
    const char *n = s->ops->notes(s->state);
    return n ? n : "";
}

void tw_sensor_close(tw_sensor *s)
{
    if (!s) return;
    s->ops->close(s->state);
    free(s);
}
