/* Process reports (src/exporter/procfile.c): the writer's file read back by
 * the reader's parser, the parser's refusals (each naming its line), the
 * writer's liveness, and the energy split of an estimate, against sums done
 * here by hand. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tw_test.h"

#include "exporter/procfile.h"

static char dir[] = "/tmp/tw-procfile.XXXXXX";

static int setup(void **state)
{
    (void)state;
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    return system(cmd) == 0 ? 0 : -1;
}

/* The only file of the folder with the report extension, read whole. */
static char *only_report(char *name, size_t cap)
{
    snprintf(name, cap, "%s/%u-%llu" PROCFILE_EXT, dir, (unsigned)getpid(),
             tw_procfile_start_ticks((unsigned)getpid()));
    FILE *f = fopen(name, "r");
    if (!f) return NULL;
    char *text = calloc(1, PROCFILE_MAX_BYTES + 1);
    size_t n = fread(text, 1, PROCFILE_MAX_BYTES, f);
    text[n] = '\0';
    fclose(f);
    return text;
}

static void test_write_read(void **state)
{
    (void)state;
    const char *uuids[] = {"GPU-a", "GPU-b"};
    tw_proc_report_info info = {.size = sizeof info,
                                .dir = dir,
                                .pid = 4242,
                                .command = "/usr/bin/py\tthon3",
                                .job = "17.0",
                                .uuids = uuids,
                                .n_uuids = 2};
    tw_proc_report *r = NULL;
    assert_int_equal(tw_proc_report_begin(&info, &r), TW_OK);
    assert_non_null(r);
    char path[4096], err[256];
    char *text = only_report(path, sizeof path);
    assert_non_null(text);
    procfile p;
    assert_true(tw_procfile_parse(text, &p, err, sizeof err));
    free(text);
    assert_false(p.done);
    assert_int_equal(p.pid, 4242);
    assert_string_equal(p.command, "py thon3"); /* the base name, on one line */
    assert_string_equal(p.job, "17.0");
    assert_int_equal(p.ngpus, 2);
    assert_true(isnan(p.gpu[0].energy_j));
    assert_true(tw_procfile_writer_alive(&p)); /* this process wrote it */

    /* one GPU's estimate without a counter: 3 names of 0.5 + 0.25 + 0.25 s active; a flat 100 W
     * baseline over the fit span 1..3 s (200 J), whose best reading measured the model's 265 J */
    tw_est_name names[3] = {{.active_s = 0.5}, {.active_s = 0.25}, {.active_s = 0.25}};
    double knots[2] = {100, 100};
    tw_estimate e = {.fit_t0_s = 1,
                     .fit_t1_s = 3,
                     .nknots = 2,
                     .knot_s = 2,
                     .knot_w = knots,
                     .baseline_j = 200,
                     .kernels_j = 60,
                     .copies_j = 5,
                     .model_j = 265,
                     .reference_j = 265,
                     .model_ref_j = 265,
                     .reference_t0_s = NAN,
                     .reference_t1_s = NAN,
                     .active_idle_w = NAN,
                     .nnames = 3,
                     .names = names};
    assert_int_equal(tw_procfile_set_estimate(r, "GPU-b", &e, NULL), TW_OK);
    assert_int_equal(tw_proc_report_end(r), TW_OK);
    text = only_report(path, sizeof path);
    assert_non_null(text);
    assert_true(tw_procfile_parse(text, &p, err, sizeof err));
    free(text);
    assert_true(p.done);
    assert_true(isnan(p.gpu[0].energy_j)); /* no estimate: none */
    assert_true(p.gpu[1].active_j == 65.0);
    assert_true(fabs(p.gpu[1].energy_j - (65.0 + 100.0 * 1.0)) <
                1e-9); /* (265 J measured - 65 J of activities) / 2 s x 1 s busy */
    assert_int_equal(remove(path), 0);
}

/* A GPU kept busy, as on an H100 at its power limit (results/h100/exporter-procs): the scripted
 * truth is 650 W while the process's two kernels run (1.5..2.5 s, 2.5..3.5 s) and 120 W after; the
 * counter's windows span 1.55..3.6 s (after the first kernel's start, as the counter's updates
 * fall), so it measured 650 W x 1.95 s + 120 W x 0.1 s. The estimate's model falls short of that
 * counter as the H100's did: a baseline of 300 W (the active-idle prior pulling it down) falling
 * to 120 W at 3.6 s, and the kernels held at a 50 W bound above it. The process must be charged
 * the GPU's energy while its kernels ran, 650 W x 2 s, less what the model's baseline after the
 * last kernel (300..291 W where 120 W was drawn) takes from it. */
static void test_split_busy(void **state)
{
    (void)state;
    const double busy_w = 650, idle_w = 120, bound_w = 50, base_w = 300;
    tw_est_name names[1] = {{.active_s = 2.0}};
    double knots[3] = {base_w, base_w, idle_w};                   /* at 1.5, 3.5, 5.5 s: 300 W, then down to 120 W */
    double ref_base_j = base_w * 1.95 + (base_w + 291) / 2 * 0.1; /* 291 W at 3.6 s */
    tw_estimate e = {.fit_t0_s = 1.5,
                     .fit_t1_s = 4.5,
                     .nknots = 3,
                     .knot_s = 2,
                     .knot_w = knots,
                     .baseline_j = base_w * 2 + (base_w + 210) / 2 * 1.0,
                     .kernels_j = bound_w * 2,
                     .reference_t0_s = 1.55,
                     .reference_t1_s = 3.6,
                     .reference_j = busy_w * 1.95 + idle_w * 0.1,
                     .model_ref_j = ref_base_j + bound_w * 1.95,
                     .nnames = 1,
                     .names = names,
                     /* its two kernels, 1.5..2.5 s and 2.5..3.5 s (an NVTX range 0.5..4.4 s is no
                      * activity): the span the estimator keeps of them */
                     .activity_t0_s = 1.5,
                     .activity_t1_s = 3.5};
    double energy, active;
    tw_procfile_split(&e, NULL, &energy, &active);
    assert_true(active == bound_w * 2); /* the run's kernels_j + copies_j, as its report says */
    /* the scripted power while its kernels ran, less the 100 ms after them taken at the model's mean
     * 295.5 W there instead of the 120 W drawn, shared over the 1.95 s of kernels the counter saw */
    double want = busy_w * 2.0 - (295.5 - idle_w) * 0.1 * 2.0 / 1.95;
    assert_true(fabs(energy - want) < 1e-9);
    /* (the split before, the model's baseline mean over the fit span x the busy time, gave 670 J) */
}

static void test_no_folder(void **state)
{
    (void)state;
    tw_proc_report_info info = {.size = sizeof info, .dir = "/nonexistent/tw-procs", .pid = 1};
    tw_proc_report *r = (tw_proc_report *)&info;
    assert_int_equal(tw_proc_report_begin(&info, &r), TW_OK);
    assert_null(r); /* no exporter to tell */
    info.size = 8;
    assert_int_equal(tw_proc_report_begin(&info, &r), TW_EINVAL);
}

static void refused(const char *text, const char *want)
{
    procfile p;
    char err[256] = "";
    assert_false(tw_procfile_parse(text, &p, err, sizeof err));
    if (!strstr(err, want)) fail_msg("'%s' does not say '%s'", err, want);
}

static void test_parse_refusals(void **state)
{
    (void)state;
    refused("", "line 1: empty");
    refused("truewatt-process 2\n", "line 1: not");
    refused("truewatt-process 1\nwriter 1 2\n", "line 2: no tab");
    refused("truewatt-process 1\nwriter\t1\n", "line 2: writer");
    refused("truewatt-process 1\npid\t0\n", "line 2: pid");
    refused("truewatt-process 1\nstate\tsleeping\n", "line 2: state");
    refused("truewatt-process 1\ngpu\tGPU-a\t1\n", "line 2: gpu: give");
    refused("truewatt-process 1\ngpu\tGPU-a\tx\t1\n", "line 2: gpu: the energies");
    refused("truewatt-process 1\ngpu\tGPU-a\t-1\t1\n", "line 2: gpu: the energies");
    refused("truewatt-process 1\nsize\t3\n", "line 2: unknown key");
    refused("truewatt-process 1\nwriter\t1\t2\nstate\tdone\n", "writer, pid or state missing");
    procfile p;
    char err[256];
    assert_true(tw_procfile_parse("truewatt-process 1\nwriter\t1\t2\npid\t3\nstate\tdone\n", &p, err, sizeof err));
}

static void test_dead_writer(void **state)
{
    (void)state;
    /* the start time is /proc/PID/stat's field 22, fixed for the process's life: checked against
     * /proc/self/stat read here, and against the parent's (started before this process) */
    FILE *f = fopen("/proc/self/stat", "r");
    assert_non_null(f);
    char buf[1024];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    char *at = strrchr(buf, ')') + 2; /* field 3 */
    unsigned long long start = 0;
    for (int field = 3; field <= 22; field++) {
        char *end = strchr(at, ' ');
        if (field == 22) start = strtoull(at, NULL, 10);
        at = end + 1;
    }
    assert_true(start > 0);
    assert_true(tw_procfile_start_ticks((unsigned)getpid()) == start);
    assert_true(tw_procfile_start_ticks((unsigned)getppid()) <= start);
    assert_true(tw_procfile_start_ticks(0) == 0);
    procfile p = {.writer_pid = (unsigned)getpid(), .writer_start = start + 1};
    assert_false(tw_procfile_writer_alive(&p)); /* the pid, but another start: reused */
    p.writer_pid = 0;
    assert_false(tw_procfile_writer_alive(&p));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_write_read),     cmocka_unit_test(test_split_busy),  cmocka_unit_test(test_no_folder),
        cmocka_unit_test(test_parse_refusals), cmocka_unit_test(test_dead_writer),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
