/* What the DVFS reports (tw_dvfs_*_report, truewatt.h) share: the options'
 * check, progress notes, output files, naming the data file in a row's
 * error, and the table and JSON form of an evaluated point. */
#ifndef TW_DVFS_REPORT_H
#define TW_DVFS_REPORT_H

#include <stdio.h>

#include "core/json.h"
#include "core/note.h"
#include "dvfs/eval.h"
#include "truewatt.h"

/* TW_EINVAL (with the reason) unless o is initialised, names its data and
 * parameter files, and out is given. */
tw_status tw_dvfs_options_check(const tw_dvfs_options *o, FILE *out);
/* A progress note through o->note, when set (core/note.h). */
#define tw_dvfs_note(o, ...) tw_notef((o)->note, (o)->note_ctx, __VA_ARGS__)
/* Closes an output file; TW_EIO "cannot write PATH" when anything failed to be written. */
tw_status tw_dvfs_close_out(FILE *f, const char *path);
/* The model names a row by its line only ("line 12 (...): no finite
 * prediction"): such an error gets DATA's name before it. Returns st. */
tw_status tw_dvfs_name_data(const char *data, tw_status st);
/* A table of evaluated points, as eval (its worst points) and predict
 * (every row) print them: "\nTITLE:", the column names, then one line a point. */
void tw_dvfs_print_points_header(FILE *out, const char *title);
void tw_dvfs_print_point(FILE *out, const tw_dvfs_point *pt);
/* A point's members in a JSON object the caller opened: kernel, clocks, times, regime, APE. */
void tw_dvfs_json_point_fields(json *j, const tw_dvfs_point *pt);

#endif
