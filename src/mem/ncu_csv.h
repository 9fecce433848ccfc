/* Nsight Compute's CSV (ncu --csv): per launch, the metrics asked for (internal). */
#ifndef TW_MEM_NCU_CSV_H
#define TW_MEM_NCU_CSV_H
#include <stddef.h>
#include <stdio.h>
#include "truewatt.h" /* tw_status */

typedef struct tw_ncu_launch {
    long pid;                   /* "Process ID" (0 when the column is absent) */
    long id;                    /* "ID" */
    char *name;                 /* "Kernel Name" (owned) */
    unsigned block[3], grid[3]; /* from "(32, 1, 1)"; 0 when absent/unparsable */
    double
        *values; /* one per metric asked for, in that order; NaN when the launch has no such row or its value is n/a */
} tw_ncu_launch;

typedef struct tw_ncu_report {
    tw_ncu_launch *launches; /* in order of first appearance */
    size_t n;
    size_t nmetrics;
    char message[512]; /* the first ==ERROR== line seen, "" if none */
} tw_ncu_report;

/* Reads the whole file; metrics are the names as given to --metrics (e.g. "dram__sectors_read.sum").
 * Errors (tw_fail, non-OK status, *out left empty): no CSV header with the columns ID, Kernel Name,
 * Metric Name, Metric Value (message names the ==ERROR== line if there was one, else says the file has
 * no ncu CSV header); a malformed row (unterminated quote, too few fields: say which line); a value
 * that is not a number nor n/a/empty (say line and metric); out of memory. A file with a header but
 * no rows is OK (n = 0). Rows for metrics not asked for are ignored (their values are not even checked),
 * but their launch is still listed, its values NaN: the missing counts then show what ncu did not collect. */
tw_status tw_ncu_read(FILE *f, const char *const *metrics, size_t nmetrics, tw_ncu_report *out);
/* The same from a file: TW_EIO when it cannot be opened; messages start with the path. */
tw_status tw_ncu_read_path(const char *path, const char *const *metrics, size_t nmetrics, tw_ncu_report *out);
void tw_ncu_report_free(tw_ncu_report *r);
/* The --metrics argument: the names joined with commas (cut at cap). */
void tw_ncu_metrics_arg(const char *const *metrics, size_t nmetrics, char *buf, size_t cap);
/* Sum of metric m over launches (NaN values skipped); *missing (may be NULL) gets how many launches had NaN. */
double tw_ncu_sum(const tw_ncu_report *r, size_t m, size_t *missing);
#endif
