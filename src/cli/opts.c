/* Options declared once: see opts.h. */
#include "cli/opts.h"

#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

#define MAX_OPTS 64
#define OPT_BASE 1000 /* getopt's value of table entry i: OPT_BASE + i */
#define HELP_COLUMN 24

void cli_opt_list_free(cli_opt_list *l)
{
    free(l->v);
    memset(l, 0, sizeof *l);
}

int cli_opt_unknown(const char *cmd, int c, char **argv)
{
    if (c == ':') return cli_usage(cmd, "option '%s' needs a value", argv[optind - 1]);
    return cli_usage(cmd, "unknown option '%s'", argv[optind - 1]);
}

static bool has_range(const cli_opt *x) { return x->min != 0 || x->max != 0; }

/* "a number > 0", "an integer from 1 to 1000", ... for the messages */
static void describe_range(const cli_opt *x, char *buf, size_t cap)
{
    const char *what = x->type == CLI_OPT_U64 ? "an integer" : "a number";
    if (!has_range(x))
        snprintf(buf, cap, "%s%s", what, x->type == CLI_OPT_U64 ? " >= 0" : "");
    else if (isinf(x->max))
        snprintf(buf, cap, "%s %s %g", what, x->min_excl ? ">" : ">=", x->min);
    else
        snprintf(buf, cap, "%s from %g%s to %g", what, x->min, x->min_excl ? " (excluded)" : "", x->max);
}

static bool in_range(const cli_opt *x, double v)
{
    if (!has_range(x)) return true;
    if (x->min_excl ? !(v > x->min) : !(v >= x->min)) return false;
    return v <= x->max;
}

/* One value into its place; `from` says where it came from for the message. */
static int store(const cli_opts *o, const cli_opt *x, const char *val, const char *from)
{
    char range[96];
    switch (x->type) {
    case CLI_OPT_FLAG:
        *(bool *)x->out = true;
        return 0;
    case CLI_OPT_STRING:
        *(const char **)x->out = val;
        return 0;
    case CLI_OPT_DOUBLE: {
        double v;
        if (cli_parse_double(val, &v) && in_range(x, v)) {
            *(double *)x->out = v;
            return 0;
        }
        break;
    }
    case CLI_OPT_U64: {
        uint64_t v;
        if (cli_parse_u64(val, &v) && in_range(x, (double)v)) {
            *(uint64_t *)x->out = v;
            return 0;
        }
        break;
    }
    case CLI_OPT_LIST: {
        cli_opt_list *l = x->out;
        if (l->n == l->cap) {
            size_t cap = l->cap ? 2 * l->cap : 8;
            const char **p = realloc(l->v, cap * sizeof *p);
            if (!p) return cli_usage(o->cmd, "out of memory");
            l->v = p;
            l->cap = cap;
        }
        l->v[l->n++] = val;
        return 0;
    }
    }
    describe_range(x, range, sizeof range);
    return cli_usage(o->cmd, "--%s needs %s, got '%s'%s", x->name, range, val, from);
}

static int apply_defaults(const cli_opts *o)
{
    for (size_t i = 0; i < o->n; i++) {
        const cli_opt *x = &o->opt[i];
        if (x->type == CLI_OPT_FLAG) *(bool *)x->out = false;
        if (x->type == CLI_OPT_STRING) *(const char **)x->out = NULL;
        if (x->def && x->type != CLI_OPT_FLAG && x->type != CLI_OPT_LIST) {
            int rc = store(o, x, x->def, " (the table's default: a bug)");
            if (rc) return rc;
        }
    }
    return 0;
}

int cli_opts_parse(const cli_opts *o, int argc, char **argv, int *first)
{
    struct option lo[MAX_OPTS + 2];
    char shorts[2 * MAX_OPTS + 4] = ":h";
    size_t ns = strlen(shorts);
    if (o->n > MAX_OPTS) return cli_usage(o->cmd, "too many options in its table (a bug)");
    int rc = apply_defaults(o);
    if (rc) return rc;
    for (size_t i = 0; i < o->n; i++) {
        const cli_opt *x = &o->opt[i];
        lo[i] =
            (struct option){x->name, x->type == CLI_OPT_FLAG ? no_argument : required_argument, 0, OPT_BASE + (int)i};
        if (x->short_name) {
            shorts[ns++] = x->short_name;
            if (x->type != CLI_OPT_FLAG) shorts[ns++] = ':';
        }
    }
    shorts[ns] = '\0';
    lo[o->n] = (struct option){"help", no_argument, 0, 'h'};
    lo[o->n + 1] = (struct option){0, 0, 0, 0};
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, shorts, lo, NULL)) != -1) {
        if (c == 'h') {
            cli_opts_usage(o, stdout);
            return -1;
        }
        const cli_opt *x = NULL;
        if (c >= OPT_BASE && c < OPT_BASE + (int)o->n) x = &o->opt[c - OPT_BASE];
        for (size_t i = 0; !x && c > 0 && c < 128 && i < o->n; i++)
            if (o->opt[i].short_name == c) x = &o->opt[i];
        if (!x) return cli_opt_unknown(o->cmd, c, argv);
        if ((rc = store(o, x, optarg, "")) != 0) return rc;
    }
    *first = optind;
    return 0;
}

/* "  -o, --output TRACE" or "  --seed N" */
static int option_label(const cli_opt *x, char *buf, size_t cap)
{
    char shortpart[8] = "";
    if (x->short_name) snprintf(shortpart, sizeof shortpart, "-%c, ", x->short_name);
    return snprintf(buf, cap, "  %s--%s%s%s", shortpart, x->name, x->arg ? " " : "", x->arg ? x->arg : "");
}

void cli_opts_usage(const cli_opts *o, FILE *f)
{
    fprintf(f, "usage: truewatt %s %s\n", o->cmd, o->synopsis);
    if (o->about && *o->about) fprintf(f, "\n%s\n", o->about);
    fputc('\n', f);
    for (size_t i = 0; i < o->n; i++) {
        const cli_opt *x = &o->opt[i];
        char label[128];
        int len = option_label(x, label, sizeof label);
        fprintf(f, "%s", label);
        const char *h = x->help ? x->help : "";
        fprintf(f, "%*s", len < HELP_COLUMN - 1 ? HELP_COLUMN - len : 1, "");
        for (const char *p = h; *p; p++) /* continuation lines under the first */
            if (*p == '\n')
                fprintf(f, "\n%*s", HELP_COLUMN, "");
            else
                fputc(*p, f);
        if (x->def) fprintf(f, " (default %s)", x->def);
        if (x->type == CLI_OPT_LIST) fprintf(f, " (repeatable)");
        fputc('\n', f);
    }
    fprintf(f, "  --help%*sthis text\n", HELP_COLUMN - 8, "");
    if (o->after && *o->after) fprintf(f, "\n%s", o->after);
}
