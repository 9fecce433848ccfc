/* Model rows from measured times and Nsight Compute counters (rows.h). */
#include "dvfs/rows.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "trace/csv.h"

enum {
    M_OCC,
    M_L2_READ,
    M_L2_WRITE,
    M_L2_ATOM,
    M_L2_RED,
    M_DRAM_READ,
    M_DRAM_WRITE,
    M_SHARED_LD,
    M_SHARED_ST,
    M_TEX,
    M_FP64,
    M_CBU,
    M_ADU,
    M_INST,
    M_TIME,
    NMETRICS
};

/* The one table of metrics: Hopper's names for the nvprof counters of the
 * authors' data (dvfs-model.md §4.3), and the kernel's duration for a check
 * against the timed mean. */
static const char *const metrics[NMETRICS] = {
    [M_OCC] = "sm__warps_active.avg.pct_of_peak_sustained_active", /* achieved_occupancy, in % */
    /* The L2 counts are of the SMs' requests (srcunit_tex): on the H100 the
     * plain lts__t_sectors_op_* also count what one L2 partition fetches from
     * the other for the same request - vectorAdd's reads and writes counted
     * 1.5x the bytes it moves (results/h100/dvfs, first run). */
    [M_L2_READ] = "lts__t_sectors_srcunit_tex_op_read.sum",                 /* l2_read_transactions */
    [M_L2_WRITE] = "lts__t_sectors_srcunit_tex_op_write.sum",               /* l2_write_transactions */
    [M_L2_ATOM] = "lts__t_sectors_srcunit_tex_op_atom.sum",                 /* counted in both, as nvprof did */
    [M_L2_RED] = "lts__t_sectors_srcunit_tex_op_red.sum",                   /* counted in both, as nvprof did */
    [M_DRAM_READ] = "dram__sectors_read.sum",                               /* dram_read_transactions */
    [M_DRAM_WRITE] = "dram__sectors_write.sum",                             /* dram_write_transactions */
    [M_SHARED_LD] = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", /* shared_load_transactions */
    [M_SHARED_ST] = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum", /* shared_store_transactions */
    [M_TEX] = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",             /* tex_cache_transactions */
    [M_FP64] = "smsp__sass_thread_inst_executed_op_fp64_pred_on.sum",       /* inst_fp_64 */
    [M_CBU] = "smsp__inst_executed_pipe_cbu.sum",                           /* cf_executed = cbu + adu */
    [M_ADU] = "smsp__inst_executed_pipe_adu.sum",
    [M_INST] = "smsp__inst_executed.sum", /* inst_per_warp = this / warps */
    [M_TIME] = "gpu__time_duration.sum",  /* ns */
};

const char *const *tw_dvfs_rows_metrics(size_t *n)
{
    if (n) *n = NMETRICS;
    return metrics;
}

void tw_dvfs_rows_metrics_arg(char *buf, size_t cap) { tw_ncu_metrics_arg(metrics, NMETRICS, buf, cap); }

/* ---------------------------------------------------------------- the timing CSV */

enum { T_KERNEL, T_LAUNCHES, T_GX, T_GY, T_GZ, T_BX, T_BY, T_BZ, T_MEAN, T_SD, T_MIN, NTCOLS, T_REQUIRED = T_SD };
static const char *const tcols[NTCOLS] = {"kernel",  "launches", "grid_x",       "grid_y",     "grid_z",     "block_x",
                                          "block_y", "block_z",  "time_ms_mean", "time_ms_sd", "time_ms_min"};
#define MAX_TFIELDS 64

typedef struct tparser {
    const char *name;
    int col[NTCOLS];
    size_t nfields, cap;
    locale_t loc;
} tparser;

static tw_status times_header(tparser *p, char **fields, size_t n)
{
    char missing[256] = "";
    size_t used = 0;
    p->nfields = n;
    for (int c = 0; c < NTCOLS; c++) {
        p->col[c] = -1;
        for (size_t i = 0; i < n && i < MAX_TFIELDS && p->col[c] < 0; i++)
            if (!strcmp(fields[i], tcols[c])) p->col[c] = (int)i;
        if (p->col[c] < 0 && c < T_REQUIRED && used < sizeof missing)
            used += (size_t)snprintf(missing + used, sizeof missing - used, " %s", tcols[c]);
    }
    if (used) return tw_fail(TW_ENOTFOUND, "%s:1: the header lacks the column(s)%s", p->name, missing);
    return TW_OK;
}

/* A whole number from 1 to max. */
static bool whole(double v, double max) { return v >= 1 && v <= max && v == floor(v); }

static tw_status times_row(tparser *p, char **fields, size_t n, unsigned long line, tw_dvfs_times *t)
{
    if (n != p->nfields)
        return tw_fail(TW_EPARSE, "%s:%lu: %zu fields, the header has %zu", p->name, line, n, p->nfields);
    tw_dvfs_timing r;
    memset(&r, 0, sizeof r);
    r.line = line;
    const char *k = fields[p->col[T_KERNEL]];
    if (!k[0]) return tw_fail(TW_EPARSE, "%s:%lu: empty kernel name", p->name, line);
    if (strlen(k) >= sizeof r.kernel) return tw_fail(TW_EPARSE, "%s:%lu: kernel name too long", p->name, line);
    snprintf(r.kernel, sizeof r.kernel, "%s", k);
    double v[NTCOLS];
    for (int c = T_LAUNCHES; c < NTCOLS; c++) {
        v[c] = NAN;
        if (p->col[c] < 0) continue;
        const char *s = fields[p->col[c]];
        tw_csv_num res = tw_csv_number(s, p->loc, &v[c]);
        if (res == TW_CSV_NUM_OK || (res == TW_CSV_NUM_ABSENT && c >= T_REQUIRED)) {
            if (res == TW_CSV_NUM_ABSENT) v[c] = NAN;
            continue;
        }
        return tw_fail(TW_EPARSE, "%s:%lu: %s is '%s', not a finite number", p->name, line, tcols[c], s);
    }
    if (!whole(v[T_LAUNCHES], 1e12))
        return tw_fail(TW_EPARSE, "%s:%lu: launches must be a whole number >= 1", p->name, line);
    for (int d = 0; d < 3; d++) {
        if (!whole(v[T_GX + d], 4294967295.0) || !whole(v[T_BX + d], 4294967295.0))
            return tw_fail(TW_EPARSE, "%s:%lu: grid and block sizes must be whole numbers >= 1", p->name, line);
        r.grid[d] = (unsigned)v[T_GX + d];
        r.block[d] = (unsigned)v[T_BX + d];
    }
    if (!(v[T_MEAN] > 0)) return tw_fail(TW_EPARSE, "%s:%lu: time_ms_mean must be positive", p->name, line);
    r.launches = v[T_LAUNCHES];
    r.mean_ms = v[T_MEAN];
    r.sd_ms = v[T_SD];
    r.min_ms = v[T_MIN];
    for (size_t i = 0; i < t->n; i++)
        if (!strcmp(t->t[i].kernel, r.kernel))
            return tw_fail(TW_EPARSE, "%s:%lu: kernel '%s' again (first on line %lu)", p->name, line, r.kernel,
                           t->t[i].line);
    if (t->n == p->cap) {
        size_t cap = p->cap ? 2 * p->cap : 16;
        tw_dvfs_timing *q = realloc(t->t, cap * sizeof *q);
        if (!q) return tw_fail(TW_ENOMEM, "out of memory reading %s", p->name);
        t->t = q;
        p->cap = cap;
    }
    t->t[t->n++] = r;
    return TW_OK;
}

static tw_status times_lines(FILE *f, tparser *p, tw_dvfs_times *t)
{
    char *line = NULL, *header = NULL, *fields[MAX_TFIELDS];
    size_t len = 0;
    unsigned long lineno = 0;
    tw_status st = TW_OK;
    while (st == TW_OK && getline(&line, &len, f) != -1) {
        lineno++;
        line[strcspn(line, "\r\n")] = '\0';
        const char *s = line + strspn(line, " \t");
        if (!*s || *s == '#' || (header && !strcmp(line, header))) continue;
        bool first = !header;
        if (first && !(header = strdup(line))) st = tw_fail(TW_ENOMEM, "out of memory reading %s", p->name);
        size_t n = 0;
        if (st == TW_OK && !tw_csv_split(line, fields, MAX_TFIELDS, &n))
            st = tw_fail(TW_EPARSE, "%s:%lu: malformed quoting", p->name, lineno);
        if (st == TW_OK && n > MAX_TFIELDS)
            st = tw_fail(TW_EPARSE, "%s:%lu: more than %d fields", p->name, lineno, MAX_TFIELDS);
        if (st == TW_OK) st = first ? times_header(p, fields, n) : times_row(p, fields, n, lineno, t);
    }
    if (st == TW_OK && ferror(f)) st = tw_fail(TW_EIO, "%s: read error", p->name);
    if (st == TW_OK && !header) st = tw_fail(TW_EEMPTY, "%s: empty file, no header", p->name);
    if (st == TW_OK && !t->n) st = tw_fail(TW_EEMPTY, "%s: a header but no rows", p->name);
    free(line);
    free(header);
    return st;
}

tw_status tw_dvfs_times_read(FILE *f, const char *name, tw_dvfs_times *out)
{
    tw_dvfs_times t = {0};
    tparser p = {.name = name, .loc = tw_csv_c_locale()};
    tw_status st = times_lines(f, &p, &t);
    if (p.loc) freelocale(p.loc);
    if (st != TW_OK) tw_dvfs_times_free(&t);
    *out = t;
    return st;
}

tw_status tw_dvfs_times_load(const char *path, tw_dvfs_times *out)
{
    memset(out, 0, sizeof *out);
    FILE *f = fopen(path, "r");
    if (!f) return tw_fail(TW_EIO, "%s: cannot open: %s", path, strerror(errno));
    tw_status st = tw_dvfs_times_read(f, path, out);
    fclose(f);
    return st;
}

void tw_dvfs_times_free(tw_dvfs_times *t)
{
    free(t->t);
    t->t = NULL;
    t->n = 0;
}

/* ---------------------------------------------------------------- ncu's CSV */

typedef struct nparser {
    const char *name;
    tw_ncu_report *rep;
    size_t cap;
    char **fields; /* into the scratch line */
    size_t nfields, fcap;
    bool header;
    size_t ncols;
    long col_id, col_pid, col_name, col_block, col_grid, col_metric[NMETRICS];
    double scale[NMETRICS]; /* to ncu's base units, from the units row */
    locale_t loc;
} nparser;

/* Splits `line` in place into p->fields, which grow to hold every field (at most one more than its commas). */
static tw_status split_all(nparser *p, char *line, bool *ok)
{
    size_t most = 1, n = 0;
    for (const char *c = line; *c; c++)
        most += *c == ',';
    if (most > p->fcap) {
        char **v = realloc(p->fields, most * sizeof *v);
        if (!v) return tw_fail(TW_ENOMEM, "out of memory reading %s", p->name);
        p->fields = v;
        p->fcap = most;
    }
    *ok = tw_csv_split(line, p->fields, p->fcap, &n);
    p->nfields = *ok ? n : 0;
    return TW_OK;
}

static long field_index(const nparser *p, const char *name)
{
    for (size_t i = 0; i < p->nfields; i++)
        if (!strcmp(p->fields[i], name)) return (long)i;
    return -1;
}

/* The split fields as the raw page's header: false when they are not one. */
static bool take_header(nparser *p)
{
    long id = field_index(p, "ID"), name = field_index(p, "Kernel Name");
    if (id < 0 || name < 0) return false;
    p->col_id = id;
    p->col_name = name;
    p->col_pid = field_index(p, "Process ID");
    p->col_block = field_index(p, "Block Size");
    p->col_grid = field_index(p, "Grid Size");
    for (int m = 0; m < NMETRICS; m++) {
        p->col_metric[m] = field_index(p, metrics[m]);
        p->scale[m] = 1;
    }
    p->ncols = p->nfields;
    p->header = true;
    return true;
}

/* The factor from a unit ncu printed to its base unit: ns for times, the bare unit for counts. */
static double unit_factor(const char *u)
{
    static const struct {
        const char *unit;
        double factor;
    } times[] = {{"ns", 1},   {"nsecond", 1},   {"us", 1e3}, {"usecond", 1e3},
                 {"ms", 1e6}, {"msecond", 1e6}, {"s", 1e9},  {"second", 1e9}};
    for (size_t i = 0; i < sizeof times / sizeof times[0]; i++)
        if (!strcmp(u, times[i].unit)) return times[i].factor;
    if (u[0] && strchr("KMGT", u[0]) && u[1] >= 'a' && u[1] <= 'z') /* Ksector, Minst, Gwarp ... */
        return u[0] == 'K' ? 1e3 : u[0] == 'M' ? 1e6 : u[0] == 'G' ? 1e9 : 1e12;
    return 1;
}

/* Removes the thousands separators ncu prints ("44,729"): commas between digits. */
static void strip_separators(char *s)
{
    char *w = s;
    for (const char *r = s; *r; r++) {
        if (*r == ',' && w > s && w[-1] >= '0' && w[-1] <= '9' && r[1] >= '0' && r[1] <= '9') continue;
        *w++ = *r;
    }
    *w = '\0';
}

/* A metric value: a finite number, or NaN for n/a, empty or nan. */
static bool parse_value(nparser *p, char *s, double *out)
{
    s += strspn(s, " \t");
    if (!strncmp(s, "n/a", 3) || !strncmp(s, "N/A", 3)) {
        *out = NAN;
        return s[3 + strspn(s + 3, " \t")] == '\0';
    }
    strip_separators(s);
    tw_csv_num r = tw_csv_number(s, p->loc, out);
    if (r == TW_CSV_NUM_ABSENT) *out = NAN;
    return r != TW_CSV_NUM_BAD;
}

/* "(32, 1, 1)"; all zero when it is anything else. */
static void parse_dim3(const char *s, unsigned d[3])
{
    unsigned v[3];
    int end = -1;
    if (sscanf(s, " ( %u , %u , %u ) %n", &v[0], &v[1], &v[2], &end) == 3 && end >= 0 && s[end] == '\0')
        memcpy(d, v, sizeof v);
    else
        memset(d, 0, 3 * sizeof *d);
}

static tw_status add_launch(nparser *p, unsigned long line)
{
    char **v = p->fields;
    char *idtext = v[p->col_id];
    strip_separators(idtext);
    char *end;
    errno = 0;
    long id = strtol(idtext, &end, 10), pid = 0;
    if (end == idtext || *end || errno)
        return tw_fail(TW_EPARSE, "%s:%lu: ID '%.40s' is not an integer", p->name, line, v[p->col_id]);
    if (p->col_pid >= 0) {
        strip_separators(v[p->col_pid]);
        pid = strtol(v[p->col_pid], &end, 10);
    }
    tw_ncu_report *r = p->rep;
    if (r->n == p->cap) {
        size_t cap = p->cap ? 2 * p->cap : 16;
        tw_ncu_launch *q = realloc(r->launches, cap * sizeof *q);
        if (!q) return tw_fail(TW_ENOMEM, "out of memory reading %s", p->name);
        r->launches = q;
        p->cap = cap;
    }
    tw_ncu_launch *l = &r->launches[r->n];
    memset(l, 0, sizeof *l);
    l->id = id;
    l->pid = pid;
    l->name = strdup(v[p->col_name]);
    l->values = malloc(NMETRICS * sizeof *l->values);
    if (!l->name || !l->values) {
        free(l->name);
        free(l->values);
        return tw_fail(TW_ENOMEM, "out of memory reading %s", p->name);
    }
    r->n++;
    if (p->col_block >= 0) parse_dim3(v[p->col_block], l->block);
    if (p->col_grid >= 0) parse_dim3(v[p->col_grid], l->grid);
    for (int m = 0; m < NMETRICS; m++) {
        l->values[m] = NAN;
        if (p->col_metric[m] < 0) continue;
        char *text = v[p->col_metric[m]];
        if (!parse_value(p, text, &l->values[m]))
            return tw_fail(TW_EPARSE, "%s:%lu: metric %s: value '%.40s' is not a number", p->name, line, metrics[m],
                           text);
        l->values[m] *= p->scale[m];
    }
    return TW_OK;
}

/* One line of the raw page, after its header. */
static tw_status raw_row(nparser *p, unsigned long line)
{
    char **v = p->fields;
    if (p->nfields > (size_t)p->col_id && !strcmp(v[p->col_id], "ID") && take_header(p)) return TW_OK;
    if (p->nfields < p->ncols)
        return tw_fail(TW_EPARSE, "%s:%lu: %zu fields, the header has %zu (a truncated row?)", p->name, line,
                       p->nfields, p->ncols);
    if (v[p->col_id][0] == '\0') { /* the units row */
        for (int m = 0; m < NMETRICS; m++)
            if (p->col_metric[m] >= 0) p->scale[m] = unit_factor(v[p->col_metric[m]]);
        return TW_OK;
    }
    return add_launch(p, line);
}

/* The details page, handed to mem/ncu_csv's reader. */
static tw_status read_details(nparser *p, char *text, size_t len)
{
    FILE *m = fmemopen(text, len, "r");
    if (!m) return tw_fail(TW_ENOMEM, "%s: cannot read it from memory: %s", p->name, strerror(errno));
    tw_status st = tw_ncu_read(m, metrics, NMETRICS, p->rep);
    fclose(m);
    if (st != TW_OK) {
        char detail[1024]; /* tw_fail writes the buffer tw_last_error() points to */
        snprintf(detail, sizeof detail, "%s", tw_last_error());
        tw_fail(st, "%s: %s", p->name, detail);
    }
    return st;
}

static tw_status slurp(FILE *f, const char *name, char **text, size_t *len)
{
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        n += fread(buf + n, 1, cap - n - 1, f);
        if (n < cap - 1) break;
        char *b = realloc(buf, 2 * cap);
        if (!b) {
            free(buf);
            buf = NULL;
        } else {
            buf = b;
            cap *= 2;
        }
    }
    if (!buf) return tw_fail(TW_ENOMEM, "out of memory reading %s", name);
    if (ferror(f)) {
        free(buf);
        return tw_fail(TW_EIO, "%s: read error", name);
    }
    buf[n] = '\0';
    *text = buf;
    *len = n;
    return TW_OK;
}

static tw_status ncu_lines(nparser *p, char *text, size_t len)
{
    char *scratch = malloc(len + 1);
    if (!scratch) return tw_fail(TW_ENOMEM, "out of memory reading %s", p->name);
    tw_status st = TW_OK;
    bool any = false;
    unsigned long lineno = 0;
    for (char *s = text; st == TW_OK && s < text + len;) {
        char *nl = memchr(s, '\n', (size_t)(text + len - s));
        size_t n = nl ? (size_t)(nl - s) : (size_t)(text + len - s);
        lineno++;
        /* a NUL would end the line early and stop the scan from moving on */
        if (memchr(s, '\0', n)) {
            st = tw_fail(TW_EPARSE, "%s:%lu: NUL byte in text (binary file?)", p->name, lineno);
            break;
        }
        memcpy(scratch, s, n);
        scratch[n] = '\0';
        s += n + (s[n] == '\n');
        scratch[strcspn(scratch, "\r")] = '\0';
        char *line = scratch;
        if (lineno == 1 && !strncmp(line, "\xEF\xBB\xBF", 3)) line += 3; /* a byte-order mark */
        if (line[strspn(line, " \t")] == '\0') continue;
        any = true;
        if (!strncmp(line, "==", 2)) { /* ncu's own messages, wherever they are */
            if (!strncmp(line, "==ERROR==", 9) && !p->rep->message[0])
                snprintf(p->rep->message, sizeof p->rep->message, "%s", line);
            continue;
        }
        bool ok = false;
        if ((st = split_all(p, line, &ok)) != TW_OK) break;
        if (!p->header) { /* before the header: the program's own output, or the header */
            if (ok && field_index(p, "Metric Name") >= 0 && field_index(p, "Metric Value") >= 0 &&
                field_index(p, "ID") >= 0) {
                free(scratch);
                return read_details(p, text, len);
            }
            if (ok) take_header(p);
            continue;
        }
        if (!ok) st = tw_fail(TW_EPARSE, "%s:%lu: malformed quoting (a truncated row?)", p->name, lineno);
        if (st == TW_OK) st = raw_row(p, lineno);
    }
    free(scratch);
    if (st == TW_OK && !p->header) {
        if (p->rep->message[0])
            return tw_fail(TW_EUNAVAIL, "%s: ncu wrote no CSV, it reported: %s", p->name, p->rep->message);
        if (!any) return tw_fail(TW_EEMPTY, "%s: the file is empty: no ncu CSV header", p->name);
        return tw_fail(TW_EPARSE,
                       "%s: no ncu CSV header (a line with the columns ID and Kernel Name: written by "
                       "ncu --csv --page raw?)",
                       p->name);
    }
    return st;
}

tw_status tw_dvfs_ncu_read(FILE *f, const char *name, tw_ncu_report *out)
{
    memset(out, 0, sizeof *out);
    char *text = NULL;
    size_t len = 0;
    tw_status st = slurp(f, name, &text, &len);
    if (st != TW_OK) return st;
    nparser p = {.name = name, .rep = out, .loc = tw_csv_c_locale()};
    st = ncu_lines(&p, text, len);
    free(text);
    free(p.fields);
    if (p.loc) freelocale(p.loc);
    if (st != TW_OK) {
        tw_ncu_report_free(out);
        return st;
    }
    out->nmetrics = NMETRICS;
    return TW_OK;
}

tw_status tw_dvfs_ncu_load(const char *path, tw_ncu_report *out)
{
    memset(out, 0, sizeof *out);
    FILE *f = fopen(path, "r");
    if (!f) return tw_fail(TW_EIO, "%s: cannot open: %s", path, strerror(errno));
    tw_status st = tw_dvfs_ncu_read(f, path, out);
    fclose(f);
    return st;
}

/* ---------------------------------------------------------------- the join */

/* The function's name in an ncu kernel name: "void ns::k<int>(float *)" -> "k". */
static size_t base_name(const char *s, const char **start)
{
    if (!strncmp(s, "void ", 5)) s += 5;
    size_t end = strcspn(s, "(<");
    const char *b = s;
    for (size_t i = 0; i + 1 < end; i++)
        if (s[i] == ':' && s[i + 1] == ':') b = s + i + 2;
    while (b < s + end && *b == ' ')
        b++;
    size_t n = (size_t)(s + end - b);
    while (n && b[n - 1] == ' ')
        n--;
    *start = b;
    return n;
}

static bool same_kernel(const char *ncu_name, const char *kernel)
{
    const char *b;
    size_t n = base_name(ncu_name, &b);
    return n == strlen(kernel) && !strncmp(b, kernel, n);
}

/* ncu's dimensions (all zero when it did not say) differ from the timing's. */
static bool dims_differ(const unsigned ncu[3], const unsigned t[3])
{
    if (!ncu[0] && !ncu[1] && !ncu[2]) return false;
    return ncu[0] != t[0] || ncu[1] != t[1] || ncu[2] != t[2];
}

static tw_status build_one(const tw_dvfs_timing *t, const tw_ncu_report *ncu, bool *used, double core_mhz,
                           double mem_mhz, tw_dvfs_built *b)
{
    double sum[NMETRICS] = {0};
    size_t k = 0;
    for (size_t l = 0; l < ncu->n; l++) {
        const tw_ncu_launch *L = &ncu->launches[l];
        if (!same_kernel(L->name, t->kernel)) continue;
        used[l] = true;
        if (dims_differ(L->grid, t->grid) || dims_differ(L->block, t->block))
            return tw_fail(TW_EPARSE,
                           "kernel '%s': ncu launch ID %ld ran grid (%u, %u, %u) block (%u, %u, %u), the timing "
                           "(line %lu) grid (%u, %u, %u) block (%u, %u, %u): not the same launches",
                           t->kernel, L->id, L->grid[0], L->grid[1], L->grid[2], L->block[0], L->block[1], L->block[2],
                           t->line, t->grid[0], t->grid[1], t->grid[2], t->block[0], t->block[1], t->block[2]);
        for (int m = 0; m < NMETRICS; m++) {
            if (isnan(L->values[m]))
                return tw_fail(TW_ENOTFOUND,
                               "kernel '%s': metric %s is missing or n/a in ncu launch ID %ld (profile with "
                               "--metrics from `truewatt dvfs rows --metrics`)",
                               t->kernel, metrics[m], L->id);
            sum[m] += L->values[m];
        }
        k++;
    }
    if (!k)
        return tw_fail(TW_ENOTFOUND,
                       "kernel '%s' (timing line %lu) has no launch in the ncu CSV: was it profiled? (ncu --nvtx "
                       "--nvtx-include \"tw_measure/\" ...)",
                       t->kernel, t->line);
    double mean[NMETRICS];
    for (int m = 0; m < NMETRICS; m++)
        mean[m] = sum[m] / (double)k;
    double occ = mean[M_OCC] / 100;
    if (occ > 1 && occ <= 1.005) occ = 1; /* rounding in ncu's percentage */
    if (!(occ > 0 && occ <= 1))
        return tw_fail(TW_EPARSE, "kernel '%s': achieved occupancy %g %% (%s) is outside (0, 100]", t->kernel,
                       mean[M_OCC], metrics[M_OCC]);
    double blocks = (double)t->grid[0] * t->grid[1] * t->grid[2];
    double threads = (double)t->block[0] * t->block[1] * t->block[2];
    double warps = blocks * ceil(threads / 32);
    tw_dvfs_row *r = &b->row;
    memset(b, 0, sizeof *b);
    snprintf(r->app, sizeof r->app, "%s", t->kernel);
    snprintf(r->kernel, sizeof r->kernel, "%s", t->kernel);
    r->core_mhz = core_mhz;
    r->mem_mhz = mem_mhz;
    r->time_ms = t->mean_ms;
    r->warps = warps;
    r->occupancy = occ;
    r->l2_read = mean[M_L2_READ] + mean[M_L2_ATOM] + mean[M_L2_RED];
    r->l2_write = mean[M_L2_WRITE] + mean[M_L2_ATOM] + mean[M_L2_RED];
    r->dram_read = mean[M_DRAM_READ];
    r->dram_write = mean[M_DRAM_WRITE];
    r->shared_load = mean[M_SHARED_LD];
    r->shared_store = mean[M_SHARED_ST];
    r->tex_cache = mean[M_TEX];
    r->inst_fp_64 = mean[M_FP64];
    r->cf_executed = mean[M_CBU] + mean[M_ADU];
    r->inst_per_warp = mean[M_INST] / warps;
    r->line = t->line;
    b->timed = t->launches;
    b->sd_ms = t->sd_ms;
    b->min_ms = t->min_ms;
    b->profiled = k;
    b->ncu_time_ms = mean[M_TIME] * 1e-6;
    return TW_OK;
}

tw_status tw_dvfs_rows_build(const tw_dvfs_times *times, const tw_ncu_report *ncu, double core_mhz, double mem_mhz,
                             tw_dvfs_rows *out)
{
    memset(out, 0, sizeof *out);
    if (!(core_mhz > 0 && isfinite(core_mhz)) || !(mem_mhz > 0 && isfinite(mem_mhz)))
        return tw_fail(TW_EINVAL, "the clocks must be positive numbers of MHz (core %g, memory %g)", core_mhz, mem_mhz);
    if (!times || !ncu || ncu->nmetrics != NMETRICS)
        return tw_fail(TW_EINVAL, "tw_dvfs_rows_build: no times, or a report not read by tw_dvfs_ncu_read");
    if (!times->n) return tw_fail(TW_EEMPTY, "no timed kernels");
    tw_dvfs_built *r = calloc(times->n, sizeof *r);
    bool *used = calloc(ncu->n ? ncu->n : 1, sizeof *used);
    if (!r || !used) {
        free(r);
        free(used);
        return tw_fail(TW_ENOMEM, "out of memory building the rows");
    }
    tw_status st = TW_OK;
    for (size_t i = 0; i < times->n && st == TW_OK; i++)
        st = build_one(&times->t[i], ncu, used, core_mhz, mem_mhz, &r[i]);
    if (st != TW_OK) {
        free(r);
        free(used);
        return st;
    }
    out->r = r;
    out->n = times->n;
    for (size_t l = 0; l < ncu->n; l++)
        if (!used[l] && !out->ignored++)
            snprintf(out->ignored_example, sizeof out->ignored_example, "%s", ncu->launches[l].name);
    free(used);
    return TW_OK;
}

static const char rows_header[] =
    "appName,kernel,coreF,memF,time/ms,warps,achieved_occupancy,l2_read_transactions,l2_write_transactions,"
    "dram_read_transactions,dram_write_transactions,shared_load_transactions,shared_store_transactions,"
    "tex_cache_transactions,inst_fp_64,cf_executed,inst_per_warp,timed_launches,time_sd/ms,time_min/ms,"
    "profiled_launches,ncu_time/ms\n";

/* ",v", or "," alone for NaN */
static void put_number(FILE *f, double v)
{
    fputc(',', f);
    if (!isnan(v)) tw_csv_write_exact(f, v);
}

tw_status tw_dvfs_rows_write(FILE *f, const tw_dvfs_rows *rows)
{
    fputs(rows_header, f);
    for (size_t i = 0; i < rows->n; i++) {
        const tw_dvfs_built *b = &rows->r[i];
        const tw_dvfs_row *r = &b->row;
        tw_csv_write_field(f, r->app);
        fputc(',', f);
        tw_csv_write_field(f, r->kernel);
        const double v[] = {r->core_mhz,   r->mem_mhz,     r->time_ms,          r->warps,
                            r->occupancy,  r->l2_read,     r->l2_write,         r->dram_read,
                            r->dram_write, r->shared_load, r->shared_store,     r->tex_cache,
                            r->inst_fp_64, r->cf_executed, r->inst_per_warp,    b->timed,
                            b->sd_ms,      b->min_ms,      (double)b->profiled, b->ncu_time_ms};
        for (size_t k = 0; k < sizeof v / sizeof v[0]; k++)
            put_number(f, v[k]);
        fputc('\n', f);
    }
    if (fflush(f) != 0 || ferror(f)) return tw_fail(TW_EIO, "cannot write the rows: %s", strerror(errno));
    return TW_OK;
}

void tw_dvfs_rows_free(tw_dvfs_rows *r)
{
    free(r->r);
    memset(r, 0, sizeof *r);
}
