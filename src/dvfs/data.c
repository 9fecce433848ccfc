/* Loader of Wang & Chu's Performance CSVs (data.h). */
#include "dvfs/data.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "trace/csv.h"

#define MAX_FIELDS 256

/* The numeric columns the model needs, and where each goes in a row. */
static const struct {
    const char *name;
    size_t offset;
} numeric[] = {
    {"coreF", offsetof(tw_dvfs_row, core_mhz)},
    {"memF", offsetof(tw_dvfs_row, mem_mhz)},
    {"time/ms", offsetof(tw_dvfs_row, time_ms)},
    {"warps", offsetof(tw_dvfs_row, warps)},
    {"achieved_occupancy", offsetof(tw_dvfs_row, occupancy)},
    {"l2_read_transactions", offsetof(tw_dvfs_row, l2_read)},
    {"l2_write_transactions", offsetof(tw_dvfs_row, l2_write)},
    {"dram_read_transactions", offsetof(tw_dvfs_row, dram_read)},
    {"dram_write_transactions", offsetof(tw_dvfs_row, dram_write)},
    {"shared_load_transactions", offsetof(tw_dvfs_row, shared_load)},
    {"shared_store_transactions", offsetof(tw_dvfs_row, shared_store)},
    {"tex_cache_transactions", offsetof(tw_dvfs_row, tex_cache)},
    {"inst_fp_64", offsetof(tw_dvfs_row, inst_fp_64)},
    {"cf_executed", offsetof(tw_dvfs_row, cf_executed)},
    {"inst_per_warp", offsetof(tw_dvfs_row, inst_per_warp)},
};
#define NNUMERIC (sizeof numeric / sizeof numeric[0])

typedef struct columns {
    int app, kernel;
    int num[NNUMERIC];
    size_t nfields;
} columns;

/* The fields of a line, split in place (trace/csv.h); 0 on malformed quoting. May exceed cap. */
static size_t split(char *line, char **fields, size_t cap)
{
    size_t n = 0;
    return tw_csv_split(line, fields, cap, &n) ? n : 0;
}

/* The first field named `name`, -1 if none: a repeated name keeps its first column. */
static int find(char **fields, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(fields[i], name)) return (int)i;
    return -1;
}

static tw_status map_columns(char **fields, size_t n, const char *name, columns *c)
{
    char missing[512] = "";
    size_t used = 0;
    c->nfields = n;
    c->app = find(fields, n, "appName");
    c->kernel = find(fields, n, "kernel");
    if (c->app < 0) used += (size_t)snprintf(missing + used, sizeof missing - used, " appName");
    if (c->kernel < 0) used += (size_t)snprintf(missing + used, sizeof missing - used, " kernel");
    for (size_t k = 0; k < NNUMERIC; k++) {
        c->num[k] = find(fields, n, numeric[k].name);
        if (c->num[k] < 0 && used < sizeof missing)
            used += (size_t)snprintf(missing + used, sizeof missing - used, " %s", numeric[k].name);
    }
    if (used) return tw_fail(TW_ENOTFOUND, "%s:1: the header lacks the column(s)%s", name, missing);
    return TW_OK;
}

static tw_status parse_row(char **fields, size_t n, const columns *c, locale_t loc, const char *name,
                           unsigned long line, tw_dvfs_row *r)
{
    if (n != c->nfields) return tw_fail(TW_EPARSE, "%s:%lu: %zu fields, the header has %zu", name, line, n, c->nfields);
    memset(r, 0, sizeof *r);
    r->line = line;
    snprintf(r->app, sizeof r->app, "%s", fields[c->app]);
    snprintf(r->kernel, sizeof r->kernel, "%s", fields[c->kernel]);
    if (!r->app[0]) return tw_fail(TW_EPARSE, "%s:%lu: empty appName", name, line);
    for (size_t k = 0; k < NNUMERIC; k++) {
        const char *s = fields[c->num[k]];
        if (tw_csv_number(s, loc, (double *)((char *)r + numeric[k].offset)) != TW_CSV_NUM_OK)
            return tw_fail(TW_EPARSE, "%s:%lu: %s is '%s', not a finite number", name, line, numeric[k].name, s);
    }
    /* clocks and time divide the model's terms: 0 or below is no measurement (issue 19) */
    if (!(r->core_mhz > 0 && r->mem_mhz > 0))
        return tw_fail(TW_EPARSE, "%s:%lu: coreF and memF must be positive MHz, got %g and %g", name, line, r->core_mhz,
                       r->mem_mhz);
    if (!(r->time_ms > 0))
        return tw_fail(TW_EPARSE, "%s:%lu: time/ms must be positive, got %g", name, line, r->time_ms);
    if (!(r->warps > 0)) return tw_fail(TW_EPARSE, "%s:%lu: warps must be positive", name, line);
    if (!(r->occupancy > 0 && r->occupancy <= 1))
        return tw_fail(TW_EPARSE, "%s:%lu: achieved_occupancy must be in (0, 1]", name, line);
    return TW_OK;
}

static tw_status append(tw_dvfs_data *d, size_t *cap, const tw_dvfs_row *r)
{
    if (d->n == *cap) {
        size_t ncap = *cap ? 2 * *cap : 256;
        tw_dvfs_row *p = realloc(d->rows, ncap * sizeof *p);
        if (!p) return tw_fail(TW_ENOMEM, "out of memory reading the DVFS data");
        d->rows = p;
        *cap = ncap;
    }
    d->rows[d->n++] = *r;
    return TW_OK;
}

static tw_status read_lines(FILE *f, const char *name, tw_dvfs_data *d)
{
    char *line = NULL, *header = NULL, *fields[MAX_FIELDS];
    size_t len = 0, cap = 0;
    unsigned long lineno = 0;
    columns c;
    locale_t loc = tw_csv_c_locale();
    tw_status st = TW_OK;
    while (st == TW_OK && getline(&line, &len, f) != -1) {
        lineno++;
        line[strcspn(line, "\r\n")] = '\0';
        if (!line[0] || (header && !strcmp(line, header))) continue;
        if (line[0] == '#') continue; /* a comment: the provenance line of a result file, dvfs rows' own */
        if (!header) {
            if (!(header = strdup(line))) st = tw_fail(TW_ENOMEM, "out of memory reading %s", name);
            size_t n = st == TW_OK ? split(line, fields, MAX_FIELDS) : 0;
            if (n > MAX_FIELDS) st = tw_fail(TW_EPARSE, "%s:1: more than %d columns", name, MAX_FIELDS);
            if (st == TW_OK) st = map_columns(fields, n, name, &c);
            continue;
        }
        tw_dvfs_row r;
        st = parse_row(fields, split(line, fields, MAX_FIELDS), &c, loc, name, lineno, &r);
        if (st == TW_OK) st = append(d, &cap, &r);
    }
    if (st == TW_OK && ferror(f)) st = tw_fail(TW_EIO, "%s: read error", name);
    if (st == TW_OK && !header) st = tw_fail(TW_EEMPTY, "%s: empty file, no header", name);
    if (st == TW_OK && !d->n) st = tw_fail(TW_EEMPTY, "%s: a header but no rows", name);
    free(line);
    free(header);
    if (loc) freelocale(loc);
    return st;
}

tw_status tw_dvfs_read(FILE *f, const char *name, tw_dvfs_data *out)
{
    tw_dvfs_data d = {0};
    tw_status st = read_lines(f, name, &d);
    if (st != TW_OK) {
        tw_dvfs_data_free(&d);
        memset(out, 0, sizeof *out);
        return st;
    }
    *out = d;
    return TW_OK;
}

tw_status tw_dvfs_load(const char *path, tw_dvfs_data *out)
{
    memset(out, 0, sizeof *out);
    FILE *f = fopen(path, "r");
    if (!f) return tw_fail(TW_EIO, "%s: cannot open: %s", path, strerror(errno));
    tw_status st = tw_dvfs_read(f, path, out);
    fclose(f);
    return st;
}

void tw_dvfs_data_free(tw_dvfs_data *d)
{
    free(d->rows);
    d->rows = NULL;
    d->n = 0;
}
