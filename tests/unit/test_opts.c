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
    const char *out, *mode;
    double len_s;
    uint64_t count;
    bool json;
    cli_opt_list items;
} args;

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
         .min_excl = true},
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
    const cli_opts o = {.cmd = "demo", .synopsis = "[options] ARG", .about = "A demo.", .opt = opt, .n = 6};
    return cli_opts_parse(&o, argc, argv, first);
}

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
    assert_int_equal(a.items.n, 0);
}

static void values(void **state)
{
    (void)state;
    args a = {0};
    char *argv[] = {"demo",   "-o", "x.csv",  "--mode=slow", "--length", "2.5", "--count", "100",
                    "--item", "a",  "--json", "--item=b",    "pos1",     "--",  "--pos2",  NULL};
    int first = 0;
    assert_int_equal(parse(&a, 15, argv, &first), 0);
    assert_string_equal(a.out, "x.csv");
    assert_string_equal(a.mode, "slow");
    assert_true(a.len_s == 2.5);
    assert_int_equal(a.count, 100);
    assert_true(a.json);
    assert_int_equal(a.items.n, 2);
    assert_string_equal(a.items.v[0], "a");
    assert_string_equal(a.items.v[1], "b");
    /* getopt_long moves the arguments after the options */
    assert_int_equal(first, 13);
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
                       "  --help                this text\n";
    assert_string_equal(text, want);
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(defaults),
        cmocka_unit_test(values),
        cmocka_unit_test(bad_input),
        cmocka_unit_test(usage),
    };
    return tw_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
