/* `truewatt dvfs clocks` as a library call (tw_clocks_report, truewatt.h):
 * the GPU's current and maximum clocks, the clock event reasons and the
 * supported (memory, graphics) clock pairs, through NVML. Read only:
 * nothing on the card changes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/json.h"

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

static void print_mhz(FILE *out, const char *label, bool have, unsigned mhz)
{
    if (have)
        fprintf(out, "%s %u MHz", label, mhz);
    else
        fprintf(out, "%s -", label);
}

static void print_text(FILE *out, tw_clocks *c, const clocks_info *in)
{
    fprintf(out, "device %u: %s (%s)\n", tw_clocks_index(c), tw_clocks_name(c), tw_clocks_uuid(c));
    const tw_clock_now *n = &in->now;
    fprintf(out, "current: ");
    print_mhz(out, "SM", n->have_sm, n->sm_mhz);
    print_mhz(out, ", memory", n->have_mem, n->mem_mhz);
    fprintf(out, "\n");
    if (in->max_st == TW_OK)
        fprintf(out, "max:     SM %u MHz, memory %u MHz\n", in->max_sm, in->max_mem);
    else
        fprintf(out, "max:     unavailable: %s\n", in->max_why);
    if (n->have_reasons) {
        char names[512];
        tw_clock_reasons_format(n->reasons, names, sizeof names);
        fprintf(out, "clock event reasons: %s (0x%llx)\n", names, n->reasons);
    } else {
        fprintf(out, "clock event reasons: unavailable\n");
    }
    if ((!n->have_sm || !n->have_mem || !n->have_reasons) && in->now_why[0])
        fprintf(out, "  (current clocks: %s)\n", in->now_why);
    if (in->table_st != TW_OK) {
        fprintf(out, "supported clocks: unavailable: %s\n", in->table_why);
        return;
    }
    size_t pairs = 0;
    for (size_t i = 0; i < in->table.nmem; i++)
        pairs += in->table.mem[i].n;
    fprintf(out, "supported clock pairs: %zu (%zu memory clock%s)\n", pairs, in->table.nmem,
            in->table.nmem == 1 ? "" : "s");
    for (size_t i = 0; i < in->table.nmem; i++) {
        const tw_clock_mem *m = &in->table.mem[i];
        char list[4096];
        tw_clock_list_format(m->gfx_mhz, m->n, list, sizeof list);
        fprintf(out, "  memory %u MHz: graphics %s\n", m->mem_mhz, list);
    }
}

static void print_json(FILE *out, tw_clocks *c, const clocks_info *in)
{
    json j;
    json_init(&j, out);
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

tw_status tw_clocks_report(tw_clocks *c, bool as_json, FILE *out)
{
    if (!c || !out) return tw_fail(TW_EINVAL, "tw_clocks_report: NULL argument");
    clocks_info in;
    read_all(c, &in);
    if (as_json)
        print_json(out, c, &in);
    else
        print_text(out, c, &in);
    tw_clock_table_free(&in.table);
    return ferror(out) ? tw_fail(TW_EIO, "cannot write the clocks' report") : TW_OK;
}
