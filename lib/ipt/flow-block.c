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
