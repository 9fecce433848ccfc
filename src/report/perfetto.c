/* Chrome trace-event JSON, streamed: counters from the trace as it is read,
 * then the slices, then the names of the tracks. */
#include "report/perfetto.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/json.h"

typedef struct track {
    long long pid, tid;
} track;

typedef struct tracks {
    track *t;
    size_t n, cap;
    size_t last; /* the last one found: consecutive events mostly share a track */
} tracks;

static bool tracks_add(tracks *ts, long long pid, long long tid)
{
    if (ts->last < ts->n && ts->t[ts->last].pid == pid && ts->t[ts->last].tid == tid) return true;
    for (size_t i = 0; i < ts->n; i++)
        if (ts->t[i].pid == pid && ts->t[i].tid == tid) {
            ts->last = i;
            return true;
        }
    if (ts->n == ts->cap) {
        size_t cap = ts->cap ? 2 * ts->cap : 16;
        track *p = realloc(ts->t, cap * sizeof *p);
        if (!p) return false;
        ts->t = p;
        ts->cap = cap;
    }
    ts->t[ts->n] = (track){pid, tid};
    ts->last = ts->n++;
    return true;
}

static double us(double t_s) { return t_s * 1e6; }

/* ---------------------------------------------------------------- counters */

typedef struct counter_col {
    long long pid;
    char name[128]; /* the track's name: the reading without prefix and unit */
    const char *unit_key;
    bool interval_start; /* a buffer sample: drawn from the start of its interval */
    bool have;
    double last_v, last_t;
} counter_col;

static bool ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

/* Which device a column belongs to; NULL when none (another device's column). */
static const perfetto_device *column_device(const char *col, const perfetto_device *dev, size_t ndev)
{
    const perfetto_device *best = NULL;
    size_t best_len = 0;
    for (size_t d = 0; d < ndev; d++) {
        const char *p = dev[d].prefix ? dev[d].prefix : "";
        size_t len = strlen(p);
        if (strncmp(col, p, len) == 0 && (!best || len > best_len)) {
            best = &dev[d];
            best_len = len;
        }
    }
    return best;
}

static void setup_counter(counter_col *c, const tw_reading_info *info, const perfetto_device *d)
{
    const char *p = d->prefix ? d->prefix : "";
    const char *base = info->name + strlen(p);
    size_t len = strlen(base);
    c->pid = d->index;
    c->unit_key = "value";
    if (info->quantity == TW_Q_POWER && ends_with(base, "_w")) {
        len -= 2;
        c->unit_key = "W";
    } else if (info->quantity == TW_Q_ENERGY && ends_with(base, "_j")) {
        len -= 2;
        c->unit_key = "J";
    }
    snprintf(c->name, sizeof c->name, "%.*s", (int)len, base);
    c->interval_start = strstr(c->name, "buffer") != NULL;
}

static void counter_event(json *j, const counter_col *c, double t_s, double v)
{
    json_begin_object(j);
    json_kv_string(j, "ph", "C");
    json_kv_string(j, "name", c->name);
    json_key(j, "pid");
    json_number(j, (double)c->pid);
    json_kv_number(j, "ts", us(t_s));
    json_key(j, "args");
    json_begin_object(j);
    json_kv_number(j, c->unit_key, v);
    json_end_object(j);
    json_end_object(j);
}

static tw_status write_counters(json *j, const char *trace_path, const perfetto_device *dev, size_t ndev)
{
    tw_trace_reader *r = NULL;
    tw_status st = tw_trace_reader_open(trace_path, &r);
    if (st != TW_OK) return st;
    size_t n = tw_trace_reader_nreadings(r);
    counter_col *c = calloc(n ? n : 1, sizeof *c);
    if (!c) {
        tw_trace_reader_close(r);
        return tw_fail(TW_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < n; i++) {
        const tw_reading_info *info = tw_trace_reader_reading(r, i);
        const perfetto_device *d = column_device(info->name, dev, ndev);
        if (d)
            setup_counter(&c[i], info, d);
        else
            c[i].pid = -1;
    }
    for (;;) {
        tw_row row;
        bool eof;
        if ((st = tw_trace_reader_next(r, &row, &eof)) != TW_OK || eof) break;
        for (size_t i = 0; i < n; i++) {
            if (c[i].pid < 0 || !row.valid[i]) continue;
            double v = row.value[i], t = row.t_value_s[i];
            if (!isfinite(v) || !isfinite(t)) continue;
            /* one event per update, not per poll: a buffer sample is new when its time is,
             * another reading when its value changed */
            if (c[i].have && (t <= c[i].last_t || (!c[i].interval_start && v == c[i].last_v))) continue;
            /* a buffer sample is the mean over (previous sample, this one] */
            double at = c[i].interval_start && c[i].have ? c[i].last_t : t;
            counter_event(j, &c[i], at, v);
            c[i].have = true;
            c[i].last_v = v;
            c[i].last_t = t;
        }
    }
    free(c);
    tw_trace_reader_close(r);
    return st;
}

/* ---------------------------------------------------------------- slices */

static const perfetto_device *event_device(const tw_event *e, const perfetto_device *dev, size_t ndev)
{
    for (size_t d = 0; d < ndev; d++)
        if (dev[d].index == e->device) return &dev[d];
    return ndev ? &dev[0] : NULL;
}

static tw_status write_slices(json *j, const tw_events *ev, const double *energy, const perfetto_device *dev,
                              size_t ndev, tracks *ts)
{
    for (size_t i = 0; i < tw_events_count(ev); i++) {
        const tw_event *e = tw_events_get(ev, i);
        const perfetto_device *d = event_device(e, dev, ndev);
        long long pid = d ? d->index : (e->device >= 0 ? e->device : 0);
        bool nvtx = e->kind && strcmp(e->kind, "nvtx") == 0;
        long long tid = nvtx ? PERFETTO_NVTX_TID : (e->stream >= 0 ? (long long)e->stream : 0);
        if (!tracks_add(ts, pid, tid)) return tw_fail(TW_ENOMEM, "out of memory");
        json_begin_object(j);
        json_kv_string(j, "ph", "X");
        json_kv_string(j, "name", e->name);
        json_key(j, "pid");
        json_number(j, (double)pid);
        json_key(j, "tid");
        json_number(j, (double)tid);
        json_kv_number(j, "ts", us(e->start_s));
        json_kv_number(j, "dur", us(e->end_s - e->start_s));
        json_key(j, "args");
        json_begin_object(j);
        json_kv_string(j, "kind", e->kind ? e->kind : "kernel");
        if (e->stream >= 0 && !nvtx) {
            json_key(j, "stream");
            json_number(j, (double)e->stream);
        }
        if (energy && isfinite(energy[i])) json_kv_number(j, "energy_above_idle_J", energy[i]);
        json_end_object(j);
        json_end_object(j);
    }
    return TW_OK;
}

static void metadata(json *j, const char *what, long long pid, const long long *tid, const char *name)
{
    json_begin_object(j);
    json_kv_string(j, "ph", "M");
    json_kv_string(j, "name", what);
    json_key(j, "pid");
    json_number(j, (double)pid);
    if (tid) {
        json_key(j, "tid");
        json_number(j, (double)*tid);
    }
    json_key(j, "args");
    json_begin_object(j);
    json_kv_string(j, "name", name);
    json_end_object(j);
    json_end_object(j);
}

static void write_names(json *j, const perfetto_device *dev, size_t ndev, const tracks *ts)
{
    char name[160];
    for (size_t d = 0; d < ndev; d++) {
        if (dev[d].name && *dev[d].name)
            snprintf(name, sizeof name, "GPU %d (%s)", dev[d].index, dev[d].name);
        else
            snprintf(name, sizeof name, "GPU %d", dev[d].index);
        metadata(j, "process_name", dev[d].index, NULL, name);
    }
    for (size_t i = 0; i < ts->n; i++) {
        bool known = false;
        for (size_t d = 0; d < ndev; d++)
            known |= dev[d].index == ts->t[i].pid;
        if (!known) {
            snprintf(name, sizeof name, "GPU %lld", ts->t[i].pid);
            metadata(j, "process_name", ts->t[i].pid, NULL, name);
        }
        if (ts->t[i].tid == PERFETTO_NVTX_TID)
            snprintf(name, sizeof name, "NVTX ranges");
        else
            snprintf(name, sizeof name, "stream %lld", ts->t[i].tid);
        metadata(j, "thread_name", ts->t[i].pid, &ts->t[i].tid, name);
    }
}

tw_status perfetto_write(const char *path, const char *trace_path, const perfetto_device *dev, size_t ndev,
                         const tw_events *events, const double *event_energy_j, const char *provenance)
{
    tw_clear_error();
    if (!path) return tw_fail(TW_EINVAL, "perfetto_write: no path");
    perfetto_device one = {0, "", NULL};
    if (!dev || ndev == 0) {
        dev = &one;
        ndev = 1;
    }
    FILE *f = fopen(path, "w");
    if (!f) return tw_fail(TW_EIO, "%s: cannot open for writing: %s", path, strerror(errno));
    json j;
    json_init(&j, f);
    json_begin_object(&j);
    json_kv_string(&j, "displayTimeUnit", "ms");
    if (provenance && *provenance) {
        json_key(&j, "metadata");
        json_begin_object(&j);
        json_kv_string(&j, "truewatt", provenance);
        json_end_object(&j);
    }
    json_key(&j, "traceEvents");
    json_begin_array(&j);
    tracks ts = {0};
    tw_status st = TW_OK;
    if (trace_path) st = write_counters(&j, trace_path, dev, ndev);
    if (st == TW_OK && events) st = write_slices(&j, events, event_energy_j, dev, ndev, &ts);
    if (st == TW_OK) write_names(&j, dev, ndev, &ts);
    json_end_array(&j);
    json_end_object(&j);
    json_finish(&j);
    free(ts.t);
    errno = 0;
    bool bad = fflush(f) == EOF || ferror(f);
    int err = bad ? (errno ? errno : EIO) : 0;
    if (fclose(f) != 0 && !err) err = errno ? errno : EIO;
    if (st != TW_OK) return st;
    if (err) return tw_fail(TW_EIO, "%s: write failed: %s", path, strerror(err));
    return TW_OK;
}
