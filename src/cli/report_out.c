/* The report on the command line: see report_out.h. */
#include "cli/report_out.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/interrupt.h"

static int add_group(run_report_opts *o, bool range, const char *arg)
{
    const char **v = range ? o->range_groups : o->groups;
    size_t *n = range ? &o->nrange_groups : &o->ngroups;
    const char *opt = range ? "--group-range" : "--group";
    if (!*arg) return cli_usage(o->cmd, "%s needs a %s, got ''", opt, range ? "range name" : "name pattern");
    if (*n == REPORT_MAX_GROUPS) return cli_usage(o->cmd, "%s: at most %d", opt, REPORT_MAX_GROUPS);
    v[(*n)++] = arg;
    return 0;
}

int report_opt_group(const char *cmd, const char *value, void *out)
{
    run_report_opts *o = out;
    o->cmd = cmd;
    return add_group(o, false, value);
}

int report_opt_group_range(const char *cmd, const char *value, void *out)
{
    run_report_opts *o = out;
    o->cmd = cmd;
    return add_group(o, true, value);
}

static tw_report_options library_options(const run_report_opts *o)
{
    tw_report_options x;
    tw_report_options_init(&x);
    x.profile = o->profile;
    x.groups = o->groups;
    x.ngroups = o->ngroups;
    x.range_groups = o->range_groups;
    x.nrange_groups = o->nrange_groups;
    x.no_activity_counters = o->no_counters;
    x.no_linger = o->no_linger;
    x.cancel = &cli_interrupted;
    return x;
}

/* stdout's rendering; 0 or the exit code after a message. */
static int print(const tw_report *r, const run_report_opts *o, FILE *out)
{
    char *text = NULL;
    tw_status st = tw_report_render(r, o->json ? TW_REPORT_JSON : TW_REPORT_TEXT, &text, NULL);
    if (st != TW_OK) return cli_fail(o->cmd, st);
    fputs(text, out);
    fflush(out);
    free(text);
    return 0;
}

/* --csv FILE: a failure is said, the report stands. */
static void write_csv(const tw_report *r, const run_report_opts *o)
{
    char *text = NULL;
    size_t len = 0;
    tw_status st = tw_report_render(r, TW_REPORT_CSV, &text, &len);
    FILE *f = st == TW_OK ? fopen(o->csv, "w") : NULL;
    bool ok = f && fwrite(text, 1, len, f) == len;
    if (f && fclose(f) != 0) ok = false;
    if (!ok)
        fprintf(stderr, "truewatt %s: warning: no CSV file %s: %s\n", o->cmd, o->csv,
                st != TW_OK ? tw_last_error() : strerror(errno));
    free(text);
}

int report_run_file(tw_run *run, const run_report_opts *o, FILE *out)
{
    tw_report_options ro = library_options(o);
    tw_report *r = NULL;
    tw_status st = tw_report_compute(run, &ro, &r);
    if (st == TW_EINTERRUPTED) {
        fprintf(stderr, "truewatt %s: interrupted; no report, the run is in %s\n", o->cmd, o->path);
        return CLI_EXIT_INTERRUPTED;
    }
    if (st != TW_OK) return cli_fail(o->cmd, st);
    const char *notice = tw_report_notice(r);
    if (*notice) fprintf(stderr, "truewatt %s: %s", o->cmd, notice);
    if (o->perfetto) tw_report_write_perfetto(r, o->perfetto); /* a failure is a warning in the report */
    int rc = print(r, o, out);
    if (rc == 0 && o->csv) write_csv(r, o);
    if (rc == 0 && o->on_report) o->on_report(o->user, r);
    if (rc == 0 && tw_report_keep(r, run, o->options) != TW_OK)
        fprintf(stderr, "truewatt %s: warning: the report is not kept in %s: %s\n", o->cmd, o->path, tw_last_error());
    tw_report_free(r);
    return rc;
}

int report_merged(const char *const *paths, size_t n, const run_report_opts *o, FILE *out)
{
    if (o->perfetto) {
        fprintf(stderr,
                "truewatt %s: --perfetto takes one run file; give it to 'truewatt report RUN --perfetto F' "
                "for each rank\n",
                o->cmd);
        return CLI_EXIT_USAGE;
    }
    tw_report_options ro = library_options(o);
    tw_report *r = NULL;
    tw_status st = tw_report_merge(paths, n, &ro, &r);
    if (st == TW_EINTERRUPTED) {
        fprintf(stderr, "truewatt %s: interrupted; no report\n", o->cmd);
        return CLI_EXIT_INTERRUPTED;
    }
    if (st != TW_OK) return cli_fail(o->cmd, st);
    int rc = print(r, o, out);
    if (rc == 0 && o->csv) write_csv(r, o);
    tw_report_free(r);
    return rc;
}
