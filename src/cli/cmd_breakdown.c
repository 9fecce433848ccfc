/* truewatt breakdown -- CMD: where an application's energy goes (Delestrac
 * et al. 2024, §VII, Figs. 9-10). This file runs CMD twice: `truewatt run`
 * measures the energy, Nsight Compute counts the sectors each memory level
 * served; the library (tw_breakdown_*, src/bench/breakdown_report.c) reads
 * both and prices the accesses by the memory-energy profile of `truewatt mem
 * calibrate`. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/experiment.h"
#include "cli/spawn.h"

#define CMD "breakdown"

typedef struct bd_args {
    const char *profile, *range, *count_range, *ncu, *out, *label, *device, *counts_from;
    bool json;
    uint64_t sample; /* ncu profiles the first `sample` launches of the span; 0 = all */
    char **cmd;      /* CMD and its arguments, NULL-terminated (argv's tail) */
} bd_args;

/* What ncu profiled: the counts, and how many launches over what kernel time. */
/* The options, declared once (cli/opts.h). */
static int parse_args(int argc, char **argv, bd_args *a)
{
    const cli_opt opt[] = {
        {.name = "mem-profile",
         .type = CLI_OPT_STRING,
         .arg = "FILE",
         .help = "mem-profile.json of `truewatt mem calibrate` on this GPU (required)",
         .out = &a->profile},
        {.name = "range",
         .type = CLI_OPT_STRING,
         .arg = "NAME",
         .help = "only the NVTX range NAME (its energy and its kernels, from the run's\ntimeline); default: "
                 "all of CMD's kernels (static = idle power x their time)",
         .out = &a->range},
        {.name = "sample",
         .type = CLI_OPT_U64,
         .arg = "N",
         .help = "ncu profiles only the first N kernel launches of the span (it takes\ntens of ms per launch); "
                 "their counts are scaled by the span's kernel\ntime over theirs, as timed by the run: for spans "
                 "of repeated, alike\nlaunches (default: all)",
         .out = &a->sample,
         .min = 1,
         .max = 100000000},
        {.name = "count-range",
         .type = CLI_OPT_STRING,
         .arg = "NAME",
         .help = "ncu profiles the NVTX range NAME instead of --range's: a part of\nCMD that does what the "
                 "measured span does, scaled by kernel time as --sample",
         .out = &a->count_range},
        {.name = "ncu", .type = CLI_OPT_STRING, .arg = "PATH", .def = "ncu", .help = "Nsight Compute", .out = &a->ncu},
        {.name = "counts-from",
         .type = CLI_OPT_STRING,
         .arg = "NCU.csv",
         .help = "the counts of an earlier breakdown of the same CMD (its ncu.csv):\nno ncu run, only the energy "
                 "is measured again",
         .out = &a->counts_from},
        {.name = "out",
         .type = CLI_OPT_STRING,
         .arg = "DIR",
         .def = "truewatt-breakdown",
         .help = "breakdown.csv (canonical), breakdown.json, breakdown.dat/.gp/.png,\nncu.csv, run.json and the "
                 "run's trace, events and Perfetto file",
         .out = &a->out},
        {.name = "label",
         .type = CLI_OPT_STRING,
         .arg = "TEXT",
         .help = "the row's name in the CSV and the plot (default: CMD's arguments)",
         .out = &a->label},
        {.name = "device",
         .type = CLI_OPT_STRING,
         .arg = "N",
         .help = "the GPU (NVML index) to measure",
         .out = &a->device},
        {.name = "json", .type = CLI_OPT_FLAG, .help = "the breakdown as JSON on stdout", .out = &a->json},
    };
    const cli_opts o = {
        .cmd = CMD,
        .synopsis = "--mem-profile FILE [--range NAME] [--count-range NAME] [--sample N]\n"
                    "                          [--ncu PATH] [--out DIR] [--label TEXT] [--device N] [--json] -- CMD "
                    "[ARGS...]",
        .about = "Where CMD's GPU energy goes (Delestrac et al. 2024, §VII): static energy, each memory level's\n"
                 "accesses times its energy per access (lower bounds from `truewatt mem calibrate`), and the rest\n"
                 "of the dynamic energy. CMD runs twice and must launch the same kernels in the same order: first\n"
                 "under `truewatt run`, which measures the energy and the kernels' timeline, then under Nsight\n"
                 "Compute (ncu --csv --clock-control none --cache-control none), which counts the sectors each\n"
                 "level served in the span's launches, picked by index from the timeline.",
        .opt = opt,
        .n = CLI_OPTS_N(opt),
        .min_args = 1,
        .max_args = CLI_OPTS_ANY,
        .missing = "name the command to measure after --",
        .stop_at_arg = true};
    int first;
    int rc = cli_opts_parse(&o, argc, argv, &first);
    if (rc) return rc;
    if (!a->profile) return cli_usage(CMD, "--mem-profile FILE is required (truewatt mem calibrate writes it)");
    a->cmd = argv + first;
    return 0;
}

/* ---------------------------------------------------------------- the two runs */

/* head[0..nh) then CMD, NULL-terminated (malloc'd; NULL when out of memory) */
static char **with_cmd(char *const *head, size_t nh, char **cmd)
{
    size_t nc = 0;
    while (cmd[nc])
        nc++;
    char **v = malloc((nh + nc + 1) * sizeof *v);
    if (!v) return NULL;
    memcpy(v, head, nh * sizeof *v);
    memcpy(v + nh, cmd, (nc + 1) * sizeof *v);
    return v;
}

/* Runs head + CMD to its end: its exit status, or -1 (message on stderr). */
static int spawn_with_cmd(char *const *head, size_t nh, char **cmd, const char *out_path)
{
    char **argv = with_cmd(head, nh, cmd);
    if (!argv) {
        fprintf(stderr, "truewatt %s: out of memory\n", CMD);
        return -1;
    }
    int rc = cli_spawn_wait(CMD, argv, out_path);
    free(argv);
    return rc;
}

/* Runs CMD under ncu, counting the launches skip..skip+count; the CSV into log. */
static int count_sectors(const bd_args *a, unsigned long skip, unsigned long count, char *log, size_t logcap)
{
    char ncu[4096], metrics[2048], skip_s[32], count_s[32];
    if (cli_find_ncu(CMD, a->ncu, ncu, sizeof ncu) != 0) return CLI_EXIT_FAIL;
    tw_breakdown_metrics_arg(metrics, sizeof metrics);
    snprintf(log, logcap, "%s/ncu.csv", a->out);
    snprintf(skip_s, sizeof skip_s, "%lu", skip);
    snprintf(count_s, sizeof count_s, "%lu", count);
    /* the launches by index, not an NVTX filter: a range holds only its own thread's launches (PyTorch's
     * backward runs on another); no cache flush between replays: the counts of CMD as it runs */
    char *head[] = {ncu,
                    "--csv",
                    "--clock-control",
                    "none",
                    "--cache-control",
                    "none",
                    "--target-processes",
                    "all",
                    "--launch-skip",
                    skip_s,
                    "--launch-count",
                    count_s,
                    "--metrics",
                    metrics,
                    "--log-file",
                    log};
    fprintf(stderr, "truewatt %s: counting sectors: ncu runs %s (%s)\n", CMD, a->cmd[0], log);
    remove(log);
    int rc = spawn_with_cmd(head, sizeof head / sizeof head[0], a->cmd, NULL);
    if (rc != 0) {
        fprintf(stderr, "truewatt %s: the run under ncu failed (exit %d); its log: %s\n", CMD, rc, log);
        return CLI_EXIT_FAIL;
    }
    return 0;
}

static int measure_energy(const bd_args *a, char *json_path, size_t cap)
{
    char self[4096], trace[4200], events[4200], perfetto[4200];
    if (cli_self_exe(CMD, self, sizeof self) != 0) return CLI_EXIT_FAIL;
    snprintf(json_path, cap, "%s/run.json", a->out);
    snprintf(trace, sizeof trace, "%s/run.sqlite", a->out);
    snprintf(events, sizeof events, "%s/run.events.csv", a->out);
    snprintf(perfetto, sizeof perfetto, "%s/run.perfetto-trace", a->out);
    /* the energy counter read every 20 ms, fixed: by default a costly slow reading is stretched up to 1 s,
     * which leaves a span of a fraction of a second inside one interval of the counter */
    char *head[16] = {self, "run", "--json", "-o", trace, "--perfetto", perfetto, "--slow-period", "0.02"};
    size_t n = 0;
    while (head[n])
        n++;
    if (a->device) head[n++] = "--device", head[n++] = (char *)a->device;
    head[n++] = "--";
    fprintf(stderr, "truewatt %s: measuring energy: truewatt run %s (%s)\n", CMD, a->cmd[0], json_path);
    int rc = spawn_with_cmd(head, n, a->cmd, json_path);
    if (rc != 0) {
        fprintf(stderr, "truewatt %s: the measured run failed (exit %d); its report: %s\n", CMD, rc, json_path);
        return CLI_EXIT_FAIL;
    }
    /* the launches, for the window that ncu counts */
    tw_run *run = NULL;
    tw_status st = tw_run_open(trace, &run);
    if (st == TW_OK) st = tw_run_export_events(run, events);
    tw_status cst = tw_run_close(run);
    if (st == TW_OK) st = cst;
    return st == TW_OK ? 0 : cli_fail(CMD, st);
}

static void default_label(const bd_args *a, char *buf, size_t cap)
{
    size_t len = 0;
    buf[0] = '\0';
    for (char **c = a->cmd; *c; c++) {
        const char *base = c == a->cmd && strrchr(*c, '/') ? strrchr(*c, '/') + 1 : *c;
        len += (size_t)snprintf(buf + len, len < cap ? cap - len : 0, "%s%s", len ? " " : "", base);
    }
    for (char *p = buf; *p; p++)
        if (*p == '"') *p = '\'';
}

static void note(void *ctx, const char *text)
{
    (void)ctx;
    cli_note("truewatt %s: %s", CMD, text);
}

/* The measured run, then the counts (ncu's run, or --counts-from), then the report. */
static int break_down(const bd_args *a, tw_breakdown_job *b)
{
    char run_json[4200], events[4200], log[4200];
    snprintf(events, sizeof events, "%s/run.events.csv", a->out);
    int rc = measure_energy(a, run_json, sizeof run_json);
    if (rc) return rc;
    tw_status st = tw_breakdown_read_run(b, run_json, events);
    if (st != TW_OK) return cli_fail(CMD, st);
    unsigned long skip, count;
    tw_breakdown_launches(b, &skip, &count);
    if (a->counts_from) {
        fprintf(stderr, "truewatt %s: counts from %s (no ncu run)\n", CMD, a->counts_from);
        snprintf(log, sizeof log, "%s", a->counts_from);
    } else if ((rc = count_sectors(a, skip, count, log, sizeof log))) {
        return rc;
    }
    st = tw_breakdown_report(b, log, stdout);
    return st == TW_OK ? 0 : cli_fail(CMD, st);
}

int cmd_breakdown(int argc, char **argv)
{
    bd_args a = {0};
    a.ncu = "ncu";
    a.out = "truewatt-breakdown";
    int rc = parse_args(argc, argv, &a);
    if (rc) return rc < 0 ? 0 : rc;
    char label[512], prov[1024];
    if (a.label)
        snprintf(label, sizeof label, "%s", a.label);
    else
        default_label(&a, label, sizeof label);
    cli_exp_provenance(prov, sizeof prov, argc, argv);
    tw_breakdown_options o;
    tw_breakdown_options_init(&o);
    o.profile = a.profile;
    o.range = a.range;
    o.count_range = a.count_range;
    o.device = a.device;
    o.sample = a.sample;
    o.label = label;
    o.provenance = prov;
    o.out = a.out;
    o.json = a.json;
    o.note = note;
    tw_breakdown_job *b = NULL;
    tw_status st = tw_breakdown_open(&o, &b);
    if (st != TW_OK) return cli_fail(CMD, st);
    rc = cli_make_dir(CMD, a.out);
    if (!rc) rc = break_down(&a, b);
    tw_breakdown_free(b);
    return rc;
}
