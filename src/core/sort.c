#include "core/sort.h"

#include <stdlib.h>

int tw_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void tw_sort_doubles(double *v, size_t n)
{
    if (n > 1) qsort(v, n, sizeof *v, tw_cmp_double);
}
