/* ntlens ipt flow: the instructions an Intel PT trace executed, printed as
 * libipt's ptxed prints them. This file loads the trace and the image and
 * runs the flow decoder; ipt-flow.h names the files that parse and print. */
#ifdef NTLENS_HAVE_IPT_FLOW
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "ipt-flow.h"
#include "out.h"
#include "ntlens/ipt_flow_split.h"
#include "ntlens/ipt_trace.h"

struct run {
    const char *cmd;
    const struct ipt_flow_opts *o;
    struct ntl_ipt_flow *flow;     /* one thread's decoder; NULL with --jobs */
    struct out *out;               /* records; NULL: ptxed's text */
    struct ipt_calls *calls;       /* --calls, --functions */
    bool ips;                      /* runs printed by address (run_ips) */
    struct ntl_error err;          /* why printing a run failed */
    uint64_t insns, blocks;
    bool in_block;                 /* the last item was an instruction that needs no trace */
    bool have_last;                /* an instruction since the last sync */
    bool resynced;                 /* an error was told: after the resync, no last */
    struct ntl_ipt_flow_item last; /* the last one */
};

/* ptxed's diagnostic for a decode error (rec: where it happened). ptxed
 * names the IP of the instruction it could not decode, else the IP after
 * the last instruction decoded since it synchronised (its target for a
 * direct branch), or that instruction's own for a missing TNT or TIP, or 0
 * before any. */
static void diagnose(const struct run *r, const char *what, const struct ntl_ipt_flow_rec *rec)
{
    uint64_t off = rec->offset, ip = rec->ip;
    int status = rec->status;
    if (status != NTL_IPT_NOMAP && status != NTL_IPT_BAD_INSN) {
        const struct ntl_ipt_flow_item *l = &r->last;
        bool direct = l->iclass == NTL_IPT_IC_JUMP || l->iclass == NTL_IPT_IC_CALL ||
                      l->iclass == NTL_IPT_IC_COND;
        ip = !r->have_last ? 0 : status == NTL_IPT_BAD_QUERY ? l->ip : direct ? l->a : l->ip + l->size;
    }
    if (r->out) {
        /* Off ptxed's lines, the IP is also named: with an image that lacks
         * the code that ran (no import optimization applied), the first
         * error is at the first place the code differs. */
        char name[512] = "";
        struct ntl_iptsrc_place p;
        if (ntl_iptsrc_syms_find(r->o->syms, ip, &p)) {
            name[0] = ' ';
            name[1] = '(';
            ntl_iptsrc_syms_name(r->o->syms, ip, name + 2, sizeof name - 3);
            strcat(name, ")");
        }
        cli_warn(r->cmd, "%s at trace offset 0x%" PRIx64 ", ip 0x%" PRIx64 "%s: %s", what, off, ip,
                 name, ntl_ipt_flow_strerror(status));
    }
    else
        printf("[%" PRIx64 ", %" PRIx64 ": %s: %s]\n", off, ip, what, ntl_ipt_flow_strerror(status));
}

/* Whether an instruction of class iclass goes on without trace. */
static bool untraced(uint8_t iclass)
{
    return iclass == NTL_IPT_IC_OTHER || iclass == NTL_IPT_IC_JUMP || iclass == NTL_IPT_IC_CALL ||
           iclass == NTL_IPT_IC_PTWRITE;
}

/* An item: counted, and shown or followed. Returns 0, or NTL_ERR_NOMEM. */
static int item(struct run *r, const struct ntl_ipt_flow_item *it, uint64_t off)
{
    if (it->kind == NTL_IPT_FL_RUN) {
        /* Instructions not shown: counted as one by one, the last kept
         * for diagnose. A block starts after each that took trace. */
        bool last_traced = !untraced(it->iclass);
        r->insns += it->b;
        r->blocks += !r->in_block + it->c - last_traced;
        r->in_block = !last_traced;
        r->have_last = true;
        r->last = *it;
        return r->ips ? ipt_flow_print_run(r->flow, it, &r->err) : 0;
    }
    /* Another address space: its code, decoded anew (--jobs runs only
     * where there is one). */
    if (it->kind == NTL_IPT_FL_PAGING && ntl_ipt_spaces_switch(r->o->spaces, it->a) && r->flow)
        ntl_ipt_flow_invalidate(r->flow);
    if (it->kind == NTL_IPT_FL_INSN) {
        bool blocks = r->o->decoder == IPT_FLOW_BLOCKS;
        r->insns++;
        r->blocks += !r->in_block;
        if (!r->in_block && blocks && r->o->show_blocks && !r->out && !r->calls && !r->o->quiet) {
            /* ptxed numbers them when it counts them. */
            if (r->o->stat)
                printf("[block %" PRIx64 "]\n", r->blocks);
            else
                printf("[block]\n");
        }
        r->in_block = untraced(it->iclass) &&
                      !(blocks && r->o->end_on_call && it->iclass == NTL_IPT_IC_CALL) &&
                      !(blocks && r->o->end_on_jump && it->iclass == NTL_IPT_IC_JUMP);
        r->have_last = true;
        r->last = *it;
    }
    if (r->calls) {
        if (ipt_calls_item(r->calls, it) < 0)
            return NTL_ERR_NOMEM;
    } else if (r->out)
        ipt_flow_records_row(r->out, it, r->o, off);
    else
        ipt_flow_print(it, r->o, off);
    r->in_block &= it->kind == NTL_IPT_FL_INSN;
    return 0;
}

/* A record of the decode, from one decoder or the split one's merge. */
static int take(void *ctx, const struct ntl_ipt_flow_rec *rec)
{
    struct run *r = ctx;
    /* ptxed forgets the last instruction once it has resynchronised. */
    if (r->resynced && rec->kind != NTL_IPT_REC_RESYNC_ERROR)
        r->have_last = false;
    r->resynced = false;
    switch (rec->kind) {
    case NTL_IPT_REC_ITEM:
        return item(r, &rec->it, rec->offset);
    case NTL_IPT_REC_ERROR:
        diagnose(r, "error", rec);
        if (r->calls)
            ipt_calls_lost(r->calls);
        r->resynced = !r->o->resync_on_error;
        return 0;
    default:
        if (rec->status != NTL_ERR_NOT_FOUND)
            diagnose(r, rec->kind == NTL_IPT_REC_SYNC_ERROR ? "sync error" : "resync error", rec);
        return 0;
    }
}

/* An error record for status where the decoder stands. */
static struct ntl_ipt_flow_rec error_rec(const struct run *r, uint8_t kind, int status)
{
    struct ntl_ipt_flow_rec rec = { .kind = kind, .status = status };
    ntl_ipt_flow_where(r->flow, &rec.offset, &rec.ip);
    return rec;
}

/* Every item to the end of the trace on one decoder; after an error, on
 * at the next PSB as ptxed goes on. Returns 0, or NTL_ERR_NOMEM. */
static int decode(struct run *r)
{
    struct ntl_ipt_flow_rec rec;
    struct ntl_error err;
    ntl_error_clear(&err);
    if (ntl_ipt_flow_sync(r->flow, &err) < 0)
        return take(r, (rec = error_rec(r, NTL_IPT_REC_SYNC_ERROR, err.status), &rec));
    for (;;) {
        rec.kind = NTL_IPT_REC_ITEM;
        rec.offset = ntl_ipt_flow_offset(r->flow);
        int rc = ntl_ipt_flow_next(r->flow, &rec.it, &err), trc;
        if (rc == 0)
            return 0;
        if (rc < 0)
            rec = error_rec(r, NTL_IPT_REC_ERROR, rc);
        if ((trc = take(r, &rec)) < 0)
            return trc;
        if (rc > 0)
            continue;
        bool enabled;
        if (r->o->resync_on_error ? ntl_ipt_flow_recover(r->flow, &err) >= 0
                                  : ntl_ipt_flow_resync(r->flow, &enabled, &err) >= 0)
            continue;
        if ((trc = take(r, (rec = error_rec(r, NTL_IPT_REC_RESYNC_ERROR, err.status), &rec))) < 0)
            return trc;
        /* ptxed then synchronises at the next PSB; there is none after
         * the search for one failed. */
        if (err.status == NTL_ERR_NOT_FOUND || ntl_ipt_flow_resync(r->flow, &enabled, &err) < 0)
            return 0;
    }
}

static int run(struct run *r, const struct ntl_ipt_trace *t)
{
    struct ntl_ipt_flow_config cfg;
    struct ntl_error err;
    memset(&cfg, 0, sizeof cfg);
    cfg.trace.buf = t->data;
    cfg.trace.size = t->size;
    cfg.trace.time = r->o->tc;
    cfg.filter = r->o->filter;
    cfg.iflags = r->o->event_iflags;
    cfg.ticks = r->o->ticks;
    cfg.times = r->o->ticks || r->o->event_tsc;
    if (cfg.times)
        cfg.trace.flags |= NTL_IPT_CFG_TIME;
    /* Each of ptxed's decoders has its own option. */
    if (r->o->decoder == IPT_FLOW_BLOCKS ? r->o->keep_tcal_blocks : r->o->keep_tcal_insn)
        cfg.trace.flags |= NTL_IPT_CFG_KEEP_TCAL_ON_OVF;
    cfg.read = ntl_ipt_spaces_read;
    cfg.read_ctx = r->o->spaces;
    if (ntl_ipt_cpu_errata(&r->o->cpu, &cfg.trace.time.errata) < 0 && !r->out)
        printf("[0, 0: config error: unknown cpu]\n");
    ntl_error_clear(&err);
    bool calls = r->o->calls || r->o->functions;
    /* ptxed's --no-inst lines show an instruction's address only: runs
     * told by address (not with --offset, which gives each its own trace
     * offset, nor --block:show-blocks, nor where runs are not taken; nor
     * with --cr3 address spaces: a run is told after the decoder went on,
     * and a PAGING item before it may have switched the image its code is
     * read again from). */
    r->ips = !r->o->quiet && r->o->no_inst && r->o->fmt == IPT_FORMAT_PTXED && !calls &&
             !r->o->offset && !r->o->show_blocks && ntl_ipt_spaces_count(r->o->spaces) == 0;
    /* No instruction shown (--calls and --functions follow each one): runs
     * of them, the fast path. Runs count the blocks that end at a traced
     * branch only, and pass over the branches ticks follow. */
    bool runs = ((r->o->quiet && !calls) || r->ips) && !r->o->end_on_call && !r->o->end_on_jump &&
                !cfg.ticks;
    r->ips &= runs;
    /* --jobs: the decoders read the image at once, which holds while no
     * PAGING item switches its address space. */
    bool split = r->o->jobs > 1 && ntl_ipt_spaces_count(r->o->spaces) == 0;
    /* Nor with time on events: a part synchronised at its PSB would begin
     * without the CYC calibration and the last event's time the decoder
     * before it had. Nor where runs are told by address: one decoder does
     * it several times faster than the split's record per instruction
     * (kafl-mruby: 39 ms of CPU against 470 ms on two threads). */
    split &= !cfg.times && !r->ips;
    cfg.runs = runs;
    cfg.run_ips = r->ips;
    if (!split && ntl_ipt_flow_new(&r->flow, &cfg, &err) < 0)
        return cli_fail(r->cmd, &err, NULL);
    if (r->o->fmt != IPT_FORMAT_PTXED || calls) {
        int fmt = r->o->fmt == IPT_FORMAT_PTXED ? OUT_TABLE : r->o->fmt;
        if (!(r->out = out_new(stdout, (enum out_format)fmt)) ||
            (calls && !(r->calls = ipt_calls_new(r->o, r->out)))) {
            out_close(r->out);
            ntl_ipt_flow_free(r->flow);
            return cli_failf(r->cmd, "out of memory");
        }
        if (!calls)
            ipt_flow_records_columns(r->out);
    }
    struct ntl_ipt_split_config sc = { .jobs = r->o->jobs, .recover = r->o->resync_on_error };
    int drc = split ? ntl_ipt_flow_split(&cfg, &sc, take, r, &err) : decode(r);
    if (drc == 0 && r->calls)
        drc = ipt_calls_finish(r->calls);
    ipt_calls_free(r->calls);
    if (drc < 0) {
        out_close(r->out);
        ntl_ipt_flow_free(r->flow);
        if (r->err.status)
            err = r->err;
        return err.status ? cli_fail(r->cmd, &err, NULL) : cli_failf(r->cmd, "out of memory");
    }
    if (r->o->stat_insn && !r->out)
        printf("insn: %" PRIu64 ".\n", r->insns);
    if (r->o->stat_blocks && !r->out)
        printf("blocks:\t%" PRIu64 ".\n", r->blocks);
    ntl_ipt_flow_free(r->flow);
    if ((r->out && out_close(r->out) < 0) || fflush(stdout) != 0)
        return cli_failf(r->cmd, "write error");
    return EXIT_OK;
}

int cmd_ipt_flow(int argc, char **argv)
{
    static char obuf[1 << 16];
    struct ipt_flow_opts o;
    struct ntl_ipt_trace trace;
    int rc;

    if ((rc = ipt_flow_parse_args(argc, argv, &o)) != CLI_CONTINUE)
        return rc;
    memset(&trace, 0, sizeof trace);
    /* The loaders print what failed. */
    if ((rc = ipt_flow_load_trace(&o, argv[0], &trace)) == 0 &&
        (rc = ipt_flow_load_images(&o, argv[0])) == 0) {
        struct run r = { .cmd = argv[0], .o = &o };
        setvbuf(stdout, obuf, _IOFBF, sizeof obuf);
        rc = run(&r, &trace);
    }
    ntl_ipt_spaces_free(o.spaces);
    ntl_iptsrc_syms_free(o.syms);
    ntl_ipt_trace_free(&trace);
    return rc;
}
#endif
