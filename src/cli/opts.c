/* Options declared once: see opts.h. */
#include "cli/opts.h"

#include <getopt.h>
#include <limits.h>
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

/* getopt's ':' (an option without its value) and '?' (an unknown option) */
static int unknown_option(const char *cmd, int c, char **argv)
{
    if (c == ':') return cli_usage(cmd, "option '%s' needs a value", argv[optind - 1]);
    return cli_usage(cmd, "unknown option '%s'", argv[optind - 1]);
}

static bool has_range(const cli_opt *x) { return x->min != 0 || x->max != 0; }

static bool is_integer_type(const cli_opt *x) { return x->type == CLI_OPT_U64 || x->type == CLI_OPT_INT; }

/* v as a person writes it: 100000000, 0.00001, 2.5 (no exponent, no trailing zeros) */
static const char *plain(double v, char *buf, size_t cap)
{
    snprintf(buf, cap, "%.10f", v);
    char *end = buf + strlen(buf);
    while (end > buf && end[-1] == '0')
        *--end = '\0';
    if (end > buf && end[-1] == '.') *--end = '\0';
    return buf;
}

/* "a number > 0", "an integer from 1 to 1000", "one of nvml|sim" ... for the messages */
static void describe_range(const cli_opt *x, char *buf, size_t cap)
{
    const char *what = is_integer_type(x) ? "an integer" : "a number";
    char lo[64], hi[64];
    plain(x->min, lo, sizeof lo);
    plain(x->max, hi, sizeof hi);
    if (x->type == CLI_OPT_ENUM)
        snprintf(buf, cap, "one of %s", x->choices);
    else if (!has_range(x))
        snprintf(buf, cap, "%s%s", what, x->type == CLI_OPT_U64 ? " >= 0" : "");
    else if (isinf(x->max))
        snprintf(buf, cap, "%s %s %s", what, x->min_excl ? ">" : ">=", lo);
    else
        snprintf(buf, cap, "%s from %s%s to %s", what, lo, x->min_excl ? " (excluded)" : "", hi);
}

static bool in_range(const cli_opt *x, double v)
{
    if (!has_range(x)) return true;
    if (x->min_excl ? !(v > x->min) : !(v >= x->min)) return false;
    return v <= x->max;
}

/* Is val one of the '|'-separated choices? */
static bool is_choice(const char *choices, const char *val)
{
    size_t len = strlen(val);
    for (const char *p = choices; p && *p;) {
        const char *end = strchr(p, '|');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        if (n == len && !strncmp(p, val, n)) return true;
        p = end ? end + 1 : NULL;
    }
    return false;
}

static bool parse_int(const char *val, int *out)
{
    double v;
    if (!cli_parse_double(val, &v) || v != floor(v) || v < INT_MIN || v > INT_MAX) return false;
    *out = (int)v;
    return true;
}

static int append(const cli_opts *o, cli_opt_list *l, const char *val)
{
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

/* One value into its place; `from` says where it came from for the message. */
static int store(const cli_opts *o, const cli_opt *x, const char *val, const char *from)
{
    char range[256];
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
    case CLI_OPT_INT: {
        int v;
        if (parse_int(val, &v) && in_range(x, v)) {
            *(int *)x->out = v;
            return 0;
        }
        break;
    }
    case CLI_OPT_ENUM:
        if (is_choice(x->choices, val)) {
            *(const char **)x->out = val;
            return 0;
        }
        break;
    case CLI_OPT_LIST:
        return append(o, x->out, val);
    case CLI_OPT_CALL:
        return x->call(o->cmd, val, x->out);
    }
    describe_range(x, range, sizeof range);
    return cli_usage(o->cmd, "--%s needs %s, got '%s'%s", x->name, range, val, from);
}

static size_t count_opts(const cli_opts *o) { return o->n + o->n_more; }

/* Entry i of the table and then of its second table. */
static const cli_opt *opt_at(const cli_opts *o, size_t i) { return i < o->n ? &o->opt[i] : &o->more[i - o->n]; }

static int apply_defaults(const cli_opts *o)
{
    for (size_t i = 0; i < count_opts(o); i++) {
        const cli_opt *x = opt_at(o, i);
        if (x->seen) *x->seen = false;
        if (x->type == CLI_OPT_FLAG) *(bool *)x->out = false;
        if (x->type == CLI_OPT_STRING || x->type == CLI_OPT_ENUM) *(const char **)x->out = NULL;
        if (x->def && x->type != CLI_OPT_FLAG && x->type != CLI_OPT_LIST) {
            int rc = store(o, x, x->def, " (the table's default: a bug)");
            if (rc) return rc;
        }
    }
    return 0;
}

/* The arguments after the options: as many as the table says. */
static int check_args(const cli_opts *o, int argc, char **argv, int first)
{
    size_t n = (size_t)(argc - first);
    if (n < o->min_args) {
        if (o->missing) return cli_usage(o->cmd, "%s", o->missing);
        return cli_usage(o->cmd, "missing %s", o->args ? o->args : "arguments");
    }
    if (o->max_args != CLI_OPTS_ANY && n > o->max_args)
        return cli_usage(o->cmd, "unexpected argument '%s'", argv[first + (int)o->max_args]);
    return 0;
}

int cli_opts_parse(const cli_opts *o, int argc, char **argv, int *first)
{
    size_t n = count_opts(o);
    struct option lo[MAX_OPTS + 2];
    char shorts[2 * MAX_OPTS + 8];
    snprintf(shorts, sizeof shorts, "%s:h", o->stop_at_arg ? "+" : "");
    size_t ns = strlen(shorts);
    if (n > MAX_OPTS) return cli_usage(o->cmd, "too many options in its table (a bug)");
    int rc = apply_defaults(o);
    if (rc) return rc;
    for (size_t i = 0; i < n; i++) {
        const cli_opt *x = opt_at(o, i);
        lo[i] =
            (struct option){x->name, x->type == CLI_OPT_FLAG ? no_argument : required_argument, 0, OPT_BASE + (int)i};
        if (x->short_name) {
            shorts[ns++] = x->short_name;
            if (x->type != CLI_OPT_FLAG) shorts[ns++] = ':';
        }
    }
    shorts[ns] = '\0';
    lo[n] = (struct option){"help", no_argument, 0, 'h'};
    lo[n + 1] = (struct option){0, 0, 0, 0};
    optind = 0; /* 0, not 1: glibc and musl then start afresh, reading '+' again (a test parses many times) */
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, shorts, lo, NULL)) != -1) {
        if (c == 'h') {
            cli_opts_usage(o, stdout);
            return -1;
        }
        const cli_opt *x = NULL;
        if (c >= OPT_BASE && c < OPT_BASE + (int)n) x = opt_at(o, (size_t)(c - OPT_BASE));
        for (size_t i = 0; !x && c > 0 && c < 128 && i < n; i++)
            if (opt_at(o, i)->short_name == c) x = opt_at(o, i);
        if (!x) return unknown_option(o->cmd, c, argv);
        if ((rc = store(o, x, optarg, "")) != 0) return rc;
        if (x->seen) *x->seen = true;
    }
    *first = optind;
    return check_args(o, argc, argv, optind);
}

/* "  -o, --output TRACE" or "  --seed N" */
static int option_label(const cli_opt *x, char *buf, size_t cap)
{
    char shortpart[8] = "";
    if (x->short_name) snprintf(shortpart, sizeof shortpart, "-%c, ", x->short_name);
    const char *arg = x->arg ? x->arg : x->type == CLI_OPT_ENUM ? x->choices : NULL;
    return snprintf(buf, cap, "  %s--%s%s%s", shortpart, x->name, arg ? " " : "", arg ? arg : "");
}

void cli_opts_usage(const cli_opts *o, FILE *f)
{
    fprintf(f, "usage: truewatt %s %s\n", o->cmd, o->synopsis);
    if (o->about && *o->about) fprintf(f, "\n%s\n", o->about);
    fputc('\n', f);
    for (size_t i = 0; i < count_opts(o); i++) {
        const cli_opt *x = opt_at(o, i);
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
