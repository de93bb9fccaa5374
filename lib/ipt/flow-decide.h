/* The flow decoder's TNT decisions (libxdc's decision cache): for a start
 * address, a mode and the next TNT bits of a packet, where the walk ends
 * after following as many of those bits as it can through conditional
 * branches, direct jumps and calls, and compressed returns to those calls,
 * with the instructions it ran and the return addresses it left pushed. A
 * run of conditional branches then costs one lookup, not one per branch.
 * With no bits (a TIP ahead), the decision is the way through direct jumps
 * and calls to the indirect branch or return that takes the TIP.
 * Internal to lib/ipt. */
#ifndef NTLENS_LIB_IPT_FLOW_DECIDE_H
#define NTLENS_LIB_IPT_FLOW_DECIDE_H

#include <stddef.h>
#include <string.h>

#include "flow-block.h"

/* Most calls a decision follows without their return. */
#define FLOW_DECIDE_STACK 4
/* Most TNT bits a decision is keyed by: 16 measured fastest on the kAFL
 * recordings, whose TIPs have 10 to 20 bits between them (8 took twice
 * the lookups, 24 made decisions too many to stay cached). */
#define FLOW_DECIDE_BITS 16
/* Most blocks a decision walks (a loop of direct jumps takes no bit). */
#define FLOW_DECIDE_BLOCKS 64
/* Or'd into a key's bit count: a TIP follows the bits, and the decision
 * goes on past the last to the branch that takes it (one lookup for a
 * TNT's last bits and the TIP after them). */
#define FLOW_DECIDE_TIP 0x20u
/* In a decision's tip: one direct jump or call lies between its last bit
 * and the branch to the TIP, its target in end (a TIP.PGD ahead binds to
 * it when that is the TIP.PGD's IP); or more than one (FLOW_DECIDE_MANY).
 * A TIP.PGD ahead takes the decision only where it cannot bind to one. */
#define FLOW_DECIDE_DIRECT 2u
#define FLOW_DECIDE_MANY 4u

/* One cache line: addresses other than the key are kept as distances
 * from it (a decision stops before a bit whose target is 2 GB away). */
struct flow_decision {
    uint64_t ip;     /* key: the start */
    struct flow_insn last; /* the instruction that took the last bit, or
                              with no bits the branch to the TIP */
    uint16_t bits;   /* key: the next n bits, the oldest highest */
    uint8_t n;       /* key: how many bits, + 1 (0: an empty slot), with
                        FLOW_DECIDE_TIP */
    uint8_t mode;    /* key */
    uint8_t used;    /* bits it follows (each by one instruction); 0: none
                        (walk block by block); with no bits, 1 when it
                        reaches a branch to a TIP */
    uint8_t npush;   /* return addresses it leaves pushed, push[0] first */
    uint8_t depth;   /* the deepest its calls went */
    uint8_t tip;     /* keyed with FLOW_DECIDE_TIP: 1 when it follows all
                        its bits (if any) and reaches the branch that takes
                        the TIP (last is that branch), | FLOW_DECIDE_DIRECT
                        or _MANY; 0: it ends at its bits */
    uint32_t ninsn;  /* instructions it ran */
    int32_t end;     /* the IP it ends at, right after its last bit, - ip;
                        with tip, the direct branch's target - ip */
    int32_t push[FLOW_DECIDE_STACK]; /* - ip */
};
_Static_assert(sizeof(struct flow_decision) == 64, "a decision fills one cache line");

static inline uint64_t flow_decision_end(const struct flow_decision *d)
{
    return d->ip + (uint64_t)(int64_t)d->end;
}

static inline uint64_t flow_decision_push(const struct flow_decision *d, unsigned i)
{
    return d->ip + (uint64_t)(int64_t)d->push[i];
}

/* Direct-mapped: a new decision takes its slot's place. The table starts
 * small (a short trace pays for few pages) and doubles, forgetting its
 * decisions, while they keep pushing each other out, up to
 * FLOW_DCACHE_MAX slots (64 bytes each, 4 MB). */
#define FLOW_DCACHE_MIN ((size_t)1 << 12)
#define FLOW_DCACHE_MAX ((size_t)1 << 16)

/* With paths: where a decision's blocks are in the segments kept. */
struct flow_dpath {
    uint32_t off, n;
};
/* Most segments kept for the decisions' paths (16 MB): past it, every
 * decision is forgotten and made again as needed (the fuzz build sets
 * fewer, meson.build; at least FLOW_DECIDE_BLOCKS). */
#ifndef FLOW_DPATH_MAX
#define FLOW_DPATH_MAX ((size_t)1 << 20)
#endif

/* Each decision's blocks, in the order it ran them, path[slot] in segs,
 * their instruction sizes in sizes (emptied, a new generation, only with
 * the decisions). */
struct flow_dpaths {
    struct flow_dpath *path;
    struct flow_seg *segs;
    size_t nsegs;
    struct flow_sizes sizes;
};

struct flow_dcache {
    struct flow_decision *slot;
    size_t mask;    /* slots - 1 */
    size_t evicted; /* decisions pushed out since the table was made */
    /* NULL, or (made before the first lookup, flow_dcache_paths) the
     * decisions' paths: behind a pointer, the runs path's table stays
     * as small as it was. */
    struct flow_dpaths *paths;
};

/* The decisions' paths kept from now on. Returns 0, or NTL_ERR_NOMEM. */
int flow_dcache_paths(struct flow_dcache *c);

/* The blocks the decision d (a slot of c, with c->paths) ran, into *n. */
static inline const struct flow_seg *flow_decision_path(const struct flow_dcache *c,
                                                        const struct flow_decision *d,
                                                        unsigned *n)
{
    const struct flow_dpath *p = &c->paths->path[d - c->slot];
    *n = p->n;
    return c->paths->segs + p->off;
}

void flow_dcache_free(struct flow_dcache *c);
/* With paths: flow_sizes_get in their sizes, every decision forgotten with
 * them when they are full. */
int flow_dcache_sizes(struct flow_dcache *c, struct flow_bcache *bc, struct flow_cache *ic,
                      ntl_ipt_read_fn read, void *ctx, uint64_t ip, unsigned mode, uint32_t *off,
                      uint32_t *n);
/* Forgets every decision (the image changed). */
void flow_dcache_clear(struct flow_dcache *c);

/* Whether the table is to double: a decision in 64 slots pushed out since
 * it was made (at half, a pass over foo's trace rebuilt ~100 of its ~1,000
 * decisions, pushed out by a third in their pair of slots, and the table
 * never grew). */
static inline bool flow_dcache_grows(const struct flow_dcache *c)
{
    return c->evicted > c->mask / 64 && c->mask + 1 < FLOW_DCACHE_MAX;
}

static inline size_t flow_decide_hash(uint64_t ip, unsigned mode, unsigned bits, unsigned n)
{
    /* Each part multiplied on its own: a product's high bits, which index
     * the table, depend on every bit of both. (ip ^ bits << 46, one
     * product, left the oldest bits out of the index: decisions for the
     * same IP that differ only there took one pair of slots, and pushed
     * each other out on every pass, 900 rebuilt a pass on mruby.) */
    uint64_t h = ip * 0x9e3779b97f4a7c15ull ^
                 (uint64_t)(mode << 24 | bits << 6 | n) * 0xc2b2ae3d27d4eb4full;
    return (size_t)(h >> 40);
}

/* A decision's bits, n and mode, one word: a key compared in two. */
_Static_assert(offsetof(struct flow_decision, n) == offsetof(struct flow_decision, bits) + 2 &&
                   offsetof(struct flow_decision, mode) == offsetof(struct flow_decision, bits) + 3,
               "bits, n and mode are one word");
struct flow_decide_tag {
    uint16_t bits;
    uint8_t n, mode;
};

static inline bool flow_decide_same(const struct flow_decision *d, uint64_t ip, unsigned mode,
                                    unsigned bits, unsigned n)
{
    struct flow_decide_tag t = {(uint16_t)bits, (uint8_t)(n + 1), (uint8_t)mode};
    uint32_t want, have;
    memcpy(&want, &t, sizeof want);
    memcpy(&have, (const char *)d + offsetof(struct flow_decision, bits), sizeof have);
    return have == want && d->ip == ip;
}

/* flow_decide's way when the decision is not in its first slot: the table
 * made, or doubled when it is to grow (checked here, not on every hit),
 * then the second slot, else a new decision. */
int flow_decide_miss(struct flow_dcache *c, struct flow_bcache *bc, struct flow_cache *ic,
                     ntl_ipt_read_fn read, void *ctx, uint64_t ip, unsigned mode, unsigned bits,
                     unsigned n, const struct flow_decision **out);

/* The decision for ip, mode and n bits in its first slot, or NULL: the
 * hit path alone (the fast loop keeps the caches flow_decide_miss needs
 * out of its own). */
static inline __attribute__((always_inline)) const struct flow_decision *
flow_decide_hit(const struct flow_dcache *c, uint64_t ip, unsigned mode, unsigned bits, unsigned n)
{
    if (!c->slot)
        return NULL;
    const struct flow_decision *d = &c->slot[flow_decide_hash(ip, mode, bits, n) & c->mask];
    return flow_decide_same(d, ip, mode, bits, n) ? d : NULL;
}

/* The decision for ip, mode and the n (0..FLOW_DECIDE_BITS, or'd with
 * FLOW_DECIDE_TIP when a TIP follows them) bits into *out (a cache slot,
 * valid until the next call). Returns 0, or NTL_ERR_NOMEM. Inline: the
 * walk looks one up per TNT and per TIP, and most are in their first
 * slot. Two ways: a decision is in its slot or the one next to it, so two
 * hot decisions whose hashes meet do not rebuild each other forever. */
static inline __attribute__((always_inline)) int
flow_decide(struct flow_dcache *c, struct flow_bcache *bc, struct flow_cache *ic,
            ntl_ipt_read_fn read, void *ctx, uint64_t ip, unsigned mode, unsigned bits, unsigned n,
            const struct flow_decision **out)
{
    if ((*out = flow_decide_hit(c, ip, mode, bits, n)))
        return 0;
    return flow_decide_miss(c, bc, ic, read, ctx, ip, mode, bits, n, out);
}

#endif
