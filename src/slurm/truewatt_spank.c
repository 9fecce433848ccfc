/* truewatt_spank.so - a Slurm SPANK plugin that records each job step's
 * energy on the GPUs the step was given (docs/slurm.md tells an administrator
 * how to install it).
 *
 * Where it works, in slurmstepd (the remote context), and why there:
 *   user_init   the step's GPUs are known (Slurm has put SLURM_STEP_GPUS /
 *               SLURM_JOB_GPUS / CUDA_VISIBLE_DEVICES into the step's
 *               environment), the --truewatt option has been read, and the
 *               tasks are not yet started: sampling starts here.
 *   task_init   (in each task, just before it execs) --truewatt=kernels puts
 *               the task under `truewatt run` (argv[0] becomes the wrapper
 *               truewatt-slurm-exec, which execs truewatt run -- the program).
 *   task_exit   when the step's last local task has ended, sampling stops and
 *               the summary is written; slurmstepd's stderr is then still the
 *               job's (the batch job's output file, or the pipe to srun), so
 *               --truewatt prints there.
 *   exit        a step whose tasks never started (or ended unseen) is closed
 *               here, its summary written to the configured outputs.
 * The extern step (which only holds the allocation) is not measured.
 *
 * plugstack.conf arguments (each optional):
 *   output=file:PATTERN  append the step's rows to PATTERN (%j job, %s step,
 *                        %n node, %% a percent sign), e.g. /var/log/truewatt/%j.csv
 *   output=dir           append them to truewatt-%j.csv in the job's submit
 *                        directory, owned by the job's user
 *   output=admincomment  append a short line per step to the job's
 *                        AdminComment (slurm_update_job, as root, through the
 *                        libslurmfull that slurmstepd has loaded)
 *   profiles=DIR         sensor profiles for the sampling plan
 *   truewatt=PATH        the truewatt program, for --truewatt=kernels
 *   exec=PATH            the wrapper truewatt-slurm-exec, for --truewatt=kernels
 *   gres_conf=PATH|nvml  the gres.conf that says which GPU Slurm's numbers are
 *                        (default: beside $SLURM_CONF, else /etc/slurm);
 *                        nvml: they are NVML's indices */
#define _GNU_SOURCE /* O_NOFOLLOW, dladdr-free fchown */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <slurm/slurm.h>
#include <slurm/spank.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sensor/nvml_devfile.h"
#include "slurm/gres_conf.h"
#include "slurm/step_energy.h"
#include "slurm/step_gpus.h"
#include "truewatt.h"

#define TW_SPANK_API __attribute__((visibility("default")))

#ifndef TW_SLURM_TRUEWATT_DEFAULT
#define TW_SLURM_TRUEWATT_DEFAULT "truewatt"
#endif
#ifndef TW_SLURM_EXEC_DEFAULT
#define TW_SLURM_EXEC_DEFAULT "truewatt-slurm-exec"
#endif
#ifndef TW_SLURM_PROFILES_DEFAULT
#define TW_SLURM_PROFILES_DEFAULT ""
#endif

TW_SPANK_API extern const char plugin_name[];
TW_SPANK_API extern const char plugin_type[];
TW_SPANK_API extern const unsigned int plugin_version;
TW_SPANK_API const char plugin_name[] = "truewatt";
TW_SPANK_API const char plugin_type[] = "spank";
TW_SPANK_API const unsigned int plugin_version = SLURM_VERSION_NUMBER;

#define MAX_OUTPUTS 4
#define PATH_LEN 4096

enum { MODE_OFF = 0, MODE_SUMMARY = 1, MODE_KERNELS = 2 };

/* The plugin's state in one slurmstepd (one step). */
static struct {
    int mode; /* --truewatt */
    char outputs[MAX_OUTPUTS][PATH_LEN];
    bool output_dir[MAX_OUTPUTS]; /* the submit directory's truewatt-%j.csv, owned by the user */
    size_t noutputs;
    bool admincomment; /* output=admincomment */
    bool bad_config;   /* a plugstack.conf argument was wrong: do nothing (Slurm may call the hooks anyway) */
    char profiles[PATH_LEN];
    char truewatt[PATH_LEN];
    char exec[PATH_LEN];
    char gres_conf[PATH_LEN]; /* gres_conf=: a path, "nvml", or "" (beside slurm.conf) */
    uint32_t job;             /* the step: job id, */
    char step[32];            /* step name ("batch", "0", ...), */
    char node[256];           /* and node, read once in user_init */
    step_meter *meter;
    step_gpus gpus;
    uint32_t ntasks, exited;
} S;

/* ---------------------------------------------------------------- the --truewatt option */

static int option_cb(int val, const char *optarg, int remote)
{
    if (!optarg || !*optarg)
        S.mode = MODE_SUMMARY;
    else if (strcmp(optarg, "kernels") == 0)
        S.mode = MODE_KERNELS;
    else {
        slurm_error("truewatt: --truewatt=%s: the argument is 'kernels' or nothing", optarg);
        return -1;
    }
    return 0;
}

static struct spank_option truewatt_option = {
    "truewatt",
    "[kernels]",
    "print the step's GPU energy (truewatt) on stderr; =kernels also runs each task under `truewatt run` "
    "for each kernel's energy",
    2,
    0,
    option_cb};

/* ---------------------------------------------------------------- plugstack.conf arguments */

static int copy_arg(char *dst, const char *value, const char *arg)
{
    if (!*value || strlen(value) >= PATH_LEN) {
        slurm_error("truewatt: plugstack.conf argument '%s': empty or too long", arg);
        return -1;
    }
    memcpy(dst, value, strlen(value) + 1);
    return 0;
}

static int parse_output(const char *value, const char *arg)
{
    if (S.noutputs == MAX_OUTPUTS) {
        slurm_error("truewatt: plugstack.conf argument '%s': at most %d outputs", arg, MAX_OUTPUTS);
        return -1;
    }
    size_t k = S.noutputs;
    if (strcmp(value, "admincomment") == 0) {
        S.admincomment = true;
        return 0;
    }
    if (strcmp(value, "dir") == 0) {
        S.output_dir[k] = true;
        snprintf(S.outputs[k], PATH_LEN, "truewatt-%%j.csv");
    } else if (strncmp(value, "file:", 5) == 0 && value[5] == '/') {
        if (copy_arg(S.outputs[k], value + 5, arg) != 0) return -1;
    } else {
        slurm_error("truewatt: plugstack.conf argument '%s': output is file:/ABSOLUTE/PATTERN, dir or admincomment",
                    arg);
        return -1;
    }
    S.noutputs++;
    return 0;
}

static int parse_args(int ac, char **av)
{
    snprintf(S.truewatt, PATH_LEN, "%s", TW_SLURM_TRUEWATT_DEFAULT);
    snprintf(S.exec, PATH_LEN, "%s", TW_SLURM_EXEC_DEFAULT);
    snprintf(S.profiles, PATH_LEN, "%s", TW_SLURM_PROFILES_DEFAULT);
    for (int i = 0; i < ac; i++) {
        const char *a = av[i];
        int rc;
        if (strncmp(a, "output=", 7) == 0)
            rc = parse_output(a + 7, a);
        else if (strncmp(a, "profiles=", 9) == 0)
            rc = copy_arg(S.profiles, a + 9, a);
        else if (strncmp(a, "truewatt=", 9) == 0)
            rc = copy_arg(S.truewatt, a + 9, a);
        else if (strncmp(a, "exec=", 5) == 0)
            rc = copy_arg(S.exec, a + 5, a);
        else if (strncmp(a, "gres_conf=", 10) == 0)
            rc = copy_arg(S.gres_conf, a + 10, a);
        else {
            slurm_error("truewatt: plugstack.conf argument %d, '%s': unknown (output=, profiles=, truewatt=, exec=, "
                        "gres_conf=)",
                        i + 1, a);
            rc = -1;
        }
        if (rc != 0) return -1;
    }
    return 0;
}

/* ---------------------------------------------------------------- the step */

static const char *getenv_sp(spank_t sp, const char *name, char *buf, int len)
{
    return spank_getenv(sp, name, buf, len) == ESPANK_SUCCESS ? buf : NULL;
}

/* Slurm's name of the node (it may differ from the host name); Slurm sets
 * SLURMD_NODENAME in the step's environment only when the tasks are set up,
 * so before that, the step's (or job's) node list at this node's position. */
static void read_node(spank_t sp)
{
    char list[4096];
    uint32_t id = 0;
    if (getenv_sp(sp, "SLURMD_NODENAME", S.node, sizeof S.node)) return;
    if (spank_get_item(sp, S_JOB_NODEID, &id) == ESPANK_SUCCESS &&
        (getenv_sp(sp, "SLURM_STEP_NODELIST", list, sizeof list) ||
         getenv_sp(sp, "SLURM_JOB_NODELIST", list, sizeof list)) &&
        gres_nth_name(list, id, S.node, sizeof S.node) == 0)
        return;
    gethostname(S.node, sizeof S.node);
}

/* The step's job id, name and node into S. */
static void read_step(spank_t sp)
{
    uint32_t step = 0;
    spank_get_item(sp, S_JOB_ID, &S.job);
    spank_get_item(sp, S_JOB_STEPID, &step);
    if (step == SLURM_BATCH_SCRIPT)
        snprintf(S.step, sizeof S.step, "batch");
    else if (step == SLURM_INTERACTIVE_STEP)
        snprintf(S.step, sizeof S.step, "interactive");
    else
        snprintf(S.step, sizeof S.step, "%u", step);
    read_node(sp);
}

/* The step's GPUs from its environment; -1 on a value that names none. */
static int read_gpus(spank_t sp)
{
    char a[1024], b[1024], c[4096], err[256];
    if (step_gpus_parse(getenv_sp(sp, "SLURM_STEP_GPUS", a, sizeof a), getenv_sp(sp, "SLURM_JOB_GPUS", b, sizeof b),
                        getenv_sp(sp, "CUDA_VISIBLE_DEVICES", c, sizeof c), &S.gpus, err, sizeof err) != 0) {
        slurm_error("truewatt: the step's GPUs: %s", err);
        return -1;
    }
    return 0;
}

/* gres.conf: gres_conf=PATH, else the one beside slurm.conf ($SLURM_CONF: slurmd's, also in configless
 * mode, where it names the cached copy), else /etc/slurm's. */
static void gres_conf_path(char *path, size_t len)
{
    const char *conf = getenv("SLURM_CONF");
    const char *slash = conf ? strrchr(conf, '/') : NULL;
    if (S.gres_conf[0])
        snprintf(path, len, "%s", S.gres_conf);
    else if (slash)
        snprintf(path, len, "%.*s/gres.conf", (int)(slash - conf), conf);
    else
        snprintf(path, len, "/etc/slurm/gres.conf");
}

/* The NVML GPUs' minor numbers (/dev/nvidiaN), by NVML index. */
static int read_minors(unsigned *minor, size_t cap, size_t *n)
{
    tw_device_info info[GRES_MAX_GPUS];
    size_t have = 0;
    *n = 0;
    if (tw_backend_devices("nvml", NULL, info, GRES_MAX_GPUS, &have) != TW_OK) {
        slurm_error("truewatt: the node's NVML devices: %s", tw_last_error());
        return -1;
    }
    for (size_t k = 0; k < cap; k++)
        minor[k] = UINT_MAX; /* an index NVML does not list matches no file */
    for (size_t i = 0; i < have; i++) {
        unsigned k = info[i].index;
        if (k >= cap) continue; /* more GPUs than gres.conf can list */
        if (tw_nvml_minor_number(NULL, k, &minor[k]) != TW_OK) {
            slurm_error("truewatt: GPU %u's device file number: %s", k, tw_last_error());
            return -1;
        }
        if (k + 1 > *n) *n = k + 1;
    }
    return 0;
}

/* Slurm's GPU numbers to NVML indices through gres.conf (step_gpus_map); -1 when a number names no GPU. */
static int map_gpus(void)
{
    if (strcmp(S.gpus.source, "SLURM_STEP_GPUS") != 0 && strcmp(S.gpus.source, "SLURM_JOB_GPUS") != 0) return 0;
    gres_gpus gres;
    memset(&gres, 0, sizeof gres);
    unsigned minor[GRES_MAX_GPUS];
    size_t nminor = 0;
    char path[PATH_LEN], err[PATH_LEN + 256];
    if (strcmp(S.gres_conf, "nvml") == 0) {
        gres.autodetect = true;
    } else {
        gres_conf_path(path, sizeof path);
        if (gres_conf_read(path, S.node, &gres, err, sizeof err) != 0) {
            slurm_error("truewatt: which GPUs %s names: %s", S.gpus.source, err);
            return -1;
        }
        if (!gres.autodetect && read_minors(minor, GRES_MAX_GPUS, &nminor) != 0) return -1;
    }
    if (step_gpus_map(&S.gpus, &gres, minor, nminor, err, sizeof err) != 0) {
        slurm_error("truewatt: job %u step %s: %s", S.job, S.step, err);
        return -1;
    }
    slurm_info("truewatt: job %u step %s: %s", S.job, S.step, S.gpus.how);
    return 0;
}

static int start_meter(spank_t sp)
{
    char trace[PATH_LEN], err[512] = "";
    const char *tmp = getenv("TMPDIR");
    snprintf(trace, sizeof trace, "%s/truewatt-spank.%u.%s.XXXXXX", tmp && *tmp == '/' ? tmp : "/tmp", S.job, S.step);
    int fd = mkstemp(trace);
    if (fd < 0) {
        slurm_error("truewatt: cannot create a trace file %s: %s", trace, strerror(errno));
        return -1;
    }
    close(fd);
    const char *ids[STEP_GPUS_MAX];
    for (size_t i = 0; i < S.gpus.n; i++)
        ids[i] = S.gpus.id[i];
    tw_status st = step_meter_start(ids, S.gpus.n, trace, S.profiles[0] ? S.profiles : NULL, &S.meter, err, sizeof err);
    if (st != TW_OK) {
        remove(trace);
        slurm_error("truewatt: job %u step %s: the GPUs of %s: sampling did not start: %s: %s", S.job, S.step,
                    S.gpus.source, tw_strerror(st), err);
        return -1;
    }
    return 0;
}

/* ---------------------------------------------------------------- the summary */

#define CSV_HEADER                                                                                                     \
    "job_id,step,node,gpu_index,gpu_uuid,gpu_name,start_unix_s,time_s,energy_j,mean_power_w,reading,method,readings\n"

/* The step's rows of the CSV summary, one per GPU, into buf. */
static void format_rows(char *buf, size_t len)
{
    size_t off = 0;
    double t = step_meter_time_s(S.meter);
    for (size_t i = 0; i < step_meter_count(S.meter) && off < len; i++) {
        const step_gpu_energy *g = step_meter_gpu(S.meter, i);
        int n = snprintf(buf + off, len - off, "%u,%s,%s,%u,%s,\"%s\",%.3f,%.3f,%.3f,%.3f,%s,%s,%zu\n", S.job, S.step,
                         S.node, g->index, g->uuid, g->name, step_meter_start_unix_s(S.meter), t, g->energy_j,
                         g->energy_j / t, g->reading, g->method, g->readings);
        if (n < 0) break;
        off += (size_t)n;
    }
}

/* PATTERN with %j, %s, %n, %% replaced. */
static void expand(const char *pattern, char *out, size_t len)
{
    size_t o = 0;
    for (const char *p = pattern; *p && o + 1 < len; p++) {
        int n = 0;
        if (p[0] == '%' && p[1] == 'j')
            n = snprintf(out + o, len - o, "%u", S.job);
        else if (p[0] == '%' && p[1] == 's')
            n = snprintf(out + o, len - o, "%s", S.step);
        else if (p[0] == '%' && p[1] == 'n')
            n = snprintf(out + o, len - o, "%s", S.node);
        else if (p[0] == '%' && p[1] == '%')
            n = snprintf(out + o, len - o, "%%");
        else {
            out[o++] = *p;
            continue;
        }
        p++;
        o += n > 0 ? (size_t)n : 0;
    }
    out[o < len ? o : len - 1] = '\0';
}

/* Appends rows to path (the header first when the file is new). The file is
 * opened as root without following a link and must be a plain file; in the
 * user's directory (owner_uid != 0) a file that root just created is given
 * to the user, and one of another owner is refused. */
static int append_rows(const char *path, const char *rows, uid_t owner_uid, gid_t owner_gid)
{
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0) {
        slurm_error("truewatt: %s: cannot open for the step's summary: %s", path, strerror(errno));
        return -1;
    }
    struct stat st;
    int rc = fstat(fd, &st);
    bool fresh = rc == 0 && st.st_size == 0;
    if (rc != 0 || !S_ISREG(st.st_mode) || st.st_nlink != 1 ||
        (owner_uid != 0 && st.st_uid != owner_uid && !(fresh && st.st_uid == 0))) {
        slurm_error("truewatt: %s: not a plain file of the job's user: the summary is not written there", path);
        close(fd);
        return -1;
    }
    if (fresh && owner_uid != 0 && st.st_uid != owner_uid && fchown(fd, owner_uid, owner_gid) != 0)
        slurm_error("truewatt: %s: cannot give the file to uid %u: %s", path, (unsigned)owner_uid, strerror(errno));
    size_t len = strlen(rows);
    bool ok = (!fresh || write(fd, CSV_HEADER, strlen(CSV_HEADER)) == (ssize_t)strlen(CSV_HEADER)) &&
              write(fd, rows, len) == (ssize_t)len;
    if (close(fd) != 0) ok = false;
    if (!ok) slurm_error("truewatt: %s: the summary could not be written: %s", path, strerror(errno));
    return ok ? 0 : -1;
}

static void write_outputs(spank_t sp, const char *rows)
{
    for (size_t k = 0; k < S.noutputs; k++) {
        char path[PATH_LEN], name[PATH_LEN], dir[PATH_LEN];
        uid_t uid = 0;
        gid_t gid = 0;
        expand(S.outputs[k], name, sizeof name);
        if (!S.output_dir[k]) {
            snprintf(path, sizeof path, "%s", name);
        } else if (!getenv_sp(sp, "SLURM_SUBMIT_DIR", dir, sizeof dir) || dir[0] != '/') {
            slurm_error("truewatt: output=dir: the step has no SLURM_SUBMIT_DIR");
            continue;
        } else {
            snprintf(path, sizeof path, "%.2000s/%.2000s", dir, name);
            spank_get_item(sp, S_JOB_UID, &uid);
            spank_get_item(sp, S_JOB_GID, &gid);
        }
        append_rows(path, rows, uid, gid);
    }
}

#define ADMIN_COMMENT_MAX 4000 /* the whole comment, ours and what was there */

/* The step in a few words: "truewatt batch: GPU-...=900.2J; 3.009s". */
static void admin_line(char *buf, size_t len)
{
    size_t off = (size_t)snprintf(buf, len, "truewatt %s:", S.step);
    for (size_t i = 0; i < step_meter_count(S.meter) && off < len; i++) {
        const step_gpu_energy *g = step_meter_gpu(S.meter, i);
        off += (size_t)snprintf(buf + off, len - off, " %s=%.1fJ", g->uuid, g->energy_j);
    }
    if (off < len) snprintf(buf + off, len - off, " in %.3fs", step_meter_time_s(S.meter));
}

/* Appends the step's line to the job's AdminComment (what other steps wrote
 * stays; steps ending at the same instant may race, the last one winning). */
static void write_admin_comment(void)
{
    char line[1024], comment[ADMIN_COMMENT_MAX];
    admin_line(line, sizeof line);
    job_info_msg_t *info = NULL;
    const char *old = NULL;
    if (slurm_load_job(&info, S.job, SHOW_ALL) == SLURM_SUCCESS && info && info->record_count > 0)
        old = info->job_array[0].admin_comment;
    snprintf(comment, sizeof comment, "%s%s%s", old && *old ? old : "", old && *old ? "; " : "", line);
    if (info) slurm_free_job_info_msg(info);
    job_desc_msg_t d;
    slurm_init_job_desc_msg(&d);
    d.job_id = S.job;
    d.admin_comment = comment;
    if (slurm_update_job(&d) != SLURM_SUCCESS)
        slurm_error("truewatt: job %u: AdminComment not updated: %s", S.job, slurm_strerror(slurm_get_errno()));
}

/* The summary for people, on the job's stderr (fd 2 of slurmstepd while a task ends). */
static void print_summary(void)
{
    double t = step_meter_time_s(S.meter);
    dprintf(2, "truewatt: job %u step %s: %.3f s on %zu GPU%s\n", S.job, S.step, t, step_meter_count(S.meter),
            step_meter_count(S.meter) == 1 ? "" : "s");
    for (size_t i = 0; i < step_meter_count(S.meter); i++) {
        const step_gpu_energy *g = step_meter_gpu(S.meter, i);
        if (isnan(g->energy_j))
            dprintf(2, "truewatt:   GPU %u %s (%s): no energy: %s\n", g->index, g->uuid, g->name, g->method);
        else
            dprintf(2, "truewatt:   GPU %u %s (%s): %.3f J, mean %.1f W (%s, %zu readings of %s)\n", g->index, g->uuid,
                    g->name, g->energy_j, g->energy_j / t, g->method, g->readings, g->reading);
    }
}

/* Ends the measurement: stops sampling, writes the outputs, prints when asked. */
static void finish(spank_t sp, bool may_print)
{
    if (!S.meter) return;
    tw_status st = step_meter_stop(S.meter);
    if (st != TW_OK) slurm_error("truewatt: stopping the sampler: %s: %s", tw_strerror(st), tw_last_error());
    char rows[STEP_GPUS_MAX * 320]; /* a row per GPU */
    read_node(sp);
    format_rows(rows, sizeof rows);
    slurm_info("truewatt: %s", rows);
    write_outputs(sp, rows);
    if (S.admincomment) write_admin_comment();
    if (may_print && S.mode != MODE_OFF) print_summary();
    step_meter_free(S.meter);
    S.meter = NULL;
}

/* ---------------------------------------------------------------- --truewatt=kernels */

/* In the task, before it execs: the program becomes the wrapper's argument. */
static int wrap_task(spank_t sp)
{
    int argc = 0;
    char **argv = NULL;
    if (spank_get_item(sp, S_JOB_ARGV, &argc, &argv) != ESPANK_SUCCESS || argc < 1 || !argv || !argv[0]) return 0;
    uint32_t task = 0;
    char run[256], devices[STEP_GPUS_MAX * STEP_GPU_ID_LEN] = "";
    spank_get_item(sp, S_TASK_GLOBAL_ID, &task);
    snprintf(run, sizeof run, "truewatt-%u.%s.%u.sqlite", S.job, S.step, task);
    for (size_t i = 0; i < S.gpus.n; i++) {
        if (i) strcat(devices, ",");
        strcat(devices, S.gpus.id[i]);
    }
    if (spank_setenv(sp, "TW_SLURM_ARGV0", argv[0], 1) != ESPANK_SUCCESS ||
        spank_setenv(sp, "TW_SLURM_TRUEWATT", S.truewatt, 1) != ESPANK_SUCCESS ||
        spank_setenv(sp, "TW_SLURM_RUN", run, 1) != ESPANK_SUCCESS ||
        spank_setenv(sp, "TW_SLURM_DEVICES", devices, 1) != ESPANK_SUCCESS) {
        slurm_error("truewatt: --truewatt=kernels: cannot set the task's environment");
        return -1;
    }
    /* argv[0] is the stepd's own copy in this forked task: replacing the
     * pointer makes it exec the wrapper with the program's arguments */
    argv[0] = S.exec;
    return 0;
}

/* ---------------------------------------------------------------- the hooks */

TW_SPANK_API int slurm_spank_init(spank_t sp, int ac, char **av);
TW_SPANK_API int slurm_spank_user_init(spank_t sp, int ac, char **av);
TW_SPANK_API int slurm_spank_task_init(spank_t sp, int ac, char **av);
TW_SPANK_API int slurm_spank_task_exit(spank_t sp, int ac, char **av);
TW_SPANK_API int slurm_spank_exit(spank_t sp, int ac, char **av);

int slurm_spank_init(spank_t sp, int ac, char **av)
{
    if (spank_option_register(sp, &truewatt_option) != ESPANK_SUCCESS) {
        slurm_error("truewatt: cannot register --truewatt");
        return -1;
    }
    if (!spank_remote(sp)) return 0;
    S.bad_config = parse_args(ac, av) != 0;
    return S.bad_config ? -1 : 0;
}

int slurm_spank_user_init(spank_t sp, int ac, char **av)
{
    uint32_t step = 0;
    if (!spank_remote(sp) || S.bad_config || spank_get_item(sp, S_JOB_STEPID, &step) != ESPANK_SUCCESS ||
        step == SLURM_EXTERN_CONT)
        return 0;
    if (read_gpus(sp) != 0) return S.mode != MODE_OFF ? -1 : 0; /* fails only a step that asked */
    if (S.gpus.n == 0 || (S.noutputs == 0 && !S.admincomment && S.mode == MODE_OFF)) return 0;
    read_step(sp);
    spank_get_item(sp, S_JOB_LOCAL_TASK_COUNT, &S.ntasks);
    if (map_gpus() != 0) return S.mode != MODE_OFF ? -1 : 0;
    if (start_meter(sp) != 0 && S.mode != MODE_OFF) return -1;
    return 0;
}

int slurm_spank_task_init(spank_t sp, int ac, char **av)
{
    return S.mode == MODE_KERNELS && S.gpus.n > 0 ? wrap_task(sp) : 0;
}

int slurm_spank_task_exit(spank_t sp, int ac, char **av)
{
    if (S.meter && ++S.exited >= S.ntasks) finish(sp, true);
    return 0;
}

int slurm_spank_exit(spank_t sp, int ac, char **av)
{
    if (spank_remote(sp)) finish(sp, false);
    return 0;
}
