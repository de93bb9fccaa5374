/* The way RUN items went (ntl_ipt_flow_config.run_ips): the blocks each
 * run ran, in order, as segments (the fast loop copies a decision's path,
 * flow-decide.h, the walk adds its blocks), which the instruction sizes
 * per block (flow_sizes, flow-block.h) turn into their instructions'
 * addresses: each static block is read once, and an instruction then
 * costs a load and a store. Internal to lib/ipt. */
#ifndef NTLENS_LIB_IPT_FLOW_TRAIL_H
#define NTLENS_LIB_IPT_FLOW_TRAIL_H

#include <string.h>

#include "flow-block.h"

/* Segments of the runs not yet handed out and of the one being told;
 * positions are counted from the first segment ever kept (base is v[0]'s). */
struct flow_trail {
    struct flow_seg *v;
    size_t n, cap;
    uint64_t base;
    bool nomem; /* a segment could not be kept (the decoder then fails) */
};

/* Room for more segments. Returns 0, or -1 (nothing changed). */
int flow_trail_grow(struct flow_trail *t, size_t more);

/* k segments appended. Inline: the fast loop adds a decision's path per
 * decision. */
static inline void flow_trail_put(struct flow_trail *t, const struct flow_seg *s, size_t k)
{
    if (t->cap - t->n < k && flow_trail_grow(t, k) < 0) {
        t->nomem = true;
        return;
    }
    memcpy(t->v + t->n, s, k * sizeof *s);
    t->n += k;
}

/* The position after the last segment. */
static inline uint64_t flow_trail_end(const struct flow_trail *t)
{
    return t->base + t->n;
}

/* Forgets the segments before position at (all of them told), moving the
 * rest down when that frees at least half. */
void flow_trail_drop(struct flow_trail *t, uint64_t at);
void flow_trail_free(struct flow_trail *t);

#endif
