/* Options declared once (internal to the CLI): each command lists its
 * options in a table (name, type, default, help, where the value goes);
 * parsing, the defaults, the usage text and the error messages all come
 * from that table. getopt_long does the scanning, so every command's
 * options behave alike (--name VALUE, --name=VALUE, -o VALUE, "--").
 *
 * Defaults are text, parsed like a value given on the command line, so the
 * usage shows exactly the default that applies. */
#ifndef TW_CLI_OPTS_H
#define TW_CLI_OPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef enum cli_opt_type {
    CLI_OPT_FLAG = 0, /* out: bool *; no value */
    CLI_OPT_STRING,   /* out: const char ** (points into argv or at def) */
    CLI_OPT_DOUBLE,   /* out: double *; finite, within [min, max] (min excluded with min_excl) */
    CLI_OPT_U64,      /* out: uint64_t *; within [min, max] */
    CLI_OPT_LIST,     /* out: cli_opt_list *; repeatable, each value appended */
    CLI_OPT_INT,      /* out: int *; a whole number within [min, max] */
    CLI_OPT_ENUM,     /* out: const char **; one of `choices` ("nvml|sim") */
    CLI_OPT_CALL      /* call(cmd, value, out) takes the value: for values that set several things */
} cli_opt_type;

/* The values of a repeatable option, in order (pointers into argv). */
typedef struct cli_opt_list {
    const char **v;
    size_t n, cap;
} cli_opt_list;
void cli_opt_list_free(cli_opt_list *l);

typedef struct cli_opt {
    const char *name; /* long name, without "--" */
    char short_name;  /* 'o' for -o, or 0 */
    cli_opt_type type;
    const char *arg;  /* the value's name in the usage ("FILE", "S"); NULL for flags */
    const char *def;  /* the default as text (shown and applied); NULL: none */
    const char *help; /* what it does; lines after the first start with '\n' */
    void *out;
    double min, max;     /* numbers: the accepted range (min = max = 0: any) */
    bool min_excl;       /* min itself is not accepted (> min) */
    const char *choices; /* ENUM: the accepted values, '|' between them */
    /* CALL: takes the value; returns 0 or an exit code after its message */
    int (*call)(const char *cmd, const char *value, void *out);
    bool *seen; /* when not NULL: set when the option is given (for "exclude each other") */
} cli_opt;

typedef struct cli_opts {
    const char *cmd;      /* "sim": messages say "truewatt sim: ..." */
    const char *synopsis; /* after "usage: truewatt CMD " */
    const char *about;    /* paragraphs between the synopsis and the options */
    const cli_opt *opt;
    size_t n;
    const char *after; /* text after the options (examples); may be NULL */
    /* The arguments that are not options (argv[*first] on): at least
     * min_args (else the message `missing`, or "missing ARGS"), at most
     * max_args (CLI_OPTS_ANY: no limit; else "unexpected argument"). */
    size_t min_args, max_args;
    const char *args;    /* their name in the messages ("TRACE") */
    const char *missing; /* the message when fewer than min_args are given */
    bool stop_at_arg;    /* options end at the first argument: a program and its own options follow */
    /* The options of a second table (shared by several commands: the experiment options), after opt. */
    const cli_opt *more;
    size_t n_more;
} cli_opts;

#define CLI_OPTS_ANY ((size_t)-1)
/* The number of entries of a table (an array) */
#define CLI_OPTS_N(table) (sizeof(table) / sizeof((table)[0]))

/* Applies the defaults, then parses argv and checks how many arguments
 * follow. Returns 0 (*first: the first argument after the options), -1 after
 * printing the usage for --help, or the usage error's exit code (2) after
 * its message on stderr. */
int cli_opts_parse(const cli_opts *o, int argc, char **argv, int *first);
/* The usage text: synopsis, about, one line per option with its default. */
void cli_opts_usage(const cli_opts *o, FILE *f);
#endif
