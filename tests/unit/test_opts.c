/* The CLI's table-driven option parser (src/cli/opts.c): defaults from the
 * table, the value forms getopt_long accepts, repeatable options, ranges,
 * the usage text and the messages of bad input. */
#include "tw_test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/opts.h"

typedef struct args {
    const char *out, *mode, *backend;
    double len_s;
    uint64_t count;
    int device;
    bool json, len_seen;
    cli_opt_list items;
    int pair[2]; /* --pair A:B, through a CALL entry */
} args;

/* --pair A:B: two small whole numbers (a value that sets two things) */
static int take_pair(const char *cmd, const char *value, void *out)
{
    int *p = out;
    char tail;
    if (sscanf(value, "%d:%d%c", &p[0], &p[1], &tail) != 2) {
        fprintf(stderr, "truewatt %s: --pair needs A:B, got '%s'\n", cmd, value);
        return 2;
    }
    return 0;
}

static int parse(args *a, int argc, char **argv, int *first)
{
    const cli_opt opt[] = {
        {.name = "output", .short_name = 'o', .type = CLI_OPT_STRING, .arg = "FILE", .help = "where", .out = &a->out},
        {.name = "mode",
         .type = CLI_OPT_STRING,
         .arg = "M",
         .def = "fast",
         .help = "how\nsecond line",
         .out = &a->mode},
        {.name = "length",
         .type = CLI_OPT_DOUBLE,
         .arg = "S",
         .def = "0.5",
         .help = "seconds",
         .out = &a->len_s,
         .min = 0,
         .max = 10,
         .min_excl = true,
         .seen = &a->len_seen},
        {.name = "count",
         .type = CLI_OPT_U64,
         .arg = "N",
         .def = "3",
         .help = "times",
         .out = &a->count,
         .min = 1,
         .max = 100},
        {.name = "item", .type = CLI_OPT_LIST, .arg = "X", .help = "one item", .out = &a->items},
        {.name = "json", .type = CLI_OPT_FLAG, .help = "JSON", .out = &a->json},
    };
    /* a second table, as the experiment options are */
    const cli_opt more[] = {
        {.name = "backend",
         .type = CLI_OPT_ENUM,
         .choices = "nvml|sim",
         .def = "nvml",
         .help = "where",
         .out = &a->backend},
        {.name = "device",
         .type = CLI_OPT_INT,
         .arg = "N",
         .def = "0",
         .help = "GPU",
         .out = &a->device,
         .min = 0,
         .max = 64},
        {.name = "pair", .type = CLI_OPT_CALL, .arg = "A:B", .help = "two", .out = a->pair, .call = take_pair},
    };
    const cli_opts o = {.cmd = "demo",
                        .synopsis = "[options] ARG",
                        .about = "A demo.",
                        .opt = opt,
                        .n = CLI_OPTS_N(opt),
                        .more = more,
                        .n_more = CLI_OPTS_N(more),
                        .max_args = CLI_OPTS_ANY};
    return cli_opts_parse(&o, argc, argv, first);
}

static const char *argv_at(char **argv, int i) { return argv[i]; }

/* Runs parse with stdout and stderr into files; *text gets both (caller frees). */
static int parse_captured(args *a, int argc, char **argv, int *first, char **text)
{
    const char *path = tw_test_path(0, "opts-out.txt");
    fflush(stdout);
    fflush(stderr);
    int so = dup(1), se = dup(2);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    dup2(fileno(f), 1);
    dup2(fileno(f), 2);
    int rc = parse(a, argc, argv, first);
    fflush(stdout);
    fflush(stderr);
    dup2(so, 1);
    dup2(se, 2);
    close(so);
    close(se);
    fclose(f);
    *text = tw_test_slurp(path);
    unlink(path);
    assert_non_null(*text);
    return rc;
}

static void defaults(void **state)
{
    (void)state;
    args a;
    memset(&a, 0xff, sizeof a); /* garbage: the parser sets every default */
    memset(&a.items, 0, sizeof a.items);
    char *argv[] = {"demo", NULL};
    int first = -1;
    assert_int_equal(parse(&a, 1, argv, &first), 0);
    assert_int_equal(first, 1);
    assert_null(a.out);
    assert_string_equal(a.mode, "fast");
    assert_true(a.len_s == 0.5);
    assert_int_equal(a.count, 3);
    assert_false(a.json);
    assert_false(a.len_seen);
    assert_int_equal(a.items.n, 0);
    assert_string_equal(a.backend, "nvml");
    assert_int_equal(a.device, 0);
}

static void values(void **state)
{
    (void)state;
    args a = {0};
    char *argv[] = {"demo",   "-o",  "x.csv",  "--mode=slow", "--length",  "2.5", "--count",  "100",
                    "--item", "a",   "--json", "--item=b",    "--backend", "sim", "--device", "3",
                    "--pair", "4:5", "pos1",   "--",          "--pos2",    NULL};
    int first = 0;
    assert_int_equal(parse(&a, 21, argv, &first), 0);
    assert_true(a.len_seen);
    assert_string_equal(a.backend, "sim");
    assert_int_equal(a.device, 3);
    assert_int_equal(a.pair[0], 4);
    assert_int_equal(a.pair[1], 5);
    assert_string_equal(a.out, "x.csv");
    assert_string_equal(a.mode, "slow");
    assert_true(a.len_s == 2.5);
    assert_int_equal(a.count, 100);
    assert_true(a.json);
    assert_int_equal(a.items.n, 2);
    assert_string_equal(a.items.v[0], "a");
    assert_string_equal(a.items.v[1], "b");
    /* getopt_long moves the arguments after the options */
    assert_int_equal(first, 19);
    assert_string_equal(argv[first], "pos1");
    assert_string_equal(argv[first + 1], "--pos2");
    cli_opt_list_free(&a.items);
}

static void bad_input(void **state)
{
    (void)state;
    struct {
        int argc;
        char *argv[4];
        const char *message;
    } cases[] = {
        {3, {"demo", "--length", "0"}, "truewatt demo: --length needs a number from 0 (excluded) to 10, got '0'"},
        {3, {"demo", "--length", "10.5"}, "--length needs a number from 0 (excluded) to 10, got '10.5'"},
        {3, {"demo", "--length", "nan"}, "--length needs a number"},
        {3, {"demo", "--count", "0"}, "--count needs an integer from 1 to 100, got '0'"},
        {3, {"demo", "--count", "-3"}, "--count needs an integer from 1 to 100, got '-3'"},
        {3, {"demo", "--count", "2x"}, "got '2x'"},
        {2, {"demo", "--frob"}, "truewatt demo: unknown option '--frob'\n(see 'truewatt demo --help')"},
        {2, {"demo", "--count"}, "option '--count' needs a value"},
        {2, {"demo", "-o"}, "option '-o' needs a value"},
        {3, {"demo", "--json=1"}, "--json"},
        {3, {"demo", "--backend", "gpu"}, "truewatt demo: --backend needs one of nvml|sim, got 'gpu'"},
        {3, {"demo", "--backend", "nvm"}, "--backend needs one of nvml|sim, got 'nvm'"},
        {3, {"demo", "--device", "65"}, "--device needs an integer from 0 to 64, got '65'"},
        {3, {"demo", "--device", "1.5"}, "--device needs an integer from 0 to 64, got '1.5'"},
        {2, {"demo", "--device"}, "option '--device' needs a value"},
        {3, {"demo", "--pair", "4"}, "truewatt demo: --pair needs A:B, got '4'"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        args a = {0};
        char *text = NULL;
        int first = 0;
        int rc = parse_captured(&a, cases[i].argc, cases[i].argv, &first, &text);
        if (rc != 2 || !strstr(text, cases[i].message)) {
            fprintf(stderr, "case %zu: rc %d, message:\n%s\nwant: %s\n", i, rc, text, cases[i].message);
            fail();
        }
        free(text);
        cli_opt_list_free(&a.items);
    }
}

static void usage(void **state)
{
    (void)state;
    args a = {0};
    char *argv[] = {"demo", "--count", "5", "--help", NULL};
    char *text = NULL;
    int first = 0;
    assert_int_equal(parse_captured(&a, 4, argv, &first, &text), -1);
    const char *want = "usage: truewatt demo [options] ARG\n"
                       "\n"
                       "A demo.\n"
                       "\n"
                       "  -o, --output FILE     where\n"
                       "  --mode M              how\n"
                       "                        second line (default fast)\n"
                       "  --length S            seconds (default 0.5)\n"
                       "  --count N             times (default 3)\n"
                       "  --item X              one item (repeatable)\n"
                       "  --json                JSON\n"
                       "  --backend nvml|sim    where (default nvml)\n"
                       "  --device N            GPU (default 0)\n"
                       "  --pair A:B            two\n"
                       "  --help                this text\n";
    assert_string_equal(text, want);
    free(text);
}

/* A table that takes one or two FILEs, then (stop_at_arg) a program with options of its own. */
static int parse_args_table(int argc, char **argv, int *first, bool stop, bool *json)
{
    const cli_opt opt[] = {{.name = "json", .type = CLI_OPT_FLAG, .help = "JSON", .out = json}};
    const cli_opts o = {.cmd = "pos",
                        .synopsis = "FILE [FILE]",
                        .opt = opt,
                        .n = 1,
                        .min_args = 1,
                        .max_args = stop ? CLI_OPTS_ANY : 2,
                        .args = "FILE",
                        .stop_at_arg = stop};
    return cli_opts_parse(&o, argc, argv, first);
}

static void arguments(void **state)
{
    (void)state;
    bool json = false;
    int first = 0;
    char *two[] = {"pos", "a", "--json", "b", NULL};
    assert_int_equal(parse_args_table(4, two, &first, false, &json), 0);
    assert_true(json);
    assert_string_equal(argv_at(two, first), "a");
    assert_string_equal(argv_at(two, first + 1), "b");
    /* options end at the program: its --json is its own */
    char *prog[] = {"pos", "app", "--json", NULL};
    json = false;
    assert_int_equal(parse_args_table(3, prog, &first, true, &json), 0);
    assert_false(json);
    assert_int_equal(first, 1);
    assert_string_equal(prog[2], "--json");
}

static void argument_errors(void **state)
{
    (void)state;
    struct {
        int argc;
        char *argv[5];
        const char *message;
    } cases[] = {
        {1, {"pos"}, "truewatt pos: missing FILE\n(see 'truewatt pos --help')"},
        {2, {"pos", "--json"}, "truewatt pos: missing FILE"},
        {4, {"pos", "a", "b", "c"}, "truewatt pos: unexpected argument 'c'"},
        {3, {"pos", "a", "--frob"}, "truewatt pos: unknown option '--frob'"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *path = tw_test_path(0, "opts-args.txt");
        fflush(stderr);
        int se = dup(2);
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        dup2(fileno(f), 2);
        bool json;
        int first;
        int rc = parse_args_table(cases[i].argc, cases[i].argv, &first, false, &json);
        fflush(stderr);
        dup2(se, 2);
        close(se);
        fclose(f);
        char *text = tw_test_slurp(path);
        unlink(path);
        assert_non_null(text);
        if (rc != 2 || !strstr(text, cases[i].message)) {
            fprintf(stderr, "case %zu: rc %d, message:\n%s\nwant: %s\n", i, rc, text, cases[i].message);
            fail();
        }
        free(text);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(defaults), cmocka_unit_test(values),    cmocka_unit_test(bad_input),
        cmocka_unit_test(usage),    cmocka_unit_test(arguments), cmocka_unit_test(argument_errors),
    };
    return tw_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
