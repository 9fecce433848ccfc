/* Unit tests of the Slurm plugin's GPU-free parts (src/slurm/): which GPUs a
 * step was given, from its environment (step_gpus.c), and the energy between
 * two instants on a counter or from power readings (step_energy.c). The
 * plugin itself runs in a real Slurm in tests/e2e/slurm.sh. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "tw_test.h"

#include "slurm/gres_conf.h"
#include "slurm/step_energy.h"
#include "slurm/step_gpus.h"
#include "truewatt.h"

static void assert_near(double got, double want, double tol)
{
    if (!(fabs(got - want) <= tol)) fail_msg("%.17g is not within %g of %.17g", got, tol, want);
}

/* Parses and checks the ids (comma-joined) and their source. */
static void expect_gpus(const char *step, const char *job, const char *cvd, const char *ids, const char *source)
{
    step_gpus g;
    char err[256] = "";
    if (step_gpus_parse(step, job, cvd, &g, err, sizeof err) != 0) fail_msg("unexpected error: %s", err);
    char joined[1024] = "";
    for (size_t i = 0; i < g.n; i++) {
        if (i) strcat(joined, ",");
        strcat(joined, g.id[i]);
    }
    assert_string_equal(joined, ids);
    assert_string_equal(g.source, source);
}

static void expect_error(const char *step, const char *job, const char *cvd, const char *needle)
{
    step_gpus g;
    char err[256] = "";
    assert_int_equal(step_gpus_parse(step, job, cvd, &g, err, sizeof err), -1);
    if (!strstr(err, needle)) fail_msg("message '%s' lacks '%s'", err, needle);
}

static void test_gpus_order(void **state)
{
    (void)state;
    /* UUIDs in CUDA_VISIBLE_DEVICES name GPUs whatever the numbering */
    expect_gpus("0", "0,1", "GPU-aa,GPU-bb", "GPU-aa,GPU-bb", "CUDA_VISIBLE_DEVICES");
    /* srun steps: the node's device numbers, not the renumbered CUDA_VISIBLE_DEVICES */
    expect_gpus("2,3", "0-3", "0,1", "2,3", "SLURM_STEP_GPUS");
    /* the batch step: the job's */
    expect_gpus(NULL, "1", "0", "1", "SLURM_JOB_GPUS");
    expect_gpus("", "1", NULL, "1", "SLURM_JOB_GPUS");
    /* only CUDA_VISIBLE_DEVICES */
    expect_gpus(NULL, NULL, "1,0", "1,0", "CUDA_VISIBLE_DEVICES");
    /* no GPU: nothing to measure, no error */
    expect_gpus(NULL, NULL, NULL, "", "");
    expect_gpus(NULL, NULL, "NoDevFiles", "", "");
    /* ranges, and a GPU listed twice counted once */
    expect_gpus("0-2,2", NULL, NULL, "0,1,2", "SLURM_STEP_GPUS");
    expect_gpus(NULL, NULL, "MIG-x", "MIG-x", "CUDA_VISIBLE_DEVICES");
}

static void test_gpus_bad(void **state)
{
    (void)state;
    expect_error("0,x", NULL, NULL, "SLURM_STEP_GPUS: \"x\"");
    expect_error(NULL, "3-1", NULL, "SLURM_JOB_GPUS: \"3-1\"");
    expect_error(NULL, "1,,2", NULL, "SLURM_JOB_GPUS");
    expect_error(NULL, NULL, "0,GPU-aa", "CUDA_VISIBLE_DEVICES: \"GPU-aa\"");
    expect_error("0-100", NULL, NULL, "SLURM_STEP_GPUS");
}

/* A trace with a counter of 100 W read every 0.5 s (own timestamps 0.02 s
 * after the row's), and rows of another reading between: the energy between
 * two instants is 100 W x their distance, wherever they fall. */
static void test_counter_energy(void **state)
{
    (void)state;
    char text[4096] = "t_s,power_w,power_w_t_s,energy_j,energy_j_t_s\n";
    for (int k = 0; k <= 8; k++) {
        char line[128];
        double t = 0.5 * k;
        snprintf(line, sizeof line, "%.2f,,,%.3f,%.2f\n%.2f,100,%.2f,,\n", t, 5000.0 + 100.0 * (t + 0.02), t + 0.02,
                 t + 0.25, t + 0.25);
        strcat(text, line);
    }
    const char *path = tw_test_file(0, text);
    double e = NAN;
    size_t n = 0;
    assert_int_equal(step_counter_energy(path, "energy_j", 0.0, 3.7, &e, &n), TW_OK);
    assert_near(e, 370.0, 1e-9); /* both ends on a line through readings: before the first, between two */
    assert_int_equal(n, 9);
    assert_int_equal(step_counter_energy(path, "energy_j", 1.13, 4.3, &e, &n), TW_OK);
    assert_near(e, 317.0, 1e-9); /* the end past the last reading */
    assert_int_equal(step_counter_energy(path, "energy_mj", 0, 1, &e, &n), TW_ENOTFOUND);
    const char *one = tw_test_file(1, "t_s,energy_j,energy_j_t_s\n0,5000,0\n");
    assert_int_equal(step_counter_energy(one, "energy_j", 0, 1, &e, &n), TW_EEMPTY);
    assert_true(isnan(e));
}

/* Board power 100 W read every 0.5 s until 1.5 s, 200 W from 2 s (own
 * timestamps): the trapezoid over [0, 4.5] is 100 x 1.5 + the ramp
 * (100 + 200) / 2 x 0.5 + 200 x 2.5 (the last reading, at 4 s, held) = 725 J. */
static void test_power_energy(void **state)
{
    (void)state;
    char text[4096] = "t_s,power_usage_w,power_usage_w_t_s,energy_mj\n";
    for (int k = 0; k <= 8; k++) {
        char line[128];
        double t = 0.5 * k;
        snprintf(line, sizeof line, "%.2f,%d,%.2f,\n%.2f,,,7\n", t, t < 2 ? 100 : 200, t, t + 0.1);
        strcat(text, line);
    }
    const char *path = tw_test_file(2, text);
    double e = NAN;
    size_t n = 0;
    assert_int_equal(step_power_energy(path, "power_usage_w", 0.0, 4.5, &e, &n), TW_OK);
    assert_near(e, 725.0, 1e-9);
    assert_int_equal(n, 9);
    /* inside: [0.25, 1.75] = 100 x 1.25 + the ramp's first half 0.25 x (100 + 150) / 2 */
    assert_int_equal(step_power_energy(path, "power_usage_w", 0.25, 1.75, &e, &n), TW_OK);
    assert_near(e, 125.0 + 31.25, 1e-9);
    /* no counter in this trace: the plugin falls back to the power (step_energy.c) */
    assert_int_equal(step_counter_energy(path, "energy_j", 0, 1, &e, &n), TW_ENOTFOUND);
    const char *none = tw_test_file(3, "t_s,power_usage_w\n0,\n");
    assert_int_equal(step_power_energy(none, "power_usage_w", 0, 1, &e, &n), TW_EEMPTY);
}

/* ---------------------------------------------------------------- Slurm's numbers through gres.conf */

static int collect(void *user, const char *name)
{
    char *out = user;
    size_t len = strlen(out);
    snprintf(out + len, 512 - len, "%s%s", len ? " " : "", name);
    return 0;
}

static void expands_to(const char *list, const char *want)
{
    char got[512] = "";
    assert_int_equal(gres_expand(list, collect, got), 0);
    assert_string_equal(got, want);
}

static void test_expand(void **state)
{
    (void)state;
    expands_to("/dev/nvidia[0-2]", "/dev/nvidia0 /dev/nvidia1 /dev/nvidia2");
    expands_to("/dev/nvidia[7,3]", "/dev/nvidia7 /dev/nvidia3"); /* in the order written, as slurmd */
    expands_to("tw[1-2],gpu[08-10]", "tw1 tw2 gpu08 gpu09 gpu10");
    expands_to("r[1-2]n[1-2]", "r1n1 r1n2 r2n1 r2n2");
    expands_to("node", "node");
    char got[512] = "";
    assert_int_equal(gres_expand("tw[1-", collect, got), -1);
    assert_int_equal(gres_expand("tw[x]", collect, got), -1);
    assert_int_equal(gres_expand("tw]1[", collect, got), -1);
    char name[64];
    assert_int_equal(gres_nth_name("tw[1-3],gpu7", 3, name, sizeof name), 0);
    assert_string_equal(name, "gpu7");
    assert_int_equal(gres_nth_name("tw[1-3]", 3, name, sizeof name), -1);
}

static void test_gres_conf(void **state)
{
    (void)state;
    const char *text = "# a cluster's gres.conf\n"
                       "NodeName=other Name=gpu File=/dev/nvidia[0-7]\n"
                       "NodeName=tw[1-4] Name=gpu Type=h100 File=/dev/nvidia4\n"
                       "nodename=tw[1-4]   name=gpu   file=/dev/nvidia[2,0]   # keys in any case\n"
                       "NodeName=tw[1-4] Name=nic File=/dev/infiniband/uverbs0\n"
                       "Name=gpu File=/dev/nvidia9\n";
    gres_gpus g;
    char err[256] = "";
    assert_int_equal(gres_conf_parse(text, "gres.conf", "tw2", &g, err, sizeof err), 0);
    assert_int_equal(g.n, 4);
    assert_false(g.autodetect);
    unsigned want[] = {4, 2, 0, 9}; /* this node's lines and the lines for every node, in order */
    for (size_t i = 0; i < 4; i++)
        assert_int_equal(g.devnum[i], want[i]);
    assert_int_equal(gres_conf_parse("AutoDetect=nvml\nName=gpu Count=4\n", "g", "tw2", &g, err, sizeof err), 0);
    assert_true(g.autodetect);
    assert_int_equal(gres_conf_parse("NodeName=tw1 Name=gpu File=/dev/gpu\n", "g", "tw1", &g, err, sizeof err), -1);
    assert_non_null(strstr(err, "g line 1: File=/dev/gpu: a file name that does not end in its device number"));
    assert_int_equal(gres_conf_parse("\n\nName=gpu Files\n", "g", "tw1", &g, err, sizeof err), -1);
    assert_non_null(strstr(err, "g line 3: 'Files' is not KEY=VALUE"));
    assert_int_equal(gres_conf_parse("Include /etc/slurm/more.conf\n", "g", "tw1", &g, err, sizeof err), -1);
    assert_int_equal(gres_conf_read("/nonexistent/gres.conf", "tw1", &g, err, sizeof err), -1);
    assert_non_null(strstr(err, "/nonexistent/gres.conf: cannot read it"));
}

static void test_gpus_map(void **state)
{
    (void)state;
    /* gres.conf lists /dev/nvidia4 then /dev/nvidia5; NVML's GPU 0 is minor 5, GPU 1 minor 4 */
    gres_gpus gres = {.n = 2, .devnum = {4, 5}};
    unsigned minor[] = {5, 4};
    step_gpus g;
    char err[256];
    assert_int_equal(step_gpus_parse(NULL, "0", NULL, &g, err, sizeof err), 0);
    assert_int_equal(step_gpus_map(&g, &gres, minor, 2, err, sizeof err), 0);
    assert_string_equal(g.id[0], "1"); /* Slurm's 0 is /dev/nvidia4: NVML's 1 */
    assert_string_equal(g.how, "SLURM_JOB_GPUS: 0=/dev/nvidia4=NVML 1");
    assert_int_equal(step_gpus_parse("1,0", NULL, NULL, &g, err, sizeof err), 0);
    assert_int_equal(step_gpus_map(&g, &gres, minor, 2, err, sizeof err), 0);
    assert_string_equal(g.id[0], "0");
    assert_string_equal(g.id[1], "1");
    /* a number past gres.conf's list, a file no NVML GPU has: errors, never another GPU */
    assert_int_equal(step_gpus_parse("2", NULL, NULL, &g, err, sizeof err), 0);
    assert_int_equal(step_gpus_map(&g, &gres, minor, 2, err, sizeof err), -1);
    assert_non_null(strstr(err, "SLURM_STEP_GPUS: GPU 2, but gres.conf lists 2 GPUs for this node"));
    unsigned other[] = {5, 6};
    assert_int_equal(step_gpus_parse("0", NULL, NULL, &g, err, sizeof err), 0);
    assert_int_equal(step_gpus_map(&g, &gres, other, 2, err, sizeof err), -1);
    assert_non_null(strstr(err, "no NVML GPU has minor number 4"));
    /* AutoDetect=nvml: Slurm's order is NVML's */
    gres_gpus autodetect = {.autodetect = true};
    assert_int_equal(step_gpus_parse("1", NULL, NULL, &g, err, sizeof err), 0);
    assert_int_equal(step_gpus_map(&g, &autodetect, NULL, 0, err, sizeof err), 0);
    assert_string_equal(g.id[0], "1");
    /* UUIDs and a numeric CUDA_VISIBLE_DEVICES: as they are */
    assert_int_equal(step_gpus_parse(NULL, NULL, "0", &g, err, sizeof err), 0);
    assert_int_equal(step_gpus_map(&g, &gres, minor, 2, err, sizeof err), 0);
    assert_string_equal(g.id[0], "0");
    assert_string_equal(g.how, "");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gpus_order),   cmocka_unit_test(test_gpus_bad), cmocka_unit_test(test_counter_energy),
        cmocka_unit_test(test_power_energy), cmocka_unit_test(test_expand),   cmocka_unit_test(test_gres_conf),
        cmocka_unit_test(test_gpus_map),
    };
    return tw_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
