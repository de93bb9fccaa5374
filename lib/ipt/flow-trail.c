/* The segments runs went through, and instruction sizes per block. */
#include <stdlib.h>

#include "flow-trail.h"
#include "ntlens/error.h"

int flow_trail_grow(struct flow_trail *t, size_t more)
{
    size_t cap = t->cap ? t->cap : 1024;
    while (cap - t->n < more)
        cap *= 2;
    struct flow_seg *v = realloc(t->v, cap * sizeof *v);
    if (!v)
        return -1;
    t->v = v;
    t->cap = cap;
    return 0;
}

void flow_trail_drop(struct flow_trail *t, uint64_t at)
{
    size_t dead = (size_t)(at - t->base);
    if (dead == 0 || dead * 2 < t->n)
        return;
    memmove(t->v, t->v + dead, (t->n - dead) * sizeof *t->v);
    t->n -= dead;
    t->base = at;
}

void flow_trail_free(struct flow_trail *t)
{
    free(t->v);
    memset(t, 0, sizeof *t);
}

/* Begins as struct flow_key does (an entry of a flow_table). */
struct sizes_entry {
    uint64_t ip;
    uint8_t mode;
    uint32_t n;   /* instructions */
    uint32_t off; /* their sizes in bytes[] */
};
_Static_assert(offsetof(struct sizes_entry, mode) == offsetof(struct flow_key, mode),
               "a sizes_entry begins as a flow_key");

void flow_sizes_free(struct flow_sizes *s)
{
    flow_table_free(&s->t);
    free(s->bytes);
    memset(s, 0, sizeof *s);
}

void flow_sizes_clear(struct flow_sizes *s)
{
    flow_table_clear(&s->t, sizeof(struct sizes_entry));
    s->used = 0;
}

/* A new entry for the block at ip: its instructions' sizes, each from the
 * instruction cache (the block was walked: they are there or decode
 * again the same). */
static int build(struct flow_sizes *s, struct flow_bcache *bc, struct flow_cache *ic,
                 ntl_ipt_read_fn read, void *ctx, uint64_t ip, unsigned mode,
                 const struct sizes_entry **out)
{
    const struct flow_block *b;
    int rc = flow_block_get(bc, ic, read, ctx, ip, mode, &b);
    if (rc < 0)
        return rc;
    uint32_t n = b->ninsn;
    if (!s->bytes && !(s->bytes = malloc(FLOW_SIZES_MAX)))
        return NTL_ERR_NOMEM;
    if (s->used + n > FLOW_SIZES_MAX || s->t.used + 1 >= FLOW_SIZES_SLOTS / 2)
        flow_sizes_clear(s);
    struct sizes_entry e = {.ip = ip, .mode = (uint8_t)mode, .n = n, .off = (uint32_t)s->used};
    for (uint32_t i = 0; i < n; i++) {
        const struct flow_insn *in;
        if ((rc = flow_insn_get(ic, read, ctx, ip, mode, &in)) < 0)
            return rc;
        s->bytes[e.off + i] = in->size;
        ip += in->size;
    }
    if (!(*out = flow_table_add(&s->t, sizeof e, FLOW_SIZES_SLOTS, &e)))
        return NTL_ERR_NOMEM;
    s->used += n;
    return 0;
}

int flow_sizes_get(struct flow_sizes *s, struct flow_bcache *bc, struct flow_cache *ic,
                   ntl_ipt_read_fn read, void *ctx, uint64_t ip, unsigned mode,
                   const uint8_t **sizes, uint32_t *n)
{
    const struct sizes_entry *e = flow_table_find(&s->t, sizeof *e, ip, mode);
    if (!e) {
        int rc = build(s, bc, ic, read, ctx, ip, mode, &e);
        if (rc < 0)
            return rc;
    }
    *sizes = s->bytes + e->off;
    *n = e->n;
    return 0;
}
