/* Sorting numbers (one comparison for every qsort of doubles). */
#ifndef TW_CORE_SORT_H
#define TW_CORE_SORT_H

#include <stddef.h>

/* v[0..n-1] in ascending order. */
void tw_sort_doubles(double *v, size_t n);

#endif
