/* Unit tests of the SPSC ring (src/sample/ring.c): order, wraparound, a full
 * ring refusing without blocking, and one producer and one consumer thread
 * passing a million rows with nothing lost, duplicated or torn. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "tw_test.h"

#include "sample/ring.h"

static void assert_ok(tw_status st)
{
    if (st != TW_OK) fail_msg("%s: %s", tw_strerror(st), tw_last_error());
}

typedef struct row {
    uint64_t seq;
    uint64_t check; /* ~seq: a torn row would not match */
    double pad[3];
} row;

static void test_init_rejects(void **state)
{
    (void)state;
    tw_ring r;
    assert_int_equal(tw_ring_init(&r, 0, 8), TW_EINVAL);
    assert_int_equal(tw_ring_init(&r, 1, 8), TW_EINVAL);
    assert_int_equal(tw_ring_init(&r, 12, 8), TW_EINVAL);
    assert_non_null(strstr(tw_last_error(), "power of two"));
    assert_int_equal(tw_ring_init(&r, 16, 0), TW_EINVAL);
    assert_ok(tw_ring_init(&r, 2, 1));
    tw_ring_destroy(&r);
}

static void test_fifo_and_full(void **state)
{
    (void)state;
    tw_ring r;
    assert_ok(tw_ring_init(&r, 8, sizeof(row)));
    assert_null(tw_ring_peek(&r));
    assert_int_equal(tw_ring_count(&r), 0);
    for (uint64_t i = 0; i < 8; i++) {
        row x = {i, ~i, {0}};
        assert_true(tw_ring_push(&r, &x));
    }
    assert_int_equal(tw_ring_count(&r), 8);
    row extra = {99, ~(uint64_t)99, {0}};
    assert_false(tw_ring_push(&r, &extra)); /* full: refused at once */
    assert_null(tw_ring_reserve(&r));
    for (uint64_t i = 0; i < 8; i++) {
        const row *x = tw_ring_peek(&r);
        assert_non_null(x);
        assert_int_equal(x->seq, i);
        tw_ring_pop(&r);
    }
    assert_null(tw_ring_peek(&r));
    assert_true(tw_ring_push(&r, &extra)); /* room again */
    tw_ring_destroy(&r);
}

static void test_wraparound(void **state)
{
    (void)state;
    tw_ring r;
    assert_ok(tw_ring_init(&r, 4, sizeof(row)));
    uint64_t next_in = 0, next_out = 0;
    /* push 3, pop 2, many times: the positions wrap around the 4 slots again and again */
    for (int round = 0; round < 1000; round++) {
        for (int k = 0; k < 3; k++) {
            row x = {next_in, ~next_in, {0}};
            if (tw_ring_push(&r, &x)) next_in++;
        }
        for (int k = 0; k < 2; k++) {
            const row *x = tw_ring_peek(&r);
            assert_non_null(x);
            assert_int_equal(x->seq, next_out);
            assert_int_equal(x->check, ~next_out);
            tw_ring_pop(&r);
            next_out++;
        }
        assert_true(tw_ring_count(&r) <= 4);
    }
    while (tw_ring_peek(&r)) {
        const row *x = tw_ring_peek(&r);
        assert_int_equal(x->seq, next_out++);
        tw_ring_pop(&r);
    }
    assert_int_equal(next_in, next_out);
    assert_true(next_in > 1000);
    tw_ring_destroy(&r);
}

/* ---------------------------------------------------------------- two threads */

#define N_ROWS 1000000u

typedef struct shared {
    tw_ring ring;
    uint64_t pushed, refused; /* the producer's; read after the join */
    atomic_bool done;
} shared;

static void *producer(void *arg)
{
    shared *s = arg;
    uint64_t seq = 0;
    while (seq < N_ROWS) {
        row *slot = tw_ring_reserve(&s->ring);
        if (!slot) {
            s->refused++; /* never blocks: the caller decides (here: try again) */
            continue;
        }
        slot->seq = seq;
        slot->check = ~seq;
        slot->pad[0] = (double)seq;
        tw_ring_commit(&s->ring);
        seq++;
    }
    s->pushed = seq;
    return NULL;
}

static void test_two_threads(void **state)
{
    (void)state;
    shared s = {0};
    atomic_init(&s.done, false);
    assert_ok(tw_ring_init(&s.ring, 64, sizeof(row)));
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, producer, &s), 0);
    uint64_t expect = 0;
    while (expect < N_ROWS) {
        const row *x = tw_ring_peek(&s.ring);
        if (!x) continue;
        if (x->seq != expect || x->check != ~expect || x->pad[0] != (double)expect)
            fail_msg("row %llu: got seq %llu check %llx", (unsigned long long)expect, (unsigned long long)x->seq,
                     (unsigned long long)x->check);
        tw_ring_pop(&s.ring);
        expect++;
    }
    pthread_join(th, NULL);
    assert_int_equal(s.pushed, N_ROWS);
    assert_null(tw_ring_peek(&s.ring));
    tw_ring_destroy(&s.ring);
}

/* A producer that drops rows when the ring is full (as the sampler does)
 * loses rows, never order: what arrives is increasing. */
static void *dropping_producer(void *arg)
{
    shared *s = arg;
    for (uint64_t seq = 0; seq < N_ROWS / 4; seq++) {
        row x = {seq, ~seq, {0}};
        if (tw_ring_push(&s->ring, &x))
            s->pushed++;
        else
            s->refused++;
    }
    atomic_store(&s->done, true);
    return NULL;
}

static void test_two_threads_dropping(void **state)
{
    (void)state;
    shared s = {0};
    atomic_init(&s.done, false);
    assert_ok(tw_ring_init(&s.ring, 16, sizeof(row)));
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, dropping_producer, &s), 0);
    uint64_t got = 0, last = 0;
    bool done = false;
    while (!done) {
        done = atomic_load(&s.done); /* then one more drain: what was pushed before is visible */
        const row *x;
        while ((x = tw_ring_peek(&s.ring))) {
            if (x->check != ~x->seq) fail_msg("torn row %llu", (unsigned long long)x->seq);
            if (got && x->seq <= last)
                fail_msg("order: %llu after %llu", (unsigned long long)x->seq, (unsigned long long)last);
            last = x->seq;
            got++;
            tw_ring_pop(&s.ring);
        }
    }
    pthread_join(th, NULL);
    assert_null(tw_ring_peek(&s.ring));
    assert_int_equal(got, s.pushed);
    assert_int_equal(s.pushed + s.refused, N_ROWS / 4);
    tw_ring_destroy(&s.ring);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_init_rejects),         cmocka_unit_test(test_fifo_and_full),
        cmocka_unit_test(test_wraparound),           cmocka_unit_test(test_two_threads),
        cmocka_unit_test(test_two_threads_dropping),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
