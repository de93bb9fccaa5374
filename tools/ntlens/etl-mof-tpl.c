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

static uint64_t tpl_key(const struct ntl_etl_event *ev)
{
    return 1ull << 63 | (uint64_t)ev->is64 << 56 | (uint64_t)ev->kind << 48 |
           (uint64_t)ev->group << 40 | (uint64_t)ev->opcode << 32 | ev->version;
}

struct etl_mof_tpl *etl_mof_tpl_find(struct etl_mof_tpls **tpls, const struct ntl_etl_event *ev,
                                     bool create)
{
    struct etl_mof_tpls *t = *tpls;
    uint64_t key = tpl_key(ev), h = key * 0x9e3779b97f4a7c15ull;
    if (!t && (!create || !(t = *tpls = calloc(1, sizeof *t))))
        return NULL;
    size_t i = (size_t)(h >> 54) & (TPL_SLOTS - 1);
    for (; t->slot[i]; i = (i + 1) & (TPL_SLOTS - 1))
        if (t->slot[i]->key == key)
            return t->slot[i];
    if (!create || 2 * t->n >= TPL_SLOTS || !(t->slot[i] = calloc(1, sizeof *t->slot[i])))
        return NULL;
    t->n++;
    t->slot[i]->key = key;
    return t->slot[i];
}

/* A value the decoder's fixed-size types give (not a SID or a string) at pos. */
static bool fixed(const struct ntl_etl_field *f, const struct ntl_etl_event *ev, size_t pos)
{
    return f->item == NTL_ETL_ITEM_VALUE && !f->depth && !f->in_array && !f->map_text &&
           !f->custom && f->in_type != NTL_ETL_IN_SID && f->in_type != NTL_ETL_IN_ANSISTRING &&
           f->in_type != NTL_ETL_IN_UNICODESTRING && f->payload_offset == pos &&
           f->data == ev->payload + pos && f->size <= ev->payload_size - pos;
}

/* A UTF-16 string at pos whose NUL ends the payload. */
static bool tail(const struct ntl_etl_field *f, const struct ntl_etl_event *ev, size_t pos)
{
    return f->item == NTL_ETL_ITEM_VALUE && !f->depth && !f->in_array && !f->map_text &&
           !f->custom && f->in_type == NTL_ETL_IN_UNICODESTRING && f->payload_offset == pos &&
           f->data == ev->payload + pos && pos + f->size + 2 == ev->payload_size;
}

void etl_mof_tpl_learn(struct etl_mof_tpl *t, const struct ntl_etl_event *ev,
                       const struct ntl_etl_field *items, size_t n)
{
    size_t i = 0, pos = 0;
    if (t->bad)
        return;
    for (; i < n && i < ETL_MOF_TPL_FIELDS && fixed(&items[i], ev, pos); i++)
        pos += items[i].size;
    bool ends = i == n && pos == ev->payload_size, str = i + 1 == n && tail(&items[i], ev, pos);
    if ((!ends && !str) || (t->seen && (t->n != i || t->total != pos))) {
        t->bad = true;
        return;
    }
    if (!t->seen) {
        for (size_t k = 0; k < i; k++)
            t->f[k] = items[k];
        t->n = i;
        t->total = pos;
        t->seen = true;
    }
    if (ends) {
        t->ends = true;
        return;
    }
    t->f[i] = items[i];
    if (!t->tail_len)
        t->tail_len = ev->payload_size - pos;
    else if (t->tail_len != ev->payload_size - pos)
        t->tail = true;
}

int etl_mof_tpl_fits(const struct etl_mof_tpl *t, const struct ntl_etl_event *ev)
{
    if (!t || t->bad || !t->seen)
        return -1;
    if (ev->payload_size == t->total)
        return t->ends ? 0 : -1;
    size_t r = ev->payload_size - t->total;
    if (!t->tail || ev->payload_size < t->total + 2 || r % 2)
        return -1;
    /* The decoder's string ends at its first NUL unit: the last one here. */
    const uint8_t *p = ev->payload + t->total;
    if (p[r - 2] | p[r - 1])
        return -1;
    for (size_t k = 0; k + 2 < r; k += 2)
        if (!(p[k] | p[k + 1]))
            return -1;
    return 1;
}

void etl_mof_tpl_free(struct etl_mof_tpls *tpls)
{
    for (size_t i = 0; tpls && i < TPL_SLOTS; i++)
        free(tpls->slot[i]);
    free(tpls);
}
