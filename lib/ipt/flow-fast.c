/* The flow decoder's fast loop: TNT-8s and TIPs straight from the trace
 * bytes into cached decisions. Each step mirrors what flow.c's walk does
 * through the event layer (walk_peek, tnt_merge, decide): the same TNT-8s
 * read as one, the same decision keys, the same return stack, so that
 * stopping anywhere leaves the state that walk would have had. */
#include "flow-fast.h"
#include "ntlens/ipt_flow.h"

/* As flow.c's tnt_merge: most TNT-8s read as one, and the bits a merged
 * TNT stops taking more at (a TNT-8 has at most 6). */
#define GROUP_SEGS 16
#define GROUP_LIMIT (64 - 6)

static const uint64_t masks[8] = NTL_IPT_FAST_MASKS_;
/* Bits of the last IP each compression keeps (ntl_ipt_last_ip_update). */
static const uint64_t keep[8] = {0, ~0xffffull, ~0xffffffffull, 0, ~0xffffffffffffull, 0, 0, 0};
/* The shift that sign-extends each compression's raw IP (48 bits for
 * NTL_IPT_IPC_SEXT_48, none else): two shifts, not a test and a select. */
static const uint8_t sext[8] = {[NTL_IPT_IPC_SEXT_48] = 16};

/* PADs passed over as ntl_ipt_evd_next_tnt passes them (8 at a time). */
static inline const uint8_t *skip_pads(const uint8_t *c, const uint8_t *end)
{
    while (c < end && *c == 0) {
        uint64_t w = ntl_ipt_load64_(c);
        c += w ? (unsigned)__builtin_ctzll(w) >> 3 : 8;
    }
    return c;
}

static inline bool is_tnt8(unsigned b)
{
    return b != 0 && !(b & 1) && b != 2;
}

/* The TIP with an IP at c, NULL when there is none (a look ahead as
 * ntl_ipt_evd_tip_ahead's). */
static inline const struct ntl_ipt_fast_ *tip_at(const uint8_t *c, const uint8_t *end)
{
    if (c >= end)
        return NULL;
    const struct ntl_ipt_fast_ *e = &ntl_ipt_fast_table_[*c];
    return e->ip_kind && e->pkt.type == NTL_IPT_TIP && e->pkt.count != NTL_IPT_IPC_SUPPRESSED
               ? e : NULL;
}

/* The TIP e at c read: the last IP updated as ntl_ipt_evd_next_ip does.
 * Returns its IP. */
static inline uint64_t ip_of(const struct ntl_ipt_evd *evd, const uint8_t *c,
                             const struct ntl_ipt_fast_ *e)
{
    unsigned ipc = e->pkt.count;
    uint64_t raw = e->pkt.payload | (ntl_ipt_load64_(c + 1) & masks[e->mask]);
    raw = (uint64_t)((int64_t)(raw << sext[ipc]) >> sext[ipc]);
    return (evd->last_ip.ip & keep[ipc]) | (raw & ~keep[ipc]);
}

static inline uint64_t take_tip(struct ntl_ipt_evd *evd, const uint8_t *c,
                                const struct ntl_ipt_fast_ *e)
{
    struct ntl_ipt_last_ip *l = &evd->last_ip;
    l->ip = ip_of(evd, c, e);
    l->have_ip = true;
    l->suppressed = false;
    return l->ip;
}

static inline void call_push(struct flow_fast *fs, uint64_t ret)
{
    fs->rs[fs->rs_top] = ret;
    fs->rs_top = (fs->rs_top + 1) % NTL_IPT_RETSTACK;
    if (fs->rs_n < NTL_IPT_RETSTACK)
        fs->rs_n++;
}

/* The decision d taken (as flow.c's decide takes it): its return
 * addresses pushed, its instructions into the run, traced of them taking
 * trace; with trail (a constant in each copy of the loop), its path into
 * fs->trail. */
static inline void apply(struct flow_fast *fs, const struct flow_decision *d, unsigned traced,
                         bool trail)
{
    unsigned had = fs->rs_n;
    for (unsigned i = 0; i < d->npush; i++)
        call_push(fs, flow_decision_push(d, i));
    if (had + d->depth > NTL_IPT_RETSTACK)
        fs->rs_n = NTL_IPT_RETSTACK - (d->depth - d->npush);
    fs->ninsn += d->ninsn;
    fs->after += d->ninsn;
    fs->traced += traced;
    fs->last = d->last;
    fs->steps = 0;
    if (trail) {
        unsigned k;
        const struct flow_seg *path = flow_decision_path(fs->dc, d, &k);
        flow_trail_put(fs->trail, path, k);
    }
}

/* A packet taken: what follows counts from here. */
static inline void took(struct flow_fast *fs)
{
    fs->took = true;
    fs->after = 0;
}

/* flow_decide from fs's state, its miss path out of line with the caches
 * and the image it takes: the hit path loads none of them (callgrind: 3.4%
 * of warm mruby's instructions, foo 3.7%). */
static __attribute__((noinline)) int decide_miss(struct flow_fast *fs, unsigned bits, unsigned n,
                                                 const struct flow_decision **d)
{
    return flow_decide_miss(fs->dc, fs->bc, fs->ic, fs->read, fs->ctx, fs->ip, fs->mode, bits, n,
                            d);
}

static inline int decide(struct flow_fast *fs, unsigned bits, unsigned n,
                         const struct flow_decision **d)
{
    if ((*d = flow_decide_hit(fs->dc, fs->ip, fs->mode, bits, n)))
        return 0;
    return decide_miss(fs, bits, n, d);
}

/* The decision for the next bits, or NULL when the walk should take them
 * itself (it stops short of them, or past the step limit). *rc: 0 or
 * NTL_ERR_NOMEM. */
static inline const struct flow_decision *lookup(struct flow_fast *fs, unsigned bits,
                                                 unsigned n, int *rc)
{
    const struct flow_decision *d;
    *rc = decide(fs, bits, n, &d);
    if (*rc < 0 || !d->used || fs->steps + d->ninsn > NTL_IPT_FLOW_MAX_STEPS)
        return NULL;
    return d;
}

/* The TIP e at c after decision d (its branch to it last). */
static inline const uint8_t *to_tip(struct flow_fast *fs, const struct flow_decision *d,
                                    const uint8_t *c, const struct ntl_ipt_fast_ *e)
{
    if (d->last.iclass == NTL_IPT_IC_CALL_IND)
        call_push(fs, d->last.ip + d->last.size);
    fs->ip = take_tip(fs->evd, c, e);
    took(fs);
    return c + e->pkt.size;
}

/* The TIP.PGD at t after decision d (traced of its instructions taking
 * trace), with the TIP.PGE right after it (PADs between): taken as a pair
 * where flow.c's fast_pgd would bind the TIP.PGD (pgd_takes) and fast_pge
 * read the TIP.PGE. Returns the cursor after the TIP.PGE, or NULL (nothing
 * moved) where flow.c takes the TIP.PGD. */
static __attribute__((noinline)) const uint8_t *
pair(struct flow_fast *fs, const struct flow_decision *d, const uint8_t *t,
     const uint8_t *end, unsigned traced)
{
    if (!fs->pair_room || !d->used || fs->steps + d->ninsn > NTL_IPT_FLOW_MAX_STEPS ||
        !(d->tip & 1) || (d->tip & FLOW_DECIDE_MANY))
        return NULL;
    const struct ntl_ipt_fast_ *g = &ntl_ipt_fast_table_[*t];
    bool suppressed = g->pkt.count == NTL_IPT_IPC_SUPPRESSED;
    uint64_t pgd_ip = suppressed ? 0 : ip_of(fs->evd, t, g);
    if ((d->tip & FLOW_DECIDE_DIRECT) &&
        (suppressed ? !fs->pgd_direct : pgd_ip == flow_decision_end(d)))
        return NULL;
    const uint8_t *u = skip_pads(t + g->pkt.size, end);
    if (u >= end)
        return NULL;
    const struct ntl_ipt_fast_ *e = &ntl_ipt_fast_table_[*u];
    if (!e->ip_kind || e->pkt.type != NTL_IPT_TIP_PGE || e->pkt.count == NTL_IPT_IPC_SUPPRESSED)
        return NULL;
    apply(fs, d, traced, false);
    if (d->last.iclass == NTL_IPT_IC_CALL_IND)
        call_push(fs, d->last.ip + d->last.size);
    if (!suppressed)
        take_tip(fs->evd, t, g);
    struct flow_pair *p = &fs->pairs[fs->npairs++];
    p->last = d->last;
    p->ninsn = fs->ninsn;
    p->traced = fs->traced;
    p->pgd_ip = pgd_ip;
    p->suppressed = suppressed;
    p->pge_ip = fs->ip = take_tip(fs->evd, u, e);
    fs->pair_room--;
    fs->ninsn = fs->traced = fs->after = 0;
    fs->took = false;
    return u + e->pkt.size;
}

/* After a pair taken at next: with no room for another, the loop's end
 * is there (a packet boundary, as any end), so that the next TIP.PGD is
 * taken as a pair by the next call, not by flow.c's fast_pgd (mruby: 0.9
 * k a pass went that way). */
static inline void pair_taken(const struct flow_fast *fs, const uint8_t *next,
                              const uint8_t **end)
{
    if (!fs->pair_room)
        *end = next;
}

/* TNT-8s read as one (count bits in payload, the next packet at c),
 * decision by decision. Returns the cursor after them (and after the TIP
 * that followed, taken with their last bits), or NULL when flow.c takes
 * the rest (fs->left set; fs->pgd too when a TIP.PGD follows). *endp: the
 * loop's end, moved by pair_taken. */
static inline __attribute__((always_inline)) const uint8_t *
group_run(struct flow_fast *fs, uint64_t payload, unsigned count,
          const uint8_t *c, const uint8_t **endp, int *rc, bool trail)
{
    const uint8_t *end = *endp;
    unsigned left = count;
    while (left) {
        unsigned n = left < FLOW_DECIDE_BITS ? left : FLOW_DECIDE_BITS;
        unsigned bits = (unsigned)(payload >> (left - n)) & ((1u << n) - 1);
        const uint8_t *t = c;
        const struct ntl_ipt_fast_ *tip = NULL;
        if (n == left) {
            while (t < end && *t == 0)
                t++;
            tip = tip_at(t, end);
            /* A TIP.PGD: the decision as decide looks it up; whether it
             * binds there is flow.c's (decide_pgd). */
            if (!tip && t < end && ntl_ipt_fast_table_[*t].ip_kind &&
                ntl_ipt_fast_table_[*t].pkt.type == NTL_IPT_TIP_PGD) {
                *rc = decide(fs, bits, n | FLOW_DECIDE_TIP, &fs->pgd);
                const uint8_t *next;
                if (*rc == 0 && (next = pair(fs, fs->pgd, t, end, n + 1))) {
                    fs->pgd = NULL;
                    pair_taken(fs, next, endp);
                    return next;
                }
                break;
            }
        }
        const struct flow_decision *d = lookup(fs, bits, tip ? n | FLOW_DECIDE_TIP : n, rc);
        if (!d || d->used != n || (tip && !d->tip))
            break;
        apply(fs, d, n + (tip != NULL), trail);
        fs->ip = flow_decision_end(d);
        left -= n;
        if (left)
            continue;
        took(fs);
        return tip ? to_tip(fs, d, t, tip) : c;
    }
    fs->left = left;
    return NULL;
}

/* The TNT-8s at c read as one, as flow.c's walk_peek and tnt_merge read
 * them. Returns the cursor after them. */
static inline const uint8_t *group_read(const uint8_t *c, const uint8_t *end, uint64_t *payload,
                                        unsigned *count)
{
    const struct ntl_ipt_packet *t = &ntl_ipt_fast_table_[*c++].pkt;
    uint64_t bits = t->payload;
    unsigned k = t->count;
    for (unsigned n = 1; k <= GROUP_LIMIT && n < GROUP_SEGS && c < end;) {
        unsigned b = *c;
        if (b == 0) {
            uint64_t w = ntl_ipt_load64_(c);
            c += w ? (unsigned)__builtin_ctzll(w) >> 3 : 8;
            continue;
        }
        if (!is_tnt8(b))
            break;
        t = &ntl_ipt_fast_table_[b].pkt;
        bits = bits << t->count | t->payload;
        k += t->count;
        n++;
        c++;
    }
    *payload = bits;
    *count = k;
    return c;
}

/* flow_fast_run's loop, with trail a constant: the runs path pays no
 * test for the trail. */
static inline __attribute__((always_inline)) int fast_loop(struct flow_fast *fs, bool trail)
{
    struct ntl_ipt_decoder *p = &fs->evd->pkt;
    const uint8_t *c = p->cur, *end = p->fast_end;
    int rc = 0;
    fs->ninsn = fs->traced = fs->after = 0;
    fs->took = false;
    fs->left = 0;
    fs->pgd = NULL;
    fs->npairs = 0;
    for (;;) {
        c = skip_pads(c, end);
        if (c >= end || (trail && fs->trail->n >= fs->trail_stop))
            break;
        unsigned b = *c;
        if (is_tnt8(b)) {
            uint64_t payload;
            unsigned count;
            const uint8_t *group = c;
            c = group_read(c, end, &payload, &count);
            const uint8_t *next = group_run(fs, payload, count, c, &end, &rc, trail);
            if (!next) {
                fs->group = group;
                break;
            }
            c = next;
            continue;
        }
        const struct ntl_ipt_fast_ *tip = tip_at(c, end);
        if (!tip) {
            /* A TIP.PGD after no bits: as for one after bits. */
            if (ntl_ipt_fast_table_[b].ip_kind && ntl_ipt_fast_table_[b].pkt.type == NTL_IPT_TIP_PGD) {
                rc = decide(fs, 0, FLOW_DECIDE_TIP, &fs->pgd);
                const uint8_t *next;
                if (rc == 0 && (next = pair(fs, fs->pgd, c, end, 1))) {
                    fs->pgd = NULL;
                    pair_taken(fs, next, &end);
                    c = next;
                    continue;
                }
            }
            break;
        }
        /* A TIP after no bits: the way to the branch that takes it. */
        const struct flow_decision *d = lookup(fs, 0, 0, &rc);
        if (!d)
            break;
        apply(fs, d, 1, trail);
        c = to_tip(fs, d, c, tip);
    }
    p->cur = c;
    return rc;
}

int flow_fast_run(struct flow_fast *fs)
{
    return fs->trail ? fast_loop(fs, true) : fast_loop(fs, false);
}
