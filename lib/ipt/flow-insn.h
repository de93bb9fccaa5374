/* The flow decoder's instructions: length and branch class from Zydis,
 * decoded once per address and mode and kept in an open-addressing cache,
 * which the block cache (flow-block.h) is built from. Internal to lib/ipt. */
#ifndef NTLENS_LIB_IPT_FLOW_INSN_H
#define NTLENS_LIB_IPT_FLOW_INSN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "flow-table.h"
#include "ntlens/ipt_image.h"

/* Begins as struct flow_key does (an entry of a flow_table). */
struct flow_insn {
    uint64_t ip;
    uint8_t mode;    /* enum ntl_ipt_exec_mode; 0: an empty slot */
    uint8_t size;
    uint8_t iclass;  /* enum ntl_ipt_iclass */
    bool vmentry;    /* VMLAUNCH or VMRESUME (erratum SKD022) */
    bool movcr3;     /* MOV CR3: where a PIP or a TIP.PGD without IP binds */
    uint8_t evclass; /* enum flow_evt_class: where an Event Trace event binds */
    uint64_t target; /* direct branches: the target */
};
_Static_assert(offsetof(struct flow_insn, mode) == offsetof(struct flow_key, mode),
               "a flow_insn begins as a flow_key");

struct flow_cache {
    struct flow_table t;
};

/* Most slots: a full cache is emptied and refilled (48 MB at most), so a
 * trace over any amount of code cannot make it grow without limit. */
#define FLOW_CACHE_MAX ((size_t)1 << 21)

void flow_cache_free(struct flow_cache *c);

/* The instruction at ip in mode into *out (a cache slot, valid until the
 * next call). Returns 0, or:
 *   NTL_IPT_NOMAP     nothing is mapped at ip;
 *   NTL_IPT_BAD_INSN  the bytes do not decode, or the mode is unknown;
 *   NTL_ERR_NOMEM     the cache could not grow. */
int flow_insn_get(struct flow_cache *c, ntl_ipt_read_fn read, void *ctx, uint64_t ip,
                  unsigned mode, const struct flow_insn **out);

#endif
