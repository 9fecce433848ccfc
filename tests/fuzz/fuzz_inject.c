/* The injection library's records (src/inject/event_csv.c, nvtx_ranges.c,
 * demangle.c): records built from the input (kernels, copies, memsets,
 * NVTX push/pop and start/end) are written as the library writes them, and
 * the file must load as an events file with one event per written line. */
#include <string.h>

#include "fuzz_common.h"
#include "inject/demangle.h"
#include "inject/event_csv.h"
#include "inject/nvtx_ranges.h"
#include "truewatt.h"

enum { MAX_OPS = 64, MAX_TEXT = 96 };

typedef struct state {
    twi_buf buf;
    twi_clock clock;
    twi_demangler *dm;
    twi_stack *stack;
    twi_ranges *ranges;
    size_t lines;
} state;

static void append(state *s, const twi_record *r)
{
    size_t before = s->buf.len;
    if (!twi_append_line(&s->buf, r, &s->clock, s->dm)) fuzz_fail("out of memory appending a line");
    if (s->buf.len != before) s->lines++;
}

static void activity(state *s, fuzz_bytes *b, uint8_t op)
{
    char name[MAX_TEXT + 1], uuid[TWI_UUID_LEN];
    twi_record r;
    memset(&r, 0, sizeof r);
    r.kind = (twi_kind)(op % 3);
    r.name = fuzz_str(b, name, MAX_TEXT);
    r.start_ns = fuzz_u64(b);
    r.end_ns = fuzz_u64(b);
    r.device = (int32_t)fuzz_u64(b);
    /* the library writes UUIDs as twi_format_uuid gives them, or none */
    uint8_t how = fuzz_u8(b);
    unsigned char raw[16];
    for (int k = 0; k < 16; k++)
        raw[k] = fuzz_u8(b);
    twi_format_uuid(raw, how & 1, uuid);
    r.device_uuid = how & 2 ? uuid : how & 4 ? "" : NULL;
    r.stream = (int64_t)fuzz_u64(b);
    for (int k = 0; k < 3; k++) {
        r.grid[k] = (int32_t)fuzz_u64(b);
        r.block[k] = (int32_t)fuzz_u64(b);
    }
    r.correlation_id = (int64_t)fuzz_u64(b);
    r.copy_kind = fuzz_u8(b);
    r.bytes = fuzz_u64(b);
    append(s, &r);
}

static void nvtx(state *s, fuzz_bytes *b, uint8_t op)
{
    char name[MAX_TEXT + 1], domain[MAX_TEXT + 1];
    const void *key = (const void *)(uintptr_t)(fuzz_u8(b) % 4); /* a few domains; 0 = default */
    uint64_t t = fuzz_u64(b);
    twi_record r;
    switch (op % 4) {
    case 0:
        fuzz_str(b, domain, MAX_TEXT);
        (void)twi_stack_push(s->stack, key, domain, fuzz_str(b, name, MAX_TEXT), t);
        break;
    case 1:
        if (twi_stack_pop(s->stack, key, t, &r) > 0) append(s, &r);
        break;
    case 2:
        fuzz_str(b, domain, MAX_TEXT);
        (void)twi_ranges_start(s->ranges, fuzz_u8(b), domain, fuzz_str(b, name, MAX_TEXT), 7, t);
        break;
    default:
        if (twi_ranges_end(s->ranges, fuzz_u8(b), t, &r) == 1) append(s, &r);
        break;
    }
}

static void check_loads(const state *s)
{
    FILE *f = fopen(fuzz_out_path(), "w");
    if (!f) fuzz_fail("cannot write the events file");
    fputs(TWI_CSV_HEADER, f);
    fwrite(s->buf.p ? s->buf.p : "", 1, s->buf.len, f);
    if (fclose(f) != 0) fuzz_fail("cannot write the events file");
    tw_events *ev = NULL;
    if (tw_events_load(fuzz_out_path(), &ev) != TW_OK) {
        fprintf(stderr, "%s\n", tw_last_error());
        fuzz_fail("the injection library wrote an events file that does not load");
    }
    if (tw_events_count(ev) != s->lines) fuzz_fail("the events file loads with another count than was written");
    tw_events_free(ev);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_bytes b = {data, size};
    state s;
    memset(&s, 0, sizeof s);
    s.clock.cupti_ref_ns = fuzz_u64(&b);
    s.clock.mono_ref_ns = fuzz_u64(&b);
    s.clock.t0_mono_ns = fuzz_u64(&b);
    s.dm = twi_demangler_new(8);
    s.stack = twi_stack_new(42);
    s.ranges = twi_ranges_new();
    if (!s.dm || !s.stack || !s.ranges) fuzz_fail("out of memory");
    for (int i = 0; i < MAX_OPS && b.n > 0; i++) {
        uint8_t op = fuzz_u8(&b);
        if (op & 0x80)
            nvtx(&s, &b, op);
        else
            activity(&s, &b, op);
    }
    check_loads(&s);
    twi_buf_free(&s.buf);
    twi_demangler_free(s.dm);
    twi_stack_free(s.stack);
    twi_ranges_free(s.ranges);
    return 0;
}
