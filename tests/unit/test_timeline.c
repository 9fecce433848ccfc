/* Unit tests of src/timeline/devices.c: events to the GPUs they ran on, and
 * the GPUs to sample (--device, CUDA_VISIBLE_DEVICES). */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tw_test.h"

#include "timeline/devices.h"
#include "truewatt.h"

#define UUID0 "GPU-0a0a0a0a-0000-4000-8000-000000000000"
#define UUID1 "GPU-1b1b1b1b-0000-4000-8000-000000000001"
#define UUID2 "GPU-2c2c2c2c-0000-4000-8000-000000000002" /* a GPU nobody samples */

static void assert_ok(tw_status st)
{
    if (st != TW_OK) fail_msg("%s: %s", tw_strerror(st), tw_last_error());
}

static tw_device_info info(unsigned index, const char *uuid)
{
    tw_device_info d;
    memset(&d, 0, sizeof d);
    d.index = index;
    snprintf(d.uuid, sizeof d.uuid, "%s", uuid);
    snprintf(d.name, sizeof d.name, "Fake H100");
    return d;
}

static void add(tw_events *ev, const char *name, double t0, double t1, int32_t device, const char *uuid,
                const char *kind)
{
    tw_event e = {.name = name,
                  .start_s = t0,
                  .end_s = t1,
                  .device = device,
                  .stream = 7,
                  .true_energy_j = NAN,
                  .kind = kind,
                  .device_uuid = uuid};
    assert_ok(tw_events_add(ev, &e));
}

static bool has(const tw_events *ev, const char *name)
{
    for (size_t i = 0; i < tw_events_count(ev); i++)
        if (strcmp(tw_events_get(ev, i)->name, name) == 0) return true;
    return false;
}

/* ---------------------------------------------------------------- split */

/* CUDA_VISIBLE_DEVICES=1: the program's CUDA device 0 is NVML GPU 1. Its
 * kernels carry device 0 and GPU 1's UUID, and must land on GPU 1. */
static void test_split_by_uuid_not_ordinal(void **state)
{
    (void)state;
    tw_device_info dev[2] = {info(0, UUID0), info(1, UUID1)};
    tw_events *ev = NULL;
    assert_ok(tw_events_new(&ev));
    add(ev, "gemm", 1.0, 1.5, 0, UUID1, "kernel");
    add(ev, "copy", 1.6, 1.7, 0, "gpu-1B1B1B1B-0000-4000-8000-000000000001", "memcpy"); /* case ignored */
    add(ev, "step", 0.9, 2.0, -1, NULL, "nvtx");
    add(ev, "relu", 2.0, 2.1, 1, UUID0, "kernel"); /* another process whose device 1 is GPU 0 */
    tw_events *per[2];
    tw_unmeasured_summary u;
    assert_ok(tw_timeline_split(ev, dev, 2, per, &u));
    assert_int_equal(tw_events_count(per[1]), 3);
    assert_true(has(per[1], "gemm") && has(per[1], "copy") && has(per[1], "step"));
    assert_int_equal(tw_events_count(per[0]), 2);
    assert_true(has(per[0], "relu") && has(per[0], "step")); /* NVTX ranges: every GPU */
    assert_false(has(per[0], "gemm"));
    assert_int_equal(u.n, 0);
    assert_int_equal(u.events, 0);
    tw_events_free(per[0]);
    tw_events_free(per[1]);
    tw_unmeasured_summary_free(&u);
    tw_events_free(ev);
}

/* --device 1 while the program ran on GPU 0: GPU 0's kernels are not
 * charged to GPU 1, they are counted as unmeasured, per GPU. */
static void test_split_unmeasured(void **state)
{
    (void)state;
    tw_device_info dev[1] = {info(1, UUID1)};
    tw_events *ev = NULL;
    assert_ok(tw_events_new(&ev));
    add(ev, "gemm", 1.0, 1.5, 0, UUID0, "kernel");
    add(ev, "gemm", 2.0, 2.25, 0, UUID0, "kernel");
    add(ev, "mine", 3.0, 3.5, 0, UUID1, "kernel");
    add(ev, "other", 4.0, 4.125, 1, UUID2, "memset");
    tw_events *per[1];
    tw_unmeasured_summary u;
    assert_ok(tw_timeline_split(ev, dev, 1, per, &u));
    assert_int_equal(tw_events_count(per[0]), 1);
    assert_true(has(per[0], "mine"));
    assert_int_equal(u.events, 3);
    assert_int_equal(u.n, 2);
    assert_string_equal(u.dev[0].uuid, UUID0);
    assert_int_equal(u.dev[0].events, 2);
    assert_true(fabs(u.dev[0].busy_s - 0.75) < 1e-12);
    assert_string_equal(u.dev[1].uuid, UUID2);
    assert_int_equal(u.dev[1].events, 1);
    char warn[1024] = "";
    tw_unmeasured_describe(&u, warn, sizeof warn);
    assert_non_null(strstr(warn, "warning: 2 kernels, copies or memsets (0.750 s busy) ran on GPU " UUID0));
    assert_non_null(strstr(warn, "ran on GPU " UUID2));
    assert_non_null(strstr(warn, "not sampled"));
    tw_events_free(per[0]);
    tw_unmeasured_summary_free(&u);
    tw_events_free(ev);
}

/* Files without UUIDs (older ones, the simulator): the device number, as before. */
static void test_split_without_uuids(void **state)
{
    (void)state;
    tw_device_info dev[2] = {info(0, UUID0), info(1, UUID1)};
    tw_events *ev = NULL;
    assert_ok(tw_events_new(&ev));
    add(ev, "a", 0, 1, 0, NULL, "kernel");
    add(ev, "b", 0, 1, 1, NULL, NULL);
    add(ev, "c", 0, 1, 3, NULL, "kernel");  /* no such device */
    add(ev, "d", 0, 1, -1, NULL, "kernel"); /* no device: host activity, every slot */
    tw_events *per[2];
    tw_unmeasured_summary u;
    assert_ok(tw_timeline_split(ev, dev, 2, per, &u));
    assert_true(has(per[0], "a") && has(per[0], "d") && !has(per[0], "b"));
    assert_true(has(per[1], "b") && has(per[1], "d") && !has(per[1], "a"));
    assert_int_equal(u.n, 1);
    assert_string_equal(u.dev[0].uuid, "");
    assert_int_equal(u.dev[0].device, 3);
    char warn[512] = "";
    tw_unmeasured_describe(&u, warn, sizeof warn);
    assert_non_null(strstr(warn, "ran on device 3"));
    for (int k = 0; k < 2; k++)
        tw_events_free(per[k]);
    tw_unmeasured_summary_free(&u);

    /* one device: everything without a UUID is its own, whatever the number:
     * the set itself, shared (read-only), not a copy */
    tw_events *one[1];
    assert_ok(tw_timeline_split(ev, dev + 1, 1, one, &u));
    assert_ptr_equal(one[0], ev);
    assert_int_equal(tw_events_count(one[0]), 4);
    assert_int_equal(u.events, 0);
    tw_event x = {.name = "x", .start_s = 0, .end_s = 1, .device = 0, .stream = -1, .true_energy_j = NAN};
    assert_int_equal(tw_events_add(one[0], &x), TW_EINVAL);
    tw_events_free(one[0]);
    tw_unmeasured_summary_free(&u);

    /* a backend that cannot tell UUIDs: event UUIDs are not held against it */
    tw_device_info blind = info(0, "");
    add(ev, "e", 0, 1, 0, UUID2, "kernel");
    assert_ok(tw_timeline_split(ev, &blind, 1, one, &u));
    assert_int_equal(tw_events_count(one[0]), 5);
    tw_events_free(one[0]);
    tw_unmeasured_summary_free(&u);
    tw_events_free(ev);
}

/* The subsets own their strings: the source can go first (the kind of
 * lifetime mistake behind issue 15's garbage name). Under ASan, a borrowed
 * name would be a heap-use-after-free here. */
static void test_split_owns_names(void **state)
{
    (void)state;
    tw_device_info dev[2] = {info(0, UUID0), info(1, UUID1)};
    tw_events *ev = NULL;
    assert_ok(tw_events_new(&ev));
    char longname[2048];
    memset(longname, 'k', sizeof longname - 1);
    longname[sizeof longname - 1] = '\0';
    tw_event e = {.name = longname,
                  .start_s = 0,
                  .end_s = 1,
                  .device = 0,
                  .stream = -1,
                  .true_energy_j = NAN,
                  .kind = "kernel",
                  .device_uuid = UUID1,
                  .mangled = "_Z1kv"};
    assert_ok(tw_events_add(ev, &e));
    tw_events *per[2];
    tw_unmeasured_summary u;
    assert_ok(tw_timeline_split(ev, dev, 2, per, &u));
    tw_events_free(ev);
    const tw_event *k = tw_events_get(per[1], 0);
    assert_non_null(k);
    assert_int_equal(strlen(k->name), sizeof longname - 1);
    assert_string_equal(k->mangled, "_Z1kv");
    assert_string_equal(k->device_uuid, UUID1);
    assert_string_equal(k->kind, "kernel");
    tw_events_free(per[0]);
    tw_events_free(per[1]);
    tw_unmeasured_summary_free(&u);

    /* one device, the set shared: still alive after its first owner frees it */
    assert_ok(tw_events_new(&ev));
    assert_ok(tw_events_add(ev, &e));
    tw_events *one[1];
    assert_ok(tw_timeline_split(ev, dev + 1, 1, one, &u));
    tw_events_free(ev);
    assert_int_equal(strlen(tw_events_get(one[0], 0)->name), sizeof longname - 1);
    tw_events_free(one[0]);
    tw_unmeasured_summary_free(&u);
}

/* ---------------------------------------------------------------- the split as a stream */

/* A replay into a set. */
static tw_status into_set(void *ctx, const tw_event *e) { return tw_events_add(ctx, e); }

static void assert_same(const tw_events *a, const tw_events *b)
{
    assert_int_equal(tw_events_count(a), tw_events_count(b));
    for (size_t i = 0; i < tw_events_count(a); i++) {
        const tw_event *x = tw_events_get(a, i), *y = tw_events_get(b, i);
        assert_string_equal(x->name, y->name);
        assert_true(x->start_s == y->start_s && x->end_s == y->end_s && x->device == y->device);
        assert_true((!x->device_uuid && !y->device_uuid) || strcmp(x->device_uuid, y->device_uuid) == 0);
    }
}

/* Each GPU's feed replays what tw_mig_remap then tw_timeline_split give it,
 * in order, on every replay, and the events of GPUs not sampled are counted
 * as the split counts them: by a replay of their own, or by the first replay
 * of a device's feed that runs to its end. */
static void test_device_feed(void **state)
{
    (void)state;
    tw_device_info dev[2] = {info(0, UUID0), info(1, UUID1)};
    tw_mig_instance mig = {.uuid = "MIG-9d9d9d9d-0000-4000-8000-000000000009", .parent_index = 1, .position = 2};
    snprintf(mig.parent_uuid, sizeof mig.parent_uuid, "%s", UUID1);
    tw_events *ev = NULL;
    assert_ok(tw_events_new(&ev));
    add(ev, "a", 0.1, 0.2, 0, UUID0, "kernel");
    add(ev, "b", 0.15, 0.3, 0, UUID1, "kernel");
    add(ev, "range", 0.0, 1.0, -1, NULL, "nvtx");
    add(ev, "c", 0.2, 0.25, 1, UUID2, "kernel"); /* not sampled */
    add(ev, "d", 0.3, 0.4, 0, mig.uuid, "kernel");
    add(ev, "e", 0.35, 0.5, -1, NULL, "memcpy"); /* no device: host, every GPU */
    add(ev, "f", 0.5, 0.6, 3, UUID2, "memset");
    tw_events *remapped = NULL, *per[2];
    assert_ok(tw_mig_remap(ev, &mig, 1, &remapped));
    tw_unmeasured_summary want, got, counted;
    assert_ok(tw_timeline_split(remapped, dev, 2, per, &want));
    assert_true(has(per[1], "MIG 2: d")); /* the MIG instance's kernel: its GPU's, labelled */
    tw_feed all = tw_feed_of_events(ev);
    for (size_t k = 0; k < 2; k++) {
        tw_device_feed *df = NULL;
        tw_feed f;
        assert_ok(tw_device_feed_open(&all, dev, 2, k, &mig, 1, &df, &f));
        bool done = true;
        if (k == 0) {
            tw_device_feed_count(df, &counted, &done);
            assert_false(done);
        }
        for (int pass = 0; pass < 2; pass++) {
            tw_events *got_k = NULL;
            assert_ok(tw_events_new(&got_k));
            assert_ok(tw_feed_replay(&f, into_set, got_k));
            assert_same(got_k, per[k]);
            tw_events_free(got_k);
        }
        if (k == 0) {
            assert_true(done);
            assert_int_equal(counted.events, want.events);
            assert_int_equal(counted.n, want.n);
            tw_unmeasured_summary_free(&counted);
        }
        tw_device_feed_free(df);
        tw_events_free(per[k]);
    }
    assert_ok(tw_timeline_unmeasured(&all, dev, 2, &mig, 1, &got));
    assert_int_equal(want.events, 2);
    assert_int_equal(got.events, want.events);
    assert_int_equal(got.n, want.n);
    for (size_t i = 0; i < got.n; i++) {
        assert_string_equal(got.dev[i].uuid, want.dev[i].uuid);
        assert_int_equal(got.dev[i].events, want.dev[i].events);
        assert_true(got.dev[i].busy_s == want.dev[i].busy_s);
    }
    tw_unmeasured_summary_free(&got);
    tw_unmeasured_summary_free(&want);
    tw_events_free(remapped);
    tw_events_free(ev);
}

/* ---------------------------------------------------------------- the GPUs to sample */

static const tw_device_info *four(void)
{
    static tw_device_info d[4];
    d[0] = info(0, UUID0);
    d[1] = info(1, UUID1);
    d[2] = info(2, UUID2);
    d[3] = info(3, "GPU-2c2c9999-0000-4000-8000-000000000003");
    return d;
}

static void resolve_ok(const char *list, const char *cvd, const char *want)
{
    size_t pos[8], n = 99;
    char note[512];
    tw_status st = tw_devices_resolve(list, cvd, four(), 4, pos, 8, &n, note, sizeof note);
    if (st != TW_OK) fail_msg("'%s' with CUDA_VISIBLE_DEVICES '%s': %s", list, cvd ? cvd : "(unset)", tw_last_error());
    char got[64] = "";
    for (size_t i = 0; i < n; i++)
        snprintf(got + strlen(got), sizeof got - strlen(got), "%s%zu", i ? "," : "", pos[i]);
    if (strcmp(got, want) != 0)
        fail_msg("'%s' with CUDA_VISIBLE_DEVICES '%s': got %s, want %s", list ? list : "(none)", cvd ? cvd : "(unset)",
                 got, want);
}

static void resolve_fails(const char *list, const char *cvd, const char *needle)
{
    size_t pos[8], n = 0;
    tw_status st = tw_devices_resolve(list, cvd, four(), 4, pos, 8, &n, NULL, 0);
    if (st == TW_OK) fail_msg("'%s' resolved", list);
    if (!strstr(tw_last_error(), needle)) fail_msg("'%s': '%s' lacks '%s'", list, tw_last_error(), needle);
}

static void test_resolve_forms(void **state)
{
    (void)state;
    resolve_ok(NULL, NULL, "0,1,2,3");                                 /* all */
    resolve_ok("1", NULL, "1");                                        /* NVML index */
    resolve_ok("2, 0", NULL, "2,0");                                   /* in the order given */
    resolve_ok("1,1,GPU-1b1b1b1b", NULL, "1");                         /* no repeats; a UUID prefix */
    resolve_ok(UUID1, NULL, "1");                                      /* a whole UUID */
    resolve_ok("gpu-0A0A0A0A-0000-4000-8000-000000000000", NULL, "0"); /* case ignored */
    resolve_ok("cuda:3", NULL, "3");                                   /* no CUDA_VISIBLE_DEVICES: as NVML */
    resolve_ok("cuda:0", "1", "1");                                    /* CUDA_VISIBLE_DEVICES=1: CUDA's 0 is GPU 1 */
    resolve_ok("cuda:1,cuda:0", "3,2", "2,3");
    resolve_ok("cuda:0", "GPU-1b1b", "1"); /* entries may be UUID prefixes */
    resolve_ok("cuda:1", UUID0 ",2", "2");
}

static void test_resolve_default_follows_cuda_visible(void **state)
{
    (void)state;
    resolve_ok(NULL, "1", "1");
    resolve_ok(NULL, "3,1", "3,1");
    resolve_ok(NULL, "GPU-2c2c2c2c", "2");
    /* CUDA stops at the first entry it cannot use */
    resolve_ok(NULL, "1,7,2", "1");
    size_t pos[8], n = 0;
    char note[512];
    assert_ok(tw_devices_resolve(NULL, "1,7,2", four(), 4, pos, 8, &n, note, sizeof note));
    assert_non_null(strstr(note, "'7' names no single GPU"));
    /* nothing usable: all, with a note */
    assert_ok(tw_devices_resolve(NULL, "", four(), 4, pos, 8, &n, note, sizeof note));
    assert_int_equal(n, 4);
    assert_non_null(strstr(note, "sampling all GPUs"));
    /* a MIG instance: a note, it is not a GPU NVML samples */
    assert_ok(tw_devices_resolve(NULL, "MIG-aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee,1", four(), 4, pos, 8, &n, note,
                                 sizeof note));
    assert_int_equal(n, 1);
    assert_int_equal(pos[0], 1);
    assert_non_null(strstr(note, "MIG instance MIG-aaaaaaaa"));
}

/* A MIG instance's UUID stands for its GPU when the instances are known (tw_devices_resolve_mig). */
static void test_resolve_mig_parent(void **state)
{
    (void)state;
    tw_mig_instance mig[2] = {{.uuid = "MIG-aaaaaaaa-0000-4000-8000-000000000000", .parent_index = 2, .position = 0},
                              {.uuid = "MIG-aaaaaaaa-0001-4000-8000-000000000000", .parent_index = 2, .position = 1}};
    snprintf(mig[0].parent_uuid, sizeof mig[0].parent_uuid, "%s", UUID2);
    snprintf(mig[1].parent_uuid, sizeof mig[1].parent_uuid, "%s", UUID2);
    size_t pos[8], n = 0;
    char note[512];
    /* CUDA_VISIBLE_DEVICES=MIG-...: its GPU (NVML index 2), and a note naming instance and GPU */
    assert_ok(tw_devices_resolve_mig(NULL, "MIG-aaaaaaaa-0001-4000-8000-000000000000", four(), 4, mig, 2, pos, 8, &n,
                                     note, sizeof note));
    assert_int_equal(n, 1);
    assert_int_equal(pos[0], 2);
    assert_non_null(strstr(note, "is MIG instance 1 of GPU 2 (" UUID2 ")"));
    /* cuda:0 through it, and --device naming the instance */
    assert_ok(tw_devices_resolve_mig("cuda:0", "MIG-aaaaaaaa-0000-4000-8000-000000000000", four(), 4, mig, 2, pos, 8,
                                     &n, note, sizeof note));
    assert_true(n == 1 && pos[0] == 2);
    assert_ok(tw_devices_resolve_mig("MIG-aaaaaaaa-0000-4000-8000-000000000000,0", NULL, four(), 4, mig, 2, pos, 8, &n,
                                     note, sizeof note));
    assert_true(n == 2 && pos[0] == 2 && pos[1] == 0);
    assert_non_null(strstr(note, "--device: MIG-aaaaaaaa-0000"));
    /* an instance not among them: a note for CUDA_VISIBLE_DEVICES, an error for --device */
    assert_ok(tw_devices_resolve_mig(NULL, "MIG-bbbbbbbb-0000-4000-8000-000000000000,1", four(), 4, mig, 2, pos, 8, &n,
                                     note, sizeof note));
    assert_true(n == 1 && pos[0] == 1);
    assert_int_equal(tw_devices_resolve_mig("MIG-bbbbbbbb-0000-4000-8000-000000000000", NULL, four(), 4, mig, 2, pos, 8,
                                            &n, note, sizeof note),
                     TW_EUNSUPPORTED);
}

static void test_resolve_errors(void **state)
{
    (void)state;
    resolve_fails("4", NULL, "'4': no GPU with that NVML index (NVML sees 0: " UUID0);
    resolve_fails("GPU-ffff", NULL, "no GPU has that UUID");
    resolve_fails("GPU-2c2c", NULL, "more than one GPU's UUID starts so"); /* ambiguous prefix */
    resolve_fails("cuda:1", "1", "makes 1 GPU visible to CUDA");
    resolve_fails("cuda:x", NULL, "needs a CUDA device number");
    resolve_fails("cuda:5", NULL, "no such GPU");
    resolve_fails("MIG-aaaa", NULL, "MIG instance");
    resolve_fails("gpu0", NULL, "not a GPU; give an NVML index (1), a CUDA device (cuda:1) or a UUID");
    resolve_fails("0,,1", NULL, "an empty item");
    resolve_fails(",", NULL, "an empty item");
    resolve_fails("", NULL, "needs a list of GPUs");
    resolve_fails("-1", NULL, "not a GPU");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_split_by_uuid_not_ordinal),
        cmocka_unit_test(test_split_unmeasured),
        cmocka_unit_test(test_split_without_uuids),
        cmocka_unit_test(test_split_owns_names),
        cmocka_unit_test(test_device_feed),
        cmocka_unit_test(test_resolve_forms),
        cmocka_unit_test(test_resolve_default_follows_cuda_visible),
        cmocka_unit_test(test_resolve_errors),
        cmocka_unit_test(test_resolve_mig_parent),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
