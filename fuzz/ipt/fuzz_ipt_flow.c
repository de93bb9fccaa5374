/* libFuzzer: the flow decoder, trace and code both fuzzed, laid out as
 * flow_input.h says (code, then trace). Every item must be well-formed, every error must leave a way on (resync
 * and recover), and a bounded input must end in a bounded number of items.
 * The input is decoded four times, instruction by instruction, in runs (the
 * block and decision caches' path), in runs told by address (run_ips, the
 * path of ipt flow --no-inst) and instruction by instruction with time
 * tracked and ticks told (ptxed --event:time --event:tick): all must tell
 * the same events but ticks, errors and number of instructions, and runs
 * told by address the instructions' addresses one by one. */
#include <stdlib.h>
#include <string.h>

#include "ntlens/ipt_flow.h"
#include "flow_input.h"

/* What one decode told: events and errors folded into a hash. */
struct told {
    uint64_t insns, errors, hash;
    uint64_t ips; /* the instructions' addresses folded (but in runs) */
};

static void fold(struct told *t, uint64_t v)
{
    t->hash = (t->hash ^ v) * 0x100000001b3ull;
}

/* The RUN item it's addresses (run_ips) into t->ips: as many as it has,
 * the last its own. */
static void tell_run(struct ntl_ipt_flow *f, const struct ntl_ipt_flow_item *it, struct told *t)
{
    uint64_t ips[5], n = 0, last = 0;
    struct ntl_error err;
    int k;
    while ((k = ntl_ipt_flow_run_ips(f, ips, 5, &err)) > 0)
        for (int i = 0; i < k; i++, n++) {
            t->ips = (t->ips ^ ips[i]) * 0x100000001b3ull;
            last = ips[i];
        }
    if (k < 0 || n != it->b || last != it->ip)
        abort();
}

static void decode(const struct ntl_ipt_flow_config *cfg, size_t size, struct told *t)
{
    struct ntl_ipt_flow *f;
    struct ntl_error err;
    memset(t, 0, sizeof *t);
    if (ntl_ipt_flow_new(&f, cfg, &err) < 0)
        abort();
    struct ntl_ipt_flow_item it;
    bool enabled;
    uint64_t items = 0;
    if (ntl_ipt_flow_sync(f, &err) == 0) {
        for (;;) {
            int rc = ntl_ipt_flow_next(f, &it, &err);
            if (rc > 0) {
                if (it.kind < NTL_IPT_FL_INSN || it.kind > NTL_IPT_FL_LAST)
                    abort();
                if (it.kind == (cfg->runs ? NTL_IPT_FL_INSN : NTL_IPT_FL_RUN))
                    abort();
                if (it.kind == NTL_IPT_FL_INSN && (it.size == 0 || it.size > 15))
                    abort();
                if (it.kind == NTL_IPT_FL_RUN && (it.b == 0 || it.c > it.b))
                    abort();
                uint64_t n = it.kind == NTL_IPT_FL_RUN ? it.b : it.kind == NTL_IPT_FL_INSN;
                t->insns += n;
                if (it.kind == NTL_IPT_FL_INSN)
                    t->ips = (t->ips ^ it.ip) * 0x100000001b3ull;
                if (it.kind == NTL_IPT_FL_RUN && cfg->run_ips)
                    tell_run(f, &it, t);
                if (it.kind == NTL_IPT_FL_TICK && !cfg->ticks)
                    abort();
                if (!n && it.kind != NTL_IPT_FL_TICK) {
                    fold(t, it.kind);
                    fold(t, it.ip);
                    fold(t, it.a);
                }
                /* Each instruction consumes trace or moves on: at most
                 * NTL_IPT_FLOW_MAX_STEPS between packets. */
                if ((items += n ? n : 1) > (uint64_t)(size + 1) * (NTL_IPT_FLOW_MAX_STEPS + 8))
                    abort();
                continue;
            }
            if (rc == 0)
                break;
            if (err.status != rc || !ntl_ipt_flow_strerror(rc)[0])
                abort();
            fold(t, (uint64_t)rc);
            fold(t, t->insns);
            if (++t->errors > size + 1)
                abort();
            /* Both ways on: recovering in place, and the next PSB. */
            if ((t->errors & 1 ? ntl_ipt_flow_recover(f, &err)
                               : ntl_ipt_flow_resync(f, &enabled, &err)) < 0)
                break;
        }
    }
    ntl_ipt_flow_free(f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct ntl_ipt_flow_config cfg;
    struct ntl_ipt_image *img = flow_input(data, size, &cfg);
    if (!img)
        return 0;
    struct told one, runs;
    decode(&cfg, size, &one);
    cfg.runs = true;
    decode(&cfg, size, &runs);
    if (one.insns != runs.insns || one.errors != runs.errors || one.hash != runs.hash)
        abort();
    cfg.run_ips = true;
    decode(&cfg, size, &runs);
    if (one.insns != runs.insns || one.errors != runs.errors || one.hash != runs.hash ||
        one.ips != runs.ips)
        abort();
    struct told timed;
    cfg.runs = cfg.run_ips = false;
    cfg.times = cfg.ticks = true;
    cfg.trace.flags |= NTL_IPT_CFG_TIME;
    decode(&cfg, size, &timed);
    if (one.insns != timed.insns || one.errors != timed.errors || one.hash != timed.hash)
        abort();
    ntl_ipt_image_free(img);
    return 0;
}
