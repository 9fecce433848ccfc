/* The results of `truewatt mem calibrate` as a table, CSV, launches, the
 * memory-energy profile (JSON) and plots, from the same rows. */
#ifndef TW_CLI_MEM_REPORT_H
#define TW_CLI_MEM_REPORT_H

#include <stdio.h>

#include "bench/exec.h"
#include "bench/mem_run.h"

/* The instruction table's energy of one div.u32 per thread (isa.csv), NaN when not given. */
typedef struct mem_div_ref {
    double j;
    char source[512];
} mem_div_ref;

int mem_print_table(const char *cmd, const tw_mem_results *r);
void mem_print_bounds(const tw_mem_results *r);
void mem_print_divisions(const tw_mem_results *r, const mem_div_ref *ref);
int mem_write_csv(const char *cmd, const char *dir, const tw_mem_results *r, const char *prov);
int mem_write_launches(const char *cmd, const char *dir, const tw_mem_results *r, const char *prov);
void mem_print_json(FILE *f, const tw_mem_results *r, const tw_exec *x, const mem_div_ref *ref, const char *prov);
void mem_plot(const char *cmd, const char *dir, const tw_mem_results *r);

#endif
