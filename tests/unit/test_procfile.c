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

    /* one GPU's estimate: 3 names of 0.5 + 0.25 + 0.25 s active; baseline 200 J over 2 s */
    tw_est_name names[3] = {{.active_s = 0.5}, {.active_s = 0.25}, {.active_s = 0.25}};
    tw_estimate e = {
        .fit_t0_s = 1, .fit_t1_s = 3, .baseline_j = 200, .kernels_j = 60, .copies_j = 5, .nnames = 3, .names = names};
    assert_int_equal(tw_procfile_set_estimate(r, "GPU-b", &e), TW_OK);
    assert_int_equal(tw_proc_report_end(r), TW_OK);
    text = only_report(path, sizeof path);
    assert_non_null(text);
    assert_true(tw_procfile_parse(text, &p, err, sizeof err));
    free(text);
    assert_true(p.done);
    assert_true(isnan(p.gpu[0].energy_j)); /* no estimate: none */
    assert_true(p.gpu[1].active_j == 65.0);
    assert_true(fabs(p.gpu[1].energy_j - (65.0 + 100.0 * 1.0)) < 1e-9); /* 100 W mean baseline x 1 s busy */
    assert_int_equal(remove(path), 0);
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
        cmocka_unit_test(test_write_read),
        cmocka_unit_test(test_no_folder),
        cmocka_unit_test(test_parse_refusals),
        cmocka_unit_test(test_dead_writer),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
