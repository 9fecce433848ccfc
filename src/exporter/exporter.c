/* The exporter daemon (public API in truewatt.h): the sampler feeds each
 * GPU's state (expo_state.c) through its sink, libmicrohttpd's thread
 * renders the states on every scrape (tw_expo_render.c). One mutex guards the
 * states. A GPU whose readings stop (lost, NVML failing) is marked lost and
 * keeps its last energy; the others go on being sampled and served. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <netdb.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/error.h"
#include "exporter/expo.h"
#include "exporter/procfile.h"
#include "sample/sampler_sink.h"
#include "sensor/nvml_procs.h"
#include "truewatt.h"

#ifdef TW_HAVE_MHD
#include <microhttpd.h>
#endif

#define MAX_GPUS 64
#define PROC_FORGET_S 600.0 /* a process without samples this long is no longer published */
#define REPORT_KEEP_S 600   /* a finished run's report is published this long after it was written */
#define MAX_REPORTS 1024    /* reports read per scrape (the folder's others: said, not read); ~2 MB */
#define MAX_COMPLAINTS 64   /* bad reports said once each (by name) */
#define CT_TEXT "text/plain; version=0.0.4; charset=utf-8"
#define CT_OPENMETRICS "application/openmetrics-text; version=1.0.0; charset=utf-8"

/* Where a column of the sampler's merged rows goes: which GPU, under which name. */
typedef struct column_map {
    size_t ncols;
    int *gpu;           /* column -> GPU slot (-1: none) */
    const char **name;  /* column -> its name without the "gpuN_" prefix */
    size_t *cols;       /* per GPU, its columns: cols[first[g] .. first[g + 1]) */
    size_t *first;      /* ngpus + 1 */
    const char **names; /* scratch: one GPU's row, names ... */
    double *val, *tval; /* ... values, own timestamps ... */
    uint8_t *valid;     /* ... and valid flags */
    bool ready, failed;
} column_map;

struct tw_exporter {
    tw_exporter_config cfg;
    char *library;
    char host[256];
    char address[300];
    double window_s;
    uint64_t t0_mono_ns;
    int64_t wall_ms_at_t0;
    pthread_mutex_t mu;
    expo_gpu *gpus;
    size_t ngpus;
    tw_sampler *sampler;
    column_map map;  /* the writer thread's */
    double health_t; /* the row time the devices' health was last looked at (writer thread) */
    /* measured processes (--processes): the reports of `truewatt run` read at each scrape, under mu */
    char *process_dir;
    procfile *reports;
    size_t nreports;
    unsigned long long scanned_ticks;     /* when the folder was last read, clock ticks since boot */
    unsigned long long scan_before;       /* ... the time before: a run whose writer started since is whole */
    char complained[MAX_COMPLAINTS][256]; /* reports already said to be bad */
    size_t ncomplained;
#ifdef TW_HAVE_MHD
    struct MHD_Daemon *http;
#endif
};

static uint64_t clock_ns(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static double timeline_now(const tw_exporter *e)
{
    return 1e-9 * (double)(int64_t)(clock_ns(CLOCK_MONOTONIC) - e->t0_mono_ns);
}

/* Now in clock ticks since boot: the clock of a process's start time (/proc/PID/stat), which
 * a report's writer_start is (a run whose writer started after a scrape lies wholly after it). */
static unsigned long long boot_ticks(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_BOOTTIME, &ts);
    long hz = sysconf(_SC_CLK_TCK);
    return (unsigned long long)ts.tv_sec * (unsigned long long)(hz > 0 ? hz : 100) +
           (unsigned long long)ts.tv_nsec / (1000000000ull / (unsigned long long)(hz > 0 ? hz : 100));
}

/* ---------------------------------------------------------------- the sampler's sink */

/* The slot of the GPU a column belongs to: "gpuN_NAME" is NVML index N's
 * when several GPUs are sampled; one GPU's columns have no prefix. */
static int column_gpu(const tw_exporter *e, const char *col, const char **name)
{
    *name = col;
    if (e->ngpus == 1) return 0;
    unsigned idx;
    int used = 0;
    if (sscanf(col, "gpu%u_%n", &idx, &used) != 1 || used == 0) return -1;
    *name = col + used;
    for (size_t g = 0; g < e->ngpus; g++)
        if (e->gpus[g].index == idx) return (int)g;
    return -1;
}

/* The columns of each GPU, from the sampler's column names (once, at the first row). */
static bool build_map(tw_exporter *e, const tw_sampler *s)
{
    column_map *m = &e->map;
    size_t n = tw_sampler_reading_count(s), k = n ? n : 1;
    m->ncols = n;
    m->gpu = calloc(k, sizeof *m->gpu);
    m->name = calloc(k, sizeof *m->name);
    m->cols = calloc(k, sizeof *m->cols);
    m->first = calloc(e->ngpus + 1, sizeof *m->first);
    m->names = calloc(k, sizeof *m->names);
    m->val = calloc(k, sizeof *m->val);
    m->tval = calloc(k, sizeof *m->tval);
    m->valid = calloc(k, sizeof *m->valid);
    if (!m->gpu || !m->name || !m->cols || !m->first || !m->names || !m->val || !m->tval || !m->valid) return false;
    for (size_t c = 0; c < n; c++)
        m->gpu[c] = column_gpu(e, tw_sampler_reading(s, c)->name, &m->name[c]);
    size_t at = 0;
    for (size_t g = 0; g < e->ngpus; g++) {
        m->first[g] = at;
        for (size_t c = 0; c < n; c++)
            if (m->gpu[c] == (int)g) m->cols[at++] = c;
    }
    m->first[e->ngpus] = at;
    return true;
}

static void free_map(column_map *m)
{
    free(m->gpu);
    free(m->name);
    free(m->cols);
    free(m->first);
    free(m->names);
    free(m->val);
    free(m->tval);
    free(m->valid);
}

/* Each GPU's failed polls, and those whose readings stopped: marked lost, said once. Under e->mu. */
static void check_health(tw_exporter *e, const tw_sampler *s)
{
    for (size_t g = 0; g < e->ngpus; g++) {
        tw_sampler_health h;
        tw_sampler_device_health(s, g, &h);
        expo_gpu *gpu = &e->gpus[g];
        gpu->failures = h.failed_polls;
        if (!h.stopped || gpu->lost) continue;
        tw_expo_gpu_failed(gpu, h.why);
        if (e->cfg.log) {
            char line[1024];
            snprintf(line, sizeof line, "GPU %u (%s) lost, the others still served: %s", gpu->index, gpu->uuid, h.why);
            e->cfg.log(e->cfg.log_user, line);
        }
    }
}

/* A merged row (one producer's readings valid): each GPU's part to its state. */
static void on_row(void *arg, const tw_sampler *s, const tw_row *row)
{
    tw_exporter *e = arg;
    column_map *m = &e->map;
    if (!m->ready && !m->failed) {
        m->ready = build_map(e, s);
        m->failed = !m->ready; /* out of memory: nothing published, said by the empty page */
    }
    if (!m->ready || row->n != m->ncols) return;
    pthread_mutex_lock(&e->mu);
    for (size_t g = 0; g < e->ngpus; g++) {
        size_t n = 0;
        bool any = false;
        for (size_t k = m->first[g]; k < m->first[g + 1]; k++, n++) {
            size_t c = m->cols[k];
            m->names[n] = m->name[c];
            m->val[n] = row->value[c];
            m->tval[n] = row->t_value_s ? row->t_value_s[c] : row->t_s;
            m->valid[n] = row->valid ? row->valid[c] : 1;
            any |= m->valid[n];
        }
        tw_row own = {row->t_s, n, m->val, m->tval, m->valid};
        if (any) tw_expo_gpu_row(&e->gpus[g], m->names, &own);
    }
    if (row->t_s - e->health_t >= 0.5) { /* a lost GPU is told soon, without a scrape */
        e->health_t = row->t_s;
        check_health(e, s);
    }
    pthread_mutex_unlock(&e->mu);
}

/* ---------------------------------------------------------------- measured processes */

/* A bad report said once (by name): the others are still read. */
static void complain(tw_exporter *e, const char *name, const char *why)
{
    for (size_t i = 0; i < e->ncomplained; i++)
        if (strcmp(e->complained[i], name) == 0) return;
    if (e->ncomplained < MAX_COMPLAINTS) snprintf(e->complained[e->ncomplained++], 256, "%s", name);
    if (!e->cfg.log) return;
    char line[4800];
    snprintf(line, sizeof line, "process report %s/%s: %s (ignored)", e->process_dir, name, why);
    e->cfg.log(e->cfg.log_user, line);
}

/* One file of the folder: read into out when it is a report to publish now
 * (running with its writer alive, or done less than REPORT_KEEP_S ago).
 * A finished report older than that, or one whose writer died before it
 * finished (killed: its process is estimated again), is removed. */
static bool read_report(tw_exporter *e, const char *name, time_t now, procfile *out)
{
    char path[4400], text[PROCFILE_MAX_BYTES + 1], err[256];
    snprintf(path, sizeof path, "%s/%s", e->process_dir, name);
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return false; /* gone since the listing, or a link */
    struct stat st;
    ssize_t n = -1;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size <= PROCFILE_MAX_BYTES)
        n = read(fd, text, PROCFILE_MAX_BYTES);
    close(fd);
    if (n < 0) {
        complain(e, name, "not a regular file of at most 16 KiB");
        return false;
    }
    text[n] = '\0';
    if (!tw_procfile_parse(text, out, err, sizeof err)) {
        complain(e, name, err);
        return false;
    }
    bool stale = out->done ? now - st.st_mtime > REPORT_KEEP_S : !tw_procfile_writer_alive(out);
    if (stale) remove(path); /* another user's in a sticky folder stays: read again, stale again */
    return !stale;
}

/* The reports of the folder now. Called under e->mu. */
static void scan_reports(tw_exporter *e)
{
    e->nreports = 0;
    e->scan_before = e->scanned_ticks;
    e->scanned_ticks = boot_ticks();
    DIR *d = opendir(e->process_dir);
    if (!d) return; /* removed since the start: no measured process */
    time_t now = time(NULL);
    size_t ext = strlen(PROCFILE_EXT);
    bool full = false;
    for (struct dirent *de; (de = readdir(d)) != NULL;) {
        size_t len = strlen(de->d_name);
        if (de->d_name[0] == '.' || len <= ext || strcmp(de->d_name + len - ext, PROCFILE_EXT) != 0) continue;
        if (e->nreports == MAX_REPORTS) {
            full = true;
            break;
        }
        if (read_report(e, de->d_name, now, &e->reports[e->nreports])) e->nreports++;
    }
    closedir(d);
    if (full) complain(e, "*", "more than 1024 reports in the folder: the rest not read at this scrape");
}

/* The program of a pid, as the kernel names it (for the estimate's label). */
static void command_of(unsigned pid, char *out, size_t cap)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%u/comm", pid);
    out[0] = '\0';
    FILE *f = fopen(path, "r");
    if (!f) return;
    if (fgets(out, (int)cap, f)) out[strcspn(out, "\n")] = '\0';
    fclose(f);
}

/* ---------------------------------------------------------------- per-process energy */

/* This scrape's reports that name GPU g, for the accounting (rep: nreports slots). */
static size_t gpu_reports(const tw_exporter *e, const expo_gpu *g, expo_report *rep)
{
    size_t n = 0;
    for (size_t r = 0; r < e->nreports; r++) {
        const procfile *p = &e->reports[r];
        for (size_t k = 0; k < p->ngpus; k++) {
            if (strcmp(p->gpu[k].uuid, g->uuid) != 0) continue;
            rep[n++] = (expo_report){.writer_pid = p->writer_pid,
                                     .writer_start = p->writer_start,
                                     .pid = p->pid,
                                     .command = p->command,
                                     .job = p->job,
                                     .done = p->done,
                                     .fresh = p->writer_start >= e->scan_before,
                                     .energy_j = p->gpu[k].energy_j,
                                     .active_j = p->gpu[k].active_j};
            break;
        }
    }
    return n;
}

/* The energy since the last update: the estimated processes' shares by their mean SM utilisation
 * over NVML's samples since then (the share of the time their kernels ran; more than 1 together
 * is scaled to 1; a measured process's share goes to no one), accounted with the measured runs
 * (tw_expo_procs_account: while one goes on, the estimates are held). Called under e->mu. */
static void update_procs(tw_exporter *e, expo_gpu *g, const expo_view *v)
{
    tw_proc_util u[EXPO_MAX_PROCS];
    expo_share share[EXPO_MAX_PROCS];
    size_t n = 0, nshare = 0;
    unsigned long long newest = g->proc_last_us;
    /* a lost GPU's energy stays: its runs' reports are still taken (and bounded by what it had) */
    if (g->lost || tw_nvml_process_util(e->library, g->index, g->proc_last_us, u, EXPO_MAX_PROCS, &n, &newest) != TW_OK)
        n = 0;
    tw_clear_error();
    double de = fmax(v->energy_j - g->proc_energy_at, 0.0); /* the published energy: the sums never exceed it */
    g->proc_energy_at = fmax(g->proc_energy_at, v->energy_j);
    g->proc_last_us = newest;
    double total = 0;
    for (size_t k = 0; k < n; k++)
        total += u[k].sm_util;
    double scale = total > 1.0 ? 1.0 / total : 1.0;
    for (size_t k = 0; k < n; k++) /* a measured pid's share is dropped by the accounting */
        share[nshare++] = (expo_share){u[k].pid, de * u[k].sm_util * scale};
    expo_report *rep = malloc((e->nreports + 1) * sizeof *rep);
    size_t nrep = rep ? gpu_reports(e, g, rep) : 0;
    if (rep) tw_expo_procs_account(g, de, share, nshare, rep, nrep, timeline_now(e), PROC_FORGET_S);
    free(rep); /* out of memory: this interval's energy goes to no process (never twice) */
    for (size_t j = 0; j < g->nprocs; j++)
        if (!g->procs[j].command[0]) command_of(g->procs[j].pid, g->procs[j].command, sizeof g->procs[j].command);
}

/* GPU g's processes for the page: its estimates, then its measured runs whose energy is settled
 * (the first of a pid: a pid reused within REPORT_KEEP_S waits). *out malloc'ed; false when out
 * of memory. */
static bool gpu_procs(const expo_gpu *g, expo_proc **out, size_t *n)
{
    *n = 0;
    *out = malloc((g->nprocs + g->nruns + 1) * sizeof **out);
    if (!*out) return false;
    for (size_t j = 0; j < g->nprocs; j++)
        (*out)[(*n)++] = g->procs[j];
    for (size_t i = 0; i < g->nruns; i++) {
        const expo_run *x = &g->runs[i];
        bool first = true;
        for (size_t k = 0; k < i; k++)
            first &= g->runs[k].pid != x->pid;
        if (!x->settled || !first || !isfinite(x->energy_j)) continue;
        expo_proc *p = &(*out)[(*n)++];
        *p = (expo_proc){.pid = x->pid, .energy_j = x->energy_j, .active_j = x->active_j, .estimate = false};
        snprintf(p->command, sizeof p->command, "%s", x->command);
        snprintf(p->job, sizeof p->job, "%s", x->job);
    }
    return true;
}

/* The folder for the reports, made when absent (sticky and writable by all, as /tmp: every user's runs report). */
static tw_status setup_process_dir(tw_exporter *e)
{
    const char *dir = tw_procfile_dir(e->cfg.process_dir);
    if (!(e->process_dir = strdup(dir)) || !(e->reports = calloc(MAX_REPORTS, sizeof *e->reports)))
        return tw_fail(TW_ENOMEM, "out of memory");
    if (mkdir(dir, 01777) == 0) {
        if (chmod(dir, 01777) != 0) /* mkdir's mode is cut by the umask */
            return tw_fail(TW_EIO, "the process report folder %s: chmod 1777: %s", dir, strerror(errno));
        return TW_OK;
    }
    struct stat st;
    if (errno == EEXIST && stat(dir, &st) == 0 && S_ISDIR(st.st_mode)) return TW_OK;
    return tw_fail(TW_EIO, "the process report folder %s: %s", dir, errno == EEXIST ? "not a folder" : strerror(errno));
}

/* ---------------------------------------------------------------- rendering */

tw_status tw_exporter_render(tw_exporter *e, bool openmetrics, char **text, size_t *len)
{
    tw_clear_error();
    if (!e || !text) return tw_fail(TW_EINVAL, "tw_exporter_render: NULL argument");
    *text = NULL;
    expo_view *v = calloc(e->ngpus ? e->ngpus : 1, sizeof *v);
    if (!v) return tw_fail(TW_ENOMEM, "out of memory");
    tw_sbuf out = {0};
    expo_render_opts o = {openmetrics, e->cfg.dcgm_names, e->window_s, e->wall_ms_at_t0};
    expo_proc **procs = calloc(e->ngpus ? e->ngpus : 1, sizeof *procs);
    if (!procs) {
        free(v);
        return tw_fail(TW_ENOMEM, "out of memory");
    }
    pthread_mutex_lock(&e->mu);
    check_health(e, e->sampler); /* also when no row comes any more (every GPU lost) */
    if (e->cfg.processes) scan_reports(e);
    for (size_t i = 0; i < e->ngpus; i++) {
        tw_expo_gpu_view(&e->gpus[i], e->window_s, e->host, &v[i]);
        v[i].nprocs = 0;
        if (!e->cfg.processes) continue;
        /* before its first energy, no report is taken: one begun meanwhile is not whole next time */
        if (v[i].has_energy) update_procs(e, &e->gpus[i], &v[i]);
        if (gpu_procs(&e->gpus[i], &procs[i], &v[i].nprocs)) v[i].procs = procs[i];
    }
    tw_expo_render(v, e->ngpus, &o, &out);
    pthread_mutex_unlock(&e->mu);
    for (size_t i = 0; i < e->ngpus; i++)
        free(procs[i]);
    free(procs);
    free(v);
    if (out.oom || !out.p) {
        free(out.p);
        return tw_fail(TW_ENOMEM, "out of memory (the metrics page)");
    }
    *text = out.p;
    if (len) *len = out.len;
    return TW_OK;
}

/* ---------------------------------------------------------------- HTTP */

#ifdef TW_HAVE_MHD
static enum MHD_Result reply(struct MHD_Connection *c, unsigned code, const char *type, char *body, size_t len,
                             bool owned)
{
    struct MHD_Response *r =
        MHD_create_response_from_buffer(len, body, owned ? MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_PERSISTENT);
    if (!r) {
        if (owned) free(body);
        return MHD_NO;
    }
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    enum MHD_Result ret = MHD_queue_response(c, code, r);
    MHD_destroy_response(r);
    return ret;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                              const char *version, const char *upload_data, size_t *upload_data_size, void **con_cls)
{
    static char index_page[] = "truewatt exporter: the metrics are at /metrics\n";
    static char not_found[] = "not found: the metrics are at /metrics\n";
    static char not_allowed[] = "only GET and HEAD\n";
    static char failed[] = "the metrics could not be rendered\n";
    tw_exporter *e = cls;
    (void)version, (void)upload_data, (void)upload_data_size, (void)con_cls;
    if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
        return reply(c, MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain", not_allowed, sizeof not_allowed - 1, false);
    if (strcmp(url, "/") == 0) return reply(c, MHD_HTTP_OK, "text/plain", index_page, sizeof index_page - 1, false);
    if (strcmp(url, "/metrics") != 0)
        return reply(c, MHD_HTTP_NOT_FOUND, "text/plain", not_found, sizeof not_found - 1, false);
    /* OpenMetrics when the scraper lists it (Prometheus does, first); else the text format */
    const char *accept = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT);
    bool om = accept && strstr(accept, "application/openmetrics-text") != NULL;
    char *text = NULL;
    size_t len = 0;
    if (tw_exporter_render(e, om, &text, &len) != TW_OK)
        return reply(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "text/plain", failed, sizeof failed - 1, false);
    return reply(c, MHD_HTTP_OK, om ? CT_OPENMETRICS : CT_TEXT, text, len, true);
}
#endif

/* "ADDR:PORT" or "[ADDR6]:PORT" into a socket address. */
static tw_status parse_listen(const char *listen, struct sockaddr_storage *sa, socklen_t *salen, int *family)
{
    char host[256];
    const char *colon = strrchr(listen, ':');
    const char *h = listen;
    size_t hlen = colon ? (size_t)(colon - listen) : 0;
    if (h[0] == '[' && hlen >= 2 && h[hlen - 1] == ']') h++, hlen -= 2;
    if (!colon || hlen == 0 || hlen >= sizeof host || !colon[1])
        return tw_fail(TW_EINVAL, "--listen '%s': give ADDR:PORT (e.g. 127.0.0.1:9464, [::1]:9464, 0.0.0.0:9464)",
                       listen);
    memcpy(host, h, hlen);
    host[hlen] = '\0';
    char *end;
    long port = strtol(colon + 1, &end, 10);
    if (*end || port < 0 || port > 65535)
        return tw_fail(TW_EINVAL, "--listen '%s': the port must be a number from 0 to 65535", listen);
    struct addrinfo hints = {0}, *ai = NULL;
    hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV | AI_PASSIVE;
    hints.ai_socktype = SOCK_STREAM;
    int rc = getaddrinfo(host, colon + 1, &hints, &ai);
    if (rc != 0 || !ai)
        return tw_fail(TW_EINVAL, "--listen '%s': '%s' is not a numeric IPv4 or IPv6 address (%s)", listen, host,
                       gai_strerror(rc));
    memcpy(sa, ai->ai_addr, ai->ai_addrlen);
    *salen = ai->ai_addrlen;
    *family = ai->ai_family;
    freeaddrinfo(ai);
    return TW_OK;
}

static tw_status start_http(tw_exporter *e, const char *listen)
{
#ifdef TW_HAVE_MHD
    struct sockaddr_storage sa;
    socklen_t salen = 0;
    int family = AF_INET;
    tw_status st = parse_listen(listen, &sa, &salen, &family); /* checked before, at the start */
    if (st != TW_OK) return st;
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | (family == AF_INET6 ? MHD_USE_IPv6 : 0);
    uint16_t port = family == AF_INET6 ? ntohs(((struct sockaddr_in6 *)&sa)->sin6_port)
                                       : ntohs(((struct sockaddr_in *)&sa)->sin_port);
    e->http = MHD_start_daemon(flags, port, NULL, NULL, handle, e, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
                               MHD_OPTION_CONNECTION_TIMEOUT, 30u, MHD_OPTION_END);
    if (!e->http) return tw_fail(TW_EIO, "cannot listen on %s (in use? not an address of this host?)", listen);
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(e->http, MHD_DAEMON_INFO_BIND_PORT);
    unsigned bound = info ? info->port : port;
    const char *colon = strrchr(listen, ':');
    snprintf(e->address, sizeof e->address, "%.*s:%u", (int)(colon - listen), listen, bound);
    return TW_OK;
#else
    (void)e, (void)listen;
    return tw_fail(TW_EUNAVAIL,
                   "this truewatt was built without libmicrohttpd (install libmicrohttpd-dev and rebuild)");
#endif
}

/* ---------------------------------------------------------------- start, serve, stop */

/* The GPUs and, for each, its sensor profile (the file given, else its own
 * in the profile folder, else none: the defaults). */
static tw_status setup_gpus(tw_exporter *e)
{
    tw_device_info info[MAX_GPUS];
    size_t n = 0;
    tw_status st = tw_backend_devices(e->cfg.backend, e->cfg.base, info, MAX_GPUS, &n);
    if (st != TW_OK) return st;
    if (n == 0) return tw_fail(TW_ENOTFOUND, "backend '%s' sees no GPU", e->cfg.backend);
    if (n > MAX_GPUS) n = MAX_GPUS;
    e->gpus = calloc(n, sizeof *e->gpus);
    if (!e->gpus) return tw_fail(TW_ENOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) {
        expo_gpu *g = &e->gpus[i];
        if ((st = tw_expo_gpu_init(g, info[i].index, info[i].uuid, info[i].name)) != TW_OK) return st;
        e->ngpus++;
        char path[4096] = "";
        if (e->cfg.profile_path) {
            if ((st = tw_profile_load(e->cfg.profile_path, &g->prof)) != TW_OK) return st;
            snprintf(path, sizeof path, "%s", e->cfg.profile_path);
            g->have_profile = true;
        } else if (e->cfg.profile_dir) {
            g->have_profile = tw_profile_lookup(e->cfg.profile_dir, info[i].name, info[i].driver, &g->prof, path,
                                                sizeof path, NULL) == TW_OK;
            tw_clear_error();
        }
        if (g->have_profile) snprintf(g->profile, sizeof g->profile, "%s", path);
    }
    return TW_OK;
}

static tw_status start_sampler(tw_exporter *e)
{
    char ids[MAX_GPUS][16];
    const char *devs[MAX_GPUS];
    for (size_t i = 0; i < e->ngpus; i++) {
        snprintf(ids[i], sizeof ids[i], "%u", e->gpus[i].index);
        devs[i] = ids[i];
    }
    tw_sampler_config sc = {0};
    sc.backend = e->cfg.backend;
    sc.devices = devs;
    sc.n_devices = e->ngpus;
    sc.base = e->cfg.base;
    sc.t0_mono_ns = e->t0_mono_ns;
    sc.profile_path = e->cfg.profile_path;
    sc.profile_dir = e->cfg.profile_dir;
    return tw_sampler_start_sink(&sc, on_row, e, &e->sampler);
}

static void exporter_free(tw_exporter *e)
{
    for (size_t i = 0; i < e->ngpus; i++)
        tw_expo_gpu_free(&e->gpus[i]);
    free(e->gpus);
    free_map(&e->map);
    free(e->library);
    free(e->process_dir);
    free(e->reports);
    pthread_mutex_destroy(&e->mu);
    free(e);
}

tw_status tw_exporter_start(const tw_exporter_config *cfg, tw_exporter **out)
{
    tw_clear_error();
    if (!cfg || !out) return tw_fail(TW_EINVAL, "tw_exporter_start: NULL argument");
    *out = NULL;
    if (cfg->size < offsetof(tw_exporter_config, log)) /* the first version's fields */
        return tw_fail(TW_EINVAL, "tw_exporter_start: cfg->size is %zu: set it to sizeof(tw_exporter_config)",
                       cfg->size);
    if (cfg->window_s < 0 || !isfinite(cfg->window_s) || cfg->window_s > 60)
        return tw_fail(TW_EINVAL, "the power window must be from 0 to 60 s (got %g)", cfg->window_s);
    tw_exporter *e = calloc(1, sizeof *e);
    if (!e) return tw_fail(TW_ENOMEM, "out of memory");
    pthread_mutex_init(&e->mu, NULL);
    /* a caller built against an older header passes a smaller struct: the fields it lacks stay 0 */
    memcpy(&e->cfg, cfg, cfg->size < sizeof e->cfg ? cfg->size : sizeof e->cfg);
    e->cfg.size = sizeof e->cfg;
    if (!e->cfg.backend) e->cfg.backend = "nvml";
    e->window_s = cfg->window_s > 0 ? cfg->window_s : 1.0;
    if (cfg->base && cfg->base->library && !(e->library = strdup(cfg->base->library))) {
        exporter_free(e);
        return tw_fail(TW_ENOMEM, "out of memory");
    }
    if (cfg->hostname)
        snprintf(e->host, sizeof e->host, "%s", cfg->hostname);
    else if (gethostname(e->host, sizeof e->host) != 0)
        snprintf(e->host, sizeof e->host, "unknown");
    e->host[sizeof e->host - 1] = '\0';
    uint64_t m1 = clock_ns(CLOCK_MONOTONIC), r = clock_ns(CLOCK_REALTIME), m2 = clock_ns(CLOCK_MONOTONIC);
    e->t0_mono_ns = m1 + (m2 - m1) / 2;
    e->wall_ms_at_t0 = (int64_t)(r / 1000000u);
    e->scanned_ticks = boot_ticks(); /* a run begun before the start: not wholly in this exporter's accounting */
    const char *listen = cfg->listen ? cfg->listen : TW_EXPORTER_DEFAULT_LISTEN;
    struct sockaddr_storage sa;
    socklen_t salen = 0;
    int family = 0;
    tw_status st = parse_listen(listen, &sa, &salen, &family); /* bad input first, before any GPU is opened */
    if (st == TW_OK && e->cfg.processes) st = setup_process_dir(e);
    if (st == TW_OK) st = setup_gpus(e);
    if (st == TW_OK) st = start_sampler(e);
    if (st == TW_OK) st = start_http(e, listen);
    if (st != TW_OK) {
        char msg[1024];
        snprintf(msg, sizeof msg, "%s", tw_last_error());
        if (e->sampler) tw_sampler_free(e->sampler);
        exporter_free(e);
        return tw_fail(st, "%s", msg);
    }
    *out = e;
    return TW_OK;
}

const char *tw_exporter_address(const tw_exporter *e) { return e ? e->address : ""; }

tw_status tw_exporter_serve(tw_exporter *e, const volatile int *stop)
{
    tw_clear_error();
    if (!e || !stop) return tw_fail(TW_EINVAL, "tw_exporter_serve: NULL argument");
    while (!*stop) {
        struct timespec d = {0, 100000000};
        nanosleep(&d, NULL);
    }
    return TW_OK;
}

tw_status tw_exporter_stop(tw_exporter *e)
{
    tw_clear_error();
    if (!e) return TW_OK;
#ifdef TW_HAVE_MHD
    if (e->http) MHD_stop_daemon(e->http);
#endif
    tw_status st = tw_sampler_stop(e->sampler);
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", tw_last_error());
    tw_sampler_free(e->sampler);
    exporter_free(e);
    return st == TW_OK ? TW_OK : tw_fail(st, "%s", msg);
}
