#include "core/sort.h"

#include <stdlib.h>

/* qsort's comparison of two doubles, ascending (NaN: not ordered; keep them out). */
static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void tw_sort_doubles(double *v, size_t n)
{
    if (n > 1) qsort(v, n, sizeof *v, cmp_double);
}
