/* libFuzzer: the Intel PT packet decoder over arbitrary bytes, both from the
 * first PSB with resync after errors and from offset 0; the fast and slow
 * paths must agree. Then the event layer (ntlens/ipt_event.h) over the same
 * bytes, with time tracking configured by the first bytes: its events must be
 * the packet decoder's packets, and the addresses it resolves exactly the
 * targets of the quick-analysis scan. */
#include <stdlib.h>
#include <string.h>

#include "ntlens/ipt_event.h"
#include "ntlens/ipt_modules.h"
#include "ntlens/ipt_packet.h"

/* Fast path against slow path, from the first PSB (sync) or offset 0. */
static void packets(const uint8_t *data, size_t size, bool sync)
{
    struct ntl_ipt_decoder d, s;
    struct ntl_ipt_packet p, q;
    struct ntl_error err;
    ntl_ipt_decoder_init(&d, data, size, 0);
    ntl_ipt_decoder_init(&s, data, size, 0);
    if (sync && (ntl_ipt_sync_first(&d, &err) < 0 || ntl_ipt_sync_first(&s, &err) < 0))
        return;
    for (size_t steps = 0;; steps++) {
        size_t before = ntl_ipt_offset(&d);
        int rc = ntl_ipt_next(&d, &p, &err);
        int rs = ntl_ipt_next_slow(&s, &q, &err);
        if (rc != rs || ntl_ipt_offset(&d) != ntl_ipt_offset(&s) ||
            (rc > 0 && memcmp(&p, &q, sizeof p) != 0) || rc > 1 || steps > size)
            abort();
        if (rc == 0)
            return;
        if (rc < 0) {
            if (ntl_ipt_offset(&d) != before || err.offset != before)
                abort();
            if (!sync || rc == NTL_ERR_TRUNCATED || ntl_ipt_resync(&d, &err) < 0 ||
                ntl_ipt_resync(&s, &err) < 0)
                return;
            continue;
        }
        if (p.size == 0 || ntl_ipt_offset(&d) != before + p.size)
            abort();
    }
}

/* The event layer from the first PSB; the sum and number of the addresses it
 * resolves. Events must follow PSB+ and carry only the statuses documented. */
static void events(const struct ntl_ipt_config *c, uint64_t *total, uint64_t *sum)
{
    struct ntl_ipt_evd d;
    struct ntl_ipt_event ev;
    struct ntl_error err;
    ntl_ipt_evd_init(&d, c);
    if (ntl_ipt_evd_sync_first(&d, &err) < 0)
        return;
    bool in_psb = false;
    for (size_t steps = 0; steps <= c->size; steps++) {
        size_t before = ntl_ipt_offset(&d.pkt);
        int rc = ntl_ipt_evd_next(&d, &ev, &err);
        if (rc == 0)
            return;
        if (rc < 0) {
            if (rc == NTL_ERR_TRUNCATED || ntl_ipt_evd_resync(&d, &err) < 0)
                return;
            in_psb = false;
            continue;
        }
        if (ev.offset != before || ntl_ipt_offset(&d.pkt) != before + ev.pkt.size)
            abort();
        if (ev.pkt.type == NTL_IPT_PSB)
            in_psb = true;
        if (!!(ev.flags & NTL_IPT_EV_IN_PSB) != in_psb)
            abort();
        if (ev.pkt.type == NTL_IPT_PSBEND)
            in_psb = false;
        bool ip_pkt = ev.pkt.type == NTL_IPT_TIP || ev.pkt.type == NTL_IPT_TIP_PGE ||
                      ev.pkt.type == NTL_IPT_TIP_PGD || ev.pkt.type == NTL_IPT_FUP;
        if (!!(ev.flags & NTL_IPT_EV_IP) != (ip_pkt && ev.ip_status == 0))
            abort();
        if (ev.flags & NTL_IPT_EV_IP) {
            ++*total;
            *sum += ev.ip;
        } else if (ev.ip_status != 0 && (ev.ip_status != NTL_IPT_IP_SUPPRESSED || ev.ip != 0 ||
                                         ev.pkt.count != NTL_IPT_IPC_SUPPRESSED)) {
            abort();
        }
        uint64_t v;
        ntl_ipt_evd_tsc(&d, &v);
        ntl_ipt_evd_fcr(&d, &v);
    }
    abort(); /* more events than bytes */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    packets(data, size, true);
    packets(data, size, false);
    /* The first bytes choose the time configuration. */
    struct ntl_ipt_config c = {
        .buf = data,
        .size = size,
        .time = {
            .mtc_freq = size > 0 ? data[0] & 15 : 0,
            .nom_freq = size > 1 ? data[1] : 0,
            .cpuid_15_eax = size > 2 ? data[2] & 7 : 1,
            .cpuid_15_ebx = size > 3 ? data[3] : 1,
            .errata = {.skl168 = size > 4 && (data[4] & 1)},
        },
        .flags = NTL_IPT_CFG_TIME | (size > 4 ? (data[4] >> 1) & 0xe : 0),
    };
    uint64_t want_total = 0, want_sum = 0;
    events(&c, &want_total, &want_sum);
    struct ntl_ipt_targets tg;
    struct ntl_error err;
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
