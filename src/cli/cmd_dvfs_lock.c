/* truewatt dvfs lock: runs a command with the GPU's graphics (and memory)
 * clocks locked through NVML, and always resets the locks it made: when the
 * command ends, fails or is killed, and when truewatt gets SIGINT, SIGTERM,
 * SIGHUP or SIGQUIT (forwarded to the command). Only with
 * --allow-clock-changes: a lock changes the card for every user of the
 * machine. While the command runs, the clocks and the clock event reasons are
 * sampled, and the end says whether the locked clocks held.
 *
 * Not covered: SIGKILL of truewatt itself (nothing can run then); `truewatt
 * dvfs lock --reset --allow-clock-changes` (or nvidia-smi -rgc -rmc) resets. */
#include <errno.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/dvfs_cmds.h"
#include "cli/opts.h"
#include "cli/spawn.h"

#define CMD "dvfs lock"
#define GRACE_S 5 /* after a forwarded signal, before SIGKILL */
#define GRACE_NS (GRACE_S * 1000000000LL)

extern char **environ;

typedef struct lock_args {
    unsigned core_min, core_max, mem;
    bool allow, reset;
    const char *device;
    unsigned interval_ms;
    char **cmd;
} lock_args;

static bool parse_mhz(const char *s, unsigned *out)
{
    uint64_t v;
    if (!cli_parse_u64(s, &v) || v == 0 || v > 100000) return false;
    *out = (unsigned)v;
    return true;
}

/* --core MHz[,MAX] */
static int parse_core(const char *cmd, const char *v, void *out)
{
    lock_args *a = out;
    char buf[64];
    snprintf(buf, sizeof buf, "%s", v);
    char *comma = strchr(buf, ',');
    if (comma) *comma = '\0';
    if (!parse_mhz(buf, &a->core_min) || (comma && !parse_mhz(comma + 1, &a->core_max)))
        return cli_usage(cmd, "--core needs MHz or MIN,MAX in MHz, got '%s'", v);
    if (!comma) a->core_max = a->core_min;
    if (a->core_min > a->core_max) return cli_usage(cmd, "--core %s: the minimum is above the maximum", v);
    return 0;
}

#define STR2(x) #x
#define STR(x) STR2(x)

/* The options, declared once (cli/opts.h). */
static int parse(int argc, char **argv, lock_args *a)
{
    uint64_t mem = 0, interval_ms;
    const cli_opt opt[] = {
        {.name = "core",
         .type = CLI_OPT_CALL,
         .arg = "MHz[,MAX]",
         .help = "graphics clock lock (nvmlDeviceSetGpuLockedClocks)",
         .out = a,
         .call = parse_core},
        {.name = "mem",
         .type = CLI_OPT_U64,
         .arg = "MHz",
         .help = "memory clock lock (nvmlDeviceSetMemoryLockedClocks, Ampere and newer)",
         .out = &mem,
         .min = 1,
         .max = 100000},
        {.name = "allow-clock-changes",
         .type = CLI_OPT_FLAG,
         .help = "required: you accept that the card's clocks change",
         .out = &a->allow},
        {.name = "device", .type = CLI_OPT_STRING, .arg = "N|UUID", .help = "the GPU (default 0)", .out = &a->device},
        {.name = "interval",
         .type = CLI_OPT_U64,
         .arg = "MS",
         .def = "100",
         .help = "sampling period of the clocks while CMD runs, milliseconds",
         .out = &interval_ms,
         .min = 1,
         .max = 60000},
        {.name = "reset",
         .type = CLI_OPT_FLAG,
         .help = "only reset both locks (after a truewatt that was killed with SIGKILL)",
         .out = &a->reset},
    };
    const cli_opts o = {
        .cmd = CMD,
        .synopsis = "--core MHz[,MAX] [--mem MHz] --allow-clock-changes [--device N|UUID]\n"
                    "                          [--interval MS] -- CMD [ARGS...]\n"
                    "       truewatt dvfs lock --reset --allow-clock-changes [--device N|UUID]",
        .about =
            "Locks the GPU's graphics clock (to MHz, or to the range MHz..MAX) and optionally its memory\n"
            "clock through NVML, runs CMD, and resets the locks it made when CMD ends, fails or is killed,\n"
            "and when truewatt gets SIGINT, SIGTERM, SIGHUP or SIGQUIT (forwarded to CMD, which gets " STR(
                GRACE_S) " s\n"
                         "before SIGKILL). The exit status is CMD's (128 + N when signal N killed it; 128 + N when "
                         "truewatt\n"
                         "got signal N; 1 when a lock could not be reset).\n\n"
                         "THIS CHANGES THE CARD'S SETTINGS FOR EVERY USER OF THE MACHINE until they are reset, and "
                         "needs\n"
                         "root. Never use it on a shared machine. Nothing happens without --allow-clock-changes.\n\n"
                         "The clocks must be in the device's supported list (`truewatt dvfs clocks`). While CMD runs "
                         "the\n"
                         "current clocks and the clock event reasons are sampled; at the end truewatt says on stderr\n"
                         "whether the locked clocks held (a power cap or thermal event silently lowers them).",
        .opt = opt,
        .n = CLI_OPTS_N(opt),
        .max_args = CLI_OPTS_ANY,
        .stop_at_arg = true};
    int first;
    int rc = cli_opts_parse(&o, argc, argv, &first);
    a->mem = (unsigned)mem;
    a->interval_ms = (unsigned)interval_ms;
    if (rc) return rc;
    if (!a->allow)
        return cli_usage(CMD, "refused without --allow-clock-changes: locking clocks changes the card's settings for "
                              "every user of the machine (until reset or reboot) and is never for shared machines");
    if (a->reset) {
        if (a->core_max || a->mem) return cli_usage(CMD, "--reset takes no --core or --mem");
        return first < argc ? cli_usage(CMD, "unexpected argument '%s'", argv[first]) : 0;
    }
    if (!a->core_max && !a->mem) return cli_usage(CMD, "which clocks? give --core MHz[,MAX] and/or --mem MHz");
    if (first >= argc)
        return cli_usage(CMD, "which command? give it after --, e.g. truewatt dvfs lock --core 1200 "
                              "--allow-clock-changes -- ./app");
    a->cmd = argv + first;
    return 0;
}

/* ---------------------------------------------------------------- signals */

static volatile sig_atomic_t got_signal = 0;
static volatile sig_atomic_t child_pid = 0;

/* Records the signal and forwards it to the command, unless the kernel sent
 * it (a terminal's Ctrl-C reaches the whole process group already). */
static void on_signal(int sig, siginfo_t *si, void *ctx)
{
    (void)ctx;
    if (!got_signal) got_signal = sig;
    pid_t pid = (pid_t)child_pid;
    if (pid > 0 && !(si && si->si_code == SI_KERNEL)) kill(pid, sig);
}

static const int handled[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};

/* SIGHUP stays ignored when it was (nohup): it then ends neither truewatt
 * nor the command. The others are always caught, as in `truewatt run` (a
 * background job of a script starts with SIGINT ignored). */
static void install_handlers(void)
{
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_signal;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < sizeof handled / sizeof handled[0]; i++)
        if (handled[i] != SIGHUP || (sigaction(SIGHUP, NULL, &old) == 0 && old.sa_handler != SIG_IGN))
            sigaction(handled[i], &sa, NULL);
}

/* ---------------------------------------------------------------- time */

static long long mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void sleep_ms(unsigned ms)
{
    struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL); /* a signal cuts it short: handled at once */
}

/* ---------------------------------------------------------------- the locks */

typedef struct lock_state {
    tw_clocks *c;
    bool gpu_locked, mem_locked;
} lock_state;

/* Resets the locks made; false (with the reason on stderr) when one stays. */
static bool restore(lock_state *ls)
{
    bool ok = true;
    if (ls->gpu_locked) {
        if (tw_clocks_reset_gpu(ls->c) == TW_OK) {
            ls->gpu_locked = false;
        } else {
            fprintf(stderr, "truewatt %s: the graphics clock lock could NOT be reset: %s (run nvidia-smi -rgc)\n", CMD,
                    tw_last_error());
            ok = false;
        }
    }
    if (ls->mem_locked) {
        if (tw_clocks_reset_mem(ls->c) == TW_OK) {
            ls->mem_locked = false;
        } else {
            fprintf(stderr, "truewatt %s: the memory clock lock could NOT be reset: %s (run nvidia-smi -rmc)\n", CMD,
                    tw_last_error());
            ok = false;
        }
    }
    return ok;
}

/* Checks the request against the device: the lock functions are there, the
 * clocks are supported. Returns an exit code (0: go on). */
static int check_request(tw_clocks *c, const lock_args *a)
{
    if (a->core_max && !tw_clocks_can_lock_gpu(c)) {
        (void)tw_clocks_lock_gpu(c, a->core_min, a->core_max); /* only for its message: the function is missing */
        return cli_fail(CMD, TW_EUNSUPPORTED);
    }
    if (a->mem && !tw_clocks_can_lock_mem(c)) {
        (void)tw_clocks_lock_mem(c, a->mem, a->mem);
        return cli_fail(CMD, TW_EUNSUPPORTED);
    }
    tw_clock_table t;
    tw_status st = tw_clocks_supported(c, &t);
    if (st != TW_OK) {
        fprintf(stderr, "truewatt %s: cannot check the clocks against the supported list, so nothing is locked: %s\n",
                CMD, tw_last_error());
        return CLI_EXIT_FAIL;
    }
    tw_clock_now now = {.size = sizeof now};
    unsigned cur_mem = tw_clocks_current(c, &now) == TW_OK && now.have_mem ? now.mem_mhz : 0;
    st = tw_clock_check_request(&t, a->core_min, a->core_max, a->mem, cur_mem);
    tw_clock_table_free(&t);
    if (st != TW_OK) return cli_usage(CMD, "%s (see truewatt dvfs clocks)", tw_last_error());
    return 0;
}

/* Locks graphics, then memory; on any failure nothing stays locked. Returns an exit code. */
static int lock(lock_state *ls, const lock_args *a)
{
    if (a->core_max) {
        if (tw_clocks_lock_gpu(ls->c, a->core_min, a->core_max) != TW_OK) {
            fprintf(stderr, "truewatt %s: cannot lock the graphics clock, nothing was changed: %s\n", CMD,
                    tw_last_error());
            return CLI_EXIT_FAIL;
        }
        ls->gpu_locked = true;
    }
    if (a->mem) {
        if (tw_clocks_lock_mem(ls->c, a->mem, a->mem) != TW_OK) {
            fprintf(stderr, "truewatt %s: cannot lock the memory clock: %s\n", CMD, tw_last_error());
            if (ls->gpu_locked && restore(ls))
                fprintf(stderr, "truewatt %s: the graphics clock lock was reset; nothing stays changed\n", CMD);
            return CLI_EXIT_FAIL;
        }
        ls->mem_locked = true;
    }
    return 0;
}

/* ---------------------------------------------------------------- did the clocks hold */

typedef struct held {
    unsigned samples, failed;
    unsigned sm_lo, sm_hi, mem_lo, mem_hi;
    unsigned sm_n, mem_n;     /* samples with each clock */
    unsigned sm_out, mem_out; /* samples outside the lock */
    unsigned long long reasons;
    unsigned reasons_n;
    long long t0_ns;
} held;

static void sample(tw_clocks *c, const lock_args *a, held *h)
{
    tw_clock_now n = {.size = sizeof n};
    h->samples++;
    if (tw_clocks_current(c, &n) != TW_OK) {
        h->failed++;
        return;
    }
    if (n.have_sm) {
        if (!h->sm_n || n.sm_mhz < h->sm_lo) h->sm_lo = n.sm_mhz;
        if (!h->sm_n || n.sm_mhz > h->sm_hi) h->sm_hi = n.sm_mhz;
        h->sm_n++;
        if (a->core_max && (n.sm_mhz < a->core_min || n.sm_mhz > a->core_max)) h->sm_out++;
    }
    if (n.have_mem) {
        if (!h->mem_n || n.mem_mhz < h->mem_lo) h->mem_lo = n.mem_mhz;
        if (!h->mem_n || n.mem_mhz > h->mem_hi) h->mem_hi = n.mem_mhz;
        h->mem_n++;
        if (a->mem && n.mem_mhz != a->mem) h->mem_out++;
    }
    if (n.have_reasons) {
        h->reasons |= n.reasons;
        h->reasons_n++;
    }
}

static void report(const lock_args *a, const held *h)
{
    double s = (double)(mono_ns() - h->t0_ns) * 1e-9;
    char reasons[512] = "unavailable";
    if (h->reasons_n) tw_clock_reasons_format(h->reasons, reasons, sizeof reasons);
    fprintf(stderr, "truewatt %s: clocks while CMD ran (%.1f s, %u sample%s", CMD, s, h->samples,
            h->samples == 1 ? "" : "s");
    if (h->failed) fprintf(stderr, ", %u unreadable", h->failed);
    fprintf(stderr, "):");
    if (h->sm_n) fprintf(stderr, " SM %u..%u MHz", h->sm_lo, h->sm_hi);
    if (h->mem_n) fprintf(stderr, "%s memory %u..%u MHz", h->sm_n ? "," : "", h->mem_lo, h->mem_hi);
    fprintf(stderr, "; event reasons seen: %s\n", reasons);
    unsigned long long limiting = h->reasons & TW_CLOCK_REASONS_LIMITING;
    bool unknown = (a->core_max && h->sm_n == 0) || (a->mem && h->mem_n == 0);
    if (!h->sm_out && !h->mem_out && !limiting && !unknown) {
        fprintf(stderr, "truewatt %s: the locked clocks held\n", CMD);
        return;
    }
    if (unknown && !h->sm_out && !h->mem_out && !limiting) {
        fprintf(stderr, "truewatt %s: whether the locked clocks held is unknown (no clock could be read)\n", CMD);
        return;
    }
    fprintf(stderr, "truewatt %s: WARNING: the locked clocks did NOT hold:", CMD);
    if (h->sm_out)
        fprintf(stderr, " SM outside %u..%u MHz in %u of %u samples;", a->core_min, a->core_max, h->sm_out, h->sm_n);
    if (h->mem_out) fprintf(stderr, " memory not at %u MHz in %u of %u samples;", a->mem, h->mem_out, h->mem_n);
    if (limiting) {
        char names[256];
        tw_clock_reasons_format(limiting, names, sizeof names);
        fprintf(stderr, " power or thermal limits: %s;", names);
    }
    fprintf(stderr, " measurements at this point are not at the locked clocks\n");
}

/* ---------------------------------------------------------------- running CMD */

static int exit_code(int status)
{
    if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
    return WIFEXITED(status) ? WEXITSTATUS(status) : CLI_EXIT_FAIL;
}

/* After truewatt got a signal: waits up to GRACE_NS for the command (which
 * got the signal too), then kills it. */
static void end_child(pid_t pid)
{
    long long until = mono_ns() + GRACE_NS;
    int status;
    for (;;) {
        pid_t w = waitpid(pid, &status, WNOHANG);
        if (w == pid || (w < 0 && errno != EINTR)) return;
        if (mono_ns() >= until) break;
        sleep_ms(20);
    }
    fprintf(stderr, "truewatt %s: the command is still running %d s after the signal: killing it\n", CMD,
            (int)(GRACE_NS / 1000000000LL));
    kill(pid, SIGKILL);
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
}

static void say_signal(int sig)
{
    fprintf(stderr, "truewatt %s: got signal %d (%s): resetting the clocks and ending the command\n", CMD, sig,
            strsignal(sig));
}

/* Runs the command under the locks; returns its exit code, or 128 + N when
 * truewatt got signal N (the locks are then reset at once). */
static int run_command(lock_state *ls, const lock_args *a, const char *path, held *h)
{
    pid_t pid;
    int rc = posix_spawn(&pid, path, NULL, NULL, a->cmd, environ);
    if (rc != 0) {
        fprintf(stderr, "truewatt %s: cannot run '%s': %s\n", CMD, a->cmd[0], strerror(rc));
        return rc == ENOENT ? 127 : 126;
    }
    child_pid = pid;
    if (got_signal) kill(pid, got_signal); /* one that came while it started */
    h->t0_ns = mono_ns();
    sample(ls->c, a, h); /* at least one, however short the command */
    int status = 0;
    bool waited = true;
    for (;;) {
        if (got_signal) {
            int sig = got_signal;
            say_signal(sig);
            (void)restore(ls); /* first: the card matters more than the command */
            end_child(pid);
            child_pid = 0;
            return 128 + sig;
        }
        pid_t w = waitpid(pid, &status, WNOHANG);
        if (w == pid) break;
        if (w < 0 && errno != EINTR) {
            fprintf(stderr, "truewatt %s: waiting for the command: %s\n", CMD, strerror(errno));
            waited = false;
            break;
        }
        sample(ls->c, a, h);
        sleep_ms(a->interval_ms);
    }
    child_pid = 0;
    if (got_signal) { /* it came as the command ended */
        say_signal(got_signal);
        return 128 + got_signal;
    }
    return waited ? exit_code(status) : CLI_EXIT_FAIL;
}

/* The command's path, found before anything is locked; an exit code (127: not found). */
static int find_command(const char *cmd, char **path)
{
    if ((*path = cli_find_command(cmd))) return 0;
    int e = errno;
    fprintf(stderr, "truewatt %s: cannot run '%s', nothing was locked: %s\n", CMD, cmd,
            e == ENOENT ? "command not found" : strerror(e));
    return e == ENOENT ? 127 : 126;
}

static void describe(const lock_state *ls, const lock_args *a)
{
    char core[64] = "", mem[64] = "";
    if (a->core_max && a->core_min == a->core_max)
        snprintf(core, sizeof core, "graphics %u MHz", a->core_min);
    else if (a->core_max)
        snprintf(core, sizeof core, "graphics %u..%u MHz", a->core_min, a->core_max);
    if (a->mem) snprintf(mem, sizeof mem, "%smemory %u MHz", a->core_max ? ", " : "", a->mem);
    fprintf(stderr, "truewatt %s: device %u (%s, %s): locked %s%s until the command ends\n", CMD,
            tw_clocks_index(ls->c), tw_clocks_name(ls->c), tw_clocks_uuid(ls->c), core, mem);
}

/* --reset: both locks, whoever made them (the memory one where the driver has it). */
static int reset_only(tw_clocks *c)
{
    lock_state ls = {c, true, tw_clocks_can_lock_mem(c)};
    if (!restore(&ls)) return CLI_EXIT_FAIL;
    fprintf(stderr, "truewatt %s: device %u (%s): the %s clock locks are reset\n", CMD, tw_clocks_index(c),
            tw_clocks_name(c), tw_clocks_can_lock_mem(c) ? "graphics and memory" : "graphics");
    return 0;
}

int tw_cmd_dvfs_lock(int argc, char **argv)
{
    lock_args a;
    memset(&a, 0, sizeof a);
    int rc = parse(argc, argv, &a);
    if (rc) return rc < 0 ? 0 : rc;
    lock_state ls = {NULL, false, false};
    tw_status st = tw_clocks_open(NULL, a.device, &ls.c);
    if (st != TW_OK) return cli_fail(CMD, st);
    if (a.reset) {
        rc = reset_only(ls.c);
        tw_clocks_close(ls.c);
        return rc;
    }
    char *path = NULL;
    if ((rc = check_request(ls.c, &a)) || (rc = find_command(a.cmd[0], &path))) {
        tw_clocks_close(ls.c);
        return rc;
    }
    install_handlers(); /* before the first lock: a signal from here on resets it */
    if ((rc = lock(&ls, &a))) {
        free(path);
        tw_clocks_close(ls.c);
        return rc;
    }
    describe(&ls, &a);
    held h;
    memset(&h, 0, sizeof h);
    h.t0_ns = mono_ns();
    rc = got_signal ? 128 + got_signal : run_command(&ls, &a, path, &h);
    free(path);
    bool restored = restore(&ls);
    if (restored) fprintf(stderr, "truewatt %s: clock locks reset\n", CMD);
    if (h.samples)
        report(&a, &h);
    else if (!got_signal)
        fprintf(stderr, "truewatt %s: the command ended before the first sample of the clocks\n", CMD);
    tw_clocks_close(ls.c);
    if (!restored) return CLI_EXIT_FAIL;
    return rc;
}
