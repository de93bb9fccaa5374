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
 * (flow-trail.h). Their sizes are at off in a flow_sizes' bytes while its
 * generation is gen (0: not looked up). */
struct flow_seg {
    uint64_t ip;
    uint32_t off;
    uint16_t n;
    uint16_t gen;
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

_Static_assert(FLOW_BLOCK_MAX <= UINT16_MAX, "a block's length fits a segment");

void flow_bcache_free(struct flow_bcache *c);
/* Forgets every block (the image changed). */
void flow_bcache_clear(struct flow_bcache *c);

/* The block at ip in mode into *out (a cache slot, valid until the next
 * call). A block stops short before an instruction that does not decode,
 * so that the walk reaches it as a block's start. Returns 0, or
 * flow_insn_get's statuses for the first instruction. */
int flow_block_get(struct flow_bcache *c, struct flow_cache *ic, ntl_ipt_read_fn read, void *ctx,
                   uint64_t ip, unsigned mode, const struct flow_block **out);

/* Instruction sizes of the blocks (of the straight run from a start
 * address): entries of a flow_table, their sizes in one array, both
 * emptied together when full (flow_sizes_full); gen then changes, so that
 * a segment that points in them is looked up again. */
struct flow_sizes {
    struct flow_table t;
    uint8_t *bytes;
    size_t used;
    uint16_t gen; /* 1 and up, never 0 */
};

/* Most bytes of sizes (16 MB), slots and entries (the fuzz build sets
 * fewer entries, meson.build, so that emptying it is reached). */
#define FLOW_SIZES_MAX ((size_t)1 << 24)
#define FLOW_SIZES_SLOTS ((size_t)1 << 19)
#ifndef FLOW_SIZES_ENTRIES
#define FLOW_SIZES_ENTRIES (FLOW_SIZES_SLOTS / 2 - 1)
#endif

void flow_sizes_free(struct flow_sizes *s);
/* Forgets every entry (full, or the image changed): a new generation. */
void flow_sizes_clear(struct flow_sizes *s);
/* Whether k more blocks may not fit: clear it first. */
static inline bool flow_sizes_full(const struct flow_sizes *s, size_t k)
{
    return s->used + k * FLOW_BLOCK_MAX > FLOW_SIZES_MAX || s->t.used + k > FLOW_SIZES_ENTRIES;
}

/* The sizes of the instructions of the block at ip in mode into *sizes
 * (valid until s is cleared), how many into *n, where they are in
 * s->bytes into *off. The caller makes room (flow_sizes_full). Returns 0,
 * or flow_block_get's statuses. */
int flow_sizes_get(struct flow_sizes *s, struct flow_bcache *bc, struct flow_cache *ic,
                   ntl_ipt_read_fn read, void *ctx, uint64_t ip, unsigned mode,
                   uint32_t *off, uint32_t *n);

#endif
