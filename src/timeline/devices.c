/* Events to the GPUs they ran on; the GPUs to sample. See devices.h. */
#include "timeline/devices.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/error.h"
#include "core/strmap.h"
#include "trace/events_source.h"

/* ---------------------------------------------------------------- events to devices */

#define ALL_SLOTS ((size_t)-1)
#define UNMEASURED ((size_t)-2)

static bool is_nvtx(const tw_event *e) { return e->kind && strcmp(e->kind, "nvtx") == 0; }
static bool has_uuid(const char *u) { return u && *u; }

/* The slot of event e: an index into dev, ALL_SLOTS or UNMEASURED. */
static size_t slot_of(const tw_event *e, const tw_device_info *dev, size_t ndev, bool by_uuid)
{
    if (is_nvtx(e)) return ALL_SLOTS;
    if (by_uuid && has_uuid(e->device_uuid)) {
        for (size_t k = 0; k < ndev; k++)
            if (strcasecmp(dev[k].uuid, e->device_uuid) == 0) return k;
        return UNMEASURED;
    }
    if (e->device < 0) return ALL_SLOTS;
    if (ndev == 1) return 0;
    for (size_t k = 0; k < ndev; k++)
        if ((int64_t)dev[k].index == (int64_t)e->device) return k;
    return UNMEASURED;
}

/* Whether UUIDs decide (some device has one). */
static bool any_uuid(const tw_device_info *dev, size_t ndev)
{
    for (size_t k = 0; k < ndev; k++)
        if (dev[k].uuid[0]) return true;
    return false;
}

static tw_status count_unmeasured(tw_unmeasured_summary *u, const tw_event *e, bool by_uuid)
{
    const char *uuid = by_uuid && has_uuid(e->device_uuid) ? e->device_uuid : "";
    size_t k = 0;
    /* events without a UUID are told apart by their device number */
    while (k < u->n && !(strcasecmp(u->dev[k].uuid, uuid) == 0 && (*uuid || u->dev[k].device == e->device)))
        k++;
    if (k == u->n) {
        tw_unmeasured_device *p = realloc(u->dev, (u->n + 1) * sizeof *p);
        if (!p) return tw_fail(TW_ENOMEM, "out of memory (unmeasured devices)");
        u->dev = p;
        memset(&p[k], 0, sizeof p[k]);
        snprintf(p[k].uuid, sizeof p[k].uuid, "%s", uuid);
        p[k].device = e->device;
        u->n++;
    }
    u->dev[k].events++;
    u->dev[k].busy_s += e->end_s - e->start_s;
    u->events++;
    return TW_OK;
}

void tw_unmeasured_summary_free(tw_unmeasured_summary *unm)
{
    if (!unm) return;
    free(unm->dev);
    memset(unm, 0, sizeof *unm);
}

/* True when every event of ev goes to the one device (or to all). */
static bool all_on_one(const tw_events *ev, const tw_device_info *dev, bool by_uuid)
{
    for (size_t i = 0; i < tw_events_count(ev); i++)
        if (slot_of(tw_events_get(ev, i), dev, 1, by_uuid) == UNMEASURED) return false;
    return true;
}

tw_status tw_timeline_split(tw_events *ev, const tw_device_info *dev, size_t ndev, tw_events **per_dev,
                            tw_unmeasured_summary *unm)
{
    if (!dev || !per_dev || !unm || ndev == 0) return tw_fail(TW_EINVAL, "tw_timeline_split: no devices");
    memset(unm, 0, sizeof *unm);
    for (size_t k = 0; k < ndev; k++)
        per_dev[k] = NULL;
    bool by_uuid = any_uuid(dev, ndev);
    if (ndev == 1 && ev && all_on_one(ev, dev, by_uuid)) {
        per_dev[0] = tw_events_share(ev);
        return TW_OK;
    }
    tw_status st = TW_OK;
    for (size_t k = 0; st == TW_OK && k < ndev; k++)
        st = tw_events_new(&per_dev[k]);
    for (size_t i = 0; st == TW_OK && i < tw_events_count(ev); i++) {
        const tw_event *e = tw_events_get(ev, i);
        size_t s = slot_of(e, dev, ndev, by_uuid);
        if (s == UNMEASURED)
            st = count_unmeasured(unm, e, by_uuid);
        else if (s == ALL_SLOTS)
            for (size_t k = 0; st == TW_OK && k < ndev; k++)
                st = tw_events_add(per_dev[k], e);
        else
            st = tw_events_add(per_dev[s], e);
    }
    if (st != TW_OK) {
        for (size_t k = 0; k < ndev; k++) {
            tw_events_free(per_dev[k]);
            per_dev[k] = NULL;
        }
        tw_unmeasured_summary_free(unm);
    }
    return st;
}

/* ---------------------------------------------------------------- the split as a stream */

struct tw_device_feed {
    const tw_feed *all;
    const tw_device_info *dev;
    size_t ndev, slot;
    bool by_uuid;
    const tw_mig_instance *mig;
    size_t nmig;
    tw_strmap labels;            /* "MIG 1: gemm", each once: the addresses stay, replay after replay */
    tw_unmeasured_summary *unm;  /* counting (tw_timeline_unmeasured) instead of passing on */
    tw_unmeasured_summary *also; /* counting as well, on the next complete replay (tw_device_feed_count) */
    bool *counted;
    tw_feed_fn fn; /* the replay's */
    void *ctx;
};

/* e as tw_mig_remap gives it (its label interned in f->labels); false when out of memory. */
static bool mig_event(tw_device_feed *f, const tw_event *in, tw_event *e)
{
    *e = *in;
    const tw_mig_instance *m = f->nmig ? tw_mig_instance_of(in->device_uuid, f->mig, f->nmig) : NULL;
    if (!m) return true;
    char name[1024];
    tw_mig_label(m, in->name, name, sizeof name);
    bool added;
    if (!tw_strmap_get(&f->labels, name, &e->name, &added)) return false;
    e->device_uuid = m->parent_uuid;
    return true;
}

static tw_status device_one(void *ctx, const tw_event *in)
{
    tw_device_feed *f = ctx;
    tw_event e;
    if (!mig_event(f, in, &e)) return tw_fail(TW_ENOMEM, "out of memory (MIG labels)");
    size_t s = slot_of(&e, f->dev, f->ndev, f->by_uuid);
    if (f->unm) return s == UNMEASURED ? count_unmeasured(f->unm, &e, f->by_uuid) : TW_OK;
    if (s == UNMEASURED && f->also) return count_unmeasured(f->also, &e, f->by_uuid);
    return s == f->slot || s == ALL_SLOTS ? f->fn(f->ctx, &e) : TW_OK;
}

static tw_status device_replay(const tw_feed *feed, unsigned fields, tw_feed_fn fn, void *ctx)
{
    tw_device_feed *f = feed->src;
    f->fn = fn;
    f->ctx = ctx;
    if (f->also) tw_unmeasured_summary_free(f->also); /* a replay cut short counted part */
    tw_status st = tw_feed_replay_fields(f->all, fields | TW_FEED_DEVICE, device_one, f); /* the split's own */
    if (st == TW_OK && f->also) {
        *f->counted = true;
        f->also = NULL;
    }
    return st;
}

void tw_device_feed_count(tw_device_feed *f, tw_unmeasured_summary *unm, bool *done)
{
    memset(unm, 0, sizeof *unm);
    *done = false;
    f->also = unm;
    f->counted = done;
}

static tw_device_feed *device_feed_new(const tw_feed *all, const tw_device_info *dev, size_t ndev, size_t slot,
                                       const tw_mig_instance *mig, size_t nmig)
{
    tw_device_feed *f = calloc(1, sizeof *f);
    if (f)
        *f = (tw_device_feed){.all = all,
                              .dev = dev,
                              .ndev = ndev,
                              .slot = slot,
                              .by_uuid = any_uuid(dev, ndev),
                              .mig = mig,
                              .nmig = nmig};
    return f;
}

tw_status tw_device_feed_open(const tw_feed *all, const tw_device_info *dev, size_t ndev, size_t slot,
                              const tw_mig_instance *mig, size_t nmig, tw_device_feed **out, tw_feed *feed)
{
    if (!all || !dev || slot >= ndev || !out || !feed) return tw_fail(TW_EINVAL, "tw_device_feed_open: bad argument");
    if (!(*out = device_feed_new(all, dev, ndev, slot, mig, nmig))) return tw_fail(TW_ENOMEM, "out of memory");
    *feed = (tw_feed){device_replay, *out, all->hint};
    return TW_OK;
}

void tw_device_feed_free(tw_device_feed *f)
{
    if (!f) return;
    tw_strmap_free(&f->labels);
    free(f);
}

tw_status tw_timeline_unmeasured(const tw_feed *all, const tw_device_info *dev, size_t ndev, const tw_mig_instance *mig,
                                 size_t nmig, tw_unmeasured_summary *unm)
{
    if (!all || !dev || !unm || ndev == 0) return tw_fail(TW_EINVAL, "tw_timeline_unmeasured: no devices");
    memset(unm, 0, sizeof *unm);
    tw_device_feed *f = device_feed_new(all, dev, ndev, 0, mig, nmig);
    if (!f) return tw_fail(TW_ENOMEM, "out of memory");
    f->unm = unm;
    tw_status st = tw_feed_replay_fields(all, TW_FEED_DEVICE, device_one, f);
    tw_device_feed_free(f);
    if (st != TW_OK) tw_unmeasured_summary_free(unm);
    return st;
}

void tw_unmeasured_describe(const tw_unmeasured_summary *unm, char *buf, size_t cap)
{
    if (!buf || cap == 0) return;
    size_t used = strnlen(buf, cap - 1);
    buf[used] = '\0';
    for (size_t k = 0; unm && k < unm->n && used + 1 < cap; k++) {
        const tw_unmeasured_device *d = &unm->dev[k];
        char who[128];
        if (d->uuid[0])
            snprintf(who, sizeof who, "GPU %s", d->uuid);
        else
            snprintf(who, sizeof who, "device %d", (int)d->device);
        int w = snprintf(buf + used, cap - used,
                         "warning: %zu kernels, copies or memsets (%.3f s busy) ran on %s, which is not sampled: "
                         "they are reported as unmeasured, charged to no GPU (sample it with --device)\n",
                         d->events, d->busy_s, who);
        if (w < 0) break;
        used += (size_t)w < cap - used ? (size_t)w : cap - used - 1;
    }
}

/* ---------------------------------------------------------------- the GPUs to sample */

__attribute__((format(printf, 3, 4))) static void note_add(char *note, size_t len, const char *fmt, ...)
{
    if (!note || len == 0) return;
    size_t used = strnlen(note, len - 1);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(note + used, len - used, fmt, ap);
    va_end(ap);
}

/* "0: GPU-..., 1: GPU-..." for messages. */
static const char *seen_list(const tw_device_info *all, size_t nall, char *buf, size_t cap)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < nall && used + 1 < cap; i++) {
        int w = snprintf(buf + used, cap - used, "%s%u: %s", i ? ", " : "", all[i].index, all[i].uuid);
        if (w < 0) break;
        used += (size_t)w;
    }
    if (nall == 0) snprintf(buf, cap, "none");
    return buf;
}

/* A whole decimal number (no sign, no blanks); false otherwise. */
static bool parse_index(const char *s, unsigned long *out)
{
    if (!isdigit((unsigned char)*s)) return false;
    errno = 0;
    char *end;
    unsigned long v = strtoul(s, &end, 10);
    if (errno || *end) return false;
    *out = v;
    return true;
}

typedef enum { FOUND, NO_SUCH, AMBIGUOUS } match;

/* The device whose UUID is `u` or starts with it (case ignored). */
static match by_uuid_prefix(const char *u, const tw_device_info *all, size_t nall, size_t *pos)
{
    size_t len = strlen(u), hits = 0;
    for (size_t i = 0; i < nall; i++) {
        if (strncasecmp(all[i].uuid, u, len) != 0) continue;
        if (strlen(all[i].uuid) == len) { /* exact: no ambiguity */
            *pos = i;
            return FOUND;
        }
        *pos = i;
        hits++;
    }
    return hits == 1 ? FOUND : hits ? AMBIGUOUS : NO_SUCH;
}

static match by_index(unsigned long v, const tw_device_info *all, size_t nall, size_t *pos)
{
    for (size_t i = 0; i < nall; i++)
        if (all[i].index == v) {
            *pos = i;
            return FOUND;
        }
    return NO_SUCH;
}

static void trim(char **s)
{
    while (**s == ' ' || **s == '\t')
        (*s)++;
    size_t n = strlen(*s);
    while (n && ((*s)[n - 1] == ' ' || (*s)[n - 1] == '\t'))
        (*s)[--n] = '\0';
}

/* Splits a comma-separated copy into items (in place, blanks around each
 * trimmed, empty ones kept); cap + 1 when there are more than cap. "" is no item. */
static size_t split(char *copy, char **items, size_t cap)
{
    size_t n = 0;
    if (!*copy) return 0;
    for (char *t = copy;;) {
        char *comma = strchr(t, ',');
        if (comma) *comma = '\0';
        if (n == cap) return cap + 1;
        trim(&t);
        items[n++] = t;
        if (!comma) return n;
        t = comma + 1;
    }
}

#define MAX_ITEMS 64

/* CUDA_VISIBLE_DEVICES as CUDA reads it: entries up to the first it cannot
 * use, each resolved to a position in `all` (vpos), or (MIG instances, which
 * NVML does not sample on their own) SIZE_MAX. */
/* The MIG instance `uuid` names (its full UUID, as CUDA takes it) among mig[0..nmig), and its GPU's
 * position in all (FOUND), or why not. */
static match by_mig(const char *uuid, const tw_mig_instance *mig, size_t nmig, const tw_device_info *all, size_t nall,
                    size_t *pos, const tw_mig_instance **which)
{
    for (size_t i = 0; i < nmig; i++)
        if (strcasecmp(mig[i].uuid, uuid) == 0) {
            *which = &mig[i];
            return by_index(mig[i].parent_index, all, nall, pos);
        }
    return NO_SUCH;
}

/* A MIG instance named by CUDA_VISIBLE_DEVICES or --device: its GPU is sampled (NVML reads power per
 * GPU), said in the note with the label its kernels get. */
static void note_mig(char *note, size_t note_len, const char *where, const char *item, const tw_mig_instance *m)
{
    note_add(note, note_len,
             "%s: %s is MIG instance %u of GPU %u (%s): that GPU is sampled, the instance's kernels labelled "
             "'MIG %u: ...'; the GPU's energy includes its other instances' work\n",
             where, item, m->position, m->parent_index, m->parent_uuid, m->position);
}

static size_t visible_devices(const char *cuda_visible, const tw_device_info *all, size_t nall,
                              const tw_mig_instance *mig, size_t nmig, size_t *vpos, char *note, size_t note_len)
{
    char copy[1024];
    if (strlen(cuda_visible) >= sizeof copy) {
        note_add(note, note_len, "CUDA_VISIBLE_DEVICES is too long to read: ignored\n");
        return 0;
    }
    snprintf(copy, sizeof copy, "%s", cuda_visible);
    char *items[MAX_ITEMS];
    size_t n = split(copy, items, MAX_ITEMS);
    if (n > MAX_ITEMS) n = MAX_ITEMS;
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned long v;
        size_t pos = 0;
        match r = NO_SUCH;
        if (parse_index(items[i], &v))
            r = by_index(v, all, nall, &pos);
        else if (strncasecmp(items[i], "MIG-", 4) == 0) {
            const tw_mig_instance *inst = NULL;
            if (by_mig(items[i], mig, nmig, all, nall, &pos, &inst) == FOUND) {
                note_mig(note, note_len, "CUDA_VISIBLE_DEVICES", items[i], inst);
                vpos[m++] = pos;
                continue;
            }
            note_add(note, note_len,
                     "CUDA_VISIBLE_DEVICES names the MIG instance %s: NVML reads power per GPU, so its kernels "
                     "are charged to no GPU unless its GPU is sampled\n",
                     items[i]);
            vpos[m++] = SIZE_MAX;
            continue;
        } else if (strncasecmp(items[i], "GPU-", 4) == 0)
            r = by_uuid_prefix(items[i], all, nall, &pos);
        if (r != FOUND) { /* CUDA ignores this entry and all after it */
            note_add(note, note_len,
                     "CUDA_VISIBLE_DEVICES: '%s' names no single GPU; CUDA ignores it and what follows\n", items[i]);
            break;
        }
        vpos[m++] = pos;
    }
    return m;
}

static bool already(const size_t *pos, size_t n, size_t p)
{
    for (size_t i = 0; i < n; i++)
        if (pos[i] == p) return true;
    return false;
}

tw_status tw_devices_check(const char *list)
{
    if (!list) return TW_OK;
    char copy[1024];
    if (strlen(list) >= sizeof copy) return tw_fail(TW_EINVAL, "--device: the list is too long");
    snprintf(copy, sizeof copy, "%s", list);
    char *items[MAX_ITEMS];
    size_t m = split(copy, items, MAX_ITEMS);
    if (m > MAX_ITEMS) return tw_fail(TW_EINVAL, "--device: at most %d GPUs", MAX_ITEMS);
    if (m == 0) return tw_fail(TW_EINVAL, "--device needs a list of GPUs, got '%s'", list);
    for (size_t i = 0; i < m; i++) {
        const char *it = items[i];
        unsigned long v;
        if (!*it) return tw_fail(TW_EINVAL, "--device '%s': an empty item", list);
        if (strncmp(it, "cuda:", 5) == 0 && !parse_index(it + 5, &v))
            return tw_fail(TW_EINVAL, "--device '%s': cuda: needs a CUDA device number, e.g. cuda:0", it);
        if (strncmp(it, "cuda:", 5) != 0 && !parse_index(it, &v) && strncasecmp(it, "GPU-", 4) != 0 &&
            strncasecmp(it, "MIG-", 4) != 0)
            return tw_fail(TW_EINVAL,
                           "--device '%s': not a GPU; give an NVML index (1), a CUDA device (cuda:1) or a UUID "
                           "(GPU-...)",
                           it);
    }
    return TW_OK;
}

/* One item of --device to a position in all. */
static tw_status resolve_item(const char *item, const char *cuda_visible, const tw_device_info *all, size_t nall,
                              const tw_mig_instance *mig, size_t nmig, size_t *pos, char *note, size_t note_len)
{
    char seen[1024];
    unsigned long v;
    if (strncmp(item, "cuda:", 5) == 0) {
        if (!parse_index(item + 5, &v))
            return tw_fail(TW_EINVAL, "--device '%s': cuda: needs a CUDA device number, e.g. cuda:0", item);
        if (!cuda_visible) {
            if (by_index(v, all, nall, pos) == FOUND) return TW_OK;
            return tw_fail(TW_ENOTFOUND, "--device '%s': no such GPU (CUDA_VISIBLE_DEVICES is unset; NVML sees %s)",
                           item, seen_list(all, nall, seen, sizeof seen));
        }
        size_t vpos[MAX_ITEMS];
        size_t m = visible_devices(cuda_visible, all, nall, mig, nmig, vpos, note, note_len);
        if (v >= m)
            return tw_fail(TW_ENOTFOUND, "--device '%s': CUDA_VISIBLE_DEVICES='%s' makes %zu GPU%s visible to CUDA",
                           item, cuda_visible, m, m == 1 ? "" : "s");
        if (vpos[v] == SIZE_MAX)
            return tw_fail(TW_EUNSUPPORTED,
                           "--device '%s' is a MIG instance whose GPU NVML does not list: NVML reads power per GPU; "
                           "give its GPU's index or UUID",
                           item);
        *pos = vpos[v];
        return TW_OK;
    }
    if (parse_index(item, &v)) {
        if (by_index(v, all, nall, pos) == FOUND) return TW_OK;
        return tw_fail(TW_ENOTFOUND, "--device '%s': no GPU with that NVML index (NVML sees %s)", item,
                       seen_list(all, nall, seen, sizeof seen));
    }
    if (strncasecmp(item, "GPU-", 4) == 0) {
        match r = by_uuid_prefix(item, all, nall, pos);
        if (r == FOUND) return TW_OK;
        return tw_fail(TW_ENOTFOUND, "--device '%s': %s (NVML sees %s)", item,
                       r == AMBIGUOUS ? "more than one GPU's UUID starts so" : "no GPU has that UUID",
                       seen_list(all, nall, seen, sizeof seen));
    }
    if (strncasecmp(item, "MIG-", 4) == 0) {
        const tw_mig_instance *inst = NULL;
        if (by_mig(item, mig, nmig, all, nall, pos, &inst) == FOUND) {
            note_mig(note, note_len, "--device", item, inst);
            return TW_OK;
        }
        return tw_fail(TW_EUNSUPPORTED,
                       "--device '%s': no MIG instance of a GPU NVML lists has that UUID (NVML reads power per GPU; "
                       "give its GPU's index or UUID)",
                       item);
    }
    return tw_fail(TW_EINVAL,
                   "--device '%s': not a GPU; give an NVML index (1), a CUDA device (cuda:1) or a UUID (GPU-...)",
                   item);
}

tw_status tw_devices_resolve(const char *list, const char *cuda_visible, const tw_device_info *all, size_t nall,
                             size_t *pos, size_t cap, size_t *n, char *note, size_t note_len)
{
    return tw_devices_resolve_mig(list, cuda_visible, all, nall, NULL, 0, pos, cap, n, note, note_len);
}

tw_status tw_devices_resolve_mig(const char *list, const char *cuda_visible, const tw_device_info *all, size_t nall,
                                 const tw_mig_instance *mig, size_t nmig, size_t *pos, size_t cap, size_t *n,
                                 char *note, size_t note_len)
{
    if (note && note_len) note[0] = '\0';
    if (!all || !pos || !n) return tw_fail(TW_EINVAL, "tw_devices_resolve: NULL argument");
    *n = 0;
    if (!list) {
        if (cuda_visible) {
            size_t vpos[MAX_ITEMS];
            size_t m = visible_devices(cuda_visible, all, nall, mig, nmig, vpos, note, note_len);
            for (size_t i = 0; i < m; i++)
                if (vpos[i] != SIZE_MAX && !already(pos, *n, vpos[i]) && *n < cap) pos[(*n)++] = vpos[i];
            if (*n) return TW_OK;
            note_add(note, note_len, "CUDA_VISIBLE_DEVICES names no GPU NVML sees: sampling all GPUs\n");
        }
        for (size_t i = 0; i < nall && *n < cap; i++)
            pos[(*n)++] = i;
        return TW_OK;
    }
    tw_status st = tw_devices_check(list);
    if (st != TW_OK) return st;
    char copy[1024];
    snprintf(copy, sizeof copy, "%s", list);
    char *items[MAX_ITEMS];
    size_t m = split(copy, items, MAX_ITEMS);
    for (size_t i = 0; i < m; i++) {
        size_t p = 0;
        st = resolve_item(items[i], cuda_visible, all, nall, mig, nmig, &p, note, note_len);
        if (st != TW_OK) return st;
        if (already(pos, *n, p)) continue;
        if (*n == cap) return tw_fail(TW_EINVAL, "--device: at most %zu GPUs", cap);
        pos[(*n)++] = p;
    }
    return TW_OK;
}
