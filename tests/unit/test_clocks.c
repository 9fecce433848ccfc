/* The GPU clocks through NVML (src/sensor/nvml_clocks.c): the pure parts
 * (clock lists, nearest clocks, checking a lock request, event reason names),
 * then reading and locking against the fake libnvidia-ml.so.1
 * (tests/fakes/fake_nvml.c), whose current clocks follow its locks and whose
 * lock state goes to a file. Never against a real card. */
#include "tw_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <stddef.h>
#include <string.h>

#include "core/error.h"
#include "sensor/nvml_clocks.h"

#ifndef TW_FAKE_NVML_PATH
#error "TW_FAKE_NVML_PATH must name the fake libnvidia-ml.so.1"
#endif

static bool contains(const char *s, const char *part) { return s && strstr(s, part) != NULL; }

/* ---------------------------------------------------------------- the pure parts */

static unsigned h100_gfx[110];

static void fill_h100(void)
{
    for (unsigned i = 0; i < 110; i++)
        h100_gfx[i] = 1980 - 15 * i;
}

/* The H100's table: memory 2619 and 1593, each with 1980..345 in 15 MHz steps. */
static tw_clock_table h100_table(tw_clock_mem mem[2])
{
    fill_h100();
    mem[0] = (tw_clock_mem){2619, 110, h100_gfx};
    mem[1] = (tw_clock_mem){1593, 110, h100_gfx};
    return (tw_clock_table){2, mem};
}

static void test_list_format(void **state)
{
    (void)state;
    char buf[256];
    fill_h100();
    tw_clock_list_format(h100_gfx, 110, buf, sizeof buf);
    assert_string_equal(buf, "110 clocks, 1980..345 MHz in 15 MHz steps");
    const unsigned up[] = {100, 200, 300};
    tw_clock_list_format(up, 3, buf, sizeof buf);
    assert_string_equal(buf, "3 clocks, 100..300 MHz in 100 MHz steps");
    const unsigned uneven[] = {1500, 1400, 1000};
    tw_clock_list_format(uneven, 3, buf, sizeof buf);
    assert_string_equal(buf, "3 clocks: 1500, 1400, 1000 MHz");
    const unsigned two[] = {2619, 1593};
    tw_clock_list_format(two, 2, buf, sizeof buf);
    assert_string_equal(buf, "2 clocks: 2619, 1593 MHz");
    tw_clock_list_format(two, 1, buf, sizeof buf);
    assert_string_equal(buf, "1 clock: 2619 MHz");
    tw_clock_list_format(two, 0, buf, sizeof buf);
    assert_string_equal(buf, "no clocks");
    /* a short buffer is cut, never overrun, and the full length is returned */
    char small[8];
    int n = tw_clock_list_format(uneven, 3, small, sizeof small);
    assert_int_equal(n, (int)strlen("3 clocks: 1500, 1400, 1000 MHz"));
    assert_int_equal(strlen(small), sizeof small - 1);
}

static void test_nearest(void **state)
{
    (void)state;
    fill_h100();
    unsigned lo, hi;
    tw_clock_nearest(h100_gfx, 110, 1201, &lo, &hi);
    assert_int_equal(lo, 1200);
    assert_int_equal(hi, 1215);
    tw_clock_nearest(h100_gfx, 110, 1200, &lo, &hi);
    assert_int_equal(lo, 1200);
    assert_int_equal(hi, 1200);
    tw_clock_nearest(h100_gfx, 110, 100, &lo, &hi);
    assert_int_equal(lo, 0);
    assert_int_equal(hi, 345);
    tw_clock_nearest(h100_gfx, 110, 2500, &lo, &hi);
    assert_int_equal(lo, 1980);
    assert_int_equal(hi, 0);
    assert_true(tw_clock_in(h100_gfx, 110, 345));
    assert_false(tw_clock_in(h100_gfx, 110, 346));
}

static void test_check_request(void **state)
{
    (void)state;
    tw_clock_mem mem[2];
    tw_clock_table t = h100_table(mem);
    assert_int_equal(tw_clock_check_request(&t, 1200, 1200, 0, 2619), TW_OK);
    assert_int_equal(tw_clock_check_request(&t, 345, 1980, 1593, 2619), TW_OK);
    assert_int_equal(tw_clock_check_request(&t, 0, 0, 1593, 2619), TW_OK); /* memory only */

    assert_int_equal(tw_clock_check_request(&t, 1201, 1201, 0, 2619), TW_EINVAL);
    assert_true(contains(tw_last_error(), "graphics clock 1201 MHz is not supported with memory at 2619 MHz"));
    assert_true(contains(tw_last_error(), "nearest: 1200 and 1215 MHz"));
    assert_true(contains(tw_last_error(), "110 clocks, 1980..345 MHz in 15 MHz steps"));
    /* the maximum of a range is checked too */
    assert_int_equal(tw_clock_check_request(&t, 1200, 2000, 0, 2619), TW_EINVAL);
    assert_true(contains(tw_last_error(), "graphics clock 2000 MHz"));
    assert_true(contains(tw_last_error(), "nearest: 1980 MHz"));
    assert_int_equal(tw_clock_check_request(&t, 1215, 1200, 0, 2619), TW_EINVAL);
    assert_true(contains(tw_last_error(), "minimum is above the maximum"));

    assert_int_equal(tw_clock_check_request(&t, 1200, 1200, 1600, 2619), TW_EINVAL);
    assert_true(contains(tw_last_error(), "memory clock 1600 MHz is not supported (nearest: 1593 and 2619 MHz"));
    assert_true(contains(tw_last_error(), "supported: 2619, 1593 MHz"));

    /* with memory 1593 only the graphics clocks of 1593 count */
    static const unsigned low_gfx[] = {1500, 1000};
    mem[1] = (tw_clock_mem){1593, 2, (unsigned *)low_gfx};
    assert_int_equal(tw_clock_check_request(&t, 1200, 1200, 1593, 2619), TW_EINVAL);
    assert_true(contains(tw_last_error(), "with memory at 1593 MHz (nearest: 1000 and 1500 MHz"));
    assert_int_equal(tw_clock_check_request(&t, 1500, 1500, 1593, 2619), TW_OK);
    /* a current memory clock outside the table: any list will do */
    assert_int_equal(tw_clock_check_request(&t, 1200, 1200, 0, 405), TW_OK);
    assert_int_equal(tw_clock_check_request(&t, 1201, 1201, 0, 405), TW_EINVAL);

    tw_clock_table empty = {0, NULL};
    assert_int_equal(tw_clock_check_request(&empty, 1200, 1200, 0, 0), TW_EUNSUPPORTED);
}

static void test_reasons(void **state)
{
    (void)state;
    char buf[256];
    tw_clock_reasons_format(0, buf, sizeof buf);
    assert_string_equal(buf, "none");
    tw_clock_reasons_format(0x1, buf, sizeof buf);
    assert_string_equal(buf, "gpu_idle");
    tw_clock_reasons_format(0x4 | 0x20 | 0x1000, buf, sizeof buf);
    assert_string_equal(buf, "sw_power_cap,sw_thermal,0x1000");
    assert_string_equal(tw_clock_reason_name(0x80), "hw_power_brake");
    assert_string_equal(tw_clock_reason_name(0x100), "display_clock");
    assert_null(tw_clock_reason_name(0x3));
    /* idle, the applications clocks, sync boost and display are not limits */
    assert_int_equal(TW_CLOCK_REASONS_LIMITING & (0x1 | 0x2 | 0x10 | 0x100), 0);
    assert_int_equal(TW_CLOCK_REASONS_LIMITING & 0x4, 0x4);
    assert_int_equal(TW_CLOCK_REASONS_LIMITING & 0x40, 0x40);
}

/* ---------------------------------------------------------------- against the fake */

static const char *const fake_vars[] = {
    "TW_FAKE_NVML_DEVICES",      "TW_FAKE_NVML_UNSUPPORTED", "TW_FAKE_NVML_MEM_CLOCKS",
    "TW_FAKE_NVML_GFX_CLOCKS",   "TW_FAKE_NVML_THROTTLE",    "TW_FAKE_NVML_CLOCK_NO_PERMISSION",
    "TW_FAKE_NVML_CLOCK_STATE",  "TW_FAKE_NVML_SCENARIO",    "TW_FAKE_NVML_INIT_ERROR",
    "TW_FAKE_NVML_LOST_AFTER_S",
};

static tw_clocks *opened;

static int reset_env(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof fake_vars / sizeof fake_vars[0]; i++)
        unsetenv(fake_vars[i]);
    setenv("TW_NVML_LIBRARY", TW_FAKE_NVML_PATH, 1);
    opened = NULL;
    return 0;
}

static int close_opened(void **state)
{
    (void)state;
    tw_clocks_close(opened);
    opened = NULL;
    return 0;
}

static tw_clocks *must_open(const char *device)
{
    if (tw_clocks_open(TW_FAKE_NVML_PATH, device, &opened) != TW_OK) fail_msg("tw_clocks_open: %s", tw_last_error());
    return opened;
}

static void test_read(void **state)
{
    (void)state;
    tw_clocks *c = must_open(NULL);
    assert_int_equal(tw_clocks_index(c), 0);
    assert_string_equal(tw_clocks_name(c), "Fake H100");
    assert_true(contains(tw_clocks_uuid(c), "GPU-fake-0000"));

    tw_clock_table t;
    assert_int_equal(tw_clocks_supported(c, &t), TW_OK);
    assert_int_equal(t.nmem, 2);
    assert_int_equal(t.mem[0].mem_mhz, 2619);
    assert_int_equal(t.mem[1].mem_mhz, 1593);
    for (size_t m = 0; m < 2; m++) {
        assert_int_equal(t.mem[m].n, 110);
        assert_int_equal(t.mem[m].gfx_mhz[0], 1980);
        assert_int_equal(t.mem[m].gfx_mhz[109], 345);
    }
    assert_non_null(tw_clock_table_find(&t, 1593));
    assert_null(tw_clock_table_find(&t, 1594));
    tw_clock_table_free(&t);
    assert_int_equal(t.nmem, 0);

    tw_clock_now now = {.size = sizeof now};
    assert_int_equal(tw_clocks_current(c, &now), TW_OK);
    assert_true(now.have_sm && now.have_mem && now.have_reasons);
    assert_int_equal(now.sm_mhz, 345); /* idle */
    assert_int_equal(now.mem_mhz, 2619);
    assert_int_equal(now.reasons, 0x1); /* gpu_idle */

    unsigned sm, mem;
    assert_int_equal(tw_clocks_max(c, &sm, &mem), TW_OK);
    assert_int_equal(sm, 1980);
    assert_int_equal(mem, 2619);
    assert_true(tw_clocks_can_lock_gpu(c));
    assert_true(tw_clocks_can_lock_mem(c));
}

/* A list longer than the first buffer (256) is read whole. */
static void test_long_list(void **state)
{
    (void)state;
    char list[4096];
    size_t w = 0;
    for (unsigned i = 0; i < 300; i++)
        w += (size_t)snprintf(list + w, sizeof list - w, "%s%u", i ? "," : "", 2000 - 5 * i);
    setenv("TW_FAKE_NVML_GFX_CLOCKS", list, 1);
    setenv("TW_FAKE_NVML_MEM_CLOCKS", "5001", 1);
    tw_clocks *c = must_open("0");
    tw_clock_table t;
    assert_int_equal(tw_clocks_supported(c, &t), TW_OK);
    assert_int_equal(t.nmem, 1);
    assert_int_equal(t.mem[0].mem_mhz, 5001);
    assert_int_equal(t.mem[0].n, 300);
    assert_int_equal(t.mem[0].gfx_mhz[299], 2000 - 5 * 299);
    tw_clock_table_free(&t);
}

static void test_lock_follows(void **state)
{
    (void)state;
    const char *path = tw_test_path(0, "clock-state");
    remove(path);
    setenv("TW_FAKE_NVML_CLOCK_STATE", path, 1);
    tw_clocks *c = must_open("0");
    tw_clock_now now = {.size = sizeof now};

    assert_int_equal(tw_clocks_lock_gpu(c, 1200, 1200), TW_OK);
    assert_int_equal(tw_clocks_lock_mem(c, 1593, 1593), TW_OK);
    assert_int_equal(tw_clocks_current(c, &now), TW_OK);
    assert_int_equal(now.sm_mhz, 1200);
    assert_int_equal(now.mem_mhz, 1593);
    char *text = tw_test_slurp(path);
    assert_non_null(text);
    assert_string_equal(text, "0 gpu=1200-1200 mem=1593-1593 gpu_locks=1 gpu_resets=0 mem_locks=1 mem_resets=0\n");
    free(text);

    /* a range: idle runs at its bottom */
    assert_int_equal(tw_clocks_lock_gpu(c, 900, 1500), TW_OK);
    assert_int_equal(tw_clocks_current(c, &now), TW_OK);
    assert_int_equal(now.sm_mhz, 900);

    assert_int_equal(tw_clocks_reset_gpu(c), TW_OK);
    assert_int_equal(tw_clocks_reset_mem(c), TW_OK);
    assert_int_equal(tw_clocks_current(c, &now), TW_OK);
    assert_int_equal(now.sm_mhz, 345);
    assert_int_equal(now.mem_mhz, 2619);
    text = tw_test_slurp(path);
    assert_string_equal(text, "0 gpu=unlocked mem=unlocked gpu_locks=2 gpu_resets=1 mem_locks=1 mem_resets=1\n");
    free(text);

    /* the fake keeps locks across processes, as a card does: a lock left in the file is read back */
    assert_int_equal(tw_clocks_lock_gpu(c, 1500, 1500), TW_OK);
    tw_clocks_close(c);
    c = must_open("0");
    assert_int_equal(tw_clocks_current(c, &now), TW_OK);
    assert_int_equal(now.sm_mhz, 1500);
    assert_int_equal(tw_clocks_reset_gpu(c), TW_OK);
    remove(path);
}

static void test_no_permission(void **state)
{
    (void)state;
    const char *path = tw_test_path(0, "clock-state");
    remove(path);
    setenv("TW_FAKE_NVML_CLOCK_STATE", path, 1);
    setenv("TW_FAKE_NVML_CLOCK_NO_PERMISSION", "1", 1);
    tw_clocks *c = must_open("0");
    assert_false(tw_clocks_denied(c));
    assert_int_equal(tw_clocks_lock_gpu(c, 1200, 1200), TW_EUNAVAIL);
    assert_true(tw_clocks_denied(c));
    assert_true(contains(tw_last_error(), "nvmlDeviceSetGpuLockedClocks: Insufficient Permissions (4)"));
    assert_true(contains(tw_last_error(), "needs root"));
    assert_int_equal(tw_clocks_lock_mem(c, 1593, 1593), TW_EUNAVAIL);
    assert_true(contains(tw_last_error(), "nvmlDeviceSetMemoryLockedClocks"));
    /* nothing changed: no state written, the clocks as before */
    char *text = tw_test_slurp(path);
    assert_null(text);
    tw_clock_now now = {.size = sizeof now};
    assert_int_equal(tw_clocks_current(c, &now), TW_OK);
    assert_int_equal(now.sm_mhz, 345);
    /* reading needs no rights */
    tw_clock_table t;
    assert_int_equal(tw_clocks_supported(c, &t), TW_OK);
    tw_clock_table_free(&t);
}

static void test_unsupported(void **state)
{
    (void)state;
    setenv("TW_FAKE_NVML_UNSUPPORTED", "supported_clocks,max_clocks,reasons,mem_lock", 1);
    tw_clocks *c = must_open("0");
    tw_clock_table t;
    assert_int_equal(tw_clocks_supported(c, &t), TW_EUNSUPPORTED);
    assert_true(contains(tw_last_error(), "nvmlDeviceGetSupportedMemoryClocks: Not Supported (3)"));
    assert_int_equal(t.nmem, 0);
    unsigned sm, mem;
    assert_int_equal(tw_clocks_max(c, &sm, &mem), TW_EUNSUPPORTED);
    tw_clock_now now = {.size = sizeof now};
    assert_int_equal(tw_clocks_current(c, &now), TW_OK); /* the clocks can still be read */
    assert_true(now.have_sm && now.have_mem);
    assert_false(now.have_reasons);
    assert_int_equal(tw_clocks_lock_mem(c, 1593, 1593), TW_EUNSUPPORTED);
    assert_false(tw_clocks_denied(c));
}

static void test_throttle(void **state)
{
    (void)state;
    setenv("TW_FAKE_NVML_THROTTLE", "0x24,1000,0", 1);
    tw_clocks *c = must_open("0");
    assert_int_equal(tw_clocks_lock_gpu(c, 1200, 1200), TW_OK);
    tw_clock_now now = {.size = sizeof now};
    assert_int_equal(tw_clocks_current(c, &now), TW_OK);
    assert_int_equal(now.sm_mhz, 1000);
    assert_int_equal(now.reasons, 0x25);
    assert_int_equal(tw_clocks_reset_gpu(c), TW_OK);
}

/* tw_clock_now carries its size: an unset size is refused, and an older
 * caller's shorter struct gets only what it holds (nothing written past it). */
static void test_current_sized(void **state)
{
    (void)state;
    tw_clocks *c = must_open("0");
    tw_clock_now now;
    memset(&now, 0xab, sizeof now);
    now.size = 0;
    assert_int_equal(tw_clocks_current(c, &now), TW_EINVAL);
    assert_non_null(strstr(tw_last_error(), "tw_clocks_current: size is 0"));
    memset(&now, 0xab, sizeof now);
    now.size = offsetof(tw_clock_now, mem_mhz); /* knows only sm_mhz */
    assert_int_equal(tw_clocks_current(c, &now), TW_OK);
    assert_int_equal(now.sm_mhz, 345);
    const unsigned char *tail = (const unsigned char *)&now + offsetof(tw_clock_now, mem_mhz);
    for (size_t i = 0; i < sizeof now - offsetof(tw_clock_now, mem_mhz); i++)
        assert_int_equal(tail[i], 0xab);
}

static void test_devices(void **state)
{
    (void)state;
    setenv("TW_FAKE_NVML_DEVICES", "2", 1);
    tw_clocks *c = must_open("GPU-fake-0001-0000-0000-000000000000");
    assert_int_equal(tw_clocks_index(c), 1);
    tw_clocks_close(c);
    opened = NULL;
    tw_clocks *other = NULL;
    assert_int_equal(tw_clocks_open(TW_FAKE_NVML_PATH, "2", &other), TW_ENOTFOUND);
    assert_null(other);
    assert_true(contains(tw_last_error(), "no device 2 (2 devices"));
    setenv("TW_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1", 1);
    assert_int_equal(tw_clocks_open(NULL, NULL, &other), TW_EUNAVAIL);
    assert_true(contains(tw_last_error(), "TW_NVML_LIBRARY"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_list_format),
        cmocka_unit_test(test_nearest),
        cmocka_unit_test(test_check_request),
        cmocka_unit_test(test_reasons),
        cmocka_unit_test_setup_teardown(test_read, reset_env, close_opened),
        cmocka_unit_test_setup_teardown(test_long_list, reset_env, close_opened),
        cmocka_unit_test_setup_teardown(test_lock_follows, reset_env, close_opened),
        cmocka_unit_test_setup_teardown(test_no_permission, reset_env, close_opened),
        cmocka_unit_test_setup_teardown(test_unsupported, reset_env, close_opened),
        cmocka_unit_test_setup_teardown(test_throttle, reset_env, close_opened),
        cmocka_unit_test_setup_teardown(test_devices, reset_env, close_opened),
        cmocka_unit_test_setup_teardown(test_current_sized, reset_env, close_opened),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
