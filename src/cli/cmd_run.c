/* truewatt run: runs a command while sampling the GPU's power sensor, with
 * the CUPTI injection library timing its kernels, then reports the energy
 * per kernel name. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/spawn.h"
#include "cli/interrupt.h"
#include "cli/job.h"
#include "cli/opts.h"
#include "cli/report_out.h"

extern char **environ;

#define TAIL_S 1.0       /* sampled after the command ends: the sensor's last update, the idle level after it */
#define WAIT_POLL_S 0.05 /* how often the command's end is looked for */
#define PREROLL_S 1.0    /* sampled before the command starts: the idle level before its CUDA context */
#define MAX_DEVICES 64
#define COMMIT_S 0.5      /* how often the timeline so far is imported and committed while CMD runs */
#define MERGE_NOTE_S 10.0 /* ... saying every this often what it waits for */

/* The text after the options in --help */
#define RUN_HELP_AFTER                                                                                                 \
    "MPI and other parallel jobs (mpirun/srun/torchrun -n N truewatt run -- app): the rank comes from\n"               \
    "OMPI_COMM_WORLD_RANK, PMIX_RANK, PMI_RANK, SLURM_PROCID or RANK (with WORLD_SIZE). In a job of\n"                 \
    "several ranks, each writes its own run file, the rank put before the extension\n"                                 \
    "(truewatt-run.rank3.sqlite; '{rank}' in -o or --perfetto is replaced instead), with its rank,\n"                  \
    "host and GPUs. The other ranks print one line; rank 0 waits for their run files (same folder,\n"                  \
    "e.g. a shared file system) and prints the merged report: each GPU once, the kernels per rank\n"                   \
    "(truewatt report RUN RUN... does the same later; docs/mpi.md).\n\n"                                               \
    "Energy per kernel: one model of the GPU's power, a baseline that may drift plus each\n"                           \
    "kernel name's power while it runs, fitted to every window of the sensor's readings under\n"                       \
    "their models from the GPU's sensor profile ('truewatt sensor identify'; on an H100 the\n"                         \
    "driver's ~20 ms sample buffer for time and the energy counter for the total), with no\n"                          \
    "negative power and none above the GPU's power limit. Each name gets its energy with a\n"                          \
    "standard error, or a bound when the readings cannot resolve it; names always seen\n"                              \
    "together form a group. docs/methods.md says how.\n\n"                                                             \
    "environment:\n"                                                                                                   \
    "  TW_INJECT_LIBRARY  the injection library (default: the installed lib/truewatt/libtruewatt-inject.so,\n"         \
    "                     found from where libtruewatt lies; in a build tree, the one built beside it)\n"              \
    "  TW_CUPTI_LIBRARY   the libcupti it loads when CMD has none loaded (default: the library path,\n"                \
    "                     then $CUDA_HOME/lib64 and /usr/local/cuda)\n"                                                \
    "  TW_NVML_LIBRARY    libnvidia-ml to use (default libnvidia-ml.so.1)\n"                                           \
    "  TW_PROCESS_DIR     where a running 'truewatt exporter --processes' takes CMD's energy from\n"                   \
    "                     (default " TW_PROC_DIR_DEFAULT "; written only where it exists)\n"                           \
    "  CMD gets CUDA_INJECTION64_PATH and NVTX_INJECTION64_PATH (both the injection library, which\n"                  \
    "  records kernels and NVTX ranges; an NVTX_INJECTION64_PATH of your own is kept, with a warning),\n"              \
    "  TW_EVENTS_PATH (RUN.events.csv: imported into RUN while CMD runs, removed after) and TW_T0_MONO_NS.\n"          \
    "  Test hook: with TW_RUN_EXPORT_T0_TO_FAKE=1, truewatt sets TW_FAKE_NVML_T0_MONO_NS to its t0\n"                  \
    "  in its own environment before the sensor opens, so the fake NVML shares the timeline.\n"

typedef struct run_args {
    const char *run, *perfetto, *backend, *devices, *profile;
    double fast_s, slow_s, merge_wait_s;
    double pm_ms;           /* --activity-counters: PM sampling's interval (ms); 0 = none */
    const char *pm_windows; /* --activity-windows ON,EVERY[,busy] (s): sampling in windows */
    bool no_pm;             /* --no-activity-counters */
    bool json, no_inject;
    char **cmd;
    run_report_opts rep; /* --csv, --group, --group-range */
} run_args;

#define PERIOD .min = 1e-5, .max = 3600

/* The activity counters by default: CUPTI's PM sampling every 0.2 ms, enabled
 * 1 s of every 5 s (docs/methods.md, "Activity counters in windows"), with
 * the estimator's six metrics (src/inject/pm_sampling.c). The readings alone
 * cannot split a framework's step of 10-100 us kernels: `truewatt run` on the
 * PyTorch step run twice gave 2 of its top 10 names within 5 % of each other,
 * mostly groups (results/h100/attrib-torch-s33b); with these windows and the
 * H100 profile's calibrated model, GEMMs ~550-650 W above the baseline and
 * elementwise kernels ~370-500 W. 0.2 ms, not 0.1: the program's process
 * decodes the samples, ~110 us of one core each with these metrics on an
 * H100, so at 0.1 ms it fell behind, the counter data image filled and CUPTI
 * gave the samples after each fill no time (results/h100/pm-decode-s37: the
 * windows 56-60 % in samples at 0.1 ms, 19-22 % of one core decoding; 77 %
 * at 0.2 ms, 14 %; the PyTorch step's pair 8 and 9 of 10 within 5 %, its
 * GEMMs 3-5 % and 1-2 % apart). Enabled, PM sampling raises an H100's power by
 * 30-40 W, and disabled it does not (results/h100/pm-cycle): in windows the
 * rise is a term the estimate measures and keeps out of the kernels' energy.
 * --activity-windows chooses other windows, --activity-counters=MS alone
 * samples throughout, --no-activity-counters none. */
#define PM_DEFAULT_WINDOWS "1,5"
#define PM_WINDOWS_MS 0.2

/* --activity-counters without a value (before the command, or before "--"):
 * the default interval, 1 ms. */
static void default_activity_counters(int argc, char **argv)
{
    static char with_default[] = "--activity-counters=1";
    for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++) {
        if (strcmp(argv[i], "--activity-counters") != 0) continue;
        bool valued = i + 1 < argc && argv[i + 1][0] >= '0' && argv[i + 1][0] <= '9';
        if (!valued) argv[i] = with_default;
    }
}

/* The options, declared once (cli/opts.h). */
static int parse_args(int argc, char **argv, run_args *a)
{
    default_activity_counters(argc, argv);
    const cli_opt opt[] = {
        {.name = "device",
         .type = CLI_OPT_STRING,
         .arg = "LIST",
         .help = "GPUs to sample, comma-separated: NVML indices (1), CUDA devices as CMD\n"
                 "sees them (cuda:1, through CUDA_VISIBLE_DEVICES) or UUIDs (GPU-..., or a\n"
                 "unique prefix) (default: the GPUs CUDA_VISIBLE_DEVICES names, else all)",
         .out = &a->devices},
        {.name = "output",
         .short_name = 'o',
         .type = CLI_OPT_STRING,
         .arg = "RUN",
         .def = "truewatt-run.sqlite",
         .help = "the run file, SQLite, written while CMD runs: samples, kernels, NVTX\n"
                 "ranges, the profile used and the report (docs/runfile.md; 'truewatt\n"
                 "report RUN' recomputes the report, 'truewatt export RUN --csv DIR'\n"
                 "writes the trace and events CSVs)",
         .out = &a->run},
        {.name = "perfetto",
         .type = CLI_OPT_STRING,
         .arg = "FILE",
         .def = "truewatt-run.perfetto-trace",
         .help = "power and kernels for ui.perfetto.dev",
         .out = &a->perfetto},
        {.name = "csv",
         .type = CLI_OPT_STRING,
         .arg = "FILE",
         .help = "also the report's records as CSV: a row per GPU and name, group or\nNVTX range",
         .out = &a->rep.csv},
        {.name = "json",
         .type = CLI_OPT_FLAG,
         .help = "the report as JSON on stdout; CMD's own stdout then goes to stderr",
         .out = &a->json},
        {.name = "group",
         .type = CLI_OPT_CALL,
         .arg = "PATTERN",
         .help = "the kernel names matching PATTERN (fnmatch, e.g. '*gemm*') reported as\none group (repeatable)",
         .out = &a->rep,
         .call = report_opt_group},
        {.name = "group-range",
         .type = CLI_OPT_CALL,
         .arg = "NAME",
         .help = "the kernels that start inside an NVTX range named NAME (any thread)\nreported as one group "
                 "'range NAME: *' (repeatable)",
         .out = &a->rep,
         .call = report_opt_group_range},
        {.name = "no-inject",
         .type = CLI_OPT_FLAG,
         .help = "do not load the injection library into CMD (whole-run energy only)",
         .out = &a->no_inject},
        {.name = "fast-period",
         .type = CLI_OPT_DOUBLE,
         .arg = "S",
         .help = "period of the fast readings: power (default: the sampling plan's,\n"
                 "from the GPU's sensor profile, e.g. 0.05 on an H100)",
         .out = &a->fast_s,
         PERIOD},
        {.name = "slow-period",
         .type = CLI_OPT_DOUBLE,
         .arg = "S",
         .help = "fixed period of the slow readings: energy counter, clocks (default:\n"
                 "the plan's, 0.5 s on Ampere and later, stretched up to 1 s while a read\n"
                 "costs more than 1 % of a core: an H100's counter takes ~4 ms of CPU a read)",
         .out = &a->slow_s,
         PERIOD},
        {.name = "backend",
         .type = CLI_OPT_STRING,
         .arg = "NAME",
         .def = "nvml",
         .help = "the sensor backend",
         .out = &a->backend},
        {.name = "profile",
         .type = CLI_OPT_STRING,
         .arg = "FILE",
         .help = "the sensor profile to use (default: the one for the GPU and driver in\n"
                 "$TW_PROFILE_DIR, else the installed profiles (truewatt sensor show --help))",
         .out = &a->profile},
        {.name = "activity-counters",
         .type = CLI_OPT_DOUBLE,
         .arg = "MS",
         .help = "record the GPUs' activity counters (CUPTI PM sampling: SM, tensor pipe and\n"
                 "instruction activity, DRAM and L2 traffic) every MS ms throughout the run\n"
                 "(bare --activity-counters before the command means 1) instead of in the\n"
                 "default windows; on an H100 they raise the GPU's power between kernels by\n"
                 "30-45 W while they run, which the baseline and the total then include;\n"
                 "where they are not allowed the run goes on and the report says why",
         .out = &a->pm_ms,
         .min = 0.01,
         .max = 1000},
        {.name = "activity-windows",
         .type = CLI_OPT_STRING,
         .arg = "ON,EVERY[,busy]",
         .help = "record the activity counters every 0.2 ms (or --activity-counters' MS)\n"
                 "in windows of ON s of every EVERY s (default 1,5: they split the sensor's\n"
                 "energy between kernels finer than its readings); the GPU's extra power\n"
                 "while they are on is measured and kept out of the kernels' energy;\n"
                 "busy: a window falls due only once the GPU has run something since the\n"
                 "last, so that short stretches of GPU work are sampled (docs/usage.md)",
         .out = &a->pm_windows},
        {.name = "no-activity-counters",
         .type = CLI_OPT_FLAG,
         .help = "record no activity counters (overrides the two above): the readings alone",
         .out = &a->no_pm},
        {.name = "merge-wait",
         .type = CLI_OPT_DOUBLE,
         .arg = "S",
         .def = "300",
         .help = "in a job of several ranks, how long rank 0 waits for the other ranks'\n"
                 "run files before its merged report (0: no merged report)",
         .out = &a->merge_wait_s,
         .min = 0,
         .max = 86400},
    };
    const cli_opts o = {
        .cmd = "run",
        .synopsis =
            "[--device LIST] [-o RUN] [--perfetto FILE] [--csv FILE] [--json]\n"
            "                    [--no-inject] [--fast-period S] [--slow-period S] [--backend nvml]\n"
            "                    [--profile FILE] [--merge-wait S] [--group PATTERN]... [--group-range NAME]...\n"
            "                    [--activity-counters[=MS]] [--activity-windows ON,EVERY[,busy]]\n"
            "                    [--no-activity-counters]\n"
            "                    -- CMD [ARGS...]",
        .about = "Runs CMD while sampling the GPU's power sensor, times its kernels, memcpys, memsets and NVTX\n"
                 "ranges with the CUPTI injection library, and reports the energy of each kernel name.\n"
                 "The exit status is CMD's (128 + N when signal N killed it). Ctrl-C reaches CMD; a second\n"
                 "one stops run at once, without waiting for CMD, everything recorded kept (exit 130).",
        .opt = opt,
        .n = CLI_OPTS_N(opt),
        .after = RUN_HELP_AFTER,
        .min_args = 1,
        .max_args = CLI_OPTS_ANY,
        .missing = "which command? give it after --, e.g. truewatt run -- ./app",
        .stop_at_arg = true};
    int first;
    int rc = cli_opts_parse(&o, argc, argv, &first);
    if (rc) return rc;
    if (tw_devices_check(a->devices) != TW_OK) return cli_usage("run", "%s", tw_last_error());
    if (a->pm_windows && tw_activity_windows_check(a->pm_windows) != TW_OK)
        return cli_usage("run", "--activity-windows %s", tw_last_error());
    if (a->no_inject || a->no_pm) { /* none */
        a->pm_ms = 0;
        a->pm_windows = NULL;
    } else if (!(a->pm_ms > 0)) { /* in windows (the default ones unless asked) at the default interval */
        a->pm_ms = PM_WINDOWS_MS;
        if (!a->pm_windows) a->pm_windows = PM_DEFAULT_WINDOWS;
    }
    a->cmd = argv + first;
    return 0;
}

/* ---------------------------------------------------------------- signals */

static volatile sig_atomic_t child_pid = 0;
static volatile sig_atomic_t last_signal = 0;
static volatile sig_atomic_t interrupts = 0; /* SIGINT and SIGTERM so far */

/* A second Ctrl-C (or SIGTERM): run stops at once, without waiting for the
 * command or computing the report, everything recorded so far committed. */
#define INTERRUPTS_TO_ABANDON 2

/* Forwards SIGINT and SIGTERM to the command. A Ctrl-C typed at the terminal
 * reached the command already (same process group): it is not sent twice. */
static void forward_signal(int sig, siginfo_t *si, void *ctx)
{
    (void)ctx;
    last_signal = sig;
    cli_interrupted = 1;
    if (interrupts < INTERRUPTS_TO_ABANDON) interrupts++;
    pid_t pid = (pid_t)child_pid;
    if (pid > 0 && !(si && si->si_code == SI_KERNEL)) kill(pid, sig);
}

static void install_forwarding(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = forward_signal;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

/* A file grown past RLIMIT_FSIZE (`ulimit -f`, a quota) would kill run with
 * SIGXFSZ, the command left running and nothing said: ignored, the write
 * fails (EFBIG) and the run file's writer says so, as on a full disk. */
static void ignore_file_size_signal(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = SIG_IGN;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGXFSZ, &sa, NULL);
}

static const char *signal_name(int sig)
{
    static const struct {
        int sig;
        const char *name;
    } names[] = {{SIGHUP, "SIGHUP"},   {SIGINT, "SIGINT"},   {SIGQUIT, "SIGQUIT"}, {SIGILL, "SIGILL"},
                 {SIGTRAP, "SIGTRAP"}, {SIGABRT, "SIGABRT"}, {SIGBUS, "SIGBUS"},   {SIGFPE, "SIGFPE"},
                 {SIGKILL, "SIGKILL"}, {SIGUSR1, "SIGUSR1"}, {SIGSEGV, "SIGSEGV"}, {SIGUSR2, "SIGUSR2"},
                 {SIGPIPE, "SIGPIPE"}, {SIGALRM, "SIGALRM"}, {SIGTERM, "SIGTERM"}, {SIGXCPU, "SIGXCPU"},
                 {SIGXFSZ, "SIGXFSZ"}, {SIGSYS, "SIGSYS"}};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (names[i].sig == sig) return names[i].name;
    return "unknown signal";
}

/* ---------------------------------------------------------------- the command's environment */

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static char *absolute(const char *path)
{
    if (path[0] == '/') return strdup(path);
    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof cwd)) return strdup(path);
    size_t n = strlen(cwd) + strlen(path) + 2;
    char *out = malloc(n);
    if (out) snprintf(out, n, "%s/%s", cwd, path);
    return out;
}

typedef struct envp {
    char **v;
    size_t n;
} envp;

static bool env_set(envp *e, const char *name, const char *value)
{
    size_t len = strlen(name);
    size_t k = 0;
    for (size_t i = 0; i < e->n; i++) /* drop an inherited value */
        if (!(strncmp(e->v[i], name, len) == 0 && e->v[i][len] == '='))
            e->v[k++] = e->v[i];
        else
            free(e->v[i]);
    e->n = k;
    size_t n = len + strlen(value) + 2;
    char *s = malloc(n);
    if (!s) return false;
    snprintf(s, n, "%s=%s", name, value);
    e->v[e->n++] = s;
    e->v[e->n] = NULL;
    return true;
}

static void env_free(envp *e)
{
    for (size_t i = 0; e->v && i < e->n; i++)
        free(e->v[i]);
    free(e->v);
}

static bool env_copy(envp *e)
{
    size_t n = 0;
    while (environ[n])
        n++;
    e->v = calloc(n + 8, sizeof *e->v); /* room for what env_set adds */
    if (!e->v) return false;
    for (e->n = 0; e->n < n; e->n++)
        if (!(e->v[e->n] = strdup(environ[e->n]))) return false;
    return true;
}

/* The child's environment; appends warnings. */
static bool child_env(envp *e, const run_args *a, const char *events_abs, uint64_t t0, char *warn, size_t warn_len)
{
    if (!env_copy(e)) return false;
    char t0s[32];
    snprintf(t0s, sizeof t0s, "%llu", (unsigned long long)t0);
    if (!env_set(e, "TW_EVENTS_PATH", events_abs) || !env_set(e, "TW_T0_MONO_NS", t0s)) return false;
    if (a->no_inject) return true;
    if (a->pm_ms > 0) { /* the injection library's PM sampling (src/inject/pm_sampling.h) */
        char ms[32];
        snprintf(ms, sizeof ms, "%.6g", a->pm_ms);
        if (!env_set(e, "TW_PM_INTERVAL_MS", ms)) return false;
        if (a->pm_windows && !env_set(e, "TW_PM_WINDOWS", a->pm_windows)) return false;
    }
    /* $TW_INJECT_LIBRARY, else the installed one, else the build tree's (tw_inject_library) */
    char *lib = absolute(tw_inject_library());
    bool ok = lib != NULL;
    if (lib && cli_is_file(lib)) {
        ok = env_set(e, "CUDA_INJECTION64_PATH", lib);
        /* NVTX ranges: the injection library is NVTX's injection too, whatever
         * CUPTI the program ships; a choice of the user's own is kept */
        const char *nvtx = getenv("NVTX_INJECTION64_PATH");
        if (nvtx && *nvtx && strcmp(nvtx, lib) != 0) {
            size_t used = strlen(warn);
            snprintf(warn + used, warn_len - used,
                     "warning: NVTX_INJECTION64_PATH=%s is kept: NVTX ranges go there, not to truewatt (unset it "
                     "to see them in the report)\n",
                     nvtx);
        } else if (ok) {
            ok = env_set(e, "NVTX_INJECTION64_PATH", lib);
        }
    } else {
        size_t used = strlen(warn);
        snprintf(warn + used, warn_len - used,
                 "warning: no injection library at %s: no kernel timeline, whole-run energy only "
                 "(set TW_INJECT_LIBRARY)\n",
                 lib ? lib : "(unknown)");
    }
    free(lib);
    return ok;
}

/* ---------------------------------------------------------------- devices */

/* The GPUs to sample: --device, else those CUDA_VISIBLE_DEVICES names,
 * else all (tw_devices_choose), with the library's notes as warnings.
 * Returns 0, or the exit code for a --device naming no GPU here. */
static int choose_devices(run_args *a, tw_device_info *info, size_t *ndev, char *warn, size_t warn_len)
{
    char note[1024];
    tw_status st = tw_devices_choose(a->backend, a->devices, getenv("CUDA_VISIBLE_DEVICES"), info, MAX_DEVICES, ndev,
                                     note, sizeof note);
    if (st != TW_OK) return cli_fail("run", st);
    for (const char *line = note; *line;) { /* each note line a warning */
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line), used = strlen(warn);
        snprintf(warn + used, warn_len - used, "warning: %.*s\n", (int)len, line);
        line += len + (end ? 1 : 0);
    }
    return 0;
}

/* ---------------------------------------------------------------- descriptors */

/* The command inherits the descriptors truewatt was given (a shell's
 * redirections, /dev/fd/N arguments), not those truewatt opened itself (the
 * trace, the driver's device files). */
#define FD_TRACKED 1024

typedef struct fd_set_snapshot {
    unsigned char open[FD_TRACKED / 8];
} fd_set_snapshot;

static void fds_snapshot(fd_set_snapshot *s)
{
    memset(s, 0, sizeof *s);
    for (int fd = 0; fd < FD_TRACKED; fd++)
        if (fcntl(fd, F_GETFD) != -1) s->open[fd / 8] |= (unsigned char)(1u << (fd % 8));
}

static void fds_close_on_exec_new(const fd_set_snapshot *inherited)
{
    for (int fd = 3; fd < FD_TRACKED; fd++) {
        if (inherited->open[fd / 8] & (1u << (fd % 8))) continue;
        int flags = fcntl(fd, F_GETFD);
        if (flags != -1 && !(flags & FD_CLOEXEC)) fcntl(fd, F_SETFD, flags | FD_CLOEXEC);
    }
}

/* ---------------------------------------------------------------- running */

static void sleep_s(double s)
{
    struct timespec d = {(time_t)s, (long)((s - floor(s)) * 1e9)};
    while (nanosleep(&d, &d) != 0 && errno == EINTR && interrupts < INTERRUPTS_TO_ABANDON) {
    }
}

/* Starts the command; returns its pid, or -1 with *err the exec errno. */
static pid_t start_command(const char *path, char **argv, char **env, bool stdout_to_stderr, int *err)
{
    int fds[2];
    if (pipe(fds) != 0) {
        *err = errno;
        return -1;
    }
    fcntl(fds[0], F_SETFD, FD_CLOEXEC);
    fcntl(fds[1], F_SETFD, FD_CLOEXEC);
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        *err = errno;
        close(fds[0]);
        close(fds[1]);
        return -1;
    }
    if (pid == 0) { /* only async-signal-safe calls from here on */
        close(fds[0]);
        if (stdout_to_stderr) dup2(2, 1);
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        signal(SIGXFSZ, SIG_DFL); /* ignored by run only (ignore_file_size_signal) */
        execve(path, argv, env);
        int e = errno;
        if (e == ENOEXEC) { /* a script without #!: as execvp does, through the shell */
            size_t n = 0;
            while (argv[n] && n < 254)
                n++;
            char *sh[256];
            sh[0] = (char *)"/bin/sh";
            sh[1] = (char *)path;
            for (size_t i = 1; i < n; i++)
                sh[i + 1] = argv[i];
            sh[n + 1] = NULL;
            execve("/bin/sh", sh, env);
        }
        ssize_t w = write(fds[1], &e, sizeof e);
        (void)w;
        _exit(127);
    }
    close(fds[1]);
    int e = 0;
    ssize_t r;
    while ((r = read(fds[0], &e, sizeof e)) < 0 && errno == EINTR) {
    }
    close(fds[0]);
    if (r == (ssize_t)sizeof e) {
        int status;
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
        }
        *err = e;
        return -1;
    }
    return pid;
}

typedef struct run_state {
    run_args a;
    char *cmd_path;
    char *events_abs; /* the injection library's events file */
    fd_set_snapshot inherited;
    envp env;
    char warn[2048];
    tw_recording *rec; /* the run file, the sampler, the timeline imported */
    size_t ndev;
    tw_device_info devinfo[MAX_DEVICES]; /* the sampled GPUs */
    char provenance[1024];
    run_job job;                                /* the rank, when in a parallel job */
    const char *run_pattern, *perfetto_pattern; /* -o and --perfetto as given: each rank's name from them */
    char run_path[PATH_MAX], perfetto_path[PATH_MAX];
    tw_proc_report *proc; /* the report to a running exporter (NULL: no folder, none) */
} run_state;

static void run_free(run_state *s)
{
    tw_proc_report_drop(s->proc); /* a report not ended: the run measured nothing the exporter should take */
    tw_recording_close(s->rec, false);
    env_free(&s->env);
    free(s->events_abs);
    free(s->cmd_path);
}

/* Waits for the command, importing the injection library's events into
 * the run file as they are written (so a kill of truewatt keeps them) and
 * committing; returns its exit status as run returns it. */
static int wait_command(run_state *s, pid_t pid, int *sig)
{
    int status = 0;
    uint64_t last = mono_ns();
    for (;;) {
        pid_t got = waitpid(pid, &status, WNOHANG);
        if (got == pid) break;
        if (got < 0 && errno != EINTR) return CLI_EXIT_FAIL;
        if (interrupts >= INTERRUPTS_TO_ABANDON) return CLI_EXIT_INTERRUPTED; /* the command left running */
        sleep_s(WAIT_POLL_S);
        if ((double)(mono_ns() - last) >= 1e9 * COMMIT_S) {
            tw_recording_sync(s->rec); /* a failure is kept and said at the end */
            last = mono_ns();
        }
    }
    *sig = 0;
    if (WIFSIGNALED(status)) {
        *sig = WTERMSIG(status);
        return 128 + *sig;
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : CLI_EXIT_FAIL;
}

/* One line saying what made the files: truewatt's command line, the date
 * and the GPUs with their driver; it heads the run file, the Perfetto file
 * and the report. */
static void make_provenance(char *buf, size_t len, int argc, char **argv, const run_args *a)
{
    size_t used = (size_t)snprintf(buf, len, "command: truewatt");
    for (int i = 0; i < argc && used < len; i++)
        used += (size_t)snprintf(buf + used, len - used, " %s", argv[i]);
    char date[32] = "";
    time_t now = time(NULL);
    struct tm tm;
    if (gmtime_r(&now, &tm)) strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", &tm);
    if (used < len) used += (size_t)snprintf(buf + used, len - used, "; date: %s; truewatt %s", date, tw_version());
    tw_device_info info[MAX_DEVICES];
    size_t n = 0;
    tw_sensor_config cfg = {0};
    if (tw_backend_devices(a->backend, &cfg, info, MAX_DEVICES, &n) != TW_OK) return;
    for (size_t i = 0; i < n && i < MAX_DEVICES && used < len; i++)
        used += (size_t)snprintf(buf + used, len - used, "; gpu %u: %s, driver %s", info[i].index, info[i].name,
                                 info[i].driver[0] ? info[i].driver : "unknown");
}

/* "-o X --perfetto Y ..." as given, stored with the report. */
static void options_text(int argc, char **argv, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 1; i < argc && used < len && strcmp(argv[i], "--") != 0; i++)
        used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? " " : "", argv[i]);
}

/* Everything up to the command's start; returns 0 or the exit code. */
static int prepare(run_state *s, int argc, char **argv, uint64_t *t0)
{
    const char *cmd = s->a.cmd[0];
    /* a bad profile or a folder that cannot take the run file fails now, not after the command ran */
    tw_status pst = tw_recording_new(s->a.run, s->a.profile, &s->rec);
    if (pst != TW_OK) return cli_fail("run", pst);
    fds_snapshot(&s->inherited);
    /* test hook: the fake NVML reads its time origin from our environment */
    const char *hook = getenv("TW_RUN_EXPORT_T0_TO_FAKE");
    if (hook && strcmp(hook, "1") == 0) {
        *t0 = mono_ns();
        char t0s[32];
        snprintf(t0s, sizeof t0s, "%llu", (unsigned long long)*t0);
        setenv("TW_FAKE_NVML_T0_MONO_NS", t0s, 1);
    }
    char why[512] = "";
    if (!tw_backend_available(s->a.backend, why, sizeof why)) {
        fprintf(stderr, "truewatt run: cannot measure: the %s backend is unavailable: %s\n", s->a.backend, why);
        return CLI_EXIT_FAIL;
    }
    if (!(s->cmd_path = cli_find_command(cmd))) {
        int e = errno;
        fprintf(stderr, "truewatt run: cannot run '%s': %s\n", cmd, e == ENOENT ? "command not found" : strerror(e));
        return e == ENOENT ? 127 : 126;
    }
    int rc = choose_devices(&s->a, s->devinfo, &s->ndev, s->warn, sizeof s->warn);
    if (rc) return rc;
    if (!*t0) *t0 = mono_ns();
    make_provenance(s->provenance, sizeof s->provenance, argc, argv, &s->a);
    /* the injection library's events file: beside the run file, imported into it */
    char events[PATH_MAX];
    snprintf(events, sizeof events, "%s.events.csv", s->a.run);
    s->events_abs = absolute(events);
    if (!s->events_abs || !child_env(&s->env, &s->a, s->events_abs, *t0, s->warn, sizeof s->warn) ||
        !env_set(&s->env, "TW_PROVENANCE", s->provenance))
        return cli_fail("run", TW_ENOMEM);
    return 0;
}

static void note_run(void *ctx, const char *text)
{
    (void)ctx;
    fprintf(stderr, "truewatt run: %s\n", text);
}

/* The run file, with what is known, and the sampler into it. */
static int start_sampling(run_state *s, uint64_t t0)
{
    tw_recording_options o;
    tw_recording_options_init(&o);
    o.backend = s->a.backend;
    o.devices = s->devinfo;
    o.ndevices = s->ndev;
    o.fast_period_s = s->a.fast_s;
    o.slow_period_s = s->a.slow_s;
    o.t0_mono_ns = t0;
    o.provenance = s->provenance;
    o.command = s->a.cmd;
    o.environment = s->env.v;
    o.events_path = s->events_abs;
    o.no_events = s->a.no_inject ? "--no-inject: no kernel timeline" : NULL;
    o.host = s->job.host;
    o.rank = s->job.rank;
    o.world_size = s->job.size;
    o.local_rank = s->job.local_rank;
    o.rank_variable = s->job.rank_var;
    o.warnings = s->warn;
    o.note = note_run;
    o.activity_counters_ms = s->a.no_inject ? 0 : s->a.pm_ms;
    tw_status st = tw_recording_start(s->rec, &o);
    if (st != TW_OK) return cli_fail("run", st);
    if (s->warn[0]) fputs(s->warn, stderr);
    const tw_sampler_device *plan0 = tw_sampler_device_get(tw_recording_sampler(s->rec), 0); /* its plan's periods */
    cli_note("truewatt run: sampling %s (%zu device%s: fast readings every %g s, slow every %g s) into %s; running %s",
             s->a.backend, s->ndev, s->ndev == 1 ? "" : "s", plan0->fast_period_s, plan0->slow_period_s, s->a.run,
             s->a.cmd[0]);
    return 0;
}

/* The injection library's last lines, the sampler's end and the facts of
 * the run into the run file; returns the exit status updated on failure. */
static int finish_recording(run_state *s, int rc, int sig, double child_s, double exit_s)
{
    tw_recording_end e = {.size = sizeof e,
                          .exit_status = rc,
                          .signal = sig,
                          .command_wall_s = child_s,
                          .exit_s = exit_s,
                          .tail_s = TAIL_S};
    if (tw_recording_finish(s->rec, &e) != TW_OK) {
        fprintf(stderr, "truewatt run: the run file %s is incomplete: %s\n", s->a.run, tw_last_error());
        if (rc == 0) rc = CLI_EXIT_FAIL;
    }
    return rc;
}

/* Interrupted twice: the samples and the timeline so far into the run file,
 * committed, and a warning there; no exit_s, so `truewatt report` takes
 * the run as one truewatt did not finish. Returns 130. */
static int abandon(run_state *s, pid_t pid)
{
    const char *cmd = s->a.cmd[0];
    char warning[1024] = "";
    if (pid > 0) /* the command still runs: what it did so far, and why the run has no end */
        snprintf(warning, sizeof warning,
                 "warning: truewatt run was interrupted twice: it stopped without waiting for %s (which had the "
                 "interrupts too)",
                 cmd);
    tw_status st = tw_recording_abandon(s->rec, pid > 0 ? warning : NULL);
    tw_status cst = tw_recording_close(s->rec, false);
    s->rec = NULL;
    if (st == TW_OK) st = cst;
    if (st != TW_OK)
        fprintf(stderr, "truewatt run: interrupted twice; the run file %s is incomplete: %s\n", s->a.run,
                tw_last_error());
    else if (pid > 0)
        fprintf(stderr,
                "truewatt run: interrupted twice: stopped without waiting for %s (pid %d) or computing the report; "
                "what was recorded is in %s (truewatt report %s)\n",
                cmd, (int)pid, s->a.run, s->a.run);
    else
        fprintf(stderr,
                "truewatt run: interrupted twice: stopped without computing the report; the run is in %s "
                "(truewatt report %s)\n",
                s->a.run, s->a.run);
    run_free(s);
    return CLI_EXIT_INTERRUPTED;
}

/* ---------------------------------------------------------------- the process report */

/* Tells a running exporter (its folder exists) that the command's pid is
 * measured here, on the sampled GPUs: it stops estimating it. A failure is
 * a warning: the measurement goes on. */
static void report_begin(run_state *s, pid_t pid)
{
    if (s->a.no_inject) return; /* no kernels measured: the exporter's estimate is all there is */
    const char *uuids[MAX_DEVICES];
    for (size_t d = 0; d < s->ndev; d++)
        uuids[d] = s->devinfo[d].uuid;
    tw_proc_report_info info = {
        .size = sizeof info, .pid = (unsigned)pid, .command = s->a.cmd[0], .uuids = uuids, .n_uuids = s->ndev};
    if (tw_proc_report_begin(&info, &s->proc) != TW_OK)
        fprintf(stderr, "truewatt run: warning: no process report for the exporter: %s\n", tw_last_error());
}

/* Each sampled GPU's estimate into the process report (the report's on_report). */
static void report_estimates(void *user, const tw_report *r)
{
    run_state *s = user;
    tw_proc_report_set_energies(s->proc, r);
}

static void report_end(run_state *s)
{
    if (tw_proc_report_end(s->proc) != TW_OK)
        fprintf(stderr, "truewatt run: warning: the process report for the exporter: %s\n", tw_last_error());
    s->proc = NULL;
}

/* ---------------------------------------------------------------- parallel jobs */

/* Each rank its own run file and Perfetto file: NAME.rankR.EXT. */
static void rank_names(run_state *s)
{
    s->run_pattern = s->a.run;
    s->perfetto_pattern = s->a.perfetto;
    run_job_path(s->a.run, s->job.rank, s->run_path, sizeof s->run_path);
    run_job_path(s->a.perfetto, s->job.rank, s->perfetto_path, sizeof s->perfetto_path);
    s->a.run = s->run_path;
    s->a.perfetto = s->perfetto_path;
}

/* Whether rank r's run file is complete: its command ended and truewatt
 * recorded the end (exit_s), so its samples and kernels are all in. */
static bool rank_done(const char *path)
{
    if (access(path, R_OK) != 0 || !tw_run_is_file(path)) return false;
    tw_run *r = NULL;
    bool done = tw_run_open(path, &r) == TW_OK && !isnan(tw_run_get_real(r, "exit_s"));
    tw_run_close(r);
    return done;
}

/* Rank 0: waits (at most --merge-wait seconds, saying every MERGE_NOTE_S
 * what for) for every rank's run file, then prints the merged report of
 * those that are complete. Returns 0, or the report's exit code. */
static int merge_ranks(run_state *s)
{
    int n = s->job.size;
    char(*paths)[PATH_MAX] = calloc((size_t)n, sizeof *paths);
    bool *done = calloc((size_t)n, sizeof *done);
    const char **ready = calloc((size_t)n, sizeof *ready);
    if (!paths || !done || !ready) {
        free(paths);
        free(done);
        free(ready);
        fprintf(stderr, "truewatt run: out of memory\n");
        return CLI_EXIT_FAIL;
    }
    for (int r = 0; r < n; r++)
        run_job_path(s->run_pattern, r, paths[r], sizeof paths[r]);
    uint64_t start = mono_ns(), noted = start;
    int missing = n;
    for (;;) {
        missing = 0;
        for (int r = 0; r < n; r++)
            if (!done[r]) missing += !(done[r] = r == s->job.rank || rank_done(paths[r]));
        double waited = 1e-9 * (double)(mono_ns() - start);
        if (!missing || waited >= s->a.merge_wait_s || cli_interrupted) break;
        if (1e-9 * (double)(mono_ns() - noted) >= MERGE_NOTE_S) {
            int first = 0;
            while (done[first])
                first++;
            cli_note("truewatt run: rank %d: waiting for %d of %d ranks' run files (%s%s), %.0f of %.0f s", s->job.rank,
                     missing, n, paths[first], missing > 1 ? ", ..." : "", waited, s->a.merge_wait_s);
            noted = mono_ns();
        }
        sleep_s(missing * 0.002 > 1.0 ? missing * 0.002 : 0.25); /* a thousand ranks: a poll every 2 s */
    }
    size_t k = 0;
    int first_missing = -1;
    for (int r = 0; r < n; r++)
        if (done[r])
            ready[k++] = paths[r];
        else if (first_missing < 0)
            first_missing = r;
    if (missing)
        fprintf(stderr,
                "truewatt run: rank %d: %d of %d ranks' run files were not complete after %.0f s (e.g. %s): the merged "
                "report leaves them out; once they are, give them all to truewatt report\n",
                s->job.rank, missing, n, s->a.merge_wait_s, paths[first_missing]);
    run_report_opts o = s->a.rep;
    o.cmd = "run";
    o.profile = s->a.profile;
    o.json = s->a.json;
    o.options = "";
    o.csv = s->a.rep.csv; /* the job's CSV: the merged report's */
    o.nrange_groups = 0;  /* --group-range: in each rank's own report (its run file), not the merged one */
    int rc = report_merged(ready, k, &o, stdout);
    free(paths);
    free(done);
    free(ready);
    return rc;
}

int cmd_run(int argc, char **argv)
{
    run_state s;
    memset(&s, 0, sizeof s);
    int rc = parse_args(argc, argv, &s.a);
    if (rc) return rc < 0 ? 0 : rc;
    if (!run_job_detect(&s.job)) return CLI_EXIT_USAGE;
    bool ranks = run_job_ranks(&s.job); /* a run file per rank, one merged report */
    if (ranks) rank_names(&s);
    const char *cmd = s.a.cmd[0];
    uint64_t t0 = 0;
    ignore_file_size_signal();
    if ((rc = prepare(&s, argc, argv, &t0)) != 0 || (rc = start_sampling(&s, t0)) != 0) {
        tw_recording_close(s.rec, true); /* nothing was measured into it */
        s.rec = NULL;
        run_free(&s);
        return rc;
    }

    install_forwarding();
    fds_close_on_exec_new(&s.inherited);
    sleep_s(PREROLL_S); /* the idle level before the command's CUDA context */
    int err = 0;
    uint64_t started = mono_ns();
    double spawn_s = 1e-9 * (double)(started - t0);
    pid_t pid = start_command(s.cmd_path, s.a.cmd, s.env.v, s.a.json, &err);
    if (pid < 0) {
        fprintf(stderr, "truewatt run: cannot run '%s': %s\n", cmd,
                err == ENOENT ? "command not found" : strerror(err));
        run_free(&s);
        return err == ENOENT ? 127 : 126;
    }
    child_pid = pid;
    if (last_signal) kill(pid, last_signal); /* a signal that came while it started */
    report_begin(&s, pid);
    /* a run that truewatt does not finish (kill -9) is reported from here on */
    if (tw_recording_command_started(s.rec, spawn_s) != TW_OK) fprintf(stderr, "truewatt run: %s\n", tw_last_error());
    int sig = 0;
    rc = wait_command(&s, pid, &sig);
    child_pid = 0;
    if (interrupts >= INTERRUPTS_TO_ABANDON) return abandon(&s, pid);
    uint64_t ended = mono_ns();
    double child_s = 1e-9 * (double)(ended - started), exit_s = 1e-9 * (double)(ended - t0);
    sleep_s(TAIL_S);
    rc = finish_recording(&s, rc, sig, child_s, exit_s);
    if (interrupts >= INTERRUPTS_TO_ABANDON) return abandon(&s, 0); /* all recorded: only the report is left */
    if (sig)
        cli_note("truewatt run: %s was killed by signal %d after %.3f s; computing the report", cmd, sig, child_s);
    else
        cli_note("truewatt run: %s exited with status %d after %.3f s; computing the report", cmd, rc, child_s);

    cli_interrupted = 0; /* from here on, Ctrl-C stops the report */
    char options[2048];
    options_text(argc, argv, options, sizeof options);
    run_report_opts o = s.a.rep;
    o.cmd = "run";
    o.path = s.a.run;
    o.perfetto = s.a.perfetto;
    o.json = s.a.json;
    o.options = options;
    if (ranks) o.csv = NULL; /* rank 0's merged report writes it */
    o.on_report = report_estimates;
    o.user = &s;
    /* in a job, each rank's report is kept in its run file; rank 0 prints the merged one */
    FILE *out = ranks ? fopen("/dev/null", "w") : stdout;
    int report_rc = CLI_EXIT_FAIL;
    if (out)
        report_rc = report_run_file(tw_recording_run(s.rec), &o, out);
    else
        fprintf(stderr, "truewatt run: cannot open /dev/null\n");
    if (out && out != stdout) fclose(out);
    if (report_rc != CLI_EXIT_INTERRUPTED) report_end(&s); /* a GPU without an estimate: none for it */
    if (report_rc == 0) cli_note("truewatt run: report computed");
    if (sig)
        fprintf(stderr, "truewatt run: %s was killed by signal %d (%s); the run so far is in %s\n", cmd, sig,
                signal_name(sig), s.a.run);
    tw_status st = tw_recording_close(s.rec, false);
    s.rec = NULL;
    if (st != TW_OK) {
        fprintf(stderr, "truewatt run: %s: %s\n", s.a.run, tw_last_error());
        if (rc == 0) rc = CLI_EXIT_FAIL;
    }
    run_free(&s);
    if (report_rc == CLI_EXIT_INTERRUPTED) return report_rc;
    if (ranks && s.job.rank == 0 && s.a.merge_wait_s > 0 && report_rc == 0) {
        report_rc = merge_ranks(&s);
    } else if (ranks) {
        cli_note("truewatt run: rank %d on %s: the run is in %s; rank 0 prints the merged report", s.job.rank,
                 s.job.host, s.a.run);
    }
    return rc ? rc : report_rc;
}
