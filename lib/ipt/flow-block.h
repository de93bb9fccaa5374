/* The flow decoder's blocks (libipt's block cache): per start address and
 * mode, the straight run of instructions up to the first that needs the
 * trace or binds an event (a branch, a MOV CR3, a PTWRITE), with how many
 * instructions it holds and that last instruction. Walking a block costs
 * one lookup however long it is. Built from the instruction cache, so each
 * static instruction is still decoded by Zydis once. Internal to lib/ipt. */
#ifndef NTLENS_LIB_IPT_FLOW_BLOCK_H
#define NTLENS_LIB_IPT_FLOW_BLOCK_H

#include "flow-insn.h"

/* Begins as struct flow_key does (an entry of a flow_table). */
struct flow_block {
    uint64_t ip;           /* of the first instruction */
    uint8_t mode;          /* enum ntl_ipt_exec_mode; 0: an empty slot */
    uint32_t ninsn;        /* instructions, the last included */
    struct flow_insn last; /* the instruction that ends it */
};
_Static_assert(offsetof(struct flow_block, mode) == offsetof(struct flow_key, mode),
               "a flow_block begins as a flow_key");

/* Instructions run straight from ip, n of them (a block or the start of
 * one): the way a run went, kept for telling its instructions one by one
 * (flow-trail.h). */
struct flow_seg {
    uint64_t ip;
    uint64_t n;
};

struct flow_bcache {
    struct flow_table t;
};

/* Most slots: a full cache is emptied and refilled (20 MB at most), so a
 * trace over any amount of code cannot make it grow without limit. */
#define FLOW_BCACHE_MAX ((size_t)1 << 19)
/* Longest block: a longer straight run is split, its last instruction
 * OTHER. */
#define FLOW_BLOCK_MAX 4096

void flow_bcache_free(struct flow_bcache *c);
/* Forgets every block (the image changed). */
void flow_bcache_clear(struct flow_bcache *c);

/* The block at ip in mode into *out (a cache slot, valid until the next
 * call). A block stops short before an instruction that does not decode,
 * so that the walk reaches it as a block's start. Returns 0, or
 * flow_insn_get's statuses for the first instruction. */
int flow_block_get(struct flow_bcache *c, struct flow_cache *ic, ntl_ipt_read_fn read, void *ctx,
                   uint64_t ip, unsigned mode, const struct flow_block **out);

#endif
