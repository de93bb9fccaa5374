/* The flow decoder's fast loop (libxdc's shape): one loop over the trace
 * bytes for what most of a kAFL trace is between its PSBs, PADs, TNT-8s
 * and TIPs with an IP, each run of TNT bits and the TIP after it taken
 * through the cached decisions (flow-decide.h) without an event between.
 * It stops at a packet boundary at anything else (TIP.PGE, TIP.PGD, FUP,
 * PSB, MODE, timing packets, TNT-64, a TIP without IP, the last 16 bytes)
 * and where a decision does not take all its bits or its TIP; the flow
 * decoder (flow.c) then goes on from there as it would have, so the items
 * and errors are the same. Internal to lib/ipt. */
#ifndef NTLENS_LIB_IPT_FLOW_FAST_H
#define NTLENS_LIB_IPT_FLOW_FAST_H

#include "flow-decide.h"
#include "flow-trail.h"
#include "ntlens/ipt_event.h"

/* A TIP.PGD/TIP.PGE pair the loop took: the instructions since the last
 * one (ninsn, traced of them taking trace, the last the branch the TIP.PGD
 * binds to), the IP the TIP.PGD reports (suppressed: none) and the
 * TIP.PGE's. flow.c queues its RUN, DISABLED and ENABLED. */
struct flow_pair {
    struct flow_insn last;
    uint64_t ninsn, traced, pgd_ip, pge_ip;
    bool suppressed;
};

struct flow_fast {
    /* In: the caches and the image, as flow_decide takes them. */
    struct flow_dcache *dc;
    struct flow_bcache *bc;
    struct flow_cache *ic;
    ntl_ipt_read_fn read;
    void *ctx;
    /* In and out: the event decoder (its cursor, at a packet boundary,
     * and its last IP), the walk and its return stack. */
    struct ntl_ipt_evd *evd;
    uint64_t ip;
    uint8_t mode;
    unsigned steps;  /* instructions since a packet was taken */
    uint64_t *rs;    /* NTL_IPT_RETSTACK entries */
    unsigned rs_top, rs_n;
    /* In: NULL, or the trail each decision's path is added to (the
     * decisions' paths kept), and the loop stops at a packet boundary once
     * it holds trail_stop segments. */
    struct flow_trail *trail;
    size_t trail_stop;
    /* Out: the instructions that ran, traced of them taking trace, the
     * last one last (when ninsn), after of them since the last packet
     * taken (took: one was). */
    uint64_t ninsn, traced, after;
    struct flow_insn last;
    bool took;
    /* Out: 0, or it stopped in TNT-8s that the walk reads as one, from
     * group to evd's cursor, their last left bits not taken. pgd: a
     * TIP.PGD follows them (or is at the cursor, left 0), and the
     * decision for those bits (or none) keyed for it. */
    unsigned left;
    const uint8_t *group;
    const struct flow_decision *pgd;
    /* In: room for pair_room pairs at pairs (0: the loop stops at every
     * TIP.PGD), and whether a TIP.PGD without IP may bind to a direct
     * branch (flow.c's pgd_takes). Out: npairs taken. A pair is taken
     * where flow.c's fast_pgd would bind the TIP.PGD and fast_pge read
     * the TIP.PGE right after it. */
    struct flow_pair *pairs;
    unsigned pair_room, npairs;
    bool pgd_direct;
};

/* Runs the loop from fs's inputs, setting every output. Returns 0, or
 * NTL_ERR_NOMEM. */
int flow_fast_run(struct flow_fast *fs);

#endif
