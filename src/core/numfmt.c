#include "core/numfmt.h"

#include <stdio.h>
#include <stdlib.h>

char *tw_format_exact(char buf[TW_EXACT_LEN], double v)
{
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(buf, TW_EXACT_LEN, "%.*g", prec, v);
        if (strtod(buf, NULL) == v) break;
    }
    return buf;
}
