/* A growing text buffer (internal): printf-style appends, one sticky
 * out-of-memory flag checked once at the end. Used by the PTX generators. */
#ifndef TW_CORE_SBUF_H
#define TW_CORE_SBUF_H

#include <stddef.h>

typedef struct tw_sbuf {
    char *p; /* NUL-terminated once anything was appended; the caller frees it */
    size_t len, cap;
    int oom; /* an allocation failed: the text is incomplete */
} tw_sbuf;

void tw_sbuf_putn(tw_sbuf *b, const char *s, size_t n);
void tw_sbuf_printf(tw_sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
