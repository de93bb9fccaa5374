/* Unit tests for the flow decoder's TNT decision cache (lib/ipt/flow-decide.h,
 * internal): every bit of a key moves its slot, a slot matches its own key
 * only, and a table that doubles keeps its decisions and their paths, each
 * where a lookup finds it. */
#include <stdbool.h>
#include <string.h>

#include "check.h"

#include "../../lib/ipt/flow-decide.h"
#include "ntlens/ipt_event.h"

/* 0x1000: 16 x jz +0 (each bit's branch goes to the next), jmp rax: any
 * 16 bits from 0x1000 are one decision of 16 instructions. */
#define CONDS 16
static uint8_t code[2 * CONDS + 2];

static int read_code(uint8_t *buf, size_t size, uint64_t addr, void *ctx)
{
    (void)ctx;
    if (addr < 0x1000 || addr >= 0x1000 + sizeof code)
        return NTL_ERR_NOT_FOUND;
    size_t n = 0x1000 + sizeof code - addr;
    n = n < size ? n : size;
    memcpy(buf, code + (addr - 0x1000), n);
    return (int)n;
}

/* Keys that differ in any of their bits, the oldest included, spread over
 * the table: one IP with all 2^16 patterns of 16 bits takes nearly every
 * slot of 4,096 (a hash that left the oldest 6 bits out took 1,024). */
static void test_hash_spreads(void)
{
    static bool seen[4096];
    unsigned distinct = 0;
    for (unsigned bits = 0; bits < 1u << 16; bits++) {
        size_t i = flow_decide_hash(0x1000, NTL_IPT_MODE_64, bits, 16) & 4095;
        distinct += !seen[i];
        seen[i] = true;
    }
    CHECK(distinct > 4000);
    /* The mode and the bit count are in the key too. */
    CHECK(flow_decide_hash(0x1000, NTL_IPT_MODE_64, 5, 16) !=
          flow_decide_hash(0x1000, NTL_IPT_MODE_32, 5, 16));
    CHECK(flow_decide_hash(0x1000, NTL_IPT_MODE_64, 5, 16) !=
          flow_decide_hash(0x1000, NTL_IPT_MODE_64, 5, 16 | FLOW_DECIDE_TIP));
}

/* Where the decision for bits from 0x1000 is in c, NULL when it is not in
 * its slot or the one next to it. */
static const struct flow_decision *find(const struct flow_dcache *c, unsigned bits)
{
    size_t i = flow_decide_hash(0x1000, NTL_IPT_MODE_64, bits, CONDS) & c->mask;
    for (int k = 0; k < 2; k++, i ^= 1)
        if (flow_decide_same(&c->slot[i], 0x1000, NTL_IPT_MODE_64, bits, CONDS))
            return &c->slot[i];
    return NULL;
}

/* A slot matches its own key only: the bits, the bit count (with or
 * without FLOW_DECIDE_TIP), the mode and the IP each compared, the first
 * three as one word (flow_decide_same). */
static void test_same_key(void)
{
    struct flow_decision d = {.ip = 0x1000, .bits = 0xa5c3, .n = 16 + 1, .mode = NTL_IPT_MODE_64};
    CHECK(flow_decide_same(&d, 0x1000, NTL_IPT_MODE_64, 0xa5c3, 16));
    CHECK(!flow_decide_same(&d, 0x1001, NTL_IPT_MODE_64, 0xa5c3, 16));
    CHECK(!flow_decide_same(&d, 0x1000 + (1ull << 47), NTL_IPT_MODE_64, 0xa5c3, 16));
    CHECK(!flow_decide_same(&d, 0x1000, NTL_IPT_MODE_32, 0xa5c3, 16));
    CHECK(!flow_decide_same(&d, 0x1000, NTL_IPT_MODE_64, 0xa5c2, 16));
    CHECK(!flow_decide_same(&d, 0x1000, NTL_IPT_MODE_64, 0x25c3, 16));
    CHECK(!flow_decide_same(&d, 0x1000, NTL_IPT_MODE_64, 0xa5c3, 15));
    CHECK(!flow_decide_same(&d, 0x1000, NTL_IPT_MODE_64, 0xa5c3, 16 | FLOW_DECIDE_TIP));
    d.n = 16 + 1 + FLOW_DECIDE_TIP;
    CHECK(flow_decide_same(&d, 0x1000, NTL_IPT_MODE_64, 0xa5c3, 16 | FLOW_DECIDE_TIP));
    /* An empty slot (n 0) matches no key, not even one of all zeros. */
    struct flow_decision e = {0};
    CHECK(!flow_decide_same(&e, 0, 0, 0, 0));
    /* The rest of the line is not part of the key. */
    d.used = 7, d.npush = 2, d.ninsn = 99, d.end = 12;
    CHECK(flow_decide_same(&d, 0x1000, NTL_IPT_MODE_64, 0xa5c3, 16 | FLOW_DECIDE_TIP));
}

#define KEYS 1500

/* Decisions made, the table made to double: each one there before is
 * there after, found by its key, with its instructions and its path. */
static void test_growth_keeps(void)
{
    static bool had[KEYS];
    static struct flow_dpath path[KEYS];
    struct flow_dcache dc = {0};
    struct flow_bcache bc = {0};
    struct flow_cache ic = {0};
    const struct flow_decision *d;
    for (unsigned i = 0; i < CONDS; i++)
        code[2 * i] = 0x74, code[2 * i + 1] = 0x00;
    code[2 * CONDS] = 0xff, code[2 * CONDS + 1] = 0xe0;
    CHECK_EQ_INT(flow_dcache_paths(&dc), 0);
    for (unsigned bits = 0; bits < KEYS; bits++)
        CHECK_EQ_INT(flow_decide(&dc, &bc, &ic, read_code, NULL, 0x1000, NTL_IPT_MODE_64, bits,
                                 CONDS, &d), 0);
    size_t slots = dc.mask + 1;
    unsigned kept = 0;
    for (unsigned bits = 0; bits < KEYS; bits++) {
        d = find(&dc, bits);
        had[bits] = d != NULL;
        kept += had[bits];
        if (d)
            path[bits] = dc.paths->path[d - dc.slot];
    }
    CHECK(kept > KEYS / 2);
    /* Pushed out often enough: the next lookup doubles the table. */
    dc.evicted = dc.mask;
    CHECK_EQ_INT(flow_decide(&dc, &bc, &ic, read_code, NULL, 0x1000, NTL_IPT_MODE_64, KEYS,
                             CONDS, &d), 0);
    CHECK_EQ_U64(dc.mask + 1, slots * 2);
    for (unsigned bits = 0; bits < KEYS; bits++) {
        if (!had[bits])
            continue;
        d = find(&dc, bits);
        CHECK(d != NULL);
        if (!d)
            continue;
        CHECK_EQ_U64(d->ninsn, CONDS);
        CHECK_EQ_U64(d->used, CONDS);
        CHECK_EQ_U64(flow_decision_end(d), 0x1000 + 2 * CONDS);
        unsigned n;
        const struct flow_seg *seg = flow_decision_path(&dc, d, &n);
        CHECK_EQ_U64(n, path[bits].n);
        CHECK(seg == dc.paths->segs + path[bits].off);
        CHECK_EQ_U64(seg[0].ip, 0x1000);
    }
    flow_dcache_free(&dc);
    flow_bcache_free(&bc);
    flow_cache_free(&ic);
}

int main(void)
{
    test_hash_spreads();
    test_same_key();
    test_growth_keeps();
    return check_exit();
}
