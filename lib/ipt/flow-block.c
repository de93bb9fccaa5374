/* Straight-line blocks of instructions, cached per start address and mode. */
#include <stdlib.h>
#include <string.h>

#include "flow-block.h"
#include "ntlens/error.h"
#include "ntlens/ipt_flow.h"

void flow_bcache_free(struct flow_bcache *c)
{
    flow_table_free(&c->t);
}

void flow_bcache_clear(struct flow_bcache *c)
{
    flow_table_clear(&c->t, sizeof(struct flow_block));
}

/* Whether a walk goes on past in without looking at the trace. */
static bool straight(const struct flow_insn *in)
{
    return in->iclass == NTL_IPT_IC_OTHER && !in->movcr3;
}

/* The block at b->ip in b->mode into b. */
static int build(struct flow_block *b, struct flow_cache *ic, ntl_ipt_read_fn read, void *ctx)
{
    const struct flow_insn *in;
    uint64_t ip = b->ip;
    int rc = flow_insn_get(ic, read, ctx, ip, b->mode, &in);
    if (rc < 0)
        return rc;
    b->ninsn = 1;
    b->last = *in;
    while (straight(&b->last) && b->ninsn < FLOW_BLOCK_MAX) {
        ip = b->last.ip + b->last.size;
        if (flow_insn_get(ic, read, ctx, ip, b->mode, &in) < 0)
            break;
        b->last = *in;
        b->ninsn++;
    }
    return 0;
}

int flow_block_get(struct flow_bcache *c, struct flow_cache *ic, ntl_ipt_read_fn read, void *ctx,
                   uint64_t ip, unsigned mode, const struct flow_block **out)
{
    const struct flow_block *blk = flow_table_find(&c->t, sizeof *blk, ip, mode);
    if (!blk) {
        struct flow_block b = { .ip = ip, .mode = (uint8_t)mode };
        int rc = build(&b, ic, read, ctx);
        if (rc < 0)
            return rc;
        if (!(blk = flow_table_add(&c->t, sizeof b, FLOW_BCACHE_MAX, &b)))
            return NTL_ERR_NOMEM;
    }
    *out = blk;
    return 0;
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
    s->gen = s->gen == UINT16_MAX ? 1 : (uint16_t)(s->gen + 1);
}

/* A new entry for the block at ip: its instructions' sizes, each from the
 * instruction cache (the block was walked: they are there or decode
 * again the same). */
static int build_sizes(struct flow_sizes *s, struct flow_bcache *bc, struct flow_cache *ic,
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
    if (!s->gen)
        s->gen = 1;
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
                   uint32_t *off, uint32_t *n)
{
    const struct sizes_entry *e = flow_table_find(&s->t, sizeof *e, ip, mode);
    if (!e) {
        int rc = build_sizes(s, bc, ic, read, ctx, ip, mode, &e);
        if (rc < 0)
            return rc;
    }
    *off = e->off;
    *n = e->n;
    return 0;
}
