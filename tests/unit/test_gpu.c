/* The GPU driver layer without a GPU: tw_gpu_open's failures, and the
 * calibration PTX assembled with ptxas and checked at the SASS level
 * (each tool absent: that test skips). */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tw_test.h"

#include "gpu/gpu.h"

/* ---------------------------------------------------------------- tw_gpu_open */

static void test_open_env_nonexistent(void **state)
{
    (void)state;
    setenv("TW_CUDA_LIBRARY", "/nonexistent/libcuda.so.1", 1);
    tw_gpu *g = (tw_gpu *)1;
    assert_int_equal(tw_gpu_open(NULL, 0, &g), TW_EUNAVAIL);
    assert_null(g);
    assert_non_null(strstr(tw_last_error(), "/nonexistent/libcuda.so.1"));
    assert_non_null(strstr(tw_last_error(), "TW_CUDA_LIBRARY"));
    unsetenv("TW_CUDA_LIBRARY");
}

static void test_open_arg_nonexistent(void **state)
{
    (void)state;
    setenv("TW_CUDA_LIBRARY", "/also/not/here.so", 1); /* the argument wins */
    tw_gpu *g = NULL;
    assert_int_equal(tw_gpu_open("/nonexistent", 0, &g), TW_EUNAVAIL);
    assert_null(g);
    assert_non_null(strstr(tw_last_error(), "/nonexistent"));
    assert_null(strstr(tw_last_error(), "/also/not/here.so"));
    unsetenv("TW_CUDA_LIBRARY");
}

static void test_open_default_soname(void **state)
{
    (void)state;
    unsetenv("TW_CUDA_LIBRARY");
    void *dl = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (dl) {
        dlclose(dl);
        skip(); /* a driver exists here: this test is for machines without one */
    }
    tw_gpu *g = NULL;
    assert_int_equal(tw_gpu_open(NULL, 0, &g), TW_EUNAVAIL);
    assert_null(g);
    assert_non_null(strstr(tw_last_error(), "libcuda.so.1"));
    assert_non_null(strstr(tw_last_error(), "TW_CUDA_LIBRARY"));
}

static void test_open_not_libcuda(void **state)
{
    (void)state;
    /* a library that loads but is no driver: the checked dlsym names the symbol */
    tw_gpu *g = NULL;
    assert_int_equal(tw_gpu_open("libm.so.6", 0, &g), TW_EUNAVAIL);
    assert_null(g);
    assert_non_null(strstr(tw_last_error(), "libm.so.6 has no cuInit"));
}

static void test_open_bad_args(void **state)
{
    (void)state;
    tw_gpu *g = NULL;
    assert_int_equal(tw_gpu_open("/nonexistent", -1, &g), TW_EINVAL);
    assert_int_equal(tw_gpu_open("/nonexistent", 0, NULL), TW_EINVAL);
    tw_gpu_close(NULL);
    tw_gpu_module_unload(NULL);
    tw_gpu_fn fn;
    assert_int_equal(tw_gpu_kernel(NULL, "tw_spin_fma", &fn), TW_EINVAL);
    assert_int_equal(tw_gpu_launch(NULL, 1, 1, NULL), TW_EINVAL);
}

/* ---------------------------------------------------------------- the PTX */

static void test_ptx_text(void **state)
{
    (void)state;
    const char *ptx = tw_gpu_calibration_ptx();
    assert_non_null(ptx);
    assert_non_null(strstr(ptx, ".version 8.0\n"));
    assert_non_null(strstr(ptx, ".target sm_70\n"));
    assert_non_null(strstr(ptx, ".address_size 64\n"));
    assert_non_null(strstr(ptx, ".visible .entry tw_spin_fma("));
    assert_non_null(strstr(ptx, ".visible .entry tw_stream_copy("));
}

/* The directory holding `tool`: on PATH, else /usr/local/cuda/bin; NULL when absent. */
static const char *tool_dir(const char *tool, char *buf, size_t cap)
{
    const char *path = getenv("PATH");
    char dirs[4096];
    snprintf(dirs, sizeof dirs, "%s:/usr/local/cuda/bin", path ? path : "");
    char *save = NULL;
    for (char *d = strtok_r(dirs, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
        char file[4200];
        snprintf(file, sizeof file, "%s/%s", *d ? d : ".", tool);
        if (access(file, X_OK) == 0) {
            snprintf(buf, cap, "%s", *d ? d : ".");
            return buf;
        }
    }
    return NULL;
}

/* Writes text to a temp .ptx file (slot 0..7) and returns its path. */
static const char *ptx_file(int slot, const char *text)
{
    const char *p = tw_test_path(slot, "kernels.ptx");
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    assert_true(fputs(text, f) >= 0);
    assert_int_equal(fclose(f), 0);
    return p;
}

static size_t count(const char *text, const char *needle)
{
    size_t c = 0;
    for (const char *s = strstr(text, needle); s; s = strstr(s + 1, needle))
        c++;
    return c;
}

static void test_ptx_assembles(void **state)
{
    (void)state;
    char dir[4096];
    if (!tool_dir("ptxas", dir, sizeof dir)) skip();
    const char *ptx = ptx_file(0, tw_gpu_calibration_ptx());
    char cmd[16384];
    snprintf(cmd, sizeof cmd, "'%s/ptxas' -arch=sm_90 -o /dev/null '%s' 2>&1", dir, ptx);
    char *log = NULL;
    int rc = tw_test_run(cmd, &log);
    if (rc != 0) print_error("ptxas: %s\n", log);
    free(log);
    assert_int_equal(rc, 0);

    /* the check can fail: a broken PTX is refused */
    const char *bad = ptx_file(1, ".version 8.0\n.target sm_70\n.address_size 64\n"
                                  ".visible .entry broken()\n{\n    fma.rn.f32 %f1, %f2;\n    ret;\n}\n");
    snprintf(cmd, sizeof cmd, "'%s/ptxas' -arch=sm_90 -o /dev/null '%s' 2>&1", dir, bad);
    assert_int_not_equal(tw_test_run(cmd, NULL), 0);
    unlink(ptx);
    unlink(bad);
}

/* The SASS of one kernel of the calibration PTX built for sm_90 (malloc'd), or
 * NULL when ptxas, cuobjdump or nvdisasm (which cuobjdump runs) is absent. */
static char *sass_of(const char *kernel)
{
    char pdir[4096], cdir[4096], ndir[4096];
    if (!tool_dir("ptxas", pdir, sizeof pdir) || !tool_dir("cuobjdump", cdir, sizeof cdir) ||
        !tool_dir("nvdisasm", ndir, sizeof ndir))
        return NULL;
    const char *ptx = ptx_file(2, tw_gpu_calibration_ptx());
    const char *cubin = tw_test_path(3, "calibration.cubin");
    char cmd[16384];
    snprintf(cmd, sizeof cmd, "'%s/ptxas' -arch=sm_90 -o '%s' '%s' 2>&1", pdir, cubin, ptx);
    assert_int_equal(tw_test_run(cmd, NULL), 0);
    unlink(ptx);
    snprintf(cmd, sizeof cmd, "PATH='%s':\"$PATH\" '%s/cuobjdump' -sass -fun %s '%s' 2>&1", ndir, cdir, kernel, cubin);
    char *sass = NULL;
    int rc = tw_test_run(cmd, &sass);
    unlink(cubin);
    if (rc != 0) print_error("cuobjdump: %s\n", sass);
    assert_int_equal(rc, 0);
    assert_non_null(strstr(sass, kernel));
    return sass;
}

static void test_sass_spin_fma(void **state)
{
    (void)state;
    char *sass = sass_of("tw_spin_fma");
    if (!sass) skip();
    size_t ffma = count(sass, "FFMA");
    if (ffma < 8) print_error("%s\n", sass);
    free(sass);
    assert_true(ffma >= 8);
}

static void test_sass_stream_copy(void **state)
{
    (void)state;
    char *sass = sass_of("tw_stream_copy");
    if (!sass) skip();
    size_t ldg = count(sass, "LDG.E.128"), stg = count(sass, "STG.E.128");
    if (ldg < 1 || stg < 1) print_error("%s\n", sass);
    free(sass);
    assert_true(ldg >= 1);
    assert_true(stg >= 1);
}

static void test_nvrtc_missing(void **state)
{
    (void)state;
    char *ptx = (char *)1, *log = (char *)1;
    setenv("TW_NVRTC_LIBRARY", "/nonexistent/libnvrtc.so", 1);
    assert_int_equal(tw_nvrtc_compile(NULL, "extern \"C\" __global__ void k() {}", "k.cu", 90, &ptx, &log),
                     TW_EUNAVAIL);
    assert_null(ptx);
    assert_null(log);
    assert_non_null(strstr(tw_last_error(), "/nonexistent/libnvrtc.so"));
    assert_non_null(strstr(tw_last_error(), "TW_NVRTC_LIBRARY"));
    unsetenv("TW_NVRTC_LIBRARY");
    /* a library that loads but is no NVRTC: the checked dlsym says so */
    assert_int_equal(tw_nvrtc_compile("libm.so.6", "x", "k.cu", 90, &ptx, NULL), TW_EUNAVAIL);
    assert_non_null(strstr(tw_last_error(), "libm.so.6 has no nvrtc"));
    assert_int_equal(tw_nvrtc_compile(NULL, NULL, "k.cu", 90, &ptx, NULL), TW_EINVAL);
    assert_int_equal(tw_nvrtc_compile(NULL, "x", "k.cu", 7, &ptx, NULL), TW_EINVAL);
}

/* Where NVRTC exists (a CUDA toolkit), it compiles a kernel and reports errors with the log. */
static void test_nvrtc_compiles(void **state)
{
    (void)state;
    int major = 0, minor = 0;
    if (tw_nvrtc_version(NULL, &major, &minor) != TW_OK) skip();
    char *ptx = NULL, *log = NULL;
    assert_int_equal(tw_nvrtc_compile(NULL, "extern \"C\" __global__ void k(float *o) { o[threadIdx.x] = 1.0f; }",
                                      "k.cu", 90, &ptx, &log),
                     TW_OK);
    assert_non_null(strstr(ptx, ".entry k("));
    free(ptx);
    free(log);
    assert_int_equal(tw_nvrtc_compile(NULL, "extern \"C\" __global__ void k() { bogus; }", "bad.cu", 90, &ptx, &log),
                     TW_EPARSE);
    assert_non_null(strstr(tw_last_error(), "bad.cu"));
    assert_non_null(strstr(log, "bogus"));
    free(log);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_open_env_nonexistent), cmocka_unit_test(test_open_arg_nonexistent),
        cmocka_unit_test(test_open_default_soname),  cmocka_unit_test(test_open_not_libcuda),
        cmocka_unit_test(test_open_bad_args),        cmocka_unit_test(test_ptx_text),
        cmocka_unit_test(test_ptx_assembles),        cmocka_unit_test(test_sass_spin_fma),
        cmocka_unit_test(test_sass_stream_copy),     cmocka_unit_test(test_nvrtc_missing),
        cmocka_unit_test(test_nvrtc_compiles),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
