/* Arafa et al. 2020's Table I, as transcribed in data/, for the comparison
 * column of `truewatt isa`. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench/isa_run.h"
#include "core/error.h"
#include "trace/csv.h"

static int category_of(const char *group)
{
    static const char *const g[] = {"int", "logic", "fp32", "fp64", "fp16", "multi-precision", "special", "bit"};
    for (int i = 0; i < 8; i++)
        if (!strcmp(group, g[i])) return i + 1;
    return 0;
}

typedef struct paper_cols {
    size_t o0, o3; /* volta_mtsm_nonopt_uj, volta_mtsm_opt_uj */
} paper_cols;

static tw_status read_header(tw_csv_file *cf, paper_cols *c)
{
    size_t n = 0;
    tw_status st = tw_csv_read_header(cf, &n);
    if (st != TW_OK) return st;
    c->o0 = c->o3 = (size_t)-1;
    for (size_t i = 0; i < n; i++) {
        if (!strcmp(cf->field[i], "volta_mtsm_nonopt_uj")) c->o0 = i;
        if (!strcmp(cf->field[i], "volta_mtsm_opt_uj")) c->o3 = i;
    }
    if (c->o0 == (size_t)-1 || c->o3 == (size_t)-1)
        return tw_fail(TW_EPARSE, "%s:%llu: the header lacks volta_mtsm_nonopt_uj or volta_mtsm_opt_uj", cf->path,
                       (unsigned long long)cf->line);
    return TW_OK;
}

/* One row of the table: its value for every result row it is the paper's row of. */
static tw_status take_row(const tw_csv_file *cf, size_t n, const paper_cols *c, locale_t loc, const tw_isa_results *r,
                          double *out)
{
    size_t need = (c->o0 > c->o3 ? c->o0 : c->o3) + 1;
    if (n < need || n < 3)
        return tw_fail(TW_EPARSE, "%s:%llu: %zu fields, the header's columns need %zu", cf->path,
                       (unsigned long long)cf->line, n, need < 3 ? 3 : need);
    double cat;
    if (tw_csv_number(cf->field[0], loc, &cat) != TW_CSV_NUM_OK)
        return tw_fail(TW_EPARSE, "%s:%llu: category '%.40s' is not a number", cf->path, (unsigned long long)cf->line,
                       cf->field[0]);
    for (size_t i = 0; i < r->n; i++) {
        const tw_isa_entry *e = r->rows[i].e;
        size_t col = r->rows[i].opt_level == 0 ? c->o0 : c->o3;
        if (!e->paper_row || cat != category_of(e->group) || strcmp(cf->field[2], e->paper_row)) continue;
        double x;
        switch (tw_csv_number(cf->field[col], loc, &x)) {
        case TW_CSV_NUM_OK:
            out[i] = x;
            break;
        case TW_CSV_NUM_ABSENT: /* the paper has none */
            break;
        default:
            return tw_fail(TW_EPARSE, "%s:%llu: '%.40s' is not a number", cf->path, (unsigned long long)cf->line,
                           cf->field[col]);
        }
    }
    return TW_OK;
}

tw_status tw_isa_paper_values(const char *csv_path, const tw_isa_results *r, double *out)
{
    for (size_t i = 0; i < r->n; i++)
        out[i] = NAN;
    tw_csv_file cf;
    tw_status st = tw_csv_open(&cf, csv_path);
    if (st != TW_OK) return st;
    locale_t loc = tw_csv_c_locale();
    paper_cols c;
    st = read_header(&cf, &c);
    for (bool eof = false; st == TW_OK && !eof;) {
        size_t n = 0;
        st = tw_csv_read(&cf, true, &n, &eof);
        if (st == TW_OK && !eof) st = take_row(&cf, n, &c, loc, r, out);
    }
    if (loc) freelocale(loc);
    tw_csv_close(&cf);
    return st;
}
