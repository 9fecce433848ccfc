/* Process reports: the writer (truewatt run, through truewatt.h's
 * tw_proc_report_*) and the reader's parsing (the exporter). procfile.h says
 * why a file per run. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/error.h"
#include "exporter/procfile.h"

struct tw_proc_report {
    char path[4096]; /* DIR/WRITERPID-START.twproc */
    procfile p;
};

const char *tw_procfile_dir(const char *dir)
{
    if (dir && *dir) return dir;
    const char *env = getenv("TW_PROCESS_DIR");
    return env && *env ? env : TW_PROC_DIR_DEFAULT;
}

/* The span [t0, t1] from the first kernel's or copy's start to the last one's end, on the estimate's
 * clock (its fitted shift added, as the estimator places them); false without one. The estimator
 * keeps that span (the events themselves may never be held: a run file's are replayed). */
static bool activity_span(const tw_estimate *e, double *t0, double *t1)
{
    *t0 = e->activity_t0_s;
    *t1 = e->activity_t1_s;
    if (!(*t1 >= *t0)) return false;
    double shift = isfinite(e->shift_s) ? e->shift_s : 0.0;
    *t0 += shift;
    *t1 += shift;
    return *t1 > *t0;
}

/* The GPU's mean power while the run's activities ran that none of them explains: the energy
 * counter's over S, the part of its span [r0, r1] from the first activity to the last (the fit span
 * and the best reading's energy without a counter), less what the activities drew above the
 * baseline, over S's length. The counter's energy outside S (before the first kernel, after the
 * last) is the model's baseline there: another process's kernels may run then, and the baseline
 * the estimator fitted to those stretches includes them, so this process is not charged them (the
 * power measured after the program is no better: the program's context is gone by then, and the
 * fake's GPU drops from 120 W to 75 W).
 *
 * Why the counter and not the model's baseline under the kernels: where the model conserves
 * energy the two agree; where it does not (an H100 held at its 700 W limit from start to end: the
 * estimator's bound held the GEMM's power 106 W above a 538 W baseline, the model 7.8 % under the
 * counter), a process busy over the whole span is charged what the counter measured, not what the
 * model explains. Why S and not [r0, r1]: a mean over the counter's span would spread the stretch
 * after the last kernel over the busy time. Never below 0 (activities fitted above the counter
 * leave nothing to share). */
static double model_baseline_w(const tw_estimate *e) /* the model's mean, where the counter cannot be used */
{
    double span = e->fit_t1_s - e->fit_t0_s;
    return span > 0 && isfinite(e->baseline_j) ? e->baseline_j / span : 0.0;
}

static double unexplained_w(const tw_estimate *e)
{
    double r0 = e->reference_t0_s, r1 = e->reference_t1_s;
    if (!(r1 > r0)) { /* no counter: the fit span, whose reference is the best reading's */
        r0 = e->fit_t0_s;
        r1 = e->fit_t1_s;
    }
    if (!(r1 > r0) || !isfinite(e->reference_j) || !isfinite(e->model_ref_j)) return model_baseline_w(e);
    double above = e->model_ref_j - tw_estimate_baseline_j(e, r0, r1); /* the activities', inside [r0, r1] */
    double a0, a1, s0 = r0, s1 = r1;
    if (activity_span(e, &a0, &a1) && a0 < r1 && a1 > r0) {
        s0 = fmax(r0, a0);
        s1 = fmin(r1, a1);
    }
    double outside_j = tw_estimate_baseline_j(e, r0, s0) + tw_estimate_baseline_j(e, s1, r1);
    double rest = e->reference_j - outside_j - above;
    if (!isfinite(rest)) return model_baseline_w(e);
    return fmax(rest, 0.0) / (s1 - s0);
}

void tw_procfile_split(const tw_estimate *e, const tw_events *events, double *energy_j, double *active_j)
{
    (void)events;      /* the activities' span is the estimate's (activity_t0_s, activity_t1_s) */
    double busy_s = 0; /* the time its kernels and copies ran: their activity integrals (overlaps shared) */
    for (size_t i = 0; i < e->nnames; i++)
        if (isfinite(e->names[i].active_s)) busy_s += e->names[i].active_s;
    *active_j = e->kernels_j + e->copies_j;
    *energy_j = *active_j + unexplained_w(e) * busy_s;
}

unsigned long long tw_procfile_start_ticks(unsigned pid)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%u/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    /* "pid (comm) state ..." where comm may hold spaces and parentheses: fields after the last ')' */
    const char *p = strrchr(buf, ')');
    if (!p) return 0;
    p++;
    for (int field = 3; field < 22 && *p; field++) { /* past fields 3..21: field 22 is starttime */
        while (*p == ' ')
            p++;
        while (*p && *p != ' ')
            p++;
    }
    return strtoull(p, NULL, 10);
}

bool tw_procfile_writer_alive(const procfile *p)
{
    if (p->writer_pid == 0) return false;
    if (kill((pid_t)p->writer_pid, 0) != 0 && errno != EPERM) return false;
    return tw_procfile_start_ticks(p->writer_pid) == p->writer_start;
}

/* A label value on one line: tabs and line ends become spaces. */
static void one_line(char *dst, size_t cap, const char *src)
{
    if (dst != src) snprintf(dst, cap, "%s", src ? src : "");
    for (char *c = dst; *c; c++)
        if (*c == '\t' || *c == '\n' || *c == '\r') *c = ' ';
}

/* The job the run belongs to, from the batch system's variables ("" when none). */
static void job_from_env(char *out, size_t cap)
{
    const char *slurm = getenv("SLURM_JOB_ID"), *step = getenv("SLURM_STEP_ID");
    const char *other[] = {"PBS_JOBID", "LSB_JOBID", "FLUX_JOB_ID", NULL};
    out[0] = '\0';
    if (slurm && *slurm) {
        if (step && *step)
            snprintf(out, cap, "%s.%s", slurm, step);
        else
            snprintf(out, cap, "%s", slurm);
        return;
    }
    for (size_t i = 0; other[i]; i++) {
        const char *v = getenv(other[i]);
        if (v && *v) {
            snprintf(out, cap, "%s", v);
            return;
        }
    }
}

/* The report into its file: written aside, then renamed over it (a reader sees the old or the new whole). */
static tw_status write_report(const tw_proc_report *r)
{
    const procfile *p = &r->p;
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp", r->path);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0) return tw_fail(TW_EIO, "%s: %s", tmp, strerror(errno));
    FILE *f = fdopen(fd, "w");
    if (!f) {
        close(fd);
        return tw_fail(TW_ENOMEM, "out of memory");
    }
    fprintf(f, "%s\nwriter\t%u\t%llu\npid\t%u\ncommand\t%s\njob\t%s\nstate\t%s\n", PROCFILE_MAGIC, p->writer_pid,
            p->writer_start, p->pid, p->command, p->job, p->done ? "done" : "running");
    for (size_t g = 0; g < p->ngpus; g++)
        fprintf(f, "gpu\t%s\t%.17g\t%.17g\n", p->gpu[g].uuid, p->gpu[g].energy_j, p->gpu[g].active_j);
    bool ok = fflush(f) == 0 && !ferror(f);
    ok = (fclose(f) == 0) && ok;
    if (!ok || rename(tmp, r->path) != 0) {
        int e = errno;
        remove(tmp);
        return tw_fail(TW_EIO, "%s: %s", r->path, strerror(e));
    }
    return TW_OK;
}

tw_status tw_proc_report_begin(const tw_proc_report_info *info, tw_proc_report **out)
{
    tw_clear_error();
    if (!info || !out) return tw_fail(TW_EINVAL, "tw_proc_report_begin: NULL argument");
    *out = NULL;
    if (info->size < sizeof *info)
        return tw_fail(TW_EINVAL, "tw_proc_report_begin: info->size is %zu: set it to sizeof(tw_proc_report_info)",
                       info->size);
    if (info->n_uuids > PROCFILE_MAX_GPUS)
        return tw_fail(TW_EINVAL, "tw_proc_report_begin: at most %d GPUs", PROCFILE_MAX_GPUS);
    const char *dir = tw_procfile_dir(info->dir);
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) return TW_OK; /* no folder: no exporter to tell */
    tw_proc_report *r = calloc(1, sizeof *r);
    if (!r) return tw_fail(TW_ENOMEM, "out of memory");
    procfile *p = &r->p;
    p->writer_pid = (unsigned)getpid();
    p->writer_start = tw_procfile_start_ticks(p->writer_pid);
    p->pid = info->pid;
    const char *cmd = info->command ? info->command : "";
    const char *slash = strrchr(cmd, '/');
    one_line(p->command, sizeof p->command, slash ? slash + 1 : cmd);
    if (info->job)
        snprintf(p->job, sizeof p->job, "%s", info->job);
    else
        job_from_env(p->job, sizeof p->job);
    one_line(p->job, sizeof p->job, p->job);
    for (size_t g = 0; g < info->n_uuids; g++) {
        one_line(p->gpu[g].uuid, sizeof p->gpu[g].uuid, info->uuids[g]);
        p->gpu[g].energy_j = p->gpu[g].active_j = NAN;
    }
    p->ngpus = info->n_uuids;
    snprintf(r->path, sizeof r->path, "%s/%u-%llu%s", dir, p->writer_pid, p->writer_start, PROCFILE_EXT);
    tw_status s = write_report(r);
    if (s != TW_OK) {
        free(r);
        return s;
    }
    *out = r;
    return TW_OK;
}

tw_status tw_procfile_set_estimate(tw_proc_report *r, const char *uuid, const tw_estimate *e, const tw_events *events)
{
    if (!r) return TW_OK;
    for (size_t g = 0; g < r->p.ngpus; g++)
        if (strcmp(r->p.gpu[g].uuid, uuid) == 0) {
            tw_procfile_split(e, events, &r->p.gpu[g].energy_j, &r->p.gpu[g].active_j);
            return TW_OK;
        }
    return tw_fail(TW_ENOTFOUND, "the process report has no GPU %s", uuid);
}

tw_status tw_proc_report_end(tw_proc_report *r)
{
    tw_clear_error();
    if (!r) return TW_OK;
    r->p.done = true;
    tw_status s = write_report(r);
    free(r);
    return s;
}

void tw_proc_report_drop(tw_proc_report *r)
{
    if (!r) return;
    remove(r->path);
    free(r);
}

/* ---------------------------------------------------------------- reading */

static bool bad(char *err, size_t len, int line, const char *what)
{
    snprintf(err, len, "line %d: %s", line, what);
    return false;
}

bool tw_procfile_parse(const char *text, procfile *out, char *err, size_t err_len)
{
    memset(out, 0, sizeof *out);
    bool have_writer = false, have_pid = false, have_state = false;
    int line = 0;
    for (const char *p = text; *p;) {
        line++;
        size_t len = strcspn(p, "\n");
        char buf[512];
        if (len >= sizeof buf) return bad(err, err_len, line, "too long");
        memcpy(buf, p, len);
        buf[len] = '\0';
        p += len + (p[len] == '\n');
        if (line == 1) {
            if (strcmp(buf, PROCFILE_MAGIC) != 0) return bad(err, err_len, line, "not '" PROCFILE_MAGIC "'");
            continue;
        }
        char *val = strchr(buf, '\t');
        if (!val) return bad(err, err_len, line, "no tab after the key");
        *val++ = '\0';
        int used = 0;
        if (strcmp(buf, "writer") == 0) {
            if (sscanf(val, "%u\t%llu%n", &out->writer_pid, &out->writer_start, &used) != 2 || val[used])
                return bad(err, err_len, line, "writer: give PID<tab>START");
            have_writer = true;
        } else if (strcmp(buf, "pid") == 0) {
            if (sscanf(val, "%u%n", &out->pid, &used) != 1 || val[used] || out->pid == 0)
                return bad(err, err_len, line, "pid: not a process id");
            have_pid = true;
        } else if (strcmp(buf, "command") == 0) {
            snprintf(out->command, sizeof out->command, "%s", val);
        } else if (strcmp(buf, "job") == 0) {
            snprintf(out->job, sizeof out->job, "%s", val);
        } else if (strcmp(buf, "state") == 0) {
            if (strcmp(val, "done") != 0 && strcmp(val, "running") != 0)
                return bad(err, err_len, line, "state: give running or done");
            out->done = strcmp(val, "done") == 0;
            have_state = true;
        } else if (strcmp(buf, "gpu") == 0) {
            if (out->ngpus == PROCFILE_MAX_GPUS) return bad(err, err_len, line, "too many GPUs");
            procfile_gpu *g = &out->gpu[out->ngpus];
            char *t1 = strchr(val, '\t'), *t2 = t1 ? strchr(t1 + 1, '\t') : NULL;
            if (!t1 || !t2 || t1 == val || (size_t)(t1 - val) >= sizeof g->uuid)
                return bad(err, err_len, line, "gpu: give UUID<tab>ENERGY_J<tab>ACTIVE_J");
            memcpy(g->uuid, val, (size_t)(t1 - val));
            g->uuid[t1 - val] = '\0';
            char *end1, *end2;
            g->energy_j = strtod(t1 + 1, &end1);
            g->active_j = strtod(t2 + 1, &end2);
            if (end1 != t2 || *end2 || g->energy_j < 0 || g->active_j < 0) /* NaN (no estimate) passes */
                return bad(err, err_len, line, "gpu: the energies are not numbers of joules");
            out->ngpus++;
        } else {
            return bad(err, err_len, line, "unknown key");
        }
    }
    if (line == 0) return bad(err, err_len, 1, "empty");
    if (!have_writer || !have_pid || !have_state) return bad(err, err_len, line, "writer, pid or state missing");
    return true;
}
