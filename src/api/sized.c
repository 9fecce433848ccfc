/* Structs that carry their size: see sized.h. */
#include "api/sized.h"

#include <string.h>

#include "core/error.h"

/* Copies the part after the size field that both structs hold. */
static tw_status copy_after_size(void *dst, const void *src, size_t caller_size, size_t full_size, const char *what)
{
    if (caller_size < sizeof(size_t))
        return tw_fail(TW_EINVAL, "%s: size is %zu (set it to sizeof the struct, e.g. with its _init)", what,
                       caller_size);
    size_t n = (caller_size < full_size ? caller_size : full_size) - sizeof(size_t);
    memcpy((char *)dst + sizeof(size_t), (const char *)src + sizeof(size_t), n);
    return TW_OK;
}

tw_status tw_sized_read(void *full, size_t full_size, const void *in, const char *what)
{
    size_t size;
    memcpy(&size, in, sizeof size);
    return copy_after_size(full, in, size, full_size, what);
}

tw_status tw_sized_write(void *out, const void *full, size_t full_size, const char *what)
{
    size_t size;
    memcpy(&size, out, sizeof size);
    return copy_after_size(out, full, size, full_size, what);
}
