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

#include "flow-block.h"

/* Most calls a decision follows without their return. */
#define FLOW_DECIDE_STACK 4
/* Most TNT bits a decision is keyed by. */
#define FLOW_DECIDE_BITS 8
/* Most blocks a decision walks (a loop of direct jumps takes no bit). */
#define FLOW_DECIDE_BLOCKS 64

struct flow_decision {
    uint64_t ip;     /* key: the start */
    uint16_t bits;   /* key: the next n bits, the oldest highest */
    uint8_t n;       /* key: how many bits, + 1 (0: an empty slot) */
    uint8_t mode;    /* key */
    uint8_t used;    /* bits it follows; 0: none (walk block by block); with
                        no bits, 1 when it reaches a branch to a TIP */
    uint8_t npush;   /* return addresses it leaves pushed, push[0] first */
    uint8_t depth;   /* the deepest its calls went */
    uint32_t ninsn;  /* instructions it ran */
    uint32_t traced; /* of them, those that took a bit */
    uint64_t end;    /* the IP it ends at, right after its last bit */
    struct flow_insn last; /* the instruction that took the last bit, or
                              with no bits the branch to the TIP */
    uint64_t push[FLOW_DECIDE_STACK];
};

/* Direct-mapped: a new decision takes its slot's place. The table starts
 * small (a short trace pays for few pages) and doubles, forgetting its
 * decisions, while they keep pushing each other out, up to
 * FLOW_DCACHE_MAX slots (88 bytes each, 5.8 MB). */
#define FLOW_DCACHE_MIN ((size_t)1 << 12)
#define FLOW_DCACHE_MAX ((size_t)1 << 16)

struct flow_dcache {
    struct flow_decision *slot;
    size_t mask;    /* slots - 1 */
    size_t evicted; /* decisions pushed out since the table was made */
};

void flow_dcache_free(struct flow_dcache *c);
/* Forgets every decision (the image changed). */
void flow_dcache_clear(struct flow_dcache *c);

/* The decision for ip, mode and the n (0..FLOW_DECIDE_BITS) bits into
 * *out (a cache slot, valid until the next call). Returns 0, or
 * NTL_ERR_NOMEM. */
int flow_decide(struct flow_dcache *c, struct flow_bcache *bc, struct flow_cache *ic,
                ntl_ipt_read_fn read, void *ctx, uint64_t ip, unsigned mode, unsigned bits,
                unsigned n, const struct flow_decision **out);

#endif
