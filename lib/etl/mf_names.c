/* A manifest's keyword and level names: what `etl events` shows beside an
 * event's keyword mask and level, and what --keywords and --level accept. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "manifest-internal.h"

int mf_add_named(struct ntl_etl_manifest *m, uint8_t kind, uint32_t provider, const char *name,
                 uint64_t value)
{
    if (m->nnamed == m->capnamed) {
        size_t c = m->capnamed ? 2 * m->capnamed : 16;
        struct mf_named *p = realloc(m->named, c * sizeof *p);
        if (!p)
            return NTL_ERR_NOMEM;
        m->named = p;
        m->capnamed = c;
    }
    m->named[m->nnamed++] = (struct mf_named){kind, provider, MF_NONE, name, value};
    return 0;
}

static const char *lookup(const struct ntl_etl_manifest *m, uint8_t kind, const struct ntl_guid *g,
                          uint64_t value)
{
    for (size_t i = 0; m && i < m->nnamed; i++) {
        const struct mf_named *n = &m->named[i];
        if (n->kind == kind && n->value == value && n->provider < m->nproviders &&
            ntl_guid_equal(&m->providers[n->provider].guid, g))
            return n->name;
    }
    return NULL;
}

const char *ntl_etl_manifest_level_name(const struct ntl_etl_manifest *m, const struct ntl_guid *g,
                                        uint8_t level)
{
    return lookup(m, MF_LEVEL, g, level);
}

const char *ntl_etl_manifest_keyword_name(const struct ntl_etl_manifest *m,
                                          const struct ntl_guid *g, uint64_t mask)
{
    return lookup(m, MF_KEYWORD, g, mask);
}

static bool find(const struct ntl_etl_manifest *m, uint8_t kind, const char *name, uint64_t *value)
{
    for (size_t i = 0; m && i < m->nnamed; i++)
        if (m->named[i].kind == kind && !strcasecmp(m->named[i].name, name)) {
            *value = m->named[i].value;
            return true;
        }
    return false;
}

bool ntl_etl_manifest_find_keyword(const struct ntl_etl_manifest *m, const char *name,
                                   uint64_t *mask)
{
    return find(m, MF_KEYWORD, name, mask);
}

bool ntl_etl_manifest_find_level(const struct ntl_etl_manifest *m, const char *name, uint8_t *level)
{
    uint64_t v;
    if (!find(m, MF_LEVEL, name, &v) || v > 255)
        return false;
    *level = (uint8_t)v;
    return true;
}
