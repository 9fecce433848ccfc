/* Progress notes through a caller's callback (note.h). */
#include "core/note.h"

#include <stdarg.h>
#include <stdio.h>

void tw_notef(void (*note)(void *ctx, const char *text), void *ctx, const char *fmt, ...)
{
    if (!note) return;
    char text[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    note(ctx, text);
}
