/* The flow decoder on several threads (ntlens/ipt_flow_split.h): parts of
 * the trace between PSBs decoded by workers into record buffers, and
 * merged in order on the caller's thread, seam by seam. */
#include <stdlib.h>
#include <string.h>

#include "ntlens/ipt_flow_split.h"
#include "ntlens/ipt_packet.h"
#include "ntlens/ipt_sync.h"
#include "ntlens/thread.h"

/* A part: its records and where it met the next part it hands over to. */
struct part {
    uint64_t start;                /* trace offset of its PSB */
    struct ntl_ipt_flow_rec *recs; /* what its decoder returned */
    size_t n, cap;
    bool taken, done, nomem;
    bool head_ok;                  /* it synchronised at start: head is its state */
    struct ntl_ipt_flow_seam head;
    /* Where it stopped: before the seam at part next's PSB (records
     * [0, end) are before it), or next == nparts at the end of the trace. */
    size_t end;
    unsigned next;
    struct ntl_ipt_flow_seam tail;
    /* The trace offset one decoder gives the first item past the seam: it
     * is read before the call that returns it, which may have begun before
     * the PSB (a decoder synchronised there begins past it). */
    uint64_t after;
};

#define SPARES 16

struct split {
    const struct ntl_ipt_flow_config *cfg;
    const struct ntl_ipt_split_config *sc;
    struct part *parts;
    unsigned nparts;
    unsigned merging; /* the part the caller waits for; workers stay a window ahead */
    unsigned window;
    bool stop;
    struct ntl_lock *lock;
    /* Buffers of parts handed out, for later parts: memory already
     * faulted in, no growing. */
    struct {
        struct ntl_ipt_flow_rec *recs;
        size_t cap;
    } spare[SPARES];
    unsigned nspare;
    double busiest; /* CPU seconds of the busiest worker */
};

/* Where records go: a part's buffer, or the caller's function once skip
 * records (already handed out) have gone by. */
struct sink {
    struct part *part;
    ntl_ipt_rec_fn fn;
    void *ctx;
    uint64_t skip;
    uint64_t n; /* records so far, skipped ones included */
    /* To fn, each record goes one late: the last one may be past the seam
     * the decode stops at (sink_end). */
    bool held;
    struct ntl_ipt_flow_rec hold;
    bool fix; /* the first record, an item, takes the offset after */
    uint64_t after;
};

/* Returns 0, NTL_ERR_NOMEM, or fn's status. */
static int put(struct sink *s, const struct ntl_ipt_flow_rec *r)
{
    s->n++;
    if (!s->part) {
        if (s->n <= s->skip)
            return 0;
        int rc = s->held ? s->fn(s->ctx, &s->hold) : 0;
        s->hold = *r;
        if (s->n == 1 && s->fix && r->kind == NTL_IPT_REC_ITEM)
            s->hold.offset = s->after;
        s->held = true;
        return rc;
    }
    struct part *p = s->part;
    if (p->n == p->cap) {
        size_t cap = p->cap ? p->cap * 2 : 4096;
        struct ntl_ipt_flow_rec *v = realloc(p->recs, cap * sizeof *v);
        if (!v)
            return NTL_ERR_NOMEM;
        p->recs = v;
        p->cap = cap;
    }
    p->recs[p->n++] = *r;
    return 0;
}

/* The part that starts at PSB offset psb, or nparts. */
static unsigned part_at(const struct split *sp, uint64_t psb)
{
    unsigned lo = 0, hi = sp->nparts;
    while (lo < hi) {
        unsigned mid = lo + (hi - lo) / 2;
        if (sp->parts[mid].start < psb)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < sp->nparts && sp->parts[lo].start == psb ? lo : sp->nparts;
}

/* A seam the decode may stop at: at a part's start from min on, after a
 * PSB+ whose items are all on its far side. */
static bool stops_at(const struct split *sp, const struct ntl_ipt_flow_seam *m, unsigned min,
                     unsigned *part)
{
    *part = part_at(sp, m->psb);
    return m->clean && *part < sp->nparts && *part >= min;
}

/* After an error record: on at the next PSB or packet, as one decoder
 * would. Returns 1 to go on, 0 when the trace ends here, or put's status. */
static int go_on(const struct split *sp, struct ntl_ipt_flow *f, struct sink *s)
{
    struct ntl_error err;
    bool enabled;
    ntl_error_clear(&err);
    if (sp->sc->recover ? ntl_ipt_flow_recover(f, &err) >= 0
                        : ntl_ipt_flow_resync(f, &enabled, &err) >= 0)
        return 1;
    struct ntl_ipt_flow_rec r = { .kind = NTL_IPT_REC_RESYNC_ERROR, .status = err.status };
    ntl_ipt_flow_where(f, &r.offset, &r.ip);
    int rc = put(s, &r);
    if (rc < 0)
        return rc;
    /* As one decoder: on at the next PSB, unless the search for one
     * failed. */
    return err.status != NTL_ERR_NOT_FOUND && ntl_ipt_flow_resync(f, &enabled, &err) >= 0;
}

/* Decodes on from where f stands into s, to the first seam stops_at allows
 * from part min on (e->end: the records before it) or to the end of the
 * trace (e->next = nparts). pulled counts the items and errors f returned. Returns 0,
 * or put's status. */
static int decode(struct split *sp, struct ntl_ipt_flow *f, uint64_t *pulled, unsigned min,
                  struct sink *s, struct part *e)
{
    struct ntl_ipt_flow_seam m;
    unsigned seq = ntl_ipt_flow_seams(f);
    e->next = sp->nparts;
    for (;;) {
        struct ntl_ipt_flow_rec r = { .kind = NTL_IPT_REC_ITEM };
        struct ntl_error err;
        r.offset = ntl_ipt_flow_offset(f);
        int rc = ntl_ipt_flow_next(f, &r.it, &err), prc;
        if (rc == 0)
            break;
        ++*pulled;
        if (rc < 0) {
            r.kind = NTL_IPT_REC_ERROR;
            r.status = rc;
            ntl_ipt_flow_where(f, &r.offset, &r.ip);
        }
        if ((prc = put(s, &r)) < 0 || (rc < 0 && (prc = go_on(sp, f, s)) < 0))
            return prc;
        if (rc < 0 && prc == 0)
            break;
        unsigned now = ntl_ipt_flow_seams(f), part;
        if (now != seq && ntl_ipt_flow_seam(f, &m) && stops_at(sp, &m, min, &part)) {
            /* The seam is before the items f returned after it (one at most). */
            e->end = s->n - (size_t)(*pulled - m.items);
            e->next = part;
            e->tail = m;
            e->after = e->end == s->n ? ntl_ipt_flow_offset(f) : s->part ? s->part->recs[e->end].offset
                                                                            : s->hold.offset;
            return 0;
        }
        seq = now;
        if (__atomic_load_n(&sp->stop, __ATOMIC_RELAXED))
            return 0;
    }
    e->end = s->n;
    return 0;
}

/* Synchronises f at part i (the first PSB for the first part, as one
 * decoder does) with the return stack rs. Returns ntl_ipt_flow_sync's. */
static int sync_part(const struct split *sp, struct ntl_ipt_flow *f, unsigned i,
                     const struct ntl_ipt_flow_seam *rs, struct ntl_error *err)
{
    if (i == 0)
        return ntl_ipt_flow_sync(f, err);
    return ntl_ipt_flow_sync_at(f, sp->parts[i].start, rs ? rs->rs : NULL, rs ? rs->rs_n : 0,
                                err);
}

/* A worker's part i, on its decoder f (whose caches stay warm from part to
 * part). */
static void work_part(struct split *sp, struct ntl_ipt_flow *f, uint64_t *pulled, unsigned i)
{
    struct part *p = &sp->parts[i];
    struct sink s = { .part = p };
    struct ntl_error err;
    ntl_error_clear(&err);
    p->next = sp->nparts;
    if (sync_part(sp, f, i, NULL, &err) < 0) {
        /* One decoder stops where it cannot synchronise first. */
        struct ntl_ipt_flow_rec r = { .kind = NTL_IPT_REC_SYNC_ERROR, .status = err.status };
        ntl_ipt_flow_where(f, &r.offset, &r.ip);
        p->nomem = i == 0 && put(&s, &r) < 0;
        p->end = p->n;
        return;
    }
    p->head_ok = ntl_ipt_flow_seam(f, &p->head) && p->head.psb == p->start;
    p->nomem = decode(sp, f, pulled, i + 1, &s, p) < 0;
}

static void worker(void *arg)
{
    struct split *sp = arg;
    struct ntl_ipt_flow *f = NULL;
    struct ntl_error err;
    uint64_t pulled = 0;
    double cpu0 = ntl_thread_cpu();
    bool ok = ntl_ipt_flow_new(&f, sp->cfg, &err) >= 0;
    ntl_lock_take(sp->lock);
    for (;;) {
        unsigned i = 0;
        while (i < sp->nparts && sp->parts[i].taken)
            i++;
        if (i == sp->nparts || sp->stop)
            break;
        if (i >= sp->merging + sp->window) {
            ntl_lock_wait(sp->lock);
            continue;
        }
        sp->parts[i].taken = true;
        if (sp->nspare) {
            sp->nspare--;
            sp->parts[i].recs = sp->spare[sp->nspare].recs;
            sp->parts[i].cap = sp->spare[sp->nspare].cap;
        }
        ntl_lock_drop(sp->lock);
        if (ok)
            work_part(sp, f, &pulled, i);
        else
            sp->parts[i].nomem = true;
        ntl_lock_take(sp->lock);
        sp->parts[i].done = true;
        ntl_lock_wake(sp->lock);
    }
    ntl_ipt_flow_free(f);
    double cpu = ntl_thread_cpu() - cpu0;
    sp->busiest = cpu > sp->busiest ? cpu : sp->busiest;
    ntl_lock_drop(sp->lock);
}

/* The held record to fn when it is before end. */
static int sink_end(struct sink *s, size_t end)
{
    bool before = s->held && s->n - 1 < end;
    s->held = false;
    return before ? s->fn(s->ctx, &s->hold) : 0;
}

/* The caller's side: the records handed out so far stop at at (its end,
 * next and tail). Those from the anchor part's start on are exactly one
 * decoder's with base's return stack (none: the first part) and out of
 * them have been handed out; exact says whether at.tail's return stack is
 * one decoder's too (else it lacks what was below the anchor's). */
struct merge {
    struct split *sp;
    ntl_ipt_rec_fn fn;
    void *ctx;
    struct part at;
    bool exact;
    unsigned anchor;
    bool has_base;
    struct ntl_ipt_flow_seam base;
    bool anchor_fix; /* the anchor's first item takes the offset anchor_after */
    uint64_t anchor_after;
    uint64_t out;
    struct ntl_ipt_flow *serial; /* decodes on the caller's thread */
    uint64_t pulled;
    struct ntl_error *err;
    struct ntl_ipt_split_stats stats;
};

/* Decodes from part s's start, seeded with base's return stack, on the
 * caller's thread: records past the first skip to fn, up to a seam from
 * part min on. Returns 0, NTL_ERR_NOMEM, or fn's status. */
static int serial(struct merge *m, unsigned s, const struct ntl_ipt_flow_seam *base, uint64_t skip,
                  unsigned min)
{
    struct split *sp = m->sp;
    struct sink k = { .fn = m->fn, .ctx = m->ctx, .skip = skip, .fix = m->anchor_fix,
                      .after = m->anchor_after };
    struct ntl_error err;
    int rc;
    ntl_error_clear(&err);
    if (!m->serial && (rc = ntl_ipt_flow_new(&m->serial, sp->cfg, m->err)) < 0)
        return rc;
    m->at.next = sp->nparts;
    if (sync_part(sp, m->serial, s, base, &err) < 0) {
        /* Only the first can fail: the others synchronised before. */
        struct ntl_ipt_flow_rec r = { .kind = NTL_IPT_REC_SYNC_ERROR, .status = err.status };
        ntl_ipt_flow_where(m->serial, &r.offset, &r.ip);
        return s == 0 ? m->fn(m->ctx, &r) : ntl_error_set(m->err, err.status, "flow", r.offset,
                                                          "%s", err.message);
    }
    if ((rc = decode(sp, m->serial, &m->pulled, min, &k, &m->at)) < 0 ||
        (rc = sink_end(&k, m->at.end)) < 0)
        return rc;
    m->out = m->at.end;
    m->exact = true;
    return 0;
}

/* Waits for part j, freeing the records of those merged before it. */
static struct part *wait_part(struct split *sp, unsigned j)
{
    ntl_lock_take(sp->lock);
    for (unsigned i = sp->merging; i < j; i++)
        if (sp->parts[i].done) {
            struct part *p = &sp->parts[i];
            if (sp->nspare < SPARES && p->recs) {
                sp->spare[sp->nspare].recs = p->recs;
                sp->spare[sp->nspare++].cap = p->cap;
            } else
                free(p->recs);
            p->recs = NULL;
        }
    sp->merging = j;
    ntl_lock_wake(sp->lock);
    while (!sp->parts[j].done)
        ntl_lock_wait(sp->lock);
    ntl_lock_drop(sp->lock);
    return &sp->parts[j];
}

static int hand_out(struct merge *m, const struct part *q, bool fix, uint64_t after)
{
    for (size_t i = 0; i < q->end; i++) {
        struct ntl_ipt_flow_rec r = q->recs[i];
        if (i == 0 && fix && r.kind == NTL_IPT_REC_ITEM)
            r.offset = after;
        int rc = m->fn(m->ctx, &r);
        if (rc < 0)
            return rc;
    }
    m->out += q->end;
    m->at = *q;
    return 0;
}

/* Whether q's records met a compressed return with its stack empty. */
static bool ret_empty(const struct part *q)
{
    for (size_t i = 0; i < q->end; i++)
        if (q->recs[i].kind == NTL_IPT_REC_ERROR && q->recs[i].status == NTL_IPT_RETSTACK_EMPTY)
            return true;
    return false;
}

/* At the seam m->at.tail, part j takes over, or the caller decodes on. */
static int seam(struct merge *m, unsigned j)
{
    const struct ntl_ipt_flow_seam t = m->at.tail;
    struct part *q = wait_part(m->sp, j);
    if (q->nomem)
        return ntl_error_set(m->err, NTL_ERR_NOMEM, "flow", q->start, "out of memory");
    bool same = q->head_ok && q->head.clean &&
                memcmp(t.state, q->head.state, sizeof t.state) == 0;
    bool empty = m->exact && t.rs_n == 0;
    if (same && (empty || !ret_empty(q))) {
        /* Part j's stack starts as one decoder's, or never needed more. */
        uint64_t after = m->at.after;
        if (empty) {
            m->anchor = j;
            m->has_base = true;
            m->base = t;
            m->anchor_fix = true;
            m->anchor_after = after;
            m->out = 0;
        }
        m->exact = empty;
        m->stats.taken++;
        return hand_out(m, q, true, after);
    }
    m->stats.redecoded++;
    if (same && m->exact) {
        /* Only the return stack stood in the way: part j again, with it. */
        m->anchor = j;
        m->has_base = true;
        m->base = t;
        m->anchor_fix = true;
        m->anchor_after = m->at.after;
        return serial(m, j, &t, 0, j + 1);
    }
    /* From the last sure start, past what was handed out. */
    return serial(m, m->anchor, m->has_base ? &m->base : NULL, m->out, j + 1);
}

static int merge(struct merge *m)
{
    struct part *p = wait_part(m->sp, 0);
    if (p->nomem)
        return ntl_error_set(m->err, NTL_ERR_NOMEM, "flow", p->start, "out of memory");
    m->exact = true;
    int rc = hand_out(m, p, false, 0);
    while (rc >= 0 && m->at.next < m->sp->nparts)
        rc = seam(m, m->at.next);
    return rc;
}

/* Whether the PSB+ at off holds a FUP: tracing is enabled there, and a
 * decoder synchronised there knows the IP and the mode. Where it is
 * disabled, one that went through it keeps the mode it last saw, and what
 * it tells when tracing comes back differs. */
static bool psb_enabled(const uint8_t *buf, size_t size, size_t off)
{
    struct ntl_ipt_decoder d;
    struct ntl_ipt_packet p;
    struct ntl_error err;
    ntl_ipt_decoder_init(&d, buf, size, 0);
    if (ntl_ipt_seek(&d, off) < 0 || ntl_ipt_next(&d, &p, &err) <= 0)
        return false;
    for (int i = 0; i < 64 && ntl_ipt_next(&d, &p, &err) > 0; i++) {
        if (p.type == NTL_IPT_FUP)
            return true;
        if (p.type == NTL_IPT_PSBEND || p.type == NTL_IPT_PSB || p.type == NTL_IPT_OVF)
            return false;
    }
    return false;
}

unsigned ntl_ipt_flow_split_starts(const uint8_t *buf, size_t size, unsigned parts,
                                   uint64_t *starts, unsigned max)
{
    unsigned n = 0;
    size_t off;
    /* The first part starts where one decoder does. */
    if (max == 0 || ntl_ipt_sync_forward(buf, size, 0, &off) < 0)
        return 0;
    starts[n++] = off;
    for (unsigned i = 1; i < parts && n < max; i++) {
        size_t from = (size_t)((double)size * i / parts);
        if (from <= starts[n - 1])
            from = (size_t)starts[n - 1] + 1;
        while (ntl_ipt_sync_forward(buf, size, from, &off) == 0 && !psb_enabled(buf, size, off))
            from = off + 1;
        if (ntl_ipt_sync_forward(buf, size, from, &off) < 0)
            break;
        starts[n++] = off;
    }
    return n;
}

/* The parts, the lock and the threads; then the merge. */
static int run_split(struct split *sp, struct merge *m)
{
    unsigned jobs = sp->sc->jobs;
    int rc;
    sp->window = 2 * jobs;
    if (!(sp->lock = ntl_lock_new()))
        return ntl_error_set(m->err, NTL_ERR_NOMEM, "flow", 0, "out of memory");
    struct ntl_threads *t;
    if (ntl_threads_start(&t, jobs, worker, sp) < 0) {
        ntl_lock_free(sp->lock);
        return ntl_error_set(m->err, NTL_ERR_LIMIT, "flow", 0, "no thread could start");
    }
    rc = merge(m);
    ntl_lock_take(sp->lock);
    __atomic_store_n(&sp->stop, true, __ATOMIC_RELAXED);
    ntl_lock_wake(sp->lock);
    ntl_lock_drop(sp->lock);
    ntl_threads_join(t);
    ntl_lock_free(sp->lock);
    return rc;
}

#define MAX_PARTS 4096

int ntl_ipt_flow_split(const struct ntl_ipt_flow_config *cfg, const struct ntl_ipt_split_config *sc,
                       ntl_ipt_rec_fn fn, void *ctx, struct ntl_error *err)
{
    struct split sp = { .cfg = cfg, .sc = sc };
    struct merge m = { .sp = &sp, .fn = fn, .ctx = ctx, .err = err };
    double cpu0 = ntl_thread_cpu();
    unsigned per = sc->parts_per_job ? sc->parts_per_job : 2;
    unsigned want = sc->jobs > 1 ? sc->jobs * per : 1;
    /* Parts of at most 256 KB of trace (32 KB with an item per
     * instruction): a part's records wait in memory until the parts before
     * it are handed out. */
    size_t most = cfg->runs ? 256 << 10 : 32 << 10;
    if (sc->jobs > 1 && cfg->trace.size / most > want)
        want = (unsigned)(cfg->trace.size / most < MAX_PARTS ? cfg->trace.size / most : MAX_PARTS);
    uint64_t starts[MAX_PARTS];
    int rc;
    if (want > MAX_PARTS)
        want = MAX_PARTS;
    sp.nparts = ntl_ipt_flow_split_starts(cfg->trace.buf, cfg->trace.size, want, starts, want);
    if (sp.nparts < 2) {
        /* Nothing to split: one decoder, here. */
        sp.nparts = 0;
        rc = serial(&m, 0, NULL, 0, 0);
    } else if (!(sp.parts = calloc(sp.nparts, sizeof *sp.parts))) {
        rc = ntl_error_set(err, NTL_ERR_NOMEM, "flow", 0, "out of memory");
    } else {
        for (unsigned i = 0; i < sp.nparts; i++)
            sp.parts[i].start = cfg->trace.origin + starts[i];
        rc = run_split(&sp, &m);
        for (unsigned i = 0; i < sp.nparts; i++)
            free(sp.parts[i].recs);
        for (unsigned i = 0; i < sp.nspare; i++)
            free(sp.spare[i].recs);
        free(sp.parts);
    }
    ntl_ipt_flow_free(m.serial);
    m.stats.parts = sp.nparts;
    m.stats.busiest = sp.busiest;
    m.stats.caller = ntl_thread_cpu() - cpu0;
    if (sc->stats)
        *sc->stats = m.stats;
    return rc < 0 ? rc : 0;
}
