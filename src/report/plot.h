/* Plots through gnuplot as a subprocess: the script and data files are always
 * written; the picture is drawn when gnuplot can be found. */
#ifndef TW_REPORT_PLOT_H
#define TW_REPORT_PLOT_H

/* The symbols carry the library's prefix (tests/meta/static_symbols.sh); the call sites keep the short names. */
#define plot_find_gnuplot tw_plot_find_gnuplot
#define plot_run tw_plot_run

#include <stdbool.h>
#include <stddef.h>

/* Path of gnuplot on $PATH (static buffer) or NULL. */
const char *plot_find_gnuplot(void);
/* Runs `gnuplot script` in dir; 0 on success, else writes why into why[]. */
int plot_run(const char *dir, const char *script, char *why, size_t why_len);

#endif
