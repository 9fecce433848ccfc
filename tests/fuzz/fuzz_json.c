/* The JSON reader (src/core/json_read.c): parse, then walk the whole tree
 * through the accessors. */
#include "core/json_read.h"
#include "fuzz_common.h"

static void walk(const tw_json *v, int depth)
{
    if (depth > TW_JSON_MAX_DEPTH + 1) fuzz_fail("a tree deeper than TW_JSON_MAX_DEPTH");
    (void)tw_json_type_name(tw_json_type_of(v));
    (void)tw_json_number(v);
    (void)tw_json_string(v);
    (void)tw_json_bool(v);
    size_t n = tw_json_len(v);
    for (size_t i = 0; i < n; i++) {
        const char *key = tw_json_key_at(v, i);
        if (key && !tw_json_get(v, key)) fuzz_fail("a key that get() does not find");
        walk(tw_json_at(v, i), depth + 1);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tw_json *v = NULL;
    char err[256];
    if (tw_json_parse((const char *)data, size, &v, err, sizeof err) != TW_OK) return 0;
    walk(v, 0);
    tw_json_free(v);
    return 0;
}
