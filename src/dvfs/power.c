/* Loader of Wang & Chu's Power CSVs and their join to the Performance rows (power.h). */
#include "dvfs/power.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "trace/csv.h"

/* uint64_t has no portable printf length: printed as unsigned long long */
#define LINE(cf) ((unsigned long long)(cf)->line)

enum { COL_APP, COL_CORE, COL_MEM, COL_POWER, NCOLS };
static const char *const column_names[NCOLS] = {"appName", "coreF", "memF", "power/W"};

typedef struct columns {
    size_t at[NCOLS];
    size_t nfields;
} columns;

/* The first field named `name` (a repeated name keeps its first column), or n when none. */
static size_t find(char **fields, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(fields[i], name)) return i;
    return n;
}

static tw_status map_columns(tw_csv_file *cf, size_t n, columns *c)
{
    char missing[128] = "";
    size_t used = 0;
    c->nfields = n;
    for (int k = 0; k < NCOLS; k++) {
        c->at[k] = find(cf->field, n, column_names[k]);
        if (c->at[k] == n) used += (size_t)snprintf(missing + used, sizeof missing - used, " %s", column_names[k]);
    }
    if (used) return tw_fail(TW_ENOTFOUND, "%s:%llu: the header lacks the column(s)%s", cf->path, LINE(cf), missing);
    return TW_OK;
}

/* The files repeat their header when runs were concatenated: a row that names the columns again. */
static bool is_header(char **fields, const columns *c)
{
    return !strcmp(fields[c->at[COL_APP]], column_names[COL_APP]) &&
           !strcmp(fields[c->at[COL_POWER]], column_names[COL_POWER]);
}

static tw_status parse_number(const tw_csv_file *cf, const columns *c, int col, locale_t loc, double *v)
{
    const char *s = cf->field[c->at[col]];
    if (tw_csv_number(s, loc, v) != TW_CSV_NUM_OK)
        return tw_fail(TW_EPARSE, "%s:%llu: %s is '%s', not a finite number", cf->path, LINE(cf), column_names[col], s);
    return TW_OK;
}

static tw_status parse_row(const tw_csv_file *cf, size_t n, const columns *c, locale_t loc, tw_dvfs_power_row *r)
{
    if (n != c->nfields)
        return tw_fail(TW_EPARSE, "%s:%llu: %zu fields, the header has %zu", cf->path, LINE(cf), n, c->nfields);
    memset(r, 0, sizeof *r);
    r->line = (unsigned long)cf->line;
    const char *app = cf->field[c->at[COL_APP]];
    if (!app[0]) return tw_fail(TW_EPARSE, "%s:%llu: empty appName", cf->path, LINE(cf));
    if (strlen(app) >= sizeof r->app)
        return tw_fail(TW_EPARSE, "%s:%llu: appName longer than %zu characters", cf->path, LINE(cf), sizeof r->app - 1);
    snprintf(r->app, sizeof r->app, "%s", app);
    tw_status st = parse_number(cf, c, COL_CORE, loc, &r->core_mhz);
    if (st == TW_OK) st = parse_number(cf, c, COL_MEM, loc, &r->mem_mhz);
    if (st == TW_OK) st = parse_number(cf, c, COL_POWER, loc, &r->power_w);
    if (st == TW_OK && !(r->power_w > 0))
        st = tw_fail(TW_EPARSE, "%s:%llu: power/W must be positive", cf->path, LINE(cf));
    if (st == TW_OK && !(r->core_mhz > 0 && r->mem_mhz > 0))
        st = tw_fail(TW_EPARSE, "%s:%llu: coreF and memF must be positive", cf->path, LINE(cf));
    return st;
}

static bool same_key(const char *app, double core_mhz, double mem_mhz, const tw_dvfs_power_row *r)
{
    return r->core_mhz == core_mhz && r->mem_mhz == mem_mhz && !strcmp(r->app, app);
}

/* A second measurement of one point would make the join ambiguous: refused, naming both lines. */
static tw_status check_unique(const tw_dvfs_power_data *d, const tw_dvfs_power_row *r, const char *path)
{
    for (size_t i = 0; i < d->n; i++)
        if (same_key(r->app, r->core_mhz, r->mem_mhz, &d->rows[i]))
            return tw_fail(TW_EPARSE, "%s:%lu: a second row for %s at %g/%g MHz (the first is line %lu)", path, r->line,
                           r->app, r->core_mhz, r->mem_mhz, d->rows[i].line);
    return TW_OK;
}

static tw_status append(tw_dvfs_power_data *d, size_t *cap, const tw_dvfs_power_row *r)
{
    if (d->n == *cap) {
        size_t ncap = *cap ? 2 * *cap : 256;
        tw_dvfs_power_row *p = realloc(d->rows, ncap * sizeof *p);
        if (!p) return tw_fail(TW_ENOMEM, "out of memory reading the power data");
        d->rows = p;
        *cap = ncap;
    }
    d->rows[d->n++] = *r;
    return TW_OK;
}

static tw_status read_rows(tw_csv_file *cf, tw_dvfs_power_data *d)
{
    size_t n = 0, cap = 0;
    columns c;
    tw_status st = tw_csv_read_header(cf, &n);
    if (st == TW_OK) st = map_columns(cf, n, &c);
    locale_t loc = tw_csv_c_locale();
    for (bool eof = false; st == TW_OK;) {
        if ((st = tw_csv_read(cf, false, &n, &eof)) != TW_OK || eof) break;
        if (n == c.nfields && is_header(cf->field, &c)) continue;
        tw_dvfs_power_row r;
        st = parse_row(cf, n, &c, loc, &r);
        if (st == TW_OK) st = check_unique(d, &r, cf->path);
        if (st == TW_OK) st = append(d, &cap, &r);
    }
    if (loc) freelocale(loc);
    if (st == TW_OK && !d->n) st = tw_fail(TW_EEMPTY, "%s: a header but no rows", cf->path);
    return st;
}

tw_status tw_dvfs_power_load(const char *path, tw_dvfs_power_data *out)
{
    memset(out, 0, sizeof *out);
    tw_csv_file cf;
    tw_status st = tw_csv_open(&cf, path);
    if (st != TW_OK) return st;
    tw_dvfs_power_data d = {0};
    st = read_rows(&cf, &d);
    tw_csv_close(&cf);
    if (st != TW_OK) {
        tw_dvfs_power_free(&d);
        return st;
    }
    *out = d;
    return TW_OK;
}

void tw_dvfs_power_free(tw_dvfs_power_data *d)
{
    free(d->rows);
    d->rows = NULL;
    d->n = 0;
}

/* ---------------------------------------------------------------- join */

static size_t find_power(const tw_dvfs_power_data *p, const tw_dvfs_row *r)
{
    for (size_t j = 0; j < p->n; j++)
        if (same_key(r->app, r->core_mhz, r->mem_mhz, &p->rows[j])) return j;
    return p->n;
}

/* Power rows no performance row claimed: the first is named, all are counted. */
static tw_status check_all_used(const tw_dvfs_power_data *power, const size_t *used_by, const char *power_name,
                                const char *perf_name)
{
    size_t first = power->n, count = 0;
    for (size_t j = 0; j < power->n; j++)
        if (!used_by[j] && count++ == 0) first = j;
    if (!count) return TW_OK;
    const tw_dvfs_power_row *r = &power->rows[first];
    return tw_fail(TW_EPARSE, "%s:%lu: no row of %s for %s at %g/%g MHz (%zu power row(s) unmatched)", power_name,
                   r->line, perf_name, r->app, r->core_mhz, r->mem_mhz, count);
}

tw_status tw_dvfs_power_join(const tw_dvfs_data *perf, const char *perf_name, const tw_dvfs_power_data *power,
                             const char *power_name, double *power_w)
{
    size_t *used_by = calloc(power->n ? power->n : 1, sizeof *used_by); /* 1 + the performance row, 0: none */
    if (!used_by) return tw_fail(TW_ENOMEM, "out of memory joining the power data");
    size_t first = perf->n, count = 0;
    tw_status st = TW_OK;
    for (size_t i = 0; st == TW_OK && i < perf->n; i++) {
        const tw_dvfs_row *r = &perf->rows[i];
        size_t j = find_power(power, r);
        if (j == power->n) {
            if (count++ == 0) first = i;
        } else if (used_by[j]) {
            st = tw_fail(TW_EPARSE, "%s:%lu: a second row for %s at %g/%g MHz (the first is line %lu)", perf_name,
                         r->line, r->app, r->core_mhz, r->mem_mhz, perf->rows[used_by[j] - 1].line);
        } else {
            used_by[j] = i + 1;
            power_w[i] = power->rows[j].power_w;
        }
    }
    if (st == TW_OK && count) {
        const tw_dvfs_row *r = &perf->rows[first];
        st = tw_fail(TW_EPARSE, "%s:%lu: no row of %s for %s at %g/%g MHz (%zu performance row(s) unmatched)",
                     perf_name, r->line, power_name, r->app, r->core_mhz, r->mem_mhz, count);
    }
    if (st == TW_OK) st = check_all_used(power, used_by, power_name, perf_name);
    free(used_by);
    return st;
}
