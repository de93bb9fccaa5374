/* Level and keyword names of EVENT_HEADER events (see etl-keywords.h). */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "etl-keywords.h"

/* Names already looked up, direct-mapped by provider, level and keywords:
 * a trace's events come from a few providers with a few keyword sets, and
 * the manifests' lookups scan every name they define (5% of `etl events -f
 * jsonl` on net.4.5.2 without this). */
#define CACHE 64
static struct entry {
    const struct etl_fields *f;
    struct ntl_guid guid;
    uint64_t keyword;
    uint8_t level;
    bool used;
    const char *level_name;
    char keywords[512];
} cache[CACHE];

static void keyword_names(const struct etl_fields *f, const struct ntl_etl_event *ev, char *buf,
                          size_t size);

static struct entry *cached(const struct etl_fields *f, const struct ntl_etl_event *ev)
{
    uint64_t h = ev->keyword * 0x9e3779b97f4a7c15ull ^ ev->level;
    for (int i = 0; i < 16; i++)
        h = (h ^ ev->guid.b[i]) * 0x100000001b3ull;
    struct entry *e = &cache[(h >> 32) % CACHE];
    if (e->used && e->f == f && e->keyword == ev->keyword && e->level == ev->level &&
        ntl_guid_equal(&e->guid, &ev->guid))
        return e;
    *e = (struct entry){.f = f, .guid = ev->guid, .keyword = ev->keyword, .level = ev->level,
                        .used = true, .level_name = ntl_etl_level_name(ev->level)};
    for (size_t i = 0; i < f->nmanifests; i++) {
        const char *n = ntl_etl_manifest_level_name(f->manifests[i], &ev->guid, ev->level);
        if (n) {
            e->level_name = n;
            break;
        }
    }
    keyword_names(f, ev, e->keywords, sizeof e->keywords);
    return e;
}

const char *etl_level_name(const struct etl_fields *f, const struct ntl_etl_event *ev)
{
    return cached(f, ev)->level_name;
}

static const char *keyword_name(const struct etl_fields *f, const struct ntl_guid *g, uint64_t bit)
{
    for (size_t i = 0; i < f->nmanifests; i++) {
        const char *n = ntl_etl_manifest_keyword_name(f->manifests[i], g, bit);
        if (n)
            return n;
    }
    return ntl_etl_keyword_name(bit);
}

static void keyword_names(const struct etl_fields *f, const struct ntl_etl_event *ev, char *buf,
                          size_t size)
{
    uint64_t unnamed = 0;
    size_t n = 0;
    buf[0] = '\0';
    for (unsigned b = 0; b < 64; b++) {
        uint64_t bit = (uint64_t)1 << b;
        const char *name;
        if (!(ev->keyword & bit))
            continue;
        if (!(name = keyword_name(f, &ev->guid, bit)))
            unnamed |= bit;
        else if (n < size)
            n += (size_t)snprintf(buf + n, size - n, "%s%s", n ? "," : "", name);
    }
    if (unnamed && n < size)
        snprintf(buf + n, size - n, "%s0x%llx", n ? "," : "", (unsigned long long)unnamed);
}

void etl_keyword_names(const struct etl_fields *f, const struct ntl_etl_event *ev, char *buf,
                       size_t size)
{
    snprintf(buf, size, "%s", cached(f, ev)->keywords);
}

static int number(const char *s, uint64_t *v)
{
    char *end;
    if (!*s || *s == '-')
        return -1;
    *v = strtoull(s, &end, 0);
    return *end ? -1 : 0;
}

int etl_level_parse(const struct etl_fields *f, const char *s, uint64_t *level)
{
    uint8_t l;
    int std;
    if (number(s, level) == 0)
        return *level <= 255 ? 0 : -1;
    for (size_t i = 0; i < f->nmanifests; i++)
        if (ntl_etl_manifest_find_level(f->manifests[i], s, &l)) {
            *level = l;
            return 0;
        }
    if ((std = ntl_etl_level_parse(s)) < 0)
        return -1;
    *level = (uint64_t)std;
    return 0;
}

/* One item of a --keywords list. */
static int keyword_mask(const struct etl_fields *f, const char *s, uint64_t *mask)
{
    if (number(s, mask) == 0)
        return 0;
    for (size_t i = 0; i < f->nmanifests; i++)
        if (ntl_etl_manifest_find_keyword(f->manifests[i], s, mask))
            return 0;
    return (*mask = ntl_etl_keyword_parse(s)) ? 0 : -1;
}

int etl_keywords_parse(const struct etl_fields *f, const char *s, uint64_t *mask, const char **bad)
{
    static char item[256];
    *mask = 0;
    while (*s) {
        size_t len = strcspn(s, ",");
        uint64_t m;
        snprintf(item, sizeof item, "%.*s", (int)len, s);
        if (keyword_mask(f, item, &m) < 0) {
            *bad = item;
            return -1;
        }
        *mask |= m;
        s += len + (s[len] == ',');
    }
    return 0;
}
