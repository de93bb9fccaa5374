/* The quick analysis (ntlens/ipt_modules.h): IP packet targets by address.
 *
 * The scan is its own loop rather than a consumer of ntl_ipt_next: it only
 * needs the size of most packets, so PAD runs, TNT and IP packets are handled
 * inline and everything else goes through the packet decoder. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "ntlens/ipt_modules.h"
#include "ntlens/ipt_packet.h"
#include "ntlens/ipt_sync.h"

#define DEFAULT_LIMIT ((size_t)64 << 20)

void ntl_ipt_targets_init(struct ntl_ipt_targets *t, size_t max_distinct)
{
    memset(t, 0, sizeof *t);
    t->limit = max_distinct ? max_distinct : DEFAULT_LIMIT;
    t->first_error = NTL_NO_OFFSET;
}

void ntl_ipt_targets_free(struct ntl_ipt_targets *t)
{
    free(t->slots);
    t->slots = NULL;
    t->cap = t->used = 0;
}

static inline size_t slot_of(uint64_t ip, size_t cap)
{
    return (size_t)((ip * 0x9e3779b97f4a7c15ull) >> 32) & (cap - 1);
}

static int grow(struct ntl_ipt_targets *t)
{
    size_t cap = t->cap ? t->cap * 2 : 1024;
    struct ntl_ipt_target *s = calloc(cap, sizeof *s);
    if (!s)
        return NTL_ERR_NOMEM;
    for (size_t i = 0; i < t->cap; i++) {
        if (!t->slots[i].count)
            continue;
        size_t j = slot_of(t->slots[i].ip, cap);
        while (s[j].count)
            j = (j + 1) & (cap - 1);
        s[j] = t->slots[i];
    }
    free(t->slots);
    t->slots = s;
    t->cap = cap;
    return NTL_OK;
}

/* Adds one occurrence of ip. A slot with count 0 is empty. The table is
 * grown only when an address is added, so a repeated one (the common case)
 * costs one probe and nothing else. */
static inline int count_ip(struct ntl_ipt_targets *t, uint64_t ip)
{
    struct ntl_ipt_target *slots = t->slots;
    size_t cap = t->cap, j = slot_of(ip, cap);
    if (cap) {
        for (;; j = (j + 1) & (cap - 1)) {
            if (!slots[j].count)
                break;
            if (slots[j].ip == ip) {
                slots[j].count++;
                return NTL_OK;
            }
        }
    }
    if (t->used >= t->limit)
        return NTL_ERR_LIMIT;
    if (t->used * 2 >= cap) {
        int rc = grow(t);
        if (rc < 0)
            return rc;
        slots = t->slots;
        cap = t->cap;
        for (j = slot_of(ip, cap); slots[j].count; j = (j + 1) & (cap - 1))
            ;
    }
    slots[j].ip = ip;
    slots[j].count = 1;
    t->used++;
    return NTL_OK;
}

static inline uint64_t load_le(const uint8_t *p, size_t left, unsigned n)
{
    uint64_t v = 0;
    if (left >= 8) {
        memcpy(&v, p, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
        v = __builtin_bswap64(v);
#endif
        return n >= 8 ? v : v & ((1ull << (8 * n)) - 1);
    }
    for (unsigned i = n; i-- > 0;)
        v = (v << 8) | p[i];
    return v;
}

/* Bit i set when p[i] is odd or 02: a byte that is neither PAD nor TNT-8
 * and so may start a packet that matters here. 64 bytes, eight at a time
 * (SWAR: bit 0 of each byte, and an exact zero-byte test of w^02), with
 * each word's eight flags gathered into a byte by one multiplication. */
static inline uint64_t stop_mask(const uint8_t *p)
{
    const uint64_t lo7 = 0x7f7f7f7f7f7f7f7full, ones = 0x0101010101010101ull;
    uint64_t mask = 0;
    for (unsigned i = 0; i < 8; i++) {
        uint64_t w = load_le(p + 8 * i, 8, 8), x = w ^ (2 * ones);
        uint64_t is2 = ~(((x & lo7) + lo7) | x) & (ones << 7);
        uint64_t flags = (w & ones) | (is2 >> 7);
        mask |= ((flags * 0x0102040810204080ull) >> 56) << (8 * i);
    }
    return mask;
}

/* Where the block scan may start a 64-byte block: every stop it finds is
 * then below d->fast_end, where a packet is decoded inline; 0 inside a BBP
 * block (fast_end == buf), where only the packet decoder may run. */
static inline size_t block_limit(const struct ntl_ipt_decoder *d)
{
    size_t fast_end = (size_t)(d->fast_end - d->buf);
    return fast_end > 64 ? fast_end - 64 : 0;
}

static int target_error(struct ntl_error *err, int rc, size_t off, size_t used)
{
    return ntl_error_set(err, rc, "IP packet", off,
                         rc == NTL_ERR_LIMIT ? "more than %zu distinct targets"
                                             : "out of memory at %zu distinct targets",
                         used);
}

int ntl_ipt_targets_scan(struct ntl_ipt_targets *t, const uint8_t *buf, size_t size,
                         struct ntl_error *err)
{
    static const uint8_t ipc_size[8] = {0, 2, 4, 6, 6, 0xff, 8, 0xff};
    /* IP packet kind by the low five bits of the first byte, +1 (0: none). */
    static const uint8_t ip_kind[32] = {
        [0x0d] = 1, [0x11] = 2, [0x01] = 3, [0x1d] = 4,
    };
    struct ntl_ipt_decoder d;
    struct ntl_ipt_packet p;
    struct ntl_ipt_last_ip last;
    ntl_ipt_decoder_init(&d, buf, size, 0);
    int rc = ntl_ipt_sync_first(&d, err);
    if (rc < 0)
        return rc;
    t->bytes += size - ntl_ipt_offset(&d);
    ntl_ipt_last_ip_init(&last);
    static const uint64_t masks[8] = NTL_IPT_FAST_MASKS_;
    static const uint64_t keep[8] = {
        0, ~0xffffull, ~0xffffffffull, 0, ~0xffffffffffffull, 0, 0, 0,
    };
    uint64_t ip = 0;
    bool suppressed = false;
    size_t pos = ntl_ipt_offset(&d);
    /* stops: bit i set when buf[base + i] may start a packet other than
     * PAD or TNT-8; valid while base <= pos (it describes bytes, not packet
     * boundaries). Empty until the first block is read. */
    size_t base = pos, block_end = block_limit(&d);
    uint64_t stops = 0;
    while (pos < size) {
        if (pos < block_end) {
            uint64_t m = pos - base < 64 ? stops >> (pos - base) : 0;
            if (!m) {
                /* Nothing but PAD and TNT-8 up to base + 64 (or the mask is
                 * stale): read the next block. */
                if (pos - base < 64 && stops)
                    pos = base + 64;
                if (pos >= block_end)
                    continue;
                base = pos;
                stops = stop_mask(buf + pos);
                if (!stops) {
                    pos += 64;
                    continue;
                }
                m = stops;
            }
            pos += (size_t)__builtin_ctzll(m);
            unsigned b = buf[pos];
            const struct ntl_ipt_fast_ *e = &ntl_ipt_fast_table_[b];
            if (e->pkt.type) {
                if (e->ip_kind) {
                    unsigned ipc = e->pkt.count;
                    t->by_type[e->ip_kind - 1]++;
                    if (ipc == NTL_IPT_IPC_SUPPRESSED) {
                        t->suppressed++;
                        suppressed = true;
                    } else {
                        uint64_t raw = load_le(buf + pos + 1, 8, 8) & masks[e->mask];
                        if (ipc == NTL_IPT_IPC_SEXT_48)
                            raw = (uint64_t)((int64_t)(raw << 16) >> 16);
                        ip = (ip & keep[ipc]) | raw;
                        suppressed = false;
                        t->total++;
                        rc = count_ip(t, ip);
                        if (rc < 0)
                            return target_error(err, rc, pos, t->used);
                    }
                }
                pos += e->pkt.size;
                continue;
            }
        } else if (ip_kind[buf[pos] & 0x1f] && (buf[pos] & 3) == 1) {
            unsigned b = buf[pos], ipc = b >> 5, n = ipc_size[ipc];
            if (n != 0xff && size - pos > n) {
                uint64_t raw = load_le(buf + pos + 1, size - pos - 1, n);
                t->by_type[ip_kind[b & 0x1f] - 1]++;
                last.ip = ip;
                last.suppressed = suppressed;
                if (ntl_ipt_last_ip_update(&last, ipc, raw) == NTL_OK) {
                    t->total++;
                    rc = count_ip(t, last.ip);
                    if (rc < 0)
                        return target_error(err, rc, pos, t->used);
                } else if (ipc == NTL_IPT_IPC_SUPPRESSED) {
                    t->suppressed++;
                }
                ip = last.ip;
                suppressed = last.suppressed;
                pos += 1 + n;
                continue;
            }
        }
        d.cur = buf + pos;
        rc = ntl_ipt_next_slow(&d, &p, err);
        block_end = block_limit(&d);
        if (rc > 0) {
            if (p.type == NTL_IPT_PSB) {
                t->psbs++;
                ip = 0;
                suppressed = false;
            }
            pos = ntl_ipt_offset(&d);
            continue;
        }
        if (rc == 0)
            break;
        t->errors++;
        if (t->first_error == NTL_NO_OFFSET)
            t->first_error = pos;
        if (rc == NTL_ERR_TRUNCATED || ntl_ipt_resync(&d, err) < 0)
            break;
        ip = 0;
        suppressed = false;
        pos = ntl_ipt_offset(&d);
    }
    ntl_error_clear(err);
    return NTL_OK;
}

static int cmp_target(const void *a, const void *b)
{
    uint64_t x = ((const struct ntl_ipt_target *)a)->ip, y = ((const struct ntl_ipt_target *)b)->ip;
    return x < y ? -1 : x > y;
}

int ntl_ipt_targets_sorted(const struct ntl_ipt_targets *t, struct ntl_ipt_target **out,
                           size_t *n, struct ntl_error *err)
{
    struct ntl_ipt_target *v = malloc((t->used ? t->used : 1) * sizeof *v);
    if (!v)
        return ntl_error_set(err, NTL_ERR_NOMEM, NULL, NTL_NO_OFFSET, "out of memory");
    size_t k = 0;
    for (size_t i = 0; i < t->cap; i++)
        if (t->slots[i].count)
            v[k++] = t->slots[i];
    qsort(v, k, sizeof *v, cmp_target);
    *out = v;
    *n = k;
    return NTL_OK;
}
