/* The demo's records and their renderings: CSV (canonical), text and JSON
 * all come from the same demo_results. */
#ifndef TW_CLI_DEMO_REPORT_H
#define TW_CLI_DEMO_REPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "truewatt.h"

#define DEMO_MAX_ROWS 32

typedef struct demo_row {
    char experiment[32];
    char kernel[64];
    double start_s, duration_s, true_energy_j;
    double energy_j[TW_METHOD_COUNT];
} demo_row;

typedef struct demo_results {
    const char *out_dir;
    uint64_t seed;
    double c_fitted_s, c_sim_s, c_fit_rms_w;
    double fig1_idle_w, fig1_active_idle_w;
    demo_row rows[DEMO_MAX_ROWS];
    size_t n;
    /* per method: E(2T)/E(T) and E(second)/E(first) */
    double ratio_doubled[TW_METHOD_COUNT];
    double ratio_second[TW_METHOD_COUNT];
    bool plotted;
    char plot_note[1200];
} demo_results;

void demo_compute_ratios(demo_results *r);
int demo_write_csv(const char *path, const demo_results *r);
int demo_write_plot_script(const char *path, const demo_results *r);
void demo_print_text(const demo_results *r, FILE *f);
void demo_print_json(const demo_results *r, FILE *f);

#endif
