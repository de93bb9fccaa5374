/* ntl_ipt_next_batch (ntlens/ipt_packet.h): the inline fast path of
 * ntl_ipt_next run as a loop that keeps the position in a register and fills
 * an array, so the per-packet cost is the decoding alone. Every packet the
 * fast path does not take goes through ntl_ipt_next_slow, as one at a time. */
#include <limits.h>

#include "ntlens/ipt_packet.h"

int ntl_ipt_next_batch(struct ntl_ipt_decoder *d, struct ntl_ipt_packet *out, size_t max,
                       struct ntl_error *err)
{
    static const uint64_t masks[8] = NTL_IPT_FAST_MASKS_;
    const uint8_t *buf = d->buf;
    size_t pos = d->pos, fast_end = d->fast_end, k = 0;
    if (max > INT_MAX)
        max = INT_MAX;
    while (k < max) {
        if (pos < fast_end) {
            const uint8_t *q = buf + pos;
            uint64_t w = ntl_ipt_load64_(q);
            unsigned b = (uint8_t)w;
            const struct ntl_ipt_fast_ *e = &ntl_ipt_fast_table_[b];
            struct ntl_ipt_packet *p = &out[k++];
            if ((b & 1) == 0 && b != 2) {
                unsigned n = 1;
                if (b == 0)
                    n = w ? (unsigned)__builtin_ctzll(w) >> 3 : 8;
                memcpy(p, e->head, 8);
                p->size = (uint8_t)n;
                p->count = (uint8_t)(b ? e->head[2] : n);
                p->payload = e->konst;
                pos += n;
                continue;
            }
            if (e->head[0]) {
                memcpy(p, e->head, 8);
                p->payload = (ntl_ipt_load64_(q + 1) & masks[e->mask]) | e->konst;
                pos += e->head[1];
                continue;
            }
            k--;
        }
        d->pos = pos;
        int rc = ntl_ipt_next_slow(d, &out[k], err);
        if (rc < 0)
            return k ? (int)k : rc;
        k++;
        pos = d->pos;
        fast_end = d->fast_end;
    }
    d->pos = pos;
    return (int)k;
}
