/* truewatt dvfs clocks: the GPU's current and maximum clocks, the clock event
 * reasons and the supported (memory, graphics) clock pairs, through NVML.
 * Read only: nothing on the card changes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/dvfs_cmds.h"
#include "cli/opts.h"
#include "core/error.h"
#include "core/json.h"

#define CMD "dvfs clocks"

typedef struct clocks_args {
    const char *device;
    bool json;
} clocks_args;

/* The options, declared once (cli/opts.h). */
static int parse(int argc, char **argv, clocks_args *a)
{
    const cli_opt opt[] = {
        {.name = "device", .type = CLI_OPT_STRING, .arg = "N|UUID", .help = "the GPU (default 0)", .out = &a->device},
        {.name = "json",
         .type = CLI_OPT_FLAG,
         .help = "the numbers as JSON on stdout, every graphics clock listed",
         .out = &a->json},
    };
    const cli_opts o = {
        .cmd = CMD,
        .synopsis = "[--device N|UUID] [--json]",
        .about = "The GPU's clocks through NVML: current and maximum SM and memory clocks, the clock event\n"
                 "reasons (why the clocks are below the maximum: idle, power cap, thermal, ...) and the supported\n"
                 "(memory, graphics) clock pairs, per memory clock as a count and a range when evenly spaced.\n"
                 "Read only: nothing on the card changes. `truewatt dvfs lock` locks clocks.",
        .opt = opt,
        .n = CLI_OPTS_N(opt),
        .after = "NVML is libnvidia-ml.so.1, or the library $TW_NVML_LIBRARY names.\n"};
    int first;
    return cli_opts_parse(&o, argc, argv, &first);
}

/* What was read; a part that could not be has its message instead. */
typedef struct clocks_info {
    tw_clock_now now;
    tw_status now_st;
    char now_why[512];
    unsigned max_sm, max_mem;
    tw_status max_st;
    char max_why[512];
    tw_clock_table table;
    tw_status table_st;
    char table_why[512];
} clocks_info;

static void read_all(tw_clocks *c, clocks_info *in)
{
    memset(in, 0, sizeof *in);
    in->now.size = sizeof in->now;
    in->now_st = tw_clocks_current(c, &in->now);
    if (in->now_st != TW_OK || !in->now.have_sm || !in->now.have_mem || !in->now.have_reasons)
        snprintf(in->now_why, sizeof in->now_why, "%s", tw_last_error());
    if ((in->max_st = tw_clocks_max(c, &in->max_sm, &in->max_mem)) != TW_OK)
        snprintf(in->max_why, sizeof in->max_why, "%s", tw_last_error());
    if ((in->table_st = tw_clocks_supported(c, &in->table)) != TW_OK)
        snprintf(in->table_why, sizeof in->table_why, "%s", tw_last_error());
}

static void print_mhz(const char *label, bool have, unsigned mhz)
{
    if (have)
        printf("%s %u MHz", label, mhz);
    else
        printf("%s -", label);
}

static void print_text(tw_clocks *c, const clocks_info *in)
{
    printf("device %u: %s (%s)\n", tw_clocks_index(c), tw_clocks_name(c), tw_clocks_uuid(c));
    const tw_clock_now *n = &in->now;
    printf("current: ");
    print_mhz("SM", n->have_sm, n->sm_mhz);
    print_mhz(", memory", n->have_mem, n->mem_mhz);
    printf("\n");
    if (in->max_st == TW_OK)
        printf("max:     SM %u MHz, memory %u MHz\n", in->max_sm, in->max_mem);
    else
        printf("max:     unavailable: %s\n", in->max_why);
    if (n->have_reasons) {
        char names[512];
        tw_clock_reasons_format(n->reasons, names, sizeof names);
        printf("clock event reasons: %s (0x%llx)\n", names, n->reasons);
    } else {
        printf("clock event reasons: unavailable\n");
    }
    if ((!n->have_sm || !n->have_mem || !n->have_reasons) && in->now_why[0])
        printf("  (current clocks: %s)\n", in->now_why);
    if (in->table_st != TW_OK) {
        printf("supported clocks: unavailable: %s\n", in->table_why);
        return;
    }
    size_t pairs = 0;
    for (size_t i = 0; i < in->table.nmem; i++)
        pairs += in->table.mem[i].n;
    printf("supported clock pairs: %zu (%zu memory clock%s)\n", pairs, in->table.nmem, in->table.nmem == 1 ? "" : "s");
    for (size_t i = 0; i < in->table.nmem; i++) {
        const tw_clock_mem *m = &in->table.mem[i];
        char list[4096];
        tw_clock_list_format(m->gfx_mhz, m->n, list, sizeof list);
        printf("  memory %u MHz: graphics %s\n", m->mem_mhz, list);
    }
}

static void print_json(tw_clocks *c, const clocks_info *in)
{
    json j;
    json_init(&j, stdout);
    json_begin_object(&j);
    json_key(&j, "device");
    json_begin_object(&j);
    json_kv_uint(&j, "index", tw_clocks_index(c));
    json_kv_string(&j, "uuid", tw_clocks_uuid(c));
    json_kv_string(&j, "name", tw_clocks_name(c));
    json_end_object(&j);
    const tw_clock_now *n = &in->now;
    json_key(&j, "current");
    json_begin_object(&j);
    if (n->have_sm) json_kv_uint(&j, "sm_mhz", n->sm_mhz);
    if (n->have_mem) json_kv_uint(&j, "mem_mhz", n->mem_mhz);
    if (in->now_why[0]) json_kv_string(&j, "error", in->now_why);
    json_end_object(&j);
    json_key(&j, "max");
    json_begin_object(&j);
    if (in->max_st == TW_OK) {
        json_kv_uint(&j, "sm_mhz", in->max_sm);
        json_kv_uint(&j, "mem_mhz", in->max_mem);
    } else {
        json_kv_string(&j, "error", in->max_why);
    }
    json_end_object(&j);
    json_key(&j, "event_reasons");
    json_begin_object(&j);
    if (n->have_reasons) {
        json_kv_uint(&j, "bits", n->reasons);
        json_key(&j, "names");
        json_begin_array(&j);
        for (int b = 0; b < 64; b++) {
            unsigned long long bit = 1ULL << b;
            if (!(n->reasons & bit)) continue;
            const char *name = tw_clock_reason_name(bit);
            if (name) {
                json_string(&j, name);
            } else {
                char hex[32];
                snprintf(hex, sizeof hex, "0x%llx", bit);
                json_string(&j, hex);
            }
        }
        json_end_array(&j);
    }
    json_end_object(&j);
    json_key(&j, "supported");
    if (in->table_st == TW_OK) {
        json_begin_array(&j);
        for (size_t i = 0; i < in->table.nmem; i++) {
            const tw_clock_mem *m = &in->table.mem[i];
            json_begin_object(&j);
            json_kv_uint(&j, "mem_mhz", m->mem_mhz);
            json_key(&j, "graphics_mhz");
            json_begin_array(&j);
            for (size_t g = 0; g < m->n; g++)
                json_uint(&j, m->gfx_mhz[g]);
            json_end_array(&j);
            json_end_object(&j);
        }
        json_end_array(&j);
    } else {
        json_begin_object(&j);
        json_kv_string(&j, "error", in->table_why);
        json_end_object(&j);
    }
    json_end_object(&j);
    json_finish(&j);
}

int tw_cmd_dvfs_clocks(int argc, char **argv)
{
    clocks_args a = {0};
    int rc = parse(argc, argv, &a);
    if (rc) return rc < 0 ? 0 : rc;
    tw_clocks *c = NULL;
    tw_status st = tw_clocks_open(NULL, a.device, &c);
    if (st != TW_OK) return cli_fail(CMD, st);
    clocks_info in;
    read_all(c, &in);
    if (a.json)
        print_json(c, &in);
    else
        print_text(c, &in);
    tw_clock_table_free(&in.table);
    tw_clocks_close(c);
    return 0;
}
