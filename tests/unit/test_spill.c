/* Unit tests of the spill (src/estimate/spill.c): records appended to a
 * temporary file come back the same, in order through readers that cross
 * their chunks, and at random; writes over records stick; a directory
 * that cannot hold the file is an error naming it. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tw_test.h"

#include "estimate/spill.h"

typedef struct rec {
    uint64_t i;
    double x;
    char pad[12]; /* an odd size: chunks do not hold a whole number of them in powers of two */
} rec;

static void assert_ok(tw_status st)
{
    if (st != TW_OK) fail_msg("%s: %s", tw_strerror(st), tw_last_error());
}

static rec rec_of(uint64_t i) { return (rec){i, 0.5 * (double)i, {0}}; }

enum { N = 100000 };

static void test_round_trip(void **state)
{
    (void)state;
    tw_spill s;
    assert_ok(tw_spill_open(&s, sizeof(rec)));
    for (uint64_t i = 0; i < N; i++) {
        rec r = rec_of(i);
        assert_ok(tw_spill_append(&s, &r));
    }
    assert_ok(tw_spill_flush(&s));
    assert_int_equal(s.n, N);
    /* two readers at once, one from the start, one from the middle */
    tw_spill_reader a, b;
    assert_ok(tw_spill_reader_open(&a, &s));
    assert_ok(tw_spill_reader_open(&b, &s));
    b.pos = N / 2 + 7;
    tw_status st = TW_OK;
    uint64_t seen = 0;
    for (const rec *r; (r = tw_spill_peek(&a, &st)); a.pos++, seen++) {
        if (r->i != seen || r->x != 0.5 * (double)seen)
            fail_msg("record %llu read as %llu", (unsigned long long)seen, (unsigned long long)r->i);
        if (b.pos < N) {
            const rec *q = tw_spill_peek(&b, &st);
            assert_non_null(q);
            assert_int_equal(q->i, b.pos);
            b.pos++;
        }
    }
    assert_ok(st);
    assert_int_equal(seen, N);
    /* at random, and written over */
    rec some[3] = {rec_of(7), rec_of(8), rec_of(9)};
    some[1].x = -1;
    assert_ok(tw_spill_write(&s, 77777, some, 3));
    rec back[3];
    assert_ok(tw_spill_read(&s, 77777, back, 3));
    assert_true(back[0].i == 7 && back[1].x == -1 && back[2].i == 9);
    a.pos = 77778; /* a reader sees the write once it loads that chunk again */
    a.base = a.len = 0;
    assert_true(((const rec *)tw_spill_peek(&a, &st))->x == -1);
    tw_spill_reader_close(&a);
    tw_spill_reader_close(&b);
    tw_spill_close(&s);
}

static void test_empty_and_unwritable(void **state)
{
    (void)state;
    tw_spill s;
    assert_ok(tw_spill_open(&s, sizeof(rec)));
    assert_ok(tw_spill_flush(&s));
    tw_spill_reader r;
    assert_ok(tw_spill_reader_open(&r, &s));
    tw_status st = TW_OK;
    assert_null(tw_spill_peek(&r, &st));
    assert_ok(st);
    tw_spill_reader_close(&r);
    tw_spill_close(&s);
    const char *old = getenv("TMPDIR");
    char *keep = old ? strdup(old) : NULL;
    setenv("TMPDIR", "/nonexistent-dir", 1);
    assert_int_equal(tw_spill_open(&s, sizeof(rec)), TW_EIO);
    assert_non_null(strstr(tw_last_error(), "/nonexistent-dir/truewatt-spill"));
    tw_spill_close(&s);
    if (keep)
        setenv("TMPDIR", keep, 1);
    else
        unsetenv("TMPDIR");
    free(keep);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_empty_and_unwritable),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
