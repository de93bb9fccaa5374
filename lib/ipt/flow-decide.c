/* TNT decisions: runs of conditional branches followed by one lookup. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "flow-decide.h"
#include "ntlens/error.h"
#include "ntlens/ipt_flow.h"

void flow_dcache_free(struct flow_dcache *c)
{
    free(c->slot);
    if (c->paths) {
        free(c->paths->path);
        free(c->paths->segs);
        flow_sizes_free(&c->paths->sizes);
        free(c->paths);
    }
    memset(c, 0, sizeof *c);
}

int flow_dcache_paths(struct flow_dcache *c)
{
    if (!c->paths && !(c->paths = calloc(1, sizeof *c->paths)))
        return NTL_ERR_NOMEM;
    return 0;
}

/* Every decision and instruction size forgotten but d's decision (a
 * slot of c or NULL), which is being made. */
static void clear_all(struct flow_dcache *c, struct flow_decision *d)
{
    struct flow_decision made;
    if (d)
        made = *d;
    flow_dcache_clear(c);
    flow_sizes_clear(&c->paths->sizes);
    if (d)
        *d = made;
}

int flow_dcache_sizes(struct flow_dcache *c, struct flow_bcache *bc, struct flow_cache *ic,
                      ntl_ipt_read_fn read, void *ctx, uint64_t ip, unsigned mode, uint32_t *off,
                      uint32_t *n)
{
    if (flow_sizes_full(&c->paths->sizes, 1))
        clear_all(c, NULL);
    return flow_sizes_get(&c->paths->sizes, bc, ic, read, ctx, ip, mode, off, n);
}

void flow_dcache_clear(struct flow_dcache *c)
{
    if (c->slot)
        memset(c->slot, 0, (c->mask + 1) * sizeof *c->slot);
    c->evicted = 0;
    if (c->paths)
        c->paths->nsegs = 0;
}

/* The decisions of the table old (mask omask, paths opath or NULL) into
 * c's new one, each into its slot or the one next to it; one whose pair
 * is full is dropped (made again when needed). Their paths stay where
 * they are in the segments kept. */
static void rehash(struct flow_dcache *c, const struct flow_decision *old, size_t omask,
                   const struct flow_dpath *opath)
{
    for (size_t i = 0; i <= omask; i++) {
        const struct flow_decision *d = &old[i];
        if (!d->n)
            continue;
        size_t j = flow_decide_hash(d->ip, d->mode, d->bits, d->n - 1u) & c->mask;
        if (c->slot[j].n && c->slot[j ^= 1].n)
            continue;
        c->slot[j] = *d;
        if (opath)
            c->paths->path[j] = opath[i];
    }
}

/* The first table, or one twice the size when decisions keep pushing each
 * other out, the decisions kept (a table emptied on growing made foo's
 * ~1,000 again after each doubling). */
static int resize(struct flow_dcache *c)
{
    size_t n = c->slot ? (c->mask + 1) * 2 : FLOW_DCACHE_MIN;
    /* Aligned: a lookup reads one cache line. */
    struct flow_decision *s = aligned_alloc(64, n * sizeof *s);
    struct flow_dpath *p = c->paths ? malloc(n * sizeof *p) : NULL;
    if (!s || (c->paths && !p)) {
        free(p);
        free(s);
        return NTL_ERR_NOMEM;
    }
    memset(s, 0, n * sizeof *s);
    struct flow_decision *old = c->slot;
    struct flow_dpath *opath = c->paths ? c->paths->path : NULL;
    size_t omask = c->mask;
    c->slot = s;
    c->mask = n - 1;
    c->evicted = 0;
    if (c->paths)
        c->paths->path = p;
    if (old)
        rehash(c, old, omask, opath);
    free(old);
    free(opath);
    return 0;
}

/* With paths: the first kept of the segments segs as d's path, each
 * with its instruction sizes (the fast loop's runs are then told without
 * a lookup per block). Past FLOW_DPATH_MAX segments or a full sizes cache,
 * both are emptied first (d made anew after). */
static int keep_path(struct flow_dcache *c, struct flow_decision *d, struct flow_bcache *bc,
                     struct flow_cache *ic, ntl_ipt_read_fn read, void *ctx,
                     struct flow_seg *segs, unsigned kept)
{
    struct flow_dpaths *ps = c->paths;
    if (!ps->segs && !(ps->segs = malloc(FLOW_DPATH_MAX * sizeof *ps->segs)))
        return NTL_ERR_NOMEM;
    if (ps->nsegs + kept > FLOW_DPATH_MAX || flow_sizes_full(&ps->sizes, kept))
        clear_all(c, d);
    for (unsigned i = 0; i < kept; i++) {
        uint32_t off, n;
        /* Found, the block having just been walked; else (out of memory)
         * the segment's sizes are looked up when its run is told. */
        if (flow_sizes_get(&ps->sizes, bc, ic, read, ctx, segs[i].ip, d->mode, &off, &n) == 0 &&
            n >= segs[i].n) {
            segs[i].off = off;
            segs[i].gen = ps->sizes.gen;
        }
    }
    memcpy(ps->segs + ps->nsegs, segs, kept * sizeof *segs);
    ps->path[d - c->slot] = (struct flow_dpath){(uint32_t)ps->nsegs, kept};
    ps->nsegs += kept;
    return 0;
}

/* to - from, when it fits a decision's 32 bits. */
static bool distance(uint64_t from, uint64_t to, int32_t *out)
{
    int64_t d = (int64_t)(to - from);
    *out = (int32_t)d;
    return d == (int64_t)*out;
}

/* The walk's state into d: it ends there (after in, at ip, with sp
 * return addresses of stack left pushed). Returns false, d unchanged,
 * when an address is too far from d->ip to keep. */
static bool keep(struct flow_decision *d, const struct flow_insn *in, uint64_t ip,
                 const uint64_t *stack, unsigned sp, unsigned depth, uint32_t ninsn)
{
    int32_t end, push[FLOW_DECIDE_STACK];
    if (!distance(d->ip, ip, &end))
        return false;
    for (unsigned i = 0; i < sp; i++)
        if (!distance(d->ip, stack[i], &push[i]))
            return false;
    d->ninsn = ninsn;
    d->end = end;
    d->last = *in;
    d->npush = (uint8_t)sp;
    d->depth = (uint8_t)depth;
    memcpy(d->push, push, sp * sizeof push[0]);
    return true;
}

/* Walks from d->ip with d->n bits, keeping in d the state right after the
 * last bit taken: the decision ends there. It stops at a block it cannot
 * follow alone: an indirect branch, a return to a call it did not see, a
 * not-taken compressed return (an error the per-block walk reports), a
 * MOV CR3, a PTWRITE, code that does not decode. The blocks it walked go
 * into segs (FLOW_DECIDE_BLOCKS), *kept of them up to where it ends. */
static void build(struct flow_decision *d, struct flow_bcache *bc, struct flow_cache *ic,
                  ntl_ipt_read_fn read, void *ctx, struct flow_seg *segs, unsigned *kept)
{
    uint64_t ip = d->ip, stack[FLOW_DECIDE_STACK];
    unsigned n = (d->n - 1u) & ~FLOW_DECIDE_TIP, sp = 0, depth = 0, used = 0;
    bool keyed = (d->n - 1u) & FLOW_DECIDE_TIP, tip = n == 0 || keyed;
    uint32_t ninsn = 0;
    /* Direct jumps and calls after the last bit, the last one's target. */
    unsigned ndirect = 0;
    uint64_t direct = 0;
    for (int blocks = 0; (used < n || tip) && blocks < FLOW_DECIDE_BLOCKS; blocks++) {
        const struct flow_block *b;
        if (flow_block_get(bc, ic, read, ctx, ip, d->mode, &b) < 0)
            return;
        segs[blocks] = (struct flow_seg){.ip = b->ip, .n = (uint16_t)b->ninsn};
        const struct flow_insn *in = &b->last;
        uint64_t next = in->ip + in->size;
        int bit = used < n ? d->bits >> (n - 1 - used) & 1 : 0;
        ninsn += b->ninsn;
        if (used == n && in->iclass != NTL_IPT_IC_OTHER && in->iclass != NTL_IPT_IC_JUMP &&
            in->iclass != NTL_IPT_IC_CALL) {
            /* The bits used up: the way to the branch that takes the TIP
             * (with bits, the state after the last stays kept if there
             * is none). */
            if (in->iclass != NTL_IPT_IC_COND && in->iclass != NTL_IPT_IC_PTWRITE &&
                keep(d, in, d->ip, stack, sp, depth, ninsn)) {
                *kept = (unsigned)blocks + 1;
                d->used = (uint8_t)(n ? n : 1);
                d->tip = keyed;
                if (keyed && ndirect != 0)
                    d->tip |= ndirect == 1 && distance(d->ip, direct, &d->end)
                                  ? FLOW_DECIDE_DIRECT : FLOW_DECIDE_MANY;
            }
            return;
        }
        switch (in->iclass) {
        case NTL_IPT_IC_OTHER:
            if (in->movcr3)
                return;
            ip = next;
            continue;
        case NTL_IPT_IC_JUMP:
            if (used == n)
                ndirect++, direct = in->target;
            ip = in->target;
            continue;
        case NTL_IPT_IC_CALL:
            if (used == n)
                ndirect++, direct = in->target;
            if (in->target != next) {
                if (sp == FLOW_DECIDE_STACK)
                    return;
                stack[sp++] = next;
                depth = sp > depth ? sp : depth;
            }
            ip = in->target;
            continue;
        case NTL_IPT_IC_COND:
            ip = bit ? in->target : next;
            break;
        case NTL_IPT_IC_RET:
            if (!bit || sp == 0)
                return;
            ip = stack[--sp];
            break;
        default:
            return;
        }
        if (!keep(d, in, ip, stack, sp, depth, ninsn))
            return;
        *kept = (unsigned)blocks + 1;
        d->used = (uint8_t)++used;
    }
}

int flow_decide_miss(struct flow_dcache *c, struct flow_bcache *bc, struct flow_cache *ic,
                     ntl_ipt_read_fn read, void *ctx, uint64_t ip, unsigned mode, unsigned bits,
                     unsigned n, const struct flow_decision **out)
{
    if ((!c->slot || flow_dcache_grows(c)) &&
        resize(c) < 0)
        return NTL_ERR_NOMEM;
    size_t i = flow_decide_hash(ip, mode, bits, n) & c->mask;
    struct flow_decision *d = &c->slot[i];
    if (!flow_decide_same(d, ip, mode, bits, n)) {
        struct flow_decision *e = &c->slot[i ^ 1];
        if (flow_decide_same(e, ip, mode, bits, n)) {
            *out = e;
            return 0;
        }
        if (d->n && !e->n)
            d = e;
        c->evicted += d->n != 0;
        memset(d, 0, sizeof *d);
        d->ip = ip;
        d->bits = (uint16_t)bits;
        d->n = (uint8_t)(n + 1);
        d->mode = (uint8_t)mode;
        struct flow_seg segs[FLOW_DECIDE_BLOCKS];
        unsigned kept = 0;
        build(d, bc, ic, read, ctx, segs, &kept);
        if (c->paths && keep_path(c, d, bc, ic, read, ctx, segs, kept) < 0) {
            memset(d, 0, sizeof *d);
            return NTL_ERR_NOMEM;
        }
    }
    *out = d;
    return 0;
}
