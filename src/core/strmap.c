/* Strings stored once, with a value each: see strmap.h. */
#include "core/strmap.h"

#include <stdlib.h>
#include <string.h>

static uint64_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603u; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211u;
    return h;
}

static bool grow(tw_strmap *m)
{
    size_t cap = m->cap ? 2 * m->cap : 64;
    char **key = calloc(cap, sizeof *key);
    int64_t *val = calloc(cap, sizeof *val);
    if (!key || !val) {
        free(key);
        free(val);
        return false;
    }
    for (size_t i = 0; i < m->cap; i++) {
        if (!m->key[i]) continue;
        size_t k = (size_t)hash_str(m->key[i]) & (cap - 1);
        while (key[k])
            k = (k + 1) & (cap - 1);
        key[k] = m->key[i];
        val[k] = m->val[i];
    }
    free(m->key);
    free(m->val);
    m->key = key;
    m->val = val;
    m->cap = cap;
    return true;
}

int64_t *tw_strmap_get(tw_strmap *m, const char *s, const char **key, bool *added)
{
    *added = false;
    if ((m->n + 1) * 4 > m->cap * 3 && !grow(m)) return NULL;
    size_t k = (size_t)hash_str(s) & (m->cap - 1);
    for (; m->key[k]; k = (k + 1) & (m->cap - 1))
        if (strcmp(m->key[k], s) == 0) {
            *key = m->key[k];
            return &m->val[k];
        }
    char *copy = strdup(s);
    if (!copy) return NULL;
    m->key[k] = copy;
    m->val[k] = 0;
    m->n++;
    *key = copy;
    *added = true;
    return &m->val[k];
}

void tw_strmap_free(tw_strmap *m)
{
    for (size_t i = 0; i < m->cap; i++)
        free(m->key[i]);
    free(m->key);
    free(m->val);
    memset(m, 0, sizeof *m);
}
