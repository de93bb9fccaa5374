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
    free(m->slots);
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
    struct u64map_slot *s = malloc(cap * sizeof *s);
    if (!s)
        return -1;
    memset(s, 0xff, cap * sizeof *s);
    for (size_t i = 0; i < m->cap; i++) {
        if (m->slots[i].key == U64MAP_EMPTY)
            continue;
        size_t j = hash(m->slots[i].key, cap);
        while (s[j].key != U64MAP_EMPTY)
            j = (j + 1) & (cap - 1);
        s[j] = m->slots[i];
    }
    free(m->slots);
    m->slots = s;
    m->cap = cap;
    return 0;
}

const uint64_t *u64map_get(const struct u64map *m, uint64_t key)
{
    if (!m->cap || key == U64MAP_EMPTY)
        return NULL;
    for (size_t j = hash(key, m->cap);; j = (j + 1) & (m->cap - 1)) {
        if (m->slots[j].key == key)
            return &m->slots[j].val;
        if (m->slots[j].key == U64MAP_EMPTY)
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
    while (m->slots[j].key != U64MAP_EMPTY)
        j = (j + 1) & (m->cap - 1);
    m->slots[j] = (struct u64map_slot){key, 0};
    m->count++;
    return &m->slots[j].val;
}
