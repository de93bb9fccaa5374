/* Unit tests for the flow decoder's two paths (ntlens/ipt_flow.h): a loop
 * decoded instruction by instruction and in runs (cached blocks and TNT
 * decisions) gives the same instructions and events, runs told by address
 * (run_ips) the same addresses as the instructions one by one, and
 * ntl_ipt_flow_invalidate makes the caches see changed code. */
#include <string.h>

#include "check.h"

#include "ntlens/ipt_flow.h"

/* 0x1000: dec ecx; jnz 0x1000; jmp rax */
static uint8_t code[] = {0xff, 0xc9, 0x75, 0xfc, 0xff, 0xe0};

/* 0x2000: jz 0x2008; call 0x2000; ret
 * 0x2008: call 0x2010; ret; nop; nop
 * 0x2010: ret
 * A recursion while the bits are not taken, then a call and returns. */
static const uint8_t rec[] = {0x74, 0x06, 0xe8, 0xf9, 0xff, 0xff, 0xff, 0xc3,
                              0xe8, 0x03, 0x00, 0x00, 0x00, 0xc3, 0x90, 0x90, 0xc3};

/* 0x3000: 6 x nop; dec ecx; jnz 0x3000; jmp rax: a block of 8, longer
 * than run_ips is asked for at a time. */
static const uint8_t nops[] = {0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0xff, 0xc9,
                               0x75, 0xf6, 0xff, 0xe0};

static int read_at(const uint8_t *at, size_t len, uint64_t base, uint8_t *buf, size_t size,
                   uint64_t addr)
{
    if (addr < base || addr >= base + len)
        return NTL_ERR_NOT_FOUND;
    size_t n = base + len - addr;
    n = n < size ? n : size;
    memcpy(buf, at + (addr - base), n);
    return (int)n;
}

/* 0x4000: call rax; jmp rax */
static const uint8_t calls[] = {0xff, 0xd0, 0xff, 0xe0};

/* The code is at these addresses too (the upper half, which TIPs reach
 * sign-extended from 48 bits). */
#define KERNEL 0xffff800000000000ull

static int read_code(uint8_t *buf, size_t size, uint64_t addr, void *ctx)
{
    (void)ctx;
    if (addr >= KERNEL)
        addr -= KERNEL;
    int n = read_at(code, sizeof code, 0x1000, buf, size, addr);
    if (n < 0)
        n = read_at(nops, sizeof nops, 0x3000, buf, size, addr);
    if (n < 0)
        n = read_at(calls, sizeof calls, 0x4000, buf, size, addr);
    return n >= 0 ? n : read_at(rec, sizeof rec, 0x2000, buf, size, addr);
}

/* PSB, PSBEND, MODE.Exec 64-bit, TIP.PGE 0x1000, TNT taken x3 then not
 * taken, TIP.PGD without IP (it binds to the jmp rax). */
static const uint8_t trace[] = {
    0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
    0x02, 0x82, 0x02, 0x82, 0x02, 0x23, 0x99, 0x01, 0xd1, 0x00, 0x10, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x3c, 0x01};

/* Instructions decoded and the events, as kinds in order. */
static uint64_t decode(struct ntl_ipt_flow *f, char *kinds, size_t size)
{
    struct ntl_ipt_flow_item it;
    struct ntl_error err;
    uint64_t n = 0;
    size_t k = 0;
    CHECK_EQ_INT(ntl_ipt_flow_sync(f, &err), 0);
    int rc;
    while ((rc = ntl_ipt_flow_next(f, &it, &err)) > 0) {
        if (it.kind == NTL_IPT_FL_INSN || it.kind == NTL_IPT_FL_RUN) {
            n += it.kind == NTL_IPT_FL_RUN ? it.b : 1;
            continue;
        }
        if (k + 1 < size)
            kinds[k++] = (char)('a' + it.kind);
    }
    kinds[k] = 0;
    CHECK_EQ_INT(rc, 0);
    return n;
}

/* A decoder's configuration over trace t of n bytes and the test's code. */
static void flow_config(struct ntl_ipt_flow_config *cfg, const uint8_t *t, size_t n, bool runs)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->trace.buf = t;
    cfg->trace.size = n;
    cfg->read = read_code;
    cfg->runs = runs;
}

static void test_paths(void)
{
    struct ntl_ipt_flow_config cfg;
    struct ntl_ipt_flow *f;
    struct ntl_error err;
    char one[16], runs[16];
    flow_config(&cfg, trace, sizeof trace, false);
    CHECK_EQ_INT(ntl_ipt_flow_new(&f, &cfg, &err), 0);
    CHECK_EQ_U64(decode(f, one, sizeof one), 9); /* 4 x (dec, jnz), jmp */
    ntl_ipt_flow_free(f);
    cfg.runs = true;
    CHECK_EQ_INT(ntl_ipt_flow_new(&f, &cfg, &err), 0);
    CHECK_EQ_U64(decode(f, runs, sizeof runs), 9);
    uint64_t ips[4];
    CHECK_EQ_INT(ntl_ipt_flow_run_ips(f, ips, 4, &err), 0); /* run_ips off: none */
    /* ENABLED, EXEC_MODE, DISABLED, as letters from 'a'. */
    CHECK(strcmp(one, "chd") == 0);
    CHECK(strcmp(runs, one) == 0);
    /* The code changes (dec ecx becomes two NOPs): the caches keep the
     * old code until told. */
    code[0] = code[1] = 0x90;
    CHECK_EQ_U64(decode(f, runs, sizeof runs), 9);
    ntl_ipt_flow_invalidate(f);
    CHECK_EQ_U64(decode(f, runs, sizeof runs), 13);
    CHECK(strcmp(one, runs) == 0);
    ntl_ipt_flow_free(f);
    code[0] = 0xff;
    code[1] = 0xc9;
}

/* The start of a trace: PSB, PSBEND, MODE.Exec 64-bit, TIP.PGE ip. */
static size_t trace_start(uint8_t *t, uint64_t ip)
{
    static const uint8_t psb[] = {0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02,
                                  0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x23,
                                  0x99, 0x01, 0xd1};
    memcpy(t, psb, sizeof psb);
    for (int i = 0; i < 8; i++)
        t[sizeof psb + i] = (uint8_t)(ip >> 8 * i);
    return sizeof psb + 8;
}

/* TNT-8s of 6 bits (the last of fewer), bits[0] oldest. */
static size_t tnt_bytes(uint8_t *t, const uint8_t *bits, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i += 6) {
        unsigned m = n - i < 6 ? (unsigned)(n - i) : 6, b = 1;
        for (unsigned j = 0; j < m; j++)
            b = b << 1 | bits[i + j];
        t[k++] = (uint8_t)(b << 1);
    }
    return k;
}

/* 70 calls deep, past the 64-entry return stack, then a call and
 * compressed returns: 64 return (the call's entry pushed out the oldest),
 * the next finds the stack empty. The runs path takes the
 * call and its return as one decision on a full stack and must leave the
 * stack as the per-instruction walk does; the error names the TNT-8 of
 * that bit though several TNT-8s in a row are read as one. */
static void test_full_stack(void)
{
    uint8_t bits[139], t[256];
    memset(bits, 0, 70);
    memset(bits + 70, 1, sizeof bits - 70);
    size_t n = trace_start(t, 0x2000);
    size_t tnt = n;
    n += tnt_bytes(t + n, bits, sizeof bits);
    memset(t + n, 0, 24); /* PADs: the end is not in the last 16 bytes */
    n += 24;
    for (int runs = 0; runs < 2; runs++) {
        struct ntl_ipt_flow_config cfg;
        struct ntl_ipt_flow *f;
        struct ntl_ipt_flow_item it;
        struct ntl_error err;
        flow_config(&cfg, t, n, runs);
        CHECK_EQ_INT(ntl_ipt_flow_new(&f, &cfg, &err), 0);
        CHECK_EQ_INT(ntl_ipt_flow_sync(f, &err), 0);
        uint64_t insns = 0, off, ip;
        int rc;
        while ((rc = ntl_ipt_flow_next(f, &it, &err)) > 0)
            insns += it.kind == NTL_IPT_FL_RUN ? it.b : it.kind == NTL_IPT_FL_INSN;
        CHECK_EQ_INT(rc, NTL_IPT_RETSTACK_EMPTY);
        /* 70 x (jz, call), jz, call, 64 rets, the failing ret */
        CHECK_EQ_U64(insns, 140 + 2 + 64 + 1);
        ntl_ipt_flow_where(f, &off, &ip);
        CHECK_EQ_U64(ip, 0x2007);
        /* its bit (70 + 1 + 64 + 1: index 135) is in the 23rd TNT-8,
         * and the offset is past that */
        CHECK_EQ_U64(off, tnt + 135 / 6 + 1);
        ntl_ipt_flow_free(f);
    }
}

/* A VMCS outside PSB+ waits for the next branch and is told at the TIP
 * that branch takes, on both paths (the runs path's fast loop leaves such
 * a TIP to the walk: fuzz_ipt_flow found it dropped). */
static void test_pending_at_tip(void)
{
    static const uint8_t vmcs[] = {0x02, 0xc8, 0x01, 0x00, 0x00, 0x00, 0x00};
    static const uint8_t loop[] = {1, 1, 1, 0}, out[] = {0};
    uint8_t t[128];
    size_t n = trace_start(t, 0x1000);
    memcpy(t + n, vmcs, sizeof vmcs);
    n += sizeof vmcs;
    n += tnt_bytes(t + n, loop, sizeof loop);
    t[n++] = 0xcd; /* TIP, 8 bytes of IP: jmp rax to 0x1000 */
    for (int i = 0; i < 8; i++)
        t[n++] = (uint8_t)(0x1000ull >> 8 * i);
    n += tnt_bytes(t + n, out, sizeof out);
    t[n++] = 0x01; /* TIP.PGD without IP: at the jmp rax */
    memset(t + n, 0, 24); /* PADs: all of it before the last 16 bytes */
    n += 24;
    char kinds[2][16];
    for (int runs = 0; runs < 2; runs++) {
        struct ntl_ipt_flow_config cfg;
        struct ntl_ipt_flow *f;
        struct ntl_error err;
        flow_config(&cfg, t, n, runs);
        CHECK_EQ_INT(ntl_ipt_flow_new(&f, &cfg, &err), 0);
        /* 4 x (dec, jnz), jmp, dec, jnz, jmp */
        CHECK_EQ_U64(decode(f, kinds[runs], sizeof kinds[runs]), 12);
        ntl_ipt_flow_free(f);
    }
    /* ENABLED, EXEC_MODE, VMCS, DISABLED, as letters from 'a' */
    CHECK(strcmp(kinds[0], "chkd") == 0);
    CHECK(strcmp(kinds[1], kinds[0]) == 0);
}

/* Instructions (their addresses) and events (~kind) of trace t in order,
 * into v (at most max), then the status that ended the decode. With ips,
 * runs told by address, a few at a time so that a block is told in
 * parts; each run's count and last address checked. Returns how many. */
static size_t stream(const uint8_t *t, size_t n, bool ips, uint64_t *v, size_t max, int *end)
{
    struct ntl_ipt_flow_config cfg;
    struct ntl_ipt_flow *f;
    struct ntl_ipt_flow_item it;
    struct ntl_error err;
    size_t k = 0;
    flow_config(&cfg, t, n, ips);
    cfg.run_ips = ips;
    CHECK_EQ_INT(ntl_ipt_flow_new(&f, &cfg, &err), 0);
    CHECK_EQ_INT(ntl_ipt_flow_sync(f, &err), 0);
    while ((*end = ntl_ipt_flow_next(f, &it, &err)) > 0 && k < max) {
        if (it.kind != NTL_IPT_FL_RUN) {
            v[k++] = it.kind == NTL_IPT_FL_INSN ? it.ip : ~(uint64_t)it.kind;
            continue;
        }
        uint64_t told = 0, part[7];
        int got;
        while ((got = ntl_ipt_flow_run_ips(f, part, 7, &err)) > 0)
            for (int i = 0; i < got; i++, told++)
                if (k < max)
                    v[k++] = part[i];
        CHECK_EQ_INT(got, 0);
        CHECK_EQ_U64(told, it.b);
        CHECK(told > 0 && v[k - 1] == it.ip);
    }
    ntl_ipt_flow_free(f);
    return k;
}

/* Both ways give the same stream. */
static void same_stream(const uint8_t *t, size_t n, size_t expect)
{
    static uint64_t one[41000], runs[41000];
    int end_one, end_runs;
    size_t k = stream(t, n, false, one, 41000, &end_one);
    CHECK_EQ_U64(k, expect);
    CHECK_EQ_U64(stream(t, n, true, runs, 41000, &end_runs), k);
    CHECK_EQ_INT(end_runs, end_one);
    CHECK(memcmp(one, runs, k * sizeof one[0]) == 0);
}

/* Runs told by address (cfg.run_ips): the loop, a loop of blocks longer
 * than a call to run_ips tells, the recursion to past the return stack,
 * and a loop of 20,000 rounds whose run is longer than the decoder keeps
 * in one (it is handed out in parts). */
static void test_run_ips(void)
{
    static uint8_t bits[20001], t[4096];
    static const uint8_t four[] = {1, 1, 1, 0};
    same_stream(trace, sizeof trace, 9 + 3);
    size_t n = trace_start(t, 0x3000);
    n += tnt_bytes(t + n, four, sizeof four);
    t[n++] = 0x01; /* TIP.PGD without IP: at the jmp rax */
    memset(t + n, 0, 24);
    same_stream(t, n + 24, 4 * 8 + 1 + 3);
    memset(bits, 0, 70);
    memset(bits + 70, 1, 69);
    n = trace_start(t, 0x2000);
    n += tnt_bytes(t + n, bits, 139);
    memset(t + n, 0, 24);
    same_stream(t, n + 24, 2 + 140 + 2 + 64 + 1);
    memset(bits, 1, sizeof bits);
    bits[sizeof bits - 1] = 0;
    n = trace_start(t, 0x1000);
    n += tnt_bytes(t + n, bits, sizeof bits);
    t[n++] = 0x01; /* TIP.PGD without IP: at the jmp rax */
    memset(t + n, 0, 24);
    same_stream(t, n + 24, 2 * sizeof bits + 1 + 3);
}

/* TIPs whose IP is sign-extended from 48 bits (IPC 3, the upper half):
 * the fast loop reads them from the bytes, and must take the same
 * addresses as the event layer (the walk one instruction at a time). */
static void test_sext_tips(void)
{
    static const uint8_t four[] = {1, 1, 1, 0};
    static uint8_t t[4096];
    size_t n = trace_start(t, KERNEL + 0x1000);
    for (int i = 0; i < 50; i++) {
        /* The loop four rounds, its jmp rax back to it by a TIP. */
        n += tnt_bytes(t + n, four, sizeof four);
        t[n++] = 0x6d; /* TIP, IPC 3: 6 bytes */
        for (int b = 0; b < 6; b++)
            t[n++] = (uint8_t)((KERNEL + 0x1000) >> 8 * b);
    }
    n += tnt_bytes(t + n, four, sizeof four);
    t[n++] = 0x01; /* TIP.PGD without IP: at the jmp rax */
    memset(t + n, 0, 24);
    same_stream(t, n + 24, 51 * 9 + 3);
}

/* An event of a decode: its item, after insns instructions, and in runs
 * the RUN right before it (else zero). */
struct told {
    struct ntl_ipt_flow_item it;
    uint64_t insns;
    struct ntl_ipt_flow_item run;
};

/* Trace t's events in order into v (at most max), each after the
 * instructions before it: one instruction at a time, in runs, or runs
 * told by address (their pairs not taken in the fast loop: flow.c keeps
 * a trail there); times: with cfg.times. Returns how many. */
static size_t events(const uint8_t *t, size_t n, int way, bool times, struct told *v, size_t max)
{
    struct ntl_ipt_flow_config cfg;
    struct ntl_ipt_flow *f;
    struct ntl_ipt_flow_item it, run = {0};
    struct ntl_error err;
    uint64_t insns = 0, ips[64];
    size_t k = 0;
    int rc, got;
    flow_config(&cfg, t, n, way > 0);
    cfg.run_ips = way > 1;
    cfg.times = times;
    if (times)
        cfg.trace.flags |= NTL_IPT_CFG_TIME;
    CHECK_EQ_INT(ntl_ipt_flow_new(&f, &cfg, &err), 0);
    CHECK_EQ_INT(ntl_ipt_flow_sync(f, &err), 0);
    while ((rc = ntl_ipt_flow_next(f, &it, &err)) > 0) {
        if (it.kind == NTL_IPT_FL_INSN || it.kind == NTL_IPT_FL_RUN) {
            insns += it.kind == NTL_IPT_FL_RUN ? it.b : 1;
            if (it.kind == NTL_IPT_FL_RUN)
                run = it;
            uint64_t told = 0;
            while (way > 1 && (got = ntl_ipt_flow_run_ips(f, ips, 64, &err)) > 0)
                told += (uint64_t)got;
            CHECK(way < 2 || (told == it.b && ips[(told - 1) % 64] == it.ip));
            continue;
        }
        if (k < max) {
            memset(&v[k], 0, sizeof v[k]);
            v[k].it.kind = it.kind;
            v[k].it.ip = it.ip;
            v[k].it.flags = it.flags;
            v[k].it.mode = it.mode;
            v[k].it.timed = it.timed;
            v[k].it.tsc = it.tsc;
            v[k].insns = insns;
            v[k++].run = run;
        }
        memset(&run, 0, sizeof run);
    }
    CHECK_EQ_INT(rc, 0);
    ntl_ipt_flow_free(f);
    return k;
}

/* Whether two decodes' events a and b (k of them) are the same, and with
 * runs the RUNs before them. */
static bool same_events(const struct told *a, const struct told *b, size_t k, bool runs)
{
    for (size_t i = 0; i < k; i++)
        if (memcmp(&a[i].it, &b[i].it, sizeof a[i].it) != 0 || a[i].insns != b[i].insns ||
            (runs && memcmp(&a[i].run, &b[i].run, sizeof a[i].run) != 0))
            return false;
    return true;
}

/* A TIP.PGD or TIP.PGE (op) with a full IP into t. */
static size_t ip_packet(uint8_t *t, uint8_t op, uint64_t ip)
{
    t[0] = op;
    for (int i = 0; i < 8; i++)
        t[1 + i] = (uint8_t)(ip >> 8 * i);
    return 9;
}

/* kAFL's shape: the filter left and entered again every few branches,
 * each TIP.PGD followed by its TIP.PGE (PADs between), more pairs in a
 * row than the queue holds; the runs path takes them in its fast loop.
 * Its events (DISABLED at the branch, ENABLED, RESUMED after an indirect
 * call) and the instructions between them must be those of the
 * per-instruction walk, and where the trace says. A pair with a VMCS
 * between goes the slow way. */
/* kAFL's TIP.PGD/TIP.PGE pairs, which the fast loop takes itself in runs
 * (flow-fast.c's pair, flow.c's fast_pairs); times: a TSC before them, so
 * each DISABLED and ENABLED is timed. */
static void test_pairs(bool times)
{
    static const uint8_t four[] = {1, 1, 1, 0};
    static uint8_t t[8192];
    static struct told one[400], runs[400], ips[400];
    size_t n = trace_start(t, 0x1000), pairs = 0, resumed = 0;
    if (times) {
        static const uint8_t tsc[] = {0x19, 0x10, 0x32, 0x54, 0x76, 0x98, 0x01, 0x00};
        memcpy(t + n, tsc, sizeof tsc);
        n += sizeof tsc;
    }
    for (int i = 0; i < 60; i++) {
        /* The loop at 0x1000 four rounds, left at its jmp rax. */
        n += tnt_bytes(t + n, four, sizeof four);
        n += i % 3 ? ip_packet(t + n, 0xc1, 0x9000) : (t[n] = 0x01, 1);
        memset(t + n, 0, (size_t)(i % 11));
        n += (size_t)(i % 11);
        if (i == 40) {
            static const uint8_t vmcs[] = {0x02, 0xc8, 0x01, 0x00, 0x00, 0x00, 0x00};
            memcpy(t + n, vmcs, sizeof vmcs);
            n += sizeof vmcs;
        }
        /* In at 0x4000: left at the call rax, back after it, left again
         * at the jmp rax after no bits; then in at the loop. */
        n += ip_packet(t + n, 0xd1, 0x4000);
        n += ip_packet(t + n, 0xc1, 0x9000);
        n += ip_packet(t + n, 0xd1, 0x4002);
        n += ip_packet(t + n, 0xc1, 0x9000);
        n += ip_packet(t + n, 0xd1, 0x1000);
        pairs += 3;
        resumed++;
    }
    memset(t + n, 0, 24);
    n += 24;
    size_t k = events(t, n, 0, times, one, 400);
    CHECK_EQ_U64(k, 1 + 1 + 2 * pairs + 1 + 1); /* ENABLED, EXEC_MODE, pairs, VMCS, END */
    CHECK_EQ_U64(events(t, n, 1, times, runs, 400), k);
    CHECK_EQ_U64(events(t, n, 2, times, ips, 400), k);
    CHECK(same_events(one, runs, k, false));
    CHECK(same_events(runs, ips, k, true));
    size_t en = 0, res = 0, dis = 0;
    for (size_t i = 0; i < k; i++) {
        const struct ntl_ipt_flow_item *it = &runs[i].it;
        if (it->kind == NTL_IPT_FL_ENABLED) {
            CHECK(it->ip == 0x1000 || it->ip == 0x4000 || it->ip == 0x4002);
            CHECK_EQ_INT(!!(it->flags & NTL_IPT_FL_RESUMED), it->ip == 0x4002);
            res += it->ip == 0x4002;
            en++;
        }
        if (it->kind == NTL_IPT_FL_DISABLED) {
            CHECK(it->ip == 0 || it->ip == 0x9000);
            CHECK_EQ_INT(!!(it->flags & NTL_IPT_FL_IP_SUPPRESSED), it->ip == 0);
            dis++;
        }
        if (it->kind == NTL_IPT_FL_DISABLED || it->kind == NTL_IPT_FL_ENABLED) {
            /* The first ENABLED, before the TSC, is not. */
            CHECK_EQ_INT(it->timed, times && i > 0);
            CHECK(!times || i == 0 || it->tsc == 0x019876543210ull);
        }
    }
    CHECK_EQ_U64(en, pairs + 1);
    CHECK_EQ_U64(dis, pairs);
    CHECK_EQ_U64(res, resumed);
    /* 4 x (dec, jnz), jmp; call; jmp a round */
    CHECK_EQ_U64(runs[k - 1].insns, 60 * (9 + 2));
}

int main(void)
{
    test_paths();
    test_run_ips();
    test_sext_tips();
    test_full_stack();
    test_pending_at_tip();
    test_pairs(false);
    test_pairs(true);
    return check_exit();
}
