/* Open addressing for the flow decoder's instruction and block caches. */
#include <stdlib.h>
#include <string.h>

#include "flow-table.h"

void flow_table_free(struct flow_table *t)
{
    free(t->slot);
    memset(t, 0, sizeof *t);
}

void flow_table_clear(struct flow_table *t, size_t esize)
{
    if (t->slot)
        memset(t->slot, 0, (t->mask + 1) * esize);
    t->used = 0;
}

/* The free slot for k in a table of n (a power of two) slots. */
static unsigned char *free_slot(unsigned char *s, size_t n, size_t esize,
                                const struct flow_key *k)
{
    size_t i = flow_table_hash(k->ip, k->mode) & (n - 1);
    while (((const struct flow_key *)(const void *)(s + i * esize))->mode)
        i = (i + 1) & (n - 1);
    return s + i * esize;
}

/* Doubles the table (or makes the first), keeping every entry; at its
 * largest, empties it instead. */
static int grow(struct flow_table *t, size_t esize, size_t max)
{
    size_t n = t->slot ? (t->mask + 1) * 2 : 4096;
    if (n > max) {
        flow_table_clear(t, esize);
        return 0;
    }
    unsigned char *s = calloc(n, esize);
    if (!s)
        return -1;
    for (size_t i = 0; t->slot && i <= t->mask; i++) {
        const struct flow_key *k = (const void *)(t->slot + i * esize);
        if (k->mode)
            memcpy(free_slot(s, n, esize, k), k, esize);
    }
    free(t->slot);
    t->slot = s;
    t->mask = n - 1;
    return 0;
}

void *flow_table_add(struct flow_table *t, size_t esize, size_t max, const void *entry)
{
    if ((!t->slot || (t->used + 1) * 2 > t->mask + 1) && grow(t, esize, max) < 0)
        return NULL;
    unsigned char *s = free_slot(t->slot, t->mask + 1, esize, entry);
    memcpy(s, entry, esize);
    t->used++;
    return s;
}
