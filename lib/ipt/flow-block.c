/* Straight-line blocks of instructions, cached per start address and mode. */
#include <stdlib.h>
#include <string.h>

#include "flow-block.h"
#include "ntlens/error.h"
#include "ntlens/ipt_flow.h"

void flow_bcache_free(struct flow_bcache *c)
{
    free(c->slot);
    memset(c, 0, sizeof *c);
}

void flow_bcache_clear(struct flow_bcache *c)
{
    if (c->slot)
        memset(c->slot, 0, (c->mask + 1) * sizeof *c->slot);
    c->used = 0;
}

static size_t hash(uint64_t ip, unsigned mode)
{
    uint64_t h = (ip ^ (uint64_t)mode << 61) * 0x9e3779b97f4a7c15ull;
    return (size_t)(h >> 20);
}

/* Doubles the table (or makes the first), keeping every entry; at its
 * largest, empties it instead. */
static int grow(struct flow_bcache *c)
{
    size_t n = c->slot ? (c->mask + 1) * 2 : 4096;
    if (n > FLOW_BCACHE_MAX) {
        flow_bcache_clear(c);
        return 0;
    }
    struct flow_block *s = calloc(n, sizeof *s);
    if (!s)
        return NTL_ERR_NOMEM;
    for (size_t i = 0; c->slot && i <= c->mask; i++) {
        if (!c->slot[i].mode)
            continue;
        size_t j = hash(c->slot[i].ip, c->slot[i].mode) & (n - 1);
        while (s[j].mode)
            j = (j + 1) & (n - 1);
        s[j] = c->slot[i];
    }
    free(c->slot);
    c->slot = s;
    c->mask = n - 1;
    return 0;
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
    if (!c->slot && grow(c) < 0)
        return NTL_ERR_NOMEM;
    size_t i = hash(ip, mode) & c->mask;
    for (; c->slot[i].mode; i = (i + 1) & c->mask) {
        if (c->slot[i].ip == ip && c->slot[i].mode == mode) {
            *out = &c->slot[i];
            return 0;
        }
    }
    struct flow_block b = { .ip = ip, .mode = (uint8_t)mode };
    int rc = build(&b, ic, read, ctx);
    if (rc < 0)
        return rc;
    if ((c->used + 1) * 2 > c->mask + 1) {
        if (grow(c) < 0)
            return NTL_ERR_NOMEM;
        for (i = hash(ip, mode) & c->mask; c->slot[i].mode; i = (i + 1) & c->mask)
            ;
    }
    c->slot[i] = b;
    c->used++;
    *out = &c->slot[i];
    return 0;
}
