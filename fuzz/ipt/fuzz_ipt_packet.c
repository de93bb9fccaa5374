/* libFuzzer: the Intel PT packet decoder over arbitrary bytes, both from the
 * first PSB with resync after errors and from offset 0, with last-IP and
 * time tracking fed by every packet; the fast and slow paths must agree;
 * then the quick-analysis scan must find exactly the targets the packet
 * decoder's last-IP reconstruction gives. */
#include <stdlib.h>
#include <string.h>

#include "ntlens/ipt_modules.h"
#include "ntlens/ipt_packet.h"
#include "ntlens/ipt_time.h"

static void feed_time(const struct ntl_ipt_packet *p, struct ntl_ipt_time *t,
                      struct ntl_ipt_tcal *k, const struct ntl_ipt_time_config *c, bool hdr)
{
    uint64_t fcr = 0;
    switch (p->type) {
    case NTL_IPT_PSB:
        ntl_ipt_tcal_psb(k, c);
        break;
    case NTL_IPT_TSC:
        ntl_ipt_tcal_tsc_pkt(k, p->payload, hdr);
        ntl_ipt_time_tsc_pkt(t, p->payload);
        break;
    case NTL_IPT_CBR:
        ntl_ipt_tcal_cbr_pkt(k, (uint8_t)p->payload, hdr, c);
        ntl_ipt_time_cbr_pkt(t, (uint8_t)p->payload);
        break;
    case NTL_IPT_TMA:
        ntl_ipt_time_tma_pkt(t, (uint16_t)p->payload, (uint16_t)p->aux, c);
        break;
    case NTL_IPT_MTC:
        ntl_ipt_tcal_mtc_pkt(k, (uint8_t)p->payload, c);
        ntl_ipt_time_mtc_pkt(t, (uint8_t)p->payload, c);
        break;
    case NTL_IPT_CYC:
        if (ntl_ipt_tcal_fcr(k, &fcr) < 0)
            fcr = 0;
        ntl_ipt_tcal_cyc_pkt(k, p->payload);
        ntl_ipt_time_cyc_pkt(t, p->payload, c, fcr);
        break;
    case NTL_IPT_OVF:
        ntl_ipt_tcal_init(k);
        break;
    default:
        break;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct ntl_ipt_decoder d, s;
    struct ntl_ipt_packet p, q;
    struct ntl_error err;
    struct ntl_ipt_last_ip last;
    struct ntl_ipt_time t;
    struct ntl_ipt_tcal k;
    /* The first bytes choose the time configuration. */
    struct ntl_ipt_time_config c = {
        .mtc_freq = size > 0 ? data[0] & 15 : 0,
        .nom_freq = size > 1 ? data[1] : 0,
        .cpuid_15_eax = size > 2 ? data[2] & 7 : 1,
        .cpuid_15_ebx = size > 3 ? data[3] : 1,
        .errata = {.skl168 = size > 4 && (data[4] & 1)},
    };
    /* From the first PSB (mode 0), what the quick analysis must find. */
    uint64_t want_total = 0, want_sum = 0;
    for (int mode = 0; mode < 2; mode++) {
        ntl_ipt_decoder_init(&d, data, size, 0);
        ntl_ipt_decoder_init(&s, data, size, 0);
        if (mode == 0 && (ntl_ipt_sync_first(&d, &err) < 0 || ntl_ipt_sync_first(&s, &err) < 0))
            continue;
        ntl_ipt_last_ip_init(&last);
        ntl_ipt_time_init(&t);
        ntl_ipt_tcal_init(&k);
        bool hdr = false;
        size_t steps = 0;
        for (;;) {
            size_t before = ntl_ipt_offset(&d);
            int rc = ntl_ipt_next(&d, &p, &err);
            int rs = ntl_ipt_next_slow(&s, &q, &err);
            if (rc != rs || ntl_ipt_offset(&d) != ntl_ipt_offset(&s) ||
                (rc == 0 && memcmp(&p, &q, sizeof p) != 0))
                abort();
            if (rc == NTL_ERR_EOF)
                break;
            if (rc < 0) {
                if (ntl_ipt_offset(&d) != before || err.offset != before)
                    abort();
                if (mode == 1 || rc == NTL_ERR_TRUNCATED || ntl_ipt_resync(&d, &err) < 0 ||
                    ntl_ipt_resync(&s, &err) < 0)
                    break;
                ntl_ipt_last_ip_init(&last);
                continue;
            }
            if (p.size == 0 || ntl_ipt_offset(&d) != before + p.size || ++steps > size)
                abort();
            if (p.type == NTL_IPT_PSB) {
                hdr = true;
                ntl_ipt_last_ip_init(&last);
            }
            else if (p.type == NTL_IPT_PSBEND)
                hdr = false;
            if (p.type == NTL_IPT_TIP || p.type == NTL_IPT_TIP_PGE || p.type == NTL_IPT_TIP_PGD ||
                p.type == NTL_IPT_FUP) {
                uint64_t ip;
                ntl_ipt_last_ip_update(&last, p.count, p.payload);
                if (ntl_ipt_last_ip_query(&last, &ip) == NTL_OK && mode == 0) {
                    want_total++;
                    want_sum += ip;
                }
            }
            feed_time(&p, &t, &k, &c, hdr);
        }
    }
    struct ntl_ipt_targets tg;
    ntl_ipt_targets_init(&tg, 0);
    if (ntl_ipt_targets_scan(&tg, data, size, &err) == NTL_OK) {
        uint64_t sum = 0;
        for (size_t i = 0; i < tg.cap; i++)
            sum += tg.slots[i].ip * tg.slots[i].count;
        if (tg.total != want_total || sum != want_sum)
            abort();
    }
    ntl_ipt_targets_free(&tg);
    return 0;
}
