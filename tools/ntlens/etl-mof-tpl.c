/* Kernel (MOF) field templates (etl-mof-tpl.h). A trace has tens of kernel
 * layouts and hundreds of thousands of their events. */
#include "etl-mof-tpl.h"

#include <stdlib.h>

/* Slots of the open-addressed table; it stops taking layouts half full. */
#define TPL_SLOTS 1024u

struct etl_mof_tpls {
    struct etl_mof_tpl *slot[TPL_SLOTS];
    size_t n;
};

/* Everything ntl_etl_mof_prefix reads of an event. */
static uint64_t tpl_key(const struct ntl_etl_event *ev)
{
    return 1ull << 63 | (uint64_t)ev->is64 << 56 | (uint64_t)ev->kind << 48 |
           (uint64_t)ev->group << 40 | (uint64_t)ev->opcode << 32 | ev->version;
}

struct etl_mof_tpl *etl_mof_tpl_find(struct etl_mof_tpls **tpls, const struct ntl_etl_event *ev)
{
    struct etl_mof_tpls *t = *tpls;
    uint64_t key = tpl_key(ev), h = key * 0x9e3779b97f4a7c15ull;
    if (!t && !(t = *tpls = calloc(1, sizeof *t)))
        return NULL;
    size_t i = (size_t)(h >> 54) & (TPL_SLOTS - 1);
    for (; t->slot[i]; i = (i + 1) & (TPL_SLOTS - 1))
        if (t->slot[i]->key == key)
            return t->slot[i];
    if (2 * t->n >= TPL_SLOTS || !(t->slot[i] = calloc(1, sizeof *t->slot[i])))
        return NULL;
    t->n++;
    t->slot[i]->key = key;
    t->slot[i]->known = ntl_etl_mof_prefix(&t->slot[i]->p, ev) > 0;
    return t->slot[i];
}

void etl_mof_tpl_free(struct etl_mof_tpls *tpls)
{
    for (size_t i = 0; tpls && i < TPL_SLOTS; i++)
        free(tpls->slot[i]);
    free(tpls);
}
