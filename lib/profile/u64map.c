#include "u64map.h"

#include <stdlib.h>
#include <string.h>

void u64map_init(struct u64map *m, size_t limit)
{
    memset(m, 0, sizeof *m);
    m->limit = limit;
}

void u64map_free(struct u64map *m)
{
    free(m->keys);
    free(m->vals);
    memset(m, 0, sizeof *m);
}

static size_t hash(uint64_t k, size_t cap)
{
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdull;
    k ^= k >> 33;
    return (size_t)k & (cap - 1);
}

static int grow(struct u64map *m)
{
    size_t cap = m->cap ? m->cap * 2 : 64;
    uint64_t *keys = malloc(cap * sizeof *keys), *vals = malloc(cap * sizeof *vals);
    if (!keys || !vals) {
        free(keys);
        free(vals);
        return -1;
    }
    memset(keys, 0xff, cap * sizeof *keys);
    for (size_t i = 0; i < m->cap; i++) {
        if (m->keys[i] == U64MAP_EMPTY)
            continue;
        size_t j = hash(m->keys[i], cap);
        while (keys[j] != U64MAP_EMPTY)
            j = (j + 1) & (cap - 1);
        keys[j] = m->keys[i];
        vals[j] = m->vals[i];
    }
    free(m->keys);
    free(m->vals);
    m->keys = keys;
    m->vals = vals;
    m->cap = cap;
    return 0;
}

const uint64_t *u64map_get(const struct u64map *m, uint64_t key)
{
    if (!m->cap || key == U64MAP_EMPTY)
        return NULL;
    for (size_t j = hash(key, m->cap);; j = (j + 1) & (m->cap - 1)) {
        if (m->keys[j] == key)
            return &m->vals[j];
        if (m->keys[j] == U64MAP_EMPTY)
            return NULL;
    }
}

uint64_t *u64map_slot(struct u64map *m, uint64_t key, int *limited)
{
    *limited = 0;
    if (key == U64MAP_EMPTY)
        return NULL;
    if (m->cap) {
        uint64_t *v = (uint64_t *)u64map_get(m, key);
        if (v)
            return v;
    }
    if (m->count >= m->limit) {
        *limited = 1;
        return NULL;
    }
    /* At most half full, so probes stay short and always end. */
    if ((m->count + 1) * 2 > m->cap && grow(m) < 0)
        return NULL;
    size_t j = hash(key, m->cap);
    while (m->keys[j] != U64MAP_EMPTY)
        j = (j + 1) & (m->cap - 1);
    m->keys[j] = key;
    m->vals[j] = 0;
    m->count++;
    return &m->vals[j];
}
