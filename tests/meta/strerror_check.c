/* strerror_check: every status code has its own tw_strerror text.
 *
 * usage: strerror_check [CODE ...]
 * With codes (the values of the tw_status enumerators, as error_codes.sh reads
 * them from the header), checks those; without, checks 0..TW_EINTERRUPTED.
 * Prints "CODE<TAB>TEXT" per code. Fails (exit 1) when a text is NULL, empty,
 * "unknown error", or the same as another code's; also checks that a code past
 * the end still gets a text (never NULL). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "truewatt.h"

#define MAX_CODES 1024

int main(int argc, char **argv)
{
    long codes[MAX_CODES];
    int n = 0;
    if (argc > 1) {
        for (int i = 1; i < argc; i++) {
            char *end;
            errno = 0;
            long v = strtol(argv[i], &end, 0);
            if (*argv[i] == '\0' || *end || errno || v < 0 || n >= MAX_CODES) {
                fprintf(stderr, "strerror_check: bad code '%s'\n", argv[i]);
                return 2;
            }
            codes[n++] = v;
        }
    } else {
        for (long v = 0; v <= TW_EINTERRUPTED; v++)
            codes[n++] = v;
    }

    int bad = 0;
    const char *text[MAX_CODES];
    for (int i = 0; i < n; i++) {
        const char *s = tw_strerror((tw_status)codes[i]);
        text[i] = s;
        printf("%ld\t%s\n", codes[i], s ? s : "(null)");
        if (!s || !*s) {
            printf("FAIL: code %ld has no text\n", codes[i]);
            bad = 1;
            continue;
        }
        if (!strcmp(s, "unknown error")) {
            printf("FAIL: code %ld reads \"unknown error\": give it a text in tw_strerror\n", codes[i]);
            bad = 1;
        }
        for (int k = 0; k < i; k++) {
            if (text[k] && codes[k] != codes[i] && !strcmp(text[k], s)) {
                printf("FAIL: codes %ld and %ld share the text \"%s\"\n", codes[k], codes[i], s);
                bad = 1;
            }
        }
    }

    long past = 0;
    for (int i = 0; i < n; i++)
        if (codes[i] >= past) past = codes[i] + 1;
    const char *s = tw_strerror((tw_status)past);
    if (!s || !*s) {
        printf("FAIL: tw_strerror(%ld), past the last code, returned no text\n", past);
        bad = 1;
    }
    if (!bad) printf("ok    %d codes, each with its own text\n", n);
    return bad;
}
