/* Intel PT flow on several threads: a trace split at PSBs, each part
 * decoded on its own thread, the results handed out in trace order with
 * what one decoder over the whole trace returns (ipt_flow.h), error by
 * error.
 *
 * A part is decoded from its PSB until the decoder has applied the PSB+ of
 * a later part's first PSB (the seam, ntl_ipt_flow_seam). There the later
 * part, synchronised at that PSB, takes over when its decoder's state is
 * the earlier one's but for the return stack. The return stack is the one
 * thing a part cannot know at its start: a compressed return that finds
 * the later part's stack empty (which real processors do not emit after a
 * PSB, but a trace may hold) would have returned through the earlier part's
 * calls. Such a part, and one whose state differs at its seam, is decoded
 * again on the caller's thread from where the result is still sure, with
 * the return stack the earlier part left. */
#ifndef NTLENS_IPT_FLOW_SPLIT_H
#define NTLENS_IPT_FLOW_SPLIT_H

#include <stdbool.h>
#include <stdint.h>

#include "ntlens/error.h"
#include "ntlens/ipt_flow.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What a record is. */
enum ntl_ipt_rec_kind {
    NTL_IPT_REC_ITEM = 1,    /* it: an item; offset: ntl_ipt_flow_offset before it */
    NTL_IPT_REC_SYNC_ERROR,  /* the first synchronisation failed: status; nothing follows */
    NTL_IPT_REC_ERROR,       /* ntl_ipt_flow_next failed: status, offset and ip
                                (ntl_ipt_flow_where); decoding goes on after a
                                resync or recovery */
    NTL_IPT_REC_RESYNC_ERROR /* the resync or recovery after it failed: status,
                                offset and ip; nothing follows */
};

struct ntl_ipt_flow_rec {
    uint8_t kind; /* enum ntl_ipt_rec_kind */
    int status;   /* errors: the status (NTL_ERR_NOT_FOUND: no PSB to go on at) */
    uint64_t offset, ip;
    struct ntl_ipt_flow_item it;
};

/* Takes each record in order. Returns 0 to go on, or a negative status
 * that stops the decode and is returned. */
typedef int (*ntl_ipt_rec_fn)(void *ctx, const struct ntl_ipt_flow_rec *rec);

/* How a split decode went, for tests and the bench. */
struct ntl_ipt_split_stats {
    unsigned parts;     /* parts the trace was split into (0: not split) */
    unsigned taken;     /* seams where the later part took over */
    unsigned redecoded; /* seams where the caller's thread decoded again */
    /* CPU seconds of the busiest decoding thread and of the caller's: with
     * a core each, the decode takes about the larger. */
    double busiest, caller;
};

struct ntl_ipt_split_config {
    unsigned jobs; /* threads decoding (1: the caller's alone) */
    bool recover;  /* after an error ntl_ipt_flow_recover, else ntl_ipt_flow_resync */
    /* Parts per job (0: 2): more parts balance the threads better, each
     * costs a synchronisation and a cold decode cache (bench_ipt_jobs -p:
     * 4 took 1.2-1.5x the CPU of 2 on kafl-foo and kafl-unzip, the same
     * on the larger recordings). */
    unsigned parts_per_job;
    struct ntl_ipt_split_stats *stats; /* filled in when not NULL */
};

/* Decodes the whole trace of cfg (whose read function must be safe to call
 * from several threads at once: ntl_ipt_image_read is, and
 * ntl_ipt_spaces_read is while nothing switches its space) and hands fn
 * every record in order, on the caller's thread. Returns 0; fn's status;
 * NTL_ERR_NOMEM or NTL_ERR_LIMIT (a thread could not be started), err set. */
int ntl_ipt_flow_split(const struct ntl_ipt_flow_config *cfg, const struct ntl_ipt_split_config *sc,
                       ntl_ipt_rec_fn fn, void *ctx, struct ntl_error *err);

/* Where the parts would start (trace offsets of PSBs, the first PSB first)
 * into starts[0..max), for tests. Returns how many. Cannot fail. */
unsigned ntl_ipt_flow_split_starts(const uint8_t *buf, size_t size, unsigned parts,
                                   uint64_t *starts, unsigned max);

#ifdef __cplusplus
}
#endif
#endif
