/* Result files of the library's reports (isa, mem, breakdown, experiments):
 * a folder made when missing, DIR/NAME opened for writing, closed with its
 * write errors, and a gnuplot script drawn when gnuplot exists. Failures
 * set tw_last_error() naming the path. */
#ifndef TW_CORE_OUTFILE_H
#define TW_CORE_OUTFILE_H

#include <stddef.h>
#include <stdio.h>

#include "truewatt.h"

/* The symbols carry the library's prefix; the call sites keep the short names. */
#define out_make_dir tw_out_make_dir
#define out_open tw_out_open
#define out_close tw_out_close
#define out_draw_plot tw_out_draw_plot

/* mkdir DIR unless it exists. */
tw_status out_make_dir(const char *dir);
/* DIR/NAME opened for writing (its path into path[cap]); NULL with tw_last_error() set. */
FILE *out_open(const char *dir, const char *name, char *path, size_t cap);
/* fclose, failing (TW_EIO) on any write error the stream met. */
tw_status out_close(FILE *f, const char *path);
/* Draws DIR/script with gnuplot when it exists (png: what it makes), saying so through note either way. */
void out_draw_plot(void (*note)(void *ctx, const char *text), void *note_ctx, const char *dir, const char *script,
                   const char *png);

#endif
