/* Numbers as text that reads back exactly (internal). */
#ifndef TW_CORE_NUMFMT_H
#define TW_CORE_NUMFMT_H

#include <stddef.h>

/* The shortest of %.15g, %.16g, %.17g that strtod reads back as v: exact
 * for any double (times stay exact to the ns over days, where %.10g loses
 * microseconds after 2.78 h). Returns buf. */
#define TW_EXACT_LEN 32
char *tw_format_exact(char buf[TW_EXACT_LEN], double v);

#endif
