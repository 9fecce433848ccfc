/* The MIG instances of the sampled GPUs in the run file (internal): table
 * mig_instances (docs/runfile.md), made when the first is written; a run
 * without MIG has none. */
#ifndef TW_RUNFILE_RUNFILE_MIG_H
#define TW_RUNFILE_RUNFILE_MIG_H

#include <stddef.h>

#include "runfile/runfile.h"
#include "timeline/mig.h"

tw_status tw_run_put_mig(tw_run *r, const tw_mig_instance *m);
/* Every instance, by parent and position; *out malloc'ed (NULL and 0 when none). */
tw_status tw_run_migs(tw_run *r, tw_mig_instance **out, size_t *n);

#endif
