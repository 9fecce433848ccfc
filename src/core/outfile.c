/* Result files of the library's reports; see outfile.h. */
#include "core/outfile.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>

#include "core/error.h"
#include "core/note.h"
#include "report/plot.h"

tw_status out_make_dir(const char *dir)
{
    if (mkdir(dir, 0777) == 0 || errno == EEXIST) return TW_OK;
    return tw_fail(TW_EIO, "cannot create %s: %s", dir, strerror(errno));
}

FILE *out_open(const char *dir, const char *name, char *path, size_t cap)
{
    snprintf(path, cap, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (!f) tw_fail(TW_EIO, "cannot write %s: %s", path, strerror(errno));
    return f;
}

tw_status out_close(FILE *f, const char *path)
{
    bool bad = ferror(f) != 0;
    if (fclose(f) != 0 || bad) return tw_fail(TW_EIO, "cannot write %s", path);
    return TW_OK;
}

void out_draw_plot(void (*note)(void *ctx, const char *text), void *note_ctx, const char *dir, const char *script,
                   const char *png)
{
    char why[256];
    if (!plot_find_gnuplot()) {
        tw_notef(note, note_ctx, "no gnuplot: the plot's data and script are in %s (%s)", dir, script);
        return;
    }
    if (plot_run(dir, script, why, sizeof why) == 0)
        tw_notef(note, note_ctx, "plot %s/%s", dir, png);
    else
        tw_notef(note, note_ctx, "no plot: %s", why);
}
