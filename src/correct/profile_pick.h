/* Which sensor profile a command uses: the one given (--profile), else the
 * one identified for this GPU and driver in the profile folder
 * (tw_profile_dir: $TW_PROFILE_DIR, else the installed or source tree's profiles),
 * else one of the same GPU with another driver (said so). */
#ifndef TW_CORRECT_PROFILE_PICK_H
#define TW_CORRECT_PROFILE_PICK_H

#include <stdbool.h>
#include <stddef.h>

#include "correct/profile.h"

/* TW_OK with *out and a line in `how` saying which file and why; TW_ENOTFOUND
 * when no profile applies (how says where it looked); other errors when a
 * file is malformed (tw_last_error names it). */
tw_status tw_profile_pick(const char *given, const char *gpu, const char *driver, tw_profile *out, char *how,
                          size_t how_cap);

/* The first GPU a trace file's provenance comment names ("...; gpu 0:
 * NAME, driver VER; ..."), as the sampler writes it; false when none (or
 * when the path is not a regular file: a pipe can be read only once). */
bool tw_trace_gpu(const char *path, int *index, char *gpu, size_t gpu_len, char *driver, size_t driver_len);

/* tw_profile_dir (the folder searched): truewatt.h */

#endif
