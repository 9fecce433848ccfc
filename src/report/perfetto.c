/* Perfetto's protobuf trace, streamed: the tracks' descriptors, the counters
 * from the trace as it is read, the corrected power of each estimate, then
 * the slices in time order. Field numbers are those of Perfetto's published
 * protos (protos/perfetto/trace/trace.proto, trace_packet.proto,
 * clock_snapshot.proto, trace_packet_defaults.proto,
 * track_event/track_event.proto, track_descriptor.proto,
 * counter_descriptor.proto, debug_annotation.proto,
 * interned_data/interned_data.proto).
 *
 * Each track is a packet sequence of its own, its times only growing (a
 * counter track, a corrected power track, a stream's slices): its first packet
 * clears the sequence's state, defines clock 64 as incremental (ns, starting
 * at 0 = BOOTTIME 0) and sets it as the sequence's default clock, so every
 * later packet's timestamp is the delta from the previous one, and makes the
 * track its events' default. Slice names and the energy argument's name are
 * interned on each slice track's sequence. Later packets carry no sequence
 * flags: Perfetto's trace processor uses a sequence's interned data and
 * clocks whether or not a packet says it needs them (the flag only lets it
 * skip packets after a loss, which a file written at once never has), and
 * two bytes a packet are 4 of the ~36 a launch costs. */
#include "report/perfetto.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/strmap.h"

/* ---------------------------------------------------------------- field numbers */

enum {
    TRACE_PACKET = 1, /* Trace.packet */

    TP_CLOCK_SNAPSHOT = 6, /* TracePacket */
    TP_TIMESTAMP = 8,
    TP_SEQUENCE_ID = 10, /* trusted_packet_sequence_id */
    TP_TRACK_EVENT = 11,
    TP_INTERNED_DATA = 12,
    TP_SEQUENCE_FLAGS = 13,
    TP_DEFAULTS = 59, /* trace_packet_defaults */
    TP_TRACK_DESCRIPTOR = 60,

    CS_CLOCKS = 1, /* ClockSnapshot; its Clock: */
    CLOCK_ID = 1,
    CLOCK_TIMESTAMP = 2,
    CLOCK_IS_INCREMENTAL = 3,

    DEF_TIMESTAMP_CLOCK_ID = 58, /* TracePacketDefaults */
    DEF_TRACK_EVENT = 11,        /* track_event_defaults */
    TED_TRACK_UUID = 11,         /* TrackEventDefaults */

    TD_UUID = 1, /* TrackDescriptor */
    TD_NAME = 2,
    TD_PARENT_UUID = 5,
    TD_COUNTER = 8,
    TD_DESCRIPTION = 14,
    CD_UNIT_NAME = 6, /* CounterDescriptor */

    TE_DEBUG_ANNOTATIONS = 4, /* TrackEvent */
    TE_TYPE = 9,
    TE_NAME_IID = 10,
    TE_DOUBLE_COUNTER_VALUE = 44,

    DA_NAME_IID = 1, /* DebugAnnotation */
    DA_INT_VALUE = 4,
    DA_STRING_VALUE = 6,

    ID_EVENT_NAMES = 2, /* InternedData */
    ID_DEBUG_ANNOTATION_NAMES = 3,
    INTERNED_IID = 1, /* EventName, DebugAnnotationName */
    INTERNED_NAME = 2,
};

enum { SEQ_INCREMENTAL_STATE_CLEARED = 1, SEQ_NEEDS_INCREMENTAL_STATE = 2 };
enum { TYPE_SLICE_BEGIN = 1, TYPE_SLICE_END = 2, TYPE_COUNTER = 4 };
enum { PB_CLOCK_BOOTTIME = 6, PB_CLOCK_SEQUENCE = 64 /* the first sequence-scoped id */ };

/* The iids of the debug annotation names, interned on the slices' sequence.
 * The energy is an integer of microjoules: a varint of 2-3 bytes where a
 * double takes 9, and far finer than any launch's attribution is known.
 * A launch of a name whose figure is one-sided (tw_est_status_one_sided)
 * also carries its status and its share of the upper bound: its energy is
 * then no estimate to read alone. */
#define ENERGY_ARG_IID 1
#define ENERGY_ARG_NAME "energy_above_idle_uJ"
#define STATUS_ARG_IID 2
#define STATUS_ARG_NAME "energy_status"
#define UPPER_ARG_IID 3
#define UPPER_ARG_NAME "energy_upper_uJ"

/* ---------------------------------------------------------------- protobuf encoding */

enum { WIRE_VARINT = 0, WIRE_I64 = 1, WIRE_LEN = 2 };

#define PB_MAX_DEPTH 8
#define PB_FLUSH_BYTES (1u << 20)

/* The output buffer: whole packets are appended, and written out once it
 * holds PB_FLUSH_BYTES. A nested message gets a one-byte length slot when
 * opened; the rare one of 128 bytes or more moves up to make room. */
typedef struct pb {
    FILE *f;
    uint8_t *p;
    size_t len, cap;
    size_t open[PB_MAX_DEPTH]; /* where each open message's content starts */
    int depth;
    bool oom, io;
} pb;

static bool pb_reserve(pb *b, size_t n)
{
    if (b->len + n <= b->cap) return true;
    size_t cap = b->cap ? b->cap : PB_FLUSH_BYTES + 4096;
    while (cap < b->len + n)
        cap *= 2;
    uint8_t *p = realloc(b->p, cap);
    if (!p) {
        b->oom = true;
        return false;
    }
    b->p = p;
    b->cap = cap;
    return true;
}

static size_t varint_encode(uint8_t *out, uint64_t v)
{
    size_t n = 0;
    while (v >= 0x80) {
        out[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    out[n++] = (uint8_t)v;
    return n;
}

static void pb_raw_varint(pb *b, uint64_t v)
{
    if (pb_reserve(b, 10)) b->len += varint_encode(b->p + b->len, v);
}

static void pb_tag(pb *b, uint32_t field, int wire) { pb_raw_varint(b, (uint64_t)field << 3 | (uint64_t)wire); }

static void pb_varint(pb *b, uint32_t field, uint64_t v)
{
    pb_tag(b, field, WIRE_VARINT);
    pb_raw_varint(b, v);
}

/* A double is 8 bytes little-endian, whatever the host's order. */
static void pb_double(pb *b, uint32_t field, double v)
{
    pb_tag(b, field, WIRE_I64);
    if (!pb_reserve(b, 8)) return;
    uint64_t u;
    memcpy(&u, &v, sizeof u);
    for (int i = 0; i < 8; i++)
        b->p[b->len++] = (uint8_t)(u >> (8 * i));
}

static void pb_string(pb *b, uint32_t field, const char *s)
{
    size_t n = strlen(s);
    pb_tag(b, field, WIRE_LEN);
    pb_raw_varint(b, n);
    if (!pb_reserve(b, n)) return;
    memcpy(b->p + b->len, s, n);
    b->len += n;
}

static void pb_begin(pb *b, uint32_t field)
{
    pb_tag(b, field, WIRE_LEN);
    if (b->depth >= PB_MAX_DEPTH) { /* a bug here, not in the input */
        b->oom = true;
        return;
    }
    if (pb_reserve(b, 1)) b->len++; /* the length slot */
    b->open[b->depth++] = b->len;
}

static void pb_flush(pb *b)
{
    if (b->len && !b->io && fwrite(b->p, 1, b->len, b->f) != b->len) b->io = true;
    b->len = 0;
}

static void pb_end(pb *b)
{
    if (b->depth == 0 || b->oom) return;
    size_t start = b->open[--b->depth];
    size_t n = b->len - start;
    uint8_t v[10];
    size_t k = varint_encode(v, n);
    if (k > 1) {
        if (!pb_reserve(b, k - 1)) return;
        memmove(b->p + start + k - 1, b->p + start, n);
        b->len += k - 1;
    }
    memcpy(b->p + start - 1, v, k);
    if (b->depth == 0 && b->len >= PB_FLUSH_BYTES) pb_flush(b);
}

/* ---------------------------------------------------------------- sequences and tracks */

typedef struct sequence {
    uint32_t id;
    uint64_t last_ns; /* the clock's value: the last packet's time */
} sequence;

typedef struct writer {
    pb b;
    uint64_t next_uuid;
    uint32_t next_sequence;
    const perfetto_device *dev;
    size_t ndev;
    uint64_t *group; /* per device: the uuid of its track group */
} writer;

/* Times in ns on the sequences' clocks, which start at 0: a time before the
 * trace's 0 (or NaN) is drawn at 0. */
static uint64_t to_ns(double t_s) { return t_s > 0 ? (uint64_t)llround(t_s * 1e9) : 0; }

/* The first packet of a sequence: clears its state, defines its incremental
 * clock and makes it the default clock (and default_track, if not 0, the
 * default track of its events); interns the energy argument's name when asked. */
static void sequence_start(writer *w, sequence *s, uint64_t default_track, bool intern_energy_arg)
{
    pb *b = &w->b;
    s->id = w->next_sequence++;
    s->last_ns = 0;
    pb_begin(b, TRACE_PACKET);
    pb_varint(b, TP_SEQUENCE_ID, s->id);
    pb_varint(b, TP_SEQUENCE_FLAGS, SEQ_INCREMENTAL_STATE_CLEARED | SEQ_NEEDS_INCREMENTAL_STATE);
    pb_begin(b, TP_DEFAULTS);
    pb_varint(b, DEF_TIMESTAMP_CLOCK_ID, PB_CLOCK_SEQUENCE);
    if (default_track) {
        pb_begin(b, DEF_TRACK_EVENT);
        pb_varint(b, TED_TRACK_UUID, default_track);
        pb_end(b);
    }
    pb_end(b);
    if (intern_energy_arg) {
        static const struct {
            uint64_t iid;
            const char *name;
        } args[] = {
            {ENERGY_ARG_IID, ENERGY_ARG_NAME}, {STATUS_ARG_IID, STATUS_ARG_NAME}, {UPPER_ARG_IID, UPPER_ARG_NAME}};
        pb_begin(b, TP_INTERNED_DATA);
        for (size_t i = 0; i < sizeof args / sizeof *args; i++) {
            pb_begin(b, ID_DEBUG_ANNOTATION_NAMES);
            pb_varint(b, INTERNED_IID, args[i].iid);
            pb_string(b, INTERNED_NAME, args[i].name);
            pb_end(b);
        }
        pb_end(b);
    }
    pb_begin(b, TP_CLOCK_SNAPSHOT);
    pb_begin(b, CS_CLOCKS);
    pb_varint(b, CLOCK_ID, PB_CLOCK_SEQUENCE);
    pb_varint(b, CLOCK_TIMESTAMP, 0);
    pb_varint(b, CLOCK_IS_INCREMENTAL, 1);
    pb_end(b);
    pb_begin(b, CS_CLOCKS);
    pb_varint(b, CLOCK_ID, PB_CLOCK_BOOTTIME);
    pb_varint(b, CLOCK_TIMESTAMP, 0);
    pb_end(b);
    pb_end(b);
    pb_end(b);
}

/* Opens a packet of the sequence at t_ns; times within a sequence never go
 * back (the callers emit in time order; rounding cannot undo that). */
static void sequence_packet(writer *w, sequence *s, uint64_t t_ns)
{
    if (t_ns < s->last_ns) t_ns = s->last_ns;
    pb_begin(&w->b, TRACE_PACKET);
    pb_varint(&w->b, TP_TIMESTAMP, t_ns - s->last_ns);
    pb_varint(&w->b, TP_SEQUENCE_ID, s->id);
    s->last_ns = t_ns;
}

/* A track: unit NULL for a slice track, else a counter track in that unit
 * ("" = none); parent and description optional (0, NULL). */
static uint64_t track_new(writer *w, uint64_t parent, const char *name, const char *unit, const char *description)
{
    pb *b = &w->b;
    uint64_t uuid = w->next_uuid++;
    pb_begin(b, TRACE_PACKET);
    pb_begin(b, TP_TRACK_DESCRIPTOR);
    pb_varint(b, TD_UUID, uuid);
    if (parent) pb_varint(b, TD_PARENT_UUID, parent);
    pb_string(b, TD_NAME, name);
    if (description && *description) pb_string(b, TD_DESCRIPTION, description);
    if (unit) {
        pb_begin(b, TD_COUNTER);
        if (*unit) pb_string(b, CD_UNIT_NAME, unit);
        pb_end(b);
    }
    pb_end(b);
    pb_end(b);
    return uuid;
}

static void counter_value(writer *w, sequence *s, uint64_t t_ns, double v)
{
    sequence_packet(w, s, t_ns);
    pb_begin(&w->b, TP_TRACK_EVENT);
    pb_varint(&w->b, TE_TYPE, TYPE_COUNTER);
    pb_double(&w->b, TE_DOUBLE_COUNTER_VALUE, v);
    pb_end(&w->b);
    pb_end(&w->b);
}

static void write_groups(writer *w, const char *provenance)
{
    char name[160];
    for (size_t d = 0; d < w->ndev; d++) {
        const perfetto_device *x = &w->dev[d];
        if (x->name && *x->name)
            snprintf(name, sizeof name, "GPU %d (%s)", x->index, x->name);
        else
            snprintf(name, sizeof name, "GPU %d", x->index);
        w->group[d] = track_new(w, 0, name, NULL, provenance);
    }
}

/* ---------------------------------------------------------------- counters */

typedef struct counter_col {
    bool used;           /* a reading of one of the devices */
    bool interval_start; /* a buffer sample: drawn from the start of its interval */
    bool have;
    double last_v, last_t;
    uint64_t track;
    sequence seq;
} counter_col;

static bool ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

/* Which device a column belongs to (the longest matching prefix); -1 when none. */
static long column_device(const char *col, const perfetto_device *dev, size_t ndev)
{
    long best = -1;
    size_t best_len = 0;
    for (size_t d = 0; d < ndev; d++) {
        const char *p = dev[d].prefix ? dev[d].prefix : "";
        size_t len = strlen(p);
        if (strncmp(col, p, len) == 0 && (best < 0 || len > best_len)) {
            best = (long)d;
            best_len = len;
        }
    }
    return best;
}

/* The track of a reading: its name without the device's prefix and the unit
 * suffix, which becomes the counter's unit. */
static void setup_counter(writer *w, counter_col *c, const tw_reading_info *info, size_t d)
{
    const char *p = w->dev[d].prefix ? w->dev[d].prefix : "";
    const char *base = info->name + strlen(p);
    size_t len = strlen(base);
    const char *unit = "";
    if (info->quantity == TW_Q_POWER && ends_with(base, "_w")) {
        len -= 2;
        unit = "W";
    } else if (info->quantity == TW_Q_ENERGY && ends_with(base, "_j")) {
        len -= 2;
        unit = "J";
    }
    char name[128];
    snprintf(name, sizeof name, "%.*s", (int)len, base);
    c->used = true;
    c->interval_start = strstr(name, "buffer") != NULL;
    c->track = track_new(w, w->group[d], name, unit, NULL);
    sequence_start(w, &c->seq, c->track, false);
}

static void counter_row(writer *w, counter_col *c, size_t n, const tw_row *row)
{
    for (size_t i = 0; i < n; i++) {
        if (!c[i].used || !row->valid[i]) continue;
        double v = row->value[i], t = row->t_value_s[i];
        if (!isfinite(v) || !isfinite(t)) continue;
        /* one value per update, not per poll: a buffer sample is new when its time is,
         * another reading when its value changed */
        if (c[i].have && (t <= c[i].last_t || (!c[i].interval_start && v == c[i].last_v))) continue;
        /* a buffer sample is the mean over (previous sample, this one] */
        double at = c[i].interval_start && c[i].have ? c[i].last_t : t;
        counter_value(w, &c[i].seq, to_ns(at), v);
        c[i].have = true;
        c[i].last_v = v;
        c[i].last_t = t;
    }
}

static tw_status write_counters(writer *w, const char *trace_path)
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
        long d = column_device(info->name, w->dev, w->ndev);
        if (d >= 0) setup_counter(w, &c[i], info, (size_t)d);
    }
    for (;;) {
        tw_row row;
        bool eof;
        if ((st = tw_trace_reader_next(r, &row, &eof)) != TW_OK || eof) break;
        counter_row(w, c, n, &row);
    }
    free(c);
    tw_trace_reader_close(r);
    return st;
}

/* ---------------------------------------------------------------- corrected power */

/* The model's power (baseline + each launch's attributed energy spread over
 * its time) as its mean over bins of CORRECTED_BIN_S, or wider where the
 * fit span would need more than CORRECTED_MAX_BINS; a value is written only
 * where it changes. */
#define CORRECTED_BIN_S 1e-3
#define CORRECTED_MAX_BINS 1000000

static void spread_energy(double *bin_j, size_t nbins, double t0, double width, double a, double b, double j)
{
    if (!(b > a)) return;
    double p = j / (b - a);
    double lo = fmax(0.0, floor((a - t0) / width)), hi = fmin((double)nbins - 1, floor((b - t0) / width));
    for (double k = lo; k <= hi; k++) {
        double s = t0 + k * width, e = s + width;
        double ov = fmin(b, e) - fmax(a, s);
        if (ov > 0) bin_j[(size_t)k] += p * ov;
    }
}

/* The bins the launches' energies are spread over, as the feed replays them. */
typedef struct spreading {
    const tw_estimate *est;
    double *bin_j, t0, width;
    size_t nbins, i;
} spreading;

static tw_status spread_one(void *ctx, const tw_event *e)
{
    spreading *s = ctx;
    size_t i = s->i++;
    double j = tw_estimate_event_energy_j(s->est, i);
    if (isfinite(j))
        spread_energy(s->bin_j, s->nbins, s->t0, s->width, e->start_s + s->est->shift_s, e->end_s + s->est->shift_s, j);
    return TW_OK;
}

/* The bins of device d's corrected power, empty (sp->bin_j NULL when it has none to draw). */
static tw_status corrected_open(writer *w, size_t d, spreading *sp)
{
    const tw_estimate *est = w->dev[d].est;
    memset(sp, 0, sizeof *sp);
    if (!est || !w->dev[d].est_events || !est->energies_j || !(est->fit_t1_s > est->fit_t0_s)) return TW_OK;
    double t0 = est->fit_t0_s, span = est->fit_t1_s - t0;
    double width = fmax(CORRECTED_BIN_S, span / CORRECTED_MAX_BINS);
    size_t nbins = (size_t)ceil(span / width);
    double *bin_j = calloc(nbins ? nbins : 1, sizeof *bin_j);
    if (!bin_j) return tw_fail(TW_ENOMEM, "out of memory");
    *sp = (spreading){est, bin_j, t0, width, nbins, 0};
    return TW_OK;
}

/* The corrected power track of device d from its filled bins (freed). */
static void corrected_close(writer *w, size_t d, spreading *sp)
{
    const tw_estimate *est = sp->est;
    uint64_t track = track_new(w, w->group[d], "corrected power (model)", "W", NULL);
    sequence seq;
    sequence_start(w, &seq, track, false);
    double last = NAN;
    for (size_t k = 0; k < sp->nbins; k++) {
        double a = sp->t0 + (double)k * sp->width, b = fmin(a + sp->width, est->fit_t1_s);
        double p = (tw_estimate_baseline_j(est, a, b) + sp->bin_j[k]) / (b - a);
        if (p == last || !isfinite(p)) continue;
        counter_value(w, &seq, to_ns(a), p);
        last = p;
    }
    free(sp->bin_j);
    sp->bin_j = NULL;
}

/* Device d's corrected power from a replay of its estimate's events of its own. */
static tw_status write_corrected(writer *w, size_t d)
{
    spreading sp;
    tw_status st = corrected_open(w, d, &sp);
    if (st == TW_OK && sp.bin_j) st = tw_feed_replay(w->dev[d].est_events, spread_one, &sp);
    if (st == TW_OK && sp.bin_j) corrected_close(w, d, &sp);
    free(sp.bin_j);
    return st;
}

/* ---------------------------------------------------------------- slices */

/* The iid of s in a track's names (1, 2, ... in order of first sight, the
 * map's values); *fresh when it was not interned before. 0 when out of memory. */
static uint64_t names_iid(tw_strmap *t, const char *s, bool *fresh)
{
    const char *key;
    int64_t *iid = tw_strmap_get(t, s, &key, fresh);
    if (!iid) return 0;
    if (*fresh) *iid = (int64_t)t->n;
    return (uint64_t)*iid;
}

/* Slice tracks by (device, thread): a stream, or the NVTX ranges. Each is a
 * sequence of its own whose default track it is, so its events carry no
 * track; names are interned per track. */
#define NVTX_THREAD (-2)

typedef struct slice_track {
    size_t dev;
    long long thread;
    sequence seq;
    tw_strmap names;  /* the slice names interned on this track */
    uint64_t last_t0; /* its last begin: a sequence's times never go back */
    /* names' iids by the address of their text: a feed hands each text out at
     * one address, so most slices find theirs without hashing it; with the
     * estimate's name where its figure is one-sided (NULL: none) */
    struct name_hit {
        const char *name;
        uint64_t iid;
        const tw_est_name *one_sided;
    } hit[1024];
} slice_track;

typedef struct slice_tracks {
    slice_track *t;
    size_t n, cap, last; /* last: the one found last (consecutive events mostly share one) */
} slice_tracks;

typedef struct pending_end {
    uint64_t t_ns;
    uint64_t order; /* the begin's rank: of two ends at one time, the later begin's closes first */
    size_t track;   /* into slices.tracks */
} pending_end;

typedef struct end_heap {
    pending_end *h;
    size_t n, cap;
} end_heap;

static bool end_before(const pending_end *a, const pending_end *b)
{
    return a->t_ns < b->t_ns || (a->t_ns == b->t_ns && a->order > b->order);
}

static bool heap_push(end_heap *q, pending_end x)
{
    if (q->n == q->cap) {
        size_t cap = q->cap ? 2 * q->cap : 64;
        pending_end *h = realloc(q->h, cap * sizeof *h);
        if (!h) return false;
        q->h = h;
        q->cap = cap;
    }
    size_t i = q->n++;
    while (i > 0 && end_before(&x, &q->h[(i - 1) / 2])) {
        q->h[i] = q->h[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    q->h[i] = x;
    return true;
}

static pending_end heap_pop(end_heap *q)
{
    pending_end top = q->h[0], x = q->h[--q->n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= q->n) break;
        if (c + 1 < q->n && end_before(&q->h[c + 1], &q->h[c])) c++;
        if (!end_before(&q->h[c], &x)) break;
        q->h[i] = q->h[c];
        i = c;
    }
    if (q->n) q->h[i] = x;
    return top;
}

typedef struct slices {
    writer *w;
    bool energy; /* the energy argument's name is interned on each track */
    slice_tracks tracks;
    end_heap ends;
    tw_strmap *one_sided; /* per device: its estimate's one-sided names (value: index + 1), NULL until needed */
} slices;

/* The names of each device's estimate whose figure is one-sided, by name
 * (few: a map each, made once). False when out of memory. */
static bool one_sided_maps(slices *s)
{
    s->one_sided = calloc(s->w->ndev, sizeof *s->one_sided);
    if (!s->one_sided) return false;
    for (size_t d = 0; d < s->w->ndev; d++) {
        const tw_estimate *e = s->w->dev[d].est;
        for (size_t i = 0; e && i < e->nnames; i++) {
            if (!tw_est_status_one_sided(e->names[i].status)) continue;
            const char *key;
            bool added;
            int64_t *v = tw_strmap_get(&s->one_sided[d], e->names[i].name, &key, &added);
            if (!v) return false;
            if (added) *v = (int64_t)i + 1;
        }
    }
    return true;
}

/* The estimate's name of event e on device d where its figure is one-sided, else NULL. */
static const tw_est_name *one_sided_name(slices *s, size_t d, const tw_event *e)
{
    const tw_estimate *est = s->w->dev[d].est;
    if (!est || !e->name || !s->one_sided || s->one_sided[d].n == 0) return NULL;
    const char *key;
    bool added;
    int64_t *v = tw_strmap_get(&s->one_sided[d], e->name, &key, &added);
    if (!v || added) return NULL; /* added: a name without one (value 0, never read as one) */
    if (*v <= 0) return NULL;
    const tw_est_name *x = &est->names[*v - 1];
    const char *kind = e->kind && *e->kind ? e->kind : "kernel";
    return strcmp(x->kind, kind) == 0 ? x : NULL;
}

/* The device an event is drawn under: the one with its index, else the first. */
static size_t event_device(const tw_event *e, const perfetto_device *dev, size_t ndev)
{
    for (size_t d = 0; d < ndev; d++)
        if (dev[d].index == e->device) return d;
    return 0;
}

/* The index of the event's track, described and its sequence started when
 * first seen; SIZE_MAX when out of memory. */
static size_t slice_track_of(slices *s, const tw_event *e)
{
    slice_tracks *ts = &s->tracks;
    size_t d = event_device(e, s->w->dev, s->w->ndev);
    bool nvtx = e->kind && strcmp(e->kind, "nvtx") == 0;
    long long thread = nvtx ? NVTX_THREAD : (e->stream >= 0 ? (long long)e->stream : 0);
    if (ts->last < ts->n && ts->t[ts->last].dev == d && ts->t[ts->last].thread == thread) return ts->last;
    for (size_t i = 0; i < ts->n; i++) /* few tracks: streams and NVTX of each GPU */
        if (ts->t[i].dev == d && ts->t[i].thread == thread) {
            ts->last = i;
            return i;
        }
    if (ts->n == ts->cap) {
        size_t cap = ts->cap ? 2 * ts->cap : 16;
        slice_track *p = realloc(ts->t, cap * sizeof *p);
        if (!p) return SIZE_MAX;
        ts->t = p;
        ts->cap = cap;
    }
    char name[64];
    if (nvtx)
        snprintf(name, sizeof name, "NVTX ranges");
    else
        snprintf(name, sizeof name, "stream %lld", thread);
    slice_track *t = &ts->t[ts->n];
    *t = (slice_track){.dev = d, .thread = thread};
    sequence_start(s->w, &t->seq, track_new(s->w, s->w->group[d], name, NULL, NULL), s->energy);
    ts->last = ts->n++;
    return ts->last;
}

static void slice_end(slices *s, const pending_end *x)
{
    pb *b = &s->w->b;
    sequence_packet(s->w, &s->tracks.t[x->track].seq, x->t_ns);
    pb_begin(b, TP_TRACK_EVENT);
    pb_varint(b, TE_TYPE, TYPE_SLICE_END);
    pb_end(b);
    pb_end(b);
}

/* A launch of a name whose figure is one-sided: its status and its share of
 * the name's upper bound (at the power bound, its energy itself; below
 * resolution, by its share of the name's time, as the energy is only
 * bounded). */
static void one_sided_args(pb *b, const tw_event *e, const tw_est_name *x, double energy_j)
{
    double upper = x->status == TW_EST_AT_POWER_BOUND ? energy_j
                   : x->time_s > 0                    ? x->upper_j * (e->end_s - e->start_s) / x->time_s
                                                      : NAN;
    pb_begin(b, TE_DEBUG_ANNOTATIONS);
    pb_varint(b, DA_NAME_IID, STATUS_ARG_IID);
    pb_string(b, DA_STRING_VALUE, tw_est_status_name(x->status));
    pb_end(b);
    if (!isfinite(upper)) return;
    pb_begin(b, TE_DEBUG_ANNOTATIONS);
    pb_varint(b, DA_NAME_IID, UPPER_ARG_IID);
    pb_varint(b, DA_INT_VALUE, (uint64_t)llround(1e6 * upper));
    pb_end(b);
}

static tw_status slice_begin(slices *s, const tw_event *e, slice_track *t, uint64_t t_ns, double energy_j)
{
    pb *b = &s->w->b;
    const char *name = e->name ? e->name : "";
    struct name_hit *hit = &t->hit[((uint64_t)(uintptr_t)name * 0x9e3779b97f4a7c15ull) >> 54]; /* 1024 */
    bool fresh = false;
    if (hit->name != name) {
        uint64_t iid = names_iid(&t->names, name, &fresh);
        if (!iid) return tw_fail(TW_ENOMEM, "out of memory");
        *hit = (struct name_hit){name, iid, s->energy ? one_sided_name(s, t->dev, e) : NULL};
    }
    uint64_t iid = hit->iid;
    sequence_packet(s->w, &t->seq, t_ns);
    if (fresh) {
        pb_begin(b, TP_INTERNED_DATA);
        pb_begin(b, ID_EVENT_NAMES);
        pb_varint(b, INTERNED_IID, iid);
        pb_string(b, INTERNED_NAME, e->name ? e->name : "");
        pb_end(b);
        pb_end(b);
    }
    pb_begin(b, TP_TRACK_EVENT);
    pb_varint(b, TE_TYPE, TYPE_SLICE_BEGIN);
    pb_varint(b, TE_NAME_IID, iid);
    if (isfinite(energy_j)) {
        pb_begin(b, TE_DEBUG_ANNOTATIONS);
        pb_varint(b, DA_NAME_IID, ENERGY_ARG_IID);
        pb_varint(b, DA_INT_VALUE, (uint64_t)llround(1e6 * energy_j)); /* int64: two's complement */
        pb_end(b);
    }
    if (isfinite(energy_j) && hit->one_sided) one_sided_args(b, e, hit->one_sided, energy_j);
    pb_end(b);
    pb_end(b);
    return TW_OK;
}

/* What write_slices keeps while the feed replays. */
typedef struct slicing {
    slices s;
    const tw_estimate *energy;
    size_t i;
    spreading *corrected; /* the corrected power's bins filled by the same replay (NULL: its own) */
} slicing;

static tw_status slice_one(void *ctx, const tw_event *e)
{
    slicing *g = ctx;
    slices *s = &g->s;
    if (g->corrected) spread_one(g->corrected, e);
    size_t i = g->i++;
    size_t track = slice_track_of(s, e);
    uint64_t t0 = to_ns(e->start_s), t1 = to_ns(e->end_s);
    if (track == SIZE_MAX) return tw_fail(TW_ENOMEM, "out of memory");
    slice_track *t = &s->tracks.t[track];
    if (t0 < t->last_t0)
        return tw_fail(TW_EINVAL,
                       "perfetto: event %zu (%.100s) starts before the one before it on its track: not in order of "
                       "start",
                       i, e->name ? e->name : "");
    t->last_t0 = t0;
    while (s->ends.n && s->ends.h[0].t_ns <= t0) {
        pending_end x = heap_pop(&s->ends);
        slice_end(s, &x);
    }
    tw_status st = slice_begin(s, e, t, t0, tw_estimate_event_energy_j(g->energy, i));
    if (st == TW_OK && !heap_push(&s->ends, (pending_end){t1 > t0 ? t1 : t0, i, track}))
        st = tw_fail(TW_ENOMEM, "out of memory");
    return st;
}

/* Begins in start order (the feed's, or each track's: several GPUs' feeds
 * one after another); each end is held until no begin comes before it, so
 * no sequence's times go back. */
static tw_status write_slices(writer *w, const tw_feed *ev, const tw_estimate *energy, spreading *corrected)
{
    slicing g = {.s = {.w = w, .energy = energy != NULL}, .energy = energy, .corrected = corrected};
    slices *s = &g.s;
    tw_status st = s->energy && !one_sided_maps(s) ? tw_fail(TW_ENOMEM, "out of memory") : TW_OK;
    if (st == TW_OK) st = tw_feed_replay(ev, slice_one, &g);
    while (st == TW_OK && s->ends.n) {
        pending_end x = heap_pop(&s->ends);
        slice_end(s, &x);
    }
    for (size_t k = 0; k < s->tracks.n; k++)
        tw_strmap_free(&s->tracks.t[k].names);
    for (size_t d = 0; s->one_sided && d < w->ndev; d++)
        tw_strmap_free(&s->one_sided[d]);
    free(s->one_sided);
    free(s->tracks.t);
    free(s->ends.h);
    return st;
}

/* ---------------------------------------------------------------- the file */

static tw_status write_all(writer *w, const char *trace_path, const tw_feed *events, const tw_estimate *energy,
                           const char *provenance)
{
    write_groups(w, provenance);
    tw_status st = trace_path ? write_counters(w, trace_path) : TW_OK;
    /* one GPU whose estimate was made from the slices' own feed: one replay of
     * the run's events (from the run file) for both */
    const tw_feed *own = w->ndev == 1 ? w->dev[0].est_events : NULL;
    bool together = events && own && own->src == events->src && own->replay == events->replay;
    spreading sp = {0};
    for (size_t d = 0; st == TW_OK && d < w->ndev; d++)
        st = together ? corrected_open(w, d, &sp) : write_corrected(w, d);
    if (st == TW_OK && events) st = write_slices(w, events, energy, sp.bin_j ? &sp : NULL);
    if (st == TW_OK && sp.bin_j) corrected_close(w, 0, &sp);
    free(sp.bin_j);
    if (st == TW_OK && w->b.oom) st = tw_fail(TW_ENOMEM, "out of memory");
    return st;
}

tw_status perfetto_write(const char *path, const char *trace_path, const perfetto_device *dev, size_t ndev,
                         const tw_feed *events, const tw_estimate *energy, const char *provenance)
{
    tw_clear_error();
    if (!path) return tw_fail(TW_EINVAL, "perfetto_write: no path");
    perfetto_device one = {0, "", NULL, NULL, NULL};
    if (!dev || ndev == 0) {
        dev = &one;
        ndev = 1;
    }
    writer w = {.next_uuid = 1, .next_sequence = 1, .dev = dev, .ndev = ndev};
    w.group = calloc(ndev, sizeof *w.group);
    if (!w.group) return tw_fail(TW_ENOMEM, "out of memory");
    w.b.f = fopen(path, "wb");
    if (!w.b.f) {
        free(w.group);
        return tw_fail(TW_EIO, "%s: cannot open for writing: %s", path, strerror(errno));
    }
    tw_status st = write_all(&w, trace_path, events, energy, provenance);
    errno = 0;
    pb_flush(&w.b);
    bool bad = w.b.io || fflush(w.b.f) == EOF || ferror(w.b.f);
    int err = bad ? (errno ? errno : EIO) : 0;
    if (fclose(w.b.f) != 0 && !err) err = errno ? errno : EIO;
    free(w.b.p);
    free(w.group);
    if (st != TW_OK) return st;
    if (err) return tw_fail(TW_EIO, "%s: write failed: %s", path, strerror(err));
    return TW_OK;
}
