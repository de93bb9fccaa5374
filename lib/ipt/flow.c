/* The flow decoder: walks the code, taking TNT bits and TIPs from the event
 * layer where the code branches on something the image does not tell, and
 * binding the packets that report events to the instructions they belong
 * to (the SDM's "Decoder Application" rules, as libipt applies them). */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "flow-decide.h"
#include "flow-evtrace.h"
#include "flow-fast.h"
#include "flow-trail.h"
#include "ntlens/ipt_flow.h"
#include "ntlens/ipt_sync.h"

#define QUEUE 64
/* What a held power event waits for. */
#define PW_ANY 0
#define PW_EXSTOP 1
#define PW_PWRX 2
#define PW_FUP 3
/* Most TNT-8s read as one. */
#define TNT_SEGS 16
/* With run_ips: a run is handed out once its trail holds this many
 * segments (128 KB), so the trail stays small whatever the trace (the
 * fuzz build sets fewer, meson.build). */
#ifndef FLOW_TRAIL_RUN
#define FLOW_TRAIL_RUN 8192
#endif

/* What a PSB+ restates, applied when the walk reaches its FUP's IP. */
struct psb_status {
    bool pending;
    bool has_ip;
    uint64_t ip;
    uint8_t mode;      /* 0: no MODE.Exec */
    int8_t tsx;        /* -1: no MODE.TSX, else its flags */
    bool mnt;          /* it held an MNT (an item told where it is read) */
    uint64_t at;       /* offset of the PSB */
    uint64_t end;      /* offset of the PSBEND */
};

struct ntl_ipt_flow {
    struct ntl_ipt_flow_config cfg;
    struct ntl_ipt_evd evd;
    struct flow_cache cache;
    struct flow_bcache blocks;
    struct flow_dcache decisions;
    /* The next packet not yet consumed (have_ev), and of a TNT the bits
     * left, oldest in bit (tnt_left - 1). */
    struct ntl_ipt_event ev;
    bool have_ev, at_end, end_told;
    unsigned tnt_left;
    /* A TNT in ev may be several TNT-8s read as one (tnt_merge): each
     * one's end (the payload's bit count once it was added: its lowest bit
     * is ev.pkt.count - end) and offset, oldest first. */
    uint16_t tnt_end[TNT_SEGS];
    uint64_t tnt_off[TNT_SEGS];
    unsigned tnt_nseg;
    /* The walk. */
    uint64_t ip;
    bool enabled;
    bool lost;       /* after an error: the IP is unknown until a packet tells it */
    bool after_traced_branch; /* the last instruction took a TNT bit or TIP (BDM64) */
    bool can_resume; /* ip is where tracing stopped (ENABLED may be RESUMED) */
    uint8_t mode;
    bool speculative;
    uint8_t pending_mode;  /* a MODE.Exec waiting for its TIP or TIP.PGE */
    /* The mode the packets last told (0: none since the last PSB or OVF):
     * like libipt, a MODE.Exec is an event only when it changes this. */
    uint8_t told_mode;
    int told_if;           /* MODE.Exec's IF bit as last told, -1 before any */
    int pending_iflags;    /* an IF change (cfg.iflags) waiting like pending_mode, else -1 */
    int pending_tsx;       /* a MODE.TSX waiting for its FUP, else -1 */
    unsigned n_paging;     /* PIPs waiting for their branch, oldest first */
    bool pending_vmcs;     /* a VMCS waiting for its branch */
    struct ntl_ipt_flow_item paging[4], vmcs;
    struct psb_status psb;
    /* Power events held for the packet they bind to (pw_hold). */
    struct {
        struct ntl_ipt_flow_item it;
        uint8_t bind; /* PW_* */
    } pw[8];
    unsigned n_pw;
    /* PTWs, each told after the PTWRITE it binds to (the one at its IP). */
    struct {
        bool has_ip;
        uint64_t ip, payload;
    } ptw[4];
    unsigned n_ptw;
    uint64_t rs[NTL_IPT_RETSTACK];
    unsigned rs_top, rs_n;
    unsigned steps; /* instructions since a packet was consumed */
    /* With cfg.runs: the instructions since the last item queued. */
    struct ntl_ipt_flow_item run;
    bool run_open;
    /* Event Trace: EVDs waiting for their CFE, and the events waiting for
     * the IP (evt_ip) or the kind of instruction (evt_class) they bind to. */
    struct flow_evtrace evtrace;
    struct {
        struct ntl_ipt_flow_item it;
        uint8_t evt_class; /* enum flow_evt_class; EVC_NONE: at it.ip */
        uint16_t insns;    /* TRIG: instructions to run before it, then at_next */
        bool at_next;      /* TRIG: told before the next instruction */
        uint64_t fup_off;  /* 1 + the trace offset of the FUP that gave its IP, 0: none */
    } evt[4];
    /* TRIG's anchor: a TRIG's ICNT counts instructions from where the last
     * TNT, TIP or event with an IP left the walk. icount counts every
     * instruction; note is the queue slot of the last event queued, whose
     * flags say only once it is filled in whether it anchors. */
    uint64_t icount, anchor, note_icount;
    bool has_anchor;
    int note;
    unsigned n_evt;
    /* Items decided but not yet returned. */
    struct ntl_ipt_flow_item q[QUEUE];
    unsigned qh, qn;
    uint64_t err_off, err_ip;
    /* With cfg.times: the time at the packet in ev, and at the last packet
     * consumed (libipt's time of the last event, which ticks compare with). */
    uint64_t ev_tsc, last_tsc;
    bool ev_timed;
    uint64_t n_told;   /* items and errors returned */
    struct ntl_ipt_flow_seam seam; /* the last PSB+ applied */
    int pending_error; /* an error to report once the queue is empty */
    bool packet_error; /* the last error was the event layer's */
    bool status_error; /* the last error was a PSB+ that contradicts the packets before it */
    uint64_t recovered_at; /* 1 + the trace offset of the last recovery, 0: none */
    struct ntl_error saved_err;
    /* With cfg.run_ips (last: the walk's fields keep their places): the
     * runs' segments (flow-trail.h), where each queued run ends (q_trail,
     * by queue slot), where the open run began (run_from) and where the
     * next run handed out begins (told); the run handed out last is told
     * from segment x_seg to x_end, x_ip the next address. */
    bool trail_on;
    struct flow_trail trail;
    uint64_t q_trail[QUEUE];
    uint64_t run_from, told, x_seg, x_end, x_ip;
    /* The part of a segment being told: x_left instructions, their sizes
     * at x_size, then x_rest more to look up from where they end. */
    const uint8_t *x_size;
    uint32_t x_left, x_rest;
    uint8_t x_mode;
};

int ntl_ipt_flow_new(struct ntl_ipt_flow **f, const struct ntl_ipt_flow_config *cfg,
                     struct ntl_error *err)
{
    *f = calloc(1, sizeof **f);
    if (!*f)
        return ntl_error_set(err, NTL_ERR_NOMEM, "flow", 0, "out of memory");
    (*f)->cfg = *cfg;
    (*f)->trail_on = cfg->runs && cfg->run_ips;
    if ((*f)->trail_on && flow_dcache_paths(&(*f)->decisions) < 0) {
        free(*f);
        *f = NULL;
        return ntl_error_set(err, NTL_ERR_NOMEM, "flow", 0, "out of memory");
    }
    ntl_ipt_evd_init(&(*f)->evd, &cfg->trace);
    (*f)->pending_tsx = -1;
    return 0;
}

void ntl_ipt_flow_free(struct ntl_ipt_flow *f)
{
    if (!f)
        return;
    flow_cache_free(&f->cache);
    flow_bcache_free(&f->blocks);
    flow_dcache_free(&f->decisions);
    flow_trail_free(&f->trail);
    free(f);
}

const char *ntl_ipt_flow_strerror(int status)
{
    switch (status) {
    case NTL_IPT_NOMAP: return "no memory mapped at this address";
    case NTL_IPT_BAD_QUERY: return "trace stream does not match query";
    case NTL_IPT_BAD_CONTEXT: return "unexpected packet context";
    case NTL_IPT_BAD_INSN: return "unknown instruction";
    case NTL_IPT_BAD_RETCOMP: return "bad compressed return";
    case NTL_IPT_RETSTACK_EMPTY: return "compressed return without call";
    case NTL_IPT_NOIP: return "no ip";
    case NTL_IPT_BAD_STATUS: return "bad status update";
    case NTL_ERR_TRUNCATED: return "reached end of trace stream";
    default: return status <= -100 ? ntl_ipt_status_name(status) : ntl_status_name(status);
    }
}

void ntl_ipt_flow_where(const struct ntl_ipt_flow *f, uint64_t *offset, uint64_t *ip)
{
    *offset = f->err_off;
    *ip = f->err_ip;
}

uint64_t ntl_ipt_flow_offset(const struct ntl_ipt_flow *f)
{
    return f->cfg.trace.origin + ntl_ipt_offset(&f->evd.pkt);
}

size_t ntl_ipt_flow_cached(const struct ntl_ipt_flow *f)
{
    return f->cache.t.used;
}

void ntl_ipt_flow_invalidate(struct ntl_ipt_flow *f)
{
    flow_cache_free(&f->cache);
    flow_bcache_clear(&f->blocks);
    flow_dcache_clear(&f->decisions);
    if (f->decisions.paths)
        flow_sizes_clear(&f->decisions.paths->sizes);
}

static int peek(struct ntl_ipt_flow *f, struct ntl_error *err);

/* Records where an error happened and sets err. Returns status. */
static int fail(struct ntl_ipt_flow *f, int status, uint64_t ip, struct ntl_error *err)
{
    struct ntl_error ignored;
    if (!f->have_ev)
        peek(f, &ignored);
    /* libipt names the offset where its event decoder stands: at the
     * packet read ahead, or past it for a TNT or a FUP (whose event the
     * next packet completes), unless the FUP completes a MODE.TSX. */
    if (f->have_ev) {
        uint8_t t = f->ev.pkt.type;
        /* A TIP.PGD with nothing bound to it is an event by itself,
         * read past as a TNT is. */
        bool lone_pgd = t == NTL_IPT_TIP_PGD && !f->pending_mode && f->pending_iflags < 0 &&
                        !f->n_paging && !f->pending_vmcs;
        bool past = t == NTL_IPT_TNT_8 || t == NTL_IPT_TNT_64 || lone_pgd ||
                    (t == NTL_IPT_FUP && f->pending_tsx < 0);
        uint64_t off = f->ev.offset, size = f->ev.pkt.size;
        if (t == NTL_IPT_TNT_8 && f->tnt_nseg > 1) {
            /* The TNT-8 the oldest bit left is in, as if read alone. */
            unsigned j = 0;
            while (f->tnt_left - 1 < (unsigned)f->ev.pkt.count - f->tnt_end[j])
                j++;
            off = f->tnt_off[j]; /* its size as the first's: 1 */
        }
        f->err_off = f->cfg.trace.origin + off + (past ? size : 0);
    } else {
        f->err_off = ntl_ipt_flow_offset(f);
    }
    /* Events that wait for the walk to reach their IP stand where libipt's
     * event decoder stands while it holds them: a PSB+'s at its PSBEND, a
     * FUP's at the FUP. */
    if (f->psb.pending)
        f->err_off = f->cfg.trace.origin + f->psb.end;
    else if (f->n_evt && f->evt[0].fup_off)
        f->err_off = f->cfg.trace.origin + f->evt[0].fup_off - 1;
    f->err_ip = ip;
    return ntl_error_set(err, status, "flow", f->err_off, "at ip 0x%llx: %s",
                         (unsigned long long)ip, ntl_ipt_flow_strerror(status));
}

/* Whether the last event queued anchors a TRIG's ICNT (libipt's list),
 * or ends the anchor (tracing disabled). */
static void judge(struct ntl_ipt_flow *f)
{
    if (f->note < 0)
        return;
    const struct ntl_ipt_flow_item *it = &f->q[f->note];
    bool ip = !(it->flags & NTL_IPT_FL_IP_SUPPRESSED);
    f->note = -1;
    switch (it->kind) {
    case NTL_IPT_FL_DISABLED: case NTL_IPT_FL_ASYNC_DISABLED:
        f->has_anchor = false;
        return;
    case NTL_IPT_FL_OVERFLOW:
        f->has_anchor = ip;
        break;
    case NTL_IPT_FL_ENABLED: case NTL_IPT_FL_INTERRUPT: case NTL_IPT_FL_EXEC_MODE:
    case NTL_IPT_FL_TSX: case NTL_IPT_FL_EXSTOP: case NTL_IPT_FL_PTWRITE: case NTL_IPT_FL_IFLAGS:
    case NTL_IPT_FL_TRIG: case NTL_IPT_FL_TICK:
        if (!ip)
            return;
        f->has_anchor = true;
        break;
    case NTL_IPT_FL_CFE:
        if (!ip || (it->a & 0xff) == NTL_IPT_CFE_SIPI)
            return;
        f->has_anchor = true;
        break;
    default:
        return;
    }
    f->anchor = f->note_icount;
}

/* The walk is at a TRIG anchor (a TNT used up, a TIP taken). */
static void anchor_here(struct ntl_ipt_flow *f)
{
    judge(f);
    f->anchor = f->icount;
    f->has_anchor = true;
}

/* The open run into the queue: it ran before what is queued next. */
static void flush_run(struct ntl_ipt_flow *f)
{
    if (!f->run_open)
        return;
    judge(f);
    f->q_trail[(f->qh + f->qn) % QUEUE] = f->run_from = flow_trail_end(&f->trail);
    f->q[(f->qh + f->qn++) % QUEUE] = f->run;
    f->run_open = false;
}

/* An event item queued (after the instructions before it). */
static struct ntl_ipt_flow_item *push(struct ntl_ipt_flow *f, uint8_t kind, uint64_t ip)
{
    flush_run(f);
    judge(f);
    f->note = (int)((f->qh + f->qn) % QUEUE);
    f->note_icount = f->icount;
    struct ntl_ipt_flow_item *it = &f->q[(f->qh + f->qn++) % QUEUE];
    *it = (struct ntl_ipt_flow_item){.kind = kind, .ip = ip, .mode = f->mode};
    if (f->cfg.times) {
        it->timed = f->ev_timed;
        it->tsc = f->ev_tsc;
    }
    return it;
}

/* Whether the instruction took a TNT bit or a TIP. */
static bool takes_trace(uint8_t iclass)
{
    return iclass != NTL_IPT_IC_OTHER && iclass != NTL_IPT_IC_JUMP &&
           iclass != NTL_IPT_IC_CALL && iclass != NTL_IPT_IC_PTWRITE;
}

/* A new open run (the one open, if any, into the queue). */
static void run_start(struct ntl_ipt_flow *f, uint8_t flags)
{
    flush_run(f);
    f->run = (struct ntl_ipt_flow_item){.kind = NTL_IPT_FL_RUN, .mode = f->mode, .flags = flags};
    f->run_open = true;
}

/* With run_ips: an open run that the next instructions do not belong to
 * (another mode or flags) into the queue, before their segments are kept. */
static inline void run_fit(struct ntl_ipt_flow *f)
{
    uint8_t flags = f->speculative ? NTL_IPT_FL_SPECULATIVE : 0;
    if (f->run_open && (f->run.mode != f->mode || f->run.flags != flags))
        flush_run(f);
}

/* With run_ips: n instructions straight from ip into the trail (before
 * run_add adds them to the run). Out of line: the runs path without
 * run_ips keeps its walk as small as it was. */
static __attribute__((noinline)) void trail_seg(struct ntl_ipt_flow *f, uint64_t ip, uint64_t n)
{
    run_fit(f);
    struct flow_seg seg = {.ip = ip, .n = (uint16_t)n}; /* n: at most a block's */
    flow_trail_put(&f->trail, &seg, 1);
}

/* With run_ips: the blocks decision d ran into the trail. */
static __attribute__((noinline)) void trail_path(struct ntl_ipt_flow *f,
                                                 const struct flow_decision *d)
{
    run_fit(f);
    unsigned k;
    const struct flow_seg *path = flow_decision_path(&f->decisions, d, &k);
    flow_trail_put(&f->trail, path, k);
}

static inline void run_seg(struct ntl_ipt_flow *f, uint64_t ip, uint64_t n)
{
    if (f->trail_on)
        trail_seg(f, ip, n);
}

static inline void run_path(struct ntl_ipt_flow *f, const struct flow_decision *d)
{
    if (f->trail_on)
        trail_path(f, d);
}

/* n instructions ran, traced of them took trace, the last one last
 * (NULL: it is added next): into the open run. Inline: the walk adds to it
 * once per decision and block. */
static inline void run_add(struct ntl_ipt_flow *f, const struct flow_insn *last, uint64_t n,
                           uint64_t traced)
{
    struct ntl_ipt_flow_item *r = &f->run;
    uint8_t flags = f->speculative ? NTL_IPT_FL_SPECULATIVE : 0;
    if (!f->run_open || r->mode != f->mode || r->flags != flags)
        run_start(f, flags);
    r->b += n;
    r->c += traced;
    f->icount += n;
    if (!last)
        return;
    r->ip = last->ip;
    r->size = last->size;
    r->iclass = last->iclass;
    r->a = last->target;
    /* A long run handed out in parts: its trail stays bounded. */
    if (f->trail_on && flow_trail_end(&f->trail) - f->run_from >= FLOW_TRAIL_RUN)
        flush_run(f);
}

/* The instruction in ran: an INSN item, or into the run. */
static void emit_insn(struct ntl_ipt_flow *f, const struct flow_insn *in)
{
    if (f->cfg.runs) {
        run_seg(f, in->ip, 1);
        run_add(f, in, 1, takes_trace(in->iclass));
        return;
    }
    f->icount++;
    struct ntl_ipt_flow_item *it = push(f, NTL_IPT_FL_INSN, in->ip);
    it->size = in->size;
    it->iclass = in->iclass;
    it->a = in->target;
    it->flags = f->speculative ? NTL_IPT_FL_SPECULATIVE : 0;
}

/* The TNT-8s right after the one in f->ev (PADs between) into it, its
 * bits first: a decision then follows bits across packet bounds, and the
 * walk reads fewer packets. Nothing binds between them, so the flow is the
 * same as read one by one. Inline (gcc did not): the walk reads the first
 * TNT-8 and merges the rest in one run, without a call between. */
static inline void tnt_merge(struct ntl_ipt_flow *f)
{
    struct ntl_ipt_event *e = &f->ev;
    unsigned count = e->pkt.count;
    uint64_t payload = e->pkt.payload;
    f->tnt_end[0] = (uint16_t)count;
    f->tnt_off[0] = e->offset;
    /* A TNT-8 has at most 6 bits: the payload stays within 64. */
    f->tnt_nseg = 1 + ntl_ipt_evd_more_tnt8(&f->evd, &payload, &count, 64 - 6, TNT_SEGS - 1,
                                            f->tnt_end + 1, f->tnt_off + 1);
    e->pkt.payload = payload;
    e->pkt.count = (uint8_t)count;
}

/* The next packet that matters into f->ev (PAD and timing packets are
 * passed over). Returns 1, 0 at the end, or the event layer's error. */
static int peek(struct ntl_ipt_flow *f, struct ntl_error *err)
{
    while (!f->have_ev) {
        if (f->at_end)
            return 0;
        int rc = ntl_ipt_evd_next_tnt(&f->evd, &f->ev);
        if (rc > 0)
            tnt_merge(f);
        else {
            f->tnt_nseg = 0;
            rc = ntl_ipt_evd_next_ip(&f->evd, &f->ev);
            if (rc == 0)
                rc = ntl_ipt_evd_next(&f->evd, &f->ev, err);
        }
        if (rc == 0) {
            f->at_end = true;
            return 0;
        }
        if (rc < 0) {
            f->err_off = ntl_ipt_flow_offset(f);
            f->err_ip = f->ip;
            f->packet_error = true;
            return rc;
        }
        switch (f->ev.pkt.type) {
        case NTL_IPT_PAD: case NTL_IPT_TSC: case NTL_IPT_MTC: case NTL_IPT_TMA:
        case NTL_IPT_CYC: case NTL_IPT_BBP: case NTL_IPT_BIP: case NTL_IPT_BEP:
            continue;
        case NTL_IPT_TNT_8: case NTL_IPT_TNT_64:
            if (f->ev.pkt.count == 0)
                continue;
            f->tnt_left = f->ev.pkt.count;
            break;
        default:
            break;
        }
        f->have_ev = true;
        if (f->cfg.times)
            f->ev_timed = ntl_ipt_evd_tsc(&f->evd, &f->ev_tsc) == 0;
    }
    return 1;
}

/* peek's way for the walk, inline: a packet used up is most often followed
 * by a TNT-8 (PADs before it) or an IP packet, which the event layer's
 * inline paths read; anything else, the end and errors go through peek. */
static inline int walk_peek(struct ntl_ipt_flow *f, struct ntl_error *err)
{
    if (f->have_ev)
        return 1;
    if (f->at_end)
        return peek(f, err);
    if (ntl_ipt_evd_next_tnt(&f->evd, &f->ev) > 0) {
        tnt_merge(f);
        f->tnt_left = f->ev.pkt.count; /* a TNT-8 has at least one bit */
    } else if (ntl_ipt_evd_next_ip(&f->evd, &f->ev) > 0)
        f->tnt_nseg = 0;
    else
        return peek(f, err);
    f->have_ev = true;
    if (f->cfg.times)
        f->ev_timed = ntl_ipt_evd_tsc(&f->evd, &f->ev_tsc) == 0;
    return 1;
}

static void consume(struct ntl_ipt_flow *f)
{
    f->have_ev = false;
    f->steps = 0;
    f->last_tsc = f->ev_tsc;
}

/* With cfg.ticks: a TICK after the branch at ip when the TNT or TIP it
 * takes next (in ev) came later than the last packet taken; a TNT only
 * once a TSC has been seen, as libipt. */
static void tick(struct ntl_ipt_flow *f, uint64_t ip)
{
    bool tnt = f->ev.pkt.type == NTL_IPT_TNT_8 || f->ev.pkt.type == NTL_IPT_TNT_64;
    if (!f->cfg.ticks || !f->have_ev || f->ev_tsc == f->last_tsc || (tnt && !f->ev_timed))
        return;
    push(f, NTL_IPT_FL_TICK, ip);
    f->last_tsc = f->ev_tsc;
}

/* The next TNT bit: 1 taken, 0 not taken, NTL_IPT_BAD_QUERY when the next
 * packet is no TNT. */
static int tnt_bit(struct ntl_ipt_flow *f, struct ntl_error *err)
{
    int rc = peek(f, err);
    if (rc < 0)
        return rc;
    if (rc == 0 || (f->ev.pkt.type != NTL_IPT_TNT_8 && f->ev.pkt.type != NTL_IPT_TNT_64))
        return NTL_IPT_BAD_QUERY;
    int bit = (int)(f->ev.pkt.payload >> --f->tnt_left & 1);
    if (f->tnt_left == 0) {
        consume(f);
        anchor_here(f);
    }
    f->steps = 0;
    return bit;
}

static void set_mode(struct ntl_ipt_flow *f, uint8_t mode, uint64_t ip, bool tell)
{
    f->mode = mode;
    if (tell)
        push(f, NTL_IPT_FL_EXEC_MODE, ip);
}

/* A MODE.Exec or PIP that waited for the branch just taken. */
static void flush_pending_items(struct ntl_ipt_flow *f)
{
    if (f->pending_mode) {
        set_mode(f, f->pending_mode, f->ip, true);
        f->pending_mode = 0;
    }
    if (f->pending_iflags >= 0) {
        push(f, NTL_IPT_FL_IFLAGS, f->ip)->a = (uint64_t)f->pending_iflags;
        f->pending_iflags = -1;
    }
    if (f->pending_vmcs) {
        *push(f, NTL_IPT_FL_VMCS, 0) = f->vmcs;
        f->pending_vmcs = false;
    }
    for (unsigned i = 0; i < f->n_paging; i++)
        *push(f, NTL_IPT_FL_PAGING, 0) = f->paging[i];
    f->n_paging = 0;
}

/* flush_pending_items where one waits: inline, as nothing does at nearly
 * every TIP.PGD and TIP.PGE (two calls a pair, 2% of mruby's instructions
 * out of line). */
static inline void flush_pending(struct ntl_ipt_flow *f)
{
    if (f->pending_mode | (f->pending_iflags >= 0) | f->pending_vmcs | (f->n_paging != 0))
        flush_pending_items(f);
}

/* Tracing stops: a DISABLED at ip (or ASYNC_DISABLED before the
 * instruction at ip, the TIP.PGD's IP to go in a), suppressed when the IP
 * it reports is not known; f->ip is where tracing is expected to resume
 * when resume_known. Returns the item. */
static struct ntl_ipt_flow_item *disable(struct ntl_ipt_flow *f, uint8_t kind, uint64_t ip,
                                         bool resume_known, bool suppressed)
{
    f->enabled = false;
    f->can_resume = resume_known;
    struct ntl_ipt_flow_item *it = push(f, kind, ip);
    it->flags = suppressed ? NTL_IPT_FL_IP_SUPPRESSED : 0;
    flush_pending(f);
    return it;
}

/* Tracing resumes at ip (a TIP.PGE read): ENABLED, RESUMED where tracing
 * stopped there. */
static void enable(struct ntl_ipt_flow *f, uint64_t ip)
{
    struct ntl_ipt_flow_item *it = push(f, NTL_IPT_FL_ENABLED, ip);
    if (f->can_resume && f->ip == ip)
        it->flags |= NTL_IPT_FL_RESUMED;
    f->enabled = true;
    f->ip = ip;
    flush_pending(f);
}

/* Whether the next packet that reports anything, past status and timing
 * packets (and PSB+ with them when past_psb), is a TIP.PGE: the test of
 * errata BDM70 and APL12, which look ahead without moving the decoder. */
static bool pge_ahead(const struct ntl_ipt_flow *f, bool past_psb)
{
    struct ntl_ipt_evd d = f->evd;
    struct ntl_ipt_event ev;
    struct ntl_error err;
    while (ntl_ipt_evd_next(&d, &ev, &err) > 0) {
        switch (ev.pkt.type) {
        case NTL_IPT_TIP_PGE:
            return true;
        case NTL_IPT_PSB:
            if (!past_psb)
                return false;
            break;
        case NTL_IPT_FUP:
            if (!past_psb || !(ev.flags & NTL_IPT_EV_IN_PSB))
                return false;
            break;
        case NTL_IPT_PAD: case NTL_IPT_TSC: case NTL_IPT_CBR: case NTL_IPT_PSBEND:
        case NTL_IPT_PIP: case NTL_IPT_MODE_EXEC: case NTL_IPT_MODE_TSX: case NTL_IPT_VMCS:
        case NTL_IPT_TMA: case NTL_IPT_MTC: case NTL_IPT_CYC: case NTL_IPT_MNT:
            break;
        default:
            return false;
        }
    }
    return false;
}

/* Reads a PSB+ up to its PSBEND into f->psb. */
static int read_psb(struct ntl_ipt_flow *f, struct ntl_error *err)
{
    struct psb_status *s = &f->psb;
    memset(s, 0, sizeof *s);
    s->tsx = -1;
    s->at = f->cfg.trace.origin + f->ev.offset;
    /* Where an error in it is told: its PSBEND, where the PSB+ is cut
     * short, or the PSB itself when the trace ends inside it. */
    s->end = f->ev.offset;
    consume(f);
    for (;;) {
        int rc = peek(f, err);
        if (rc <= 0)
            return rc;
        const struct ntl_ipt_event *e = &f->ev;
        if (e->pkt.type == NTL_IPT_PSBEND) {
            s->end = e->offset;
            consume(f);
            s->pending = true;
            return 1;
        }
        if (e->pkt.type == NTL_IPT_FUP && !e->ip_status) {
            /* BDM70: tracing is disabled when a TIP.PGE follows. */
            s->has_ip = !(f->cfg.trace.time.errata.bdm70 && pge_ahead(f, false));
            s->ip = e->ip;
        } else if (e->pkt.type == NTL_IPT_MODE_EXEC) {
            s->mode = (uint8_t)ntl_ipt_exec_mode(e->pkt.flags);
            /* The mode the packets told last must be the one restated (the
             * IF bit too when its changes are told), as libipt checks. */
            int iflag = e->pkt.flags & NTL_IPT_F_IF ? 1 : 0;
            if (f->told_mode && (s->mode != f->told_mode ||
                                 (f->cfg.iflags && f->told_if >= 0 && iflag != f->told_if))) {
                f->status_error = true;
                return fail(f, NTL_IPT_BAD_STATUS, f->ip, err);
            }
            /* A status, not a change: no IFLAGS item. */
            f->told_if = e->pkt.flags & NTL_IPT_F_IF ? 1 : 0;
        } else if (e->pkt.type == NTL_IPT_MODE_TSX) {
            s->tsx = (int8_t)e->pkt.flags;
        } else if (e->pkt.type == NTL_IPT_MNT) {
            push(f, NTL_IPT_FL_MNT, 0)->a = e->pkt.payload;
            s->mnt = true;
        } else if (e->pkt.type == NTL_IPT_OVF || e->pkt.type == NTL_IPT_PSB) {
            /* PSB+ cut short: what follows is no status. */
            s->end = e->offset;
            s->pending = true;
            return 1;
        }
        consume(f);
    }
}

/* A PSB+ has just been applied: what a decoder synchronised at it would
 * hold, to compare (ntl_ipt_flow_seam). The run so far goes into the queue:
 * items after the seam are what such a decoder returns. */
static void note_seam(struct ntl_ipt_flow *f)
{
    struct ntl_ipt_flow_seam *m = &f->seam;
    struct ntl_error err;
    flush_run(f);
    /* The next packet read (past PADs and timing), as it would be next: an
     * error stays where it is, for the walk to meet it. */
    bool next = peek(f, &err) > 0;
    m->seq++;
    m->psb = f->psb.at;
    m->items = f->n_told + f->qn;
    m->clean = !f->psb.mnt;
    /* The IP even while tracing is disabled: an error told before tracing
     * is enabled again names it (libipt's decoder keeps it there too). */
    m->state[0] = f->ip;
    bool tnt = next && (f->ev.pkt.type == NTL_IPT_TNT_8 || f->ev.pkt.type == NTL_IPT_TNT_64);
    m->state[1] = (next ? f->ev.offset : ntl_ipt_flow_offset(f)) << 8 | (tnt ? f->tnt_left : 0);
    m->state[2] = (uint64_t)f->mode | (uint64_t)f->told_mode << 8 |
                  (uint64_t)(uint8_t)f->told_if << 16 | (uint64_t)f->pending_mode << 24 |
                  (uint64_t)(uint8_t)f->pending_iflags << 32 |
                  (uint64_t)(uint8_t)f->pending_tsx << 40;
    /* Where tracing resumes matters only while it is disabled; the last
     * branch's kind only to erratum BDM64. */
    bool resume = !f->enabled && f->can_resume;
    bool bdm64 = f->cfg.trace.time.errata.bdm64 && f->after_traced_branch;
    m->state[3] = (uint64_t)f->enabled | (uint64_t)f->lost << 1 | (uint64_t)f->speculative << 2 |
                  (uint64_t)resume << 3 | (uint64_t)bdm64 << 4 |
                  (uint64_t)(f->n_paging != 0) << 5 | (uint64_t)f->pending_vmcs << 6 |
                  (uint64_t)f->has_anchor << 7 | (uint64_t)f->evtrace.have << 8 |
                  (uint64_t)f->have_ev << 9 | (uint64_t)f->at_end << 10 |
                  (uint64_t)f->end_told << 11 | (uint64_t)f->psb.pending << 12;
    m->state[4] = (uint64_t)f->n_pw | (uint64_t)f->n_ptw << 8 | (uint64_t)f->n_evt << 16 |
                  (uint64_t)(tnt ? f->tnt_nseg : 0) << 24 | (uint64_t)(f->pending_error != 0) << 32 |
                  (uint64_t)f->n_paging << 40;
    m->state[5] = f->has_anchor ? f->icount - f->anchor : 0;
    m->rs_n = f->rs_n;
    for (unsigned i = 0; i < f->rs_n; i++)
        m->rs[i] = f->rs[(f->rs_top + NTL_IPT_RETSTACK - f->rs_n + i) % NTL_IPT_RETSTACK];
}

bool ntl_ipt_flow_seam(const struct ntl_ipt_flow *f, struct ntl_ipt_flow_seam *seam)
{
    *seam = f->seam;
    return f->seam.seq != 0;
}

unsigned ntl_ipt_flow_seams(const struct ntl_ipt_flow *f)
{
    return f->seam.seq;
}

/* Applies a PSB+ read earlier. At a synchronisation point (start) it sets
 * the state: tracing is enabled at its FUP or disabled, in its mode,
 * silently (as libipt's status updates). Elsewhere it only restates the state, and one that
 * says otherwise is an error at its PSBEND. */
static int apply_psb(struct ntl_ipt_flow *f, bool start, struct ntl_error *err)
{
    struct psb_status *s = &f->psb;
    s->pending = false;
    if (!start && f->enabled != s->has_ip) {
        f->err_off = f->cfg.trace.origin + s->end;
        f->err_ip = f->ip;
        return ntl_error_set(err, NTL_IPT_BAD_STATUS, "PSB+", f->err_off,
                             "tracing %s there, not %s", s->has_ip ? "enabled" : "disabled",
                             f->enabled ? "enabled" : "disabled");
    }
    if (s->tsx >= 0)
        f->speculative = s->tsx & NTL_IPT_F_INTX;
    if (s->mode) {
        f->mode = s->mode;
        if (!f->told_mode)
            f->told_mode = s->mode;
    }
    if (s->has_ip) {
        f->enabled = true;
        f->ip = s->ip;
        anchor_here(f); /* as libipt's enabled status */
    }
    note_seam(f);
    return 0;
}

static int side_event(struct ntl_ipt_flow *f);
static void tsx_event(struct ntl_ipt_flow *f, unsigned tsx, uint64_t ip);
static void pw_tell(struct ntl_ipt_flow *f, uint8_t bind, uint64_t ip, uint8_t flags);

/* An OVF: trace was lost; a FUP next says where tracing resumed. */
static int overflow(struct ntl_ipt_flow *f, struct ntl_error *err)
{
    /* The overflow is told at the OVF's time, however late it resolves. */
    uint64_t tsc = f->ev_tsc;
    bool timed = f->ev_timed;
    consume(f);
    /* Held power events: lost while tracing is enabled (libipt could not
     * place them), else told now, their IPs unknown. */
    if (f->enabled)
        f->n_pw = 0;
    else
        pw_tell(f, PW_ANY, 0, NTL_IPT_FL_IP_SUPPRESSED);
    f->lost = false; /* the OVF says where tracing goes on, or that it is off */
    f->speculative = false;
    f->told_mode = 0;
    f->rs_n = 0;
    f->n_evt = 0;
    f->evtrace.have = false;
    /* Between the OVF and where tracing resumes: timing, CBR and MNT
     * (told before the overflow when tracing resumes at a FUP, after it
     * when disabled), MODE.TSX and MODE.Exec (bound to the resume). */
    int rc;
    struct ntl_ipt_flow_item held[4];
    unsigned nh = 0;
    for (;;) {
        rc = peek(f, err);
        if (rc <= 0)
            break;
        uint8_t t = f->ev.pkt.type;
        if (t == NTL_IPT_MODE_TSX) {
            f->pending_tsx = f->ev.pkt.flags;
        } else if (t == NTL_IPT_MODE_EXEC) {
            f->pending_mode = f->told_mode = (uint8_t)ntl_ipt_exec_mode(f->ev.pkt.flags);
        } else if (side_event(f)) {
            /* Taken back from the queue to be told in its place. */
            f->qn--;
            if (nh < 4)
                held[nh++] = f->q[(f->qh + f->qn) % QUEUE];
            continue;
        } else {
            break;
        }
        consume(f);
    }
    if (rc < 0)
        return rc;
    const struct ntl_ipt_errata *errata = &f->cfg.trace.time.errata;
    uint8_t type = rc > 0 ? f->ev.pkt.type : 0;
    bool resumes = type == NTL_IPT_FUP && !f->ev.ip_status;
    /* APL12: a FUP although tracing is disabled, a TIP.PGE to follow. */
    if (resumes && errata->apl12 && pge_ahead(f, true)) {
        consume(f);
        resumes = false;
    }
    /* SKD010: the FUP is missing and a TIP says where tracing resumed. */
    resumes |= type == NTL_IPT_TIP && !f->ev.ip_status && errata->skd010;
    if (resumes) {
        consume(f);
        f->enabled = true;
        f->ip = f->ev.ip;
        for (unsigned i = 0; i < nh; i++)
            *push(f, held[i].kind, 0) = held[i];
        struct ntl_ipt_flow_item *it = push(f, NTL_IPT_FL_OVERFLOW, f->ip);
        if (f->cfg.times) {
            it->tsc = f->last_tsc = tsc;
            it->timed = timed;
        }
        if (f->pending_tsx >= 0) {
            tsx_event(f, (unsigned)f->pending_tsx, f->ip);
            f->pending_tsx = -1;
        }
        if (f->pending_mode) {
            f->mode = f->pending_mode;
            f->pending_mode = 0;
        }
        return 0;
    }
    /* APL11, SKD010: a TIP.PGD after the OVF, tracing being disabled
     * already. */
    if (type == NTL_IPT_TIP_PGD && (errata->apl11 || errata->skd010))
        consume(f);
    f->enabled = false;
    f->can_resume = false;
    struct ntl_ipt_flow_item *it = push(f, NTL_IPT_FL_OVERFLOW, 0);
    it->flags |= NTL_IPT_FL_IP_SUPPRESSED;
    if (f->cfg.times) {
        it->tsc = f->last_tsc = tsc;
        it->timed = timed;
    }
    for (unsigned i = 0; i < nh; i++)
        *push(f, held[i].kind, 0) = held[i];
    return 0;
}

/* A PIP or VMCS while tracing is enabled: it binds to the next branch
 * (MOV CR3, VM entry or exit, or the TIP of an asynchronous one), and is
 * told after it. Returns 1 when the packet was one of them (consumed). */
static int hold_context(struct ntl_ipt_flow *f)
{
    const struct ntl_ipt_packet *p = &f->ev.pkt;
    struct ntl_ipt_flow_item *it;
    if (p->type == NTL_IPT_PIP) {
        /* Each binds to a MOV CR3 of its own, in order; one more than
         * there is room for replaces the last. */
        if (f->n_paging < sizeof f->paging / sizeof f->paging[0])
            f->n_paging++;
        it = &f->paging[f->n_paging - 1];
        memset(it, 0, sizeof *it);
        it->kind = NTL_IPT_FL_PAGING;
        it->flags = p->flags & NTL_IPT_F_NR ? NTL_IPT_FL_NR : 0;
    } else if (p->type == NTL_IPT_VMCS) {
        f->pending_vmcs = true;
        it = &f->vmcs;
        memset(it, 0, sizeof *it);
        it->kind = NTL_IPT_FL_VMCS;
    } else {
        return 0;
    }
    it->a = p->payload;
    consume(f);
    return 1;
}

/* Packets that report an event wherever they stand. Returns 1 when the
 * packet was one of them (consumed, its item queued). */
static int side_event(struct ntl_ipt_flow *f)
{
    const struct ntl_ipt_packet *p = &f->ev.pkt;
    switch (p->type) {
    case NTL_IPT_CBR:
        push(f, NTL_IPT_FL_CBR, 0)->a = p->payload;
        break;
    case NTL_IPT_MNT:
        push(f, NTL_IPT_FL_MNT, 0)->a = p->payload;
        break;
    case NTL_IPT_STOP:
        push(f, NTL_IPT_FL_STOP, 0);
        break;
    case NTL_IPT_PWRX:
        pw_tell(f, PW_PWRX, 0, 0);
        push(f, NTL_IPT_FL_PWRX, 0)->a = p->aux;
        break;
    default:
        return 0;
    }
    consume(f);
    return 1;
}

/* A MODE.TSX told at ip: the transaction begins, commits or aborts. */
static void tsx_event(struct ntl_ipt_flow *f, unsigned tsx, uint64_t ip)
{
    struct ntl_ipt_flow_item *it = push(f, NTL_IPT_FL_TSX, ip);
    it->a = tsx & NTL_IPT_F_ABRT ? NTL_IPT_TSX_ABORT
          : tsx & NTL_IPT_F_INTX ? NTL_IPT_TSX_BEGIN : NTL_IPT_TSX_COMMIT;
    f->speculative = tsx & NTL_IPT_F_INTX;
}

/* SKD022: a VM entry disables tracing as FUP and TIP.PGD, as if an
 * asynchronous event came before it; it did execute, and tracing stopped
 * after it. Other instructions take the packets as they are. */
static int skd022(struct ntl_ipt_flow *f, uint64_t at, struct ntl_error *err)
{
    const struct flow_insn *in;
    int rc = flow_insn_get(&f->cache, f->cfg.read, f->cfg.read_ctx, at, f->mode, &in);
    if (rc < 0 || !in->vmentry) {
        disable(f, NTL_IPT_FL_ASYNC_DISABLED, at, true, f->ev.ip_status)->a = f->ev.ip;
        return rc == NTL_ERR_NOMEM ? ntl_error_set(err, rc, "flow", 0, "decode cache full") : 0;
    }
    struct flow_insn cur = *in;
    cur.target = 0; /* as libipt tells it */
    emit_insn(f, &cur);
    f->ip = 0;
    disable(f, NTL_IPT_FL_DISABLED, 0, false, true);
    return 0;
}

/* A FUP at the current IP: an asynchronous event before the instruction
 * there executes, told by the packet after it. */
static int async_event(struct ntl_ipt_flow *f, struct ntl_error *err)
{
    uint64_t at = f->ip;
    consume(f);
    f->after_traced_branch = false;
    if (f->pending_tsx >= 0) {
        unsigned tsx = (unsigned)f->pending_tsx;
        f->pending_tsx = -1;
        tsx_event(f, tsx, at);
        if (!(tsx & NTL_IPT_F_ABRT))
            return 0;
    }
    int rc;
    while ((rc = peek(f, err)) > 0 && hold_context(f))
        ;
    if (rc < 0)
        return rc;
    if (rc == 0)
        return fail(f, NTL_IPT_BAD_QUERY, at, err);
    const struct ntl_ipt_event *e = &f->ev;
    if (e->pkt.type == NTL_IPT_TIP_PGD) {
        consume(f);
        if (f->cfg.trace.time.errata.skd022)
            return skd022(f, at, err);
        disable(f, NTL_IPT_FL_ASYNC_DISABLED, at, true, e->ip_status)->a = e->ip;
        return 0;
    }
    if (e->pkt.type == NTL_IPT_TIP) {
        consume(f);
        struct ntl_ipt_flow_item *it = push(f, NTL_IPT_FL_INTERRUPT, at);
        it->a = e->ip;
        if (e->ip_status)
            it->flags |= NTL_IPT_FL_IP_SUPPRESSED;
        if (e->ip_status)
            return fail(f, NTL_IPT_NOIP, at, err);
        f->ip = e->ip;
        flush_pending(f);
        return 0;
    }
    return fail(f, NTL_IPT_BAD_QUERY, at, err);
}

/* The target of an instruction that needs a TIP. */
static int indirect(struct ntl_ipt_flow *f, const struct flow_insn *in, struct ntl_error *err)
{
    int rc = peek(f, err);
    if (rc < 0)
        return rc;
    if (rc == 0)
        return fail(f, NTL_IPT_BAD_QUERY, in->ip, err);
    const struct ntl_ipt_event *e = &f->ev;
    if (e->pkt.type == NTL_IPT_TIP) {
        if (e->ip_status) {
            consume(f);
            return fail(f, NTL_IPT_NOIP, in->ip, err);
        }
        tick(f, in->ip);
        consume(f);
        f->ip = e->ip;
        anchor_here(f);
        flush_pending(f);
        return 0;
    }
    if (e->pkt.type == NTL_IPT_TIP_PGD) {
        consume(f);
        bool call = in->iclass == NTL_IPT_IC_CALL_IND || in->iclass == NTL_IPT_IC_FAR_CALL;
        f->ip = call ? in->ip + in->size : 0;
        disable(f, NTL_IPT_FL_DISABLED, e->ip_status ? 0 : e->ip, call, e->ip_status);
        return 0;
    }
    return fail(f, NTL_IPT_BAD_QUERY, in->ip, err);
}

static void call_push(struct ntl_ipt_flow *f, uint64_t ret)
{
    f->rs[f->rs_top] = ret;
    f->rs_top = (f->rs_top + 1) % NTL_IPT_RETSTACK;
    if (f->rs_n < NTL_IPT_RETSTACK)
        f->rs_n++;
}

/* A near return: compressed (a taken TNT bit, to the last call's return
 * address) when a TNT is next, else a TIP. */
static int ret(struct ntl_ipt_flow *f, const struct flow_insn *in, struct ntl_error *err)
{
    int rc = peek(f, err);
    if (rc < 0)
        return rc;
    if (rc == 0 || (f->ev.pkt.type != NTL_IPT_TNT_8 && f->ev.pkt.type != NTL_IPT_TNT_64))
        return indirect(f, in, err);
    tick(f, in->ip);
    /* Seed 002: a compressed return's bit is the best check that the walk
     * still follows the trace; a not-taken bit means it does not. */
    if (tnt_bit(f, err) != 1)
        return fail(f, NTL_IPT_BAD_RETCOMP, in->ip, err);
    if (f->rs_n == 0)
        return fail(f, NTL_IPT_RETSTACK_EMPTY, in->ip, err);
    f->rs_top = (f->rs_top + NTL_IPT_RETSTACK - 1) % NTL_IPT_RETSTACK;
    f->rs_n--;
    f->ip = f->rs[f->rs_top];
    return 0;
}

/* Moves f->ip past the instruction in. */
static int step(struct ntl_ipt_flow *f, const struct flow_insn *in, struct ntl_error *err)
{
    uint64_t next = in->ip + in->size;
    int bit;
    switch (in->iclass) {
    case NTL_IPT_IC_COND:
        if (f->cfg.ticks && peek(f, err) > 0 &&
            (f->ev.pkt.type == NTL_IPT_TNT_8 || f->ev.pkt.type == NTL_IPT_TNT_64))
            tick(f, in->ip);
        bit = tnt_bit(f, err);
        if (bit < 0)
            return bit == NTL_IPT_BAD_QUERY ? fail(f, bit, in->ip, err) : bit;
        f->ip = bit ? in->target : next;
        return 0;
    case NTL_IPT_IC_CALL:
        /* A call to the next instruction (32-bit code's way to read EIP)
         * is no call for return compression. */
        if (in->target != next)
            call_push(f, next);
        f->ip = in->target;
        return 0;
    case NTL_IPT_IC_JUMP:
        f->ip = in->target;
        return 0;
    case NTL_IPT_IC_RET:
        return ret(f, in, err);
    case NTL_IPT_IC_CALL_IND:
        call_push(f, next);
        return indirect(f, in, err);
    case NTL_IPT_IC_JUMP_IND: case NTL_IPT_IC_FAR_CALL: case NTL_IPT_IC_FAR_RET:
    case NTL_IPT_IC_FAR_JUMP:
        return indirect(f, in, err);
    default:
        f->ip = next;
        return 0;
    }
}

/* A TIP.PGD with an IP next: tracing stops when the walk reaches it (a
 * branch out of the filtered range). */
static void disabled_at_ip(struct ntl_ipt_flow *f, const struct flow_insn *in)
{
    const struct ntl_ipt_event *e = &f->ev;
    if (!f->enabled || !f->have_ev || e->pkt.type != NTL_IPT_TIP_PGD || e->ip_status ||
        e->ip != f->ip)
        return;
    consume(f);
    bool call = in->iclass == NTL_IPT_IC_CALL;
    f->ip = call ? in->ip + in->size : 0;
    disable(f, NTL_IPT_FL_DISABLED, e->ip, call, false);
}

/* Whether the filter lets tracing on at addr (libipt's
 * pt_filter_addr_check): outside every stop range and, when there are
 * trace ranges, inside one. */
static bool traced(const struct ntl_ipt_filter *flt, uint64_t addr)
{
    bool ranges = false, inside = false;
    for (int i = 0; i < 4; i++) {
        bool in = flt->a[i] <= addr && addr <= flt->b[i];
        if (flt->cfg[i] == NTL_IPT_FILTER_STOP && in)
            return false;
        if (flt->cfg[i] == NTL_IPT_FILTER_TRACE) {
            ranges = true;
            inside |= in;
        }
    }
    return !ranges || inside;
}

/* SKL014: a TIP.PGD without IP next binds to a direct branch out of the
 * filter, when the filter is known. */
static void skl014(struct ntl_ipt_flow *f, const struct flow_insn *in)
{
    const struct ntl_ipt_filter *flt = &f->cfg.filter;
    const struct ntl_ipt_event *e = &f->ev;
    if (!f->cfg.trace.time.errata.skl014 || !f->enabled || !f->have_ev ||
        e->pkt.type != NTL_IPT_TIP_PGD || !e->ip_status ||
        !(flt->cfg[0] | flt->cfg[1] | flt->cfg[2] | flt->cfg[3]) || traced(flt, f->ip))
        return;
    consume(f);
    bool call = in->iclass == NTL_IPT_IC_CALL;
    f->ip = call ? in->ip + in->size : 0;
    disable(f, NTL_IPT_FL_DISABLED, 0, call, true);
}

static int execute_insn(struct ntl_ipt_flow *f, struct flow_insn cur, struct ntl_error *err);

/* Tells the Event Trace events that bind to the instruction in, before
 * it executes or after (in NULL: those before the instruction at f->ip). */
static void tell_evt(struct ntl_ipt_flow *f, const struct flow_insn *in, bool after)
{
    unsigned kept = 0;
    for (unsigned i = 0; i < f->n_evt; i++) {
        const struct ntl_ipt_flow_item *it = &f->evt[i].it;
        uint8_t cls = f->evt[i].evt_class;
        bool here = f->evt[i].at_next ? !after
                  : f->evt[i].insns ? false
                  : cls ? in && in->evclass == cls : it->ip == (in ? in->ip : f->ip);
        if (here && f->evt[i].at_next) {
            f->evt[i].it.ip = in ? in->ip : f->ip;
            f->evt[i].at_next = false;
        }
        if (here && flow_evt_after(it) == after) {
            *push(f, NTL_IPT_FL_CFE, 0) = *it;
            if (it->kind == NTL_IPT_FL_EXEC_MODE)
                f->mode = it->mode;
        }
        else
            f->evt[kept++] = f->evt[i];
    }
    f->n_evt = kept;
}

/* One instruction at f->ip. */
static int execute(struct ntl_ipt_flow *f, struct ntl_error *err)
{
    const struct flow_insn *in;
    int rc = flow_insn_get(&f->cache, f->cfg.read, f->cfg.read_ctx, f->ip, f->mode, &in);
    if (rc < 0)
        return rc == NTL_ERR_NOMEM ? ntl_error_set(err, rc, "flow", 0, "decode cache full")
                                   : fail(f, rc, f->ip, err);
    /* A copy: the cache may move when an instruction is decoded below. */
    return execute_insn(f, *in, err);
}

/* The instruction cur, at f->ip (a block's last one, or execute's). */
static int execute_insn(struct ntl_ipt_flow *f, struct flow_insn cur, struct ntl_error *err)
{
    int rc;
    if (++f->steps > NTL_IPT_FLOW_MAX_STEPS)
        return fail(f, NTL_ERR_LIMIT, f->ip, err);
    tell_evt(f, &cur, false);
    emit_insn(f, &cur);
    tell_evt(f, &cur, true);
    for (unsigned i = 0; i < f->n_evt; i++)
        if (f->evt[i].insns && --f->evt[i].insns == 0)
            f->evt[i].at_next = true;
    if (cur.movcr3 && f->n_paging) {
        /* A PIP binds to the MOV CR3 it reports, the oldest first. */
        *push(f, NTL_IPT_FL_PAGING, 0) = f->paging[0];
        memmove(&f->paging[0], &f->paging[1], --f->n_paging * sizeof f->paging[0]);
    }
    if (cur.movcr3) {
        /* A TIP.PGD without IP binds to a CR3 change too. */
        rc = peek(f, err);
        if (rc < 0)
            return rc;
        if (rc > 0 && f->ev.pkt.type == NTL_IPT_TIP_PGD && f->ev.ip_status) {
            consume(f);
            f->ip = 0;
            disable(f, NTL_IPT_FL_DISABLED, 0, false, true);
            return 0;
        }
    }
    if (cur.iclass == NTL_IPT_IC_PTWRITE && f->n_ptw &&
        (!f->ptw[0].has_ip || f->ptw[0].ip == cur.ip)) {
        /* Bound to the instruction, its IP still unknown to the packet
         * (libipt tells it suppressed). */
        struct ntl_ipt_flow_item *it = push(f, NTL_IPT_FL_PTWRITE, cur.ip);
        it->a = f->ptw[0].payload;
        it->flags = f->ptw[0].has_ip ? 0 : NTL_IPT_FL_IP_SUPPRESSED;
        memmove(&f->ptw[0], &f->ptw[1], --f->n_ptw * sizeof f->ptw[0]);
    }
    if (cur.iclass == NTL_IPT_IC_COND) {
        /* A branch leaving the filtered range sends TIP.PGD, not a bit. */
        rc = peek(f, err);
        if (rc < 0)
            return rc;
        if (rc > 0 && f->ev.pkt.type == NTL_IPT_TIP_PGD && !f->ev.ip_status &&
            (f->ev.ip == cur.target || f->ev.ip == cur.ip + cur.size)) {
            f->ip = f->ev.ip;
            disabled_at_ip(f, &cur);
            return 0;
        }
    }
    rc = step(f, &cur, err);
    if (rc < 0)
        return rc;
    f->after_traced_branch = takes_trace(cur.iclass);
    if (f->enabled && (cur.iclass == NTL_IPT_IC_JUMP || cur.iclass == NTL_IPT_IC_CALL)) {
        rc = peek(f, err);
        if (rc < 0)
            return rc;
        disabled_at_ip(f, &cur);
        skl014(f, &cur);
    }
    return 0;
}

/* Whether nothing binds before the next instruction: the packet ahead is a
 * TNT or a TIP, no item waits to be told and no PSB+ to be applied. */
static bool plain(const struct ntl_ipt_flow *f)
{
    return f->enabled && !f->lost && f->have_ev && !f->psb.pending && !f->n_evt &&
           (f->ev.pkt.type == NTL_IPT_TNT_8 || f->ev.pkt.type == NTL_IPT_TNT_64 ||
            f->ev.pkt.type == NTL_IPT_TIP);
}

/* Whether the walk may go block by block: as plain, or a TIP.PGD ahead,
 * which binds to a block's last instruction at the earliest. */
static bool walkable(const struct ntl_ipt_flow *f)
{
    return plain(f) || (f->enabled && !f->lost && f->have_ev && !f->psb.pending && !f->n_evt &&
                        f->ev.pkt.type == NTL_IPT_TIP_PGD);
}

/* An indirect branch, far transfer or uncompressed return to the TIP
 * ahead, as indirect takes it. Returns false (nothing moved) when the TIP
 * has no IP. */
static bool fast_indirect(struct ntl_ipt_flow *f, const struct flow_insn *in)
{
    if (f->ev.ip_status)
        return false;
    if (in->iclass == NTL_IPT_IC_CALL_IND)
        call_push(f, in->ip + in->size);
    f->ip = f->ev.ip;
    consume(f);
    anchor_here(f);
    /* Checked here: one TIP in most segments, rarely anything pending. */
    if (f->pending_mode || f->pending_iflags >= 0 || f->pending_vmcs || f->n_paging)
        flush_pending(f);
    return true;
}

/* Whether the TIP.PGD ahead may bind to a direct branch to target, as
 * execute_insn binds it (disabled_at_ip, skl014). */
static bool pgd_may_bind(const struct ntl_ipt_flow *f, uint64_t target)
{
    const struct ntl_ipt_filter *flt = &f->cfg.filter;
    if (!f->ev.ip_status)
        return f->ev.ip == target;
    return f->cfg.trace.time.errata.skl014 &&
           (flt->cfg[0] | flt->cfg[1] | flt->cfg[2] | flt->cfg[3]);
}

/* The block b's last instruction, when it is a direct branch, a TNT bit
 * decides it or a TIP without more ado, as step would take it: returns
 * false (nothing moved) for the others and for a packet step would fail
 * on. */
static bool fast_branch(struct ntl_ipt_flow *f, const struct flow_insn *in)
{
    uint64_t next = in->ip + in->size;
    bool tnt = f->ev.pkt.type == NTL_IPT_TNT_8 || f->ev.pkt.type == NTL_IPT_TNT_64;
    int bit = tnt ? (int)(f->ev.pkt.payload >> (f->tnt_left - 1) & 1) : 0;
    if (in->iclass == NTL_IPT_IC_OTHER && !in->movcr3) {
        f->ip = next;
        return true;
    }
    /* With a TIP.PGD ahead, a direct jump or call goes on as step takes it
     * where the TIP.PGD cannot bind to it; execute tells at the others. */
    if (f->ev.pkt.type == NTL_IPT_TIP_PGD &&
        ((in->iclass != NTL_IPT_IC_JUMP && in->iclass != NTL_IPT_IC_CALL) ||
         pgd_may_bind(f, in->target)))
        return false;
    switch (in->iclass) {
    case NTL_IPT_IC_JUMP:
        f->ip = in->target;
        return true;
    case NTL_IPT_IC_CALL:
        if (in->target != next)
            call_push(f, next);
        f->ip = in->target;
        return true;
    case NTL_IPT_IC_COND:
        if (!tnt)
            return false;
        f->ip = bit ? in->target : next;
        break;
    case NTL_IPT_IC_RET:
        if (!tnt)
            return fast_indirect(f, in);
        if (!bit || f->rs_n == 0)
            return false;
        f->rs_top = (f->rs_top + NTL_IPT_RETSTACK - 1) % NTL_IPT_RETSTACK;
        f->rs_n--;
        f->ip = f->rs[f->rs_top];
        break;
    case NTL_IPT_IC_JUMP_IND: case NTL_IPT_IC_CALL_IND: case NTL_IPT_IC_FAR_CALL:
    case NTL_IPT_IC_FAR_RET: case NTL_IPT_IC_FAR_JUMP:
        return !tnt && fast_indirect(f, in);
    default:
        return false;
    }
    if (--f->tnt_left == 0)
        consume(f);
    f->steps = 0;
    return true;
}

/* Whether the decision d for a TNT's last bits, keyed for a TIP after
 * them, serves the TIP.PGD there (pgd as ntl_ipt_evd_pgd_ahead returned,
 * pgd_ip its IP): it reaches a branch to the TIP, and the TIP.PGD cannot
 * bind to a direct jump or call on the way (pgd_may_bind's case). BDM64
 * would want the state before that branch, which d does not keep. */
static bool pgd_takes(const struct ntl_ipt_flow *f, const struct flow_decision *d, int pgd,
                      uint64_t pgd_ip)
{
    const struct ntl_ipt_filter *flt = &f->cfg.filter;
    if (!(d->tip & 1) || (d->tip & FLOW_DECIDE_MANY) || f->cfg.trace.time.errata.bdm64)
        return false;
    if (!(d->tip & FLOW_DECIDE_DIRECT))
        return true;
    if (pgd == 2)
        return pgd_ip != flow_decision_end(d);
    return !(f->cfg.trace.time.errata.skl014 && (flt->cfg[0] | flt->cfg[1] | flt->cfg[2] | flt->cfg[3]));
}

/* The return addresses a decision leaves pushed. */
static void decision_calls(struct ntl_ipt_flow *f, const struct flow_decision *d)
{
    unsigned had = f->rs_n;
    for (unsigned i = 0; i < d->npush; i++)
        call_push(f, flow_decision_push(d, i));
    /* Calls that wrapped the return stack overwrote its oldest entries,
     * and the returns to them then left those out: as the per-block walk
     * leaves it (a full stack is the usual state of a long trace). */
    if (had + d->depth > NTL_IPT_RETSTACK)
        f->rs_n = NTL_IPT_RETSTACK - (d->depth - d->npush);
}

/* A decision that pgd_takes for the TIP.PGD in f->ev: its instructions,
 * traced of them taking trace, the branch to the TIP last, which binds
 * the TIP.PGD as execute_insn runs it (step, then indirect): tracing
 * stops. */
static void pgd_bind(struct ntl_ipt_flow *f, const struct flow_decision *d, unsigned traced)
{
    const struct flow_insn *in = &d->last;
    uint64_t next = in->ip + in->size;
    bool call = in->iclass == NTL_IPT_IC_CALL_IND || in->iclass == NTL_IPT_IC_FAR_CALL;
    run_path(f, d);
    run_add(f, in, d->ninsn, traced);
    if (in->iclass == NTL_IPT_IC_CALL_IND)
        call_push(f, next);
    f->after_traced_branch = true;
    consume(f);
    f->ip = call ? next : 0;
    disable(f, NTL_IPT_FL_DISABLED, f->ev.ip_status ? 0 : f->ev.ip, call, f->ev.ip_status);
}

/* A decision for a TNT's last bits with a TIP.PGD after them that
 * pgd_takes: the bits used up, the TIP.PGD read (the walk's inline read
 * gets it: ntl_ipt_evd_pgd_ahead saw it there) and bound. Returns 1, or
 * an error. */
static int decide_pgd(struct ntl_ipt_flow *f, const struct flow_decision *d,
                      struct ntl_error *err)
{
    f->ip = d->ip; /* as a decision spanning a TIP leaves it */
    f->tnt_left = 0;
    consume(f);
    anchor_here(f); /* a decision ends right after its last bit */
    int rc = walk_peek(f, err);
    if (rc < 0)
        return rc;
    pgd_bind(f, d, d->used + 1u);
    return 1;
}

/* With a TIP.PGD ahead and no bits: the decision keyed for a TIP after
 * none, where pgd_takes it (kAFL's filter left through a return or an
 * indirect branch right after a TIP). Returns 1 when it did, 0 when the
 * walk goes block by block, or NTL_ERR_NOMEM. */
static int decide_pgd_alone(struct ntl_ipt_flow *f, struct ntl_error *err)
{
    const struct flow_decision *d;
    int rc = flow_decide(&f->decisions, &f->blocks, &f->cache, f->cfg.read, f->cfg.read_ctx,
                         f->ip, f->mode, 0, FLOW_DECIDE_TIP, &d);
    if (rc < 0)
        return ntl_error_set(err, rc, "flow", 0, "out of memory");
    if (!d->used || f->steps + d->ninsn > NTL_IPT_FLOW_MAX_STEPS ||
        !pgd_takes(f, d, f->ev.ip_status ? 1 : 2, f->ev.ip))
        return 0;
    decision_calls(f, d);
    pgd_bind(f, d, 1);
    return 1;
}

/* With a TNT ahead, the cached decision for its next bits: taken whole
 * when it follows any. Returns 1 when it did, 0 when the walk goes block
 * by block, or NTL_ERR_NOMEM. */
static int decide(struct ntl_ipt_flow *f, struct ntl_error *err)
{
    if (f->ev.pkt.type == NTL_IPT_TIP_PGD)
        return decide_pgd_alone(f, err);
    bool tip = f->ev.pkt.type == NTL_IPT_TIP;
    if (!tip && f->ev.pkt.type != NTL_IPT_TNT_8 && f->ev.pkt.type != NTL_IPT_TNT_64)
        return 0;
    if (tip && f->ev.ip_status)
        return 0; /* execute fails on it */
    unsigned n = tip ? 0 : f->tnt_left < FLOW_DECIDE_BITS ? f->tnt_left : FLOW_DECIDE_BITS;
    unsigned bits = tip ? 0 : (unsigned)(f->ev.pkt.payload >> (f->tnt_left - n)) & ((1u << n) - 1);
    /* The TNT's last bits with a TIP right after them: one decision for
     * both (kAFL's segments are a TIP and the TNT-8s before the next). */
    bool last_bits = !tip && n == f->tnt_left;
    bool span = last_bits && ntl_ipt_evd_tip_ahead(&f->evd);
    /* A TIP.PGD there: the same decision, taken to the branch it binds to
     * where pgd_takes it. */
    uint64_t pgd_ip = 0;
    int pgd = last_bits && !span ? ntl_ipt_evd_pgd_ahead(&f->evd, &pgd_ip) : 0;
    const struct flow_decision *d;
    int rc = flow_decide(&f->decisions, &f->blocks, &f->cache, f->cfg.read, f->cfg.read_ctx,
                         f->ip, f->mode, bits, span || pgd ? n | FLOW_DECIDE_TIP : n, &d);
    /* Else the state after the bits alone, which a decision that reaches
     * the branch does not keep. */
    if (rc == 0 && pgd && !pgd_takes(f, d, pgd, pgd_ip) && (pgd = 0, d->tip)) {
        rc = flow_decide(&f->decisions, &f->blocks, &f->cache, f->cfg.read, f->cfg.read_ctx,
                         f->ip, f->mode, bits, n, &d);
    }
    if (rc < 0)
        return ntl_error_set(err, rc, "flow", 0, "out of memory");
    /* It may not pass the step limit. */
    if (!d->used || f->steps + d->ninsn > NTL_IPT_FLOW_MAX_STEPS)
        return 0;
    decision_calls(f, d);
    if (tip) {
        run_path(f, d);
        run_add(f, &d->last, d->ninsn, 1);
        f->after_traced_branch = true;
        fast_indirect(f, &d->last);
        return 1;
    }
    if (pgd)
        return decide_pgd(f, d, err);
    f->ip = flow_decision_end(d);
    /* Each bit one instruction's, and the branch to the TIP. */
    bool to_tip = span && d->tip;
    run_path(f, d);
    run_add(f, &d->last, d->ninsn, d->used + to_tip);
    f->after_traced_branch = true;
    f->steps = 0;
    f->tnt_left -= d->used;
    if (f->tnt_left == 0) {
        consume(f);
        anchor_here(f); /* a decision ends right after its last bit */
    }
    if (!to_tip)
        return 1;
    /* The TIP ahead (tip_ahead saw it), as the walk would read it and a
     * decision with no bits would take it. */
    rc = walk_peek(f, err);
    if (rc < 0)
        return rc;
    fast_indirect(f, &d->last);
    return 1;
}

/* Whether the fast loop may run: at a packet boundary, where walkable
 * holds whatever packet comes next, with nothing waiting for the next
 * branch (a MODE.Exec, an IF change, a VMCS or PIP: fast_indirect tells
 * them at a TIP, the loop does not) and no ticks asked (the packets' time
 * at each branch, which the loop does not read). */
static bool fast_ready(const struct ntl_ipt_flow *f)
{
    return !f->have_ev && !f->at_end && f->enabled && !f->lost && !f->psb.pending &&
           !f->n_evt && f->qn == 0 && !f->cfg.ticks && !f->evd.pending && !f->evd.in_psb &&
           !f->pending_mode && f->pending_iflags < 0 && !f->pending_vmcs && !f->n_paging;
}

/* Packets taken by the fast loop, after instructions since the last: as
 * consume and anchor_here left it then (no timing packet lies between
 * them: the time stayed). */
static void took_packets(struct ntl_ipt_flow *f, uint64_t after)
{
    if (f->cfg.times)
        f->ev_timed = ntl_ipt_evd_tsc(&f->evd, &f->ev_tsc) == 0;
    f->last_tsc = f->ev_tsc;
    judge(f);
    f->anchor = f->icount - after;
    f->has_anchor = true;
}

/* The fast loop stopped at a TIP.PGD (after fs->left bits, or none) with
 * the decision for it: taken where decide would take it (decide_pgd,
 * decide_pgd_alone), the TIP.PGD then read and bound. Returns 1 when it
 * did, 0 when the walk goes on without, or an error. */
static int fast_pgd(struct ntl_ipt_flow *f, const struct flow_fast *fs, struct ntl_error *err)
{
    const struct flow_decision *d = fs->pgd;
    uint64_t pgd_ip = 0;
    int pgd = ntl_ipt_evd_pgd_ahead(&f->evd, &pgd_ip);
    if (!d->used || f->steps + d->ninsn > NTL_IPT_FLOW_MAX_STEPS || !pgd_takes(f, d, pgd, pgd_ip))
        return 0;
    decision_calls(f, d);
    if (fs->left) {
        /* The bits used up: the TNT-8s taken. */
        f->ip = d->ip;
        f->steps = 0;
        took_packets(f, 0);
    }
    int rc = walk_peek(f, err);
    if (rc < 0)
        return rc;
    pgd_bind(f, d, fs->left ? d->used + 1u : 1);
    return 1;
}

/* The pairs the fast loop took (fs->npairs, at least one) queued: each
 * one's RUN, DISABLED and ENABLED as fast_pgd, pgd_bind and fast_pge
 * queue them, written straight into the queue, and the state the last
 * one leaves that is read later: tracing enabled, the time, and the
 * anchor's (a DISABLED ends it, the ENABLED is judged when the next item
 * is queued). What else those functions set is set again before it is
 * read (can_resume by the next disable, ev and tnt_nseg by the next
 * peek). */
static void fast_pairs(struct ntl_ipt_flow *f, const struct flow_fast *fs)
{
    struct ntl_ipt_flow_item ev = {.mode = f->mode};
    if (f->cfg.times) {
        f->ev_timed = ev.timed = ntl_ipt_evd_tsc(&f->evd, &f->ev_tsc) == 0;
        ev.tsc = f->ev_tsc;
    }
    f->last_tsc = f->ev_tsc;
    for (unsigned i = 0; i < fs->npairs; i++) {
        const struct flow_pair *p = &fs->pairs[i];
        run_add(f, &p->last, p->ninsn, p->traced);
        unsigned s = f->qh + f->qn;
        f->q[s % QUEUE] = f->run;
        struct ntl_ipt_flow_item *it = &f->q[(s + 1) % QUEUE];
        *it = ev;
        it->kind = NTL_IPT_FL_DISABLED;
        it->ip = p->pgd_ip;
        it->flags = p->suppressed ? NTL_IPT_FL_IP_SUPPRESSED : 0;
        it = &f->q[(s + 2) % QUEUE];
        *it = ev;
        it->kind = NTL_IPT_FL_ENABLED;
        it->ip = p->pge_ip;
        /* Where tracing stopped after a call (pgd_bind), it resumes. */
        bool call = p->last.iclass == NTL_IPT_IC_CALL_IND || p->last.iclass == NTL_IPT_IC_FAR_CALL;
        if (call && p->last.ip + p->last.size == p->pge_ip)
            it->flags = NTL_IPT_FL_RESUMED;
        f->qn += 3;
        f->run_open = false;
    }
    f->note = (int)((f->qh + f->qn - 1) % QUEUE);
    f->note_icount = f->icount;
    f->has_anchor = false;
    f->enabled = true;
    f->after_traced_branch = true;
}

/* The fast loop (flow-fast.h) from here, its state then taken back as
 * decide would have left it; with pairs, it takes TIP.PGD/TIP.PGE pairs
 * while the queue has room for their items. Returns 1 when it stopped at
 * a TIP.PGD that is now bound (tracing disabled), else 0, or an error. */
static int fast_once(struct ntl_ipt_flow *f, bool pairs, struct ntl_error *err)
{
    /* Field by field: an initializer would clear the rest (rep stos, a
     * seventh of the walk's time on mruby); flow_fast_run sets them. */
    struct flow_fast fs;
    fs.dc = &f->decisions;
    fs.bc = &f->blocks;
    fs.ic = &f->cache;
    fs.read = f->cfg.read;
    fs.ctx = f->cfg.read_ctx;
    fs.evd = &f->evd;
    fs.ip = f->ip;
    fs.mode = f->mode;
    fs.steps = f->steps;
    fs.rs = f->rs;
    fs.rs_top = f->rs_top;
    fs.rs_n = f->rs_n;
    fs.trail = NULL;
    if (f->trail_on) {
        /* Its decisions' paths join the open run (or a new one). */
        run_fit(f);
        fs.trail = &f->trail;
        fs.trail_stop = (size_t)(f->run_from + FLOW_TRAIL_RUN - f->trail.base);
    }
    /* Room for a pair's three items and the RUN and DISABLED that
     * fast_pgd may queue after the last; not with a trail (each RUN's end
     * kept), BDM64 (pgd_takes) or a MODE.TSX waiting (fast_pge). */
    struct flow_pair pair[QUEUE / 3];
    fs.pairs = pair;
    fs.pair_room = 0;
    if (pairs && !f->trail_on && !f->cfg.trace.time.errata.bdm64 && f->pending_tsx < 0 &&
        f->qn + 5 <= QUEUE)
        fs.pair_room = (QUEUE - 2 - f->qn) / 3;
    const struct ntl_ipt_filter *flt = &f->cfg.filter;
    fs.pgd_direct = !(f->cfg.trace.time.errata.skl014 &&
                      (flt->cfg[0] | flt->cfg[1] | flt->cfg[2] | flt->cfg[3]));
    int rc = flow_fast_run(&fs);
    if (rc < 0)
        return ntl_error_set(err, rc, "flow", 0, "out of memory");
    f->ip = fs.ip;
    f->steps = fs.steps;
    f->rs_top = fs.rs_top;
    f->rs_n = fs.rs_n;
    if (fs.npairs)
        fast_pairs(f, &fs);
    if (fs.ninsn) {
        run_add(f, &fs.last, fs.ninsn, fs.traced);
        f->after_traced_branch = true;
    }
    if (fs.took)
        took_packets(f, fs.after);
    if (fs.pgd && (rc = fast_pgd(f, &fs, err)) != 0)
        return rc;
    if (!fs.left)
        return 0;
    /* TNT-8s partly taken: read as one again, the bits taken gone. */
    f->evd.pkt.cur = fs.group;
    rc = walk_peek(f, err);
    if (rc < 0)
        return rc;
    f->tnt_left = fs.left;
    return 0;
}

/* After a TIP.PGD bound by the fast loop: the TIP.PGE right after it (PADs
 * between) read and told as advance and while_disabled would, when nothing
 * else could be read or bind between (no MODE.TSX waits for it; fast_ready
 * held before, and disable left nothing pending). Returns whether it did:
 * tracing is then enabled at a packet boundary, and fast_ready holds but
 * for the queue. */
static bool fast_pge(struct ntl_ipt_flow *f)
{
    struct ntl_ipt_decoder *p = &f->evd.pkt;
    const uint8_t *c = p->cur;
    if (f->pending_tsx >= 0 || f->have_ev || f->evd.pending || f->evd.in_psb)
        return false;
    while (c < p->fast_end && *c == 0) {
        uint64_t w = ntl_ipt_load64_(c); /* 8 at a time, as the event layer passes them */
        c += w ? (unsigned)__builtin_ctzll(w) >> 3 : 8;
    }
    if (c >= p->fast_end)
        return false;
    const struct ntl_ipt_fast_ *e = &ntl_ipt_fast_table_[*c];
    if (!e->ip_kind || e->pkt.type != NTL_IPT_TIP_PGE || e->pkt.count == NTL_IPT_IPC_SUPPRESSED)
        return false;
    p->cur = c;
    ntl_ipt_evd_next_ip(&f->evd, &f->ev); /* reads it: the tests above are its own */
    if (f->cfg.times)
        f->ev_timed = ntl_ipt_evd_tsc(&f->evd, &f->ev_tsc) == 0;
    consume(f);
    enable(f, f->ev.ip);
    return true;
}

/* The fast loop from here; with pairs, on past each TIP.PGD it binds and
 * the TIP.PGE after it while the queue has room for another pair's RUN,
 * DISABLED and ENABLED (and a RUN cut at FLOW_TRAIL_RUN): kAFL's filter
 * leaves and enters every few branches (mruby: 14.3 k pairs), and each
 * pair through advance cost ~800 instructions. Only where advance returns
 * right after it: what the walk would do next is done once the queue is
 * told, as it would have been. Returns 0, or an error. */
static int fast(struct ntl_ipt_flow *f, bool pairs, struct ntl_error *err)
{
    int rc;
    while ((rc = fast_once(f, pairs, err)) > 0 && pairs && f->qn <= QUEUE - 4 && fast_pge(f))
        ;
    return rc < 0 ? rc : 0;
}

/* With cfg.runs: cached decisions and whole blocks while nothing binds
 * between instructions, each one lookup; a block whose last instruction
 * needs more than fast_branch does goes through execute for that
 * instruction. */
static int walk(struct ntl_ipt_flow *f, struct ntl_error *err)
{
    for (;;) {
        if (fast_ready(f)) {
            int rc = fast(f, false, err);
            if (rc < 0)
                return rc;
        }
        /* A packet used up: the next, as advance would read it; one
         * that is not walkable goes back to advance. */
        int rc = walk_peek(f, err);
        if (rc < 0)
            return rc;
        if (!walkable(f) || f->qn != 0)
            return 0;
        rc = decide(f, err);
        if (rc < 0)
            return rc;
        if (rc > 0)
            continue;
        const struct flow_block *b;
        if (flow_block_get(&f->blocks, &f->cache, f->cfg.read, f->cfg.read_ctx, f->ip, f->mode,
                           &b) < 0 ||
            f->steps + b->ninsn > NTL_IPT_FLOW_MAX_STEPS)
            return execute(f, err); /* one at a time, to fail where it fails */
        struct flow_insn last = b->last;
        uint32_t n = b->ninsn;
        uint64_t from = f->ip;
        f->steps += n;
        if (fast_branch(f, &last)) {
            run_seg(f, from, n);
            run_add(f, &last, n, takes_trace(last.iclass));
            f->after_traced_branch = takes_trace(last.iclass);
            continue;
        }
        f->steps -= n;
        if (n > 1) {
            /* The straight instructions before it; execute adds it. */
            run_seg(f, from, n - 1);
            run_add(f, NULL, n - 1, 0);
            f->steps += n - 1;
            f->after_traced_branch = false;
        }
        f->ip = last.ip;
        rc = execute_insn(f, last, err);
        if (rc < 0)
            return rc;
    }
}

/* With tracing disabled: the packet decides. */
static int while_disabled(struct ntl_ipt_flow *f, struct ntl_error *err)
{
    const struct ntl_ipt_event *e = &f->ev;
    struct ntl_ipt_flow_item *it;
    switch (e->pkt.type) {
    case NTL_IPT_TIP_PGE:
        consume(f);
        if (e->ip_status)
            return fail(f, NTL_IPT_NOIP, 0, err);
        if (f->pending_tsx >= 0) {
            /* A MODE.TSX binds to the TIP.PGE, told before it, without IP. */
            tsx_event(f, (unsigned)f->pending_tsx, e->ip);
            f->q[(f->qh + f->qn - 1) % QUEUE].flags = NTL_IPT_FL_IP_SUPPRESSED;
            f->pending_tsx = -1;
        }
        enable(f, e->ip);
        return 0;
    case NTL_IPT_PIP:
        consume(f);
        it = push(f, NTL_IPT_FL_PAGING, 0);
        it->a = e->pkt.payload;
        it->flags = e->pkt.flags & NTL_IPT_F_NR ? NTL_IPT_FL_NR : 0;
        return 0;
    case NTL_IPT_VMCS:
        consume(f);
        push(f, NTL_IPT_FL_VMCS, 0)->a = e->pkt.payload;
        return 0;
    case NTL_IPT_FUP: case NTL_IPT_TNT_8: case NTL_IPT_TNT_64: case NTL_IPT_TIP:
    case NTL_IPT_TIP_PGD:
        return fail(f, NTL_IPT_BAD_CONTEXT, 0, err);
    default:
        consume(f);
        return 0;
    }
}

/* After an error, with --resync-on-error: the packets up to the next that
 * tells the IP, as libipt's pt_blk_resync goes on: TNT bits are passed
 * over, a TIP gives the IP, a FUP an asynchronous event there, TIP.PGD or
 * TIP.PGE that tracing is (or was) disabled. */
static int find_ip(struct ntl_ipt_flow *f, struct ntl_error *err)
{
    const struct ntl_ipt_event *e = &f->ev;
    switch (e->pkt.type) {
    case NTL_IPT_TIP:
        consume(f);
        if (e->ip_status)
            return 0;
        f->lost = false;
        f->ip = e->ip;
        flush_pending(f);
        return 0;
    case NTL_IPT_FUP:
        if (e->ip_status) {
            consume(f);
            return 0;
        }
        f->lost = false;
        f->ip = e->ip;
        return async_event(f, err);
    case NTL_IPT_TIP_PGD:
        consume(f);
        f->lost = false;
        f->ip = 0;
        disable(f, NTL_IPT_FL_DISABLED, 0, false, true);
        return 0;
    case NTL_IPT_TIP_PGE:
        /* Tracing had been disabled: told, and the TIP.PGE enables it. */
        f->lost = false;
        f->ip = 0;
        disable(f, NTL_IPT_FL_DISABLED, 0, false, true);
        return 0;
    default:
        if (!hold_context(f))
            consume(f);
        return 0;
    }
}

/* Held power events, as libipt's event queue holds them: an MWAIT until
 * the EXSTOP after it, a PWRE until a PWRX, an MWAIT and EXSTOP with IP
 * until the FUP after them. Kept in the order the packets came, which is
 * the order they are told in. */
static void pw_hold(struct ntl_ipt_flow *f, uint8_t kind, uint64_t a, uint64_t b, uint8_t flags,
                    uint8_t bind)
{
    if (f->n_pw == sizeof f->pw / sizeof f->pw[0])
        return;
    f->pw[f->n_pw].it = (struct ntl_ipt_flow_item){.kind = kind, .a = a, .b = b, .flags = flags};
    f->pw[f->n_pw++].bind = bind;
}

/* The first event held for bind out of the list into *it. Returns false
 * when there is none. */
static bool pw_take(struct ntl_ipt_flow *f, uint8_t bind, struct ntl_ipt_flow_item *it)
{
    for (unsigned i = 0; i < f->n_pw; i++) {
        if (f->pw[i].bind != bind)
            continue;
        *it = f->pw[i].it;
        memmove(&f->pw[i], &f->pw[i + 1], (--f->n_pw - i) * sizeof f->pw[0]);
        return true;
    }
    return false;
}

/* Tells the events held for bind (all held: PW_ANY), at ip. */
static void pw_tell(struct ntl_ipt_flow *f, uint8_t bind, uint64_t ip, uint8_t flags)
{
    unsigned kept = 0;
    for (unsigned i = 0; i < f->n_pw; i++) {
        if (bind != PW_ANY && f->pw[i].bind != bind) {
            f->pw[kept++] = f->pw[i];
            continue;
        }
        struct ntl_ipt_flow_item *it = push(f, f->pw[i].it.kind, ip);
        it->a = f->pw[i].it.a;
        it->b = f->pw[i].it.b;
        it->flags = f->pw[i].it.flags | flags;
    }
    f->n_pw = kept;
}

/* Whether an event waits for a FUP. */
static bool pw_fup_waits(const struct ntl_ipt_flow *f)
{
    for (unsigned i = 0; i < f->n_pw; i++)
        if (f->pw[i].bind == PW_FUP)
            return true;
    return false;
}

/* An EXSTOP: with IP, it and the MWAIT before it wait for the FUP after
 * it; without, both are told now. */
static void exstop(struct ntl_ipt_flow *f, bool ip)
{
    struct ntl_ipt_flow_item mwait;
    bool have = pw_take(f, PW_EXSTOP, &mwait);
    if (ip) {
        if (have)
            pw_hold(f, mwait.kind, mwait.a, mwait.b, 0, PW_FUP);
        pw_hold(f, NTL_IPT_FL_EXSTOP, 0, 0, 0, PW_FUP);
        return;
    }
    if (have) {
        struct ntl_ipt_flow_item *it = push(f, NTL_IPT_FL_MWAIT, 0);
        it->a = mwait.a;
        it->b = mwait.b;
        it->flags = NTL_IPT_FL_IP_SUPPRESSED;
    }
    push(f, NTL_IPT_FL_EXSTOP, 0)->flags = NTL_IPT_FL_IP_SUPPRESSED;
}

/* MWAIT, EXSTOP, PWRE and PTW: told now, or held for the FUP or the
 * PTWRITE they bind to. Returns 1 when the packet was one of them. */
static int power_event(struct ntl_ipt_flow *f, struct ntl_error *err)
{
    const struct ntl_ipt_packet *p = &f->ev.pkt;
    switch (p->type) {
    case NTL_IPT_MWAIT:
        pw_hold(f, NTL_IPT_FL_MWAIT, p->payload, p->aux, 0, PW_EXSTOP);
        break;
    case NTL_IPT_EXSTOP:
        exstop(f, p->flags & NTL_IPT_F_IP);
        break;
    case NTL_IPT_PWRE:
        pw_hold(f, NTL_IPT_FL_PWRE, p->aux, 0, p->flags & NTL_IPT_F_HW ? NTL_IPT_FL_HW : 0,
                PW_PWRX);
        break;
    case NTL_IPT_PTW: {
        bool ip = p->flags & NTL_IPT_F_IP, has_ip = false;
        uint64_t payload = p->payload, at = 0;
        consume(f);
        if (ip && peek(f, err) > 0 && f->ev.pkt.type == NTL_IPT_FUP && !f->ev.ip_status) {
            has_ip = true;
            at = f->ev.ip;
            consume(f);
        }
        if (f->lost && has_ip) {
            /* After an error, the PTWRITE it binds to is where the walk
             * goes on (libipt's resync). */
            f->lost = false;
            f->ip = at;
        }
        if (f->enabled && !f->lost && f->n_ptw < sizeof f->ptw / sizeof f->ptw[0]) {
            f->ptw[f->n_ptw].has_ip = has_ip;
            f->ptw[f->n_ptw].ip = at;
            f->ptw[f->n_ptw++].payload = payload;
        } else {
            struct ntl_ipt_flow_item *it = push(f, NTL_IPT_FL_PTWRITE, at);
            it->a = payload;
            it->flags = has_ip ? 0 : NTL_IPT_FL_IP_SUPPRESSED;
        }
        return 1;
    }
    default:
        return 0;
    }
    consume(f);
    return 1;
}

/* The FUP the held events wait for: told at its IP. */
static void fup_events(struct ntl_ipt_flow *f)
{
    uint64_t ip = f->ev.ip;
    consume(f);
    pw_tell(f, PW_FUP, ip, 0);
}

/* BDM64: the branch before a TSX abort may have reported a wrong TNT bit
 * or TIP. With the abort's FUP ahead right after a branch that took
 * trace, and its IP not reachable from here without another branch (in
 * 256 instructions, as libipt looks), the branch is taken to have gone to
 * the abort's IP. */
static void bdm64(struct ntl_ipt_flow *f)
{
    const struct ntl_ipt_event *e = &f->ev;
    if (!f->cfg.trace.time.errata.bdm64 || !f->after_traced_branch || f->pending_tsx < 0 ||
        !(f->pending_tsx & NTL_IPT_F_ABRT) || !f->have_ev || e->pkt.type != NTL_IPT_FUP ||
        e->ip_status || e->ip == f->ip)
        return;
    f->after_traced_branch = false;
    uint64_t ip = f->ip;
    for (int i = 0; i < 256; i++) {
        const struct flow_insn *in;
        if (flow_insn_get(&f->cache, f->cfg.read, f->cfg.read_ctx, ip, f->mode, &in) < 0 ||
            in->iclass != NTL_IPT_IC_OTHER)
            break;
        ip += in->size;
        if (ip == e->ip)
            return;
    }
    f->ip = e->ip;
}

/* A CFE or EVD: an EVD waits for its CFE; a CFE's event is told now or
 * when the walk reaches where it binds (flow-evtrace.h). */
static int event_trace(struct ntl_ipt_flow *f, struct ntl_error *err)
{
    struct ntl_ipt_flow_item it;
    int bind = f->ev.pkt.type == NTL_IPT_EVD ? flow_evt_evd(&f->evtrace, &f->ev.pkt)
                                             : flow_evt_cfe(&f->evtrace, &f->ev.pkt, f->enabled, &it);
    if (bind < 0)
        return fail(f, bind, f->ip, err);
    consume(f);
    if (f->ev.pkt.type == NTL_IPT_EVD || bind == EVT_NONE)
        return 0;
    if (bind == EVT_FUP || bind == EVT_FUP_BOUND || bind == EVT_IGNORE) {
        int rc = peek(f, err);
        if (rc < 0)
            return rc;
        if (rc == 0 || f->ev.pkt.type != NTL_IPT_FUP)
            return fail(f, NTL_IPT_BAD_CONTEXT, f->ip, err);
        if (bind == EVT_IGNORE) {
            consume(f);
            return 0;
        }
        it.ip = f->ev.ip;
        if (!f->ev.ip_status)
            it.flags &= (uint8_t)~NTL_IPT_FL_IP_SUPPRESSED;
        if (bind == EVT_FUP_BOUND)
            consume(f);
    }
    if (bind == EVT_NOW || !f->enabled) {
        *push(f, NTL_IPT_FL_CFE, 0) = it;
        return 0;
    }
    if (f->n_evt == sizeof f->evt / sizeof f->evt[0])
        return fail(f, NTL_IPT_BAD_CONTEXT, f->ip, err);
    memset(&f->evt[f->n_evt], 0, sizeof f->evt[0]);
    f->evt[f->n_evt].it = it;
    f->evt[f->n_evt++].evt_class = bind == EVT_INSN ? (uint8_t)flow_evt_class(&it) : EVC_NONE;
    return 0;
}

/* With Event Trace, a MODE.Exec may bind to a FUP instead of a TIP: the
 * IF bit changed before the instruction at its IP. The FUP is the
 * MODE.Exec's alone, even when nothing changed. */
static int mode_fup(struct ntl_ipt_flow *f, struct ntl_error *err)
{
    int rc = peek(f, err);
    if (rc <= 0 || !f->enabled || f->ev.pkt.type != NTL_IPT_FUP || f->ev.ip_status ||
        (f->ev.flags & NTL_IPT_EV_IN_PSB))
        return rc;
    uint64_t fup_off = 1 + f->ev.offset;
    consume(f);
    struct ntl_ipt_flow_item held[2];
    unsigned n = 0;
    if (f->pending_mode)
        held[n++] = (struct ntl_ipt_flow_item){.kind = NTL_IPT_FL_EXEC_MODE,
                                               .mode = f->pending_mode, .ip = f->ev.ip};
    if (f->pending_iflags >= 0)
        held[n++] = (struct ntl_ipt_flow_item){.kind = NTL_IPT_FL_IFLAGS, .mode = f->mode,
                                               .a = (uint64_t)f->pending_iflags, .ip = f->ev.ip};
    f->pending_mode = 0;
    f->pending_iflags = -1;
    for (unsigned i = 0; i < n; i++) {
        if (f->n_evt == sizeof f->evt / sizeof f->evt[0])
            return fail(f, NTL_IPT_BAD_CONTEXT, f->ip, err);
        memset(&f->evt[f->n_evt], 0, sizeof f->evt[0]);
        f->evt[f->n_evt].it = held[i];
        f->evt[f->n_evt].fup_off = fup_off;
        f->evt[f->n_evt++].evt_class = EVC_NONE;
    }
    return 1;
}

/* Holds an event until the walk reaches where it binds. */
static int hold_evt(struct ntl_ipt_flow *f, const struct ntl_ipt_flow_item *it, uint16_t insns,
                    struct ntl_error *err)
{
    if (f->n_evt == sizeof f->evt / sizeof f->evt[0])
        return fail(f, NTL_IPT_BAD_CONTEXT, f->ip, err);
    memset(&f->evt[f->n_evt], 0, sizeof f->evt[0]);
    f->evt[f->n_evt].it = *it;
    f->evt[f->n_evt].evt_class = EVC_NONE;
    f->evt[f->n_evt].at_next = false;
    f->evt[f->n_evt++].insns = insns;
    return 0;
}

/* A TRIG: told now without ICNT; with it, ICNT instructions after its
 * anchor (the last TNT, TIP or event with an IP), or with its IP bit at
 * the FUP after it. A count the walk is already past, or no anchor, is
 * an error (libipt's "bad packet"). */
static int trigger(struct ntl_ipt_flow *f, struct ntl_error *err)
{
    const struct ntl_ipt_packet *p = &f->ev.pkt;
    struct ntl_ipt_flow_item it = {.kind = NTL_IPT_FL_TRIG, .mode = f->mode,
                                   .flags = NTL_IPT_FL_IP_SUPPRESSED,
                                   .a = (p->aux & 0xff) | (p->flags & NTL_IPT_F_MULT ? 0x100u : 0)};
    uint64_t icnt = p->aux >> 8;
    bool icntv = p->flags & NTL_IPT_F_ICNTV, ip = p->flags & NTL_IPT_F_IP;
    judge(f);
    if ((ip && (!icntv || icnt)) ||
        (icntv && !ip && (!f->has_anchor || icnt < f->icount - f->anchor)))
        return fail(f, NTL_IPT_BAD_CONTEXT, f->ip, err);
    consume(f);
    if (ip) {
        int rc = peek(f, err);
        if (rc < 0)
            return rc;
        if (rc == 0 || f->ev.pkt.type != NTL_IPT_FUP || f->ev.ip_status)
            return fail(f, NTL_IPT_BAD_CONTEXT, f->ip, err);
        consume(f);
        it.ip = f->ev.ip;
        it.flags = 0;
        if (f->enabled)
            return hold_evt(f, &it, 0, err);
    } else if (icntv) {
        uint64_t left = icnt - (f->icount - f->anchor);
        it.flags = 0;
        if (left && f->enabled)
            return hold_evt(f, &it, (uint16_t)left, err);
        it.ip = f->ip;
    }
    *push(f, NTL_IPT_FL_TRIG, 0) = it;
    return 0;
}

/* Decides the next items. Returns 1 when it queued some or moved on, 0 at
 * the end of the trace, or an error. */
static int advance(struct ntl_ipt_flow *f, struct ntl_error *err)
{
    /* What advance does for PADs, TNTs and TIPs while fast_ready holds is
     * walk's: the fast loop takes them before one is read ahead. Items
     * it queued (a TIP.PGD bound) are told first, as walk tells them. */
    if (f->cfg.runs && fast_ready(f)) {
        int rc = fast(f, true, err);
        if (rc < 0 || f->qn)
            return rc < 0 ? rc : 1;
    }
    int rc = peek(f, err);
    if (rc < 0)
        return rc;
    if (rc == 0) {
        /* A PIP still waits for its MOV CR3: the walk goes on to it. */
        if (f->enabled && !f->lost && f->n_paging && !f->psb.pending && !f->n_evt) {
            rc = execute(f, err);
            return rc < 0 ? rc : 1;
        }
        if (f->enabled && !f->lost && !f->end_told) {
            f->end_told = true;
            push(f, NTL_IPT_FL_END, f->ip);
            return 1;
        }
        return 0;
    }
    const struct ntl_ipt_event *e = &f->ev;
    if (side_event(f) || power_event(f, err))
        return 1;
    if (e->pkt.type == NTL_IPT_CFE || e->pkt.type == NTL_IPT_EVD) {
        rc = event_trace(f, err);
        return rc < 0 ? rc : 1;
    }
    /* A TRIG waits while an event before it waits to be told: its ICNT
     * may count from that event, as libipt takes events in order. */
    if (e->pkt.type == NTL_IPT_TRIG && f->n_evt == 0) {
        rc = trigger(f, err);
        return rc < 0 ? rc : 1;
    }
    if (f->n_pw && e->pkt.type == NTL_IPT_FUP && !e->ip_status && !f->lost && pw_fup_waits(f) &&
        (!f->enabled || e->ip == f->ip)) {
        fup_events(f);
        return 1;
    }
    switch (e->pkt.type) {
    case NTL_IPT_PSB:
        rc = read_psb(f, err);
        if (rc < 0)
            return rc;
        if (!f->enabled || f->lost) {
            rc = apply_psb(f, f->lost, err);
            f->lost = false;
            return rc < 0 ? rc : 1;
        }
        return 1;
    case NTL_IPT_OVF:
        f->psb.pending = false;
        rc = overflow(f, err);
        return rc < 0 ? rc : 1;
    case NTL_IPT_MODE_EXEC: {
        consume(f);
        uint8_t mode = (uint8_t)ntl_ipt_exec_mode(e->pkt.flags);
        int iflag = e->pkt.flags & NTL_IPT_F_IF ? 1 : 0;
        if (mode != f->told_mode)
            f->pending_mode = f->told_mode = mode;
        if (f->cfg.iflags && iflag != f->told_if)
            f->pending_iflags = iflag;
        f->told_if = iflag;
        rc = mode_fup(f, err);
        return rc < 0 ? rc : 1;
    }
    case NTL_IPT_MODE_TSX:
        consume(f);
        f->pending_tsx = e->pkt.flags;
        return 1;
    default:
        break;
    }
    if (!f->enabled) {
        rc = while_disabled(f, err);
        return rc < 0 ? rc : 1;
    }
    if (f->lost) {
        rc = find_ip(f, err);
        return rc < 0 ? rc : 1;
    }
    if (f->psb.pending && (!f->psb.has_ip || f->psb.ip == f->ip)) {
        rc = apply_psb(f, false, err);
        return rc < 0 ? rc : 1;
    }
    if (hold_context(f))
        return 1;
    if (f->n_evt) {
        unsigned n = f->qn;
        tell_evt(f, NULL, false);
        if (f->qn != n)
            return 1;
    }
    bdm64(f);
    if (e->pkt.type == NTL_IPT_FUP && !e->ip_status && e->ip == f->ip) {
        rc = async_event(f, err);
        return rc < 0 ? rc : 1;
    }
    if (e->pkt.type == NTL_IPT_TIP_PGE)
        return fail(f, NTL_IPT_BAD_CONTEXT, f->ip, err);
    rc = f->cfg.runs && walkable(f) ? walk(f, err) : execute(f, err);
    /* While the packet ahead is a TNT or TIP, nothing binds before the
     * next instruction: decide a few at once. */
    while (rc >= 0 && f->qn < QUEUE - 2 && plain(f))
        rc = execute(f, err);
    return rc < 0 ? rc : 1;
}

/* With run_ips: the trail emptied with the queue (a resync, a recovery,
 * an error). */
static void trail_reset(struct ntl_ipt_flow *f)
{
    f->told = f->run_from = f->x_seg = f->x_end = flow_trail_end(&f->trail);
    f->x_left = f->x_rest = 0;
    flow_trail_drop(&f->trail, f->told);
}

/* With run_ips: the item it handed out from queue slot qh; a RUN is told
 * from its segments, the ones before them forgotten. */
static __attribute__((noinline)) void trail_tell(struct ntl_ipt_flow *f,
                                                 const struct ntl_ipt_flow_item *it)
{
    f->x_left = f->x_rest = 0;
    if (it->kind != NTL_IPT_FL_RUN) {
        f->x_seg = f->x_end;
        return;
    }
    f->x_seg = f->told;
    f->x_end = f->told = f->q_trail[f->qh];
    f->x_mode = it->mode;
    flow_trail_drop(&f->trail, f->x_seg);
}

/* The next part of the run being told into x_size, x_left and x_rest: the
 * rest of a segment, or the next one (its sizes looked up unless it
 * points in the current generation's). Returns 1, 0 when the run is all
 * told, or flow_sizes_get's statuses. */
static int next_part(struct ntl_ipt_flow *f)
{
    const struct flow_sizes *sz = &f->decisions.paths->sizes;
    uint32_t want = f->x_rest;
    if (!want) {
        if (f->x_seg == f->x_end)
            return 0;
        const struct flow_seg *seg = &f->trail.v[f->x_seg++ - f->trail.base];
        f->x_ip = seg->ip;
        if (seg->gen == sz->gen && seg->gen != 0) {
            f->x_size = sz->bytes + seg->off;
            f->x_left = seg->n;
            return 1;
        }
        want = seg->n;
    }
    uint32_t off, n;
    int rc = flow_dcache_sizes(&f->decisions, &f->blocks, &f->cache, f->cfg.read,
                               f->cfg.read_ctx, f->x_ip, f->x_mode, &off, &n);
    if (rc < 0)
        return rc;
    f->x_size = sz->bytes + off;
    f->x_left = n < want ? n : want;
    f->x_rest = want - f->x_left;
    return 1;
}

int ntl_ipt_flow_run_ips(struct ntl_ipt_flow *f, uint64_t *ips, unsigned max,
                         struct ntl_error *err)
{
    unsigned k = 0;
    max = max > INT_MAX ? INT_MAX : max;
    while (k < max && f->trail_on) {
        int rc = f->x_left ? 1 : next_part(f);
        if (rc == 0)
            break;
        if (rc < 0) {
            uint64_t ip = f->x_ip;
            f->x_seg = f->x_end;
            f->x_left = f->x_rest = 0;
            return ntl_error_set(err, rc, "flow", 0, "the run's code at 0x%llx: %s",
                                 (unsigned long long)ip, ntl_ipt_flow_strerror(rc));
        }
        uint32_t take = f->x_left < max - k ? f->x_left : max - k;
        const uint8_t *size = f->x_size;
        uint64_t ip = f->x_ip;
        for (uint32_t i = 0; i < take; i++) {
            ips[k + i] = ip;
            ip += size[i];
        }
        k += take;
        f->x_ip = ip;
        f->x_size = size + take;
        f->x_left -= take;
    }
    return (int)k;
}

/* A run's way could not be kept (trail.nomem): it cannot be told, and
 * what is queued is dropped. Returns NTL_ERR_NOMEM. */
static __attribute__((noinline)) int trail_lost(struct ntl_ipt_flow *f, struct ntl_error *err)
{
    f->trail.nomem = false;
    f->qn = f->qh = 0;
    f->run_open = false;
    f->pending_error = 0;
    trail_reset(f);
    f->err_off = ntl_ipt_flow_offset(f);
    f->err_ip = f->ip;
    f->n_told++;
    return ntl_error_set(err, NTL_ERR_NOMEM, "flow", 0, "out of memory");
}

/* The item at the queue's head handed out. */
static inline int hand_out(struct ntl_ipt_flow *f, struct ntl_ipt_flow_item *it)
{
    *it = f->q[f->qh];
    if (f->trail_on)
        trail_tell(f, it);
    f->qh = (f->qh + 1) % QUEUE;
    f->qn--;
    f->n_told++;
    return 1;
}

/* ntl_ipt_flow_next with an empty queue (or a lost trail): the decoder
 * goes on. Out of line: most items are handed out of the queue, without
 * the frame that advance inlined here needs (kAFL's pairs queue three
 * items each). */
static __attribute__((noinline)) int next_decoded(struct ntl_ipt_flow *f,
                                                  struct ntl_ipt_flow_item *it,
                                                  struct ntl_error *err)
{
    if (f->trail.nomem)
        return trail_lost(f, err);
    while (f->qn == 0) {
        if (f->pending_error) {
            int rc = f->pending_error;
            f->pending_error = 0;
            *err = f->saved_err;
            f->n_told++;
            return rc;
        }
        int rc = advance(f, err);
        if (rc <= 0)
            flush_run(f); /* what ran before the end or the error */
        if (rc == 0 && f->qn == 0)
            return 0;
        if (rc < 0) {
            if (f->qn == 0) {
                f->n_told++;
                return rc;
            }
            /* Hand out what was decided before the error, then the error. */
            f->pending_error = rc;
            f->saved_err = *err;
        }
    }
    return hand_out(f, it);
}

int ntl_ipt_flow_next(struct ntl_ipt_flow *f, struct ntl_ipt_flow_item *it, struct ntl_error *err)
{
    if (f->qn == 0 || f->trail.nomem)
        return next_decoded(f, it, err);
    return hand_out(f, it);
}

/* The state at a PSB: reset, then its PSB+ applied. */
static int start(struct ntl_ipt_flow *f, struct ntl_error *err)
{
    f->have_ev = f->at_end = f->end_told = false;
    f->packet_error = f->status_error = false;
    f->ev_tsc = f->last_tsc = 0;
    f->ev_timed = false;
    f->recovered_at = 0; /* a decoder synchronised again, or reused by --jobs */
    f->n_pw = 0;
    f->n_ptw = 0;
    f->n_evt = 0;
    f->evtrace.have = false;
    f->after_traced_branch = false;
    f->enabled = f->lost = f->can_resume = f->speculative = false;
    f->n_paging = 0;
    f->pending_mode = 0;
    f->pending_iflags = f->told_if = -1;
    f->has_anchor = false;
    f->note = -1;
    f->mode = f->told_mode = NTL_IPT_MODE_UNKNOWN;
    f->pending_tsx = -1;
    f->pending_error = 0;
    f->rs_n = f->rs_top = 0;
    f->qn = f->qh = 0;
    f->run_open = false;
    trail_reset(f);
    f->steps = 0;
    f->psb.pending = false;
    int rc = peek(f, err);
    if (rc < 0)
        return rc;
    if (rc == 0 || f->ev.pkt.type != NTL_IPT_PSB)
        return 0;
    rc = read_psb(f, err);
    if (rc < 0)
        return rc;
    return apply_psb(f, true, err);
}

int ntl_ipt_flow_sync_at(struct ntl_ipt_flow *f, uint64_t off, const uint64_t *rs, unsigned n,
                         struct ntl_error *err)
{
    uint64_t rel = off - f->cfg.trace.origin;
    if (off < f->cfg.trace.origin || rel > f->cfg.trace.size ||
        !ntl_ipt_is_psb(f->cfg.trace.buf, f->cfg.trace.size, (size_t)rel))
        return ntl_error_set(err, NTL_ERR_ARGUMENT, "trace", off, "no PSB at this offset");
    ntl_ipt_evd_init(&f->evd, &f->cfg.trace);
    ntl_ipt_evd_seek(&f->evd, (size_t)rel);
    int rc = start(f, err);
    for (unsigned i = 0; rc >= 0 && i < n && i < NTL_IPT_RETSTACK; i++)
        call_push(f, rs[i]);
    return rc;
}

int ntl_ipt_flow_sync(struct ntl_ipt_flow *f, struct ntl_error *err)
{
    int rc = ntl_ipt_evd_sync_first(&f->evd, err);
    return rc < 0 ? rc : start(f, err);
}

/* After an error, while recovering: an event held for the walk to reach
 * its IP tells where the code is, as libipt's resync takes its pending
 * event's IP. A PTW without IP is told now (it cannot be placed). Returns
 * true when the IP is known again. */
static bool held_ip(struct ntl_ipt_flow *f)
{
    for (unsigned i = 0; i < f->n_evt; i++) {
        const struct ntl_ipt_flow_item *it = &f->evt[i].it;
        if (f->evt[i].evt_class == EVC_NONE && !f->evt[i].insns && !f->evt[i].at_next &&
            !(it->flags & NTL_IPT_FL_IP_SUPPRESSED)) {
            f->ip = it->ip;
            return true;
        }
    }
    while (f->n_ptw && !f->ptw[0].has_ip) {
        struct ntl_ipt_flow_item *it = push(f, NTL_IPT_FL_PTWRITE, 0);
        it->a = f->ptw[0].payload;
        it->flags = NTL_IPT_FL_IP_SUPPRESSED;
        memmove(&f->ptw[0], &f->ptw[1], --f->n_ptw * sizeof f->ptw[0]);
    }
    if (f->n_ptw) {
        f->ip = f->ptw[0].ip;
        return true;
    }
    return false;
}

int ntl_ipt_flow_recover(struct ntl_ipt_flow *f, struct ntl_error *err)
{
    bool enabled;
    uint64_t at = ntl_ipt_flow_offset(f) + 1;
    /* A PSB+ that contradicts the packets before it stays an error, as
     * libipt's event decoder keeps it: the caller goes on at the next PSB. */
    if (f->status_error)
        return ntl_error_set(err, NTL_IPT_BAD_STATUS, "PSB+", f->err_off, "%s",
                             ntl_ipt_flow_strerror(NTL_IPT_BAD_STATUS));
    /* A second error with no packet read since the last recovery would
     * recover there for ever: the next PSB is the way on. */
    if (f->packet_error || f->recovered_at == at) {
        f->recovered_at = 0;
        return ntl_ipt_flow_resync(f, &enabled, err);
    }
    f->recovered_at = at;
    f->qn = f->qh = 0;
    f->run_open = false;
    trail_reset(f);
    f->pending_error = 0;
    f->steps = 0;
    f->lost = f->enabled && !held_ip(f);
    /* A PSB+ the walk had not reached: decoding starts over there, as
     * libipt resynchronises at the PSB it last passed. */
    if (f->lost && f->psb.pending) {
        f->psb.pending = false;
        return ntl_ipt_flow_sync_at(f, f->psb.at, NULL, 0, err);
    }
    /* Go on past the packet that did not fit, so recovering moves on. */
    if (f->have_ev && (!f->enabled || f->ev.pkt.type == NTL_IPT_TNT_8 ||
                       f->ev.pkt.type == NTL_IPT_TNT_64))
        consume(f);
    return 0;
}

int ntl_ipt_flow_resync(struct ntl_ipt_flow *f, bool *enabled, struct ntl_error *err)
{
    int rc = ntl_ipt_evd_resync(&f->evd, err);
    if (rc == 0)
        rc = start(f, err);
    *enabled = f->enabled;
    return rc;
}
