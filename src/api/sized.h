/* Structs that carry their size (truewatt.h): the first field is a size_t
 * the caller sets to sizeof the struct it was built with, and the library
 * reads or fills only that much, so an older caller's smaller struct works. */
#ifndef TW_API_SIZED_H
#define TW_API_SIZED_H

#include <stddef.h>

#include "truewatt.h"

/* Copies what the caller's struct `in` holds over `full` (which holds the
 * defaults of the fields an older caller does not know). TW_EINVAL, naming
 * `what`, when its size is not set. */
tw_status tw_sized_read(void *full, size_t full_size, const void *in, const char *what);
/* Gives the caller's struct `out` as much of `full` as it holds, keeping its size. */
tw_status tw_sized_write(void *out, const void *full, size_t full_size, const char *what);

#endif
