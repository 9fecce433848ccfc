/* Progress notes through a caller's callback (the *_options.note members of
 * truewatt.h): one formatted line, without its newline. */
#ifndef TW_CORE_NOTE_H
#define TW_CORE_NOTE_H

/* note(ctx, text) with text formatted from fmt (cut at 1 KiB); nothing when note is NULL. */
void tw_notef(void (*note)(void *ctx, const char *text), void *ctx, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
