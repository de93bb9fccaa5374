/* The open-addressing table behind the flow decoder's instruction and
 * block caches: entries of any one size keyed by address and mode, each
 * starting with a struct flow_key (mode 0: an empty slot), linear probing,
 * doubled while half full and emptied at its largest, so that a trace over
 * any amount of code cannot make it grow without limit. Internal to
 * lib/ipt. */
#ifndef NTLENS_LIB_IPT_FLOW_TABLE_H
#define NTLENS_LIB_IPT_FLOW_TABLE_H

#include <stddef.h>
#include <stdint.h>

/* The first fields of every entry. */
struct flow_key {
    uint64_t ip;
    uint8_t mode; /* enum ntl_ipt_exec_mode; 0: an empty slot */
};

struct flow_table {
    unsigned char *slot;
    size_t mask; /* slots - 1 */
    size_t used;
};

static inline size_t flow_table_hash(uint64_t ip, unsigned mode)
{
    uint64_t h = (ip ^ (uint64_t)mode << 61) * 0x9e3779b97f4a7c15ull;
    return (size_t)(h >> 20);
}

/* The entry (esize bytes) for ip and mode, or NULL. Inline: the walk
 * looks one up per block. */
static inline void *flow_table_find(const struct flow_table *t, size_t esize, uint64_t ip,
                                    unsigned mode)
{
    if (!t->slot)
        return NULL;
    for (size_t i = flow_table_hash(ip, mode) & t->mask;; i = (i + 1) & t->mask) {
        const struct flow_key *k = (const void *)(t->slot + i * esize);
        if (!k->mode)
            return NULL;
        if (k->ip == ip && k->mode == mode)
            return (void *)(t->slot + i * esize);
    }
}

/* A copy of entry (not in t) into t, which holds at most max slots.
 * Returns its slot (valid until the next add), or NULL when t could not
 * grow (NTL_ERR_NOMEM). */
void *flow_table_add(struct flow_table *t, size_t esize, size_t max, const void *entry);
/* Forgets every entry. */
void flow_table_clear(struct flow_table *t, size_t esize);
void flow_table_free(struct flow_table *t);

#endif
