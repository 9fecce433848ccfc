/* Unit tests of the CUPTI injection library's GPU-free parts (src/inject/event_csv.c,
 * src/inject/demangle.c): record to CSV line, quoting, clock conversion, NVTX
 * pairing, demangling; and that tw_events_load reads what the library writes. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tw_test.h"

#include "truewatt.h"
#include "inject/demangle.h"
#include "inject/event_csv.h"
#include "inject/nvtx_ranges.h"

static void assert_ok(tw_status st)
{
    if (st != TW_OK) fail_msg("%s: %s", tw_strerror(st), tw_last_error());
}

/* a clock whose CUPTI timestamps are 1e18 ns ahead of CLOCK_MONOTONIC */
static const twi_clock CLOCK = {
    .cupti_ref_ns = 1000000000000000000ull + 5000000000ull, .mono_ref_ns = 5000000000ull, .t0_mono_ns = 4000000000ull};
#define CUPTI_AT(rel_ns) ((uint64_t)(1000000000000000000ll + 4000000000ll + (rel_ns)))

static twi_record kernel(const char *name, int64_t start_rel, int64_t end_rel)
{
    twi_record r = {.kind = TWI_KERNEL,
                    .name = name,
                    .start_ns = CUPTI_AT(start_rel),
                    .end_ns = CUPTI_AT(end_rel),
                    .device = 0,
                    .stream = 7,
                    .grid = {2112, 1, 1},
                    .block = {256, 1, 1},
                    .correlation_id = 42};
    return r;
}

/* one line into a fresh buffer; the caller frees */
static char *line_of(const twi_record *r, twi_demangler *dm)
{
    twi_buf b = {0};
    assert_true(twi_append_line(&b, r, &CLOCK, dm));
    return b.p ? b.p : strdup("");
}

static void assert_line(const twi_record *r, twi_demangler *dm, const char *want)
{
    char *got = line_of(r, dm);
    if (strcmp(got, want) != 0) fail_msg("line\n  got:  %s\n  want: %s", got, want);
    free(got);
}

/* ---------------------------------------------------------------- lines */

static void test_header(void **state)
{
    (void)state;
    assert_string_equal(TWI_CSV_HEADER, "name,start_s,end_s,device,stream,kind,grid_x,grid_y,grid_z,block_x,block_y,"
                                        "block_z,correlation_id,device_uuid,mangled,domain,tid,depth\n");
}

static void test_kernel_line(void **state)
{
    (void)state;
    twi_record r = kernel("spin_kernel", 1500000000, 2500000001);
    assert_line(&r, NULL, "spin_kernel,1.500000000,2.500000001,0,7,kernel,2112,1,1,256,1,1,42,,,,,\n");
}

static void test_memcpy_memset_lines(void **state)
{
    (void)state;
    twi_record m = {.kind = TWI_MEMCPY,
                    .copy_kind = TWI_MEMCPY_HTOD,
                    .bytes = 1048576,
                    .start_ns = CUPTI_AT(1000),
                    .end_ns = CUPTI_AT(2000),
                    .device = 1,
                    .stream = 13,
                    .correlation_id = 5};
    assert_line(&m, NULL, "memcpy HtoD 1048576 B,0.000001000,0.000002000,1,13,memcpy,,,,,,,5,,,,,\n");
    m.copy_kind = TWI_MEMCPY_DTOH;
    m.bytes = 4;
    assert_line(&m, NULL, "memcpy DtoH 4 B,0.000001000,0.000002000,1,13,memcpy,,,,,,,5,,,,,\n");
    m.copy_kind = 999;
    assert_line(&m, NULL, "memcpy unknown 4 B,0.000001000,0.000002000,1,13,memcpy,,,,,,,5,,,,,\n");

    twi_record s = {.kind = TWI_MEMSET,
                    .bytes = 256,
                    .start_ns = CUPTI_AT(0),
                    .end_ns = CUPTI_AT(10),
                    .device = 0,
                    .stream = 7,
                    .correlation_id = 6};
    assert_line(&s, NULL, "memset 256 B,0.000000000,0.000000010,0,7,memset,,,,,,,6,,,,,\n");
}

static void test_nvtx_line(void **state)
{
    (void)state;
    twi_record n = {.kind = TWI_NVTX,
                    .name = "spin 10 ms",
                    .start_ns = CUPTI_AT(-1),
                    .end_ns = CUPTI_AT(3000000000),
                    .device = -1,
                    .stream = -1,
                    .correlation_id = -1};
    assert_line(&n, NULL, "spin 10 ms,-0.000000001,3.000000000,-1,-1,nvtx,,,,,,,,,,,,\n");
}

static void test_untimed_record_skipped(void **state)
{
    (void)state;
    twi_record r = kernel("k", 0, 0);
    r.start_ns = r.end_ns = 0;
    twi_buf b = {0};
    assert_true(twi_append_line(&b, &r, &CLOCK, NULL));
    assert_int_equal(b.len, 0);
    twi_buf_free(&b);
}

/* fuzz_inject found it: a line ending before it starts made tw_events_load
 * refuse the whole events file; such records are skipped and counted */
static void test_inverted_record_skipped(void **state)
{
    (void)state;
    twi_buf b = {0};
    twi_record r = kernel("k", 2000, 1000);
    assert_true(twi_append_line(&b, &r, &CLOCK, NULL));
    r = kernel("k", 1000, 2000);
    r.end_ns = 0; /* CUPTI timed the start only */
    assert_true(twi_append_line(&b, &r, &CLOCK, NULL));
    assert_int_equal(b.len, 0);
    assert_int_equal(b.bad_span, 2);
    r = kernel("k", 1000, 1000); /* zero length is a span */
    assert_true(twi_append_line(&b, &r, &CLOCK, NULL));
    assert_true(b.len > 0);
    assert_int_equal(b.bad_span, 2);
    twi_buf_free(&b);
}

static void test_lines_accumulate(void **state)
{
    (void)state;
    twi_buf b = {0};
    for (int i = 0; i < 2000; i++) {
        twi_record r = kernel("a_rather_long_kernel_name_to_make_the_buffer_grow_a_few_times", i, i + 1);
        assert_true(twi_append_line(&b, &r, &CLOCK, NULL));
    }
    size_t lines = 0;
    for (size_t i = 0; i < b.len; i++)
        lines += b.p[i] == '\n';
    assert_int_equal(lines, 2000);
    assert_int_equal(strlen(b.p), b.len);
    assert_false(b.oom);
    twi_buf_free(&b);
}

/* ---------------------------------------------------------------- fields */

static void assert_field(const char *in, const char *want)
{
    twi_buf b = {0};
    assert_true(twi_buf_put_field(&b, "x"));
    assert_true(twi_buf_put_field(&b, in));
    if (strcmp(b.p + 1, want) != 0) fail_msg("field '%s': got '%s', want '%s'", in, b.p + 1, want);
    assert_int_equal(b.len, 1 + strlen(want));
    twi_buf_free(&b);
}

static void test_field_quoting(void **state)
{
    (void)state;
    assert_field("plain", "plain");
    assert_field("void f<int, 2>(float*, int)", "\"void f<int, 2>(float*, int)\"");
    assert_field("say \"hi\"", "\"say \"\"hi\"\"\"");
    assert_field("\"", "\"\"\"\"");
    assert_field("", "\"\"");
    assert_field("#comment-like", "\"#comment-like\"");
    assert_field(" padded", "\" padded\"");
    assert_field("padded ", "\"padded \"");
    assert_field("two\nlines", "two lines");
    assert_field("cr\r\nlf", "cr  lf");
    assert_field("a\nb, \"c\"", "\"a b, \"\"c\"\"\"");
    assert_field("trailing newline\n", "\"trailing newline \"");
    assert_field("tab\tinside", "tab\tinside");
}

static void test_seconds(void **state)
{
    (void)state;
    struct {
        int64_t ns;
        const char *want;
    } cases[] = {
        {0, "0.000000000"},
        {1, "0.000000001"},
        {-1, "-0.000000001"},
        {999999999, "0.999999999"},
        {1000000000, "1.000000000"},
        {-1500000000, "-1.500000000"},
        {86400123456789ll, "86400.123456789"},
        {INT64_MIN, "-9223372036.854775808"},
        {INT64_MAX, "9223372036.854775807"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        twi_buf b = {0};
        assert_true(twi_buf_put_seconds(&b, cases[i].ns));
        assert_string_equal(b.p, cases[i].want);
        twi_buf_free(&b);
    }
}

/* ---------------------------------------------------------------- demangling */

static char *fake_demangle(const char *mangled, char *buf, size_t *len, int *status)
{
    (void)buf, (void)len;
    if (strcmp(mangled, "_Z3badv") == 0) {
        *status = -2;
        return NULL;
    }
    char *out = malloc(strlen(mangled) + 16);
    sprintf(out, "demangled(%s)", mangled);
    *status = 0;
    return out;
}

static void test_kernel_line_demangled(void **state)
{
    (void)state;
    twi_demangler *dm = twi_demangler_new(0);
    assert_non_null(dm);
    twi_demangler_set_function(dm, fake_demangle);
    twi_record r = kernel("_Z4spinPfi", 0, 1000);
    assert_line(&r, dm,
                "demangled(_Z4spinPfi),0.000000000,0.000001000,0,7,kernel,2112,1,1,256,1,1,42,,_Z4spinPfi,,,\n");
    /* not a C++ name, or one the demangler refuses: as given */
    r.name = "ampere_sgemm_128x64_nn";
    assert_line(&r, dm, "ampere_sgemm_128x64_nn,0.000000000,0.000001000,0,7,kernel,2112,1,1,256,1,1,42,,,,,\n");
    r.name = "_Z3badv";
    assert_line(&r, dm, "_Z3badv,0.000000000,0.000001000,0,7,kernel,2112,1,1,256,1,1,42,,,,,\n");
    /* only kernels are demangled */
    twi_record n = {.kind = TWI_NVTX, .name = "_Z4spinPfi", .start_ns = CUPTI_AT(0), .end_ns = CUPTI_AT(1)};
    n.device = -1, n.stream = -1, n.correlation_id = -1;
    assert_line(&n, dm, "_Z4spinPfi,0.000000000,0.000000001,-1,-1,nvtx,,,,,,,,,,,,\n");
    twi_demangler_free(dm);
}

static void test_demangle_real(void **state)
{
    (void)state;
    twi_demangler *dm = twi_demangler_new(0);
    assert_non_null(dm);
    if (!twi_demangler_available(dm)) {
        /* no libstdc++ here: names pass through */
        assert_string_equal(twi_demangle(dm, "_Z4spinPfi"), "_Z4spinPfi");
        twi_demangler_free(dm);
        skip();
    }
    assert_string_equal(twi_demangle(dm, "_Z4spinPfi"), "spin(float*, int)");
    assert_string_equal(twi_demangle(dm, "_Z4spinPfi"), "spin(float*, int)"); /* from the cache */
    assert_string_equal(twi_demangle(dm, "_ZN2at6native13reduce_kernelILi512ELi1EEEvv"),
                        "void at::native::reduce_kernel<512, 1>()");
    assert_string_equal(twi_demangle(dm, "_Znot a name"), "_Znot a name");
    assert_string_equal(twi_demangle(dm, "plain_c_kernel"), "plain_c_kernel");
    assert_string_equal(twi_demangle(dm, NULL), "");
    assert_int_equal(twi_demangler_cached(dm), 4);
    /* the CSV field of a demangled name with commas is quoted */
    twi_record r = kernel("_Z1fIiLi2EEvPfi", 0, 1);
    assert_line(
        &r, dm,
        "\"void f<int, 2>(float*, int)\",0.000000000,0.000000001,0,7,kernel,2112,1,1,256,1,1,42,,_Z1fIiLi2EEvPfi,,,\n");
    twi_demangler_free(dm);
}

static void test_demangle_cache_bound(void **state)
{
    (void)state;
    twi_demangler *dm = twi_demangler_new(3);
    assert_non_null(dm);
    twi_demangler_set_function(dm, fake_demangle);
    char name[32];
    for (int i = 0; i < 10; i++) {
        snprintf(name, sizeof name, "_Z%d", i);
        char want[64];
        snprintf(want, sizeof want, "demangled(%s)", name);
        assert_string_equal(twi_demangle(dm, name), want);
    }
    assert_int_equal(twi_demangler_cached(dm), 3);
    assert_string_equal(twi_demangle(dm, "_Z1"), "demangled(_Z1)");
    assert_string_equal(twi_demangle(dm, "_Z9"), "demangled(_Z9)");
    twi_demangler_set_function(dm, NULL);
    assert_string_equal(twi_demangle(dm, "_Z4spinPfi"), "_Z4spinPfi");
    twi_demangler_free(dm);
    assert_string_equal(twi_demangle(NULL, "_Z1x"), "_Z1x");
    twi_demangler_free(NULL);
}

/* ---------------------------------------------------------------- clock */

typedef struct fake_clocks {
    uint64_t mono;        /* ns; advances by the step of each read */
    const uint64_t *cost; /* per round: ns a CUPTI read takes */
    int round;
    int64_t cupti_minus_mono;
    int fail_cupti_round; /* this round's CUPTI read fails (-1: none) */
} fake_clocks;

static bool fake_mono(void *ctx, uint64_t *ns)
{
    fake_clocks *f = ctx;
    f->mono += 10;
    *ns = f->mono;
    return true;
}

static bool fake_cupti(void *ctx, uint64_t *ns)
{
    fake_clocks *f = ctx;
    int k = f->round++;
    /* the read happens in the middle of its cost */
    f->mono += f->cost[k] / 2;
    *ns = (uint64_t)((int64_t)f->mono + f->cupti_minus_mono);
    f->mono += f->cost[k] - f->cost[k] / 2;
    return k != f->fail_cupti_round;
}

static void test_clock_calibrate(void **state)
{
    (void)state;
    const uint64_t cost[] = {5000, 800, 300000, 100, 2000};
    fake_clocks f = {.mono = 1000000, .cost = cost, .cupti_minus_mono = 1700000000000000000ll, .fail_cupti_round = -1};
    twi_clock c = {.t0_mono_ns = 1000000};
    uint64_t gap = 0;
    assert_true(twi_clock_calibrate(&c, fake_cupti, fake_mono, &f, 5, &gap));
    assert_int_equal(gap, 100 + 10); /* round 3: its CUPTI read cost 100 ns, the second monotonic read 10 */
    /* the CUPTI reading of the best round sits 5 ns from the midpoint */
    int64_t err = (int64_t)(c.mono_ref_ns - c.cupti_ref_ns) + f.cupti_minus_mono;
    assert_true(err >= -5 && err <= 5);
    assert_int_equal(c.t0_mono_ns, 1000000);

    /* the best round failing: the next best is taken */
    f = (fake_clocks){.mono = 1000000, .cost = cost, .cupti_minus_mono = -5, .fail_cupti_round = 3};
    assert_true(twi_clock_calibrate(&c, fake_cupti, fake_mono, &f, 5, &gap));
    assert_int_equal(gap, 800 + 10);

    /* nothing readable */
    f = (fake_clocks){.mono = 1, .cost = cost, .fail_cupti_round = 0};
    assert_false(twi_clock_calibrate(&c, fake_cupti, fake_mono, &f, 1, &gap));
    assert_int_equal(gap, 0);
}

static void test_clock_convert(void **state)
{
    (void)state;
    /* large absolute values on both clocks: nanoseconds survive */
    assert_int_equal(twi_clock_rel_ns(&CLOCK, CUPTI_AT(0)), 0);
    assert_int_equal(twi_clock_rel_ns(&CLOCK, CUPTI_AT(1)), 1);
    assert_int_equal(twi_clock_rel_ns(&CLOCK, CUPTI_AT(-7)), -7);
    assert_int_equal(twi_clock_rel_ns(&CLOCK, CUPTI_AT(123456789012345ll)), 123456789012345ll);
    /* fuzz_inject found it: absurd clocks overflowed a signed sum (undefined
     * behaviour, caught by UBSan in the sanitizer build); now the sum wraps */
    twi_clock huge = {.cupti_ref_ns = 0, .mono_ref_ns = UINT64_C(1) << 62, .t0_mono_ns = 0};
    assert_true(twi_clock_rel_ns(&huge, UINT64_C(3) << 62) == 0); /* 3 * 2^62 + 2^62 = 2^64, 0 modulo 2^64 */
    /* CUPTI clock behind CLOCK_MONOTONIC */
    twi_clock c = {.cupti_ref_ns = 100, .mono_ref_ns = 1000000100, .t0_mono_ns = 0};
    assert_int_equal(twi_clock_rel_ns(&c, 100), 1000000100);
    assert_int_equal(twi_clock_rel_ns(&c, 0), 1000000000);
    /* drift between two calibrations */
    twi_clock later = c;
    later.cupti_ref_ns = 5000000100;
    later.mono_ref_ns = 6000000100 - 2500000; /* CUPTI's clock jumped 2.5 ms ahead */
    assert_int_equal(twi_clock_drift_ns(&c, &later), -2500000);
    assert_int_equal(twi_clock_drift_ns(&c, &c), 0);
}

static void test_parse_u64(void **state)
{
    (void)state;
    uint64_t v = 7;
    assert_true(twi_parse_u64("0", &v));
    assert_int_equal(v, 0);
    assert_true(twi_parse_u64(" 123456789012345678 \n", &v));
    assert_int_equal(v, 123456789012345678ull);
    assert_true(twi_parse_u64("18446744073709551615", &v));
    assert_true(v == UINT64_MAX);
    v = 7;
    assert_false(twi_parse_u64("18446744073709551616", &v));
    assert_false(twi_parse_u64("", &v));
    assert_false(twi_parse_u64("-1", &v));
    assert_false(twi_parse_u64("+1", &v));
    assert_false(twi_parse_u64("12ms", &v));
    assert_false(twi_parse_u64("1e9", &v));
    assert_false(twi_parse_u64(NULL, &v));
    assert_int_equal(v, 7);
}

/* ---------------------------------------------------------------- NVTX ranges */

static void test_uuid_and_nvtx_columns(void **state)
{
    (void)state;
    const unsigned char bytes[16] = {0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef,
                                     0xfe, 0xdc, 0xba, 0x98, 0x76, 0x54, 0x32, 0x10};
    char uuid[TWI_UUID_LEN];
    twi_format_uuid(bytes, false, uuid);
    assert_string_equal(uuid, "GPU-01234567-89ab-cdef-fedc-ba9876543210"); /* NVML's form */
    twi_format_uuid(bytes, true, uuid);
    assert_string_equal(uuid, "MIG-01234567-89ab-cdef-fedc-ba9876543210");
    twi_record r = kernel("k", 0, 1000);
    r.device_uuid = "GPU-01234567-89ab-cdef-fedc-ba9876543210";
    assert_line(
        &r, NULL,
        "k,0.000000000,0.000001000,0,7,kernel,2112,1,1,256,1,1,42,GPU-01234567-89ab-cdef-fedc-ba9876543210,,,,\n");
    /* NVTX: monotonic times (since t0 = 4 s), domain, thread, depth */
    twi_record n = {.kind = TWI_NVTX,
                    .name = "step",
                    .mono = true,
                    .start_ns = 4000000000ull + 1500,
                    .end_ns = 4000000000ull + 2500,
                    .device = -1,
                    .stream = -1,
                    .correlation_id = -1,
                    .domain = "my, domain",
                    .tid = 4242,
                    .depth = 2};
    assert_line(&n, NULL, "step,0.000001500,0.000002500,-1,-1,nvtx,,,,,,,,,,\"my, domain\",4242,2\n");
}

static void test_stack_pairing(void **state)
{
    (void)state;
    twi_stack *s = twi_stack_new(77);
    assert_non_null(s);
    twi_record r;
    static const int dom_a = 0; /* a domain handle: any unique address */
    /* default domain: outer { inner { } }, with a range of domain A opened inside inner */
    assert_int_equal(twi_stack_push(s, NULL, "", "outer", 100), 1);
    char name[16] = "inner";
    assert_int_equal(twi_stack_push(s, NULL, "", name, 200), 2);
    strcpy(name, "XXXXX");                                          /* the name was copied */
    assert_int_equal(twi_stack_push(s, &dom_a, "A", "a1", 250), 1); /* depth counts its own domain only */
    assert_int_equal(twi_stack_open(s), 3);
    /* a pop of the default domain closes "inner", not A's range above it */
    assert_int_equal(twi_stack_pop(s, NULL, 300, &r), 2);
    assert_int_equal(r.kind, TWI_NVTX);
    assert_true(r.mono);
    assert_string_equal(r.name, "inner");
    assert_string_equal(r.domain, "");
    assert_int_equal(r.tid, 77);
    assert_int_equal(r.depth, 2);
    assert_true(r.start_ns == 200 && r.end_ns == 300);
    assert_true(r.device == -1 && r.stream == -1 && r.correlation_id == -1);
    /* a push after that reuses slots and still gets the right depth */
    assert_int_equal(twi_stack_push(s, NULL, "", "inner2", 310), 2);
    assert_int_equal(twi_stack_pop(s, NULL, 320, &r), 2);
    assert_string_equal(r.name, "inner2");
    assert_int_equal(twi_stack_pop(s, &dom_a, 350, &r), 1);
    assert_string_equal(r.name, "a1");
    assert_string_equal(r.domain, "A");
    assert_true(r.start_ns == 250 && r.end_ns == 350);
    assert_int_equal(twi_stack_pop(s, NULL, 400, &r), 1);
    assert_string_equal(r.name, "outer");
    assert_true(r.start_ns == 100 && r.end_ns == 400);
    /* nothing open: a pop is refused */
    assert_int_equal(twi_stack_pop(s, NULL, 500, &r), 0);
    assert_int_equal(twi_stack_pop(s, &dom_a, 500, &r), 0);
    assert_int_equal(twi_stack_open(s), 0);
    /* deep nesting: the stack grows; pops come back innermost first */
    for (int i = 0; i < 100; i++)
        assert_int_equal(twi_stack_push(s, NULL, "", i % 2 ? "odd" : "even", (uint64_t)(1000 + i)), i + 1);
    for (int i = 99; i >= 0; i--) {
        assert_int_equal(twi_stack_pop(s, NULL, (uint64_t)(2000 - i), &r), i + 1);
        assert_true(r.start_ns == (uint64_t)(1000 + i));
        assert_string_equal(r.name, i % 2 ? "odd" : "even");
    }
    /* a forked child's copy: its own thread id from then on */
    assert_int_equal(twi_stack_push(s, NULL, "", "inherited", 5), 1);
    assert_int_equal(twi_stack_tid(s), 77);
    twi_stack_set_tid(s, 99);
    assert_int_equal(twi_stack_tid(s), 99);
    assert_int_equal(twi_stack_pop(s, NULL, 6, &r), 1);
    assert_int_equal(r.tid, 99);
    /* a NULL name is "" */
    assert_int_equal(twi_stack_push(s, NULL, NULL, NULL, 1), 1);
    assert_int_equal(twi_stack_pop(s, NULL, 2, &r), 1);
    assert_string_equal(r.name, "");
    assert_string_equal(r.domain, "");
    twi_stack_free(s);
    twi_stack_free(NULL);
}

static void test_start_end_pairing(void **state)
{
    (void)state;
    twi_ranges *rg = twi_ranges_new();
    assert_non_null(rg);
    twi_record r;
    /* overlapping, not nested: 1 starts, 2 starts, 1 ends (in another thread), 2 ends */
    assert_int_equal(twi_ranges_start(rg, 1, "", "load", 11, 100), 0);
    char name[16] = "compute";
    assert_int_equal(twi_ranges_start(rg, 2, "D", name, 12, 200), 0);
    strcpy(name, "XXXXXXX");
    assert_int_equal(twi_ranges_pending(rg), 2);
    assert_int_equal(twi_ranges_end(rg, 1, 300, &r), 1);
    assert_string_equal(r.name, "load");
    assert_int_equal(r.tid, 11);  /* the thread that started it */
    assert_int_equal(r.depth, 0); /* start/end ranges do not nest */
    assert_true(r.mono && r.start_ns == 100 && r.end_ns == 300);
    assert_int_equal(twi_ranges_end(rg, 2, 400, &r), 1);
    assert_string_equal(r.name, "compute");
    assert_string_equal(r.domain, "D");
    assert_int_equal(twi_ranges_pending(rg), 0);
    /* an end without a start (or twice) is refused */
    assert_int_equal(twi_ranges_end(rg, 2, 500, &r), 0);
    assert_int_equal(twi_ranges_end(rg, 99, 500, &r), 0);
    /* many open at once: the table grows */
    for (uint64_t id = 1000; id < 6000; id++)
        assert_int_equal(twi_ranges_start(rg, id, "", "many", 1, id), 0);
    for (uint64_t id = 5999; id >= 1000; id--) {
        assert_int_equal(twi_ranges_end(rg, id, id + 1, &r), 1);
        assert_true(r.start_ns == id);
    }
    assert_int_equal(twi_ranges_start(rg, 7, "", "left open", 1, 1), 0);
    assert_int_equal(twi_ranges_pending(rg), 1);
    twi_ranges_free(rg);
    twi_ranges_free(NULL);
}

static void test_names(void **state)
{
    (void)state;
    assert_string_equal(twi_kind_name(TWI_KERNEL), "kernel");
    assert_string_equal(twi_kind_name(TWI_MEMCPY), "memcpy");
    assert_string_equal(twi_kind_name(TWI_MEMSET), "memset");
    assert_string_equal(twi_kind_name(TWI_NVTX), "nvtx");
    assert_string_equal(twi_memcpy_kind_name(TWI_MEMCPY_PTOP), "PtoP");
    assert_string_equal(twi_memcpy_kind_name(TWI_MEMCPY_DTOD), "DtoD");
    assert_string_equal(twi_memcpy_kind_name(TWI_MEMCPY_UNKNOWN), "unknown");
}

/* ---------------------------------------------------------------- the file reads back */

static void test_events_load_reads_it(void **state)
{
    (void)state;
    twi_record recs[4];
    recs[0] = kernel("void f<int, 2>(float*, \"x\")", 1000000000, 1100000000);
    recs[1] = (twi_record){.kind = TWI_MEMCPY,
                           .copy_kind = TWI_MEMCPY_HTOD,
                           .bytes = 1048576,
                           .start_ns = CUPTI_AT(500000000),
                           .end_ns = CUPTI_AT(600000000),
                           .device = 0,
                           .stream = 7,
                           .correlation_id = 3};
    recs[2] = (twi_record){.kind = TWI_NVTX,
                           .name = "#phase 1\n",
                           .start_ns = CUPTI_AT(-250000000),
                           .end_ns = CUPTI_AT(2000000000),
                           .device = -1,
                           .stream = -1,
                           .correlation_id = -1};
    recs[3] = kernel("k", 3000000000, 3000000001);
    recs[3].stream = 4294967295ll;
    char *text = NULL;
    {
        twi_buf all = {0};
        for (int i = 0; i < 4; i++)
            assert_true(twi_append_line(&all, &recs[i], &CLOCK, NULL));
        size_t n = strlen(TWI_CSV_HEADER) + all.len + 1;
        text = malloc(n);
        snprintf(text, n, "%s%s", TWI_CSV_HEADER, all.p);
        twi_buf_free(&all);
    }

    tw_events *ev = NULL;
    assert_ok(tw_events_load(tw_test_file(0, text), &ev));
    free(text);
    assert_int_equal(tw_events_count(ev), 4);
    const tw_event *e = tw_events_get(ev, 0);
    assert_string_equal(e->name, "void f<int, 2>(float*, \"x\")");
    assert_true(fabs(e->start_s - 1.0) < 1e-12 && fabs(e->end_s - 1.1) < 1e-12);
    assert_int_equal(e->device, 0);
    assert_int_equal(e->stream, 7);
    e = tw_events_get(ev, 1);
    assert_string_equal(e->name, "memcpy HtoD 1048576 B");
    e = tw_events_get(ev, 2);
    assert_string_equal(e->name, "#phase 1 ");
    assert_true(fabs(e->start_s + 0.25) < 1e-12 && fabs(e->end_s - 2.0) < 1e-12);
    assert_int_equal(e->device, -1);
    assert_int_equal(e->stream, -1);
    e = tw_events_get(ev, 3);
    assert_int_equal(e->stream, 4294967295ll);
    assert_true(fabs(e->end_s - 3.000000001) < 1e-12);
    tw_events_free(ev);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_header),
        cmocka_unit_test(test_kernel_line),
        cmocka_unit_test(test_memcpy_memset_lines),
        cmocka_unit_test(test_nvtx_line),
        cmocka_unit_test(test_untimed_record_skipped),
        cmocka_unit_test(test_inverted_record_skipped),
        cmocka_unit_test(test_lines_accumulate),
        cmocka_unit_test(test_field_quoting),
        cmocka_unit_test(test_seconds),
        cmocka_unit_test(test_kernel_line_demangled),
        cmocka_unit_test(test_demangle_real),
        cmocka_unit_test(test_demangle_cache_bound),
        cmocka_unit_test(test_clock_calibrate),
        cmocka_unit_test(test_clock_convert),
        cmocka_unit_test(test_parse_u64),
        cmocka_unit_test(test_uuid_and_nvtx_columns),
        cmocka_unit_test(test_stack_pairing),
        cmocka_unit_test(test_start_end_pairing),
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_events_load_reads_it),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
